#!/usr/bin/env bash
# ghostbench code vs objdump -d, on the same binary, in one run.
#
# ghostbench's full analysis (every function: placement, loops from
# disassembly, JCC-erratum audit by a microarchitecture model) against
# `objdump -d` of the same file, which is what people pipe into awk today.
# Timed with the model detected for this machine, with --uarch skylake (the
# erratum applies: Intel's fusion table), and with all four models at once. Each tool runs RUNS times (default 3,
# after one warm-up that also brings the file into the page cache); the table
# gives median wall times and the ratio. Also times the analysis with --json.
#
# Usage: benches/code.sh [BINARY] [RUNS]
#   BINARY defaults to /tmp/kdbg/vmlinux (Debian's linux-image-6.1.0-50-cloud-amd64-dbg).
# Needs: objdump, python3. Prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-/tmp/kdbg/vmlinux}
runs=${2:-3}
for tool in objdump python3; do
  command -v "$tool" >/dev/null || { echo "benches/code.sh needs $tool" >&2; exit 1; }
done
[ -r "$binary" ] || { echo "benches/code.sh: cannot read $binary" >&2; exit 1; }
cargo build --release -q
gb=$PWD/target/release/ghostbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# $@: command; prints the median wall seconds over $runs runs after one warm-up.
median_wall() {
  python3 - "$runs" "$@" <<'PY'
import statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
times = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    times.append(time.perf_counter() - t)
print(statistics.median(times))
PY
}

# The full analysis runs whatever is printed; --limit only trims the tables.
gb_t=$(median_wall "$gb" code "$binary")
gbs_t=$(median_wall "$gb" code "$binary" --uarch skylake)
gb4_t=$(median_wall "$gb" code "$binary" --uarch skylake,icelake,zen,generic)
gbj_t=$(median_wall "$gb" code "$binary" --json "$work/code.json")
gba_t=$(median_wall "$gb" code "$binary" --limit 0)
od_t=$(median_wall objdump -d "$binary")
"$gb" code "$binary" --json "$work/code.json" >/dev/null
"$gb" code "$binary" --uarch skylake --json "$work/skylake.json" >/dev/null
python3 - "$binary" "$gb_t" "$gbj_t" "$od_t" "$runs" "$work/code.json" "$gba_t" "$gbs_t" "$gb4_t" "$work/skylake.json" <<'PY'
import json, os, platform, sys
binary, gb, gbj, od, runs, path, gba = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6], float(sys.argv[7])
gbs, gb4, sky = float(sys.argv[8]), float(sys.argv[9]), json.load(open(sys.argv[10]))["summary"]
r = json.load(open(path)); s = r["summary"]; model = r["uarch"]["models"][0]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"machine: {cpu}, {os.cpu_count()} cores, kernel {platform.release()}; median of {runs} runs after a warm-up")
print(f"input: {binary} ({os.path.getsize(binary) / 2**20:.0f} MiB; {s['functions']} functions, {s['loops']} loops, {sky['jcc_spots']} JCC-erratum spots by --uarch skylake)")
print()
print("| tool | median wall | objdump / tool |")
print("|---|---:|---:|")
print(f"| `objdump -d` | {od:.3f} s | 1.00 |")
print(f"| `ghostbench code` (full analysis, detected model: {model}, top-40 tables) | {gb:.3f} s | {od / gb:.1f} |")
print(f"| `ghostbench code --uarch skylake` | {gbs:.3f} s | {od / gbs:.1f} |")
print(f"| `ghostbench code --uarch skylake,icelake,zen,generic` | {gb4:.3f} s | {od / gb4:.1f} |")
print(f"| `ghostbench code --json FILE` (everything, {os.path.getsize(path) / 2**20:.0f} MiB of JSON) | {gbj:.3f} s | {od / gbj:.1f} |")
print(f"| `ghostbench code --limit 0` (every function and loop printed) | {gba:.3f} s | {od / gba:.1f} |")
print()
worst = max(gb, gbs, gb4)
print(f"goal: full analysis with the model applied in at most 1/10 of objdump's time: {'met' if worst * 10 <= od else 'NOT met'} (worst ratio {od / worst:.1f})")
PY
