/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The ICRC checked as the payload is copied: RC WRITEs of path MTU 4096
 * from droce0 to droce1, whose MIDDLE and LAST packets droce1 places in
 * one pass over their bytes (rx_copy_checked), every byte then compared;
 * then READs by droce0 of droce1's memory, whose MIDDLE and LAST
 * responses droce0 places the same way, into one SGE or (a response
 * across two SGEs is checked first, then copied) into two.
 *
 *   test_rx_checked WORKDIR zc|copy|corrupt
 *
 * zc: the frames arrive in segments, their payload where the sender sent
 * it from (zero copy, the default); copy: each frame one buffer
 * (zero_copy = off). Either way every MIDDLE and LAST packet was checked
 * as it was copied and no ICRC was wrong. corrupt: both ports behind
 * net_fault flipping a bit in 2% of frames and dropping 1%: the WRITEs
 * still arrive whole and right, frames with a wrong ICRC were counted,
 * and none of them moved anything (the bytes of every WRITE are those
 * sent, whatever a corrupted frame had put in their place first).
 */

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_common.h>

#include <droce.h>

#include "harness.h"

#define MSG (64u * 1024)
#define BUF (4u * MSG)
#define ROUNDS 64

static struct ep_opts opts;
static struct ep a, b;
static bool corrupt;

static void
tweak(struct ep_opts *o)
{
	o->mtu = IBV_MTU_4096;
}

static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .tweak = tweak,
};

/* Message sizes about whole packets and a MIDDLE's. */
static const uint32_t lens[] = {
	MSG, 3 * 4096 + 2048, 2 * 4096 + 4095, 4096 + 2048, MSG - 1, 3 * MSG,
};

/* The packets of a @p len-byte message placed as they are checked: the
 * MIDDLEs, and a LAST of 2048 bytes or more. */
static uint64_t
in_place(uint32_t len)
{
	return (len - 1) / 4096 - 1 +
		(len - ((len - 1) / 4096) * 4096 >= 2048);
}

/* Between counters @p c0 and @p c1, at least @p placed packets were
 * checked as they were copied and no ICRC was wrong; with faults, some
 * were, and some ICRCs were wrong. */
static void
assert_checked(const struct droce_counters *c0,
	       const struct droce_counters *c1, uint64_t placed)
{
	if (corrupt) {
		assert_true(c1->rx_copy_checked - c0->rx_copy_checked > 0);
		assert_true(c1->rx_icrc_err - c0->rx_icrc_err > 0);
	} else {
		assert_true(c1->rx_copy_checked - c0->rx_copy_checked >=
			    placed);
		assert_int_equal(c1->rx_icrc_err, c0->rx_icrc_err);
	}
}

/* WRITEs of those sizes, each byte right. */
static void
test_writes(void **state)
{
	struct droce_counters c0, c1;
	uint64_t placed = 0;
	unsigned int i;

	(void)state;
	assert_int_equal(droce_query_counters(b.ctx, &c0), 0);
	for (i = 0; i < ROUNDS; i++) {
		uint32_t len = lens[i % RTE_DIM(lens)];
		uint32_t off = (i % 3) * 64;
		struct ibv_wc wc;

		fill_pattern(a.buf, len, i);
		memset(b.buf, 0, BUF);
		assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, i, 0, len, &b,
					 off, IBV_SEND_SIGNALED), 0);
		assert_int_equal(ep_poll(a.scq, &wc, 1, 20000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_memory_equal(b.buf + off, a.buf, len);
		if (off > 0)
			assert_int_equal(b.buf[off - 1], 0);
		if (off + len < BUF)
			assert_int_equal(b.buf[off + len], 0);
		placed += in_place(len);
	}
	assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
	print_message("%u WRITEs: %" PRIu64 " packets checked as copied "
		      "(%" PRIu64 " without loss), %" PRIu64 " wrong ICRCs, "
		      "%" PRIu64 " taken in segments\n", ROUNDS,
		      c1.rx_copy_checked - c0.rx_copy_checked, placed,
		      c1.rx_icrc_err - c0.rx_icrc_err,
		      c1.rx_segmented - c0.rx_segmented);
	assert_checked(&c0, &c1, placed);
}

/*
 * READ @p len bytes of b's memory at @p roff into a's at @p off; with
 * @p split, into two SGEs: the first @p split bytes at @p off, the rest
 * 64 bytes further on. Completes it, and checks every byte and those
 * around.
 */
static void
read_one(uint64_t wr_id, size_t off, uint32_t len, size_t roff,
	 uint32_t split)
{
	struct ibv_sge sge[2] = {
		{ (uintptr_t)a.buf + off, split ? split : len, a.mr->lkey },
		{ (uintptr_t)a.buf + off + split + 64, len - split,
		  a.mr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = split ? 2 : 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)b.buf + roff, b.mr->rkey },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	fill_pattern(b.buf + roff, len, (unsigned int)wr_id);
	memset(a.buf, 0, BUF);
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 20000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	if (split == 0) {
		assert_memory_equal(a.buf + off, b.buf + roff, len);
	} else {
		assert_memory_equal(a.buf + off, b.buf + roff, split);
		assert_memory_equal(a.buf + off + split + 64,
				    b.buf + roff + split, len - split);
		assert_int_equal(a.buf[off + split], 0);
		assert_int_equal(a.buf[off + split + 63], 0);
	}
	if (off > 0)
		assert_int_equal(a.buf[off - 1], 0);
	assert_int_equal(a.buf[off + len + (split ? 64 : 0)], 0);
}

/* READs of the same sizes: their responses placed as they are checked. */
static void
test_reads(void **state)
{
	struct droce_counters c0, c1;
	uint64_t placed = 0;
	unsigned int i;

	(void)state;
	assert_int_equal(droce_query_counters(a.ctx, &c0), 0);
	for (i = 0; i < ROUNDS; i++) {
		uint32_t len = lens[i % RTE_DIM(lens)];

		read_one(i, (i % 3) * 64, len, (i % 5) * 64, 0);
		placed += in_place(len);
	}
	/* across two SGEs: a response over the seam is checked, then
	 * copied, the others as they are copied */
	for (i = 0; i < 8; i++)
		read_one(ROUNDS + i, 64, MSG, 128, 4096 * (i + 1) + 100 * i);
	assert_int_equal(droce_query_counters(a.ctx, &c1), 0);
	print_message("%u READs: %" PRIu64 " responses checked as copied "
		      "(%" PRIu64 " without loss, in one SGE), %" PRIu64
		      " wrong ICRCs\n", ROUNDS + 8,
		      c1.rx_copy_checked - c0.rx_copy_checked, placed,
		      c1.rx_icrc_err - c0.rx_icrc_err);
	assert_checked(&c0, &c1, placed);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writes),
		cmocka_unit_test(test_reads),
	};
	const char *engine = NULL, *fault = NULL;

	if (argc < 3) {
		fprintf(stderr, "usage: test_rx_checked WORKDIR zc|copy|"
			"corrupt\n");
		return 2;
	}
	if (strcmp(argv[2], "copy") == 0) {
		engine = "zero_copy = off\n";
	} else if (strcmp(argv[2], "corrupt") == 0) {
		fault = "corrupt=0.02,drop=0.01";
		corrupt = true;
	} else if (strcmp(argv[2], "zc") != 0) {
		fprintf(stderr, "test_rx_checked: zc, copy or corrupt\n");
		return 2;
	}
	if (ep_config(argv[1], "rxchk", 13, engine, "mtu = 9000\n", fault,
		      3) != 0) {
		perror("test_rx_checked: config");
		return 1;
	}
	return pair_run_group_tests(tests, &pair);
}
