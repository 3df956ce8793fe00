//! The crate's import graph against the layers of docs/architecture.md §1: no
//! import runs up a floor or sideways to a sibling folder, no two files import
//! each other (nor any longer circle), and only the CLI, `analyze` and other
//! renderers import a verb's `render` module. The graph is read from the source
//! text (`use` trees, `super::`/`self::` paths and inline `crate::` paths),
//! leaving test code out, so the check needs nothing but the repository.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path from the crate root: `["compare", "render", "hint"]`.
type ModPath = Vec<String>;

struct Crate {
    src: PathBuf,
    /// Every source file (test modules left out), by its module path.
    files: BTreeMap<ModPath, PathBuf>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut files = BTreeMap::new();
        let mut stack = vec![src.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let module = module_path(src, &path);
                    if !is_test_module(src, &module) {
                        files.insert(module, path);
                    }
                }
            }
        }
        Crate {
            src: src.to_path_buf(),
            files,
        }
    }

    /// The file a module path lands in: the longest prefix that is a file.
    fn resolve(&self, path: &[String]) -> Option<ModPath> {
        let mut best = None;
        for len in 1..=path.len() {
            let prefix = path[..len].to_vec();
            if self.files.contains_key(&prefix) {
                best = Some(prefix);
            } else if !self.src.join(prefix.join("/")).is_dir() {
                break;
            }
        }
        best
    }
}

/// `src/compare/render/hint.rs` → compare::render::hint; `src/compare/mod.rs` → compare.
fn module_path(src: &Path, file: &Path) -> ModPath {
    let relative = file.strip_prefix(src).expect("a file under src/");
    let mut parts: ModPath = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem);
    } else if stem == "main" {
        parts.push("main".into());
    }
    parts
}

/// Whether the parent declares this module under `#[cfg(test)]`.
fn is_test_module(src: &Path, module: &ModPath) -> bool {
    let Some((name, parent)) = module.split_last() else {
        return false;
    };
    let parent_dir = src.join(parent.join("/"));
    let candidates = [
        parent_dir.join("mod.rs"),
        src.join(format!("{}.rs", parent.join("/"))),
        src.join("lib.rs"),
    ];
    let candidates: &[PathBuf] = if parent.is_empty() {
        &candidates[2..]
    } else {
        &candidates[..2]
    };
    candidates.iter().any(|p| {
        std::fs::read_to_string(p).is_ok_and(|text| {
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            lines.windows(2).any(|w| {
                w[0] == "#[cfg(test)]"
                    && (w[1] == format!("mod {name};") || w[1] == format!("pub mod {name};"))
            })
        })
    })
}

/// Source without comments, string and char literals, and inline test modules.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => text,
    };
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|&c| c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            i += body
                + rest[body..]
                    .find(&close)
                    .map_or(rest.len() - body, |e| e + close.len());
            out.push_str("\"\"");
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() {
                match rest.as_bytes()[j] {
                    b'\\' => j += 2,
                    b'"' => break,
                    _ => j += 1,
                }
            }
            i += j + 1;
            out.push_str("\"\"");
        } else if rest.starts_with("'\\") || (rest.len() > 2 && rest.as_bytes()[2] == b'\'') {
            // A char literal ('x', '\n', '\''); lifetimes ('a) have no closing quote.
            let close = rest[2..].find('\'').map_or(1, |e| e + 3);
            if rest.starts_with("'\\") || close == 3 {
                i += close;
                out.push_str("' '");
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            let c = rest.chars().next().expect("a character");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The tree of a `use` statement (the text up to its `;`) and whether it is
/// `pub`, or None when the statement is not a `use`.
fn use_tree(statement: &str) -> Option<(bool, &str)> {
    let words: Vec<(usize, &str)> = statement
        .match_indices(|c: char| !(c.is_alphanumeric() || c == '_'))
        .scan(0, |start, (at, sep)| {
            let word = (*start, &statement[*start..at]);
            *start = at + sep.len();
            Some(word)
        })
        .filter(|(_, w)| !w.is_empty())
        .collect();
    let &(at, _) = words.iter().rev().find(|(_, w)| *w == "use")?;
    let before = statement[..at].trim_end();
    let boundary =
        before.is_empty() || before.ends_with(['{', '}', ']', ')', ';']) || before.ends_with("pub");
    if !boundary {
        return None;
    }
    let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
    Some((public, &statement[at + 3..]))
}

/// Expand a `use` tree ("crate::{a, b::{c, d}}") into its paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        return vec![path.chars().filter(|c| !c.is_whitespace()).collect()];
    };
    let prefix = tree[..open].trim();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |e| format!("{prefix}{e}")))
        .collect()
}

/// A path's segments made absolute from the crate root, or None when it leaves the crate.
fn absolute(
    path: &str,
    module: &ModPath,
    is_dir_module: bool,
    children: &BTreeSet<String>,
) -> Option<ModPath> {
    let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let first = *segments.first()?;
    // The module whose children `self::` names: a file `x.rs` is module x.
    let mut base: ModPath = module.clone();
    let _ = is_dir_module;
    let rest: &[&str] = match first {
        "crate" => {
            base.clear();
            &segments[1..]
        }
        "self" => &segments[1..],
        "super" => {
            let supers = segments.iter().take_while(|s| **s == "super").count();
            for _ in 0..supers {
                base.pop()?;
            }
            &segments[supers..]
        }
        name if children.contains(name) => &segments[..],
        _ => return None,
    };
    base.extend(rest.iter().map(|s| s.to_string()));
    Some(base)
}

/// Every file each file imports (self-imports left out).
fn graph(krate: &Crate) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mut edges = BTreeMap::new();
    for (module, file) in &krate.files {
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let code = code_of(&text);
        let is_dir_module = file.ends_with("mod.rs") || file.ends_with("lib.rs");
        let children: BTreeSet<String> = krate
            .files
            .keys()
            .filter(|k| k.len() == module.len() + 1 && k.starts_with(module))
            .map(|k| k.last().cloned().unwrap_or_default())
            .collect();
        let mut targets = BTreeSet::new();
        let mut paths: Vec<(String, bool)> = Vec::new();
        // `use` statements, with their trees expanded.
        // The code with its `use` statements blanked, for the inline paths below.
        let mut rest = String::with_capacity(code.len());
        for statement in code.split_inclusive(';') {
            match use_tree(statement) {
                Some((public, tree)) => {
                    for path in expand(tree.trim_end_matches(';')) {
                        paths.push((path, public));
                    }
                    rest.push_str(&statement[..statement.len() - tree.len()]);
                    rest.push(';');
                }
                None => rest.push_str(statement),
            }
        }
        let code = rest;
        // Inline paths: `crate::a::b(…)`, `super::c::D`, `child::f()`.
        let child_starts: Vec<String> = children.iter().map(|c| format!("{c}::")).collect();
        let starts = ["crate::".to_string(), "super::".to_string()];
        for start in starts.iter().chain(&child_starts) {
            let mut from = 0;
            while let Some(at) = code[from..].find(start) {
                let begin = from + at;
                let before = code[..begin].chars().last();
                if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    let end = code[begin..]
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                        .map_or(code.len(), |e| begin + e);
                    paths.push((code[begin..end].trim_end_matches(':').to_string(), false));
                }
                from = begin + start.len();
            }
        }
        for (path, public) in paths {
            let Some(absolute) = absolute(&path, module, is_dir_module, &children) else {
                continue;
            };
            let Some(target) = krate.resolve(&absolute) else {
                continue;
            };
            // A folder's face declaring and re-exporting its own children is not a use.
            let own_child = target.len() > module.len() && target.starts_with(module);
            if target == *module || (is_dir_module && public && own_child) {
                continue;
            }
            targets.insert(target);
        }
        edges.insert(module.clone(), targets);
    }
    edges
}

/// The floors of docs/architecture.md §1: room name → floor.
fn floors(doc: &str) -> BTreeMap<String, u32> {
    let mut floors = BTreeMap::new();
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("1. Layers"))
        .expect("docs/architecture.md has a section '1. Layers'");
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 {
            continue;
        }
        let Ok(floor) = cells[1].parse::<u32>() else {
            continue;
        };
        for name in cells[2].split(',') {
            let name = name.trim().trim_matches('`').trim_end_matches('/');
            let name = name.trim_end_matches(".rs");
            floors.insert(name.to_string(), floor);
        }
    }
    floors
}

fn room(module: &ModPath) -> String {
    module.first().cloned().unwrap_or_else(|| "lib".into())
}

fn show(module: &ModPath) -> String {
    if module.is_empty() {
        "lib".into()
    } else {
        module.join("::")
    }
}

/// Circles of files: strongly connected components of more than one file (Tarjan).
fn circles(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            let Some((w, _)) = s.edges.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

fn is_render(module: &ModPath) -> bool {
    module.iter().any(|s| s == "render")
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn imports_run_down_the_documented_floors_without_circles() {
    let root = manifest();
    let krate = Crate::read(&root.join("src"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("the design doc");
    let floors = floors(&doc);
    let edges = graph(&krate);
    let mut faults = Vec::new();

    let mut rooms: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in &edges {
        for to in targets {
            let (a, b) = (room(from), room(to));
            if a == b {
                continue;
            }
            rooms
                .entry((a.clone(), b.clone()))
                .or_default()
                .insert(format!("{} -> {}", show(from), show(to)));
            match (floors.get(&a), floors.get(&b)) {
                (Some(fa), Some(fb)) if fb >= fa => faults.push(format!(
                    "{} (floor {fa}) imports {} (floor {fb})",
                    show(from),
                    show(to)
                )),
                (None, _) => faults.push(format!("{a} is on no floor of docs/architecture.md §1")),
                (_, None) => faults.push(format!("{b} is on no floor of docs/architecture.md §1")),
                _ => {}
            }
            if is_render(to) && !is_render(from) && !["cli", "analyze"].contains(&a.as_str()) {
                faults.push(format!("{} imports the renderer {}", show(from), show(to)));
            }
        }
    }
    for (from, targets) in &edges {
        for to in targets {
            // Inside a folder too, only a renderer imports a renderer; the
            // CLI, which wires and prints, may import its own (`cli::demo::render`).
            if room(from) == room(to) && is_render(to) && !is_render(from) && room(from) != "cli" {
                faults.push(format!("{} imports the renderer {}", show(from), show(to)));
            }
        }
    }
    for circle in circles(&edges) {
        let names: Vec<String> = circle.iter().map(show).collect();
        faults.push(format!("circle: {}", names.join(" <-> ")));
    }

    println!("folder-level imports (floor from docs/architecture.md §1):");
    for ((a, b), via) in &rooms {
        println!(
            "  {a} ({}) -> {b} ({}): {} file imports",
            floors.get(a).map_or("?".into(), |f| f.to_string()),
            floors.get(b).map_or("?".into(), |f| f.to_string()),
            via.len()
        );
    }
    assert!(
        krate.files.len() > 50 && edges.values().map(BTreeSet::len).sum::<usize>() > 100,
        "the reader found {} files and {} imports: it is not reading the crate",
        krate.files.len(),
        edges.values().map(BTreeSet::len).sum::<usize>()
    );
    assert!(
        faults.is_empty(),
        "{} faults:\n{}",
        faults.len(),
        faults.join("\n")
    );
}

#[test]
fn the_reader_sees_each_kind_of_import() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path().join("src");
    for (path, text) in [
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        ("a/mod.rs", "pub mod x;\npub mod y;\npub use x::X;\n"),
        ("a/x.rs", "//! x\nuse super::y::{self, Y};\npub struct X;\n"),
        (
            "a/y.rs",
            "//! y\n// use crate::b::gone;\nconst S: &str = \"crate::b::z\";\npub struct Y;\nfn f() { crate::b::go(); }\n#[cfg(test)]\nmod tests { use crate::b::t; }\n",
        ),
        ("b.rs", "//! b\nuse crate::{a::{x::X, y}, b as _};\npub fn go() {}\n"),
    ] {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let krate = Crate::read(&src);
    let edges = graph(&krate);
    let names = |m: &str| -> Vec<String> {
        let key: ModPath = if m.is_empty() {
            vec![]
        } else {
            m.split("::").map(String::from).collect()
        };
        edges[&key].iter().map(show).collect()
    };
    // The face's `pub use` of its own child is no edge; `use super::y::{self, Y}` is.
    assert_eq!(names("a"), Vec::<String>::new());
    assert_eq!(names("a::x"), vec!["a::y"]);
    // Comments, strings and the test module are not read; an inline path is.
    assert_eq!(names("a::y"), vec!["b"]);
    assert_eq!(names("b"), vec!["a::x", "a::y"]);
    let found = circles(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].len(), 3, "b -> a::x -> a::y -> b");
}

#[test]
fn every_file_says_what_it_owns_and_long_files_say_why() {
    let src = manifest().join("src");
    let mut faults = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            let name = path
                .strip_prefix(&src)
                .unwrap_or(&path)
                .display()
                .to_string();
            if !text.starts_with("//!") {
                faults.push(format!("{name} does not open with a //! line"));
            }
            let lines = text.lines().count();
            let header: String = text
                .lines()
                .take_while(|l| l.starts_with("//!"))
                .collect::<Vec<_>>()
                .join("\n");
            if lines > 600 && !header.contains("over 600 lines") {
                faults.push(format!(
                    "{name} has {lines} lines and its header does not say why it is over 600 lines"
                ));
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// Every path in backquotes in a table row of the doc (`| `a/b.rs`, `c.rs` | … |`).
fn tabled_files(doc: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for line in doc.lines().filter(|l| l.trim_start().starts_with('|')) {
        for (i, quoted) in line.split('`').enumerate() {
            if i % 2 == 1 && quoted.ends_with(".rs") {
                named.insert(quoted.to_string());
            }
        }
    }
    named
}

/// Every file under `dir`, as its path from `dir` (`code/diff.rs`).
fn source_files(dir: &Path) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(dir).expect("a file under src/");
                files.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files
}

#[test]
fn every_source_file_is_in_a_table_of_the_design_doc() {
    let root = manifest();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("the design doc");
    let named = tabled_files(&doc);
    let files = source_files(&root.join("src"));
    assert!(files.len() > 50, "found only {} files", files.len());
    let missing: Vec<&String> = files.iter().filter(|f| !named.contains(*f)).collect();
    let gone: Vec<&String> = named.iter().filter(|f| !files.contains(*f)).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "docs/architecture.md is not true to src/:\n{} files in no table of it:\n  {}\n{} files in its tables that do not exist:\n  {}",
        missing.len(),
        missing.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n  "),
        gone.len(),
        gone.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n  ")
    );
}

#[test]
fn the_file_check_reads_table_rows_only() {
    let doc = "| file | job |\n|---|---|\n| `a/b.rs`, `c.rs` | x |\nprose `d.rs` here\n| `e` | not a file |\n";
    let named: Vec<String> = tabled_files(doc).into_iter().collect();
    assert_eq!(named, ["a/b.rs", "c.rs"]);
}
