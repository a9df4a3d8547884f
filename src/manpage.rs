//! Man pages rendered from the clap definitions, so that `man/` never drifts from `--help`.

/// The roff text of the man page of `cmd`, with its subcommands listed.
pub fn render(cmd: clap::Command) -> Vec<u8> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out).expect("rendering to memory cannot fail");
    out
}
