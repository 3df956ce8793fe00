#!/usr/bin/env bash
# Issue 22 point 6: `demo --max-compilers 1` under 4 memory-bound processes
# on this machine, N invocations (default 3), one after another. Prints the
# exit code, wall time, load and the verdicts of each. Figures: BENCHMARKS.md.
# KEEP=DIR copies each invocation's demo.json and demo.txt to DIR/runN/.
set -u
n=${1:-3}
gb=${GHOSTBENCH:-$(cd "$(dirname "$0")/.." && pwd)/target/release/ghostbench}
work=$(mktemp -d)
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT
cat > "$work/stream.c" <<'C'
#include <stdlib.h>
#include <string.h>
int main(void){ size_t n = 256u<<20; char *a = malloc(n), *b = malloc(n); for(;;){ memcpy(b,a,n); memcpy(a,b,n);} }
C
cc -O2 -o "$work/stream" "$work/stream.c"
pids=()
for _ in 1 2 3 4; do "$work/stream" & pids+=($!); done
sleep 10
for i in $(seq 1 "$n"); do
  d="$work/run$i"; mkdir -p "$d"; cd "$d" || exit 1
  s=$(date +%s.%N)
  timeout -k 10 600 "$gb" demo --max-compilers 1 --quiet --color never --seed "$i" --json demo.json > demo.txt 2>&1; code=$?
  e=$(date +%s.%N)
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP/run$i" && cp demo.json demo.txt "$KEEP/run$i/" 2>/dev/null; fi
  echo "run $i: exit $code, $(echo "$e - $s" | bc) s, load $(cut -d' ' -f1 /proc/loadavg)"
  python3 - <<'PY'
import json
d = json.load(open('demo.json'))
v = [(r['build'], r['metric'], r['comparison']['verdict']) for r in d['matrix'] if r.get('comparison')]
print('  ', v)
print('   UNKNOWN', sum(x[2] == 'UNKNOWN' for x in v), 'of', len(v), '; load mean', d.get('load', {}).get('mean'))
PY
done
