#!/usr/bin/env bash
# ghostbench structs vs pahole on the same binary, in one run: the text both print,
# struct by struct (byte-identical count and the classes of the differences), and the
# wall time and max RSS of each (GNU time -v, alternating, REPEAT times each).
#
# Usage: benches/pahole_text.sh [BINARY] [REPEAT] [EXAMPLES]
#   BINARY defaults to the vmlinux of Debian's linux-image-6.1.0-*-cloud-amd64-dbg
#   (/usr/lib/debug/lib/modules/6.1.0-50-cloud-amd64/vmlinux, or /tmp/kdbg/vmlinux).
#   REPEAT defaults to 3; EXAMPLES (differing structs shown per class) to 2.
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
examples=${3:-2}
for tool in pahole /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "benches/pahole_text.sh needs $tool" >&2; exit 1; }
done
CARGO_INCREMENTAL=1 cargo build --release -q --bin ghostbench --example pahole_text
gb=$PWD/target/release/ghostbench
agree=$PWD/target/release/examples/pahole_text
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "input: $bin ($(du -Lh "$bin" | cut -f1))"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "pahole: $(pahole --version)"
cat "$bin" > /dev/null # warm the page cache for both

measure() { # label, output file, command...
  local label=$1 out=$2; shift 2
  /usr/bin/time -v -o "$work/time" "$@" > "$out" 2> "$work/stderr" || true
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$work/time")
  rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time")
  echo "$label $wall $rss" >> "$work/samples"
}
for _ in $(seq "$repeat"); do
  measure pahole "$work/pahole.txt" pahole "$bin"
  measure ghostbench "$work/gb.txt" "$gb" structs "$bin" --color never --quiet
done

summary() { # label → "best median max_rss_MB"
  grep "^$1 " "$work/samples" | awk '{print $2, $3}' | sort -n | awk '
    { w[NR]=$1; if ($2>r) r=$2 } END { printf "%s %s %.0f", w[1], w[int((NR+1)/2)], r/1024 }'
}
read -r ph_best ph_med ph_rss <<< "$(summary pahole)"
read -r gb_best gb_med gb_rss <<< "$(summary ghostbench)"
echo
echo "| tool | wall best (s) | wall median (s) | max RSS (MB) |"
echo "|---|---|---|---|"
echo "| pahole | $ph_best | $ph_med | $ph_rss |"
echo "| ghostbench structs | $gb_best | $gb_med | $gb_rss |"
awk -v a="$ph_med" -v b="$gb_med" 'BEGIN { printf "\nghostbench / pahole wall time (median): %.2f\n\n", b/a }'
"$agree" "$work/pahole.txt" "$work/gb.txt" "$examples"
