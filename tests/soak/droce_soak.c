/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-soak: droce0 and droce1 over a net_ring pair, both ports behind
 * net_fault with loss, duplication, reordering and corruption, carrying
 * mixed traffic for as long as asked: RC (every opcode), UC, UD, XRC and
 * two RC QPs sharing an SRQ, each kind on a thread of its own, messages
 * of 0 bytes to 1 MiB (UD: to the MTU), every byte and the order
 * checked (soak_traffic.c). At the end, once nothing moves, every frame
 * is accounted for on both directions (soak_books.c), the mbuf pool
 * holds what it held before, and memory did not grow.
 *
 *   droce-soak [--seconds N] [--seed S] [--progress SECS] [--workdir DIR]
 *              [--only rc,uc,ud,xrc,srq] [--faults ARGS] [--rc N]
 *              [--timeout T]
 *
 * Exit status: 0 if everything held, 1 otherwise, 2 on bad usage.
 * devtools/soak.sh builds and runs it; doc/guides/testing.rst has the
 * figures.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>

#include "droce_engine.h"
#include "harness.h"
#include "soak.h"

#define DEFAULT_FAULTS "drop=0.01,dup=0.01,reorder=0.01,corrupt=0.002"
/* The RC QPs' timeout: 4.096 us * 2^12, 17 ms */
#define DEFAULT_TIMEOUT 12
#define MAX_WORKERS 16
#define MAX_QPS 32

/* Resident set growth allowed between the first progress line and the end */
#define RSS_SLACK_KIB (4 * 1024)
/* DPDK heap growth allowed over the same span */
#define HEAP_SLACK_BYTES (256 * 1024)

#if defined(__SANITIZE_ADDRESS__)
#define SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_ASAN 1
#endif
#endif

static struct soak_worker *workers[MAX_WORKERS];
static unsigned int nworkers;

static void
usage(void)
{
	fprintf(stderr,
		"usage: droce-soak [--seconds N] [--seed S] [--progress SECS]\n"
		"                  [--workdir DIR] [--only rc,uc,ud,xrc,srq]\n"
		"                  [--faults ARGS] [--rc N] [--timeout T]\n"
		"  --faults: net_fault's arguments for both ports (default "
		DEFAULT_FAULTS ")\n");
}

static int
parse_kinds(const char *arg, unsigned int *kinds)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int k;

	*kinds = 0;
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < SOAK_KIND_MAX; k++)
			if (strcmp(tok, soak_kind_name(k)) == 0)
				break;
		if (k == SOAK_KIND_MAX) {
			fprintf(stderr, "droce-soak: no kind %s\n", tok);
			free(copy);
			return -1;
		}
		*kinds |= 1u << k;
	}
	free(copy);
	return *kinds != 0 ? 0 : -1;
}

static int
parse(int argc, char **argv, struct soak_opts *o)
{
	static const struct option longs[] = {
		{ "seconds", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "progress", required_argument, NULL, 'p' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "only", required_argument, NULL, 'o' },
		{ "faults", required_argument, NULL, 'f' },
		{ "rc", required_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->seconds = 60;
	o->seed = 1;
	o->progress = 10;
	o->workdir = "droce-soak.work";
	o->faults = DEFAULT_FAULTS;
	o->kinds = (1u << SOAK_KIND_MAX) - 1;
	o->rc_workers = 2;
	o->timeout = DEFAULT_TIMEOUT;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 't':
			o->seconds = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			o->seed = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'p':
			o->progress = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'w':
			o->workdir = optarg;
			break;
		case 'o':
			if (parse_kinds(optarg, &o->kinds) != 0)
				return -1;
			break;
		case 'f':
			o->faults = optarg;
			break;
		case 'r':
			o->rc_workers = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'T':
			o->timeout = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		default:
			return -1;
		}
	}
	if (optind != argc || o->seconds == 0 || o->progress == 0 ||
	    o->rc_workers == 0 || o->rc_workers > 8 || o->timeout == 0 ||
	    o->timeout > 31)
		return -1;
	return 0;
}

static int
make_workers(const struct soak_opts *o)
{
	unsigned int k, i, n;

	for (k = 0; k < SOAK_KIND_MAX; k++) {
		if (!(o->kinds & (1u << k)))
			continue;
		n = k == SOAK_RC ? o->rc_workers : 1;
		for (i = 0; i < n; i++) {
			struct soak_worker *w = soak_worker_create(k, nworkers,
								   o->seed);

			if (w == NULL)
				return -1;
			workers[nworkers++] = w;
		}
	}
	return 0;
}

/* The tallies of every worker, summed by kind. */
static void
tallies(struct soak_tally t[SOAK_KIND_MAX])
{
	unsigned int i, j;

	memset(t, 0, SOAK_KIND_MAX * sizeof(*t));
	for (i = 0; i < nworkers; i++) {
		struct soak_tally one;
		uint64_t *to = (uint64_t *)&t[soak_worker_kind(workers[i])];
		const uint64_t *from = (const uint64_t *)&one;

		soak_worker_tally(workers[i], &one);
		for (j = 0; j < sizeof(one) / sizeof(uint64_t); j++)
			to[j] += from[j];
	}
}

static void
progress_line(uint64_t elapsed_ms, unsigned int kinds)
{
	struct soak_tally t[SOAK_KIND_MAX];
	unsigned int k;

	tallies(t);
	printf("[%5llu s]", (unsigned long long)(elapsed_ms / 1000));
	for (k = 0; k < SOAK_KIND_MAX; k++)
		if (kinds & (1u << k))
			printf(" %s %llu/%.0fM", soak_kind_name(k),
			       (unsigned long long)t[k].done,
			       (double)t[k].bytes / (1 << 20));
	printf(" | mbufs %u rss %.1fM heap %.1fM\n", soak_mbufs_in_use(),
	       (double)soak_rss_kib() / 1024,
	       (double)soak_heap_bytes() / (1 << 20));
	fflush(stdout);
}

static void
summary(double secs, unsigned int kinds)
{
	struct soak_tally t[SOAK_KIND_MAX], all;
	unsigned int k, op;

	tallies(t);
	memset(&all, 0, sizeof(all));
	printf("\n%-5s %10s %10s %10s %9s %9s %8s %8s %8s %8s\n", "kind",
	       "posted", "checked", "MiB", "msg/s", "MiB/s", "lost",
	       "partial", "dups", "reorder");
	for (k = 0; k < SOAK_KIND_MAX; k++) {
		if (!(kinds & (1u << k)))
			continue;
		printf("%-5s %10llu %10llu %10.1f %9.0f %9.1f %8llu %8llu "
		       "%8llu %8llu\n", soak_kind_name(k),
		       (unsigned long long)t[k].posted,
		       (unsigned long long)t[k].done,
		       (double)t[k].bytes / (1 << 20), t[k].done / secs,
		       (double)t[k].bytes / (1 << 20) / secs,
		       (unsigned long long)t[k].lost,
		       (unsigned long long)t[k].partial,
		       (unsigned long long)t[k].dups,
		       (unsigned long long)t[k].reordered);
		all.posted += t[k].posted;
		all.done += t[k].done;
		all.bytes += t[k].bytes;
	}
	printf("%-5s %10llu %10llu %10.1f %9.0f %9.1f\n", "all",
	       (unsigned long long)all.posted, (unsigned long long)all.done,
	       (double)all.bytes / (1 << 20), all.done / secs,
	       (double)all.bytes / (1 << 20) / secs);
	for (k = 0; k < SOAK_KIND_MAX; k++) {
		if (!(kinds & (1u << k)))
			continue;
		printf("%-5s", soak_kind_name(k));
		for (op = 0; op < SOAK_NOPS; op++)
			if (t[k].ops[op] != 0)
				printf(" %s %llu", droce_wr_info(op)->name,
				       (unsigned long long)t[k].ops[op]);
		if (t[k].probes != 0)
			printf(" (probes %llu)",
			       (unsigned long long)t[k].probes);
		printf("\n");
	}
}

/* The QPs of every worker on device @p dev. */
static unsigned int
all_qps(int dev, struct ibv_qp **qps)
{
	unsigned int i, n = 0;

	for (i = 0; i < nworkers; i++)
		n += soak_worker_qps(workers[i], dev, qps + n, MAX_QPS - n);
	return n;
}

int
main(int argc, char **argv)
{
	struct ibv_qp *qp0[MAX_QPS], *qp1[MAX_QPS];
	struct ibv_qp **qps[2] = { qp0, qp1 };
	unsigned int nqps[2], bad = 0, i, mbufs0, mbufs;
	struct soak_port_books books[2];
	uint64_t start, next, end, rss_first = 0, rss_end, heap_first = 0;
	uint64_t heap_end;
	struct soak_opts o;
	double secs;

	if (parse(argc, argv, &o) != 0) {
		usage();
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("droce-soak: %u s, seed %u, faults %s on both ports, "
	       "workdir %s\n", o.seconds, o.seed, o.faults, o.workdir);
	if (ep_fault_config(o.workdir, "soak", 9, o.faults, o.seed) != 0) {
		perror("droce-soak: config");
		return 1;
	}
	if (soak_books_open() != 0)
		return 1;
	usleep(300 * 1000);
	mbufs0 = soak_mbufs_in_use();
	soak_qp_timeout = (uint8_t)o.timeout;
	if (make_workers(&o) != 0)
		return 1;
	nqps[0] = all_qps(0, qp0);
	nqps[1] = all_qps(1, qp1);
	for (i = 0; i < nworkers; i++)
		if (soak_worker_start(workers[i]) != 0) {
			fprintf(stderr, "droce-soak: no thread\n");
			return 1;
		}
	printf("%u workers, %u QPs on droce0, %u on droce1; mbufs in use "
	       "%u\n", nworkers, nqps[0], nqps[1], mbufs0);

	start = soak_now_ms();
	end = start + (uint64_t)o.seconds * 1000;
	next = start + (uint64_t)o.progress * 1000;
	while (!soak_failed() && soak_now_ms() < end) {
		usleep(100 * 1000);
		if (soak_now_ms() < next)
			continue;
		next += (uint64_t)o.progress * 1000;
		if (rss_first == 0) {
			rss_first = soak_rss_kib();
			heap_first = soak_heap_bytes();
		}
		progress_line(soak_now_ms() - start, o.kinds);
	}
	secs = (double)(soak_now_ms() - start) / 1000;
	soak_stop_posting();
	for (i = 0; i < nworkers; i++)
		soak_worker_join(workers[i]);
	if (rss_first == 0) {
		/* a run shorter than its progress interval */
		rss_first = soak_rss_kib();
		heap_first = soak_heap_bytes();
	}
	progress_line(soak_now_ms() - start, o.kinds);
	summary(secs, o.kinds);

	/* the books, once no frame moves */
	if (soak_books_quiesce() != 0) {
		soak_fail("the frames never stopped moving");
	} else if (soak_books_read(books, qps, nqps) != 0) {
		soak_fail("cannot read the counters");
	} else {
		bad = soak_books_reconcile(books);
		if (bad != 0)
			soak_fail("%u identities of the books do not hold",
				  bad);
	}

	/* memory: the pool as before, the process no larger */
	mbufs = soak_mbufs_in_use();
	rss_end = soak_rss_kib();
	heap_end = soak_heap_bytes();
	printf("\nmemory:\n  mbufs in use %u, before the QPs %u %s\n", mbufs,
	       mbufs0, mbufs == mbufs0 ? "ok" : "MISMATCH");
	if (mbufs != mbufs0)
		soak_fail("%u mbufs in use, %u before", mbufs, mbufs0);
	printf("  rss %.1f MiB at the first progress line, %.1f MiB at the "
	       "end (%+.1f)", (double)rss_first / 1024,
	       (double)rss_end / 1024,
	       ((double)rss_end - (double)rss_first) / 1024);
#ifdef SOAK_ASAN
	/* ASan's quarantine holds freed memory: the RSS is not the app's */
	printf(" (not checked under ASan)\n");
#else
	printf(" %s\n", rss_end <= rss_first + RSS_SLACK_KIB ? "ok" :
	       "GREW");
	if (rss_end > rss_first + RSS_SLACK_KIB)
		soak_fail("the resident set grew by %llu KiB",
			  (unsigned long long)(rss_end - rss_first));
#endif
	printf("  DPDK heap %.2f MiB, then %.2f MiB %s\n",
	       (double)heap_first / (1 << 20), (double)heap_end / (1 << 20),
	       heap_end <= heap_first + HEAP_SLACK_BYTES ? "ok" : "GREW");
	if (heap_end > heap_first + HEAP_SLACK_BYTES)
		soak_fail("the DPDK heap grew by %llu bytes",
			  (unsigned long long)(heap_end - heap_first));

	/* the atomic models are checked as the workers go */
	for (i = 0; i < nworkers; i++)
		soak_worker_destroy(workers[i]);
	usleep(300 * 1000);
	mbufs = soak_mbufs_in_use();
	printf("  mbufs in use once every QP is gone %u %s\n", mbufs,
	       mbufs == mbufs0 ? "ok" : "MISMATCH");
	if (mbufs != mbufs0)
		soak_fail("%u mbufs in use after, %u before", mbufs, mbufs0);
	soak_books_close();

	if (soak_failed()) {
		soak_print_failures();
		printf("droce-soak: FAILED\n");
		return 1;
	}
	printf("droce-soak: passed\n");
	return 0;
}
