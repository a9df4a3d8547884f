//! Durations as text, in one place: Go's `time.ParseDuration` syntax (`300ms`, `1m30s`,
//! `1.5h`), which the reference's RPC parameters use, and the form every duration option of
//! `chaind` takes, on the command line and in the configuration file alike: a plain number of
//! seconds (`30`, `0.5`) or Go's syntax (`90s`, `1m30s`, `1h`).

use std::time::Duration;

/// Go's `time.ParseDuration`: `0`, or one or more decimal numbers (a fraction allowed), each
/// with a unit `ns`, `us` (or `µs`), `ms`, `s`, `m` or `h`, optionally signed. A negative
/// duration is zero (a deadline that has passed already). Fails with Go's error texts
/// (`time: invalid duration "x"`, `time: missing unit in duration "10"`, `time: unknown
/// unit "x" in duration "10x"`), which the reference sends over RPC as they are.
pub fn parse_go(orig: &str) -> Result<Duration, String> {
    let quote = |s: &str| format!("{s:?}");
    let invalid = || format!("time: invalid duration {}", quote(orig));
    let mut s = orig;
    let mut negative = false;
    if let Some(rest) = s.strip_prefix('-') {
        negative = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut nanos: f64 = 0.0;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return Err(invalid());
        }
        let int_len = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let (int, rest) = s.split_at(int_len);
        s = rest;
        let mut frac = "";
        if let Some(rest) = s.strip_prefix('.') {
            let n = rest.bytes().take_while(u8::is_ascii_digit).count();
            frac = &rest[..n];
            s = &rest[n..];
            if int.is_empty() && frac.is_empty() {
                return Err(invalid());
            }
        }
        if int.len() > 19 {
            return Err(invalid());
        }
        let unit_len = s
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(s.len(), |(i, _)| i);
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", quote(orig)));
        }
        let (unit, rest) = s.split_at(unit_len);
        s = rest;
        let scale: f64 = match unit {
            "ns" => 1.0,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(unit),
                    quote(orig)
                ))
            }
        };
        let number: f64 = format!("{}.{}0", if int.is_empty() { "0" } else { int }, frac)
            .parse()
            .map_err(|_| invalid())?;
        nanos += number * scale;
        // Go's durations are signed 64-bit nanosecond counts.
        if nanos > i64::MAX as f64 {
            return Err(invalid());
        }
    }
    if negative {
        return Ok(Duration::ZERO);
    }
    Ok(Duration::from_nanos(nanos.round() as u64))
}

/// What every duration option says when its value is refused.
const OPTION_FORMS: &str =
    "use seconds (30, 0.5) or numbers with units ns, us, ms, s, m, h (90s, 1m30s, 1h)";

/// A duration option's value: a plain number of seconds (`30`, `0.5`), or Go's syntax
/// ([`parse_go`]: `90s`, `1m30s`, `1h30m`). Fails on anything else, a negative value
/// included, with `invalid duration "<value>": use seconds ... or numbers with units ...`.
pub fn parse_option(s: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration {s:?}: {OPTION_FORMS}");
    if s.starts_with('-') {
        return Err(bad());
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let secs: f64 = s.parse().map_err(|_| bad())?;
        if secs * 1e9 > i64::MAX as f64 {
            return Err(format!("invalid duration {s:?}: too large"));
        }
        return Ok(Duration::from_nanos((secs * 1e9).round() as u64));
    }
    parse_go(s).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_go("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_go("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_go("300ms"), Ok(Duration::from_millis(300)));
        assert_eq!(parse_go(".5s"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_go("10\u{b5}s"), Ok(Duration::from_micros(10)));
        assert_eq!(parse_go("0"), Ok(Duration::ZERO));
        assert_eq!(parse_go("-1s"), Ok(Duration::ZERO));
        assert_eq!(
            parse_go("abc").unwrap_err(),
            r#"time: invalid duration "abc""#
        );
        assert_eq!(parse_go("").unwrap_err(), r#"time: invalid duration """#);
        assert_eq!(
            parse_go("10").unwrap_err(),
            r#"time: missing unit in duration "10""#
        );
        assert_eq!(
            parse_go("10x").unwrap_err(),
            r#"time: unknown unit "x" in duration "10x""#
        );
        assert_eq!(
            parse_go(".s").unwrap_err(),
            r#"time: invalid duration ".s""#
        );
    }

    #[test]
    fn options_take_seconds_or_units() {
        for (text, want) in [
            ("0", Duration::ZERO),
            ("30", Duration::from_secs(30)),
            ("0.5", Duration::from_millis(500)),
            ("1s", Duration::from_secs(1)),
            ("90s", Duration::from_secs(90)),
            ("1m30s", Duration::from_secs(90)),
            ("1h", Duration::from_secs(3600)),
            ("1h30m", Duration::from_secs(5400)),
            ("1.5s", Duration::from_millis(1500)),
            ("250ms", Duration::from_millis(250)),
            ("3us", Duration::from_micros(3)),
        ] {
            assert_eq!(parse_option(text), Ok(want), "{text}");
        }
        for bad in [
            "", "-1", "-1h", "h", "1x", "1.2.3", "1.2.3s", "1h 30m", " 30", ".", ".s", "1e3s",
            "soon",
        ] {
            assert_eq!(
                parse_option(bad),
                Err(format!(
                    "invalid duration {bad:?}: use seconds (30, 0.5) or numbers with units ns, us, ms, s, m, h (90s, 1m30s, 1h)"
                )),
                "{bad:?}"
            );
        }
        for huge in ["9999999999h", "99999999999999999999"] {
            assert!(parse_option(huge).is_err(), "{huge}");
        }
    }
}
