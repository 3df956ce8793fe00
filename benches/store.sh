#!/usr/bin/env bash
# The results store's write cost against a hand-written peer, on the same
# rows in one run:
#   1. ghostbench's store (examples/store_writer): N results of R runs each,
#      one transaction per result, WAL, into a fresh SQLite file;
#   2. the peer: Python's sqlite3 module writing the same rows into the same
#      schema (the one `ghostbench` created), one transaction per result, WAL;
#   3. what storing adds to a verb: `ghostbench analyze` of a 20-row CSV,
#      20 times with the default store and 20 times with --no-store.
# Prints a Markdown table for BENCHMARKS.md.
#
# Usage: benches/store.sh [RESULTS] [RUNS]   (defaults 200 and 200)
# Needs: python3; builds the release binary and the example.
set -euo pipefail
cd "$(dirname "$0")/.."
results=${1:-200}
runs=${2:-200}
cargo build --release --quiet --example store_writer
cargo build --release --quiet
writer=target/release/examples/store_writer
bin=$(realpath target/release/ghostbench)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

t0=$(now)
"$writer" "$tmp/gb.db" "$results" "$runs" >/dev/null
t1=$(now)
ghost=$(echo "$t1 - $t0" | bc -l)

# The peer writes into a copy of the schema ghostbench made (no rows).
"$writer" "$tmp/schema.db" 1 0 >/dev/null
python3 - "$tmp/schema.db" "$results" "$runs" > "$tmp/peer.txt" <<'PY'
import sqlite3, sys, time
path, results, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
con = sqlite3.connect(path, isolation_level=None)
con.execute("DELETE FROM verdicts"); con.execute("DELETE FROM runs")
con.execute("DELETE FROM commands"); con.execute("DELETE FROM experiments")
con.execute("PRAGMA journal_mode=WAL")
start = time.perf_counter()
for i in range(results):
    con.execute("BEGIN IMMEDIATE")
    cur = con.execute(
        "INSERT INTO experiments (verb, created_unix, command_line, settings, status, cpu_model,"
        " kernel, governor, load1, host, environment, git_commit, git_branch, git_dirty, document)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        ("compare", 1700000000 + i, '["store_writer"]', "{}", "decided", "test cpu",
         "test kernel", None, 0.5, "writer", "{}", None, None, None, '{"writer": %d}' % i))
    eid = cur.lastrowid
    for k, name in enumerate(("A", "B")):
        con.execute("INSERT INTO commands VALUES (?,?,?,?)", (eid, k, name, "true"))
    for r in range(runs):
        con.execute(
            "INSERT INTO runs (experiment_id, command_idx, name, layout, round, warmup, metric,"
            " unit, value, exit_code, env_pad) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (eid, r % 2, "AB"[r % 2], None, r // 2, 0, "wall", "seconds",
             0.001 * (1 + r % 7), 0, r))
    con.execute("INSERT INTO verdicts VALUES (?,?,?,?,?,?,?,?)",
                (eid, "wall", "A", "B", "SAME", 1.0, 0.99, 1.01))
    con.execute("COMMIT")
print(time.perf_counter() - start)
PY
peer=$(cat "$tmp/peer.txt")

printf 'name,value\n' > "$tmp/d.csv"
for i in $(seq 10); do printf 'A,1.%02d\nB,1.2%d\n' "$i" "$i" >> "$tmp/d.csv"; done
cd "$tmp"
t0=$(now); for _ in $(seq 20); do "$bin" analyze d.csv --color never >/dev/null 2>&1; done; t1=$(now)
t2=$(now); for _ in $(seq 20); do "$bin" analyze d.csv --color never --no-store >/dev/null 2>&1; done; t3=$(now)
stored=$(echo "($t1 - $t0) / 20 * 1000" | bc -l)
plain=$(echo "($t3 - $t2) / 20 * 1000" | bc -l)

echo "| what | ghostbench | peer | ratio |"
echo "|---|---|---|---|"
printf '| %d results × %d runs into SQLite (s) | %.3f | %.3f (python3 sqlite3) | %.2f |\n' \
  "$results" "$runs" "$ghost" "$peer" "$(echo "$ghost / $peer" | bc -l)"
printf '| analyze of 20 rows, per call (ms) | %.1f stored | %.1f --no-store | %.2f |\n' \
  "$stored" "$plain" "$(echo "$stored / $plain" | bc -l)"
