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

/// Formats one line; values with spaces or quotes are quoted.
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
        t.nanos / 1_000_000
    );
    for (k, v) in fields {
        if v.is_empty() || v.contains([' ', '"', '=']) {
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
}
