#!/usr/bin/env bash
# Two ghostbench binaries side by side (e.g. main's before a refactor and after),
# on the same inputs in one run, alternating OLD/NEW so load drifts hit both:
#   1. `structs` on a large binary: wall, CPU, max RSS (benches/structs_ab.sh's measure);
#   2. `code` on the same binary: wall and max RSS;
#   3. `compare` harness cost: `compare --min-runs 200 --max-runs 200 true true`,
#      wall and CPU (GNU time counts the children too, so this is the whole cost
#      of 400 trivial runs and their analysis);
#   4. `analyze` of a 20,000-row CSV: wall.
# Then whether the two binaries' reports agree: `code --json` identical, and the
# `structs` text identical after the normalisation benches/structs_ab.sh explains.
#
# Usage: benches/ab.sh OLD_BINARY NEW_BINARY [INPUT] [REPEAT]
#   INPUT defaults to the vmlinux of Debian's linux-image-6.1.0-50-cloud-amd64-dbg
#   (/usr/lib/debug/boot/vmlinux-6.1.0-50-cloud-amd64 or /tmp/kdbg/vmlinux).
#   REPEAT defaults to 3. Prints a Markdown table for BENCHMARKS.md.
# Needs: GNU time (/usr/bin/time), perl, python3, cmp.
set -euo pipefail
old=$(realpath "${1:?usage: benches/ab.sh OLD_BINARY NEW_BINARY [INPUT] [REPEAT]}")
new=$(realpath "${2:?usage: benches/ab.sh OLD_BINARY NEW_BINARY [INPUT] [REPEAT]}")
input=${3:-}
if [ -z "$input" ]; then
  for c in /usr/lib/debug/boot/vmlinux-6.1.0-50-cloud-amd64 /tmp/kdbg/vmlinux; do
    [ -e "$c" ] && input=$c && break
  done
fi
[ -n "$input" ] && [ -e "$input" ] || { echo "no input binary; give one as the third argument" >&2; exit 1; }
repeat=${4:-3}
for tool in /usr/bin/time perl python3 cmp; do
  command -v "$tool" >/dev/null || { echo "benches/ab.sh needs $tool" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "input: $input ($(du -Lh "$input" | cut -f1))"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$input" > /dev/null # warm the page cache for both

python3 - > runs.csv <<'EOF'
import random
random.seed(7)
print("name,value,layout,round")
for layout in range(8):
    for r in range(1250):
        a = random.lognormvariate(0, 0.01) * (1 + 0.002 * layout)
        print(f"a,{a:.6f},{layout},{r}")
        print(f"b,{a * 1.03:.6f},{layout},{r}")
EOF

measure() { # task, label, binary, args...
  local task=$1 label=$2 bin=$3
  shift 3
  if ! /usr/bin/time -f "%e %M %U %S" -o time "$bin" "$@" > "$task.$label.out" 2> "$task.$label.err"; then
    # compare and analyze exit with their verdict's code; structs and code must succeed
    if [ "$task" = structs ] || [ "$task" = code ]; then cat "$task.$label.err" >&2; exit 1; fi
  fi
  tail -1 time | { read -r wall rss user sys; echo "$task $label $wall $rss $(echo "$user $sys" | awk '{printf "%.2f", $1 + $2}')"; } >> samples
}
for i in $(seq "$repeat"); do
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    measure structs $side "$bin" structs "$input" --color never --quiet --json "structs.$side.json"
    measure code $side "$bin" code "$input" --color never --quiet --json "code.$side.json"
    measure compare $side "$bin" compare --min-runs 200 --max-runs 200 --quiet --color never true true
    measure analyze $side "$bin" analyze runs.csv --quiet --color never
  done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "| task | old wall median (s) | new wall median (s) | ratio new/old | old CPU median (s) | new CPU median (s) | old max RSS (MB) | new max RSS (MB) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for task in structs code compare analyze; do
  ow=$(grep "^$task old " samples | awk '{print $3}' | median)
  nw=$(grep "^$task new " samples | awk '{print $3}' | median)
  oc=$(grep "^$task old " samples | awk '{print $5}' | median)
  nc=$(grep "^$task new " samples | awk '{print $5}' | median)
  orss=$(grep "^$task old " samples | awk '{print $4}' | sort -n | tail -1)
  nrss=$(grep "^$task new " samples | awk '{print $4}' | sort -n | tail -1)
  echo "| $task | $ow | $nw | $(awk -v a="$ow" -v b="$nw" 'BEGIN {printf "%.2f", (a > 0 ? b / a : 0)}') | $oc | $nc | $((orss / 1024)) | $((nrss / 1024)) |"
done
echo
echo "all samples (task label wall_s max_rss_kB cpu_s):"
cat samples
echo
for f in structs.old.out structs.new.out; do
  perl -pe 's/(arrays: )([^"\n]*)/$1.join(", ", sort split(", ", $2))/e' "$f" > "$f.norm"
done
status=0
# the JSON records its own command line, whose --json path differs by design
for f in code.old.json code.new.json; do
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d.pop("command_line", None); print(json.dumps(d, sort_keys=True))' "$f" > "$f.norm"
done
if cmp -s code.old.json.norm code.new.json.norm; then echo "code --json: identical (command_line left out)"; else echo "code --json: DIFFER"; status=1; fi
if cmp -s structs.old.out.norm structs.new.out.norm; then echo "structs text: identical (array lists sorted)"; else echo "structs text: DIFFER"; diff structs.old.out.norm structs.new.out.norm | head -10; status=1; fi
exit $status
