#!/usr/bin/env bash
# End-to-end `ghostbench layout` on a real project (issue 25): the SQLite
# amalgamation (from the libsqlite3-sys crate in the cargo registry) with the
# driver benches/sqlite_work.c, -O2 against -O3, LAYOUTS layouts (default 16).
# Prints the wall time, the load average before and after (the machine may be
# shared), and from the JSON: build and run time, compiles and links, and the
# compiles against the distinct compile-flag sets (each build's sources
# compiled once per set is the most the launcher may do). Then a second
# experiment in the same WORKDIR that changes only B (a -D define) and counts
# A's compiles, which must be 0 (SECOND=0 skips it).
#
# Usage: benches/layout_sqlite.sh [GHOSTBENCH] [LAYOUTS] [ROUNDS] [WORKDIR]
#   GHOSTBENCH defaults to target/release/ghostbench (built first);
#   WORKDIR (default: a fresh temporary directory) holds .ghostbench/, so a
#   second call with the same WORKDIR shows what the shared cache reuses.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
gb=${1:-}
layouts=${2:-16}
rounds=${3:-3}
work=${4:-$(mktemp -d)}
if [ -z "$gb" ]; then
  (cd "$repo" && cargo build --release --quiet)
  gb=$repo/target/release/ghostbench
fi
gb=$(cd "$(dirname "$gb")" && pwd)/$(basename "$gb") # the script runs in WORKDIR
sq=$(ls -d ~/.cargo/registry/src/*/libsqlite3-sys-*/sqlite3 2>/dev/null | sort -V | tail -1)
if [ -z "$sq" ] || [ ! -f "$sq/sqlite3.c" ]; then
  echo "no libsqlite3-sys in ~/.cargo/registry: run 'cargo fetch' in a crate that depends on libsqlite3-sys" >&2
  exit 1
fi
mkdir -p "$work"
cd "$work"
flags="-DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -I$sq"
echo "sqlite: $sq; work: $work; $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
experiment() { # NAME-OF-JSON B-EXTRA
  start=$(date +%s.%N)
  timeout -k 5 3600 "$gb" layout --quiet --color never --layouts "$layouts" --rounds "$rounds" \
    --build "O2=cc -O2 $flags {cflags} {ldflags} $sq/sqlite3.c $repo/benches/sqlite_work.c -o {out}" \
    --build "O3=cc -O3 $flags $2 {cflags} {ldflags} $sq/sqlite3.c $repo/benches/sqlite_work.c -o {out}" \
    --run '{out}' --metric user --json "$1" > "${1%.json}.txt" || echo "exit $?"
  end=$(date +%s.%N)
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 - "$1" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["timing"]
total = float(sys.argv[3]) - float(sys.argv[2])
b = r["build_results"]
names = [x["name"] for x in r["builds"]]
sources = 2  # sqlite3.c and sqlite_work.c
# The compile flags a variant adds: its alignment, and -ffunction-sections
# when it shuffles (variants::Variant::cflags); shift and heap only link.
sets = {(v.get("align"), v.get("shuffle") is not None) for v in r["variants"]}
compiles = sum(x.get("compiles", 0) for x in b)
links = sum(x.get("links", 0) for x in b)
built = sum(1 for x in b if not x["reused"])
print(f"{sys.argv[1]}: wall {total:.1f} s: builds {t['build_s']:.1f} s, runs {t['run_s']:.1f} s; "
      f"{len(b)} builds ({built} ran their template), {compiles} compiles, {links} links")
for k in ("compile_s", "link_s"):
    if k in t:
        print(f"  {k} {t[k]:.1f} (summed over parallel jobs)")
for i, name in enumerate(names):
    mine = [x for x in b if x["build"] == i]
    c = sum(x.get("compiles", 0) for x in mine)
    h = sum(x.get("compile_hits", 0) for x in mine)
    ra = sum(x.get("realigned", 0) for x in mine)
    print(f"  {name}: {c} compiles, {h} from the cache, {ra} realigned; {len(sets)} distinct compile-flag sets "
          f"x {sources} sources = at most {len(sets) * sources} (holds: {c <= len(sets) * sources})")
for row in r["matrix"]:
    c = row.get("comparison")
    if c:
        est = lambda k: "n/a" if not c.get(k) else f"{c[k]['estimate']:.3f}"
        print(f"  {row['metric']} {c['verdict']} controlled {est('controlled')} default {est('default_ratio')}")
PY
}
experiment layout.json ""
if [ "${SECOND:-1}" != 0 ]; then
  echo "second experiment: only O3 changes (-DGHOSTBENCH_SECOND); O2 must compile nothing"
  experiment second.json "-DGHOSTBENCH_SECOND"
fi
