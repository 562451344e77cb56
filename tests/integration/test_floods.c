/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Floods: what a device holds stays within its tables while a peer asks
 * it for more than it can give, and the QPs that do not take part keep
 * completing every message. What a device holds is read with
 * droce_query_resources() (telemetry's /droce/resources): its QPs,
 * memory regions, neighbour entries, frames queued for the port, mbufs
 * of the pool; DPDK's heap and the process's resident size are read
 * beside it.
 *
 *  - an RNR flood: a SEND queue facing a receive queue left empty, with
 *    RNR retries without end and the shortest RNR timer, for seconds;
 *    the SENDs complete in order once receives come;
 *  - UD datagrams to every QPN there is (2^24 of them): each is taken by
 *    the one QP it names with its Q_Key, or dropped and counted;
 *  - thousands of RC QP pairs created, joined, given WRITEs and
 *    destroyed before those complete.
 *
 * Floods of forged frames (duplicate READs, RNR NAKs, ARP storms) are in
 * test_forged.c.
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

#include <rte_malloc.h>

#include <droce.h>

#include "harness.h"

#define BUF (4u << 20)
#define MSG 4096u
#define STEADY (1u << 20)          /* where the steady pair writes */
/* the mbufs a flood may hold beyond a quiet device: a burst in each
 * direction of each port's queues and the lcore's cache, not a count
 * that grows with the flood */
#define MBUF_SLACK 1024u

static struct ep_opts opts;
static struct ep a, b;             /* the steady pair */

/* What a device holds once droce has gone quiet. */
static void
quiet_resources(struct ibv_context *ctx, struct droce_resources *r)
{
	usleep(300 * 1000);
	assert_int_equal(droce_query_resources(ctx, r), 0);
}

/* The highest counts seen of a device's resources while sampling. */
struct peak {
	uint64_t mbufs_in_use;
	uint64_t tx_queued;
	uint64_t neigh;
	uint64_t qps;
};

static void
sample(struct ibv_context *ctx, struct peak *p)
{
	struct droce_resources r;

	assert_int_equal(droce_query_resources(ctx, &r), 0);
	assert_true(r.tx_queued <= r.tx_queued_max);
	assert_true(r.neigh <= r.neigh_max);
	assert_true(r.qps <= r.qps_max);
	assert_true(r.mbufs_in_use <= r.mbufs);
	p->mbufs_in_use = RTE_MAX(p->mbufs_in_use, r.mbufs_in_use);
	p->tx_queued = RTE_MAX(p->tx_queued, r.tx_queued);
	p->neigh = RTE_MAX(p->neigh, r.neigh);
	p->qps = RTE_MAX(p->qps, r.qps);
}

/*
 * One round of the steady pair: a WRITE of MSG bytes of a pattern of
 * @p seed into b, completed and checked.
 */
static void
steady_write(uint32_t seed)
{
	struct ibv_wc wc;

	fill_pattern(a.buf + STEADY, MSG, seed);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, seed, STEADY, MSG, &b,
				 STEADY, IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 10000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, seed);
	assert_memory_equal(b.buf + STEADY, a.buf + STEADY, MSG);
}

static int
setup(void **state)
{
	(void)state;
	ep_opts_default(&opts);
	opts.max_send_wr = 256;
	opts.max_recv_wr = 256;
	opts.cqe = 1024;
	return ep_pair(&a, &b, BUF, &opts);
}

static int
teardown(void **state)
{
	(void)state;
	ep_close(&a);
	ep_close(&b);
	return 0;
}

/* A QP of @p type on @p e's PD and CQs, or NULL. */
static struct ibv_qp *
extra_qp(struct ep *e, enum ibv_qp_type type, uint32_t send_wr,
	 uint32_t recv_wr)
{
	struct ibv_qp_init_attr qia = {
		.send_cq = e->scq, .recv_cq = e->rcq,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = recv_wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type,
	};

	return ibv_create_qp(e->pd, &qia);
}

/* @p e with its QP replaced by @p qp, for the harness's calls. */
static struct ep
with_qp(const struct ep *e, struct ibv_qp *qp)
{
	struct ep x = *e;

	x.qp = qp;
	return x;
}

/* Poll @p cq empty. @return completions read. */
static unsigned int
drain(struct ibv_cq *cq)
{
	struct ibv_wc wc[64];
	unsigned int n = 0;
	int r;

	while ((r = ibv_poll_cq(cq, 64, wc)) > 0)
		n += (unsigned int)r;
	assert_true(r == 0);
	return n;
}

/*
 * SENDs to a QP with no receive WQE, RNR retries without end and the
 * shortest RNR timer: RNR NAKs by the thousand, nothing held for them,
 * the steady pair unharmed; receives posted at last take every SEND, in
 * order.
 */
static void
test_rnr_flood(void **state)
{
	enum { NSEND = 32, SECONDS = 2 };
	struct ep_opts o = opts;
	struct droce_resources q0, q1;
	struct droce_qp_counters cs, cr;
	struct ibv_qp *sq, *rq;
	struct ep s, r;
	struct peak p0 = { 0 }, p1 = { 0 };
	struct ibv_wc wc[NSEND];
	uint64_t end;
	unsigned int i, rounds = 0, got;

	(void)state;
	quiet_resources(a.ctx, &q0);
	quiet_resources(b.ctx, &q1);
	sq = extra_qp(&a, IBV_QPT_RC, NSEND, 1);
	rq = extra_qp(&b, IBV_QPT_RC, 1, NSEND);
	assert_non_null(sq);
	assert_non_null(rq);
	s = with_qp(&a, sq);
	r = with_qp(&b, rq);
	o.rnr_retry = 7;          /* without end */
	o.min_rnr_timer = 1;      /* 0.01 ms */
	assert_int_equal(ep_connect(&s, &r, &o), 0);
	assert_int_equal(ep_connect(&r, &s, &o), 0);

	fill_pattern(a.buf, NSEND * MSG, 7);
	memset(b.buf, 0, NSEND * MSG);
	for (i = 0; i < NSEND; i++)
		assert_int_equal(ep_post(&s, IBV_WR_SEND, i, i * MSG, MSG, NULL,
					 0, IBV_SEND_SIGNALED), 0);
	end = ep_now_ms() + SECONDS * 1000;
	while (ep_now_ms() < end) {
		steady_write(1000 + rounds++);
		sample(a.ctx, &p0);
		sample(b.ctx, &p1);
	}
	assert_int_equal(droce_query_qp_counters(rq, &cr), 0);
	assert_int_equal(droce_query_qp_counters(sq, &cs), 0);
	print_message("rnr flood: %u steady WRITEs, %" PRIu64 " RNR NAKs, "
		      "mbufs in use at most %" PRIu64 "/%" PRIu64 " (quiet %"
		      PRIu64 "/%" PRIu64 ")\n", rounds, cr.rnr_naks_sent,
		      p0.mbufs_in_use, p1.mbufs_in_use, q0.mbufs_in_use,
		      q1.mbufs_in_use);
	assert_true(cr.rnr_naks_sent >= 1000);
	assert_true(cs.rnr_naks_rcvd >= 1000);
	assert_true(rounds >= 100);
	assert_true(p0.mbufs_in_use <= q0.mbufs_in_use + MBUF_SLACK);
	assert_true(p1.mbufs_in_use <= q1.mbufs_in_use + MBUF_SLACK);
	/* nothing completed meanwhile, nothing failed */
	assert_int_equal(ibv_poll_cq(a.scq, 1, wc), 0);
	assert_int_equal(ep_qp_state(sq), IBV_QPS_RTS);

	for (i = 0; i < NSEND; i++)
		assert_int_equal(ep_post_recv(&r, i, i * MSG, MSG), 0);
	got = (unsigned int)ep_poll(a.scq, wc, NSEND, 10000);
	assert_int_equal(got, NSEND);
	for (i = 0; i < NSEND; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
	}
	assert_int_equal(ep_poll(b.rcq, wc, NSEND, 10000), NSEND);
	for (i = 0; i < NSEND; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
	}
	assert_memory_equal(b.buf, a.buf, NSEND * MSG);
	assert_int_equal(ibv_destroy_qp(sq), 0);
	assert_int_equal(ibv_destroy_qp(rq), 0);
}

/*
 * A UD QP of droce0 sends a datagram to every QPN of droce1, QP0 and
 * QP1 and the multicast QPN included, with droce1's UD QP's Q_Key: that
 * QP takes the one to its QPN; every other is dropped and counted, by
 * the device (no QP has the QPN) or by the QP that has it (not UD). No
 * frame is lost on the way: what droce0's port sent, droce1's received.
 */
static void
test_ud_every_qpn(void **state)
{
	enum { QPNS = 1u << 24, DEPTH = 1024, SIGNAL = 256 };
	const uint32_t qkey = 0x11111111;
	struct ibv_qp *uq, *ur;
	struct droce_counters c0, c1, d0, d1;
	struct droce_qp_counters rc0, rc1;
	struct droce_resources q0, q1, e0, e1;
	struct ep_opts o = opts;
	struct ibv_ah *ah;
	struct ep s, r;
	struct ibv_wc wc[64];
	struct peak p1 = { 0 };
	uint64_t t0, sent = 0;
	uint32_t qpn = 0, posted = 0, done = 0;

	(void)state;
	uq = extra_qp(&a, IBV_QPT_UD, DEPTH, 1);
	ur = extra_qp(&b, IBV_QPT_UD, 1, 16);
	assert_non_null(uq);
	assert_non_null(ur);
	assert_int_equal(ud_qp_up(uq, qkey, 0), 0);
	assert_int_equal(ud_qp_up(ur, qkey, 0), 0);
	s = with_qp(&a, uq);
	r = with_qp(&b, ur);
	o.qp_type = IBV_QPT_UD;
	ah = ep_ah(&a, &b, &o);
	assert_non_null(ah);
	assert_int_equal(ep_post_recv(&r, 1, 0, 64 + 40), 0);
	quiet_resources(a.ctx, &q0);
	quiet_resources(b.ctx, &q1);
	assert_int_equal(droce_query_counters(a.ctx, &c0), 0);
	assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &rc0), 0);

	t0 = ep_now_ms();
	while (done < QPNS) {
		int n;

		while (posted - done < DEPTH && qpn < QPNS) {
			/* a completion for every SIGNAL-th: the rest retire
			 * with it */
			unsigned int flags = (qpn + 1) % SIGNAL == 0 ||
					     qpn + 1 == QPNS ?
					     IBV_SEND_SIGNALED : 0;

			assert_int_equal(ep_post_ud(&s, qpn, 0, 0, ah, qpn, qkey,
						    false, 0, flags), 0);
			qpn++;
			posted++;
		}
		n = ibv_poll_cq(a.scq, 64, wc);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++) {
			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
			done = (uint32_t)wc[i].wr_id + 1;
		}
		if ((qpn & 0xfffff) == 0)
			sample(b.ctx, &p1);
		assert_true(ep_now_ms() - t0 < 300000);
	}
	sent = QPNS;
	quiet_resources(a.ctx, &e0);
	quiet_resources(b.ctx, &e1);
	assert_int_equal(droce_query_counters(a.ctx, &d0), 0);
	assert_int_equal(droce_query_counters(b.ctx, &d1), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &rc1), 0);
	print_message("ud to every qpn: %" PRIu64 " datagrams in %" PRIu64
		      " ms; droce1 dropped %" PRIu64 " (no QP), %" PRIu64
		      " (RC QP), mbufs in use at most %" PRIu64 " (quiet %"
		      PRIu64 ")\n", sent, ep_now_ms() - t0,
		      d1.rx_not_ours - c1.rx_not_ours,
		      rc1.rx_dropped - rc0.rx_dropped, p1.mbufs_in_use,
		      q1.mbufs_in_use);

	/* the one to ur's QPN arrived, and nothing else */
	assert_int_equal(ep_poll(b.rcq, wc, 2, 500), 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].src_qp, uq->qp_num);
	/* every frame sent arrived; each dropped one is counted */
	assert_int_equal(d0.tx_drop, c0.tx_drop);
	assert_true(d0.tx_frames - c0.tx_frames >= sent);
	assert_int_equal(d1.rx_frames - c1.rx_frames,
			 d0.tx_frames - c0.tx_frames);
	/* (with several engine lcores, some are lost handed between
	 * them: counted too) */
	assert_int_equal((d1.rx_not_ours - c1.rx_not_ours) +
			 (d1.rx_handoff_drop - c1.rx_handoff_drop) +
			 (rc1.rx_dropped - rc0.rx_dropped) + 1, sent);
	/* nothing held afterwards, nothing much during */
	assert_true(p1.mbufs_in_use <= q1.mbufs_in_use + MBUF_SLACK);
	assert_int_equal(e0.mbufs_in_use, q0.mbufs_in_use);
	assert_int_equal(e1.mbufs_in_use, q1.mbufs_in_use);
	assert_int_equal(e1.qps, q1.qps);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	steady_write(7);

	assert_int_equal(ibv_destroy_ah(ah), 0);
	assert_int_equal(ibv_destroy_qp(uq), 0);
	assert_int_equal(ibv_destroy_qp(ur), 0);
}

/*
 * QP pairs by the thousand: each created, joined, given WRITEs, and
 * destroyed while they are in flight (every eighth waited for and
 * checked). The steady pair completes a WRITE every round. At the end
 * the devices hold what they held before: their QPs, mbufs, DPDK heap;
 * the process's resident size has not grown with the rounds.
 */
static void
test_qp_churn(void **state)
{
	enum { ROUNDS = 2000, NWR = 4, CHUNK = 65536 };
	struct droce_resources q0, q1, e0, e1;
	struct peak p0 = { 0 };
	size_t heap0, heap1;
	long rss0 = 0, rss1;
	uint64_t t0 = ep_now_ms();
	unsigned int round, i;

	(void)state;
	quiet_resources(a.ctx, &q0);
	quiet_resources(b.ctx, &q1);
	heap0 = ep_heap_allocated();
	for (round = 0; round < ROUNDS; round++) {
		struct ibv_qp *qa = extra_qp(&a, IBV_QPT_RC, NWR, 1);
		struct ibv_qp *qb = extra_qp(&b, IBV_QPT_RC, 1, 1);
		bool wait = round % 8 == 0;
		struct ep ea, eb;

		assert_non_null(qa);
		assert_non_null(qb);
		ea = with_qp(&a, qa);
		eb = with_qp(&b, qb);
		assert_int_equal(ep_connect(&ea, &eb, &opts), 0);
		assert_int_equal(ep_connect(&eb, &ea, &opts), 0);
		if (wait)
			memset(b.buf, 0, NWR * CHUNK);
		fill_pattern(a.buf, NWR * CHUNK, round);
		for (i = 0; i < NWR; i++)
			assert_int_equal(ep_post(&ea, IBV_WR_RDMA_WRITE,
						 round * NWR + i, i * CHUNK,
						 CHUNK, &b, i * CHUNK,
						 i + 1 == NWR && wait ?
						 IBV_SEND_SIGNALED : 0), 0);
		if (wait) {
			struct ibv_wc wc;

			assert_int_equal(ep_poll(a.scq, &wc, 1, 10000), 1);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.wr_id, round * NWR + NWR - 1);
			assert_memory_equal(b.buf, a.buf, NWR * CHUNK);
		}
		assert_int_equal(ibv_destroy_qp(qa), 0);
		assert_int_equal(ibv_destroy_qp(qb), 0);
		/* whatever a destroyed QP completed: not the steady pair's */
		drain(a.scq);
		steady_write(round);
		if (round % 64 == 0)
			sample(a.ctx, &p0);
		if (round == ROUNDS / 4)
			rss0 = ep_rss_kib();
	}
	quiet_resources(a.ctx, &e0);
	quiet_resources(b.ctx, &e1);
	heap1 = ep_heap_allocated();
	rss1 = ep_rss_kib();
	print_message("qp churn: %u pairs in %" PRIu64 " ms; heap %zu -> %zu "
		      "bytes, RSS %ld -> %ld KiB (from round %u), mbufs in use "
		      "at most %" PRIu64 " (quiet %" PRIu64 ")\n", ROUNDS,
		      ep_now_ms() - t0, heap0, heap1, rss0, rss1, ROUNDS / 4,
		      p0.mbufs_in_use, q0.mbufs_in_use);
	assert_int_equal(e0.qps, q0.qps);
	assert_int_equal(e1.qps, q1.qps);
	assert_int_equal(e0.mbufs_in_use, q0.mbufs_in_use);
	assert_int_equal(e1.mbufs_in_use, q1.mbufs_in_use);
	assert_true(p0.mbufs_in_use <= q0.mbufs_in_use + MBUF_SLACK);
	assert_int_equal(heap1, heap0);
	assert_true(rss1 - rss0 < 4096);
}

/* QPs idle for a while leave the engine's pass, and still take what is
 * posted to them: a WRITE, and in the error state a flush of both queues.
 * The idle ones cost the steady pair nothing. */
#define IDLE_PAIRS 512u

static unsigned int
active_qps(struct ibv_context *ctx)
{
	struct droce_resources r;

	assert_int_equal(droce_query_resources(ctx, &r), 0);
	return (unsigned int)r.qps_active;
}

static void
test_idle_qps_leave_the_pass(void **state)
{
	static struct ibv_qp *qa[IDLE_PAIRS], *qb[IDLE_PAIRS];
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ep ea, eb;
	struct ibv_wc wc;
	unsigned int i;

	(void)state;
	for (i = 0; i < IDLE_PAIRS; i++) {
		qa[i] = extra_qp(&a, IBV_QPT_RC, 4, 4);
		qb[i] = extra_qp(&b, IBV_QPT_RC, 4, 4);
		assert_non_null(qa[i]);
		assert_non_null(qb[i]);
		ea = with_qp(&a, qa[i]);
		eb = with_qp(&b, qb[i]);
		assert_int_equal(ep_connect(&ea, &eb, &opts), 0);
		assert_int_equal(ep_connect(&eb, &ea, &opts), 0);
	}
	usleep(50 * 1000);
	/* every QP is idle: none left in the pass, on either device */
	assert_int_equal(active_qps(a.ctx), 0);
	assert_int_equal(active_qps(b.ctx), 0);
	/* a WRITE on an idle QP: its post wakes it */
	ea = with_qp(&a, qa[IDLE_PAIRS / 2]);
	fill_pattern(a.buf, MSG, 77);
	assert_int_equal(ep_post(&ea, IBV_WR_RDMA_WRITE, 77, 0, MSG, &b,
				 STEADY, IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 77);
	assert_memory_equal(b.buf + STEADY, a.buf, MSG);
	steady_write(78);
	/* in the error state, asleep: what is posted is flushed */
	assert_int_equal(ibv_modify_qp(qa[0], &err, IBV_QP_STATE), 0);
	usleep(20 * 1000);
	assert_int_equal(active_qps(a.ctx), 0);
	ea = with_qp(&a, qa[0]);
	assert_int_equal(ep_post_recv(&ea, 79, 0, 64), 0);
	assert_int_equal(ep_poll(a.rcq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc.wr_id, 79);
	usleep(20 * 1000);
	assert_int_equal(ep_post(&ea, IBV_WR_RDMA_WRITE, 80, 0, MSG, &b,
				 STEADY, IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc.wr_id, 80);
	for (i = 0; i < IDLE_PAIRS; i++) {
		assert_int_equal(ibv_destroy_qp(qa[i]), 0);
		assert_int_equal(ibv_destroy_qp(qb[i]), 0);
	}
	drain(a.scq);
	drain(a.rcq);
	steady_write(81);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rnr_flood),
		cmocka_unit_test(test_ud_every_qpn),
		cmocka_unit_test(test_qp_churn),
		cmocka_unit_test(test_idle_qps_leave_the_pass),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
