//! Man pages rendered from the clap definitions, so that `man/` never drifts from `--help`.

/// The man pages of `cmd`: `(file name, roff text)` for the program itself and one per
/// subcommand at every depth (`<program>-<subcommand>.1`, as git does), global options
/// included.
pub fn render_all(mut cmd: clap::Command) -> Vec<(String, Vec<u8>)> {
    cmd.build();
    let name = cmd.get_name().to_string();
    let mut pages = Vec::new();
    collect(&cmd, &name, &name, &mut pages);
    pages
}

/// Renders `cmd` as `<name>.1` (invoked as `bin`) and recurses into its subcommands, so that
/// every page a SUBCOMMANDS section points to exists.
fn collect(cmd: &clap::Command, name: &str, bin: &str, pages: &mut Vec<(String, Vec<u8>)>) {
    let page = cmd.clone().name(name.to_string()).bin_name(bin.to_string());
    pages.push((format!("{name}.1"), render(page)));
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let sub_name = format!("{name}-{}", sub.get_name());
        let sub_bin = format!("{bin} {}", sub.get_name());
        collect(sub, &sub_name, &sub_bin, pages);
    }
}

fn render(cmd: clap::Command) -> Vec<u8> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .expect("rendering to memory cannot fail");
    out
}
