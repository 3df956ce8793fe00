#!/usr/bin/env bash
# Atomics by use on a big binary, in one run: `structs --hazards` of this tree (with
# the lock-site decoding and mapping) beside a baseline ghostbench without it (OLD,
# e.g. a build of the commit before) and pahole, alternating, REPEAT times each;
# median wall time and max RSS of each, the ratios, how the lock sites mapped, and
# the false-sharing counts of both.
#
# Usage: benches/atomics.sh OLD_GHOSTBENCH [BINARY] [REPEAT]
#   BINARY defaults to the vmlinux of Debian's linux-image-6.1.0-50-cloud-amd64-dbg
#   (/usr/lib/debug/lib/modules/6.1.0-50-cloud-amd64/vmlinux, or /tmp/kdbg/vmlinux).
# Needs: pahole (dwarves), GNU time, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: benches/atomics.sh OLD_GHOSTBENCH [BINARY] [REPEAT]}
bin=${2:-}
if [ -z "$bin" ]; then
  for c in /usr/lib/debug/lib/modules/6.1.0-50-cloud-amd64/vmlinux /tmp/kdbg/vmlinux; do
    [ -e "$c" ] && bin=$c && break
  done
fi
[ -n "$bin" ] && [ -e "$bin" ] || { echo "no input binary; give one as the second argument" >&2; exit 1; }
repeat=${3:-3}
cargo build --release -q --bin ghostbench
new=$PWD/target/release/ghostbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "input: $bin ($(du -Lh "$bin" | cut -f1))"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$bin" > /dev/null
measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > /dev/null 2>&1 || true
  read -r wall rss < "$work/time"
  echo "$label $wall $rss" >> "$work/samples"
}
for _ in $(seq "$repeat"); do
  measure pahole pahole "$bin"
  measure old "$old" structs "$bin" --hazards --json "$work/old.json"
  measure new "$new" structs "$bin" --hazards --json "$work/new.json"
done
python3 - "$work" <<'PY'
import json, statistics, sys
from collections import Counter
work = sys.argv[1]
s = {}
for line in open(f"{work}/samples"):
    label, wall, rss = line.split()
    s.setdefault(label, []).append((float(wall), int(rss)))
med = {k: (statistics.median(w for w, _ in v), max(r for _, r in v)) for k, v in s.items()}
for k in ("pahole", "old", "new"):
    print(f"{k:7} median wall {med[k][0]:6.2f} s  max RSS {med[k][1] / 1024:7.0f} MB  ({len(s[k])} runs)")
print(f"new/old wall {med['new'][0] / med['old'][0]:.2f}x   new/pahole wall {med['new'][0] / med['pahole'][0]:.2f}x")
for k in ("old", "new"):
    r = json.load(open(f"{work}/{k}.json"))
    c = Counter((h["kind"], h["severity"]) for h in r["hazards"] if h["kind"] in ("false-sharing", "split-lock-risk"))
    print(k, "false-sharing warnings", c[("false-sharing", "warning")], "notes", c[("false-sharing", "note")],
          "split-lock-risk", sum(v for (kind, _), v in c.items() if kind == "split-lock-risk"))
    if "lock_sites" in r:
        print(k, "lock sites", json.dumps({a: b for a, b in r["lock_sites"].items() if a != "list"}))
PY
