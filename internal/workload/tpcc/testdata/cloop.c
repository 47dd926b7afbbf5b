/*
 * cloop: tpcc-ro's SQLite stream as a plain C loop, the peer that
 * BenchmarkCLoopRatio holds numalab's stream against. It is built by the
 * benchmark from the SQLite amalgamation of the go-sqlite3 module numalab
 * links, with that module's own compiler flags, and makes the calls a
 * numalab SQLite stream makes (tx_stmts.go): the statements it is given,
 * prepared once; per transaction BEGIN, the statements with their arguments
 * bound, every row's columns read (text copied out), COMMIT. Inputs follow
 * the same clauses (50/50 Order-Status and Stock-Level, 60% of
 * Order-Status by last name) from its own generator.
 *
 * usage: cloop FILE MMAP CPU WARMUP_S SECONDS WAREHOUSES C_LAST C_ID AUGMENTED
 *              BEGIN COMMIT BY_ID BY_NAME LAST_ORDER LINES NEXT_ORDER LOW_STOCK AVG
 * prints: transactions N seconds S cpu C
 * (N transactions completed in the S-second window after the warm-up, C
 * CPU seconds the process used in that window)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "sqlite3-binding.h"

enum { BEGIN, COMMIT, BY_ID, BY_NAME, LAST_ORDER, LINES, NEXT_ORDER, LOW_STOCK, AVG, NSTMT };

static sqlite3 *db;
static sqlite3_stmt *st[NSTMT];
static uint64_t rng = 0x9e3779b97f4a7c15;
static int warehouses, c_last, c_id, augmented;

static uint64_t next64(void) {
	uint64_t z = (rng += 0x9e3779b97f4a7c15);
	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9;
	z = (z ^ z >> 27) * 0x94d049bb133111eb;
	return z ^ z >> 31;
}

static int uniform(int lo, int hi) {
	return lo + (int)(((unsigned __int128)next64() * (uint64_t)(hi - lo + 1)) >> 64);
}

static int nurand(int a, int x, int y, int c) {
	return (((uniform(0, a) | uniform(x, y)) + c) % (y - x + 1)) + x;
}

static const char *syllables[10] = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"};

static void last_name(char *b, int n) {
	strcpy(b, syllables[n / 100]);
	strcat(b, syllables[n / 10 % 10]);
	strcat(b, syllables[n % 10]);
}

static void die(const char *what) {
	fprintf(stderr, "cloop: %s: %s\n", what, sqlite3_errmsg(db));
	exit(1);
}

static void exec(sqlite3_stmt *s) {
	sqlite3_reset(s);
	if (sqlite3_step(s) != SQLITE_DONE)
		die("exec");
}

/* start binds n integers after a reset, as go-sqlite3 does. */
static sqlite3_stmt *start(sqlite3_stmt *s, int n, const int *v) {
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	for (int i = 0; i < n; i++)
		sqlite3_bind_int64(s, i + 1, v[i]);
	return s;
}

/* copy reads a text column out, as the Go stream makes a string of it. */
static void copy(char *dst, size_t cap, sqlite3_stmt *s, int col) {
	const unsigned char *t = sqlite3_column_text(s, col);
	int n = sqlite3_column_bytes(s, col);
	if (t == NULL)
		n = 0;
	if ((size_t)n >= cap)
		n = (int)cap - 1;
	memcpy(dst, t, (size_t)n);
	dst[n] = 0;
}

struct customer {
	int64_t id;
	double balance;
	char first[32], middle[4], last[32];
};

static struct customer names[64];

static double avg_price(void) {
	sqlite3_stmt *s = start(st[AVG], 0, NULL);
	double avg = 0;
	while (sqlite3_step(s) == SQLITE_ROW)
		avg = sqlite3_column_double(s, 0);
	return avg;
}

static void order_status(void) {
	int w = uniform(1, warehouses), d = uniform(1, 10);
	struct customer c = {0};
	exec(st[BEGIN]);
	if (uniform(1, 100) <= 60) {
		char last[32];
		last_name(last, nurand(255, 0, 999, c_last));
		sqlite3_stmt *s = start(st[BY_NAME], 2, (int[]){w, d});
		sqlite3_bind_text(s, 3, last, -1, SQLITE_TRANSIENT);
		int n = 0;
		while (sqlite3_step(s) == SQLITE_ROW && n < 64) {
			names[n].id = sqlite3_column_int64(s, 0);
			names[n].balance = sqlite3_column_double(s, 1);
			copy(names[n].first, sizeof names[n].first, s, 2);
			copy(names[n].middle, sizeof names[n].middle, s, 3);
			n++;
		}
		if (n == 0)
			die("no customer by name");
		c = names[(n + 1) / 2 - 1];
	} else {
		c.id = nurand(1023, 1, 3000, c_id);
		sqlite3_stmt *s = start(st[BY_ID], 3, (int[]){w, d, (int)c.id});
		if (sqlite3_step(s) != SQLITE_ROW)
			die("no customer by id");
		c.balance = sqlite3_column_double(s, 0);
		copy(c.first, sizeof c.first, s, 1);
		copy(c.middle, sizeof c.middle, s, 2);
		copy(c.last, sizeof c.last, s, 3);
	}
	sqlite3_stmt *s = start(st[LAST_ORDER], 3, (int[]){w, d, (int)c.id});
	int64_t oid = 0, carrier;
	char entry[32];
	while (sqlite3_step(s) == SQLITE_ROW) {
		oid = sqlite3_column_int64(s, 0);
		copy(entry, sizeof entry, s, 1);
		carrier = sqlite3_column_int64(s, 2);
	}
	(void)carrier;
	if (oid != 0) {
		s = start(st[LINES], 3, (int[]){w, d, (int)oid});
		struct {
			int64_t iid, supply, qty;
			double amount;
			char delivery[32];
		} line[16];
		int n = 0;
		while (sqlite3_step(s) == SQLITE_ROW) {
			int i = n++ % 16;
			line[i].iid = sqlite3_column_int64(s, 0);
			line[i].supply = sqlite3_column_int64(s, 1);
			line[i].qty = sqlite3_column_int64(s, 2);
			line[i].amount = sqlite3_column_double(s, 3);
			copy(line[i].delivery, sizeof line[i].delivery, s, 4);
		}
		if (augmented)
			avg_price();
	}
	exec(st[COMMIT]);
}

static void stock_level(void) {
	int w = uniform(1, warehouses), d = uniform(1, 10), threshold = uniform(10, 20);
	exec(st[BEGIN]);
	sqlite3_stmt *s = start(st[NEXT_ORDER], 2, (int[]){w, d});
	int next = 0;
	while (sqlite3_step(s) == SQLITE_ROW)
		next = (int)sqlite3_column_int64(s, 0);
	if (next == 0)
		die("no district");
	s = start(st[LOW_STOCK], 6, (int[]){w, d, next, next - 20, w, threshold});
	int64_t low = 0;
	while (sqlite3_step(s) == SQLITE_ROW)
		low = sqlite3_column_int64(s, 0);
	(void)low;
	if (augmented)
		avg_price();
	exec(st[COMMIT]);
}

static double cpu_seconds(void) {
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
	if (argc != 10 + NSTMT) {
		fprintf(stderr, "usage: cloop FILE MMAP CPU WARMUP_S SECONDS WAREHOUSES C_LAST C_ID AUGMENTED STATEMENTS(%d)\n", NSTMT);
		return 2;
	}
	int cpu = atoi(argv[3]);
	double warmup = atof(argv[4]), seconds = atof(argv[5]);
	warehouses = atoi(argv[6]), c_last = atoi(argv[7]), c_id = atoi(argv[8]), augmented = atoi(argv[9]);
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof set, &set) != 0) {
			perror("cloop: sched_setaffinity");
			return 1;
		}
	}
	char uri[4096];
	snprintf(uri, sizeof uri, "file:%s?mode=ro&immutable=1", argv[1]);
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
			    NULL) != SQLITE_OK)
		die("open");
	char pragma[64];
	snprintf(pragma, sizeof pragma, "PRAGMA mmap_size=%s", argv[2]);
	if (sqlite3_exec(db, pragma, NULL, NULL, NULL) != SQLITE_OK)
		die("mmap_size");
	for (int i = 0; i < NSTMT; i++)
		if (sqlite3_prepare_v2(db, argv[10 + i], -1, &st[i], NULL) != SQLITE_OK)
			die(argv[10 + i]);
	double t0 = now(), end = t0 + warmup + seconds, from = t0 + warmup;
	long n = 0;
	double cpu0 = -1;
	for (;;) {
		if (uniform(0, 1) == 0)
			order_status();
		else
			stock_level();
		double t = now();
		if (t >= end)
			break;
		if (t >= from) {
			if (cpu0 < 0)
				cpu0 = cpu_seconds();
			n++;
		}
	}
	printf("transactions %ld seconds %.6f cpu %.6f\n", n, seconds, cpu_seconds() - cpu0);
	return 0;
}
