//! The statistics core (docs/architecture.md §3): descriptive summaries, two-sample
//! tests, effect sizes with confidence intervals, multiple-comparison
//! correction, verdicts, and the adaptive stopping rule used by `compare`.
//!
//! Everything here is pure computation on slices of raw samples, A being the
//! baseline and B the candidate; "ratio" always means B/A. No function
//! panics on bad input (empty, n = 1, constant, NaN, zeros): each returns
//! `None`, NaN or UNKNOWN as its documentation says. Randomness is always a
//! seeded ChaCha8, so every result is reproducible.
//!
//! docs/methodology.md explains the choices in plain words.

pub mod bootstrap;
pub mod descriptive;
mod distributions;
pub mod factorial;
pub mod fragility;
pub mod hierarchical;
pub mod interaction;
pub mod layout_sim;
pub mod mann_whitney;
pub mod multiple;
pub mod projection;
pub mod resolution;
pub mod sequential;
pub mod sequential_sim;
pub mod shift;
pub mod verdict;
pub mod welch;

pub use bootstrap::{ratio_of_medians, BootstrapMethod, Interval};
pub use descriptive::{median, quantile_sorted, summarize, Summary};
pub use mann_whitney::{mann_whitney, MannWhitney, UNullDistribution};
pub use multiple::holm;
pub use sequential::{decided, evaluate, Look, Sequential, StoppingRule};
pub use sequential_sim::{simulate, simulate_outcome, SimulationOutcome};
pub use shift::{cliffs_delta, hodges_lehmann, Shift};
pub use verdict::{decide, Verdict};
pub use welch::{welch, Welch};
