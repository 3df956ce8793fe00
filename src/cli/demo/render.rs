//! The demo's words: each step's introduction, how the benchmark is built
//! (from the placement facts `code` found), and what the layout matrix
//! means, worded from the report's own facts. `demo/mod.rs` only wires the
//! steps and prints what this file returns.

use crate::code::placement::ColdPath;
use crate::layout::render::prose;
use crate::layout::LayoutReport;
use crate::stats::verdict::Verdict;

/// Step 1's heading and what the benchmark measures.
pub fn layout_intro() -> String {
    "ghostbench demo, step 1: is a speedup real, or a layout ghost?\n\
     An embedded C++ benchmark times four ways to call a tiny strategy chosen at run time\n\
     (virtual, function pointer, std::variant + std::visit, CRTP), in ns/call.\n"
        .to_string()
}

/// The one-compiler story: the three builds, and where the cold code moves
/// the baseline's virtual loop.
pub fn three_ways(compiler: &str, cold: &ColdPath) -> String {
    let mut out = format!(
        "It is built three ways with {compiler} -O2:\n  {compiler}: as is;\n  \
         final: -DFINAL_DISPATCH, a real change: the virtual loop tests the strategy's type once,\n         \
         then calls the `final` class directly, which the compiler inlines;\n  \
         cold: -DCOLD_PATH={b}, {b} bytes of cold code that never runs, linked before all hot code.\n",
        b = cold.bytes
    );
    match (cold.found, cold.after()) {
        (Some((offset, len)), Some((moved, crosses))) => out.push_str(&format!(
            "         It changes no hot instruction; it moves loop_virtual's loop ({len} bytes, at line\n         \
             offset {offset}) to offset {moved}, where it {} a {}-byte line{}.\n",
            match (cold.flips, crosses) {
                (true, true) => "crosses",
                (true, false) => "no longer crosses",
                (false, true) => "still crosses",
                (false, false) => "still does not cross",
            },
            cold.line,
            if cold.flips {
                ""
            } else {
                ": no 16-48 byte move changes that"
            },
        )),
        _ => out.push_str(&format!(
            "         It changes no hot instruction; it moves all of them by {} bytes.\n",
            cold.bytes
        )),
    }
    out
}

/// The several-compilers story: which compilers build it.
pub fn compilers(names: &[&str]) -> String {
    format!("It is built with {} (-O2).\n", names.join(", "))
}

/// How many layouts and rounds every build gets.
pub fn schedule(layouts: usize, max_layouts: Option<usize>, rounds: usize) -> String {
    let layouts = match max_layouts {
        Some(max) => format!("{layouts} or more (up to {max}, until decided)"),
        None => layouts.to_string(),
    };
    format!(
        "Every build is rebuilt under {layouts} layouts (alignment, code shift, section shuffle),\n\
         and every (build, layout) pair runs {rounds} times in random order.\n\n"
    )
}

/// What the matrix means, in words, from the comparisons' own facts: each
/// decided difference with its sentence, each UNKNOWN with the cause the
/// analysis found in the data, the SAMEs counted.
pub fn meaning(report: &LayoutReport) -> String {
    let mut out = String::from("What it means:\n");
    let (mut compared, mut differed, mut ghosts, mut real) = (0, 0, 0, 0);
    let mut same = Vec::new();
    for row in &report.matrix {
        let Some(c) = &row.comparison else { continue };
        compared += 1;
        if matches!(c.default_verdict, Verdict::Faster | Verdict::Slower) {
            differed += 1;
        }
        let what = match c.verdict {
            Verdict::Faster | Verdict::Slower => {
                real += 1;
                format!("real: {}", prose::comparison_sentence(report, row, c))
            }
            Verdict::Artifact => {
                ghosts += 1;
                format!(
                    "a layout ghost: {}",
                    prose::comparison_sentence(report, row, c)
                )
            }
            Verdict::Same => {
                same.push(format!("{} under {}", row.metric, row.build));
                continue;
            }
            Verdict::Unknown => format!(
                "undecided: {}",
                prose::comparison_hint(report, c)
                    .unwrap_or_else(|| prose::comparison_sentence(report, row, c))
            ),
        };
        out.push_str(&format!(
            "  {:<8} {} under {}: {what}\n",
            c.verdict.to_string(),
            row.metric,
            row.build
        ));
    }
    if compared == 0 {
        out.push_str("  nothing to compare (see the errors above)\n");
        return out;
    }
    if !same.is_empty() {
        out.push_str(&format!(
            "  {:<8} {}: within ±{}% once layout is controlled\n",
            "SAME",
            same.join(", "),
            crate::report::units::trimmed(report.settings.margin * 100.0)
        ));
    }
    out.push_str(&format!(
        "A plain A/B at the default layout finds {differed} of these {compared} differences significant;\n\
         across layouts, {real} {} real and {ghosts} {} placement (ARTIFACT).\n",
        if real == 1 { "is" } else { "are" },
        if ghosts == 1 { "is" } else { "are" },
    ));
    out
}

/// Step 2's heading and what the embedded C program holds.
pub fn structs_intro() -> String {
    "\nghostbench demo, step 2: which data layouts are hazards? `ghostbench structs --hazards`\n\
     An embedded C program has a packed slot whose 8-byte atomic counter straddles a cache line\n\
     for some array elements (a split lock), a packed list node with a misaligned pointer,\n\
     two atomics sharing a line, and a struct full of holes. It is compiled with -g and read back.\n\n"
        .to_string()
}

/// Above step 2's second table: it lists every struct's hazards, not only
/// those of the struct shown first.
pub fn every_hazard() -> String {
    "Every struct of the program, hazards only (`ghostbench structs --hazards`):\n".to_string()
}

/// Why step 2 did not run: no C compiler, or it could not build the example
/// (`compiler`, the last line of its errors).
pub fn structs_skipped(compiler: Option<(&str, &str)>) -> String {
    match compiler {
        None => "skipped: no C compiler (cc) on PATH\n".to_string(),
        Some((cc, error)) => format!("skipped: {cc} could not build the example: {error}\n"),
    }
}

/// The last step's heading.
pub fn probe_intro() -> String {
    "\nghostbench demo, last step: what does misalignment cost on this machine? `ghostbench probe --quick`:\n\n"
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cold_path_is_worded_from_its_facts() {
        let text = three_ways("g++", &ColdPath::for_loop(Some((32, 23)), 64));
        assert!(text.contains("-DCOLD_PATH=16, 16 bytes"), "{text}");
        assert!(
            text.contains("(23 bytes, at line\n         offset 32) to offset 48, where it crosses a 64-byte line."),
            "{text}"
        );
        let text = three_ways("g++", &ColdPath::for_loop(Some((16, 16)), 64));
        assert!(
            text.contains("still does not cross a 64-byte line: no 16-48 byte move"),
            "{text}"
        );
        let text = three_ways("clang++", &ColdPath::for_loop(None, 64));
        assert!(text.contains("moves all of them by 32 bytes"), "{text}");
    }

    #[test]
    fn the_schedule_and_skips_in_words() {
        assert!(schedule(10, Some(40), 5).starts_with(
            "Every build is rebuilt under 10 or more (up to 40, until decided) layouts"
        ));
        assert!(
            schedule(8, None, 3).contains("under 8 layouts")
                && schedule(8, None, 3).contains("runs 3 times")
        );
        assert_eq!(
            structs_skipped(Some(("cc", "error: x"))),
            "skipped: cc could not build the example: error: x\n"
        );
        assert_eq!(
            compilers(&["g++-12", "clang++"]),
            "It is built with g++-12, clang++ (-O2).\n"
        );
    }
}
