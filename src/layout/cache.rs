//! The build cache every experiment shares, under `.ghostbench/cache/`
//! (docs/architecture.md §5): whole builds (`builds/KEY`, the output of a
//! template whose inputs hash to KEY), compiled objects (`objects/KEY.o`,
//! from the launcher, with the marker assemblies and probe results it
//! realigns from: `objects/KEY.s`, `objects/KEY.probe`), the padding objects (`pad/`) and the launcher script
//! (`bin/launch`). Keys are content hashes, so two experiments that share a
//! build share its entry whatever their names or work directories.
//!
//! File safety (docs/reliability.md): the directories are made owner-only by
//! `safe_file::private_dir`'s walk, which refuses links; entries are read
//! with `O_NOFOLLOW` and only when they are regular files, and written under a
//! temporary name of this process and thread, then renamed into place, so a
//! reader never sees half an entry and concurrent experiments do not clash.
//! A hit refreshes the entry's modification time; pruning removes the least
//! recently used entries first until the cache fits its cap.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where the cache lives below the work root.
pub const DIR: &str = ".ghostbench/cache";

/// The size cap's default: 4 GiB (`GHOSTBENCH_CACHE_MAX` overrides it).
pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;

/// The environment variable that sets the size cap (bytes, or with K, M, G).
pub const MAX_VARIABLE: &str = "GHOSTBENCH_CACHE_MAX";

/// The kinds of entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A template's output.
    Build,
    /// An object file the launcher compiled.
    Object,
    /// A marker assembly the launcher realigns (`realign`), kept with the
    /// objects.
    Assembly,
    /// What the markers become for one compiler, flags and alignment
    /// (`realign`'s probe), kept with the objects.
    Probe,
}

impl Kind {
    fn dir(self) -> &'static str {
        match self {
            Kind::Build => "builds",
            Kind::Object | Kind::Assembly | Kind::Probe => "objects",
        }
    }
}

/// The shared cache of one work root.
#[derive(Debug, Clone)]
pub struct Cache {
    pub root: PathBuf,
}

/// What the cache holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    pub builds: usize,
    pub build_bytes: u64,
    pub objects: usize,
    pub object_bytes: u64,
}

impl Usage {
    pub fn bytes(&self) -> u64 {
        self.build_bytes + self.object_bytes
    }
}

/// What a prune removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub removed: usize,
    pub freed_bytes: u64,
}

impl Cache {
    /// The cache under `work_root`, its directories made owner-only.
    pub fn open(work_root: &Path) -> io::Result<Cache> {
        let root = crate::safe_file::private_dir(work_root, Path::new(DIR))?;
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        for sub in ["builds", "objects", "pad", "bin", "tmp"] {
            crate::safe_file::private_dir(&root, Path::new(sub))?;
        }
        Ok(Cache { root })
    }

    /// The cache under `work_root` if it exists; None when there is none
    /// (`ghostbench cache` shows and prunes without creating one).
    pub fn existing(work_root: &Path) -> io::Result<Option<Cache>> {
        match std::fs::symlink_metadata(work_root.join(DIR)) {
            Ok(_) => Cache::open(work_root).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The directory of the padding objects.
    pub fn pad_dir(&self) -> PathBuf {
        self.root.join("pad")
    }

    /// A private scratch directory for one launcher call.
    pub fn scratch(&self) -> io::Result<tempfile::TempDir> {
        tempfile::Builder::new()
            .prefix("launch.")
            .tempdir_in(self.root.join("tmp"))
    }

    fn entry(&self, kind: Kind, key: &str) -> PathBuf {
        let name = match kind {
            Kind::Build => key.to_string(),
            Kind::Object => format!("{key}.o"),
            Kind::Assembly => format!("{key}.s"),
            Kind::Probe => format!("{key}.probe"),
        };
        self.root.join(kind.dir()).join(name)
    }

    /// Copy the entry `key` to `to` (replacing it; executable for a build);
    /// false when there is none (or it is not a regular file).
    pub fn fetch(&self, kind: Kind, key: &str, to: &Path) -> bool {
        let from = self.entry(kind, key);
        let Ok(mut source) = open_regular(&from) else {
            return false;
        };
        let copied = (|| -> io::Result<()> {
            let _ = std::fs::remove_file(to);
            let mut target = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o755)
                .custom_flags(libc::O_NOFOLLOW)
                .open(to)?;
            io::copy(&mut source, &mut target)?;
            Ok(())
        })();
        if copied.is_err() {
            let _ = std::fs::remove_file(to);
            return false;
        }
        // The entry was used: it is the last to be pruned.
        let _ = source.set_modified(SystemTime::now());
        true
    }

    /// Store the file `from` as the entry `key` (atomically, by rename).
    pub fn put(&self, kind: Kind, key: &str, from: &Path) -> io::Result<()> {
        let target = self.entry(kind, key);
        let temp = self.root.join(kind.dir()).join(format!(
            ".{key}.{}.{:?}.tmp",
            std::process::id(),
            std::thread::current().id()
        ));
        let result = (|| -> io::Result<()> {
            let mut source = open_regular(from)?;
            let _ = std::fs::remove_file(&temp);
            let mut out = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o700)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&temp)?;
            io::copy(&mut source, &mut out)?;
            std::fs::rename(&temp, &target)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result
    }

    /// Every entry with its size and last use, oldest first.
    fn entries(&self) -> Vec<(Kind, PathBuf, u64, SystemTime)> {
        let mut all = Vec::new();
        for kind in [Kind::Build, Kind::Object] {
            let Ok(dir) = std::fs::read_dir(self.root.join(kind.dir())) else {
                continue;
            };
            for entry in dir.flatten() {
                let Ok(meta) = entry.metadata() else { continue };
                if !meta.is_file() || entry.file_name().to_string_lossy().starts_with('.') {
                    continue;
                }
                let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                all.push((kind, entry.path(), meta.len(), used));
            }
        }
        all.sort_by_key(|e| e.3);
        all
    }

    /// What the cache holds now.
    pub fn usage(&self) -> Usage {
        let mut usage = Usage::default();
        for (kind, _, bytes, _) in self.entries() {
            match kind {
                Kind::Build => {
                    usage.builds += 1;
                    usage.build_bytes += bytes;
                }
                Kind::Object | Kind::Assembly | Kind::Probe => {
                    usage.objects += 1;
                    usage.object_bytes += bytes;
                }
            }
        }
        usage
    }

    /// Remove the least recently used entries until the cache holds at most
    /// `max_bytes` (0 empties it); stale temporary files go too.
    pub fn prune(&self, max_bytes: u64) -> Pruned {
        self.remove_stale_temporaries();
        let entries = self.entries();
        let mut total: u64 = entries.iter().map(|e| e.2).sum();
        let mut pruned = Pruned::default();
        for (_, path, bytes, _) in entries {
            if total <= max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= bytes;
                pruned.removed += 1;
                pruned.freed_bytes += bytes;
            }
        }
        pruned
    }

    /// Temporary files a killed writer left (a day old or more).
    fn remove_stale_temporaries(&self) {
        let day = std::time::Duration::from_secs(86_400);
        for kind in [Kind::Build, Kind::Object] {
            let Ok(dir) = std::fs::read_dir(self.root.join(kind.dir())) else {
                continue;
            };
            for entry in dir.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                let old = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .and_then(|m| m.elapsed().ok())
                    .is_some_and(|age| age > day);
                if name.starts_with('.') && name.ends_with(".tmp") && old {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
    }

    /// The launcher script `{launcher}` names: it runs `exe launch "$@"`.
    pub fn launcher(&self, exe: &Path) -> io::Result<PathBuf> {
        let path = self.root.join("bin").join("launch");
        let quoted = shlex::try_quote(&exe.display().to_string())
            .map(|q| q.into_owned())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let text = format!(
            "#!/bin/sh\n# ghostbench's compiler launcher (docs/layout-workflows.md)\nexec {quoted} launch \"$@\"\n"
        );
        if std::fs::read_to_string(&path).is_ok_and(|t| t == text) {
            return Ok(path);
        }
        let temp = path.with_extension(format!("{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&temp);
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o700)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temp)?;
        io::Write::write_all(&mut file, text.as_bytes())?;
        drop(file);
        std::fs::rename(&temp, &path)?;
        Ok(path)
    }
}

/// FNV-1a, 64 bit: a stable hash that does not depend on the Rust version.
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        // A separator, so ["ab", "c"] and ["a", "bc"] differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
    }

    pub fn finish(self) -> u64 {
        self.0
    }
}

/// A 128-bit key of the launcher's entries: two FNV-1a hashes of the same
/// words, the second salted, printed as 32 hex digits.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    first: Fnv,
    second: Fnv,
}

impl Key {
    /// A key whose second half is salted with `salt` (one per kind of key).
    pub fn new(salt: &[u8]) -> Key {
        let mut second = Fnv::default();
        second.write(salt);
        Key {
            first: Fnv::default(),
            second,
        }
    }

    pub fn write(&mut self, bytes: &[u8]) {
        self.first.write(bytes);
        self.second.write(bytes);
    }

    pub fn finish(self) -> String {
        format!("{:016x}{:016x}", self.first.finish(), self.second.finish())
    }
}

/// The size cap: `GHOSTBENCH_CACHE_MAX` when set and valid, else the default.
pub fn max_bytes() -> Result<u64, String> {
    match std::env::var(MAX_VARIABLE) {
        Ok(text) => parse_size(&text).map_err(|e| format!("{MAX_VARIABLE}: {e}")),
        Err(_) => Ok(DEFAULT_MAX_BYTES),
    }
}

/// "500M", "2G", "1048576": bytes, with an optional K, M or G (binary units).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(format!("{text:?} is not a size (e.g. 500M, 2G)")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 500M, 2G)"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// Open `path` for reading only if it is a regular file and not a link.
fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

/// The in-process lock of one key (held while its entry is looked up, made
/// and stored), so that parallel jobs wanting the same entry wait for the
/// first instead of all missing.
pub fn key_lock(key: &str) -> std::sync::Arc<std::sync::Mutex<()>> {
    static LOCKS: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<std::sync::Mutex<()>>>>,
    > = std::sync::OnceLock::new();
    let mut locks = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    locks.entry(key.to_string()).or_default().clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_prune_oldest_first() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::open(tmp.path()).unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, vec![7u8; 1000]).unwrap();
        cache.put(Kind::Build, "aa", &file).unwrap();
        cache.put(Kind::Object, "bb", &file).unwrap();
        let usage = cache.usage();
        assert_eq!((usage.builds, usage.objects, usage.bytes()), (1, 1, 2000));
        let to = tmp.path().join("out");
        assert!(cache.fetch(Kind::Build, "aa", &to));
        assert_eq!(std::fs::read(&to).unwrap(), vec![7u8; 1000]);
        assert!(!cache.fetch(Kind::Build, "cc", &to));
        // Make "bb" the oldest, then prune to one entry: "bb" goes.
        let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000);
        File::options()
            .write(true)
            .open(cache.entry(Kind::Object, "bb"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        let pruned = cache.prune(1500);
        assert_eq!(
            pruned,
            Pruned {
                removed: 1,
                freed_bytes: 1000
            }
        );
        assert_eq!(cache.usage().objects, 0);
        assert_eq!(cache.prune(0).removed, 1);
    }

    #[test]
    fn a_planted_link_is_not_an_entry() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::open(tmp.path()).unwrap();
        let secret = tmp.path().join("secret");
        std::fs::write(&secret, "x").unwrap();
        std::os::unix::fs::symlink(&secret, cache.entry(Kind::Build, "aa")).unwrap();
        assert!(!cache.fetch(Kind::Build, "aa", &tmp.path().join("out")));
        assert!(!tmp.path().join("out").exists());
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("500M"), Ok(500 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("123"), Ok(123));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999G").is_err());
    }
}
