//! One command measured alone, for a baseline: `compare --save-baseline NAME
//! CMD` stores its runs, `compare --baseline NAME CMD` compares them with the
//! stored ones. Warm-ups, then runs until `--max-runs` or `--max-time`,
//! with the same runner, metrics and jitter as an A/B comparison; raw wall
//! times (no process-start correction), as the stored baseline has them.

use super::{CompareOptions, State};
use crate::run::command::CommandSpec;
use crate::run::environment::{self, Environment};
use crate::run::{Prepared, RunRecord, Status};
use anyhow::Result;
use serde::Serialize;
use std::time::Instant;

/// The schema of a single command's document.
pub const SCHEMA: &str = crate::doc::Schema::Baseline.name();

/// What measuring one command gave: its JSON document is this, as is.
#[derive(Debug, Clone, Serialize)]
pub struct Single {
    pub schema: &'static str,
    pub schema_version: u32,
    /// One command, as in a compare document's `commands[]`.
    pub commands: Vec<CommandSpec>,
    pub settings: CompareOptions,
    pub status: Status<State>,
    pub environment: Environment,
    pub elapsed_s: f64,
    pub runs: Vec<RunRecord>,
}

/// Measure `options.commands[which]` alone. Errors are setup problems (a
/// command that cannot be found); a failed run ends up in the status.
pub fn measure(options: &CompareOptions, which: usize) -> Result<Single> {
    let started = Instant::now();
    let spec = options.commands[which.min(1)].clone();
    let command = Prepared::new(&spec)?;
    let environment = environment::capture(env!("CARGO_PKG_VERSION"), &options.command_line);
    let mut runner = options.runner(Vec::new())?;
    let mut runs = Vec::new();
    let mut status = Status::new(State::Decided, None);
    let total = options.warmup + options.max_runs;
    for round in 0..total {
        let warmup = round < options.warmup;
        let measured = round.saturating_sub(options.warmup);
        if !warmup && measured >= options.min_runs && started.elapsed() >= options.max_time {
            status = Status::new(State::BudgetExhausted, None);
            break;
        }
        match runner.run(&command, 0, round, warmup) {
            Ok(record) => runs.push(record),
            Err(failure) => {
                status = Status::from_failure(failure, State::Interrupted, State::Failed);
                break;
            }
        }
    }
    Ok(Single {
        schema: SCHEMA,
        schema_version: crate::doc::Schema::Baseline.version(),
        commands: vec![spec],
        settings: CompareOptions {
            spawn_correction: false,
            ..options.clone()
        },
        status,
        environment,
        elapsed_s: started.elapsed().as_secs_f64(),
        runs,
    })
}

impl Single {
    /// The measured (not warm-up) runs.
    pub fn measured(&self) -> impl Iterator<Item = &RunRecord> {
        self.runs.iter().filter(|r| !r.warmup)
    }
}
