//! Integration tests of lock sites followed through join points (issue 26 point
//! 2): a base register set on every way into a join maps when all ways agree on
//! the record and offset, and stays unmapped (never guessed) when they do not.
//! A site on a named global that is no record member maps to the variable. A
//! site past its record maps through the variable in its register whose type holds
//! it, else (inferred) to the record holding it when the holders agree. A
//! `%gs:` operand through a register maps like a plain pointer, and an argument
//! register through the variable DWARF gives as its value on entry. A tagged
//! pointer (`page_folio`) maps, inferred, to the type its other ways agree on. A
//! call's return value maps by the callee's DWARF return type (DWARF 5 and 4 call
//! sites), and not through a `void *`. A `container_of` the unit leaves open maps
//! to the record the function's variables point to; a base-less operand with a
//! scaled index to the global array at its displacement; a site whose chain maps
//! to nothing through a variable in a register holding the base plus a constant;
//! a pointer loaded from a `void *` by the return type of the inlined function
//! that loaded it; a pointer to a plain word reloaded from a stack slot through the
//! register spilled there.
//! The fixtures are compiled at test time; objdump confirms the shape gcc gave them.

mod common;

use common::{ghostbench, read_json, require_tool};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process;

fn tool(dir: &Path, program: &str, args: &[&str]) -> String {
    let out = process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fixture compiled at `-O2 -g` in a temporary folder, and its disassembly.
struct Built {
    dir: tempfile::TempDir,
    bin: PathBuf,
    asm: String,
}

impl Built {
    fn new(fixture: &str) -> Built {
        Built::with(fixture, "-g")
    }

    /// The same with `debug` for `-g` (`-gdwarf-4`).
    fn with(fixture: &str, debug: &str) -> Built {
        Built::flags(fixture, &[debug])
    }

    /// The same with `flags` after `-O2`.
    fn flags(fixture: &str, flags: &[&str]) -> Built {
        let dir = tempfile::tempdir().unwrap();
        let src = common::fixture("structs", fixture);
        let bin = dir.path().join("fixture");
        let (b, s) = (bin.to_str().unwrap(), src.to_str().unwrap());
        let mut args = vec!["-O2"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["-o", b, s]);
        tool(dir.path(), "gcc", &args);
        let asm = tool(dir.path(), "objdump", &["-d", "--no-show-raw-insn", b]);
        Built { dir, bin, asm }
    }

    /// Function `f`'s disassembly.
    fn body(&self, f: &str) -> &str {
        self.asm
            .split("\n\n")
            .find(|b| b.contains(&format!("<{f}>:")))
            .unwrap_or_else(|| panic!("{f} disassembled"))
    }

    /// `ghostbench structs --hazards --json` on it.
    fn structs(&self) -> Value {
        let json = self.dir.path().join("r.json");
        let out = ghostbench()
            .arg("structs")
            .arg(&self.bin)
            .args(["--hazards", "--color", "never", "--json"])
            .arg(&json)
            .output()
            .expect("ghostbench runs");
        assert!(
            out.status.success(),
            "structs failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        read_json(&json)
    }
}

fn site<'a>(r: &'a Value, function: &str) -> &'a Value {
    r["lock_sites"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["function"] == function)
        .unwrap_or_else(|| panic!("no site in {function}: {}", r["lock_sites"]))
}

fn sync_paths(r: &Value, record: &str) -> Vec<String> {
    r["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == record)
        .unwrap_or_else(|| panic!("struct {record} missing"))["sync_members"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|m| m["path"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_base_set_on_every_way_into_a_join_maps_only_when_the_ways_agree() {
    if !require_tool("gcc") || !require_tool("objdump") {
        return;
    }
    let b = Built::new("locked_join.c");
    // The shape: the site is a jump target, reached by falling in and by a jump
    // from after it, and no variable names its base register.
    let take: Vec<&str> = b.body("take").lines().collect();
    let lock = take
        .iter()
        .find(|l| l.contains("lock add"))
        .expect("take has a lock add");
    let at = lock.trim().split(':').next().unwrap().to_string();
    assert!(
        take.iter()
            .any(|l| l.contains("jmp") && l.contains(&format!("{at} <take+"))),
        "no jump back to the site in take:\n{}",
        take.join("\n")
    );

    let r = b.structs();
    // take: o->y on one way, o->x on the other: both `struct inner *`, refs at 8.
    let s = site(&r, "take");
    assert_eq!(s["outcome"], "exact", "{s}");
    assert_eq!(s["members"][0], "inner.refs", "{s}");
    assert_eq!(sync_paths(&r, "inner"), vec!["refs".to_string()]);
    // mixed: &e->ot->refs (struct other, 0) and &e->in->refs (struct inner, 8)
    // disagree: unmapped, and struct other gains no atomic.
    let m = site(&r, "mixed");
    assert_eq!(m["outcome"], "untracked-base", "{m}");
    assert!(m.get("members").map_or(true, Value::is_null), "{m}");
    assert!(sync_paths(&r, "other").is_empty());
    assert_eq!(r["lock_sites"]["exact"], 1);
    assert_eq!(r["lock_sites"]["inferred"], 0);
}

#[test]
fn a_site_on_a_named_global_scalar_maps_to_the_variable_with_its_line_facts() {
    if !require_tool("gcc") || !require_tool("objdump") || !require_tool("nm") {
        return;
    }
    let b = Built::new("locked_variable.c");
    // The shape: each function's one locked operand is RIP-relative, at the
    // variable (objdump names it `<hits>`, `<flags+0xc>`, `<buf+0x3c>`).
    for (f, target) in [
        ("count", "<hits>"),
        ("mark", "<flags+0xc>"),
        ("torn", "<buf+0x3c>"),
        ("tally", "<seen."),
    ] {
        let body = b.body(f);
        assert!(
            body.lines()
                .any(|l| l.contains("lock") && l.contains("(%rip)") && l.contains(target)),
            "{f} has no locked RIP-relative operand at {target}:\n{body}"
        );
    }
    let symbols = tool(b.dir.path(), "nm", &[b.bin.to_str().unwrap()]);
    let address = |name: &str| {
        symbols
            .lines()
            .find_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                (w.len() == 3 && w[2] == name).then(|| u64::from_str_radix(w[0], 16).unwrap())
            })
            .unwrap_or_else(|| panic!("no symbol {name}"))
    };

    // gcc names a function's static `seen.N`.
    let seen = symbols
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .find(|n| n.starts_with("seen."))
        .expect("a seen.N symbol")
        .to_string();

    let r = b.structs();
    let stats = &r["lock_sites"];
    assert_eq!(stats["variable"], 4, "{stats}");
    assert_eq!(stats["exact"], 0, "{stats}");
    assert!(stats["unmapped"].as_object().unwrap().is_empty(), "{stats}");
    // Worked by hand: hits is 8-aligned (a long); flags is 64-aligned, so
    // flags[3] is at +12, 4 bytes, inside line 0; buf is 64-aligned, so the 8
    // bytes at buf+60 are 60..67: 4 in one line, 4 in the next, not 8-aligned.
    let expect = [
        ("count", "hits", address("hits"), 8, true, false),
        ("mark", "flags[3]", address("flags") + 12, 4, true, false),
        ("torn", "buf[60]", address("buf") + 60, 8, false, true),
        ("tally", seen.as_str(), address(&seen), 4, true, false),
    ];
    for (f, name, at, size, aligned, crosses) in expect {
        let s = site(&r, f);
        assert_eq!(s["outcome"], "variable", "{s}");
        let v = &s["variable"];
        assert_eq!(v["name"], name, "{s}");
        assert_eq!(v["address"], at, "{s}");
        assert_eq!(v["size"], size, "{s}");
        assert_eq!(v["aligned"], aligned, "{s}");
        assert_eq!(v["crosses_line"], crosses, "{s}");
        assert!(s.get("members").map_or(true, Value::is_null), "{s}");
    }
}

#[test]
fn a_site_past_its_record_maps_to_the_variable_or_holder_that_holds_it() {
    if !require_tool("gcc") || !require_tool("objdump") {
        return;
    }
    let b = Built::new("locked_container.c");
    // The shape: each site is the parameter's register with the operand outside
    // its record: 4 bytes before a node, 8 bytes past a link.
    for (f, operand) in [
        ("bump", "-0x4(%rdi)"),
        ("tick", "0x8(%rdi)"),
        ("fire", "-0x4(%rdi)"),
        ("drop", "(%rax)"),
    ] {
        let body = b.body(f);
        assert!(
            body.lines()
                .any(|l| l.contains("lock ") && l.contains(operand)),
            "{f} has no lock on {operand}:\n{body}"
        );
    }
    let r = b.structs();
    // bump: node is box.n at 16; -4 is box.count (12), the one holder of a node.
    let b = site(&r, "bump");
    assert_eq!(b["outcome"], "inferred", "{b}");
    assert_eq!(b["members"][0], "box.count", "{b}");
    assert!(b["via"].as_str().unwrap().contains("container_of"), "{b}");
    assert_eq!(sync_paths(&r, "box"), vec!["count".to_string()]);
    // tick: +8 from a link is pair.x in a pair, trio.w in a trio: unmapped.
    let t = site(&r, "tick");
    assert_eq!(t["outcome"], "no-candidate", "{t}");
    assert!(t.get("members").map_or(true, Value::is_null), "{t}");
    assert!(sync_paths(&r, "pair").is_empty());
    assert!(sync_paths(&r, "trio").is_empty());
    // drop: loaded from 16 before an item, holder.r (item at 16): ref.count.
    let d = site(&r, "drop");
    assert_eq!(d["outcome"], "inferred", "{d}");
    assert_eq!(d["members"][0], "ref.count", "{d}");
    assert_eq!(r["lock_sites"]["inferred"], 2);
    // fire: t and f are both in %rdi (f at 16 less); f's type holds -4: exact.
    let f = site(&r, "fire");
    assert_eq!(f["outcome"], "exact", "{f}");
    assert_eq!(f["members"][0], "foo.count", "{f}");
    assert_eq!(r["lock_sites"]["exact"], 1);
}

#[test]
fn a_segment_relative_site_through_a_register_maps_like_a_pointer() {
    if !require_tool("gcc") || !require_tool("objdump") {
        return;
    }
    let b = Built::new("locked_segment.c");
    let body = b.body("bump");
    assert!(
        body.lines()
            .any(|l| l.contains("lock xadd") && l.contains("%gs:0x8(%rdi)")),
        "bump has no lock xadd on %gs:0x8(%rdi):\n{body}"
    );
    let r = b.structs();
    let s = site(&r, "bump");
    assert_eq!(s["outcome"], "exact", "{s}");
    assert_eq!(s["members"][0], "stat.hits", "{s}");
    assert!(s["via"].as_str().unwrap().contains("per-CPU"), "{s}");
    assert_eq!(sync_paths(&r, "stat"), vec!["hits".to_string()]);
}

#[test]
fn an_argument_register_maps_through_the_variable_dwarf_gives_as_its_entry_value() {
    if !require_tool("gcc") || !require_tool("objdump") {
        return;
    }
    let b = Built::new("locked_entry.c");
    // The shape: the xchg's base is %rdi as on entry, and the typed pointer made
    // from it is in another register (`lea -0x8(%rdi),%rcx`).
    for f in ["submit", "submit_kept"] {
        let body = b.body(f);
        assert!(
            body.contains("xchg") && body.contains(",-0x8(%rdi)"),
            "{f}:\n{body}"
        );
        assert!(body.contains("lea    -0x8(%rdi),"), "{f}:\n{body}");
    }
    // submit_kept writes %rdi nowhere; submit does (the tail call's argument).
    assert!(!b.body("submit_kept").contains(",%rdi\n"));
    assert!(b.body("submit").contains(",%rdi\n"));
    let r = b.structs();
    for f in ["submit", "submit_kept"] {
        let s = r["lock_sites"]["list"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["function"] == f && s["op"] == "xchg")
            .unwrap_or_else(|| panic!("no xchg in {f}"));
        assert_eq!(s["outcome"], "exact", "{s}");
        assert_eq!(s["members"][0], "hdr.len", "{s}");
    }
    // A cmpxchg without lock takes no bus lock: no lock site.
    let ops: Vec<&str> = r["lock_sites"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["function"] == "cmpxchg_plain")
        .map(|s| s["op"].as_str().unwrap())
        .collect();
    assert!(b.body("cmpxchg_plain").contains("cmpxchg %"));
    assert!(ops.is_empty(), "{ops:?}");
}

#[test]
fn a_tagged_pointer_maps_inferred_to_the_type_the_other_ways_agree_on() {
    if !require_tool("gcc") || !require_tool("objdump") {
        return;
    }
    let b = Built::new("locked_tagged.c");
    // The shape: compound_head - 1 (`lea -0x1(%rax),...`) or the page itself,
    // chosen by a cmov, into the lock's base register.
    for f in ["mark", "mark_entry", "mixed"] {
        let body = b.body(f);
        assert!(
            body.contains("lea    -0x1(%rax),") && body.contains("cmov"),
            "{f}:\n{body}"
        );
    }
    let r = b.structs();
    let list = r["lock_sites"]["list"].as_array().unwrap();
    // The `lock or` right after the cmov (the writes reaching past it) and the
    // `lock and` at the jump target (the ways into it).
    // In mark_entry the other write reaching the site is the value on entry.
    for (f, op) in [
        ("mark", "lock or"),
        ("mark", "lock and"),
        ("mark_entry", "lock or"),
    ] {
        let s = list
            .iter()
            .find(|s| s["function"] == f && s["op"] == op)
            .unwrap_or_else(|| panic!("a {op} in {f}"));
        assert_eq!(s["outcome"], "inferred", "{s}");
        assert_eq!(s["members"][0], "page.flags", "{s}");
        assert!(s["via"].as_str().unwrap().contains("tagged pointer"), "{s}");
    }
    // Loaded from a `struct other`: the ways disagree, nothing is guessed.
    let mixed = site(&r, "mixed");
    assert_eq!(mixed["outcome"], "untracked-base", "{mixed}");
    // No site of the file maps anywhere but page.flags.
    for s in list {
        if let Some(m) = s["members"].as_array() {
            assert_eq!(m[0], "page.flags", "{s}");
        }
    }
}

#[test]
fn a_calls_return_value_maps_by_the_callees_return_type() {
    if !require_tool("gcc") || !require_tool("objdump") {
        return;
    }
    // DWARF 5's DW_TAG_call_site and DWARF 4's DW_TAG_GNU_call_site.
    for debug in ["-gdwarf-5", "-gdwarf-4"] {
        let b = Built::with("locked_returned.c", debug);
        // The shape: the lock's base is %rax as the call just before left it, and
        // no variable of the caller holds it.
        for (f, callee, operand) in [
            ("bump", "get_foo", "0x8(%rax)"),
            ("bump_any", "get_any", "0xc(%rax)"),
        ] {
            let lines: Vec<&str> = b.body(f).lines().collect();
            let at = lines
                .iter()
                .position(|l| l.contains("lock ") && l.contains(operand))
                .unwrap_or_else(|| panic!("{f} has no lock on {operand}:\n{}", b.body(f)));
            assert!(
                at > 0 && lines[at - 1].contains("call") && lines[at - 1].contains(callee),
                "{f}: the lock does not follow the call to {callee}:\n{}",
                b.body(f)
            );
        }
        let r = b.structs();
        // bump: get_foo returns a `struct foo *`; 8 is foo.count.
        let s = site(&r, "bump");
        assert_eq!(s["outcome"], "exact", "{debug}: {s}");
        assert_eq!(s["members"][0], "foo.count", "{debug}: {s}");
        let via = s["via"].as_str().unwrap();
        assert!(
            via.contains("`get_foo` returns (a `struct foo *`)"),
            "{debug}: {s}"
        );
        assert_eq!(sync_paths(&r, "foo"), vec!["count".to_string()], "{debug}");
        // bump_any: the same record through a `void *`: nothing to map to.
        let a = site(&r, "bump_any");
        assert_eq!(a["outcome"], "scalar-variable", "{debug}: {a}");
        assert!(a.get("members").map_or(true, Value::is_null), "{a}");
        assert_eq!(r["lock_sites"]["exact"], 1, "{debug}");
    }
}

#[test]
fn sites_map_through_the_functions_variables_global_arrays_and_other_registers() {
    if !require_tool("gcc") || !require_tool("objdump") {
        return;
    }
    let b = Built::flags("locked_scope.c", &["-g", "-fno-pie", "-no-pie"]);
    // The shapes: 8 past the link's register; an absolute address with a scaled
    // index and no base; an `lea` of the base plus 0x80 into another register
    // just before the site.
    let body = b.body("tock");
    assert!(
        body.lines()
            .any(|l| l.contains("lock or") && l.contains("0x8(%r")),
        "tock:\n{body}"
    );
    for f in ["hit", "swap_in"] {
        let body = b.body(f);
        assert!(
            body.lines()
                .any(|l| (l.contains("lock ") || l.contains("xchg")) && l.contains("(,%")),
            "{f}:\n{body}"
        );
    }
    let body = b.body("drop_any");
    assert!(
        body.lines().any(|l| l.contains("lea    0x80(%")),
        "drop_any:\n{body}"
    );
    let r = b.structs();
    let t = site(&r, "tock");
    assert_eq!(t["outcome"], "inferred", "{t}");
    assert_eq!(t["members"][0], "trio.w", "{t}");
    assert!(
        t["via"]
            .as_str()
            .unwrap()
            .contains("a variable in scope points to"),
        "{t}"
    );
    let h = site(&r, "hit");
    assert_eq!(h["outcome"], "exact", "{h}");
    assert_eq!(h["members"][0], "cnt.misses", "{h}");
    let s = site(&r, "swap_in");
    assert_eq!(s["outcome"], "variable", "{s}");
    assert_eq!(s["variable"]["name"], "table[]", "{s}");
    assert_eq!(s["variable"]["aligned"], true, "{s}");
    assert_eq!(s["variable"]["crosses_line"], false, "{s}");
    let d = site(&r, "drop_any");
    assert_eq!(d["outcome"], "exact", "{d}");
    assert_eq!(d["members"][0], "counter.n", "{d}");
    assert!(
        d["via"].as_str().unwrap().contains("holds the base +128"),
        "{d}"
    );
    // lockit: loaded from a `void *` by the inlined INFO returning `struct info *`.
    let l = site(&r, "lockit");
    assert_eq!(l["outcome"], "inferred", "{l}");
    assert_eq!(l["members"][0], "info.busy", "{l}");
    assert!(l["via"].as_str().unwrap().contains("inlined `INFO`"), "{l}");
    assert_eq!(site(&r, "lockraw")["outcome"], "scalar-variable");
    // bump_first: `mov (%rdi),%rax; lock addq $1,0x8(%rax)`, %rdi a `struct box **`.
    let body = b.body("bump_first");
    assert!(
        body.lines()
            .any(|l| l.contains("lock add") && l.contains("0x8(%r")),
        "bump_first:\n{body}"
    );
    let f = site(&r, "bump_first");
    assert_eq!(f["outcome"], "exact", "{f}");
    assert_eq!(f["members"][0], "box.hits", "{f}");
    // claim: the locked word is the `struct box *` itself, in no record.
    assert_eq!(site(&r, "claim")["outcome"], "scalar-variable");
    // bump_checked: the range-less `typecheck` block hides nothing after it.
    let c = site(&r, "bump_checked");
    assert_eq!(c["outcome"], "exact", "{c}");
    assert_eq!(c["members"][0], "gauge.level", "{c}");
    // fill: the inlined helper's record, refined by the chain behind it.
    let body = b.body("fill");
    assert!(body.contains("add    $0x10,%rdi"), "fill:\n{body}");
    let f = site(&r, "fill");
    assert_eq!(f["outcome"], "exact", "{f}");
    assert_eq!(f["members"][0], "tank.g.level", "{f}");
    assert_eq!(f["members"][1], "gauge.level", "{f}");
    // touch_all: `mov (%rdi),%rdi` round the loop; the entry says `struct node *`.
    let body = b.body("touch_all");
    assert!(body.contains("mov    (%rdi),%rdi"), "touch_all:\n{body}");
    let t = site(&r, "touch_all");
    assert_eq!(t["outcome"], "exact", "{t}");
    assert_eq!(t["members"][0], "node.hits", "{t}");
    assert!(t["via"].as_str().unwrap().contains("round a loop"), "{t}");
    // real_get: the merged-looking inline scope's `struct decoy *` is not believed.
    let g = site(&r, "real_get");
    assert_eq!(g["members"][0], "real.ref", "{g}");
}

#[test]
fn a_spilled_pointer_to_a_plain_word_maps_through_the_register_spilled() {
    if !require_tool("gcc") || !require_tool("objdump") {
        return;
    }
    let b = Built::flags("locked_word.c", &["-g", "-fno-pie", "-no-pie"]);
    // The shape: the pointer reloaded from a stack slot into the site's base.
    let body = b.body("claim_bit");
    let lines: Vec<&str> = body.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("lock bts"))
        .unwrap_or_else(|| panic!("claim_bit:\n{body}"));
    let base = lines[at]
        .rsplit_once("(%")
        .map(|(_, r)| r.trim_end_matches(')').trim())
        .unwrap_or_else(|| panic!("claim_bit:\n{body}"));
    assert!(
        lines[..at]
            .iter()
            .rev()
            .take(4)
            .any(|l| l.contains("(%rsp),%") && l.trim_end().ends_with(&format!("%{base}"))),
        "the base %{base} is no reload from the stack in claim_bit:\n{body}"
    );
    let r = b.structs();
    let s = site(&r, "claim_bit");
    assert_eq!(s["outcome"], "exact", "{s}");
    assert!(
        s["members"][0]
            .as_str()
            .is_some_and(|m| m.starts_with("cpumap.alloc_map")),
        "{s}"
    );
}
