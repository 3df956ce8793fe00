#!/usr/bin/env bash
# JCC-erratum spots by Intel's fusion table: ghostbench code --uarch skylake
# against an independent count from objdump -d and readelf -s
# (benches/jcc_objdump.py, which shares no code with src/), on the same binary,
# with every function whose count differs listed.
#
# Usage: benches/jcc.sh [BINARY]
#   BINARY defaults to /tmp/kdbg/vmlinux (Debian's linux-image-6.1.0-50-cloud-amd64-dbg).
# Needs: objdump, readelf, python3. Prints the script's JSON summary.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-/tmp/kdbg/vmlinux}
for tool in objdump readelf python3; do
  command -v "$tool" >/dev/null || { echo "benches/jcc.sh needs $tool" >&2; exit 1; }
done
[ -r "$binary" ] || { echo "benches/jcc.sh: cannot read $binary" >&2; exit 1; }
cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target/release/ghostbench code "$binary" --uarch skylake --json "$work/skylake.json" >/dev/null
python3 benches/jcc_objdump.py "$binary" "$work/skylake.json"
