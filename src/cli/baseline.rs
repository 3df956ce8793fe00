//! Baselines: `compare --save-baseline NAME CMD` (one command measured
//! alone and stored under NAME), `compare --baseline NAME CMD` and `analyze
//! --baseline NAME FILE` (runs made now, or imported, against the stored
//! ones). The analysis is `analyze`'s; this file is the glue.

use super::exit;
use super::output::{json, Format, OutputArgs};
use super::store::{record_of, save, FailOnArgs, StoreArgs};
use crate::analyze::baseline::{against, Current, Value};
use crate::analyze::render::{self, Reports};
use crate::analyze::{AnalyzeOptions, AnalyzeReport};
use crate::compare::render::single;
use crate::compare::single::measure;
use crate::compare::{CompareOptions, State};
use crate::run::environment;
use crate::run::spawn;
use crate::store::Baseline;
use anyhow::{bail, Result};

/// The report files the baseline commands write.
const FORMATS: &[Format] = &[Format::Json, Format::Markdown, Format::Html];

/// `compare --save-baseline NAME CMD`: measure CMD alone, store it as NAME.
pub fn save_baseline(
    options: &CompareOptions,
    name: &str,
    output: &OutputArgs,
    store: &StoreArgs,
) -> Result<i32> {
    spawn::install_interrupt_handler();
    let measured = measure(options, 0)?;
    print!("{}", single::terminal(&measured, name));
    let document = serde_json::to_value(&measured)?;
    output.files().write(|format| match format {
        Format::Json => json(&measured),
        Format::Markdown => Ok(single::markdown(&measured, name)),
        Format::Html => Ok(single::html(&measured, name)),
        Format::Sarif => Err(format.unsupported("compare", FORMATS)),
    })?;
    let code = match measured.status.state {
        State::Decided | State::BudgetExhausted | State::Imported => exit::OK,
        State::Failed => exit::RUN_FAILED,
        State::Interrupted => exit::INTERRUPTED,
    };
    let record = record_of("baseline", &document)?;
    if code != exit::OK {
        save(store, &record, None);
        return Ok(code);
    }
    if save(store, &record, Some((name, 0))).is_none() {
        bail!("baseline {name:?} was measured but not stored (see the warning above)");
    }
    Ok(code)
}

/// The stored baseline `name`, or a one-line error saying how to make one.
fn load(store: &StoreArgs, name: &str) -> Result<Baseline> {
    let mut opened = store.open()?;
    match opened.baseline(name) {
        Ok(Some(baseline)) => Ok(baseline),
        Ok(None) => bail!(
            "no baseline named {name:?} in {}; save one with `ghostbench compare --save-baseline {name} CMD`",
            opened.location()
        ),
        Err(e) => bail!("store {}: {e}", opened.location()),
    }
}

/// `compare --baseline NAME CMD`.
pub fn compare(
    options: &CompareOptions,
    name: &str,
    force: bool,
    output: &OutputArgs,
    store: &StoreArgs,
    fail_on: &FailOnArgs,
) -> Result<i32> {
    let baseline = load(store, name)?;
    let here = environment::capture(env!("CARGO_PKG_VERSION"), &options.command_line);
    if !force {
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
        eprintln!(
            "error: {}",
            measured
                .status
                .message
                .as_deref()
                .unwrap_or("the run failed")
        );
        for line in &measured.status.last_output {
            eprintln!("  {line}");
        }
        return Ok(if measured.status.state == State::Failed {
            exit::RUN_FAILED
        } else {
            exit::INTERRUPTED
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
    let mut analyzed = against(&baseline, &current, &analyze)?;
    analyzed.report.environment = here;
    finish(
        "compare",
        render::reports(AnalyzeReport::Compare(vec![analyzed])),
        output,
        store,
        fail_on,
    )
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
    let baseline = load(store, name)?;
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
    let analyzed = against(&baseline, &current, options)?;
    finish(
        "analyze",
        render::reports(AnalyzeReport::Compare(vec![analyzed])),
        output,
        store,
        fail_on,
    )
}

/// Print, write every report file, store, then the exit code.
fn finish(
    verb: &str,
    reports: Reports,
    output: &OutputArgs,
    store: &StoreArgs,
    fail_on: &FailOnArgs,
) -> Result<i32> {
    print!("{}", reports.terminal(output.color()));
    output.files().write(|format| match format {
        Format::Json => reports.json(),
        Format::Markdown => Ok(reports.markdown()),
        Format::Html => Ok(reports.html()),
        Format::Sarif => Err(format.unsupported(verb, FORMATS)),
    })?;
    let record = record_of(verb, &serde_json::from_str(&reports.json()?)?)?;
    save(store, &record, None);
    Ok(fail_on.exit_code(exit::OK, &record.verdicts))
}
