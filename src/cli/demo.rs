//! `ghostbench demo`: the product's story on examples embedded in the binary.
//!
//! Until the `layout` verb lands, the demo runs `compare` on two embedded shell
//! loops, one doing 10% more work than the other, and says so. Then it runs
//! `probe --quick` (under 3 s), so the story ends with what misalignment
//! costs on the machine at hand.

use super::compare::{CompareArgs, OrderArg};
use super::output::OutputArgs;
use anyhow::Result;
use clap::Args;
use std::time::Duration;

/// A shell loop of N iterations: the same code on both sides, only the work differs.
const LOOP: &str = "i=0; while [ $i -lt N ]; do i=$((i+1)); done";

#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Seed for run order, jitter and bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: DemoArgs) -> Result<i32> {
    println!("ghostbench demo: the layout demo (C++ dispatch under many layouts) arrives with the `layout` verb.");
    println!("For now it runs `compare` on two embedded shell loops; B does 10% more iterations than A.\n");
    let compare_args = CompareArgs {
        command_a: LOOP.replace('N', "20000"),
        command_b: LOOP.replace('N', "22000"),
        names: vec!["loop-20k".into(), "loop-22k".into()],
        shell: true,
        metrics: vec!["wall".into()],
        higher_is_better: false,
        margin: 1.0,
        alpha: 0.05,
        warmup: 1,
        min_runs: 5,
        max_runs: 60,
        max_time: Duration::from_secs(60),
        order: OrderArg::Abba,
        no_env_jitter: false,
        no_spawn_correction: false,
        pin: None,
        prepare: None,
        timeout: Some(Duration::from_secs(30)),
        counters: true,
        simulate: false,
        seed: args.seed,
        output: args.output.clone(),
    };
    let code = super::compare::execute(&compare_args.to_options()?, &args.output)?;
    println!("\nWhat does misalignment cost on this machine? `ghostbench probe --quick`:\n");
    let probe_output = OutputArgs {
        json: None,
        markdown: None,
        ..args.output.clone()
    };
    let probe_options = crate::probe::ProbeOptions {
        only: crate::probe::ProbeKind::ALL.to_vec(),
        quick: true,
        budget: None,
        seed: args.seed,
        command_line: std::env::args().collect(),
    };
    let probe_code = super::probe::execute(&probe_options, &probe_output)?;
    Ok(if code == super::exit::OK {
        probe_code
    } else {
        code
    })
}
