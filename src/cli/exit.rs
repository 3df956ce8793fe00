//! Process exit codes (documented in README.md), defined here and nowhere
//! else, and how an error that reaches the top maps to one.

/// Finished: a verdict, or the budget ran out with UNKNOWN.
pub const OK: i32 = 0;
/// Bad input or an I/O error (an unwritable report file included); nothing was
/// measured. Also a document (imported, stored, re-analyzed) that does not
/// read as its schema's type: a field moved or missing, a newer version.
pub const ERROR: i32 = 1;
/// Bad command-line usage (clap's code, and [`UsageError`]).
pub const USAGE: i32 = 2;
/// A benchmarked command failed (non-zero exit, crash, timeout, no metric), or a
/// probe crashed or overran its time bound; partial results were written.
pub const RUN_FAILED: i32 = 3;
/// `structs`: the binary has no DWARF debug info (build with -g), or part
/// of it is missing (a split-DWARF `.dwo` found nowhere; what was read is
/// still printed and written).
pub const NO_DEBUG_INFO: i32 = 4;
/// `layout`: too few layout variants built (the failing command and its output are printed); partial results were written.
pub const BUILD_FAILED: i32 = 5;
/// `--fail-on LIST`: a verdict in LIST (e.g. SLOWER); every report was
/// written and the result stored first.
pub const FAIL_ON: i32 = 6;
/// `analyze DIR/results/`: fewer than 3 layout variants per build remain
/// in the shard results (the missing and failed shards are named); nothing
/// was analyzed.
pub const INCOMPLETE: i32 = 7;
/// Ctrl-C (SIGINT); partial results were written.
pub const INTERRUPTED: i32 = 130;
/// SIGHUP (the terminal or session ended); handled as SIGTERM, partial results were written.
pub const HANGUP: i32 = 129;
/// SIGTERM (e.g. a CI job cancelled); partial results were written.
pub const TERMINATED: i32 = 143;

/// The exit code of a run a stopping signal ended (128 + the signal, as a
/// shell reports it): [`INTERRUPTED`] when the signal is not known.
pub fn interrupted() -> i32 {
    match crate::run::interrupt::signal() {
        Some(libc::SIGTERM) => TERMINATED,
        Some(libc::SIGHUP) => HANGUP,
        _ => INTERRUPTED,
    }
}

/// The exit code of how a `compare` (or a baseline measurement) ended.
pub fn of_compare(state: &crate::compare::State) -> i32 {
    use crate::compare::State;
    match state {
        State::Decided | State::BudgetExhausted | State::Imported => OK,
        State::Failed => RUN_FAILED,
        State::Interrupted => interrupted(),
    }
}

/// The exit code of how a `layout` experiment ended.
pub fn of_layout(state: crate::layout::State) -> i32 {
    use crate::layout::State;
    match state {
        State::Finished | State::BudgetExhausted | State::Imported => OK,
        State::BuildFailed => BUILD_FAILED,
        State::RunFailed => RUN_FAILED,
        State::Interrupted => interrupted(),
    }
}

/// The exit code of how a `noise` experiment ended.
pub fn of_noise(state: crate::noise::State) -> i32 {
    use crate::noise::State;
    match state {
        State::Finished => OK,
        State::Failed => RUN_FAILED,
        State::Interrupted => interrupted(),
    }
}

/// Whether `code` says a stopping signal ended the run.
pub fn is_interrupted(code: i32) -> bool {
    [INTERRUPTED, HANGUP, TERMINATED].contains(&code)
}

/// A command line clap accepts but the verb cannot honour (e.g. a report
/// format it does not write): exit [`USAGE`], like clap's own errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A [`UsageError`] as an `anyhow::Error`, for `return Err(usage(...))`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// The exit code of an error that ends a verb: [`USAGE`] for a
/// [`UsageError`], an unusable plan or a build template with no output, [`INCOMPLETE`] for a merge with too
/// few variants, else [`ERROR`].
pub fn code_of(error: &anyhow::Error) -> i32 {
    if error
        .downcast_ref::<crate::analyze::shards::TooFewVariants>()
        .is_some()
    {
        return INCOMPLETE;
    }
    if error.downcast_ref::<UsageError>().is_some()
        || error
            .downcast_ref::<crate::layout::builds::TemplateError>()
            .is_some()
        || error
            .downcast_ref::<crate::layout::shard::PlanError>()
            .is_some()
    {
        USAGE
    } else {
        ERROR
    }
}
