//! The console line `module.method(args)`: a module and a method name joined by a dot, then
//! optionally an argument list of JavaScript-like literals. Without parentheses the call has no
//! arguments (`admin.datadir`). `module.method` names the JSON-RPC method `module_method`.
//!
//! Literals: strings in double or single quotes (escapes `\" \' \\ \/ \b \f \n \r \t \0 \xHH
//! \uXXXX`), numbers (integers, decimals, exponents, a leading `-`, hexadecimal `0x..`),
//! `true`, `false`, `null`, arrays and objects whose keys may be unquoted identifiers. Trailing
//! commas and a final `;` are accepted, as JavaScript does. Arrays and objects nest at most
//! [`MAX_DEPTH`] deep, as in a request to the node.
//!
//! Error messages never repeat a bare word or number of the line: one typed where a quoted
//! passphrase should go (or a passphrase typed at the console prompt) stays off the screen.

use serde_json::{Map, Number, Value};

use crate::rpc::server::MAX_DEPTH;

/// A parsed console line.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsoleCall {
    pub module: String,
    pub method: String,
    pub args: Vec<Value>,
}

impl ConsoleCall {
    /// The JSON-RPC method name, `module_method`.
    pub fn rpc_method(&self) -> String {
        format!("{}_{}", self.module, self.method)
    }
}

/// A syntax error: what was expected and the 1-based column (in characters) where it went
/// wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("syntax error at column {column}: {message}")]
pub struct SyntaxError {
    pub column: usize,
    pub message: String,
}

/// Parses one console line. Fails with the column of the first character that does not fit.
pub fn parse_line(line: &str) -> Result<ConsoleCall, SyntaxError> {
    let mut p = Parser {
        chars: line.chars().collect(),
        pos: 0,
        depth: 0,
    };
    p.skip_ws();
    let module = p.ident("a module name, e.g. admin")?;
    if p.peek() != Some('.') {
        return Err(p.error("expected '.' and a method name after the module name"));
    }
    p.pos += 1;
    let method = p.ident("a method name")?;
    p.skip_ws();
    let mut args = Vec::new();
    if p.peek() == Some('(') {
        p.pos += 1;
        args = p.list(')', "an argument or ')'")?;
    }
    p.skip_ws();
    if p.peek() == Some(';') {
        p.pos += 1;
        p.skip_ws();
    }
    if let Some(c) = p.peek() {
        let what = if args.is_empty() && !line.contains('(') {
            format!("unexpected '{c}': expected '(' or the end of the line")
        } else {
            format!("unexpected '{c}' after the call")
        };
        return Err(p.error(what));
    }
    Ok(ConsoleCall {
        module,
        method,
        args,
    })
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// How many arrays and objects enclose the current position.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn error(&self, message: impl Into<String>) -> SyntaxError {
        self.error_at(self.pos, message)
    }

    fn error_at(&self, pos: usize, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            column: pos + 1,
            message: message.into(),
        }
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn ident(&mut self, what: &str) -> Result<String, SyntaxError> {
        let start = self.pos;
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$' => {}
            Some(c) => return Err(self.error(format!("unexpected '{c}': expected {what}"))),
            None => return Err(self.error(format!("unexpected end of line: expected {what}"))),
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        {
            self.pos += 1;
        }
        Ok(self.chars[start..self.pos].iter().collect())
    }

    /// Comma-separated values up to `close`, which is consumed. A trailing comma is allowed.
    fn list(&mut self, close: char, what: &str) -> Result<Vec<Value>, SyntaxError> {
        let mut out = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(out);
            }
            if self.peek().is_none() {
                return Err(self.error(format!("unexpected end of line: expected {what}")));
            }
            out.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(c) if c == close => {}
                Some(c) => {
                    return Err(self.error(format!("unexpected '{c}': expected ',' or '{close}'")))
                }
                None => {
                    return Err(
                        self.error(format!("unexpected end of line: expected ',' or '{close}'"))
                    )
                }
            }
        }
    }

    fn value(&mut self) -> Result<Value, SyntaxError> {
        self.skip_ws();
        match self.peek() {
            None => Err(self.error("unexpected end of line: expected a value")),
            Some('"') | Some('\'') => self.string().map(Value::String),
            Some(open @ ('[' | '{')) => {
                // The recursion below is bounded by the nesting limit, not by the stack.
                if self.depth == MAX_DEPTH {
                    return Err(self.error(format!(
                        "arrays and objects nest deeper than {MAX_DEPTH} levels"
                    )));
                }
                self.depth += 1;
                self.pos += 1;
                let v = if open == '[' {
                    self.list(']', "a value or ']'").map(Value::Array)
                } else {
                    self.object()
                };
                self.depth -= 1;
                v
            }
            Some(c) if c == '-' || c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$' => {
                let start = self.pos;
                let word = self.ident("a value")?;
                match word.as_str() {
                    "true" => Ok(Value::Bool(true)),
                    "false" => Ok(Value::Bool(false)),
                    "null" | "undefined" => Ok(Value::Null),
                    // The word itself is not repeated: it may be a passphrase.
                    _ => Err(self.error_at(
                        start,
                        "a word without quotes: strings need quotes, e.g. \"text\" or 'text' \
(the bare words are true, false and null)",
                    )),
                }
            }
            Some(c) => Err(self.error(format!("unexpected '{c}': expected a value"))),
        }
    }

    fn object(&mut self) -> Result<Value, SyntaxError> {
        let mut map = Map::new();
        loop {
            self.skip_ws();
            let key = match self.peek() {
                Some('}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                Some('"') | Some('\'') => self.string()?,
                Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$' => {
                    self.ident("a key")?
                }
                Some(c) if c.is_ascii_digit() => {
                    let start = self.pos;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    self.chars[start..self.pos].iter().collect()
                }
                Some(c) => {
                    return Err(self.error(format!("unexpected '{c}': expected a key or '}}'")))
                }
                None => return Err(self.error("unexpected end of line: expected a key or '}'")),
            };
            self.skip_ws();
            if self.peek() != Some(':') {
                return Err(self.error("expected ':' after the key"));
            }
            self.pos += 1;
            let v = self.value()?;
            map.insert(key, v);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                Some(c) => {
                    return Err(self.error(format!("unexpected '{c}': expected ',' or '}}'")))
                }
                None => return Err(self.error("unexpected end of line: expected ',' or '}'")),
            }
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.pos;
        let quote = self.chars[self.pos];
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error_at(start, "string without its closing quote"));
            };
            self.pos += 1;
            if c == quote {
                return Ok(out);
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let esc_pos = self.pos - 1;
            let Some(e) = self.peek() else {
                return Err(self.error_at(start, "string without its closing quote"));
            };
            self.pos += 1;
            match e {
                '"' | '\'' | '\\' | '/' => out.push(e),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'v' => out.push('\u{b}'),
                '0' => out.push('\0'),
                'x' => {
                    let v = self.hex_digits(2, esc_pos)?;
                    out.push(char::from_u32(v).expect("two hex digits are a char"));
                }
                'u' => {
                    let hi = self.hex_digits(4, esc_pos)?;
                    let c = if (0xd800..0xdc00).contains(&hi) {
                        // A surrogate pair, as JSON writes characters beyond the BMP.
                        if self.chars.get(self.pos) != Some(&'\\')
                            || self.chars.get(self.pos + 1) != Some(&'u')
                        {
                            return Err(self.error_at(esc_pos, "unpaired surrogate in \\u escape"));
                        }
                        self.pos += 2;
                        let lo = self.hex_digits(4, esc_pos)?;
                        if !(0xdc00..0xe000).contains(&lo) {
                            return Err(self.error_at(esc_pos, "unpaired surrogate in \\u escape"));
                        }
                        char::from_u32(0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00))
                    } else {
                        char::from_u32(hi)
                    };
                    out.push(c.ok_or_else(|| {
                        self.error_at(esc_pos, "unpaired surrogate in \\u escape")
                    })?);
                }
                other => return Err(self.error_at(esc_pos, format!("unknown escape '\\{other}'"))),
            }
        }
    }

    fn hex_digits(&mut self, n: usize, esc_pos: usize) -> Result<u32, SyntaxError> {
        let mut v = 0u32;
        for _ in 0..n {
            match self.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    v = v * 16 + d;
                    self.pos += 1;
                }
                None => return Err(self.error_at(esc_pos, format!("escape needs {n} hex digits"))),
            }
        }
        Ok(v)
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        let negative = self.peek() == Some('-');
        if negative {
            self.pos += 1;
        }
        // Hexadecimal integers, as JavaScript writes them: 0x10 is 16.
        if self.peek() == Some('0') && matches!(self.chars.get(self.pos + 1), Some('x') | Some('X'))
        {
            self.pos += 2;
            let digits_start = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.pos += 1;
            }
            let digits: String = self.chars[digits_start..self.pos].iter().collect();
            let v = u64::from_str_radix(&digits, 16).map_err(|_| {
                self.error_at(start, "hexadecimal number without digits or beyond 64 bits")
            })?;
            return self.integer(negative, v, start);
        }
        while self.peek().is_some_and(|c| {
            c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
        }) {
            let c = self.peek().unwrap();
            // A sign belongs to the number only right after an exponent mark.
            if (c == '+' || c == '-') && !matches!(self.chars[self.pos - 1], 'e' | 'E') {
                break;
            }
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        let body = text.strip_prefix('-').unwrap_or(&text);
        let valid = {
            let (mantissa, exponent) = match body.find(['e', 'E']) {
                Some(i) => (&body[..i], Some(&body[i + 1..])),
                None => (body, None),
            };
            let (int, frac) = match mantissa.split_once('.') {
                Some((i, f)) => (i, Some(f)),
                None => (mantissa, None),
            };
            let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
            let int_ok = digits(int) || (int.is_empty() && frac.is_some_and(digits));
            let frac_ok = match frac {
                None => true,
                Some(f) => (f.is_empty() && !int.is_empty()) || digits(f),
            };
            let exp_ok = match exponent {
                None => true,
                Some(e) => digits(e.strip_prefix(['+', '-']).unwrap_or(e)),
            };
            int_ok && frac_ok && exp_ok
        };
        if !valid {
            return Err(self.error_at(start, "malformed number"));
        }
        if !body.contains(['.', 'e', 'E']) {
            return match body.parse::<u64>() {
                Ok(v) => self.integer(negative, v, start),
                Err(_) => Err(self.error_at(
                    start,
                    "integer beyond 64 bits: give it as a string, e.g. \"0x..\"",
                )),
            };
        }
        let f: f64 = text
            .parse()
            .map_err(|_| self.error_at(start, "malformed number"))?;
        Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| self.error_at(start, "number out of range"))
    }

    fn integer(&self, negative: bool, v: u64, start: usize) -> Result<Value, SyntaxError> {
        if !negative {
            return Ok(Value::from(v));
        }
        if v <= i64::MAX as u64 + 1 {
            Ok(Value::from((v as i128).wrapping_neg() as i64))
        } else {
            Err(self.error_at(start, "negative integer beyond 64 bits"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(line: &str) -> ConsoleCall {
        parse_line(line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn err(line: &str) -> SyntaxError {
        match parse_line(line) {
            Ok(c) => panic!("{line} parsed as {c:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn bare_method_has_no_args() {
        let c = call("admin.datadir");
        assert_eq!((c.module.as_str(), c.method.as_str()), ("admin", "datadir"));
        assert!(c.args.is_empty());
        assert_eq!(c.rpc_method(), "admin_datadir");
        assert_eq!(call("  rpc.modules  ").rpc_method(), "rpc_modules");
        assert_eq!(call("rpc.modules;").rpc_method(), "rpc_modules");
        assert_eq!(call("rpc.modules()").args, Vec::<Value>::new());
        assert_eq!(call("rpc.modules ( ) ;").args, Vec::<Value>::new());
    }

    #[test]
    fn the_spec_examples() {
        let c = call(r#"personal.unlockAccount("0xabc", null, 600)"#);
        assert_eq!(c.rpc_method(), "personal_unlockAccount");
        assert_eq!(c.args, vec![json!("0xabc"), Value::Null, json!(600)]);
        assert_eq!(call("personal.newAccount()").args, Vec::<Value>::new());
        assert_eq!(
            call("admin.startHTTP('127.0.0.1', 0, '', 'chain,net')").args,
            vec![json!("127.0.0.1"), json!(0), json!(""), json!("chain,net")]
        );
    }

    #[test]
    fn strings_and_escapes() {
        let c = call(
            r#"a.b("x\"y", 'it\'s', "\\ \/ \n\t\r\b\f", "\u00e9\x41", "\ud83d\ude00", 'say "hi"')"#,
        );
        assert_eq!(
            c.args,
            vec![
                json!("x\"y"),
                json!("it's"),
                json!("\\ / \n\t\r\u{8}\u{c}"),
                json!("éA"),
                json!("😀"),
                json!("say \"hi\"")
            ]
        );
        assert_eq!(call("a.b('')").args, vec![json!("")]);
        assert_eq!(call("a.b('äö ü')").args, vec![json!("äö ü")]);
    }

    #[test]
    fn numbers() {
        let c =
            call("a.b(0, 42, -7, 1.5, -0.25, 1e3, 2.5E-2, 0x10, -0x10, 18446744073709551615, .5)");
        assert_eq!(
            c.args,
            vec![
                json!(0),
                json!(42),
                json!(-7),
                json!(1.5),
                json!(-0.25),
                json!(1000.0),
                json!(0.025),
                json!(16),
                json!(-16),
                json!(u64::MAX),
                json!(0.5)
            ]
        );
        assert_eq!(
            call("a.b(-9223372036854775808)").args,
            vec![json!(i64::MIN)]
        );
        assert_eq!(err("a.b(18446744073709551616)").column, 5);
        assert_eq!(err("a.b(1.2.3)").column, 5);
        assert_eq!(err("a.b(-)").column, 5);
        assert_eq!(err("a.b(1e)").column, 5);
        assert_eq!(err("a.b(0x)").column, 5);
    }

    #[test]
    fn literals_arrays_objects() {
        let c = call(
            r#"a.b(true, false, null, [1, "two", [3]], {from: "0x1", 'to': "0x2", "value": 3, nested: {x: []},})"#,
        );
        assert_eq!(
            c.args,
            vec![
                json!(true),
                json!(false),
                Value::Null,
                json!([1, "two", [3]]),
                json!({"from": "0x1", "to": "0x2", "value": 3, "nested": {"x": []}})
            ]
        );
        assert_eq!(
            call("a.b([], {}, [1,],)").args,
            vec![json!([]), json!({}), json!([1])]
        );
        assert_eq!(call("a.b(undefined)").args, vec![Value::Null]);
    }

    #[test]
    fn errors_name_the_column() {
        let e = err("admin");
        assert_eq!(e.column, 6);
        assert!(e.message.contains("expected '.'"), "{e}");
        assert_eq!(err("admin.").column, 7);
        assert_eq!(err(".datadir").column, 1);
        assert_eq!(err("").column, 1);
        let e = err(r#"personal.unlockAccount("0xabc" 600)"#);
        assert_eq!(e.column, 32);
        assert!(e.message.contains("expected ',' or ')'"), "{e}");
        let e = err(r#"personal.newAccount("abc)"#);
        assert_eq!(e.column, 21);
        assert!(e.message.contains("closing quote"), "{e}");
        let e = err("personal.newAccount(abc)");
        assert_eq!(e.column, 21);
        assert!(e.message.contains("strings need quotes"), "{e}");
        assert_eq!(err("a.b(1").column, 6);
        assert_eq!(err("a.b(1) x").column, 8);
        assert_eq!(err("a.b x").column, 5);
        assert_eq!(err("a.b({x 1})").column, 8);
        assert_eq!(err(r#"a.b("\q")"#).column, 6);
        assert_eq!(err(r#"a.b("\u12")"#).column, 6);
        assert_eq!(err(r#"a.b("\ud83d")"#).column, 6);
        assert_eq!(err("a.b(,)").column, 5);
        assert_eq!(err("a.b.c").column, 4);
        // Columns count characters, not bytes.
        assert_eq!(err("a.b('é' x)").column, 9);
        assert_eq!(
            e.to_string(),
            "syntax error at column 21: a word without quotes: strings need quotes, e.g. \"text\" \
or 'text' (the bare words are true, false and null)"
        );
    }

    #[test]
    fn errors_never_repeat_bare_words_or_numbers() {
        for (line, column) in [
            ("personal.unlockAccount('0x1', hunter2)", 31),
            ("hunter2", 8),
            ("a.b({hunter2 1})", 14),
            ("a.b(1234.5678.9012)", 5),
            ("a.b(123456789012345678901234567890)", 5),
            ("a.b(-123456789012345678901234567890)", 5),
            ("a.b(1e99999)", 5),
        ] {
            let e = err(line);
            assert_eq!(e.column, column, "{line}: {e}");
            let text = e.to_string();
            for secret in ["hunter2", "5678", "6789", "9999"] {
                assert!(!text.contains(secret), "{line}: {text}");
            }
        }
    }

    #[test]
    fn nesting_is_limited() {
        let nested = |n: usize, open: &str, close: &str| {
            format!("a.b({}1{})", open.repeat(n), close.repeat(n))
        };
        assert_eq!(call(&nested(MAX_DEPTH, "[", "]")).args.len(), 1);
        assert_eq!(call(&nested(MAX_DEPTH, "{x:", "}")).args.len(), 1);
        let e = err(&nested(MAX_DEPTH + 1, "[", "]"));
        assert_eq!(e.column, 5 + MAX_DEPTH, "{e}");
        assert!(e.message.contains("nest deeper than 128 levels"), "{e}");
        let e = err(&nested(MAX_DEPTH + 1, "{x:", "}"));
        assert_eq!(e.column, 5 + 3 * MAX_DEPTH, "{e}");
        // Far deeper than any stack would take, without closing brackets.
        let e = err(&format!("a.b({})", "[".repeat(100_000)));
        assert_eq!(e.column, 5 + MAX_DEPTH);
        // Siblings do not add up.
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert_eq!(
            call(&format!("a.b({deep}, {deep}, [{deep}])")).args.len(),
            3
        );
    }
}
