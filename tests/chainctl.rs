//! `chainctl` against a real `chaind` on 127.0.0.1 with a temporary datadir: the per-method
//! commands over IPC, HTTP and WebSocket, `call`, `exec`, password files, exit codes and error
//! lines; and the client library (`rpc::client`) over the three transports.

mod common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chain_node::rpc::client::{Client, ClientError};
use common::{key_files, write_file, Node, Run};
use serde_json::{json, Value};

const METHOD_NOT_FOUND: &str =
    "error -32601: the method foo_bar does not exist/is not available\n  data: no such method\n";

/// Kills a `chainctl` that outlives its test.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `chainctl ARGS...` with no terminal (stdin from /dev/null).
fn ctl(args: &[&str]) -> Run {
    ctl_stdin(args, None)
}

/// Runs `chainctl ARGS...` with no terminal, `stdin` piped in when given (else /dev/null).
/// Fails the test, and kills chainctl, when it has not finished after a minute.
fn ctl_stdin(args: &[&str], stdin: Option<&str>) -> Run {
    ctl_in(None, args, stdin)
}

/// [`ctl_stdin`] in the working directory `dir` when given.
fn ctl_in(dir: Option<&Path>, args: &[&str], stdin: Option<&str>) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chainctl"));
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let mut guard = Guard(
        cmd.args(args)
            .env("HOME", std::env::temp_dir())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn chainctl"),
    );
    if let Some(input) = stdin {
        let mut pipe = guard.0.stdin.take().unwrap();
        let input = input.to_string();
        // On a thread: chainctl may exit without reading, or read only later.
        std::thread::spawn(move || {
            let _ = pipe.write_all(input.as_bytes());
        });
    }
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            String::from_utf8_lossy(&b).into_owned()
        })
    };
    let stdout = drain(Box::new(guard.0.stdout.take().unwrap()));
    let stderr = drain(Box::new(guard.0.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(st) = guard.0.try_wait().unwrap() {
            break st;
        }
        // Panicking drops the guard, which kills chainctl; the readers then see the end.
        assert!(
            Instant::now() < deadline,
            "chainctl {args:?} did not finish within a minute"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// The JSON on stdout of a successful run.
fn ok(args: &[&str]) -> Value {
    let r = ctl(args);
    assert_eq!(r.code, 0, "chainctl {args:?}: {r:?}");
    assert_eq!(r.stderr, "", "chainctl {args:?}");
    serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("chainctl {args:?}: stdout is not JSON ({e}): {r:?}"))
}

fn fails(args: &[&str], code: i32) -> Run {
    let r = ctl(args);
    assert_eq!(r.code, code, "chainctl {args:?}: {r:?}");
    assert_eq!(r.stdout, "", "chainctl {args:?}");
    r
}

/// `write_file` as a command-line argument.
fn write(dir: &Path, name: &str, text: &str) -> String {
    write_file(dir, name, text).to_str().unwrap().to_string()
}

/// A node with IPC (every module), HTTP offering personal and admin, and WebSocket.
fn node() -> Node {
    let mut args = common::http_args("admin,personal,rpc").to_vec();
    args.extend(common::ws_args("chain,net,personal,rpc"));
    Node::start(&args)
}

/// The number of key files in the keystore (none before the first key).
fn key_count(n: &Node) -> usize {
    key_files(&n.keystore()).len()
}

fn ipc(n: &Node) -> &str {
    n.ipc.as_ref().unwrap().to_str().unwrap()
}

/// A port nothing listens on: bound a moment ago, then closed.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn is_address(v: &Value) -> bool {
    v.as_str()
        .and_then(|s| s.strip_prefix("0x"))
        .is_some_and(|h| h.len() == 40 && h.chars().all(|c| c.is_ascii_hexdigit()))
}

#[test]
fn per_method_commands_over_ipc_http_and_ws() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let pw = write(dir.path(), "pw", "s3cret\n");
    let (ipc, http, ws) = (
        ipc(&n),
        n.http.as_deref().unwrap(),
        n.ws.as_deref().unwrap(),
    );

    let addr = ok(&[
        "--endpoint",
        ipc,
        "personal",
        "newAccount",
        "--password-file",
        &pw,
    ]);
    assert!(is_address(&addr), "{addr}");
    let r = ctl(&[
        "--endpoint",
        ipc,
        "personal",
        "newAccount",
        "--password-file",
        &pw,
    ]);
    // Strings are printed as JSON strings: quoted, one line.
    assert!(
        r.stdout.starts_with("\"0x") && r.stdout.ends_with("\"\n"),
        "{r:?}"
    );
    let second: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(key_count(&n), 2);

    let mut want = vec![addr.clone(), second.clone()];
    want.sort_by_key(|v| v.as_str().unwrap().to_string());
    for endpoint in [ipc, http, ws] {
        let mut got = ok(&["--endpoint", endpoint, "personal", "listAccounts"])
            .as_array()
            .unwrap()
            .clone();
        got.sort_by_key(|v| v.as_str().unwrap().to_string());
        assert_eq!(got, want, "over {endpoint}");
    }

    let all = ok(&["--endpoint", ipc, "rpc", "modules"]);
    for m in ["admin", "chain", "net", "personal", "rpc", "web3"] {
        assert_eq!(all[m], json!("1.0"), "{all}");
    }
    assert_eq!(
        ok(&["--endpoint", http, "rpc", "modules"]),
        json!({"admin": "1.0", "personal": "1.0", "rpc": "1.0"})
    );
    let over_ws = ok(&["--endpoint", ws, "rpc", "modules"]);
    assert_eq!(over_ws["personal"], json!("1.0"), "{over_ws}");
    assert!(over_ws.get("admin").is_none(), "{over_ws}");

    // --datadir names the IPC socket; the global options may follow the method.
    let datadir = n.datadir.path().to_str().unwrap();
    assert_eq!(ok(&["--datadir", datadir, "rpc", "modules"]), all);
    assert_eq!(ok(&["rpc", "modules", "--datadir", datadir]), all);

    // Arguments: a host string and an integer port.
    assert_eq!(ok(&["--endpoint", ipc, "admin", "stopHTTP"]), json!(true));
    assert_eq!(
        ok(&["--endpoint", ipc, "admin", "startHTTP", "127.0.0.1", "0"]),
        json!(true)
    );
    let r = fails(
        &["--endpoint", ipc, "admin", "startHTTP", "127.0.0.1", "0"],
        1,
    );
    assert!(
        r.stderr
            .starts_with("error -32000: HTTP RPC already running on 127.0.0.1:"),
        "{r:?}"
    );
}

#[test]
fn passphrases_from_files_never_from_argv() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    // Only the first line counts, without its line ending.
    let secret = "correct horse battery";
    let pw = write(dir.path(), "pw", &format!("{secret}\r\nsecond line\n"));
    let args = [
        "--endpoint",
        ipc(&n),
        "personal",
        "newAccount",
        "--password-file",
        &pw,
    ];
    assert!(args.iter().all(|a| !a.contains("horse")));
    let r = ctl(&args);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stdout.contains("horse") && !r.stderr.contains("horse"));
    let addr: Value = serde_json::from_str(&r.stdout).unwrap();
    let addr = addr.as_str().unwrap();

    // The key is encrypted with the file's first line: unlock with it, given in JSON on
    // standard input.
    let unlock = json!([addr, secret, 60]).to_string();
    let r = ctl_stdin(
        &["--endpoint", ipc(&n), "call", "personal_unlockAccount", "-"],
        Some(&unlock),
    );
    assert_eq!((r.code, r.stdout.trim()), (0, "true"), "{r:?}");
    assert_eq!(
        ok(&["--endpoint", ipc(&n), "personal", "lockAccount", addr]),
        json!(true)
    );

    // The password file stands in for the passphrase, before and after the arguments.
    let with_file = [
        "--endpoint",
        ipc(&n),
        "personal",
        "unlockAccount",
        addr,
        "--password-file",
        &pw,
        "600",
    ];
    assert_eq!(ok(&with_file), json!(true));
    let wallets = ok(&["--endpoint", ipc(&n), "personal", "listWallets"]);
    assert_eq!(wallets[0]["status"], json!("Unlocked"), "{wallets}");
    assert_eq!(
        ok(&["--endpoint", ipc(&n), "personal", "lockAccount", addr]),
        json!(true)
    );
    assert_eq!(
        ok(&[
            "--password-file",
            &pw,
            "--endpoint",
            ipc(&n),
            "personal",
            "unlockAccount",
            addr
        ]),
        json!(true)
    );
    // A null argument is read from the file too.
    assert_eq!(
        ok(&[
            "--endpoint",
            ipc(&n),
            "personal",
            "unlockAccount",
            addr,
            "null",
            "5",
            "--password-file",
            &pw
        ]),
        json!(true)
    );

    // Two passphrases, two files in order: replace the key of the account.
    let key = "aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e";
    let before = key_count(&n);
    let r = fails(
        &[
            "--endpoint",
            ipc(&n),
            "personal",
            "importRawKey",
            key,
            "--password-file",
            &pw,
        ],
        2,
    );
    assert_eq!(
        r.stderr,
        "error: personal_importRawKey: the keydata parameter is a secret, never taken from the \
command line; give - to read it from standard input\n"
    );
    assert_eq!(key_count(&n), before, "nothing was imported");
    let r = ctl_stdin(
        &[
            "--endpoint",
            ipc(&n),
            "personal",
            "importRawKey",
            "-",
            "--password-file",
            &pw,
        ],
        Some(key),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let imported: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        imported,
        json!("0x819104a190255e0cedbdd9d5f59a557633d79db1")
    );
    let new_pw = write(dir.path(), "new", "new one\n");
    let wallet_key = "f8cc7c3813ad23817466b1802ee805ee417001fcce9376ab8728c92dd8ea0a6b0x000x819104a190255e0cedbdd9d5f59a557633d79db1";
    let r = ctl_stdin(
        &[
            "--endpoint",
            ipc(&n),
            "personal",
            "replaceRawKey",
            "-",
            "--password-file",
            &pw,
            "--password-file",
            &new_pw,
        ],
        Some(wallet_key),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let replaced: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(replaced, imported);
    let r = fails(
        &[
            "--endpoint",
            ipc(&n),
            "personal",
            "unlockAccount",
            imported.as_str().unwrap(),
            "--password-file",
            &pw,
        ],
        1,
    );
    assert!(r.stderr.starts_with("error -32000: "), "{r:?}");
    assert_eq!(
        ok(&[
            "--endpoint",
            ipc(&n),
            "personal",
            "unlockAccount",
            imported.as_str().unwrap(),
            "--password-file",
            &new_pw
        ]),
        json!(true)
    );
}

#[test]
fn a_passphrase_without_file_or_terminal_is_bad_usage() {
    let n = node();
    let before = key_count(&n);
    for args in [
        vec!["personal", "newAccount"],
        vec![
            "personal",
            "unlockAccount",
            "0x819104a190255e0cedbdd9d5f59a557633d79db1",
        ],
        vec!["exec", "personal.newAccount()"],
        vec![
            "exec",
            "personal.unlockAccount('0x819104a190255e0cedbdd9d5f59a557633d79db1', null, 600)",
        ],
        vec!["call", "personal_newAccount"],
    ] {
        let mut all = vec!["--endpoint", ipc(&n)];
        all.extend(&args);
        let r = fails(&all, 2);
        assert!(
            r.stderr
                .contains("needs a passphrase: give --password-file FILE, or run on a terminal"),
            "{args:?}: {r:?}"
        );
    }
    // Nothing reached the node.
    assert_eq!(key_count(&n), before);

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none").to_str().unwrap().to_string();
    let r = fails(
        &[
            "--endpoint",
            ipc(&n),
            "personal",
            "newAccount",
            "--password-file",
            &missing,
        ],
        2,
    );
    assert!(
        r.stderr.starts_with("error: cannot read password file "),
        "{r:?}"
    );
    let pw = write(dir.path(), "pw", "x\n");
    let r = fails(
        &[
            "--endpoint",
            ipc(&n),
            "personal",
            "listAccounts",
            "--password-file",
            &pw,
        ],
        2,
    );
    assert!(r.stderr.contains("--password-file given, 0 used"), "{r:?}");
}

#[test]
fn call_takes_a_raw_name_and_a_json_array() {
    let n = node();
    let e = ipc(&n);
    assert_eq!(
        ok(&["--endpoint", e, "call", "rpc_modules"]),
        ok(&["--endpoint", e, "call", "rpc_modules", "[]"])
    );
    // Secrets in the JSON params on the command line are refused before anything is sent:
    // anyone can read them in /proc/<pid>/cmdline.
    let import = r#"["aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e", "pw"]"#;
    let r = fails(
        &["--endpoint", e, "call", "personal_importRawKey", import],
        2,
    );
    assert_eq!(
        r.stderr,
        "error: personal_importRawKey: the keydata parameter is a secret, never taken from the \
command line; give the parameters on standard input: chainctl call personal_importRawKey -\n"
    );
    assert_eq!(key_count(&n), 0, "nothing was imported");
    // The same params on standard input.
    let r = ctl_stdin(
        &["--endpoint", e, "call", "personal_importRawKey", "-"],
        Some(import),
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&r.stdout).unwrap(),
        json!("0x819104a190255e0cedbdd9d5f59a557633d79db1")
    );
    assert_eq!(key_count(&n), 1);
    assert_eq!(
        ok(&[
            "--endpoint",
            e,
            "call",
            "personal_ecRecover",
            r#"["0x68656c6c6f", "0x80f79479dab331d3d3ae067ff2db1fa8158d2b292b637c2075ceafd11deb739c42524edb57de715aa150146a79d1e3fbb37e377d7df52a84b7c871bb15e7bf431b"]"#
        ]),
        json!("0x819104a190255e0cedbdd9d5f59a557633d79db1")
    );

    // An unknown method is bad usage (cli.md), with the node's error line.
    let r = fails(&["--endpoint", e, "call", "foo_bar"], 2);
    assert_eq!(r.stderr, METHOD_NOT_FOUND);
    let r = fails(&["--endpoint", e, "call", "foo_bar", "[1]"], 2);
    assert_eq!(r.stderr, METHOD_NOT_FOUND);
    let unlock = r#"["0x819104a190255e0cedbdd9d5f59a557633d79db1", "wrong"]"#;
    let r = fails(
        &["--endpoint", e, "call", "personal_unlockAccount", unlock],
        2,
    );
    assert_eq!(
        r.stderr,
        "error: personal_unlockAccount: the passphrase parameter is a secret, never taken from \
the command line; give null there and --password-file FILE or the terminal prompt, or give the \
parameters on standard input: chainctl call personal_unlockAccount -\n"
    );
    // The right passphrase too: nothing is sent, the account stays locked.
    let right = r#"["0x819104a190255e0cedbdd9d5f59a557633d79db1", "pw", 60]"#;
    let r = fails(
        &["--endpoint", e, "call", "personal_unlockAccount", right],
        2,
    );
    assert!(
        r.stderr
            .starts_with("error: personal_unlockAccount: the passphrase parameter is a secret"),
        "{r:?}"
    );
    let wallets = ok(&["--endpoint", e, "personal", "listWallets"]);
    assert_eq!(wallets[0]["status"], json!("Locked"), "{wallets}");
    let r = ctl_stdin(
        &["--endpoint", e, "call", "personal_unlockAccount", "-"],
        Some(unlock),
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.starts_with("error -32000: ")
            && r.stderr.ends_with('\n')
            && r.stderr.lines().count() == 1,
        "{r:?}"
    );
    // null for the passphrase, filled from a password file.
    let dir = tempfile::tempdir().unwrap();
    let pw = write(dir.path(), "pw", "pw\n");
    assert_eq!(
        ok(&[
            "--endpoint",
            e,
            "call",
            "personal_unlockAccount",
            r#"["0x819104a190255e0cedbdd9d5f59a557633d79db1", null, 60]"#,
            "--password-file",
            &pw
        ]),
        json!(true)
    );

    for bad in ["[1,", "{\"a\": 1}", "600", "not json"] {
        let r = fails(&["--endpoint", e, "call", "rpc_modules", bad], 2);
        assert!(r.stderr.starts_with("error: JSON_PARAMS "), "{bad}: {r:?}");
    }
}

/// Key data left out or `null` is prompted for on a terminal; without one it is bad usage
/// (exit 2) that says how the command takes it, and nothing reaches the node.
#[test]
fn key_data_left_out_without_a_terminal_is_bad_usage() {
    let n = node();
    let e = ipc(&n);
    let dir = tempfile::tempdir().unwrap();
    let pw = write(dir.path(), "pw", "pw\n");
    let says = |how: &str| {
        format!(
            "error: personal_importRawKey needs key data: {how}, or run on a terminal to be \
prompted\n"
        )
    };
    let per_method = says("give - to read it from standard input");
    let call = says("give the params on standard input: chainctl call personal_importRawKey -");
    let exec = says("give the line on standard input: chainctl exec -");
    for (args, stdin, want) in [
        (vec!["personal", "importRawKey"], None, &per_method),
        (vec!["personal", "importRawKey", "null"], None, &per_method),
        (vec!["call", "personal_importRawKey", "[null]"], None, &call),
        (
            vec!["call", "personal_importRawKey", "[null, null]"],
            None,
            &call,
        ),
        (
            vec!["call", "personal_importRawKey", "-"],
            Some("[null]"),
            &says("write it in the params"),
        ),
        (vec!["exec", "personal.importRawKey()"], None, &exec),
        (vec!["exec", "personal.importRawKey(null)"], None, &exec),
        (
            vec!["exec", "-"],
            Some("personal.importRawKey(null)"),
            &says("write it in the line"),
        ),
    ] {
        let mut all = vec!["--endpoint", e, "--password-file", &pw];
        all.extend(&args);
        let r = ctl_stdin(&all, stdin);
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (2, "", want.as_str()),
            "{args:?}"
        );
    }
    assert_eq!(key_count(&n), 0, "nothing was imported");
}

/// `call METHOD -` and `exec -` read at most 1 MiB from standard input.
#[test]
fn standard_input_params_are_capped_at_one_mib() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("none.ipc");
    let nowhere = nowhere.to_str().unwrap();
    const MIB: usize = 1 << 20;
    let array = |len: usize| format!("[{}]", " ".repeat(len - 2));
    let line = |len: usize| format!("rpc.modules({})", " ".repeat(len - 13));
    // 1 MiB is read and parsed: the node is tried next.
    for (args, input) in [
        (["call", "rpc_modules", "-"].as_slice(), array(MIB)),
        (["exec", "-"].as_slice(), line(MIB)),
    ] {
        let mut all = vec!["--endpoint", nowhere];
        all.extend(args);
        let r = ctl_stdin(&all, Some(&input));
        assert_eq!(r.code, 1, "{args:?}: {r:?}");
        assert!(
            r.stderr.starts_with("error: cannot reach the node"),
            "{r:?}"
        );
    }
    for (args, input, what) in [
        (
            ["call", "rpc_modules", "-"].as_slice(),
            array(MIB + 1),
            "the params array",
        ),
        (["exec", "-"].as_slice(), line(MIB + 1), "the console line"),
    ] {
        let mut all = vec!["--endpoint", nowhere];
        all.extend(args);
        let r = ctl_stdin(&all, Some(&input));
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr),
            (
                2,
                "",
                format!("error: {what} on standard input is longer than 1048576 bytes\n")
            ),
            "{args:?}"
        );
    }
}

#[test]
fn exec_runs_one_console_line() {
    let n = node();
    let e = ipc(&n);
    let datadir = ok(&["--endpoint", e, "exec", "admin.datadir"]);
    assert_eq!(
        Path::new(datadir.as_str().unwrap()).canonicalize().unwrap(),
        n.datadir.path().canonicalize().unwrap()
    );
    assert_eq!(
        ok(&["--endpoint", e, "exec", "rpc.modules()"]),
        ok(&["--endpoint", e, "rpc", "modules"])
    );
    let import =
        "personal.importRawKey('aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e', \"p w\")";
    let r = fails(&["--endpoint", e, "exec", import], 2);
    assert_eq!(
        r.stderr,
        "error: personal_importRawKey: the keydata parameter is a secret, never taken from the \
command line; give the parameters on standard input: chainctl exec -\n"
    );
    assert_eq!(key_count(&n), 0, "nothing was imported");
    let r = ctl_stdin(&["--endpoint", e, "exec", "-"], Some(import));
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&r.stdout).unwrap(),
        json!("0x819104a190255e0cedbdd9d5f59a557633d79db1")
    );
    // The right passphrase written in the line: refused, nothing sent, the account locked.
    let right = "personal.unlockAccount('0x819104a190255e0cedbdd9d5f59a557633d79db1', 'p w', 60)";
    let r = fails(&["--endpoint", e, "exec", right], 2);
    assert_eq!(
        r.stderr,
        "error: personal_unlockAccount: the passphrase parameter is a secret, never taken from \
the command line; give null there and --password-file FILE or the terminal prompt, or give the \
parameters on standard input: chainctl exec -\n"
    );
    let wallets = ok(&["--endpoint", e, "personal", "listWallets"]);
    assert_eq!(wallets[0]["status"], json!("Locked"), "{wallets}");
    let dir = tempfile::tempdir().unwrap();
    let pw = write(dir.path(), "pw", "p w\n");
    let line = "personal.unlockAccount(\"0x819104a190255e0cedbdd9d5f59a557633d79db1\", null, 600)";
    assert_eq!(
        ok(&["--endpoint", e, "exec", line, "--password-file", &pw]),
        json!(true)
    );
    let wallets = ok(&["--endpoint", e, "exec", "personal.listWallets"]);
    assert_eq!(wallets[0]["status"], json!("Unlocked"), "{wallets}");

    let r = fails(&["--endpoint", e, "exec", "foo.bar()"], 2);
    assert_eq!(r.stderr, METHOD_NOT_FOUND);
    let wrong = "personal.unlockAccount('0x819104a190255e0cedbdd9d5f59a557633d79db1', 'wrong')";
    let r = fails(&["--endpoint", e, "exec", wrong], 2);
    assert!(
        r.stderr
            .starts_with("error: personal_unlockAccount: the passphrase parameter is a secret"),
        "{r:?}"
    );
    let r = ctl_stdin(&["--endpoint", e, "exec", "-"], Some(wrong));
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.starts_with("error -32000: "), "{r:?}");

    let r = fails(
        &["--endpoint", e, "exec", "personal.unlockAccount('0x1' 600)"],
        2,
    );
    assert_eq!(
        r.stderr,
        "error: syntax error at column 30: unexpected '6': expected ',' or ')'\n"
    );
    fails(&["--endpoint", e, "exec", "admin"], 2);
}

#[test]
fn exit_codes_of_bad_usage_and_unreachable_nodes() {
    let dir = tempfile::tempdir().unwrap();
    // Bad usage is found before any connection: no node is needed.
    for args in [
        vec!["nosuch", "method"],
        vec!["personal", "nosuch"],
        vec!["personal"],
        vec!["call"],
        vec![],
    ] {
        let r = ctl(&args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
    }
    let nowhere = dir.path().join("none.ipc");
    let nowhere = nowhere.to_str().unwrap();
    fails(&["--endpoint", nowhere, "call", "rpc_modules", "[1,"], 2);
    fails(&["--endpoint", nowhere, "exec", "rpc.modules("], 2);

    // Unreachable: where it tried is printed, exit 1.
    let port = closed_port();
    let http = format!("http://127.0.0.1:{port}");
    let ws = format!("ws://127.0.0.1:{port}");
    for endpoint in [http.as_str(), ws.as_str(), nowhere] {
        for args in [
            vec!["rpc", "modules"],
            vec!["exec", "rpc.modules()"],
            vec!["call", "rpc_modules"],
            vec!["attach"],
        ] {
            let mut all = vec!["--endpoint", endpoint];
            all.extend(&args);
            let r = fails(&all, 1);
            assert!(
                r.stderr
                    .starts_with(&format!("error: cannot reach the node at {endpoint}: ")),
                "{all:?}: {r:?}"
            );
        }
    }
    let r = fails(
        &["--datadir", dir.path().to_str().unwrap(), "rpc", "modules"],
        1,
    );
    assert!(
        r.stderr
            .contains(nowhere.replace("none.ipc", "chaind.ipc").as_str()),
        "{r:?}"
    );

    let r = ctl(&["--help"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("Exit codes: 0 success; 1"), "{r:?}");
    let r = ctl(&["personal", "unlockAccount", "--help"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains("JSON-RPC method personal_unlockAccount"),
        "{r:?}"
    );
    assert!(r.stdout.contains("duration: an integer, optional"), "{r:?}");
}

#[test]
fn client_library_over_the_three_transports() {
    let n = node();
    for endpoint in [
        ipc(&n),
        n.http.as_deref().unwrap(),
        n.ws.as_deref().unwrap(),
    ] {
        let mut c = Client::connect(endpoint).unwrap();
        assert_eq!(c.endpoint(), endpoint);
        // Several calls on one connection: ids move on, answers match.
        for _ in 0..3 {
            let m = c.call("rpc_modules", vec![]).unwrap();
            assert_eq!(m["rpc"], json!("1.0"), "{endpoint}: {m}");
            assert_eq!(
                c.call("personal_listAccounts", vec![]).unwrap(),
                json!([]),
                "{endpoint}"
            );
        }
        match c.call("foo_bar", vec![json!(1)]) {
            Err(ClientError::Rpc {
                code,
                message,
                data,
            }) => {
                assert_eq!(
                    (code, message.as_str(), data),
                    (
                        -32601,
                        "the method foo_bar does not exist/is not available",
                        Some(json!("no such method"))
                    )
                )
            }
            other => panic!("{endpoint}: {other:?}"),
        }
        // The connection still serves after an error.
        assert!(c.call("rpc_modules", vec![]).is_ok());
    }
    let mut http = Client::connect(n.http.as_deref().unwrap()).unwrap();
    assert!(matches!(
        http.next_notification(Duration::from_millis(10)),
        Err(ClientError::Protocol(_))
    ));
    for endpoint in [ipc(&n), n.ws.as_deref().unwrap()] {
        let mut c = Client::connect(endpoint).unwrap();
        let id = c.call("chain_subscribe", vec![json!("newHeads")]).unwrap();
        assert!(id.is_string(), "{endpoint}: {id}");
        // No block comes: the wait times out and leaves the connection usable.
        assert_eq!(
            c.next_notification(Duration::from_millis(50)).unwrap(),
            None,
            "{endpoint}"
        );
        assert_eq!(c.call("rpc_modules", vec![]).unwrap()["rpc"], json!("1.0"));
        assert_eq!(
            c.call("chain_unsubscribe", vec![id]).unwrap(),
            json!(true),
            "{endpoint}"
        );
    }
}

/// A call on a stream connection whose node went away names the endpoint.
#[test]
fn stream_clients_report_a_stopped_node() {
    let mut n = Node::start(&[]);
    let endpoint = ipc(&n).to_string();
    let mut c = Client::connect(&endpoint).unwrap();
    assert!(c.call("rpc_modules", vec![]).is_ok());
    assert!(
        n.terminate(20).is_some_and(|s| s.success()),
        "{}",
        n.log_text()
    );
    match c.call("rpc_modules", vec![]) {
        Err(ClientError::Unreachable { endpoint: e, .. }) => assert_eq!(e, endpoint),
        other => panic!("{other:?}"),
    }
}

/// `chainctl MODULE METHOD` fills the passphrase from a file or the prompt, never from an
/// argument: `unlockAccount ADDR 600` gives the duration, and without a terminal or a password
/// file it is bad usage.
#[test]
fn per_method_arguments_never_give_a_passphrase() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let pw = write(dir.path(), "pw", "600\n");
    let addr = ok(&[
        "--endpoint",
        ipc(&n),
        "personal",
        "newAccount",
        "--password-file",
        &pw,
    ]);
    let addr = addr.as_str().unwrap();
    // Were 600 taken as the passphrase, this unlock would succeed.
    let r = fails(
        &[
            "--endpoint",
            ipc(&n),
            "personal",
            "unlockAccount",
            addr,
            "600",
        ],
        2,
    );
    assert_eq!(
        r.stderr,
        "error: personal_unlockAccount needs a passphrase: give --password-file FILE, or run on \
a terminal to be prompted\n"
    );
    let wallets = ok(&["--endpoint", ipc(&n), "personal", "listWallets"]);
    assert_eq!(wallets[0]["status"], json!("Locked"), "{wallets}");
    assert_eq!(
        ok(&[
            "--endpoint",
            ipc(&n),
            "personal",
            "unlockAccount",
            addr,
            "600",
            "--password-file",
            &pw
        ]),
        json!(true)
    );
    // A passphrase typed among the arguments is refused before anything is sent, and not
    // repeated.
    for args in [
        vec!["personal", "unlockAccount", addr, "hunter2", "600"],
        vec!["personal", "newAccount", "hunter2"],
        vec!["personal", "sign", "0x68", addr, "hunter2"],
    ] {
        let mut all = vec!["--endpoint", ipc(&n)];
        all.extend(&args);
        let r = fails(&all, 2);
        assert!(
            r.stderr.starts_with("error: too many arguments: personal_")
                && r.stderr.contains("never taken from the command line")
                && !r.stderr.contains("hunter2"),
            "{args:?}: {r:?}"
        );
    }
    assert_eq!(key_count(&n), 1);
    // The help shows no passphrase among the arguments.
    let r = ctl(&["personal", "unlockAccount", "--help"]);
    assert!(
        r.stdout
            .contains("chainctl personal unlockAccount [OPTIONS] <address> [duration]"),
        "{r:?}"
    );
}

/// Key data given as `-` is read from standard input, without its line ending.
#[test]
fn key_data_from_standard_input() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let pw = write(dir.path(), "pw", "old\n");
    let key = "aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e";
    let args = [
        "--endpoint",
        ipc(&n),
        "personal",
        "importRawKey",
        "-",
        "--password-file",
        &pw,
    ];
    let r = ctl_stdin(&args, Some(&format!("{key}\n")));
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "\"0x819104a190255e0cedbdd9d5f59a557633d79db1\"\n", ""),
        "{r:?}"
    );
    // The same key again: the node refuses the duplicate, so the key did arrive whole.
    let r = ctl_stdin(&args, Some(&format!("{key}\r\n")));
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("account already exists"), "{r:?}");

    let new_pw = write(dir.path(), "new", "new\n");
    let wallet_key = "f8cc7c3813ad23817466b1802ee805ee417001fcce9376ab8728c92dd8ea0a6b0x000x819104a190255e0cedbdd9d5f59a557633d79db1";
    let r = ctl_stdin(
        &[
            "--endpoint",
            ipc(&n),
            "personal",
            "replaceRawKey",
            "-",
            "--password-file",
            &pw,
            "--password-file",
            &new_pw,
        ],
        Some(wallet_key),
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        ok(&[
            "--endpoint",
            ipc(&n),
            "personal",
            "unlockAccount",
            "0x819104a190255e0cedbdd9d5f59a557633d79db1",
            "--password-file",
            &new_pw
        ]),
        json!(true)
    );
    assert_eq!(key_count(&n), 1);
}

#[test]
fn malformed_endpoints_are_bad_usage() {
    for (endpoint, says) in [
        (
            "http://",
            "error: endpoint http:// names no host: did you mean http://HOST:PORT?",
        ),
        ("ws://", "error: endpoint ws:// names no host"),
        (
            "http://127.0.0.1:notaport",
            "error: endpoint http://127.0.0.1:notaport: the port must be a number from 1 to 65535",
        ),
        (
            "localhost:8551",
            "error: endpoint localhost:8551 is neither a URL nor an existing IPC socket path: \
did you mean http://localhost:8551?",
        ),
        (
            "wss://x",
            "error: endpoint wss://x: TLS WebSocket endpoints (wss://) are not supported",
        ),
        (
            "tcp://127.0.0.1:8551",
            "error: endpoint tcp://127.0.0.1:8551: unknown scheme tcp://, did you mean \
http://HOST:PORT?",
        ),
    ] {
        for args in [
            vec!["rpc", "modules"],
            vec!["call", "rpc_modules"],
            vec!["exec", "rpc.modules"],
            vec!["attach"],
        ] {
            let mut all = vec!["--endpoint", endpoint];
            all.extend(&args);
            let r = fails(&all, 2);
            assert!(
                r.stderr.starts_with(says) && r.stderr.lines().count() == 1,
                "{all:?}: {r:?}"
            );
        }
    }
}

/// Console lines that nest too deep, or hold a bare word, are syntax errors (exit 2) found
/// before connecting; the message does not repeat the word.
#[test]
fn exec_syntax_errors_are_bounded_and_discreet() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("none.ipc");
    let nowhere = nowhere.to_str().unwrap();
    let deep = format!("a.b({})", "[".repeat(20_000));
    let r = fails(&["--endpoint", nowhere, "exec", &deep], 2);
    assert_eq!(
        r.stderr,
        "error: syntax error at column 133: arrays and objects nest deeper than 128 levels\n"
    );
    let deep_objects = format!("a.b({})", "{x:".repeat(20_000));
    fails(&["--endpoint", nowhere, "exec", &deep_objects], 2);
    let deep_json = format!("[{}]", "[".repeat(20_000));
    fails(
        &["--endpoint", nowhere, "call", "rpc_modules", &deep_json],
        2,
    );

    for line in [
        "personal.unlockAccount('0x819104a190255e0cedbdd9d5f59a557633d79db1', hunter2, 600)",
        "hunter2",
        "personal.importRawKey(aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e)",
    ] {
        let r = fails(&["--endpoint", nowhere, "exec", line], 2);
        assert!(
            r.stderr.starts_with("error: syntax error at column ")
                && !r.stderr.contains("hunter2")
                && !r.stderr.contains("aebb68"),
            "{line}: {r:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The operator's day: cache saves, file paths, subscriptions, closed pipes, -32601 data

/// A `--dev` node with IPC and WebSocket (chain and rpc) and HTTP (admin, chain and rpc).
fn dev_node(extra: &[&str]) -> Node {
    let mut args = vec!["--dev"];
    args.extend(common::ws_args("chain,rpc"));
    args.extend(common::http_args("admin,chain,rpc"));
    args.extend(extra);
    Node::start(&args)
}

/// Sends a transfer of 1 from the developer account at `nonce` over IPC; its hash.
fn send_transfer(n: &Node, nonce: u64) -> Value {
    let raw = common::raw_transfer(
        &common::dev_key(n),
        nonce,
        chain_node::crypto::Address([0x35; 20]),
        1,
        common::PRICE,
        1000,
    );
    common::ok(
        common::Ipc::connect(n.ipc.as_ref().unwrap())
            .call("chain_sendRawTransaction", json!([raw])),
    )
}

#[test]
fn save_trie_node_cache_to_disk_waits_and_says_where_it_wrote() {
    let n = dev_node(&[]);
    let e = ipc(&n);
    let dd = n.datadir.path();
    let file = dd.join("fastcache").join("nodes.bin");
    let r = ctl(&[
        "--endpoint",
        e,
        "admin",
        "saveTrieNodeCacheToDisk",
        "--wait",
    ]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    let outcome: Value = serde_json::from_str(&r.stdout).unwrap();
    let bytes = std::fs::read(&file).unwrap();
    // The node count is the file's own (its header: magic, version, genesis, count).
    let count = u64::from_be_bytes(bytes[44..52].try_into().unwrap());
    assert_eq!(
        outcome,
        json!({"number": 1, "path": file, "nodes": count, "bytes": bytes.len(), "error": null})
    );
    // Without --wait: null at once, as the spec says.
    assert_eq!(
        ok(&["--endpoint", e, "admin", "saveTrieNodeCacheToDisk"]),
        Value::Null
    );

    // A save that fails in the background: `fastcache` is a file, which the save cannot
    // replace. Exit 1 with the node's reason; the file is left as it was, no temporary
    // directory behind.
    let status = || ok(&["--endpoint", e, "admin", "trieNodeCacheStatus"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while status()["saving"] != json!(false) {
        assert!(Instant::now() < deadline, "the second save did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::remove_dir_all(dd.join("fastcache")).unwrap();
    std::fs::write(dd.join("fastcache"), "not a directory").unwrap();
    let r = fails(
        &[
            "--endpoint",
            e,
            "admin",
            "saveTrieNodeCacheToDisk",
            "--wait",
        ],
        1,
    );
    assert_eq!(
        r.stderr,
        format!(
            "error: saving the trie node cache to {} failed: {}: Not a directory (os error 20)\n",
            file.display(),
            dd.join("fastcache").display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(dd.join("fastcache")).unwrap(),
        "not a directory"
    );
    let leftovers: Vec<String> = std::fs::read_dir(dd)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".fastcache"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let s = status();
    assert_eq!(
        (s["started"].clone(), s["last"]["number"].clone()),
        (json!(3), json!(3))
    );
}

#[test]
fn save_trie_node_cache_to_disk_fails_when_the_cache_is_disabled() {
    let n = dev_node(&["--state.trie-cache-limit", "0"]);
    let e = ipc(&n);
    for wait in [true, false] {
        let mut args = vec!["--endpoint", e, "admin", "saveTrieNodeCacheToDisk"];
        if wait {
            args.push("--wait");
        }
        let r = fails(&args, 1);
        assert_eq!(
            r.stderr,
            "error -32000: trie node cache is disabled, nothing to save to file\n"
        );
    }
    assert!(!n.datadir.path().join("fastcache").exists());
    assert_eq!(
        ok(&["--endpoint", e, "admin", "trieNodeCacheStatus"]),
        json!({"enabled": false, "saving": false, "started": 0, "last": null})
    );
}

/// A relative file name is the client's: chainctl makes it absolute (the node is on this
/// machine), in every form, and the node logs the absolute path it writes and reads.
#[test]
fn relative_export_and_import_paths_are_the_clients() {
    let n = dev_node(&[]);
    send_transfer(&n, 0);
    let work = tempfile::tempdir().unwrap();
    let here = std::fs::canonicalize(work.path()).unwrap();
    let http = n.http.clone().unwrap();
    for (endpoint, args) in [
        (ipc(&n), vec!["admin", "exportChain", "a.rlp"]),
        (http.as_str(), vec!["admin", "exportChain", "b.rlp.gz", "0"]),
        (ipc(&n), vec!["exec", "admin.exportChain('c.rlp')"]),
        (ipc(&n), vec!["call", "admin_exportChain", "[\"d.rlp\"]"]),
    ] {
        let mut all = vec!["--endpoint", endpoint];
        all.extend(&args);
        let r = ctl_in(Some(work.path()), &all, None);
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (0, "true\n", ""),
            "{args:?}"
        );
    }
    for name in ["a.rlp", "b.rlp.gz", "c.rlp", "d.rlp"] {
        let path = here.join(name);
        assert!(path.is_file(), "{name} is not in the client's directory");
        let line = format!("Exported blockchain file={}", path.display());
        common::wait_until(&line, &n, || n.log_text().contains(&line));
    }
    let r = ctl_in(
        Some(work.path()),
        &["--endpoint", ipc(&n), "admin", "importChain", "a.rlp"],
        None,
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "true\n", "")
    );
    let line = format!("Importing blockchain file={}", here.join("a.rlp").display());
    assert!(n.log_text().contains(&line), "{}", n.log_text());
    // A missing relative file is named absolute in the error.
    let r = ctl_in(
        Some(work.path()),
        &["--endpoint", ipc(&n), "admin", "importChain", "none.rlp"],
        None,
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains(&here.join("none.rlp").display().to_string()),
        "{r:?}"
    );
    // --help says what happens to a relative path.
    let help = ctl(&["admin", "exportChain", "--help"]);
    assert!(
        help.stdout.split_whitespace().collect::<Vec<_>>().join(" ").contains("relative path is made absolute against chainctl's working directory when the node runs on this machine"),
        "{}",
        help.stdout
    );
}

/// A `chainctl` left running, its output read line by line.
struct Streaming {
    guard: Guard,
    lines: std::sync::mpsc::Receiver<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Streaming {
    fn spawn(args: &[&str]) -> Streaming {
        let mut guard = Guard(
            Command::new(env!("CARGO_BIN_EXE_chainctl"))
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = guard.0.stdout.take().unwrap();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for l in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(l);
            }
        });
        let mut err = guard.0.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Streaming {
            guard,
            lines,
            stderr: Some(stderr),
        }
    }

    /// The next line printed, calling `poke` (which makes an event happen) every 300 ms
    /// until one comes: the subscription may not be in place yet at the first poke.
    fn next_line(&self, mut poke: impl FnMut()) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            poke();
            if let Ok(l) = self.lines.recv_timeout(Duration::from_millis(300)) {
                return l;
            }
            assert!(Instant::now() < deadline, "no notification within 30 s");
        }
    }

    /// Sends SIGINT and waits: the exit code and what was printed on stderr.
    fn interrupt(mut self) -> (i32, String) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.guard.0.id() as i32, libc::SIGINT) };
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(st) = self.guard.0.try_wait().unwrap() {
                break st;
            }
            assert!(Instant::now() < deadline, "chainctl did not end on SIGINT");
            std::thread::sleep(Duration::from_millis(10));
        };
        (
            status.code().unwrap_or(-1),
            self.stderr.take().unwrap().join().unwrap(),
        )
    }
}

#[test]
fn subscriptions_print_one_json_line_per_notification_until_ctrl_c() {
    let n = dev_node(&[]);
    let key = common::dev_key(&n);
    let ws = n.ws.clone().unwrap();
    let mut nonce = 0;
    for endpoint in [ipc(&n), ws.as_str()] {
        // newHeads, by the method's command.
        let s = Streaming::spawn(&["--endpoint", endpoint, "chain", "subscribe", "newHeads"]);
        let line = s.next_line(|| {
            send_transfer(&n, nonce);
            nonce += 1;
        });
        let head: Value = serde_json::from_str(&line).unwrap();
        assert!(
            head["number"].as_str().is_some_and(|q| q.starts_with("0x")),
            "{line}"
        );
        assert_eq!(head["hash"].as_str().map(str::len), Some(66), "{line}");
        assert!(
            !line.contains('\n') && line.starts_with('{'),
            "one line: {line}"
        );
        assert_eq!(s.interrupt(), (0, String::new()), "{endpoint}");

        // newPendingTransactions, through exec: the hash of a transaction sent.
        let s = Streaming::spawn(&[
            "--endpoint",
            endpoint,
            "exec",
            "chain.subscribe('newPendingTransactions')",
        ]);
        let mut sent = Vec::new();
        let line = s.next_line(|| {
            sent.push(send_transfer(&n, nonce));
            nonce += 1;
        });
        let hash: Value = serde_json::from_str(&line).unwrap();
        assert!(sent.contains(&hash), "{line} is not among {sent:?}");
        assert_eq!(s.interrupt(), (0, String::new()));

        // logs with filter criteria, through call: a log of a contract made meanwhile (its
        // creation code runs LOG0 with no data).
        let s = Streaming::spawn(&[
            "--endpoint",
            endpoint,
            "call",
            "chain_subscribe",
            r#"["logs", {"topics": []}]"#,
        ]);
        let mut made = Vec::new();
        let line = s.next_line(|| {
            let raw = common::contracts::raw_legacy(
                &key,
                nonce,
                None,
                0,
                hex::decode("60006000a000").unwrap(),
                200_000,
            );
            common::ok(
                common::Ipc::connect(n.ipc.as_ref().unwrap())
                    .call("chain_sendRawTransaction", json!([raw])),
            );
            made.push(json!(format!(
                "0x{}",
                hex::encode(common::contracts::create_address(&key.address(), nonce).0)
            )));
            nonce += 1;
        });
        let log: Value = serde_json::from_str(&line).unwrap();
        assert!(made.contains(&log["address"]), "{line}");
        assert_eq!(
            (log["topics"].clone(), log["data"].clone()),
            (json!([]), json!("0x"))
        );
        assert_eq!(s.interrupt(), (0, String::new()));
    }

    // HTTP carries no notifications: bad usage, said before anything is sent.
    let http = n.http.clone().unwrap();
    for args in [
        vec!["chain", "subscribe", "newHeads"],
        vec!["call", "chain_subscribe", "[\"newHeads\"]"],
    ] {
        let mut all = vec!["--endpoint", http.as_str()];
        all.extend(args);
        let r = fails(&all, 2);
        assert_eq!(
            r.stderr,
            "error: chain_subscribe needs a WebSocket or IPC endpoint (ws://HOST:PORT or the path of the IPC socket): HTTP cannot carry notifications\n"
        );
    }
    // A kind the node does not have: the node's -32601, exit 2.
    let r = fails(&["--endpoint", ipc(&n), "chain", "subscribe", "nothing"], 2);
    assert_eq!(
        r.stderr,
        "error -32601: no \"nothing\" subscription in chain namespace\n"
    );
}

/// `chainctl ... | head -1`: when the reader goes away chainctl ends quietly, exit 0, as
/// ripgrep does; no panic, no `Broken pipe` message.
#[test]
fn a_closed_output_ends_chainctl_quietly() {
    let n = dev_node(&[]);
    // A pipe whose reader is gone before chainctl writes.
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills two descriptors, owned from here on.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    use std::os::fd::FromRawFd;
    // SAFETY: both descriptors were just opened and are owned here.
    let (read_end, write_end) = unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    };
    drop(read_end);
    let out = Command::new(env!("CARGO_BIN_EXE_chainctl"))
        .args(["--endpoint", ipc(&n), "rpc", "modules"])
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).as_ref()
        ),
        (Some(0), "")
    );

    // A subscription through `| head -1`: the first head is printed, the next one finds
    // the pipe closed.
    let mut shell = Guard(
        Command::new("bash")
            .arg("-c")
            .arg(r#""$0" --endpoint "$1" chain subscribe newHeads | head -1; echo "status=${PIPESTATUS[0]}""#)
            .arg(env!("CARGO_BIN_EXE_chainctl"))
            .arg(ipc(&n))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut nonce = 0;
    while shell.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the pipeline did not end");
        send_transfer(&n, nonce);
        nonce += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut stdout = String::new();
    let mut stderr = String::new();
    shell
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    shell
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    let head: Value = serde_json::from_str(lines[0]).unwrap();
    assert!(head["hash"].is_string(), "{stdout}");
    assert_eq!((lines[1], stderr.as_str()), ("status=0", ""));
}

/// -32601's data is printed under the message: which case it is.
#[test]
fn method_not_found_data_is_printed_under_the_message() {
    let n = node();
    let ws = n.ws.clone().unwrap();
    for (endpoint, args, data) in [
        (
            ws.as_str(),
            vec!["admin", "datadir"],
            "module admin is not offered on this WebSocket endpoint; it is offered over HTTP and IPC",
        ),
        (
            ipc(&n),
            vec!["call", "admin_addPeeer", "[\"kni://x\"]"],
            "no such method; did you mean admin_addPeer?",
        ),
        (
            ipc(&n),
            vec!["call", "governance_vote"],
            "governance_vote is a method of the reference node that this node does not build",
        ),
        (
            ipc(&n),
            vec!["exec", "klay.blockNumber()"],
            "no such method: this node serves the reference's klay module as chain; did you mean chain_blockNumber?",
        ),
    ] {
        let mut all = vec!["--endpoint", endpoint];
        all.extend(&args);
        let r = fails(&all, 2);
        let method = match args[0] {
            "call" => args[1].to_string(),
            "exec" => "klay_blockNumber".to_string(),
            m => format!("{m}_{}", args[1]),
        };
        assert_eq!(
            r.stderr,
            format!("error -32601: the method {method} does not exist/is not available\n  data: {data}\n")
        );
    }
}

/// A parameter refused with Go's decoding text (the wire contract) is explained in plain words
/// on the next line, by the per-method command, `call` and the console alike; the node's text
/// is printed unchanged above it.
#[test]
fn go_decoding_errors_are_explained() {
    let n = node();
    let node_text = "error -32602: invalid argument 0: json: cannot unmarshal hex string without \
0x prefix into Go value of type common.Address";
    let meaning = "  meaning: parameter 1 takes an address: \"0x\" and 40 hex digits; the value \
given does not fit (it does not start with 0x)";
    for args in [
        vec!["--endpoint", ipc(&n), "personal", "lockAccount", "\"abcd\""],
        vec![
            "--endpoint",
            ipc(&n),
            "call",
            "personal_lockAccount",
            "[\"abcd\"]",
        ],
        vec![
            "--endpoint",
            ipc(&n),
            "exec",
            "personal.lockAccount(\"abcd\")",
        ],
    ] {
        let r = fails(&args, 1);
        assert_eq!(r.stderr, format!("{node_text}\n{meaning}\n"), "{args:?}");
    }
    // A struct member: its name and what it takes.
    let r = fails(
        &[
            "--endpoint",
            ipc(&n),
            "call",
            "chain_signTransaction",
            "[{\"from\": \"0x0000000000000000000000000000000000000001\", \"gas\": 21000}]",
        ],
        1,
    );
    assert!(
        r.stderr.ends_with(
            "\n  meaning: member \"gas\" of parameter 1 takes a quantity as a quoted 0x hex \
number, e.g. \"0x5208\"; the value given does not fit (it is not a quoted string)\n"
        ),
        "{r:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Fee delegation and local anchoring, as an operator runs them

/// One vector of caver-js (`tests/oracle/caver/vectors.json`), by name, and the keys' table.
fn caver_vector(name: &str) -> (Value, Value) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/oracle/caver/vectors.json"
    );
    let all: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = all["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no vector {name}"))
        .clone();
    (v, all["keys"].clone())
}

/// Polls `chain getTransactionReceiptBySenderTxHash HASH` (at most 10 s) until the
/// transaction is sealed; its receipt.
fn wait_sender_receipt(n: &Node, hash: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = ok(&[
            "--endpoint",
            ipc(n),
            "chain",
            "getTransactionReceiptBySenderTxHash",
            hash,
        ]);
        if !r.is_null() {
            return r;
        }
        assert!(Instant::now() < deadline, "{hash} was not sealed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The sender signs a fee-delegated value transfer (typeInt 9) with its key file, the fee
/// payer signs it beside the sender's signature with its own and sends it, and the sender finds
/// it by its sender transaction hash: the bytes and hashes are caver-js's (the transaction
/// "FeeDelegatedValueTransfer, chain 1000, nonce 0", keys K1 and K2), the fee payer pays
/// 31,000 gas (the reference's 21,000 and 10,000 for fee delegation), and the fee payer's
/// passphrase comes from its password file only, as every personal_ passphrase: left out
/// without a terminal, typed among the arguments or written in `call`'s params, nothing is sent.
#[test]
fn fee_delegation_through_the_method_commands_and_the_console() {
    let (v, keys) = caver_vector("FeeDelegatedValueTransfer, chain 1000, nonce 0");
    let sender = keys["K1"]["address"].as_str().unwrap();
    let payer = keys["K2"]["address"].as_str().unwrap();
    let n = dev_node(&[]);
    let e = ipc(&n);
    let dir = tempfile::tempdir().unwrap();
    let spw = write(dir.path(), "sender", "sender's secret\n");
    let ppw = write(dir.path(), "payer", "payer's secret\n");
    let empty = write(dir.path(), "empty", "\n");
    for (key, pw, addr) in [("K1", &spw, sender), ("K2", &ppw, payer)] {
        let data = keys[key]["privateKey"].as_str().unwrap();
        let r = ctl_stdin(
            &[
                "--endpoint",
                e,
                "personal",
                "importRawKey",
                "-",
                "--password-file",
                pw,
            ],
            Some(data.trim_start_matches("0x")),
        );
        assert_eq!(
            (r.code, r.stdout.trim()),
            (0, &*format!("\"{addr}\"")),
            "{r:?}"
        );
    }
    // The sender gets the 1 peb it sends, the fee payer 1 KLAY for the fee.
    let dev = common::dev_account(&n);
    for (to, value) in [(sender, "0x1"), (payer, "0xde0b6b3a7640000")] {
        let args = json!({"from": dev, "to": to, "value": value}).to_string();
        let h = ok(&[
            "--endpoint",
            e,
            "personal",
            "sendValueTransfer",
            &args,
            "--password-file",
            &empty,
        ]);
        common::wait_receipt(n.http.as_ref().unwrap(), &h);
    }

    // The sender signs as the sender only: its signature is caver's.
    let mut tx = v["inputs"].clone();
    tx["typeInt"] = json!(9);
    let signed = ok(&[
        "--endpoint",
        e,
        "personal",
        "signTransaction",
        &tx.to_string(),
        "--password-file",
        &spw,
    ]);
    let [sv, sr, ss] = [0, 1, 2].map(|i| v["signatures"][0][i].as_str().unwrap());
    assert_eq!(
        signed["tx"]["signatures"],
        json!([{"V": format!("{:#x}", u64::from_str_radix(&sv[2..], 16).unwrap()), "R": sr, "S": ss}]),
        "{signed}"
    );
    assert_eq!(signed["tx"]["feePayerSignatures"], json!([]), "{signed}");
    tx["signatures"] = signed["tx"]["signatures"].clone();
    let tx = tx.to_string();
    let pending = || ok(&["--endpoint", e, "txpool", "status"]);
    let idle = json!({"pending": "0x0", "queued": "0x0"});
    assert_eq!(pending(), idle);

    // The fee payer's passphrase: never an argument, never taken without a file or terminal.
    let r = fails(
        &[
            "--endpoint",
            e,
            "personal",
            "sendTransactionAsFeePayer",
            &tx,
        ],
        2,
    );
    assert_eq!(
        r.stderr,
        "error: personal_sendTransactionAsFeePayer needs a passphrase: give --password-file \
FILE, or run on a terminal to be prompted\n"
    );
    let r = fails(
        &[
            "--endpoint",
            e,
            "personal",
            "sendTransactionAsFeePayer",
            &tx,
            "payer's secret",
        ],
        2,
    );
    assert!(
        r.stderr.starts_with(
            "error: too many arguments: personal_sendTransactionAsFeePayer takes <args>;"
        ) && !r.stderr.contains("payer's secret"),
        "{r:?}"
    );
    let written = format!("[{tx}, \"payer's secret\"]");
    let r = fails(
        &[
            "--endpoint",
            e,
            "call",
            "personal_sendTransactionAsFeePayer",
            &written,
        ],
        2,
    );
    assert!(
        r.stderr.starts_with(
            "error: personal_sendTransactionAsFeePayer: the passphrase parameter is a secret"
        ) && !r.stderr.contains("payer's secret"),
        "{r:?}"
    );
    // The sender's passphrase does not open the fee payer's key.
    let r = fails(
        &[
            "--endpoint",
            e,
            "personal",
            "sendTransactionAsFeePayer",
            &tx,
            "--password-file",
            &spw,
        ],
        1,
    );
    assert_eq!(
        r.stderr,
        "error -32000: could not decrypt key with given passphrase\n"
    );
    assert_eq!(pending(), idle, "nothing was sent");

    // Signed by the fee payer through the console's line, without sending: caver's bytes.
    let line = format!("personal.signTransactionAsFeePayer({tx})");
    let both = ok(&["--endpoint", e, "exec", &line, "--password-file", &ppw]);
    assert_eq!(both["raw"], v["raw"], "{both}");
    assert_eq!(both["tx"]["hash"], v["txHash"], "{both}");
    assert_eq!(pending(), idle, "signing sends nothing");

    // Sent by the fee payer: caver's hash; the sender finds it by its sender hash once sealed.
    let h = ok(&[
        "--endpoint",
        e,
        "personal",
        "sendTransactionAsFeePayer",
        &tx,
        "--password-file",
        &ppw,
    ]);
    assert_eq!(h, v["txHash"]);
    let sender_hash = v["senderTxHash"].as_str().unwrap();
    let receipt = wait_sender_receipt(&n, sender_hash);
    assert_eq!(receipt["status"], json!("0x1"), "{receipt}");
    assert_eq!(receipt["transactionHash"], v["txHash"], "{receipt}");
    assert_eq!(receipt["gasUsed"], json!("0x7918"), "{receipt}");
    let found = ok(&[
        "--endpoint",
        e,
        "chain",
        "getTransactionBySenderTxHash",
        sender_hash,
    ]);
    assert_eq!(found["hash"], v["txHash"], "{found}");
    assert_eq!(found["senderTxHash"], json!(sender_hash), "{found}");
    assert_eq!(found["feePayer"], json!(payer), "{found}");
    assert_eq!(
        found["type"],
        json!("TxTypeFeeDelegatedValueTransfer"),
        "{found}"
    );
    // The sender paid its value only; the fee payer 31,000 gas at 25 ston.
    let balance = |a: &str| ok(&["--endpoint", e, "chain", "getBalance", a]);
    assert_eq!(balance(sender), json!("0x0"));
    assert_eq!(
        balance(payer),
        json!(format!("{:#x}", 10u128.pow(18) - 31_000 * common::PRICE))
    );
    // A hash nobody sent: null, not an error.
    let none = format!("0x{}", "ab".repeat(32));
    assert_eq!(
        ok(&[
            "--endpoint",
            e,
            "chain",
            "getTransactionBySenderTxHash",
            &none
        ]),
        Value::Null
    );
}

/// Chain-data anchoring (typeInt 72) sent by the node's own users is refused with the
/// reference's text, nothing entering the pool, unless `--txpool.allow-local-anchortx` is
/// given, here in a configuration file's ADDITIONAL; then it is sealed.
#[test]
fn local_anchoring_needs_the_pool_switch() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty", "\n");
    let anchor = |n: &Node| -> Run {
        let args = json!({"typeInt": 72, "from": common::dev_account(n), "input": "0x01"});
        let signed = ok(&[
            "--endpoint",
            ipc(n),
            "personal",
            "signTransaction",
            &args.to_string(),
            "--password-file",
            &empty,
        ]);
        let raw = signed["raw"].as_str().unwrap();
        ctl(&["--endpoint", ipc(n), "chain", "sendRawTransaction", raw])
    };
    let n = dev_node(&[]);
    let r = anchor(&n);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "error -32000: locally anchoring chaindata tx is not allowed in this node\n"
        ),
        "{r:?}"
    );
    assert_eq!(
        ok(&["--endpoint", ipc(&n), "txpool", "status"]),
        json!({"pending": "0x0", "queued": "0x0"})
    );

    let conf = write(
        dir.path(),
        "chaind.conf",
        "ADDITIONAL=\"--txpool.allow-local-anchortx\"\n",
    );
    let n = dev_node(&["--config", &conf]);
    let r = anchor(&n);
    assert_eq!(r.code, 0, "{r:?}");
    let h: Value = serde_json::from_str(&r.stdout).unwrap();
    let receipt = common::wait_receipt(n.http.as_ref().unwrap(), &h);
    assert_eq!(receipt["status"], json!("0x1"), "{receipt}");
    assert_eq!(receipt["typeInt"], json!(72), "{receipt}");
}
