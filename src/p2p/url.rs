//! Node URLs: the node id type and the `kni://` parser of `admin_addPeer` / `admin_removePeer`.
//!
//! The grammar and every error text are the reference's (admin-and-rpc.md §3.3), so a user
//! sees the messages the reference node gives. Its parser is Go's `net/url` and
//! `encoding/hex`; the splitting here is written by hand for the one shape a kni URL has,
//! `scheme://[user@]host[:port][?query]`, and the hex errors are formatted as Go formats them.
//! Parsing never touches the network except to resolve a host name that is not an IP literal.

use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// A node id: the node key's uncompressed secp256k1 public key without its 0x04 prefix, X ‖ Y.
/// The curve is not checked (the reference does not check it either).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub [u8; 64]);

impl NodeId {
    /// 128 lower-case hex digits, no `0x`.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Parses 128 hex digits (any case), with an optional `0x` prefix. Fails with Go's
    /// `encoding/hex` errors, or `wrong length, want 128 hex chars` when the digits decode to
    /// other than 64 bytes.
    pub fn parse_hex(s: &str) -> Result<NodeId, HexError> {
        let s = s.strip_prefix("0x").unwrap_or(s);
        let bytes = go_hex_decode(s.as_bytes())?;
        let id: [u8; 64] = bytes.try_into().map_err(|_| HexError::WrongLength)?;
        Ok(NodeId(id))
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodeId({})", self.to_hex())
    }
}

impl std::str::FromStr for NodeId {
    type Err = HexError;

    /// As [`NodeId::parse_hex`].
    fn from_str(s: &str) -> Result<NodeId, HexError> {
        NodeId::parse_hex(s)
    }
}

/// Why a node id's hex was refused; the texts are Go's, as the reference shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    #[error("wrong length, want 128 hex chars")]
    WrongLength,
    #[error("encoding/hex: odd length hex string")]
    OddLength,
    /// The first byte that is not a hex digit, formatted as Go's `%#U` of that byte.
    #[error("encoding/hex: invalid byte: {}", go_rune_u(*.0))]
    InvalidByte(u8),
}

/// Go's `%#U` of a byte taken as a rune: `U+0067 'g'`, or `U+0007` when not printable.
fn go_rune_u(b: u8) -> String {
    // Go's strconv.IsPrint over U+0000..=U+00FF: graphic characters and the ASCII space;
    // not the C0/C1 controls, DEL, the no-break space or the soft hyphen.
    let printable = matches!(b, 0x20..=0x7e | 0xa1..=0xff) && b != 0xad;
    if printable {
        format!("U+{:04X} '{}'", b, char::from(b))
    } else {
        format!("U+{b:04X}")
    }
}

/// Go's `hex.DecodeString`: an invalid byte is reported before an odd length, as Go does.
fn go_hex_decode(s: &[u8]) -> Result<Vec<u8>, HexError> {
    if let Some(&bad) = s.iter().find(|b| !b.is_ascii_hexdigit()) {
        return Err(HexError::InvalidByte(bad));
    }
    if !s.len().is_multiple_of(2) {
        return Err(HexError::OddLength);
    }
    hex::decode(s).map_err(|_| HexError::OddLength)
}

/// The role a node announces in its URL's `ntype` query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NodeType {
    /// Consensus node.
    Cn,
    /// Proxy node.
    Pn,
    /// Endpoint node.
    En,
    /// Boot node.
    Bn,
    /// Absent or not one of the four.
    #[default]
    Unknown,
}

impl NodeType {
    /// `cn`, `pn`, `en`, `bn` or `unknown`, as `admin_peers` shows it.
    pub fn as_str(&self) -> &'static str {
        match self {
            NodeType::Cn => "cn",
            NodeType::Pn => "pn",
            NodeType::En => "en",
            NodeType::Bn => "bn",
            NodeType::Unknown => "unknown",
        }
    }

    /// The type an `ntype` value names; anything but the four names is `Unknown`, no error.
    pub fn from_query(s: &str) -> NodeType {
        match s {
            "cn" => NodeType::Cn,
            "pn" => NodeType::Pn,
            "en" => NodeType::En,
            "bn" => NodeType::Bn,
            _ => NodeType::Unknown,
        }
    }
}

/// A parsed node URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeUrl {
    pub id: NodeId,
    /// The TCP address; `None` for the id-only form.
    pub addr: Option<SocketAddr>,
    /// The UDP discovery port; `None` for the id-only form, else the TCP port unless the query
    /// names another.
    pub discport: Option<u16>,
    /// Extra TCP ports of a multi-channel node (`subport` query values), in URL order.
    pub subports: Vec<u16>,
    pub ntype: NodeType,
}

impl fmt::Display for NodeUrl {
    /// `kni://<id>`, then `@<ip:port>` (IPv6 bracketed) when the address is known, then the
    /// query: `subport` values that differ from the TCP port, `discport` (always with an
    /// address: the crate's URLs always carry it), `ntype` when known.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kni://{}", self.id)?;
        let mut query = Vec::new();
        if let Some(addr) = self.addr {
            write!(f, "@{addr}")?;
            for p in self.subports.iter().filter(|&&p| p != addr.port()) {
                query.push(format!("subport={p}"));
            }
            query.push(format!("discport={}", self.discport.unwrap_or(addr.port())));
        }
        if self.ntype != NodeType::Unknown {
            query.push(format!("ntype={}", self.ntype.as_str()));
        }
        if !query.is_empty() {
            write!(f, "?{}", query.join("&"))?;
        }
        Ok(())
    }
}

/// Why a kni URL was refused. `Display` gives the whole message `admin_addPeer` returns,
/// `invalid kni: ` included.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KniError {
    #[error("invalid kni: invalid URL scheme, want \"kni\"")]
    Scheme,
    #[error("invalid kni: does not contain node ID")]
    NoNodeId,
    #[error("invalid kni: invalid node ID ({0})")]
    NodeId(HexError),
    /// The host is neither an IP literal nor a name that resolves.
    #[error("invalid kni: lookup {0}: no such host")]
    Lookup(String),
    #[error("invalid kni: invalid port")]
    Port,
    #[error("invalid kni: invalid discport in query")]
    Discport,
    /// The string is not a URL of the shape `scheme://[user@]host[:port][?query]`.
    #[error("invalid kni: parse {url:?}: {why}")]
    Syntax { url: String, why: &'static str },
}

/// Parses a node URL with the reference's rules (admin-and-rpc.md §3.3): the id-only form
/// `[kni://|enode://]<128 hex>` (prefix in any case), or the full form
/// `kni://<id>@<host>:<port>[?discport=..&subport=..&ntype=..]` (`enode` also accepted).
/// A host that is not an IP literal is resolved with the system resolver and its first address
/// used. Fails with a [`KniError`] whose text is the reference's.
pub fn parse_kni(s: &str) -> Result<NodeUrl, KniError> {
    parse_kni_with(s, system_lookup)
}

/// [`parse_kni`] with `lookup` in place of the system resolver, for a host name that is not
/// an IP literal but could be a DNS name (the fuzz targets resolve without the network).
pub fn parse_kni_with(s: &str, lookup: fn(&str) -> Option<IpAddr>) -> Result<NodeUrl, KniError> {
    if let Some(hex) = id_only(s) {
        let id = NodeId::parse_hex(hex).map_err(KniError::NodeId)?;
        return Ok(NodeUrl {
            id,
            addr: None,
            discport: None,
            subports: Vec::new(),
            ntype: NodeType::Unknown,
        });
    }
    let syntax = |why| KniError::Syntax {
        url: s.to_string(),
        why,
    };
    // Go's url.Parse refuses control characters anywhere and spaces in the authority.
    if s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(syntax("invalid control character in URL"));
    }
    let (scheme, rest) = split_scheme(s).map_err(syntax)?;
    if scheme != "kni" && scheme != "enode" {
        return Err(KniError::Scheme);
    }
    // Without `//` there is no authority, so no user part (Go parses such a URL as opaque).
    let Some(rest) = rest.strip_prefix("//") else {
        return Err(KniError::NoNodeId);
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let after = &rest[authority_end..];
    let query = match after.find('?') {
        Some(q) => {
            let q = &after[q + 1..];
            &q[..q.find('#').unwrap_or(q.len())]
        }
        None => "",
    };
    // The user part ends at the last `@`, as in Go.
    let Some(at) = authority.rfind('@') else {
        return Err(KniError::NoNodeId);
    };
    let (user, hostport) = (&authority[..at], &authority[at + 1..]);
    let id = NodeId::parse_hex(user).map_err(KniError::NodeId)?;
    let (host, port) = split_host_port(hostport).map_err(syntax)?;

    let ip = resolve(host, lookup)?;
    // Digits only: Rust's parser would also take a leading `+`, which Go's does not.
    let port = parse_port(port).ok_or(KniError::Port)?;
    let addr = SocketAddr::new(ip, port);

    let mut discport = port;
    let mut subports = Vec::new();
    let mut ntype = NodeType::Unknown;
    let mut first_subport = None;
    let mut first_discport = None;
    let mut first_ntype = None;
    for (key, value) in query_pairs(query) {
        match key.as_str() {
            "discport" => {
                first_discport.get_or_insert(value);
            }
            "ntype" => {
                first_ntype.get_or_insert(value);
            }
            "subport" => {
                if first_subport.is_none() {
                    first_subport = Some(value.clone());
                }
                subports.push(value);
            }
            _ => {}
        }
    }
    if let Some(v) = first_discport.filter(|v| !v.is_empty()) {
        discport = parse_port(&v).ok_or(KniError::Discport)?;
    }
    // The reference looks at the subports only when the first value is non-empty, and skips
    // the values that are not ports.
    let subports = if first_subport.is_some_and(|v| !v.is_empty()) {
        subports.iter().filter_map(|v| parse_port(v)).collect()
    } else {
        Vec::new()
    };
    if let Some(v) = first_ntype {
        ntype = NodeType::from_query(&v);
    }
    Ok(NodeUrl {
        id,
        addr: Some(addr),
        discport: Some(discport),
        subports,
        ntype,
    })
}

/// The hex of the id-only form: the whole string is an optional `kni://` or `enode://` (any
/// case) and one or more hex digits.
fn id_only(s: &str) -> Option<&str> {
    let lower = s.to_ascii_lowercase();
    let skip = ["kni://", "enode://"]
        .iter()
        .find(|p| lower.starts_with(*p))
        .map_or(0, |p| p.len());
    let hex = &s[skip..];
    (!hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hex)
}

/// The scheme (lower-cased, as Go does) and what follows its colon.
fn split_scheme(s: &str) -> Result<(String, &str), &'static str> {
    let colon = match s.find(':') {
        Some(0) => return Err("missing protocol scheme"),
        Some(c) => c,
        // No scheme at all: the reference then fails on the (empty) scheme.
        None => return Ok((String::new(), s)),
    };
    let scheme = &s[..colon];
    let valid = scheme.as_bytes()[0].is_ascii_alphabetic()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !valid {
        // Go treats such a string as a scheme-less path, whose scheme is then wrong.
        return Ok((String::new(), s));
    }
    Ok((scheme.to_ascii_lowercase(), &s[colon + 1..]))
}

/// Host and port text of `host[:port]` or `[ipv6][:port]`; the port is `""` when absent.
fn split_host_port(hp: &str) -> Result<(&str, &str), &'static str> {
    if let Some(inner) = hp.strip_prefix('[') {
        let close = inner.find(']').ok_or("missing ']' in host")?;
        let host = &inner[..close];
        let tail = &inner[close + 1..];
        return match tail.strip_prefix(':') {
            Some(port) => Ok((host, port)),
            None if tail.is_empty() => Ok((host, "")),
            None => Err("invalid host: text after ']'"),
        };
    }
    if hp.contains(['[', ']']) {
        return Err("invalid host: unexpected bracket");
    }
    Ok(match hp.rfind(':') {
        Some(c) => (&hp[..c], &hp[c + 1..]),
        None => (hp, ""),
    })
}

/// A decimal u16 written with digits only.
fn parse_port(s: &str) -> Option<u16> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The first address the system resolver gives for `host`.
fn system_lookup(host: &str) -> Option<IpAddr> {
    (host, 0).to_socket_addrs().ok()?.next().map(|a| a.ip())
}

/// The IP of `host`: an IP literal as is (IPv4-mapped IPv6 made IPv4), else the first address
/// `lookup` gives for a name that could be a DNS name.
fn resolve(host: &str, lookup: fn(&str) -> Option<IpAddr>) -> Result<IpAddr, KniError> {
    let ip = match host.parse::<IpAddr>() {
        Ok(ip) => ip,
        Err(_) => {
            let not_found = || KniError::Lookup(host.to_string());
            // A name that cannot be a DNS name is refused without asking the resolver.
            let plausible = !host.is_empty()
                && host.len() <= 253
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
            if !plausible {
                return Err(not_found());
            }
            lookup(host).ok_or_else(not_found)?
        }
    };
    Ok(match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    })
}

/// The `key=value` pairs of a query, `+` and `%XX` decoded; a pair with a bad escape is
/// skipped, as Go's `Query()` skips it.
fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Some((unescape(k)?, unescape(v)?))
        })
        .collect()
}

/// Query unescaping: `+` is a space, `%XX` a byte; `None` for a bad escape or bad UTF-8.
fn unescape(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let pair = b.get(i + 1..i + 3)?;
                let mut byte = [0u8];
                hex::decode_to_slice(pair, &mut byte).ok()?;
                out.push(byte[0]);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    const ID: &str = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798\
                      483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8";

    fn err(s: &str) -> String {
        parse_kni(s).unwrap_err().to_string()
    }

    fn id() -> NodeId {
        NodeId::parse_hex(ID).unwrap()
    }

    #[test]
    fn the_id_only_forms() {
        for s in [
            ID.to_string(),
            format!("kni://{ID}"),
            format!("KNI://{ID}"),
            format!("enode://{ID}"),
            format!("EnOdE://{}", ID.to_uppercase()),
        ] {
            let u = parse_kni(&s).unwrap();
            assert_eq!(u.id, id(), "{s}");
            assert_eq!(u.addr, None);
            assert_eq!(u.discport, None);
            assert_eq!(u.ntype, NodeType::Unknown);
            assert_eq!(u.to_string(), format!("kni://{ID}"));
        }
        assert_eq!(
            err("kni://abcd"),
            "invalid kni: invalid node ID (wrong length, want 128 hex chars)"
        );
        assert_eq!(
            err(&ID[..127]),
            "invalid kni: invalid node ID (encoding/hex: odd length hex string)"
        );
    }

    #[test]
    fn the_full_forms() {
        let u = parse_kni(&format!("kni://{ID}@10.3.58.6:30303?discport=30301")).unwrap();
        assert_eq!(u.id, id());
        assert_eq!(u.addr, Some("10.3.58.6:30303".parse().unwrap()));
        assert_eq!(u.discport, Some(30301));
        assert_eq!(u.ntype, NodeType::Unknown);

        let u = parse_kni(&format!("enode://0x{ID}@[2001:db8::1]:32323")).unwrap();
        assert_eq!(u.id, id(), "0x is tolerated");
        assert_eq!(u.addr, Some("[2001:db8::1]:32323".parse().unwrap()));
        assert_eq!(u.discport, Some(32323), "discport defaults to the TCP port");

        let u = parse_kni(&format!("kni://{ID}@[::ffff:1.2.3.4]:1?discport=")).unwrap();
        assert_eq!(
            u.addr,
            Some(SocketAddr::new(Ipv4Addr::new(1, 2, 3, 4).into(), 1)),
            "IPv4-mapped IPv6 becomes IPv4"
        );
        assert_eq!(u.discport, Some(1), "an empty discport is the TCP port");

        let u = parse_kni(&format!("kni://{ID}@localhost:5")).unwrap();
        assert!(u.addr.unwrap().ip().is_loopback(), "{u:?}");
        assert_eq!(u.addr.unwrap().port(), 5);
    }

    #[test]
    fn the_query_parameters() {
        let base = format!("kni://{ID}@1.2.3.4:100");
        let u = parse_kni(&format!(
            "{base}?ntype=cn&subport=101&subport=x&subport=102"
        ))
        .unwrap();
        assert_eq!(u.ntype, NodeType::Cn);
        assert_eq!(u.subports, vec![101, 102], "invalid subports are skipped");
        assert_eq!(
            u.to_string(),
            format!("{base}?subport=101&subport=102&discport=100&ntype=cn")
        );
        let u = parse_kni(&format!("{base}?subport=&subport=101&ntype=xx")).unwrap();
        assert!(
            u.subports.is_empty(),
            "an empty first subport: none looked at"
        );
        assert_eq!(u.ntype, NodeType::Unknown);
        for (t, want) in [
            ("pn", NodeType::Pn),
            ("en", NodeType::En),
            ("bn", NodeType::Bn),
        ] {
            assert_eq!(parse_kni(&format!("{base}?ntype={t}")).unwrap().ntype, want);
            assert_eq!(want.as_str(), t);
        }
        assert_eq!(NodeType::Unknown.as_str(), "unknown");
        for bad in ["x", "65536", "-1", "+1"] {
            assert_eq!(
                err(&format!("{base}?discport={bad}")),
                "invalid kni: invalid discport in query"
            );
        }
    }

    #[test]
    fn every_reference_error_text() {
        assert_eq!(
            err(&format!("http://{ID}@1.2.3.4:1")),
            "invalid kni: invalid URL scheme, want \"kni\""
        );
        assert_eq!(
            err("1.2.3.4:30303"),
            "invalid kni: invalid URL scheme, want \"kni\""
        );
        assert_eq!(
            err("kni://1.2.3.4:30303"),
            "invalid kni: does not contain node ID"
        );
        assert_eq!(err("kni:abc"), "invalid kni: does not contain node ID");
        assert_eq!(
            err("kni://abcd@1.2.3.4:1"),
            "invalid kni: invalid node ID (wrong length, want 128 hex chars)"
        );
        let g = format!("g{}", &ID[1..]);
        assert_eq!(
            err(&format!("kni://{g}@1.2.3.4:1")),
            "invalid kni: invalid node ID (encoding/hex: invalid byte: U+0067 'g')"
        );
        assert_eq!(
            err("kni://abc@1.2.3.4:1"),
            "invalid kni: invalid node ID (encoding/hex: odd length hex string)"
        );
        assert_eq!(
            err("kni://ab:c@1.2.3.4:1"),
            "invalid kni: invalid node ID (encoding/hex: invalid byte: U+003A ':')"
        );
        // Checked without a resolver: these cannot be DNS names.
        assert_eq!(
            err(&format!("kni://{ID}@no!such:1")),
            "invalid kni: lookup no!such: no such host"
        );
        assert_eq!(
            err(&format!("kni://{ID}@:1")),
            "invalid kni: lookup : no such host"
        );
        for port in ["", ":", ":65536", ":x", ":-1", ":+1"] {
            assert_eq!(
                err(&format!("kni://{ID}@1.2.3.4{port}")),
                "invalid kni: invalid port",
                "{port}"
            );
        }
        assert_eq!(
            err(&format!("kni://{ID}@[::1")),
            format!("invalid kni: parse \"kni://{ID}@[::1\": missing ']' in host")
        );
        assert_eq!(
            err("://x"),
            "invalid kni: parse \"://x\": missing protocol scheme"
        );
        assert!(err("kni://a b\n").contains("invalid control character"));
    }

    #[test]
    fn go_formats_invalid_bytes() {
        assert_eq!(
            HexError::InvalidByte(b'g').to_string(),
            "encoding/hex: invalid byte: U+0067 'g'"
        );
        assert_eq!(
            HexError::InvalidByte(7).to_string(),
            "encoding/hex: invalid byte: U+0007"
        );
        assert_eq!(
            HexError::InvalidByte(0xe9).to_string(),
            "encoding/hex: invalid byte: U+00E9 'é'"
        );
        // An invalid byte is reported before an odd length, as Go does.
        assert_eq!(NodeId::parse_hex("abz"), Err(HexError::InvalidByte(b'z')));
        assert_eq!(NodeId::parse_hex("abc"), Err(HexError::OddLength));
    }

    #[test]
    fn a_node_identitys_url_round_trips() {
        use crate::crypto::SecretKey;
        use crate::p2p::identity::NodeIdentity;
        let me = NodeIdentity::new(SecretKey::from_slice(&[5u8; 32]).unwrap());
        for (addr, disc) in [
            (SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), 32323), 0),
            (SocketAddr::new(Ipv4Addr::new(127, 0, 0, 1).into(), 1), 2),
            ("[2001:db8::7]:32323".parse().unwrap(), 32323),
        ] {
            let s = me.kni(addr, disc);
            let u = parse_kni(&s).unwrap();
            assert_eq!(u.id.to_hex(), me.id());
            assert_eq!(u.addr, Some(addr));
            assert_eq!(u.discport, Some(disc));
            assert_eq!(u.to_string(), s, "printed as the identity prints it");
        }
        let id: NodeId = me.id().parse().unwrap();
        assert_eq!(id.to_string(), me.id());
        assert_eq!(format!("{id:?}"), format!("NodeId({})", me.id()));
    }
}
