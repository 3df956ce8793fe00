//! Terminal colour: ANSI styles for text and for verdict words, applied only when asked.

use crate::stats::verdict::Verdict;

/// `text` in the ANSI style `code` ("1;31", "33", …) when `color`; plain otherwise.
/// Empty cells and "-" stay plain, so tables of mostly empty cells stay quiet.
pub fn paint(text: &str, code: &str, color: bool) -> String {
    if color && !text.is_empty() && text != "-" {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// A verdict word in its colour: FASTER green, SLOWER red, SAME blue, ARTIFACT
/// magenta, UNKNOWN yellow.
pub fn verdict(verdict: Verdict, color: bool) -> String {
    let code = match verdict {
        Verdict::Faster => "1;32",
        Verdict::Slower => "1;31",
        Verdict::Same => "1;34",
        Verdict::Artifact => "1;35",
        Verdict::Unknown => "1;33",
    };
    paint(&verdict.to_string(), code, color)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paints_only_when_asked() {
        assert_eq!(paint("x", "31", false), "x");
        assert_eq!(paint("x", "31", true), "\x1b[31mx\x1b[0m");
        assert_eq!(paint("-", "31", true), "-");
        assert_eq!(verdict(Verdict::Slower, true), "\x1b[1;31mSLOWER\x1b[0m");
        assert_eq!(verdict(Verdict::Same, false), "SAME");
    }
}
