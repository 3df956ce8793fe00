#!/usr/bin/env bash
# The fuzz harness (tests/fuzz.rs) in its long mode: CASES mutated inputs
# (ELF files through structs, code and code --diff; profiles through code --hot;
# CSV and hyperfine JSON through analyze) for each SEED, with the inputs per
# target and per kind of mutation, panics, the slowest input and peak RSS.
# Peer: the same seeds through pahole and objdump -d would time the tools, not
# their handling of damage, so the figures are absolute (see BENCHMARKS.md).
#
# Usage: benches/fuzz.sh [CASES] [SEED...]   (defaults: 100000, seeds 1 2)
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-100000}
shift || true
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2)
for seed in "${seeds[@]}"; do
  GHOSTBENCH_FUZZ_CASES=$cases GHOSTBENCH_FUZZ_SEED=$seed \
    cargo test --release -q --test fuzz 2>&1 | grep -E '^fuzz|test result'
done
