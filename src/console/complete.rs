//! Tab completion of module names and `module.method` names, from the method table.

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

use crate::api::MethodSpec;

/// The start of the word before `pos` and the completions of that word: `module.` for a
/// partial module name, `module.method` once the word holds a dot. Words are made of ASCII
/// letters, digits, `_` and `.`.
pub fn candidates(methods: &[MethodSpec], line: &str, pos: usize) -> (usize, Vec<String>) {
    // `pos` is a byte offset; anything that is not a char boundary completes nothing.
    let Some(before) = line.get(..pos) else {
        return (pos, Vec::new());
    };
    // The word starts after the last character that cannot be part of it, which may take
    // more than one byte (an `é` inside a string argument).
    let start = before
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &before[start..];
    let mut out: Vec<String> = if word.contains('.') {
        methods
            .iter()
            .filter_map(|m| {
                let (module, method) = m.name.split_once('_')?;
                Some(format!("{module}.{method}"))
            })
            .filter(|name| name.starts_with(word))
            .collect()
    } else {
        methods
            .iter()
            .map(|m| format!("{}.", m.module()))
            .filter(|name| name.starts_with(word))
            .collect()
    };
    out.sort();
    out.dedup();
    (start, out)
}

/// The rustyline helper of the console: completion only, no hints, colours or validation.
pub struct ConsoleHelper {
    methods: &'static [MethodSpec],
}

impl ConsoleHelper {
    pub fn new(methods: &'static [MethodSpec]) -> ConsoleHelper {
        ConsoleHelper { methods }
    }
}

impl Completer for ConsoleHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, names) = candidates(self.methods, line, pos);
        let pairs = names
            .into_iter()
            .map(|n| Pair {
                display: n.clone(),
                replacement: n,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for ConsoleHelper {
    type Hint = String;
}

impl Highlighter for ConsoleHelper {}

impl Validator for ConsoleHelper {}

impl Helper for ConsoleHelper {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ParamKind, ParamSpec};

    const P: &[ParamSpec] = &[ParamSpec {
        name: "passphrase",
        kind: ParamKind::Passphrase,
        optional: false,
    }];
    const TABLE: &[MethodSpec] = &[
        MethodSpec {
            name: "admin_datadir",
            params: &[],
            summary: "",
            returns: "",
        },
        MethodSpec {
            name: "personal_newAccount",
            params: P,
            summary: "",
            returns: "",
        },
        MethodSpec {
            name: "personal_listAccounts",
            params: &[],
            summary: "",
            returns: "",
        },
        MethodSpec {
            name: "personal_listWallets",
            params: &[],
            summary: "",
            returns: "",
        },
        MethodSpec {
            name: "rpc_modules",
            params: &[],
            summary: "",
            returns: "",
        },
    ];

    #[test]
    fn modules_complete_with_a_dot() {
        assert_eq!(
            candidates(TABLE, "perso", 5),
            (0, vec!["personal.".to_string()])
        );
        assert_eq!(
            candidates(TABLE, "", 0).1,
            vec!["admin.", "personal.", "rpc."]
        );
        assert_eq!(candidates(TABLE, "x", 1).1, Vec::<String>::new());
    }

    #[test]
    fn methods_complete_after_the_dot() {
        assert_eq!(
            candidates(TABLE, "personal.l", 10),
            (
                0,
                vec![
                    "personal.listAccounts".to_string(),
                    "personal.listWallets".to_string()
                ]
            )
        );
        assert_eq!(candidates(TABLE, "personal.", 9).1.len(), 3);
        assert_eq!(candidates(TABLE, "admin.d", 7).1, vec!["admin.datadir"]);
    }

    #[test]
    fn the_word_before_the_cursor() {
        // Inside an argument list, and with text after the cursor.
        let line = "personal.unlockAccount(adm";
        assert_eq!(
            candidates(TABLE, line, line.len()),
            (23, vec!["admin.".to_string()])
        );
        assert_eq!(candidates(TABLE, "rp x", 2), (0, vec!["rpc.".to_string()]));
    }

    #[test]
    fn multibyte_characters_before_the_cursor() {
        // The cursor right after a two-byte character: the word is empty and starts there.
        let line = "personal.sign(\"\u{e9}";
        assert_eq!(
            candidates(TABLE, line, line.len()),
            (line.len(), candidates(TABLE, "", 0).1)
        );
        let line = "personal.sign(\"\u{e9}\u{1f600}ad";
        assert_eq!(
            candidates(TABLE, line, line.len()),
            (line.len() - 2, vec!["admin.".to_string()])
        );
        let line = "\u{e9}rp";
        assert_eq!(
            candidates(TABLE, line, line.len()),
            (2, vec!["rpc.".to_string()])
        );
        // A position inside a character completes nothing instead of panicking.
        assert_eq!(candidates(TABLE, "\u{e9}", 1), (1, vec![]));
    }

    #[test]
    fn the_real_table_completes_every_module() {
        for module in crate::api::spec::modules() {
            let (_, c) = candidates(crate::api::spec::methods(), module, module.len());
            assert!(c.contains(&format!("{module}.")), "{module}: {c:?}");
        }
        let (_, c) = candidates(crate::api::spec::methods(), "personal.unl", 12);
        assert_eq!(c, vec!["personal.unlockAccount"]);
    }

    #[test]
    fn the_fee_delegation_methods_complete() {
        let complete = |word: &str| candidates(crate::api::spec::methods(), word, word.len()).1;
        assert_eq!(
            complete("personal.signTransaction"),
            [
                "personal.signTransaction",
                "personal.signTransactionAsFeePayer"
            ]
        );
        assert_eq!(
            complete("personal.sendTransactionA"),
            ["personal.sendTransactionAsFeePayer"]
        );
        assert_eq!(
            complete("chain.sendTransactionA"),
            ["chain.sendTransactionAsFeePayer"]
        );
        assert_eq!(
            complete("chain.signTransactionA"),
            ["chain.signTransactionAsFeePayer"]
        );
        assert_eq!(
            complete("chain.getTransactionBySe"),
            ["chain.getTransactionBySenderTxHash"]
        );
        assert_eq!(
            complete("chain.getTransactionReceiptB"),
            ["chain.getTransactionReceiptBySenderTxHash"]
        );
    }
}
