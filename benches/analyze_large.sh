#!/usr/bin/env bash
# Issue 23, must-show 3: `analyze` on N rows per side (default 1,000,000),
# wall time and peak RSS from /usr/bin/time -v, with the store (the default),
# with --no-store, with --json, with --html (and the page's size), and the
# same values as hyperfine JSON; then
# the readers' bounds: 5,000,000 JSON values, a sparse 10 GiB file and a
# zero device made with mknod in a temporary directory (never /dev itself).
# Prints a Markdown table for BENCHMARKS.md.
#
# Usage: benches/analyze_large.sh [ROWS_PER_SIDE]
# Needs: python3, /usr/bin/time; mknod (root) for the device row. Builds the
# release binary unless GHOSTBENCH_BIN names one. Every ghostbench run is
# bounded by `timeout -k 5 180`.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
if [ -n "${GHOSTBENCH_BIN:-}" ]; then
  bin=$(realpath "$GHOSTBENCH_BIN")
else
  cargo build --release --quiet
  bin=$(realpath target/release/ghostbench)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Two sides of uniform noise, B 1% slower, interleaved by round.
python3 - "$rows" > "$tmp/big.csv" <<'PY'
import random, sys
rows = int(sys.argv[1])
r = random.Random(1)
out = sys.stdout
out.write("name,round,value\n")
for i in range(rows):
    out.write("A,%d,%.6f\nB,%d,%.6f\n" % (i, 1.0 + r.random() * 0.1, i, 1.01 + r.random() * 0.1))
PY

# One measured command: "| case | wall | peak RSS | exit | stderr's last line |".
measure() {
  local label=$1
  shift
  local log="$tmp/time.log"
  set +e
  (cd "$tmp" && /usr/bin/time -v -o "$log" timeout -k 5 180 "$@" > "$tmp/out" 2> "$tmp/err")
  local code=$?
  set -e
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
  printf '| %s | %s | %d MB | %d | %s |\n' "$label" "$wall" "$((rss / 1024))" "$code" \
    "$(grep -v '^$' "$tmp/err" | tail -n 1 | cut -c1-110)"
}

# The same values as hyperfine's --export-json (one command after the other).
python3 - "$tmp/big.csv" > "$tmp/big.json" <<'PY'
import json, sys
times = {"A": [], "B": []}
with open(sys.argv[1]) as f:
    next(f)
    for line in f:
        name, _, value = line.rstrip("\n").split(",")
        times[name].append(float(value))
json.dump({"results": [{"command": k, "times": v} for k, v in times.items()]}, sys.stdout)
PY
# 5,000,000 one-character JSON values: past the count analyze parses.
python3 -c 'import sys; sys.stdout.write("[" + ",".join(["1"] * 5000000) + "]")' > "$tmp/ones.json"

echo "| case ($rows rows per side, $(du -h "$tmp/big.csv" | cut -f1) CSV) | wall | peak RSS | exit | last line on stderr |"
echo "|---|---|---|---|---|"
measure "analyze --no-store" "$bin" analyze big.csv --no-store --quiet
measure "analyze (stores the result)" "$bin" analyze big.csv --quiet
measure "analyze --no-store --json FILE" "$bin" analyze big.csv --no-store --quiet --json out.json
measure "analyze --no-store --html FILE" "$bin" analyze big.csv --no-store --quiet --html out.html
html_size=$(stat -c %s "$tmp/out.html" 2>/dev/null || echo 0)
measure "analyze of the same as hyperfine JSON, stored" "$bin" analyze big.json --quiet
measure "analyze of 5,000,000 JSON values" "$bin" analyze ones.json --no-store
truncate -s 10G "$tmp/sparse.csv"
measure "analyze of a sparse 10 GiB file" "$bin" analyze sparse.csv --no-store
measure "history import of a sparse 10 GiB file" "$bin" history import sparse.csv
if mknod "$tmp/zero" c 1 5 2>/dev/null; then
  measure "analyze of a zero device (mknod c 1 5)" "$bin" analyze zero --no-store
  measure "history import of a zero device" "$bin" history import zero
fi
echo
echo "The --html page: $html_size bytes, $(grep -o '<circle' "$tmp/out.html" | wc -l) points drawn."
