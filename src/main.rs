//! e4inspect command-line entry point: parses arguments and dispatches to `cli::*`.

mod cli;

use clap::{CommandFactory, Parser, Subcommand};

const AFTER_HELP: &str = "\
EXIT STATUS:
  0 fine (warnings alone do not fail); 4 problems found (error-level findings of check, damage
  met by dump, xattrs, fit, extract); 8 operational error (not ext2/3/4, unreadable, truncated);
  16 usage error. The values are bits: over several images a command exits with the OR of each
  image's status (a clean, a damaged and a missing image: 4 | 8 = 12). A closed output pipe is
  not an error. See docs/exit-status.md.

DUMPE2FS COMPATIBILITY:
  `e4inspect dump` follows dumpe2fs 1.47.0 byte for byte (stdout; dumpe2fs' version banner is
  on stderr). Where 1.47.1 and later print differently, 1.47.0 is followed:
  - the labels `Inode size:` and `Journal device:` contain a tab then 10 spaces (1.47.1+: spaces);
  - superblock times are plain 32-bit values, and `Next check after` is lastcheck + interval in
    32-bit arithmetic (1.47.1+ adds the *_hi bytes as bits 32-39);
  - bigalloc free ranges end at the start of the last free cluster, and a single free cluster is
    one number (1.47.1+ ends ranges at the cluster's last block and always prints a range).
  Times are printed like ctime() in the local time zone (TZ honoured); uid/gid names come from
  the system's user database. When dumpe2fs cannot open a primary superblock it also prints what
  libblkid detects on the device (`X contains a ... file system`); e4inspect instead names the
  backup superblocks that look valid.";

/// Read-only inspector for ext2/3/4 images, partitioned disk images and block devices.
#[derive(Parser, Debug)]
#[command(
    name = "e4inspect",
    version,
    about,
    long_about = "Read-only inspector for ext2/3/4 filesystems in image files, partitioned disk \
images and block devices. Nothing is ever written to the input.",
    after_long_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print what dumpe2fs prints, byte for byte (or --json).
    Dump(cli::dump::DumpArgs),
    /// A read-only fsck: every e2fsck pass (superblock to directories and counts) as findings
    /// with rule IDs (exit 0 clean, 4 errors, 8 unreadable).
    Check(cli::check::CheckArgs),
    /// Show inodes like debugfs stat, with xattr locations and in-inode space (by number or path).
    Inode(cli::inode::InodeArgs),
    /// List a directory like `debugfs -R "ls [-l] [-d] [-p] [-r]"` (or --json).
    Ls(cli::ls::LsArgs),
    /// Write a file's contents to stdout like `debugfs -R "cat"` (holes as zeros).
    Cat(cli::cat::CatArgs),
    /// The paths of inode numbers, like `debugfs -R "ncheck [-c] INO..."` (or --json with every
    /// path of each inode).
    Ncheck(cli::ncheck::NcheckArgs),
    /// The inodes owning block numbers, like `debugfs -R "icheck BLOCK..."`; --explain says
    /// what each block is (superblock, bitmap, inode table, journal, extent tree, free...);
    /// --sector maps a device sector from a kernel I/O error to the file holding it.
    Icheck(cli::icheck::IcheckArgs),
    /// Scan all in-use inodes and summarise extended attributes and where they live.
    Xattrs(cli::xattrs::XattrsArgs),
    /// Find files by name, type, owner, size, time, flags and xattrs: the paths find(1) prints
    /// on a mount, without mounting (sorted; or JSON lines).
    Find(cli::find::FindArgs),
    /// Model whether xattrs fit in-inode, exactly as the kernel places them.
    Fit(cli::fit::FitArgs),
    /// Copy a file or subtree out of the image (like debugfs rdump) or into a tar archive,
    /// keeping metadata.
    Extract(cli::extract::ExtractArgs),
    /// Compare two images, or an image and a directory tree: paths added, removed, modified
    /// (with the fields that changed) and superblock differences (exit 0 equal, 4 differ).
    Diff(cli::diff::DiffArgs),
    /// A verified mkfs.ext4 command line from a workload description.
    Advise(cli::advise::AdviseArgs),
    /// Free-space fragmentation, as e2freefrag prints it (or --json).
    Freefrag(cli::freefrag::FreefragArgs),
    /// Quota usage, limits and grace per ID, as debugfs list_quota/get_quota print them (or --json).
    Quota(cli::quota::QuotaArgs),
    /// The jbd2 journal log, as debugfs logdump prints it (or --json).
    Journal(cli::journal::JournalArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// bash, zsh, fish, elvish or powershell
        shell: clap_complete::Shell,
    },
    /// Write the man pages (one per command) generated from this command line definition into
    /// DIR: `cargo run --release -- manpages man/`.
    #[command(hide = true)]
    Manpages {
        /// Directory to write `e4inspect.1`, `e4inspect-dump.1`, ... into.
        dir: std::path::PathBuf,
    },
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => cli::EXIT_USAGE,
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let res = match &cli.command {
        Command::Dump(a) => cli::dump::run(a),
        Command::Fit(a) => cli::fit::run(a),
        Command::Advise(a) => cli::advise::run(a),
        Command::Check(a) => cli::check::run(a),
        Command::Inode(a) => cli::inode::run(a.clone()),
        Command::Xattrs(a) => cli::xattrs::run(a.clone()),
        Command::Find(a) => cli::find::run(a),
        Command::Freefrag(a) => cli::freefrag::run(a),
        Command::Quota(a) => cli::quota::run(a),
        Command::Journal(a) => cli::journal::run(a),
        Command::Ls(a) => cli::ls::run(a),
        Command::Cat(a) => cli::cat::run(a),
        Command::Ncheck(a) => cli::ncheck::run(a),
        Command::Icheck(a) => cli::icheck::run(a),
        Command::Extract(a) => cli::extract::run(a),
        Command::Diff(a) => cli::diff::run(a),
        Command::Completions { shell } => {
            let script = cli::docgen::completions(&Cli::command(), *shell);
            cli::emit(&String::from_utf8_lossy(&script))
                .map(|()| 0)
                .map_err(Into::into)
        }
        Command::Manpages { dir } => cli::docgen::write_man_pages(&Cli::command(), dir)
            .map(|_| 0)
            .map_err(Into::into),
    };
    match res {
        // A report that went past a failed read of its input is incomplete: exit 8.
        Ok(code) => std::process::exit(cli::status_after_reads(code)),
        Err(e) => {
            // The status of an error: 0 for a closed pipe, 16 usage, 8 otherwise (cli::exit).
            let code = cli::exit::status_of(&e);
            if code != cli::EXIT_OK {
                eprintln!("e4inspect: {}", cli::one_line(&e));
            }
            std::process::exit(code);
        }
    }
}
