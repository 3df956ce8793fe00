//! `ghostbench cache`: show the build cache every `layout` experiment shares
//! (`.ghostbench/cache/`: builds and compiled objects) and prune it to a size;
//! and the hidden `ghostbench launch`, the compiler launcher build systems
//! call through `{launcher}` (layout::launcher).

use super::exit;
use super::output::outln;
use crate::layout::cache::{self, Cache, Usage};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: Option<Action>,
    /// The directory whose .ghostbench/cache/ to use (where `layout` ran).
    #[arg(long, value_name = "DIR", default_value = ".", global = true)]
    pub dir: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// What the cache holds, and its size cap (the default).
    Show,
    /// Remove the least recently used entries until the cache fits SIZE.
    Prune {
        /// The size to prune to (e.g. 500M, 2G; 0 empties the cache); default
        /// the cap (GHOSTBENCH_CACHE_MAX, else 4G).
        #[arg(long, value_name = "SIZE")]
        max_size: Option<String>,
    },
}

/// `ghostbench launch COMPILER ARGS…` (hidden).
#[derive(Debug, Args)]
pub struct LaunchArgs {
    /// The compiler and its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    pub argv: Vec<String>,
}

pub fn launch(args: LaunchArgs) -> Result<i32> {
    Ok(crate::layout::launcher::launch_main(&args.argv))
}

pub fn run(args: CacheArgs) -> Result<i32> {
    let cap = cache::max_bytes().map_err(exit::usage)?;
    let found = Cache::existing(&args.dir)
        .with_context(|| format!("cannot use {}", args.dir.join(cache::DIR).display()))?;
    let Some(found) = found else {
        outln!(
            "no build cache in {} (layout makes one)",
            args.dir.join(cache::DIR).display()
        );
        return Ok(exit::OK);
    };
    match args.action.unwrap_or(Action::Show) {
        Action::Show => show(&found, &found.usage(), cap),
        Action::Prune { max_size } => {
            let to = match max_size {
                Some(text) => {
                    cache::parse_size(&text).map_err(|e| exit::usage(format!("--max-size: {e}")))?
                }
                None => cap,
            };
            let pruned = found.prune(to);
            outln!(
                "pruned {} entries, freed {}",
                pruned.removed,
                size(pruned.freed_bytes)
            );
            show(&found, &found.usage(), cap);
        }
    }
    Ok(exit::OK)
}

fn show(found: &Cache, usage: &Usage, cap: u64) {
    outln!("cache: {}", found.root.display());
    outln!(
        "  builds:  {:>6}  {}",
        usage.builds,
        size(usage.build_bytes)
    );
    outln!(
        "  objects: {:>6}  {}",
        usage.objects,
        size(usage.object_bytes)
    );
    outln!(
        "  total:   {}  of a {} cap ({}; pruned to it after every layout run)",
        size(usage.bytes()),
        size(cap),
        cache::MAX_VARIABLE
    );
}

fn size(bytes: u64) -> String {
    crate::report::units::value(bytes as f64 / 1024.0, crate::run::metric::Unit::Kibibytes)
}
