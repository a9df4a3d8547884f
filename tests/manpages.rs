//! The checked-in man pages must be what the clap definitions render. Regenerate with
//! `UPDATE_MAN=1 cargo test --release --test manpages`.

use std::path::Path;

fn check(cmd: clap::Command) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let update = std::env::var_os("UPDATE_MAN").is_some();
    let mut stale = Vec::new();
    for (name, text) in chain_node::manpage::render_all(cmd) {
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
