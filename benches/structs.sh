#!/usr/bin/env bash
# ghostbench structs vs pahole on the same binary, in one run: wall time and max RSS
# of each (alternating, REPEAT times each, best and median reported), then the
# agreement of every struct pahole prints (size, member offsets and sizes, holes).
#
# Usage: benches/structs.sh [BINARY] [REPEAT]
#   BINARY defaults to the vmlinux of Debian's linux-image-6.1.0-50-cloud-amd64-dbg
#   (/usr/lib/debug/lib/modules/6.1.0-50-cloud-amd64/vmlinux, or /tmp/kdbg/vmlinux).
#   REPEAT defaults to 3.
# Needs: pahole (dwarves), GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [ -z "$bin" ]; then
  for c in /usr/lib/debug/lib/modules/6.1.0-50-cloud-amd64/vmlinux /tmp/kdbg/vmlinux; do
    [ -e "$c" ] && bin=$c && break
  done
fi
[ -n "$bin" ] && [ -e "$bin" ] || { echo "no input binary; give one as the first argument" >&2; exit 1; }
repeat=${2:-3}
for tool in pahole /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "benches/structs.sh needs $tool" >&2; exit 1; }
done
cargo build --release -q --bin ghostbench --example pahole_agree
gb=$PWD/target/release/ghostbench
agree=$PWD/target/release/examples/pahole_agree
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "input: $bin ($(du -Lh "$bin" | cut -f1))"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "pahole: $(pahole --version)"
# Warm the page cache so neither tool pays for the first read.
cat "$bin" > /dev/null

measure() { # label, output file, command...
  local label=$1 out=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$out" 2> "$work/stderr" || true
  read -r wall rss < "$work/time"
  echo "$label $wall $rss" >> "$work/samples"
}
for i in $(seq "$repeat"); do
  measure ghostbench "$work/gb.txt" "$gb" structs "$bin" --color never --quiet --json "$work/gb.json"
  measure ghostbench-hazards "$work/gbh.txt" "$gb" structs "$bin" --hazards --color never --quiet
  measure pahole "$work/pahole.txt" pahole "$bin"
done

# The machine may be shared: the load after the runs, beside the one before.
echo "load after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"

summary() { # label → "best median max_rss_MB"
  grep "^$1 " "$work/samples" | awk '{print $2, $3}' | sort -n | awk '
    { w[NR]=$1; if ($2>r) r=$2 } END { printf "%s %s %.0f", w[1], w[int((NR+1)/2)], r/1024 }'
}
read -r gb_best gb_med gb_rss <<< "$(summary ghostbench)"
read -r gh_best gh_med gh_rss <<< "$(summary ghostbench-hazards)"
read -r ph_best ph_med ph_rss <<< "$(summary pahole)"
echo
echo "| tool | wall best (s) | wall median (s) | max RSS (MB) |"
echo "|---|---|---|---|"
echo "| pahole (all layouts) | $ph_best | $ph_med | $ph_rss |"
echo "| ghostbench structs (all layouts + hazards, --json) | $gb_best | $gb_med | $gb_rss |"
echo "| ghostbench structs --hazards | $gh_best | $gh_med | $gh_rss |"
awk -v a="$ph_med" -v b="$gb_med" -v c="$ph_rss" -v d="$gb_rss" 'BEGIN {
  printf "\nratio pahole/ghostbench: wall %.2fx (median), max RSS %.2fx\n", a/b, c/d }'
echo
"$agree" "$work/pahole.txt" "$work/gb.json"
