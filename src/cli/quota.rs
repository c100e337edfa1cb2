//! `e4inspect quota`: the stored usage, limits and grace times per ID, byte-identical to
//! `debugfs -R "list_quota TYPE"` (and `get_quota TYPE ID` for one ID), or JSON.

use super::{report_error, SourceArgs, EXIT_OK, EXIT_OPERATIONAL};
use e4inspect::format::json::SchemaVersion;
use e4inspect::reader::features::RO_COMPAT_QUOTA;
use e4inspect::reader::fs::Filesystem;
use e4inspect::reader::quota::{self, Dquot, QuotaInfo, QuotaType};
use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;

/// Quota type names on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TypeArg {
    /// User quotas (owner IDs).
    User,
    /// Group quotas.
    Group,
    /// Project quotas.
    Project,
}

impl From<TypeArg> for QuotaType {
    fn from(t: TypeArg) -> QuotaType {
        match t {
            TypeArg::User => QuotaType::User,
            TypeArg::Group => QuotaType::Group,
            TypeArg::Project => QuotaType::Project,
        }
    }
}

/// Print the quota files: usage, limits and grace per ID (debugfs list_quota / get_quota).
#[derive(clap::Args, Debug, Clone)]
pub struct QuotaArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// One ID only (debugfs get_quota; an ID without an entry prints zeros). Needs --type.
    #[arg(requires = "qtype")]
    pub id: Option<u32>,
    /// Quota type (default: every type the superblock has a quota inode for).
    #[arg(long = "type", short = 't', value_enum, value_name = "TYPE")]
    pub qtype: Option<TypeArg>,
    /// Output format (JSON: the same entries, with the header info).
    #[command(flatten)]
    pub output: super::OutputArgs,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// `--json` output.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct QuotaDocument {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The image as given.
    pub image: String,
    /// One entry per quota type listed.
    pub quotas: Vec<QuotaFileJson>,
}

/// One quota file.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct QuotaFileJson {
    /// user, group or project.
    #[serde(rename = "type")]
    pub qtype: QuotaType,
    /// Its inode (0: none).
    pub inode: u32,
    /// Header info (absent when the file could not be opened).
    pub info: Option<QuotaInfo>,
    /// Entries, in debugfs' order (or the one ID asked for).
    pub entries: Vec<Dquot>,
    /// Why the file could not be opened, or damage met in its tree.
    pub problems: Vec<String>,
}

const HEADER_COLS: [&str; 6] = ["space", "quota", "limit", "inodes", "quota", "limit"];

/// debugfs' header line (`%7s %2s   %8s %8s %8s    %8s %8s %8s`).
fn header(t: QuotaType) -> String {
    let c = HEADER_COLS;
    format!(
        "{:>7} {:>2}   {:>8} {:>8} {:>8}    {:>8} {:>8} {:>8}\n",
        t.name(),
        "id",
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        c[5]
    )
}

/// debugfs' `list_quota_callback` line (`%10u   %8lld %8lld %8lld    %8lld %8lld %8lld`).
fn row(d: &Dquot) -> String {
    // debugfs prints the 64-bit fields as signed long long.
    let s = |v: u64| v as i64;
    format!(
        "{:>10}   {:>8} {:>8} {:>8}    {:>8} {:>8} {:>8}\n",
        d.id,
        s(d.space),
        s(d.space_soft),
        s(d.space_hard),
        s(d.inodes),
        s(d.inodes_soft),
        s(d.inodes_hard)
    )
}

/// Run the command; returns the exit status.
pub fn run(args: &QuotaArgs) -> anyhow::Result<i32> {
    let o = args.source.open_options();
    let fs = match Filesystem::open(&args.image, &o) {
        Ok(fs) => fs,
        Err(e) => {
            report_error(&args.image, &e);
            return Ok(EXIT_OPERATIONAL);
        }
    };
    if !fs.sb.has_ro_compat(RO_COMPAT_QUOTA) {
        report_error(&args.image, &"quota feature not enabled");
        return Ok(EXIT_OPERATIONAL);
    }
    let types: Vec<QuotaType> = match args.qtype {
        Some(t) => vec![t.into()],
        None => QuotaType::ALL
            .into_iter()
            .filter(|t| t.inode(&fs) != 0)
            .collect(),
    };
    let json = args.output.json();
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let mut status = EXIT_OK;
    let mut doc = Vec::new();
    for t in types {
        let mut file = QuotaFileJson {
            qtype: t,
            inode: t.inode(&fs),
            info: None,
            entries: Vec::new(),
            problems: Vec::new(),
        };
        let mut qf = match quota::open(&fs, t) {
            Ok(q) => q,
            Err(e) => {
                report_error(
                    &args.image,
                    &format!("{e} while opening quota inode (type {})", t.index()),
                );
                file.problems.push(e.to_string());
                doc.push(file);
                status = EXIT_OPERATIONAL;
                continue;
            }
        };
        file.info = Some(qf.info);
        if !json {
            w.write_all(header(t).as_bytes())?;
        }
        if let Some(id) = args.id {
            let d = quota::find(&mut qf.blocks, id);
            if json {
                file.entries.push(d);
            } else {
                w.write_all(row(&d).as_bytes())?;
            }
        } else {
            let mut err = None;
            let rep = quota::scan(&mut qf.blocks, &qf.info, |d| {
                if json {
                    file.entries.push(*d);
                } else if let Err(e) = w.write_all(row(d).as_bytes()) {
                    err = Some(e);
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            if let Some(e) = err {
                return Err(e.into());
            }
            file.problems = rep.problems;
        }
        doc.push(file);
    }
    if json {
        let d = QuotaDocument {
            schema_version: SchemaVersion,
            image: args.image.display().to_string(),
            quotas: doc,
        };
        serde_json::to_writer_pretty(&mut w, &d)?;
        writeln!(w)?;
    }
    w.flush()?;
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_row_follow_debugfs_widths() {
        assert_eq!(
            header(QuotaType::User),
            "   user id      space    quota    limit      inodes    quota    limit\n"
        );
        let d = Dquot {
            id: 1000,
            space: 21504,
            inodes: 21,
            ..Dquot::default()
        };
        assert_eq!(
            row(&d),
            "      1000      21504        0        0          21        0        0\n"
        );
    }
}
