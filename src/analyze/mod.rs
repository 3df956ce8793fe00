//! `analyze`: the verdicts of `compare` and `layout` on measurements made
//! elsewhere: a CSV of values, hyperfine's `--export-json`, or ghostbench's
//! own `--json` re-analyzed with other options.
//!
//! `input` reads the files (format from the content) into rows, `ghost`
//! re-analyses a ghostbench report, `layouts` handles data with layouts;
//! this module turns rows into the same
//! report types `compare` and `layout` produce, so the same renderers and
//! the same JSON schemas serve, with an `analyze` section saying where the
//! runs came from.
//!
//! Without a `layout` column the data get `compare`'s two-sample analysis at
//! a fixed n: the exact Hodges–Lehmann interval of the log ratio at level
//! 1 − α (Bonferroni over metrics × candidates), not the anytime interval,
//! since nobody looked at these data before they were complete. With a
//! `layout` column they get `layout`'s analysis across layouts.

pub mod ghost;
pub mod input;
pub mod layouts;

use crate::compare::analysis::{self, MetricInput};
use crate::compare::{self, CompareOptions, CompareReport, CounterReport};
use crate::layout::LayoutReport;
use crate::run::command::CommandSpec;
use crate::run::environment::Environment;
use crate::run::metric::{MetricValue, Unit};
use crate::run::{Imported, RunRecord, Status};
use crate::stats::hierarchical::Estimator;
use crate::stats::sequential::evaluate;
use anyhow::{bail, Result};
use input::{Dataset, Loaded};
use std::path::PathBuf;
use std::time::Duration;

/// The equivalence margin when neither the option nor the input gives one.
pub const DEFAULT_MARGIN: f64 = 0.01;
/// The false-alarm rate when neither the option nor the input gives one.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// `analyze`'s options. `None` keeps the input's own setting (a ghostbench
/// report), or the default (1%, 0.05, median).
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    pub higher_is_better: bool,
    /// A fraction (0.01 = ±1%).
    pub margin: Option<f64>,
    pub alpha: Option<f64>,
    pub estimator: Option<Estimator>,
    /// Seeds the descriptive bootstrap.
    pub seed: u64,
    pub command_line: Vec<String>,
}

/// What `analyze` found.
#[derive(Debug, Clone)]
pub enum Analysis {
    /// Two-sample comparisons, one report per candidate against the baseline.
    Compare(Vec<CompareReport>),
    /// Across layouts, one matrix.
    Layout(Box<LayoutReport>),
}

/// Read the files and analyze them as one data set, or re-analyze one
/// ghostbench report. Errors are one line naming the file and the line or field.
pub fn analyze(files: &[PathBuf], options: &AnalyzeOptions) -> Result<Analysis> {
    let mut sets = Vec::new();
    for path in files {
        match input::read(path)? {
            Loaded::Rows(set) => sets.push(set),
            Loaded::Ghost { schema, doc } => {
                if files.len() > 1 {
                    bail!(
                        "{}: a ghostbench report is re-analyzed on its own; give it as the only file",
                        path.display()
                    );
                }
                let file = path.display().to_string();
                return if schema == "ghostbench.layout" {
                    ghost::layout(&doc, &file, options).map(|r| Analysis::Layout(Box::new(r)))
                } else {
                    ghost::compare(&doc, &file, options).map(|r| Analysis::Compare(vec![r]))
                };
            }
        }
    }
    let data = input::merge(sets)?;
    if data.names.len() < 2 {
        bail!(
            "{}: only one name ({:?}); analyze compares a baseline with at least one other",
            data.files.join(", "),
            data.names.first().map_or("", |n| n.name.as_str())
        );
    }
    if data.layouts.is_some() {
        layouts::layout_report(&data, options).map(|r| Analysis::Layout(Box::new(r)))
    } else {
        Ok(Analysis::Compare(compare_reports(&data, options)))
    }
}

/// Whether the rows of the baseline and `candidate` were interleaved: the
/// fact for the `analyze` section and, when they were not (or nothing
/// shows they were), the one-line caution.
pub fn interleaving(data: &Dataset, candidate: usize) -> (Option<bool>, Option<String>) {
    let [a, b] = [&data.names[0].name, &data.names[candidate].name];
    let confounded = "drift between the blocks is confounded with the effect";
    match data.order {
        input::Order::Blocks => (
            Some(false),
            Some(format!(
                "not interleaved: hyperfine runs each command's runs one after the other, so {confounded} \
                 (ghostbench compare interleaves them)"
            )),
        ),
        input::Order::Unknown => (
            None,
            Some(format!(
                "no `round` column: nothing shows that {a} and {b} were interleaved; if they ran one \
                 after the other, {confounded}"
            )),
        ),
        input::Order::Rounds => {
            let rounds = |name: usize| -> std::collections::BTreeSet<usize> {
                data.rows
                    .iter()
                    .filter(|r| r.name == name)
                    .filter_map(|r| r.round)
                    .collect()
            };
            let (ra, rb) = (rounds(0), rounds(candidate));
            if ra == rb {
                return (Some(true), None);
            }
            let span = |r: &std::collections::BTreeSet<usize>| match (r.first(), r.last()) {
                (Some(f), Some(l)) if f == l => format!("round {f}"),
                (Some(f), Some(l)) => format!("rounds {f}–{l}"),
                _ => "no round".into(),
            };
            let both = ra.intersection(&rb).count();
            let caution = if both == 0 {
                format!(
                    "not interleaved: {a} ran in {} and {b} in {}, so {confounded}",
                    span(&ra),
                    span(&rb)
                )
            } else {
                format!(
                    "partly interleaved: {both} of {} rounds hold runs of both {a} and {b}; \
                     between the others, drift is confounded with the effect",
                    ra.union(&rb).count()
                )
            };
            (Some(false), Some(caution))
        }
    }
}

/// Machine facts for data measured elsewhere: unknown, apart from this tool
/// and how it was called.
pub fn unknown_environment(command_line: &[String]) -> Environment {
    Environment {
        cpu_model: None,
        logical_cpus: 0,
        kernel: None,
        governor: None,
        turbo: None,
        load_average: None,
        aslr: None,
        split_lock_mitigate: None,
        split_lock_detect: None,
        perf_event_paranoid: None,
        transparent_hugepage: None,
        virtualization: None,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: command_line.to_vec(),
        timestamp_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    }
}

/// One imported run: the values of one name (and layout) that belong
/// together, at most one per metric.
pub struct ImportedRun {
    pub name: usize,
    pub layout: Option<usize>,
    /// `side` is the name's index; `round` the CSV's, or the run's position
    /// among its name's runs.
    pub record: RunRecord,
}

/// The rows as runs: the k-th value of every metric of one name, layout and
/// round form one run (a CSV with one row per metric and run, or one
/// metric), in first-seen order.
pub fn runs(data: &Dataset) -> Vec<ImportedRun> {
    use std::collections::HashMap;
    type Key = (usize, Option<usize>, Option<usize>);
    let mut seen: HashMap<(Key, usize), usize> = HashMap::new();
    let mut at: HashMap<(Key, usize), usize> = HashMap::new();
    let mut per_name = vec![0usize; data.names.len()];
    let mut out: Vec<ImportedRun> = Vec::new();
    for row in &data.rows {
        let key = (row.name, row.layout, row.round);
        let k = seen.entry((key, row.metric)).or_insert(0);
        let occurrence = *k;
        *k += 1;
        let index = *at.entry((key, occurrence)).or_insert_with(|| {
            let position = per_name.get(row.name).copied().unwrap_or(0);
            if let Some(p) = per_name.get_mut(row.name) {
                *p += 1;
            }
            out.push(ImportedRun {
                name: row.name,
                layout: row.layout,
                record: RunRecord {
                    build: row.name,
                    round: row.round.unwrap_or(position),
                    warmup: false,
                    wall_s: 0.0,
                    user_s: 0.0,
                    sys_s: 0.0,
                    max_rss_kib: 0,
                    exit_code: 0,
                    env_pad_bytes: None,
                    values: Vec::new(),
                    counters: Vec::new(),
                },
            });
            out.len() - 1
        });
        let (metric, unit) = &data.metrics[row.metric];
        let record = &mut out[index].record;
        if metric == "wall" && *unit == Unit::Seconds {
            record.wall_s = row.value;
        }
        if row.exit_code != 0 {
            record.exit_code = row.exit_code;
        }
        record.values.push(MetricValue {
            name: metric.clone(),
            value: row.value,
            unit: *unit,
        });
    }
    out
}

/// Check a margin (fraction) and alpha before analyzing.
pub fn check(margin: f64, alpha: f64) -> Result<()> {
    if !(0.0..1.0).contains(&margin) {
        bail!(
            "--margin is a percentage in [0, 100), got {}",
            margin * 100.0
        );
    }
    if !(alpha > 0.0 && alpha < 1.0) {
        bail!("--alpha must be in (0, 1), got {alpha}");
    }
    Ok(())
}

/// Each candidate against the baseline with `compare`'s analysis at a fixed n.
fn compare_reports(data: &Dataset, options: &AnalyzeOptions) -> Vec<CompareReport> {
    let margin = options.margin.unwrap_or(DEFAULT_MARGIN);
    let alpha = options.alpha.unwrap_or(DEFAULT_ALPHA);
    let hib = options.higher_is_better;
    let candidates = data.names.len() - 1;
    let family = data.metrics.len() * candidates;
    let interval_alpha = alpha / family as f64;
    let spec = |i: usize| {
        let n = &data.names[i];
        CommandSpec {
            name: n.name.clone(),
            text: n.text.clone(),
            argv: Vec::new(),
            shell: false,
        }
    };
    (1..data.names.len())
        .map(|candidate| {
            let series: Vec<[Vec<f64>; 2]> = (0..data.metrics.len())
                .map(|m| [data.values(0, m), data.values(candidate, m)])
                .collect();
            let inputs: Vec<MetricInput> = data
                .metrics
                .iter()
                .zip(&series)
                .map(|((name, unit), [a, b])| MetricInput {
                    name,
                    unit: *unit,
                    a,
                    b,
                    spawn_corrected: false,
                    look: evaluate(a, b, interval_alpha, margin, hib),
                    looks: 0,
                })
                .collect();
            let names = [
                data.names[0].name.as_str(),
                data.names[candidate].name.as_str(),
            ];
            let metrics = analysis::analyze(&inputs, names, margin, alpha, hib, options.seed);
            let runs: Vec<RunRecord> = runs(data)
                .into_iter()
                .filter(|r| r.name == 0 || r.name == candidate)
                .map(|r| RunRecord {
                    build: usize::from(r.name != 0),
                    ..r.record
                })
                .collect();
            let (interleaved, caution) = interleaving(data, candidate);
            let mut notes: Vec<String> = caution.into_iter().collect();
            notes.extend(data.notes.iter().cloned());
            if family > 1 {
                notes.push(format!(
                    "{family} comparisons (metrics × candidates): every interval is at {:.2}% (Bonferroni)",
                    (1.0 - interval_alpha) * 100.0
                ));
            }
            let sizes: Vec<usize> = series.iter().flat_map(|s| [s[0].len(), s[1].len()]).collect();
            let commands = [spec(0), spec(candidate)];
            let state = compare::State::Imported;
            CompareReport {
                schema: "ghostbench.compare",
                schema_version: compare::SCHEMA_VERSION,
                commands: commands.to_vec(),
                settings: CompareOptions {
                    metrics: Vec::new(),
                    higher_is_better: hib,
                    margin,
                    alpha,
                    warmup: 0,
                    min_runs: sizes.iter().copied().min().unwrap_or(0),
                    max_runs: sizes.iter().copied().max().unwrap_or(0),
                    max_time: Duration::ZERO,
                    env_jitter: false,
                    spawn_correction: false,
                    seed: options.seed,
                    command_line: options.command_line.clone(),
                    ..CompareOptions::for_commands(commands)
                },
                status: Status::new(state, None),
                stopped_by: None,
                environment: unknown_environment(&options.command_line),
                spawn_overhead_s: None,
                spawn_correction_applied: false,
                metrics,
                counters: CounterReport {
                    requested: false,
                    unavailable: None,
                    rows: Vec::new(),
                },
                simulation: None,
                notes,
                elapsed_s: 0.0,
                runs,
                analyze: Some(Imported {
                    files: data.files.clone(),
                    format: data.format.clone(),
                    interval: "fixed".into(),
                    interleaved,
                    layouts: None,
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(csv: &str) -> Dataset {
        input::csv("t.csv", csv).unwrap()
    }

    #[test]
    fn rows_of_several_metrics_group_into_runs() {
        // Two runs of A and one of B, one row per metric and run.
        let d = data("name,metric,value\nA,ns,1\nA,ipc,2\nA,ns,3\nA,ipc,4\nB,ns,5\nB,ipc,6\n");
        let runs = runs(&d);
        assert_eq!(runs.len(), 3);
        let values: Vec<Vec<f64>> = runs
            .iter()
            .map(|r| r.record.values.iter().map(|v| v.value).collect())
            .collect();
        assert_eq!(values, vec![vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]]);
        assert_eq!(
            runs.iter().map(|r| r.record.round).collect::<Vec<_>>(),
            vec![0, 1, 0]
        );
    }

    #[test]
    fn interleaving_is_read_from_rounds() {
        let both = data("name,round,value\nA,0,1\nB,0,1\nA,1,1\nB,1,1\n");
        assert_eq!(interleaving(&both, 1), (Some(true), None));
        let blocks = data("name,round,value\nA,0,1\nA,1,1\nB,2,1\nB,3,1\n");
        let (fact, caution) = interleaving(&blocks, 1);
        assert_eq!(fact, Some(false));
        assert_eq!(
            caution.unwrap(),
            "not interleaved: A ran in rounds 0–1 and B in rounds 2–3, so drift between the blocks is confounded with the effect"
        );
        let partly = data("name,round,value\nA,0,1\nB,0,1\nA,1,1\nB,2,1\n");
        let caution = interleaving(&partly, 1).1.unwrap();
        assert!(
            caution.starts_with("partly interleaved: 1 of 3 rounds hold runs of both A and B"),
            "{caution}"
        );
        let unknown = data("name,value\nA,1\nB,1\n");
        assert_eq!(interleaving(&unknown, 1).0, None);
    }
}
