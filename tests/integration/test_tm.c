/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Tag matching, MPI-style: a (droce0) sends tagged messages over RC to b
 * (droce1), whose QP takes its receives from a tag matching SRQ. Each
 * test has a fresh pair.
 *
 *  - expected eager messages (one packet and several) land in the tagged
 *    buffer without their TMH: IBV_WC_TM_RECV with IBV_WC_TM_MATCH and
 *    IBV_WC_TM_DATA_VALID, the buffer's wr_id, the tag and app_ctx
 *    through ibv_wc_read_tm_info, every byte checked;
 *  - wildcard masks, and the first posted of two matching buffers taken;
 *  - unexpected messages land whole in ordinary SRQ buffers, completing
 *    as IBV_WC_TM_RECV with neither IBV_WC_TM_MATCH nor DATA_VALID nor
 *    SYNC_REQ and no tag (as a device with tag matching reports them);
 *    matching stays off until IBV_WR_TAG_SYNC reports
 *    that many handled (phase synchronisation), then a posted tag
 *    matches;
 *  - TMH NO_TAG messages complete as IBV_WC_TM_NO_TAG;
 *  - IBV_WR_TAG_DEL of a live tag, of a tag a message consumed
 *    meanwhile (IBV_WC_TM_ERR), of one deleted already;
 *  - rendezvous: the engine RDMA-READs the sender's data into the
 *    tagged buffer (IBV_WC_TM_MATCH with the tag at once,
 *    IBV_WC_TM_DATA_VALID without it when the data is there) and the
 *    sender gets a FIN with its tag, the receiving QP having asked for
 *    no send queue;
 *  - the rules: a full list (ENOMEM, bad_op), too many SGEs, ops on a
 *    basic SRQ, a TM SRQ without a CQ, a UC QP on a TM SRQ;
 *  - a tagged buffer that is not the SRQ's PD's writable memory refused
 *    at TAG_ADD; one deregistered since: IBV_WC_LOC_PROT_ERR, nothing
 *    written.
 *
 * With WORKDIR FAULT_ARGS, both ports behind net_fault: eager and
 * rendezvous messages alternate through the loss; each matches its own
 * tagged buffer once, whole, and each rendezvous gets its FIN.
 */

#include <errno.h>
#include <infiniband/tm_types.h>
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
#define NTAGS 16
#define ORD_OFF (1u << 20)       /* b: ordinary SRQ buffers */
#define ORD_SLOT 16384
#define NORD 32
#define SEND_OFF (2u << 20)     /* a: messages are built here */

static struct ep_opts opts;
static struct ep a, b;
static struct ibv_srq *srq;
static struct ibv_cq_ex *tcq;
static struct ibv_qp *bq;       /* b's QP on the TM SRQ */
static const char *fault_args;

/* b's QP on a TM SRQ joined to a's, ordinary buffers posted */
static int
tm_up(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = NORD, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.tm_cap = { .max_num_tags = NTAGS, .max_ops = 8 },
	};
	/* no send queue asked (as rdma-core's tests ask none): the
	 * engine's rendezvous READs and FINs still have room on it */
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 0, .max_send_sge = 0 },
	};
	struct ep me;
	int i;

	tcq = ibv_create_cq_ex(b.ctx, &ca);
	if (tcq == NULL)
		return -1;
	sa.pd = b.pd;
	sa.cq = ibv_cq_ex_to_cq(tcq);
	srq = ibv_create_srq_ex(b.ctx, &sa);
	if (srq == NULL)
		return -1;
	qa.send_cq = b.scq;
	qa.recv_cq = b.rcq;
	qa.srq = srq;
	bq = ibv_create_qp(b.pd, &qa);
	if (bq == NULL)
		return -1;
	me = b;
	me.qp = bq;
	if (ep_connect(&a, &me, &opts) != 0 || ep_connect(&me, &a, &opts) != 0)
		return -1;
	/* ordinary buffers for what matches no tag */
	for (i = 0; i < NORD; i++) {
		struct ibv_sge sge = {
			(uintptr_t)(b.buf + ORD_OFF + (size_t)i * ORD_SLOT),
			ORD_SLOT, b.mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = 1000 + i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad) != 0)
			return -1;
	}
	return 0;
}

static void
tm_release(void)
{
	ibv_destroy_qp(bq);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(tcq));
}

static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .up = tm_up,
	.release = tm_release,
};

/* One completion of the TM CQ, as read through the extended API. */
struct tm_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	unsigned int flags;
	uint32_t byte_len;
	struct ibv_wc_tm_info tm;
};

static int
tm_poll(struct tm_wc *w, int timeout_ms)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int i, ret = ENOENT;

	for (i = 0; i < timeout_ms && ret == ENOENT; i++) {
		ret = ibv_start_poll(tcq, &pa);
		if (ret == ENOENT)
			usleep(1000);
	}
	if (ret != 0)
		return 0;
	w->wr_id = tcq->wr_id;
	w->status = tcq->status;
	w->opcode = ibv_wc_read_opcode(tcq);
	w->flags = ibv_wc_read_wc_flags(tcq);
	w->byte_len = ibv_wc_read_byte_len(tcq);
	ibv_wc_read_tm_info(tcq, &w->tm);
	ibv_end_poll(tcq);
	return 1;
}

/* A list operation; @return what ibv_post_srq_ops said. */
static int
tm_op(enum ibv_ops_wr_opcode opcode, uint64_t wr_id, int flags,
      uint32_t *handle, uint32_t unexpected, uint64_t tag, uint64_t mask,
      size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(b.buf + off), len, b.mr->lkey };
	struct ibv_ops_wr op, *bad;
	int ret;

	memset(&op, 0, sizeof(op));
	op.wr_id = wr_id;
	op.opcode = opcode;
	op.flags = flags;
	op.tm.unexpected_cnt = unexpected;
	op.tm.handle = handle != NULL ? *handle : 0;
	op.tm.add.recv_wr_id = wr_id + 100;
	op.tm.add.sg_list = &sge;
	op.tm.add.num_sge = 1;
	op.tm.add.tag = tag;
	op.tm.add.mask = mask;
	ret = ibv_post_srq_ops(srq, &op, &bad);
	if (ret == 0 && handle != NULL && opcode == IBV_WR_TAG_ADD)
		*handle = op.tm.handle;
	return ret;
}

/* Add a tagged buffer b[off, off + len), signalled; its recv wr_id is
 * wr_id + 100. @return its handle. */
static uint32_t
tm_add(uint64_t wr_id, uint64_t tag, uint64_t mask, size_t off, uint32_t len)
{
	uint32_t h = 0;
	struct tm_wc w;

	assert_int_equal(tm_op(IBV_WR_TAG_ADD, wr_id, IBV_OPS_SIGNALED, &h, 0,
			       tag, mask, off, len), 0);
	assert_int_equal(tm_poll(&w, 2000), 1);
	assert_int_equal(w.opcode, IBV_WC_TM_ADD);
	assert_int_equal(w.status, IBV_WC_SUCCESS);
	assert_int_equal(w.wr_id, wr_id);
	assert_int_not_equal(h, 0);
	return h;
}

/* a sends a TMH of @p op, @p tag, @p ctx and @p len bytes of a's buffer
 * at @p data (for a rendezvous request: the RVH naming them).
 * @return the status of the send's completion. */
static enum ibv_wc_status
tm_send_status(uint8_t op, uint64_t tag, uint32_t ctx, size_t data,
	       uint32_t len)
{
	struct ibv_tmh *tmh = (struct ibv_tmh *)(void *)(a.buf + SEND_OFF);
	struct ibv_rvh *rvh = (struct ibv_rvh *)(tmh + 1);
	struct ibv_sge sge[2] = {
		{ (uintptr_t)tmh, sizeof(*tmh), a.mr->lkey },
		{ (uintptr_t)(a.buf + data), len, a.mr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = tag, .sg_list = sge, .num_sge = 2,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	memset(tmh, 0, sizeof(*tmh) + sizeof(*rvh));
	tmh->opcode = op;
	tmh->app_ctx = htobe32(ctx);
	tmh->tag = htobe64(tag);
	if (op == IBV_TMH_RNDV) {
		rvh->va = htobe64((uintptr_t)(a.buf + data));
		rvh->rkey = htobe32(a.mr->rkey);
		rvh->len = htobe32(len);
		sge[0].length = sizeof(*tmh) + sizeof(*rvh);
		wr.num_sge = 1;
	}
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	return wc.status;
}

/* tm_send_status(), which must succeed. */
static void
tm_send(uint8_t op, uint64_t tag, uint32_t ctx, size_t data, uint32_t len)
{
	assert_int_equal(tm_send_status(op, tag, ctx, data, len),
			 IBV_WC_SUCCESS);
}

static void
expect_match(uint64_t wr_id, uint64_t tag, uint32_t ctx, size_t off,
	     size_t data, uint32_t len)
{
	struct tm_wc w;

	assert_int_equal(tm_poll(&w, 5000), 1);
	assert_int_equal(w.status, IBV_WC_SUCCESS);
	assert_int_equal(w.opcode, IBV_WC_TM_RECV);
	assert_int_equal(w.flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID),
			 IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID);
	assert_int_equal(w.wr_id, wr_id);
	assert_int_equal(w.byte_len, len);
	assert_int_equal(w.tm.tag, tag);
	assert_int_equal(w.tm.priv, ctx);
	assert_memory_equal(b.buf + off, a.buf + data, len);
}

/* An unexpected message: whole, TMH first, in an ordinary buffer. */
static void
expect_unexpected(uint64_t tag, uint32_t len)
{
	const struct ibv_tmh *tmh;
	struct tm_wc w;

	assert_int_equal(tm_poll(&w, 5000), 1);
	assert_int_equal(w.status, IBV_WC_SUCCESS);
	assert_int_equal(w.opcode, IBV_WC_TM_RECV);
	assert_int_equal(w.flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID |
				    IBV_WC_TM_SYNC_REQ), 0);
	assert_int_equal(w.tm.tag, 0);
	assert_true(w.wr_id >= 1000 && w.wr_id < 1000 + NORD);
	assert_int_equal(w.byte_len, sizeof(*tmh) + len);
	tmh = (const struct ibv_tmh *)(const void *)
		(b.buf + ORD_OFF + (w.wr_id - 1000) * ORD_SLOT);
	assert_int_equal(tmh->opcode, IBV_TMH_EAGER);
	assert_int_equal(be64toh(tmh->tag), tag);
}

static void
test_tm_eager(void **state)
{
	const uint32_t sizes[] = { 0, 1, 500, 5000 };
	unsigned int i;

	(void)state;
	fill_pattern(a.buf, 65536, 1);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		tm_add(i, 0x1000 + i, ~0ull, 65536 * (i + 1), 8192);
		tm_send(IBV_TMH_EAGER, 0x1000 + i, 0xc0de + i, 0, sizes[i]);
		expect_match(i + 100, 0x1000 + i, 0xc0de + i,
			     65536 * (i + 1), 0, sizes[i]);
	}
}

static void
test_tm_wildcard_and_order(void **state)
{
	(void)state;
	fill_pattern(a.buf, 4096, 2);
	/* a mask: the low byte is anything */
	tm_add(1, 0x1200, 0xff00, 65536, 4096);
	tm_add(2, 0x1200, 0xff00, 131072, 4096);
	tm_send(IBV_TMH_EAGER, 0x12ab, 7, 0, 300);
	expect_match(101, 0x12ab, 7, 65536, 0, 300);     /* the first posted */
	tm_send(IBV_TMH_EAGER, 0x12cd, 8, 100, 200);
	expect_match(102, 0x12cd, 8, 131072, 100, 200);
	/* nothing left that matches 0x13..: unexpected */
	tm_send(IBV_TMH_EAGER, 0x13ab, 9, 0, 64);
	expect_unexpected(0x13ab, 64);
}

static void
test_tm_phase_sync(void **state)
{
	struct tm_wc w;
	uint32_t h = 0;

	(void)state;
	fill_pattern(a.buf, 4096, 3);
	/* no tag yet: unexpected, and matching goes off */
	tm_send(IBV_TMH_EAGER, 0x99, 1, 0, 100);
	expect_unexpected(0x99, 100);
	tm_add(1, 0x99, ~0ull, 65536, 4096);
	/* the tag is there, but the application has not synced: the next
	 * one is unexpected too */
	tm_send(IBV_TMH_EAGER, 0x99, 2, 0, 100);
	expect_unexpected(0x99, 100);
	/* a sync short of the count still asks for one */
	assert_int_equal(tm_op(IBV_WR_TAG_SYNC, 5, IBV_OPS_SIGNALED |
			       IBV_OPS_TM_SYNC, &h, 1, 0, 0, 0, 0), 0);
	assert_int_equal(tm_poll(&w, 2000), 1);
	assert_int_equal(w.opcode, IBV_WC_TM_SYNC);
	assert_true(w.flags & IBV_WC_TM_SYNC_REQ);
	/* both handled: in phase */
	assert_int_equal(tm_op(IBV_WR_TAG_SYNC, 6, IBV_OPS_SIGNALED |
			       IBV_OPS_TM_SYNC, &h, 2, 0, 0, 0, 0), 0);
	assert_int_equal(tm_poll(&w, 2000), 1);
	assert_int_equal(w.opcode, IBV_WC_TM_SYNC);
	assert_int_equal(w.status, IBV_WC_SUCCESS);
	assert_false(w.flags & IBV_WC_TM_SYNC_REQ);
	tm_send(IBV_TMH_EAGER, 0x99, 3, 0, 100);
	expect_match(101, 0x99, 3, 65536, 0, 100);
}

static void
test_tm_no_tag(void **state)
{
	struct tm_wc w;

	(void)state;
	fill_pattern(a.buf, 4096, 4);
	tm_send(IBV_TMH_NO_TAG, 0, 0, 0, 200);
	assert_int_equal(tm_poll(&w, 5000), 1);
	assert_int_equal(w.status, IBV_WC_SUCCESS);
	assert_int_equal(w.opcode, IBV_WC_TM_NO_TAG);
	assert_int_equal(w.byte_len, sizeof(struct ibv_tmh) + 200);
	assert_memory_equal(b.buf + ORD_OFF + (w.wr_id - 1000) * ORD_SLOT +
			    sizeof(struct ibv_tmh), a.buf, 200);
	/* no tag: no phase to lose */
	tm_add(1, 0x5, ~0ull, 65536, 4096);
	tm_send(IBV_TMH_EAGER, 0x5, 1, 0, 10);
	expect_match(101, 0x5, 1, 65536, 0, 10);
}

static void
test_tm_del(void **state)
{
	struct tm_wc w;
	uint32_t h;

	(void)state;
	/* a live tag goes */
	h = tm_add(1, 0x77, ~0ull, 65536, 4096);
	assert_int_equal(tm_op(IBV_WR_TAG_DEL, 2, IBV_OPS_SIGNALED, &h, 0, 0,
			       0, 0, 0), 0);
	assert_int_equal(tm_poll(&w, 2000), 1);
	assert_int_equal(w.opcode, IBV_WC_TM_DEL);
	assert_int_equal(w.status, IBV_WC_SUCCESS);
	/* ... and then there is nothing to delete: an error, signalled or
	 * not */
	assert_int_equal(tm_op(IBV_WR_TAG_DEL, 3, 0, &h, 0, 0, 0, 0, 0), 0);
	assert_int_equal(tm_poll(&w, 2000), 1);
	assert_int_equal(w.opcode, IBV_WC_TM_DEL);
	assert_int_equal(w.status, IBV_WC_TM_ERR);
	assert_int_equal(w.wr_id, 3);
	/* a message takes the tag first: the delete races and loses */
	fill_pattern(a.buf, 4096, 5);
	h = tm_add(4, 0x78, ~0ull, 65536, 4096);
	tm_send(IBV_TMH_EAGER, 0x78, 1, 0, 50);
	expect_match(104, 0x78, 1, 65536, 0, 50);
	assert_int_equal(tm_op(IBV_WR_TAG_DEL, 5, IBV_OPS_SIGNALED, &h, 0, 0,
			       0, 0, 0), 0);
	assert_int_equal(tm_poll(&w, 2000), 1);
	assert_int_equal(w.status, IBV_WC_TM_ERR);
	/* a deleted tag matches nothing */
	h = tm_add(6, 0x79, ~0ull, 65536, 4096);
	assert_int_equal(tm_op(IBV_WR_TAG_DEL, 7, 0, &h, 0, 0, 0, 0, 0), 0);
	tm_send(IBV_TMH_EAGER, 0x79, 1, 0, 50);
	expect_unexpected(0x79, 50);
}

static void
test_tm_rendezvous(void **state)
{
	const struct ibv_tmh *fin;
	struct tm_wc w;
	struct ibv_wc wc;

	(void)state;
	fill_pattern(a.buf, 65536, 6);
	/* the sender takes the FIN in an ordinary receive */
	assert_int_equal(ep_post_recv(&a, 55, 3u << 20, 4096), 0);
	tm_add(1, 0xabc, ~0ull, 1u << 19, 65536);
	tm_send(IBV_TMH_RNDV, 0xabc, 0x5151, 0, 20000);
	/* matched at once ... */
	assert_int_equal(tm_poll(&w, 5000), 1);
	assert_int_equal(w.status, IBV_WC_SUCCESS);
	assert_int_equal(w.opcode, IBV_WC_TM_RECV);
	assert_true(w.flags & IBV_WC_TM_MATCH);
	assert_false(w.flags & IBV_WC_TM_DATA_VALID);
	assert_int_equal(w.wr_id, 101);
	assert_int_equal(w.tm.tag, 0xabc);
	/* ... the data read from the sender after */
	assert_int_equal(tm_poll(&w, 5000), 1);
	assert_int_equal(w.status, IBV_WC_SUCCESS);
	assert_int_equal(w.opcode, IBV_WC_TM_RECV);
	assert_true(w.flags & IBV_WC_TM_DATA_VALID);
	assert_int_equal(w.wr_id, 101);
	assert_int_equal(w.byte_len, 20000);
	/* (the tag was the match's) */
	assert_int_equal(w.tm.tag, 0);
	assert_memory_equal(b.buf + (1u << 19), a.buf, 20000);
	/* and the FIN tells the sender */
	assert_int_equal(ep_poll(a.rcq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 55);
	assert_int_equal(wc.byte_len, sizeof(*fin));
	fin = (const struct ibv_tmh *)(const void *)(a.buf + (3u << 20));
	assert_int_equal(fin->opcode, IBV_TMH_FIN);
	assert_int_equal(be64toh(fin->tag), 0xabc);
	assert_int_equal(be32toh(fin->app_ctx), 0x5151);
	/* b's own send queue saw none of it */
	assert_int_equal(ep_poll(b.scq, &wc, 1, 100), 0);
}

static void
test_tm_rules(void **state)
{
	struct ibv_sge sges[5];
	struct ibv_ops_wr op, *bad;
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.tm_cap = { .max_num_tags = 4, .max_ops = 4 },
		.pd = b.pd,
	};
	struct ibv_srq_init_attr basic = { .attr = { .max_wr = 4,
						     .max_sge = 1 } };
	struct ibv_srq *plain;
	struct ibv_qp_init_attr qa = {
		.send_cq = b.scq, .recv_cq = b.rcq, .srq = srq,
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	unsigned int i;
	uint32_t h;

	(void)state;
	/* the list holds NTAGS: one more is ENOMEM, with bad_op */
	for (i = 0; i < NTAGS; i++) {
		h = 0;
		assert_int_equal(tm_op(IBV_WR_TAG_ADD, i, 0, &h, 0, i, ~0ull,
				       65536, 64), 0);
	}
	memset(&op, 0, sizeof(op));
	op.opcode = IBV_WR_TAG_ADD;
	op.tm.add.sg_list = sges;
	op.tm.add.num_sge = 1;
	sges[0] = (struct ibv_sge){ (uintptr_t)b.buf, 64, b.mr->lkey };
	assert_int_equal(ibv_post_srq_ops(srq, &op, &bad), ENOMEM);
	assert_ptr_equal(bad, &op);
	/* more SGEs than a tagged buffer has */
	for (i = 0; i < 5; i++)
		sges[i] = sges[0];
	op.tm.add.num_sge = 5;
	assert_int_equal(ibv_post_srq_ops(srq, &op, &bad), EINVAL);
	/* a basic SRQ has no list */
	plain = ibv_create_srq(b.pd, &basic);
	assert_non_null(plain);
	op.tm.add.num_sge = 1;
	assert_int_equal(ibv_post_srq_ops(plain, &op, &bad), EINVAL);
	assert_int_equal(ibv_destroy_srq(plain), 0);
	/* a TM SRQ has a CQ of its own */
	assert_null(ibv_create_srq_ex(b.ctx, &sa));
	assert_int_equal(errno, EINVAL);
	/* and serves RC QPs */
	assert_null(ibv_create_qp(b.pd, &qa));
	assert_int_equal(errno, EINVAL);
}

/*
 * A tagged buffer must be memory the application may have written into:
 * TAG_ADD refuses a wrong lkey, a range past its MR, an MR without
 * local write, another PD's MR (EINVAL, bad_op); an eager message for a
 * tag whose MR is gone since completes with IBV_WC_LOC_PROT_ERR and
 * writes nothing.
 */
static void
test_tm_buffer_memory(void **state)
{
	struct ibv_pd *other_pd = ibv_alloc_pd(b.ctx);
	struct ibv_mr *ro = ibv_reg_mr(b.pd, b.buf + 65536, 4096, 0);
	struct ibv_mr *other = ibv_reg_mr(other_pd, b.buf + 65536, 4096,
					  IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *gone = ibv_reg_mr(b.pd, b.buf + 131072, 4096,
					 IBV_ACCESS_LOCAL_WRITE);
	const struct ibv_sge bad_sges[] = {
		{ (uintptr_t)b.buf, 64, b.mr->lkey ^ 0x4000 },
		{ (uintptr_t)b.buf + BUF - 32, 64, b.mr->lkey },
		{ (uintptr_t)b.buf + 65536, 64, ro->lkey },
		{ (uintptr_t)b.buf + 65536, 64, other->lkey },
	};
	struct ibv_sge sge;
	struct ibv_ops_wr op, *bad;
	struct tm_wc w;
	size_t i;

	(void)state;
	assert_non_null(ro);
	assert_non_null(other);
	assert_non_null(gone);
	memset(&op, 0, sizeof(op));
	op.opcode = IBV_WR_TAG_ADD;
	op.flags = IBV_OPS_SIGNALED;
	op.tm.add.sg_list = &sge;
	op.tm.add.num_sge = 1;
	op.tm.add.mask = ~0ull;
	for (i = 0; i < sizeof(bad_sges) / sizeof(bad_sges[0]); i++) {
		sge = bad_sges[i];
		bad = NULL;
		assert_int_equal(ibv_post_srq_ops(srq, &op, &bad), EINVAL);
		assert_ptr_equal(bad, &op);
	}
	assert_int_equal(tm_poll(&w, 200), 0);

	/* accepted, then its memory deregistered before the message */
	sge = (struct ibv_sge) { (uintptr_t)b.buf + 131072, 64, gone->lkey };
	op.wr_id = 77;
	op.tm.add.recv_wr_id = 177;
	op.tm.add.tag = 0x77;
	assert_int_equal(ibv_post_srq_ops(srq, &op, &bad), 0);
	assert_int_equal(tm_poll(&w, 2000), 1);
	assert_int_equal(w.opcode, IBV_WC_TM_ADD);
	assert_int_equal(w.status, IBV_WC_SUCCESS);
	assert_int_equal(ibv_dereg_mr(gone), 0);
	memset(b.buf + 131072, 0, 64);
	fill_pattern(a.buf, 64, 9);
	/* the sender learns it as for a receive WQE with a bad lkey */
	assert_int_equal(tm_send_status(IBV_TMH_EAGER, 0x77, 1, 0, 64),
			 IBV_WC_REM_OP_ERR);
	assert_int_equal(tm_poll(&w, 5000), 1);
	assert_int_equal(w.opcode, IBV_WC_TM_RECV);
	assert_int_equal(w.status, IBV_WC_LOC_PROT_ERR);
	assert_int_equal(w.wr_id, 177);
	assert_int_equal(b.buf[131072], 0);
	assert_int_equal(ibv_dereg_mr(ro), 0);
	assert_int_equal(ibv_dereg_mr(other), 0);
	assert_int_equal(ibv_dealloc_pd(other_pd), 0);
}

/*
 * Under loss: @p n messages, eager and rendezvous in turn, each to a tag
 * of its own posted beforehand (NTAGS at a time).
 */
static void
test_tm_loss(void **state)
{
	const unsigned int n = 120;
	unsigned int i, sent = 0, done = 0, fins = 0;
	struct ibv_wc wc;
	struct tm_wc w;

	(void)state;
	fill_pattern(a.buf, 1u << 20, 7);
	for (i = 0; i < n; i++)
		assert_int_equal(ep_post_recv(&a, 500 + i, (3u << 20) +
					      (size_t)(i % 64) * 64, 64), 0);
	while (done < n) {
		/* keep NTAGS tags posted, one per message to come */
		while (sent < n && sent - done < NTAGS) {
			uint32_t h = 0;

			assert_int_equal(tm_op(IBV_WR_TAG_ADD, sent, 0, &h, 0,
					       0x4000 + sent, ~0ull,
					       65536 + (size_t)sent * 8192,
					       8192), 0);
			tm_send(sent % 2 ? IBV_TMH_RNDV : IBV_TMH_EAGER,
				0x4000 + sent, sent, (size_t)sent * 4096,
				1000 + (sent * 331) % 7000);
			sent++;
		}
		assert_int_equal(tm_poll(&w, 10000), 1);
		assert_int_equal(w.status, IBV_WC_SUCCESS);
		assert_int_equal(w.opcode, IBV_WC_TM_RECV);
		if (!(w.flags & IBV_WC_TM_DATA_VALID))
			continue;       /* a rendezvous matched: data to come */
		i = (unsigned int)w.wr_id - 100;
		/* an eager message's tag is with its data; a rendezvous's
		 * was with its match */
		assert_int_equal(w.tm.tag, i % 2 ? 0 : 0x4000 + i);
		assert_int_equal(w.byte_len, 1000 + (i * 331) % 7000);
		assert_memory_equal(b.buf + 65536 + (size_t)i * 8192,
				    a.buf + (size_t)i * 4096, w.byte_len);
		done++;
	}
	while (fins < n / 2 && ep_poll(a.rcq, &wc, 1, 5000) == 1) {
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		fins++;
	}
	assert_int_equal(fins, n / 2);
	print_message("%u tagged messages, %u rendezvous, through %s\n", n, fins,
		      fault_args);
}

int
main(int argc, char **argv)
{
#define T(f) pair_test(f, &pair)
	const struct CMUnitTest tests[] = {
		T(test_tm_eager),
		T(test_tm_wildcard_and_order),
		T(test_tm_phase_sync),
		T(test_tm_no_tag),
		T(test_tm_del),
		T(test_tm_rendezvous),
		T(test_tm_rules),
		T(test_tm_buffer_memory),
	};
	const struct CMUnitTest loss_tests[] = {
		T(test_tm_loss),
	};
#undef T

	if (argc == 1)
		return cmocka_run_group_tests(tests, NULL, NULL);
	if (argc != 3) {
		fprintf(stderr, "usage: test_tm [WORKDIR FAULT_ARGS]\n");
		return 2;
	}
	fault_args = argv[2];
	if (ep_fault_config(argv[1], "tm", 6, fault_args, 13) != 0) {
		perror("test_tm: config");
		return 1;
	}
	return cmocka_run_group_tests_name(fault_args, loss_tests, NULL, NULL);
}
