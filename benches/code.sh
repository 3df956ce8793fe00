#!/usr/bin/env bash
# ghostbench code vs objdump -d, on the same binary, in one run.
#
# ghostbench's full analysis (every function: placement, loops from
# disassembly, JCC-erratum audit) against `objdump -d` of the same file, which
# is what people pipe into awk today. Each tool runs RUNS times (default 3,
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
gbj_t=$(median_wall "$gb" code "$binary" --json "$work/code.json")
gba_t=$(median_wall "$gb" code "$binary" --limit 0)
od_t=$(median_wall objdump -d "$binary")
"$gb" code "$binary" --json "$work/code.json" >/dev/null
python3 - "$binary" "$gb_t" "$gbj_t" "$od_t" "$runs" "$work/code.json" "$gba_t" <<'PY'
import json, os, platform, sys
binary, gb, gbj, od, runs, path, gba = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6], float(sys.argv[7])
r = json.load(open(path)); s = r["summary"]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"machine: {cpu}, {os.cpu_count()} cores, kernel {platform.release()}; median of {runs} runs after a warm-up")
print(f"input: {binary} ({os.path.getsize(binary) / 2**20:.0f} MiB; {s['functions']} functions, {s['loops']} loops, {s['jcc_spots']} JCC-erratum spots)")
print()
print("| tool | median wall | objdump / tool |")
print("|---|---:|---:|")
print(f"| `objdump -d` | {od:.3f} s | 1.00 |")
print(f"| `ghostbench code` (full analysis, top-40 tables) | {gb:.3f} s | {od / gb:.1f} |")
print(f"| `ghostbench code --json FILE` (everything, {os.path.getsize(path) / 2**20:.0f} MiB of JSON) | {gbj:.3f} s | {od / gbj:.1f} |")
print(f"| `ghostbench code --limit 0` (every function and loop printed) | {gba:.3f} s | {od / gba:.1f} |")
print()
print(f"goal: full analysis in at most 1/8 of objdump's time: {'met' if gb * 8 <= od else 'NOT met'} (ratio {od / gb:.1f})")
PY
