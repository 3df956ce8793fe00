#!/usr/bin/env bash
# Reproducible verdicts (issue 22, point 7): the multi-compiler demo (every
# compiler it finds: g++-11 as the baseline, g++-12, clang++) run N times with
# different seeds, and every (build, metric) verdict compared across the
# invocations. A contradiction is a decided FASTER or SLOWER in one invocation
# with SAME, ARTIFACT or the opposite direction in another on the same metric;
# UNKNOWN contradicts nothing. Prints one line per invocation, the table of
# verdicts per (build, metric), and the count of contradictions. Run it on a
# quiet machine: the load average is printed at the start and the end.
#
# Usage: benches/reproducible.sh [GHOSTBENCH_BINARY] [N]   (default: target/release/ghostbench, 10)
# KEEP=DIR copies every invocation's demo.json and demo.txt to DIR/SEED/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gb=$(realpath "${1:-$here/../target/release/ghostbench}")
n=${2:-10}
[ -x "$gb" ] || { echo "not an executable: $gb (cargo build --release first)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gb-repro.XXXXXX")
keep() {
  if [ -n "${KEEP:-}" ]; then
    for d in "$work"/*/; do
      mkdir -p "$KEEP/$(basename "$d")" && cp "$d"demo.json "$d"demo.txt "$KEEP/$(basename "$d")/" 2>/dev/null || true
    done
  fi
  rm -rf "$work"
}
trap keep EXIT

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; $(date -u +%F)"
echo "ghostbench: $gb ($("$gb" --version))"
for seed in $(seq 1 "$n"); do
  dir="$work/$seed"; mkdir -p "$dir"
  start=$(date +%s.%N); code=0
  (cd "$dir" && timeout -k 10 600 "$gb" demo --seed "$seed" --quiet --color never --json demo.json > demo.txt 2>&1) || code=$?
  end=$(date +%s.%N)
  printf 'seed %2d: exit %d, %.0f s\n' "$seed" "$code" "$(echo "$end - $start" | bc)"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
python3 - "$work" "$n" <<'PY'
import json, sys, os
work, n = sys.argv[1], int(sys.argv[2])
table = {}
for seed in range(1, n + 1):
    path = os.path.join(work, str(seed), "demo.json")
    if not os.path.exists(path):
        continue
    doc = json.load(open(path))
    for row in doc.get("matrix", []):
        c = row.get("comparison")
        if c:
            table.setdefault((row["build"], row["metric"]), []).append(c["verdict"])
contradictions = 0
print("| build | metric | verdicts over the invocations | contradicted |")
print("|---|---|---|---|")
for (build, metric), verdicts in sorted(table.items()):
    decided = {v for v in verdicts if v in ("FASTER", "SLOWER")}
    others = {v for v in verdicts if v in ("SAME", "ARTIFACT")}
    bad = bool(decided) and (len(decided) > 1 or bool(others))
    contradictions += bad
    counts = ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))
    print(f"| {build} | {metric} | {counts} | {'yes' if bad else 'no'} |")
print(f"{contradictions} contradicted of {len(table)} (build, metric) pairs over {n} invocations")
PY
