#!/usr/bin/env bash
# ghostbench compare vs hyperfine, on the same inputs, in one run.
#
# 1. Per-run overhead on `true`: total tool wall time / number of runs, and the
#    median wall each tool measures for `true` (measurement inflation).
# 2. The same on a ~5 ms CPU-bound command.
# 3. Runs needed for a decided verdict on a 10% difference between two ~5 ms
#    commands: ghostbench's adaptive stop vs hyperfine's default run count.
#
# Usage: benches/compare.sh [RUNS]   (RUNS per command for parts 1-2, default 200)
# Needs: hyperfine, cc, python3. Prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200}
for tool in hyperfine cc python3; do
  command -v "$tool" >/dev/null || { echo "benches/compare.sh needs $tool" >&2; exit 1; }
done
cargo build --release -q
gb=$PWD/target/release/ghostbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A CPU-bound loop whose length is its argument (iterations in thousands).
cat > "$work/spin.c" <<'EOF'
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) * 1000 : 1000;
    volatile unsigned long x = 0;
    for (long i = 0; i < n; i++) x += i * 2654435761u;
    return 0;
}
EOF
cc -O2 -o "$work/spin" "$work/spin.c"
# Calibrate the iteration count to about 5 ms.
k=1000
while :; do
  t=$(python3 -c "import subprocess,time;s=time.perf_counter();[subprocess.run(['$work/spin','$k']) for _ in range(5)];print((time.perf_counter()-s)/5)")
  python3 -c "import sys; sys.exit(0 if $t >= 0.005 else 1)" && break
  k=$((k * 2))
done
k=$(python3 -c "print(max(1, int($k * 0.005 / $t)))")
k_b=$(python3 -c "print(int($k * 1.1))")

now() { python3 -c 'import time; print(time.monotonic())'; }
elapsed() { python3 -c "print($2 - $1)"; }

# $1 label, $2 command; prints: label gb_per_run hf_per_run gb_median hf_median
overhead() {
  local label=$1 cmd=$2 t0 t1 gb_total hf_total
  t0=$(now)
  "$gb" compare "$cmd" "$cmd" --min-runs "$runs" --max-runs "$runs" --max-time 600s --warmup 0 \
    --quiet --json "$work/gb.json" >/dev/null
  t1=$(now); gb_total=$(elapsed "$t0" "$t1")
  t0=$(now)
  hyperfine -N --runs "$runs" --style none --export-json "$work/hf.json" "$cmd" "$cmd" >/dev/null 2>&1
  t1=$(now); hf_total=$(elapsed "$t0" "$t1")
  python3 - "$label" "$gb_total" "$hf_total" "$runs" "$work/gb.json" "$work/hf.json" <<'EOF'
import json, statistics, sys
label, gb_total, hf_total, runs, gb_json, hf_json = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
gb = json.load(open(gb_json)); hf = json.load(open(hf_json))
gb_walls = [r["wall_s"] for r in gb["runs"] if not r["warmup"]]
hf_walls = hf["results"][0]["times"] + hf["results"][1]["times"]
gb_per, hf_per = gb_total / (2 * runs), hf_total / (2 * runs)
gb_med, hf_med = statistics.median(gb_walls), statistics.median(hf_walls)
print(f"| {label} | {gb_per*1e3:.3f} ms | {hf_per*1e3:.3f} ms | {gb_per/hf_per:.2f} | {gb_med*1e3:.3f} ms | {hf_med*1e3:.3f} ms | {gb_med/hf_med:.2f} |")
EOF
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; hyperfine $(hyperfine --version | cut -d' ' -f2); $runs runs per command"
echo
echo "| command | ghostbench time per run | hyperfine time per run | ratio | ghostbench median wall | hyperfine median wall | ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
overhead "true" "true"
overhead "spin ~5 ms" "$work/spin $k"

echo
echo "Decided verdict on a 10% difference (spin $k vs spin $k_b):"
echo
echo "| seed | ghostbench verdict | ghostbench runs per command | ratio [CI] | hyperfine default runs per command |"
echo "|---|---|---:|---|---:|"
hyperfine -N --style none --export-json "$work/hf10.json" "$work/spin $k" "$work/spin $k_b" >/dev/null 2>&1
hf_runs=$(python3 -c "import json; print(len(json.load(open('$work/hf10.json'))['results'][0]['times']))")
for seed in 1 2 3 4 5; do
  "$gb" compare "$work/spin $k" "$work/spin $k_b" --seed "$seed" --quiet --json "$work/d.json" >/dev/null
  python3 - "$seed" "$hf_runs" "$work/d.json" <<'EOF'
import json, sys
seed, hf_runs, path = sys.argv[1], sys.argv[2], sys.argv[3]
r = json.load(open(path)); m = r["metrics"][0]
n = sum(1 for x in r["runs"] if x["side"] == 0 and not x["warmup"])
print(f"| {seed} | {m['verdict']} | {n} | {m['ratio']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}] | {hf_runs} |")
EOF
done
