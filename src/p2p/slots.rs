//! The places of inbound connections in their handshake, shared fairly between addresses.
//!
//! Each inbound connection holds a thread until its handshake and status exchange end (at
//! most [`super::server::HANDSHAKE_TIMEOUT`] and [`super::server::STATUS_TIMEOUT`]). A global
//! cap bounds the threads; alone it let ~70 idle sockets from one address hold every place,
//! so that real peers were refused while they stayed. So the places are shared:
//!
//! - one address (an IPv4 address, or an IPv6 /64: one host's share) holds at most
//!   [`PER_ADDRESS`] places; its next connection takes the place of its own oldest one;
//! - when all [`TOTAL`] places are taken, a newcomer takes the place of the oldest connection
//!   of the address holding the most, if that address holds more than the newcomer's would
//!   after it; otherwise (every address at its fair share) the newcomer is refused.
//!
//! A connection that is still in its handshake when its place is taken is the slowest one of
//! its address: a real peer finishes in milliseconds. The place taken is shut down (its
//! socket), which ends its handshake at once.

use std::collections::HashMap;
use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};

/// Inbound connections that may be in their handshake or status exchange at once.
pub const TOTAL: usize = 64;
/// Of those, the most one address may hold.
pub const PER_ADDRESS: usize = 8;

/// Whose share a connection counts against: an IPv4 address (IPv4-mapped IPv6 included) or
/// the /64 prefix of an IPv6 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Share([u8; 16]);

impl Share {
    pub fn of(ip: IpAddr) -> Share {
        match ip {
            IpAddr::V4(v4) => Share(v4.to_ipv6_mapped().octets()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Share(v4.to_ipv6_mapped().octets()),
                None => {
                    let mut b = v6.octets();
                    b[8..].fill(0);
                    Share(b)
                }
            },
        }
    }
}

/// What [`Slots::admit`] decided for a new connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Admission<T> {
    /// A free place was taken.
    Taken(u64),
    /// The place of an older connection (its value given back, to be shut) was taken.
    Displaced(u64, T),
    /// No place: close the connection.
    Refused,
}

/// The table of places. `T` is what is kept per connection to end it (a socket).
#[derive(Debug)]
pub struct Slots<T> {
    next: u64,
    /// Every held place: its number (order of arrival), share and handle.
    held: Vec<(u64, Share, T)>,
    total: usize,
    per_address: usize,
}

impl<T> Slots<T> {
    pub fn new(total: usize, per_address: usize) -> Slots<T> {
        Slots {
            next: 0,
            held: Vec::new(),
            total: total.max(1),
            per_address: per_address.max(1),
        }
    }

    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    fn count(&self, share: Share) -> usize {
        self.held.iter().filter(|(_, s, _)| *s == share).count()
    }

    /// Removes and returns the oldest connection of `share`.
    fn take_oldest(&mut self, share: Share) -> Option<T> {
        let i = self.held.iter().position(|(_, s, _)| *s == share)?;
        Some(self.held.remove(i).2)
    }

    /// A place for a new connection of `share`, whose handle is `handle`.
    pub fn admit(&mut self, share: Share, handle: T) -> Admission<T> {
        let mine = self.count(share);
        let displaced = if mine >= self.per_address {
            self.take_oldest(share)
        } else if self.held.len() >= self.total {
            let mut counts: HashMap<Share, usize> = HashMap::new();
            for (_, s, _) in &self.held {
                *counts.entry(*s).or_default() += 1;
            }
            // The largest share; among equals, the one whose oldest connection is oldest.
            let biggest = self.held.iter().map(|(_, s, _)| (*s, counts[s])).fold(
                None,
                |best: Option<(Share, usize)>, (s, n)| match best {
                    Some((_, m)) if m >= n => best,
                    _ => Some((s, n)),
                },
            );
            match biggest {
                Some((s, n)) if n > mine + 1 => self.take_oldest(s),
                _ => return Admission::Refused,
            }
        } else {
            None
        };
        let n = self.next;
        self.next += 1;
        self.held.push((n, share, handle));
        match displaced {
            Some(old) => Admission::Displaced(n, old),
            None => Admission::Taken(n),
        }
    }

    /// Gives place `n` back (its connection ended or became a peer). No-op if it was taken.
    pub fn release(&mut self, n: u64) {
        self.held.retain(|(m, _, _)| *m != n);
    }
}

/// The inbound places of a peer server.
pub type Places = Arc<Mutex<Slots<TcpStream>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One inbound connection's place, given back when dropped.
pub struct Place {
    places: Places,
    n: u64,
}

impl Drop for Place {
    fn drop(&mut self) {
        lock(&self.places).release(self.n);
    }
}

/// What happened to a new inbound connection.
pub enum Entry {
    /// It has a place.
    Admitted(Place),
    /// It has a place taken from an older one of the same or a larger share (now shut).
    Displacing(Place),
    /// No place for it.
    Refused,
}

/// Finds a place for `stream` (from `ip`) among `places`; a displaced connection's socket is
/// shut down, which ends its handshake.
pub fn enter(places: &Places, ip: IpAddr, stream: &TcpStream) -> Entry {
    let Ok(handle) = stream.try_clone() else {
        return Entry::Refused;
    };
    let admission = lock(places).admit(Share::of(ip), handle);
    let place = |n| Place {
        places: places.clone(),
        n,
    };
    match admission {
        Admission::Taken(n) => Entry::Admitted(place(n)),
        Admission::Displaced(n, old) => {
            let _ = old.shutdown(Shutdown::Both);
            Entry::Displacing(place(n))
        }
        Admission::Refused => Entry::Refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(s: &str) -> Share {
        Share::of(s.parse().unwrap())
    }

    #[test]
    fn ipv6_counts_by_its_64_prefix_and_mapped_ipv4_as_ipv4() {
        assert_eq!(share("2001:db8:1:2::1"), share("2001:db8:1:2:ffff::9"));
        assert_ne!(share("2001:db8:1:2::1"), share("2001:db8:1:3::1"));
        assert_eq!(share("::ffff:10.0.0.1"), share("10.0.0.1"));
        assert_ne!(share("10.0.0.1"), share("10.0.0.2"));
    }

    #[test]
    fn one_address_holds_at_most_its_share_and_its_oldest_gives_way() {
        let mut s = Slots::new(64, 3);
        let a = share("10.0.0.1");
        for i in 0..3 {
            assert_eq!(s.admit(a, i), Admission::Taken(i as u64));
        }
        // The fourth displaces the first, the fifth the second.
        assert_eq!(s.admit(a, 3), Admission::Displaced(3, 0));
        assert_eq!(s.admit(a, 4), Admission::Displaced(4, 1));
        assert_eq!(s.len(), 3);
        // Another address is not affected.
        assert_eq!(s.admit(share("10.0.0.2"), 9), Admission::Taken(5));
    }

    #[test]
    fn when_full_a_newcomer_displaces_the_largest_share_and_fair_shares_refuse() {
        let mut s = Slots::new(4, 4);
        let (a, b, c) = (share("10.0.0.1"), share("10.0.0.2"), share("10.0.0.3"));
        for i in 0..4 {
            assert_eq!(s.admit(a, i), Admission::Taken(i as u64));
        }
        // Full: b displaces a's oldest, then a's next.
        assert_eq!(s.admit(b, 10), Admission::Displaced(4, 0));
        assert_eq!(s.admit(b, 11), Admission::Displaced(5, 1));
        // a and b hold 2 each: a third b would leave b with more than a; refused.
        assert_eq!(s.admit(b, 12), Admission::Refused);
        // c (none held) takes from a (2, older than b's): a holds 1 then.
        assert_eq!(s.admit(c, 20), Admission::Displaced(6, 2));
        // 1/2/1: b gives way to a newcomer d; then all hold 1 (d) ... a second c is refused.
        assert_eq!(s.admit(share("10.0.0.4"), 30), Admission::Displaced(7, 10));
        assert_eq!(s.admit(c, 21), Admission::Refused);
        assert_eq!(s.len(), 4);
    }

    #[test]
    fn released_places_are_free_again() {
        let mut s = Slots::new(2, 2);
        let a = share("10.0.0.1");
        let b = share("10.0.0.2");
        assert_eq!(s.admit(a, 0), Admission::Taken(0));
        assert_eq!(s.admit(b, 1), Admission::Taken(1));
        assert_eq!(s.admit(b, 2), Admission::Refused);
        s.release(0);
        s.release(0); // twice: no-op
        assert_eq!(s.admit(b, 3), Admission::Taken(2));
        assert!(!s.is_empty());
    }
}
