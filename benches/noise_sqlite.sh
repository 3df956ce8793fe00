#!/usr/bin/env bash
# `ghostbench noise` on a real benchmark (issue 27 point 2): the SQLite
# amalgamation (from the libsqlite3-sys crate in the cargo registry) with the
# driver benches/sqlite_work.c, built once at -O2 (and once at -O3 for the
# pair). In one run it prints:
#   1. noise on the -O2 binary: each factor's share of the run-to-run
#      variance, the unexplained rest, and the runs a `compare` would need
#      per command at +-1% in a plain run and with the recommended settings,
#      with their ratio;
#   2. hyperfine on the same binary twice and on the -O2/-O3 pair: each
#      command's mean +- sigma, the ratio of the means with hyperfine's
#      propagated sigma, and the runs per command hyperfine's own sigma would
#      need at +-1% (the same formula as noise: 2 z^2 CV^2 / ln(1.01)^2), with
#      the ratio to noise's plain-run figure.
# It prints the CPU model and the load average before and after each step
# (the machine may be shared) and writes noise.json, hf_same.json and
# hf_pair.json in WORKDIR.
#
# Usage: benches/noise_sqlite.sh [GHOSTBENCH] [BUDGET] [HF_RUNS] [WORKDIR]
#   GHOSTBENCH defaults to target/release/ghostbench (built first); BUDGET is
#   noise's --budget (default 45s, its own default); HF_RUNS hyperfine's
#   --runs per command (default 40).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
gb=${1:-}
budget=${2:-45s}
hf_runs=${3:-40}
work=${4:-$(mktemp -d)}
if [ -z "$gb" ]; then
  (cd "$repo" && cargo build --release --quiet)
  gb=$repo/target/release/ghostbench
fi
gb=$(cd "$(dirname "$gb")" && pwd)/$(basename "$gb") # the script runs in WORKDIR
command -v hyperfine >/dev/null || { echo "hyperfine is not on PATH" >&2; exit 1; }
sq=$(ls -d ~/.cargo/registry/src/*/libsqlite3-sys-*/sqlite3 2>/dev/null | sort -V | tail -1)
if [ -z "$sq" ] || [ ! -f "$sq/sqlite3.c" ]; then
  echo "no libsqlite3-sys in ~/.cargo/registry: run 'cargo fetch' in a crate that depends on libsqlite3-sys" >&2
  exit 1
fi
mkdir -p "$work"
cd "$work"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $(nproc) CPUs"
echo "sqlite: $sq; work: $work; load before: $(load)"
flags="-DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -I$sq"
for o in 2 3; do
  [ -x "sqlite_O$o" ] || cc -O$o $flags "$sq/sqlite3.c" "$repo/benches/sqlite_work.c" -o "sqlite_O$o"
done
echo "built sqlite_O2 and sqlite_O3; load: $(load)"

start=$(date +%s.%N)
code=0
timeout -k 5 300 "$gb" noise ./sqlite_O2 --budget "$budget" -m wall -m user+sys \
  --color never --quiet --json noise.json > noise.txt || code=$?
end=$(date +%s.%N)
echo "noise: exit $code, $(python3 -c "print(f'{$end - $start:.1f}')") s; load after: $(load)"
echo "  ghostbench noise ./sqlite_O2 --budget $budget -m wall -m user+sys"

for pair in same pair; do
  if [ $pair = same ]; then b=./sqlite_O2; else b=./sqlite_O3; fi
  hyperfine -N --warmup 2 --runs "$hf_runs" --style none --export-json "hf_$pair.json" \
    -n A ./sqlite_O2 -n B "$b" > "hf_$pair.txt"
  echo "hyperfine $pair: ./sqlite_O2 vs $b, $hf_runs runs each; load after: $(load)"
done

python3 - <<'PY'
import json, math
from statistics import NormalDist
z = NormalDist().inv_cdf(0.975)
half = math.log(1.01)
def runs(cv):
    return max(2, math.ceil(2 * z * z * cv * cv / (half * half)))
r = json.load(open("noise.json"))
print(f"noise: {r['complete_rounds']} complete rounds, {len(r['runs'])} runs, "
      f"{r['elapsed_s']:.1f} s, state {r['state']}")
for f in r["factors"]:
    if not f["tested"]:
        print(f"  not tested: {f['factor']}: {f['why']}")
plain = {}
for m in r["metrics"]:
    print(f"  metric {m['name']}: {m['finding']}")
    if not m["decomposed"]:
        continue
    for s in m["shares"]:
        e = s["share"]
        print(f"    {s['factor']:6} share {e['value']:+.3f} [{e['low']:+.3f}, {e['high']:+.3f}]"
              f"{' source' if s['source'] else ''}; mean when held {s['held_shift']:+.2%} (p {s['held_shift_p']:.3f})")
    u = m["unexplained"]
    print(f"    unexplained {u['value']:.3f} [{u['low']:.3f}, {u['high']:.3f}]")
    d, q = m["default_runs"], m["quiet_runs"]
    plain[m["name"]] = (m["default_cv"], d)
    ratio = f"{d / q:.2f}x" if d and q else "n/a"
    print(f"    runs per command at +-1%: plain {d} (CV {m['default_cv']:.2%}), "
          f"holding {m['quiet_held'] or 'nothing'} {q} (CV {m['quiet_cv']:.2%}): ratio {ratio}")
for pair in ("same", "pair"):
    h = json.load(open(f"hf_{pair}.json"))["results"]
    a, b = h[0], h[1]
    ratio = b["mean"] / a["mean"]
    sigma = ratio * math.hypot(a["stddev"] / a["mean"], b["stddev"] / b["mean"])
    print(f"hyperfine {pair}: {a['command']} {a['mean']*1e3:.1f} +- {a['stddev']*1e3:.1f} ms, "
          f"{b['command']} {b['mean']*1e3:.1f} +- {b['stddev']*1e3:.1f} ms; "
          f"B/A {ratio:.3f} +- {sigma:.3f}")
    for x in (a, b):
        cv = x["stddev"] / x["mean"]
        n = runs(cv)
        cmp = ""
        if "wall" in plain and plain["wall"][1]:
            cmp = f"; noise's plain-run figure ({plain['wall'][1]}) is {plain['wall'][1] / n:.1f}x this"
        print(f"  {x['command']}: CV {cv:.2%}: {n} runs per command at +-1%{cmp}")
PY
echo "load at the end: $(load)"
