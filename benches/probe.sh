#!/usr/bin/env bash
# ghostbench probe vs hand-written C reference microbenchmarks, in one run.
#
# There is no standard tool that measures these hazards, so the peer is the
# classic C exercise for each: a split lock timed with __atomic builtins on a
# misaligned pointer, and a packed vs padded linked list. Both sides run on the
# same machine back to back; the script prints each side's figure and the ratio.
# It also times `ghostbench probe --quick` and the full `ghostbench probe`.
#
# Usage: benches/probe.sh        Needs: cc, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in cc python3; do
  command -v "$tool" >/dev/null || { echo "benches/probe.sh needs $tool" >&2; exit 1; }
done
cargo build --release -q
gb=$PWD/target/release/ghostbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/ref.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }
struct __attribute__((packed)) pn { uint8_t tag; struct pn *next; uint32_t value; uint8_t pad[18]; };
struct __attribute__((aligned(32))) qn { struct qn *next; uint32_t value; uint8_t tag; };
#define N (1 << 20)
int main(void) {
    /* split lock: 8-byte lock add at offset 60 vs offset 0, medians of 9 */
    char *line = aligned_alloc(64, 128); memset(line, 0, 128);
    double al[9], sp[9];
    for (int r = 0; r < 9; r++) {
        uint64_t *a = (uint64_t *)line; double t0 = now();
        for (int i = 0; i < 20000; i++) __atomic_fetch_add(a, 1, __ATOMIC_SEQ_CST);
        al[r] = (now() - t0) / 20000;
        uint64_t *s = (uint64_t *)(line + 60); t0 = now();
        for (int i = 0; i < 4; i++) __atomic_fetch_add(s, 1, __ATOMIC_SEQ_CST);
        sp[r] = (now() - t0) / 4;
    }
    qsort(al, 9, sizeof *al, cmp); qsort(sp, 9, sizeof *sp, cmp);
    printf("split_ns %.2f\naligned_ns %.2f\n", sp[4], al[4]);
    /* packed vs padded list: create + walk, medians of 11 */
    struct pn *p = aligned_alloc(64, (size_t)N * sizeof *p);
    struct qn *q = aligned_alloc(64, (size_t)N * sizeof *q);
    double tp[11], tq[11]; uint64_t sum = 0;
    for (int r = 0; r < 11; r++) {
        double t0 = now();
        for (int i = 0; i < N; i++) { p[i].tag = 1; p[i].next = i + 1 < N ? &p[i + 1] : 0; p[i].value = i; memset(p[i].pad, 0, 18); }
        for (struct pn *x = p; x; x = x->next) sum += x->value;
        tp[r] = (now() - t0) / N;
        t0 = now();
        for (int i = 0; i < N; i++) { q[i].next = i + 1 < N ? &q[i + 1] : 0; q[i].value = i; q[i].tag = 1; }
        for (struct qn *x = q; x; x = x->next) sum += x->value;
        tq[r] = (now() - t0) / N;
    }
    qsort(tp, 11, sizeof *tp, cmp); qsort(tq, 11, sizeof *tq, cmp);
    printf("packed_ns %.2f\npadded_ns %.2f\nchecksum %llu\n", tp[5], tq[5], (unsigned long long)sum);
    return 0;
}
C
cc -O2 -o "$work/ref" "$work/ref.c"

now() { python3 -c 'import time; print(time.monotonic())'; }
t0=$(now); "$gb" probe --quick --quiet --json "$work/quick.json" >/dev/null; t1=$(now)
quick_s=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
t0=$(now); "$gb" probe --quiet --json "$work/full.json" > "$work/full.txt"; t1=$(now)
full_s=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
"$work/ref" > "$work/ref.txt"

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, kernel $(uname -r); $(date -u +%Y-%m-%d)"
echo "wall time: ghostbench probe --quick ${quick_s} s; ghostbench probe ${full_s} s"
echo
python3 - "$work/full.json" "$work/ref.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ref = dict(l.split() for l in open(sys.argv[2]))
ref = {k: float(v) for k, v in ref.items()}
p = {x["probe"]: x for x in r["probes"]}
sl, al = p["split-lock"], p["alloc"]
row8_60 = next(x for x in sl["rows"] if x["size"] == 8 and x["offset"] == 60)
packed = next(x for x in al["rows"] if x["node"] == "packed")
padded = next(x for x in al["rows"] if x["node"] == "padded")
print("| figure | ghostbench | C reference | ratio |")
print("|---|---:|---:|---:|")
def line(name, g, c): print(f"| {name} | {g:.2f} | {c:.2f} | {g / c:.2f} |")
line("aligned locked add, 8 B (ns)", sl["aligned_ns_8"], ref["aligned_ns"])
line("split lock, 8 B at offset 60 (ns)", row8_60["ns_per_op"], ref["split_ns"])
line("split / aligned (×)", row8_60["ns_per_op"] / sl["aligned_ns_8"], ref["split_ns"] / ref["aligned_ns"])
line("packed list node, create + walk (ns/node)", packed["total_ns_per_node"], ref["packed_ns"])
line("padded list node, create + walk (ns/node)", padded["total_ns_per_node"], ref["padded_ns"])
line("packed / padded (×)", packed["ratio_to_padded"], ref["packed_ns"] / ref["padded_ns"])
PY
echo
echo "Full probe table:"
echo
echo '```text'
cat "$work/full.txt"
echo '```'
