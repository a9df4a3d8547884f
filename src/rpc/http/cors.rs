//! The request rules around the RPC handler: virtual hosts (the `Host` a request names must
//! be allowed), the CORS layer as the reference configures it, and the JSON media types.

use std::borrow::Cow;
use std::net::IpAddr;

use super::head::is_token;
use super::response::Header;

/// Media types a JSON-RPC request may declare.
const JSON_TYPES: [&str; 3] = [
    "application/json",
    "application/json-rpc",
    "application/jsonrequest",
];

/// The virtual-host rule: no host, an IP address, `*` or a listed name passes. The incoming
/// name is compared as sent (the list is lower-cased), as in the reference.
pub fn host_allowed(host: Option<&str>, vhosts: &[String]) -> bool {
    let Some(host) = host else { return true };
    let name = split_host(host);
    name.parse::<IpAddr>().is_ok() || vhosts.iter().any(|v| v == "*" || v == name)
}

/// The host part of `host[:port]` as Go's `net.SplitHostPort` finds it, or the whole value
/// where that fails (no port, too many colons).
fn split_host(h: &str) -> &str {
    if let Some(rest) = h.strip_prefix('[') {
        if let Some(end) = rest.find(']') {
            let port = &rest[end + 1..];
            if port.starts_with(':')
                && !port[1..].contains([':', '[', ']'])
                && !rest[..end].contains('[')
            {
                return &rest[..end];
            }
        }
        return h;
    }
    match h.rfind(':') {
        Some(i) if !h[..i].contains([':', '[', ']']) && !h[i + 1..].contains([']']) => &h[..i],
        _ => h,
    }
}

/// True when the media type of `value` is one of [`JSON_TYPES`] and its parameters are well
/// formed (`mime.ParseMediaType` in the reference).
pub fn json_content_type(value: &str) -> bool {
    let mut parts = value.split(';');
    let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    if !JSON_TYPES.contains(&media.as_str()) {
        return false;
    }
    let params: Vec<&str> = parts.map(str::trim).collect();
    let last = params.len().saturating_sub(1);
    params.iter().enumerate().all(|(i, p)| {
        // A trailing `;` is allowed.
        (p.is_empty() && i == last)
            || p.split_once('=')
                .is_some_and(|(k, v)| is_token(k.trim()) && !v.trim().is_empty())
    })
}

/// The CORS layer as the reference configures it: methods `POST` and `GET`, any request
/// header, max-age 600, no credentials.
pub struct Cors {
    any: bool,
    /// Lower-cased origins.
    exact: Vec<String>,
    /// `prefix*suffix` patterns.
    wildcards: Vec<(String, String)>,
}

const VARY_PREFLIGHT: [&str; 3] = [
    "Origin",
    "Access-Control-Request-Method",
    "Access-Control-Request-Headers",
];

impl Cors {
    /// `None` for an empty list: no CORS layer at all.
    pub fn new(origins: &[String]) -> Option<Cors> {
        if origins.is_empty() {
            return None;
        }
        let mut cors = Cors {
            any: false,
            exact: Vec::new(),
            wildcards: Vec::new(),
        };
        for o in origins {
            let o = o.to_lowercase();
            if o == "*" {
                cors.any = true;
            } else if let Some((p, s)) = o.split_once('*') {
                cors.wildcards.push((p.to_string(), s.to_string()));
            } else {
                cors.exact.push(o);
            }
        }
        Some(cors)
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let o = origin.to_lowercase();
        self.any
            || self.exact.contains(&o)
            || self
                .wildcards
                .iter()
                .any(|(p, s)| o.len() >= p.len() + s.len() && o.starts_with(p) && o.ends_with(s))
    }

    fn method_allowed(method: &str) -> bool {
        matches!(
            method.to_ascii_uppercase().as_str(),
            "OPTIONS" | "GET" | "POST"
        )
    }

    fn allow_origin(&self, origin: &str) -> Header {
        (
            "Access-Control-Allow-Origin",
            if self.any {
                "*".into()
            } else {
                origin.to_string().into()
            },
        )
    }

    /// The headers of a preflight answer.
    pub fn preflight(
        &self,
        origin: Option<&str>,
        method: &str,
        req_headers: Option<&str>,
    ) -> Vec<Header> {
        let mut h: Vec<Header> = VARY_PREFLIGHT
            .iter()
            .map(|v| ("Vary", Cow::Borrowed(*v)))
            .collect();
        let origin = origin.unwrap_or("");
        if origin.is_empty() || !self.origin_allowed(origin) || !Cors::method_allowed(method) {
            return h;
        }
        h.push(self.allow_origin(origin));
        h.push((
            "Access-Control-Allow-Methods",
            method.to_ascii_uppercase().into(),
        ));
        let names = parse_header_list(req_headers.unwrap_or(""));
        if !names.is_empty() {
            h.push(("Access-Control-Allow-Headers", names.join(", ").into()));
        }
        h.push(("Access-Control-Max-Age", "600".into()));
        h
    }

    /// The headers added to an actual (non-preflight) request's answer.
    pub fn actual(&self, method: &str, origin: Option<&str>) -> Vec<Header> {
        if method == "OPTIONS" {
            return Vec::new();
        }
        let mut h = vec![("Vary", "Origin".into())];
        let origin = origin.unwrap_or("");
        if !origin.is_empty() && self.origin_allowed(origin) && Cors::method_allowed(method) {
            h.push(self.allow_origin(origin));
        }
        h
    }
}

/// Splits `Access-Control-Request-Headers` into canonical names (`content-type` becomes
/// `Content-Type`), dropping other characters, as the reference's CORS library does.
fn parse_header_list(list: &str) -> Vec<String> {
    let bytes = list.as_bytes();
    let mut names = Vec::new();
    let mut name = Vec::new();
    let mut upper = true;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'a'..=b'z' => name.push(if upper { b.to_ascii_uppercase() } else { b }),
            b'A'..=b'Z' => name.push(if upper { b } else { b.to_ascii_lowercase() }),
            b'-' | b'_' | b'.' | b'0'..=b'9' => name.push(b),
            _ => {}
        }
        if b == b' ' || b == b',' || i == bytes.len() - 1 {
            if !name.is_empty() {
                names.push(String::from_utf8(std::mem::take(&mut name)).expect("ASCII only"));
                upper = true;
            }
        } else {
            upper = b == b'-';
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_parts_as_go_splits_them() {
        assert_eq!(split_host("localhost:1234"), "localhost");
        assert_eq!(split_host("localhost"), "localhost");
        assert_eq!(split_host("[::1]:80"), "::1");
        assert_eq!(split_host("[::1]"), "[::1]");
        assert_eq!(split_host("::1"), "::1");
        assert_eq!(split_host("a:b:c"), "a:b:c");
        let list = vec!["localhost".to_string()];
        assert!(host_allowed(None, &list));
        assert!(host_allowed(Some("::1"), &list));
        assert!(host_allowed(Some("[::1]:8551"), &list));
        assert!(!host_allowed(Some("[::1]"), &list));
        assert!(!host_allowed(Some("LOCALHOST"), &list));
    }

    #[test]
    fn media_types() {
        assert!(json_content_type("application/json"));
        assert!(json_content_type("Application/JSON; charset=UTF-8"));
        assert!(json_content_type("application/json;"));
        assert!(json_content_type("application/json-rpc"));
        assert!(json_content_type("application/jsonrequest"));
        assert!(!json_content_type(""));
        assert!(!json_content_type("text/plain"));
        assert!(!json_content_type("application/json; charset"));
        assert!(!json_content_type("application/json; charset="));
        assert!(!json_content_type("application/json;; a=b"));
    }

    #[test]
    fn header_lists_are_canonicalised() {
        assert_eq!(
            parse_header_list("content-type, x-FOO-bar,accept"),
            ["Content-Type", "X-Foo-Bar", "Accept"]
        );
        assert_eq!(parse_header_list(""), Vec::<String>::new());
        assert_eq!(parse_header_list("x_y"), ["X_y"]);
    }
}
