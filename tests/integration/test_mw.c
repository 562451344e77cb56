/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Memory windows and invalidation, droce0 (a, the memory's owner) and
 * droce1 (b, the peer reaching it), through the verbs API. Each test has
 * a fresh RC pair: a refused access fails the peer's QP.
 *
 *  - type 1: ibv_bind_mw() gives the window a new rkey at once; the peer
 *    reads and writes through it inside its range; a rebind moves it and
 *    the old rkey is refused;
 *  - a window's range and rights hold: beyond it, or a right it does not
 *    grant, is a remote access error and the memory is untouched;
 *  - type 2: bound by IBV_WR_BIND_MW with the rkey the application
 *    chose, zero-based too; IBV_WR_LOCAL_INV, or the peer's SEND with
 *    invalidate (IBV_WC_WITH_INV, the key in the completion and through
 *    ibv_wc_read_invalidated_rkey), and the rkey is refused; a type 2
 *    window serves the QP it was bound through only;
 *  - bind errors complete with IBV_WC_MW_BIND_ERR: a region without
 *    IBV_ACCESS_MW_BIND, a range beyond the region, a bound type 2
 *    window, a type 2 window invalidated and bound again under the key
 *    it had; a type 1 window in a WR is EINVAL;
 *  - a region with a window bound to it cannot be deregistered (EBUSY)
 *    until the window goes.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define BUF (1u << 20)
#define WIN_OFF 4096u
#define WIN_LEN 8192u
#define RW (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)

static struct ep_opts opts;
static struct ep a, b;

static void
mw_opts(struct ep_opts *o)
{
	o->access |= IBV_ACCESS_MW_BIND;
	o->recv_cq_ex = true;
}

static int
mw_ready(void)
{
	fill_pattern(a.buf, BUF, 1);
	fill_pattern(b.buf, BUF, 2);
	return 0;
}

static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .tweak = mw_opts,
	.ready = mw_ready,
};

/* b RDMA-READs or -WRITEs @p len bytes at a's @p va through @p rkey. */
static enum ibv_wc_status
peer_rdma(enum ibv_wr_opcode op, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)b.buf, len, b.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 42, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = va, .rkey = rkey },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	assert_int_equal(ibv_post_send(b.qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(b.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.wr_id, 42);
	return wc.status;
}

/* Bind type 2 @p mw through a's QP with @p rkey. @return its status. */
static enum ibv_wc_status
bind2(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey,
      struct ibv_mr *mr, uint64_t addr, uint64_t len, unsigned int access)
{
	struct ibv_send_wr wr = {
		.wr_id = 7, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { mr, addr, len, access } },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	assert_int_equal(ibv_post_send(qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.wr_id, 7);
	if (wc.status == IBV_WC_SUCCESS)
		assert_int_equal(wc.opcode, IBV_WC_BIND_MW);
	return wc.status;
}

static uint64_t
win(uint64_t off)
{
	return (uintptr_t)a.buf + WIN_OFF + off;
}

static void
test_type1(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {
		.wr_id = 5, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { a.mr, win(0), WIN_LEN, RW },
	};
	uint32_t first;
	struct ibv_wc wc;

	(void)state;
	assert_non_null(mw);
	assert_int_equal(mw->type, IBV_MW_TYPE_1);
	first = mw->rkey;
	assert_int_equal(ibv_bind_mw(a.qp, mw, &bind), 0);
	/* the key changes at once, in its low 8 bits */
	assert_int_equal(mw->rkey, ibv_inc_rkey(first));
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_BIND_MW);
	assert_int_equal(wc.wr_id, 5);

	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, win(100), mw->rkey, 300),
			 IBV_WC_SUCCESS);
	assert_memory_equal(b.buf, a.buf + WIN_OFF + 100, 300);
	fill_pattern(b.buf, 500, 3);
	assert_int_equal(peer_rdma(IBV_WR_RDMA_WRITE, win(WIN_LEN - 500),
				   mw->rkey, 500), IBV_WC_SUCCESS);
	assert_memory_equal(a.buf + WIN_OFF + WIN_LEN - 500, b.buf, 500);
	/* the region's own rkey still works */
	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, (uintptr_t)a.buf,
				   a.mr->rkey, 64), IBV_WC_SUCCESS);

	/* rebind elsewhere: the new key works, the old one is refused */
	first = mw->rkey;
	bind.bind_info.addr = (uintptr_t)a.buf + 65536;
	assert_int_equal(ibv_bind_mw(a.qp, mw, &bind), 0);
	assert_int_not_equal(mw->rkey, first);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, (uintptr_t)a.buf + 65536,
				   mw->rkey, 64), IBV_WC_SUCCESS);
	assert_memory_equal(b.buf, a.buf + 65536, 64);
	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, win(0), first, 64),
			 IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void
test_range_and_rights(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {
		.wr_id = 5,
		.bind_info = { a.mr, win(0), WIN_LEN, IBV_ACCESS_REMOTE_READ },
	};
	uint8_t before[256];
	struct ibv_wc wc;

	(void)state;
	assert_non_null(mw);
	assert_int_equal(ibv_bind_mw(a.qp, mw, &bind), 0);
	/* unsignalled: nothing to poll */
	assert_int_equal(ep_poll(a.scq, &wc, 1, 100), 0);
	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, win(0), mw->rkey,
				   WIN_LEN), IBV_WC_SUCCESS);
	/* read-only: a WRITE is refused and nothing changes */
	memcpy(before, a.buf + WIN_OFF, sizeof(before));
	assert_int_equal(peer_rdma(IBV_WR_RDMA_WRITE, win(0), mw->rkey,
				   sizeof(before)), IBV_WC_REM_ACCESS_ERR);
	assert_memory_equal(a.buf + WIN_OFF, before, sizeof(before));
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void
test_beyond_range(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {
		.bind_info = { a.mr, win(0), WIN_LEN, RW },
	};

	(void)state;
	assert_int_equal(ibv_bind_mw(a.qp, mw, &bind), 0);
	/* one byte past the end, and before the start */
	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, win(WIN_LEN - 99),
				   mw->rkey, 100), IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void
test_beyond_start(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {
		.bind_info = { a.mr, win(0), WIN_LEN, RW },
	};
	uint8_t before[64];

	(void)state;
	memcpy(before, a.buf + WIN_OFF - 1, sizeof(before));
	assert_int_equal(ibv_bind_mw(a.qp, mw, &bind), 0);
	assert_int_equal(peer_rdma(IBV_WR_RDMA_WRITE, win(0) - 1, mw->rkey,
				   sizeof(before)), IBV_WC_REM_ACCESS_ERR);
	assert_memory_equal(a.buf + WIN_OFF - 1, before, sizeof(before));
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void
test_type2_local_inv(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
	struct ibv_send_wr inv = {
		.wr_id = 8, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint8_t before[128];
	uint32_t rkey;
	struct ibv_wc wc;

	(void)state;
	assert_non_null(mw);
	rkey = ibv_inc_rkey(mw->rkey);
	assert_int_equal(bind2(a.qp, mw, rkey, a.mr, win(0), WIN_LEN, RW),
			 IBV_WC_SUCCESS);
	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, win(8), rkey, 128),
			 IBV_WC_SUCCESS);
	assert_memory_equal(b.buf, a.buf + WIN_OFF + 8, 128);

	inv.invalidate_rkey = rkey;
	assert_int_equal(ibv_post_send(a.qp, &inv, &bad), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_LOCAL_INV);
	/* free again: it binds, with yet another key, elsewhere */
	assert_int_equal(bind2(a.qp, mw, ibv_inc_rkey(rkey), a.mr,
			       (uintptr_t)a.buf + 65536, 64, RW),
			 IBV_WC_SUCCESS);
	/* and the old key is refused, the memory untouched */
	memcpy(before, a.buf + WIN_OFF, sizeof(before));
	assert_int_equal(peer_rdma(IBV_WR_RDMA_WRITE, win(0), rkey, 128),
			 IBV_WC_REM_ACCESS_ERR);
	assert_memory_equal(a.buf + WIN_OFF, before, sizeof(before));
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void
test_type2_zero_based(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);

	(void)state;
	assert_int_equal(bind2(a.qp, mw, rkey, a.mr, win(0), WIN_LEN,
			       RW | IBV_ACCESS_ZERO_BASED), IBV_WC_SUCCESS);
	/* va counts from the window's start */
	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, 200, rkey, 100),
			 IBV_WC_SUCCESS);
	assert_memory_equal(b.buf, a.buf + WIN_OFF + 200, 100);
	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, WIN_LEN - 10, rkey, 11),
			 IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void
test_send_with_inv(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_cq_ex *cqx = (struct ibv_cq_ex *)a.rcq;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_sge sge = { (uintptr_t)b.buf, 100, b.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	int i, ret = ENOENT;

	(void)state;
	assert_int_equal(bind2(a.qp, mw, rkey, a.mr, win(0), WIN_LEN, RW),
			 IBV_WC_SUCCESS);
	assert_int_equal(ep_post_recv(&a, 11, 0, 4096), 0);
	wr.invalidate_rkey = rkey;
	assert_int_equal(ibv_post_send(b.qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(b.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_SEND);

	for (i = 0; i < 500 && ret == ENOENT; i++) {
		ret = ibv_start_poll(cqx, &pa);
		if (ret == ENOENT)
			usleep(10000);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(cqx->status, IBV_WC_SUCCESS);
	assert_int_equal(cqx->wr_id, 11);
	assert_int_equal(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
	assert_true(ibv_wc_read_wc_flags(cqx) & IBV_WC_WITH_INV);
	assert_false(ibv_wc_read_wc_flags(cqx) & IBV_WC_WITH_IMM);
	assert_int_equal(ibv_wc_read_invalidated_rkey(cqx), rkey);
	assert_int_equal(ibv_wc_read_byte_len(cqx), 100);
	ibv_end_poll(cqx);
	assert_memory_equal(a.buf, b.buf, 100);

	/* the key is gone */
	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, win(0), rkey, 64),
			 IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

/* A SEND with invalidate of a key that is no window: refused. */
static void
test_send_with_bad_inv(void **state)
{
	struct ibv_sge sge = { (uintptr_t)b.buf, 100, b.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = 0,
	}, *bad;
	struct ibv_wc wc;

	(void)state;
	wr.invalidate_rkey = a.mr->rkey;        /* a region, not a window */
	assert_int_equal(ep_post_recv(&a, 11, 0, 4096), 0);
	assert_int_equal(ibv_post_send(b.qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(b.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_REM_INV_REQ_ERR);
	/* the responder failed the QP: its receive is flushed */
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	assert_int_equal(ep_poll(a.rcq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
}

static void
test_type2_other_qp(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_qp_init_attr qa = {
		.send_cq = a.scq, .recv_cq = a.rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ep a2 = a, b2;
	struct ep_opts o2;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	(void)state;
	/* a second QP on a's PD, joined to a new peer */
	a2.qp = ibv_create_qp(a.pd, &qa);
	assert_non_null(a2.qp);
	a2.psn = 1000;
	ep_opts_default(&o2);
	assert_int_equal(ep_open(&b2, 1, 1 << 16, &o2), 0);
	assert_int_equal(ep_connect(&a2, &b2, &opts), 0);
	assert_int_equal(ep_connect(&b2, &a2, &o2), 0);

	assert_int_equal(bind2(a.qp, mw, rkey, a.mr, win(0), WIN_LEN, RW),
			 IBV_WC_SUCCESS);
	/* through the QP it was bound with: fine; through another: no */
	assert_int_equal(peer_rdma(IBV_WR_RDMA_READ, win(0), rkey, 64),
			 IBV_WC_SUCCESS);
	sge = (struct ibv_sge){ (uintptr_t)b2.buf, 64, b2.mr->lkey };
	wr.wr.rdma.remote_addr = win(0);
	wr.wr.rdma.rkey = rkey;
	assert_int_equal(ibv_post_send(b2.qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(b2.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	ep_close(&b2);
	assert_int_equal(ibv_destroy_qp(a2.qp), 0);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void
test_bind_errors(void **state)
{
	struct ibv_mr *plain = ibv_reg_mr(a.pd, a.buf + 65536, 4096,
					  IBV_ACCESS_LOCAL_WRITE |
					  IBV_ACCESS_REMOTE_READ);
	struct ibv_mw *mw1 = ibv_alloc_mw(a.pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = mw1, .rkey = 5,
			     .bind_info = { a.mr, win(0), 64, RW } },
	}, *bad;

	(void)state;
	assert_non_null(plain);
	/* a type 1 window is bound by ibv_bind_mw(), not by a WR */
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	/* an unknown type */
	assert_null(ibv_alloc_mw(a.pd, (enum ibv_mw_type)7));
	/* a region without IBV_ACCESS_MW_BIND: the bind fails, and the QP */
	assert_int_equal(bind2(a.qp, mw2, ibv_inc_rkey(mw2->rkey), plain,
			       (uintptr_t)a.buf + 65536, 64,
			       IBV_ACCESS_REMOTE_READ), IBV_WC_MW_BIND_ERR);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	assert_int_equal(ibv_dealloc_mw(mw1), 0);
	assert_int_equal(ibv_dealloc_mw(mw2), 0);
	assert_int_equal(ibv_dereg_mr(plain), 0);
}

static void
test_bind_beyond_region(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);

	(void)state;
	assert_int_equal(bind2(a.qp, mw, ibv_inc_rkey(mw->rkey), a.mr,
			       (uintptr_t)a.buf + BUF - 100, 200, RW),
			 IBV_WC_MW_BIND_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void
test_bind_bound_type2(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);

	(void)state;
	assert_int_equal(bind2(a.qp, mw, rkey, a.mr, win(0), 64, RW),
			 IBV_WC_SUCCESS);
	assert_int_equal(bind2(a.qp, mw, ibv_inc_rkey(rkey), a.mr, win(0), 64,
			       RW), IBV_WC_MW_BIND_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

/*
 * A type 2 window invalidated and bound again must take a new key: a
 * peer still holding the old one (a WRITE half placed, READ responses
 * still going) would otherwise reach the new binding.
 */
static void
test_rebind_same_key(void **state)
{
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr inv = {
		.wr_id = 8, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey,
	}, *bad;
	struct ibv_wc wc;

	(void)state;
	assert_int_equal(bind2(a.qp, mw, rkey, a.mr, win(0), 64, RW),
			 IBV_WC_SUCCESS);
	assert_int_equal(ibv_post_send(a.qp, &inv, &bad), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(bind2(a.qp, mw, rkey, a.mr,
			       (uintptr_t)a.buf + 65536, 64, RW),
			 IBV_WC_MW_BIND_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void
test_busy(void **state)
{
	struct ibv_mr *mr = ibv_reg_mr(a.pd, a.buf + 65536, 4096,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);

	(void)state;
	assert_int_equal(bind2(a.qp, mw, ibv_inc_rkey(mw->rkey), mr,
			       (uintptr_t)a.buf + 65536, 4096,
			       IBV_ACCESS_REMOTE_READ), IBV_WC_SUCCESS);
	assert_int_equal(ibv_dereg_mr(mr), EBUSY);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
}

int
main(void)
{
#define T(f) pair_test(f, &pair)
	const struct CMUnitTest tests[] = {
		T(test_type1),
		T(test_range_and_rights),
		T(test_beyond_range),
		T(test_beyond_start),
		T(test_type2_local_inv),
		T(test_type2_zero_based),
		T(test_send_with_inv),
		T(test_send_with_bad_inv),
		T(test_type2_other_qp),
		T(test_bind_errors),
		T(test_bind_beyond_region),
		T(test_bind_bound_type2),
		T(test_rebind_same_key),
		T(test_busy),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
