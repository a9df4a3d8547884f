//! The IPC transport: a Unix domain socket carrying a stream of JSON values (separators and
//! newlines optional), each answered with JSON + `\n`.
//!
//! Each connection has a reader thread (`ipc-conn`) that finds whole values in its buffer
//! (`rpc::framing`) and handles them one after the other, in order, and a writer thread
//! (`ipc-writer`) fed by an [`Outbox`] bounded in bytes, so that notifications go out while
//! the reader waits for input. Replies and notifications share the outbox, which keeps a
//! subscribe reply ahead of the notifications it releases; a client that does not read gets
//! no more requests read, and one that lets notifications pile up is cut off.
//!
//! At most [`IpcConfig::max_connections`] connections are served at once; one more is told
//! so in a JSON-RPC error and closed. The reference puts no limit on an IPC message; we cap
//! one at [`MAX_IPC_MESSAGE_BYTES`], because a value is buffered whole. The buffer that held
//! a request is wiped as values are taken and when the connection ends: requests carry
//! passphrases and key data.

use std::fs::{self, DirBuilder, Permissions};
use std::io::{self, BufWriter, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::value::RawValue;
use zeroize::Zeroizing;

use super::conns::{wait_readable, ConnTable, Entry, Waker};
use super::endpoint::{Endpoint, IpcConfig};
use super::error::{RpcError, INVALID_REQUEST, SERVER_ERROR};
use super::framing::{Frame, Framer};
use super::outbox::{Outbox, OUTBOX_HIGH, OUTBOX_LIMIT};
use super::pubsub::Connection;
use super::server::{error_response, too_deep, Dispatcher};
use super::wipe::{consume, grow};

/// How long a write may block before the connection is dropped (the reference's 10 s).
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// The read buffer's first size: an idle connection costs this much; the buffer doubles
/// when a read fills it.
const READ_START: usize = 1024;
/// Capacity beyond which an emptied read buffer is given back.
const KEEP_CAPACITY: usize = 64 * 1024;
/// The writer thread only moves bytes: a small stack keeps an idle connection cheap.
const WRITER_STACK: usize = 64 * 1024;

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
    max_connections: usize,
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
            max_connections: cfg.max_connections.max(1),
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
                let spawned =
                    shared
                        .conns
                        .spawn("ipc-conn", shared.max_connections, handle, move |entry| {
                            connection(entry, stream, s)
                        });
                if let Err(stream) = spawned {
                    refuse(&stream, shared.max_connections);
                }
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

/// Tells a connection over the cap why it is closed (without blocking the acceptor).
fn refuse(stream: &UnixStream, max: usize) {
    let _ = stream.set_nonblocking(true);
    let mut text = error_response(RpcError::new(
        SERVER_ERROR,
        format!("too many IPC connections: at most {max} allowed"),
    ));
    text.push('\n');
    let _ = (&*stream).write_all(text.as_bytes());
    let _ = stream.shutdown(Shutdown::Both);
}

fn connection(_entry: Entry<Arc<UnixStream>>, stream: Arc<UnixStream>, shared: Arc<Shared>) {
    let _ = stream.set_nonblocking(false); // some systems let accepted sockets inherit it
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let outbox = Arc::new(Outbox::new(OUTBOX_LIMIT, OUTBOX_HIGH));
    let writer = {
        let (stream, outbox) = (stream.clone(), outbox.clone());
        thread::Builder::new()
            .name("ipc-writer".into())
            .stack_size(WRITER_STACK)
            .spawn(move || write_loop(&stream, &outbox))
    };
    let Ok(writer) = writer else { return };
    let sink = outbox.clone();
    let sink_stream = stream.clone();
    let conn = Connection::new(move |m| {
        // Too slow a reader: cut off rather than queue without bound.
        let queued = sink.offer(m);
        if !queued {
            let _ = sink_stream.shutdown(Shutdown::Both);
        }
        queued
    });
    read_loop(&stream, &conn, &outbox, &shared.dispatcher);
    conn.close();
    outbox.finish();
    let _ = writer.join();
    let _ = stream.shutdown(Shutdown::Both);
}

/// Where in the stream a buffer starts: its line (1-based) and the bytes before it on that
/// line, so that an error names the position as a decoder of the whole stream would.
#[derive(Debug, Clone, Copy)]
struct StreamPos {
    line: usize,
    column: usize,
}

impl StreamPos {
    /// The position after `bytes`.
    fn advance(mut self, bytes: &[u8]) -> StreamPos {
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(i) => {
                self.line += bytes.iter().filter(|&&b| b == b'\n').count();
                self.column = bytes.len() - i - 1;
            }
            None => self.column += bytes.len(),
        }
        self
    }
}

/// The decoder's error for a value that starts at `at`, its position made stream-relative.
fn stream_error(e: &serde_json::Error, at: StreamPos) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let Some(message) = text.strip_suffix(&suffix) else {
        return text;
    };
    let (line, column) = if e.line() == 1 {
        (at.line, at.column + e.column())
    } else {
        (at.line + e.line() - 1, e.column())
    };
    format!("{message} at line {line} column {column}")
}

/// Decodes and handles requests until EOF, an I/O error, a syntax error (answered -32700
/// with the decoder's text), a value nested too deep, or an oversized message (answered
/// -32600). The bytes are held in one buffer that is wiped as values are taken and when the
/// connection ends; values are handed to the dispatcher without a copy.
fn read_loop(stream: &UnixStream, conn: &Arc<Connection>, out: &Outbox, d: &Dispatcher) {
    let mut buf = Zeroizing::new(Vec::with_capacity(READ_START));
    let mut framer = Framer::new();
    // The stream position of `buf[0]`.
    let mut at = StreamPos { line: 1, column: 0 };
    let mut ended = false;
    loop {
        let range = match framer.next(&buf) {
            Frame::Value(r) => r,
            Frame::TooDeep => {
                let _ = out.put(error_response(too_deep()), WRITE_TIMEOUT);
                return;
            }
            Frame::NeedMore if ended => match framer.rest(&buf) {
                Some(r) => r,
                None => return,
            },
            Frame::NeedMore => {
                if framer.partial_len(&buf) == 0 {
                    // Only whitespace so far: nothing to keep.
                    at = at.advance(&buf);
                    let n = buf.len();
                    consume(&mut buf, n);
                    framer.consumed(n);
                } else if framer.partial_len(&buf) > MAX_IPC_MESSAGE_BYTES {
                    let _ = out.put(error_response(too_large()), WRITE_TIMEOUT);
                    return;
                }
                ended = !read_more(stream, &mut buf);
                continue;
            }
        };
        if range.len() > MAX_IPC_MESSAGE_BYTES {
            let _ = out.put(error_response(too_large()), WRITE_TIMEOUT);
            return;
        }
        let start = at.advance(&buf[..range.start]);
        let reply = match serde_json::from_slice::<&RawValue>(&buf[range.clone()]) {
            Ok(raw) => d.handle_within_limit(raw, Some(conn)),
            Err(e) if e.is_syntax() => {
                let e = RpcError::parse(stream_error(&e, start));
                let _ = out.put(error_response(e), WRITE_TIMEOUT);
                return;
            }
            // A value cut short by the end of the stream: closed without a word.
            Err(_) => return,
        };
        if let Some(reply) = reply {
            if !out.put(reply, WRITE_TIMEOUT) {
                return;
            }
        }
        conn.activate();
        at = start.advance(&buf[range.clone()]);
        consume(&mut buf, range.end);
        framer.consumed(range.end);
        if buf.is_empty() && buf.capacity() > KEEP_CAPACITY {
            // A large message is answered: an idle connection goes back to a small buffer.
            buf = Zeroizing::new(Vec::with_capacity(READ_START));
        }
    }
}

fn too_large() -> RpcError {
    RpcError::new(
        INVALID_REQUEST,
        format!("message too large: more than {MAX_IPC_MESSAGE_BYTES} bytes"),
    )
}

/// Appends what the socket has to `buf` (waiting for something); false at the end of the
/// stream or on an error.
fn read_more(mut stream: &UnixStream, buf: &mut Zeroizing<Vec<u8>>) -> bool {
    let len = buf.len();
    if buf.capacity() == len {
        grow(buf, len.max(READ_START));
    }
    let room = buf.capacity() - len;
    buf.resize(len + room, 0);
    loop {
        match stream.read(&mut buf[len..]) {
            Ok(n) => {
                buf.truncate(len + n);
                return n > 0;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => {
                buf.truncate(len);
                return false;
            }
        }
    }
}

/// Writes each message followed by `\n`, flushing when the queue runs empty. On a write
/// error (a peer that has not read for [`WRITE_TIMEOUT`] included) it shuts the socket
/// down, which ends the reader too, and closes the outbox.
fn write_loop(stream: &UnixStream, outbox: &Outbox) {
    let mut w = BufWriter::new(stream);
    while let Some(m) = outbox.take() {
        if w.write_all(m.as_bytes())
            .and_then(|()| w.write_all(b"\n"))
            .is_err()
        {
            break;
        }
        if outbox.bytes() == 0 && w.flush().is_err() {
            break;
        }
    }
    let _ = w.flush();
    drop(w);
    outbox.close();
    let _ = stream.shutdown(Shutdown::Both);
}
