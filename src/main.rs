//! Test wiring of the `inode` and `xattrs` subcommands (the lead owns the real main.rs).

mod cli;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "e4inspect",
    version,
    about = "Read-only inspector for ext2/3/4 images"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Show inodes like debugfs stat, with xattr locations and space.
    Inode(cli::inode::InodeArgs),
    /// Scan all in-use inodes and summarise extended attributes.
    Xattrs(cli::xattrs::XattrsArgs),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 16 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let r = match cli.cmd {
        Cmd::Inode(a) => cli::inode::run(a),
        Cmd::Xattrs(a) => cli::xattrs::run(a),
    };
    match r {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("e4inspect: {e:#}");
            std::process::exit(8);
        }
    }
}
