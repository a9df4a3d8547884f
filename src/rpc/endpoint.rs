//! What the node needs from a running transport, and the settings each transport starts with.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

/// Most HTTP connections open at once by default ([`HttpConfig::max_connections`]); one
/// more is answered 503 `server busy` and closed.
pub const DEFAULT_HTTP_CONNECTIONS: usize = 4096;

/// Settings of the HTTP endpoint.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Host to listen on, as given (`localhost`, `127.0.0.1`, `0.0.0.0`, `[::1]`).
    pub host: String,
    /// 0 picks a free port.
    pub port: u16,
    /// Allowed CORS origins; empty turns CORS off; `*` allows any.
    pub cors: Vec<String>,
    /// Allowed virtual hosts (the `Host` header); `*` allows any; IP addresses always pass.
    pub vhosts: Vec<String>,
    /// Size of the worker pool: how many calls may run at once.
    pub workers: usize,
    /// How long a request (head and body) may take to arrive, counted from its first byte
    /// (for a new connection: from the connection) before it is answered 408.
    pub body_timeout: Duration,
    /// Most connections open at once (idle and half-sent ones included); one more is
    /// answered 503 `server busy` and closed.
    pub max_connections: usize,
    /// How long a kept-alive connection may stay quiet between requests (the reference's
    /// idle timeout, default 120 s).
    pub idle_timeout: Duration,
    /// How long writing one response may take (the reference's write timeout, default 30 s).
    pub write_timeout: Duration,
    /// How long a call may run before its request is answered 503 `timeout` (the
    /// reference's `--rpcexecutiontimeout`, default 30 s); the connection stays usable.
    pub execution_timeout: Duration,
}

impl HttpConfig {
    pub fn new(host: impl Into<String>, port: u16) -> HttpConfig {
        HttpConfig {
            host: host.into(),
            port,
            cors: Vec::new(),
            vhosts: vec!["localhost".into()],
            workers: std::thread::available_parallelism()
                .map(|n| n.get() * 2)
                .unwrap_or(4)
                .max(4),
            body_timeout: Duration::from_secs(30),
            max_connections: DEFAULT_HTTP_CONNECTIONS,
            idle_timeout: Duration::from_secs(120),
            write_timeout: Duration::from_secs(30),
            execution_timeout: DEFAULT_EXECUTION_TIMEOUT,
        }
    }
}

/// Settings of the WebSocket endpoint.
#[derive(Debug, Clone)]
pub struct WsConfig {
    pub host: String,
    pub port: u16,
    /// Allowed `Origin` values (lower-cased on comparison); `*` allows any; empty means
    /// `http://localhost` and `http://<hostname>`. A request without `Origin` passes.
    pub origins: Vec<String>,
    /// Most simultaneous connections.
    pub max_connections: usize,
}

impl WsConfig {
    pub fn new(host: impl Into<String>, port: u16) -> WsConfig {
        WsConfig {
            host: host.into(),
            port,
            origins: Vec::new(),
            max_connections: 3000,
        }
    }
}

/// The reference's execution timeout of an HTTP call.
pub const DEFAULT_EXECUTION_TIMEOUT: Duration = Duration::from_secs(30);

/// Default most IPC connections open at once.
pub const DEFAULT_IPC_CONNECTIONS: usize = 1000;

/// Settings of the IPC endpoint.
#[derive(Debug, Clone)]
pub struct IpcConfig {
    pub path: PathBuf,
    /// Most connections open at once; one more is answered with an error and closed.
    pub max_connections: usize,
}

impl IpcConfig {
    pub fn new(path: PathBuf) -> IpcConfig {
        IpcConfig {
            path,
            max_connections: DEFAULT_IPC_CONNECTIONS,
        }
    }
}

/// Resolves `host:port` to the address to bind: `localhost` is the IPv4 loopback address.
pub fn bind_address(host: &str, port: u16) -> io::Result<SocketAddr> {
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let h = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    // A name that does not resolve reads as the reference's (Go's) resolver error.
    let no_such_host = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("listen tcp: lookup {host}: no such host"),
        )
    };
    (h, port)
        .to_socket_addrs()
        .map_err(|_| no_such_host())?
        .next()
        .ok_or_else(no_such_host)
}

/// A running transport endpoint. Dropping it does not stop it; call [`Endpoint::stop`].
pub trait Endpoint: Send {
    /// The address actually bound (with the port chosen for port 0), or the socket path.
    fn url(&self) -> String;
    /// Closes the listener and every connection, and joins the endpoint's threads.
    fn stop(self: Box<Self>);
}

/// The reference's wording of a failed listen: `listen tcp <addr>: bind: <error text>`.
pub fn listen_error(addr: SocketAddr, e: io::Error) -> io::Error {
    let text = e.to_string();
    let text = text
        .find(" (os error")
        .map_or(text.as_str(), |i| &text[..i]);
    let mut chars = text.chars();
    let text: String = chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default();
    io::Error::new(e.kind(), format!("listen tcp {addr}: bind: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_errors_read_like_the_reference() {
        let e = io::Error::from_raw_os_error(libc::EADDRINUSE);
        let e = listen_error(SocketAddr::from(([127, 0, 0, 1], 8551)), e);
        assert_eq!(
            e.to_string(),
            "listen tcp 127.0.0.1:8551: bind: address already in use"
        );
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
    }
}
