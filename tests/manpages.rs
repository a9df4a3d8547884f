//! The checked-in man pages must be what the clap definitions render (regenerate with
//! `UPDATE_MAN=1 cargo test --release --test manpages`), and must read well at 80 columns as
//! `man` renders them (man-db, else groff or mandoc: .ci/run installs groff-base when none
//! is there).

use std::path::Path;

fn check(cmd: clap::Command) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let update = std::env::var_os("UPDATE_MAN").is_some();
    let mut stale = Vec::new();
    let program = cmd.get_name().to_string();
    let pages = chain_node::manpage::render_all(cmd);
    // A page of this program that is no longer generated (a removed command) is stale too.
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours =
            name.starts_with(&format!("{program}.")) || name.starts_with(&format!("{program}-"));
        if ours && !pages.iter().any(|(p, _)| *p == name) {
            if update {
                std::fs::remove_file(entry.path()).unwrap();
            } else {
                stale.push(name);
            }
        }
    }
    for (name, text) in pages {
        let path = dir.join(&name);
        if update {
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(&text[..]) {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "stale or missing man pages {stale:?}: run UPDATE_MAN=1 cargo test --release --test manpages"
    );
}

#[test]
fn keytool_man_pages_match_the_clap_definition() {
    check(chain_node::keytool::command());
}

#[test]
fn chaind_man_page_matches_the_clap_definition() {
    check(chain_node::node::Config::command());
}

#[test]
fn chainctl_man_pages_match_the_clap_definition() {
    check(chain_node::chainctl::command());
}

/// A page rendered as a reader sees it at 80 columns: `man -l` (man-db) when present, else
/// groff or mandoc; overstrikes and colours removed. Panics, saying what to install, when
/// none of them is there.
fn render_80(page: &Path) -> String {
    use std::process::Command;
    let have = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let out = if have("man") {
        Command::new("man")
            .arg("-l")
            .arg(page)
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env_remove("MAN_KEEP_FORMATTING")
            .output()
    } else if have("groff") {
        Command::new("groff")
            .args(["-man", "-Tutf8", "-P-c", "-rLL=80n", "-rLT=80n"])
            .arg(page)
            .output()
    } else if have("mandoc") {
        Command::new("mandoc")
            .args(["-T", "utf8", "-O", "width=80"])
            .arg(page)
            .output()
    } else {
        panic!(
            "no man page renderer: install man-db or groff (Debian: groff-base), as .ci/run does"
        );
    }
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "rendering {} failed: {stderr}",
        page.display()
    );
    // Overstrike (`X\bX`, `_\bX`) and SGR sequences, if the renderer left any.
    let mut text = String::new();
    let raw = String::from_utf8(out.stdout).unwrap();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{8}' => {
                text.pop();
            }
            '\u{1b}' => {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            c => text.push(c),
        }
    }
    text
}

/// Text as words: hyphenation undone (groff marks it with U+2010), typographic quotes and
/// minus signs as ASCII, a break after a word's own hyphen closed, every run of whitespace
/// one space.
fn words(text: &str) -> String {
    let text = text
        .replace(['\u{2018}', '\u{2019}'], "'")
        .replace('\u{2212}', "-");
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    // Set after a hyphen at the end of a line: the next line continues the word.
    let mut joined = false;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            if !joined && !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            continue;
        }
        joined = false;
        let at_line_end = chars.peek() == Some(&'\n');
        match c {
            '\u{2010}' if at_line_end => joined = true,
            '\u{2010}' => out.push('-'),
            '-' if at_line_end && out.ends_with(|p: char| p.is_alphanumeric()) => {
                out.push('-');
                joined = true;
            }
            c => out.push(c),
        }
    }
    out.trim_end().to_string()
}

/// The text of section `name` of a rendered page: the indented lines after its heading, up
/// to the next line that is not indented (the next heading, or the footer).
fn section<'a>(rendered: &'a str, name: &str) -> Option<&'a str> {
    let start = rendered.find(&format!("\n{name}\n"))? + name.len() + 2;
    let rest = &rendered[start..];
    let mut end = 0;
    for line in rest.split_inclusive('\n') {
        if !line.trim().is_empty() && !line.starts_with(' ') {
            break;
        }
        end += line.len();
    }
    Some(&rest[..end])
}

/// Every page renders cleanly at 80 columns: its header and footer whole, no line wider, no
/// roff request or escape in the output, the synopsis naming option values, and the
/// after-help text there, word for word.
fn check_rendering(cmd: clap::Command) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let mut cmd = cmd;
    cmd.build();
    let mut commands = vec![(cmd.get_name().to_string(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        commands.push((
            format!("{}-{}", cmd.get_name(), sub.get_name()),
            sub.clone(),
        ));
    }
    let version = cmd.get_version().unwrap().to_string();
    for (title, sub) in commands {
        let page = dir.join(format!("{title}.1"));
        let text = render_80(&page);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let spaced = |l: &str| -> Vec<String> {
            l.split("  ")
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        };
        let head = format!("{title}(1)");
        assert_eq!(
            spaced(lines[0]),
            [head.as_str(), "User Commands", head.as_str()],
            "{title}: header {:?}",
            lines[0]
        );
        assert_eq!(
            spaced(lines[lines.len() - 1]),
            ["chain-node", version.as_str(), head.as_str()],
            "{title}: footer {:?}",
            lines[lines.len() - 1]
        );
        for l in text.lines() {
            assert!(
                l.chars().count() <= 80,
                "{title}: a line of {} columns: {l:?}",
                l.chars().count()
            );
            let t = l.trim_start();
            assert!(
                !(t.starts_with('.') && t[1..].starts_with(|c: char| c.is_ascii_alphabetic())),
                "{title}: a roff request in the output: {l:?}"
            );
            for esc in ["\\f", "\\(", "\\*", "\\-", "\\&", "\\e", "\\~", "\\c"] {
                assert!(
                    !l.contains(esc),
                    "{title}: a roff escape in the output: {l:?}"
                );
            }
        }
        let synopsis = words(section(&text, "SYNOPSIS").expect("a SYNOPSIS section"));
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            let (Some(long), Some(values)) = (arg.get_long(), arg.get_value_names()) else {
                continue;
            };
            if !arg.get_num_args().is_some_and(|n| n.takes_values()) {
                continue;
            }
            let want = format!("--{long} <{}>", values[0]);
            assert!(
                synopsis.contains(&want),
                "{title}: the synopsis lacks {want}: {synopsis}"
            );
        }
        if let Some(after) = sub.get_after_long_help().or_else(|| sub.get_after_help()) {
            let extra = words(section(&text, "EXTRA").expect("an EXTRA section"));
            assert_eq!(extra, words(&after.to_string()), "{title}: EXTRA");
        }
    }
}

#[test]
fn man_pages_render_cleanly_at_80_columns() {
    check_rendering(chain_node::keytool::command());
    check_rendering(chain_node::node::Config::command());
    check_rendering(chain_node::chainctl::command());
    // The synopsis of chaind as a reader sees it.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let synopsis = words(section(&render_80(&dir.join("chaind.1")), "SYNOPSIS").unwrap());
    assert!(
        synopsis.starts_with("chaind [--datadir <DIR>] [--config <FILE>]"),
        "{synopsis}"
    );
}
