#!/usr/bin/env bash
# Time to a decided verdict, BEFORE and AFTER a change to ghostbench, on the same
# inputs in one run:
#   1. the demo pair: `ghostbench demo --max-compilers 1` (each binary's own
#      embedded pair; its --json is the layout step's report);
#   2. a 2-build experiment on a real C library: lz4 (from the lz4-sys crate)
#      driven by benches/lz4bench.c, built with lz4's default LZ4_FORCE_INLINE
#      (always_inline) against `-DLZ4_FORCE_INLINE='static inline'` (the
#      compiler decides), metrics `compress` and `decompress` (best-of-5 ms per
#      pass over a 4 MiB buffer), with `layout` at each binary's default layout
#      settings, and `compare` of the two default-layout builds for reference.
# The experiments alternate BEFORE/AFTER so load drifts hit both alike. Every
# experiment runs in a fresh directory, so nothing is reused from a build cache.
#
# Usage: benches/verdict.sh BEFORE_BINARY AFTER_BINARY [LZ4_LIB_DIR]
#   LZ4_LIB_DIR holds lz4.c and lz4.h; without it the script fetches lz4-sys
#   into a scratch crate under a temporary directory (cargo fetch) and uses
#   liblz4/lib from the cargo registry. Nothing is written outside temporary
#   directories except the cargo registry cache.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BEFORE_BINARY AFTER_BINARY [LZ4_LIB_DIR]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
before=$(realpath "$1")
after=$(realpath "$2")
for gb in "$before" "$after"; do
  [ -x "$gb" ] || { echo "not an executable: $gb" >&2; exit 2; }
done
command -v gcc >/dev/null || { echo "gcc is needed" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gb-verdict.XXXXXX")
trap 'rm -rf "$work"' EXIT

# lz4's C sources: the given directory, or lz4-sys's, fetched into a scratch crate.
if [ $# -ge 3 ]; then
  lz4=$(realpath "$3")
else
  command -v cargo >/dev/null || { echo "cargo is needed to fetch lz4-sys (or pass LZ4_LIB_DIR)" >&2; exit 2; }
  (cd "$work" && cargo new --quiet --vcs none scratch && cd scratch &&
     cargo add --quiet lz4-sys && cargo fetch --quiet)
  lz4=$(cd "$work/scratch" && cargo metadata --format-version 1 |
        python3 -c 'import json,sys,os; m=json.load(sys.stdin); p=[x for x in m["packages"] if x["name"]=="lz4-sys"][0]; print(os.path.join(os.path.dirname(p["manifest_path"]),"liblz4","lib"))')
fi
for f in lz4.c lz4.h; do
  [ -f "$lz4/$f" ] || { echo "no $f in $lz4" >&2; exit 2; }
done
lz4_version=$(sed -n 's/^#define LZ4_VERSION_\(MAJOR\|MINOR\|RELEASE\) *\([0-9]*\).*/\2/p' "$lz4/lz4.h" | paste -sd.)

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; $(date -u +%F)"
echo "before: $before ($("$before" --version))"
echo "after:  $after ($("$after" --version))"
metric='regex:(?m)^(?P<name>compress|decompress) (?P<value>[0-9.]+) ms$'
run_args='4194304 5'
results="$work/results.jsonl"
: > "$results"

# A fresh directory with the driver and lz4's sources.
lz4_dir() {
  local dir=$1
  mkdir -p "$dir"
  cp "$here/lz4bench.c" "$lz4/lz4.c" "$lz4/lz4.h" "$dir/"
}

# record LABEL TOOL KIND START END EXIT_CODE JSON: one line of results.
record() {
  python3 - "$@" >> "$results" <<'PY'
import json, sys
label, tool, kind, start, end, code, path = sys.argv[1:8]
try:
    r = json.load(open(path))
except (OSError, ValueError):
    r = None
out = {"label": label, "tool": tool, "kind": kind, "wall_s": float(end) - float(start), "exit": int(code)}
if r is None:
    out["error"] = "no JSON report"
elif kind == "compare":
    out["state"] = r["status"]["state"]
    out["runs"] = sum(1 for x in r["runs"] if not x["warmup"] and x["side"] == 0)
    out["verdicts"] = {m["name"]: [m["verdict"], m["ratio"], m["ci_low"], m["ci_high"]] for m in r["metrics"]}
else:
    out["state"] = r["status"]["state"]
    out["layouts"] = len(r.get("used_seeds", []))
    out["builds"] = [b["name"] for b in r.get("builds", [])]
    out["rounds"] = r["settings"].get("rounds")
    out["timing"] = r.get("timing", {})
    v = {}
    for row in r["matrix"]:
        c = row.get("comparison")
        if c:
            ctl = c.get("controlled") or {}
            v[f"{row['build']}/{row['metric']}"] = [c["verdict"], ctl.get("estimate"), ctl.get("low"), ctl.get("high")]
    out["verdicts"] = v
print(json.dumps(out))
PY
}

now() { date +%s.%N; }

for label in before after; do
  gb=$before; [ "$label" = after ] && gb=$after
  # 1. The demo pair.
  dir="$work/$label-demo"; mkdir -p "$dir"
  echo "[$label] demo --max-compilers 1" >&2
  start=$(now); code=0
  (cd "$dir" && "$gb" demo --max-compilers 1 --quiet --color never --json demo.json > demo.txt) || code=$?
  end=$(now)
  record "$label" "$gb" demo "$start" "$end" "$code" "$dir/demo.json"
done

for label in before after; do
  gb=$before; [ "$label" = after ] && gb=$after
  # 2. lz4: layout at the binary's default settings.
  dir="$work/$label-lz4-layout"; lz4_dir "$dir"
  echo "[$label] layout on lz4 $lz4_version" >&2
  start=$(now); code=0
  (cd "$dir" && "$gb" layout --quiet --color never \
     --build "force=gcc -O2 {cflags} {ldflags} lz4bench.c lz4.c -o {out}" \
     --build "noforce=gcc -O2 '-DLZ4_FORCE_INLINE=static inline' {cflags} {ldflags} lz4bench.c lz4.c -o {out}" \
     --run "{out} $run_args" --metric "$metric" --json layout.json > layout.txt) || code=$?
  end=$(now)
  record "$label" "$gb" layout "$start" "$end" "$code" "$dir/layout.json"
done

# 3. lz4: compare of the two default-layout builds (plain gcc -O2, same sources).
dir="$work/lz4-compare"; lz4_dir "$dir"
(cd "$dir" && gcc -O2 lz4bench.c lz4.c -o force &&
   gcc -O2 '-DLZ4_FORCE_INLINE=static inline' lz4bench.c lz4.c -o noforce)
for label in before after; do
  gb=$before; [ "$label" = after ] && gb=$after
  echo "[$label] compare on lz4 $lz4_version" >&2
  start=$(now); code=0
  (cd "$dir" && "$gb" compare --quiet --color never -n force -n noforce \
     "./force $run_args" "./noforce $run_args" --metric "$metric" \
     --json "compare-$label.json" > "compare-$label.txt") || code=$?
  end=$(now)
  record "$label" "$gb" compare "$start" "$end" "$code" "$dir/compare-$label.json"
done

python3 - "$results" "$lz4_version" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"lz4 {sys.argv[2]}: force (always_inline, lz4's default) vs noforce (-DLZ4_FORCE_INLINE='static inline'), gcc -O2")
def fmt(v):
    verdict, est, lo, hi = v
    if est is None or lo is None or hi is None:
        return verdict
    return f"{verdict} {est:.3f} [{lo:.3f}, {hi:.3f}]"
for kind in ("demo", "layout", "compare"):
    for r in (x for x in rows if x["kind"] == kind):
        what = {"demo": "demo pair (layout step)", "layout": "lz4 layout", "compare": "lz4 compare"}[kind]
        if "error" in r:
            print(f"{r['label']:6} {what:24} {r['wall_s']:7.1f} s  exit {r['exit']}: {r['error']}")
            continue
        size = f"{r['runs']} runs/command" if kind == "compare" else f"{r['layouts']} layouts x {r['rounds']} rounds"
        decided = sum(1 for v in r["verdicts"].values() if v[0] != "UNKNOWN")
        step = r.get("timing", {}).get("total_s")
        step = f" (layout step {step:.1f} s)" if kind == "demo" and step is not None else ""
        print(f"{r['label']:6} {what:24} {r['wall_s']:7.1f} s{step}  {r['state']:16} {size:24} {decided}/{len(r['verdicts'])} decided, exit {r['exit']}")
        if kind == "demo":
            print(f"         builds: {', '.join(r['builds'])}")
        for name, v in r["verdicts"].items():
            print(f"         {name:32} {fmt(v)}")
PY
