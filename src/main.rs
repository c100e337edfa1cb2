//! e4inspect command-line entry point: parses arguments and dispatches to `cli::*`.

mod cli;

use clap::{CommandFactory, Parser, Subcommand};

/// Read-only inspector for ext2/3/4 images, partitioned disk images and block devices.
#[derive(Parser, Debug)]
#[command(name = "e4inspect", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print what dumpe2fs prints, byte for byte (or --json).
    Dump(cli::dump::DumpArgs),
    /// Validate superblock, descriptors, bitmaps, counts and journal superblock (rule IDs;
    /// exit 0 clean, 4 errors, 8 unreadable).
    Check(cli::check::CheckArgs),
    /// Print shell completions.
    Completions {
        /// bash, zsh, fish, elvish or powershell
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) generated from this command line definition.
    #[command(hide = true)]
    Manpage,
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
        Command::Check(a) => cli::check::run(a),
        Command::Completions { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(*shell, &mut cmd, "e4inspect", &mut std::io::stdout());
            Ok(0)
        }
        Command::Manpage => {
            let man = clap_mangen::Man::new(Cli::command());
            let mut out = Vec::new();
            match man.render(&mut out) {
                Ok(()) => {
                    use std::io::Write;
                    let _ = std::io::stdout().write_all(&out);
                    Ok(0)
                }
                Err(e) => Err(e.into()),
            }
        }
    };
    match res {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("e4inspect: {e:#}");
            std::process::exit(cli::EXIT_OPERATIONAL);
        }
    }
}
