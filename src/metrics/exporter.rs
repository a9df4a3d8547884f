//! The Prometheus endpoint (`--prometheus`): `GET /metrics` answered with the text
//! exposition format, one connection at a time on one named thread (`prometheus`). A scrape
//! every few seconds needs no more; each connection gets short read and write timeouts so
//! that a stalled client holds the thread up for a moment at most.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::Arc;
use std::time::Duration;

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token, Waker};

use super::Metrics;
use crate::service::Service;

/// The only path served, as the reference serves it.
pub const PATH: &str = "/metrics";

/// The content type of the text exposition format.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How long a client may take to send its request, and to take the response.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest request head read.
const MAX_HEAD: usize = 8 * 1024;

const LISTENER: Token = Token(0);
const WAKE: Token = Token(1);

/// The Prometheus endpoint as a node service: listens on `host:port` when started, logs
/// `Prometheus endpoint opened url=http://ADDR/metrics`, and closes when stopped.
pub struct Exporter {
    host: String,
    port: u16,
    metrics: Arc<Metrics>,
    running: Option<Running>,
}

struct Running {
    addr: SocketAddr,
    waker: Arc<Waker>,
    thread: std::thread::JoinHandle<()>,
}

impl Exporter {
    /// An exporter of `metrics` for `host:port` (port 0: any free port), not yet listening.
    pub fn new(host: impl Into<String>, port: u16, metrics: Arc<Metrics>) -> Exporter {
        Exporter {
            host: host.into(),
            port,
            metrics,
            running: None,
        }
    }

    /// The address it listens on, once started.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.running.as_ref().map(|r| r.addr)
    }

    fn bind(&self) -> io::Result<std::net::TcpListener> {
        use std::net::ToSocketAddrs;
        let mut last = io::Error::new(io::ErrorKind::AddrNotAvailable, "host does not resolve");
        for addr in (self.host.as_str(), self.port).to_socket_addrs()? {
            match std::net::TcpListener::bind(addr) {
                Ok(l) => return Ok(l),
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

impl Service for Exporter {
    fn name(&self) -> &'static str {
        "prometheus"
    }

    fn start(&mut self) -> Result<(), String> {
        let open = || -> io::Result<Running> {
            let std_listener = self.bind()?;
            std_listener.set_nonblocking(true)?;
            let addr = std_listener.local_addr()?;
            let mut listener = TcpListener::from_std(std_listener);
            let poll = Poll::new()?;
            poll.registry()
                .register(&mut listener, LISTENER, Interest::READABLE)?;
            let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
            let metrics = self.metrics.clone();
            let thread = std::thread::Builder::new()
                .name("prometheus".into())
                .spawn(move || serve(poll, listener, &metrics))?;
            Ok(Running {
                addr,
                waker,
                thread,
            })
        };
        let running = open().map_err(|e| {
            format!(
                "cannot open the Prometheus endpoint on {}:{}: {e}",
                self.host, self.port
            )
        })?;
        crate::log::info(
            "Prometheus endpoint opened",
            &[("url", &format!("http://{}{PATH}", running.addr))],
        );
        self.running = Some(running);
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(r) = self.running.take() {
            // The thread ends at the wake; a failed wake would leave it blocked, so the join
            // is skipped then (the process is on its way out).
            if r.waker.wake().is_ok() {
                let _ = r.thread.join();
            }
            crate::log::info(
                "Prometheus endpoint closed",
                &[("url", &format!("http://{}{PATH}", r.addr))],
            );
        }
    }
}

/// Accepts and answers connections until woken.
fn serve(mut poll: Poll, listener: TcpListener, metrics: &Metrics) {
    let mut events = Events::with_capacity(8);
    loop {
        if let Err(e) = poll.poll(&mut events, None) {
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            crate::log::error("Prometheus endpoint failed", &[("err", &e.to_string())]);
            return;
        }
        for ev in events.iter() {
            if ev.token() == WAKE {
                return;
            }
        }
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    // A blocking std stream with timeouts: one short exchange.
                    // SAFETY: the descriptor comes from `into_raw_fd`, owned by nobody else.
                    let stream = unsafe { TcpStream::from_raw_fd(stream.into_raw_fd()) };
                    let _ = answer(stream, metrics);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    // Out of descriptors and the like: back off instead of spinning.
                    std::thread::sleep(Duration::from_millis(100));
                    break;
                }
            }
        }
    }
}

/// Reads one request and writes its response; the connection is closed after it.
fn answer(mut stream: TcpStream, metrics: &Metrics) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    let (method, path) = loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&head) {
            Ok(httparse::Status::Complete(_)) => {
                break (
                    req.method.unwrap_or("").to_string(),
                    req.path.unwrap_or("").to_string(),
                )
            }
            Ok(httparse::Status::Partial) if head.len() < MAX_HEAD => {}
            _ => {
                return respond(
                    &mut stream,
                    "400 Bad Request",
                    "text/plain",
                    "bad request\n",
                    &[],
                )
            }
        }
    };
    let path = path.split('?').next().unwrap_or("");
    if path != PATH {
        return respond(
            &mut stream,
            "404 Not Found",
            "text/plain; charset=utf-8",
            "404 page not found\n",
            &[],
        );
    }
    match method.as_str() {
        "GET" => respond(&mut stream, "200 OK", CONTENT_TYPE, &metrics.render(), &[]),
        "HEAD" => {
            let body = metrics.render();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {CONTENT_TYPE}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes())
        }
        _ => respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "method not allowed\n",
            &[("Allow", "GET, HEAD")],
        ),
    }
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(body);
    stream.write_all(out.as_bytes())?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_the_text_format_on_metrics_only_and_stops() {
        let metrics = Arc::new(Metrics::new(true));
        metrics.sealed(2);
        let mut e = Exporter::new("127.0.0.1", 0, metrics);
        e.start().unwrap();
        let addr = e.local_addr().unwrap();
        assert!(addr.ip().is_loopback() && addr.port() != 0);
        let ok = exchange(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(
            ok.contains(&format!("Content-Type: {CONTENT_TYPE}\r\n")),
            "{ok}"
        );
        let body = ok.split_once("\r\n\r\n").unwrap().1;
        assert!(
            body.contains("\nchaind_sealed_transactions_total 2\n"),
            "{body}"
        );
        let len: usize = ok
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(len, body.len());
        let head = exchange(addr, "HEAD /metrics?x=1 HTTP/1.1\r\n\r\n");
        assert!(
            head.starts_with("HTTP/1.1 200 OK\r\n") && head.ends_with("\r\n\r\n"),
            "{head}"
        );
        let missing = exchange(addr, "GET / HTTP/1.1\r\n\r\n");
        assert!(
            missing.starts_with("HTTP/1.1 404 Not Found\r\n"),
            "{missing}"
        );
        assert!(
            missing.ends_with("\r\n\r\n404 page not found\n"),
            "{missing}"
        );
        let post = exchange(addr, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
        assert!(
            post.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"),
            "{post}"
        );
        assert!(post.contains("\r\nAllow: GET, HEAD\r\n"), "{post}");
        let bad = exchange(addr, "\x01\x02 nonsense\r\n\r\n");
        assert!(bad.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{bad}");
        e.stop();
        assert!(
            TcpStream::connect(addr).is_err(),
            "still listening after stop"
        );
    }

    #[test]
    fn a_port_in_use_is_an_error_naming_it() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let mut e = Exporter::new("127.0.0.1", port, Arc::new(Metrics::new(true)));
        let err = e.start().unwrap_err();
        assert!(
            err.starts_with(&format!(
                "cannot open the Prometheus endpoint on 127.0.0.1:{port}: "
            )),
            "{err}"
        );
        assert!(e.local_addr().is_none());
    }
}
