//! A keep-alive HTTP/1.1 connection to chaind's JSON-RPC endpoint, shared by the benches
//! that drive it as a client would (one request at a time per connection).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// One keep-alive connection: sends a JSON-RPC body, returns the reply body.
pub struct Conn {
    w: TcpStream,
    r: BufReader<TcpStream>,
}

impl Conn {
    pub fn new(addr: &str) -> Conn {
        let w = TcpStream::connect(addr).unwrap();
        w.set_nodelay(true).unwrap();
        let r = BufReader::new(w.try_clone().unwrap());
        Conn { w, r }
    }

    pub fn call(&mut self, body: &str) -> String {
        let req = format!(
            "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.w.write_all(req.as_bytes()).unwrap();
        let mut len = 0;
        loop {
            let mut line = String::new();
            self.r.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut b = vec![0; len];
        self.r.read_exact(&mut b).unwrap();
        String::from_utf8(b).unwrap()
    }
}
