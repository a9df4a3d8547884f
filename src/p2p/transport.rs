//! Authenticated, encrypted connections between nodes.
//!
//! A connection starts with a Noise handshake, `Noise_XX_25519_ChaChaPoly_BLAKE2s`, with a
//! fresh X25519 static key per connection. Noise alone proves nothing about the node key, so
//! the identity is bound afterwards, as libp2p binds it: each side sends, as its first
//! encrypted message, its secp256k1 signature (node key) over
//! `keccak256("chain-node p2p v1" ‖ handshake hash)`. The handshake hash is unique to this
//! handshake, so a signature cannot be replayed on another connection; the public key it
//! recovers to is the peer's node id. A dialer refuses a peer whose id is not the one it dialed.
//!
//! On the wire every Noise message is preceded by its length (2 bytes, big-endian). A logical
//! message is a Noise message holding its length (4 bytes, big-endian), then its bytes in
//! Noise messages of at most [`CHUNK`] plaintext bytes (Noise caps a message at 65535 bytes,
//! the 16-byte tag included). Every length is known before its bytes are read, so a declared
//! size over [`MAX_MESSAGE`] is refused before anything is allocated, and a frame of any other
//! size than expected is refused at once.
//!
//! The two directions use separate nonce counters over one shared, immutable
//! `StatelessTransportState`, so the reader and the writer work from two threads at once
//! without a lock.

use std::fmt;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snow::StatelessTransportState;
use zeroize::Zeroizing;

use super::identity::NodeIdentity;
use super::url::NodeId;
use crate::crypto::{keccak256_concat, recover_public_xy};

/// The largest logical message, in bytes; a peer declaring more is disconnected.
pub const MAX_MESSAGE: usize = 16 << 20;

/// The Noise protocol.
const NOISE_PARAMS: &str = "Noise_XX_25519_ChaChaPoly_BLAKE2s";

/// The Noise prologue and the domain of the identity signature: a peer of another protocol or
/// version fails the handshake instead of misreading what follows.
const DOMAIN: &[u8] = b"chain-node p2p v1";

/// Noise's largest message, tag included.
const NOISE_MAX: usize = 65535;

/// The ChaCha20-Poly1305 tag.
const TAG: usize = 16;

/// The most plaintext one Noise message carries: 65519 bytes.
pub const CHUNK: usize = NOISE_MAX - TAG;

/// The encrypted 4-byte length that opens a logical message.
const HEADER_FRAME: usize = 4 + TAG;

/// The three XX handshake messages with empty payloads: `-> e` (32), `<- e, ee, s, es`
/// (32 + 32 + 16 + 16 for the empty payload's tag), `-> s, se` (32 + 16 + 16). Anything else
/// is not our handshake, refused before reading it.
const HANDSHAKE_FRAMES: [usize; 3] = [32, 96, 64];

/// The secp256k1 signature of the identity message: r ‖ s ‖ recovery id.
const SIGNATURE: usize = 65;

/// Why a connection failed. The messages are meant for the log, as disconnect reasons; none
/// carries key material.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// Nothing arrived (or could be sent) in time; the text names what was awaited.
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
    /// The peer closed the connection between two messages.
    #[error("connection closed by the peer")]
    Closed,
    /// The peer closed the connection in the middle of the named thing.
    #[error("connection closed in the middle of {0}")]
    Truncated(&'static str),
    /// The Noise handshake failed: not our protocol, or a peer that cannot complete it.
    #[error("handshake failed: {0}")]
    Handshake(String),
    /// The identity signature recovers to no public key.
    #[error("handshake failed: the identity signature is invalid")]
    BadSignature,
    /// The dialed node answered with another node key. (Boxed: two ids would make every
    /// `Result` of this module 128 bytes larger.)
    #[error("wrong node id: dialed {expected}, the peer is {got}")]
    WrongId {
        expected: Box<NodeId>,
        got: Box<NodeId>,
    },
    /// A message over [`MAX_MESSAGE`], declared by the peer or handed to `send`.
    #[error("message of {len} bytes exceeds the limit of {max} bytes")]
    TooLarge { len: u64, max: usize },
    /// A frame failed authentication: corrupted or forged bytes.
    #[error("decryption failed: bad authentication tag")]
    Decrypt,
    /// A frame of the wrong size, or a nonce counter used up.
    #[error("malformed frame: {0}")]
    Malformed(String),
    /// An earlier error left this half of the connection out of step with the peer.
    #[error("connection unusable after an earlier error")]
    Broken,
}

/// Which end of the connection this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// We connected; the peer must prove it holds the key of `expected`.
    Dialer { expected: NodeId },
    /// The peer connected; its id is learned from the handshake.
    Listener,
}

/// An established connection: the peer's proven id and the two halves.
#[derive(Debug)]
pub struct Connection {
    pub remote_id: NodeId,
    pub reader: SecureReader,
    pub writer: SecureWriter,
    pub local_addr: SocketAddr,
    pub remote_addr: SocketAddr,
}

/// The receiving half of a connection.
pub struct SecureReader {
    stream: TcpStream,
    state: Arc<StatelessTransportState>,
    nonce: u64,
    /// Set when an error left the stream in the middle of a frame.
    broken: bool,
    /// One Noise message's ciphertext, reused.
    frame: Vec<u8>,
}

/// The sending half of a connection.
pub struct SecureWriter {
    stream: TcpStream,
    state: Arc<StatelessTransportState>,
    nonce: u64,
    /// Set when a write failed part way: the peer would read the rest out of step.
    broken: bool,
}

impl fmt::Debug for SecureReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecureReader")
            .field("peer", &self.stream.peer_addr().ok())
            .field("messages", &self.nonce)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for SecureWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecureWriter")
            .field("peer", &self.stream.peer_addr().ok())
            .field("messages", &self.nonce)
            .finish_non_exhaustive()
    }
}

/// Runs the handshake on a connected `stream` and proves the peer's node id: the whole of it
/// (Noise and the identity messages) must finish within `timeout`. Returns the connection with
/// no read or write timeout set. Fails with `Timeout`, `Handshake` (not our protocol, or a bad
/// frame), `Truncated` (the peer hung up), `BadSignature`, `WrongId` (a dialer reached another
/// node) or `Io`.
pub fn handshake(
    stream: TcpStream,
    me: &NodeIdentity,
    role: Role,
    timeout: Duration,
) -> Result<Connection, TransportError> {
    let deadline = Instant::now() + timeout;
    let local_addr = stream.local_addr()?;
    let remote_addr = stream.peer_addr()?;
    // Small messages (pings, votes) should leave at once rather than wait for an ACK.
    stream.set_nodelay(true)?;
    let dialer = matches!(role, Role::Dialer { .. });

    let params: snow::params::NoiseParams = NOISE_PARAMS.parse().expect("a valid Noise name");
    let keypair = snow::Builder::new(params.clone())
        .generate_keypair()
        .map_err(noise_setup)?;
    let private = Zeroizing::new(keypair.private);
    let builder = snow::Builder::new(params)
        .local_private_key(&private)
        .and_then(|b| b.prologue(DOMAIN))
        .map_err(noise_setup)?;
    let mut noise = if dialer {
        builder.build_initiator()
    } else {
        builder.build_responder()
    }
    .map_err(noise_setup)?;

    let mut buf = [0u8; 128];
    let mut payload = [0u8; 128];
    let mut io = Deadline {
        stream: &stream,
        deadline,
    };
    for (i, &size) in HANDSHAKE_FRAMES.iter().enumerate() {
        // The dialer writes messages 1 and 3, the listener message 2.
        if (i % 2 == 0) == dialer {
            let n = noise
                .write_message(&[], &mut buf)
                .map_err(|e| TransportError::Handshake(format!("noise: {e}")))?;
            debug_assert_eq!(n, size);
            let mut frame = Vec::with_capacity(2 + n);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
            frame.extend_from_slice(&buf[..n]);
            io.write_all(&frame)?;
        } else {
            let mut len = [0u8; 2];
            io.read_exact(&mut len)?;
            let n = usize::from(u16::from_be_bytes(len));
            if n != size {
                return Err(TransportError::Handshake(format!(
                    "handshake message {} is {n} bytes, want {size}",
                    i + 1
                )));
            }
            io.read_exact(&mut buf[..n])?;
            noise
                .read_message(&buf[..n], &mut payload)
                .map_err(|e| TransportError::Handshake(format!("noise: {e}")))?;
        }
    }
    let mut hash = Vec::from(noise.get_handshake_hash());
    hash.truncate(32);
    let state = Arc::new(
        noise
            .into_stateless_transport_mode()
            .map_err(|e| TransportError::Handshake(format!("noise: {e}")))?,
    );

    let mut writer = SecureWriter {
        stream: stream.try_clone()?,
        state: state.clone(),
        nonce: 0,
        broken: false,
    };
    let mut reader = SecureReader {
        stream,
        state,
        nonce: 0,
        broken: false,
        frame: Vec::new(),
    };

    // Both sides send their signature before reading the other's: 90 bytes fit in any
    // socket buffer, so neither waits on the other.
    let digest = keccak256_concat(&[DOMAIN, &hash]);
    let signature = me.key().sign_hash(&digest);
    writer.set_write_timeout(Some(remaining(deadline)?))?;
    writer.send(&signature).map_err(during_handshake)?;
    reader.set_read_timeout(Some(remaining(deadline)?))?;
    let theirs = reader.recv_bounded(SIGNATURE).map_err(during_handshake)?;
    let theirs: [u8; SIGNATURE] = theirs.try_into().map_err(|b: Vec<u8>| {
        TransportError::Handshake(format!(
            "identity message is {} bytes, want {SIGNATURE}",
            b.len()
        ))
    })?;
    let remote_id =
        NodeId(recover_public_xy(&digest, &theirs).map_err(|_| TransportError::BadSignature)?);
    if let Role::Dialer { expected } = role {
        if expected != remote_id {
            return Err(TransportError::WrongId {
                expected: Box::new(expected),
                got: Box::new(remote_id),
            });
        }
    }
    reader.set_read_timeout(None)?;
    writer.set_write_timeout(None)?;
    Ok(Connection {
        remote_id,
        reader,
        writer,
        local_addr,
        remote_addr,
    })
}

/// A failure to set up Noise itself (not caused by the peer).
fn noise_setup(e: snow::Error) -> TransportError {
    TransportError::Handshake(format!("noise setup: {e}"))
}

/// The errors of the identity exchange, named as part of the handshake.
fn during_handshake(e: TransportError) -> TransportError {
    match e {
        TransportError::Timeout(_) => TransportError::Timeout("the handshake"),
        TransportError::Closed | TransportError::Truncated(_) => {
            TransportError::Truncated("the handshake")
        }
        other => other,
    }
}

/// The time left before `deadline`; a timeout error when none is.
fn remaining(deadline: Instant) -> Result<Duration, TransportError> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or(TransportError::Timeout("the handshake"))
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Handshake I/O against one deadline: each read and write gets the time that is left.
struct Deadline<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl Deadline<'_> {
    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), TransportError> {
        let mut done = 0;
        while done < buf.len() {
            self.stream
                .set_read_timeout(Some(remaining(self.deadline)?))?;
            match self.stream.read(&mut buf[done..]) {
                Ok(0) => return Err(TransportError::Truncated("the handshake")),
                Ok(n) => done += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) => return Err(TransportError::Timeout("the handshake")),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    fn write_all(&mut self, buf: &[u8]) -> Result<(), TransportError> {
        self.stream
            .set_write_timeout(Some(remaining(self.deadline)?))?;
        (&*self.stream).write_all(buf).map_err(|e| {
            if is_timeout(&e) {
                TransportError::Timeout("the handshake")
            } else {
                e.into()
            }
        })
    }
}

impl SecureReader {
    /// Waits for the next message and returns its bytes. Blocks until it arrives, or until the
    /// read timeout set with [`SecureReader::set_read_timeout`] passes with nothing received
    /// (`Timeout`; the connection stays usable). Fails with `Closed` when the peer hung up
    /// between messages, `Truncated` inside one, `TooLarge` for a declared length over
    /// [`MAX_MESSAGE`], `Decrypt` for forged or corrupted bytes, `Malformed` for a frame of the
    /// wrong size; after any of these (and a timeout inside a message) the reader is `Broken`.
    pub fn recv(&mut self) -> Result<Vec<u8>, TransportError> {
        self.recv_bounded(MAX_MESSAGE)
    }

    /// Sets the socket's read timeout (`None`: wait for ever). Fails only as the OS call fails.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> Result<(), TransportError> {
        Ok(self.stream.set_read_timeout(timeout)?)
    }

    /// As [`SecureReader::recv`] with a smaller limit than [`MAX_MESSAGE`].
    fn recv_bounded(&mut self, max: usize) -> Result<Vec<u8>, TransportError> {
        if self.broken {
            return Err(TransportError::Broken);
        }
        let mut started = false;
        let result = self.recv_inner(max, &mut started);
        if result.is_err() && started {
            self.broken = true;
        }
        result
    }

    /// Reads one logical message; sets `started` once its first byte is in.
    fn recv_inner(&mut self, max: usize, started: &mut bool) -> Result<Vec<u8>, TransportError> {
        let mut header = [0u8; 4];
        let n = self.read_frame(started)?;
        if n != HEADER_FRAME {
            return Err(TransportError::Malformed(format!(
                "message header of {n} bytes, want {HEADER_FRAME}"
            )));
        }
        self.open(&mut header)?;
        let len = u64::from(u32::from_be_bytes(header));
        if len > max as u64 {
            return Err(TransportError::TooLarge { len, max });
        }
        let len = len as usize;
        // Grown as chunks arrive: a peer that declares much and sends little gets little room.
        let mut out = Vec::with_capacity(len.min(CHUNK));
        while out.len() < len {
            let want = (len - out.len()).min(CHUNK);
            let n = self.read_frame(started)?;
            if n != want + TAG {
                return Err(TransportError::Malformed(format!(
                    "chunk of {n} bytes, want {}",
                    want + TAG
                )));
            }
            let start = out.len();
            out.resize(start + want, 0);
            self.open(&mut out[start..])?;
        }
        Ok(out)
    }

    /// Reads one length-prefixed frame into `self.frame` and returns its length.
    fn read_frame(&mut self, started: &mut bool) -> Result<usize, TransportError> {
        let mut len = [0u8; 2];
        self.read_exact(&mut len, started)?;
        let n = usize::from(u16::from_be_bytes(len));
        self.frame.resize(n, 0);
        let mut frame = std::mem::take(&mut self.frame);
        let r = self.read_exact(&mut frame, started);
        self.frame = frame;
        r.map(|()| n)
    }

    /// Decrypts `self.frame` into `out` (exactly its plaintext size) with the next nonce.
    fn open(&mut self, out: &mut [u8]) -> Result<(), TransportError> {
        let nonce = self.nonce;
        self.nonce = nonce
            .checked_add(1)
            .ok_or_else(|| TransportError::Malformed("receive nonce used up".into()))?;
        match self.state.read_message(nonce, &self.frame, out) {
            Ok(_) => Ok(()),
            Err(snow::Error::Decrypt) => Err(TransportError::Decrypt),
            Err(e) => Err(TransportError::Malformed(format!("noise: {e}"))),
        }
    }

    /// Fills `buf`. A timeout or end of stream before the message's first byte is `Timeout` /
    /// `Closed`; after it, the message is cut (`Truncated`, or a timeout that breaks the reader).
    fn read_exact(&mut self, buf: &mut [u8], started: &mut bool) -> Result<(), TransportError> {
        let mut done = 0;
        while done < buf.len() {
            match self.stream.read(&mut buf[done..]) {
                Ok(0) if *started => return Err(TransportError::Truncated("a message")),
                Ok(0) => return Err(TransportError::Closed),
                Ok(n) => {
                    done += n;
                    *started = true;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) && *started => {
                    return Err(TransportError::Timeout("the rest of a message"))
                }
                Err(e) if is_timeout(&e) => return Err(TransportError::Timeout("a message")),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

impl SecureWriter {
    /// Encrypts and sends one message of at most [`MAX_MESSAGE`] bytes (else `TooLarge`,
    /// nothing sent). Fails with `Io` or `Timeout` (write timeout) when the socket does; the
    /// writer is then `Broken`, since the peer may have got part of the message.
    pub fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        if self.broken {
            return Err(TransportError::Broken);
        }
        let wire = self.seal(msg)?;
        self.write_wire(&wire)
    }

    /// Sends only the length header of a message, declaring `declared` bytes (over
    /// [`MAX_MESSAGE`] if wished): what a hostile peer can send, for tests of the other side's
    /// limit. Not for use in the node.
    #[doc(hidden)]
    pub fn send_length_header(&mut self, declared: u32) -> Result<(), TransportError> {
        let mut wire = Vec::with_capacity(2 + HEADER_FRAME);
        self.seal_frame(&declared.to_be_bytes(), &mut wire)?;
        self.write_wire(&wire)
    }

    /// Closes both directions of the connection; a reader blocked in `recv` on another thread
    /// wakes with `Closed`. Errors (an already closed socket) are ignored.
    pub fn shutdown(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    /// Sets the socket's write timeout (`None`: block for ever). Fails only as the OS call
    /// fails.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> Result<(), TransportError> {
        Ok(self.stream.set_write_timeout(timeout)?)
    }

    fn write_wire(&mut self, wire: &[u8]) -> Result<(), TransportError> {
        (&self.stream).write_all(wire).map_err(|e| {
            self.broken = true;
            if is_timeout(&e) {
                TransportError::Timeout("the peer to take a message")
            } else {
                e.into()
            }
        })
    }

    /// The wire bytes of `msg`: the length frame, then the chunks.
    fn seal(&mut self, msg: &[u8]) -> Result<Vec<u8>, TransportError> {
        if msg.len() > MAX_MESSAGE {
            return Err(TransportError::TooLarge {
                len: msg.len() as u64,
                max: MAX_MESSAGE,
            });
        }
        let chunks = msg.len().div_ceil(CHUNK);
        let mut wire = Vec::with_capacity(2 + HEADER_FRAME + msg.len() + chunks * (2 + TAG));
        self.seal_frame(&(msg.len() as u32).to_be_bytes(), &mut wire)?;
        for chunk in msg.chunks(CHUNK) {
            self.seal_frame(chunk, &mut wire)?;
        }
        Ok(wire)
    }

    /// Appends one length-prefixed Noise message holding `plain` (at most [`CHUNK`] bytes).
    fn seal_frame(&mut self, plain: &[u8], wire: &mut Vec<u8>) -> Result<(), TransportError> {
        let n = plain.len() + TAG;
        let start = wire.len();
        wire.extend_from_slice(&(n as u16).to_be_bytes());
        wire.resize(start + 2 + n, 0);
        let nonce = self.nonce;
        self.nonce = nonce
            .checked_add(1)
            .ok_or_else(|| TransportError::Malformed("send nonce used up".into()))?;
        self.state
            .write_message(nonce, plain, &mut wire[start + 2..])
            .map_err(|e| TransportError::Malformed(format!("noise: {e}")))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::SecretKey;
    use std::net::TcpListener;
    use std::thread;

    const T: Duration = Duration::from_secs(10);

    fn identity(seed: u8) -> NodeIdentity {
        NodeIdentity::new(SecretKey::from_slice(&[seed; 32]).unwrap())
    }

    fn id_of(n: &NodeIdentity) -> NodeId {
        n.id().parse().unwrap()
    }

    /// A connected pair: (dialer side, listener side), handshakes run on both.
    fn pair() -> (Connection, Connection) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let server = thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            handshake(s, &identity(2), Role::Listener, T).unwrap()
        });
        let s = TcpStream::connect(addr).unwrap();
        let expected = id_of(&identity(2));
        let d = handshake(s, &identity(1), Role::Dialer { expected }, T).unwrap();
        (d, server.join().unwrap())
    }

    /// Bytes that differ at every position and between messages.
    fn pattern(len: usize, salt: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt) ^ (i >> 8) as u8)
            .collect()
    }

    #[test]
    fn the_handshake_proves_both_ids() {
        let (d, l) = pair();
        assert_eq!(d.remote_id, id_of(&identity(2)));
        assert_eq!(
            l.remote_id,
            id_of(&identity(1)),
            "the listener learns the id"
        );
        assert_eq!(d.local_addr, l.remote_addr);
        assert_eq!(d.remote_addr, l.local_addr);
        let shown = format!("{d:?}");
        assert!(!shown.contains("0202020202"), "no key in Debug: {shown}");
    }

    #[test]
    fn messages_of_every_size_cross_both_ways() {
        let (mut d, mut l) = pair();
        let sizes = [0, 1, CHUNK, CHUNK + 1, 1 << 20, MAX_MESSAGE];
        let to_listener = thread::spawn(move || {
            for (i, &n) in sizes.iter().enumerate() {
                d.writer.send(&pattern(n, i as u8)).unwrap();
            }
            for (i, &n) in sizes.iter().enumerate() {
                assert_eq!(d.reader.recv().unwrap(), pattern(n, 100 + i as u8), "{n}");
            }
            d
        });
        for (i, &n) in sizes.iter().enumerate() {
            assert_eq!(l.reader.recv().unwrap(), pattern(n, i as u8), "{n}");
        }
        for (i, &n) in sizes.iter().enumerate() {
            l.writer.send(&pattern(n, 100 + i as u8)).unwrap();
        }
        let d = to_listener.join().unwrap();
        d.writer.shutdown();
        assert!(matches!(l.reader.recv(), Err(TransportError::Closed)));
    }

    #[test]
    fn reader_and_writer_work_from_two_threads_at_once() {
        let (d, l) = pair();
        const N: usize = 300;
        // Each side sends N messages while it receives the other's N, on separate threads.
        let run = |c: Connection, salt: u8, peer_salt: u8| {
            let Connection {
                mut reader,
                mut writer,
                ..
            } = c;
            let sender = thread::spawn(move || {
                for i in 0..N {
                    writer.send(&pattern(i * 97, salt ^ i as u8)).unwrap();
                }
                writer
            });
            let receiver = thread::spawn(move || {
                for i in 0..N {
                    assert_eq!(reader.recv().unwrap(), pattern(i * 97, peer_salt ^ i as u8));
                }
            });
            (sender, receiver)
        };
        let (s1, r1) = run(d, 1, 2);
        let (s2, r2) = run(l, 2, 1);
        r1.join().unwrap();
        r2.join().unwrap();
        s1.join().unwrap();
        s2.join().unwrap();
    }

    #[test]
    fn a_dialer_reaching_another_node_gets_wrong_id() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let server = thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            handshake(s, &identity(2), Role::Listener, T)
        });
        let expected = id_of(&identity(3));
        let err = handshake(
            TcpStream::connect(addr).unwrap(),
            &identity(1),
            Role::Dialer { expected },
            T,
        )
        .unwrap_err();
        match &err {
            TransportError::WrongId { expected: e, got } => {
                assert_eq!(**e, expected);
                assert_eq!(**got, id_of(&identity(2)));
            }
            other => panic!("{other}"),
        }
        assert!(err.to_string().starts_with("wrong node id: dialed "));
        // The listener saw a correct handshake; the dialer then hangs up.
        let _ = server.join().unwrap();
    }

    /// A listener fed `bytes` (then a hang-up after `linger`) and its handshake's result.
    fn listener_fed(bytes: &'static [u8], linger: Duration) -> TransportError {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let client = thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(bytes).unwrap();
            thread::sleep(linger);
        });
        let (s, _) = l.accept().unwrap();
        let err = handshake(s, &identity(2), Role::Listener, Duration::from_secs(1)).unwrap_err();
        client.join().unwrap();
        err
    }

    #[test]
    fn garbage_instead_of_a_handshake_is_refused() {
        let err = listener_fed(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", Duration::ZERO);
        assert_eq!(
            err.to_string(),
            "handshake failed: handshake message 1 is 18245 bytes, want 32"
        );
        // A first message of the right size passes for a key (any 32 bytes do); the third
        // then fails to decrypt.
        static RIGHT_SIZES: [u8; 2 + 32 + 2 + 64] = {
            let mut b = [0x5a; 100];
            b[0] = 0;
            b[1] = 32;
            b[34] = 0;
            b[35] = 64;
            b
        };
        let err = listener_fed(&RIGHT_SIZES, Duration::from_millis(500));
        assert!(
            matches!(&err, TransportError::Handshake(m) if m.starts_with("noise: ")),
            "{err}"
        );
        let err = listener_fed(&[0, 32, 1, 2, 3], Duration::ZERO);
        assert!(matches!(err, TransportError::Truncated(_)), "{err}");
        assert_eq!(
            err.to_string(),
            "connection closed in the middle of the handshake"
        );
    }

    #[test]
    fn a_silent_peer_times_out() {
        // The peer hangs up only after the deadline: a timeout, not a hang-up, ends it.
        let err = listener_fed(b"", Duration::from_secs(3));
        assert!(matches!(err, TransportError::Timeout(_)), "{err}");
        assert_eq!(err.to_string(), "timed out waiting for the handshake");

        // After the handshake, a read timeout with nothing received leaves the reader usable.
        let (mut d, mut l) = pair();
        l.reader
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let err = l.reader.recv().unwrap_err();
        assert_eq!(err.to_string(), "timed out waiting for a message");
        d.writer.send(b"late").unwrap();
        assert_eq!(l.reader.recv().unwrap(), b"late");
    }

    #[test]
    fn an_oversize_length_is_refused_before_allocating() {
        let (mut d, mut l) = pair();
        // A header frame declaring 4 GiB - 1, sealed with the real keys.
        let mut wire = Vec::new();
        d.writer
            .seal_frame(&u32::MAX.to_be_bytes(), &mut wire)
            .unwrap();
        d.writer.write_wire(&wire).unwrap();
        let err = l.reader.recv().unwrap_err();
        assert!(
            matches!(err, TransportError::TooLarge { len, max } if len == u64::from(u32::MAX) && max == MAX_MESSAGE),
            "{err}"
        );
        assert!(matches!(l.reader.recv(), Err(TransportError::Broken)));
        // And nothing over the limit is sent.
        let err = d.writer.send(&vec![0u8; MAX_MESSAGE + 1]).unwrap_err();
        assert!(matches!(err, TransportError::TooLarge { .. }), "{err}");
    }

    #[test]
    fn a_flipped_ciphertext_byte_fails_to_decrypt() {
        let (mut d, mut l) = pair();
        let mut wire = d.writer.seal(b"hello, peer").unwrap();
        let last = wire.len() - 1;
        wire[last - TAG - 3] ^= 1; // inside the chunk's ciphertext
        d.writer.write_wire(&wire).unwrap();
        let err = l.reader.recv().unwrap_err();
        assert!(matches!(err, TransportError::Decrypt), "{err}");
        assert_eq!(err.to_string(), "decryption failed: bad authentication tag");
    }

    #[test]
    fn frames_of_the_wrong_size_and_cut_messages_are_refused() {
        let (mut d, mut l) = pair();
        d.writer.write_wire(&[0, 5, 1, 2, 3, 4, 5]).unwrap();
        let err = l.reader.recv().unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed frame: message header of 5 bytes, want 20"
        );

        let (mut d, mut l) = pair();
        let wire = d.writer.seal(&[7u8; 1000]).unwrap();
        d.writer.write_wire(&wire[..wire.len() - 10]).unwrap();
        d.writer.shutdown();
        let err = l.reader.recv().unwrap_err();
        assert!(matches!(err, TransportError::Truncated(_)), "{err}");
    }
}
