#!/usr/bin/env python3
"""An independent count of JCC-erratum spots by Intel's fusion table, from
`objdump -d` and `readelf -s` only (no code shared with ghostbench's src/).

A spot is a near branch (jcc, jmp, call, ret; far transfers excluded) or a
macro-fused pair that crosses or ends on a 32-byte boundary (Intel's
JCC-erratum whitepaper, 341810). Pairs fuse as the Intel optimization
manual's table "Macro-Fusible Instructions" says (Sandy Bridge and later):
test/and with every jcc; cmp/add/sub not with jo/jno, js/jns, jp/jnp;
inc/dec only with jz/jnz, jl/jge, jle/jg; never with a memory operand plus an
immediate, a RIP-relative operand, or (add/sub/and/inc/dec) a memory
destination (Agner Fog's microarchitecture guide). Each function symbol's
range [value, value+size) is judged alone, as ghostbench does, and aliases
(symbols sharing a range) count once each.

The same walk also counts with the cmp/test-only table (ghostbench's
`generic` model) and reports the two differences between the tables.

Usage: benches/jcc_objdump.py BINARY [GHOSTBENCH_SKYLAKE_JSON]
With the JSON of `ghostbench code BINARY --uarch skylake --json FILE`, the
per-function counts are compared and every difference is listed.
"""
import collections
import json
import re
import subprocess
import sys

JCC_GROUP = {}
for group, names in {
    "o": "jo jno",
    "c": "jb jc jnae jae jnb jnc",
    "z": "je jz jne jnz",
    "na": "jbe jna ja jnbe",
    "s": "js jns",
    "p": "jp jpe jnp jpo",
    "l": "jl jnge jge jnl",
    "le": "jle jng jg jnle",
}.items():
    for n in names.split():
        JCC_GROUP[n] = group

ALL = set(JCC_GROUP.values())
INTEL = {
    "test": ALL,
    "and": ALL,
    "cmp": {"c", "z", "na", "l", "le"},
    "add": {"c", "z", "na", "l", "le"},
    "sub": {"c", "z", "na", "l", "le"},
    "inc": {"z", "l", "le"},
    "dec": {"z", "l", "le"},
}
CMP_TEST = {"test": ALL, "cmp": ALL}

PREFIXES = {
    "bnd", "notrack", "lock", "rep", "repz", "repe", "repnz", "repne", "data16",
    "data32", "addr32", "cs", "ds", "ss", "es", "fs", "gs", "xacquire", "xrelease",
}
FIRST = re.compile(r"^(cmp|test|and|add|sub|inc|dec)[bwlq]?$")
REG = re.compile(r"^%[a-z0-9]+$")


def functions(binary):
    """Function symbol ranges: {(start, end): how many symbols share it}."""
    out = subprocess.run(["readelf", "-sW", binary], capture_output=True, text=True, check=True).stdout
    ranges = collections.Counter()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[6] not in ("UND", "ABS"):
            start = int(f[1], 16)
            size = int(f[2], 0) if f[2].startswith("0x") else int(f[2])
            ranges[(start, start + size)] += 1
    return ranges


def split_operands(text):
    ops, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return ops


def parse(asm):
    """(mnemonic, operands) of an objdump instruction text."""
    asm = asm.split("#")[0]
    asm = re.sub(r"<[^>]*>", "", asm).strip()
    words = asm.split(None, 1)
    while words and (words[0] in PREFIXES or words[0].startswith("rex")):
        words = words[1].split(None, 1) if len(words) > 1 else []
    if not words:
        return "", []
    mnemonic = words[0].split(",")[0]
    return mnemonic, split_operands(words[1]) if len(words) > 1 else []


def branch_kind(m):
    if m in JCC_GROUP:
        return "jcc"
    if m in ("jmp", "jmpq"):
        return "jmp"
    if m in ("call", "callq"):
        return "call"
    if m in ("ret", "retq"):
        return "ret"
    return None


def fuses(table, first, jcc):
    fm, fops = first
    match = FIRST.match(fm)
    if not match:
        return False
    base = match.group(1)
    if JCC_GROUP[jcc] not in table.get(base, ()):
        return False
    memory = any(not o.startswith("$") and not REG.match(o) for o in fops)
    immediate = any(o.startswith("$") for o in fops)
    rip = any("(%rip)" in o for o in fops)
    memory_destination = base not in ("cmp", "test") and bool(fops) and not REG.match(fops[-1])
    return not (rip or (memory and immediate) or memory_destination)


def boundary(start, end):
    return start // 32 != end // 32  # crosses, or its last byte ends a block


def instructions(binary):
    """(address, length, mnemonic, operands) in objdump's order."""
    p = subprocess.Popen(
        ["objdump", "-d", "--insn-width=16", "-w", binary],
        stdout=subprocess.PIPE, text=True, bufsize=1 << 20,
    )
    for line in p.stdout:
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 3 or not parts[0].endswith(":"):
            continue
        try:
            address = int(parts[0].strip()[:-1], 16)
        except ValueError:
            continue
        length = len(parts[1].split())
        m, ops = parse(parts[2])
        yield address, length, m, ops
    p.wait()


def main():
    binary = sys.argv[1]
    ranges = functions(binary)
    starts = sorted(ranges)
    # Per range: the previous instruction (address, end, (mnemonic, operands)).
    counts = {"intel": collections.Counter(), "cmp_test": collections.Counter()}
    only_intel = collections.Counter()  # pairs at a boundary fused by Intel only
    only_cmp_test = collections.Counter()
    examples = {"only_intel": [], "only_cmp_test": []}
    active, previous = [], {}
    i = 0
    for address, length, m, ops in instructions(binary):
        while i < len(starts) and starts[i][0] <= address:
            r = starts[i]
            if r[1] > r[0]:
                active.append(r)
            i += 1
        if not active:
            continue
        active = [r for r in active if r[1] > address]
        end = address + length
        kind = branch_kind(m)
        for r in active:
            if address < r[0] or end > r[1]:
                previous.pop(r, None)
                continue
            prev = previous.get(r)
            if kind:
                adjacent = kind == "jcc" and prev is not None and prev[1] == address
                for name, table in (("intel", INTEL), ("cmp_test", CMP_TEST)):
                    fused = adjacent and fuses(table, prev[2], m)
                    start = prev[0] if fused else address
                    if boundary(start, end):
                        counts[name][r] += 1
                if adjacent:
                    fi, fc = fuses(INTEL, prev[2], m), fuses(CMP_TEST, prev[2], m)
                    pair_spot = boundary(prev[0], end) and not boundary(address, end)
                    if pair_spot and fi and not fc:
                        only_intel[r] += 1
                        if len(examples["only_intel"]) < 3:
                            examples["only_intel"].append(f"{prev[0]:#x} {prev[2][0]} + {m}")
                    if pair_spot and fc and not fi:
                        only_cmp_test[r] += 1
                        if len(examples["only_cmp_test"]) < 3:
                            examples["only_cmp_test"].append(f"{prev[0]:#x} {prev[2][0]} + {m}")
            previous[r] = (address, end, (m, ops))
    total = lambda c: sum(n * ranges[r] for r, n in c.items())
    result = {
        "functions": sum(ranges.values()),
        "ranges": len(ranges),
        "spots_intel_table": total(counts["intel"]),
        "spots_cmp_test_table": total(counts["cmp_test"]),
        "boundary_pairs_fused_by_intel_only": total(only_intel),
        "boundary_pairs_fused_by_cmp_test_only": total(only_cmp_test),
        "examples": examples,
    }
    if len(sys.argv) > 2:
        report = json.load(open(sys.argv[2]))
        ours = collections.Counter()
        for f in report["functions"]:
            ours[(f["address"], f["address"] + f["size"])] = f["jcc_spot_count"]
        diffs = []
        for r in set(ours) | set(counts["intel"]):
            if ours[r] != counts["intel"][r]:
                diffs.append((r, ours[r], counts["intel"][r]))
        result["ghostbench_skylake_spots"] = report["summary"]["jcc_spots"]
        result["ranges_that_differ"] = len(diffs)
        result["differences"] = [
            f"{a:#x}-{b:#x}: ghostbench {g}, objdump {o}" for (a, b), g, o in sorted(diffs)[:20]
        ]
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
