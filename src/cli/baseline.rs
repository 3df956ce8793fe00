//! Baselines: `compare --save-baseline NAME CMD` (one command measured
//! alone and stored under NAME, with a copy of its program kept to run it
//! again), `compare --baseline NAME CMD` (the gate: the baseline's program
//! run again interleaved with CMD by `compare`, or, when it cannot be, its
//! stored runs against CMD's) and `analyze --baseline NAME FILE` (imported
//! runs against the stored ones). The analyses are `compare`'s and
//! `analyze`'s; this file is the glue.

use super::exit;
use super::finish::{self as ending, Keep, Render};
use super::output::errln;
use super::output::{json, Format, OutputArgs};
use super::store::{FailOnArgs, StoreArgs};
use crate::analyze::baseline::{against, allowance, Current, Drift, Value};
use crate::analyze::render::{self, Reports};
use crate::analyze::{AnalyzeOptions, AnalyzeReport};
use crate::compare::render::{notes, single};
use crate::compare::single::measure;
use crate::compare::{BaselineMode, BaselineUse, CompareOptions, Fallback, Note, State};
use crate::run::command::{resolve_program, split_words, CommandSpec};
use crate::run::environment;
use crate::run::spawn;
use crate::stats::descriptive::median;
use crate::store::copies::{self, Missing, Rerun};
use crate::store::{Baseline, Location};
use anyhow::{bail, Result};
use std::path::Path;

/// The report files the baseline commands write.
const FORMATS: &[Format] = &[Format::Json, Format::Markdown, Format::Html];

/// `compare --save-baseline NAME CMD`: measure CMD alone, store it as NAME.
pub fn save_baseline(
    options: &CompareOptions,
    name: &str,
    output: &OutputArgs,
    store: &StoreArgs,
) -> Result<i32> {
    let rerun = keep(&options.commands[0], store, name);
    spawn::install_interrupt_handler();
    let measured = measure(options, 0)?;
    super::output::print_terminal(&single::terminal(&measured, name), false);
    let code = exit::of_compare(&measured.status.state);
    let files = Measured {
        measured: &measured,
        name,
    };
    super::output::print_stop_cause(code, measured.status.message.as_deref());
    ending::finish(
        "compare",
        FORMATS,
        output.files(),
        &files,
        code,
        || Ok(serde_json::to_value(&measured)?),
        &Keep {
            verb: "baseline",
            store,
            fail_on: &FailOnArgs::default(),
            // A failed measurement is stored, and is no baseline.
            baseline: (code == exit::OK).then_some((name, 0, rerun.as_deref())),
            must_store: code == exit::OK,
            gate: ending::Gate::Apply,
        },
    )
}

/// A baseline measurement's report files.
struct Measured<'a> {
    measured: &'a crate::compare::single::Single,
    name: &'a str,
}

impl Render for Measured<'_> {
    fn json(&self) -> Result<String> {
        json(self.measured)
    }
    fn markdown(&self) -> Option<Result<String>> {
        Some(Ok(single::markdown(self.measured, self.name)))
    }
    fn html(&self) -> Option<Result<String>> {
        Some(Ok(single::html(self.measured, self.name)))
    }
}

/// The stored baseline `name`, or a one-line error saying how to make one;
/// with the store's location.
fn load(store: &StoreArgs, name: &str) -> Result<(Baseline, Location)> {
    let mut opened = store.open()?;
    match opened.baseline(name) {
        Ok(Some(baseline)) => Ok((baseline, opened.location().clone())),
        Ok(None) => bail!(
            "no baseline named {name:?} in {}; save one with `ghostbench compare --save-baseline {name} CMD`",
            opened.location()
        ),
        Err(e) => bail!("store {}: {e}", opened.location()),
    }
}

/// The drift to allow between the baseline's session and this one: the
/// documented allowance, or more when the store's history shows the
/// baseline's own command (results since it was saved that ran a command
/// under its name, other than copies of its stored runs) drifting more.
fn drift(store: &StoreArgs, baseline: &Baseline) -> Drift {
    let documented = allowance(0.0, &[]);
    let Ok(mut opened) = store.open() else {
        return documented;
    };
    let mut metrics: Vec<&str> = baseline.runs.iter().map(|r| r.metric.as_str()).collect();
    metrics.sort_unstable();
    metrics.dedup();
    let mut worst = documented;
    for metric in metrics {
        let mut saved: Vec<f64> = baseline
            .runs
            .iter()
            .filter(|r| r.metric == metric)
            .filter_map(|r| r.value)
            .collect();
        saved.sort_by(f64::total_cmp);
        let Ok(points) = opened.trend(metric, Some(&baseline.name)) else {
            continue;
        };
        let sessions: Vec<Vec<f64>> = points
            .into_iter()
            .filter(|p| {
                p.experiment_id != baseline.experiment_id && p.created_unix >= baseline.created_unix
            })
            .map(|p| {
                let mut values = p.values;
                values.sort_by(f64::total_cmp);
                values
            })
            .filter(|values| *values != saved)
            .collect();
        let found = allowance(median(&saved), &sessions);
        worst.allowance = worst.allowance.max(found.allowance);
        worst.sessions = worst.sessions.max(found.sessions);
    }
    worst
}

/// What re-running `spec` as baseline `name` needs, kept next to the store
/// (docs/store.md "Baselines"): a copy of its program and the hashes of the
/// files its command names, as JSON. None, with a one-line warning, when
/// they cannot be kept; the baseline is then compared by its stored runs.
pub fn keep(spec: &CommandSpec, store: &StoreArgs, name: &str) -> Option<String> {
    let location = store.location()?;
    let dir = copies::directory(&location);
    let (program, words) = if spec.shell {
        // The program is `sh`; the files are the words of the script.
        let words = split_words(&spec.text)
            .unwrap_or_else(|_| spec.text.split_whitespace().map(String::from).collect());
        (None, words)
    } else {
        let program = resolve_program(&spec.argv[0], std::env::var_os("PATH")).ok();
        (program, spec.argv[1..].to_vec())
    };
    match Rerun::keep(&dir, &spec.argv, spec.shell, program.as_deref(), &words) {
        Ok(rerun) => serde_json::to_string(&rerun).ok(),
        Err(e) => {
            errln!(
                "warning: baseline {name:?}: nothing kept to run it again ({e}); --baseline {name} will compare with its stored runs"
            );
            None
        }
    }
}

/// The baseline's command as it can run now (its program's copy in place
/// of the program), or why it cannot.
fn rerun(
    baseline: &Baseline,
    dir: &Path,
) -> std::result::Result<(CommandSpec, Option<String>), Fallback> {
    let rerun: Rerun = baseline
        .rerun
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .ok_or(Fallback::NotKept)?;
    let path = |p: &Path| p.display().to_string();
    let argv = rerun.check(dir).map_err(|missing| match missing {
        Missing::CopyGone(p) => Fallback::CopyGone(path(&p)),
        Missing::CopyChanged(p) => Fallback::CopyChanged(path(&p)),
        Missing::FileGone(p) => Fallback::FileGone(p),
        Missing::FileChanged(p) => Fallback::FileChanged(p),
    })?;
    let program = (!rerun.shell).then(|| argv[0].clone());
    let spec = CommandSpec {
        name: baseline.name.clone(),
        text: baseline.command.template.clone(),
        argv,
        shell: rerun.shell,
    };
    Ok((spec, program))
}

/// `compare --baseline NAME CMD`: the gate.
pub struct Gate<'a> {
    pub name: &'a str,
    pub force: bool,
    pub output: &'a OutputArgs,
    pub store: &'a StoreArgs,
    pub fail_on: &'a FailOnArgs,
}

/// What the gate measures: the baseline's command interleaved with the one
/// given (`compare`'s options for the two, and the note saying so), or the
/// one given against the baseline's stored runs (why not interleaved).
pub enum Plan {
    Interleaved(Box<CompareOptions>, Note),
    Stored(Box<Baseline>, Fallback),
}

impl Gate<'_> {
    /// Interleaved now when the baseline's command can run again as it was
    /// saved; else its stored runs (one line on stderr says why).
    /// `cli::compare` runs the plan.
    pub fn plan(&self, options: &CompareOptions) -> Result<Plan> {
        let (baseline, location) = load(self.store, self.name)?;
        let used = |mode| BaselineUse {
            name: baseline.name.clone(),
            experiment: baseline.experiment_id,
            saved_unix: baseline.created_unix,
            commit: baseline.git_commit.clone(),
            mode,
        };
        match rerun(&baseline, &copies::directory(&location)) {
            Ok((a, program)) => {
                let mut b = options.commands[0].clone();
                if b.name == a.name {
                    b.name.push_str(" (now)");
                }
                let options = CompareOptions {
                    commands: [a, b],
                    ..options.clone()
                };
                let note = Note::Baseline(used(BaselineMode::Interleaved { program }));
                Ok(Plan::Interleaved(Box::new(options), note))
            }
            Err(why) => {
                errln!(
                    "baseline {:?}: {}; comparing with its stored runs from {} instead (not interleaved)",
                    self.name,
                    notes::fallback(&why),
                    crate::report::units::utc(baseline.created_unix)
                );
                Ok(Plan::Stored(Box::new(baseline), why))
            }
        }
    }

    /// The command measured now against the baseline's stored runs, with
    /// drift allowed for and `--fail-on` not applied.
    pub fn stored(
        &self,
        options: &CompareOptions,
        baseline: &Baseline,
        why: Fallback,
    ) -> Result<i32> {
        let name = self.name;
        let here = environment::capture(env!("CARGO_PKG_VERSION"), &options.command_line);
        if !self.force {
            let differs = |what: &str, then: &Option<String>, now: &Option<String>| {
                (then != now).then(|| {
                    format!(
                        "{what} {} (baseline) vs {} (now)",
                        then.as_deref().unwrap_or("unknown"),
                        now.as_deref().unwrap_or("unknown")
                    )
                })
            };
            let differences: Vec<String> = [
                differs("CPU", &baseline.cpu_model, &here.cpu_model),
                differs("kernel", &baseline.kernel, &here.kernel),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !differences.is_empty() {
                bail!(
                    "baseline {name:?} was measured on another machine: {}; --force compares anyway",
                    differences.join(", ")
                );
            }
        }
        spawn::install_interrupt_handler();
        let measured = measure(options, 0)?;
        if measured.status.state == State::Failed || measured.status.state == State::Interrupted {
            errln!(
                "error: {}",
                measured
                    .status
                    .message
                    .as_deref()
                    .unwrap_or("the run failed")
            );
            for line in &measured.status.last_output {
                super::output::print_stderr(&format!("  {line}"));
            }
            return Ok(if measured.status.state == State::Failed {
                exit::RUN_FAILED
            } else {
                exit::interrupted()
            });
        }
        let current = Current {
            name: measured.commands[0].name.clone(),
            text: measured.commands[0].text.clone(),
            values: measured
                .measured()
                .flat_map(|r| {
                    r.values.iter().map(move |v| Value {
                        metric: v.name.clone(),
                        unit: v.unit,
                        round: r.round,
                        value: v.value,
                        exit_code: r.exit_code,
                    })
                })
                .collect(),
            source: "measured now".into(),
        };
        let analyze = AnalyzeOptions {
            files: Vec::new(),
            higher_is_better: options.higher_is_better.clone(),
            margin: Some(options.margin),
            alpha: Some(options.alpha),
            estimator: None,
            seed: options.seed,
            command_line: options.command_line.clone(),
        };
        let drift = drift(self.store, baseline);
        let mut analyzed = against(baseline, &current, &analyze, why, drift)?;
        analyzed.report.environment = here;
        finish(
            "compare",
            render::reports(AnalyzeReport::Compare(vec![analyzed])),
            self.output,
            self.store,
            self.fail_on,
        )
    }
}

/// `analyze --baseline NAME FILE`: FILE's one name against the baseline.
pub fn analyze(
    options: &AnalyzeOptions,
    name: &str,
    output: &OutputArgs,
    store: &StoreArgs,
    fail_on: &FailOnArgs,
) -> Result<i32> {
    use crate::analyze::input::{self, Loaded};
    let (baseline, _) = load(store, name)?;
    let [path] = options.files.as_slice() else {
        bail!("--baseline NAME takes one file");
    };
    let Loaded::Rows(data) = input::read(path)? else {
        bail!(
            "{}: a ghostbench report cannot be compared with a baseline; give a CSV or hyperfine file",
            path.display()
        );
    };
    let [only] = data.names.as_slice() else {
        bail!(
            "{}: holds {} names; with --baseline it must hold one (the one compared with {name:?})",
            path.display(),
            data.names.len()
        );
    };
    let mut position = 0;
    let values = data
        .rows
        .iter()
        .map(|row| {
            position += 1;
            let (metric, unit) = &data.metrics[row.metric];
            Value {
                metric: metric.clone(),
                unit: *unit,
                round: row.round.unwrap_or(position - 1),
                value: row.value,
                exit_code: row.exit_code,
            }
        })
        .collect();
    let current = Current {
        name: only.name.clone(),
        text: only.text.clone(),
        values,
        source: path.display().to_string(),
    };
    let drift = drift(store, &baseline);
    let analyzed = against(&baseline, &current, options, Fallback::Imported, drift)?;
    finish(
        "analyze",
        render::reports(AnalyzeReport::Compare(vec![analyzed])),
        output,
        store,
        fail_on,
    )
}

/// Print, write every report file, store, then the exit code: 0 whatever
/// the verdicts, since side A is stored runs from another session, which
/// interleaving did not support (a line says when `--fail-on` would have
/// fired).
fn finish(
    verb: &str,
    reports: Reports,
    output: &OutputArgs,
    store: &StoreArgs,
    fail_on: &FailOnArgs,
) -> Result<i32> {
    super::output::print_terminal(&reports.terminal(output.color()), output.color());
    ending::finish(
        verb,
        FORMATS,
        output.files(),
        &reports,
        exit::OK,
        || reports.document(),
        &Keep {
            verb,
            store,
            fail_on,
            baseline: None,
            must_store: false,
            gate: ending::Gate::NotApplied,
        },
    )
}
