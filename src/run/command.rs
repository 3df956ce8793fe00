//! Turning the user's command text into an argv, without a shell unless asked.
//!
//! Nothing typed by the user is interpolated into `sh -c` by default: the text is
//! split shell-style (shlex) and exec'd directly. `--shell` opts into `sh -c TEXT`.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A command to benchmark: its label, the text the user gave and the argv we exec.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct CommandSpec {
    pub name: String,
    pub text: String,
    pub argv: Vec<String>,
    pub shell: bool,
}

impl CommandSpec {
    /// Split `text` into an argv (or wrap it in `sh -c` when `shell`).
    pub fn parse(name: &str, text: &str, shell: bool) -> Result<CommandSpec> {
        let argv = if shell {
            vec!["sh".to_string(), "-c".to_string(), text.to_string()]
        } else {
            split_words(text)?
        };
        Ok(CommandSpec {
            name: name.to_string(),
            text: text.to_string(),
            argv,
            shell,
        })
    }
}

/// Shell-style word splitting with a clear error for unbalanced quotes.
pub fn split_words(text: &str) -> Result<Vec<String>> {
    let words = shlex::split(text).with_context(|| {
        format!("cannot split command {text:?}: unbalanced quotes or a trailing backslash")
    })?;
    if words.is_empty() {
        bail!("empty command");
    }
    Ok(words)
}

/// Find `program` the way execvp would, so the exec in the child needs no PATH lookup.
pub fn resolve_program(program: &str, path_var: Option<OsString>) -> Result<PathBuf> {
    if program.contains('/') {
        let path = Path::new(program);
        if !path.exists() {
            bail!("command not found: {program}");
        }
        return Ok(path.to_path_buf());
    }
    let path_var = path_var.unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    for dir in std::env::split_paths(&path_var) {
        let candidate = dir.join(program);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    bail!("command not found on PATH: {program}")
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quoted_words_without_a_shell() {
        let spec = CommandSpec::parse("a", "echo 'a b' \"c;d\" $HOME", false).unwrap();
        assert_eq!(spec.argv, vec!["echo", "a b", "c;d", "$HOME"]);
    }

    #[test]
    fn shell_mode_wraps_the_text_unchanged() {
        let spec = CommandSpec::parse("a", "echo $HOME | wc", true).unwrap();
        assert_eq!(spec.argv, vec!["sh", "-c", "echo $HOME | wc"]);
    }

    #[test]
    fn unbalanced_quotes_and_empty_commands_are_errors() {
        assert!(split_words("echo 'oops").is_err());
        assert!(split_words("   ").is_err());
    }

    #[test]
    fn resolves_programs_on_path() {
        let sh = resolve_program("sh", std::env::var_os("PATH")).unwrap();
        assert!(sh.is_absolute());
        assert!(resolve_program("ghostbench-no-such-program", std::env::var_os("PATH")).is_err());
        assert!(resolve_program("/no/such/file", None).is_err());
    }
}
