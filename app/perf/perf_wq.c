/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-perf wq: the work queue alone, between a posting thread and a
 * consuming one on another core, with no engine, for WQEs of -s bytes.
 * The same traffic three ways:
 *
 *  - droce_wq, droce's own: the poster builds the WQE in its slot, the
 *    consumer reads it there (the engine keeps it there until the WQE is
 *    completed and resends from it) and the slot is freed behind it;
 *  - rte_ring in RTS mode (posters never wait for one another): the
 *    poster builds the WQE on its stack and enqueues a copy, the consumer
 *    dequeues it into memory of its own, which a slot freed at dequeue
 *    makes necessary;
 *  - rte_ring in HTS mode with the zero-copy API: built in ring memory,
 *    copied out at dequeue; a poster stopped between start and finish
 *    holds back every other poster (droce_wq's and RTS's do not);
 *  - in place with a sequence a slot: claimed as droce_wq's are, each
 *    slot published by a release store of its index + 1 into its last
 *    word, which the consumer reads in the slot itself. No shared tail:
 *    one locked instruction a post instead of droce_wq's two, and no
 *    line besides the slot's that both cores write or read; a poster
 *    stopped before its store holds back only the slots after its own.
 *
 * The figure is WQEs through per second: the price of each way's copies
 * and synchronisation, which the application pays on every post.
 */

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek_zc.h>

#include "droce_engine.h"
#include "perf.h"

#define WQ_SLOTS 1024
#define WQ_ROUNDS 7

enum wq_kind { WQ_DROCE, WQ_RTS, WQ_HTS_ZC, WQ_SEQ, WQ_KINDS };

static const char *const kind_name[WQ_KINDS] = {
	[WQ_DROCE] = "droce_wq (in place)",
	[WQ_RTS] = "rte_ring RTS (copies)",
	[WQ_HTS_ZC] = "rte_ring HTS zero-copy",
	[WQ_SEQ] = "in place, a sequence a slot",
};

struct wq_run {
	enum wq_kind kind;
	uint32_t size;             /* bytes per WQE, a multiple of 8 */
	uint64_t n;                /* WQEs to pass */
	struct droce_wq *wq;
	struct rte_ring *ring;
	uint64_t sum;              /* what the consumer read */
};

/* A WQE as a poster writes it: every 8 bytes of it. */
static inline void
build(uint64_t *w, uint32_t words, uint64_t seq)
{
	uint32_t i;

	for (i = 0; i < words; i++)
		w[i] = seq + i;
}

/* What the engine reads of it: its first and last words. */
static inline uint64_t
look(const uint64_t *w, uint32_t words)
{
	return w[0] + w[words - 1];
}

static void *
consume(void *arg)
{
	struct wq_run *r = arg;
	uint32_t words = r->size / 8;
	uint64_t *mine = aligned_alloc(64, RTE_ALIGN_CEIL(r->size, 64));
	uint64_t got = 0, sum = 0;
	uint32_t cons = 0;

	if (mine == NULL)
		return NULL;
	while (got < r->n) {
		if (r->kind == WQ_DROCE) {
			uint32_t prod = __atomic_load_n(&r->wq->prod_tail,
							__ATOMIC_ACQUIRE);

			while (cons != prod) {
				sum += look(droce_wq_slot(r->wq, cons), words);
				cons++;
				got++;
			}
			droce_wq_retire(r->wq, cons);
		} else if (r->kind == WQ_SEQ) {
			const uint64_t *w = droce_wq_slot(r->wq, cons);

			while (__atomic_load_n(&w[words - 1],
					       __ATOMIC_ACQUIRE) ==
			       (uint64_t)cons + 1) {
				sum += look(w, words);
				cons++;
				got++;
				w = droce_wq_slot(r->wq, cons);
			}
			droce_wq_retire(r->wq, cons);
		} else if (r->kind == WQ_RTS) {
			if (rte_ring_dequeue_elem(r->ring, mine,
						  r->size) == 0) {
				sum += look(mine, words);
				got++;
			}
		} else {
			struct rte_ring_zc_data zc;

			if (rte_ring_dequeue_zc_burst_elem_start(r->ring,
					r->size, 1, &zc, NULL) == 1) {
				memcpy(mine, zc.ptr1, r->size);
				rte_ring_dequeue_zc_elem_finish(r->ring, 1);
				sum += look(mine, words);
				got++;
			}
		}
	}
	r->sum = sum;
	free(mine);
	return NULL;
}

static void
produce(struct wq_run *r)
{
	uint32_t words = r->size / 8;
	uint64_t *stack = aligned_alloc(64, RTE_ALIGN_CEIL(r->size, 64));
	uint64_t i = 0;

	if (stack == NULL)
		return;
	while (i < r->n) {
		if (r->kind == WQ_DROCE) {
			uint32_t head;

			if (droce_wq_claim(r->wq, 1, &head) == 0)
				continue;
			build(droce_wq_slot(r->wq, head), words, i);
			droce_wq_publish(r->wq);
			i++;
		} else if (r->kind == WQ_SEQ) {
			uint32_t head;
			uint64_t *w;

			if (droce_wq_claim(r->wq, 1, &head) == 0)
				continue;
			w = droce_wq_slot(r->wq, head);
			build(w, words - 1, i);
			/* (a slot's word from the lap before differs) */
			__atomic_store_n(&w[words - 1], (uint64_t)head + 1,
					 __ATOMIC_RELEASE);
			i++;
		} else if (r->kind == WQ_RTS) {
			build(stack, words, i);
			if (rte_ring_enqueue_elem(r->ring, stack,
						  r->size) == 0)
				i++;
		} else {
			struct rte_ring_zc_data zc;

			if (rte_ring_enqueue_zc_burst_elem_start(r->ring,
					r->size, 1, &zc, NULL) != 1)
				continue;
			build(zc.ptr1, words, i);
			rte_ring_enqueue_zc_elem_finish(r->ring, 1);
			i++;
		}
	}
	free(stack);
}

static void
pin(pthread_t t, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(t, sizeof(set), &set);
}

/* One kind: its queue, the two threads, the rate. @return WQEs/s. */
static double
run_kind(struct wq_run *r)
{
	pthread_t t;
	double t0, secs;
	void *mem = NULL;
	ssize_t sz;

	if (r->kind == WQ_DROCE || r->kind == WQ_SEQ) {
		r->wq = aligned_alloc(64, sizeof(*r->wq));
		mem = aligned_alloc(64, (size_t)WQ_SLOTS *
				    RTE_ALIGN_CEIL(r->size, 64));
		if (r->wq == NULL || mem == NULL)
			return -1;
		memset(r->wq, 0, sizeof(*r->wq));
		r->wq->slots = mem;
		r->wq->mask = WQ_SLOTS - 1;
		r->wq->stride = RTE_ALIGN_CEIL(r->size, 64);
		/* (no slot's sequence says published before its post) */
		memset(mem, 0, (size_t)WQ_SLOTS * r->wq->stride);
		r->wq->max_wr = WQ_SLOTS;
	} else {
		/* (zero-copy wants HTS or single-thread ends) */
		unsigned int flags = r->kind == WQ_RTS ?
			RING_F_MP_RTS_ENQ | RING_F_SC_DEQ :
			RING_F_MP_HTS_ENQ | RING_F_SC_DEQ;
		sz = rte_ring_get_memsize_elem(r->size, WQ_SLOTS);
		if (sz < 0 || (mem = aligned_alloc(64, (size_t)sz)) == NULL)
			return -1;
		r->ring = mem;
		/* (the element size is given to each call, not kept) */
		if (rte_ring_init(r->ring, "perf_wq", WQ_SLOTS, flags) != 0)
			return -1;
	}
	pthread_create(&t, NULL, consume, r);
	pin(t, 1);
	pin(pthread_self(), 0);
	t0 = perf_now();
	produce(r);
	pthread_join(t, NULL);
	secs = perf_now() - t0;
	free(r->wq);
	r->wq = NULL;
	free(mem);
	return (double)r->n / secs;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The kinds take turns, WQ_ROUNDS times, and each one's median counts:
 * this machine's speed drifts within seconds, and a drift would
 * otherwise land on one kind alone.
 */
int
perf_wq(const struct perf_opts *o)
{
	uint32_t size = RTE_ALIGN_CEIL(RTE_MAX(o->size, 8u), 8);
	uint64_t n = o->iters != 0 ? o->iters : 4000000;
	double rate[WQ_KINDS][WQ_ROUNDS], med[WQ_KINDS];
	enum wq_kind k;
	int round;

	if (size > 4096) {
		fprintf(stderr, "droce-perf wq: WQEs of at most 4096 bytes\n");
		return -1;
	}
	printf(" %u-byte WQEs, %llu each way, a poster and a consumer on "
	       "cores 0 and 1,\n the median of %d turns each\n", size,
	       (unsigned long long)n, WQ_ROUNDS);
	for (round = 0; round < WQ_ROUNDS; round++)
		for (k = 0; k < WQ_KINDS; k++) {
			struct wq_run r = { .kind = k, .size = size, .n = n };

			rate[k][round] = run_kind(&r);
			if (rate[k][round] <= 0)
				return -1;
		}
	printf(" %-28s %10s %10s\n", "queue", "Mwqe/s", "ratio");
	for (k = 0; k < WQ_KINDS; k++) {
		qsort(rate[k], WQ_ROUNDS, sizeof(rate[k][0]), cmp_double);
		med[k] = rate[k][WQ_ROUNDS / 2];
		printf(" %-28s %10.2f %10.2f\n", kind_name[k], med[k] / 1e6,
		       med[k] / med[WQ_DROCE]);
	}
	return 0;
}
