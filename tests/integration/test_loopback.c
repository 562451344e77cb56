/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Loopback: two QPs of droce0 talking to each other through droce0's own
 * GID, as two QPs of one RoCE NIC (or of soft-RoCE) do, in the embedded
 * default (droce0 and droce1 on a net_ring pair).
 *
 * - An address handle to the device's own GID, IPv4-mapped and IPv6, is
 *   made at once (no ARP or neighbour solicitation goes out: a device
 *   that asked would wait the 3 s of an unanswered one), and a QP's path
 *   to it is ready as it reaches RTR.
 * - RC SEND, WRITE with immediate and READ between the two
 *   QPs, every byte checked, while droce1 on the far end of the wire
 *   receives nothing: the frames never leave droce0. droce0 counts them
 *   as sent and received.
 * - UD datagrams to itself carry the same completion as from a peer,
 *   the sender's QPN and the GRH with droce0's GID as source.
 *
 * Every other test of the integration suite runs over loopback too (the
 * loopback suite, DROCE_TEST_LOOPBACK), and RC through loss
 * (loss_5_loopback).
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <infiniband/verbs.h>

#include "droce.h"
#include "harness.h"

#define LEN (256 * 1024)
#define QKEY 0x11111111u

static struct ep a, b;
static struct ep_opts opts;

/* droce1's frames received: those that crossed the wire. */
static uint64_t
wire_frames(void)
{
	struct ibv_context *ctx = ep_open_device(1);
	struct droce_counters c;

	assert_non_null(ctx);
	assert_int_equal(droce_query_counters(ctx, &c), 0);
	ibv_close_device(ctx);
	return c.rx_frames;
}

static uint64_t
own_frames(struct ibv_context *ctx, bool rx)
{
	struct droce_counters c;

	assert_int_equal(droce_query_counters(ctx, &c), 0);
	return rx ? c.rx_frames : c.tx_frames;
}

static void
test_ah_to_self_at_once(void **state)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_context *ctx = ep_open_device(0);
	struct ibv_pd *pd;
	int gid_index;

	(void)state;
	assert_non_null(ctx);
	pd = ibv_alloc_pd(ctx);
	assert_non_null(pd);
	/* droce0's GIDs: IPv4-mapped, link-local (and an IPv6 address
	 * where one is configured) */
	for (gid_index = 0; gid_index < 4; gid_index++) {
		static const union ibv_gid zero;
		uint64_t t0 = ep_now_ms();
		struct ibv_ah *ah;

		if (ibv_query_gid(ctx, 1, gid_index, &aa.grh.dgid) != 0 ||
		    memcmp(&aa.grh.dgid, &zero, sizeof(zero)) == 0)
			break;
		aa.grh.sgid_index = (uint8_t)gid_index;
		ah = ibv_create_ah(pd, &aa);
		if (ah == NULL)
			print_error("GID %d: %s\n", gid_index, strerror(errno));
		assert_non_null(ah);
		assert_true(ep_now_ms() - t0 < 100);
		assert_int_equal(ibv_destroy_ah(ah), 0);
	}
	assert_true(gid_index >= 2);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

/* a and b, both on droce0, joined as o->qp_type wants. */
static void
pair_on_droce0(enum ibv_qp_type type)
{
	ep_opts_default(&opts);
	opts.qp_type = type;
	opts.qkey = QKEY;
	assert_int_equal(ep_open(&a, 0, LEN, &opts), 0);
	assert_int_equal(ep_open(&b, 0, LEN, &opts), 0);
	assert_memory_equal(&a.gid, &b.gid, sizeof(a.gid));
	assert_int_equal(ep_pair_up(&a, &b, &opts), 0);
}

static void
expect_done(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	assert_int_equal(ep_poll(cq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.opcode, op);
}

static void
test_rc_to_self(void **state)
{
	uint64_t wire, tx, rx;
	struct ibv_wc wc;

	(void)state;
	pair_on_droce0(IBV_QPT_RC);
	wire = wire_frames();
	tx = own_frames(a.ctx, false);
	rx = own_frames(a.ctx, true);

	/* SEND, 100 KiB: many packets each way */
	fill_pattern(a.buf, 100000, 1);
	assert_int_equal(ep_post_recv(&b, 10, 0, 100000), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 1, 0, 100000, &b, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_done(a.scq, 1, IBV_WC_SEND);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 100000);
	assert_int_equal(wc.src_qp, a.qp->qp_num);
	assert_memory_equal(b.buf, a.buf, 100000);

	/* WRITE with immediate into b's second half */
	fill_pattern(a.buf, 65536, 2);
	assert_int_equal(ep_post_recv(&b, 11, 0, 0), 0);
	assert_int_equal(ep_post_imm(&a, IBV_WR_RDMA_WRITE_WITH_IMM, 2, 0,
				     65536, &b, LEN / 2, IBV_SEND_SIGNALED,
				     0x1234), 0);
	expect_done(a.scq, 2, IBV_WC_RDMA_WRITE);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(be32toh(wc.imm_data), 0x1234);
	assert_memory_equal(b.buf + LEN / 2, a.buf, 65536);

	/* READ it back */
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_READ, 3, 65536, 65536, &b,
				 LEN / 2, IBV_SEND_SIGNALED), 0);
	expect_done(a.scq, 3, IBV_WC_RDMA_READ);
	assert_memory_equal(a.buf + 65536, a.buf, 65536);

	/* frames went out of droce0 and came back to it, none over the
	 * wire */
	assert_true(own_frames(a.ctx, false) - tx >= 100000 / 1024 * 2);
	assert_true(own_frames(a.ctx, true) - rx >= 100000 / 1024 * 2);
	assert_int_equal(wire_frames(), wire);
	ep_close(&a);
	ep_close(&b);
}

static void
test_ud_to_self(void **state)
{
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint64_t wire;

	(void)state;
	pair_on_droce0(IBV_QPT_UD);
	wire = wire_frames();
	ah = ep_ah(&a, &b, &opts);
	assert_non_null(ah);
	fill_pattern(a.buf, 512, 3);
	assert_int_equal(ep_post_recv(&b, 20, 4096, 40 + 512), 0);
	assert_int_equal(ep_post_ud(&a, 4, 0, 512, ah, b.qp->qp_num, QKEY,
				    true, 0x77, IBV_SEND_SIGNALED), 0);
	expect_done(a.scq, 4, IBV_WC_SEND);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 40 + 512);
	assert_int_equal(wc.src_qp, a.qp->qp_num);
	assert_true(wc.wc_flags & IBV_WC_GRH);
	assert_int_equal(wc.sl, 2);		/* over IPv4 */
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(be32toh(wc.imm_data), 0x77);
	assert_memory_equal(b.buf + 4096 + 40, a.buf, 512);
	/* the GRH's source: droce0's own address (IPv4-mapped GID: the
	 * IPv4 header's source in its last 20 bytes) */
	assert_memory_equal(b.buf + 4096 + 20 + 12, a.gid.raw + 12, 4);
	assert_int_equal(wire_frames(), wire);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	ep_close(&a);
	ep_close(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ah_to_self_at_once),
		cmocka_unit_test(test_rc_to_self),
		cmocka_unit_test(test_ud_to_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
