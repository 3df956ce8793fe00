//! Atomics and locks recognised by type name: C and kernel typedefs, C++ `std`
//! classes and Rust `std`/`core` types. Pure name rules, no DWARF.

use super::types::SyncKind;

/// C and kernel typedefs of atomics, at global scope.
const ATOMIC_TYPEDEFS: [&str; 4] = ["atomic_t", "atomic64_t", "atomic_long_t", "atomic_flag"];

/// C and kernel typedefs and struct names of locks, at global scope.
const LOCKS: [&str; 10] = [
    "pthread_mutex_t",
    "pthread_spinlock_t",
    "pthread_rwlock_t",
    "spinlock_t",
    "raw_spinlock_t",
    "rwlock_t",
    "arch_spinlock_t",
    "mutex",
    "spinlock",
    "raw_spinlock",
];

/// C++ `std` lock classes.
const STD_LOCKS: [&str; 5] = [
    "mutex",
    "recursive_mutex",
    "timed_mutex",
    "shared_mutex",
    "__mutex_base",
];

/// The kind of a type named `name` inside `scope` (`""` for global, `std`,
/// `core::sync::atomic`, …), or None for a type that is neither.
pub fn classify_name(name: &str, scope: &str) -> Option<SyncKind> {
    if scope.is_empty() {
        return global(name);
    }
    let std_cpp = scope == "std" || scope.starts_with("std::__");
    if std_cpp {
        if let Some(kind) = cpp_std(name) {
            return Some(kind);
        }
    }
    // Rust: core::sync::atomic::AtomicU64, std::sync::mutex::Mutex<T>, …
    if scope.contains("sync") {
        return rust_std(name, scope);
    }
    None
}

fn global(name: &str) -> Option<SyncKind> {
    if ATOMIC_TYPEDEFS.contains(&name) {
        Some(SyncKind::Atomic)
    } else if LOCKS.contains(&name) {
        Some(SyncKind::Lock)
    } else {
        None
    }
}

fn cpp_std(name: &str) -> Option<SyncKind> {
    if name.starts_with("atomic<")
        || name.starts_with("__atomic_base<")
        || name.starts_with("__atomic_float<")
        || name == "atomic_flag"
        || name == "__atomic_flag_base"
    {
        Some(SyncKind::Atomic)
    } else if STD_LOCKS.contains(&name) {
        Some(SyncKind::Lock)
    } else {
        None
    }
}

fn rust_std(name: &str, scope: &str) -> Option<SyncKind> {
    if scope.contains("atomic") && name.starts_with("Atomic") {
        Some(SyncKind::Atomic)
    } else if name.starts_with("Mutex<") || name.starts_with("RwLock<") {
        Some(SyncKind::Lock)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_sync_types() {
        assert_eq!(classify_name("atomic<long>", "std"), Some(SyncKind::Atomic));
        assert_eq!(classify_name("pthread_mutex_t", ""), Some(SyncKind::Lock));
        assert_eq!(
            classify_name("AtomicU64", "core::sync::atomic"),
            Some(SyncKind::Atomic)
        );
        assert_eq!(
            classify_name("Mutex<u64>", "std::sync::poison::mutex"),
            Some(SyncKind::Lock)
        );
        assert_eq!(classify_name("vector<int>", "std"), None);
    }

    #[test]
    fn scope_decides() {
        // A global `mutex` is the kernel's; a namespaced one is not std's unless in std.
        assert_eq!(classify_name("mutex", ""), Some(SyncKind::Lock));
        assert_eq!(classify_name("mutex", "std"), Some(SyncKind::Lock));
        assert_eq!(classify_name("mutex", "app"), None);
        assert_eq!(classify_name("atomic_t", "app"), None);
        assert_eq!(classify_name("AtomicU64", "app::sync"), None);
        assert_eq!(
            classify_name("atomic<int>", "std::__1"),
            Some(SyncKind::Atomic)
        );
    }
}
