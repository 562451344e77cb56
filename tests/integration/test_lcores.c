/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Devices with several engine lcores (run with DROCE_TEST_LCORES=4: four
 * for each of droce0 and droce1, on the CPUs there are). RC QPs are dealt
 * to the lcores in turn; here each QP's peer is on another lcore of its
 * device than the QP's own, so that every frame is handed from the lcore
 * that received it to the one that owns its QP. Messages of every kind
 * arrive whole, and the completions of QPs on all the lcores reach the
 * CQs they share. A region registered while the QPs live is reached
 * through every lcore; deregistered, through none.
 *
 * test_lcores WORKDIR rss|handoff puts both devices on net_fault's
 * switch instead, whose ports spread frames over their queues by RSS as
 * a NIC does. With rss (droce's default there) every QP sends from a
 * UDP port whose hash lands on the peer QP's lcore: no frame is handed
 * between lcores. With handoff (rss = off) the port puts every frame on
 * queue 0, and the frames for the other lcores are handed on.
 */

#include <endian.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <droce.h>

#include "harness.h"

#define PAIRS 16u
#define SLOT 4096u                 /* bytes a pair's messages take */
#define BUF (4 * PAIRS * SLOT)

static struct ep_opts opts;
/* the devices on net_fault's switch; frames should reach their QP's
 * lcore by the port's RSS */
static bool on_switch, by_rss;
static struct ep a, b;
static struct ibv_qp *qa[PAIRS], *qb[PAIRS];
/* made on droce1 before the pairs: the QPs of each pair on two lcores */
static struct ibv_qp *offset;

static struct ibv_qp *
rc_qp(struct ep *e)
{
	struct ibv_qp_init_attr qia = {
		.send_cq = e->scq, .recv_cq = e->rcq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(e->pd, &qia);
}

/* @p n completions from @p cq, every one a success; @return the number
 * of each opcode's in @p by_op. */
static void
reap(struct ibv_cq *cq, unsigned int n, unsigned int by_op[256])
{
	struct ibv_wc wc[16];
	unsigned int got = 0;
	int k, i;

	while (got < n) {
		k = ep_poll(cq, wc, n - got < 16 ? (int)(n - got) : 16, 10000);
		assert_true(k > 0);
		for (i = 0; i < k; i++) {
			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
			by_op[wc[i].opcode & 0xff]++;
		}
		got += (unsigned int)k;
	}
}

static void
post_one(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
	 struct ep *l, size_t loff, struct ep *r, size_t roff, uint32_t len,
	 uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)(l->buf + loff), len, l->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32((uint32_t)wr_id),
		.wr.rdma = { .remote_addr = (uintptr_t)(r->buf + roff),
			     .rkey = rkey },
	}, *bad;

	assert_int_equal(ibv_post_send(qp, &wr, &bad), 0);
}

static void
post_recv(struct ibv_qp *qp, struct ep *e, size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(e->buf + off), len, e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = off, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
}

/* Every pair: a SEND, a WRITE with immediate and a READ, each of its own
 * pattern and size, checked byte for byte; all through the shared CQs. */
static void
test_every_pair_across_lcores(void **state)
{
	struct droce_counters ca0, cb0, ca1, cb1;
	struct droce_resources r;
	unsigned int ops_a[256] = { 0 }, ops_b[256] = { 0 }, i;

	(void)state;
	assert_int_equal(droce_query_counters(a.ctx, &ca0), 0);
	assert_int_equal(droce_query_counters(b.ctx, &cb0), 0);
	memset(b.buf, 0, BUF);
	for (i = 0; i < PAIRS; i++) {
		uint32_t len = 1000 + 197 * i;

		fill_pattern(a.buf + i * SLOT, SLOT, 3 * i);
		fill_pattern(b.buf + (PAIRS + i) * SLOT, SLOT, 3 * i + 1);
		/* SEND into area 2, WRITE into area 3 (the immediate takes
		 * a receive too), READ from area 1 into a's area 2 */
		post_recv(qb[i], &b, (2 * PAIRS + i) * SLOT, SLOT);
		post_recv(qb[i], &b, 0, 0);
		post_one(qa[i], IBV_WR_SEND, i, &a, i * SLOT, &b, 0, len, 0);
		post_one(qa[i], IBV_WR_RDMA_WRITE_WITH_IMM, i, &a, i * SLOT,
			 &b, (3 * PAIRS + i) * SLOT, len, b.mr->rkey);
		post_one(qa[i], IBV_WR_RDMA_READ, i, &a,
			 (2 * PAIRS + i) * SLOT, &b, (PAIRS + i) * SLOT, len,
			 b.mr->rkey);
	}
	reap(a.scq, 3 * PAIRS, ops_a);
	reap(b.rcq, 2 * PAIRS, ops_b);
	assert_int_equal(ops_a[IBV_WC_SEND], PAIRS);
	assert_int_equal(ops_a[IBV_WC_RDMA_WRITE], PAIRS);
	assert_int_equal(ops_a[IBV_WC_RDMA_READ], PAIRS);
	assert_int_equal(ops_b[IBV_WC_RECV], PAIRS);
	assert_int_equal(ops_b[IBV_WC_RECV_RDMA_WITH_IMM], PAIRS);
	for (i = 0; i < PAIRS; i++) {
		uint32_t len = 1000 + 197 * i;

		assert_memory_equal(b.buf + (2 * PAIRS + i) * SLOT,
				    a.buf + i * SLOT, len);
		assert_memory_equal(b.buf + (3 * PAIRS + i) * SLOT,
				    a.buf + i * SLOT, len);
		assert_memory_equal(a.buf + (2 * PAIRS + i) * SLOT,
				    b.buf + (PAIRS + i) * SLOT, len);
	}
	/* each side received frames for QPs of its other lcores, and
	 * handed them on: none lost */
	assert_int_equal(droce_query_counters(a.ctx, &ca1), 0);
	assert_int_equal(droce_query_counters(b.ctx, &cb1), 0);
	print_message("handed on: droce0 %" PRIu64 ", droce1 %" PRIu64
		      " frames\n", ca1.rx_handoff - ca0.rx_handoff,
		      cb1.rx_handoff - cb0.rx_handoff);
	if (by_rss) {
		assert_int_equal(cb1.rx_handoff, cb0.rx_handoff);
		assert_int_equal(ca1.rx_handoff, ca0.rx_handoff);
	} else if (on_switch) {
		/* all on the first lcore: the frames of the QPs of the
		 * other three (three pairs in four, two frames each at
		 * least) are handed on */
		assert_true(cb1.rx_handoff - cb0.rx_handoff >= PAIRS);
		assert_true(ca1.rx_handoff - ca0.rx_handoff >= PAIRS);
	} else {
		assert_true(cb1.rx_handoff - cb0.rx_handoff >= 3 * PAIRS);
		assert_true(ca1.rx_handoff - ca0.rx_handoff >= 3 * PAIRS);
	}
	assert_int_equal(ca1.rx_handoff_drop, ca0.rx_handoff_drop);
	assert_int_equal(cb1.rx_handoff_drop, cb0.rx_handoff_drop);
	/* every lcore's QPs counted as the device's */
	assert_int_equal(droce_query_resources(b.ctx, &r), 0);
	assert_int_equal(r.qps, PAIRS + 2);
}

/* A region registered now is in every lcore's table; deregistered, in
 * none: a WRITE to it from each pair then fails. */
static void
test_region_on_every_lcore(void **state)
{
	uint8_t *mem = calloc(1, PAIRS * SLOT);
	unsigned int ops[256] = { 0 }, i;
	struct ibv_mr *mr;
	uint32_t rkey;
	struct ibv_wc wc;
	struct ep m = b;

	(void)state;
	assert_non_null(mem);
	mr = ibv_reg_mr(b.pd, mem, PAIRS * SLOT, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(mr);
	m.buf = mem;
	for (i = 0; i < PAIRS; i++) {
		fill_pattern(a.buf + i * SLOT, SLOT, 7 * i);
		post_one(qa[i], IBV_WR_RDMA_WRITE, i, &a, i * SLOT, &m,
			 i * SLOT, SLOT, mr->rkey);
	}
	reap(a.scq, PAIRS, ops);
	assert_memory_equal(mem, a.buf, PAIRS * SLOT);
	rkey = mr->rkey;
	assert_int_equal(ibv_dereg_mr(mr), 0);
	/* the last pair's QP, then the first's: on two lcores */
	for (i = 0; i < 2; i++) {
		struct ibv_qp *q = qa[i == 0 ? PAIRS - 1 : 0];

		post_one(q, IBV_WR_RDMA_WRITE, 99, &a, 0, &m, 0, 64, rkey);
		assert_int_equal(ep_poll(a.scq, &wc, 1, 10000), 1);
		assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	}
	free(mem);
}

static void
lcores_opts(struct ep_opts *o)
{
	o->cqe = 4 * PAIRS * 4;
}

/* The pairs, each QP's peer on the lcore after its own. */
static int
ready(void)
{
	struct ep ea = a, eb = b;
	unsigned int i;

	offset = rc_qp(&b);
	if (offset == NULL)
		return -1;
	for (i = 0; i < PAIRS; i++) {
		qa[i] = rc_qp(&a);
		qb[i] = rc_qp(&b);
		if (qa[i] == NULL || qb[i] == NULL)
			return -1;
		ea.qp = qa[i];
		eb.qp = qb[i];
		if (ep_connect(&ea, &eb, &opts) != 0 ||
		    ep_connect(&eb, &ea, &opts) != 0)
			return -1;
	}
	return 0;
}

static void
release(void)
{
	unsigned int i;

	for (i = 0; i < PAIRS; i++) {
		ibv_destroy_qp(qa[i]);
		ibv_destroy_qp(qb[i]);
	}
	ibv_destroy_qp(offset);
}

static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .tweak = lcores_opts,
	.ready = ready, .release = release,
};

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_pair_across_lcores),
		cmocka_unit_test(test_region_on_every_lcore),
	};

	if (argc == 3) {
		on_switch = true;
		by_rss = strcmp(argv[2], "rss") == 0;
		if (ep_config(argv[1], "switch:lcores", 40, NULL,
			      by_rss ? NULL : "rss = off\n", NULL, 0) != 0) {
			perror(argv[1]);
			return 1;
		}
	}

	return pair_run_group_tests(tests, &pair);
}
