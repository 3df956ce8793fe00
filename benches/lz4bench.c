/* A/B driver for benches/verdict.sh: compresses and decompresses an in-memory
 * buffer with lz4 and prints the best-of-N time per pass of each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lz4.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int size = argc > 1 ? atoi(argv[1]) : (4 << 20);
  int passes = argc > 2 ? atoi(argv[2]) : 5;
  if (size <= 0 || passes <= 0) return 2;
  /* Compressible, text-like input from a fixed seed: words from a small vocabulary. */
  static const char *words[] = {"layout", "ghost", "branch", "cache", "line", "the", "of",
                                "benchmark", "speedup", "inline", "loop", "a", "frame", "data"};
  char *src = malloc(size), *dst = malloc(LZ4_compressBound(size)), *back = malloc(size);
  if (!src || !dst || !back) return 2;
  unsigned state = 12345;
  for (int i = 0; i < size;) {
    state = state * 1103515245u + 12345u;
    const char *w = words[(state >> 16) % 14];
    for (; *w && i < size; w++) src[i++] = *w;
    if (i < size) src[i++] = (state >> 8) % 7 ? ' ' : '\n';
  }
  double best_c = 1e9, best_d = 1e9;
  int csize = 0;
  for (int p = 0; p < passes; p++) {
    double t0 = now();
    csize = LZ4_compress_default(src, dst, size, LZ4_compressBound(size));
    double t1 = now();
    int dsize = LZ4_decompress_safe(dst, back, csize, size);
    double t2 = now();
    if (csize <= 0 || dsize != size || memcmp(src, back, size)) return 3;
    if (t1 - t0 < best_c) best_c = t1 - t0;
    if (t2 - t1 < best_d) best_d = t2 - t1;
  }
  printf("ratio %.3f\n", (double)size / csize);
  printf("compress %.4f ms\n", best_c * 1e3);
  printf("decompress %.4f ms\n", best_d * 1e3);
  return 0;
}
