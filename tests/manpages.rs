//! The checked-in man pages must be what the clap definitions render. Regenerate with
//! `UPDATE_MAN=1 cargo test --release --test manpages`.

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
