#!/usr/bin/env python3
"""Lock-site precision of `structs` atomics by use: counts from --json, and a seeded sample of
mapped sites with their disassembly and source line, for checking by hand (issue 11 point 2).

usage: atomics_precision.py OUT.json BINARY [SAMPLE_SIZE] [SEED]
"""
import json, random, subprocess, sys

out, binary = sys.argv[1], sys.argv[2]
k = int(sys.argv[3]) if len(sys.argv) > 3 else 20
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
d = json.load(open(out))
ls = d["lock_sites"]
unm = ls.get("unmapped", {})
print(f"sites {ls['sites']}  exact {ls['exact']}  inferred {ls['inferred']}  "
      f"unmapped {sum(unm.values())} " + " ".join(f"{r}={n}" for r, n in sorted(unm.items())))

# Every site and its outcome is in lock_sites.list (exact / inferred / the unmapped reason);
# the sample is drawn from all mapped sites, each with the outermost member it maps to.
rows = sorted((r["address"], r["function"], r["op"], (r.get("members") or ["?"])[0], r["outcome"])
              for r in ls.get("list", []) if r["outcome"] in ("exact", "inferred"))
print(f"mapped sites: {len(rows)}")
random.seed(seed)
sample = sorted(random.sample(rows, min(k, len(rows))))
for addr, fn, op, member, kind in sample:
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={addr:#x}",
                          f"--stop-address={addr + 16:#x}", binary], capture_output=True, text=True).stdout
    insn = next((l.split(":", 1)[1].strip() for l in dis.splitlines()
                 if l.strip().startswith(f"{addr:x}:")), "?")
    src = subprocess.run(["addr2line", "-e", binary, "-i", "-f", "-C", f"{addr:#x}"],
                         capture_output=True, text=True).stdout.split()
    src = " <- ".join(f"{src[i]}@{src[i+1].rsplit('/', 1)[-1]}" for i in range(0, len(src) - 1, 2))
    print(f"{addr:#x}\t{fn}\t{insn}\t{member}\t{kind}\t{src}")
