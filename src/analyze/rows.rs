//! Rows as runs: grouping the values of one name, layout and round into a
//! run, whether the baseline's and a candidate's runs were interleaved, the
//! machine facts of data measured elsewhere, and the checks of the options.

use super::input::{self, Dataset};
use super::Interleaving;
use crate::run::environment::Environment;
use crate::run::metric::{MetricValue, Unit};
use crate::run::RunRecord;
use anyhow::{bail, Result};
use std::collections::BTreeSet;

/// Whether the rows of the baseline and `candidate` were interleaved.
pub fn interleaving(data: &Dataset, candidate: usize) -> Interleaving {
    let [a, b] = [&data.names[0].name, &data.names[candidate].name];
    let (a, b) = (a.clone(), b.clone());
    match data.order {
        input::Order::Blocks => Interleaving::Blocks,
        input::Order::Unknown => Interleaving::Unknown { a, b },
        input::Order::Rounds => {
            let rounds = |name: usize| -> BTreeSet<usize> {
                data.rows
                    .iter()
                    .filter(|r| r.name == name)
                    .filter_map(|r| r.round)
                    .collect()
            };
            let (ra, rb) = (rounds(0), rounds(candidate));
            if ra == rb {
                return Interleaving::Interleaved;
            }
            let span = |r: &BTreeSet<usize>| r.first().copied().zip(r.last().copied());
            let shared = ra.intersection(&rb).count();
            if shared == 0 {
                Interleaving::Apart {
                    a,
                    b,
                    a_rounds: span(&ra),
                    b_rounds: span(&rb),
                }
            } else {
                Interleaving::Partly {
                    a,
                    b,
                    shared,
                    rounds: ra.union(&rb).count(),
                }
            }
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
///
/// With one metric every row is a run of its own, so no row is looked up:
/// the runs are made in one pass, with no map (a million rows a side would
/// otherwise hold two hash maps of two million entries, about 500 MB). Each
/// run's values are allocated at their final size (one per metric), not at a
/// growing vector's first capacity of four.
pub fn runs(data: &Dataset) -> Vec<ImportedRun> {
    if data.metrics.len() == 1 {
        return one_metric(data);
    }
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
            out.push(new_run(row, &mut per_name, data.metrics.len()));
            out.len() - 1
        });
        add_value(&mut out[index].record, data, row);
    }
    out
}

/// [`runs`] of data with one metric: a run per row, in row order.
fn one_metric(data: &Dataset) -> Vec<ImportedRun> {
    let mut per_name = vec![0usize; data.names.len()];
    let mut out = Vec::with_capacity(data.rows.len());
    for row in &data.rows {
        let mut run = new_run(row, &mut per_name, 1);
        add_value(&mut run.record, data, row);
        out.push(run);
    }
    out
}

/// The run `row` starts: its round the CSV's, or its position among its
/// name's runs (counted in `per_name`); room for `metrics` values.
fn new_run(row: &input::Row, per_name: &mut [usize], metrics: usize) -> ImportedRun {
    let position = per_name.get(row.name).copied().unwrap_or(0);
    if let Some(p) = per_name.get_mut(row.name) {
        *p += 1;
    }
    ImportedRun {
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
            values: Vec::with_capacity(metrics),
            counters: Vec::new(),
        },
    }
}

/// `row`'s value into its run (`wall` in seconds also as the run's wall time).
fn add_value(record: &mut RunRecord, data: &Dataset, row: &input::Row) {
    let (metric, unit) = &data.metrics[row.metric];
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
    fn one_metric_runs_are_the_runs_the_general_grouping_makes() {
        // Repeated rounds, no rounds, layouts: the one-pass path against the
        // grouping by name, layout, round and occurrence.
        for csv in [
            "name,round,value\nA,0,1\nB,0,2\nA,0,3\nB,1,4\nA,2,5\n",
            "name,value\nA,1\nB,2\nA,3\nA,4\nB,5\n",
            "name,layout,round,value\nA,0,0,1\nB,0,0,2\nA,1,0,3\nA,0,0,4\nB,1,1,5\n",
        ] {
            let d = data(csv);
            let fast = runs(&d);
            let mut two = d.clone();
            two.metrics.push(("unused".into(), Unit::None));
            let general = runs(&two);
            let view = |r: &[ImportedRun]| -> Vec<_> {
                r.iter()
                    .map(|r| {
                        let values: Vec<f64> = r.record.values.iter().map(|v| v.value).collect();
                        (r.name, r.layout, r.record.build, r.record.round, values)
                    })
                    .collect()
            };
            assert_eq!(view(&fast), view(&general), "{csv}");
            assert!(fast.iter().all(|r| r.record.values.capacity() == 1));
        }
    }

    #[test]
    fn interleaving_is_read_from_rounds() {
        let both = data("name,round,value\nA,0,1\nB,0,1\nA,1,1\nB,1,1\n");
        assert_eq!(interleaving(&both, 1), Interleaving::Interleaved);
        assert_eq!(Interleaving::Interleaved.note(), None);
        let blocks = data("name,round,value\nA,0,1\nA,1,1\nB,2,1\nB,3,1\n");
        let apart = interleaving(&blocks, 1);
        assert_eq!(apart.interleaved(), Some(false));
        assert_eq!(
            apart,
            Interleaving::Apart {
                a: "A".into(),
                b: "B".into(),
                a_rounds: Some((0, 1)),
                b_rounds: Some((2, 3)),
            }
        );
        let partly = data("name,round,value\nA,0,1\nB,0,1\nA,1,1\nB,2,1\n");
        assert!(matches!(
            interleaving(&partly, 1),
            Interleaving::Partly {
                shared: 1,
                rounds: 3,
                ..
            }
        ));
        let unknown = data("name,value\nA,1\nB,1\n");
        assert_eq!(interleaving(&unknown, 1).interleaved(), None);
    }
}
