//! The one redaction of credentials, for every place ghostbench writes a
//! command line, a store's address or a store's error: a URL's password
//! (`postgresql://user:PASSWORD@host/db`) and a libpq `password=…` become
//! `***`. stderr, `--json`'s `command_line` (and so the store, HTML and
//! Markdown, which are made from it) all go through it.

use std::borrow::Cow;

/// What stands for a password.
pub const HIDDEN: &str = "***";

/// `text` with every password in it replaced by [`HIDDEN`].
pub fn redact(original: &str) -> Cow<'_, str> {
    let text = original;
    let mut out = String::new();
    let mut done = 0;
    let mut changed = false;
    // scheme://user:password@host…: the authority ends at /, ?, # or a blank.
    let mut from = 0;
    while let Some(at) = text[from..].find("://") {
        let start = from + at + 3;
        let end = text[start..]
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'' | '\\') || c.is_whitespace())
            .map_or(text.len(), |e| start + e);
        let authority = &text[start..end];
        if let Some(user_end) = authority.rfind('@') {
            if let Some(colon) = authority[..user_end].find(':') {
                out.push_str(&text[done..start + colon + 1]);
                out.push_str(HIDDEN);
                done = start + user_end;
                changed = true;
            }
        }
        from = end;
    }
    out.push_str(&text[done..]);
    // password=… (a libpq keyword string, or a URL's query parameter).
    let mut text = if changed { out } else { text.to_string() };
    let mut search = 0;
    while let Some(at) = text[search..].to_ascii_lowercase().find("password=") {
        let start = search + at + "password=".len();
        let end = text[start..]
            .find(|c: char| matches!(c, '&' | ';' | '"' | '\'' | '\\') || c.is_whitespace())
            .map_or(text.len(), |e| start + e);
        if &text[start..end] != HIDDEN {
            text.replace_range(start..end, HIDDEN);
            changed = true;
        }
        search = start + HIDDEN.len();
    }
    if changed {
        Cow::Owned(text)
    } else {
        Cow::Borrowed(original)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden_and_nothing_else_changes() {
        assert_eq!(
            redact("postgresql://u:s3cret@h:5/db"),
            "postgresql://u:***@h:5/db"
        );
        assert_eq!(
            redact("--store=postgres://me:p%40ss:w@rd@%2Ftmp:5432/x?sslmode=disable"),
            "--store=postgres://me:***@%2Ftmp:5432/x?sslmode=disable"
        );
        assert_eq!(redact("postgresql://u@h/db"), "postgresql://u@h/db");
        assert_eq!(redact("a.db"), "a.db");
        assert_eq!(
            redact("host=h password=s3 user=u"),
            "host=h password=*** user=u"
        );
        assert_eq!(
            redact("postgres://h/db?user=u&PASSWORD=s3&x=1"),
            "postgres://h/db?user=u&PASSWORD=***&x=1"
        );
        assert_eq!(redact("https://x/y?a=b"), "https://x/y?a=b");
        // Inside JSON text, a redaction never crosses a string's end.
        let json = r#"{"command_line":["gb","--store","postgresql://u:pw@h","password=x"]}"#;
        let redacted = redact(json);
        assert_eq!(
            redacted,
            r#"{"command_line":["gb","--store","postgresql://u:***@h","password=***"]}"#
        );
        assert!(serde_json::from_str::<serde_json::Value>(&redacted).is_ok());
    }
}
