//! `e4inspect journal`: the jbd2 log, byte-identical to `debugfs -R "logdump [-acsOS] [-n N]
//! [-b BLOCK] [-i FILESPEC] [-f JOURNAL]"` on stdout, or JSON.

use super::{report_error, SourceArgs, EXIT_OK, EXIT_OPERATIONAL, EXIT_PROBLEMS};
use e4inspect::format::json::SchemaVersion;
use e4inspect::format::logdump as text;
use e4inspect::reader::fs::Filesystem;
use e4inspect::views::logdump::{
    self, DebugfsOpen, Event, ExternalJournal, InternalJournal, Options,
};
use std::io::Write;
use std::path::PathBuf;

/// Dump the journal: superblock, transactions with descriptor, revoke and commit blocks, tags,
/// and the fast-commit area (debugfs logdump).
#[derive(clap::Args, Debug, Clone)]
pub struct JournalArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Every tag and revoke record (logdump -a).
    #[arg(short = 'a')]
    pub all: bool,
    /// Hex dump of each logged block, with -a (logdump -c).
    #[arg(short = 'c')]
    pub contents: bool,
    /// Go on past the end of the valid log into old transactions (logdump -O).
    #[arg(short = 'O')]
    pub old: bool,
    /// Print the journal superblock first (logdump -S).
    #[arg(short = 'S')]
    pub superblock: bool,
    /// With -O: stop after N transactions (logdump -n).
    #[arg(short = 'n', value_name = "N", allow_hyphen_values = true, value_parser = parse_count)]
    pub count: Option<i64>,
    /// Trace one filesystem block through the log: its logged copies, its bit in logged copies
    /// of its block bitmap, its revocations (logdump -b; decimal, 0x hex or 0 octal).
    #[arg(short = 'b', value_name = "BLOCK", value_parser = parse_block)]
    pub block: Option<u64>,
    /// Trace the inode-table block holding an inode, `<INO>` or a path (logdump -i; debugfs
    /// counts 128-byte inodes whatever the inode size, and so does this).
    #[arg(short = 'i', value_name = "FILESPEC")]
    pub inode: Option<String>,
    /// Read the journal through the copy of its block map in the superblock (logdump -s).
    #[arg(short = 's')]
    pub use_backup: bool,
    /// Read the journal from this external journal device or file (logdump -f).
    #[arg(short = 'f', long = "journal-device", value_name = "PATH")]
    pub journal_device: Option<PathBuf>,
    /// Mark, on the log as it is on disk, what a replay (`--replay`, `e2fsck -E journal_only`)
    /// does with it: a line after each commit block saying whether its transaction is applied,
    /// and after the fast-commit area the tags e2fsck 1.47 applies that `--replay` does not.
    /// Without it the text is debugfs logdump's, byte for byte; `--json` always carries the
    /// marks (`replay`).
    #[arg(long)]
    pub replay_marks: bool,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// strtol(s, &end, 10) with nothing left over.
fn parse_count(arg: &str) -> Result<i64, String> {
    arg.trim_start()
        .parse::<i64>()
        .map_err(|_| format!("Bad log counts number - {arg}"))
}

/// strtoul(s, &end, 0) with nothing left over: leading blanks and a sign allowed, base from the
/// prefix, saturating at `u64::MAX` (debugfs' "Bad block number" otherwise).
fn parse_block(arg: &str) -> Result<u64, String> {
    let bad = || format!("Bad block number - {arg}");
    let text = arg.trim_start();
    let (neg, text) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) =
        if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            (16, hex)
        } else if text.len() > 1 && text.starts_with('0') {
            (8, &text[1..])
        } else {
            (10, text)
        };
    if digits.is_empty() {
        // strtoul parses nothing: the end is the start, and an empty argument is 0.
        return if arg.is_empty() { Ok(0) } else { Err(bad()) };
    }
    let mut value: u64 = 0;
    for ch in digits.chars() {
        let digit = ch.to_digit(radix).ok_or_else(bad)?;
        value = value
            .saturating_mul(u64::from(radix))
            .saturating_add(u64::from(digit));
    }
    Ok(if neg && value != u64::MAX {
        value.wrapping_neg()
    } else {
        value
    })
}

/// debugfs' string_to_inode: `<N>` (strtoul base 0, at most s_inodes_count), else a path from
/// the root. `Ok(0)` for `<0>`, on which debugfs silently does nothing.
fn string_to_inode(fs: &Filesystem, spec: &str) -> Result<u32, String> {
    if spec.len() > 2 && spec.starts_with('<') && spec.ends_with('>') {
        if let Ok(number) = parse_block(&spec[1..spec.len() - 1]) {
            if number <= u64::from(fs.sb.inodes_count) {
                return Ok(number as u32);
            }
        }
    }
    e4inspect::reader::namei::resolve(fs, spec.as_bytes()).map_err(|e| e.to_string())
}

/// What debugfs made of the filesystem: the filesystem and whether it ignores checksums, or
/// nothing when it could not open it.
type Opened<'a> = Option<(&'a Filesystem, bool)>;

/// The step's value, or `Err(status)`: stop here with this exit status.
type Step<T> = anyhow::Result<Result<T, i32>>;

/// Run the command; returns the exit status.
pub fn run(args: &JournalArgs) -> anyhow::Result<i32> {
    let mut opts = options(args);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut open = args.source.open_options();
    if args.replay_marks || args.output.json() {
        // The marks are about the log on disk: it is walked as it is, the plan beside it.
        open.replay = false;
    }
    let fs = Filesystem::open(&args.image, &open);
    let marks = fs
        .as_ref()
        .ok()
        .map(|filesystem| replay_plan(args, filesystem));
    if let Ok(filesystem) = &fs {
        super::watch_reads(filesystem);
        if !args.replay_marks {
            args.source.note_recovery(filesystem);
        }
        let e2image = e4inspect::reader::container::ContainerKind::E2image;
        if filesystem.source.container() == Some(e2image) && args.journal_device.is_none() {
            anyhow::bail!(
                "{}: the journal {} (e2image file: superblock, descriptors, bitmaps and inode tables only)",
                args.image.display(),
                e4inspect::error::ABSENT
            );
        }
    }
    let opened = open_as_debugfs(args, &fs, &mut out)?;
    if let Some(spec) = &args.inode {
        if let Err(status) = trace_inode(args, opened, spec, &mut opts, &mut out)? {
            return Ok(status);
        }
    }
    if let Some(block) = args.block {
        opts.trace = trace_block(opened, block, opts.trace);
    }
    let journal = match open_journal(args, opened, opts, &mut out)? {
        Ok(j) => j,
        Err(status) => return Ok(status),
    };
    let marks = marks.as_ref();
    let outcome = if args.output.json() {
        walk_json(args, journal.source(), opened, opts, marks, &mut out)?
    } else {
        let marks = marks.filter(|_| args.replay_marks);
        match walk_text(journal.source(), opened, opts, marks, &mut out) {
            Ok(outcome) => outcome,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(EXIT_OK),
            Err(e) => return Err(e.into()),
        }
    };
    match out.flush() {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(EXIT_OK),
        Err(e) => return Err(e.into()),
    }
    Ok(if outcome.cut_short || outcome.read_error {
        EXIT_PROBLEMS
    } else {
        EXIT_OK
    })
}

/// The logdump options the arguments ask for (JSON always shows the superblock and verifies).
fn options(args: &JournalArgs) -> Options {
    Options {
        all: args.all,
        old: args.old,
        superblock: args.superblock || args.output.json(),
        contents: args.contents,
        count: args.count.unwrap_or(-1),
        verify: args.output.json(),
        trace: Default::default(),
    }
}

/// What debugfs makes of the filesystem before logdump runs, with its retry message.
fn open_as_debugfs<'a>(
    args: &JournalArgs,
    fs: &'a e4inspect::Result<Filesystem>,
    out: &mut dyn Write,
) -> std::io::Result<Opened<'a>> {
    let fs = match fs {
        Ok(fs) => fs,
        Err(e) => {
            report_error(&args.image, e);
            return Ok(None);
        }
    };
    match logdump::debugfs_open(fs) {
        DebugfsOpen::Open {
            retried,
            ignore_csum,
        } => {
            if retried && !args.output.json() {
                writeln!(out, "Checksum errors in superblock!  Retrying...")?;
            }
            Ok(Some((fs, ignore_csum)))
        }
        DebugfsOpen::Fails(m) => {
            if fs.strict_failure.is_some() && !fs.geo.journal_dev && !args.output.json() {
                writeln!(out, "Checksum errors in superblock!  Retrying...")?;
            }
            out.flush()?;
            report_error(&args.image, &m);
            Ok(None)
        }
    }
}

/// `-i`: trace the inode-table block of an inode. debugfs needs the filesystem for it, and
/// says where the inode is before anything else.
fn trace_inode(
    args: &JournalArgs,
    opened: Opened,
    spec: &str,
    opts: &mut Options,
    out: &mut dyn Write,
) -> Step<()> {
    let Some((fs, _)) = opened else {
        out.flush()?;
        return Ok(Err(EXIT_OPERATIONAL));
    };
    let ino = match string_to_inode(fs, spec) {
        Ok(0) => return Ok(Err(EXIT_OK)),
        Ok(n) => n,
        Err(m) => {
            out.flush()?;
            report_error(&args.image, &format!("{spec}: {m}"));
            return Ok(Err(EXIT_OPERATIONAL));
        }
    };
    let Some(trace) = logdump::Trace::for_inode(fs, ino, opts.trace) else {
        out.flush()?;
        report_error(
            &args.image,
            &format!("inode {ino}: its group has no descriptor"),
        );
        return Ok(Err(EXIT_OPERATIONAL));
    };
    opts.trace = trace;
    if !args.output.json() {
        let group = (ino - 1) / fs.sb.inodes_per_group;
        writeln!(
            out,
            "Inode {ino} is at group {group}, block {}, offset {}",
            trace.inode_block, trace.inode_offset
        )?;
    }
    Ok(Ok(()))
}

/// `-b`: trace one block, keeping the inode part of the trace already set by `-i`.
fn trace_block(opened: Opened, block: u64, inode_part: logdump::Trace) -> logdump::Trace {
    let mut trace = match opened {
        Some((fs, _)) => logdump::Trace::for_block(fs, block),
        None => logdump::Trace {
            block,
            ..Default::default()
        },
    };
    trace.inode = inode_part.inode;
    trace.inode_block = inode_part.inode_block;
    trace.inode_offset = inode_part.inode_offset;
    trace
}

/// The journal to walk: an external device or file, or the journal inode.
enum Journal<'a> {
    External(ExternalJournal),
    Internal(InternalJournal<'a>),
}

impl Journal<'_> {
    fn source(&self) -> &dyn logdump::JournalSource {
        match self {
            Journal::External(j) => j,
            Journal::Internal(j) => j,
        }
    }
}

/// An external journal opened from a path, or the exit status after saying why not.
fn open_external(path: &std::path::Path, out: &mut dyn Write) -> Step<Journal<'static>> {
    match ExternalJournal::open(path) {
        Ok(j) => Ok(Ok(Journal::External(j))),
        Err(e) => {
            out.flush()?;
            report_error(path, &e);
            Ok(Err(EXIT_OPERATIONAL))
        }
    }
}

/// The journal `-f`, the journal inode (`-s`: through the superblock's backup of its block
/// map) or the external journal the superblock names, as debugfs finds it.
fn open_journal<'a>(
    args: &JournalArgs,
    opened: Opened<'a>,
    opts: Options,
    out: &mut dyn Write,
) -> Step<Journal<'a>> {
    if let Some(path) = &args.journal_device {
        return open_external(path, out);
    }
    let Some((fs, ignore)) = opened else {
        out.flush()?;
        return Ok(Err(EXIT_OPERATIONAL));
    };
    let ino = fs.sb.journal_inum;
    if ino == 0 {
        return open_journal_by_uuid(args, fs, opts, out);
    }
    let journal = if args.use_backup {
        InternalJournal::from_backup(fs, ino)
    } else {
        InternalJournal::open(fs, ino, ignore)
    };
    match journal {
        Ok(journal) => Ok(Ok(Journal::Internal(journal))),
        Err(m) => {
            out.flush()?;
            report_error(&args.image, &format!("{m} while reading inode {ino}"));
            Ok(Err(EXIT_OPERATIONAL))
        }
    }
}

/// No journal inode: debugfs asks blkid for the device by journal UUID, then by device number.
fn open_journal_by_uuid(
    args: &JournalArgs,
    fs: &Filesystem,
    opts: Options,
    out: &mut dyn Write,
) -> Step<Journal<'static>> {
    let Some(path) = logdump::find_external_journal(&fs.sb.journal_uuid, fs.sb.journal_dev) else {
        out.flush()?;
        return no_journal_found(args, fs, opts, out).map(Err);
    };
    if !args.output.json() {
        writeln!(out, "Using external journal found at {}", path.display())?;
    }
    open_external(&path, out)
}

/// No journal at all is nothing to show (exit 0); an external journal that cannot be found is
/// a journal that cannot be read (exit 8).
fn no_journal_found(
    args: &JournalArgs,
    fs: &Filesystem,
    opts: Options,
    out: &mut dyn Write,
) -> anyhow::Result<i32> {
    if !fs
        .sb
        .has_compat(e4inspect::reader::features::COMPAT_HAS_JOURNAL)
    {
        report_error(&args.image, &"filesystem has no journal");
        if args.output.json() {
            // Still one document: a journal of kind `none`, with nothing in it.
            let doc = JournalDocument {
                schema_version: SchemaVersion,
                image: args.image.display().to_string(),
                journal: "none",
                options: opts,
                events: Vec::new(),
                outcome: logdump::Outcome::default(),
                replay: None,
            };
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
            out.flush()?;
        }
        return Ok(EXIT_OK);
    }
    let msg = format!(
        "filesystem has no journal here: it is external (UUID {}) and no device \
         holds it; name it with --journal-device PATH",
        e4inspect::reader::superblock::uuid_string(&fs.sb.journal_uuid)
    );
    report_error(&args.image, &msg);
    Ok(EXIT_OPERATIONAL)
}

/// The filesystem block size and inode size the walk needs (debugfs' defaults without one).
fn fs_sizes(opened: Opened) -> (Option<u32>, usize) {
    let fs_bs = opened.map(|(fs, _)| fs.block_size() as u32);
    let inode_size = opened.map_or(128, |(fs, _)| fs.sb.inode_size() as usize);
    (fs_bs, inode_size)
}

/// Walk the log collecting the events, then write them as one JSON document.
fn walk_json(
    args: &JournalArgs,
    src: &dyn logdump::JournalSource,
    opened: Opened,
    opts: Options,
    marks: Option<&ReplayPlan>,
    out: &mut dyn Write,
) -> anyhow::Result<logdump::Outcome> {
    let (fs_bs, inode_size) = fs_sizes(opened);
    let mut events = Vec::new();
    let outcome = logdump::walk(src, fs_bs, inode_size, opts, &mut |e| {
        events.push(e);
        Ok(())
    })?;
    let replay = marks.map(|m| replay_marks_json(m, &events));
    let doc = JournalDocument {
        schema_version: SchemaVersion,
        image: args.image.display().to_string(),
        journal: if args.journal_device.is_some() {
            "external"
        } else {
            "internal"
        },
        options: opts,
        events,
        outcome: outcome.clone(),
        replay,
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)?;
    Ok(outcome)
}

/// Walk the log writing debugfs' text as it goes (logged inode copies as debugfs stat text).
fn walk_text(
    src: &dyn logdump::JournalSource,
    opened: Opened,
    opts: Options,
    marks: Option<&ReplayPlan>,
    out: &mut dyn Write,
) -> std::io::Result<logdump::Outcome> {
    let (fs_bs, inode_size) = fs_sizes(opened);
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    let outcome = logdump::walk(src, fs_bs, inode_size, opts, &mut |e: Event| {
        if let (Event::InodeCopy { ino, raw }, Some((fs, _))) = (&e, opened) {
            writeln!(out, "    (inode block for inode {ino}):")?;
            e4inspect::format::debugfs_stat::logdump_inode_text(fs, *ino, raw, out)?;
            return inode_blocks(out, raw);
        }
        text::write_event(out, &mut err, &e)?;
        if let (Some(plan), Some(tid)) = (marks, commit_of(&e)) {
            match applies(plan, tid) {
                Ok(blocks) => writeln!(
                    out,
                    "  [replay applies transaction {tid}: {blocks} blocks written]"
                )?,
                Err(why) => writeln!(out, "  [replay does not apply transaction {tid}: {why}]")?,
            }
        }
        Ok(())
    })?;
    if let Some(plan) = marks {
        fast_commit_marks(plan, out)?;
    }
    Ok(outcome)
}

/// The recovery plan beside the log: `Err` says why there is none.
type ReplayPlan = Result<e4inspect::reader::replay::Plan, String>;

fn replay_plan(args: &JournalArgs, fs: &Filesystem) -> ReplayPlan {
    let external = args
        .journal_device
        .as_deref()
        .or(args.source.journal.as_deref());
    match e4inspect::reader::replay::pending(fs, external) {
        None => Err("the filesystem needs no recovery (needs_recovery is clear)".into()),
        Some(Ok(plan)) => Ok(plan),
        Some(Err(e)) => Err(format!("the journal cannot be replayed: {e}")),
    }
}

/// The transaction of a printed commit block.
fn commit_of(event: &Event) -> Option<u32> {
    match event {
        Event::Block {
            sequence,
            blocktype,
            quiet: false,
            ..
        } if *blocktype == e4inspect::reader::ondisk::journal::COMMIT_BLOCK => Some(*sequence),
        _ => None,
    }
}

/// Blocks a replay writes for transaction `tid`, or why it does not apply it.
fn applies(replay: &ReplayPlan, tid: u32) -> Result<u64, String> {
    let plan = replay.as_ref().map_err(Clone::clone)?;
    if let Some(transaction) = plan
        .transactions
        .iter()
        .find(|transaction| transaction.tid == tid)
    {
        return Ok(transaction.replayed);
    }
    if let Some(failure) = plan.failures.first() {
        return Err(format!("recovery fails ({failure})"));
    }
    if plan.failed_commit == Some(tid) {
        return Err("its commit block fails its checksum: the log ends before it".into());
    }
    Err(format!(
        "it is not part of the log recovery replays (transactions {} to {})",
        plan.start_tid,
        plan.end_tid.wrapping_sub(1)
    ))
}

/// After the fast-commit area: what e2fsck 1.47 applies from it that `--replay` does not.
fn fast_commit_marks(replay: &ReplayPlan, out: &mut dyn Write) -> std::io::Result<()> {
    let Ok(plan) = replay else { return Ok(()) };
    if let Some(fc) = &plan.fast_commit {
        writeln!(
            out,
            "[replay: e2fsck 1.47 applies {} tags of fast-commit transaction {}; --replay does not apply:]",
            fc.tags, fc.tid
        )?;
        for op in &fc.ops {
            writeln!(out, "  [{} {op}]", op.tag())?;
        }
        if fc.more_ops > 0 {
            writeln!(out, "  [and {} more]", fc.more_ops)?;
        }
    }
    for failure in &plan.failures {
        if let e4inspect::reader::replay::Failure::FastCommit { .. } = failure {
            writeln!(out, "[replay: {failure}]")?;
        }
    }
    Ok(())
}

/// What a replay does with the log, for JSON.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct ReplayMarks {
    /// Why there is no replay (no recovery needed, or the journal cannot be replayed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub none: Option<String>,
    /// Each transaction whose commit block the walk shows: applied by a replay or not.
    pub transactions: Vec<TransactionMark>,
    /// Why recovery fails, if it does (e2fsck's verdict; nothing is then replayed).
    pub failures: Vec<String>,
    /// The fast-commit transaction e2fsck 1.47 applies after the log, which `--replay` does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_commit: Option<FastCommitMark>,
}

/// One transaction of the log.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct TransactionMark {
    /// Transaction ID.
    pub transaction: u32,
    /// A replay applies it.
    pub applied: bool,
    /// Blocks the replay writes for it (0 when not applied).
    pub blocks: u64,
    /// Why it is not applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
}

/// The fast-commit transaction that follows the log.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct FastCommitMark {
    /// Its transaction ID.
    pub transaction: u32,
    /// Tags e2fsck 1.47 replays (HEAD, TAIL and PAD included).
    pub tags: u64,
    /// Applied by `--replay`: always false (reported, not applied).
    pub applied: bool,
    /// The tags that change the filesystem, in replay order.
    pub ops: Vec<FastCommitOp>,
    /// Such tags beyond those listed.
    pub more_ops: u64,
    /// Inodes whose record, blocks or entries they change.
    pub inodes: Vec<u32>,
}

/// One fast-commit tag.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct FastCommitOp {
    /// Its name as e2fsprogs names it (`ADD_RANGE`, `DEL_RANGE`, `CREAT_DENTRY`, `ADD_ENTRY`,
    /// `DEL_ENTRY`, `INODE`).
    pub tag: &'static str,
    /// What it changes.
    pub change: String,
}

fn replay_marks_json(replay: &ReplayPlan, events: &[Event]) -> ReplayMarks {
    let transactions = events
        .iter()
        .filter_map(commit_of)
        .map(|tid| {
            let verdict = applies(replay, tid);
            TransactionMark {
                transaction: tid,
                applied: verdict.is_ok(),
                blocks: *verdict.as_ref().unwrap_or(&0),
                why_not: verdict.err(),
            }
        })
        .collect();
    let plan = replay.as_ref().ok();
    ReplayMarks {
        none: replay.as_ref().err().cloned(),
        transactions,
        failures: plan
            .map(|p| p.failures.iter().map(ToString::to_string).collect())
            .unwrap_or_default(),
        fast_commit: plan
            .and_then(|p| p.fast_commit.as_ref())
            .map(|fc| FastCommitMark {
                transaction: fc.tid,
                tags: fc.tags,
                applied: false,
                ops: fc
                    .ops
                    .iter()
                    .map(|op| FastCommitOp {
                        tag: op.tag(),
                        change: op.to_string(),
                    })
                    .collect(),
                more_ops: fc.more_ops,
                inodes: fc.inodes(),
            }),
    }
}

/// The `journal --json` document.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct JournalDocument {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The image as given.
    pub image: String,
    /// `internal` (the journal inode), `external` (`--journal-device`), or `none` (the
    /// filesystem has no journal: no events).
    pub journal: &'static str,
    /// The logdump options in effect.
    pub options: logdump::Options,
    /// What the walk found, in debugfs' order.
    pub events: Vec<logdump::Event>,
    /// How the walk ended.
    pub outcome: logdump::Outcome,
    /// What a replay does with this log (absent when the filesystem could not be opened).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayMarks>,
}

/// logdump's own list of the copy's block pointers after the inode text: runs of consecutive
/// direct blocks as `(first+count): block`, then the indirect blocks.
fn inode_blocks(out: &mut dyn Write, raw: &[u8]) -> std::io::Result<()> {
    let i_block = e4inspect::reader::inode::Inode::parse(raw).block;
    let word = |slot: usize| {
        i_block
            .get(4 * slot..4 * slot + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut line = String::from("    Blocks:  ");
    let show = |line: &mut String, start: i64, end: usize, first: u32| {
        if start >= 0 && first != 0 {
            line.push_str(&format!("({start}+{}): {first} ", end as i64 - start));
        }
    };
    let (mut first, mut prev, mut start) = (0u32, 0u32, -1i64);
    for slot in 0..12 {
        let this = word(slot);
        if start >= 0 && this == prev.wrapping_add(1) {
            prev = this;
            continue;
        }
        show(&mut line, start, slot, first);
        start = slot as i64;
        first = this;
        prev = this;
    }
    show(&mut line, start, 12, first);
    for (slot, name) in [(12, "IND"), (13, "DIND"), (14, "TIND")] {
        if word(slot) != 0 {
            line.push_str(&format!("({name}): {} ", word(slot)));
        }
    }
    writeln!(out, "{line}")
}
