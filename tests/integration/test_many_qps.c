/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Many QPs at once: 16384 RC pairs between droce0 and droce1, every one
 * carrying messages of its own at the same time (WRITE, SEND, READ), each
 * checked; QPNs distinct; the QPs, idle again, leave the engine's pass;
 * the memory a QP takes reported and bounded; everything given back when
 * they are destroyed. QPs waiting for answers that never come sleep on
 * the timer wheel and still time out on time. And a device full to its
 * last slot refuses one QP more, then takes one again.
 */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <droce.h>

#include "harness.h"

#define PAIRS 16384u
#define SLOT 64u                   /* bytes each pair moves per message */
#define AREA (PAIRS * SLOT)        /* one area of a buffer: a slot a pair */
#define BUF (4 * AREA)
#define ROUNDS 3u
/* what a QP may take besides its queues (droce's records of it and its
 * READ/atomic resources, 16 of them here) */
#define STATE_BUDGET 4096u

static struct ep_opts opts;
static struct ep a, b;
static struct ibv_qp **qa, **qb;

static struct ibv_qp *
small_qp(struct ep *e)
{
	struct ibv_qp_init_attr qia = {
		.send_cq = e->scq, .recv_cq = e->rcq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 0 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(e->pd, &qia);
}

/* qa[i] on droce0 and qb[i] on droce1 made and joined, i < @p n. */
static void
connect_pairs(unsigned int n, const struct ep_opts *o)
{
	struct ep ea = a, eb = b;
	unsigned int i;

	for (i = 0; i < n; i++) {
		qa[i] = small_qp(&a);
		qb[i] = small_qp(&b);
		assert_non_null(qa[i]);
		assert_non_null(qb[i]);
		ea.qp = qa[i];
		eb.qp = qb[i];
		assert_int_equal(ep_connect(&ea, &eb, o), 0);
		assert_int_equal(ep_connect(&eb, &ea, o), 0);
	}
}

/* Wait for @p n completions on @p cq, each successful, of opcode @p op;
 * mark each pair's in @p seen (by wr_id's low bits), once. */
static void
reap(struct ibv_cq *cq, unsigned int n, enum ibv_wc_opcode op,
     struct ibv_qp **qps, uint8_t *seen)
{
	struct ibv_wc wc[64];
	uint64_t end = ep_now_ms() + 60000;
	unsigned int got = 0;
	int k, i;

	memset(seen, 0, PAIRS);
	while (got < n) {
		k = ibv_poll_cq(cq, 64, wc);
		assert_true(k >= 0);
		for (i = 0; i < k; i++) {
			uint32_t p = (uint32_t)(wc[i].wr_id & 0xffffffff);

			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
			assert_int_equal(wc[i].opcode, op);
			assert_true(p < PAIRS);
			assert_int_equal(wc[i].qp_num, qps[p]->qp_num);
			assert_int_equal(seen[p], 0);
			seen[p] = 1;
		}
		got += (unsigned int)k;
		if (k == 0)
			assert_true(ep_now_ms() < end);
	}
}

static int
cmp_u32(const void *x, const void *y)
{
	uint32_t u = *(const uint32_t *)x, v = *(const uint32_t *)y;

	return u < v ? -1 : u > v;
}

static void
test_16384_pairs(void **state)
{
	struct droce_resources r0, r1, q0;
	uint32_t *qpns = calloc(2 * PAIRS, sizeof(*qpns));
	uint8_t *seen = calloc(PAIRS, 1);
	size_t heap0 = ep_heap_allocated();
	uint64_t t0 = ep_now_ms(), t_up, t_traffic;
	struct ep ea;
	unsigned int i, round;

	(void)state;
	assert_non_null(qpns);
	assert_non_null(seen);
	assert_int_equal(droce_query_resources(a.ctx, &q0), 0);
	connect_pairs(PAIRS, &opts);
	for (i = 0; i < PAIRS; i++) {
		qpns[i] = qa[i]->qp_num;
		qpns[PAIRS + i] = qb[i]->qp_num;
	}
	t_up = ep_now_ms();
	/* a QPN may repeat between the devices, not within one */
	qsort(qpns, PAIRS, sizeof(*qpns), cmp_u32);
	qsort(qpns + PAIRS, PAIRS, sizeof(*qpns), cmp_u32);
	for (i = 1; i < 2 * PAIRS; i++)
		assert_true(i == PAIRS || qpns[i] != qpns[i - 1]);

	for (round = 0; round < ROUNDS; round++) {
		struct ibv_sge sge;
		struct ibv_send_wr wr[2], *bad;
		struct ibv_recv_wr rwr, *rbad;

		fill_pattern(a.buf, 2 * AREA, round);
		memset(b.buf, 0, 2 * AREA);
		for (i = 0; i < PAIRS; i++) {
			/* b: a receive for the SEND, in b's second area */
			sge = (struct ibv_sge){
				.addr = (uintptr_t)b.buf + AREA + i * SLOT,
				.length = SLOT, .lkey = b.mr->lkey };
			rwr = (struct ibv_recv_wr){ .wr_id = i,
				.sg_list = &sge, .num_sge = 1 };
			assert_int_equal(ibv_post_recv(qb[i], &rwr, &rbad), 0);
		}
		for (i = 0; i < PAIRS; i++) {
			/* a: a WRITE of a's first area's slot into b's, then
			 * a SEND of the second's, which completes both */
			struct ibv_sge s[2] = {
				{ .addr = (uintptr_t)a.buf + i * SLOT,
				  .length = SLOT, .lkey = a.mr->lkey },
				{ .addr = (uintptr_t)a.buf + AREA + i * SLOT,
				  .length = SLOT, .lkey = a.mr->lkey },
			};

			memset(wr, 0, sizeof(wr));
			wr[0].wr_id = (uint64_t)round << 32 | i;
			wr[0].sg_list = &s[0];
			wr[0].num_sge = 1;
			wr[0].opcode = IBV_WR_RDMA_WRITE;
			wr[0].wr.rdma.remote_addr = (uintptr_t)b.buf + i * SLOT;
			wr[0].wr.rdma.rkey = b.mr->rkey;
			wr[0].next = &wr[1];
			wr[1].wr_id = (uint64_t)round << 32 | i;
			wr[1].sg_list = &s[1];
			wr[1].num_sge = 1;
			wr[1].opcode = IBV_WR_SEND;
			wr[1].send_flags = IBV_SEND_SIGNALED;
			assert_int_equal(ibv_post_send(qa[i], wr, &bad), 0);
		}
		reap(a.scq, PAIRS, IBV_WC_SEND, qa, seen);
		reap(b.rcq, PAIRS, IBV_WC_RECV, qb, seen);
		assert_memory_equal(b.buf, a.buf, 2 * AREA);
	}
	/* a READ on every pair: b's first area back into a's third */
	for (i = 0; i < PAIRS; i++) {
		ea = a;
		ea.qp = qa[i];
		assert_int_equal(ep_post(&ea, IBV_WR_RDMA_READ, i,
					 2 * AREA + i * SLOT, SLOT, &b, i * SLOT,
					 IBV_SEND_SIGNALED), 0);
	}
	reap(a.scq, PAIRS, IBV_WC_RDMA_READ, qa, seen);
	assert_memory_equal(a.buf + 2 * AREA, b.buf, AREA);
	t_traffic = ep_now_ms();

	/* idle now: out of the pass; what each takes */
	usleep(50 * 1000);
	assert_int_equal(droce_query_resources(a.ctx, &r0), 0);
	assert_int_equal(droce_query_resources(b.ctx, &r1), 0);
	assert_int_equal(r0.qps, q0.qps + PAIRS);
	assert_int_equal(r0.qps_active, 0);
	assert_int_equal(r1.qps_active, 0);
	print_message("%u pairs: up in %" PRIu64 " ms, %u rounds of "
		      "WRITE+SEND and a READ on each in %" PRIu64 " ms; per "
		      "QP %" PRIu64 " B of state, %" PRIu64 " B of queues; "
		      "heap +%zu B\n", PAIRS, t_up - t0, ROUNDS,
		      t_traffic - t_up, r0.qp_bytes / r0.qps,
		      r0.qp_queue_bytes / r0.qps, ep_heap_allocated() - heap0);
	assert_true(r0.qp_bytes / r0.qps <= STATE_BUDGET);
	assert_true(r1.qp_bytes / r1.qps <= STATE_BUDGET);

	for (i = 0; i < PAIRS; i++) {
		assert_int_equal(ibv_destroy_qp(qa[i]), 0);
		assert_int_equal(ibv_destroy_qp(qb[i]), 0);
	}
	assert_int_equal(ep_heap_allocated(), heap0);
	free(qpns);
	free(seen);
}

/*
 * QPs whose requests go unanswered (their peers destroyed) sleep on the
 * timer wheel between retransmissions: none is in the pass while they
 * wait, and each still times out on time, retry_cnt + 1 timer expiries
 * and RETRY_EXC_ERR, never before its timeouts have passed.
 */
#define WAITERS 1024u

static void
test_waiting_qps_sleep_on_their_timers(void **state)
{
	struct ep_opts o = opts;
	struct droce_resources r;
	struct ibv_wc wc[64];
	uint8_t *seen = calloc(WAITERS, 1);
	uint64_t t0, t_asleep = 0, t_err = 0, min_ms;
	unsigned int i, got = 0;
	struct ep ea;

	(void)state;
	assert_non_null(seen);
	/* 4.096 us << 16: 268 ms. The QPs must be seen asleep before the
	 * first timeout; sending 1024 WRITEs takes 40 to 57 ms under ASan
	 * with four lcores on two CPUs, more beside another test, and CI
	 * found them still in the pass 57 ms in with 67 ms timeouts. */
	o.timeout = 16;
	o.retry_cnt = 1;
	min_ms = 2 * ((4096ull << o.timeout) / 1000000);
	connect_pairs(WAITERS, &o);
	for (i = 0; i < WAITERS; i++)
		assert_int_equal(ibv_destroy_qp(qb[i]), 0);
	t0 = ep_now_ms();
	for (i = 0; i < WAITERS; i++) {
		ea = a;
		ea.qp = qa[i];
		assert_int_equal(ep_post(&ea, IBV_WR_RDMA_WRITE, i, 0, SLOT, &b,
					 0, IBV_SEND_SIGNALED), 0);
	}
	/* sent, unanswered: out of the pass long before the first timeout */
	while (ep_now_ms() - t0 < min_ms / 2 - 10) {
		assert_int_equal(droce_query_resources(a.ctx, &r), 0);
		if (r.qps_active == 0) {
			t_asleep = ep_now_ms();
			break;
		}
		usleep(1000);
	}
	assert_true(t_asleep != 0);
	while (got < WAITERS) {
		int k = ibv_poll_cq(a.scq, 64, wc), j;

		assert_true(k >= 0);
		for (j = 0; j < k; j++) {
			assert_int_equal(wc[j].status, IBV_WC_RETRY_EXC_ERR);
			assert_true(wc[j].wr_id < WAITERS);
			assert_int_equal(seen[wc[j].wr_id], 0);
			seen[wc[j].wr_id] = 1;
		}
		got += (unsigned int)k;
		if (got == WAITERS)
			t_err = ep_now_ms();
		assert_true(ep_now_ms() - t0 < 10000);
	}
	print_message("%u QPs unanswered: all asleep after %" PRIu64 " ms, "
		      "all failed after %" PRIu64 " ms (two timeouts: %"
		      PRIu64 " ms)\n", WAITERS, t_asleep - t0, t_err - t0,
		      min_ms);
	assert_true(t_err - t0 >= min_ms);
	for (i = 0; i < WAITERS; i++) {
		struct droce_qp_counters c;

		assert_int_equal(droce_query_qp_counters(qa[i], &c), 0);
		assert_int_equal(c.timeouts, o.retry_cnt + 1);
		assert_int_equal(ibv_destroy_qp(qa[i]), 0);
	}
	free(seen);
}

/* droce0 filled: its QPs reach max_qp (QP1 aside), and one more is
 * refused with ENOMEM; one given back, one more is made. */
static void
test_full_device(void **state)
{
	struct ibv_device_attr da;
	struct droce_resources r;
	struct ibv_qp **qps;
	unsigned int i, n = 0;

	(void)state;
	assert_int_equal(ibv_query_device(a.ctx, &da), 0);
	assert_int_equal(da.max_qp, 32768);
	qps = calloc((size_t)da.max_qp, sizeof(*qps));
	assert_non_null(qps);
	errno = 0;
	while (n < (unsigned int)da.max_qp &&
	       (qps[n] = small_qp(&a)) != NULL)
		n++;
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(droce_query_resources(a.ctx, &r), 0);
	/* the fixture's QP and the ones made: every slot (QP1 has none) */
	assert_int_equal(r.qps - (r.qps == r.qps_max), (uint64_t)da.max_qp);
	assert_int_equal(n + 1, (unsigned int)da.max_qp);
	assert_int_equal(ibv_destroy_qp(qps[n / 2]), 0);
	qps[n / 2] = small_qp(&a);
	assert_non_null(qps[n / 2]);
	for (i = 0; i < n; i++)
		assert_int_equal(ibv_destroy_qp(qps[i]), 0);
	free(qps);
}

static int
setup(void **state)
{
	(void)state;
	ep_opts_default(&opts);
	opts.cqe = 2 * PAIRS + 64;
	qa = calloc(PAIRS, sizeof(*qa));
	qb = calloc(PAIRS, sizeof(*qb));
	if (qa == NULL || qb == NULL)
		return -1;
	return ep_pair(&a, &b, BUF, &opts);
}

static int
teardown(void **state)
{
	(void)state;
	ep_close(&a);
	ep_close(&b);
	free(qa);
	free(qb);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_16384_pairs),
		cmocka_unit_test(test_waiting_qps_sleep_on_their_timers),
		cmocka_unit_test(test_full_device),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
