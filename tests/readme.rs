//! README.md as an operator meets it: its commands run as written, its expected outputs are
//! true, and it cites only what a reader can open.
//!
//! [`every_sh_block_runs_in_order`] pastes README into one bash session, as a person would:
//! every block fenced ```` ```sh ````, in README's order, in the same shell, so that variables,
//! background jobs and the current directory carry from block to block. Each block starts with
//! `set -euo pipefail`, so a failing command, an unset variable or a failing stage of a
//! pipeline stops the session; the failure names the block (its number among the `sh` blocks
//! and the README line of its first line), the README line of the command and the session's
//! last output. The session script has README's line numbers (the lines outside the blocks
//! hold the harness's own commands or nothing), so `$LINENO` is a README line number.
//!
//! Conventions of README that this test reads:
//! - ```` ```sh ```` blocks are commands, run. ```` ```sh no-test ```` blocks are commands
//!   this test does not run; today: the two commands of "## Two commands" (the first runs
//!   until Ctrl-C on the fixed ports 8551 and 32323, so
//!   [`two_commands_first_one_runs_as_readme_says`] runs it with `--rpcport 0 --port 0`
//!   added and checks what that section says of it; the second, `cargo test`, is this test
//!   suite) and the chainctl examples that need a terminal (a passphrase or key-data prompt,
//!   the interactive console) or wait for an event that never comes here (a log
//!   subscription). Any other fence (```` ```text ````, ```` ```console ````, a bare
//!   ```` ``` ````) is output or a listing, never run. Another word after `sh` fails the
//!   test, so a misspelt marker is not a silently skipped block.
//! - A comment `# -> VALUE`, on the line after a command or at the end of its last line, says
//!   that the command prints VALUE: the test captures that command's standard output and
//!   compares it with VALUE (trailing newlines dropped; `...` in VALUE stands for any text).
//!   Other comments (`# "0x1" once sealed`, `#   INFO ...`) are not checked.
//!
//! The environment is an operator's on a fresh account, in temporary directories: `HOME`,
//! `XDG_*` and `TMPDIR` point into a temporary directory (so the default datadir
//! `~/.local/share/chaind` and every `mktemp` are temporary), the rest of the environment is
//! cleared but `PATH`, which starts with the directory of the binaries cargo built (so
//! `chaind`, `chainctl` and `chain-keytool` are those). The session runs in a temporary
//! directory that looks like the checkout: each top-level entry of the repository is a
//! symbolic link to it, and `target/release` links to the directory of the built binaries
//! (README's `export PATH="$PWD/target/release:$PATH"` then names them too, whatever profile
//! the tests were built with). Rewritten before the run: `cargo build` (the binaries are
//! built: it becomes `: cargo build`) and `cargo run --release --bin X --` (becomes `X`);
//! any other cargo command in a run block fails the test (it would build or download).
//! Everything the session starts is in its own process group: an EXIT trap of the session
//! stops its background jobs (SIGTERM, waited for) and the test then kills the group.
//! README's examples listen on 127.0.0.1 only, with ports chosen by the system (`--port 0`,
//! `--rpcport 0`, ...) and read back from the node's log; nothing reaches the network.
//!
//! [`readme_nodes_listen_on_loopback_and_free_ports`] keeps it that way for blocks added later;
//! [`readme_cites_only_files_in_the_repository`] checks every relative link and every path
//! README names; [`readme_says_what_the_reference_is_where_it_first_names_it`] that the first
//! mention of "the reference" says which node it is and links its public repository.
//!
//! The session needs bash, curl and coreutils (`timeout`, `mktemp`); it takes about 20 s.

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the whole README session may take before the test stops it (it takes well under
/// a minute; this bounds a hang, it asserts no speed).
const SESSION_LIMIT: Duration = Duration::from_secs(300);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    fs::read_to_string(repo().join("README.md")).expect("read README.md")
}

/// The directory of the binaries cargo built for these tests.
fn bin_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_chaind"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// One fenced block of a Markdown text.
#[derive(Debug)]
struct Block {
    /// README line (1-based) of the opening fence; the first line of the block is the next.
    fence_line: usize,
    /// The fence's info string (`sh`, `sh no-test`, `text`, ...).
    info: String,
    lines: Vec<String>,
}

#[derive(Debug, PartialEq)]
enum Kind {
    Run,
    NoTest,
    NotCommands,
}

impl Block {
    fn first_line(&self) -> usize {
        self.fence_line + 1
    }

    fn kind(&self) -> Kind {
        let mut words = self.info.split_whitespace();
        match words.next() {
            Some("sh") => {}
            Some(w @ ("bash" | "shell" | "zsh" | "console-sh")) => panic!(
                "README.md:{}: a ```{w} block: commands are fenced ```sh (run by this test) or \
                 ```sh no-test (not run)",
                self.fence_line
            ),
            _ => return Kind::NotCommands,
        }
        let rest: Vec<&str> = words.collect();
        match rest.as_slice() {
            [] => Kind::Run,
            ["no-test"] => Kind::NoTest,
            _ => panic!(
                "README.md:{}: unknown marker in ```{}: a command block is ```sh or ```sh no-test",
                self.fence_line, self.info
            ),
        }
    }
}

/// The fenced blocks of `text`, in order.
fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match open.as_mut() {
            None => {
                if let Some(info) = t.strip_prefix("```") {
                    open = Some(Block {
                        fence_line: i + 1,
                        info: info.trim().to_string(),
                        lines: Vec::new(),
                    });
                }
            }
            Some(b) => {
                if t.starts_with("```") && t.trim_end().trim_start_matches('`').is_empty() {
                    out.push(open.take().unwrap());
                } else {
                    b.lines.push(line.to_string());
                }
            }
        }
    }
    if let Some(b) = open {
        panic!("README.md:{}: this fence is never closed", b.fence_line);
    }
    out
}

/// `# -> VALUE` on a line: the command part before it (empty when the comment stands alone)
/// and VALUE.
fn expectation(line: &str) -> Option<(String, String)> {
    if let Some(v) = line.trim_start().strip_prefix("# -> ") {
        return Some((String::new(), v.trim_end().to_string()));
    }
    let pos = line.rfind(" # -> ")?;
    Some((
        line[..pos].trim_end().to_string(),
        line[pos + " # -> ".len()..].trim_end().to_string(),
    ))
}

/// Whether a line continues onto the next one (a shell line ending in `\`, `|`, `&&`, `||`).
fn continues(line: &str) -> bool {
    let t = line.trim_end();
    t.ends_with('\\') || t.ends_with('|') || t.ends_with("&&")
}

/// `s` in single quotes for bash.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// VALUE as a bash pattern for `[[ $x == PATTERN ]]`: literal text, `...` matching anything.
fn sh_pattern(value: &str) -> String {
    value
        .split("...")
        .map(sh_quote)
        .collect::<Vec<_>>()
        .join("*")
}

/// The cargo rewrites: `cargo build` is done, `cargo run --release --bin X --` is `X`.
fn rewrite_cargo(line: &str, readme_line: usize) -> String {
    let mut line = line.replace("cargo build", ": cargo build");
    const RUN: &str = "cargo run --release --bin ";
    while let Some(at) = line.find(RUN) {
        let rest = &line[at + RUN.len()..];
        let name: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
        let after = rest[name.len()..].trim_start();
        let Some(after) = after.strip_prefix("--") else {
            panic!("README.md:{readme_line}: `{RUN}{name}` without ` -- ` before its arguments")
        };
        line = format!("{}{name} {}", &line[..at], after.trim_start());
    }
    let code = line.split(" #").next().unwrap_or("");
    let runs_cargo = code.trim_start().starts_with("cargo ")
        || ["&& cargo ", "; cargo ", "| cargo ", "(cargo ", "$(cargo "]
            .iter()
            .any(|p| code.contains(p));
    assert!(
        !runs_cargo,
        "README.md:{readme_line}: `{}` would run cargo inside the test (a build, the test suite \
         or a download): use the built binaries, or fence the block ```sh no-test",
        line.trim()
    );
    line
}

/// The session script for `readme`: line N is README's line N (the run blocks' lines, as
/// rewritten; the harness's calls on their fence lines; nothing elsewhere), then the final
/// `__readme_done`.
fn session_script(readme: &str) -> (String, Vec<(usize, Block)>) {
    let src: Vec<&str> = readme.lines().collect();
    let mut script = vec![String::new(); src.len()];
    let all = blocks(readme);
    if all.first().is_some_and(|b| b.fence_line == 1) {
        panic!("README.md: line 1 is a fence; the harness needs line 1 for itself");
    }
    script[0] = r#". "$READMETEST_DIR/prelude.sh""#.to_string();
    let mut numbered = Vec::new();
    let mut number = 0;
    for b in all {
        let kind = b.kind();
        if kind == Kind::NotCommands {
            continue;
        }
        number += 1;
        if kind == Kind::Run {
            script[b.fence_line - 1] = format!(
                "__readme_block {number} {}; set -euo pipefail",
                b.first_line()
            );
            for (k, l) in run_lines(&b).into_iter().enumerate() {
                script[b.fence_line + k] = l;
            }
        }
        numbered.push((number, b));
    }
    script.push("__readme_done".to_string());
    (script.join("\n") + "\n", numbered)
}

/// A run block's lines as the session runs them: cargo rewritten, and each command with a
/// `# -> VALUE` wrapped so that its output is captured and compared.
fn run_lines(b: &Block) -> Vec<String> {
    let at = |k: usize| b.first_line() + k;
    let mut out: Vec<String> = b
        .lines
        .iter()
        .enumerate()
        .map(|(k, l)| rewrite_cargo(l, at(k)))
        .collect();
    for k in 0..b.lines.len() {
        let Some((cmd, value)) = expectation(&out[k]) else {
            continue;
        };
        let check = format!(
            "}} > \"$__readme_out\"; __readme_show; [[ $__readme_got == {} ]] || __readme_mismatch {} {}",
            sh_pattern(&value),
            at(k),
            sh_quote(&value)
        );
        let last = if cmd.is_empty() {
            let prev = k.checked_sub(1).map(|p| out[p].trim().to_string());
            assert!(
                prev.as_deref()
                    .is_some_and(|p| !p.is_empty() && !p.starts_with('#')),
                "README.md:{}: `# -> {value}` follows no command",
                at(k)
            );
            out[k] = check;
            k - 1
        } else {
            out[k] = format!("{cmd} ; {check}");
            k
        };
        let mut start = last;
        while start > 0 && continues(&out[start - 1]) {
            start -= 1;
        }
        out[start] = format!("{{ {}", out[start]);
    }
    out
}

/// The session's helpers, sourced on line 1 of the script.
const PRELUDE: &str = r#"
# README's session: what tests/readme.rs adds around README's commands.
__readme_out="$READMETEST_DIR/out"
__readme_block() {   # NUMBER FIRST_LINE: a block starts
    printf '%s %s\n' "$1" "$2" > "$READMETEST_DIR/block"
    printf '\n==> README.md block %s (line %s)\n' "$1" "$2"
}
__readme_show() {   # what the command before a `# -> VALUE` printed, shown and kept
    __readme_got=$(cat "$__readme_out")
    printf '%s\n' "$__readme_got"
}
__readme_mismatch() {   # LINE VALUE
    printf '%s\n%s\n%s' "$1" "$2" "$__readme_got" > "$READMETEST_DIR/mismatch"
    exit 1
}
__readme_done() { : > "$READMETEST_DIR/done"; }
__readme_on_exit() {   # stop what README's blocks left running, as an operator would
    local status=$? pids
    pids=$(trap - EXIT; jobs -p)   # (a command substitution would run the EXIT trap too)
    if [ -n "$pids" ]; then
        kill $pids 2>/dev/null || true
        wait $pids 2>/dev/null || true   # a job killed by SIGTERM "fails": not the session
    fi
    exit $status
}
trap '__readme_status=$?; printf "%s %s\n%s\n" "$LINENO" "$__readme_status" "$BASH_COMMAND" > "$READMETEST_DIR/error"' ERR
# The README line about to run, for a session that hangs or stops without an error. Line 1,
# the harness's, is also what bash calls every line of a trap's action: left out.
trap '[ "$LINENO" = 1 ] || printf "%s\n" "$LINENO" > "$READMETEST_DIR/line"' DEBUG
trap '__readme_on_exit' EXIT
"#;

/// A bash session running a README's script; its process group is killed when dropped.
struct Session {
    child: Child,
    dir: tempfile::TempDir,
}

impl Session {
    /// Starts bash on the session script of `readme` in the environment the module comment
    /// describes.
    fn start(readme: &str) -> (Session, Vec<(usize, Block)>) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (script, blocks) = session_script(readme);
        let session = d.join("session");
        let home = d.join("home");
        let tmp = d.join("tmp");
        let work = d.join("work");
        let run = d.join("run");
        for p in [&session, &home, &tmp, &work, &run, &work.join("target")] {
            fs::create_dir_all(p).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&run, fs::Permissions::from_mode(0o700)).unwrap();
        for e in fs::read_dir(repo()).unwrap().flatten() {
            let name = e.file_name();
            if name == "target" || name == ".git" {
                continue;
            }
            std::os::unix::fs::symlink(e.path(), work.join(&name)).unwrap();
        }
        std::os::unix::fs::symlink(bin_dir(), work.join("target/release")).unwrap();
        fs::write(session.join("prelude.sh"), PRELUDE).unwrap();
        fs::write(session.join("script.sh"), script).unwrap();
        let log = fs::File::create(session.join("log")).unwrap();
        let path = format!(
            "{}:{}",
            bin_dir().display(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
        );
        let child = Command::new("bash")
            .args(["--noprofile", "--norc"])
            .arg(session.join("script.sh"))
            .current_dir(&work)
            .env_clear()
            .env("PATH", path)
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_RUNTIME_DIR", &run)
            .env("TMPDIR", &tmp)
            .env("READMETEST_DIR", &session)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("start bash");
        (Session { child, dir }, blocks)
    }

    fn file(&self, name: &str) -> Option<String> {
        fs::read_to_string(self.dir.path().join("session").join(name)).ok()
    }

    fn kill_group(&self) {
        // SAFETY: kill(2) on the process group this session's bash leads.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
    }

    /// Waits for the session to end (at most `limit`), kills what is left of it, and says
    /// how it went: the session's output, or why it failed.
    fn finish(mut self, readme: &str, limit: Duration) -> Result<String, String> {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break Some(st);
            }
            if Instant::now() >= deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        self.kill_group();
        let _ = self.child.wait();
        let log = self.file("log").unwrap_or_default();
        if status.is_some_and(|s| s.success()) && self.file("done").is_some() {
            return Ok(log);
        }
        let lines: Vec<&str> = readme.lines().collect();
        let text = |n: usize| lines.get(n.wrapping_sub(1)).map_or("", |l| l.trim());
        let mut msg = match self.file("block").and_then(|b| {
            let mut w = b.split_whitespace().map(|x| x.parse::<usize>().ok());
            Some((w.next()??, w.next()??))
        }) {
            Some((n, first)) => format!(
                "README.md block {n} (the block starting at README.md:{first}, `{}`) failed",
                text(first)
            ),
            None => "README.md's session failed before its first block".to_string(),
        };
        if status.is_none() {
            let at: usize = self
                .file("line")
                .and_then(|l| l.trim().parse().ok())
                .unwrap_or(0);
            msg += &format!(
                ": it did not end within {} s; it was running README.md:{at}: `{}`",
                limit.as_secs(),
                text(at)
            );
        } else if let Some(m) = self.file("mismatch") {
            let mut parts = m.splitn(3, '\n');
            let (line, want, got) = (
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
            );
            msg +=
                &format!(": README.md:{line} says the command prints `{want}`; it printed `{got}`");
        } else if let Some(e) = self.file("error") {
            let (head, cmd) = e.split_once('\n').unwrap_or((&e, ""));
            let mut w = head.split_whitespace();
            let at: usize = w.next().and_then(|x| x.parse().ok()).unwrap_or(0);
            let code = w.next().unwrap_or("?");
            msg += &format!(
                ": README.md:{at}: `{}` exited {code} (bash ran `{}`)",
                text(at),
                cmd.trim()
            );
        } else {
            // No ERR trap ran: an unset variable, a syntax error, an `exit`.
            let at: usize = self
                .file("line")
                .and_then(|l| l.trim().parse().ok())
                .unwrap_or(0);
            let code = status.and_then(|s| s.code()).unwrap_or(-1);
            msg += &format!(
                ": README.md:{at}: `{}` ended the session (bash exited {code})",
                text(at)
            );
        }
        let tail: Vec<&str> = log.lines().rev().take(60).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Err(format!(
            "{msg}\n--- the session's last output ---\n{}",
            tail.join("\n")
        ))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.kill_group();
        let _ = self.child.wait();
    }
}

/// Runs a README text's `sh` blocks in one session; its output, or why it failed.
fn run_readme(text: &str, limit: Duration) -> Result<String, String> {
    let (session, _) = Session::start(text);
    session.finish(text, limit)
}

#[test]
fn every_sh_block_runs_in_order() {
    let text = readme();
    let (session, numbered) = Session::start(&text);
    let mut run = 0;
    for (n, b) in &numbered {
        if b.kind() == Kind::NoTest {
            eprintln!(
                "not run (```sh no-test): block {n} at README.md:{}: `{}`",
                b.first_line(),
                b.lines.first().map_or("", |l| l.trim())
            );
        } else {
            run += 1;
        }
    }
    assert!(run >= 5, "README has only {run} sh blocks to run");
    match session.finish(&text, SESSION_LIMIT) {
        // Shown with `cargo test --test readme -- --nocapture`.
        Ok(log) => eprintln!("{log}"),
        Err(e) => panic!("{e}"),
    }
}

/// The first command of "## Two commands" (`cargo run --release --bin chaind -- ARGS`) runs
/// until Ctrl-C on fixed ports, so the session does not run it; here it runs as `chaind ARGS
/// --rpcport 0 --port 0` with a temporary HOME, and what the section says of it is checked:
/// IPC at `~/.local/share/chaind/chaind.ipc` with every module, HTTP on 127.0.0.1 with
/// `chain,net,rpc`, the peers' listener on 127.0.0.1, the developer account with the empty
/// passphrase holding 10^27, and Ctrl-C (SIGINT) ending it with exit 0.
#[test]
fn two_commands_first_one_runs_as_readme_says() {
    let text = readme();
    let section = text
        .split("\n## Two commands\n")
        .nth(1)
        .expect("README has a \"## Two commands\" section");
    let block = blocks(section)
        .into_iter()
        .find(|b| b.info.starts_with("sh"))
        .expect("a sh block in \"## Two commands\"");
    let first = block.lines[0].split(" #").next().unwrap().trim();
    let args: Vec<&str> = first
        .strip_prefix("cargo run --release --bin chaind -- ")
        .unwrap_or_else(|| panic!("the first of the two commands is `{first}`"))
        .split_whitespace()
        .collect();

    let home = tempfile::tempdir().unwrap();
    let env = |c: &mut Command| {
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .current_dir(home.path())
            .stdin(Stdio::null());
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chaind"));
    env(&mut cmd);
    let mut node = cmd
        .args(&args)
        .args(["--rpcport", "0", "--port", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    struct Kill(u32);
    impl Drop for Kill {
        fn drop(&mut self) {
            // SAFETY: kill(2) on our own child.
            unsafe { libc::kill(self.0 as i32, libc::SIGKILL) };
        }
    }
    let _guard = Kill(node.id());
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = node.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut log = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !log.iter().any(|l: &String| l.contains("Node started")) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) => log.push(l),
            Err(_) => panic!("chaind {args:?} did not start; log:\n{}", log.join("\n")),
        }
    }
    let logged = |what: &str| -> String {
        log.iter()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no `{what}` in the log:\n{}", log.join("\n")))
            .clone()
    };
    let datadir = home.path().join(".local/share/chaind");
    let ipc = logged("IPC endpoint opened");
    assert!(
        ipc.ends_with(&format!("url={}", datadir.join("chaind.ipc").display())),
        "{ipc}"
    );
    let http = logged("HTTP endpoint opened");
    assert!(
        http.contains("url=http://127.0.0.1:") && http.ends_with(" apis=chain,net,rpc"),
        "{http}"
    );
    let p2p = logged("P2P listening");
    assert!(p2p.contains("@127.0.0.1:"), "{p2p}");

    let chainctl = |args: &[&str], password_file: Option<&Path>| -> String {
        let mut c = Command::new(env!("CARGO_BIN_EXE_chainctl"));
        env(&mut c);
        c.args(args);
        if let Some(f) = password_file {
            c.arg("--password-file").arg(f);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "chainctl {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    // chainctl's default endpoint is the IPC socket of the default datadir.
    let modules: serde_json::Value = serde_json::from_str(&chainctl(&["rpc", "modules"], None))
        .expect("rpc modules prints JSON");
    let names: Vec<&String> = modules.as_object().unwrap().keys().collect();
    assert_eq!(
        names,
        ["admin", "chain", "debug", "eth", "net", "personal", "rpc", "txpool", "web3"],
        "IPC offers all modules"
    );
    let dev = fs::read_to_string(datadir.join("dev-account")).unwrap();
    let dev = dev.trim();
    assert_eq!(
        chainctl(&["chain", "getBalance", dev], None).trim(),
        format!("\"{:#x}\"", 10u128.pow(27))
    );
    let empty = home.path().join("empty");
    fs::write(&empty, "\n").unwrap();
    assert_eq!(
        chainctl(&["personal", "unlockAccount", dev, "1"], Some(&empty)).trim(),
        "true",
        "the developer account's passphrase is the empty string"
    );

    // SAFETY: kill(2) on our own child: Ctrl-C.
    unsafe { libc::kill(node.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(st) = node.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < deadline, "chaind did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "Ctrl-C stops the node with exit 0");
}

/// The nodes README's run blocks start listen on 127.0.0.1 only, on ports the system picks:
/// a port flag is 0, an address flag is loopback, `--rpc`, `--ws` and `--prometheus` come with
/// their port flag, and a `chaind` started in the background (a node, not `init`, `export` or
/// `import`) names `--p2paddr` and `--port` (the peers' listener defaults to 0.0.0.0:32323).
#[test]
fn readme_nodes_listen_on_loopback_and_free_ports() {
    let text = readme();
    let mut wrong = Vec::new();
    for b in blocks(&text) {
        if b.kind() != Kind::Run {
            continue;
        }
        // Whole commands: continuation lines joined, comments cut.
        let mut commands: Vec<(usize, String)> = Vec::new();
        let mut open = false;
        for (k, line) in b.lines.iter().enumerate() {
            let code = line.split(" #").next().unwrap_or("");
            let code = if code.trim_start().starts_with('#') {
                ""
            } else {
                code
            };
            if open {
                let last = commands.last_mut().unwrap();
                last.1.push(' ');
                last.1.push_str(code);
            } else {
                commands.push((b.first_line() + k, code.to_string()));
            }
            open = continues(code);
        }
        for (n, cmd) in commands {
            let words: Vec<&str> = cmd
                .split_whitespace()
                .map(|w| w.trim_matches('"'))
                .collect();
            let has = |f: &str| words.contains(&f);
            for (i, w) in words.iter().enumerate() {
                let next = words.get(i + 1).copied().unwrap_or("");
                if ["--port", "--rpcport", "--wsport", "--prometheusport"].contains(w)
                    && next != "0"
                {
                    wrong.push(format!("README.md:{n}: `{w} {next}`: a fixed port (use 0)"));
                }
                if ["--rpcaddr", "--wsaddr", "--p2paddr"].contains(w)
                    && !["127.0.0.1", "localhost"].contains(&next)
                {
                    wrong.push(format!("README.md:{n}: `{w} {next}`: not loopback"));
                }
            }
            for (on, port) in [
                ("--rpc", "--rpcport"),
                ("--ws", "--wsport"),
                ("--prometheus", "--prometheusport"),
            ] {
                if has(on) && !has(port) {
                    wrong.push(format!("README.md:{n}: `{on}` without `{port} 0`"));
                }
            }
            let node = words.iter().position(|w| *w == "chaind").is_some_and(|i| {
                !words[i..]
                    .iter()
                    .any(|w| ["init", "export", "import"].contains(w))
            });
            if node && cmd.contains('&') && !(has("--port") && has("--p2paddr")) {
                wrong.push(format!(
                    "README.md:{n}: a node without `--p2paddr 127.0.0.1 --port 0`"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every relative link, every path README names (backticked paths under `tests/`, `benches/`,
/// `src/`, `man/`, `.ci/`, and source paths such as `api/spec.rs` under `src/`), and every
/// Markdown file it names exists in the repository; nothing points outside it (`../`).
#[test]
fn readme_cites_only_files_in_the_repository() {
    let text = readme();
    let root = repo();
    let mut missing = Vec::new();
    let mut in_fence = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if line.contains("../") {
            missing.push(format!(
                "README.md:{n}: a path outside the repository: {line}"
            ));
        }
        // Markdown files named anywhere, fenced or not.
        for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || "_-./".contains(c))) {
            let word = word.trim_end_matches('.');
            // A word starting with `/` is an absolute path or the rest of a URL.
            if word.ends_with(".md") && !word.starts_with('/') && !root.join(word).exists() {
                missing.push(format!("README.md:{n}: `{word}` is not in the repository"));
            }
        }
        if in_fence {
            continue;
        }
        // [text](target)
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = &after[..end];
            let local = !(target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
                || target.starts_with('#'));
            let path = target.split('#').next().unwrap();
            if local && !root.join(path).exists() {
                missing.push(format!(
                    "README.md:{n}: link to `{target}`, not in the repository"
                ));
            }
            rest = &after[end..];
        }
        // `code spans`: each word that is a repository path.
        for (k, span) in line.split('`').enumerate() {
            if k % 2 == 0 {
                continue;
            }
            for word in span.split_whitespace() {
                let word = word.trim_end_matches([',', ';', ':', ')']);
                let top = ["tests/", "benches/", "src/", "man/", ".ci/"]
                    .iter()
                    .any(|p| word.starts_with(p));
                let source = !top
                    && word.ends_with(".rs")
                    && word.contains('/')
                    && word
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_/.".contains(c));
                let exists = if top {
                    root.join(word).exists()
                } else if source {
                    root.join("src").join(word).exists() || root.join(word).exists()
                } else {
                    true
                };
                if !exists {
                    missing.push(format!("README.md:{n}: `{word}` is not in the repository"));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// README says which node "the reference" is where it first uses the term, with the address
/// of its public repository.
#[test]
fn readme_says_what_the_reference_is_where_it_first_names_it() {
    let text = readme();
    let lower = text.to_lowercase();
    let at = lower
        .find("the reference")
        .expect("README names the reference");
    let start = text[..at].rfind("\n\n").map_or(0, |p| p + 2);
    // The paragraph of the first mention, or the one right after it.
    let end = text[at..]
        .match_indices("\n\n")
        .nth(1)
        .map_or(text.len(), |(p, _)| at + p);
    let around = &text[start..end];
    assert!(
        around.contains("Klaytn") && around.contains("https://github.com/klaytn/klaytn"),
        "the first mention of the reference does not say what it is:\n{around}"
    );
}

// The harness itself, on small READMEs: what it runs, carries, checks and reports.

fn fenced(body: &str) -> String {
    format!("# title\n\n{body}")
}

#[test]
fn harness_carries_state_between_blocks_and_checks_outputs() {
    let text = fenced(
        "```sh\nX=41\ncd \"$(mktemp -d)\"\necho hi > f\n```\n\ntext\n\n\
         ```sh\necho $((X + 1))\n# -> 42\ncat f   # -> hi\nprintf 'ab\\ncdef\\n' \\\n  | tr -d '\\n'\n# -> ab...f\n```\n\n\
         ```text\nfalse\n```\n\n```sh no-test\nfalse\n```\n",
    );
    let log = run_readme(&text, Duration::from_secs(30)).unwrap();
    assert!(log.contains("==> README.md block 2 (line 12)"), "{log}");
    assert!(!log.contains("block 3"), "the no-test block ran: {log}");
}

#[test]
fn harness_names_the_failing_block_and_line() {
    let text =
        fenced("```sh\ntrue\n```\n\n```sh\necho one\ngrep -q nothing /dev/null\necho two\n```\n");
    let err = run_readme(&text, Duration::from_secs(30)).unwrap_err();
    assert!(
        err.starts_with(
            "README.md block 2 (the block starting at README.md:8, `echo one`) failed: \
             README.md:9: `grep -q nothing /dev/null` exited 1"
        ),
        "{err}"
    );
    assert!(err.contains("one") && !err.contains("two\n"), "{err}");
}

#[test]
fn harness_is_strict_about_unset_variables_and_pipelines() {
    let unset = fenced("```sh\necho \"$NOT_SET\"\n```\n");
    let err = run_readme(&unset, Duration::from_secs(30)).unwrap_err();
    assert!(
        err.contains("README.md:4: `echo \"$NOT_SET\"` ended the session (bash exited 1)")
            && err.contains("NOT_SET: unbound variable"),
        "{err}"
    );
    let pipe = fenced("```sh\nfalse | cat\necho after\n```\n");
    let err = run_readme(&pipe, Duration::from_secs(30)).unwrap_err();
    assert!(err.contains("README.md:4: `false | cat` exited 1"), "{err}");
}

#[test]
fn harness_reports_an_output_that_is_not_the_comment() {
    let text = fenced("```sh\necho 41\n# -> 42\n```\n");
    let err = run_readme(&text, Duration::from_secs(30)).unwrap_err();
    assert!(
        err.contains("README.md:5 says the command prints `42`; it printed `41`"),
        "{err}"
    );
}

#[test]
fn harness_stops_background_jobs_and_bounds_a_hang() {
    let text = fenced("```sh\nsleep 1000 &\necho \"background $!\"\n```\n");
    let log = run_readme(&text, Duration::from_secs(30)).unwrap();
    let pid: i32 = log
        .lines()
        .find_map(|l| l.strip_prefix("background "))
        .expect("the block printed its job's pid")
        .parse()
        .unwrap();
    // SAFETY: kill(2) with signal 0 only asks whether the process exists.
    let alive = || unsafe { libc::kill(pid, 0) } == 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "the background job {pid} outlived the session");

    let hang = fenced("```sh\necho start\nsleep 1000\n```\n");
    let err = run_readme(&hang, Duration::from_secs(2)).unwrap_err();
    assert!(
        err.contains("did not end within 2 s; it was running README.md:5: `sleep 1000`"),
        "{err}"
    );
}

#[test]
fn harness_rewrites_cargo_and_refuses_other_cargo_commands() {
    assert_eq!(
        rewrite_cargo("cargo run --release --bin chaind -- --dev --rpc   # run", 1),
        "chaind --dev --rpc   # run"
    );
    assert_eq!(
        rewrite_cargo("cargo build --release && ls", 1),
        ": cargo build --release && ls"
    );
    let refused = std::panic::catch_unwind(|| rewrite_cargo("cargo test --release", 7));
    assert!(refused.is_err());
    let marker = std::panic::catch_unwind(|| {
        blocks("# t\n```sh notest\nls\n```\n")[0].kind();
    });
    assert!(marker.is_err(), "a misspelt marker must fail, not skip");
}
