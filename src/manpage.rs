//! Man pages rendered from the clap definitions, so that `man/` never drifts from `--help`.

/// The man pages of `cmd`: `(file name, roff text)` for the program itself and one per
/// subcommand (`<program>-<subcommand>.1`, as git does), global options included.
pub fn render_all(mut cmd: clap::Command) -> Vec<(String, Vec<u8>)> {
    cmd.build();
    let program = cmd.get_name().to_string();
    let mut pages = vec![(format!("{program}.1"), render(cmd.clone()))];
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let name = format!("{program}-{}", sub.get_name());
        let page = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("{program} {}", sub.get_name()));
        pages.push((format!("{name}.1"), render(page)));
    }
    pages
}

fn render(cmd: clap::Command) -> Vec<u8> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .expect("rendering to memory cannot fail");
    out
}
