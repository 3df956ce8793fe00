//! Type naming: a record's qualified name, a type spelled as C would spell it, the
//! file a record is declared in (from the unit's line table), and `unqualified`.

use super::builder::{Builder, MAX_DEPTH};
use super::table::{Node, Qual, Record};

impl<'a> Builder<'a, '_> {
    /// `scope::name`, or the typedef name of an anonymous record.
    pub(super) fn record_name(&self, r: &Record<'a>) -> Option<String> {
        let base = r.name.or(r.typedef_name)?;
        let base = self.text(base);
        Some(if r.scope.is_empty() || r.name.is_none() {
            base
        } else {
            format!("{}::{base}", r.scope)
        })
    }

    /// The type as C would spell it.
    pub(super) fn name(&mut self, i: usize, depth: u32) -> String {
        if depth > MAX_DEPTH {
            return "?".to_string();
        }
        match &self.t.nodes[i] {
            Node::Base { name, .. } => self.text(*name),
            Node::Other { name, .. } => name.map(|n| self.text(n)).unwrap_or_else(|| "void".into()),
            Node::Enum { name, .. } => match name {
                Some(n) => format!("enum {}", self.text(*n)),
                None => "enum {...}".to_string(),
            },
            Node::Typedef { name, .. } => self.text(*name),
            Node::Function { .. } => "fn()".to_string(),
            Node::Record(r) => match (r.name, self.record_name(r)) {
                (Some(_), Some(n)) => format!("{} {n}", r.kind.keyword()),
                (None, Some(n)) => n,
                _ => format!("{} {{...}}", r.kind.keyword()),
            },
            Node::Pointer {
                target, reference, ..
            } => {
                let star = if *reference { "&" } else { "*" };
                match self.target(*target) {
                    Some(j) => format!("{} {star}", self.name(j, depth + 1)),
                    None => format!("void {star}"),
                }
            }
            Node::Qual { kind, target } => {
                let word = match kind {
                    Qual::Const => "const",
                    Qual::Volatile => "volatile",
                    Qual::Restrict => "restrict",
                    Qual::Atomic => "_Atomic",
                };
                let inner = match self.target(*target) {
                    Some(j) => self.name(j, depth + 1),
                    None => "void".to_string(),
                };
                format!("{word} {inner}")
            }
            Node::Array { elem, dims } => {
                let dims: String = dims
                    .iter()
                    .map(|d| format!("[{}]", d.unwrap_or(0)))
                    .collect();
                let inner = match self.target(*elem) {
                    Some(j) => self.name(j, depth + 1),
                    None => "?".to_string(),
                };
                format!("{inner}{dims}")
            }
        }
    }

    /// The type as pahole spells it: a qualified type ends in a space (`const char `,
    /// so a pointer to it reads `const char  *`), a pointer to a function is
    /// `ret (*)(params)`, an anonymous record is `struct {...}`.
    pub(super) fn pahole_name(&mut self, i: usize, depth: u32) -> String {
        if depth > MAX_DEPTH {
            return "?".to_string();
        }
        match &self.t.nodes[i] {
            Node::Record(r) => match r.name {
                Some(n) => format!("{} {}", r.kind.keyword(), self.text(n)),
                None => format!("{} {{...}}", r.kind.keyword()),
            },
            Node::Pointer {
                target, reference, ..
            } => {
                let star = if *reference { "&" } else { "*" };
                let (target, reference) = (*target, *reference);
                match self.target(target) {
                    Some(f) if !reference && matches!(self.t.nodes[f], Node::Function { .. }) => {
                        let (ret, params) = self.signature(f, depth + 1);
                        format!("{ret} (*)({params})")
                    }
                    Some(j) => format!("{} {star}", self.pahole_name(j, depth + 1)),
                    None => format!("void {star}"),
                }
            }
            Node::Qual { kind, target } => {
                let (kind, target) = (*kind, *target);
                let (inner, pointer) = match self.target(target) {
                    Some(j) => (
                        self.pahole_name(j, depth + 1),
                        matches!(self.t.nodes[j], Node::Pointer { .. }),
                    ),
                    None => ("void".to_string(), false),
                };
                let word = match kind {
                    Qual::Const => "const",
                    Qual::Volatile => "volatile",
                    Qual::Restrict => "restrict",
                    Qual::Atomic => "_Atomic",
                };
                // A qualified pointer reads `T * const`; anything else `const T `.
                if pointer || kind == Qual::Restrict {
                    format!("{inner} {word}")
                } else {
                    format!("{word} {inner} ")
                }
            }
            // pahole names an array (behind a pointer, say) by its element alone.
            Node::Array { elem, .. } => match self.target(*elem) {
                Some(j) => self.pahole_name(j, depth + 1),
                None => "?".to_string(),
            },
            Node::Function { .. } => {
                let (ret, params) = self.signature(i, depth + 1);
                format!("{ret} ()({params})")
            }
            _ => self.name(i, depth),
        }
    }

    /// A function type's return type and parameter list as pahole spells them
    /// (`void`, `struct sk_buff *, int`; `void` for a prototype without parameters).
    pub(super) fn signature(&mut self, i: usize, depth: u32) -> (String, String) {
        let Node::Function {
            ret,
            params,
            varargs,
            prototyped,
        } = &self.t.nodes[i]
        else {
            return ("void".into(), String::new());
        };
        let (ret, params, varargs, prototyped) = (*ret, params.clone(), *varargs, *prototyped);
        let ret = match self.target(ret) {
            Some(j) => self.pahole_name(j, depth + 1),
            None => "void".to_string(),
        };
        let mut list: Vec<String> = params
            .iter()
            .map(|p| match self.target(*p) {
                Some(j) => self.pahole_name(j, depth + 1),
                None => "void".to_string(),
            })
            .collect();
        if varargs {
            list.push("...".to_string());
        }
        if list.is_empty() && prototyped {
            list.push("void".to_string());
        }
        (ret, list.join(", "))
    }

    /// The path of file `index` of the unit's line table (`dir/name`), read the first
    /// time it is asked for (a unit names hundreds of files; its records few).
    pub(super) fn file_name(&mut self, index: u64) -> Option<String> {
        if let Some(known) = self.files.get(&index) {
            return known.clone();
        }
        let name = self.line_table_file(index);
        self.files.insert(index, name.clone());
        name
    }

    /// File `n` of the unit's line table (numbered from 0 in DWARF 5, else from 1).
    fn line_table_file(&self, n: u64) -> Option<String> {
        let program = self.unit.line_program.as_ref()?;
        let header = program.header();
        let count = header.file_names().len() as u64;
        let first = if header.version() >= 5 { 0 } else { 1 };
        if n < first || n >= first + count {
            return None;
        }
        let file = header.file(n)?;
        let text = |v| {
            self.dwarf
                .attr_string(self.unit, v)
                .ok()
                .map(|s| String::from_utf8_lossy(s.slice()).into_owned())
        };
        let name = text(file.path_name())?;
        let dir = file.directory(header).and_then(text);
        Some(match dir {
            Some(d) if !name.starts_with('/') && !d.is_empty() => format!("{d}/{name}"),
            _ => name,
        })
    }
}

/// The last `::` component of a qualified name, ignoring `::` inside template arguments.
pub fn unqualified(name: &str) -> &str {
    let mut depth = 0i32;
    let bytes = name.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => depth -= 1,
            b':' if depth == 0 && i + 1 < bytes.len() && bytes[i + 1] == b':' => {
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    &name[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unqualified_names_ignore_template_scopes() {
        assert_eq!(unqualified("ns::foo<std::string>"), "foo<std::string>");
        assert_eq!(unqualified("plain"), "plain");
        assert_eq!(unqualified("a::b::c"), "c");
    }
}
