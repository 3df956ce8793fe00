//! Which factors `noise` can test on this machine and this program, and
//! the settings of one cell of the design (a mask over the tested factors).

use super::{Factor, FactorPlan, NoiseOptions, NotTested};
use std::path::Path;

/// A program larger than this is not copied once per run.
pub const MAX_COPY_BYTES: u64 = 512 << 20;

/// The allocators a program may bring instead of glibc's (by library name).
const ALLOCATORS: [&str; 4] = ["libjemalloc", "libtcmalloc", "libmimalloc", "libhoard"];

/// What the machine says, read once (a parameter so tests can set it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// kernel.randomize_va_space (None: unreadable).
    pub randomize_va_space: Option<String>,
    /// The bracketed word of /sys/kernel/mm/transparent_hugepage/enabled.
    pub thp_mode: Option<String>,
    /// The CPUs this process may use.
    pub cpus: Vec<usize>,
    /// glibc's version (`gnu_get_libc_version`).
    pub glibc: Option<String>,
}

impl Machine {
    pub fn read() -> Machine {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let thp_mode = read("/sys/kernel/mm/transparent_hugepage/enabled").and_then(|text| {
            let start = text.find('[')? + 1;
            let end = start + text[start..].find(']')?;
            Some(text[start..end].to_string())
        });
        Machine {
            randomize_va_space: read("/proc/sys/kernel/randomize_va_space")
                .map(|v| v.trim().to_string()),
            thp_mode,
            cpus: crate::run::spawn::allowed_cpus().unwrap_or_default(),
            glibc: glibc_version(),
        }
    }
}

#[cfg(target_env = "gnu")]
fn glibc_version() -> Option<String> {
    // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
    let text = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    Some(text.to_string_lossy().into_owned())
}

#[cfg(not(target_env = "gnu"))]
fn glibc_version() -> Option<String> {
    None
}

/// What the program is, as far as the factors care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// Run through `sh -c`.
    Shell,
    /// A `#!` script.
    Script,
    NotElf(String),
    Elf {
        size: u64,
        dynamic: bool,
        glibc: bool,
        /// The allocator it brings, if any.
        allocator: Option<String>,
    },
}

impl Program {
    pub fn inspect(path: &Path, shell: bool) -> Program {
        if shell {
            return Program::Shell;
        }
        let mapped = match crate::elf::Mapped::open(path) {
            Ok(m) => m,
            Err(e) => return Program::NotElf(format!("cannot read {}: {e}", path.display())),
        };
        let bytes = mapped.bytes();
        if bytes.starts_with(b"#!") {
            return Program::Script;
        }
        if let Err(e) = crate::elf::check_header(bytes) {
            return Program::NotElf(e.to_string());
        }
        let Ok(file) = object::File::parse(bytes) else {
            return Program::NotElf("an ELF file object cannot parse".into());
        };
        use object::{Object, ObjectSection, ObjectSymbol};
        let dynamic = file.section_by_name(".interp").is_some();
        let dynstr = file
            .section_by_name(".dynstr")
            .and_then(|s| s.data().ok())
            .unwrap_or_default();
        let has = |name: &str| dynstr.windows(name.len()).any(|w| w == name.as_bytes());
        let defines_malloc = file
            .dynamic_symbols()
            .chain(file.symbols())
            .any(|s| !s.is_undefined() && s.name() == Ok("malloc"));
        let allocator = ALLOCATORS
            .iter()
            .find(|a| has(a))
            .map(|a| a.to_string())
            .or_else(|| defines_malloc.then(|| "its own malloc".to_string()));
        Program::Elf {
            size: bytes.len() as u64,
            dynamic,
            glibc: has("libc.so.6"),
            allocator,
        }
    }
}

/// Whether glibc `version` ("2.36") has the `glibc.malloc.hugetlb` tunable (2.35+).
fn has_hugetlb_tunable(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 35)
}

/// Each factor's place in the design, in [`Factor::ALL`]'s order.
pub fn factors(options: &NoiseOptions, machine: &Machine, program: &Program) -> Vec<FactorPlan> {
    Factor::ALL
        .iter()
        .map(|&factor| FactorPlan {
            factor,
            not_tested: if options.skip.contains(&factor) {
                Some(NotTested::Skipped)
            } else {
                why_not(factor, machine, program)
            },
        })
        .collect()
}

fn why_not(factor: Factor, machine: &Machine, program: &Program) -> Option<NotTested> {
    let inspectable = || match program {
        Program::Shell => Some(NotTested::Shell),
        Program::Script => Some(NotTested::Script),
        Program::NotElf(cause) => Some(NotTested::NotElf(cause.clone())),
        Program::Elf { .. } => None,
    };
    match factor {
        Factor::Aslr => {
            if machine.randomize_va_space.as_deref() == Some("0") {
                return Some(NotTested::AslrOffMachineWide);
            }
            personality_works().err().map(NotTested::NoPersonality)
        }
        Factor::Pin => (machine.cpus.len() < 2).then_some(NotTested::OneCpu),
        Factor::Env => None,
        Factor::Heap => {
            if let Some(why) = inspectable() {
                return Some(why);
            }
            let Program::Elf {
                dynamic,
                glibc,
                allocator,
                ..
            } = program
            else {
                return None;
            };
            if !dynamic {
                return Some(NotTested::Static);
            }
            if !glibc {
                return Some(NotTested::NotGlibc);
            }
            if let Some(allocator) = allocator {
                return Some(NotTested::OwnAllocator(allocator.clone()));
            }
            match machine.glibc.as_deref() {
                Some(v) if !has_hugetlb_tunable(v) => {
                    return Some(NotTested::GlibcTooOld(v.to_string()))
                }
                None => return Some(NotTested::NotGlibc),
                _ => {}
            }
            match machine.thp_mode.as_deref() {
                Some("madvise") => None,
                Some("always") => Some(NotTested::ThpAlways),
                _ => Some(NotTested::ThpOff),
            }
        }
        Factor::Fresh => {
            if let Some(why) = inspectable() {
                return Some(why);
            }
            match program {
                Program::Elf { size, .. } if *size > MAX_COPY_BYTES => {
                    Some(NotTested::TooLarge(*size))
                }
                _ => None,
            }
        }
    }
}

/// Whether this thread may set `ADDR_NO_RANDOMIZE` (seccomp may forbid it).
fn personality_works() -> Result<(), String> {
    const QUERY: libc::c_ulong = 0xffff_ffff;
    // SAFETY: personality(2) takes and returns plain integers; the persona
    // found is put back at once.
    unsafe {
        let saved = libc::personality(QUERY);
        if saved < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        if libc::personality((saved | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        libc::personality(saved as libc::c_ulong);
    }
    Ok(())
}

/// The CPU the pinned level uses: `--pin`, else the last CPU allowed (the
/// first is where interrupts and housekeeping more often land).
pub fn pin_cpu(options: &NoiseOptions, machine: &Machine) -> Option<usize> {
    options.pin.or_else(|| machine.cpus.last().copied())
}

/// The settings of one run in the cell `mask` over the `tested` factors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub no_aslr: bool,
    pub pin: Option<usize>,
    pub env_jitter: bool,
    /// The `glibc.malloc.hugetlb` value (None: the heap factor is not tested).
    pub hugetlb: Option<u8>,
    /// A fresh copy (true), the one copy (false), or the program itself (None).
    pub fresh_copy: Option<bool>,
}

/// Whether `factor` varies in `cell` (false when it is not tested).
pub fn varies(tested: &[Factor], cell: u32, factor: Factor) -> bool {
    tested
        .iter()
        .position(|&f| f == factor)
        .is_some_and(|bit| cell & (1 << bit) != 0)
}

pub fn settings(tested: &[Factor], cell: u32, pin_cpu: Option<usize>) -> Settings {
    let is_tested = |f: Factor| tested.contains(&f);
    let varies = |f: Factor| varies(tested, cell, f);
    Settings {
        no_aslr: is_tested(Factor::Aslr) && !varies(Factor::Aslr),
        pin: (is_tested(Factor::Pin) && !varies(Factor::Pin))
            .then_some(pin_cpu)
            .flatten(),
        env_jitter: varies(Factor::Env),
        hugetlb: is_tested(Factor::Heap).then(|| u8::from(!varies(Factor::Heap))),
        fresh_copy: is_tested(Factor::Fresh).then(|| varies(Factor::Fresh)),
    }
}

/// The cell a plain repeated run is in: each tested factor at its default.
pub fn default_cell(tested: &[Factor]) -> u32 {
    tested
        .iter()
        .enumerate()
        .filter(|(_, f)| f.varies_by_default())
        .map(|(bit, _)| 1u32 << bit)
        .sum()
}

/// `GLIBC_TUNABLES` for a run: the user's own tunables (if any) with
/// `glibc.malloc.hugetlb=V` after them, the same length at either level.
pub fn tunables(user: Option<&str>, hugetlb: u8) -> String {
    match user.filter(|u| !u.is_empty()) {
        Some(user) => format!("{user}:glibc.malloc.hugetlb={hugetlb}"),
        None => format!("glibc.malloc.hugetlb={hugetlb}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        Machine {
            randomize_va_space: Some("2".into()),
            thp_mode: Some("madvise".into()),
            cpus: vec![0, 1],
            glibc: Some("2.36".into()),
        }
    }

    fn elf() -> Program {
        Program::Elf {
            size: 10_000,
            dynamic: true,
            glibc: true,
            allocator: None,
        }
    }

    fn why(plans: &[FactorPlan], factor: Factor) -> Option<NotTested> {
        plans
            .iter()
            .find(|p| p.factor == factor)
            .unwrap()
            .not_tested
            .clone()
    }

    #[test]
    fn a_factor_that_cannot_apply_says_why() {
        let options = NoiseOptions::default();
        let all = factors(&options, &machine(), &elf());
        assert!(all.iter().all(|p| p.not_tested.is_none()), "{all:?}");
        let mut m = machine();
        m.randomize_va_space = Some("0".into());
        m.cpus = vec![3];
        m.thp_mode = Some("always".into());
        let plans = factors(&options, &m, &elf());
        assert_eq!(
            why(&plans, Factor::Aslr),
            Some(NotTested::AslrOffMachineWide)
        );
        assert_eq!(why(&plans, Factor::Pin), Some(NotTested::OneCpu));
        assert_eq!(why(&plans, Factor::Heap), Some(NotTested::ThpAlways));
        let static_elf = Program::Elf {
            size: 10,
            dynamic: false,
            glibc: false,
            allocator: None,
        };
        let plans = factors(&options, &machine(), &static_elf);
        assert_eq!(why(&plans, Factor::Heap), Some(NotTested::Static));
        assert_eq!(why(&plans, Factor::Fresh), None);
        assert_eq!(why(&plans, Factor::Env), None);
        let plans = factors(&options, &machine(), &Program::Shell);
        assert_eq!(why(&plans, Factor::Heap), Some(NotTested::Shell));
        assert_eq!(why(&plans, Factor::Fresh), Some(NotTested::Shell));
        let mut old = machine();
        old.glibc = Some("2.31".into());
        let plans = factors(&options, &old, &elf());
        assert_eq!(
            why(&plans, Factor::Heap),
            Some(NotTested::GlibcTooOld("2.31".into()))
        );
        let skip = NoiseOptions {
            skip: vec![Factor::Pin],
            ..NoiseOptions::default()
        };
        assert_eq!(
            why(&factors(&skip, &machine(), &elf()), Factor::Pin),
            Some(NotTested::Skipped)
        );
    }

    #[test]
    fn a_cells_settings_follow_its_bits() {
        let tested = [Factor::Aslr, Factor::Pin, Factor::Env, Factor::Heap];
        let default = default_cell(&tested);
        assert_eq!(default, 0b1011, "ASLR, pin and heap vary by default");
        let s = settings(&tested, default, Some(1));
        assert_eq!(
            s,
            Settings {
                no_aslr: false,
                pin: None,
                env_jitter: false,
                hugetlb: Some(0),
                fresh_copy: None,
            }
        );
        let held = settings(&tested, 0, Some(1));
        assert!(held.no_aslr && held.pin == Some(1) && held.hugetlb == Some(1));
        assert!(settings(&tested, 0b0100, None).env_jitter);
        assert_eq!(tunables(None, 1), "glibc.malloc.hugetlb=1");
        assert_eq!(
            tunables(Some("glibc.malloc.arena_max=2"), 0).len(),
            tunables(Some("glibc.malloc.arena_max=2"), 1).len()
        );
        assert!(has_hugetlb_tunable("2.35") && has_hugetlb_tunable("3.0"));
        assert!(!has_hugetlb_tunable("2.34") && !has_hugetlb_tunable("x"));
    }
}
