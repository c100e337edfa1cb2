//! Temporary entry point wiring only `e4inspect fit` (the lead owns main.rs; drop this commit).

mod cli;

use clap::Parser;

#[derive(clap::Parser)]
#[command(name = "e4inspect", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Subcommand)]
enum Cmd {
    Fit(cli::fit::FitArgs),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 16 } else { 0 });
        }
    };
    let code = match cli.cmd {
        Cmd::Fit(a) => cli::fit::run(&a).unwrap_or_else(|e| {
            eprintln!("e4inspect fit: {e:#}");
            8
        }),
    };
    std::process::exit(code);
}
