#!/usr/bin/env bash
# Wall time of a 2-build × 8-layout `ghostbench layout` plan run as 4 shards
# on a one-node Slurm cluster (a job array from `--emit slurm`, `sbatch
# --wait`, then the merge) against the same plan run in one process, with
# each shard's own time, and the speed-up expected on N machines worked out
# from those shard times. The peer is the one-process run.
#
# The cluster is brought up here as tests/common/slurm.rs does (munged on its
# own socket, slurmctld/slurmd -D on a free port pair, all in a temp dir) and
# stopped by pid at exit. Needs root, slurm-wlm, munge and cc. MinJobAge=4
# keeps `sbatch --wait` polling every 2 s (it sleeps 2, 8, 32 s between polls
# while those are under half of MinJobAge, default 300 s).
#
# Usage: benches/scale_out.sh [WORK] [ROUNDS]
#   WORK: the fixture's work in percent of ~20 ms (default 500: ~0.1 s runs);
#   the candidate does 30% more. ROUNDS: measured rounds (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-500}
rounds=${2:-5}
slower=$((work * 13 / 10))
[ "$(id -u)" -eq 0 ] || { echo "scale_out.sh: needs root (slurmd, munged)"; exit 1; }
for tool in munged mungekey slurmctld slurmd sbatch sinfo cc python3; do
  command -v "$tool" >/dev/null || { echo "scale_out.sh: $tool not installed"; exit 1; }
done
cargo build --release --quiet
gb=$PWD/target/release/ghostbench
src=$PWD/tests/fixtures/layout/work.c
tmp=$(mktemp -d /tmp/ghostbench-scale-out.XXXXXX)
chmod 755 "$tmp" # munged wants its socket's directory open to all
pids=()
cleanup() {
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# --- the cluster
c=$tmp/cluster
mkdir -p "$c"/{state,spool,log}
mungekey --create --keyfile "$c/munge.key"
munged --foreground --socket="$c/munge.sock" --key-file="$c/munge.key" \
  --log-file="$c/log/munged.log" --pid-file="$c/munged.pid" --seed-file="$c/munged.seed" \
  >"$c/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$c/munge.sock" ] && break; sleep 0.1; done
read -r ctld_port slurmd_port < <(python3 -c '
import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
node=$(slurmd -C | grep '^NodeName=')
host=${node#NodeName=}
host=${host%% *} # the short host name, as slurmd looks itself up
cat >"$c/slurm.conf" <<EOF
ClusterName=ghostbench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$c/munge.sock
StateSaveLocation=$c/state
SlurmdSpoolDir=$c/spool
SlurmctldPidFile=$c/slurmctld.pid
SlurmdPidFile=$c/slurmd.pid
SlurmctldLogFile=$c/log/slurmctld.log
SlurmdLogFile=$c/log/slurmd.log
PlugStackConfig=$c/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
SchedulerType=sched/backfill
MinJobAge=4
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
: >"$c/plugstack.conf"
export SLURM_CONF=$c/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$c/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$c/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 600); do [ "$(sinfo --noheader --format=%T 2>/dev/null)" = idle ] && break; sleep 0.1; done
[ "$(sinfo --noheader --format=%T)" = idle ] || { echo "the node never came up"; tail "$c"/log/*; exit 1; }
cpus=$(sinfo --noheader --format=%c)

# --- the plan
cd "$tmp"
"$gb" layout --quiet --color never \
  --build "A=cc -O2 -DWORK=$work {cflags} {ldflags} $src -o {out}" \
  --build "B=cc -O2 -DWORK=$slower {cflags} {ldflags} $src -o {out}" \
  --metric user --layouts 8 --rounds "$rounds" --shards 4 --plan-only "$tmp/plan" >/dev/null

now() { date +%s.%N; }
# --- one process (its own directory, so it builds everything itself)
mkdir one && cd one
t0=$(now)
"$gb" layout --quiet --color never --plan "$tmp/plan/plan.json" --json one.json >one.txt 2>one.err
t1=$(now)

# --- 4 shards on Slurm, at most $cpus at once (sbatch from a fresh directory:
# the shards build there), then the merge
mkdir "$tmp/parallel" && cd "$tmp/parallel"
"$gb" layout --plan "$tmp/plan/plan.json" --emit slurm --concurrency "$cpus" >/dev/null
t2=$(now)
sbatch --wait "$tmp/plan/submit.sbatch" >/dev/null
t3=$(now)
"$gb" analyze "$tmp/plan/results/" --json merged.json >merged.txt 2>merged.err
t4=$(now)
mv "$tmp/plan/results" "$tmp/parallel/results"

# --- the same 4 shards one at a time: each shard's time alone on the
# machine, as on N machines with one shard each
mkdir "$tmp/serial" && cd "$tmp/serial"
"$gb" layout --plan "$tmp/plan/plan.json" --emit slurm --concurrency 1 >/dev/null
t5=$(now)
sbatch --wait "$tmp/plan/submit.sbatch" >/dev/null
t6=$(now)
"$gb" analyze "$tmp/plan/results/" --json merged.json >merged.txt 2>merged.err
t7=$(now)
mv "$tmp/plan/results" "$tmp/serial/results"
cd "$tmp"

python3 - "$t0" "$t1" "$t2" "$t3" "$t4" "$t5" "$t6" "$t7" "$cpus" "$(nproc)" <<'PY'
import glob, json, math, sys
t = list(map(float, sys.argv[1:9]))
cpus, nproc = int(sys.argv[9]), int(sys.argv[10])
local = t[1] - t[0]
def verdict(r):
    return {f"{row['build']}/{row['metric']}": row["comparison"]["verdict"] for row in r["matrix"] if row.get("comparison")}
def shards(d):
    return sorted((json.load(open(p)) for p in glob.glob(f"{d}/results/shard-*.json")), key=lambda s: s["shard"])
one = json.load(open("one/one.json"))
overhead = {}
print(f"plan: 2 builds x 8 layouts x {one['settings']['rounds']} rounds, 4 shards of 2 variants; {nproc} CPUs")
print(f"one process:                        {local:6.1f} s   verdicts {verdict(one)}")
for name, d, wall, merge, at_once in (("4 shards on Slurm, %d at once" % cpus, "parallel", t[3] - t[2], t[4] - t[3], cpus),
                                      ("4 shards on Slurm, 1 at once", "serial", t[6] - t[5], t[7] - t[6], 1)):
    merged = json.load(open(f"{d}/merged.json"))
    s = shards(d)
    times = [x["elapsed_s"] for x in s]
    print(f"{name + ':':36}{wall:6.1f} s + merge {merge:.1f} s = {(wall + merge) / local:.2f} x one process; merged verdicts {verdict(merged)}")
    span = max(x["started_unix"] + x["elapsed_s"] for x in s) - min(x["started_unix"] for x in s)
    overhead[d] = wall - span
    print("    shard times: " + ", ".join(f"{x['shard']}: {x['elapsed_s']:.1f} s ({x['status']})" for x in s)
          + f"; sum {sum(times):.1f} s; first start to last end {span:.1f} s, so Slurm's start latency and sbatch's polling add {wall - span:.1f} s")
serial = [x["elapsed_s"] for x in shards("serial")]
merge = t[7] - t[6]
slurm = overhead["parallel"]
longest, mean = max(serial), sum(serial) / len(serial)
print(f"one process / sum of lone shard times = {local / sum(serial):.2f} (what splitting costs: each shard's own setup)")
print(f"expected on N machines, one shard each at a time: wall = ceil(4/N) x longest lone shard ({longest:.1f} s) + Slurm's latency ({slurm:.1f} s, measured above) + merge")
for n in (1, 2, 4):
    wall = math.ceil(len(serial) / n) * longest + slurm + merge
    print(f"  N={n}: {wall:5.1f} s, {local / wall:.2f}x the one-process run")
big = longest + slurm + merge
print(f"  a 32-layout plan (16 shards of 2) on 16 machines: ~{big:.1f} s vs ~{local * 4:.0f} s in one process (~{local * 4 / big:.0f}x), one-process time taken as linear in layouts")
PY
