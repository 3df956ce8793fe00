#!/usr/bin/env bash
# ghostbench compare vs hyperfine, on the same inputs, in one run.
#
# 1. Per-run overhead on `true`: the marginal tool wall time per extra run, and
#    the median wall each tool measures for `true` (measurement inflation).
# 2. The same on a ~5 ms CPU-bound command.
# 3. Runs needed for a decided verdict on a 10% difference between two ~5 ms
#    commands: ghostbench's adaptive stop vs hyperfine's default run count.
#
# Usage: benches/compare.sh [RUNS]   (parts 1-2 use RUNS and 3×RUNS per command; default 100)
# Needs: hyperfine, cc, python3. Prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-100}
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

# Total wall time of each tool on `cmd` vs itself with $2 runs per command.
# Prints: gb_seconds hf_seconds
totals() {
  local cmd=$1 n=$2 t0 t1 gb_s hf_s
  t0=$(now)
  "$gb" compare "$cmd" "$cmd" --min-runs "$n" --max-runs "$n" --max-time 600s --warmup 0 \
    --quiet --json "$work/gb-$n.json" >/dev/null
  t1=$(now); gb_s=$(elapsed "$t0" "$t1")
  t0=$(now)
  hyperfine -N --runs "$n" --style none --export-json "$work/hf-$n.json" "$cmd" "$cmd" >/dev/null 2>&1
  t1=$(now); hf_s=$(elapsed "$t0" "$t1")
  echo "$gb_s $hf_s"
}

# Marginal time per run, (T(3N) - T(N)) / 4N, removes each tool's fixed start-up
# and analysis cost; the median wall each tool measured shows measurement inflation.
overhead() {
  local label=$1 cmd=$2 small large
  small=$(totals "$cmd" "$runs")
  large=$(totals "$cmd" $((3 * runs)))
  python3 - "$label" "$runs" $small $large "$work/gb-$((3 * runs)).json" "$work/hf-$((3 * runs)).json" <<'EOF'
import json, statistics, sys
label, n = sys.argv[1], int(sys.argv[2])
gb_small, hf_small, gb_large, hf_large = map(float, sys.argv[3:7])
gb = json.load(open(sys.argv[7])); hf = json.load(open(sys.argv[8]))
gb_per, hf_per = (gb_large - gb_small) / (4 * n), (hf_large - hf_small) / (4 * n)
gb_walls = [r["wall_s"] for r in gb["runs"] if not r["warmup"]]
hf_walls = hf["results"][0]["times"] + hf["results"][1]["times"]
gb_med, hf_med = statistics.median(gb_walls), statistics.median(hf_walls)
print(f"| {label} | {gb_per*1e3:.3f} ms | {hf_per*1e3:.3f} ms | {gb_per/hf_per:.2f} | {gb_med*1e3:.3f} ms | {hf_med*1e3:.3f} ms | {gb_med/hf_med:.2f} | {gb_small:.2f} s / {hf_small:.2f} s |")
EOF
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; hyperfine $(hyperfine --version | cut -d' ' -f2); $runs runs per command"
echo
echo "| command | ghostbench marginal time per run | hyperfine marginal time per run | ratio | ghostbench median wall | hyperfine median wall | ratio | total for $runs runs each (gb / hf) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
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
