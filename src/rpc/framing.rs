//! Where JSON values end in a byte stream that arrives in pieces (the IPC transport: a stream
//! of JSON values, separators and newlines optional), found without parsing them, so that a
//! value is handed on only once it is whole and a value nested too deep or too large is
//! refused before it is buffered whole. A pure function of the bytes fed to it: a fuzzer can
//! drive it directly.

use std::ops::Range;

use super::server::MAX_DEPTH;

/// What [`Framer::next`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A whole value at this range of the buffer (leading whitespace excluded). Its syntax is
    /// not checked: the parser that reads it reports errors.
    Value(Range<usize>),
    /// The value being read nests deeper than [`MAX_DEPTH`].
    TooDeep,
    /// No whole value yet: feed more bytes.
    NeedMore,
}

/// The scanner of one stream. The caller keeps the bytes in one buffer, calls
/// [`Framer::next`] after appending, and after taking a value removes the buffer's first
/// `end` bytes and calls [`Framer::consumed`] with `end`.
#[derive(Debug, Default, Clone)]
pub struct Framer {
    /// Bytes of the buffer already scanned.
    pos: usize,
    /// Where the current value starts, once its first byte has been seen.
    start: Option<usize>,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The current value is a bare token (number, literal or garbage).
    scalar: bool,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Bytes that end a bare token.
fn ends_token(b: u8) -> bool {
    is_space(b) || matches!(b, b'{' | b'}' | b'[' | b']' | b',' | b':' | b'"')
}

impl Framer {
    pub fn new() -> Framer {
        Framer::default()
    }

    /// Scans the bytes of `buf` not scanned yet: the first whole value, if it ends in them.
    pub fn next(&mut self, buf: &[u8]) -> Frame {
        while self.pos < buf.len() {
            let i = self.pos;
            let b = buf[i];
            self.pos += 1;
            let Some(start) = self.start else {
                if is_space(b) {
                    continue;
                }
                self.start = Some(i);
                match b {
                    b'{' | b'[' => self.depth = 1,
                    b'"' => self.in_string = true,
                    // A stray closing bracket or separator is a value of its own, which the
                    // parser refuses.
                    b'}' | b']' | b',' | b':' => return self.take(i..i + 1),
                    _ => self.scalar = true,
                }
                continue;
            };
            if self.scalar {
                if ends_token(b) {
                    self.pos = i; // the delimiter belongs to what follows
                    return self.take(start..i);
                }
                continue;
            }
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    if self.depth == 0 {
                        return self.take(start..i + 1);
                    }
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        return Frame::TooDeep;
                    }
                }
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return self.take(start..i + 1);
                    }
                }
                _ => {}
            }
        }
        Frame::NeedMore
    }

    fn take(&mut self, r: Range<usize>) -> Frame {
        self.start = None;
        self.depth = 0;
        self.in_string = false;
        self.escaped = false;
        self.scalar = false;
        Frame::Value(r)
    }

    /// The buffer's first `n` bytes were removed.
    pub fn consumed(&mut self, n: usize) {
        self.pos -= n.min(self.pos);
        if let Some(s) = self.start.as_mut() {
            *s -= n.min(*s);
        }
    }

    /// Bytes of the value begun but not whole (0 between values): what the size cap counts.
    pub fn partial_len(&self, buf: &[u8]) -> usize {
        self.start.map_or(0, |s| buf.len() - s)
    }

    /// At the end of the stream: a value begun and not ended by a delimiter (a bare token
    /// ends with the stream; anything else is cut short, which its parser reports).
    pub fn rest(&self, buf: &[u8]) -> Option<Range<usize>> {
        self.start.map(|s| s..buf.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value of `stream` fed in pieces of `step` bytes, as the text of each.
    fn split(stream: &str, step: usize) -> (Vec<String>, Option<String>) {
        let mut f = Framer::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut out = Vec::new();
        for chunk in stream.as_bytes().chunks(step) {
            buf.extend_from_slice(chunk);
            loop {
                match f.next(&buf) {
                    Frame::Value(r) => {
                        out.push(String::from_utf8(buf[r.clone()].to_vec()).unwrap());
                        buf.drain(..r.end);
                        f.consumed(r.end);
                    }
                    Frame::NeedMore => break,
                    Frame::TooDeep => {
                        out.push("TOO DEEP".into());
                        return (out, None);
                    }
                }
            }
        }
        let rest = f
            .rest(&buf)
            .map(|r| String::from_utf8(buf[r].to_vec()).unwrap());
        (out, rest)
    }

    #[test]
    fn values_are_found_whatever_the_pieces() {
        let stream = r#" {"a":"}{\"]"}[1,[2]]"s\"x" 12 true{"b":{}}
  null -3.5e2]"#;
        let want = [
            r#"{"a":"}{\"]"}"#,
            "[1,[2]]",
            r#""s\"x""#,
            "12",
            "true",
            r#"{"b":{}}"#,
            "null",
            "-3.5e2",
            "]",
        ];
        for step in [1, 2, 3, 7, 1000] {
            let (values, rest) = split(stream, step);
            assert_eq!(values, want, "step {step}");
            assert_eq!(rest, None, "step {step}");
        }
    }

    #[test]
    fn what_the_stream_ends_in() {
        assert_eq!(split("1 2", 1), (vec!["1".to_string()], Some("2".into())));
        assert_eq!(
            split(r#"{"a":1} {"b""#, 4),
            (vec![r#"{"a":1}"#.to_string()], Some(r#"{"b""#.into()))
        );
        assert_eq!(split("  \n ", 1), (vec![], None));
    }

    #[test]
    fn nesting_beyond_the_limit_is_refused_as_it_arrives() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(split(&ok, 5).0, std::slice::from_ref(&ok));
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert_eq!(split(&deep, 5).0, ["TOO DEEP"]);
        // Brackets inside strings do not count.
        let in_string = format!(r#"["{}"]"#, "[".repeat(3 * MAX_DEPTH));
        assert_eq!(split(&in_string, 64).0, std::slice::from_ref(&in_string));
    }

    #[test]
    fn a_partial_value_is_measured_from_its_start() {
        let mut f = Framer::new();
        let buf = b"   {\"abc\":";
        assert_eq!(f.next(buf), Frame::NeedMore);
        assert_eq!(f.partial_len(buf), 7);
        let mut g = Framer::new();
        assert_eq!(g.next(b"   "), Frame::NeedMore);
        assert_eq!(g.partial_len(b"   "), 0);
    }
}
