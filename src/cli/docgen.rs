//! Man pages (clap_mangen) and shell completions (clap_complete), generated from the clap
//! definition so that they cannot drift from the command line.
//!
//! Both are made from [`documented`]: the command tree without hidden commands, with value hints
//! the parser itself does not need (profile names, rule IDs and families, sizes and counts that
//! are not file names). `e4inspect manpages DIR` writes one page per command (`e4inspect.1`,
//! `e4inspect-dump.1`, ...); `tests/cli_meta.rs` fails when `man/` differs and rewrites it with
//! `E4INSPECT_BLESS=1`.

use std::path::Path;

use clap::builder::PossibleValuesParser;
use clap::{Arg, Command, ValueHint};

/// The footer of every page.
const SOURCE: &str = concat!("e4inspect ", env!("CARGO_PKG_VERSION"));

/// Long options that take rule IDs or rule families (`check --allow/--warn/--deny ...`).
const RULE_ARGS: &[&str] = &["allow", "warn", "deny", "rule", "rules", "only", "skip"];

/// Value names of arguments that take a number, a size or a word: never a file name.
const NOT_A_PATH: &[&str] = &[
    "SIZE",
    "BYTES",
    "N",
    "PCT",
    "L",
    "VERSION",
    "NAME=SIZE",
    "CHUNK_KB",
    "N[,N]",
    "OPT[,OPT]",
];

/// The command tree as documented: hidden subcommands dropped (at every level), value hints
/// added.
pub fn documented(cmd: &Command) -> Command {
    let mut top = Command::new("e4inspect")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true);
    if let Some(a) = cmd.get_about() {
        top = top.about(a.clone());
    }
    if let Some(a) = cmd.get_long_about() {
        top = top.long_about(a.clone());
    }
    if let Some(a) = cmd.get_after_long_help() {
        top = top.after_long_help(a.clone());
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        top = top.subcommand(with_hints(sub.clone()));
    }
    top
}

/// Value hints on one subcommand's arguments.
fn with_hints(mut cmd: Command) -> Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        cmd = cmd.mut_arg(id, hint);
    }
    cmd
}

fn hint(arg: Arg) -> Arg {
    let long = arg.get_long().unwrap_or_default();
    let value_name = arg
        .get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.as_str().to_string());
    if long == "profile" {
        let names: Vec<&'static str> = e4inspect::models::profiles::PROFILES
            .iter()
            .map(|p| p.name)
            .collect();
        return arg.value_parser(PossibleValuesParser::new(names));
    }
    if RULE_ARGS.contains(&long) {
        let mut values: Vec<&'static str> = e4inspect::check::RULES
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        values.extend_from_slice(e4inspect::check::rules::FAMILIES);
        return arg.value_parser(PossibleValuesParser::new(values));
    }
    if value_name.is_some_and(|v| NOT_A_PATH.contains(&v.as_str())) {
        return arg.value_hint(ValueHint::Other);
    }
    arg
}

/// Every man page: (file name, roff). The top page's SEE ALSO names every command's page.
pub fn man_pages(cmd: &Command) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut doc = documented(cmd).disable_help_subcommand(true);
    doc.build();
    let mut pages = Vec::new();
    let mut see_also = Vec::new();
    for sub in doc.get_subcommands() {
        let man = clap_mangen::Man::new(sub.clone()).source(SOURCE);
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        see_also.push(man.get_filename());
        pages.push((man.get_filename(), roff));
    }
    let top = clap_mangen::Man::new(doc).source(SOURCE);
    let mut roff = Vec::new();
    top.render(&mut roff)?;
    roff.extend_from_slice(b".SH \"SEE ALSO\"\n");
    let refs: Vec<String> = see_also
        .iter()
        .map(|f| {
            let (name, section) = f.rsplit_once('.').unwrap_or((f, "1"));
            format!("\\fB{}\\fR({section})", name.replace('-', "\\-"))
        })
        .collect();
    roff.extend_from_slice(refs.join(", ").as_bytes());
    roff.extend_from_slice(b", \\fBdumpe2fs\\fR(8), \\fBdebugfs\\fR(8), \\fBe2fsck\\fR(8), \\fBmke2fs\\fR(8), \\fBe2freefrag\\fR(8)\n");
    pages.insert(0, (top.get_filename(), roff));
    Ok(pages)
}

/// Write every man page into `dir`.
pub fn write_man_pages(cmd: &Command, dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for (name, roff) in man_pages(cmd)? {
        std::fs::write(dir.join(&name), roff)?;
        names.push(name);
    }
    Ok(names)
}

/// The completion script for `shell`.
pub fn completions(cmd: &Command, shell: clap_complete::Shell) -> Vec<u8> {
    let mut doc = documented(cmd);
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut doc, "e4inspect", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_options_offer_the_catalogue_and_sizes_no_files() {
        let cmd = Command::new("e4inspect")
            .subcommand(
                Command::new("check")
                    .arg(Arg::new("allow").long("allow").value_name("RULE"))
                    .arg(Arg::new("size").long("size").value_name("SIZE")),
            )
            .subcommand(Command::new("secret").hide(true));
        let doc = documented(&cmd);
        assert!(doc.find_subcommand("secret").is_none());
        let check = doc.find_subcommand("check").unwrap();
        let allow = check
            .get_arguments()
            .find(|a| a.get_id() == "allow")
            .unwrap();
        let values: Vec<String> = allow
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        for r in e4inspect::check::RULES {
            assert!(values.iter().any(|v| v == r.id.as_str()), "{}", r.id);
        }
        assert!(values.iter().any(|v| v == "sb"));
        let size = check
            .get_arguments()
            .find(|a| a.get_id() == "size")
            .unwrap();
        assert_eq!(size.get_value_hint(), ValueHint::Other);
    }
}
