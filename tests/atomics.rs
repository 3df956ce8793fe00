//! Integration tests of atomics by use (`structs` issue 11): plain integers updated
//! with `__sync`/`__atomic` builtins become atomics of their struct, so the
//! split-lock check finds the element indices worked out by hand and names the
//! locking instruction; members never locked stay plain. And the bad inputs: a lock
//! instruction in a function without DWARF, an operand through a register no
//! variable covers (unmapped, not guessed), a truncated `.debug_loclists`. And the
//! base registers followed back: loaded from a member, an index carrying the
//! array's offset, a RIP-relative global, a loop's induction pointer (over a
//! record array behind a pointer, on the stack, and through the CFA), an argument
//! untouched since entry (inferred). And false sharing's "atomic beside a member
//! written elsewhere" (plain stores in functions that lock something). Fixtures
//! are compiled at test time.

mod common;

use common::{ghostbench, read_json, require_any, require_tool};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process;

fn fixture(name: &str) -> PathBuf {
    common::fixture("structs", name)
}

/// Run a tool in `dir`; panics with its stderr on failure.
fn sh(dir: &Path, program: &str, args: &[&str]) {
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
}

/// `structs --hazards` with JSON and SARIF: (JSON report, SARIF, terminal text).
fn run(binary: &Path, dir: &Path) -> (Value, Value, String) {
    let json = dir.join("r.json");
    let sarif = dir.join("r.sarif");
    let out = ghostbench()
        .arg("structs")
        .arg(binary)
        .args(["--hazards", "--color", "never", "--json"])
        .arg(&json)
        .arg("--sarif")
        .arg(&sarif)
        .output()
        .expect("ghostbench runs");
    assert!(
        out.status.success(),
        "structs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        read_json(&json),
        read_json(&sarif),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn structure<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("struct {name} missing"))
}

fn sync_member<'a>(r: &'a Value, s: &str, path: &str) -> Option<&'a Value> {
    structure(r, s)["sync_members"]
        .as_array()
        .and_then(|l| l.iter().find(|m| m["path"] == path))
}

fn hazards<'a>(r: &'a Value, kind: &str) -> Vec<&'a Value> {
    r["hazards"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["kind"] == kind)
        .collect()
}

fn functions(evidence: &Value) -> Vec<String> {
    evidence["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["function"].as_str().unwrap().to_string())
        .collect()
}

fn gcc(dir: &Path, out: &str, args: &[&str]) -> Option<PathBuf> {
    if !require_tool("gcc") {
        return None;
    }
    let bin = dir.join(out);
    let mut all = vec!["-O2", "-o", bin.to_str().unwrap()];
    all.extend_from_slice(args);
    sh(dir, "gcc", &all);
    Some(bin)
}

#[test]
fn plain_counter_locked_by_builtins_splits_at_the_hand_worked_index() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("locked.c");
    let Some(bin) = gcc(dir.path(), "locked", &["-g", src.to_str().unwrap()]) else {
        return;
    };
    let (r, sarif, text) = run(&bin, dir.path());

    // children[k].refcount is at 9 + 24k in a 64-byte-aligned node_hdr: 9, 33, 57,
    // 81 (17), 105 (41), 129 (1), 153 (25), 177 (49); only k = 2 has 57 + 8 > 64.
    let split = hazards(&r, "split-lock-risk");
    let in_array: Vec<&&Value> = split
        .iter()
        .filter(|h| h["struct"] == "child_ref" && h["container"] == "node_hdr")
        .collect();
    assert_eq!(in_array.len(), 1, "{in_array:#?}");
    let h = in_array[0];
    assert_eq!(h["severity"], "error");
    assert_eq!(h["member"], "refcount");
    assert_eq!(h["offset"], 5);
    assert_eq!(h["array"], "children");
    assert_eq!(h["array_offset"], 4);
    assert_eq!(h["indices"], serde_json::json!([2]));
    assert_eq!(h["by_use"], true);
    // Three sites in three functions, all mapped through a variable's location.
    assert_eq!(h["locked"]["count"], 3);
    assert_eq!(h["locked"]["functions"], 3);
    assert_eq!(h["locked"]["inferred"], false);
    let mut f = functions(&h["locked"]);
    f.sort();
    assert_eq!(f, ["account", "account_later", "release"]);
    let ops: Vec<&str> = h["locked"]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["op"].as_str().unwrap())
        .collect();
    assert!(
        ops.contains(&"lock add") && ops.contains(&"lock xadd"),
        "{ops:?}"
    );
    let message = h["message"].as_str().unwrap();
    assert!(
        message.contains("children[2].refcount crosses a 64-byte line")
            && message.contains("in account() (lock add)"),
        "{message}"
    );
    assert!(text.contains("in account() (lock add)"), "{text}");

    // blocknum is misaligned and crosses for k = 5 (125 + 4 > 128) but is only ever
    // stored to: misaligned, never a split lock.
    assert!(split.iter().all(|h| h["member"] != "blocknum"));
    assert!(hazards(&r, "misaligned")
        .iter()
        .any(|h| h["struct"] == "child_ref" && h["member"] == "blocknum"));
    assert!(sync_member(&r, "child_ref", "blocknum").is_none());
    // height is locked (touch) and at 17 + 24k never crosses inside node_hdr;
    // n_children is locked (grow) at offset 0 of a 64-byte-aligned struct.
    let height = sync_member(&r, "child_ref", "height").expect("height locked");
    assert_eq!(functions(&height["locked"]), ["touch"]);
    assert!(split
        .iter()
        .all(|h| h["member"] != "height" || h["container"].is_null()));
    assert!(split
        .iter()
        .all(|h| h["member"] != "height" || h["severity"] != "error"));
    let n = sync_member(&r, "node_hdr", "n_children").expect("n_children locked");
    assert_eq!(functions(&n["locked"]), ["grow"]);
    assert!(split.iter().all(|h| h["member"] != "n_children"));

    // refcount (account, account_later, release) and height (touch) share line 0 of
    // child_ref and are locked from different functions: a warning, one per struct.
    let fs: Vec<&Value> = hazards(&r, "false-sharing")
        .into_iter()
        .filter(|h| h["struct"] == "child_ref")
        .collect();
    assert_eq!(fs.len(), 1);
    assert_eq!(fs[0]["severity"], "warning");
    assert_eq!(
        fs[0]["lines"][0]["separate_writers"],
        serde_json::json!(["refcount", "height"])
    );

    // Every site of this program maps exactly.
    let stats = &r["lock_sites"];
    assert_eq!(stats["sites"], 5, "{stats}");
    assert_eq!(stats["exact"], 5, "{stats}");

    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|x| x["ruleId"] == "split-lock-risk"
        && x["level"] == "error"
        && x["message"]["text"]
            .as_str()
            .unwrap()
            .contains("in account() (lock add)")));
}

#[test]
fn lock_in_a_function_without_dwarf_maps_to_nothing() {
    let dir = tempfile::tempdir().unwrap();
    if !require_tool("gcc") {
        return;
    }
    let obj = dir.path().join("nodwarf.o");
    let src = fixture("locked_nodwarf.c");
    sh(
        dir.path(),
        "gcc",
        &[
            "-O2",
            "-c",
            "-o",
            obj.to_str().unwrap(),
            src.to_str().unwrap(),
        ],
    );
    let main = fixture("locked.c");
    let Some(bin) = gcc(
        dir.path(),
        "mixed",
        &["-g", main.to_str().unwrap(), obj.to_str().unwrap()],
    ) else {
        return;
    };
    let (r, _, _) = run(&bin, dir.path());
    assert_eq!(r["lock_sites"]["sites"], 6);
    assert_eq!(r["lock_sites"]["unmapped"]["no-dwarf"], 1);
    // bump_third's children[3].refcount is known nowhere.
    assert!(sync_member(&r, "node_hdr", "children[3].refcount").is_none());
    let refcount = sync_member(&r, "child_ref", "refcount").unwrap();
    assert_eq!(refcount["locked"]["count"], 3);
    assert!(!functions(&refcount["locked"]).contains(&"bump_third".to_string()));
}

#[test]
fn operand_through_a_register_no_variable_covers_is_not_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("locked_edge.c");
    let Some(bin) = gcc(dir.path(), "edge", &["-g", src.to_str().unwrap()]) else {
        return;
    };
    let (r, _, _) = run(&bin, dir.path());
    // The base is x ^ 0x10: arithmetic the decoder does not follow, and no variable
    // is in the register. p's struct pair would fit (a 4-byte b at 4), but a guess
    // from the parameters' types is not made: unmapped, with why.
    let stats = &r["lock_sites"];
    assert_eq!(stats["sites"], 1);
    assert_eq!(stats["exact"], 0);
    assert_eq!(stats["inferred"], 0);
    assert_eq!(stats["unmapped"]["untracked-base"], 1);
    assert_eq!(stats["list"][0]["function"], "poke");
    assert_eq!(stats["list"][0]["outcome"], "untracked-base");
    assert!(sync_member(&r, "pair", "b").is_none());
    assert!(sync_member(&r, "pair", "a").is_none());
}

/// The site of `function` in the JSON audit list.
fn site<'a>(r: &'a Value, function: &str) -> &'a Value {
    r["lock_sites"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["function"] == function)
        .unwrap_or_else(|| panic!("no site in {function}: {}", r["lock_sites"]))
}

#[test]
fn base_registers_are_followed_through_loads_index_offsets_and_globals() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("locked_chain.c");
    let Some(bin) = gcc(dir.path(), "chain", &["-g", src.to_str().unwrap()]) else {
        return;
    };
    let (r, _, _) = run(&bin, dir.path());
    // miss: `mov 8(%rdi),%rax; lock addq $1,8(%rax)`: o->c, then its member at 8.
    assert_eq!(site(&r, "miss")["outcome"], "exact");
    assert_eq!(site(&r, "miss")["members"][0], "counters.misses");
    let misses = sync_member(&r, "counters", "misses").expect("counters.misses");
    assert_eq!(misses["locked"]["sites"][0]["mapping"], "exact");
    assert!(sync_member(&r, "counters", "hits").is_none());
    assert!(sync_member(&r, "owner", "c").is_none());
    // set_bit: `lea 3(%rax),%rsi; lock orq $1,(%rdi,%rsi,8)`: map at 24, every element.
    assert_eq!(site(&r, "set_bit")["outcome"], "exact");
    for k in 0..4 {
        let m = sync_member(&r, "part", &format!("map[{k}]")).expect("part.map[k]");
        assert_eq!(m["offset"], 24 + 8 * k);
    }
    assert!(structure(&r, "part")["sync_members"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| !m["path"].as_str().unwrap().starts_with("memid")));
    // ref_slot: `lea table+8(%rip),%rax; add %rax,%rdi`: the global array's elements.
    assert_eq!(site(&r, "ref_slot")["outcome"], "exact");
    assert!(sync_member(&r, "slot", "refs").is_some());
    assert!(sync_member(&r, "slot", "a").is_none());
    // walk: the base advances in a loop over the global cells[] (pointers): the
    // induction is followed to an array that names no record member.
    assert_eq!(site(&r, "walk")["outcome"], "scalar-variable");
    // mark: `lock orb $8, 3(reg)` locks one byte of flags (56..63): byte 59.
    assert_eq!(site(&r, "mark")["outcome"], "exact");
    let flags = sync_member(&r, "flagged", "flags").expect("flagged.flags");
    assert_eq!(
        (flags["offset"].as_u64(), flags["size"].as_u64()),
        (Some(59), Some(1))
    );
    // shifted: `lock addl $1,8(%rdi,%rsi,4)` for h->nodes[i - 2]: the
    // displacement is hstate.gen's, the index walks nodes: neither is claimed.
    let shifted = site(&r, "shifted");
    assert!(
        shifted["op"].as_str().unwrap().starts_with("lock"),
        "{shifted}"
    );
    assert_eq!(shifted["outcome"], "stray-index", "{shifted}");
    assert!(sync_member(&r, "hstate", "gen").is_none());
    assert_eq!(r["lock_sites"]["unmapped"]["stray-index"], 1);
    // bump: an index over big.cells[100]: not expanded, and said so.
    assert_eq!(site(&r, "bump")["outcome"], "large-array");
    assert!(sync_member(&r, "big", "head").is_none());
    // first: n is in %rdi at the site (a location list).
    assert_eq!(site(&r, "first")["outcome"], "exact");
    assert!(sync_member(&r, "hdr", "count").is_some());
    assert_eq!(r["lock_sites"]["inferred"], 0);
}

/// `bin` with its `.debug_loclists` cut to 20 bytes, written to `dir/broken`.
fn cut_loclists(dir: &Path, bin: &Path) -> PathBuf {
    let whole = dir.join("loclists.bin");
    sh(
        dir,
        "objcopy",
        &[
            &format!("--dump-section=.debug_loclists={}", whole.display()),
            bin.to_str().unwrap(),
        ],
    );
    let bytes = std::fs::read(&whole).unwrap();
    assert!(bytes.len() > 20, "the fixture has location lists");
    let cut = dir.join("cut.bin");
    std::fs::write(&cut, &bytes[..20]).unwrap();
    let broken = dir.join("broken");
    sh(
        dir,
        "objcopy",
        &[
            &format!("--update-section=.debug_loclists={}", cut.display()),
            bin.to_str().unwrap(),
            broken.to_str().unwrap(),
        ],
    );
    broken
}

#[test]
fn an_argument_register_untouched_since_entry_is_inferred_from_its_parameter() {
    let dir = tempfile::tempdir().unwrap();
    if !require_tool("objcopy") {
        return;
    }
    let src = fixture("locked_chain.c");
    let Some(bin) = gcc(dir.path(), "chain5", &["-gdwarf-5", src.to_str().unwrap()]) else {
        return;
    };
    let broken = cut_loclists(dir.path(), &bin);
    let (r, _, _) = run(&broken, dir.path());
    // n's location list is unreadable now; %rdi reaches the site from the entry
    // unchanged (`mov %rdi,%rax`), so n (struct hdr *), the first parameter, is it.
    let first = site(&r, "first");
    assert_eq!(first["outcome"], "inferred", "{}", r["lock_sites"]);
    assert_eq!(first["members"][0], "hdr.count");
    let count = sync_member(&r, "hdr", "count").unwrap();
    assert_eq!(count["locked"]["inferred"], true);
    assert_eq!(count["locked"]["sites"][0]["mapping"], "inferred");
    // The loop's site still is no guess.
    assert_eq!(site(&r, "walk")["outcome"], "scalar-variable");
}

#[test]
fn truncated_loclists_leave_sites_unmapped_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    if !require_tool("objcopy") {
        return;
    }
    let src = fixture("locked.c");
    let Some(bin) = gcc(dir.path(), "locked5", &["-gdwarf-5", src.to_str().unwrap()]) else {
        return;
    };
    let broken = cut_loclists(dir.path(), &bin);
    let (whole_report, _, _) = run(&bin, dir.path());
    let (r, _, _) = run(&broken, dir.path());
    // account_later's `n` lives in a location list: exact before; after, its base
    // came through a register set before a call, so it is unmapped (not guessed).
    assert_eq!(whole_report["lock_sites"]["exact"], 5);
    let stats = &r["lock_sites"];
    assert_eq!(stats["sites"], 5);
    assert_eq!(site(&r, "account_later")["outcome"], "untracked-base");
    let exact = stats["exact"].as_u64().unwrap();
    let inferred = stats["inferred"].as_u64().unwrap();
    let unmapped: u64 = stats["unmapped"]
        .as_object()
        .map(|m| m.values().map(|v| v.as_u64().unwrap()).sum())
        .unwrap_or(0);
    assert_eq!(exact + inferred + unmapped, 5);
    assert!(exact < 5);
    // The finding stays, now from the sites that still map.
    assert!(hazards(&r, "split-lock-risk")
        .iter()
        .any(|h| h["struct"] == "child_ref" && h["indices"] == serde_json::json!([2])));
}

#[test]
fn a_stack_local_in_the_frame_maps_through_fbreg() {
    let dir = tempfile::tempdir().unwrap();
    // clang describes the frame base as a register (DW_OP_reg7), which fbreg
    // locations are relative to; GCC's DW_OP_call_frame_cfa is not followed.
    let Some(clang) = require_any(&["clang", "clang-19"]) else {
        return;
    };
    let bin = dir.path().join("stack");
    let src = fixture("locked_stack.c");
    sh(
        dir.path(),
        clang,
        &[
            "-O2",
            "-g",
            "-o",
            bin.to_str().unwrap(),
            src.to_str().unwrap(),
        ],
    );
    let (r, _, _) = run(&bin, dir.path());
    let stats = &r["lock_sites"];
    assert!(stats["sites"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(stats["exact"], stats["sites"], "{stats}");
    assert!(stats["list"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["members"][0] == "tally.hits"));
    assert!(sync_member(&r, "tally", "hits").is_some());
    assert!(sync_member(&r, "tally", "a").is_none());
}

#[test]
fn an_atomic_beside_a_member_written_by_another_function_is_evidence_in_a_false_sharing_note() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("locked_written.c");
    let Some(bin) = gcc(dir.path(), "written", &["-g", src.to_str().unwrap()]) else {
        return;
    };
    let (r, sarif, text) = run(&bin, dir.path());
    let fs = |name: &str| -> Value {
        let found: Vec<&Value> = hazards(&r, "false-sharing")
            .into_iter()
            .filter(|h| h["struct"] == name)
            .collect();
        assert_eq!(found.len(), 1, "{name}: {found:#?}");
        found[0].clone()
    };
    // stats: counter is locked in bump() only; flag (same line) is stored to by
    // set_flag(), which locks an unrelated `other`: evidence naming both, in a
    // note (a plain writer alone does not make a warning: hazards.rs says why),
    // ranked above a note without evidence.
    let stats = fs("stats");
    assert_eq!(stats["severity"], "note", "{stats:#}");
    let w = &stats["lines"][0]["written_elsewhere"];
    assert_eq!(w["atomic"], "counter", "{stats:#}");
    assert_eq!(w["member"], "flag", "{stats:#}");
    assert_eq!(functions(&w["writes"]), ["set_flag"]);
    assert_eq!(w["writes"]["count"], 1);
    assert_eq!(w["writes"]["sites"][0]["mapping"], "exact");
    assert!(stats["lines"][0]["separate_writers"].is_null());
    let message = stats["message"].as_str().unwrap();
    assert!(
        message.contains("flag is written where counter is not locked")
            && message.contains("in set_flag() (mov)")
            && message.contains("only in functions that also lock something"),
        "{message}"
    );
    assert!(text.contains("in set_flag() (mov)"), "{text}");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|x| x["ruleId"] == "false-sharing"
        && x["level"] == "note"
        && x["message"]["text"]
            .as_str()
            .unwrap()
            .contains("in set_flag() (mov)")));
    // ctl: the function that writes flag is the one that locks counter: a note.
    let ctl = fs("ctl");
    assert_eq!(ctl["severity"], "note", "{ctl:#}");
    assert!(ctl["lines"][0]["written_elsewhere"].is_null(), "{ctl:#}");
    // Findings are listed by severity, then rank: the note with evidence first.
    let order: Vec<&Value> = hazards(&r, "false-sharing")
        .into_iter()
        .map(|h| &h["struct"])
        .collect();
    let at = |name: &str| order.iter().position(|s| *s == name).unwrap();
    assert!(at("stats") < at("ctl"), "{order:?}");
    // The plain stores are not lock sites: three sites, all locked adds.
    assert_eq!(r["lock_sites"]["sites"], 3, "{}", r["lock_sites"]);
    assert!(r["lock_sites"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["op"] == "lock add"));
    // Plain stores never make a member atomic.
    assert!(sync_member(&r, "stats", "flag").is_none());
    assert!(sync_member(&r, "ctl", "flag").is_none());
}

/// The disassembly of `function` in `bin` (objdump), for checking the shape the
/// compiler chose.
fn disassembly(dir: &Path, bin: &Path, function: &str) -> String {
    let out = process::Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(format!("--disassemble={function}"))
        .arg(bin)
        .current_dir(dir)
        .output()
        .expect("objdump runs");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The split-lock errors on `rec.hits` inside `container`.
fn hits_errors<'a>(r: &'a Value, container: &str) -> Vec<&'a Value> {
    hazards(r, "split-lock-risk")
        .into_iter()
        .filter(|h| h["struct"] == "rec" && h["container"] == container)
        .collect()
}

#[test]
fn an_induction_pointer_over_packed_records_splits_at_the_hand_worked_indices() {
    let dir = tempfile::tempdir().unwrap();
    if !require_tool("objdump") {
        return;
    }
    let src = fixture("locked_loop.c");
    let Some(bin) = gcc(dir.path(), "loop", &["-g", src.to_str().unwrap()]) else {
        return;
    };
    // GCC used an induction pointer: the first element's member, a locked add
    // through the register, the register advanced by the record's 24 bytes.
    for (function, first, width) in [
        ("count_all", "0xb(%rdi)", "lock addq"),
        ("ref_all", "0x13(%rdi)", "lock addl"),
    ] {
        let code = disassembly(dir.path(), &bin, function);
        assert!(
            code.contains(&format!("lea    {first},%rax"))
                && code.contains(&format!("{width} $0x1,(%rax)"))
                && code.contains("add    $0x18,%rax"),
            "{function}: {code}"
        );
    }
    let (r, sarif, text) = run(&bin, dir.path());
    let stats = &r["lock_sites"];
    assert_eq!(stats["sites"], 2, "{stats}");
    assert_eq!(stats["exact"], 2, "{stats}");
    for (function, member) in [("count_all", "rec.hits"), ("ref_all", "rec.refs")] {
        let s = site(&r, function);
        assert_eq!(s["members"][0], member, "{s}");
        assert_eq!(
            s["via"], "induction pointer over `table.recs[]`, stride 24",
            "{s}"
        );
    }
    // recs[i].hits at 11 + 24i in the 64-byte-aligned table (fixture comment):
    // i = 2 (59..67) and i = 10 (251..259) cross, no other.
    let errors = hits_errors(&r, "table");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let h = errors[0];
    assert_eq!(h["severity"], "error");
    assert_eq!(h["member"], "hits");
    assert_eq!(h["indices"], serde_json::json!([2, 10]));
    assert_eq!(h["by_use"], true);
    assert_eq!(
        h["locked"]["sites"][0]["via"],
        "induction pointer over `table.recs[]`, stride 24"
    );
    let message = h["message"].as_str().unwrap();
    assert!(
        message.contains("elements 2, 10 of 12 cross")
            && message.contains(
                "in count_all() (lock add; induction pointer over `table.recs[]`, stride 24)"
            ),
        "{message}"
    );
    assert!(
        text.contains("induction pointer over `table.recs[]`"),
        "{text}"
    );
    // refs at 19 + 24i ends at most at 63: locked, never a split lock in table.
    assert!(sync_member(&r, "rec", "refs").is_some());
    assert!(hazards(&r, "split-lock-risk")
        .iter()
        .all(|h| h["member"] != "refs" || (h["severity"] != "error" && h["container"].is_null())));
    assert!(sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["ruleId"] == "split-lock-risk" && x["level"] == "error"));
}

#[test]
fn an_induction_pointer_over_a_stack_local_splits_at_the_same_indices() {
    let dir = tempfile::tempdir().unwrap();
    if !require_tool("objdump") {
        return;
    }
    let src = fixture("locked_loop.c");
    let Some(bin) = gcc(
        dir.path(),
        "stack",
        &["-g", "-DON_STACK", src.to_str().unwrap()],
    ) else {
        return;
    };
    for function in ["count_local", "count_pool"] {
        let code = disassembly(dir.path(), &bin, function);
        assert!(
            code.contains("lea    0xb(%rsp),%rdi")
                && code.contains("lock addq $0x1,(%rax)")
                && code.contains("add    $0x18,%rax"),
            "{function}: {code}"
        );
    }
    let (r, _, _) = run(&bin, dir.path());
    let stats = &r["lock_sites"];
    assert_eq!(stats["sites"], 2, "{stats}");
    assert_eq!(stats["exact"], 2, "{stats}");
    // count_local: the realigned table is DW_OP_breg7 0, %rsp itself.
    let local = site(&r, "count_local");
    assert_eq!(local["members"][0], "rec.hits");
    assert_eq!(
        local["via"], "induction pointer over `table.recs[]`, stride 24",
        "{local}"
    );
    // count_pool: pool is DW_OP_fbreg -320 under DW_OP_call_frame_cfa; after
    // `sub $0x138,%rsp` the CFA is %rsp + 0x138 + 8 (the return address) = %rsp+320,
    // so `lea 0xb(%rsp)` is pool + 11: recs[0].hits.
    let pool = site(&r, "count_pool");
    assert_eq!(pool["members"][0], "rec.hits");
    let via = pool["via"].as_str().unwrap();
    assert!(
        via.starts_with("induction pointer over `pool.recs[]`, stride 24; stack slot at DW_OP_fbreg -320, CFA %rsp+320 from "),
        "{via}"
    );
    for container in ["table", "pool"] {
        let errors = hits_errors(&r, container);
        assert_eq!(errors.len(), 1, "{container}: {errors:#?}");
        assert_eq!(errors[0]["severity"], "error");
        assert_eq!(errors[0]["indices"], serde_json::json!([2, 10]));
    }
}
