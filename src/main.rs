//! Temporary entry point wiring `e4inspect check` for testing on the `check` branch; the lead's
//! main.rs replaces it.

mod cli;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "e4inspect", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate superblock, descriptors, bitmaps, counts and journal superblock (rule IDs).
    Check(cli::check::CheckArgs),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 16,
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let res = match &cli.command {
        Command::Check(a) => cli::check::run(a),
    };
    match res {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("e4inspect: {e:#}");
            std::process::exit(8);
        }
    }
}
