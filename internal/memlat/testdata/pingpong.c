// An independent cache-line ping-pong, in C, to check memlat.PingPong
// against (BenchmarkC2CAgainstC): two threads pinned to CPUs a and b; a
// writes an odd value, b answers with the next even one. Windows of N round
// trips timed on a's thread CPU clock and on the wall clock; prints median
// and min ns per round trip over W windows. Usage: pingpong A B
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

static volatile int64_t *line;
static int cpub;

static void pin(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s); if (sched_setaffinity(0, sizeof s, &s)) { perror("affinity"); exit(1); } }
static double nowns(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static void *resp(void *x) {
  pin(cpub);
  for (;;) {
    int64_t v = __atomic_load_n(line, __ATOMIC_ACQUIRE);
    if (v < 0) return 0;
    if (v & 1) __atomic_store_n(line, v + 1, __ATOMIC_RELEASE);
  }
}
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: pingpong CPU-A CPU-B\n"); return 2; }
  int a = atoi(argv[1]); cpub = atoi(argv[2]); int W = 30; long N = 20000;
  line = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  pthread_t t; pthread_create(&t, 0, resp, 0);
  pin(a);
  int64_t next = 1;
  double cpu[64], wall[64];
  for (int w = -1; w < W; w++) {
    double c0 = nowns(CLOCK_THREAD_CPUTIME_ID), w0 = nowns(CLOCK_MONOTONIC);
    for (long i = 0; i < N; i++) {
      __atomic_store_n(line, next, __ATOMIC_RELEASE);
      while (__atomic_load_n(line, __ATOMIC_ACQUIRE) != next + 1) ;
      next += 2;
    }
    double c1 = nowns(CLOCK_THREAD_CPUTIME_ID), w1 = nowns(CLOCK_MONOTONIC);
    if (w >= 0) { cpu[w] = (c1 - c0) / N; wall[w] = (w1 - w0) / N; }
  }
  __atomic_store_n(line, -1, __ATOMIC_RELEASE);
  pthread_join(t, 0);
  qsort(cpu, W, sizeof(double), cmp); qsort(wall, W, sizeof(double), cmp);
  printf("C pp CPUs %d,%d round trip ns: thread-cpu median %.1f min %.1f; wall median %.1f min %.1f (%d windows of %ld)\n", a, cpub, cpu[W / 2], cpu[0], wall[W / 2], wall[0], W, N);
  return 0;
}
