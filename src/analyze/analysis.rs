//! `analyze`'s entry point: read the files, then give the data the analysis
//! their shape calls for (a ghostbench report is re-analyzed on its own; rows
//! with a `layout` column get `layout`'s analysis, rows without it
//! `compare`'s, one report per candidate; a directory is a plan's shard
//! results, merged).

use super::input::{self, Loaded};
use super::{compared, ghost, layouts, shards, AnalyzeOptions, AnalyzeReport};
use crate::doc::{Document, Schema};
use anyhow::{bail, Result};

/// Read `options.files` and analyze them as one data set, or re-analyze one
/// ghostbench report. Errors are one line naming the file and the line or field.
pub fn run(options: &AnalyzeOptions) -> Result<AnalyzeReport> {
    let files = &options.files;
    if let [dir] = files.as_slice() {
        if shards::is_results_dir(dir) {
            return shards::merge(dir, options).map(|r| AnalyzeReport::Layout(Box::new(r)));
        }
    }
    let mut sets = Vec::new();
    for path in files {
        match input::read(path)? {
            Loaded::Rows(set) => sets.push(set),
            Loaded::Ghost { doc, .. } => {
                if files.len() > 1 {
                    bail!(
                        "{}: a ghostbench report is re-analyzed on its own; give it as the only file",
                        path.display()
                    );
                }
                let file = path.display().to_string();
                return match ghost::read(&doc, &file)? {
                    Document::Layout(d) => ghost::layout(&d, &file, options)
                        .map(|r| AnalyzeReport::Layout(Box::new(r))),
                    Document::Compare(d) => {
                        ghost::compare(&d, &file, options).map(|r| AnalyzeReport::Compare(vec![r]))
                    }
                    Document::Baseline(_) => bail!(
                        "{file}: a {} document; analyze reads {} and {}",
                        Schema::Baseline,
                        Schema::Compare,
                        Schema::Layout
                    ),
                };
            }
        }
    }
    let data = input::merge(sets)?;
    if data.names.len() < 2 {
        bail!(
            "{}: only one name ({:?}); analyze compares a baseline with at least one other",
            data.files.join(", "),
            data.names.first().map_or("", |n| n.name.as_str())
        );
    }
    if data.layouts.is_some() {
        layouts::layout_report(&data, options).map(|r| AnalyzeReport::Layout(Box::new(r)))
    } else {
        compared::check_held(&data)?;
        Ok(AnalyzeReport::Compare(compared::compare_reports(
            &data, options,
        )))
    }
}
