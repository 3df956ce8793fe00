//! The heap layout source: an `LD_PRELOAD` allocator shim (`heap_shim.c`,
//! shipped in the crate) that moves a variant's heap allocations by
//! seed-chosen multiples of 16 bytes within 4 KiB, so the page offsets of
//! its buffers vary across layouts as the code's placement does.
//!
//! The shim is compiled with the system `cc` on first use and kept under
//! `.ghostbench/heap/` (owner-only, reached without following links; the
//! file-safety rule of docs/reliability.md), named by the hash of its source
//! and of the compiler. It applies to dynamically linked programs that use
//! the C library's allocator: a static binary (`LD_PRELOAD` never reaches
//! it) or one that brings its own (defines `malloc`, or links jemalloc,
//! tcmalloc, mimalloc) is left alone, and the report says why.

use super::builds::Fnv;
use crate::run::launch::{self, Launch};
use anyhow::{bail, Context, Result};
use object::{Object, ObjectSection, ObjectSymbol};
use std::path::{Path, PathBuf};

/// The shim's C source.
pub const SOURCE: &str = include_str!("heap_shim.c");

/// The variable that carries a variant's seed to the shim.
pub const VARIABLE: &str = "GHOSTBENCH_HEAP";

/// Where the compiled shim is kept, under the work root.
const DIR: &str = ".ghostbench/heap";

/// The shim's compile takes a second; this bounds a compiler that hangs.
const COMPILE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Libraries that replace the C library's allocator.
const ALLOCATORS: [&str; 4] = ["libjemalloc", "libtcmalloc", "libmimalloc", "libhoard"];

/// splitmix64's finalizer, as `mix` in heap_shim.c.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The bytes the shim takes at start for `seed` (0–4080, a multiple of
/// 16): how far the heap's small objects move. Seed 0 runs without the shim.
pub fn start_shift(seed: u64) -> u32 {
    if seed == 0 {
        return 0;
    }
    ((mix(seed ^ 0x53_5441_5254) % 256) * 16) as u32
}

/// The variables of a run of `seed` with the shim at `shim`: none for the
/// default layout. The user's own `LD_PRELOAD` (`user`) stays, after ours.
pub fn env(shim: &Path, seed: u64, user: Option<&str>) -> Vec<(String, String)> {
    if seed == 0 {
        return Vec::new();
    }
    let mut preload = shim.display().to_string();
    if let Some(user) = user.filter(|u| !u.trim().is_empty()) {
        preload.push(' ');
        preload.push_str(user);
    }
    vec![
        ("LD_PRELOAD".to_string(), preload),
        (VARIABLE.to_string(), seed.to_string()),
    ]
}

/// The compiled shim under `root/.ghostbench/heap/`, compiled now if it is
/// not there ([`crate::run::ToolError::Missing`] in the chain without `cc`).
pub fn shim(root: &Path) -> Result<PathBuf> {
    let dir = crate::safe_file::private_dir(root, Path::new(DIR))
        .with_context(|| format!("cannot use {}", root.join(DIR).display()))?;
    let cc = launch::tool("cc")?;
    let mut hash = Fnv::default();
    hash.write(SOURCE.as_bytes());
    let cc_real = std::fs::canonicalize(&cc).unwrap_or(cc.clone());
    hash.write(cc_real.display().to_string().as_bytes());
    if let Ok(meta) = std::fs::metadata(&cc_real) {
        hash.write(&meta.len().to_le_bytes());
        if let Ok(modified) = meta.modified() {
            hash.write(format!("{modified:?}").as_bytes());
        }
    }
    let name = format!("shim-{:016x}", hash.finish());
    let object = dir.join(format!("{name}.so"));
    match std::fs::symlink_metadata(&object) {
        Ok(meta) if meta.file_type().is_file() => return Ok(object),
        Ok(_) => bail!(
            "{} is not a regular file; remove it (ghostbench keeps its heap shim there)",
            object.display()
        ),
        Err(_) => {}
    }
    // Several ghostbench processes may share the directory: compile under
    // names of this process, then rename into place.
    let pid = std::process::id();
    let source = dir.join(format!("{name}.{pid}.c"));
    let temp = dir.join(format!("{name}.{pid}.so"));
    let _ = std::fs::remove_file(&source);
    let _ = std::fs::remove_file(&temp);
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&source)
            .with_context(|| format!("cannot write {}", source.display()))?;
        file.write_all(SOURCE.as_bytes())?;
    }
    let argv = [
        cc.display().to_string(),
        "-O2".into(),
        // gcc would turn calloc's malloc + memset into a call to calloc.
        "-fno-builtin".into(),
        "-shared".into(),
        "-fPIC".into(),
        source.display().to_string(),
        "-o".into(),
        temp.display().to_string(),
    ];
    let compile = Launch {
        timeout: Some(COMPILE_TIMEOUT),
        ..Launch::new(&argv)
    };
    let result = compile.run_ok();
    let _ = std::fs::remove_file(&source);
    match result {
        Ok(_) => {}
        Err((_, Some(outcome))) => {
            let _ = std::fs::remove_file(&temp);
            bail!(
                "cc could not compile the heap shim ({}): {}",
                outcome.exit.describe(),
                String::from_utf8_lossy(&outcome.stderr_tail).trim()
            )
        }
        Err((error, None)) => bail!("cc: {error}"),
    }
    std::fs::rename(&temp, &object)?;
    Ok(object)
}

/// Why the shim cannot move `binary`'s heap, or None when it can.
pub fn inapplicable(binary: &Path) -> Option<String> {
    let mapped = match crate::elf::Mapped::open(binary) {
        Ok(m) => m,
        Err(e) => return Some(format!("cannot read {}: {e}", binary.display())),
    };
    let Ok(file) = object::File::parse(mapped.bytes()) else {
        return Some("not an ELF file the shim could be loaded into".into());
    };
    if file.section_by_name(".interp").is_none() {
        return Some("statically linked: LD_PRELOAD does not reach it".into());
    }
    let defines_malloc = file
        .dynamic_symbols()
        .chain(file.symbols())
        .any(|s| !s.is_undefined() && s.name() == Ok("malloc"));
    if defines_malloc {
        return Some("it brings its own allocator (it defines malloc)".into());
    }
    if let Some(dynstr) = file.section_by_name(".dynstr") {
        if let Ok(data) = dynstr.data() {
            for library in ALLOCATORS {
                if data.windows(library.len()).any(|w| w == library.as_bytes()) {
                    return Some(format!("it brings its own allocator ({library})"));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_shifts_are_multiples_of_16_within_4_kib_and_vary() {
        assert_eq!(start_shift(0), 0);
        let shifts: std::collections::BTreeSet<u32> = (1..=16).map(start_shift).collect();
        assert!(shifts.iter().all(|s| s % 16 == 0 && *s < 4096));
        assert!(shifts.len() >= 12, "{shifts:?}");
        // Computed independently (Python, splitmix64's finalizer as
        // published by Vigna): mix(1 ^ 0x5354415254) = 0x08017af58d118d28,
        // whose remainder mod 256 is 40.
        assert_eq!(start_shift(1), 40 * 16);
        assert_eq!(start_shift(4), 3952);
    }

    #[test]
    fn env_of_a_variant() {
        let shim = Path::new("/w/.ghostbench/heap/shim-1.so");
        assert!(env(shim, 0, None).is_empty());
        assert_eq!(
            env(shim, 3, Some("/usr/lib/libfoo.so")),
            [
                (
                    "LD_PRELOAD".to_string(),
                    "/w/.ghostbench/heap/shim-1.so /usr/lib/libfoo.so".to_string()
                ),
                ("GHOSTBENCH_HEAP".to_string(), "3".to_string())
            ]
        );
    }

    #[test]
    fn the_shim_is_compiled_once_and_refuses_a_planted_link() {
        if !crate::test_skip::require_tool("cc") {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let first = shim(tmp.path()).unwrap();
        let modified = std::fs::metadata(&first).unwrap().modified().unwrap();
        let again = shim(tmp.path()).unwrap();
        assert_eq!(first, again);
        assert_eq!(
            std::fs::metadata(&again).unwrap().modified().unwrap(),
            modified
        );
        // A link in place of the shim is not followed, nor replaced.
        std::fs::remove_file(&first).unwrap();
        std::os::unix::fs::symlink("/dev/null", &first).unwrap();
        let error = shim(tmp.path()).unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
        // A link in place of the directory is refused by the walk.
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(other.path().join(".ghostbench")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), other.path().join(".ghostbench/heap")).unwrap();
        assert!(shim(other.path()).is_err());
    }
}
