#!/usr/bin/env bash
# Precision of `structs` atomics by use on a real C library (issue 11 point 2).
# Builds the library with gcc -O2 -g into a shared object under a temp dir, runs
# `structs --hazards --json`, prints how many lock sites map exactly / inferred / not
# (with the reasons), then a seeded sample of mapped sites with their instruction and
# source line for checking by hand. Fetches nothing: pass the sources.
#
# usage: benches/atomics_precision.sh LIB SRC_DIR GHOSTBENCH [SAMPLE] [SEED]
#   LIB = mimalloc : SRC_DIR is mimalloc's tree holding src/static.c and include/
#                    (libmimalloc-sys: c_src/mimalloc/v2)
#         lz4      : SRC_DIR is lz4's lib/ (lz4-sys: liblz4/lib)
#         zstd     : SRC_DIR is zstd's lib/ (zstd-sys: zstd/lib), built with ZSTD_MULTITHREAD
#         sqlite   : SRC_DIR holds the sqlite3.c amalgamation (libsqlite3-sys: sqlite3)
# The -sys crates' sources come from `cargo fetch` in any scratch crate depending on them.
set -euo pipefail
lib=${1:?LIB}; src=${2:?SRC_DIR}; gb=${3:?GHOSTBENCH}; sample=${4:-20}; seed=${5:-1}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
so=$tmp/lib$lib.so
cc=(gcc -O2 -g -shared -fPIC -pthread)
case $lib in
  mimalloc) "${cc[@]}" -I"$src/include" -o "$so" "$src/src/static.c" ;;
  lz4) "${cc[@]}" -o "$so" "$src"/{lz4,lz4hc,lz4frame,xxhash}.c ;;
  zstd) "${cc[@]}" -DZSTD_MULTITHREAD -DZSTD_DISABLE_ASM -I"$src" -I"$src/common" -o "$so" \
          "$src"/common/*.c "$src"/compress/*.c "$src"/decompress/*.c ;;
  sqlite) "${cc[@]}" -o "$so" "$src/sqlite3.c" ;;
  *) echo "unknown library: $lib" >&2; exit 2 ;;
esac
echo "$lib: $(gcc --version | head -1), -O2 -g, $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "objdump lock/xchg-mem/cmpxchg/xadd instructions: $(objdump -d "$so" | grep -cE '\block\b|xchg +[^,]*,.*\(|cmpxchg|xadd' || true)"
"$gb" structs "$so" --hazards --quiet --json "$tmp/out.json" >/dev/null || true
python3 "$here/atomics_precision.py" "$tmp/out.json" "$so" "$sample" "$seed"
