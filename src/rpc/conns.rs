//! What the three transports share: the table of connection threads that `stop` cuts off
//! and joins, and a waker that interrupts a thread blocked in `poll`.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// The connection threads of one endpoint, each with a handle `stop` uses to cut it off.
/// Shared by the three transports.
pub(super) struct ConnTable<H> {
    next_id: AtomicU64,
    conns: Mutex<Threads<H>>,
}

/// Each thread's handle and join handle, by id.
type Threads<H> = HashMap<u64, (H, JoinHandle<()>)>;

impl<H> Default for ConnTable<H> {
    fn default() -> Self {
        ConnTable {
            next_id: AtomicU64::new(0),
            conns: Mutex::new(HashMap::new()),
        }
    }
}

/// A thread's place in its [`ConnTable`], given up when dropped: pass it as the first
/// argument of the thread's function so that it is dropped last.
pub(super) struct Entry<H> {
    id: u64,
    table: Arc<ConnTable<H>>,
}

impl<H> Drop for Entry<H> {
    fn drop(&mut self) {
        self.table.lock().remove(&self.id);
    }
}

impl<H> ConnTable<H> {
    fn lock(&self) -> MutexGuard<'_, Threads<H>> {
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<H: Send + 'static> ConnTable<H> {
    /// Starts thread `name` running `f` unless `max` threads are running already. When
    /// refused, or when the thread cannot be started, `f` is dropped and `handle` is given
    /// back (the caller may answer on it, then drop it, which closes the connection).
    pub(super) fn spawn(
        self: &Arc<Self>,
        name: &str,
        max: usize,
        handle: H,
        f: impl FnOnce(Entry<H>) + Send + 'static,
    ) -> Result<(), H> {
        let mut conns = self.lock();
        if conns.len() >= max {
            return Err(handle);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let table = self.clone();
        // Spawned under the lock: the thread's exit removes its entry, which must exist. The
        // entry is made in the thread, so a failed spawn drops no entry (which would lock).
        match thread::Builder::new()
            .name(name.into())
            .spawn(move || f(Entry { id, table }))
        {
            Ok(t) => {
                conns.insert(id, (handle, t));
                Ok(())
            }
            Err(_) => Err(handle),
        }
    }

    /// Connections served by threads other than the calling one (a connection may stop its
    /// own endpoint: `admin_stopWS` over WebSocket).
    pub(super) fn others(&self) -> usize {
        let me = thread::current().id();
        self.lock()
            .values()
            .filter(|(_, t)| t.thread().id() != me)
            .count()
    }

    pub(super) fn for_each(&self, mut f: impl FnMut(&H)) {
        self.lock().values().for_each(|(h, _)| f(h));
    }

    /// Cuts every remaining connection with `cut` and joins its thread. The calling thread's
    /// own connection, if it is one of them, is left to finish its answer and end by itself
    /// (a thread cannot join itself).
    pub(super) fn end_all(&self, cut: impl Fn(&H)) {
        let me = thread::current().id();
        let rest: Vec<(H, JoinHandle<()>)> = self
            .lock()
            .drain()
            .map(|(_, e)| e)
            .filter(|(_, t)| t.thread().id() != me)
            .collect();
        for (h, _) in &rest {
            cut(h);
        }
        for (_, t) in rest {
            let _ = t.join();
        }
    }
}

/// Wakes a thread blocked in [`wait_readable`] from any other thread.
pub(super) struct Waker {
    tx: UnixStream,
    rx: UnixStream,
}

impl Waker {
    pub(super) fn new() -> io::Result<Waker> {
        let (tx, rx) = UnixStream::pair()?;
        tx.set_nonblocking(true)?;
        rx.set_nonblocking(true)?;
        Ok(Waker { tx, rx })
    }

    /// Makes the waker's descriptor readable. A full buffer means a wake-up is pending anyway.
    pub(super) fn wake(&self) {
        let _ = (&self.tx).write(&[1]);
    }

    pub(super) fn fd(&self) -> RawFd {
        self.rx.as_raw_fd()
    }

    /// Consumes pending wake-ups.
    pub(super) fn drain(&self) {
        let mut buf = [0u8; 64];
        while matches!((&self.rx).read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// Blocks until one of `fds` is readable or hung up, or `timeout` passes (`None`: no limit).
pub(super) fn wait_readable(fds: &[RawFd], timeout: Option<Duration>) -> io::Result<()> {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ms = timeout.map_or(-1, |t| t.as_millis().clamp(1, i32::MAX as u128) as i32);
    // SAFETY: `pfds` is a valid array of `pfds.len()` pollfd structures.
    let r = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}
