//! Variants that are not what they claim (issue 25): after a batch is built,
//! the code hash of every (build, variant) says which binaries run the same
//! instructions at the same addresses. Two cases are misfires:
//!
//! - **across builds**: at some seed a build's code equals the baseline's
//!   (or another build's), though their default layouts differ: a variant's
//!   flag erased the difference between the builds (a user's
//!   `-falign-functions=64` before `{cflags}`, overridden by the variant's
//!   `-falign-functions=16`). Such seeds would put a ratio of exactly 1 into
//!   the interval; they are left out for every build.
//! - **within a build**: variants with different perturbations came out
//!   identical (a user's flag after `{cflags}` overriding the variant's):
//!   the build has fewer distinct layouts than the report counts. Reported.
//!
//! The cause is looked for in the templates: a word that one build has and
//! the other has not, or that comes after `{cflags}`, setting the same option
//! as a variant's flag. Facts only; `render::prose` words them.

use super::builds::BuildResult;
use super::variants::Variant;
use std::collections::HashMap;

/// Why variants came out identical: a template's own flag and the variant's
/// flag for the same option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// The build whose template has the flag.
    pub build: String,
    /// The template's own flag (`-falign-functions=64`).
    pub own: String,
    /// The variant's flag for the same option (`-falign-functions=16`).
    pub variant: String,
    /// The template's flag comes after `{cflags}`, so it wins; else the
    /// variant's flag wins.
    pub own_wins: bool,
    /// No template flag: the variant's flag asks for what the compiler does
    /// anyway (`align=16` equal to the default layout: GCC's and clang's
    /// function alignment on x86-64 at -O2). `own` is then empty.
    pub compiler_default: bool,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identical {
    /// `build`'s code equals `other`'s at these seeds, though not at seed 0;
    /// the seeds are left out of the analysis.
    AcrossBuilds {
        build: String,
        other: String,
        seeds: Vec<u64>,
        cause: Option<Cause>,
    },
    /// `build`'s variants `seeds` have the same code as its variant
    /// `same_as`, with other perturbations.
    WithinBuild {
        build: String,
        seeds: Vec<u64>,
        same_as: u64,
        cause: Option<Cause>,
    },
}

/// The option a flag sets: `-falign-functions=64` → `-falign-functions`,
/// `-fno-x` → `-fx`, `-O3` → `-O`.
fn option(flag: &str) -> String {
    if flag.starts_with("-O") {
        return "-O".into();
    }
    let flag = flag
        .strip_prefix("-fno-")
        .map_or(flag.to_string(), |r| format!("-f{r}"));
    flag.split('=').next().unwrap_or_default().to_string()
}

/// The template's words, and the index of the `{cflags}` word (if any).
fn words(template: &str) -> (Vec<String>, Option<usize>) {
    let words = shlex::split(template)
        .unwrap_or_else(|| template.split_whitespace().map(String::from).collect());
    let at = words.iter().position(|w| w.contains("{cflags}"));
    (words, at)
}

/// A flag of `build`'s template for an option the variant sets: one that
/// `other`'s template lacks (`other` None: any after `{cflags}`).
fn cause(build: &Template, other: Option<&Template>, variant: &Variant) -> Option<Cause> {
    let (mine, at) = words(build.template);
    let theirs = other.map(|o| words(o.template).0);
    let flags = variant.cflags();
    for (i, word) in mine.iter().enumerate() {
        if !word.starts_with('-') {
            continue;
        }
        let after = at.is_some_and(|at| i > at);
        match &theirs {
            Some(theirs) if theirs.contains(word) => continue,
            None if !after => continue,
            _ => {}
        }
        if let Some(v) = flags.iter().find(|f| option(f) == option(word)) {
            return Some(Cause {
                build: build.name.to_string(),
                own: word.clone(),
                variant: v.clone(),
                own_wins: after,
                compiler_default: false,
            });
        }
    }
    None
}

/// Variants that differ from the variant `same_as` only in their alignment,
/// one of them unaligned: the alignment they ask for is the compiler's own
/// default (the code is identical), named as the cause.
fn compiler_default(build: &str, batch: &[Variant], seeds: &[u64], same_as: u64) -> Option<Cause> {
    let of = |seed: u64| batch.iter().find(|v| v.seed == seed);
    let first = of(same_as)?;
    let unaligned = |v: &Variant| Variant {
        align: None,
        seed: 0,
        ..v.clone()
    };
    let mut aligned = None;
    for v in seeds.iter().filter_map(|&s| of(s)) {
        if unaligned(v) != unaligned(first) {
            return None;
        }
        match (first.align, v.align) {
            (None, Some(n)) | (Some(n), None) => aligned = Some(n),
            _ => return None,
        }
    }
    let n = aligned?;
    Some(Cause {
        build: build.to_string(),
        own: String::new(),
        variant: format!("-falign-functions={n}"),
        own_wins: false,
        compiler_default: true,
    })
}

/// A build's name and template (`BuildSpec`'s fields; this file sits below
/// `layout/mod.rs`, which holds the findings as notes).
pub struct Template<'a> {
    pub name: &'a str,
    pub template: &'a str,
}

/// The findings of one batch, and the seeds to leave out. `defaults` holds
/// every build's seed-0 code hash (from the first batch).
pub fn find(
    builds: &[Template],
    batch: &[Variant],
    results: &[BuildResult],
    defaults: &HashMap<usize, String>,
) -> (Vec<Identical>, Vec<u64>) {
    let hash = |b: usize, seed: u64| {
        results
            .iter()
            .find(|r| r.build == b && r.seed == seed && r.ok)
            .and_then(|r| r.code_hash.clone())
            .or_else(|| (seed == 0).then(|| defaults.get(&b).cloned()).flatten())
    };
    let mut found = Vec::new();
    let mut left_out = Vec::new();
    for b in 1..builds.len() {
        for o in 0..b {
            let (Some(db), Some(dorig)) = (hash(b, 0), hash(o, 0)) else {
                continue;
            };
            if db == dorig {
                continue; // identical by the user's choice (an A/A test)
            }
            let seeds: Vec<u64> = batch
                .iter()
                .map(|v| v.seed)
                .filter(|&s| s != 0 && hash(b, s).is_some() && hash(b, s) == hash(o, s))
                .collect();
            if seeds.is_empty() {
                continue;
            }
            let variant = batch.iter().find(|v| v.seed == seeds[0]);
            let cause = variant.and_then(|v| {
                cause(&builds[b], Some(&builds[o]), v)
                    .or_else(|| cause(&builds[o], Some(&builds[b]), v))
            });
            left_out.extend(&seeds);
            found.push(Identical::AcrossBuilds {
                build: builds[b].name.to_string(),
                other: builds[o].name.to_string(),
                seeds,
                cause,
            });
        }
    }
    for (b, build) in builds.iter().enumerate() {
        // Variants with other perturbations than an earlier one, same code.
        let mut groups: Vec<(u64, Vec<u64>)> = Vec::new();
        for v in batch {
            let Some(h) = hash(b, v.seed) else { continue };
            let earlier = batch
                .iter()
                .take_while(|w| w.seed != v.seed)
                .find(|w| w.describe() != v.describe() && hash(b, w.seed).as_ref() == Some(&h));
            if let Some(w) = earlier {
                match groups.iter_mut().find(|(first, _)| *first == w.seed) {
                    Some((_, seeds)) => seeds.push(v.seed),
                    None => groups.push((w.seed, vec![v.seed])),
                }
            }
        }
        for (same_as, seeds) in groups {
            let cause = batch
                .iter()
                .filter(|v| seeds.contains(&v.seed) || v.seed == same_as)
                .find_map(|v| cause(build, None, v))
                .or_else(|| compiler_default(build.name, batch, &seeds, same_as));
            found.push(Identical::WithinBuild {
                build: build.name.to_string(),
                seeds,
                same_as,
                cause,
            });
        }
    }
    left_out.sort_unstable();
    left_out.dedup();
    (found, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::launcher::Counts;

    fn result(build: usize, seed: u64, hash: &str) -> BuildResult {
        BuildResult {
            build,
            seed,
            ok: true,
            reused: false,
            seconds: 0.0,
            command: String::new(),
            error: None,
            output_tail: Vec::new(),
            launched: Counts::default(),
            code_hash: Some(hash.into()),
        }
    }

    /// Layout `seed` with `-falign-functions=n` and nothing else moved.
    fn aligned(seed: u64, n: u32) -> Variant {
        Variant {
            seed,
            align: Some(n),
            shift: 0,
            shuffle: None,
            heap: None,
        }
    }

    fn spec<'a>(name: &'a str, template: &'a str) -> Template<'a> {
        Template { name, template }
    }

    #[test]
    fn a_users_alignment_before_cflags_is_named_and_its_seeds_left_out() {
        let builds = [
            spec("A", "cc -O2 {cflags} {ldflags} x.c -o {out}"),
            spec(
                "B",
                "cc -O2 -falign-functions=64 {cflags} {ldflags} x.c -o {out}",
            ),
        ];
        let batch = [Variant::default_layout(), aligned(1, 16), aligned(2, 32)];
        let results = [
            result(0, 0, "a0"),
            result(0, 1, "x1"),
            result(0, 2, "x2"),
            result(1, 0, "b0"),
            result(1, 1, "x1"),
            result(1, 2, "x2"),
        ];
        let (found, left_out) = find(&builds, &batch, &results, &HashMap::new());
        assert_eq!(left_out, [1, 2]);
        assert_eq!(
            found,
            [Identical::AcrossBuilds {
                build: "B".into(),
                other: "A".into(),
                seeds: vec![1, 2],
                cause: Some(Cause {
                    build: "B".into(),
                    own: "-falign-functions=64".into(),
                    variant: "-falign-functions=16".into(),
                    own_wins: false,
                    compiler_default: false,
                }),
            }]
        );
    }

    #[test]
    fn a_users_alignment_after_cflags_makes_variants_identical_within_the_build() {
        let builds = [
            spec("A", "cc -O2 {cflags} x.c -o {out}"),
            spec("B", "cc -O2 {cflags} -falign-functions=64 x.c -o {out}"),
        ];
        let batch = [Variant::default_layout(), aligned(1, 16), aligned(2, 32)];
        let results = [
            result(0, 0, "a0"),
            result(0, 1, "a1"),
            result(0, 2, "a2"),
            result(1, 0, "b0"),
            result(1, 1, "b1"),
            result(1, 2, "b1"),
        ];
        let (found, left_out) = find(&builds, &batch, &results, &HashMap::new());
        assert!(left_out.is_empty());
        let [Identical::WithinBuild {
            build,
            seeds,
            same_as,
            cause: Some(cause),
        }] = found.as_slice()
        else {
            panic!("{found:?}")
        };
        assert_eq!(
            (build.as_str(), seeds.as_slice(), *same_as),
            ("B", &[2][..], 1)
        );
        assert!(
            cause.own_wins && cause.own == "-falign-functions=64",
            "{cause:?}"
        );
    }

    #[test]
    fn align_16_equal_to_the_default_layout_is_the_compilers_default() {
        let builds = [spec("A", "cc -O2 {cflags} x.c -o {out}")];
        let batch = [Variant::default_layout(), aligned(1, 16), aligned(2, 32)];
        let results = [result(0, 0, "a0"), result(0, 1, "a0"), result(0, 2, "a2")];
        let (found, left_out) = find(&builds, &batch, &results, &HashMap::new());
        assert!(left_out.is_empty());
        let [Identical::WithinBuild {
            seeds,
            same_as: 0,
            cause: Some(cause),
            ..
        }] = found.as_slice()
        else {
            panic!("{found:?}")
        };
        assert_eq!(seeds, &[1]);
        assert!(cause.compiler_default, "{cause:?}");
        assert_eq!(cause.variant, "-falign-functions=16");
        // A shift as well as the alignment: not the compiler's default alone.
        let moved = Variant {
            shift: 16,
            ..aligned(1, 16)
        };
        let batch = [Variant::default_layout(), moved, aligned(2, 32)];
        let (found, _) = find(&builds, &batch, &results, &HashMap::new());
        let [Identical::WithinBuild { cause: None, .. }] = found.as_slice() else {
            panic!("{found:?}")
        };
    }

    #[test]
    fn identical_default_layouts_are_the_users_choice() {
        let builds = [
            spec("A", "cc {cflags} x.c -o {out}"),
            spec("B", "cc {cflags} x.c -o {out}"),
        ];
        let batch = [Variant::default_layout()];
        let results = [result(0, 0, "h"), result(1, 0, "h")];
        assert_eq!(
            find(&builds, &batch, &results, &HashMap::new()),
            (vec![], vec![])
        );
    }
}
