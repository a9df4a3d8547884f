//! `chainctl attach` on a pseudo-terminal (openpty via libc), against a real `chaind`: results
//! and errors, passphrases prompted without echo for `personal.newAccount()` and
//! `personal.unlockAccount(addr, null, 600)`, key data for `personal.importRawKey()`, tab
//! completion, the history file (no secrets, no unparsable lines, no unknown methods),
//! `exit`, `quit`, ctrl-c and ctrl-d. Also the terminal prompts of `chainctl MODULE METHOD`,
//! `call` and `exec`, and of `chain-keytool`.

mod common;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use common::{key_files, Ipc, Node};

/// A raw key of the reference and its address.
const KEY: &str = "aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e";
const KEY_ADDRESS: &str = "0x819104a190255e0cedbdd9d5f59a557633d79db1";
/// Another raw key.
const OTHER_KEY: &str = "f8cc7c3813ad23817466b1802ee805ee417001fcce9376ab8728c92dd8ea0a6b";

/// How long any expected output may take to appear.
const WAIT: Duration = Duration::from_secs(30);

/// A program (`chainctl attach`, say) on the slave side of a pty; killed when dropped.
struct Console {
    child: Child,
    master: File,
    /// Kept open to read the terminal's settings (is echo off?) and closed at the end.
    slave: Option<OwnedFd>,
    output: Arc<(Mutex<Vec<u8>>, Condvar)>,
    /// How far `expect` has read.
    cursor: usize,
}

impl Console {
    /// `chainctl ARGS...` on a new pty.
    fn spawn(args: &[&str], home: &std::path::Path) -> Console {
        Console::spawn_program(env!("CARGO_BIN_EXE_chainctl"), args, home)
    }

    /// `program ARGS...` on a new pty, as the controlling terminal of a new session.
    fn spawn_program(program: &str, args: &[&str], home: &std::path::Path) -> Console {
        let mut master_fd = -1;
        let mut slave_fd = -1;
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 200,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two descriptors; no name buffer or termios is passed.
        let rc = unsafe {
            libc::openpty(
                &mut master_fd,
                &mut slave_fd,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned here.
        let (master, slave) =
            unsafe { (File::from_raw_fd(master_fd), OwnedFd::from_raw_fd(slave_fd)) };
        let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().unwrap());
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("TERM", "xterm")
            .env("HOME", home)
            .stdin(stdio(&slave))
            .stdout(stdio(&slave))
            .stderr(stdio(&slave));
        // SAFETY: only async-signal-safe calls between fork and exec: a new session whose
        // controlling terminal is the pty, so that the no-echo prompt can open /dev/tty.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn the program on the pty");
        let output = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
        let sink = output.clone();
        let mut reader = master.try_clone().unwrap();
        let mut answer = master.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO once every slave descriptor is closed.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let chunk = &buf[..n];
                // rustyline asks where the cursor is; answer "column 1" as a terminal would.
                if chunk.windows(4).any(|w| w == b"\x1b[6n") {
                    let _ = answer.write_all(b"\x1b[1;1R");
                }
                let (lock, cv) = &*sink;
                lock.lock().unwrap().extend_from_slice(chunk);
                cv.notify_all();
            }
        });
        Console {
            child,
            master,
            slave: Some(slave),
            output,
            cursor: 0,
        }
    }

    /// Everything the terminal showed so far.
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.output.0.lock().unwrap()).into_owned()
    }

    /// Waits until `text` appears after what earlier calls consumed; returns the output from
    /// the cursor up to the end of the match.
    fn expect(&mut self, text: &str) -> String {
        let (lock, cv) = &*self.output;
        let deadline = Instant::now() + WAIT;
        let mut out = lock.lock().unwrap();
        loop {
            let seen = String::from_utf8_lossy(&out[self.cursor..]).into_owned();
            if let Some(i) = seen.find(text) {
                let upto = i + text.len();
                self.cursor += seen[..upto].len();
                return seen[..upto].to_string();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "waited for {text:?}; the terminal shows:\n{seen}"
            );
            out = cv.wait_timeout(out, left).unwrap().0;
        }
    }

    fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Waits for the console's prompt, then types `line` and Enter.
    fn line(&mut self, line: &str) {
        self.expect("> ");
        self.send(line);
        self.send("\r");
    }

    /// Answers a no-echo prompt: waits for it and for echo to be off, then types `secret`.
    fn passphrase(&mut self, prompt: &str, secret: &str) {
        self.expect(prompt);
        let fd = self.slave.as_ref().unwrap().as_raw_fd();
        let deadline = Instant::now() + WAIT;
        loop {
            // SAFETY: tcgetattr fills a termios for a valid terminal descriptor.
            let mut t: libc::termios = unsafe { std::mem::zeroed() };
            assert_eq!(unsafe { libc::tcgetattr(fd, &mut t) }, 0);
            if t.c_lflag & libc::ECHO == 0 {
                break;
            }
            assert!(Instant::now() < deadline, "echo stayed on after {prompt:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
        self.send(secret);
        self.send("\n");
    }

    /// Waits for the process to end and returns its exit code.
    fn wait(&mut self) -> i32 {
        self.slave = None;
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "chainctl did not exit; the terminal shows:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first `"0x<40 hex>"` in `text`.
fn address_in(text: &str) -> String {
    text.match_indices("\"0x")
        .map(|(i, _)| &text[i + 1..])
        .find(|s| {
            s.len() > 42
                && s.as_bytes()[42] == b'"'
                && s[2..42].chars().all(|c| c.is_ascii_hexdigit())
        })
        .map(|s| s[..42].to_string())
        .unwrap_or_else(|| panic!("no address in {text:?}"))
}

#[test]
fn console_session_with_prompts_and_completion() {
    let node = Node::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let datadir = node.datadir.path().to_str().unwrap().to_string();
    let mut c = Console::spawn(&["--datadir", &datadir, "attach"], home.path());

    c.expect("Welcome to the chain console!");
    c.line("rpc.modules()");
    c.expect("\"personal\": \"1.0\"");
    c.line("admin.datadir");
    c.expect(&format!("\"{datadir}\""));

    c.line("personal.newAccount()");
    c.passphrase("Passphrase: ", "pty secret");
    c.passphrase("Repeat passphrase: ", "pty secret");
    let shown = c.expect("\"\r\n");
    let addr = address_in(&shown);

    c.line(&format!("personal.unlockAccount(\"{addr}\", null, 600)"));
    c.passphrase("Passphrase: ", "pty secret");
    c.expect("true");

    // Tab completion: "perso" becomes "personal.", then the rest of the name is typed.
    c.expect("> ");
    c.send("perso\t");
    c.expect("personal.");
    c.send("listWallets()\r");
    let wallets = c.expect("\"status\": \"Unlocked\"");
    assert!(wallets.contains(&addr[2..]), "{wallets}");

    // Errors are printed and the console goes on.
    c.line(&format!("personal.unlockAccount(\"{addr}\", \"not it\")"));
    c.expect("error -32000: ");
    c.line("foo.bar()");
    c.expect("error -32601: the method foo_bar does not exist/is not available");
    c.line("personal.newAccount(");
    c.expect("error: syntax error at column 21: ");
    c.line("rpc.modules");
    c.expect("\"rpc\": \"1.0\"");

    c.line("exit");
    assert_eq!(c.wait(), 0, "{}", c.screen());

    let screen = c.screen();
    assert!(
        !screen.contains("pty secret"),
        "a prompted passphrase was echoed:\n{screen}"
    );
    // The history: in the datadir, without the line that carried a passphrase.
    let history = std::fs::read_to_string(node.datadir.path().join("chainctl_history")).unwrap();
    assert!(history.contains("rpc.modules()"), "{history}");
    assert!(history.contains("personal.listWallets()"), "{history}");
    assert!(history.contains("personal.newAccount()"), "{history}");
    assert!(!history.contains("not it"), "{history}");
    assert!(!home.path().join(".chainctl_history").exists());
}

#[test]
fn end_of_input_leaves_the_console_and_history_goes_home() {
    let node = Node::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let ipc = node.ipc.as_ref().unwrap().to_str().unwrap().to_string();
    let mut c = Console::spawn(&["--endpoint", &ipc, "attach"], home.path());
    c.line("personal.listAccounts");
    c.expect("[]");
    c.expect("> ");
    // Ctrl-D on an empty line.
    c.send("\x04");
    assert_eq!(c.wait(), 0, "{}", c.screen());
    let history = std::fs::read_to_string(home.path().join(".chainctl_history")).unwrap();
    assert!(history.contains("personal.listAccounts"), "{history}");
}

/// The console keeps out of its history every line with a secret in it (a passphrase or raw
/// key data), every line that names an unknown method, and every line that does not parse; ctrl-c, also after a completion attempt
/// behind a multi-byte character, leaves the console running; `quit` ends it.
#[test]
fn history_holds_no_secret_and_no_unparsable_line() {
    let node = Node::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let datadir = node.datadir.path().to_str().unwrap().to_string();
    let mut c = Console::spawn(&["--datadir", &datadir, "attach"], home.path());
    c.expect("Welcome to the chain console!");
    c.line("rpc.modules");
    c.expect("\"rpc\": \"1.0\"");

    // Ctrl-C on an empty line: a new prompt, the console goes on.
    c.expect("> ");
    c.send("\x03");
    c.line("admin.datadir");
    c.expect(&format!("\"{datadir}\""));

    // Tab right after a two-byte character, then ctrl-c to drop the line.
    c.expect("> ");
    c.send("personal.sign(\"\u{e9}\t");
    c.send("\x03");
    c.line("personal.listAccounts");
    c.expect("[]");

    // Raw key data, with the passphrase on the line and with it prompted for.
    c.line(&format!("personal.importRawKey('{KEY}', 'pw')"));
    c.expect(KEY_ADDRESS);
    c.line(&format!("personal.importRawKey(\"{OTHER_KEY}\")"));
    c.passphrase("Passphrase: ", "pty secret");
    c.passphrase("Repeat passphrase: ", "pty secret");
    c.expect("\"0x");
    c.line("personal.replaceRawKey(\"0123\", null, null)");
    c.passphrase("Old passphrase: ", "pty secret");
    c.passphrase("New passphrase: ", "pty secret");
    c.passphrase("Repeat passphrase: ", "pty secret");
    c.expect("error -");

    // A mistyped method name: the node does not know it, and the line, with its
    // passphrase, stays out of the history.
    c.line("personal.unlockAcount(\"0x819104a190255e0cedbdd9d5f59a557633d79db1\", \"Sup3rS3cretPass!\", 60)");
    c.expect("error -32601: ");

    // A passphrase typed where the address goes, or after the last parameter: the method is
    // known, but the line stays out of the history.
    c.line("personal.unlockAccount(\"Sup3rS3cretPass!\")");
    c.passphrase("Passphrase: ", "pty secret");
    c.expect("error -");
    c.line(&format!(
        "personal.lockAccount(\"{KEY_ADDRESS}\", \"Sup3rS3cretPass!\")"
    ));
    c.expect("error -");
    // A known call keeps its other arguments.
    c.line(&format!(
        "personal.unlockAccount(\"{KEY_ADDRESS}\", null, 60)"
    ));
    c.passphrase("Passphrase: ", "pw");
    c.expect("true");

    // Unparsable lines (a passphrase typed at the console's prompt, say).
    c.line("hunter2");
    c.expect("error: syntax error at column 8: ");
    c.line("personal.unlockAccount(\"0x1\", hunter2");
    c.expect("error: syntax error at column ");

    c.line("quit");
    assert_eq!(c.wait(), 0, "{}", c.screen());
    let screen = c.screen();
    assert!(!screen.contains("pty secret"), "{screen}");
    assert_eq!(key_files(&node.keystore()).len(), 2);
    let history = std::fs::read_to_string(node.datadir.path().join("chainctl_history")).unwrap();
    assert_eq!(
        history,
        format!(
            "#V2\nrpc.modules\nadmin.datadir\npersonal.listAccounts\n\
personal.unlockAccount(\"{KEY_ADDRESS}\", null, 60)\n"
        ),
        "{history}"
    );
    assert!(!history.contains("Sup3r"), "{history}");
}

/// `chainctl MODULE METHOD` on a terminal prompts for the passphrase, which no argument gives
/// (`600` is the duration), and for key data given as `-`.
#[test]
fn method_commands_prompt_on_a_terminal() {
    let node = Node::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let ipc_path = node.ipc.clone().unwrap();
    let ipc = ipc_path.to_str().unwrap();
    let mut rpc = Ipc::connect(&ipc_path);
    common::ok(rpc.call("personal_importRawKey", serde_json::json!([KEY, "600"])));

    let mut c = Console::spawn(
        &[
            "--endpoint",
            ipc,
            "personal",
            "unlockAccount",
            KEY_ADDRESS,
            "600",
        ],
        home.path(),
    );
    c.passphrase("Passphrase: ", "600");
    c.expect("true");
    assert_eq!(c.wait(), 0, "{}", c.screen());
    let wallets = common::ok(rpc.call("personal_listWallets", serde_json::json!([])));
    assert_eq!(wallets[0]["status"], "Unlocked", "{wallets}");

    let mut c = Console::spawn(
        &["--endpoint", ipc, "personal", "importRawKey", "-"],
        home.path(),
    );
    c.passphrase("Key data: ", OTHER_KEY);
    c.passphrase("Passphrase: ", "pty secret");
    c.passphrase("Repeat passphrase: ", "pty secret");
    c.expect("\"0x");
    assert_eq!(c.wait(), 0, "{}", c.screen());
    let screen = c.screen();
    assert!(
        !screen.contains(OTHER_KEY) && !screen.contains("pty secret"),
        "{screen}"
    );
    assert_eq!(key_files(&node.keystore()).len(), 2);
}

/// Key data left out or `null` is prompted for without echo, before the passphrases: by `call`,
/// `exec`, `chainctl MODULE METHOD` and the console; the console's history keeps the line with
/// its nulls.
#[test]
fn key_data_left_out_is_prompted_for() {
    const THIRD_KEY: &str = "1111111111111111111111111111111111111111111111111111111111111111";
    let node = Node::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let ipc = node.ipc.as_ref().unwrap().to_str().unwrap().to_string();
    let datadir = node.datadir.path().to_str().unwrap().to_string();
    let mut screens = String::new();
    for (args, key) in [
        (vec!["call", "personal_importRawKey", "[null]"], KEY),
        (vec!["personal", "importRawKey"], OTHER_KEY),
        (vec!["exec", "personal.importRawKey()"], THIRD_KEY),
    ] {
        let mut all = vec!["--endpoint", ipc.as_str()];
        all.extend(&args);
        let mut c = Console::spawn(&all, home.path());
        c.passphrase("Key data: ", key);
        c.passphrase("Passphrase: ", "pty secret");
        c.passphrase("Repeat passphrase: ", "pty secret");
        c.expect("\"0x");
        assert_eq!(c.wait(), 0, "{args:?}: {}", c.screen());
        screens.push_str(&c.screen());
    }
    assert!(screens.contains(KEY_ADDRESS), "{screens}");
    assert_eq!(key_files(&node.keystore()).len(), 3);

    let mut c = Console::spawn(&["--datadir", &datadir, "attach"], home.path());
    c.line("personal.replaceRawKey(null, null, null)");
    c.passphrase("Key data: ", KEY);
    c.passphrase("Old passphrase: ", "pty secret");
    c.passphrase("New passphrase: ", "new secret");
    c.passphrase("Repeat passphrase: ", "new secret");
    c.expect(KEY_ADDRESS);
    c.line(&format!(
        "personal.unlockAccount(\"{KEY_ADDRESS}\", null, 60)"
    ));
    c.passphrase("Passphrase: ", "new secret");
    c.expect("true");
    c.line("exit");
    assert_eq!(c.wait(), 0, "{}", c.screen());
    screens.push_str(&c.screen());
    for secret in [KEY, OTHER_KEY, THIRD_KEY, "pty secret", "new secret"] {
        assert!(!screens.contains(secret), "{secret} shown:\n{screens}");
    }
    let history = std::fs::read_to_string(node.datadir.path().join("chainctl_history")).unwrap();
    assert_eq!(
        history,
        format!(
            "#V2\npersonal.replaceRawKey(null, null, null)\n\
personal.unlockAccount(\"{KEY_ADDRESS}\", null, 60)\n"
        )
    );
}

/// `chain-keytool new` asks for the passphrase twice; a different second answer is bad input.
#[test]
fn keytool_new_refuses_a_mismatched_confirmation() {
    let home = tempfile::tempdir().unwrap();
    let ks = home.path().join("keystore");
    let ks = ks.to_str().unwrap();
    let mut c = Console::spawn_program(
        env!("CARGO_BIN_EXE_chain-keytool"),
        &["--keystore", ks, "new", "--light"],
        home.path(),
    );
    c.passphrase("Passphrase: ", "first secret");
    c.passphrase("Repeat passphrase: ", "second secret");
    c.expect("error: passphrases do not match");
    assert_eq!(c.wait(), 2, "{}", c.screen());
    assert!(!c.screen().contains("secret"), "{}", c.screen());
    assert!(key_files(std::path::Path::new(ks)).is_empty());
}

/// `chain-keytool import-raw -` on a terminal prompts for the key data without echo.
#[test]
fn keytool_import_raw_prompts_for_key_data() {
    let home = tempfile::tempdir().unwrap();
    let ks = home.path().join("keystore");
    let ks = ks.to_str().unwrap();
    let mut c = Console::spawn_program(
        env!("CARGO_BIN_EXE_chain-keytool"),
        &["--keystore", ks, "import-raw", "--light", "-"],
        home.path(),
    );
    c.passphrase("Key data: ", KEY);
    c.passphrase("Passphrase: ", "pty secret");
    c.passphrase("Repeat passphrase: ", "pty secret");
    c.expect(&KEY_ADDRESS[2..]);
    assert_eq!(c.wait(), 0, "{}", c.screen());
    let screen = c.screen();
    assert!(
        !screen.contains(KEY) && !screen.contains("pty secret"),
        "{screen}"
    );
    assert_eq!(key_files(std::path::Path::new(ks)).len(), 1);
}

/// The progress bars of `chaind import` and `chaind export` on a terminal count blocks
/// (not bytes or batches), with the total when it is known: an export's range, an
/// uncompressed import file's blocks (counted beside the import); a gzip file's total is
/// not known, and its bar counts without one.
#[test]
fn chaind_import_and_export_bars_count_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let v = chain_node::crypto::SecretKey::from_slice(&[0x41; 32]).unwrap();
    let (genesis_file, genesis) = common::funded_genesis(dir.path(), v.address(), 1000);
    let file = dir.path().join("blocks.rlp");
    common::write_empty_blocks(&file, &genesis, &v, 3000);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    common::chaind_init(&a, &genesis_file);
    common::chaind_init(&b, &genesis_file);
    let chaind = common::chaind_bin();
    let chaind = chaind.to_str().unwrap();
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let run = |args: &[&str], expect: &[&str]| {
        let mut c = Console::spawn_program(chaind, args, dir.path());
        for text in expect {
            c.expect(text);
        }
        assert_eq!(c.wait(), 0, "{}", c.screen());
        let screen = c.screen();
        for unit in ["iB", " B/", "batch"] {
            assert!(!screen.contains(unit), "{args:?}: {screen}");
        }
    };
    run(
        &["--datadir", &s(&a), "import", &s(&file)],
        &["Importing [", "] 3000/3000 blocks", "3000 new, 0 known"],
    );
    let gz = dir.path().join("all.rlp.gz");
    run(
        &["--datadir", &s(&a), "export", &s(&gz)],
        &["Exporting [", "] 3001/3001 blocks"],
    );
    run(
        &["--datadir", &s(&b), "import", &s(&gz)],
        &["Importing 3001 blocks", "3000 new, 1 known"],
    );
}

/// `help` from the method table, the banner naming Tab completion, -32601's data under the
/// message, and a subscription streamed until ctrl-c, after which the console goes on.
#[test]
fn console_help_and_subscriptions() {
    let node = Node::start(&["--dev"]);
    let home = tempfile::tempdir().unwrap();
    let datadir = node.datadir.path().to_str().unwrap().to_string();
    let mut c = Console::spawn(&["--datadir", &datadir, "attach"], home.path());
    c.expect("Welcome to the chain console!");
    c.expect("Tab completes module and method names; help lists the modules, help MODULE a module's methods, help MODULE.METHOD one method's parameters and result.");

    c.line("help");
    c.expect("Modules (help MODULE lists its methods, help MODULE.METHOD tells one; Tab completes names):\r\n  admin     ");
    c.expect("\r\n  web3      2 methods\r\nLeave with exit, quit or ctrl-d.");
    c.line("help admin");
    c.expect("Methods of admin (help admin.METHOD tells more):\r\n");
    c.expect("\r\n  admin.addPeer(url)\r\n      Add a kni URL to the static peers");
    for topic in ["admin.addPeer", "admin_addPeer"] {
        c.line(&format!("help {topic}"));
        c.expect("admin.addPeer(url)   (JSON-RPC admin_addPeer)\r\n");
        c.expect("Parameters:\r\n  url: a string\r\nReturns: true once the URL is a static peer; false for this node's own URL");
    }
    c.line("help admin.addPeeer");
    c.expect("error: no module or method admin.addPeeer; did you mean admin.addPeer?");

    c.line("foo.bar()");
    c.expect("error -32601: the method foo_bar does not exist/is not available\r\n  data: no such method\r\n");

    c.line("chain.subscribe(\"newHeads\")");
    let key = common::dev_key(&node);
    let mut ipc = Ipc::connect(node.ipc.as_ref().unwrap());
    let deadline = Instant::now() + WAIT;
    let mut nonce = 0;
    let start = c.screen().len();
    // A whole line (ended) holding a head.
    let shown = |screen: &str| -> Option<String> {
        let mut lines: Vec<&str> = screen.split("\r\n").collect();
        lines.pop();
        lines
            .into_iter()
            .find(|l| l.contains("\"parentHash\":"))
            .map(str::to_string)
    };
    while shown(&c.screen()[start..]).is_none() {
        assert!(Instant::now() < deadline, "no head shown:\n{}", c.screen());
        let raw = common::raw_transfer(
            &key,
            nonce,
            chain_node::crypto::Address([0x35; 20]),
            1,
            common::PRICE,
            1000,
        );
        common::ok(ipc.call("chain_sendRawTransaction", serde_json::json!([raw])));
        nonce += 1;
        std::thread::sleep(Duration::from_millis(300));
    }
    // One head, one line of JSON.
    let line = shown(&c.screen()[start..]).unwrap();
    let head: serde_json::Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    assert!(head["hash"].is_string(), "{line}");
    // ctrl-c ends the stream, not the console.
    c.send("\x03");
    c.line("rpc.modules()");
    c.expect("\"chain\": \"1.0\"");
    c.line("exit");
    assert_eq!(c.wait(), 0);
}
