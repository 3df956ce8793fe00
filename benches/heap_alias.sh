#!/bin/sh
# The timed version of tests/heap.rs's 4K-aliasing test: heap_alias.c built
# with the buffers aliased (GAP=0) and 1 KiB apart (GAP=1024), measured by
# their own loop time (`ns`), under the `heap` source alone. In the default
# layout GAP looks like a speedup where the CPU pays for 4K aliasing;
# across heap layouts it should not. Also prints `probe --only alias`.
# Usage: benches/heap_alias.sh [LAYOUTS] [ROUNDS] [REPS]
set -eu
LAYOUTS=${1:-16}
ROUNDS=${2:-5}
REPS=${3:-2000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GB=${GB:-$ROOT/target/release/ghostbench}
SRC=$ROOT/tests/fixtures/layout/heap_alias.c
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
timeout -k 5 120 "$GB" probe --only alias --color never | grep -E '^(finding|4096|4160)'
timeout -k 5 1800 "$GB" layout --color never --no-store \
  --build "aliased=cc -O2 -DGAP=0 {cflags} {ldflags} $SRC -o {out}" \
  --build "gap=cc -O2 -DGAP=1024 {cflags} {ldflags} $SRC -o {out}" \
  --sources heap --run "{out} $REPS" \
  --metric 'regex:(?m)^(?P<name>ns|cost) (?P<value>[0-9]+)$' \
  --layouts "$LAYOUTS" --rounds "$ROUNDS" --margin 3 --json "$WORK/r.json" |
  grep -E '^(build|aliased|gap|ARTIFACT|SAME|FASTER|SLOWER|UNKNOWN|note: heap)'
