/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The extended QP post API, droce0 to droce1: a QP made by
 * ibv_create_qp_ex with send_ops_flags, driven through ibv_qp_to_qp_ex,
 * ibv_wr_start, ibv_wr_send / _imm, ibv_wr_rdma_write / _imm,
 * ibv_wr_rdma_read, both atomics, ibv_wr_set_sge / _sge_list /
 * _inline_data / _inline_data_list and ibv_wr_complete, several WRs per
 * batch, every byte checked; ibv_wr_abort posting nothing; a batch with a
 * mistake posting nothing; operations the QP type or droce has not got
 * refused at creation; ibv_qp_to_qp_ex of an ordinary QP is NULL.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define BUF (1u << 20)

static struct ep_opts opts;
static struct ep a, b;
static struct ibv_qp_ex *x;

static struct ibv_qp *
create_ex(struct ep *e, enum ibv_qp_type type, uint64_t ops)
{
	struct ibv_qp_init_attr_ex qa;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.qp_type = type;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = 64;
	qa.cap.max_send_sge = 4;
	qa.cap.max_recv_sge = 4;
	qa.cap.max_inline_data = 64;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.pd = e->pd;
	qa.send_ops_flags = ops;
	return ibv_create_qp_ex(e->ctx, &qa);
}

/* a's QP made again through ibv_create_qp_ex, then both joined */
static int
qp_ex_up(void)
{
	ibv_destroy_qp(a.qp);
	a.qp = create_ex(&a, IBV_QPT_RC, IBV_QP_EX_WITH_SEND |
			 IBV_QP_EX_WITH_SEND_WITH_IMM |
			 IBV_QP_EX_WITH_RDMA_WRITE |
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			 IBV_QP_EX_WITH_RDMA_READ |
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			 IBV_QP_EX_WITH_ATOMIC_WRITE);
	if (a.qp == NULL)
		return -1;
	x = ibv_qp_to_qp_ex(a.qp);
	if (x == NULL)
		return -1;
	return ep_pair_up(&a, &b, &opts);
}

static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .up = qp_ex_up,
};

static void
expect_sends(const enum ibv_wc_opcode *ops, int n)
{
	struct ibv_wc wc[16];
	int i;

	assert_int_equal(ep_poll(a.scq, wc, n, 5000), n);
	for (i = 0; i < n; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, (uint64_t)i + 1);
		assert_int_equal(wc[i].opcode, ops[i]);
	}
}

static void
test_batch(void **state)
{
	static const enum ibv_wc_opcode ops[] = {
		IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
		IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD,
		IBV_WC_SEND, IBV_WC_ATOMIC_WRITE,
	};
	static const uint8_t word[8] = "8 bytes!";
	struct ibv_sge list[3];
	struct ibv_data_buf bufs[2] = {
		{ .addr = (void *)"inline ", .length = 7 },
		{ .addr = (void *)"pieces", .length = 6 },
	};
	uint64_t *target = (uint64_t *)(void *)(b.buf + 0x8000);
	uint8_t value[8];
	struct ibv_wc wc[4];
	int i;

	(void)state;
	fill_pattern(a.buf, 0x4000, 1);
	fill_pattern(b.buf + 0x10000, 3000, 2);
	*target = 10;
	memset(b.buf + 0x8008, 0, 8);
	for (i = 0; i < 4; i++)
		assert_int_equal(ep_post_recv(&b, (uint64_t)i,
					      0x20000 + (size_t)i * 0x2000,
					      0x2000), 0);

	ibv_wr_start(x);
	/* 1: SEND of 3000 bytes from three SGEs */
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	list[0] = (struct ibv_sge){ (uintptr_t)a.buf, 1000, a.mr->lkey };
	list[1] = (struct ibv_sge){ (uintptr_t)a.buf + 1000, 1000,
				    a.mr->lkey };
	list[2] = (struct ibv_sge){ (uintptr_t)a.buf + 2000, 1000,
				    a.mr->lkey };
	ibv_wr_set_sge_list(x, 3, list);
	/* 2: SEND with immediate, inline from two pieces */
	x->wr_id = 2;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send_imm(x, htobe32(0xabcd));
	ibv_wr_set_inline_data_list(x, 2, bufs);
	/* 3: WRITE of 5000 bytes */
	x->wr_id = 3;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, b.mr->rkey, (uintptr_t)b.buf);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + 0x1000, 5000);
	/* 4: WRITE with immediate, inline */
	x->wr_id = 4;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_rdma_write_imm(x, b.mr->rkey, (uintptr_t)b.buf + 0x6000,
			      htobe32(7));
	ibv_wr_set_inline_data(x, (void *)"written inline", 14);
	/* 5: READ of 3000 bytes */
	x->wr_id = 5;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x, b.mr->rkey, (uintptr_t)b.buf + 0x10000);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + 0x8000, 3000);
	/* 6, 7: compare-and-swap 10 -> 20, fetch-and-add 5 */
	x->wr_id = 6;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_atomic_cmp_swp(x, b.mr->rkey, (uintptr_t)target, 10, 20);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + 0xa000, 8);
	x->wr_id = 7;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(x, b.mr->rkey, (uintptr_t)target, 5);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf + 0xa008, 8);
	/* 8: an empty SEND */
	x->wr_id = 8;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	/* 9: ATOMIC_WRITE of 8 bytes, copied when staged */
	x->wr_id = 9;
	x->wr_flags = IBV_SEND_SIGNALED;
	memcpy(value, word, sizeof(value));
	ibv_wr_atomic_write(x, b.mr->rkey, (uintptr_t)b.buf + 0x8008, value);
	memset(value, 0, sizeof(value));
	assert_int_equal(ibv_wr_complete(x), 0);

	expect_sends(ops, 9);
	assert_int_equal(ep_poll(b.rcq, wc, 4, 5000), 4);
	assert_int_equal(wc[0].byte_len, 3000);
	assert_memory_equal(b.buf + 0x20000, a.buf, 3000);
	assert_int_equal(wc[1].byte_len, 13);
	assert_true(wc[1].wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(be32toh(wc[1].imm_data), 0xabcd);
	assert_memory_equal(b.buf + 0x22000, "inline pieces", 13);
	assert_int_equal(wc[2].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(be32toh(wc[2].imm_data), 7);
	assert_memory_equal(b.buf + 0x6000, "written inline", 14);
	assert_memory_equal(b.buf, a.buf + 0x1000, 5000);
	assert_int_equal(wc[3].byte_len, 0);
	assert_memory_equal(a.buf + 0x8000, b.buf + 0x10000, 3000);
	assert_int_equal(*(uint64_t *)(void *)(a.buf + 0xa000), 10);
	assert_int_equal(*(uint64_t *)(void *)(a.buf + 0xa008), 20);
	assert_int_equal(*target, 25);
	assert_memory_equal(b.buf + 0x8008, word, 8);
}

static void
test_abort_and_mistakes(void **state)
{
	struct ibv_sge list[5];
	struct ibv_wc wc;
	uint8_t big[65];

	(void)state;
	memset(list, 0, sizeof(list));
	memset(big, 1, sizeof(big));
	/* abort: nothing goes */
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, b.mr->rkey, (uintptr_t)b.buf);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 64);
	ibv_wr_abort(x);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 200), 0);

	/* a mistake anywhere: nothing of the batch goes */
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, b.mr->rkey, (uintptr_t)b.buf);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 64);
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 5, list);        /* max_send_sge is 4 */
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, big, sizeof(big));    /* 64 at most */
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x);
	ibv_wr_send_inv(x, 1);                  /* not in send_ops_flags */
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 8);    /* no WR */
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 200), 0);
	/* an empty batch is fine */
	ibv_wr_start(x);
	assert_int_equal(ibv_wr_complete(x), 0);
}

static void
test_create_rules(void **state)
{
	struct ibv_qp *qp;
	struct ibv_qp_ex *ux;

	(void)state;
	/* an ordinary QP has not got the API */
	assert_null(ibv_qp_to_qp_ex(b.qp));
	/* UC: no READ, no atomics */
	qp = create_ex(&a, IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ);
	assert_null(qp);
	assert_int_equal(errno, EOPNOTSUPP);
	/* ATOMIC_WRITE is RC's here: droce's XRC has no opcode for it */
	qp = create_ex(&a, IBV_QPT_XRC_SEND, IBV_QP_EX_WITH_SEND |
		       IBV_QP_EX_WITH_ATOMIC_WRITE);
	assert_null(qp);
	assert_int_equal(errno, EOPNOTSUPP);
	/* UC with SEND and WRITE; an operation it was not made for is a
	 * mistake in the batch */
	qp = create_ex(&a, IBV_QPT_UC, IBV_QP_EX_WITH_SEND);
	assert_non_null(qp);
	ux = ibv_qp_to_qp_ex(qp);
	assert_non_null(ux);
	assert_int_equal(qp->qp_type, IBV_QPT_UC);
	ibv_wr_start(ux);
	ibv_wr_rdma_write(ux, 1, 0);
	assert_int_equal(ibv_wr_complete(ux), EINVAL);
	assert_int_equal(ibv_destroy_qp(qp), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_abort_and_mistakes),
		cmocka_unit_test(test_create_rules),
	};

	return pair_run_group_tests(tests, &pair);
}
