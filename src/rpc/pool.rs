//! The worker threads of one endpoint: an elastic pool that runs jobs (a connection with a
//! whole request, a stream connection with messages to answer). Threads are started when a
//! job finds none idle, up to a maximum, and end after a minute without work; `stop` lets
//! running jobs finish and joins every thread.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// A unit of work.
pub(super) type Job = Box<dyn FnOnce() + Send>;

/// How long an idle thread waits for work before it ends.
const IDLE_EXIT: Duration = Duration::from_secs(60);

struct State {
    queue: VecDeque<Job>,
    idle: usize,
    threads: usize,
    stopping: bool,
    handles: Vec<JoinHandle<()>>,
}

/// An elastic pool of named threads.
pub(super) struct Pool {
    /// Jobs waiting for a thread (the queue's length, readable without the lock).
    backlog: std::sync::atomic::AtomicUsize,
    name: String,
    max: usize,
    state: Mutex<State>,
    work: Condvar,
}

impl Pool {
    /// A pool of at most `max` threads named `name`; none runs until a job comes.
    pub(super) fn new(name: &str, max: usize) -> Arc<Pool> {
        Arc::new(Pool {
            backlog: std::sync::atomic::AtomicUsize::new(0),
            name: name.to_string(),
            max: max.max(1),
            state: Mutex::new(State {
                queue: VecDeque::new(),
                idle: 0,
                threads: 0,
                stopping: false,
                handles: Vec::new(),
            }),
            work: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `job`; wakes an idle thread or starts one (below the maximum). After `stop`
    /// the job is dropped. If no thread can be started and none runs, the job runs on the
    /// calling thread, so that it is never lost.
    pub(super) fn submit(self: &Arc<Self>, job: Job) {
        let mut st = self.lock();
        if st.stopping {
            return;
        }
        st.queue.push_back(job);
        self.backlog.store(st.queue.len(), Ordering::Relaxed);
        // An idle thread woken takes one job; jobs beyond the idle threads need new ones
        // (a job can run long: an HTTP connection whose client keeps sending).
        if st.idle >= st.queue.len() || st.threads >= self.max {
            drop(st);
            self.work.notify_one();
            return; // or a busy thread takes it when it is done
        }
        let pool = self.clone();
        match thread::Builder::new()
            .name(self.name.clone())
            .spawn(move || pool.run())
        {
            Ok(h) => {
                st.threads += 1;
                st.handles.retain(|h| !h.is_finished());
                st.handles.push(h);
            }
            Err(_) if st.threads == 0 => {
                let job = st.queue.pop_back().expect("just queued");
                drop(st);
                job();
            }
            Err(_) => {}
        }
    }

    fn run(self: Arc<Self>) {
        let mut st = self.lock();
        loop {
            if let Some(job) = st.queue.pop_front() {
                self.backlog.store(st.queue.len(), Ordering::Relaxed);
                drop(st);
                job();
                st = self.lock();
                continue;
            }
            if st.stopping {
                break;
            }
            st.idle += 1;
            let (next, timeout) = self
                .work
                .wait_timeout(st, IDLE_EXIT)
                .unwrap_or_else(|p| p.into_inner());
            st = next;
            st.idle -= 1;
            if timeout.timed_out() && st.queue.is_empty() && !st.stopping {
                break;
            }
        }
        st.threads -= 1;
    }

    /// Threads running now.
    /// Jobs waiting for a thread now: a job that could hand its work back (an HTTP
    /// connection whose client is between requests) does so rather than make them wait.
    pub(super) fn backlog(&self) -> usize {
        self.backlog.load(Ordering::Relaxed)
    }

    #[cfg(test)]
    pub(super) fn threads(&self) -> usize {
        self.lock().threads
    }

    /// Drops the queued jobs, lets running ones finish and joins every thread. A thread that
    /// calls `stop` (a job stopping its own endpoint) is not joined: it ends by itself.
    pub(super) fn stop(&self) {
        let handles = {
            let mut st = self.lock();
            st.stopping = true;
            st.queue.clear();
            self.backlog.store(0, Ordering::Relaxed);
            std::mem::take(&mut st.handles)
        };
        self.work.notify_all();
        let me = thread::current().id();
        for h in handles {
            if h.thread().id() != me {
                let _ = h.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    #[test]
    fn jobs_run_on_at_most_max_threads_and_stop_joins() {
        let pool = Pool::new("test-pool", 3);
        let (tx, rx) = mpsc::channel();
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        for i in 0..10 {
            let (tx, running, peak, gate) =
                (tx.clone(), running.clone(), peak.clone(), gate.clone());
            pool.submit(Box::new(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                let mut open = gate.0.lock().unwrap();
                while !*open {
                    open = gate.1.wait(open).unwrap();
                }
                drop(open);
                running.fetch_sub(1, Ordering::SeqCst);
                tx.send(i).unwrap();
            }));
        }
        while running.load(Ordering::SeqCst) < 3 {
            thread::yield_now();
        }
        assert_eq!(pool.threads(), 3);
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        let mut done: Vec<i32> = (0..10).map(|_| rx.recv().unwrap()).collect();
        done.sort();
        assert_eq!(done, (0..10).collect::<Vec<_>>());
        assert_eq!(peak.load(Ordering::SeqCst), 3);
        pool.stop();
        assert_eq!(pool.threads(), 0);
        // After stop, jobs are dropped.
        let (tx, rx) = mpsc::channel::<()>();
        pool.submit(Box::new(move || tx.send(()).unwrap()));
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
    }

    /// Two long jobs submitted while one thread is idle both start: the second does not wait
    /// behind the first (an HTTP connection can keep a job for as long as its client sends).
    #[test]
    fn jobs_beyond_the_idle_threads_get_new_threads() {
        let pool = Pool::new("test-pool", 4);
        let (tx, rx) = mpsc::channel();
        let warm = tx.clone();
        pool.submit(Box::new(move || warm.send(0).unwrap()));
        assert_eq!(rx.recv().unwrap(), 0);
        while pool.lock().idle == 0 {
            thread::yield_now();
        }
        let both = Arc::new(std::sync::Barrier::new(2));
        for i in 1..=2 {
            let (tx, both) = (tx.clone(), both.clone());
            pool.submit(Box::new(move || {
                both.wait(); // returns only once both jobs run at the same time
                tx.send(i).unwrap();
            }));
        }
        for _ in 0..2 {
            assert!(
                rx.recv_timeout(Duration::from_secs(10)).is_ok(),
                "the second job waited behind the first"
            );
        }
        pool.stop();
    }
}
