/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The work queue application threads post into (struct droce_wq): claims,
 * publication in posting order, the cap counted against what pollers
 * retired, and above all that a poster stopped between its claim and its
 * publication (preempted, as application threads can be) holds back no
 * other poster: they post and return, and the engine sees their WQEs once
 * the stopped one has published its own, in claim order.
 */

#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "droce_engine.h"

#define SLOTS 256
#define STRIDE 64

/* What a test WQE holds: who posted it, its number in that poster's
 * sequence, and a mark written last (it must be seen once published). */
struct wqe {
	uint32_t poster;
	uint32_t seq;
	uint32_t mark;
};

#define MARK 0x5a5a5a5au

static struct droce_wq *
wq_new(uint32_t max_wr)
{
	struct droce_wq *wq = aligned_alloc(RTE_CACHE_LINE_SIZE,
					    sizeof(*wq));

	assert_non_null(wq);
	memset(wq, 0, sizeof(*wq));
	wq->slots = aligned_alloc(RTE_CACHE_LINE_SIZE, SLOTS * STRIDE);
	assert_non_null(wq->slots);
	memset(wq->slots, 0, SLOTS * STRIDE);
	wq->mask = SLOTS - 1;
	wq->stride = STRIDE;
	wq->max_wr = max_wr;
	return wq;
}

static void
wq_free(struct droce_wq *wq)
{
	free(wq->slots);
	free(wq);
}

static uint32_t
published(struct droce_wq *wq)
{
	return __atomic_load_n(&wq->prod_tail, __ATOMIC_ACQUIRE);
}

static void
fill(struct droce_wq *wq, uint32_t idx, uint32_t poster, uint32_t seq)
{
	struct wqe *w = droce_wq_slot(wq, idx);

	w->poster = poster;
	w->seq = seq;
	w->mark = MARK;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Claims and publications of one poster, in order. */
static void
test_claim_publish(void **state)
{
	struct droce_wq *wq = wq_new(16);
	uint32_t head = 99;

	(void)state;
	assert_int_equal(droce_wq_claim(wq, 3, &head), 3);
	assert_int_equal(head, 0);
	/* claimed is not published */
	assert_int_equal(published(wq), 0);
	droce_wq_publish(wq);
	assert_int_equal(published(wq), 3);
	assert_int_equal(droce_wq_claim(wq, 2, &head), 2);
	assert_int_equal(head, 3);
	droce_wq_publish(wq);
	assert_int_equal(published(wq), 5);
	wq_free(wq);
}

/* max_wr counts what is posted and not yet retired by a poll. */
static void
test_cap(void **state)
{
	struct droce_wq *wq = wq_new(8);
	uint32_t head;

	(void)state;
	assert_int_equal(droce_wq_claim(wq, 10, &head), 8);
	droce_wq_publish(wq);
	assert_int_equal(droce_wq_claim(wq, 1, &head), 0);
	/* consumed by the engine is not enough: retired by a poll is */
	droce_wq_retire(wq, 3);
	assert_int_equal(droce_wq_claim(wq, 5, &head), 3);
	assert_int_equal(head, 8);
	droce_wq_publish(wq);
	/* retired only moves forward */
	droce_wq_retire(wq, 2);
	assert_int_equal(wq->retired, 3);
	assert_int_equal(published(wq), 11);
	wq_free(wq);
}

struct stopped_poster {
	struct droce_wq *wq;
	sem_t claimed;          /* it has its slots */
	sem_t go;               /* it may publish */
	uint32_t head;
};

/* Claim 4 slots, fill them, then stop until told to publish. */
static void *
stopped_post(void *arg)
{
	struct stopped_poster *p = arg;
	uint32_t i;

	assert_int_equal(droce_wq_claim(p->wq, 4, &p->head), 4);
	for (i = 0; i < 4; i++)
		fill(p->wq, p->head + i, 0, i);
	sem_post(&p->claimed);
	sem_wait(&p->go);
	droce_wq_publish(p->wq);
	return NULL;
}

struct poster {
	struct droce_wq *wq;
	uint32_t id;
	uint32_t n;             /* WQEs to post, one at a time */
	uint32_t done;          /* posted and returned */
};

static void *
post_n(void *arg)
{
	struct poster *p = arg;
	uint32_t i, head = 0;

	for (i = 0; i < p->n; i++) {
		assert_int_equal(droce_wq_claim(p->wq, 1, &head), 1);
		fill(p->wq, head, p->id, i);
		droce_wq_publish(p->wq);
		__atomic_store_n(&p->done, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * A poster stopped between claim and publication: two others post 50
 * WQEs each and return, without waiting for it; the engine sees nothing
 * past the stopped claim meanwhile. Once it publishes, all 104 are
 * there, the stopped poster's first, each poster's in its order.
 */
static void
test_stopped_poster(void **state)
{
	struct droce_wq *wq = wq_new(SLOTS);
	struct stopped_poster sp = { .wq = wq };
	struct poster p[2] = {
		{ .wq = wq, .id = 1, .n = 50 },
		{ .wq = wq, .id = 2, .n = 50 },
	};
	pthread_t ts, t[2];
	uint32_t next_seq[3] = { 0, 0, 0 };
	uint64_t deadline;
	uint32_t i;

	(void)state;
	sem_init(&sp.claimed, 0, 0);
	sem_init(&sp.go, 0, 0);
	assert_int_equal(pthread_create(&ts, NULL, stopped_post, &sp), 0);
	sem_wait(&sp.claimed);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, post_n, &p[i]),
				 0);
	/* the others finish on their own, within a second */
	deadline = now_ms() + 1000;
	while ((__atomic_load_n(&p[0].done, __ATOMIC_ACQUIRE) < 50 ||
		__atomic_load_n(&p[1].done, __ATOMIC_ACQUIRE) < 50) &&
	       now_ms() < deadline) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	if (p[0].done < 50 || p[1].done < 50)
		fail_msg("posters held back by a stopped one: %u and %u of "
			 "50 posted", p[0].done, p[1].done);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	/* nothing after the stopped claim is visible yet */
	assert_int_equal(published(wq), sp.head);
	sem_post(&sp.go);
	pthread_join(ts, NULL);
	assert_int_equal(published(wq), 104);
	for (i = 0; i < 104; i++) {
		const struct wqe *w = droce_wq_slot(wq, i);

		assert_int_equal(w->mark, MARK);
		assert_true(w->poster <= 2);
		/* the stopped poster claimed first */
		assert_int_equal(w->poster == 0, i < 4);
		assert_int_equal(w->seq, next_seq[w->poster]);
		next_seq[w->poster]++;
	}
	sem_destroy(&sp.claimed);
	sem_destroy(&sp.go);
	wq_free(wq);
}

struct consumer {
	struct droce_wq *wq;
	uint32_t total;
	uint32_t nposters;
	const char *err;
};

/*
 * The engine's side: read what is published, check it is filled and in
 * each poster's order, retire it (a poll would, later).
 */
static void *
consume(void *arg)
{
	struct consumer *c = arg;
	uint32_t next_seq[8] = { 0 };
	uint32_t cons = 0;
	uint64_t deadline = now_ms() + 20000;

	while (cons < c->total) {
		uint32_t prod = published(c->wq);

		if (now_ms() > deadline) {
			c->err = "stuck: posts never published";
			return NULL;
		}
		while (cons != prod) {
			struct wqe *w = droce_wq_slot(c->wq, cons);

			if (w->mark != MARK || w->poster >= c->nposters ||
			    w->seq != next_seq[w->poster]) {
				c->err = "a WQE published before it was "
					"filled, or out of its poster's order";
				return NULL;
			}
			next_seq[w->poster]++;
			w->mark = 0;
			cons++;
		}
		droce_wq_retire(c->wq, cons);
	}
	return NULL;
}

/*
 * Four posters and a consumer at once, the posters yielding now and then
 * between claim and publication: every WQE arrives once, filled, in its
 * poster's order, however their claims and publications interleave.
 */
static void *
post_yielding(void *arg)
{
	struct poster *p = arg;
	uint32_t i, head = 0;

	for (i = 0; i < p->n; ) {
		uint32_t k, n = droce_wq_claim(p->wq,
					       RTE_MIN(1 + i % 3, p->n - i),
					       &head);

		if (n == 0) {
			sched_yield();
			continue;
		}
		for (k = 0; k < n; k++)
			fill(p->wq, head + k, p->id, i + k);
		if (i % 7 == 0)
			sched_yield();
		droce_wq_publish(p->wq);
		i += n;
	}
	return NULL;
}

static void
test_posters_and_consumer(void **state)
{
	struct droce_wq *wq = wq_new(32);
	struct poster p[4];
	struct consumer c = { .wq = wq, .total = 4 * 10000, .nposters = 4 };
	pthread_t t[4], tc;
	uint32_t i;

	(void)state;
	assert_int_equal(pthread_create(&tc, NULL, consume, &c), 0);
	for (i = 0; i < 4; i++) {
		p[i] = (struct poster){ .wq = wq, .id = i, .n = 10000 };
		assert_int_equal(pthread_create(&t[i], NULL, post_yielding,
						&p[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pthread_join(tc, NULL);
	if (c.err != NULL)
		fail_msg("%s", c.err);
	assert_int_equal(published(wq), c.total);
	wq_free(wq);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claim_publish),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_stopped_poster),
		cmocka_unit_test(test_posters_and_consumer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
