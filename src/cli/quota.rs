//! `e4inspect quota`: the stored usage, limits and grace times per ID, byte-identical to
//! `debugfs -R "list_quota TYPE"` (and `get_quota TYPE ID` for one ID), or JSON.

use super::{report_error, SourceArgs, EXIT_OK, EXIT_OPERATIONAL, EXIT_PROBLEMS};
use e4inspect::format::json::SchemaVersion;
use e4inspect::models::quota::{QuotaUsage, Usage};
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
    fn from(arg: TypeArg) -> QuotaType {
        match arg {
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
    /// Also compute the usage from the inodes, as e2fsck's pass 1 charges it (a full read-only
    /// walk, as `check`): a line whose stored usage differs gets `!= computed SPACE INODES`
    /// after debugfs' columns, IDs charged but without an entry follow the listing, and JSON
    /// entries get `computed`. Exit 4 when any usage differs. Without it the output is
    /// debugfs' alone.
    #[arg(long)]
    pub computed: bool,
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
    pub entries: Vec<QuotaEntryJson>,
    /// With `--computed`: IDs the inodes charge but the file has no entry for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<MissingEntryJson>,
    /// Why the file could not be opened, or damage met in its tree.
    pub problems: Vec<String>,
}

/// One stored entry, with the computed usage where it differs.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct QuotaEntryJson {
    /// The entry as stored.
    #[serde(flatten)]
    pub stored: Dquot,
    /// With `--computed`: the usage the inodes add up to, when it differs from the stored one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub computed: Option<Usage>,
}

/// An ID charged by the inodes without an entry in the quota file (`Missing quota entry`).
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct MissingEntryJson {
    /// The ID.
    pub id: u32,
    /// The usage the inodes add up to.
    pub computed: Usage,
}

/// The computed usage that differs from the stored one (`None` without `--computed`).
struct Computed<'a> {
    usage: Option<&'a QuotaUsage>,
}

impl Computed<'_> {
    /// The computed usage of `dquot.id`, when it differs from what `dquot` stores.
    fn differs(&self, qtype: QuotaType, dquot: &Dquot) -> Option<Usage> {
        let computed = self.usage?.get(qtype, dquot.id);
        (computed.space != dquot.space || computed.inodes != dquot.inodes).then_some(computed)
    }
}

/// The note after a row whose stored usage differs from the computed one.
fn computed_note(usage: &Usage) -> String {
    format!("   != computed {:>8} {:>8}", usage.space, usage.inodes)
}

const HEADER_COLS: [&str; 6] = ["space", "quota", "limit", "inodes", "quota", "limit"];

/// debugfs' header line (`%7s %2s   %8s %8s %8s    %8s %8s %8s`).
fn header(qtype: QuotaType) -> String {
    let cols = HEADER_COLS;
    format!(
        "{:>7} {:>2}   {:>8} {:>8} {:>8}    {:>8} {:>8} {:>8}\n",
        qtype.name(),
        "id",
        cols[0],
        cols[1],
        cols[2],
        cols[3],
        cols[4],
        cols[5]
    )
}

/// debugfs' `list_quota_callback` line (`%10u   %8lld %8lld %8lld    %8lld %8lld %8lld`).
fn row(dquot: &Dquot) -> String {
    // debugfs prints the 64-bit fields as signed long long.
    let signed = |v: u64| v as i64;
    format!(
        "{:>10}   {:>8} {:>8} {:>8}    {:>8} {:>8} {:>8}\n",
        dquot.id,
        signed(dquot.space),
        signed(dquot.space_soft),
        signed(dquot.space_hard),
        signed(dquot.inodes),
        signed(dquot.inodes_soft),
        signed(dquot.inodes_hard)
    )
}

/// Run the command; returns the exit status.
pub fn run(args: &QuotaArgs) -> anyhow::Result<i32> {
    let open = args.source.open_options();
    let fs = match Filesystem::open(&args.image, &open) {
        Ok(fs) => fs,
        Err(e) => {
            report_error(&args.image, &e);
            return Ok(EXIT_OPERATIONAL);
        }
    };
    super::watch_reads(&fs);
    if !fs.sb.has_ro_compat(RO_COMPAT_QUOTA) {
        report_error(&args.image, &"quota feature not enabled");
        return Ok(EXIT_OPERATIONAL);
    }
    let types: Vec<QuotaType> = match args.qtype {
        Some(qtype) => vec![qtype.into()],
        None => QuotaType::ALL
            .into_iter()
            .filter(|qtype| qtype.inode(&fs) != 0)
            .collect(),
    };
    let usage = if args.computed {
        let opts = e4inspect::check::CheckOptions {
            offset: args.source.offset,
            partition: args.source.partition,
            ..Default::default()
        };
        match e4inspect::check::check_path(&args.image, &opts) {
            Ok(report) => report.quota_usage,
            Err(e) => {
                report_error(&args.image, &e);
                return Ok(EXIT_OPERATIONAL);
            }
        }
    } else {
        None
    };
    let computed = Computed {
        usage: usage.as_deref(),
    };
    let json = args.output.json();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut status = EXIT_OK;
    let mut doc = Vec::new();
    for qtype in types {
        let file = list_quota_file(&fs, args, qtype, &computed, &mut out, &mut status)?;
        doc.push(file);
    }
    if json {
        let document = QuotaDocument {
            schema_version: SchemaVersion,
            image: args.image.display().to_string(),
            quotas: doc,
        };
        serde_json::to_writer_pretty(&mut out, &document)?;
        writeln!(out)?;
    }
    out.flush()?;
    Ok(status)
}

/// One quota file: its header and rows (text) or its entries (JSON, returned), the one ID
/// asked for or every entry, then with `--computed` the IDs charged but without an entry. A
/// file that cannot be opened is reported and sets exit 8; a usage that differs sets exit 4
/// (whichever comes later wins, as the status is overwritten in file order).
fn list_quota_file(
    fs: &Filesystem,
    args: &QuotaArgs,
    qtype: QuotaType,
    computed: &Computed<'_>,
    out: &mut dyn Write,
    status: &mut i32,
) -> anyhow::Result<QuotaFileJson> {
    let json = args.output.json();
    let mut file = QuotaFileJson {
        qtype,
        inode: qtype.inode(fs),
        info: None,
        entries: Vec::new(),
        missing: Vec::new(),
        problems: Vec::new(),
    };
    let mut qf = match quota::open(fs, qtype) {
        Ok(opened) => opened,
        Err(e) => {
            report_error(
                &args.image,
                &format!("{e} while opening quota inode (type {})", qtype.index()),
            );
            file.problems.push(e.to_string());
            *status = EXIT_OPERATIONAL;
            return Ok(file);
        }
    };
    file.info = Some(qf.info);
    if !json {
        out.write_all(header(qtype).as_bytes())?;
    }
    let mut stored_ids = std::collections::HashSet::new();
    let mut entry = |dquot: &Dquot, out: &mut dyn Write| -> std::io::Result<()> {
        stored_ids.insert(dquot.id);
        let differs = computed.differs(qtype, dquot);
        if differs.is_some() {
            *status = EXIT_PROBLEMS;
        }
        if json {
            file.entries.push(QuotaEntryJson {
                stored: *dquot,
                computed: differs,
            });
            return Ok(());
        }
        let line = row(dquot);
        match differs {
            Some(usage) => writeln!(
                out,
                "{}{}",
                line.trim_end_matches('\n'),
                computed_note(&usage)
            ),
            None => out.write_all(line.as_bytes()),
        }
    };
    if let Some(id) = args.id {
        let dquot = quota::find(&mut qf.blocks, id);
        entry(&dquot, out)?;
        return Ok(file);
    }
    let mut write_error = None;
    let scanned = quota::scan(&mut qf.blocks, &qf.info, |dquot| {
        if let Err(err) = entry(dquot, out) {
            write_error = Some(err);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    if let Some(err) = write_error {
        return Err(err.into());
    }
    file.problems = scanned.problems;
    if let Some(usage) = computed.usage {
        for id in usage
            .ids(qtype)
            .into_iter()
            .filter(|id| !stored_ids.contains(id))
        {
            let charged = usage.get(qtype, id);
            if charged == Usage::default() {
                continue;
            }
            *status = EXIT_PROBLEMS;
            if !json {
                writeln!(out, "{id:>10}   (no entry){}", computed_note(&charged))?;
            }
            file.missing.push(MissingEntryJson {
                id,
                computed: charged,
            });
        }
    }
    Ok(file)
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
        let dquot = Dquot {
            id: 1000,
            space: 21504,
            inodes: 21,
            ..Dquot::default()
        };
        assert_eq!(
            row(&dquot),
            "      1000      21504        0        0          21        0        0\n"
        );
    }
}
