//! Escaping, one function per target, for every string ghostbench did not
//! write itself (benchmark and build names, command text, program output, a
//! shard's CPU model, stored rows, paths): HTML, Markdown (text and code
//! spans), the terminal, one visible line, `sh` words, YAML scalars, GitHub
//! Actions expressions and the kubelet's `$(VAR)`. docs/reliability.md
//! §Security lists what each one stops.

use std::borrow::Cow;

/// Text made safe for HTML element content and attribute values.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Whether `c` must never reach a reader as itself: C0 and C1 control
/// characters, DEL, and the Unicode controls that reorder or hide text
/// (bidirectional overrides and isolates, as in "Trojan Source").
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

fn push_visible(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        _ => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// One line, every hidden character (line breaks, tabs, escapes, C1, bidi
/// overrides) shown as its Rust escape (`\n`, `\u{1b}`): a name in a table
/// row or a sentence can neither break the line nor drive the terminal.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hidden(c) {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether the SGR parameters `params` ("1;31") only set what ghostbench's
/// own colours set: reset, bold, dim, a foreground colour.
fn our_sgr(params: &str) -> bool {
    params
        .split(';')
        .all(|p| matches!(p.parse::<u8>(), Ok(0..=2 | 22 | 30..=39 | 90..=97)) || p.is_empty())
}

/// Text about to be printed on a terminal, whatever its source: line breaks
/// and tabs kept, every other hidden character shown as its escape (so ANSI
/// CSI, OSC titles and hyperlinks, C1 controls and bidi overrides in a name
/// or a program's output do nothing), and with `color` only the colour
/// sequences ghostbench paints itself (`ESC [ 1;31 m`: reset, bold, dim,
/// foreground colours) kept.
pub fn terminal(text: &str, color: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| is_hidden(c) && c != '\n' && c != '\t') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' && color {
            if let Some(end) = rest[1..].strip_prefix('[').and_then(|s| s.find('m')) {
                let params = &rest[2..2 + end];
                if params.chars().all(|p| p.is_ascii_digit() || p == ';') && our_sgr(params) {
                    out.push_str(&rest[..3 + end]);
                    rest = &rest[3 + end..];
                    continue;
                }
            }
        }
        if is_hidden(c) && c != '\n' && c != '\t' {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Text inside a Markdown paragraph, list item, heading or table cell: one
/// line (hidden characters visible, so a line break cannot start a forged
/// `- **FASTER**` item), HTML's `<`, `>` and `&` as entities (no tag, no
/// `<img onerror>`, even where a renderer passes HTML), and the characters
/// that make emphasis, code, links or table cells backslash-escaped; an
/// `@mention` neutralized (a zero-width joiner after the `@`), so a report
/// posted as a PR comment pings no one.
pub fn markdown(text: &str) -> String {
    let text = visible(text);
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            // A zero-width joiner after `@`: `@team` in a name reads the
            // same but does not ping anyone from a PR comment.
            '@' => out.push_str("@\u{200d}"),
            _ => out.push(c),
        }
    }
    out
}

/// `text` as one Markdown code span, backticks included: delimited by one
/// backtick more than the longest run inside it, so no backtick in a command
/// closes it early; one line; a pipe escaped, as GitHub's tables need even in
/// code. HTML inside a code span is shown, never run.
pub fn markdown_code(text: &str) -> String {
    let text = visible(text).replace('|', "\\|");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') || text.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// `text` as a fenced Markdown code block (`info` after the opening fence):
/// each line with its hidden characters shown, the fence one backtick longer
/// than any run of backticks in the text, so no line of a symbol name or a
/// program's output closes it.
pub fn markdown_block(text: &str, info: &str) -> String {
    let lines: Vec<Cow<str>> = text.lines().map(visible).collect();
    let longest = lines
        .iter()
        .flat_map(|l| l.split(|c| c != '`').map(str::len))
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut out = format!("{fence}{info}\n");
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    out
}

/// `text` as one `sh` word, quoted only when it needs to be: a hint printed
/// for the user to paste (`kubectl apply -f DIR/job.yaml`), a job file's
/// command. A NUL, which no path or argument holds, is dropped.
pub fn shell(text: &str) -> String {
    shlex::try_quote(text)
        .map(|q| q.into_owned())
        .unwrap_or_else(|_| format!("'{}'", text.replace('\0', "").replace('\'', "'\\''")))
}

/// `text` as a YAML double-quoted scalar (JSON's string syntax is a subset
/// of YAML's): any character, a line break included, stays inside it.
pub fn yaml(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

/// `text` with every `${{` written as the expression `${{ '${{' }}`, which
/// GitHub Actions evaluates to the literal `${{`: in a workflow's values
/// (a `run:` line, a step name, a path) only ghostbench's own expressions
/// are evaluated. Apply before [`yaml`].
pub fn github(text: &str) -> String {
    text.replace("${{", "${{ '${{' }}")
}

/// `text` with the kubelet's `$(VAR)` expansion disabled (`$$` is `$`).
pub fn kubelet(text: &str) -> String {
    text.replace('$', "$$")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            html("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn markdown_keeps_a_name_one_line_of_text() {
        assert_eq!(markdown("a|b\nc"), "a\\|b\\\\nc");
        let forged = markdown("x\n- **FASTER** <script>alert(1)</script> `y` [l](u)");
        assert!(!forged.contains('\n'));
        assert!(!forged.contains('<'));
        assert!(!forged.contains("**"));
        assert!(!forged.contains("`y`"));
        assert_eq!(
            markdown("<img src=x onerror=alert(1)>"),
            "&lt;img src=x onerror=alert(1)&gt;"
        );
    }

    #[test]
    fn a_mention_in_markdown_text_pings_no_one() {
        assert_eq!(markdown("@octocat"), "@\u{200d}octocat");
        assert_eq!(
            markdown("cc @org/team and a@b"),
            "cc @\u{200d}org/team and a@\u{200d}b"
        );
        assert!(!markdown("@everyone").contains("@e"));
    }

    #[test]
    fn a_code_span_outlasts_the_backticks_inside() {
        assert_eq!(markdown_code("make"), "`make`");
        assert_eq!(markdown_code("a`b"), "``a`b``");
        assert_eq!(markdown_code("`x``"), "``` `x`` ```");
        assert_eq!(markdown_code("a|b\nc"), "`a\\|b\\nc`");
    }

    #[test]
    fn a_code_block_outlasts_the_fences_inside() {
        assert_eq!(markdown_block("a\nb\n", "text"), "```text\na\nb\n```\n");
        assert_eq!(
            markdown_block("```\n<x>\x1b", ""),
            "````\n```\n<x>\\u{1b}\n````\n"
        );
    }

    #[test]
    fn hidden_characters_are_shown() {
        assert_eq!(visible("plain"), "plain");
        assert_eq!(
            visible("a\nb\x1b[2J\u{9b}\u{202e}"),
            "a\\nb\\u{1b}[2J\\u{9b}\\u{202e}"
        );
    }

    #[test]
    fn the_terminal_gets_only_our_colours() {
        let name = "x\x1b]0;pwned\x07\x1b[2J\x1b[8m";
        for color in [false, true] {
            let out = terminal(name, color);
            assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        }
        let ours = "\x1b[1;31mSLOWER\x1b[0m\tx\n";
        assert_eq!(terminal(ours, true), ours);
        assert_eq!(terminal(ours, false), "\\u{1b}[1;31mSLOWER\\u{1b}[0m\tx\n");
        assert_eq!(terminal("\u{9b}31m", true), "\\u{9b}31m");
    }

    #[test]
    fn shell_yaml_and_actions_quote_what_they_must() {
        assert_eq!(shell("plain/path"), "plain/path");
        assert_eq!(shell("a b;$(rm -rf ~)"), "'a b;$(rm -rf ~)'");
        assert_eq!(shell("it's"), "\"it's\"");
        for word in ["it's $HOME", "a\"b`c`", "p${{ x }}$(id) ;|&", "tab\there"] {
            assert_eq!(shlex::split(&shell(word)), Some(vec![word.to_string()]));
        }
        assert_eq!(yaml("a\"b\nc"), "\"a\\\"b\\nc\"");
        assert_eq!(github("p/${{ secrets.X }}"), "p/${{ '${{' }} secrets.X }}");
        assert_eq!(kubelet("$(HOME)"), "$$(HOME)");
    }
}
