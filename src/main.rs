//! Temporary wiring of `advise` for testing on the advise branch (the lead owns main.rs).
use clap::{Parser, Subcommand};

mod cli;

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
    /// A verified mkfs.ext4 command line from a workload description.
    Advise(cli::advise::AdviseArgs),
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
    let code = match &cli.cmd {
        Cmd::Advise(a) => cli::advise::run(a),
    };
    match code {
        Ok(c) => std::process::exit(c),
        Err(e) => {
            eprintln!("e4inspect: {e:#}");
            std::process::exit(8);
        }
    }
}
