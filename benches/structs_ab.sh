#!/usr/bin/env bash
# Two ghostbench binaries side by side on `structs` (e.g. main's before a refactor and
# the branch's after): wall time and max RSS of each, alternating, REPEAT runs each
# (best and median wall, median CPU, largest max RSS reported), and whether their reports are identical. The order of
# the "arrays: …" list in element-straddle hazards and the spelling of a header's
# decl_file ("a/../b.h" or "b.h") depend on which thread reads a type first, and vary
# from run to run of one binary; so each such list is sorted and each decl_file
# reduced to its file name before the comparison.
#
# Usage: benches/structs_ab.sh OLD_BINARY NEW_BINARY [INPUT] [REPEAT]
#   INPUT defaults to the vmlinux of Debian's linux-image-6.1.0-50-cloud-amd64-dbg
#   (/usr/lib/debug/boot/vmlinux-6.1.0-50-cloud-amd64 or /tmp/kdbg/vmlinux).
#   REPEAT defaults to 5.
# Needs: GNU time (/usr/bin/time), perl, cmp.
set -euo pipefail
old=${1:?usage: benches/structs_ab.sh OLD_BINARY NEW_BINARY [INPUT] [REPEAT]}
new=${2:?usage: benches/structs_ab.sh OLD_BINARY NEW_BINARY [INPUT] [REPEAT]}
input=${3:-}
if [ -z "$input" ]; then
  for c in /usr/lib/debug/boot/vmlinux-6.1.0-50-cloud-amd64 /tmp/kdbg/vmlinux; do
    [ -e "$c" ] && input=$c && break
  done
fi
[ -n "$input" ] && [ -e "$input" ] || { echo "no input binary; give one as the third argument" >&2; exit 1; }
repeat=${4:-5}
command -v /usr/bin/time >/dev/null || { echo "benches/structs_ab.sh needs GNU time" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "input: $input ($(du -Lh "$input" | cut -f1))"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$input" > /dev/null # warm the page cache for both

measure() { # label, binary
  /usr/bin/time -f "%e %M %U %S" -o "$work/time" "$2" structs "$input" --color never --quiet \
    --json "$work/$1.json" > "$work/$1.txt" 2> "$work/$1.err" || { cat "$work/$1.err" >&2; exit 1; }
  read -r wall rss user sys < "$work/time"
  echo "$1 $wall $rss $(echo "$user $sys" | awk '{printf "%.2f", $1 + $2}')" >> "$work/samples"
}
for i in $(seq "$repeat"); do
  measure old "$old"
  measure new "$new"
done

summary() { # label → "best median max_rss_MB median_cpu"
  local cpu
  cpu=$(grep "^$1 " "$work/samples" | awk '{print $4}' | sort -n | awk '{c[NR]=$1} END {print c[int((NR+1)/2)]}')
  grep "^$1 " "$work/samples" | awk '{print $2, $3}' | sort -n | awk -v cpu="$cpu" '
    { w[NR]=$1; if ($2>r) r=$2 } END { printf "%s %s %.0f %s", w[1], w[int((NR+1)/2)], r/1024, cpu }'
}
read -r o_best o_med o_rss o_cpu <<< "$(summary old)"
read -r n_best n_med n_rss n_cpu <<< "$(summary new)"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| binary | wall best (s) | wall median (s) | CPU median, user+sys (s) | max RSS (MB) |"
echo "|---|---|---|---|---|"
echo "| old: $old | $o_best | $o_med | $o_cpu | $o_rss |"
echo "| new: $new | $n_best | $n_med | $n_cpu | $n_rss |"
echo
echo "all samples (label wall_s max_rss_kB cpu_s):"
cat "$work/samples"
echo
for f in old.json new.json old.txt new.txt; do
  perl -pe 's/(arrays: )([^"\n]*)/$1.join(", ", sort split(", ", $2))/e;
            s/("decl_file": ")[^"]*\/([^"\/]*")/$1$2/' "$work/$f" > "$work/$f.norm"
done
if cmp -s "$work/old.json.norm" "$work/new.json.norm" && cmp -s "$work/old.txt.norm" "$work/new.txt.norm"; then
  echo "reports: JSON and terminal output identical (array lists sorted, decl_file by file name)"
else
  echo "reports: DIFFER"
  diff "$work/old.json.norm" "$work/new.json.norm" | head -20
  exit 1
fi
