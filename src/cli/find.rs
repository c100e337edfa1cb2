//! `e4inspect find IMAGE [PATH]`: the paths whose names and inodes pass every test given, as
//! `find(1)` prints them on a mount of the image (sorted; see `views::find`), NUL-terminated
//! with `--print0`, or one JSON object per line with `--json`.

use anyhow::Context;
use e4inspect::format::json::SchemaVersion;
use e4inspect::reader::fs::Filesystem;
use e4inspect::reader::inode::Inode;
use e4inspect::reader::namei;
use e4inspect::views::find::{self, Cmp, Query, SizeTest, XattrTest};
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Find files by name, type, owner, size, time, flags and xattrs (like find(1) on a mount).
///
/// Every test given must pass (find's implicit -a). Paths are printed from PATH as given, sorted
/// (a directory before its contents, names byte by byte) where find(1) prints readdir order: the
/// same paths, in a stable order.
#[derive(clap::Args, Debug, Clone)]
pub struct FindArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Where to start: a path from the root of the image (the last component not followed, as
    /// find -P).
    #[arg(default_value = "/")]
    pub path: String,
    /// Base name matches the shell pattern GLOB (fnmatch without flags, as find -name: `*` and
    /// `?` match a leading dot; bytes, as in the C locale).
    #[arg(long, value_name = "GLOB")]
    pub name: Option<String>,
    /// File type, one or several letters separated by commas: f regular, d directory, l symbolic
    /// link, b block device, c character device, p fifo, s socket.
    #[arg(long = "type", value_name = "f|d|l|b|c|p|s", value_parser = parse_types)]
    pub types: Option<TypeSet>,
    /// Has xattr NAME (full name, `user.foo`); `NAME=VALUE`: with exactly that value (as
    /// `setfattr -v` reads it: text, "text", 0x hex, 0s base64); `NAME=~REGEX`: a value the
    /// regular expression matches (on the value's bytes). Repeatable: all must pass.
    #[arg(long, value_name = "NAME[=VALUE|=~REGEX]", value_parser = XattrTest::parse)]
    pub xattr: Vec<XattrTest>,
    /// Xattrs not all in the inode body (some in the external block or an EA inode).
    #[arg(long)]
    pub spills: bool,
    /// Owner uid: N, +N (more than N) or -N (less than N).
    #[arg(long, value_name = "[+-]N", value_parser = Cmp::parse, allow_hyphen_values = true)]
    pub uid: Option<Cmp>,
    /// Group gid: N, +N or -N.
    #[arg(long, value_name = "[+-]N", value_parser = Cmp::parse, allow_hyphen_values = true)]
    pub gid: Option<Cmp>,
    /// Project ID: N, +N or -N (i_projid; 0 without the project feature, as the kernel says).
    #[arg(long, value_name = "[+-]N", value_parser = Cmp::parse, allow_hyphen_values = true)]
    pub projid: Option<Cmp>,
    /// Size as find -size: [+-]N[cwbkMG], in units rounded up (default unit b: 512 bytes; so
    /// -1M is only empty files, as in find).
    #[arg(long, value_name = "[+-]N[cwbkMG]", value_parser = SizeTest::parse, allow_hyphen_values = true)]
    pub size: Option<SizeTest>,
    /// Modified strictly after TIME (nanoseconds counted): a date (`@SECONDS[.FRAC]`,
    /// `YYYY-MM-DD[ HH:MM[:SS]]` in UTC, like find -newermt with TZ=UTC) or, when it is not
    /// one, a path in the image whose modification time is taken (like find -newer).
    #[arg(long, value_name = "TIME|PATH")]
    pub newer: Option<String>,
    /// Inode flags all set: names as debugfs prints them (IMMUTABLE, EXTENTS ...; any case,
    /// comma-separated) or lsattr letters (`i`, `e`, `ie` ...).
    #[arg(long, value_name = "NAMES|LETTERS", value_parser = find::parse_flags)]
    pub flags: Option<u32>,
    /// Inode number: N, +N or -N (find -inum).
    #[arg(long = "inode", value_name = "[+-]N", value_parser = Cmp::parse, allow_hyphen_values = true)]
    pub inum: Option<Cmp>,
    /// End each path with a NUL byte instead of a newline (find -print0).
    #[arg(long = "print0", short = '0')]
    pub print0: bool,
    /// Output format (`--json`: one JSON object per line, docs/schema/find.schema.json).
    #[command(flatten)]
    pub output: super::OutputArgs,
    /// Where the filesystem lies inside the image.
    #[command(flatten)]
    pub source: super::SourceArgs,
}

/// The i_mode types of `--type`.
#[derive(Clone, Debug)]
pub struct TypeSet(Vec<u16>);

/// `--type f,d` as i_mode types.
fn parse_types(spec: &str) -> Result<TypeSet, String> {
    spec.split(',')
        .map(|item| {
            let mut chars = item.chars();
            match (chars.next(), chars.next()) {
                (Some(letter), None) => find::TYPE_LETTERS
                    .iter()
                    .find(|(x, _)| *x == letter)
                    .map(|(_, m)| *m)
                    .ok_or_else(|| format!("`{item}`: not one of f d l b c p s")),
                _ => Err(format!("`{item}`: one letter of f d l b c p s")),
            }
        })
        .collect::<Result<Vec<u16>, String>>()
        .map(TypeSet)
}

/// One line of `find --json`: a path found and its inode.
#[derive(Serialize, JsonSchema)]
pub struct FindRecord {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The path as find prints it (bytes that are not UTF-8 shown as U+FFFD).
    pub path: String,
    /// Inode number.
    pub inode: u32,
    /// Type letter as find -type takes it (`f`, `d`, `l`, `b`, `c`, `p`, `s`; `?` unknown).
    #[serde(rename = "type")]
    pub kind: String,
    /// Permission bits and set-id/sticky bits, octal text (`0644`).
    pub mode: String,
    /// i_size.
    pub size: u64,
    /// Owner uid.
    pub uid: u32,
    /// Group gid.
    pub gid: u32,
    /// Project ID (0 without the project feature, as the kernel reports it).
    pub projid: u32,
    /// Hard links (i_links_count).
    pub links: u16,
    /// Modification time, seconds since the epoch.
    pub mtime: i64,
    /// The xattrs an `--xattr` test names (empty without one).
    pub xattrs: Vec<XattrJson>,
}

/// An xattr of a found inode.
#[derive(Serialize, JsonSchema)]
pub struct XattrJson {
    /// Full name.
    pub name: String,
    /// `inode`, `block` or `ea_inode`.
    pub location: String,
    /// Value size in bytes.
    pub value_size: u32,
    /// The value as text when it is UTF-8 (a trailing NUL dropped), else null.
    pub text: Option<String>,
    /// The value in hex (null when it could not be read).
    pub hex: Option<String>,
}

/// The query the arguments describe (`--newer PATH` resolved in the image).
fn query_of(fs: &Filesystem, args: &FindArgs) -> anyhow::Result<Query> {
    let newer = match &args.newer {
        None => None,
        Some(t) => Some(match find::parse_date(t) {
            Some(d) => d,
            None => {
                let what = || format!("{}: --newer {t}", args.image.display());
                let ino = namei::resolve(fs, t.as_bytes())
                    .with_context(|| format!("{}: not a date nor a path in the image", what()))?;
                let raw = fs.inode_raw(ino).with_context(what)?;
                find::mtime_of(&Inode::parse(&raw))
            }
        }),
    };
    Ok(Query {
        name: args.name.as_ref().map(|n| n.as_bytes().to_vec()),
        types: args.types.clone().map(|t| t.0).unwrap_or_default(),
        xattrs: args.xattr.clone(),
        spills: args.spills,
        uid: args.uid,
        gid: args.gid,
        projid: args.projid,
        inum: args.inum,
        size: args.size,
        newer,
        flags: args.flags.unwrap_or(0),
    })
}

/// Run the subcommand: 0 fine, 4 when damage was met (directories or inode tables that could
/// not be read: the paths under them are missing), 8 when the image or PATH cannot be opened.
pub fn run(args: &FindArgs) -> anyhow::Result<i32> {
    let fs = Filesystem::open(&args.image, &args.source.open_options())
        .with_context(|| format!("{}", args.image.display()))?;
    super::watch_reads(&fs);
    args.source.note_recovery(&fs);
    let query = query_of(&fs, args)?;
    let start_ino = namei::resolve(&fs, args.path.as_bytes())
        .with_context(|| format!("{}: {}", args.image.display(), args.path))?;
    let found = find::find(&fs, args.path.as_bytes(), start_ino, &query);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    for (path, ino) in found.paths.iter() {
        if args.output.json() {
            let rec = record(&fs, &query, path, ino);
            serde_json::to_writer(&mut out, &rec)?;
            out.write_all(b"\n")?;
        } else {
            out.write_all(path)?;
            out.write_all(if args.print0 { b"\0" } else { b"\n" })?;
        }
    }
    out.flush()?;
    for problem in &found.problems {
        super::say(format_args!(
            "{}: {}",
            args.image.display(),
            e4inspect::format::escape::c_string(problem.message.as_bytes())
        ));
    }
    if found.problem_count > found.problems.len() as u64 {
        super::say(format_args!(
            "{}: {} more problems",
            args.image.display(),
            found.problem_count - found.problems.len() as u64
        ));
    }
    Ok(if found.problem_count > 0 { 4 } else { 0 })
}

/// The JSON line of one path.
fn record(fs: &Filesystem, query: &Query, path: &[u8], ino: u32) -> FindRecord {
    let raw = fs.inode_raw(ino).unwrap_or_default();
    let ind = Inode::parse(&raw);
    let xattrs = query
        .matching_xattrs(fs, &raw)
        .into_iter()
        .map(|x| XattrJson {
            name: x.name,
            location: x.location.kind().to_string(),
            value_size: x.value_size,
            text: x.value.as_ref().and_then(|value| {
                let value = value.strip_suffix(b"\0").unwrap_or(value);
                std::str::from_utf8(value).ok().map(str::to_string)
            }),
            hex: x
                .value
                .as_ref()
                .map(|v| v.iter().map(|b| format!("{b:02x}")).collect()),
        })
        .collect();
    FindRecord {
        schema_version: SchemaVersion,
        path: String::from_utf8_lossy(path).into_owned(),
        inode: ino,
        kind: find::type_letter(ind.mode).to_string(),
        mode: format!("{:04o}", ind.mode & 0o7777),
        size: ind.size,
        uid: ind.uid,
        gid: ind.gid,
        projid: find::projid_of(fs, &ind),
        links: ind.links_count,
        mtime: find::mtime_of(&ind).0,
        xattrs,
    }
}
