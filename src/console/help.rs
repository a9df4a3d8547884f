//! The console's `help`: the modules, a module's methods, or one method's parameters and
//! result, all drawn from the method table ([`crate::api::spec::methods`]), the one place
//! where methods are declared.

use crate::api::{spec, MethodSpec};

/// The text `help TOPIC` prints: without a topic the modules (those `offered` on this
/// endpoint marked), `help MODULE` its methods, `help MODULE.METHOD` or `help
/// MODULE_METHOD` one method. Fails with a message naming what exists when the topic is
/// neither.
pub fn help(topic: Option<&str>, offered: &[String]) -> Result<String, String> {
    let Some(topic) = topic.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(modules(offered));
    };
    if let Some(m) = method(topic) {
        return Ok(one_method(m));
    }
    let methods: Vec<&MethodSpec> = spec::methods()
        .iter()
        .filter(|m| m.module() == topic)
        .collect();
    if !methods.is_empty() {
        return Ok(module(topic, &methods));
    }
    let name = topic.replacen('.', "_", 1);
    let nearest = crate::rpc::server::nearest(&name, spec::methods().iter().map(|m| m.name))
        .map(|n| format!("; did you mean {}?", n.replacen('_', ".", 1)))
        .unwrap_or_default();
    Err(format!(
        "no module or method {topic}{nearest} (help lists the modules: {})",
        spec::modules().join(", ")
    ))
}

/// The method `topic` names, as `module.method` or `module_method`.
fn method(topic: &str) -> Option<&'static MethodSpec> {
    let (module, method) = topic.split_once(['.', '_'])?;
    spec::find(&format!("{module}_{method}"))
}

/// `help`: every module, how many methods it has, and whether this endpoint offers it.
fn modules(offered: &[String]) -> String {
    let mut out = String::from(
        "Modules (help MODULE lists its methods, help MODULE.METHOD tells one; Tab completes names):\n",
    );
    for module in spec::modules() {
        let count = spec::methods()
            .iter()
            .filter(|m| m.module() == module)
            .count();
        let here = if offered.iter().any(|o| o == module) {
            ""
        } else {
            ", not offered on this endpoint"
        };
        out.push_str(&format!("  {module:<9} {count} methods{here}\n"));
    }
    out.push_str("Leave with exit, quit or ctrl-d.");
    out
}

/// `module.method(a, b, [c])`: the call as the console takes it.
fn call_form(m: &MethodSpec) -> String {
    let (module, method) = m.name.split_once('_').unwrap_or((m.name, ""));
    let params: Vec<String> = m
        .params
        .iter()
        .map(|p| {
            if p.optional {
                format!("[{}]", p.name)
            } else {
                p.name.to_string()
            }
        })
        .collect();
    format!("{module}.{method}({})", params.join(", "))
}

/// `help MODULE`: each method's call form and summary.
fn module(name: &str, methods: &[&MethodSpec]) -> String {
    let mut out = format!("Methods of {name} (help {name}.METHOD tells more):\n");
    for m in methods {
        out.push_str(&format!("  {}\n      {}\n", call_form(m), m.summary));
    }
    out.pop();
    out
}

/// `help MODULE.METHOD`: the call form, the JSON-RPC name, the summary, each parameter and
/// what the method returns.
fn one_method(m: &MethodSpec) -> String {
    let mut out = format!(
        "{}   (JSON-RPC {})\n  {}\n",
        call_form(m),
        m.name,
        m.summary
    );
    out.push_str("Parameters:");
    if m.params.is_empty() {
        out.push_str(" none");
    }
    for p in m.params {
        out.push_str(&format!(
            "\n  {}: {}{}",
            p.name,
            p.kind.describe(),
            if p.optional { ", optional" } else { "" }
        ));
    }
    out.push_str(&format!("\nReturns: {}", m.returns));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_method_by_either_name() {
        let want = "admin.addPeer(url)   (JSON-RPC admin_addPeer)\n  Add a kni URL to the static peers, which the node keeps connected; false for this node's own URL\nParameters:\n  url: a string\nReturns: true once the URL is a static peer; false for this node's own URL";
        assert_eq!(help(Some("admin.addPeer"), &[]).unwrap(), want);
        assert_eq!(help(Some("admin_addPeer"), &[]).unwrap(), want);
        let export = help(Some("admin.exportChain"), &[]).unwrap();
        assert!(
            export.starts_with("admin.exportChain(file, [first], [last])"),
            "{export}"
        );
        assert!(
            export.contains("\n  first: any JSON value, optional"),
            "{export}"
        );
        let none = help(Some("rpc.modules"), &[]).unwrap();
        assert!(none.contains("\nParameters: none\n"), "{none}");
    }

    #[test]
    fn the_fee_payer_methods_take_a_passphrase_as_the_other_personal_ones() {
        for name in [
            "personal.sendTransactionAsFeePayer",
            "personal.signTransactionAsFeePayer",
        ] {
            let text = help(Some(name), &[]).unwrap();
            assert!(
                text.starts_with(&format!("{name}(args, passphrase)   (JSON-RPC ")),
                "{text}"
            );
            assert!(
                text.contains(
                    "\nParameters:\n  args: a JSON object\n  passphrase: a passphrase (a secret: \
null or left out, it is prompted for)\nReturns: "
                ),
                "{text}"
            );
        }
        for (name, returns) in [
            (
                "chain.sendTransactionAsFeePayer",
                "string: the transaction hash",
            ),
            (
                "chain.signTransactionAsFeePayer",
                "object: raw (0x-hex) and tx",
            ),
        ] {
            let text = help(Some(name), &[]).unwrap();
            assert!(
                text.starts_with(&format!("{name}(args)   (JSON-RPC ")),
                "{text}"
            );
            assert!(text.ends_with(&format!("\nReturns: {returns}")), "{text}");
        }
        for name in [
            "chain.getTransactionBySenderTxHash",
            "chain.getTransactionReceiptBySenderTxHash",
        ] {
            let text = help(Some(name), &[]).unwrap();
            assert!(
                text.starts_with(&format!("{name}(hash)   (JSON-RPC ")),
                "{text}"
            );
            assert!(
                text.contains("\nParameters:\n  hash: a 32-byte hash, 0x + 64 hex digits\n"),
                "{text}"
            );
        }
        let chain = help(Some("chain"), &[]).unwrap();
        assert!(
            chain.contains("\n  chain.getTransactionBySenderTxHash(hash)\n"),
            "{chain}"
        );
    }

    #[test]
    fn a_module_lists_every_method_of_the_table() {
        let text = help(Some("personal"), &[]).unwrap();
        assert!(text.starts_with("Methods of personal (help personal.METHOD tells more):\n"));
        let count = spec::methods()
            .iter()
            .filter(|m| m.module() == "personal")
            .count();
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("  personal."))
                .count(),
            count
        );
        assert!(text.contains("\n  personal.unlockAccount(address, passphrase, [duration])\n"));
    }

    #[test]
    fn modules_are_marked_by_what_the_endpoint_offers() {
        let text = help(None, &["admin".into(), "rpc".into()]).unwrap();
        assert!(text.contains("\n  admin     "), "{text}");
        assert!(!text
            .lines()
            .any(|l| l.starts_with("  admin ") && l.contains("not offered")));
        assert!(text
            .lines()
            .any(|l| l.starts_with("  chain ") && l.ends_with(", not offered on this endpoint")));
        assert_eq!(
            text.lines().filter(|l| l.starts_with("  ")).count(),
            spec::modules().len()
        );
    }

    #[test]
    fn unknown_topics_name_the_nearest() {
        assert_eq!(
            help(Some("admin.addPeeer"), &[]).unwrap_err(),
            format!(
                "no module or method admin.addPeeer; did you mean admin.addPeer? (help lists the modules: {})",
                spec::modules().join(", ")
            )
        );
        assert!(help(Some("zzz"), &[])
            .unwrap_err()
            .starts_with("no module or method zzz (help"));
    }
}
