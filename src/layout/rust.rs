//! A layout variant's perturbations as rustc flags, exported to cargo as
//! `CARGO_ENCODED_RUSTFLAGS` (docs/layout-workflows.md, "cargo").
//!
//! rustc cannot take gcc's flags: alignment goes to LLVM
//! (`-C llvm-args=-align-all-functions=LOG2`, `-align-loops=N`), and the
//! link-time sources go to the linker through `-C link-arg`. rustc's
//! default linker on x86-64 Linux (Rust 1.90 on) is its own `rust-lld`,
//! which lays `.text` out in input order, and rustc passes `-C link-arg`s
//! after its own objects: so the padding object is put first by a symbol
//! ordering file, and kept by `-u` against `--gc-sections`. Shuffling uses
//! lld's own `--shuffle-sections`, so every variant links with the same
//! linker as the default layout (rustc already puts each function in its
//! own section).

use super::variants::Variant;
use std::path::{Path, PathBuf};

/// The variable cargo reads the flags from; it wins over `RUSTFLAGS` and
/// `build.rustflags`, so the user's own `RUSTFLAGS` are carried into it.
pub const VARIABLE: &str = "CARGO_ENCODED_RUSTFLAGS";

/// The separator of `CARGO_ENCODED_RUSTFLAGS`.
const SEPARATOR: char = '\u{1f}';

/// rustc's flags for `variant`. `pads` are the padding objects by size,
/// `orders` the symbol ordering file of each (see [`order_files`]).
pub fn rustflags(
    variant: &Variant,
    pads: &[(u32, PathBuf)],
    orders: &[(u32, PathBuf)],
) -> Vec<String> {
    let mut flags = Vec::new();
    let mut arg = |flag: String| {
        flags.push("-C".to_string());
        flags.push(flag);
    };
    if let Some(n) = variant.align {
        arg(format!(
            "llvm-args=-align-all-functions={}",
            n.trailing_zeros()
        ));
        arg(format!("llvm-args=-align-loops={n}"));
    }
    let find = |list: &[(u32, PathBuf)]| {
        list.iter()
            .find(|(k, _)| *k == variant.shift)
            .map(|(_, p)| p.display().to_string())
    };
    if let (true, Some(pad), Some(order)) = (variant.shift > 0, find(pads), find(orders)) {
        arg(format!("link-arg={pad}"));
        arg(format!("link-arg=-Wl,-u,{}", pad_symbol(variant.shift)));
        arg(format!("link-arg=-Wl,--symbol-ordering-file={order}"));
    }
    if let Some(seed) = variant.shuffle {
        arg(format!("link-arg=-Wl,--shuffle-sections=*={seed}"));
    }
    flags
}

/// The padding object's symbol (see `variants::pad_assembly`).
fn pad_symbol(bytes: u32) -> String {
    format!("ghostbench_pad_{bytes}")
}

/// The value of `CARGO_ENCODED_RUSTFLAGS`: the user's own flags
/// (`CARGO_ENCODED_RUSTFLAGS`, else `RUSTFLAGS` split at white space),
/// then the variant's.
pub fn encoded(user_encoded: Option<&str>, user_plain: Option<&str>, ours: &[String]) -> String {
    let mut all: Vec<String> = match (user_encoded, user_plain) {
        (Some(e), _) if !e.is_empty() => e.split(SEPARATOR).map(str::to_string).collect(),
        (_, Some(p)) => p.split_whitespace().map(str::to_string).collect(),
        _ => Vec::new(),
    };
    all.extend(ours.iter().cloned());
    all.join(&SEPARATOR.to_string())
}

/// The variable to export for `variant`, from this process's environment.
pub fn variable(
    variant: &Variant,
    pads: &[(u32, PathBuf)],
    orders: &[(u32, PathBuf)],
) -> (String, String) {
    let user_encoded = std::env::var(VARIABLE).ok();
    let user_plain = std::env::var("RUSTFLAGS").ok();
    (
        VARIABLE.to_string(),
        encoded(
            user_encoded.as_deref(),
            user_plain.as_deref(),
            &rustflags(variant, pads, orders),
        ),
    )
}

/// A symbol ordering file beside each padding object, naming its symbol
/// (so lld places the padding first). Files already right are left alone.
pub fn order_files(pads: &[(u32, PathBuf)]) -> std::io::Result<Vec<(u32, PathBuf)>> {
    let mut orders = Vec::new();
    for (k, object) in pads {
        let path = object.with_extension("order");
        let text = format!("{}\n", pad_symbol(*k));
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            write_new(&path, &text)?;
        }
        orders.push((*k, path));
    }
    Ok(orders)
}

/// Write `text` to `path` through a temporary name of this process and a
/// rename (shards on one machine share the directory).
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    let temp = path.with_extension(format!("order.{}", std::process::id()));
    std::fs::write(&temp, text)?;
    std::fs::rename(&temp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_of_a_variant() {
        let pads = [(16, PathBuf::from("/w/pad/pad16.o"))];
        let orders = [(16, PathBuf::from("/w/pad/pad16.order"))];
        let v = Variant {
            seed: 7,
            align: Some(32),
            shift: 16,
            shuffle: Some(7),
            heap: None,
        };
        assert_eq!(
            rustflags(&v, &pads, &orders),
            [
                "-C",
                "llvm-args=-align-all-functions=5",
                "-C",
                "llvm-args=-align-loops=32",
                "-C",
                "link-arg=/w/pad/pad16.o",
                "-C",
                "link-arg=-Wl,-u,ghostbench_pad_16",
                "-C",
                "link-arg=-Wl,--symbol-ordering-file=/w/pad/pad16.order",
                "-C",
                "link-arg=-Wl,--shuffle-sections=*=7",
            ]
        );
        assert!(rustflags(&Variant::default_layout(), &pads, &orders).is_empty());
    }

    #[test]
    fn the_users_flags_come_first() {
        let ours = ["-C".to_string(), "llvm-args=-align-loops=16".to_string()];
        assert_eq!(
            encoded(None, Some(" -C  target-cpu=native "), &ours),
            "-C\u{1f}target-cpu=native\u{1f}-C\u{1f}llvm-args=-align-loops=16"
        );
        assert_eq!(
            encoded(Some("--cfg\u{1f}x y"), Some("-O"), &ours),
            "--cfg\u{1f}x y\u{1f}-C\u{1f}llvm-args=-align-loops=16"
        );
        assert_eq!(encoded(None, None, &[]), "");
    }

    #[test]
    fn order_files_name_the_padding_symbol() {
        let tmp = tempfile::tempdir().unwrap();
        let pads = [(48, tmp.path().join("pad48.o"))];
        let orders = order_files(&pads).unwrap();
        assert_eq!(orders[0].1, tmp.path().join("pad48.order"));
        assert_eq!(
            std::fs::read_to_string(&orders[0].1).unwrap(),
            "ghostbench_pad_48\n"
        );
        assert_eq!(order_files(&pads).unwrap(), orders);
    }
}
