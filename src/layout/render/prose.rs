//! The words of a `layout` report, one function per kind of sentence: the
//! headline, each comparison's verdict sentence and "to decide" hint, the
//! notes, the legend under the matrix, a source, a failed build, the time.
//! Every format (terminal, Markdown, HTML, JSON) takes its text from here,
//! so they say the same thing; they differ only in markup.
//!
//! It runs over 600 lines because `note` is one match over every `Note` the
//! experiment records, and the words for one kind of fact belong together.

use super::{findings, label};
use crate::layout::builds::BuildResult;
use crate::layout::variants::SourceStatus;
use crate::layout::{AutoOutcome, Comparison, LayoutReport, MatrixRow, Note, Undecided};
use crate::report::escape::visible;
use crate::report::units::{ratio, trimmed, value};
use crate::run::metric::Unit;
use crate::stats::verdict::Verdict;
use std::borrow::Cow;
use std::fmt::Write;

/// The report as the human formats show it: every build's name and
/// template, the run template and the matrix's build and metric names on one
/// line with their hidden characters visible (`escape::visible`), so a name
/// from a CSV, a shard file or a `--build` cannot break a line, forge a
/// verdict, or drive the terminal. `--json` keeps them as given.
pub fn shown(report: &LayoutReport) -> Cow<'_, LayoutReport> {
    let hidden = |s: &str| matches!(visible(s), Cow::Owned(_));
    if !report
        .builds
        .iter()
        .any(|b| hidden(&b.name) || hidden(&b.template))
        && !hidden(&report.settings.run_template)
        && !report
            .matrix
            .iter()
            .any(|r| hidden(&r.build) || hidden(&r.metric))
    {
        return Cow::Borrowed(report);
    }
    let mut report = report.clone();
    for b in &mut report.builds {
        b.name = visible(&b.name).into_owned();
        b.template = visible(&b.template).into_owned();
    }
    report.settings.run_template = visible(&report.settings.run_template).into_owned();
    for r in &mut report.matrix {
        r.build = visible(&r.build).into_owned();
        r.metric = visible(&r.metric).into_owned();
    }
    Cow::Owned(report)
}

/// "2 builds × 8 layouts × 5 rounds; baseline A"; "16 layouts (13 used)"
/// when some variants were left out (failed, or identical to another build).
pub fn headline(report: &LayoutReport) -> String {
    let used = report.used_seeds.len();
    let layouts = match report.variants.len() {
        all if all > used => format!("{all} layouts ({used} used)"),
        _ => format!("{used} layouts"),
    };
    format!(
        "{} builds × {layouts} × {} rounds; baseline {}",
        report.builds.len(),
        report.settings.rounds,
        report.builds.first().map_or("", |b| b.name.as_str())
    )
}

/// "layout", or "analyze a.csv (csv)" when the runs were read from files.
pub fn verb(report: &LayoutReport) -> String {
    crate::compare::render::notes::heading_verb("layout", report.analyze.as_ref())
}

/// "B wall": what a verdict line is about.
pub fn subject(row: &MatrixRow) -> String {
    format!("{} {}", row.build, row.metric)
}

/// The verdict sentence of `row`'s comparison, with the report's names and
/// settings, then what qualifies it: the default layout's exaggeration of a
/// decided effect, the layouts where the build is fragile, and a coarse
/// printing step.
pub fn comparison_sentence(report: &LayoutReport, row: &MatrixRow, c: &Comparison) -> String {
    let names = (report.builds[0].name.as_str(), row.build.as_str());
    let hib = row.direction.higher_is_better();
    let mut text = sentence(c, names, report.settings.margin, hib);
    if let (Some(points), Some(d)) = (c.placement_points, c.default_ratio) {
        let _ = write!(text, "; {}", findings::placement(d.estimate, points));
    }
    if let Some(f) = &c.fragility {
        let _ = write!(
            text,
            "; {}",
            findings::fragility(f, names.1, &report.used_seeds, hib)
        );
    }
    if let Some(r) = c.controlled.and_then(|r| r.resolution) {
        let _ = write!(
            text,
            "; values are printed in steps of {} ({}% of the baseline), and the interval includes that rounding",
            r.step,
            if r.relative >= 0.01 {
                format!("{:.1}", r.relative * 100.0)
            } else {
                trimmed(format!("{:.3}", r.relative * 100.0).parse().unwrap_or(0.0))
            }
        );
    }
    text
}

/// The "to decide" hint of an UNKNOWN comparison, or None. With the load
/// measured during the runs, it says whether the machine was busy; wild runs
/// on a machine that was not are the benchmark's own noise.
pub fn comparison_hint(report: &LayoutReport, c: &Comparison) -> Option<String> {
    c.undecided.as_ref().map(|u| {
        let text = hint(u, c.layout_noise, report.settings.margin);
        let cpus = report.load.cpus;
        match report.load.mean() {
            Some(mean) if report.load.busy() => format!(
                "{text}; the machine was busy (load average {mean:.1} on {cpus} CPUs): a quieter machine would steady the runs (--pin alone may not: on a virtual machine other work can slow the core itself)"
            ),
            Some(mean) if matches!(u, Undecided::RunOutliers { .. }) => format!(
                "{text}; the machine was not busy (load average {mean:.1} on {cpus} CPUs), so this is the benchmark's own run-to-run noise"
            ),
            _ => text,
        }
    })
}

/// The verdict in words with the interval behind it. `names`: (baseline,
/// build); `margin` a fraction.
pub fn sentence(
    c: &Comparison,
    (base, cand): (&str, &str),
    margin: f64,
    higher_is_better: bool,
) -> String {
    let layouts = c.controlled.map_or(0, |r| r.variants);
    let pct = |r: f64| format!("{:.1}%", (r - 1.0).abs() * 100.0);
    let faster = |r: f64| (r < 1.0) != higher_is_better;
    let interval = |r: &crate::stats::hierarchical::LayoutRatio| {
        format!(
            "{} [{}, {}]",
            ratio(r.estimate),
            ratio(r.low),
            ratio(r.high)
        )
    };
    match (c.verdict, c.controlled, c.default_ratio) {
        (Verdict::Artifact, Some(r), Some(d)) => format!(
            "{:.0}% of the {} {} at the default layout disappears across {layouts} layouts{} (controlled {cand} {})",
            c.artifact_share.unwrap_or(0.0) * 100.0,
            pct(d.estimate),
            if faster(d.estimate) { "speedup" } else { "slowdown" },
            if c.reverses { " and reverses" } else { "" },
            interval(&r),
        ),
        (Verdict::Faster | Verdict::Slower, Some(r), _) => format!(
            "{cand} is {} {} than {base} across {layouts} layouts: ratio {}",
            pct(r.estimate),
            if faster(r.estimate) { "faster" } else { "slower" },
            interval(&r),
        ),
        (Verdict::Same, Some(r), _) => format!(
            "{cand} and {base} are within ±{}% across {layouts} layouts: ratio {}",
            trimmed(margin * 100.0),
            interval(&r),
        ),
        (_, Some(r), _) => format!(
            "not decided across {layouts} layouts: ratio {}",
            interval(&r)
        ),
        _ => "too few runs to compare".to_string(),
    }
}

/// What would likely decide an UNKNOWN, from its cause. `layout_noise` and
/// `margin` are fractions.
pub fn hint(undecided: &Undecided, layout_noise: f64, margin: f64) -> String {
    let pct = |x: f64| trimmed((x * 1000.0).round() / 10.0);
    match undecided {
        Undecided::TooFewRuns => "more rounds (--rounds) and layouts (--layouts)".into(),
        Undecided::RunOutliers {
            runs,
            of,
            worst,
            variants,
        } => format!(
            "{runs} of {of} runs are wild (up to {}% worse than their layout's best run, in layouts {}): \
             runs of one binary in one layout vary this much (a busy machine, or the benchmark's own noise); \
             more --rounds, the `user` metric or --pin would steady them",
            pct(worst.exp() - 1.0),
            findings::listed(variants, 5)
        ),
        Undecided::RunNoise { share, rounds } => format!(
            "run-to-run noise within a layout makes {}% of the spread between layouts: about {rounds} rounds (--rounds {rounds}) would likely decide; more layouts would help less",
            pct(*share)
        ),
        Undecided::LayoutSpread { layouts } => format!(
            "layout moves a single-layout ratio by up to ±{}%: about {layouts} layouts would likely decide (--layouts auto --max-layouts {layouts})",
            pct(layout_noise)
        ),
        Undecided::DependsOnMachine { models } => format!(
            "the effect depends on the machine: {}; read the per-model estimates, or decide per CPU model",
            machine_effects(models)
        ),
        Undecided::NearMargin {
            margin_for_same,
            margin_for_effect,
        } => {
            let mut text = format!(
                "the effect is too close to the ±{}% margin for any layout budget to resolve: --margin {} would decide SAME",
                pct(margin),
                pct(*margin_for_same + 0.0005)
            );
            if let Some(m) = margin_for_effect {
                let _ = write!(text, ", --margin under {} would decide the direction", pct(*m));
            }
            text
        }
    }
}

/// Identical variants, their cause, and what to do.
pub fn identical(found: &crate::layout::identical::Identical) -> String {
    use crate::layout::identical::{Cause, Identical};
    let seeds = |s: &[u64]| {
        let list: Vec<String> = s.iter().map(u64::to_string).collect();
        format!(
            "seed{} {}",
            if s.len() == 1 { "" } else { "s" },
            list.join(", ")
        )
    };
    let because = |cause: &Option<Cause>| {
        match cause {
        Some(c) if c.compiler_default => format!(
            ": the variant's {} is the compiler's default for {} (on x86-64 GCC and clang align functions to 16 bytes at -O2), so it changes no code",
            c.variant, c.build
        ),
        Some(c) if c.own_wins => format!(
            ": {}'s own {} comes after {{cflags}} and overrides the variant's {}; put it before {{cflags}}, or leave the source that sets it out of --sources",
            c.build, c.own, c.variant
        ),
        Some(c) => format!(
            ": the variant's {} overrides {}'s own {} (it comes before {{cflags}}), so the flag the builds differ in is gone; leave the source that sets it out of --sources (e.g. --sources shift,shuffle,env for an alignment flag)",
            c.variant, c.build, c.own
        ),
        None => ": no flag of the templates explains it".into(),
    }
    };
    match found {
        Identical::AcrossBuilds {
            build,
            other,
            seeds: s,
            cause,
        } => format!(
            "{build} and {other} have identical code in {} though not in the default layout; left out of the interval{}",
            seeds(s),
            because(cause)
        ),
        Identical::WithinBuild {
            build,
            seeds: s,
            same_as,
            cause,
        } => format!(
            "{build}'s variants {} have the same code as its seed {same_as} although their layouts differ, so it has fewer distinct layouts than counted{}",
            seeds(s),
            because(cause)
        ),
    }
}

/// One note in words.
pub fn note(note: &Note) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    match note {
        Note::Run(note) => crate::compare::render::notes::run_note(note),
        Note::Imported(note) => crate::compare::render::notes::imported(note),
        Note::BuildsReused {
            reused,
            builds,
            cache,
        } => format!("{reused} of {builds} builds reused from identical inputs (cache in {cache})"),
        Note::Identical(found) => identical(found),
        Note::VariantsLeftOut {
            left_out,
            variants,
            build,
            seed,
            error,
        } => format!(
            "{left_out} of {variants} variants left out because a build failed; first: {build} seed {seed}: {}",
            error.as_deref().unwrap_or("failed")
        ),
        Note::Auto(AutoOutcome::AllDecided { layouts, looks }) => format!(
            "--layouts auto: every comparison decided with {layouts} layouts ({looks} look{})",
            plural(*looks)
        ),
        Note::Auto(AutoOutcome::MaxLayoutsReached {
            max_layouts,
            undecided,
        }) => format!(
            "--layouts auto: --max-layouts {max_layouts} reached with {undecided} comparison{} undecided",
            plural(*undecided)
        ),
        Note::Auto(AutoOutcome::Stopped { layouts, looks }) => format!(
            "--layouts auto: stopped after {layouts} layouts ({looks} look{})",
            plural(*looks)
        ),
        Note::Auto(AutoOutcome::LooksUsed {
            layouts,
            looks,
            undecided,
        }) => format!(
            "--layouts auto: all {looks} looks taken, with {layouts} layouts, and {undecided} comparison{} undecided",
            plural(*undecided)
        ),
        Note::AutoRounds {
            looks,
            rounds,
            per_cell,
        } => format!(
            "--layouts auto: run noise within layouts made most of the spread, so {looks} look{} added {rounds} more round{} on the layouts it had instead of more layouts ({per_cell:.1} runs a cell on average)",
            plural(*looks),
            plural(*rounds)
        ),
        Note::FourKAliasing { ratio, penalty: true } => format!(
            "heap layouts: this CPU pays for 4K aliasing (a load 4 KiB after a recent store takes {ratio:.2}× as long; ghostbench probe --only alias), so where heap buffers sit in their pages can move the time, and the heap source varies it"
        ),
        Note::FourKAliasing { ratio, penalty: false } => format!(
            "heap layouts: this CPU shows no 4K-aliasing penalty ({ratio:.2}×; ghostbench probe --only alias), so heap buffers' page offsets matter here mainly through cache sets"
        ),
        Note::EnvironmentJitter => format!(
            "environment jitter: {} of 0–{} bytes per run, recorded per run",
            crate::run::JITTER_VARIABLE,
            crate::run::JITTER_MAX_BYTES - 1
        ),
        Note::Bonferroni {
            comparisons,
            confidence,
            split_over_looks,
        } => format!(
            "{comparisons} comparisons (metrics × builds): every interval is at {:.2}% (Bonferroni{})",
            confidence * 100.0,
            if *split_over_looks {
                ", and α split over the looks"
            } else {
                ""
            }
        ),
        Note::ExplainSkipped => "--explain skipped: interrupted".to_string(),
        Note::Unapplied(u) => crate::compare::render::notes::unapplied(u),
        Note::ZeroValues { metric, runs, of } => format!(
            "{metric} was 0 in {runs} of {of} measured runs (below its resolution): a layout whose estimate is 0 has no ratio and is left out of the interval across layouts; longer runs avoid it"
        ),
        Note::MaxTimeInBatch {
            max_time_s,
            rounds_done,
            rounds,
            layouts,
        } => format!(
            "--max-time {} reached after {rounds_done} of {rounds} rounds of the last {layouts} layouts; \
             the analysis uses the rounds completed",
            value(*max_time_s, Unit::Seconds)
        ),
        Note::MaxTimeBetweenLooks {
            max_time_s,
            layouts,
            undecided,
        } => format!(
            "--max-time {} reached after {layouts} layouts with {undecided} comparisons undecided",
            value(*max_time_s, Unit::Seconds)
        ),
    }
}

/// "SLOWER on X (+5.1%), FASTER on Y (−4.9%)".
pub fn machine_effects(models: &[crate::layout::MachineEffect]) -> String {
    models
        .iter()
        .map(|m| {
            format!(
                "{} on {} ({})",
                m.verdict,
                visible(&m.cpu_model),
                signed_percent(m.estimate - 1.0)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "+5.1%", "−4.9%".
fn signed_percent(x: f64) -> String {
    let text = format!("{:.1}%", x.abs() * 100.0);
    if x < 0.0 {
        format!("−{text}")
    } else {
        format!("+{text}")
    }
}

/// Every note of the report in words, in order: a merge's shard problems,
/// per-model estimates and next wave first.
pub fn notes(report: &LayoutReport) -> Vec<String> {
    let mut lines = report.shards.as_ref().map(shard_lines).unwrap_or_default();
    if let Some(busy) = findings::busy_machine(report) {
        lines.push(busy);
    }
    lines.extend(report.notes.iter().map(note));
    lines.extend(no_default_interval_lines(report));
    // Shard lines quote hosts, CPU models and causes from shard files: one
    // line each, whatever they hold.
    lines
        .into_iter()
        .map(|l| visible(&l).into_owned())
        .collect()
}

/// One line per cause of a default layout without an interval, naming the
/// comparisons it holds for: their ARTIFACT test could not be made.
pub fn no_default_interval_lines(report: &LayoutReport) -> Vec<String> {
    let mut causes: Vec<(crate::layout::NoDefaultInterval, Vec<String>)> = Vec::new();
    for row in &report.matrix {
        let Some(cause) = row.comparison.as_ref().and_then(|c| c.no_default_interval) else {
            continue;
        };
        match causes.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, subjects)) => subjects.push(subject(row)),
            None => causes.push((cause, vec![subject(row)])),
        }
    }
    causes
        .into_iter()
        .map(|(cause, subjects)| {
            let why = match cause {
                crate::layout::NoDefaultInterval::TooFewRuns { a, b } => format!(
                    "the default layout has {a} measured run{} of the baseline and {b} of the build, and its interval needs 2 of each (2 or more rounds)",
                    if a == 1 { "" } else { "s" }
                ),
                crate::layout::NoDefaultInterval::NonPositive => {
                    "a value at the default layout is 0 or below, where a ratio has no log scale".to_string()
                }
                crate::layout::NoDefaultInterval::Undefined => {
                    "the default layout's runs give an infinite or undefined interval".to_string()
                }
            };
            format!(
                "no default-layout interval for {}: {why}; so its verdict is UNKNOWN and ARTIFACT cannot be called",
                subjects.join(", ")
            )
        })
        .collect()
}

/// A merge's lines: each shard problem, each comparison's per-model
/// estimates and interaction test, and whether another wave is needed.
pub fn shard_lines(merged: &crate::layout::merged::Merged) -> Vec<String> {
    let mut lines: Vec<String> = merged.problems.iter().map(shard_problem).collect();
    let used: Vec<&crate::layout::merged::MergedShard> =
        merged.shards.iter().filter(|s| s.used).collect();
    lines.push(format!(
        "merged {} shard{} of {} ({} variants) through wave {}",
        used.len(),
        if used.len() == 1 { "" } else { "s" },
        merged.plan,
        used.iter().map(|s| s.variants.len()).sum::<usize>(),
        merged.wave
    ));
    for c in &merged.models {
        let models = c
            .models
            .iter()
            .map(|m| {
                format!(
                    "{} {} [{}, {}] {} ({} variants)",
                    visible(&m.cpu_model),
                    ratio(m.estimate),
                    ratio(m.low),
                    ratio(m.high),
                    m.verdict,
                    m.variants
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let test = c.interaction.map_or_else(
            || "no interaction test (too few variants per model)".to_string(),
            |i| {
                format!(
                    "{} across models ({}, p = {})",
                    if c.flagged {
                        "the effect differs"
                    } else {
                        "no evidence the effect differs"
                    },
                    match i.test {
                        crate::stats::interaction::InteractionTest::Yuen => "Yuen's trimmed t",
                        crate::stats::interaction::InteractionTest::WelchTrimmedAnova =>
                            "Welch's ANOVA on trimmed means",
                        crate::stats::interaction::InteractionTest::Welch => "Welch's t",
                        crate::stats::interaction::InteractionTest::WelchAnova => "Welch's ANOVA",
                    },
                    format_p(i.p_value)
                )
            },
        );
        lines.push(format!(
            "{} {} per CPU model: {models}; {test}",
            c.build, c.metric
        ));
    }
    if let Some(next) = merged.next_wave {
        lines.push(format!(
            "another wave is needed: {} comparison{} undecided; run wave {} (shards {}..={}), then merge again",
            next.undecided,
            if next.undecided == 1 { " is" } else { "s are" },
            next.wave,
            next.shards[0],
            next.shards[1]
        ));
    }
    lines
}

fn format_p(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// One shard problem in one line.
pub fn shard_problem(problem: &crate::layout::merged::ShardProblem) -> String {
    use crate::layout::merged::ShardProblem;
    match problem {
        ShardProblem::Missing { wave, shards } => format!(
            "missing shard{} {} of wave {wave}: no result file; {} variants left out",
            if shards.len() == 1 { "" } else { "s" },
            findings::listed(shards, 8),
            if shards.len() == 1 { "its" } else { "their" }
        ),
        ShardProblem::Failed { shard, host, cause } => format!(
            "shard {shard} failed{}: {cause}; its variants are left out",
            host.as_deref().map(|h| format!(" on {h}")).unwrap_or_default()
        ),
        ShardProblem::Duplicate {
            shard,
            ignored,
            used,
        } => format!(
            "duplicate shard {shard}: {ignored} is ignored, {used} (started later) is used"
        ),
        ShardProblem::Foreign { file, why } => format!("foreign shard {file}: {why}; ignored"),
        ShardProblem::Unreadable { file, error } => {
            format!("unreadable shard result {file}: {error}; ignored")
        }
        ShardProblem::NoDefaultLayout { first_seed } => format!(
            "the default layout (seed 0, shard 1) is not among the merged variants: the default-layout column is seed {first_seed}'s"
        ),
    }
}

/// What the matrix's numbers are: the interval level, the margin, the
/// estimator, and what spread and layout noise mean.
pub fn legend(report: &LayoutReport) -> String {
    let s = &report.settings;
    format!(
        "{:.1}% intervals; margin ±{}%; per-variant estimate: {:?}; spread = CV across layouts; \
         {} = how far layout alone moves a single-layout ratio (95%)",
        s.confidence * 100.0,
        trimmed(s.margin * 100.0),
        s.estimator,
        label::LAYOUT_NOISE
    )
}

/// "align    on   -falign-functions=…" (the label goes in front).
pub fn source(source: &SourceStatus) -> String {
    format!(
        "{:<8} {:<4} {}",
        source.source.name(),
        if source.active { "on" } else { "off" },
        source.detail
    )
}

/// "build failed: B seed 2: no such flag".
pub fn build_failed(report: &LayoutReport, f: &BuildResult) -> String {
    format!(
        "{}: {} seed {}: {}",
        label::BUILD_FAILED,
        report.builds.get(f.build).map_or("?", |b| b.name.as_str()),
        f.seed,
        f.error.as_deref().unwrap_or("failed")
    )
}

/// The last lines of a failed build's output that a report shows.
pub fn build_output(f: &BuildResult) -> &[String] {
    let keep = f.output_tail.len().saturating_sub(5);
    &f.output_tail[keep..]
}

/// "time: builds 1.2 s, runs 30.0 s, explain 3.1 s, total 34.3 s", or None
/// when `analyze` read the runs (nothing was timed).
pub fn time(report: &LayoutReport) -> Option<String> {
    if report.analyze.is_some() {
        return None;
    }
    let t = &report.timing;
    let explain = if report.explain.is_some() {
        format!(", explain {:.1} s", t.explain_s)
    } else {
        String::new()
    };
    let mut launched = crate::layout::launcher::Counts::default();
    for r in &report.build_results {
        launched.add(&r.launched);
    }
    let split = if launched.compiles + launched.compile_hits + launched.links > 0 {
        format!(
            " ({} compile{} {:.1} s, {} from the cache{}; {} link{} {:.1} s; summed over parallel jobs)",
            launched.compiles,
            if launched.compiles == 1 { "" } else { "s" },
            launched.compile_s,
            launched.compile_hits,
            if launched.realigned > 0 {
                format!(", {} realigned", launched.realigned)
            } else {
                String::new()
            },
            launched.links,
            if launched.links == 1 { "" } else { "s" },
            launched.link_s
        )
    } else {
        String::new()
    };
    Some(format!(
        "{}: builds {:.1} s{split}, runs {:.1} s{explain}, total {:.1} s",
        label::TIME,
        t.build_s,
        t.run_s,
        t.total_s
    ))
}

/// A percentage with one decimal, "n/a" when not finite.
pub fn percent(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}%", x * 100.0)
    } else {
        "n/a".into()
    }
}

/// The matrix row's cells in [`super::COLUMNS`] order, the verdict word last
/// (each format styles it).
pub fn cells(row: &MatrixRow) -> [String; 8] {
    let interval = |e: f64, l: f64, h: f64| format!("{} [{}, {}]", ratio(e), ratio(l), ratio(h));
    let (default_ratio, controlled, noise, verdict) = match &row.comparison {
        None => (
            "baseline".into(),
            "baseline".into(),
            String::new(),
            String::new(),
        ),
        Some(c) => (
            c.default_ratio
                .map_or("n/a".into(), |d| interval(d.estimate, d.low, d.high)),
            c.controlled
                .map_or("n/a".into(), |r| interval(r.estimate, r.low, r.high)),
            if c.layout_noise.is_finite() {
                format!("±{}", percent(c.layout_noise))
            } else {
                "n/a".into()
            },
            c.verdict.to_string(),
        ),
    };
    [
        row.build.clone(),
        row.metric.clone(),
        value(row.default_value, row.unit),
        default_ratio,
        controlled,
        percent(row.spread_cv),
        noise,
        verdict,
    ]
}
