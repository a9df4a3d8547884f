//! The node's log: one line per event on stderr, `LEVEL [MM-DD|HH:MM:SS.mmm] message key=value
//! ...`, filtered by `--verbosity` (0 silent, 1 error, 2 warn, 3 info, 4 debug, 5 trace).
//! Secrets are never passed here: callers log method names, addresses and paths only.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

static VERBOSITY: AtomicU8 = AtomicU8::new(3);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error = 1,
    Warn = 2,
    Info = 3,
    Debug = 4,
    Trace = 5,
}

impl Level {
    fn tag(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warn => "WARN ",
            Level::Info => "INFO ",
            Level::Debug => "DEBUG",
            Level::Trace => "TRACE",
        }
    }
}

/// Sets the verbosity (values above 5 count as 5).
pub fn set_verbosity(v: u8) {
    VERBOSITY.store(v.min(5), Ordering::SeqCst);
}

pub fn enabled(level: Level) -> bool {
    level as u8 <= VERBOSITY.load(Ordering::Relaxed)
}

/// True when `v` cannot be written bare after `key=`: it is empty, or holds whitespace, a
/// control character, `"` or `=`.
fn needs_quotes(v: &str) -> bool {
    v.is_empty()
        || v.chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '=')
}

/// Control characters and whitespace other than the plain space: what could break a line.
fn breaks_line(c: char) -> bool {
    c.is_control() || (c.is_whitespace() && c != ' ')
}

/// `s` with [`breaks_line`] characters escaped (`\n`, `\u{2028}`, ...), so that the message
/// itself cannot end the line either.
fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(breaks_line) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if breaks_line(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Formats one line. A value is quoted and escaped (Rust string syntax: `\n`, `\"`, `\\`,
/// `\u{..}`) when it is empty or holds whitespace, a control character, `"` or `=`, so that
/// no value (an error text, a path, a host given over RPC) can end the line and start a
/// forged one.
pub fn format_line(level: Level, msg: &str, fields: &[(&str, &str)]) -> String {
    let t = crate::clock::UtcTime::now();
    let mut line = format!(
        "{} [{:02}-{:02}|{:02}:{:02}:{:02}.{:03}] {msg}",
        level.tag(),
        t.month,
        t.day,
        t.hour,
        t.minute,
        t.second,
        t.nanos / 1_000_000,
        msg = escape_controls(msg)
    );
    for (k, v) in fields {
        if needs_quotes(v) {
            line.push_str(&format!(" {k}={v:?}"));
        } else {
            line.push_str(&format!(" {k}={v}"));
        }
    }
    line
}

pub fn log(level: Level, msg: &str, fields: &[(&str, &str)]) {
    if enabled(level) {
        let line = format_line(level, msg, fields);
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}

pub fn error(msg: &str, fields: &[(&str, &str)]) {
    log(Level::Error, msg, fields)
}
pub fn warn(msg: &str, fields: &[(&str, &str)]) {
    log(Level::Warn, msg, fields)
}
pub fn info(msg: &str, fields: &[(&str, &str)]) {
    log(Level::Info, msg, fields)
}
pub fn debug(msg: &str, fields: &[(&str, &str)]) {
    log(Level::Debug, msg, fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_greppable() {
        let l = format_line(
            Level::Info,
            "HTTP endpoint opened",
            &[("url", "http://127.0.0.1:1234")],
        );
        assert!(l.starts_with("INFO  ["), "{l}");
        assert!(
            l.ends_with("] HTTP endpoint opened url=http://127.0.0.1:1234"),
            "{l}"
        );
        let l = format_line(Level::Warn, "x", &[("path", "/a b")]);
        assert!(l.ends_with(r#" path="/a b""#), "{l}");
    }

    #[test]
    fn no_value_can_start_a_new_line() {
        let forged = "x\nINFO  [01-01|00:00:00.000] Node stopped";
        for v in [
            "x\nINFO  [01-01|00:00:00.000] Node stopped",
            "a\rb",
            "tab\there",
            "esc\u{1b}[31m",
            "nel\u{85}x",
            "ls\u{2028}x",
            "nbsp\u{a0}x",
        ] {
            let l = format_line(Level::Info, "m", &[("err", v)]);
            assert!(!l.contains(['\n', '\r', '\u{85}', '\u{2028}']), "{l:?}");
            assert!(
                !l.chars().any(|c| c.is_control()),
                "no control character is written raw: {l:?}"
            );
            assert!(
                l.ends_with(&format!(" err={v:?}")),
                "quoted and escaped: {l:?}"
            );
        }
        // The quoting is reversible: a quote inside a value is escaped.
        let l = format_line(Level::Info, "m", &[("v", r#"a"b"#)]);
        assert!(l.ends_with(r#" v="a\"b""#), "{l}");
        let l = format_line(Level::Info, "m", &[("v", "k=v")]);
        assert!(l.ends_with(r#" v="k=v""#), "{l}");
        // Plain values stay bare.
        let l = format_line(Level::Info, "m", &[("v", "/a/b:c")]);
        assert!(l.ends_with(" v=/a/b:c"), "{l}");
        // The message cannot break the line either.
        let l = format_line(Level::Info, forged, &[]);
        assert!(!l.contains('\n'), "{l:?}");
        assert!(
            l.ends_with(r"] x\nINFO  [01-01|00:00:00.000] Node stopped"),
            "{l:?}"
        );
        let l = format_line(Level::Info, "a\u{2028}b\tc d", &[]);
        assert!(l.ends_with(r"] a\u{2028}b\tc d"), "{l:?}");
    }
}
