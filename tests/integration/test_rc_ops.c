/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * RC between droce0 and droce1 through the verbs API: every opcode of
 * ibv_post_send for RC, message sizes around the path MTU and up to
 * 1 MiB, data checked byte for byte, atomics' semantics.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define BUF (4u << 20)
#define TIMEOUT_MS 10000

static struct ep a, b;
static struct ep_opts opts;

static int
setup(void **state)
{
	(void)state;
	ep_opts_default(&opts);
	if (ep_open(&a, 0, BUF, &opts) != 0 || ep_open(&b, 1, BUF, &opts) != 0)
		return -1;
	if (ep_connect(&a, &b, &opts) != 0 || ep_connect(&b, &a, &opts) != 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	ep_close(&a);
	ep_close(&b);
	return 0;
}

/* Sizes around the 1024-byte path MTU, then large ones. */
static const uint32_t sizes[] = {
	0, 1, 2, 3, 4, 7, 63, 64, 1023, 1024, 1025, 2047, 2048, 2049, 4096,
	65536, 100003, 1u << 20,
};

static void
expect_one(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_opcode op,
	   struct ibv_wc *wc)
{
	assert_int_equal(ep_poll(cq, wc, 1, TIMEOUT_MS), 1);
	assert_int_equal(wc->status, IBV_WC_SUCCESS);
	assert_int_equal(wc->wr_id, wr_id);
	assert_int_equal(wc->opcode, op);
}

static void
test_send_sizes(void **state)
{
	struct ibv_wc wc;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];

		memset(b.buf, 0xee, len + 16);
		fill_pattern(a.buf, len, (uint32_t)i);
		assert_int_equal(ep_post_recv(&b, 100 + i, 0, len + 16), 0);
		assert_int_equal(ep_post(&a, IBV_WR_SEND, i, 0, len, NULL, 0,
					 IBV_SEND_SIGNALED), 0);
		expect_one(a.scq, i, IBV_WC_SEND, &wc);
		expect_one(b.rcq, 100 + i, IBV_WC_RECV, &wc);
		assert_int_equal(wc.byte_len, len);
		assert_int_equal(wc.qp_num, b.qp->qp_num);
		assert_int_equal(wc.src_qp, a.qp->qp_num);
		assert_int_equal(wc.wc_flags & IBV_WC_WITH_IMM, 0);
		assert_memory_equal(a.buf, b.buf, len);
		/* nothing written past the message */
		assert_int_equal(b.buf[len], 0xee);
	}
}

static void
test_write_sizes(void **state)
{
	struct ibv_wc wc;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];

		memset(b.buf + 8, 0xee, len + 16);
		fill_pattern(a.buf, len, (uint32_t)i + 50);
		assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, i, 0, len, &b, 8,
					 IBV_SEND_SIGNALED), 0);
		expect_one(a.scq, i, IBV_WC_RDMA_WRITE, &wc);
		assert_memory_equal(a.buf, b.buf + 8, len);
		assert_int_equal(b.buf[8 + len], 0xee);
	}
}

static void
test_read_sizes(void **state)
{
	struct ibv_wc wc;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];

		memset(a.buf + 3, 0xee, len + 16);
		fill_pattern(b.buf + 100, len, (uint32_t)i + 90);
		assert_int_equal(ep_post(&a, IBV_WR_RDMA_READ, i, 3, len, &b,
					 100, IBV_SEND_SIGNALED), 0);
		expect_one(a.scq, i, IBV_WC_RDMA_READ, &wc);
		assert_int_equal(wc.byte_len, len);
		assert_memory_equal(a.buf + 3, b.buf + 100, len);
		assert_int_equal(a.buf[3 + len], 0xee);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_sizes),
		cmocka_unit_test(test_write_sizes),
		cmocka_unit_test(test_read_sizes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
