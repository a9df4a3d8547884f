//! The request head: parsed with `httparse` (the parser under hyper) from the connection's
//! buffer, then checked as the reference's server (Go's `net/http`) checks it: one `Host`
//! on HTTP/1.1, one framing, a sane `Content-Length`, `Expect: 100-continue` only. The
//! request line and headers are copied into one `String` with the places of their parts:
//! one allocation per request. A pure function of the bytes: a fuzzer can call [`parse`].

use std::ops::Range;

use super::response::{bad_request, Fail, Keep, Response};

/// Largest request line plus headers (Go's default, which the reference uses).
pub const MAX_HEADER_BYTES: usize = 1 << 20;
/// Most header lines a request may have.
const MAX_HEADERS: usize = 128;

/// How the body of a request is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length` (0 when the request has neither header).
    Length(u64),
    Chunked,
}

/// A request line and its headers, kept in one buffer (`text`) with the places of their
/// parts: one allocation per request instead of several per header.
pub struct Head {
    /// The request line and the header lines back to back, their line ends removed.
    text: String,
    method: Range<usize>,
    target: Range<usize>,
    pub http10: bool,
    /// Name and value (trimmed of spaces and tabs) of each header line, in order.
    headers: Vec<(Range<usize>, Range<usize>)>,
    pub framing: Framing,
    pub expects_continue: bool,
}

impl Head {
    pub fn method(&self) -> &str {
        &self.text[self.method.clone()]
    }

    pub fn target(&self) -> &str {
        &self.text[self.target.clone()]
    }

    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| self.text[k.clone()].eq_ignore_ascii_case(name))
            .map(|(_, v)| &self.text[v.clone()])
    }

    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(k, _)| self.text[k.clone()].eq_ignore_ascii_case(name))
            .map(|(_, v)| &self.text[v.clone()])
    }

    /// True when the `Connection` header lists `token`.
    pub fn connection_has(&self, token: &str) -> bool {
        self.headers_named("connection")
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    pub fn keep_alive(&self) -> Keep {
        match (
            self.http10,
            self.connection_has("close"),
            self.connection_has("keep-alive"),
        ) {
            (_, true, _) => Keep::Close,
            (false, false, _) => Keep::Alive11,
            (true, false, true) => Keep::Alive10,
            (true, false, false) => Keep::Close,
        }
    }

    /// The query string, without `?`.
    pub fn query(&self) -> &str {
        self.target().split_once('?').map_or("", |(_, q)| q)
    }

    /// The host the request names: the authority of an absolute URL, else the `Host`
    /// header (as Go's server takes it).
    pub fn host(&self) -> Option<&str> {
        let target = self.target();
        let scheme = |s: &str| {
            target
                .get(..s.len())
                .is_some_and(|t| t.eq_ignore_ascii_case(s))
        };
        let rest = if scheme("http://") {
            Some(&target[7..])
        } else if scheme("https://") {
            Some(&target[8..])
        } else {
            None
        };
        if let Some(rest) = rest {
            let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
            let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            if !authority.is_empty() {
                return Some(authority);
            }
        }
        self.header("host").filter(|h| !h.is_empty())
    }
}

pub fn is_token(s: &str) -> bool {
    is_token_bytes(s.as_bytes())
}

fn is_token_bytes(s: &[u8]) -> bool {
    !s.is_empty()
        && s.iter()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b))
}

fn too_large() -> Fail {
    Fail::Answer(Response::text(431, "request header fields too large\n"))
}

/// The error for what `httparse` refused, worded as the reference's server words it.
fn refusal(buf: &[u8], e: httparse::Error) -> Fail {
    use httparse::Error as E;
    // Where the request line ends (leading empty lines are skipped, as RFC 9112 allows).
    let start = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(0);
    let line_end = buf[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(buf.len(), |i| start + i);
    let line = &buf[start..line_end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match e {
        E::TooManyHeaders => too_large(),
        E::HeaderName | E::HeaderValue if folded(&buf[line_end..]) => {
            bad_request("folded header line")
        }
        E::HeaderName | E::HeaderValue => bad_request("malformed header line"),
        E::Version if unsupported_version(line) => {
            Fail::Answer(Response::text(505, "http version not supported\n"))
        }
        _ if buf.len() > line_end => bad_request("malformed request line"),
        // The request line itself is not over yet: something in it is already wrong.
        _ => bad_request("malformed request line"),
    }
}

/// True when a header line of `rest` (what follows the request line) starts with a space or
/// a tab: an obsolete folded line, which Go refuses by name.
fn folded(rest: &[u8]) -> bool {
    rest.windows(2)
        .take_while(|w| w != b"\n\n" && w != b"\n\r")
        .any(|w| w[0] == b'\n' && (w[1] == b' ' || w[1] == b'\t'))
}

/// `METHOD TARGET HTTP/d.d` with a version other than 1.0 and 1.1.
fn unsupported_version(line: &[u8]) -> bool {
    let mut parts = line.split(|&b| b == b' ');
    let (Some(_), Some(_), Some(v), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    v.len() == 8
        && v.starts_with(b"HTTP/")
        && v[5].is_ascii_digit()
        && v[6] == b'.'
        && v[7].is_ascii_digit()
}

/// Parses the head at the start of `buf`. `Ok(None)` while it is not whole; otherwise the
/// head and its length in bytes. Fails with the answer to give when the head is refused
/// (the connection is then closed).
pub fn parse(buf: &[u8]) -> Result<Option<(Head, usize)>, Fail> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut slots);
    let n = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEADER_BYTES => return Err(too_large()),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(refusal(buf, e)),
    };
    if n > MAX_HEADER_BYTES {
        return Err(too_large());
    }
    let method = req.method.unwrap_or_default();
    let target = req.path.unwrap_or_default();
    if target.bytes().any(|b| b.is_ascii_control()) {
        return Err(bad_request("malformed request line"));
    }
    let mut text = String::with_capacity(n);
    text.push_str(method);
    text.push_str(target);
    let method_range = 0..method.len();
    let target_range = method.len()..text.len();
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let mut headers = Vec::with_capacity(req.headers.len());
    for h in req.headers.iter() {
        let name_start = text.len();
        text.push_str(h.name);
        let name = name_start..text.len();
        let lead = h.value.iter().take_while(|b| blank(b)).count();
        let trail = h.value[lead..]
            .iter()
            .rev()
            .take_while(|b| blank(b))
            .count();
        let value = &h.value[lead..h.value.len() - trail];
        let value_start = text.len();
        // Header values that are not UTF-8 are taken lossily, as Go does.
        match std::str::from_utf8(value) {
            Ok(v) => text.push_str(v),
            Err(_) => text.push_str(&String::from_utf8_lossy(value)),
        }
        headers.push((name, value_start..text.len()));
    }
    let http10 = req.version == Some(0);
    let mut head = Head {
        text,
        method: method_range,
        target: target_range,
        http10,
        headers,
        framing: Framing::Length(0),
        expects_continue: false,
    };
    check(&mut head)?;
    Ok(Some((head, n)))
}

/// The rules Go's server applies to a parsed head; fills in the framing and `Expect`.
fn check(head: &mut Head) -> Result<(), Fail> {
    let hosts = head.headers_named("host").count();
    if !head.http10 && hosts == 0 {
        return Err(bad_request("missing required Host header"));
    }
    if hosts > 1 {
        return Err(bad_request("too many Host headers"));
    }
    let (coding, more_codings) = {
        let mut codings = head.headers_named("transfer-encoding");
        (codings.next(), codings.next().is_some())
    };
    let first_length = head.headers_named("content-length").next();
    let framing = if let Some(coding) = coding {
        if more_codings || !coding.eq_ignore_ascii_case("chunked") {
            return Err(Fail::Answer(Response::text(
                501,
                "unsupported transfer encoding\n",
            )));
        }
        if first_length.is_some() {
            return Err(bad_request("both Transfer-Encoding and Content-Length"));
        }
        Framing::Chunked
    } else if let Some(first) = first_length {
        let parse = |v: &str| -> Option<u64> {
            let v = v.trim();
            if v.is_empty() || v.len() > 19 || !v.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            v.parse().ok()
        };
        let n = parse(first).ok_or_else(|| bad_request("bad Content-Length"))?;
        if head
            .headers_named("content-length")
            .any(|v| parse(v) != Some(n))
        {
            return Err(bad_request("bad Content-Length"));
        }
        Framing::Length(n)
    } else {
        Framing::Length(0)
    };
    head.framing = framing;
    if let Some(expect) = head.header("expect") {
        if !expect.eq_ignore_ascii_case("100-continue") {
            return Err(Fail::Answer(Response::text(417, "expectation failed\n")));
        }
        head.expects_continue = !head.http10;
    }
    Ok(())
}

/// Whether `buf` holds what a worker can answer without waiting on the client: a refused
/// head, or a whole head whose declared body (up to `max_body`) is all there. A chunked
/// body, a body past `max_body` or one the client sends only after `100 Continue` counts as
/// ready once the head is: the worker reads or refuses it.
pub fn ready(buf: &[u8], max_body: usize) -> bool {
    match parse(buf) {
        Err(_) => true,
        Ok(None) => false,
        Ok(Some((head, n))) => match head.framing {
            Framing::Length(len) if len <= max_body as u64 && !head.expects_continue => {
                buf.len() as u64 >= n as u64 + len
            }
            _ => true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(r: Result<Option<(Head, usize)>, Fail>) -> Option<(u16, String)> {
        match r {
            Err(Fail::Answer(resp)) => Some((resp.status, String::from_utf8(resp.body).unwrap())),
            Err(Fail::Gone) => Some((0, String::new())),
            Ok(_) => None,
        }
    }

    #[test]
    fn heads_are_parsed_and_refused_as_go_does() {
        let (h, n) =
            parse(b"\r\nPOST /x?a=1 HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc")
                .unwrap()
                .unwrap();
        assert_eq!(
            (h.method(), h.target(), h.query()),
            ("POST", "/x?a=1", "a=1")
        );
        assert_eq!(h.framing, Framing::Length(3));
        assert_eq!(h.host(), Some("localhost"));
        assert_eq!(n, 62);
        assert!(parse(b"POST / HTTP/1.1\r\nHost: l").unwrap().is_none());
        let cases: &[(&[u8], u16, &str)] = &[
            (
                b"nonsense\r\n",
                400,
                "bad request: malformed request line\n",
            ),
            (
                b"GET / HTTP/2.0\r\n\r\n",
                505,
                "http version not supported\n",
            ),
            (
                b"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
                400,
                "bad request: folded header line\n",
            ),
            (
                b"GET / HTTP/1.1\r\nBad Name: a\r\n\r\n",
                400,
                "bad request: malformed header line\n",
            ),
            (
                b"GET / HTTP/1.1\r\n\r\n",
                400,
                "bad request: missing required Host header\n",
            ),
            (
                b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
                400,
                "bad request: too many Host headers\n",
            ),
            (
                b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
                501,
                "unsupported transfer encoding\n",
            ),
            (
                b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n",
                400,
                "bad request: bad Content-Length\n",
            ),
            (
                b"POST / HTTP/1.1\r\nHost: a\r\nExpect: later\r\n\r\n",
                417,
                "expectation failed\n",
            ),
        ];
        for (input, code, text) in cases {
            assert_eq!(
                status(parse(input)),
                Some((*code, text.to_string())),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn ready_waits_for_the_declared_body() {
        let head = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n";
        assert!(!ready(head, 100));
        assert!(ready(&[&head[..], b"12345"].concat(), 100));
        assert!(ready(head, 4), "over the limit: refused at once");
        assert!(!ready(b"POST / HTTP/1.1\r\nHo", 100));
        assert!(ready(b"nonsense\r\n", 100));
        let chunked = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(ready(chunked, 100));
    }
}
