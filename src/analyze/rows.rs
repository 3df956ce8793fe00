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

/// The rows of the names `keep` takes as runs: the k-th value of every
/// metric of one name, layout and round form one run (a CSV with one row per
/// metric and run, or one metric), in first-seen order.
///
/// With one metric every row is a run of its own: the runs are made in one
/// pass. Hash maps keyed per run took about 500 MB for a million rows a
/// side. Each run's values are allocated at their final size (one per
/// metric), not at a growing vector's first capacity of four.
pub fn runs(data: &Dataset, keep: impl Fn(usize) -> bool) -> Vec<ImportedRun> {
    if data.metrics.len() == 1 {
        return one_metric(data, keep);
    }
    // Grouped by sorting row indices, not by hash maps of every (name,
    // layout, round, metric) and (name, layout, round, occurrence): three
    // vectors of a word per row instead of about 200 bytes.
    let rows = &data.rows;
    let key = |i: usize| {
        let r = &rows[i];
        (r.name, r.layout, r.round)
    };
    let mut order: Vec<usize> = (0..rows.len()).filter(|&i| keep(rows[i].name)).collect();
    // The occurrence of each row among its name, layout, round and metric.
    order.sort_unstable_by_key(|&i| (key(i), rows[i].metric, i));
    let mut occurrence = vec![0usize; rows.len()];
    let mut previous = None;
    let mut n = 0;
    for &i in &order {
        let this = (key(i), rows[i].metric);
        n = if previous == Some(this) { n + 1 } else { 0 };
        previous = Some(this);
        occurrence[i] = n;
    }
    // A run: the rows of one name, layout, round and occurrence, in row
    // order; made where its first row is, so runs are in first-seen order.
    order.sort_unstable_by_key(|&i| (key(i), occurrence[i], i));
    let mut starts: Vec<usize> = Vec::new();
    let mut previous = None;
    for (at, &i) in order.iter().enumerate() {
        let this = (key(i), occurrence[i]);
        if previous != Some(this) {
            starts.push(at);
            previous = Some(this);
        }
    }
    drop(occurrence);
    let mut by_first: Vec<usize> = (0..starts.len()).collect();
    by_first.sort_unstable_by_key(|&g| order[starts[g]]);
    let mut per_name = vec![0usize; data.names.len()];
    let mut out = Vec::with_capacity(starts.len());
    for g in by_first {
        let end = starts.get(g + 1).copied().unwrap_or(order.len());
        let members = &order[starts[g]..end];
        let mut run = new_run(&rows[members[0]], &mut per_name, data.metrics.len());
        for &i in members {
            add_value(&mut run.record, data, &rows[i]);
        }
        out.push(run);
    }
    out
}

/// [`runs`] of data with one metric: a run per row, in row order, in a
/// vector of the kept rows' number (not a growing one's up to twice that).
fn one_metric(data: &Dataset, keep: impl Fn(usize) -> bool) -> Vec<ImportedRun> {
    let mut per_name = vec![0usize; data.names.len()];
    let kept = data.rows.iter().filter(|r| keep(r.name)).count();
    let mut out = Vec::with_capacity(kept);
    for row in data.rows.iter().filter(|r| keep(r.name)) {
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
        let runs = runs(&d, |_| true);
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
            let fast = runs(&d, |_| true);
            let mut two = d.clone();
            two.metrics.push(("unused".into(), Unit::None));
            let general = runs(&two, |_| true);
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
            // One name's runs: those of the whole list, positions and all.
            let b_fast = runs(&d, |n| n == 1);
            let b_general = runs(&two, |n| n == 1);
            let b_of_all: Vec<_> = view(&fast).into_iter().filter(|r| r.0 == 1).collect();
            assert_eq!(view(&b_fast), b_of_all, "{csv}");
            assert_eq!(view(&b_general), b_of_all, "{csv}");
            assert_eq!(b_fast.capacity(), b_fast.len());
        }
    }

    /// The grouping as first written (two hash maps): the reference the
    /// sorting one must equal.
    fn by_hash_maps(data: &Dataset) -> Vec<(usize, Option<usize>, usize, Vec<f64>)> {
        use std::collections::HashMap;
        type Key = (usize, Option<usize>, Option<usize>);
        let mut seen: HashMap<(Key, usize), usize> = HashMap::new();
        let mut at: HashMap<(Key, usize), usize> = HashMap::new();
        let mut per_name = vec![0usize; data.names.len()];
        let mut out: Vec<(usize, Option<usize>, usize, Vec<f64>)> = Vec::new();
        for row in &data.rows {
            let key = (row.name, row.layout, row.round);
            let k = seen.entry((key, row.metric)).or_insert(0);
            let occurrence = *k;
            *k += 1;
            let index = *at.entry((key, occurrence)).or_insert_with(|| {
                let position = per_name[row.name];
                per_name[row.name] += 1;
                out.push((
                    row.name,
                    row.layout,
                    row.round.unwrap_or(position),
                    Vec::new(),
                ));
                out.len() - 1
            });
            out[index].3.push(row.value);
        }
        out
    }

    #[test]
    fn runs_of_several_metrics_are_those_the_hash_maps_made() {
        // Metrics in varying order, a metric missing from some runs,
        // repeated rounds, names and layouts interleaved.
        let mut csv = String::from("name,layout,metric,round,value\n");
        let mut x: u64 = 7;
        for i in 0..600u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = x >> 33;
            let name = ["A", "B", "C"][(r % 3) as usize];
            let metric = ["ns", "ipc", "miss"][((r >> 2) % 3) as usize];
            let round = (r >> 4) % 7;
            let layout = (r >> 8) % 2;
            csv += &format!("{name},{layout},{metric},{round},{}\n", i + 1);
        }
        let d = data(&csv);
        assert_eq!(d.metrics.len(), 3);
        let made: Vec<_> = runs(&d, |_| true)
            .iter()
            .map(|r| {
                let values: Vec<f64> = r.record.values.iter().map(|v| v.value).collect();
                (r.name, r.layout, r.record.round, values)
            })
            .collect();
        assert_eq!(made, by_hash_maps(&d));
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
