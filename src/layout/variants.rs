//! Layout variants: seed → perturbations (docs/architecture.md §5).
//!
//! A variant is a seed. The same seed gives every build the same
//! perturbations, so variants are matched across builds. Seed 0 is the
//! default layout: no perturbation at all, what a naive user measures.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One source of layout perturbation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// `-falign-functions=N -falign-loops=N`.
    Align,
    /// A padding object linked first, shifting all code by K bytes.
    Shift,
    /// `-ffunction-sections` and the linker's section shuffle.
    Shuffle,
    /// Environment-size jitter at run time (always on).
    Env,
    /// Heap allocations moved by an `LD_PRELOAD` allocator shim (`heap`).
    Heap,
}

impl Source {
    pub fn parse(text: &str) -> Result<Source, String> {
        match text.trim() {
            "align" => Ok(Source::Align),
            "shift" => Ok(Source::Shift),
            "shuffle" => Ok(Source::Shuffle),
            "env" => Ok(Source::Env),
            "heap" => Ok(Source::Heap),
            other => Err(format!(
                "unknown layout source {other:?}: expected align, shift, shuffle, env or heap"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Source::Align => "align",
            Source::Shift => "shift",
            Source::Shuffle => "shuffle",
            Source::Env => "env",
            Source::Heap => "heap",
        }
    }
}

/// Whether a source took part, and why not if it did not.
#[derive(Debug, Clone, Serialize)]
pub struct SourceStatus {
    pub source: Source,
    pub active: bool,
    /// What it used ("mold"), or why it is off.
    pub detail: String,
}

/// The linker that provides section shuffling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum ShuffleLinker {
    /// mold, selected through `-B DIR` (works with any GCC) or `-fuse-ld=mold`.
    Mold { b_dir: Option<PathBuf> },
    /// lld through `-fuse-ld=lld`.
    Lld,
}

impl ShuffleLinker {
    /// The installed linker, mold first; or why there is none.
    pub fn detect(path_var: Option<std::ffi::OsString>) -> Result<ShuffleLinker, String> {
        let on_path = |name: &str| crate::run::command::resolve_program(name, path_var.clone());
        if on_path("mold").is_ok() {
            let b_dir = Path::new("/usr/libexec/mold");
            let b_dir = b_dir.join("ld").exists().then(|| b_dir.to_path_buf());
            return Ok(ShuffleLinker::Mold { b_dir });
        }
        if on_path("ld.lld").is_ok() {
            return Ok(ShuffleLinker::Lld);
        }
        Err("neither mold nor ld.lld is on PATH".into())
    }

    pub fn name(&self) -> &'static str {
        match self {
            ShuffleLinker::Mold { .. } => "mold",
            ShuffleLinker::Lld => "lld",
        }
    }

    fn flags(&self, seed: u64) -> Vec<String> {
        match self {
            ShuffleLinker::Mold { b_dir: Some(dir) } => vec![
                format!("-B{}", dir.display()),
                format!("-Wl,--shuffle-sections={seed}"),
            ],
            ShuffleLinker::Mold { b_dir: None } => vec![
                "-fuse-ld=mold".into(),
                format!("-Wl,--shuffle-sections={seed}"),
            ],
            ShuffleLinker::Lld => vec![
                "-fuse-ld=lld".into(),
                format!("-Wl,--shuffle-sections=*={seed}"),
            ],
        }
    }
}

/// The perturbations of one seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Variant {
    pub seed: u64,
    /// `-falign-functions=N -falign-loops=N`; None = the compiler's default.
    pub align: Option<u32>,
    /// Bytes of padding linked first; 0 = none.
    pub shift: u32,
    /// Section-shuffle seed, when shuffle is active.
    pub shuffle: Option<u64>,
    /// Bytes the heap shim takes at start (the heap's small objects move by
    /// it; every allocation also gets its own shift), when heap is active.
    #[serde(default)]
    pub heap: Option<u32>,
}

const ALIGNS: [Option<u32>; 4] = [None, Some(16), Some(32), Some(64)];
const SHIFTS: [u32; 4] = [0, 16, 32, 48];

impl Variant {
    /// The default layout.
    pub fn default_layout() -> Variant {
        Variant {
            seed: 0,
            align: None,
            shift: 0,
            shuffle: None,
            heap: None,
        }
    }

    /// The perturbations of `seed` with the given sources active. Deterministic.
    /// A non-zero seed never comes out identical to the default layout if any
    /// build-time source is active.
    pub fn from_seed(seed: u64, align: bool, shift: bool, shuffle: bool) -> Variant {
        if seed == 0 {
            return Variant::default_layout();
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6c61_796f_7574);
        let mut variant = Variant {
            seed,
            align: if align {
                ALIGNS[rng.random_range(0..ALIGNS.len())]
            } else {
                None
            },
            shift: if shift {
                SHIFTS[rng.random_range(0..SHIFTS.len())]
            } else {
                0
            },
            shuffle: shuffle.then_some(seed),
            heap: None,
        };
        if variant.align.is_none() && variant.shift == 0 && variant.shuffle.is_none() {
            if shift {
                variant.shift = SHIFTS[1 + (seed as usize % 3)];
            } else if align {
                variant.align = ALIGNS[1 + (seed as usize % 3)];
            }
        }
        variant
    }

    /// The variant with the heap source on (`on`): every seed but the
    /// default layout's runs under the shim (`heap::start_shift`).
    pub fn with_heap(mut self, on: bool) -> Variant {
        self.heap = (on && self.seed != 0).then(|| super::heap::start_shift(self.seed));
        self
    }

    /// Compiler flags: alignment, and `-ffunction-sections` for shuffling.
    pub fn cflags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if let Some(n) = self.align {
            flags.push(format!("-falign-functions={n}"));
            flags.push(format!("-falign-loops={n}"));
        }
        if self.shuffle.is_some() {
            flags.push("-ffunction-sections".into());
        }
        flags
    }

    /// Link flags: the padding object first, then the shuffle linker.
    pub fn ldflags(&self, pad: Option<&Path>, linker: Option<&ShuffleLinker>) -> Vec<String> {
        let mut flags = Vec::new();
        if let (true, Some(pad)) = (self.shift > 0, pad) {
            flags.push(pad.display().to_string());
        }
        if let (Some(seed), Some(linker)) = (self.shuffle, linker) {
            flags.extend(linker.flags(seed));
        }
        flags
    }

    /// "align=32 shift=16 shuffle=5", or "default layout".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.align {
            parts.push(format!("align={n}"));
        }
        if self.shift > 0 {
            parts.push(format!("shift={}", self.shift));
        }
        if let Some(s) = self.shuffle {
            parts.push(format!("shuffle={s}"));
        }
        if let Some(h) = self.heap {
            parts.push(format!("heap=+{h}"));
        }
        if parts.is_empty() {
            "default layout".into()
        } else {
            parts.join(" ")
        }
    }
}

/// The assembly of a padding object of `bytes` bytes. It sits in a section
/// that the default linker script places before `.text.startup` and `.text`
/// (docs/architecture.md §5), so `main` moves too.
pub fn pad_assembly(bytes: u32) -> String {
    format!(
        "\t.section .text.unlikely.ghostpad,\"ax\",@progbits\n\t.globl ghostbench_pad_{bytes}\nghostbench_pad_{bytes}:\n\t.skip {bytes}, 0x90\n\t.section .note.GNU-stack,\"\",@progbits\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_zero_is_untouched_and_seeds_are_deterministic() {
        let zero = Variant::from_seed(0, true, true, true);
        assert_eq!(zero, Variant::default_layout());
        assert!(zero.cflags().is_empty());
        assert!(zero.ldflags(Some(Path::new("/p.o")), None).is_empty());
        for seed in 1..50 {
            let v = Variant::from_seed(seed, true, true, false);
            assert_eq!(v, Variant::from_seed(seed, true, true, false));
            assert!(
                v.align.is_some() || v.shift > 0,
                "seed {seed} is the default"
            );
            assert!(v.shift % 16 == 0 && v.shift < 64);
        }
        let only_align = Variant::from_seed(3, true, false, false);
        assert_eq!(only_align.shift, 0);
        assert!(only_align.align.is_some());
    }

    #[test]
    fn flags() {
        let v = Variant {
            seed: 7,
            align: Some(32),
            shift: 16,
            shuffle: Some(7),
            heap: None,
        };
        assert_eq!(
            v.cflags(),
            [
                "-falign-functions=32",
                "-falign-loops=32",
                "-ffunction-sections"
            ]
        );
        let ld = v.ldflags(Some(Path::new("/w/pad16.o")), Some(&ShuffleLinker::Lld));
        assert_eq!(
            ld,
            ["/w/pad16.o", "-fuse-ld=lld", "-Wl,--shuffle-sections=*=7"]
        );
        assert_eq!(v.describe(), "align=32 shift=16 shuffle=7");
        let heaped = v.clone().with_heap(true);
        assert_eq!(heaped.heap, Some(super::super::heap::start_shift(7)));
        assert!(heaped
            .describe()
            .starts_with("align=32 shift=16 shuffle=7 heap=+"));
        assert_eq!(Variant::default_layout().with_heap(true).heap, None);
        assert_eq!(Source::parse("heap"), Ok(Source::Heap));
        assert!(pad_assembly(16).contains(".skip 16"));
        assert!(Source::parse("bogus").is_err());
    }
}
