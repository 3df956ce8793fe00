#!/usr/bin/env bash
# Wall time of a 2-build × 8-layout `ghostbench layout` experiment on the demo's
# dispatch benchmark (g++-11 vs g++-12, or g++ -O2 vs -O3), split into build and
# run time, next to its peer: hyperfine comparing the two default-layout binaries.
#
# Usage: benches/layout.sh [LAYOUTS] [ROUNDS]   (defaults 8 and 5)
set -euo pipefail
cd "$(dirname "$0")/.."
layouts=${1:-8}
rounds=${2:-5}
cargo build --release --quiet
gb=$PWD/target/release/ghostbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp assets/dispatch.cpp "$work/"
cd "$work"
if command -v g++-11 >/dev/null && command -v g++-12 >/dev/null; then
  a=(g++-11 g++-11 -O2); b=(g++-12 g++-12 -O2)
else
  a=(O2 g++ -O2); b=(O3 g++ -O3)
fi
metric='regex:(?m)^(?P<name>\w+) (?P<value>[0-9.]+) ns/call$'
start=$(date +%s.%N)
"$gb" layout --quiet --color never --rebuild --layouts "$layouts" --rounds "$rounds" \
  --build "${a[0]}=${a[1]} ${a[2]} -std=c++17 {cflags} {ldflags} dispatch.cpp -o {out}" \
  --build "${b[0]}=${b[1]} ${b[2]} -std=c++17 {cflags} {ldflags} dispatch.cpp -o {out}" \
  --run '{out} 5000000' --metric "$metric" --json layout.json > layout.txt
end=$(date +%s.%N)
python3 - "$start" "$end" <<'PY'
import json, sys
r = json.load(open("layout.json"))
t = r["timing"]
total = float(sys.argv[2]) - float(sys.argv[1])
builds = len(r["build_results"])
runs = sum(1 for x in r["runs"] if not x["warmup"])
print(f"ghostbench layout: {len(r['builds'])} builds x {r['settings']['layouts']} layouts x {r['settings']['rounds']} rounds")
print(f"  wall {total:.1f} s = builds {t['build_s']:.1f} s ({builds} builds, {t['build_s']/builds:.2f} s each) + runs {t['run_s']:.1f} s ({len(r['runs'])} runs incl. warm-up, {t['run_s']/len(r['runs'])*1000:.0f} ms each) + rest {total - t['build_s'] - t['run_s']:.1f} s")
for row in r["matrix"]:
    c = row.get("comparison")
    if c:
        print(f"  {row['metric']:8} {c['verdict']:8} controlled {c['controlled']['estimate']:.3f} [{c['controlled']['low']:.3f}, {c['controlled']['high']:.3f}]  default {c['default_ratio']['estimate']:.3f}")
PY
# The peer: hyperfine on the two default-layout binaries (what a naive A/B measures).
dirs=(.ghostbench/work/*/"${a[0]}"/0 .ghostbench/work/*/"${b[0]}"/0)
if command -v hyperfine >/dev/null; then
  hstart=$(date +%s.%N)
  hyperfine -N --runs "$rounds" --warmup 1 --export-json hf.json "${dirs[0]}/bench 5000000" "${dirs[1]}/bench 5000000" >/dev/null
  hend=$(date +%s.%N)
  python3 - "$hstart" "$hend" "$start" "$end" <<'PY'
import sys
h = float(sys.argv[2]) - float(sys.argv[1]); g = float(sys.argv[4]) - float(sys.argv[3])
print(f"hyperfine, default layout only, same rounds: {h:.1f} s; ghostbench layout / hyperfine = {g/h:.1f}x (it builds and runs every layout, not one)")
PY
else
  echo "hyperfine not installed: peer timing skipped"
fi
