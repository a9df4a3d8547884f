//! The reading side of a connection handed to a worker: its buffer (what the gate read, and
//! more), reads under a deadline, lines and counted bytes, and the chunked body decoder.
//! Every byte taken from the buffer is wiped behind it (requests carry passphrases).

use std::io::{self, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use zeroize::Zeroizing;

use super::super::gate::Conn;
use super::super::wipe::{consume, grow};
use super::response::{bad_request, timed_out, Fail, Response};

/// Largest chunk-size line or trailer section of a chunked body.
const MAX_CHUNK_LINE: usize = 4096;
/// Bytes read at a time.
const READ_CHUNK: usize = 16 * 1024;
/// How far a read may overshoot its deadline before the socket timeout is re-armed.
const TIMEOUT_SLACK: Duration = Duration::from_millis(500);

/// What [`Input::wait_briefly`] saw.
pub enum Quick {
    /// More bytes arrived.
    More,
    /// Nothing came within the wait.
    Quiet,
    /// The client closed or the socket failed.
    Gone,
}

/// A connection as a worker reads it.
pub struct Input {
    pub conn: Conn,
    pub deadline: Instant,
    /// The longest single wait for data: the socket's receive timeout is armed with it once
    /// and only re-armed when the deadline comes closer than that (a system call saved on
    /// nearly every request of a kept-alive connection).
    slice: Duration,
    armed: Option<Duration>,
}

impl Input {
    pub fn new(conn: Conn, slice: Duration) -> Input {
        Input {
            conn,
            deadline: Instant::now() + slice,
            slice,
            armed: None,
        }
    }

    pub fn stream(&self) -> &TcpStream {
        &self.conn.stream
    }

    pub fn buf(&self) -> &[u8] {
        &self.conn.buf
    }

    /// Removes the first `n` buffered bytes, wiping them.
    pub fn consume(&mut self, n: usize) {
        consume(&mut self.conn.buf, n);
    }

    /// Appends what one read gives. `Ok(0)` at end of stream.
    fn read_once(&mut self) -> io::Result<usize> {
        let buf = &mut self.conn.buf;
        let len = buf.len();
        if buf.capacity() - len < READ_CHUNK {
            grow(buf, READ_CHUNK);
        }
        buf.resize(len + READ_CHUNK, 0);
        let got = (&self.conn.stream).read(&mut buf[len..]);
        buf.truncate(len + *got.as_ref().unwrap_or(&0));
        got
    }

    /// Reads more bytes, waiting until the deadline (then 408). Fails `Gone` at end of stream.
    pub fn read_more(&mut self) -> Result<(), Fail> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(timed_out());
            }
            let want = left.min(self.slice);
            let rearm = match self.armed {
                None => true,
                Some(a) => a > left + TIMEOUT_SLACK || a + TIMEOUT_SLACK < want,
            };
            if rearm {
                self.conn
                    .stream
                    .set_read_timeout(Some(want))
                    .map_err(|_| Fail::Gone)?;
                self.armed = Some(want);
            }
            match self.read_once() {
                Ok(0) => return Err(Fail::Gone),
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // One slice is over; the deadline may not be.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    continue
                }
                Err(_) => return Err(Fail::Gone),
            }
        }
    }

    /// Waits up to `wait` for the client's next bytes and reads them: a kept-alive
    /// connection whose client is quiet goes back to the gate instead of holding a thread.
    /// One `read` under a receive timeout (armed once while requests keep coming), not a
    /// `poll` and a `read`: this runs between every two requests of a busy connection.
    pub fn wait_briefly(&mut self, wait: Duration) -> Quick {
        if wait.is_zero() {
            return Quick::Quiet;
        }
        if self.armed != Some(wait) {
            if self.conn.stream.set_read_timeout(Some(wait)).is_err() {
                return Quick::Gone;
            }
            self.armed = Some(wait);
        }
        loop {
            match self.read_once() {
                Ok(0) => return Quick::Gone,
                Ok(_) => return Quick::More,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Quick::Quiet
                }
                Err(_) => return Quick::Gone,
            }
        }
    }

    /// Takes one line (LF or CRLF, removed) from the front. `None` when it is longer than
    /// `max` bytes.
    fn line(&mut self, max: usize) -> Result<Option<Zeroizing<Vec<u8>>>, Fail> {
        loop {
            if let Some(i) = self.conn.buf.iter().position(|&b| b == b'\n') {
                if i + 1 > max {
                    return Ok(None);
                }
                let mut l = Zeroizing::new(self.conn.buf[..i].to_vec());
                if l.last() == Some(&b'\r') {
                    l.pop();
                }
                self.consume(i + 1);
                return Ok(Some(l));
            }
            if self.conn.buf.len() > max {
                return Ok(None);
            }
            self.read_more()?;
        }
    }

    /// Makes sure the first `n` bytes are buffered.
    pub fn fill_to(&mut self, n: usize) -> Result<(), Fail> {
        while self.conn.buf.len() < n {
            self.read_more()?;
        }
        Ok(())
    }

    /// Reads a chunked body of at most `cap` bytes; a longer one is refused with 413 (the
    /// connection is then closed).
    pub fn chunked(&mut self, cap: usize) -> Result<Zeroizing<Vec<u8>>, Fail> {
        let bad = || bad_request("malformed chunked encoding");
        let mut body = Zeroizing::new(Vec::new());
        loop {
            let line = self.line(MAX_CHUNK_LINE)?.ok_or_else(bad)?;
            let line = String::from_utf8_lossy(&line);
            let size = line
                .split(';')
                .next()
                .unwrap_or("")
                .trim_matches([' ', '\t']);
            if size.is_empty() || size.len() > 15 || !size.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad());
            }
            let size = usize::from_str_radix(size, 16).map_err(|_| bad())?;
            if size == 0 {
                // Trailers, up to the empty line.
                let mut budget = MAX_CHUNK_LINE;
                loop {
                    let t = self.line(budget)?.ok_or_else(bad)?;
                    if t.is_empty() {
                        return Ok(body);
                    }
                    budget = budget.saturating_sub(t.len() + 2);
                }
            }
            if size > cap - body.len() {
                return Err(Fail::Answer(Response::text(
                    413,
                    format!("request body too large (more than {cap} bytes)\n"),
                )));
            }
            self.fill_to(size)?;
            if body.capacity() - body.len() < size {
                grow(&mut body, size);
            }
            body.extend_from_slice(&self.conn.buf[..size]);
            self.consume(size);
            let end = self.line(2)?.ok_or_else(bad)?;
            if !end.is_empty() {
                return Err(bad());
            }
        }
    }
}
