//! Responses as they go on the wire, written piece by piece into one buffer (no formatting
//! machinery: this runs for every request), and the ways a request ends without one.

/// A response header: its name and value.
use std::borrow::Cow;

/// Why a request got no normal answer.
#[derive(Debug)]
pub enum Fail {
    /// The client went away or the server is stopping: close without writing.
    Gone,
    /// Write this and close the connection.
    Answer(Response),
}

pub fn timed_out() -> Fail {
    Fail::Answer(timed_out_response())
}

/// The answer to a request that did not arrive within the read timeout.
pub fn timed_out_response() -> Response {
    Response::text(408, "request timeout\n")
}

pub fn bad_request(why: &str) -> Fail {
    Fail::Answer(Response::text(400, format!("bad request: {why}\n")))
}

/// How a response ends as far as the connection goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// `Connection: close`, then close.
    Close,
    /// HTTP/1.1 keep-alive: nothing to say.
    Alive11,
    /// HTTP/1.0 keep-alive, which must be said.
    Alive10,
}

pub type Header = (&'static str, Cow<'static, str>);

/// A response to write.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<Header>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn empty(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// An HTTP-level error in the reference's format (Go's `http.Error`).
    pub fn text(status: u16, body: impl Into<String>) -> Response {
        Response {
            status,
            headers: vec![
                ("Content-Type", "text/plain; charset=utf-8".into()),
                ("X-Content-Type-Options", "nosniff".into()),
            ],
            body: body.into().into_bytes(),
        }
    }

    /// A JSON-RPC answer: always 200; an empty body when there is nothing to say.
    pub fn json(reply: Option<String>) -> Response {
        let body = reply
            .map(|r| {
                let mut b = r.into_bytes();
                b.push(b'\n');
                b
            })
            .unwrap_or_default();
        Response {
            status: 200,
            headers: vec![("Content-Type", "application/json".into())],
            body,
        }
    }

    /// The bytes on the wire; `head_only` leaves the body out (HEAD). Written piece by piece
    /// into one buffer (no formatting machinery: this runs for every request).
    pub fn render(&self, head_only: bool, keep: Keep) -> Vec<u8> {
        let body = if head_only { &[][..] } else { &self.body[..] };
        let mut out = self.render_head(body.len(), keep);
        out.extend_from_slice(body);
        out
    }

    /// Writes the response to `w`: in one piece when small (one segment on the wire), else
    /// the head and then the body as it is, so that a large body (a state dump) is never
    /// copied.
    pub fn write_to(
        &self,
        w: &mut impl std::io::Write,
        head_only: bool,
        keep: Keep,
    ) -> std::io::Result<()> {
        if head_only || self.body.len() <= ONE_PIECE {
            return w.write_all(&self.render(head_only, keep));
        }
        w.write_all(&self.render_head(0, keep))?;
        w.write_all(&self.body)
    }

    /// The status line and headers, with room for `room` more bytes.
    fn render_head(&self, room: usize, keep: Keep) -> Vec<u8> {
        let headers: usize = self
            .headers
            .iter()
            .map(|(k, v)| k.len() + v.len() + 4)
            .sum();
        let mut out = Vec::with_capacity(96 + headers + room);
        out.extend_from_slice(b"HTTP/1.1 ");
        push_decimal(&mut out, self.status.into());
        out.push(b' ');
        out.extend_from_slice(reason(self.status).as_bytes());
        out.extend_from_slice(b"\r\n");
        for (k, v) in &self.headers {
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"Content-Length: ");
        push_decimal(&mut out, self.body.len() as u64);
        out.extend_from_slice(b"\r\n");
        match keep {
            Keep::Close => out.extend_from_slice(b"Connection: close\r\n"),
            Keep::Alive10 => out.extend_from_slice(b"Connection: keep-alive\r\n"),
            Keep::Alive11 => {}
        }
        out.extend_from_slice(b"\r\n");
        out
    }
}

/// The largest body written together with its head.
const ONE_PIECE: usize = 64 << 10;

/// Appends the decimal digits of `n`.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Request Entity Too Large",
        415 => "Unsupported Media Type",
        417 => "Expectation Failed",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}
