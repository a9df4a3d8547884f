//! A keep-alive HTTP/1.1 connection to a JSON-RPC endpoint (ours or anvil), shared by the
//! benches that drive a node as a client would: one request in flight per connection,
//! requests either prepared in advance ([`request`], [`Conn::roundtrip`]) or built per call
//! ([`Conn::call`]).

// Each bench uses a part of this file.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// The HTTP request carrying the JSON-RPC `body`.
pub fn request(body: &str) -> Vec<u8> {
    format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// One keep-alive connection.
pub struct Conn {
    w: TcpStream,
    r: BufReader<TcpStream>,
    line: String,
}

impl Conn {
    pub fn new(addr: &str) -> Conn {
        let w = TcpStream::connect(addr).unwrap();
        w.set_nodelay(true).unwrap();
        w.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let r = BufReader::with_capacity(1 << 16, w.try_clone().unwrap());
        Conn {
            w,
            r,
            line: String::new(),
        }
    }

    /// Sends the JSON-RPC `body`; the reply body.
    pub fn call(&mut self, body: &str) -> String {
        String::from_utf8(self.roundtrip(&request(body))).unwrap()
    }

    /// Sends one prepared request ([`request`]); the response body (Content-Length or
    /// chunked). Panics unless the status is 200.
    pub fn roundtrip(&mut self, req: &[u8]) -> Vec<u8> {
        self.w.write_all(req).unwrap();
        let mut len = None;
        let mut chunked = false;
        let mut status_line = true;
        loop {
            self.line.clear();
            self.r.read_line(&mut self.line).unwrap();
            if self.line.is_empty() {
                panic!("connection closed");
            }
            if status_line {
                assert!(self.line.starts_with("HTTP/1.1 200"), "{}", self.line);
                status_line = false;
                continue;
            }
            if self.line == "\r\n" {
                break;
            }
            let (k, v) = self.line.split_once(':').unwrap();
            if k.eq_ignore_ascii_case("content-length") {
                len = Some(v.trim().parse::<usize>().unwrap());
            } else if k.eq_ignore_ascii_case("transfer-encoding")
                && v.trim().eq_ignore_ascii_case("chunked")
            {
                chunked = true;
            }
        }
        if let Some(n) = len {
            let mut b = vec![0; n];
            self.r.read_exact(&mut b).unwrap();
            return b;
        }
        assert!(chunked, "a response with neither length nor chunks");
        let mut b = Vec::new();
        loop {
            self.line.clear();
            self.r.read_line(&mut self.line).unwrap();
            let n = usize::from_str_radix(self.line.trim(), 16).unwrap();
            let start = b.len();
            b.resize(start + n + 2, 0);
            self.r.read_exact(&mut b[start..]).unwrap();
            b.truncate(start + n);
            if n == 0 {
                return b;
            }
        }
    }
}
