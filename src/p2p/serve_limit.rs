//! How fast one peer may have blocks served: a `GetBlocks` is bounded in size (see
//! [`super::sync::MAX_SERVE_BYTES`]) but a peer could send them back to back, making the node
//! read and upload blocks as fast as its disk allows. Two token buckets per peer bound that:
//!
//! - requests: [`REQUESTS_PER_SECOND`], bursts of [`REQUEST_BURST`];
//! - bytes served: [`BYTES_PER_SECOND`], bursts of [`BYTE_BURST`] (charged once a request is
//!   served, so a peer's debt can exceed the burst by the requests it had queued).
//!
//! A peer over its rate is slowed: its reader thread waits before the request is queued, so
//! the node reads nothing more from it meanwhile (the peer's socket fills, and it stalls). A
//! peer whose debt would take more than [`MAX_WAIT`] to pay off is dropped. A syncing peer
//! asks for one batch of [`super::sync::SYNC_BATCH`] blocks at a time (ten a second at the
//! fastest measured, about 12 MB/s of empty blocks): far below both rates.

use std::time::{Duration, Instant};

pub const REQUESTS_PER_SECOND: f64 = 64.0;
pub const REQUEST_BURST: f64 = 128.0;
pub const BYTES_PER_SECOND: f64 = 64.0 * 1024.0 * 1024.0;
pub const BYTE_BURST: f64 = 128.0 * 1024.0 * 1024.0;
/// A request that would have to wait longer than this drops the peer instead.
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// A token bucket whose level may go below zero (a debt paid off by time).
#[derive(Debug, Clone)]
pub struct Bucket {
    rate: f64,
    burst: f64,
    level: f64,
    at: Instant,
}

impl Bucket {
    /// A full bucket refilled at `rate` per second up to `burst`.
    pub fn new(rate: f64, burst: f64, now: Instant) -> Bucket {
        Bucket {
            rate,
            burst,
            level: burst,
            at: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.at).as_secs_f64();
        self.level = (self.level + dt * self.rate).min(self.burst);
        self.at = now.max(self.at);
    }

    /// Takes `cost`, going into debt if it must.
    pub fn charge(&mut self, cost: f64, now: Instant) {
        self.refill(now);
        self.level -= cost;
    }

    /// How long until the level is back to zero (zero when it is not in debt).
    pub fn wait(&mut self, now: Instant) -> Duration {
        self.refill(now);
        if self.level >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.level / self.rate)
        }
    }
}

/// What a peer's next `GetBlocks` must do.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Queue it after waiting this long (zero: at once).
    After(Duration),
    /// Drop the peer: it asks far faster than it may.
    Drop,
}

/// One peer's buckets.
#[derive(Debug, Clone)]
pub struct ServeLimit {
    requests: Bucket,
    bytes: Bucket,
}

impl ServeLimit {
    pub fn new(now: Instant) -> ServeLimit {
        ServeLimit {
            requests: Bucket::new(REQUESTS_PER_SECOND, REQUEST_BURST, now),
            bytes: Bucket::new(BYTES_PER_SECOND, BYTE_BURST, now),
        }
    }

    /// A new request: charged one request; how long it waits for both buckets.
    pub fn request(&mut self, now: Instant) -> Verdict {
        self.requests.charge(1.0, now);
        let wait = self.requests.wait(now).max(self.bytes.wait(now));
        if wait > MAX_WAIT {
            Verdict::Drop
        } else {
            Verdict::After(wait)
        }
    }

    /// A request was served with `bytes` of blocks.
    pub fn served(&mut self, bytes: usize, now: Instant) {
        self.bytes.charge(bytes as f64, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_free_then_requests_are_paced_at_the_rate() {
        let t0 = Instant::now();
        let mut l = ServeLimit::new(t0);
        for _ in 0..REQUEST_BURST as usize {
            assert_eq!(l.request(t0), Verdict::After(Duration::ZERO));
        }
        // One more at the same instant waits one interval.
        let Verdict::After(w) = l.request(t0) else {
            panic!("dropped")
        };
        let one = 1.0 / REQUESTS_PER_SECOND;
        assert!((w.as_secs_f64() - one).abs() < 1e-9, "{w:?}");
        // After waiting it, the next waits one more interval, not more.
        let t1 = t0 + w;
        let Verdict::After(w2) = l.request(t1) else {
            panic!("dropped")
        };
        assert!((w2.as_secs_f64() - one).abs() < 1e-9, "{w2:?}");
        // A second's rest refills the bucket by the rate, never past the burst.
        let mut l = ServeLimit::new(t0);
        l.request(t0 + Duration::from_secs(3600));
        assert_eq!(l.requests.level, REQUEST_BURST - 1.0);
    }

    #[test]
    fn bytes_served_past_the_burst_slow_the_next_request_and_a_large_debt_drops_the_peer() {
        let t0 = Instant::now();
        let mut l = ServeLimit::new(t0);
        l.served(BYTE_BURST as usize, t0);
        assert_eq!(l.request(t0), Verdict::After(Duration::ZERO));
        // One second's worth over: the next request waits a second.
        l.served(BYTES_PER_SECOND as usize, t0);
        let Verdict::After(w) = l.request(t0) else {
            panic!("dropped")
        };
        assert!((w.as_secs_f64() - 1.0).abs() < 1e-6, "{w:?}");
        // More than MAX_WAIT's worth over: dropped.
        l.served((BYTES_PER_SECOND * MAX_WAIT.as_secs_f64()) as usize, t0);
        assert_eq!(l.request(t0), Verdict::Drop);
        // Paid off by time.
        assert_eq!(
            l.request(t0 + Duration::from_secs(60)),
            Verdict::After(Duration::ZERO)
        );
    }
}
