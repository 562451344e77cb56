/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Unreliable connected QPs, droce0 to droce1, through the verbs API.
 *
 * With no argument, on the embedded default:
 *  - SEND, SEND with immediate, RDMA WRITE and WRITE with immediate at
 *    sizes around the path MTU, every byte checked; the sender's WQE
 *    completes when its last packet is out;
 *  - what UC does not have: READ, atomics refused at post time with
 *    bad_wr; RC-only attributes refused by ibv_modify_qp;
 *  - a SEND with no receive posted is lost, silently, and the next one
 *    is delivered; a WRITE with a bad rkey is dropped, memory untouched,
 *    the QP stays in RTS and the next WRITE arrives;
 *  - a SEND of several packets longer than its receive WQE: the WQE
 *    completes with IBV_WC_LOC_LEN_ERR, no byte lands past it, the rest
 *    of the message is dropped and the QP stays in RTS for the next.
 *
 * With WORKDIR FAULT_ARGS, both ports behind net_fault: a stream of SENDs
 * and one of WRITEs with immediate, several packets each, lose whole
 * messages only: every completion names a message that arrived entire
 * and right, in order, and some were lost.
 */

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include <droce.h>

#include "harness.h"

#define BUF (4u << 20)
#define RECV_OFF (2u << 20)

static struct ep_opts opts;
static struct ep a, b;
static const char *fault_args;

static void
uc_opts(struct ep_opts *o)
{
	o->qp_type = IBV_QPT_UC;
}

static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .tweak = uc_opts,
};

/* A signalled WR with immediate data @p imm, from a. */
static int
post_imm(struct ep *e, enum ibv_wr_opcode op, uint64_t wr_id, size_t off,
	 uint32_t len, const struct ep *remote, size_t roff, uint32_t imm)
{
	return ep_post_imm(e, op, wr_id, off, len, remote, roff,
			   IBV_SEND_SIGNALED, imm);
}

static void
expect_send_done(uint64_t wr_id, enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc;

	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.opcode, opcode);
}

static void
test_uc_ops(void **state)
{
	static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 5000,
					  65536 };
	struct ibv_wc wc;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];

		/* SEND, with immediate on odd sizes */
		fill_pattern(a.buf, len, (uint32_t)i);
		memset(b.buf + RECV_OFF, 0, len + 64);
		assert_int_equal(ep_post_recv(&b, i, RECV_OFF, len + 64), 0);
		assert_int_equal(post_imm(&a, i & 1 ? IBV_WR_SEND_WITH_IMM :
					  IBV_WR_SEND, i, 0, len, NULL, 0,
					  0x1000 + (uint32_t)i), 0);
		expect_send_done(i, IBV_WC_SEND);
		assert_int_equal(ep_poll(b.rcq, &wc, 1, 5000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, i);
		assert_int_equal(wc.opcode, IBV_WC_RECV);
		assert_int_equal(wc.byte_len, len);
		assert_int_equal(wc.qp_num, b.qp->qp_num);
		if (i & 1) {
			assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
			assert_int_equal(be32toh(wc.imm_data),
					 0x1000 + (uint32_t)i);
		} else {
			assert_int_equal(wc.wc_flags & IBV_WC_WITH_IMM, 0);
		}
		assert_memory_equal(b.buf + RECV_OFF, a.buf, len);

		/* WRITE, and WRITE with immediate */
		fill_pattern(a.buf, len, 100 + (uint32_t)i);
		memset(b.buf, 0, len + 64);
		assert_int_equal(post_imm(&a, IBV_WR_RDMA_WRITE, 100 + i, 0,
					  len, &b, 0, 0), 0);
		expect_send_done(100 + i, IBV_WC_RDMA_WRITE);
		fill_pattern(a.buf + len, len, 200 + (uint32_t)i);
		assert_int_equal(ep_post_recv(&b, 200 + i, RECV_OFF, 0), 0);
		assert_int_equal(post_imm(&a, IBV_WR_RDMA_WRITE_WITH_IMM,
					  200 + i, len, len, &b, len,
					  0x2000 + (uint32_t)i), 0);
		expect_send_done(200 + i, IBV_WC_RDMA_WRITE);
		assert_int_equal(ep_poll(b.rcq, &wc, 1, 5000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		assert_int_equal(wc.byte_len, len);
		assert_int_equal(be32toh(wc.imm_data), 0x2000 + (uint32_t)i);
		/* the plain WRITE before it arrived too: one QP, in order */
		assert_memory_equal(b.buf, a.buf, 2 * (size_t)len);
		assert_int_equal(b.buf[2 * (size_t)len], 0);
	}
}

/*
 * A SEND longer than its receive WQE ends that WQE with LOC_LEN_ERR and
 * nothing else: a UC sender must not be able to end the QP.
 */
static void
test_uc_too_long(void **state)
{
	struct ibv_wc wc;

	(void)state;
	memset(b.buf + RECV_OFF, 0, 8192);
	fill_pattern(a.buf, 3000, 7);
	assert_int_equal(ep_post_recv(&b, 1, RECV_OFF, 1000), 0);
	assert_int_equal(ep_post_recv(&b, 2, RECV_OFF + 4096, 3000), 0);
	assert_int_equal(post_imm(&a, IBV_WR_SEND, 1, 0, 3000, NULL, 0, 0),
			 0);
	expect_send_done(1, IBV_WC_SEND);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 5000), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, IBV_WC_LOC_LEN_ERR);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	/* the packets after the first went nowhere */
	assert_int_equal(b.buf[RECV_OFF + 1000], 0);
	assert_int_equal(b.buf[RECV_OFF + 4096], 0);
	/* and the next message takes the next WQE, whole */
	fill_pattern(a.buf, 3000, 8);
	assert_int_equal(post_imm(&a, IBV_WR_SEND, 2, 0, 3000, NULL, 0, 0),
			 0);
	expect_send_done(2, IBV_WC_SEND);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 5000), 1);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 3000);
	assert_memory_equal(b.buf + RECV_OFF + 4096, a.buf, 3000);
}

/* Packets b's QP has received. */
static uint64_t
b_rx_pkts(void)
{
	struct droce_qp_counters c;

	assert_int_equal(droce_query_qp_counters(b.qp, &c), 0);
	return c.rx_pkts;
}

/*
 * Wait until b's QP has received @p n packets since it had @p before: a
 * UC SEND completes on its sender as it goes, and one that finds no
 * receive must have reached b before b posts one, or it takes that.
 */
static void
wait_b_rx(uint64_t before, uint64_t n)
{
	uint64_t end = ep_now_ms() + 5000;

	/* (yielding: b's engine lcore may share this CPU) */
	while (b_rx_pkts() - before < n && ep_now_ms() < end)
		sched_yield();
	assert_true(b_rx_pkts() - before >= n);
}

static void
test_uc_rules(void **state)
{
	static const enum ibv_wr_opcode rc_only[] = {
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_WRITE,
	};
	struct ibv_send_wr wr[2], *bad;
	struct ibv_qp_init_attr qa;
	struct ibv_qp_attr attr;
	struct ibv_sge sge = { .addr = (uintptr_t)a.buf, .length = 8,
			       .lkey = a.mr->lkey };
	struct ibv_qp *qp;
	uint64_t rx0 = b_rx_pkts();
	size_t i;

	(void)state;
	assert_int_equal(a.qp->qp_type, IBV_QPT_UC);
	for (i = 0; i < sizeof(rc_only) / sizeof(rc_only[0]); i++) {
		memset(wr, 0, sizeof(wr));
		wr[0].opcode = IBV_WR_SEND;
		wr[0].send_flags = IBV_SEND_SIGNALED;
		wr[0].sg_list = &sge;
		wr[0].num_sge = 1;
		wr[0].next = &wr[1];
		wr[1] = wr[0];
		wr[1].next = NULL;
		wr[1].opcode = rc_only[i];
		wr[1].wr.rdma.rkey = b.mr->rkey;
		wr[1].wr.rdma.remote_addr = (uintptr_t)b.buf;
		assert_int_equal(ibv_post_send(a.qp, wr, &bad), EINVAL);
		assert_ptr_equal(bad, &wr[1]);
	}
	/* the SEND before the refused WR went: no receive, so it is lost,
	 * but it completes on the sender */
	for (i = 0; i < sizeof(rc_only) / sizeof(rc_only[0]); i++)
		expect_send_done(0, IBV_WC_SEND);
	wait_b_rx(rx0, sizeof(rc_only) / sizeof(rc_only[0]));

	/* RC's attributes are not UC's */
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = a.scq;
	qa.recv_cq = a.rcq;
	qa.qp_type = IBV_QPT_UC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = ibv_create_qp(a.pd, &qa);
	assert_non_null(qp);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	assert_int_equal(ibv_modify_qp(qp, &attr, IBV_QP_STATE |
				       IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS), 0);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = b.qp->qp_num;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = b.gid;
	attr.ah_attr.grh.hop_limit = 1;
	attr.ah_attr.port_num = 1;
	attr.max_dest_rd_atomic = 1;
	assert_int_equal(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
				       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				       IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC), EINVAL);
	assert_int_equal(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
				       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				       IBV_QP_RQ_PSN), 0);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	assert_int_equal(ibv_modify_qp(qp, &attr, IBV_QP_STATE |
				       IBV_QP_SQ_PSN | IBV_QP_TIMEOUT),
			 EINVAL);
	assert_int_equal(ibv_modify_qp(qp, &attr, IBV_QP_STATE |
				       IBV_QP_SQ_PSN), 0);
	assert_int_equal(ep_qp_state(qp), IBV_QPS_RTS);
	assert_int_equal(ibv_destroy_qp(qp), 0);
}

static void
test_uc_lost_messages(void **state)
{
	uint64_t rx0 = b_rx_pkts();
	struct ibv_wc wc;
	uint32_t rkey;

	(void)state;
	/* no receive posted: this SEND of three packets is lost */
	fill_pattern(a.buf, 3000, 7);
	assert_int_equal(post_imm(&a, IBV_WR_SEND, 1, 0, 3000, NULL, 0, 0),
			 0);
	expect_send_done(1, IBV_WC_SEND);
	wait_b_rx(rx0, 3);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);
	/* the next one finds its receive */
	fill_pattern(a.buf, 3000, 8);
	memset(b.buf + RECV_OFF, 0, 3000);
	assert_int_equal(ep_post_recv(&b, 2, RECV_OFF, 4096), 0);
	assert_int_equal(post_imm(&a, IBV_WR_SEND, 2, 0, 3000, NULL, 0, 0),
			 0);
	expect_send_done(2, IBV_WC_SEND);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.byte_len, 3000);
	assert_memory_equal(b.buf + RECV_OFF, a.buf, 3000);

	/* a WRITE with a key b never gave out: dropped, memory untouched */
	memset(b.buf, 0x5a, 4096);
	rkey = b.mr->rkey;
	b.mr->rkey = rkey ^ 0x3c3c;
	assert_int_equal(post_imm(&a, IBV_WR_RDMA_WRITE, 3, 0, 2048, &b, 0,
				  0), 0);
	b.mr->rkey = rkey;
	expect_send_done(3, IBV_WC_RDMA_WRITE);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	/* the next WRITE lands */
	assert_int_equal(ep_post_recv(&b, 4, RECV_OFF, 0), 0);
	assert_int_equal(post_imm(&a, IBV_WR_RDMA_WRITE_WITH_IMM, 4, 0, 2048,
				  &b, 0, 4), 0);
	expect_send_done(4, IBV_WC_RDMA_WRITE);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 4);
	assert_memory_equal(b.buf, a.buf, 2048);
	assert_int_equal(b.buf[2048], 0x5a);
}

/* ------------------------------------------------------------------------
 * Under loss.
 */

#define LOSS_MSGS 400
#define LOSS_SLOT 8192

static uint32_t
loss_len(unsigned int k)
{
	/* one to five packets of 1024 bytes */
	return 1 + (k * 2731u) % 5000u;
}

/*
 * Check the receive completions that come within @p ms of each other and
 * give their buffers back. @return how many came.
 */
static unsigned int
drain(bool write, int *last, int ms)
{
	unsigned int got = 0;
	struct ibv_wc wc;

	while (ep_poll(b.rcq, &wc, 1, ms) == 1) {
		unsigned int k = be32toh(wc.imm_data);
		size_t rslot = RECV_OFF + (size_t)wc.wr_id * LOSS_SLOT;

		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_true(k < LOSS_MSGS);
		/* in order, each once, whole */
		assert_true((int)k > *last);
		*last = (int)k;
		assert_int_equal(wc.byte_len, loss_len(k));
		assert_memory_equal(write ? b.buf + (size_t)k * LOSS_SLOT :
				    b.buf + rslot,
				    a.buf + (size_t)k * LOSS_SLOT,
				    loss_len(k));
		assert_int_equal(ep_post_recv(&b, wc.wr_id, rslot,
					      write ? 0 : LOSS_SLOT), 0);
		got++;
	}
	return got;
}

static void
loss_stream(bool write)
{
	unsigned int k, i, got = 0;
	struct ibv_wc wc[8];
	int last = -1, n;

	memset(b.buf, 0, BUF);
	for (k = 0; k < 64; k++)
		assert_int_equal(ep_post_recv(&b, k, RECV_OFF + (size_t)k *
					      LOSS_SLOT, write ? 0 : LOSS_SLOT),
				 0);
	for (k = 0; k < LOSS_MSGS; k++)
		fill_pattern(a.buf + (size_t)k * LOSS_SLOT, loss_len(k),
			     k + (write ? 1000u : 0u));
	/* eight at a time, the receives given back in between (UC has no
	 * RNR: a message finding no receive would be lost too) */
	for (k = 0; k < LOSS_MSGS; k += 8) {
		for (i = k; i < k + 8; i++)
			assert_int_equal(post_imm(&a, write ?
						  IBV_WR_RDMA_WRITE_WITH_IMM :
						  IBV_WR_SEND_WITH_IMM, i,
						  (size_t)i * LOSS_SLOT,
						  loss_len(i), &b,
						  (size_t)i * LOSS_SLOT, i), 0);
		for (i = 0; i < 8; i += (unsigned int)n) {
			n = ep_poll(a.scq, wc, 8, 5000);
			assert_true(n > 0);
		}
		got += drain(write, &last, 20);
	}
	got += drain(write, &last, 300);
	print_message("UC %s: %u of %u messages arrived whole\n",
		      write ? "WRITE with immediate" : "SEND", got, LOSS_MSGS);
	assert_true(got > LOSS_MSGS / 2);
	assert_true(got < LOSS_MSGS);
}

static void
test_uc_loss_send(void **state)
{
	(void)state;
	loss_stream(false);
}

static void
test_uc_loss_write(void **state)
{
	(void)state;
	loss_stream(true);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uc_ops),
		cmocka_unit_test(test_uc_rules),
		cmocka_unit_test(test_uc_too_long),
		cmocka_unit_test(test_uc_lost_messages),
	};
	const struct CMUnitTest loss_tests[] = {
		cmocka_unit_test(test_uc_loss_send),
		cmocka_unit_test(test_uc_loss_write),
	};

	if (argc == 1)
		return pair_run_group_tests(tests, &pair);
	if (argc != 3) {
		fprintf(stderr, "usage: test_uc [WORKDIR FAULT_ARGS]\n");
		return 2;
	}
	fault_args = argv[2];
	if (ep_fault_config(argv[1], "uc", 3, fault_args, 7) != 0) {
		perror("test_uc: config");
		return 1;
	}
	return pair_run_group_tests_name(fault_args, loss_tests, &pair);
}
