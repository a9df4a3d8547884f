//! The IPC transport: a Unix domain socket carrying a stream of JSON values (separators and
//! newlines optional), each answered with JSON + `\n`.
//!
//! Each connection has a reader thread (`ipc-conn`) that decodes and handles requests one
//! after the other, in order, and a writer thread (`ipc-writer`) fed by a channel, so that
//! notifications go out while the reader waits for input. Replies and notifications share
//! the channel, which keeps a subscribe reply ahead of the notifications it releases.
//!
//! The reference puts no limit on an IPC message; we cap one at [`MAX_IPC_MESSAGE_BYTES`],
//! because the decoder buffers a whole value and an endless one would exhaust memory.

use std::cell::Cell;
use std::fs::{self, DirBuilder, Permissions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::value::RawValue;

use super::conns::{wait_readable, ConnTable, Entry, Waker};
use super::endpoint::{Endpoint, IpcConfig};
use super::error::{RpcError, INVALID_REQUEST};
use super::pubsub::Connection;
use super::server::{error_response, too_deep, Dispatcher, NestingScanner};
use super::ws::{MAX_QUEUED_NOTIFICATIONS, WRITE_TIMEOUT};

/// The largest JSON value (whitespace before it included) one IPC message may take.
pub const MAX_IPC_MESSAGE_BYTES: usize = 16 << 20;

/// A running IPC endpoint.
pub struct IpcServer {
    path: PathBuf,
    /// Device and inode of the socket file we created: `stop` removes only that file.
    file_id: (u64, u64),
    shared: Arc<Shared>,
    accept_waker: Arc<Waker>,
    accept: JoinHandle<()>,
}

struct Shared {
    dispatcher: Dispatcher,
    stopping: AtomicBool,
    conns: Arc<ConnTable<Arc<UnixStream>>>,
}

impl IpcServer {
    /// Listens on `cfg.path`: creates the parent directory (mode 0751) if missing, replaces
    /// a stale socket file, and makes the socket 0600. Fails when the path holds anything
    /// but a socket, when another server is listening there, or on any I/O error.
    pub fn start(cfg: &IpcConfig, dispatcher: Dispatcher) -> io::Result<IpcServer> {
        let path = cfg.path.clone();
        let context = |e: io::Error| {
            io::Error::new(e.kind(), format!("IPC endpoint {}: {e}", path.display()))
        };
        prepare_path(&path).map_err(context)?;
        let listener = UnixListener::bind(&path).map_err(context)?;
        let made = fs::set_permissions(&path, Permissions::from_mode(0o600))
            .and_then(|()| fs::metadata(&path))
            .and_then(|m| listener.set_nonblocking(true).map(|()| m));
        let meta = match made {
            Ok(m) => m,
            Err(e) => {
                let _ = fs::remove_file(&path);
                return Err(context(e));
            }
        };
        let shared = Arc::new(Shared {
            dispatcher,
            stopping: AtomicBool::new(false),
            conns: Arc::new(ConnTable::default()),
        });
        let accept_waker = Arc::new(Waker::new()?);
        let accept = {
            let (shared, waker) = (shared.clone(), accept_waker.clone());
            thread::Builder::new()
                .name("ipc-accept".into())
                .spawn(move || accept_loop(listener, shared, waker))?
        };
        Ok(IpcServer {
            path,
            file_id: (meta.dev(), meta.ino()),
            shared,
            accept_waker,
            accept,
        })
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the listener, removes the socket file, shuts every connection down and joins
    /// the threads.
    pub fn stop(self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.accept_waker.wake();
        let _ = self.accept.join();
        // Another server may have replaced the file since; leave that one alone.
        if fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.file_id) {
            let _ = fs::remove_file(&self.path);
        }
        self.shared.conns.end_all(|s| {
            let _ = s.shutdown(Shutdown::Both);
        });
    }
}

impl Endpoint for IpcServer {
    /// The socket path.
    fn url(&self) -> String {
        self.path.display().to_string()
    }

    fn stop(self: Box<Self>) {
        IpcServer::stop(*self)
    }
}

/// Creates the parent directory if missing and removes a stale socket at `path`.
fn prepare_path(path: &Path) -> io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.exists() {
            DirBuilder::new()
                .recursive(true)
                .mode(0o751)
                .create(parent)?;
        }
    }
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => {
            // A socket someone still answers on is not stale: taking it over would cut off
            // a running node.
            if UnixStream::connect(path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    "another process is listening on this socket",
                ));
            }
            fs::remove_file(path)
        }
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "the path exists and is not a socket; not removing it",
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn accept_loop(listener: UnixListener, shared: Arc<Shared>, waker: Arc<Waker>) {
    while !shared.stopping.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let stream = Arc::new(stream);
                let handle = stream.clone();
                let s = shared.clone();
                let _ = shared
                    .conns
                    .spawn("ipc-conn", usize::MAX, handle, move |entry| {
                        connection(entry, stream, s)
                    });
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let _ = wait_readable(&[listener.as_raw_fd(), waker.fd()], None);
                waker.drain();
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // Out of descriptors and the like: back off instead of spinning.
            Err(_) => thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// What the reader hands the writer.
enum Out {
    Message(String),
    /// The reader is done: write what is queued, then close.
    End,
}

fn connection(_entry: Entry<Arc<UnixStream>>, stream: Arc<UnixStream>, shared: Arc<Shared>) {
    let _ = stream.set_nonblocking(false); // some systems let accepted sockets inherit it
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let out = stream.clone();
    let (tx, rx) = mpsc::sync_channel::<Out>(MAX_QUEUED_NOTIFICATIONS);
    let Ok(writer) = thread::Builder::new()
        .name("ipc-writer".into())
        .spawn(move || write_loop(out, rx))
    else {
        return;
    };
    let sink = tx.clone();
    let sink_stream = stream.clone();
    let conn = Connection::new(move |m| match sink.try_send(Out::Message(m)) {
        Ok(()) => true,
        // Too slow a reader: cut off rather than queue without bound.
        Err(mpsc::TrySendError::Full(_)) => {
            let _ = sink_stream.shutdown(Shutdown::Both);
            false
        }
        Err(mpsc::TrySendError::Disconnected(_)) => false,
    });
    read_loop(&stream, &conn, &tx, &shared.dispatcher);
    conn.close();
    let _ = tx.send(Out::End);
    let _ = writer.join();
    let _ = stream.shutdown(Shutdown::Both);
}

/// Decodes and handles requests until EOF, an I/O error, a syntax error (answered -32700
/// with the decoder's text) or an oversized message (answered -32600).
fn read_loop(stream: &UnixStream, conn: &Arc<Connection>, out: &SyncSender<Out>, d: &Dispatcher) {
    let used = Rc::new(Cell::new(0usize));
    let depth = Rc::new(Cell::new(Some(NestingScanner::default())));
    let reader = Capped {
        inner: BufReader::new(stream),
        used: used.clone(),
        depth: depth.clone(),
    };
    let values = serde_json::Deserializer::from_reader(reader).into_iter::<Box<RawValue>>();
    for value in values {
        let error = match value {
            Ok(raw) => {
                used.set(0);
                if let Some(reply) = d.handle_within_limit(&raw, Some(conn)) {
                    if out.send(Out::Message(reply)).is_err() {
                        return;
                    }
                }
                conn.activate();
                continue;
            }
            Err(_) if depth.take().is_none() => too_deep(),
            Err(_) if used.get() > MAX_IPC_MESSAGE_BYTES => RpcError::new(
                INVALID_REQUEST,
                format!("message too large: more than {MAX_IPC_MESSAGE_BYTES} bytes"),
            ),
            Err(e) if e.is_syntax() => RpcError::parse(e.to_string()),
            // EOF (clean or inside a value) or an I/O error: close without a word.
            Err(_) => return,
        };
        let _ = out.send(Out::Message(error_response(error)));
        return;
    }
}

/// Writes each message followed by `\n`, flushing when the queue runs empty. On a write
/// error (a peer that has not read for [`WRITE_TIMEOUT`] included) it shuts the socket
/// down, which ends the reader too.
fn write_loop(stream: Arc<UnixStream>, rx: Receiver<Out>) {
    let mut w = BufWriter::new(&*stream);
    let mut next = rx.recv().ok();
    while let Some(Out::Message(m)) = next {
        if w.write_all(m.as_bytes())
            .and_then(|()| w.write_all(b"\n"))
            .is_err()
        {
            break;
        }
        next = match rx.try_recv() {
            Ok(o) => Some(o),
            Err(TryRecvError::Disconnected) => None,
            Err(TryRecvError::Empty) => {
                if w.flush().is_err() {
                    break;
                }
                rx.recv().ok()
            }
        };
    }
    let _ = w.flush();
    drop(w);
    let _ = stream.shutdown(Shutdown::Both);
}

/// Counts the bytes of the current message and fails once it passes the cap.
struct Capped<R> {
    inner: R,
    used: Rc<Cell<usize>>,
    /// Nesting depth of the stream so far; set to `None` once it went too deep.
    depth: Rc<Cell<Option<NestingScanner>>>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut scanner = self.depth.take();
        let deep = scanner.as_mut().is_some_and(|s| !s.feed(&buf[..n]));
        if deep {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "too deep"));
        }
        self.depth.set(scanner);
        self.used.set(self.used.get() + n);
        if self.used.get() > MAX_IPC_MESSAGE_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "message too large",
            ));
        }
        Ok(n)
    }
}
