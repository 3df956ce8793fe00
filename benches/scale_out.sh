#!/usr/bin/env bash
# Wall time of a 2-build × 8-layout `ghostbench layout` plan run as 4 shards
# on a one-node Slurm cluster (a job array from `--emit slurm`, `sbatch
# --wait`, then the merge) against the same plan run in one process, with
# each shard's own time, and the speed-up expected on N machines worked out
# from those shard times. The peer is the one-process run.
#
# The cluster is brought up here as tests/common/slurm.rs does (munged on its
# own socket, slurmctld/slurmd -D on a free port pair, all in a temp dir) and
# stopped by pid at exit. Needs root, slurm-wlm, munge and cc.
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
host=$(hostname -s)
node=$(slurmd -C | grep '^NodeName=')
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
"$gb" layout --quiet --color never --plan "$tmp/plan/plan.json" --json one.json >one.txt
t1=$(now)
cd "$tmp"

# --- 4 shards on Slurm, at most $cpus at once, then the merge
"$gb" layout --plan "$tmp/plan/plan.json" --emit slurm --concurrency "$cpus" >/dev/null
t2=$(now)
sbatch --wait "$tmp/plan/submit.sbatch" >/dev/null
t3=$(now)
"$gb" analyze "$tmp/plan/results/" --json merged.json >merged.txt
t4=$(now)

python3 - "$t0" "$t1" "$t2" "$t3" "$t4" "$cpus" "$(nproc)" <<'PY'
import glob, json, math, sys
t0, t1, t2, t3, t4 = map(float, sys.argv[1:6])
cpus, nproc = int(sys.argv[6]), int(sys.argv[7])
one, merged = json.load(open("one/one.json")), json.load(open("merged.json"))
shards = sorted((json.load(open(p)) for p in glob.glob("plan/results/shard-*.json")), key=lambda s: s["shard"])
local, slurm, merge = t1 - t0, t3 - t2, t4 - t3
def verdict(r):
    return {(row["build"], row["metric"]): row["comparison"]["verdict"] for row in r["matrix"] if row.get("comparison")}
print(f"plan: 2 builds x 8 layouts x {one['settings']['rounds']} rounds, 4 shards of 2 variants; {nproc} CPUs, Slurm runs {cpus} shards at once")
print(f"one process:        {local:6.1f} s   verdicts {verdict(one)}")
print(f"4 shards on Slurm:  {slurm:6.1f} s   (sbatch --wait, submit to last shard's end)")
print(f"merge:              {merge:6.1f} s   verdicts {verdict(merged)}")
print(f"Slurm + merge / one process = {(slurm + merge) / local:.2f}")
times = [s["elapsed_s"] for s in shards]
for s in shards:
    print(f"  shard {s['shard']}: {s['elapsed_s']:5.1f} s  status {s['status']}  host {s['machine']['host']}")
mean, longest = sum(times) / len(times), max(times)
print(f"shard time: mean {mean:.1f} s, longest {longest:.1f} s, sum {sum(times):.1f} s; one process / sum of shards = {local / sum(times):.2f}")
print("expected on N machines (one shard per machine at a time): wall = ceil(4/N) x longest shard + merge")
for n in (1, 2, 4):
    wall = math.ceil(len(times) / n) * longest + merge
    print(f"  N={n}: {wall:5.1f} s, speed-up over one process {local / wall:.2f}x")
k = 32
per = mean  # a shard of 2 variants costs the same whatever the plan's size
print(f"  a 32-layout plan in {k//2} shards on 16 machines: ~{per + merge:.1f} s vs ~{local * k / 8:.0f} s in one process ({local * k / 8 / (per + merge):.0f}x)")
PY
