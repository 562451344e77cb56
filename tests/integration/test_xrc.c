/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * XRC, droce0 (a: an initiator QP) to droce1 (b: a target QP and XRC
 * SRQs in an XRC domain), through the verbs API.
 *
 * With no argument, on the embedded default:
 *  - SENDs (one to several packets) from one initiator to two SRQs in
 *    turn, each landing in its SRQ's receives and completing to its own
 *    CQ, every byte checked; WRITE with immediate taking an SRQ's WQE;
 *    WRITE, READ and atomics through the SRQ's PD; a SEND with invalidate
 *    refused (no window can be bound to a target, which has no send
 *    queue);
 *  - an SRQ of another domain, or no SRQ, named: the initiator's WR
 *    fails with IBV_WC_REM_INV_REQ_ERR;
 *  - domains opened on one file are one domain (O_CREAT, O_EXCL, no
 *    O_CREAT); a domain in use does not close;
 *  - the rules: no receive queue on XRC QPs, no send queue on a target,
 *    an XRC SRQ needs a domain and a CQ, the state table of each side;
 *  - the extended post API with ibv_wr_set_xrc_srqn();
 *  - the XRC_SEND column of the opcode table of ibv_post_send(3): SEND
 *    with immediate, BIND_MW and LOCAL_INV work too (a type 2 window
 *    bound through the initiator, invalidated, bound again); TSO and an
 *    unknown opcode are EINVAL, ATOMIC_WRITE EOPNOTSUPP, with bad_wr.
 *
 * With WORKDIR FAULT_ARGS, both ports behind net_fault: a stream of
 * SENDs to two SRQs arrives whole, once and in order.
 */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define BUF (4u << 20)
#define NSRQ 2
#define SRQ_WR 512

static struct ep_opts opts;
static struct ep a, b;
static struct ibv_xrcd *xrcd;
static struct ibv_srq *srq[NSRQ];
static struct ibv_cq *srq_cq[NSRQ];
static struct ibv_qp *ini, *tgt;
static const char *fault_args;

static struct ibv_srq *
xrc_srq(struct ibv_xrcd *x, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = SRQ_WR, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.xrcd = x,
		.cq = cq,
		.pd = b.pd,
	};

	return ibv_create_srq_ex(b.ctx, &sa);
}

static struct ibv_qp *
target(struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = x,
	};

	return ibv_create_qp_ex(b.ctx, &qa);
}

/* Initiator @p i (on a) and target @p t (on b) to RTS, joined. */
static int
join(struct ibv_qp *i, struct ibv_qp *t)
{
	return ep_xrc_join(i, &a.gid, t, &b.gid, 0xfffff0, 14);
}

static struct ibv_qp *
initiator(void)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = a.scq,
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = 256, .max_send_sge = 2,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp(a.pd, &qa);
}

/* An XRC domain with its SRQs on b, an initiator on a joined to its target */
static int
xrc_up(void)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD, .fd = -1,
	};
	int i;

	xrcd = ibv_open_xrcd(b.ctx, &xa);
	if (xrcd == NULL)
		return -1;
	for (i = 0; i < NSRQ; i++) {
		srq_cq[i] = ibv_create_cq(b.ctx, 2 * SRQ_WR, NULL, NULL, 0);
		srq[i] = srq_cq[i] != NULL ? xrc_srq(xrcd, srq_cq[i]) : NULL;
		if (srq[i] == NULL)
			return -1;
	}
	ini = initiator();
	tgt = target(xrcd);
	if (ini == NULL || tgt == NULL)
		return -1;
	return join(ini, tgt);
}

static void
xrc_release(void)
{
	int i;

	ibv_destroy_qp(ini);
	ibv_destroy_qp(tgt);
	for (i = 0; i < NSRQ; i++) {
		ibv_destroy_srq(srq[i]);
		ibv_destroy_cq(srq_cq[i]);
	}
	ibv_close_xrcd(xrcd);
}

static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .up = xrc_up,
	.release = xrc_release,
};

static uint32_t
srqn(struct ibv_srq *s)
{
	uint32_t n = 0;

	assert_int_equal(ibv_get_srq_num(s, &n), 0);
	return n;
}

/* Post one receive of b's buffer [off, off + len) to @p s. */
static void
srq_recv(struct ibv_srq *s, uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(b.buf + off), len, b.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	assert_int_equal(ibv_post_srq_recv(s, &wr, &bad), 0);
}

/* Post @p op from a's buffer [off, off + len) through the initiator. */
static int
xrc_post(enum ibv_wr_opcode op, uint64_t wr_id, size_t off, uint32_t len,
	 uint32_t to_srqn, size_t roff, uint32_t imm, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)(a.buf + off), len, a.mr->lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.imm_data = htobe32(imm);
	wr.qp_type.xrc.remote_srqn = to_srqn;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)(b.buf + roff);
		wr.wr.atomic.rkey = b.mr->rkey;
		wr.wr.atomic.compare_add = op == IBV_WR_ATOMIC_CMP_AND_SWP ?
			7 : 5;
		wr.wr.atomic.swap = 9;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)(b.buf + roff);
		wr.wr.rdma.rkey = b.mr->rkey;
	}
	return ibv_post_send(ini, &wr, &bad);
}

static void
expect_send(uint64_t wr_id, enum ibv_wc_status status)
{
	struct ibv_wc wc;

	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.status, status);
}

static void
test_xrc_send(void **state)
{
	const uint32_t sizes[] = { 0, 1, 1024, 1025, 5000, 65536 };
	unsigned int i;

	(void)state;
	assert_int_not_equal(srqn(srq[0]), srqn(srq[1]));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned int s = i % NSRQ;
		size_t roff = (size_t)i * 131072;
		struct ibv_wc wc;

		fill_pattern(a.buf, sizes[i], i);
		srq_recv(srq[s], 100 + i, roff, 65536);
		assert_int_equal(xrc_post(IBV_WR_SEND, i, 0, sizes[i],
					  srqn(srq[s]), 0, 0,
					  IBV_SEND_SIGNALED), 0);
		expect_send(i, IBV_WC_SUCCESS);
		/* the SRQ's own CQ, and not the other */
		assert_int_equal(ep_poll(srq_cq[s], &wc, 1, 5000), 1);
		assert_int_equal(ep_poll(srq_cq[1 - s], &wc, 1, 0), 0);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, 100 + i);
		assert_int_equal(wc.opcode, IBV_WC_RECV);
		assert_int_equal(wc.byte_len, sizes[i]);
		assert_int_equal(wc.qp_num, tgt->qp_num);
		assert_int_equal(wc.src_qp, ini->qp_num);
		assert_memory_equal(b.buf + roff, a.buf, sizes[i]);
	}
}

static void
test_xrc_rdma(void **state)
{
	uint64_t *target64 = (uint64_t *)(void *)(b.buf + 0x10000);
	uint64_t *result = (uint64_t *)(void *)(a.buf + 0x20000);
	struct ibv_wc wc;

	(void)state;
	/* WRITE and READ through the SRQ's PD */
	fill_pattern(a.buf, 3000, 21);
	assert_int_equal(xrc_post(IBV_WR_RDMA_WRITE, 1, 0, 3000, srqn(srq[0]),
				  0x1000, 0, IBV_SEND_SIGNALED), 0);
	expect_send(1, IBV_WC_SUCCESS);
	assert_memory_equal(b.buf + 0x1000, a.buf, 3000);
	fill_pattern(b.buf + 0x8000, 2500, 22);
	assert_int_equal(xrc_post(IBV_WR_RDMA_READ, 2, 0x30000, 2500,
				  srqn(srq[1]), 0x8000, 0,
				  IBV_SEND_SIGNALED), 0);
	expect_send(2, IBV_WC_SUCCESS);
	assert_memory_equal(a.buf + 0x30000, b.buf + 0x8000, 2500);

	/* atomics */
	*target64 = 7;
	assert_int_equal(xrc_post(IBV_WR_ATOMIC_CMP_AND_SWP, 3, 0x20000, 8,
				  srqn(srq[0]), 0x10000, 0,
				  IBV_SEND_SIGNALED), 0);
	expect_send(3, IBV_WC_SUCCESS);
	assert_int_equal(*result, 7);
	assert_int_equal(*target64, 9);
	assert_int_equal(xrc_post(IBV_WR_ATOMIC_FETCH_AND_ADD, 4, 0x20000, 8,
				  srqn(srq[1]), 0x10000, 0,
				  IBV_SEND_SIGNALED), 0);
	expect_send(4, IBV_WC_SUCCESS);
	assert_int_equal(*result, 9);
	assert_int_equal(*target64, 14);

	/* WRITE with immediate takes a WQE of the SRQ it names */
	srq_recv(srq[1], 55, 0x40000, 16);
	fill_pattern(a.buf, 2000, 23);
	assert_int_equal(xrc_post(IBV_WR_RDMA_WRITE_WITH_IMM, 5, 0, 2000,
				  srqn(srq[1]), 0x50000, 0x1234,
				  IBV_SEND_SIGNALED), 0);
	expect_send(5, IBV_WC_SUCCESS);
	assert_int_equal(ep_poll(srq_cq[1], &wc, 1, 5000), 1);
	assert_int_equal(wc.wr_id, 55);
	assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(be32toh(wc.imm_data), 0x1234);
	assert_int_equal(wc.byte_len, 2000);
	assert_memory_equal(b.buf + 0x50000, a.buf, 2000);
}

static void
test_xrc_opcode_column(void **state)
{
	static const enum ibv_wr_opcode refused[] = {
		IBV_WR_TSO, (enum ibv_wr_opcode)77,
	};
	struct ibv_mw *mw;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	uint32_t rkey;
	unsigned int i;

	(void)state;
	/* SEND with immediate */
	srq_recv(srq[0], 31, 0, 4096);
	fill_pattern(a.buf, 777, 61);
	assert_int_equal(xrc_post(IBV_WR_SEND_WITH_IMM, 1, 0, 777,
				  srqn(srq[0]), 0, 0xbeef, IBV_SEND_SIGNALED),
			 0);
	expect_send(1, IBV_WC_SUCCESS);
	assert_int_equal(ep_poll(srq_cq[0], &wc, 1, 5000), 1);
	assert_int_equal(wc.wr_id, 31);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(be32toh(wc.imm_data), 0xbeef);
	assert_memory_equal(b.buf, a.buf, 777);

	/* BIND_MW and LOCAL_INV through the initiator's send queue (the
	 * window is a's: a's MR needs IBV_ACCESS_MW_BIND) */
	{
		struct ibv_mr *mr = ibv_reg_mr(a.pd, a.buf + 65536, 4096,
					       IBV_ACCESS_LOCAL_WRITE |
					       IBV_ACCESS_MW_BIND);

		assert_non_null(mr);
		mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
		assert_non_null(mw);
		rkey = mw->rkey;
		for (i = 0; i < 2; i++) {
			rkey = ibv_inc_rkey(rkey);
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 40 + i;
			wr.opcode = IBV_WR_BIND_MW;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.bind_mw.mw = mw;
			wr.bind_mw.rkey = rkey;
			wr.bind_mw.bind_info = (struct ibv_mw_bind_info) {
				mr, (uintptr_t)a.buf + 65536, 4096,
				IBV_ACCESS_REMOTE_READ,
			};
			assert_int_equal(ibv_post_send(ini, &wr, &bad), 0);
			assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.opcode, IBV_WC_BIND_MW);
			/* invalidated, so that it binds again */
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 50 + i;
			wr.opcode = IBV_WR_LOCAL_INV;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.invalidate_rkey = rkey;
			assert_int_equal(ibv_post_send(ini, &wr, &bad), 0);
			assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.opcode, IBV_WC_LOCAL_INV);
		}
		assert_int_equal(ibv_dealloc_mw(mw), 0);
		assert_int_equal(ibv_dereg_mr(mr), 0);
	}

	/* what XRC has not got */
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(xrc_post(refused[i], 1, 0, 8, srqn(srq[0]), 0,
					  0, 0), EINVAL);
	}
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_ATOMIC_WRITE;
	bad = NULL;
	assert_int_equal(ibv_post_send(ini, &wr, &bad), EOPNOTSUPP);
	assert_ptr_equal(bad, &wr);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 100), 0);
}

static void
test_xrc_send_with_inv(void **state)
{
	struct ibv_mw *mw;
	struct ibv_mr *mr;
	struct ibv_sge sge = { (uintptr_t)a.buf, 100, a.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 6, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	(void)state;
	/* a type 2 window is bound through a send queue, which a target
	 * has not: no window is bound to it, and a SEND with invalidate
	 * through it is refused */
	mr = ibv_reg_mr(b.pd, b.buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	assert_non_null(mr);
	assert_non_null(mw);
	srq_recv(srq[0], 66, 0, 4096);
	wr.invalidate_rkey = mw->rkey;
	wr.qp_type.xrc.remote_srqn = srqn(srq[0]);
	assert_int_equal(ibv_post_send(ini, &wr, &bad), 0);
	expect_send(6, IBV_WC_REM_INV_REQ_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
}

static void
test_xrc_wrong_srq(void **state)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD, .fd = -1,
	};
	struct ibv_xrcd *other = ibv_open_xrcd(b.ctx, &xa);
	struct ibv_cq *cq = ibv_create_cq(b.ctx, 16, NULL, NULL, 0);
	struct ibv_srq *foreign;

	(void)state;
	assert_non_null(other);
	assert_non_null(cq);
	foreign = xrc_srq(other, cq);
	assert_non_null(foreign);
	srq_recv(foreign, 1, 0, 4096);
	/* an SRQ of another domain: refused, the initiator fails */
	assert_int_equal(xrc_post(IBV_WR_SEND, 1, 0, 64, srqn(foreign), 0, 0,
				  IBV_SEND_SIGNALED), 0);
	expect_send(1, IBV_WC_REM_INV_REQ_ERR);
	assert_int_equal(ep_poll(cq, (struct ibv_wc[1]){ 0 }, 1, 100), 0);
	assert_int_equal(ibv_destroy_srq(foreign), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_close_xrcd(other), 0);
}

static void
test_xrc_no_srq(void **state)
{
	(void)state;
	assert_int_equal(xrc_post(IBV_WR_SEND, 1, 0, 64, 0xabcd, 0, 0,
				  IBV_SEND_SIGNALED), 0);
	expect_send(1, IBV_WC_REM_INV_REQ_ERR);
}

static void
test_xrc_domains(void **state)
{
	char path[] = "/tmp/droce-xrcd-XXXXXX";
	int fd = mkstemp(path);
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = 0,
	};
	struct ibv_xrcd *x1, *x2;
	struct ibv_srq *s;
	struct ibv_qp *t, *i;
	struct ibv_cq *cq = ibv_create_cq(b.ctx, 16, NULL, NULL, 0);
	struct ibv_wc wc;

	(void)state;
	assert_true(fd >= 0);
	/* not there yet, and no O_CREAT */
	assert_null(ibv_open_xrcd(b.ctx, &xa));
	assert_int_equal(errno, ENOENT);
	xa.oflags = O_CREAT;
	x1 = ibv_open_xrcd(b.ctx, &xa);
	assert_non_null(x1);
	xa.oflags = O_CREAT | O_EXCL;
	assert_null(ibv_open_xrcd(b.ctx, &xa));
	assert_int_equal(errno, EEXIST);
	xa.oflags = 0;
	x2 = ibv_open_xrcd(b.ctx, &xa);
	assert_non_null(x2);

	/* an SRQ in one open, a target in the other: one domain */
	s = xrc_srq(x1, cq);
	assert_non_null(s);
	t = target(x2);
	i = initiator();
	assert_non_null(t);
	assert_non_null(i);
	assert_int_equal(join(i, t), 0);
	srq_recv(s, 9, 0, 4096);
	fill_pattern(a.buf, 300, 31);
	{
		struct ibv_qp *save = ini;

		ini = i;
		assert_int_equal(xrc_post(IBV_WR_SEND, 1, 0, 300, srqn(s), 0,
					  0, IBV_SEND_SIGNALED), 0);
		ini = save;
	}
	expect_send(1, IBV_WC_SUCCESS);
	assert_int_equal(ep_poll(cq, &wc, 1, 5000), 1);
	assert_int_equal(wc.wr_id, 9);
	assert_int_equal(wc.qp_num, t->qp_num);
	assert_memory_equal(b.buf, a.buf, 300);

	/* in use: no closing */
	assert_int_equal(ibv_close_xrcd(x1), EBUSY);
	assert_int_equal(ibv_close_xrcd(x2), EBUSY);
	assert_int_equal(ibv_destroy_qp(i), 0);
	assert_int_equal(ibv_destroy_qp(t), 0);
	assert_int_equal(ibv_destroy_srq(s), 0);
	assert_int_equal(ibv_close_xrcd(x1), 0);
	assert_int_equal(ibv_close_xrcd(x2), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	close(fd);
	unlink(path);
}

static void
test_xrc_rules(void **state)
{
	struct ibv_recv_wr rw = { 0 }, *rbad;
	struct ibv_send_wr sw = { .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.xrcd = xrcd,
		.pd = b.pd,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = b.pd,
	};
	struct ibv_qp_attr attr;

	(void)state;
	/* nothing is received into an XRC QP; a target sends nothing */
	assert_int_equal(ibv_post_recv(ini, &rw, &rbad), EINVAL);
	assert_int_equal(ibv_post_recv(tgt, &rw, &rbad), EINVAL);
	assert_int_equal(ibv_post_send(tgt, &sw, &sbad), EINVAL);
	/* an XRC SRQ without its CQ; a target without a domain */
	assert_null(ibv_create_srq_ex(b.ctx, &sa));
	assert_int_equal(errno, EINVAL);
	assert_null(ibv_create_qp_ex(b.ctx, &qa));
	/* a target has no requester attributes, an initiator no
	 * responder ones */
	memset(&attr, 0, sizeof(attr));
	attr.retry_cnt = 7;
	assert_int_equal(ibv_modify_qp(tgt, &attr, IBV_QP_RETRY_CNT), EINVAL);
	attr.min_rnr_timer = 3;
	assert_int_equal(ibv_modify_qp(ini, &attr, IBV_QP_MIN_RNR_TIMER),
			 EINVAL);
	/* in use: the domain stays */
	assert_int_equal(ibv_close_xrcd(xrcd), EBUSY);
}

static void
test_xrc_qp_ex(void **state)
{
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = a.scq, .qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = a.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
			IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_qp *i = ibv_create_qp_ex(a.ctx, &qa);
	struct ibv_qp *t = target(xrcd);
	struct ibv_qp_ex *x;
	struct ibv_wc wc[2];

	(void)state;
	assert_non_null(i);
	assert_non_null(t);
	assert_int_equal(join(i, t), 0);
	x = ibv_qp_to_qp_ex(i);
	assert_non_null(x);
	srq_recv(srq[1], 77, 0, 4096);
	fill_pattern(a.buf, 700, 41);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, b.mr->rkey, (uintptr_t)b.buf + 0x9000);
	ibv_wr_set_xrc_srqn(x, srqn(srq[0]));
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 700);
	x->wr_id = 2;
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, srqn(srq[1]));
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 700);
	assert_int_equal(ibv_wr_complete(x), 0);
	assert_int_equal(ep_poll(a.scq, wc, 2, 5000), 2);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[1].status, IBV_WC_SUCCESS);
	assert_int_equal(ep_poll(srq_cq[1], wc, 1, 5000), 1);
	assert_int_equal(wc[0].wr_id, 77);
	assert_memory_equal(b.buf, a.buf, 700);
	assert_memory_equal(b.buf + 0x9000, a.buf, 700);
	assert_int_equal(ibv_destroy_qp(i), 0);
	assert_int_equal(ibv_destroy_qp(t), 0);
}

/* Under loss: messages to both SRQs arrive whole, once, in order. */
static void
test_xrc_loss(void **state)
{
	const unsigned int n = 300;
	unsigned int i, got[NSRQ] = { 0 };
	struct ibv_wc wc;

	(void)state;
	for (i = 0; i < n; i++)
		srq_recv(srq[i % NSRQ], i, (size_t)i * 8192, 8192);
	fill_pattern(a.buf, BUF / 2, 51);
	for (i = 0; i < n; i++) {
		uint32_t len = 1 + (i * 997) % 5000;

		while (xrc_post(IBV_WR_SEND, i, (size_t)i * 4096, len,
				srqn(srq[i % NSRQ]), 0, 0,
				IBV_SEND_SIGNALED) == ENOMEM) {
			assert_int_equal(ep_poll(a.scq, &wc, 1, 10000), 1);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
		}
	}
	while (got[0] + got[1] < n) {
		unsigned int s;

		for (s = 0; s < NSRQ; s++) {
			uint32_t idx, len;

			if (ep_poll(srq_cq[s], &wc, 1, 0) == 0)
				continue;
			idx = (unsigned int)wc.wr_id;
			len = 1 + (idx * 997) % 5000;
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			/* each SRQ's WQEs are taken in order */
			assert_int_equal(idx, got[s] * NSRQ + s);
			assert_int_equal(wc.byte_len, len);
			assert_memory_equal(b.buf + (size_t)idx * 8192,
					    a.buf + (size_t)idx * 4096, len);
			got[s]++;
		}
		if (ep_poll(a.scq, &wc, 1, 0) == 1)
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
	}
	print_message("%u messages to %d SRQs through %s\n", n, NSRQ,
		      fault_args);
}

int
main(int argc, char **argv)
{
	/* a fresh pair each: a refused request fails the initiator */
#define T(f) pair_test(f, &pair)
	const struct CMUnitTest tests[] = {
		T(test_xrc_send),
		T(test_xrc_rdma),
		T(test_xrc_qp_ex),
		T(test_xrc_opcode_column),
		T(test_xrc_domains),
		T(test_xrc_rules),
		T(test_xrc_wrong_srq),
		T(test_xrc_no_srq),
		T(test_xrc_send_with_inv),
	};
#undef T
	const struct CMUnitTest loss_tests[] = {
		cmocka_unit_test(test_xrc_loss),
	};

	if (argc == 1)
		return cmocka_run_group_tests(tests, NULL, NULL);
	if (argc != 3) {
		fprintf(stderr, "usage: test_xrc [WORKDIR FAULT_ARGS]\n");
		return 2;
	}
	fault_args = argv[2];
	if (ep_fault_config(argv[1], "xrc", 5, fault_args, 11) != 0) {
		perror("test_xrc: config");
		return 1;
	}
	return pair_run_group_tests_name(fault_args, loss_tests, &pair);
}
