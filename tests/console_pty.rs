//! `chainctl attach` on a pseudo-terminal (openpty via libc), against a real `chaind`: results
//! and errors, passphrases prompted without echo for `personal.newAccount()` and
//! `personal.unlockAccount(addr, null, 600)`, tab completion, the history file, `exit`.

mod common;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use common::Node;

/// How long any expected output may take to appear.
const WAIT: Duration = Duration::from_secs(30);

/// `chainctl attach` on the slave side of a pty; killed when dropped.
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
    fn spawn(args: &[&str], home: &std::path::Path) -> Console {
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
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_chainctl"));
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
        let child = cmd.spawn().expect("spawn chainctl attach");
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
