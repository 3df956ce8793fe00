//! Cells every `compare` rendering shares: the metric row's first six cells.

use crate::compare::MetricReport;
use crate::report::units::{interval_cell, ratio_cell, ratio_change, value};

/// The cells every `compare` table starts with: metric, A median, B median,
/// B/A, change, CI.
pub fn compare_cells(m: &MetricReport) -> [String; 6] {
    let median = |s: &Option<crate::stats::descriptive::Summary>| {
        s.as_ref().map_or("n/a".into(), |s| value(s.median, m.unit))
    };
    [
        m.name.clone(),
        median(&m.a),
        median(&m.b),
        ratio_cell(m.ratio),
        ratio_change(m.ratio),
        interval_cell(m.ci_low, m.ci_high),
    ]
}
