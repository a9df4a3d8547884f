//! The HTTP JSON-RPC transport over real sockets: a server on 127.0.0.1, port 0, and raw HTTP
//! written by hand so that every rule of reference §1.7 can be checked byte for byte.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chain_node::rpc::endpoint::{Endpoint, HttpConfig};
use chain_node::rpc::http::HttpServer;
use chain_node::rpc::server::DEFAULT_LIMITS;
use chain_node::rpc::{Call, Dispatcher, Limits, Params, Registry, Transport};
use serde_json::{json, Value};

/// How long a test client waits for a byte before the test fails instead of hanging.
const CLIENT_PATIENCE: Duration = Duration::from_secs(10);

/// Calls of `test_slow` running now, and the most seen at once.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn registry() -> Arc<Registry> {
    let mut r = Registry::default();
    // rpc_modules, as the node declares it.
    chain_node::api::register(&Arc::new(chain_node::api::rpc::RpcApi), &mut r);
    // Returns its argument.
    r.register(
        "test_echo",
        1,
        Arc::new(|_c: &Call, p: &Params| p.required::<Value>(0)),
    );
    // Runs for 200 ms; answers the most calls seen running at once.
    r.register(
        "test_slow",
        0,
        Arc::new(|_c: &Call, _p: &Params| {
            let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
            PEAK.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(200));
            RUNNING.fetch_sub(1, Ordering::SeqCst);
            Ok(json!(PEAK.load(Ordering::SeqCst)))
        }),
    );
    // Sleeps for the milliseconds given, then answers them: the test-only slow method of
    // the execution timeout.
    r.register(
        "test_sleep",
        1,
        Arc::new(|_c: &Call, p: &Params| {
            let ms: u64 = p.required(0)?;
            std::thread::sleep(Duration::from_millis(ms));
            Ok(json!(ms))
        }),
    );
    Arc::new(r)
}

fn start_with(configure: impl FnOnce(&mut HttpConfig, &mut Limits)) -> HttpServer {
    let mut cfg = HttpConfig::new("127.0.0.1", 0);
    let mut limits = DEFAULT_LIMITS;
    configure(&mut cfg, &mut limits);
    let dispatcher = Dispatcher::new(registry(), None, Transport::Http, false, limits);
    HttpServer::start(&cfg, dispatcher).expect("server starts")
}

fn start() -> HttpServer {
    start_with(|_, _| {})
}

fn stop(server: HttpServer) {
    Box::new(server).stop();
}

#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }

    /// Asserts an HTTP-level error in the reference's text/plain format.
    fn assert_text(&self, status: u16, body: &str) {
        assert_eq!(
            (self.status, self.body.as_str()),
            (status, body),
            "{self:?}"
        );
        assert_eq!(
            self.header("Content-Type"),
            Some("text/plain; charset=utf-8"),
            "{self:?}"
        );
        assert_eq!(
            self.header("X-Content-Type-Options"),
            Some("nosniff"),
            "{self:?}"
        );
    }
}

struct Client {
    reader: BufReader<TcpStream>,
}

impl Client {
    fn connect(addr: SocketAddr) -> Client {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(CLIENT_PATIENCE)).unwrap();
        Client {
            reader: BufReader::new(s),
        }
    }

    fn send(&mut self, raw: &[u8]) {
        self.reader.get_mut().write_all(raw).expect("write");
    }

    fn read_line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("read a line");
        line
    }

    /// Reads one response; the server always sends Content-Length.
    fn reply(&mut self) -> Reply {
        let status_line = self.read_line();
        assert!(
            status_line.starts_with("HTTP/1.1 ") && status_line.ends_with("\r\n"),
            "{status_line:?}"
        );
        let status = status_line[9..12].parse().unwrap();
        let mut headers = Vec::new();
        loop {
            let line = self.read_line();
            let line = line
                .strip_suffix("\r\n")
                .unwrap_or_else(|| panic!("unterminated header {line:?}"));
            if line.is_empty() {
                break;
            }
            let (k, v) = line.split_once(": ").unwrap();
            headers.push((k.to_string(), v.to_string()));
        }
        let len: usize = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .unwrap()
            .1
            .parse()
            .unwrap();
        let mut body = vec![0; len];
        self.reader.read_exact(&mut body).unwrap();
        Reply {
            status,
            headers,
            body: String::from_utf8(body).unwrap(),
        }
    }

    fn exchange(&mut self, raw: &str) -> Reply {
        self.send(raw.as_bytes());
        self.reply()
    }

    /// True when the server has closed the connection (end of stream or reset), false when
    /// it is still open and silent.
    fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        match self.reader.read(&mut b) {
            Ok(0) => true,
            Ok(_) => panic!("unexpected byte {:?}", b[0] as char),
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
        }
    }
}

fn post_request(body: &str, extra_headers: &str) -> String {
    format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n{extra_headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn exchange(addr: SocketAddr, raw: &str) -> Reply {
    Client::connect(addr).exchange(raw)
}

fn post(addr: SocketAddr, body: &str) -> Reply {
    exchange(addr, &post_request(body, ""))
}

const ECHO: &str = r#"{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["hi"]}"#;
const ECHO_REPLY: &str = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"hi\"}\n";

#[test]
fn calls_batches_notifications_and_parse_errors() {
    let server = start();
    let addr = server.local_addr();
    assert_ne!(addr.port(), 0);
    assert_eq!(server.url(), format!("http://127.0.0.1:{}", addr.port()));

    let r = post(addr, ECHO);
    assert_eq!((r.status, r.body.as_str()), (200, ECHO_REPLY));
    assert_eq!(r.header("Content-Type"), Some("application/json"));
    assert_eq!(
        r.header("Connection"),
        None,
        "HTTP/1.1 keeps the connection"
    );

    let r = post(
        addr,
        &format!(
            r#"[{ECHO},{{"jsonrpc":"2.0","method":"test_echo","params":[1]}},{{"jsonrpc":"2.0","id":2,"method":"nope"}}]"#
        ),
    );
    assert_eq!(
        r.body,
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"hi\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,\"message\":\"the method nope does not exist/is not available\",\"data\":\"no such method\"}}]\n"
    );

    for quiet in [
        r#"{"jsonrpc":"2.0","method":"test_echo","params":[1]}"#,
        " \r\n\t ",
        "",
    ] {
        let r = post(addr, quiet);
        assert_eq!((r.status, r.body.as_str()), (200, ""), "{quiet:?}");
        assert_eq!(r.header("Content-Type"), Some("application/json"));
    }

    for broken in [r#"{"jsonrpc":"2.0","id":1,"#, "nonsense"] {
        let r = post(addr, broken);
        assert_eq!(
            (r.status, r.body.as_str()),
            (200, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse error\"}}\n")
        );
    }

    let r = post(
        addr,
        r#"{"jsonrpc":"2.0","id":3,"method":"test_subscribe","params":["x"]}"#,
    );
    assert_eq!(
        r.json()["error"],
        json!({"code": -32000, "message": "notifications not supported"})
    );
    let r = post(
        addr,
        r#"{"jsonrpc":"2.0","id":4,"method":"test_unsubscribe","params":["0x1"]}"#,
    );
    assert_eq!(
        r.json()["error"],
        json!({"code": -32000, "message": "subscription not found"})
    );
    stop(server);
}

#[test]
fn http_level_rules() {
    let server = start();
    let addr = server.local_addr();

    // Health check: GET without body or query.
    let r = exchange(addr, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
    assert_eq!(
        (r.status, r.body.as_str(), r.header("Content-Type")),
        (200, "", None)
    );
    let r = exchange(
        addr,
        "GET /any/path? HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!((r.status, r.body.as_str()), (200, ""));
    // With a query it is an RPC request, and has no JSON content type.
    exchange(addr, "GET /?a=1 HTTP/1.1\r\nHost: localhost\r\n\r\n").assert_text(
        415,
        "invalid content type, only application/json is supported\n",
    );
    // GET with a body is processed as JSON-RPC, as are PATCH and OPTIONS.
    for method in ["GET", "PATCH", "OPTIONS"] {
        let r = exchange(addr, &post_request(ECHO, "").replacen("POST", method, 1));
        assert_eq!((r.status, r.body.as_str()), (200, ECHO_REPLY), "{method}");
    }
    // OPTIONS passes regardless of content type.
    let r = exchange(
        addr,
        &format!(
            "OPTIONS / HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n{ECHO}",
            ECHO.len()
        ),
    );
    assert_eq!((r.status, r.body.as_str()), (200, ECHO_REPLY));

    for method in ["PUT", "DELETE"] {
        exchange(addr, &post_request(ECHO, "").replacen("POST", method, 1))
            .assert_text(405, "method not allowed\n");
    }

    // The declared length is refused before any body is read, and the connection is closed.
    let mut c = Client::connect(addr);
    let r = c.exchange("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 600000\r\n\r\n");
    r.assert_text(413, "content length too large (600000>524288)\n");
    assert_eq!(r.header("Connection"), Some("close"));
    assert!(c.closed());
    // A length far beyond memory is refused the same way.
    exchange(addr, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000000000000\r\n\r\n")
        .assert_text(413, "content length too large (1000000000000>524288)\n");
    // 405 comes before 413, 413 before 415.
    exchange(
        addr,
        "PUT / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 600000\r\n\r\n",
    )
    .assert_text(405, "method not allowed\n");
    exchange(addr, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 600000\r\n\r\n")
        .assert_text(413, "content length too large (600000>524288)\n");

    for ct in [
        "text/plain",
        "application/json; charset",
        "",
        "application/jsonx",
    ] {
        let r = exchange(
            addr,
            &post_request(ECHO, "").replace("application/json", ct),
        );
        r.assert_text(
            415,
            "invalid content type, only application/json is supported\n",
        );
    }
    let r = exchange(
        addr,
        &post_request(ECHO, "").replace("Content-Type: application/json\r\n", ""),
    );
    r.assert_text(
        415,
        "invalid content type, only application/json is supported\n",
    );
    for ct in [
        "application/json; charset=utf-8",
        "application/json-rpc",
        "application/jsonrequest",
        "APPLICATION/JSON",
    ] {
        let r = exchange(
            addr,
            &post_request(ECHO, "").replace("application/json", ct),
        );
        assert_eq!((r.status, r.body.as_str()), (200, ECHO_REPLY), "{ct}");
    }

    // Malformed HTTP.
    assert_eq!(
        exchange(addr, "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").status,
        400,
        "HTTP/1.1 needs Host"
    );
    assert_eq!(exchange(addr, "POST /\r\n\r\n").status, 400);
    assert_eq!(
        exchange(addr, "POST / HTTP/2.0\r\nHost: localhost\r\n\r\n").status,
        505
    );
    assert_eq!(
        exchange(
            addr,
            "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1x\r\n\r\n"
        )
        .status,
        400
    );
    assert_eq!(
        exchange(
            addr,
            "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n"
        )
        .status,
        400
    );
    assert_eq!(
        exchange(
            addr,
            "POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n"
        )
        .status,
        501
    );
    assert_eq!(
        exchange(
            addr,
            "POST / HTTP/1.1\r\nHost: localhost\r\nExpect: magic\r\n\r\n"
        )
        .status,
        417
    );
    stop(server);
}

/// Head-level refusals, each answered without waiting for more input, and HEAD.
#[test]
fn head_limits_smuggling_and_head_requests() {
    let server = start();
    let addr = server.local_addr();
    // A bad request line is refused as soon as it is read: no blank line is needed (the
    // server would otherwise wait for the headers until its request timeout).
    let mut c = Client::connect(addr);
    c.send(b"nonsense\r\n");
    c.reply()
        .assert_text(400, "bad request: malformed request line\n");
    // More than 1 MiB of headers.
    let big = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nX-Big: {}\r\n\r\n",
        "a".repeat(1 << 20)
    );
    let mut c = Client::connect(addr);
    c.send(big.as_bytes());
    c.reply()
        .assert_text(431, "request header fields too large\n");
    // Both framings at once (request smuggling) and two Host headers.
    exchange(
        addr,
        "POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
    )
    .assert_text(
        400,
        "bad request: both Transfer-Encoding and Content-Length\n",
    );
    exchange(
        addr,
        "GET / HTTP/1.1\r\nHost: localhost\r\nHost: other\r\n\r\n",
    )
    .assert_text(400, "bad request: too many Host headers\n");
    // HEAD gets the head of the answer (its length included) and no body; the connection
    // goes on with the next request.
    let mut c = Client::connect(addr);
    c.send(
        post_request(ECHO, "")
            .replacen("POST", "HEAD", 1)
            .as_bytes(),
    );
    let status = c.read_line();
    assert_eq!(status, "HTTP/1.1 200 OK\r\n");
    let mut length = None;
    loop {
        let line = c.read_line();
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = Some(v.trim().to_string());
        }
    }
    assert_eq!(length, Some(ECHO_REPLY.len().to_string()));
    let r = c.exchange(&post_request(ECHO, ""));
    assert_eq!((r.status, r.body.as_str()), (200, ECHO_REPLY));
    stop(server);
}

/// Connections beyond the limit are answered 503 and closed; the others are served.
#[test]
fn connections_beyond_the_limit_are_refused() {
    let server = start_with(|cfg, _| cfg.max_connections = 2);
    let addr = server.local_addr();
    let mut a = Client::connect(addr);
    let mut b = Client::connect(addr);
    // Both are being served (a request on each proves the server has taken them).
    assert_eq!(a.exchange(&post_request(ECHO, "")).body, ECHO_REPLY);
    assert_eq!(b.exchange(&post_request(ECHO, "")).body, ECHO_REPLY);
    let mut c = Client::connect(addr);
    c.reply().assert_text(503, "server busy\n");
    assert!(c.closed());
    drop(a);
    // Once one is closed, a new connection is served again (the server notices the close
    // when its thread reads end of stream).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let mut d = Client::connect(addr);
        d.send(post_request(ECHO, "").as_bytes());
        let r = d.reply();
        if r.status == 200 {
            assert_eq!(r.body, ECHO_REPLY);
            break;
        }
        assert_eq!(r.status, 503);
        assert!(std::time::Instant::now() < deadline, "never served again");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(b.exchange(&post_request(ECHO, "")).body, ECHO_REPLY);
    stop(server);
}

/// Over the socket: a body is its first JSON value (what follows is ignored), a call whose
/// members have the wrong types is an invalid request, brackets inside strings do not count
/// towards the nesting limit, and result strings are escaped exactly when they need it.
#[test]
fn bodies_results_and_nesting_over_http() {
    let server = start();
    let addr = server.local_addr();
    for body in [
        format!(" \r\n{ECHO}"),
        format!("{ECHO} and then {{ garbage"),
        format!("{ECHO}{ECHO}"),
    ] {
        let r = post(addr, &body);
        assert_eq!((r.status, r.body.as_str()), (200, ECHO_REPLY), "{body:?}");
    }
    let r = post(addr, r#"{"jsonrpc":"2.0","id":7,"method":5}"#);
    assert_eq!(
        r.body,
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32600,\"message\":\"invalid request\"}}\n"
    );
    for (value, wire) in [
        ("0xabc", r#""0xabc""#),
        ("a\"b", r#""a\"b""#),
        ("back\\slash", r#""back\\slash""#),
        ("tab\tnl\n\u{1}", r#""tab\tnl\n\u0001""#),
        ("é ✓", "\"é ✓\""),
    ] {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": [value]});
        let r = post(addr, &call.to_string());
        assert_eq!(
            r.body,
            format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{wire}}}\n"),
            "{value:?}"
        );
    }
    // A parameter the decoder refuses is an invalid argument, not a null.
    let r = post(
        addr,
        r#"{"jsonrpc":"2.0","id":2,"method":"test_echo","params":[1e400]}"#,
    );
    let e = r.json()["error"].clone();
    assert_eq!(e["code"], -32602, "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid argument 0: "),
        "{e}"
    );
    // 300 opening brackets inside a string: not nesting.
    let brackets = "[".repeat(300);
    let r = post(
        addr,
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["{brackets}"]}}"#),
    );
    assert_eq!(r.json()["result"], json!(brackets));
    // 129 levels of real nesting: refused before parsing, and the server goes on serving.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"test_echo","params":[{}{}]}}"#,
        "[".repeat(128),
        "]".repeat(128)
    );
    assert_eq!(
        post(addr, &deep).body,
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse error\"}}\n"
    );
    assert_eq!(post(addr, ECHO).body, ECHO_REPLY);
    stop(server);
}

/// The request head is read from one buffer: bare LF line ends, blank lines before the
/// request line, spaces and tabs around header values, header names in any case, bytes that
/// are not UTF-8 in a header value, and a request line that is not UTF-8.
#[test]
fn request_heads_are_parsed_leniently_where_go_is() {
    let server = start();
    let addr = server.local_addr();
    let len = ECHO.len();
    let variants = [
        format!("POST / HTTP/1.1\nHost: localhost\nContent-Type: application/json\nContent-Length: {len}\n\n{ECHO}"),
        format!("\r\n\r\nPOST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n{ECHO}"),
        format!("POST / HTTP/1.1\r\nhOST:\t localhost \t\r\ncontent-type:application/json\r\nCONTENT-LENGTH:  {len}\t\r\n\r\n{ECHO}"),
    ];
    for raw in &variants {
        let r = exchange(addr, raw);
        assert_eq!((r.status, r.body.as_str()), (200, ECHO_REPLY), "{raw:?}");
    }
    // A header value that is not UTF-8 is taken as it comes (with replacement characters).
    let mut raw = b"POST / HTTP/1.1\r\nHost: localhost\r\nX-Junk: \xff\xfe\r\n".to_vec();
    raw.extend_from_slice(
        format!("Content-Type: application/json\r\nContent-Length: {len}\r\n\r\n{ECHO}").as_bytes(),
    );
    let mut c = Client::connect(addr);
    c.send(&raw);
    let r = c.reply();
    assert_eq!((r.status, r.body.as_str()), (200, ECHO_REPLY));
    // The same connection goes on serving.
    let r = c.exchange(&post_request(ECHO, ""));
    assert_eq!((r.status, r.body.as_str()), (200, ECHO_REPLY));
    // A request line that is not UTF-8 is malformed.
    let mut c = Client::connect(addr);
    c.send(b"POST /\xff HTTP/1.1\r\nHost: localhost\r\n\r\n");
    c.reply()
        .assert_text(400, "bad request: malformed request line\n");
    // Empty header names and folded lines are refused.
    exchange(addr, "POST / HTTP/1.1\r\nHost: localhost\r\n: x\r\n\r\n")
        .assert_text(400, "bad request: malformed header line\n");
    exchange(
        addr,
        "POST / HTTP/1.1\r\nHost: localhost\r\n folded\r\n\r\n",
    )
    .assert_text(400, "bad request: folded header line\n");
    stop(server);
}

#[test]
fn virtual_hosts() {
    let server = start();
    let addr = server.local_addr();
    let with_host = |host: &str| {
        exchange(
            addr,
            &post_request(ECHO, "").replace("Host: localhost", &format!("Host: {host}")),
        )
    };
    for bad in [
        "evil.com",
        "evil.com:80",
        "LOCALHOST",
        "[::1]",
        "localhost.evil.com",
    ] {
        with_host(bad).assert_text(403, "invalid host specified\n");
    }
    for good in [
        "localhost",
        "localhost:1234",
        "10.0.0.1",
        "10.0.0.1:99",
        "[::1]:8551",
        "::1",
    ] {
        assert_eq!(with_host(good).body, ECHO_REPLY, "{good}");
    }
    // HTTP/1.0 may leave Host out, and passes.
    let r = exchange(
        addr,
        &format!(
            "POST / HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{ECHO}",
            ECHO.len()
        ),
    );
    assert_eq!(r.body, ECHO_REPLY);
    // The host of an absolute request target is the one checked.
    exchange(
        addr,
        &post_request(ECHO, "").replacen("POST / ", "POST http://evil.com/ ", 1),
    )
    .assert_text(403, "invalid host specified\n");
    // The health check is behind the host check too.
    exchange(addr, "GET / HTTP/1.1\r\nHost: evil.com\r\n\r\n")
        .assert_text(403, "invalid host specified\n");
    stop(server);

    let server = start_with(|cfg, _| cfg.vhosts = vec!["Example.COM".into()]);
    let addr = server.local_addr();
    assert_eq!(
        exchange(
            addr,
            &post_request(ECHO, "").replace("Host: localhost", "Host: example.com:8551")
        )
        .body,
        ECHO_REPLY
    );
    exchange(addr, &post_request(ECHO, "")).assert_text(403, "invalid host specified\n");
    stop(server);

    let server = start_with(|cfg, _| cfg.vhosts = vec!["*".into()]);
    let r = exchange(
        server.local_addr(),
        &post_request(ECHO, "").replace("Host: localhost", "Host: evil.com"),
    );
    assert_eq!(r.body, ECHO_REPLY);
    stop(server);
}

fn preflight(addr: SocketAddr, origin: &str, method: &str, headers: Option<&str>) -> Reply {
    let acrh = headers
        .map(|h| format!("Access-Control-Request-Headers: {h}\r\n"))
        .unwrap_or_default();
    exchange(addr, &format!("OPTIONS / HTTP/1.1\r\nHost: localhost\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: {method}\r\n{acrh}\r\n"))
}

const VARY_PREFLIGHT: [&str; 3] = [
    "Origin",
    "Access-Control-Request-Method",
    "Access-Control-Request-Headers",
];

#[test]
fn cors_preflight_and_actual_requests() {
    let server = start_with(|cfg, _| {
        cfg.cors = vec!["http://Good.example".into(), "http://*.wild.example".into()]
    });
    let addr = server.local_addr();

    let r = preflight(
        addr,
        "http://good.example",
        "post",
        Some("content-type, x-custom-HEADER"),
    );
    assert_eq!((r.status, r.body.as_str()), (200, ""));
    assert_eq!(r.all("Vary"), VARY_PREFLIGHT);
    assert_eq!(
        r.header("Access-Control-Allow-Origin"),
        Some("http://good.example")
    );
    assert_eq!(r.header("Access-Control-Allow-Methods"), Some("POST"));
    assert_eq!(
        r.header("Access-Control-Allow-Headers"),
        Some("Content-Type, X-Custom-Header")
    );
    assert_eq!(r.header("Access-Control-Max-Age"), Some("600"));
    assert_eq!(
        r.header("Content-Type"),
        None,
        "a preflight never reaches the RPC handler"
    );

    let r = preflight(addr, "HTTP://GOOD.EXAMPLE", "GET", None);
    assert_eq!(
        r.header("Access-Control-Allow-Origin"),
        Some("HTTP://GOOD.EXAMPLE"),
        "the origin is echoed as sent"
    );
    assert_eq!(r.header("Access-Control-Allow-Headers"), None);
    let r = preflight(addr, "http://a.wild.example", "POST", None);
    assert_eq!(
        r.header("Access-Control-Allow-Origin"),
        Some("http://a.wild.example")
    );

    for (origin, method) in [
        ("http://evil.example", "POST"),
        ("http://good.example", "PUT"),
        ("http://wild.example", "POST"),
    ] {
        let r = preflight(addr, origin, method, None);
        assert_eq!((r.status, r.body.as_str()), (200, ""));
        assert_eq!(r.all("Vary"), VARY_PREFLIGHT);
        for h in [
            "Access-Control-Allow-Origin",
            "Access-Control-Allow-Methods",
            "Access-Control-Max-Age",
        ] {
            assert_eq!(r.header(h), None, "{origin} {method}: {h}");
        }
    }

    // The host check comes first.
    let r = exchange(addr, "OPTIONS / HTTP/1.1\r\nHost: evil.com\r\nOrigin: http://good.example\r\nAccess-Control-Request-Method: POST\r\n\r\n");
    r.assert_text(403, "invalid host specified\n");
    assert!(r.all("Vary").is_empty());

    let r = post(addr, ECHO);
    assert_eq!(
        (r.all("Vary"), r.header("Access-Control-Allow-Origin")),
        (vec!["Origin"], None)
    );
    let r = exchange(addr, &post_request(ECHO, "Origin: http://good.example\r\n"));
    assert_eq!(r.body, ECHO_REPLY);
    assert_eq!(
        (r.all("Vary"), r.header("Access-Control-Allow-Origin")),
        (vec!["Origin"], Some("http://good.example"))
    );
    let r = exchange(addr, &post_request(ECHO, "Origin: http://evil.example\r\n"));
    assert_eq!(
        (r.all("Vary"), r.header("Access-Control-Allow-Origin")),
        (vec!["Origin"], None)
    );
    // HTTP errors of the handler carry them too.
    let r = exchange(
        addr,
        &post_request(ECHO, "Origin: http://good.example\r\n")
            .replace("application/json", "text/plain"),
    );
    r.assert_text(
        415,
        "invalid content type, only application/json is supported\n",
    );
    assert_eq!(
        (r.all("Vary"), r.header("Access-Control-Allow-Origin")),
        (vec!["Origin"], Some("http://good.example"))
    );
    // Only GET and POST get Allow-Origin.
    let r = exchange(
        addr,
        &post_request(ECHO, "Origin: http://good.example\r\n").replacen("POST", "PUT", 1),
    );
    r.assert_text(405, "method not allowed\n");
    assert_eq!(
        (r.all("Vary"), r.header("Access-Control-Allow-Origin")),
        (vec!["Origin"], None)
    );
    let r = exchange(
        addr,
        &post_request(ECHO, "Origin: http://good.example\r\n").replacen("POST", "PATCH", 1),
    );
    assert_eq!(
        (
            r.body.as_str(),
            r.all("Vary"),
            r.header("Access-Control-Allow-Origin")
        ),
        (ECHO_REPLY, vec!["Origin"], None)
    );
    stop(server);

    let server = start_with(|cfg, _| cfg.cors = vec!["*".into()]);
    let addr = server.local_addr();
    assert_eq!(
        preflight(addr, "http://any.example", "POST", None).header("Access-Control-Allow-Origin"),
        Some("*")
    );
    let r = exchange(addr, &post_request(ECHO, "Origin: http://any.example\r\n"));
    assert_eq!(r.header("Access-Control-Allow-Origin"), Some("*"));
    stop(server);

    // Without origins there is no CORS layer: no Vary, and a "preflight" is an RPC request.
    let server = start();
    let addr = server.local_addr();
    assert!(post(addr, ECHO).all("Vary").is_empty());
    let r = preflight(addr, "http://good.example", "POST", None);
    assert_eq!(
        (r.status, r.body.as_str(), r.header("Content-Type")),
        (200, "", Some("application/json"))
    );
    assert!(r.all("Vary").is_empty() && r.header("Access-Control-Allow-Origin").is_none());
    stop(server);
}

/// A request of exactly `len` bytes: an echo of padding, then trailing spaces.
fn echo_of_len(len: usize) -> String {
    let mut s = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["{}"]}}"#,
        "x".repeat(len / 2)
    );
    assert!(s.len() <= len);
    s.push_str(&" ".repeat(len - s.len()));
    s
}

fn chunked(body: &str, chunk: usize) -> String {
    let mut out = String::new();
    for piece in body.as_bytes().chunks(chunk) {
        out.push_str(&format!(
            "{:x}\r\n{}\r\n",
            piece.len(),
            std::str::from_utf8(piece).unwrap()
        ));
    }
    out + "0\r\n\r\n"
}

const CHUNKED_HEAD: &str = "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

#[test]
fn bodies_large_chunked_and_capped() {
    let server = start_with(|_, limits| limits.max_request_bytes = 4096);
    let addr = server.local_addr();

    // Bodies over 1 KiB, up to the limit exactly.
    for len in [3000, 4096] {
        let r = post(addr, &echo_of_len(len));
        assert_eq!(r.json()["result"].as_str().unwrap().len(), len / 2);
    }
    exchange(addr, &post_request(&echo_of_len(4097), ""))
        .assert_text(413, "content length too large (4097>4096)\n");

    // Expect: 100-continue gets the interim response before the body is sent.
    let body = echo_of_len(2000);
    let mut c = Client::connect(addr);
    c.send(format!("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n", body.len()).as_bytes());
    assert_eq!(c.read_line(), "HTTP/1.1 100 Continue\r\n");
    assert_eq!(c.read_line(), "\r\n");
    c.send(body.as_bytes());
    assert_eq!(c.reply().json()["result"].as_str().unwrap().len(), 1000);

    // Chunked bodies, with a chunk extension and a trailer.
    let mut c = Client::connect(addr);
    let r = c.exchange(&format!("{CHUNKED_HEAD}{}", chunked(ECHO, 7)));
    assert_eq!(r.body, ECHO_REPLY);
    let r = c.exchange(&format!(
        "{CHUNKED_HEAD}{}",
        chunked(&echo_of_len(4096), 1000)
            .replacen("\r\n", ";ext=1\r\n", 1)
            .replace("0\r\n\r\n", "0\r\nX-Trailer: 1\r\n\r\n")
    ));
    assert_eq!(r.json()["result"].as_str().unwrap().len(), 2048, "{r:?}");
    assert_eq!(
        r.header("Connection"),
        None,
        "a chunked body read to its end keeps the connection"
    );

    // A chunked body beyond the limit is refused like a declared one (it used to be cut
    // there and answered 200 with a parse error); the connection closes.
    let mut c = Client::connect(addr);
    c.exchange(&format!(
        "{CHUNKED_HEAD}{}",
        chunked(&echo_of_len(10_000), 1000)
    ))
    .assert_text(413, "request body too large (more than 4096 bytes)\n");
    assert!(c.closed());

    assert_eq!(exchange(addr, &format!("{CHUNKED_HEAD}zz\r\n")).status, 400);
    assert_eq!(
        exchange(addr, &format!("{CHUNKED_HEAD}3\r\nabcX\r\n0\r\n\r\n")).status,
        400
    );
    stop(server);
}

#[test]
fn keep_alive_and_pipelining() {
    let server = start();
    let addr = server.local_addr();

    let mut c = Client::connect(addr);
    for _ in 0..3 {
        let r = c.exchange(&post_request(ECHO, ""));
        assert_eq!(
            (r.body.as_str(), r.header("Connection")),
            (ECHO_REPLY, None)
        );
    }
    // Pipelined: three requests in one write, answered in order.
    c.send(
        format!(
            "{}GET / HTTP/1.1\r\nHost: localhost\r\n\r\n{}",
            post_request(ECHO, ""),
            post_request(&ECHO.replace("hi", "second"), "")
        )
        .as_bytes(),
    );
    assert_eq!(c.reply().body, ECHO_REPLY);
    assert_eq!(c.reply().body, "");
    assert_eq!(c.reply().json()["result"], "second");
    // Connection: close is honoured.
    let r = c.exchange(&post_request(ECHO, "Connection: close\r\n"));
    assert_eq!(
        (r.body.as_str(), r.header("Connection")),
        (ECHO_REPLY, Some("close"))
    );
    assert!(c.closed());

    // HTTP/1.0 closes unless asked to keep alive.
    let req10 = |extra: &str| {
        format!("POST / HTTP/1.0\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{ECHO}", ECHO.len())
    };
    let mut c = Client::connect(addr);
    assert_eq!(c.exchange(&req10("")).header("Connection"), Some("close"));
    assert!(c.closed());
    let mut c = Client::connect(addr);
    assert_eq!(
        c.exchange(&req10("Connection: keep-alive\r\n"))
            .header("Connection"),
        Some("keep-alive")
    );
    assert_eq!(
        c.exchange(&req10("Connection: keep-alive\r\n")).body,
        ECHO_REPLY
    );

    // An error answered before the body was read closes the connection, and the response
    // still arrives whole although the client sent a body the server never read.
    let mut c = Client::connect(addr);
    let big = echo_of_len(200_000);
    c.exchange(&post_request(&big, "").replace("application/json", "text/plain"))
        .assert_text(
            415,
            "invalid content type, only application/json is supported\n",
        );
    assert!(c.closed());
    stop(server);
}

/// Opens a connection that declares a 5000-byte body and sends only part of it.
fn slow_client(addr: SocketAddr, body: &str) -> Client {
    let mut c = Client::connect(addr);
    c.send(format!("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}", body.len(), &body[..100]).as_bytes());
    c
}

#[test]
fn slow_clients_hold_no_worker() {
    let workers = 2;
    let server = start_with(|cfg, _| cfg.workers = workers);
    let addr = server.local_addr();
    let body = echo_of_len(5000);
    let mut slow: Vec<Client> = (0..workers * 2).map(|_| slow_client(addr, &body)).collect();
    // One more that has not even finished its headers.
    let mut stalled_head = Client::connect(addr);
    stalled_head.send(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Le");

    for _ in 0..workers * 3 {
        assert_eq!(post(addr, ECHO).body, ECHO_REPLY);
    }
    // The slow clients are still waited for, and answered once their bodies arrive.
    for c in slow.iter_mut() {
        c.send(&body.as_bytes()[100..]);
        assert_eq!(c.reply().json()["result"].as_str().unwrap().len(), 2500);
    }
    stalled_head.send(
        format!(
            "ngth: {}\r\nContent-Type: application/json\r\n\r\n{ECHO}",
            ECHO.len()
        )
        .as_bytes(),
    );
    assert_eq!(stalled_head.reply().body, ECHO_REPLY);
    stop(server);
}

#[test]
fn a_request_that_does_not_arrive_in_time_gets_408() {
    let server = start_with(|cfg, _| cfg.body_timeout = Duration::from_millis(300));
    let addr = server.local_addr();
    let mut silent = Client::connect(addr);
    let mut body_late = slow_client(addr, &echo_of_len(5000));
    let mut head_late = Client::connect(addr);
    head_late.send(b"POST / HTTP/1.1\r\nHost: local");
    for c in [&mut body_late, &mut head_late] {
        let r = c.reply();
        r.assert_text(408, "request timeout\n");
        assert_eq!(r.header("Connection"), Some("close"));
        assert!(c.closed());
    }
    assert!(
        silent.closed(),
        "a connection that never starts a request is closed"
    );
    // An idle keep-alive connection is not timed out by the body timeout.
    let mut idle = Client::connect(addr);
    assert_eq!(idle.exchange(&post_request(ECHO, "")).body, ECHO_REPLY);
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(idle.exchange(&post_request(ECHO, "")).body, ECHO_REPLY);
    stop(server);
}

#[test]
fn stop_closes_connections_and_frees_the_port() {
    let server = start();
    let addr = server.local_addr();
    let mut kept = Client::connect(addr);
    assert_eq!(kept.exchange(&post_request(ECHO, "")).body, ECHO_REPLY);
    let mut slow = slow_client(addr, &echo_of_len(5000));
    let mut silent = Client::connect(addr);

    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        stop(server);
        tx.send(()).unwrap();
    });
    rx.recv_timeout(CLIENT_PATIENCE).expect("stop returns");

    for c in [&mut kept, &mut slow, &mut silent] {
        assert!(c.closed(), "every connection is closed");
    }
    assert!(
        TcpStream::connect(addr).is_err(),
        "the port no longer accepts"
    );

    // The port can be bound again at once.
    let again = start_with(|cfg, _| cfg.port = addr.port());
    assert_eq!(again.local_addr(), addr);
    assert_eq!(post(addr, ECHO).body, ECHO_REPLY);
    stop(again);
}

#[test]
fn a_taken_port_is_reported_like_the_reference() {
    let server = start();
    let port = server.local_addr().port();
    let dispatcher = Dispatcher::new(registry(), None, Transport::Http, false, DEFAULT_LIMITS);
    let err = HttpServer::start(&HttpConfig::new("127.0.0.1", port), dispatcher.clone())
        .err()
        .expect("second bind fails");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    assert_eq!(
        err.to_string(),
        format!("listen tcp 127.0.0.1:{port}: bind: address already in use")
    );
    // `localhost` binds the IPv4 loopback address, and reports it.
    let err = HttpServer::start(&HttpConfig::new("localhost", port), dispatcher)
        .err()
        .expect("second bind fails");
    assert_eq!(
        err.to_string(),
        format!("listen tcp 127.0.0.1:{port}: bind: address already in use")
    );
    // The running server is unaffected.
    assert_eq!(post(server.local_addr(), ECHO).body, ECHO_REPLY);
    stop(server);
}

#[test]
fn the_worker_pool_bounds_the_calls_running_at_once() {
    let server = start_with(|cfg, _| cfg.workers = 2);
    let addr = server.local_addr();
    let clients: Vec<_> = (0..6)
        .map(|_| {
            std::thread::spawn(move || {
                post(addr, r#"{"jsonrpc":"2.0","id":1,"method":"test_slow"}"#).json()["result"]
                    .as_u64()
                    .unwrap()
            })
        })
        .collect();
    let peaks: Vec<u64> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    assert_eq!(
        peaks.iter().max(),
        Some(&2),
        "at most 2 calls ran at once: {peaks:?}"
    );
    stop(server);
}

/// A call that runs past the execution timeout is answered 503 `timeout`; the connection
/// stays open and serves its next request, and calls within the timeout are untouched.
#[test]
fn a_call_past_the_execution_timeout_is_answered_503() {
    let server = start_with(|cfg, _| cfg.execution_timeout = Duration::from_millis(100));
    let addr = server.local_addr();
    let sleep =
        |ms: u64| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"test_sleep","params":[{ms}]}}"#);
    let mut c = Client::connect(addr);
    c.exchange(&post_request(&sleep(600), ""))
        .assert_text(503, "timeout");
    // The same connection: its next request is answered normally.
    let r = c.exchange(&post_request(ECHO, ""));
    assert_eq!((r.status, r.body.as_str()), (200, ECHO_REPLY));
    let r = c.exchange(&post_request(&sleep(1), ""));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"], 1);
    // The timed-out call's own answer never arrives on the connection.
    let r = c.exchange(&post_request(ECHO, ""));
    assert_eq!(r.body, ECHO_REPLY);
    stop(server);
}
