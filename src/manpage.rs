//! Man pages rendered from the clap definitions, so that `man/` never drifts from `--help`.
//!
//! clap_mangen renders the title, name, description, options and version; the synopsis and
//! the after-help text are rendered here, because clap_mangen's synopsis leaves out option
//! values (`[--datadir]` for `[--datadir <DIR>]`) and its after-help is one line per source
//! line, which runs indented lists into the margin. Pages go two levels deep (`chainctl`,
//! `chainctl-admin`): a deeper command (one method of a module) is described in its parent's
//! page, whose names then fit the header line of an 80-column terminal.

use clap_mangen::roff::{bold, italic, roman, Inline, Roff};
use clap_mangen::Man;

/// The manual a page belongs to: the centre of its header line.
const MANUAL: &str = "User Commands";

/// The package the pages come with: the left of their footer line.
const SOURCE: &str = "chain-node";

/// What the roff library writes first in every piece it renders; kept once per page.
const PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

/// Stands for an unbreakable space in rendered text, replaced by roff's `\~` at the end
/// (the roff library escapes backslashes, so `\~` cannot be written through it).
const NBSP: char = '\u{a0}';

/// The man pages of `cmd`: `(file name, roff text)` for the program itself and one per
/// subcommand (`<program>-<subcommand>.1`, as git does), global options included. Deeper
/// subcommands get no page of their own; their parent's after-help describes them.
pub fn render_all(mut cmd: clap::Command) -> Vec<(String, Vec<u8>)> {
    cmd.build();
    let name = cmd.get_name().to_string();
    let version = cmd.get_version().unwrap_or_default().to_string();
    let mut pages = vec![(
        format!("{name}.1"),
        render(&cmd, &name, &name, &version, true),
    )];
    for sub in subcommands(&cmd) {
        let sub_name = format!("{name}-{}", sub.get_name());
        let sub_bin = format!("{name} {}", sub.get_name());
        pages.push((
            format!("{sub_name}.1"),
            render(sub, &sub_name, &sub_bin, &version, false),
        ));
    }
    pages
}

/// The subcommands that get a page: all but clap's `help`.
fn subcommands(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands()
        .filter(|s| s.get_name() != "help" && !s.is_hide_set())
}

/// The page of `cmd`, titled `name`, invoked as `bin`, of the package's `version`.
/// `pages_below`: its subcommands have pages, which a SUBCOMMANDS section lists.
fn render(cmd: &clap::Command, name: &str, bin: &str, version: &str, pages_below: bool) -> Vec<u8> {
    let page = cmd.clone().name(name.to_string()).bin_name(bin.to_string());
    // The footer reads `SOURCE  DATE  TITLE(1)`; the version stands in the date's place,
    // which must not be empty (an empty argument would shift the others).
    let man = Man::new(page.clone())
        .title(name)
        .date(version)
        .source(SOURCE)
        .manual(MANUAL);
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut part = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut v = Vec::new();
        f(&mut v).expect("rendering to memory cannot fail");
        parts.push(v);
    };
    part(&|w| man.render_title(w));
    part(&|w| man.render_name_section(w));
    part(&|w| synopsis(&page, bin).to_writer(w));
    part(&|w| man.render_description_section(w));
    if page.get_arguments().any(|a| !a.is_hide_set()) {
        part(&|w| man.render_options_section(w));
    }
    if pages_below && subcommands(&page).next().is_some() {
        part(&|w| subcommand_section(&page, name).to_writer(w));
    }
    if let Some(text) = page.get_after_long_help().or_else(|| page.get_after_help()) {
        part(&|w| extra(&text.to_string()).to_writer(w));
    }
    if page.get_version().is_some() {
        part(&|w| man.render_version_section(w));
    }
    let mut out = PREAMBLE.as_bytes().to_vec();
    for p in parts {
        out.extend_from_slice(p.strip_prefix(PREAMBLE.as_bytes()).unwrap_or(&p));
    }
    let nbsp = NBSP.to_string();
    String::from_utf8(out)
        .expect("roff text is UTF-8")
        .replace(&nbsp, "\\~")
        .into_bytes()
}

/// SYNOPSIS: `bin [--opt <VALUE>]... [-h|--help] <ARG> [ARG]... <COMMAND>`, each option with
/// its value name, unbreakable inside its brackets.
fn synopsis(cmd: &clap::Command, bin: &str) -> Roff {
    let mut line: Vec<Inline> = vec![bold(bin)];
    for arg in cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
    {
        let (open, close) = if arg.is_required_set() {
            ("", "")
        } else {
            ("[", "]")
        };
        line.push(roman(format!(" {open}")));
        match (arg.get_short(), arg.get_long()) {
            (Some(s), Some(l)) => {
                line.push(bold(format!("-{s}")));
                line.push(roman("|"));
                line.push(bold(format!("--{l}")));
            }
            (Some(s), None) => line.push(bold(format!("-{s}"))),
            (None, Some(l)) => line.push(bold(format!("--{l}"))),
            (None, None) => continue,
        }
        let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values());
        if takes_value {
            for v in arg.get_value_names().unwrap_or_default() {
                line.push(roman(NBSP.to_string()));
                line.push(italic(format!("<{v}>")));
            }
        }
        line.push(roman(close));
    }
    for arg in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let names: Vec<String> = arg
            .get_value_names()
            .map(|v| v.iter().map(|n| n.to_string()).collect())
            .unwrap_or_else(|| vec![arg.get_id().to_string()]);
        let many = arg
            .get_num_args()
            .is_some_and(|n| n.max_values() > names.len());
        let (open, close) = if arg.is_required_set() {
            ("<", ">")
        } else {
            ("[", "]")
        };
        line.push(roman(format!(" {open}")));
        line.push(italic(names.join(" ")));
        line.push(roman(format!("{close}{}", if many { "..." } else { "" })));
    }
    if cmd.has_subcommands() {
        let what = cmd.get_subcommand_value_name().unwrap_or("COMMAND");
        let (open, close) = if cmd.is_subcommand_required_set() {
            ("<", ">")
        } else {
            ("[", "]")
        };
        line.push(roman(format!(" {open}")));
        line.push(italic(what));
        line.push(roman(close));
    }
    let mut roff = Roff::new();
    roff.control("SH", ["SYNOPSIS"]);
    // Neither hyphenate option names nor stretch the spaces between them.
    roff.control("nh", []);
    roff.control("ad", ["l"]);
    roff.text(line);
    roff.control("ad", ["b"]);
    roff.control("hy", []);
    roff
}

/// SUBCOMMANDS: each subcommand's page and its one-line summary.
fn subcommand_section(cmd: &clap::Command, name: &str) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["SUBCOMMANDS"]);
    for sub in subcommands(cmd) {
        roff.control("TP", []);
        roff.text([roman(format!("{name}-{}(1)", sub.get_name()))]);
        if let Some(about) = sub.get_about().or_else(|| sub.get_long_about()) {
            roff.text([roman(about.to_string())]);
        }
    }
    roff
}

/// EXTRA: the after-help text. A blank line separates paragraphs; a line indented by two
/// spaces and followed by lines indented deeper is a list item (its first line, then the
/// others indented, one per line); other lines indented by two spaces are set one per line,
/// indented; the rest is filled text.
fn extra(text: &str) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["EXTRA"]);
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut i = 0;
    let mut in_block = false;
    while i < lines.len() {
        let line = lines[i];
        if line.trim().is_empty() {
            if in_block {
                roff.control("RE", []);
                in_block = false;
            }
            roff.control("PP", []);
            i += 1;
            continue;
        }
        if indent(line) >= 2 {
            let mut j = i + 1;
            let mut body = Vec::new();
            while j < lines.len() && !lines[j].trim().is_empty() && indent(lines[j]) > indent(line)
            {
                body.push(lines[j].trim());
                j += 1;
            }
            if body.is_empty() {
                if !in_block {
                    roff.control("RS", ["2"]);
                    in_block = true;
                } else {
                    roff.control("br", []);
                }
                roff.text([roman(line.trim())]);
            } else {
                if in_block {
                    roff.control("RE", []);
                    in_block = false;
                }
                roff.control("sp", []);
                roff.text([roman(line.trim())]);
                roff.control("RS", ["4"]);
                for (k, b) in body.iter().enumerate() {
                    if k > 0 {
                        roff.control("br", []);
                    }
                    roff.text([roman(*b)]);
                }
                roff.control("RE", []);
            }
            i = j;
            continue;
        }
        if in_block {
            roff.control("RE", []);
            in_block = false;
        }
        roff.text([roman(line)]);
        i += 1;
    }
    if in_block {
        roff.control("RE", []);
    }
    roff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_in_the_after_help_become_tagged_paragraphs() {
        let roff = extra("Intro text\n  first <a>\n      What it does\n      Returns: x\n\n  plain line\n  another\nEnd")
            .to_roff();
        assert_eq!(
            roff,
            ".SH EXTRA\nIntro text\n.sp\nfirst <a>\n.RS 4\nWhat it does\n.br\nReturns: x\n.RE\n.PP\n.RS 2\nplain line\n.br\nanother\n.RE\nEnd\n"
        );
    }

    #[test]
    fn the_synopsis_names_option_values() {
        let cmd = clap::Command::new("t")
            .arg(clap::Arg::new("dir").long("datadir").value_name("DIR"))
            .arg(
                clap::Arg::new("v")
                    .short('v')
                    .long("verbose")
                    .action(clap::ArgAction::SetTrue),
            )
            .arg(clap::Arg::new("args").value_name("ARGS").num_args(0..));
        let mut cmd = cmd;
        cmd.build();
        let roff = synopsis(&cmd, "t").to_roff();
        assert!(
            roff.contains("[\\fB\\-\\-datadir\\fR\u{a0}\\fI<DIR>\\fR]"),
            "{roff}"
        );
        assert!(
            roff.contains("[\\fB\\-v\\fR|\\fB\\-\\-verbose\\fR]"),
            "{roff}"
        );
        assert!(roff.contains("[\\fIARGS\\fR]..."), "{roff}");
    }
}
