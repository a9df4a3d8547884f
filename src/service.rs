//! Background services: what runs on its own thread beside the JSON-RPC calls (unlock expiry,
//! the keystore watch, the notification pump, the endpoints; later the sealer, the pool, the
//! state migration, the cache saver, the peers).
//!
//! Each service implements [`Service`]; the node starts them in dependency order and stops
//! them in reverse ([`Services`]). A service's thread is a [`Worker`]: a named thread with a
//! stop flag that `stop` sets, wakes and joins, so that shutdown never leaves a thread
//! behind and never waits longer than the thread's current step.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// A background service of the node.
pub trait Service: Send {
    /// A short name for logs (`unlock-expiry`, `endpoints`).
    fn name(&self) -> &'static str;
    /// Starts the service's threads; returns once it runs. Fails with a message for the log
    /// (the node then stops what it has started and exits).
    fn start(&mut self) -> Result<(), String>;
    /// Stops the service: sets its stop flag, wakes its threads and joins them. Called once,
    /// after a successful `start`.
    fn stop(&mut self);
}

/// The running services of a node, stopped in the reverse of their start order.
#[derive(Default)]
pub struct Services {
    running: Vec<Box<dyn Service>>,
}

impl Services {
    /// Starts `s` and keeps it for [`Services::stop_all`]. On failure `s` is dropped, and the
    /// services started before it keep running (the caller stops them).
    pub fn start(&mut self, mut s: Box<dyn Service>) -> Result<(), String> {
        let name = s.name();
        s.start().map_err(|e| format!("{name}: {e}"))?;
        crate::log::debug("Service started", &[("service", name)]);
        self.running.push(s);
        Ok(())
    }

    /// Stops every service, the last started first, logging each.
    pub fn stop_all(&mut self) {
        while let Some(mut s) = self.running.pop() {
            let name = s.name();
            s.stop();
            crate::log::debug("Service stopped", &[("service", name)]);
        }
    }

    /// The names of the running services, in start order.
    pub fn names(&self) -> Vec<&'static str> {
        self.running.iter().map(|s| s.name()).collect()
    }
}

/// A stop flag that a thread can wait on: [`StopFlag::wait`] sleeps until a deadline or until
/// the flag is set, whichever comes first.
#[derive(Clone, Default)]
pub struct StopFlag(Arc<(Mutex<bool>, Condvar)>);

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    fn lock(&self) -> MutexGuard<'_, bool> {
        self.0 .0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the flag and wakes every waiter.
    pub fn set(&self) {
        *self.lock() = true;
        self.0 .1.notify_all();
    }

    pub fn is_set(&self) -> bool {
        *self.lock()
    }

    /// Sleeps for `d` or until the flag is set; true when it is set.
    pub fn wait(&self, d: Duration) -> bool {
        let deadline = Instant::now() + d;
        let mut set = self.lock();
        while !*set {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            set = self
                .0
                 .1
                .wait_timeout(set, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }
}

/// A named thread running one service loop, with its stop flag.
pub struct Worker {
    stop: StopFlag,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts thread `name` running `f`, which must return soon after its [`StopFlag`] is
    /// set (it waits on the flag, or checks it between short steps).
    pub fn spawn(name: &str, f: impl FnOnce(StopFlag) + Send + 'static) -> Result<Worker, String> {
        let stop = StopFlag::new();
        let flag = stop.clone();
        let thread = thread::Builder::new()
            .name(name.into())
            .spawn(move || f(flag))
            .map_err(|e| format!("cannot start thread {name}: {e}"))?;
        Ok(Worker {
            stop,
            thread: Some(thread),
        })
    }

    /// A worker whose thread calls `step` every `every` until stopped.
    pub fn periodic(
        name: &str,
        every: Duration,
        mut step: impl FnMut() + Send + 'static,
    ) -> Result<Worker, String> {
        Worker::spawn(name, move |stop| {
            while !stop.wait(every) {
                step();
            }
        })
    }

    /// Sets the stop flag and joins the thread (idempotent).
    pub fn stop(&mut self) {
        self.stop.set();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Probe {
        name: &'static str,
        log: Arc<Mutex<Vec<String>>>,
        fail: bool,
    }

    impl Service for Probe {
        fn name(&self) -> &'static str {
            self.name
        }
        fn start(&mut self) -> Result<(), String> {
            if self.fail {
                return Err("no".into());
            }
            self.log
                .lock()
                .unwrap()
                .push(format!("start {}", self.name));
            Ok(())
        }
        fn stop(&mut self) {
            self.log.lock().unwrap().push(format!("stop {}", self.name));
        }
    }

    #[test]
    fn services_stop_in_reverse_order_and_a_failed_start_is_not_kept() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut s = Services::default();
        for name in ["a", "b", "c"] {
            s.start(Box::new(Probe {
                name,
                log: log.clone(),
                fail: false,
            }))
            .unwrap();
        }
        let e = s
            .start(Box::new(Probe {
                name: "d",
                log: log.clone(),
                fail: true,
            }))
            .unwrap_err();
        assert_eq!(e, "d: no");
        assert_eq!(s.names(), ["a", "b", "c"]);
        s.stop_all();
        assert_eq!(
            *log.lock().unwrap(),
            ["start a", "start b", "start c", "stop c", "stop b", "stop a"]
        );
        assert!(s.names().is_empty());
    }

    #[test]
    fn a_worker_runs_until_stopped_and_is_joined() {
        let steps = Arc::new(AtomicUsize::new(0));
        let s = steps.clone();
        let mut w = Worker::periodic("test-periodic", Duration::from_millis(1), move || {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        while steps.load(Ordering::SeqCst) < 3 {
            thread::yield_now();
        }
        w.stop();
        let after = steps.load(Ordering::SeqCst);
        thread::sleep(Duration::from_millis(20));
        assert_eq!(
            steps.load(Ordering::SeqCst),
            after,
            "no step after stop returned"
        );
        w.stop(); // idempotent
    }

    #[test]
    fn a_stop_flag_wakes_a_long_wait() {
        let flag = StopFlag::new();
        let f = flag.clone();
        let t = thread::spawn(move || f.wait(Duration::from_secs(3600)));
        flag.set();
        assert!(t.join().unwrap(), "the wait saw the flag");
        assert!(!StopFlag::new().wait(Duration::from_millis(1)));
    }
}
