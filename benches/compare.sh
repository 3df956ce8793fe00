#!/usr/bin/env bash
# ghostbench compare vs hyperfine, on the same inputs, in one run.
#
# 1. Per-run overhead on `true`: the marginal tool wall time per extra run, and
#    the median wall each tool measures for `true` (measurement inflation).
# 2. The same on a ~5 ms CPU-bound command.
# 3. Runs needed for a decided verdict on a 10% difference between two ~5 ms
#    commands: ghostbench's adaptive stop vs hyperfine's default run count.
# 4. Wall-clock accuracy on a known 2× ratio, `sleep 0.01` vs `sleep 0.02`:
#    ghostbench's verdict, ratio and CI (start-up corrected) against hyperfine's
#    ratio of medians. The tests assert verdicts on printed metrics only; this
#    is where measured time is checked (a start-up counted twice would pull the
#    ratio towards 1.5).
#
# Usage: benches/compare.sh [RUNS] [REPS] [SEEDS]   (parts 1-2 use RUNS and 3×RUNS
# per command, repeated REPS times; parts 3 and 4 run SEEDS experiments; defaults 100, 5, 10)
# Needs: hyperfine, cc, python3; perf for the own-CPU columns. Prints Markdown for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-100}
reps=${2:-5}
seeds=${3:-10}
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

# Per-run overhead of each tool on `cmd` vs itself, as medians over $reps
# alternating repetitions (this machine is noisy; one pair of totals is not enough):
# - marginal wall per run, (T(3N) - T(N)) / 4N, so fixed start-up and analysis cancel;
# - the tool's own CPU per run, the same difference over `perf stat --no-inherit`
#   task-clock (the tool's process only, not its children), when perf works;
# - the median wall each tool measured for the command (measurement inflation).
overhead() {
  python3 - "$1" "$2" "$runs" "$reps" "$gb" "$work" <<'EOF'
import json, shutil, statistics, subprocess, sys, time
label, cmd, n, reps, gb, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]

def argv(tool, runs):
    if tool == "gb":
        return [gb, "compare", cmd, cmd, "--min-runs", str(runs), "--max-runs", str(runs),
                "--max-time", "600s", "--warmup", "0", "--quiet", "--json", f"{work}/gb.json"]
    return ["hyperfine", "-N", "--runs", str(runs), "--style", "none",
            "--export-json", f"{work}/hf.json", cmd, cmd]

def wall(tool, runs):
    start = time.perf_counter()
    subprocess.run(argv(tool, runs), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start

def own_cpu(tool, runs):
    out = f"{work}/perf.txt"
    subprocess.run(["perf", "stat", "--no-inherit", "-x,", "-e", "task-clock", "-o", out] + argv(tool, runs),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    for line in open(out):
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("task-clock"):
            return float(fields[0]) / 1e3  # msec -> s
    raise SystemExit("perf stat printed no task-clock")

have_perf = shutil.which("perf") is not None
try:
    if have_perf:
        own_cpu("gb", 2)
except (subprocess.CalledProcessError, SystemExit):
    have_perf = False

marginal, cpu, medians, totals = ({"gb": [], "hf": []} for _ in range(4))
for _ in range(reps):
    for tool in ("gb", "hf"):
        small = wall(tool, n)
        totals[tool].append(small)
        large = wall(tool, 3 * n)
        marginal[tool].append((large - small) / (4 * n))
        if tool == "gb":
            r = json.load(open(f"{work}/gb.json"))
            medians[tool].append(statistics.median(x["wall_s"] for x in r["runs"] if not x["warmup"]))
        else:
            r = json.load(open(f"{work}/hf.json"))["results"]
            medians[tool].append(statistics.median(r[0]["times"] + r[1]["times"]))
        if have_perf:
            cpu[tool].append((own_cpu(tool, 3 * n) - own_cpu(tool, n)) / (4 * n))

med = lambda d: {t: statistics.median(v) for t, v in d.items()}
ms = lambda x: f"{x * 1e3:.3f} ms"
m, w, t = med(marginal), med(medians), med(totals)
if have_perf:
    c = med(cpu)
    cpu_cells = f"{ms(c['gb'])} | {ms(c['hf'])} | {c['gb'] / c['hf']:.2f}"
else:
    cpu_cells = "n/a (no perf) | n/a | n/a"
print(f"| {label} | {ms(m['gb'])} | {ms(m['hf'])} | {m['gb'] / m['hf']:.2f} | {cpu_cells} "
      f"| {ms(w['gb'])} | {ms(w['hf'])} | {w['gb'] / w['hf']:.2f} "
      f"| {t['gb']:.2f} s / {t['hf']:.2f} s |")
EOF
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; hyperfine $(hyperfine --version | cut -d' ' -f2); $runs runs per command, medians of $reps repetitions; load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| command | gb marginal wall per run | hf marginal wall per run | ratio | gb own CPU per run | hf own CPU per run | ratio | gb median wall measured | hf median wall measured | ratio | total for $runs runs each (gb / hf) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
overhead "true" "true"
overhead "spin ~5 ms" "$work/spin $k"

echo
echo "Decided verdict on a 10% difference (spin $k vs spin $k_b):"
echo
echo "| seed | ghostbench verdict | ghostbench runs per command | ratio [CI] | hyperfine default runs per command |"
echo "|---|---|---:|---|---:|"
hyperfine -N --style none --export-json "$work/hf10.json" "$work/spin $k" "$work/spin $k_b" >/dev/null 2>&1
hf_runs=$(python3 -c "import json; print(len(json.load(open('$work/hf10.json'))['results'][0]['times']))")
for seed in $(seq 1 "$seeds"); do
  "$gb" compare "$work/spin $k" "$work/spin $k_b" --seed "$seed" --quiet --json "$work/d.json" >/dev/null
  python3 - "$seed" "$hf_runs" "$work/d.json" <<'EOF' | tee -a "$work/verdicts.txt"
import json, sys
seed, hf_runs, path = sys.argv[1], sys.argv[2], sys.argv[3]
r = json.load(open(path)); m = r["metrics"][0]
n = sum(1 for x in r["runs"] if x["side"] == 0 and not x["warmup"])
print(f"| {seed} | {m['verdict']} | {n} | {m['ratio']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}] | {hf_runs} |")
EOF
done
python3 - "$work/verdicts.txt" <<'EOF'
import statistics, sys
rows = [line.split("|") for line in open(sys.argv[1])]
runs = [int(r[3]) for r in rows]
decided = sum(1 for r in rows if r[2].strip() in ("SLOWER", "FASTER"))
covered = 0
for r in rows:
    low, high = r[4].split("[")[1].rstrip("] ").split(",")
    covered += float(low) <= 1.10 <= float(high)
print()
print(f"{decided}/{len(rows)} decided; runs per command median {statistics.median(runs):g}, max {max(runs)}; "
      f"{sum(1 for n in runs if n < 10)}/{len(rows)} in fewer than 10; {covered}/{len(rows)} CIs contain 1.10")
EOF

echo
echo "Known 2× wall ratio (sleep 0.01 vs sleep 0.02):"
echo
echo "| seed | ghostbench verdict | ghostbench ratio [CI] | runs per command | hyperfine ratio of medians (20 runs) |"
echo "|---|---|---|---:|---:|"
: > "$work/two.txt"
for seed in $(seq 1 "$seeds"); do
  "$gb" compare "sleep 0.01" "sleep 0.02" --seed "$seed" --quiet --json "$work/two.json" >/dev/null
  hyperfine -N --runs 20 --warmup 1 --style none --export-json "$work/hf2.json" "sleep 0.01" "sleep 0.02" >/dev/null 2>&1
  python3 - "$seed" "$work/two.json" "$work/hf2.json" <<'EOF' | tee -a "$work/two.txt"
import json, statistics, sys
seed, gb, hf = sys.argv[1], sys.argv[2], sys.argv[3]
r = json.load(open(gb)); m = r["metrics"][0]
n = sum(1 for x in r["runs"] if x["side"] == 0 and not x["warmup"])
t = json.load(open(hf))["results"]
h = statistics.median(t[1]["times"]) / statistics.median(t[0]["times"])
print(f"| {seed} | {m['verdict']} | {m['ratio']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}] | {n} | {h:.3f} |")
EOF
done
python3 - "$work/two.txt" <<'EOF'
import statistics, sys
rows = [line.split("|") for line in open(sys.argv[1])]
slower = sum(1 for r in rows if r[2].strip() == "SLOWER")
gb = [float(r[3].split("[")[0]) for r in rows]
covered = 0
for r in rows:
    low, high = r[3].split("[")[1].rstrip("] ").split(",")
    covered += float(low) <= 2.0 <= float(high)
hf = [float(r[5]) for r in rows]
print()
print(f"{slower}/{len(rows)} SLOWER; ghostbench ratio median {statistics.median(gb):.3f}, "
      f"{covered}/{len(rows)} CIs contain 2.0; hyperfine ratio median {statistics.median(hf):.3f}")
EOF
