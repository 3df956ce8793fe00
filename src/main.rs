//! The `ghostbench` binary: parse arguments, run the verb, exit with its code.

use clap::Parser;

fn main() {
    let cli = ghostbench::cli::Cli::parse();
    std::process::exit(ghostbench::cli::run(cli));
}
