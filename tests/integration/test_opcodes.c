/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The opcode x QP type table of ibv_post_send(3), for the QP types droce
 * has (RC, UC and UD), droce0 to droce1. The expectations come from
 * droce's opcode table (droce_wr_table), which the verbs layer's checks
 * and the engine read too; the table itself is held to the man page's
 * (test_table). Each opcode is posted behind a signalled RDMA WRITE (on
 * UD a SEND), in one chain:
 *
 *  - allowed: both WRs complete in order, with the table's completion
 *    opcode, and the opcode does what it says (SEND and SEND with
 *    immediate received, WRITEs placed, READ read, compare-and-swap and
 *    fetch-and-add applied once, ATOMIC_WRITE's 8 bytes placed, a type 2
 *    window bound and written through, invalidated locally or by the
 *    peer's SEND with invalidate so that it binds again, TSO on UD cut
 *    into datagrams of an MSS each);
 *  - allowed but with no wire opcode to carry it (SEND_WITH_INV on UC:
 *    InfiniBand gives UC no opcode with an IETH): EOPNOTSUPP with bad_wr
 *    on it;
 *  - not allowed on the type (READ and atomics on UC, all but SEND and
 *    TSO on UD, TSO on RC and UC, opcodes that do not exist): EINVAL
 *    with bad_wr on it.
 *
 * In the last two cases the WR ahead of it was posted and completes.
 * The XRC_SEND and RAW_PACKET columns, whose QPs are set up otherwise,
 * are in test_xrc.c and test_raw.c.
 *
 * Send flags, per QP type: an unsignalled SEND completes nothing and a
 * signalled one after it completes (both arrive); an inline SEND's buffer
 * is the caller's again when the post returns (overwritten then, the
 * receiver still gets what was posted); FENCE on RC and UC, not on UD
 * (EINVAL); IP_CSUM on UD only (EINVAL on RC and UC: it is raw packet
 * and UD QPs'); a
 * flag that does not exist is EINVAL.
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

#include "droce_engine.h"
#include "harness.h"

#define BUF (1u << 16)
#define GRH 40
#define QKEY 0x1234

/*
 * ibv_post_send(3)'s table as the page prints it (rdma-core 44): "X"
 * where the opcode is allowed, columns UD, UC, RC, XRC_SEND, RAW_PACKET.
 */
static const struct {
	enum ibv_wr_opcode opcode;
	const char *cells;
} man_page[] = {
	{ IBV_WR_SEND,                 "XXXXX" },
	{ IBV_WR_SEND_WITH_IMM,        "XXXX." },
	{ IBV_WR_RDMA_WRITE,           ".XXX." },
	{ IBV_WR_RDMA_WRITE_WITH_IMM,  ".XXX." },
	{ IBV_WR_RDMA_READ,            "..XX." },
	{ IBV_WR_ATOMIC_CMP_AND_SWP,   "..XX." },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, "..XX." },
	{ IBV_WR_LOCAL_INV,            ".XXX." },
	{ IBV_WR_BIND_MW,              ".XXX." },
	{ IBV_WR_SEND_WITH_INV,        ".XXX." },
	{ IBV_WR_TSO,                  "X...X" },
};

static const enum ibv_qp_type page_columns[] = {
	IBV_QPT_UD, IBV_QPT_UC, IBV_QPT_RC, IBV_QPT_XRC_SEND,
	IBV_QPT_RAW_PACKET,
};

/* Opcodes no table has: refused everywhere. */
static const unsigned int no_opcode[] = { IBV_WR_DRIVER1, 14, 77 };

/* A UD TSO header: IPoIB's four bytes, IPv4, TCP (checksums: droce's) */
#define TSO_MSS 400
static uint8_t tso_hdr[4 + 20 + 20] = {
	0x08, 0x00, 0, 0,
	0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0,
	10, 0, 0, 1, 10, 0, 0, 2,
	0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff,
	0, 0, 0, 0,
};

static struct ep_opts opts;
static struct ep a, b;
static struct ibv_ah *ah;         /* UD: a to b */
static struct ibv_mw *mw;         /* the window of the MW opcodes */
static uint32_t mw_rkey;          /* its rkey, bound or to bind */

static void
pair(enum ibv_qp_type type)
{
	ep_opts_default(&opts);
	opts.qp_type = type;
	opts.access |= IBV_ACCESS_MW_BIND;
	/* UD: room for a TSO header, IPoIB's, IPv4's and TCP's */
	if (type == IBV_QPT_UD)
		opts.max_tso_header = 64;
	opts.qkey = QKEY;
	assert_int_equal(ep_pair(&a, &b, BUF, &opts), 0);
	if (type == IBV_QPT_UD) {
		ah = ep_ah(&a, &b, &opts);
		assert_non_null(ah);
	}
}

static bool
is_ud(void)
{
	return a.qp->qp_type == IBV_QPT_UD;
}

/* UD: the receive of the SEND ahead of the opcode. */
static void
post_head_recv(void)
{
	if (is_ud())
		assert_int_equal(ep_post_recv(&b, 8, 0x100 - GRH, GRH + 64), 0);
}

/* Address @p wr to b's QP (UD). */
static void
ud_to_b(struct ibv_send_wr *wr)
{
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = b.qp->qp_num;
	wr->wr.ud.remote_qkey = QKEY;
}

/*
 * WRITE 0..63 -> b 0x100 (UD: SEND it, received at 0x100 after the GRH:
 * post_head_recv() first), then @p opcode with its data at 0x1000.
 */
static int
post_pair(enum ibv_wr_opcode opcode, struct ibv_send_wr *wr,
	  struct ibv_send_wr **bad)
{
	static struct ibv_sge sge[2];

	memset(wr, 0, 2 * sizeof(*wr));
	sge[0] = (struct ibv_sge){ (uintptr_t)a.buf, 64, a.mr->lkey };
	wr[0].wr_id = 1;
	wr[0].sg_list = &sge[0];
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].wr.rdma.rkey = b.mr->rkey;
	wr[0].wr.rdma.remote_addr = (uintptr_t)b.buf + 0x100;
	wr[0].next = &wr[1];
	if (is_ud()) {
		wr[0].opcode = IBV_WR_SEND;
		ud_to_b(&wr[0]);
	}

	sge[1] = (struct ibv_sge){ (uintptr_t)a.buf + 0x1000, 1500,
				   a.mr->lkey };
	wr[1].wr_id = 2;
	wr[1].sg_list = &sge[1];
	wr[1].num_sge = 1;
	wr[1].opcode = opcode;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	wr[1].imm_data = htobe32(0x55);
	if (droce_wr_flags(opcode) & DROCE_WR_WORD)
		sge[1].length = 8;
	if (droce_wr_flags(opcode) & DROCE_WR_ATOMIC) {
		wr[1].wr.atomic.rkey = b.mr->rkey;
		wr[1].wr.atomic.remote_addr = (uintptr_t)b.buf + 0x3000;
		wr[1].wr.atomic.compare_add =
			opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? 40 : 2;
		wr[1].wr.atomic.swap = 41;
	} else if (opcode == IBV_WR_BIND_MW) {
		wr[1].bind_mw.mw = mw;
		wr[1].bind_mw.rkey = mw_rkey;
		wr[1].bind_mw.bind_info = (struct ibv_mw_bind_info) {
			.mr = a.mr, .addr = (uintptr_t)a.buf + 0x1000,
			.length = 1500,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
		};
	} else if (opcode == IBV_WR_LOCAL_INV) {
		wr[1].invalidate_rkey = mw_rkey;
	} else if (is_ud()) {
		sge[1].length = 1000;   /* within the MTU */
		ud_to_b(&wr[1]);
		if (opcode == IBV_WR_TSO)
			/* IPoIB, IPv4, TCP: the 1000 bytes in three */
			wr[1].tso = (typeof(wr[1].tso)){ tso_hdr,
				sizeof(tso_hdr), TSO_MSS };
	} else {
		if (opcode == IBV_WR_SEND_WITH_INV)
			wr[1].invalidate_rkey = mw_rkey;
		wr[1].wr.rdma.rkey = b.mr->rkey;
		wr[1].wr.rdma.remote_addr = (uintptr_t)b.buf +
			((droce_wr_flags(opcode) & DROCE_WR_WORD) ?
			 0x3000 : 0x2000);
	}
	return ibv_post_send(a.qp, wr, bad);
}

/*
 * Bind the type 2 window mw over [off, off + 1500) of @p e's buffer,
 * through @p e's QP, with a new rkey: @return true if the bind worked.
 */
static bool
bind_on(struct ep *e, size_t off)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 77;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw_rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info) {
		.mr = e->mr, .addr = (uintptr_t)e->buf + off, .length = 1500,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	assert_int_equal(ibv_post_send(e->qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(e->scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.wr_id, 77);
	if (wc.status != IBV_WC_SUCCESS)
		return false;
	assert_int_equal(wc.opcode, IBV_WC_BIND_MW);
	mw_rkey = wr.bind_mw.rkey;
	return true;
}

/*
 * @p p holds @p len bytes of @p q within 2 s. On UC a WR completes when
 * it is sent, so its data may still be on the way.
 */
static void
wait_equal(const uint8_t *p, const uint8_t *q, size_t len)
{
	int i;

	for (i = 0; i < 200 && memcmp(p, q, len) != 0; i++)
		usleep(10000);
	assert_memory_equal(p, q, len);
}

static void
check_works(enum ibv_wr_opcode opcode)
{
	const struct droce_wr_info *op = droce_wr_info(opcode);
	uint64_t *target = (uint64_t *)(void *)(b.buf + 0x3000);
	uint64_t *result = (uint64_t *)(void *)(a.buf + 0x1000);
	/* a SEND, or a WRITE's immediate, takes a receive */
	bool recv = (op->flags & DROCE_WR_SEND) ||
		((op->flags & DROCE_WR_WRITE) && (op->flags & DROCE_WR_IMM));
	uint32_t len = is_ud() ? 1000 : 1500;
	uint32_t grh = is_ud() ? GRH : 0;
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_wc wc[2];

	fill_pattern(a.buf, BUF / 2, (uint32_t)opcode);
	fill_pattern(b.buf + 0x2000, 1500, 100 + (uint32_t)opcode);
	memset(b.buf, 0, 0x2000);
	*target = 40;
	/* the window: a's for BIND_MW and LOCAL_INV (bound already for
	 * the latter), b's and bound for SEND_WITH_INV */
	if (opcode == IBV_WR_BIND_MW || opcode == IBV_WR_LOCAL_INV ||
	    opcode == IBV_WR_SEND_WITH_INV) {
		struct ep *owner = opcode == IBV_WR_SEND_WITH_INV ? &b : &a;

		mw = ibv_alloc_mw(owner->pd, IBV_MW_TYPE_2);
		assert_non_null(mw);
		mw_rkey = mw->rkey;
		if (opcode != IBV_WR_BIND_MW)
			assert_true(bind_on(owner, 0x1000));
		else
			mw_rkey = ibv_inc_rkey(mw_rkey);
	}
	post_head_recv();
	if (recv)
		assert_int_equal(ep_post_recv(&b, 9, 0x4000, 4096), 0);
	if (opcode == IBV_WR_TSO) {
		/* the other two segments */
		assert_int_equal(ep_post_recv(&b, 10, 0x5000, 4096), 0);
		assert_int_equal(ep_post_recv(&b, 11, 0x6000, 4096), 0);
	}
	assert_int_equal(post_pair(opcode, wr, &bad), 0);
	assert_int_equal(ep_poll(a.scq, wc, 2, 5000), 2);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[1].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[1].opcode, op->wc_opcode);
	assert_int_equal(wc[1].byte_len,
			 op->cqe_len == DROCE_WR_LEN_WORD ? 8 :
			 op->cqe_len == DROCE_WR_LEN_NONE ? 0 :
			 (op->flags & DROCE_WR_WORD) ? 8 : len);
	if (is_ud()) {
		/* the SEND ahead of it */
		assert_int_equal(ep_poll(b.rcq, wc, 1, 5000), 1);
		assert_int_equal(wc[0].wr_id, 8);
		assert_int_equal(wc[0].byte_len, GRH + 64);
	}
	wait_equal(b.buf + 0x100, a.buf, 64);
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
		assert_int_equal(ep_poll(b.rcq, wc, 1, 5000), 1);
		assert_int_equal(wc[0].opcode, IBV_WC_RECV);
		assert_int_equal(wc[0].byte_len, grh + len);
		assert_int_equal(!!(wc[0].wc_flags & IBV_WC_WITH_IMM),
				 opcode == IBV_WR_SEND_WITH_IMM);
		assert_int_equal(!!(wc[0].wc_flags & IBV_WC_WITH_INV),
				 opcode == IBV_WR_SEND_WITH_INV);
		assert_memory_equal(b.buf + 0x4000 + grh, a.buf + 0x1000, len);
		if (opcode == IBV_WR_SEND_WITH_INV) {
			/* invalidated: a type 2 window binds again */
			assert_int_equal(wc[0].invalidated_rkey, mw_rkey);
			assert_true(bind_on(&b, 0x1000));
			assert_int_equal(ibv_dealloc_mw(mw), 0);
		}
		break;
	case IBV_WR_TSO: {
		uint32_t i, off;

		for (i = 0, off = 0; i < 3; i++, off += TSO_MSS) {
			uint32_t n = len - off < TSO_MSS ? len - off : TSO_MSS;
			const uint8_t *got = b.buf + 0x4000 + 0x1000 * i + grh;

			assert_int_equal(ep_poll(b.rcq, wc, 1, 5000), 1);
			assert_int_equal(wc[0].wr_id, 9 + i);
			assert_int_equal(wc[0].byte_len,
					 grh + sizeof(tso_hdr) + n);
			assert_true(wc[0].wc_flags & IBV_WC_IP_CSUM_OK);
			/* the TCP sequence number: 1 + the offset */
			assert_int_equal(got[4 + 20 + 7], (1 + off) & 0xff);
			assert_memory_equal(got + sizeof(tso_hdr),
					    a.buf + 0x1000 + off, n);
		}
		break;
	}
	case IBV_WR_BIND_MW: {
		/* b writes through the window into a */
		struct ibv_sge s = { (uintptr_t)b.buf + 0x2000, 1500,
				     b.mr->lkey };
		struct ibv_send_wr w = {
			.wr_id = 3, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)a.buf + 0x1000, mw_rkey },
		};
		struct ibv_send_wr *wbad;

		assert_int_equal(ibv_post_send(b.qp, &w, &wbad), 0);
		assert_int_equal(ep_poll(b.scq, wc, 1, 5000), 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		wait_equal(a.buf + 0x1000, b.buf + 0x2000, 1500);
		assert_int_equal(ibv_dealloc_mw(mw), 0);
		break;
	}
	case IBV_WR_LOCAL_INV:
		/* invalidated: a type 2 window binds again */
		assert_true(bind_on(&a, 0x1000));
		assert_int_equal(ibv_dealloc_mw(mw), 0);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		assert_int_equal(ep_poll(b.rcq, wc, 1, 5000), 1);
		assert_int_equal(wc[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		assert_int_equal(be32toh(wc[0].imm_data), 0x55);
		/* fall through */
	case IBV_WR_RDMA_WRITE:
		wait_equal(b.buf + 0x2000, a.buf + 0x1000, 1500);
		break;
	case IBV_WR_RDMA_READ:
		assert_memory_equal(a.buf + 0x1000, b.buf + 0x2000, 1500);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		assert_int_equal(*result, 40);
		assert_int_equal(*target, 41);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		assert_int_equal(*result, 40);
		assert_int_equal(*target, 42);
		break;
	case IBV_WR_ATOMIC_WRITE:
		/* a's 8 bytes, placed at once */
		assert_memory_equal(target, a.buf + 0x1000, 8);
		break;
	default:
		fail();
	}
}

static void
check_refused(enum ibv_wr_opcode opcode, int err)
{
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_wc wc;

	memset(b.buf + 0x100, 0, 64);
	fill_pattern(a.buf, 64, 7 + (uint32_t)opcode);
	post_head_recv();
	assert_int_equal(post_pair(opcode, wr, &bad), err);
	assert_ptr_equal(bad, &wr[1]);
	/* the WRITE ahead of it went, and nothing else */
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 1);
	if (is_ud())
		assert_int_equal(ep_poll(b.rcq, &wc, 1, 5000), 1);
	wait_equal(b.buf + 0x100, a.buf, 64);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 100), 0);
}

static const char *
type_name(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC ? "RC" : type == IBV_QPT_UC ? "UC" : "UD";
}

/* @p opcode on a QP of @p type: as the opcode table says. */
static void
check_opcode(enum ibv_qp_type type, unsigned int opcode)
{
	int err = droce_wr_allowed(opcode, type);
	const struct droce_wr_info *op = droce_wr_info(opcode);

	print_message("%s %s (%u): %s\n", type_name(type),
		      op != NULL ? op->name : "no such opcode", opcode,
		      err == 0 ? "works" : err == EOPNOTSUPP ?
		      "EOPNOTSUPP (nothing carries it)" : "EINVAL");
	if (err == 0)
		check_works((enum ibv_wr_opcode)opcode);
	else
		check_refused((enum ibv_wr_opcode)opcode, err);
}

static void
run_column(enum ibv_qp_type type)
{
	unsigned int op;
	size_t i;

	pair(type);
	for (op = 0; op < DROCE_WR_NUM; op++)
		if (droce_wr_info(op) != NULL)
			check_opcode(type, op);
	for (i = 0; i < sizeof(no_opcode) / sizeof(no_opcode[0]); i++)
		check_opcode(type, no_opcode[i]);
	if (type == IBV_QPT_UD)
		ibv_destroy_ah(ah);
	ep_close(&a);
	ep_close(&b);
}

/*
 * droce's table is the man page's, cell for cell, plus ATOMIC_WRITE
 * (newer than the page) on RC and XRC_SEND; every other opcode is
 * refused on every type.
 */
static void
test_table(void **state)
{
	unsigned int op, n = 0;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(man_page) / sizeof(man_page[0]); i++) {
		for (j = 0; j < sizeof(page_columns) / sizeof(page_columns[0]);
		     j++) {
			int err = droce_wr_allowed(man_page[i].opcode,
						   page_columns[j]);

			print_message("%s on type %d: %d\n",
				      droce_wr_info(man_page[i].opcode)->name,
				      page_columns[j], err);
			assert_int_equal(err != EINVAL,
					 man_page[i].cells[j] == 'X');
		}
	}
	assert_int_equal(droce_wr_allowed(IBV_WR_ATOMIC_WRITE, IBV_QPT_RC), 0);
	assert_int_not_equal(droce_wr_allowed(IBV_WR_ATOMIC_WRITE,
					      IBV_QPT_XRC_SEND), EINVAL);
	for (j = 0; j < sizeof(page_columns) / sizeof(page_columns[0]); j++)
		if (page_columns[j] != IBV_QPT_RC &&
		    page_columns[j] != IBV_QPT_XRC_SEND)
			assert_int_equal(droce_wr_allowed(IBV_WR_ATOMIC_WRITE,
							  page_columns[j]),
					 EINVAL);
	for (op = 0; op < DROCE_WR_NUM; op++)
		n += droce_wr_info(op) != NULL;
	assert_int_equal(n, sizeof(man_page) / sizeof(man_page[0]) + 1);
	for (i = 0; i < sizeof(no_opcode) / sizeof(no_opcode[0]); i++)
		assert_int_equal(droce_wr_allowed(no_opcode[i], IBV_QPT_RC),
				 EINVAL);
	/* no QP type may be posted on but those of the page */
	for (op = 0; op < DROCE_WR_NUM; op++)
		if (droce_wr_info(op) != NULL)
			assert_int_equal(droce_wr_allowed(op, IBV_QPT_XRC_RECV),
					 EINVAL);
}

static void
test_rc(void **state)
{
	(void)state;
	run_column(IBV_QPT_RC);
}

static void
test_uc(void **state)
{
	(void)state;
	run_column(IBV_QPT_UC);
}

static void
test_ud(void **state)
{
	(void)state;
	run_column(IBV_QPT_UD);
}

/* A SEND of a's [off, off + len) with @p flags (addressed on UD). */
static int
post_send_flags(uint64_t wr_id, void *addr, uint32_t len, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, a.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = flags,
	}, *bad;

	if (is_ud())
		ud_to_b(&wr);
	return ibv_post_send(a.qp, &wr, &bad);
}

static void
flags_column(enum ibv_qp_type type)
{
	uint32_t grh = type == IBV_QPT_UD ? GRH : 0;
	uint8_t inl[48];
	struct ibv_wc wc[2];

	pair(type);
	/* unsignalled, then signalled: one completion, two messages */
	assert_int_equal(ep_post_recv(&b, 1, 0x4000, 4096), 0);
	assert_int_equal(ep_post_recv(&b, 2, 0x6000, 4096), 0);
	fill_pattern(a.buf, 200, 1);
	assert_int_equal(post_send_flags(1, a.buf, 100, 0), 0);
	assert_int_equal(post_send_flags(2, a.buf + 100, 100,
					 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(a.scq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].wr_id, 2);
	assert_int_equal(ep_poll(a.scq, wc, 1, 200), 0);
	assert_int_equal(ep_poll(b.rcq, wc, 2, 2000), 2);
	assert_memory_equal(b.buf + 0x4000 + grh, a.buf, 100);
	assert_memory_equal(b.buf + 0x6000 + grh, a.buf + 100, 100);

	/* inline from a buffer of the stack (no lkey needed), overwritten
	 * as soon as the post returns */
	assert_int_equal(ep_post_recv(&b, 3, 0x4000, 4096), 0);
	memset(inl, 0x5a, sizeof(inl));
	{
		struct ibv_sge sge = { (uintptr_t)inl, sizeof(inl), 0 };
		struct ibv_send_wr wr = {
			.wr_id = 3, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
		}, *bad;

		if (is_ud())
			ud_to_b(&wr);
		assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	}
	memset(inl, 0, sizeof(inl));
	assert_int_equal(ep_poll(a.scq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(ep_poll(b.rcq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].byte_len, grh + sizeof(inl));
	memset(inl, 0x5a, sizeof(inl));
	assert_memory_equal(b.buf + 0x4000 + grh, inl, sizeof(inl));

	/* FENCE: RC's (and accepted on UC, where it orders nothing), not
	 * UD's */
	assert_int_equal(ep_post_recv(&b, 4, 0x4000, 4096), 0);
	if (type == IBV_QPT_UD) {
		assert_int_equal(post_send_flags(4, a.buf, 10,
						 IBV_SEND_SIGNALED |
						 IBV_SEND_FENCE), EINVAL);
		assert_int_equal(post_send_flags(4, a.buf, 10,
						 IBV_SEND_SIGNALED), 0);
	} else {
		assert_int_equal(post_send_flags(4, a.buf, 10,
						 IBV_SEND_SIGNALED |
						 IBV_SEND_FENCE), 0);
	}
	assert_int_equal(ep_poll(a.scq, wc, 1, 2000), 1);
	assert_int_equal(ep_poll(b.rcq, wc, 1, 2000), 1);
	/* IP_CSUM is raw packet and UD QPs' (UD: IPoIB datagrams, in
	 * test_ud.c); a flag that does not exist */
	if (type == IBV_QPT_UD) {
		assert_int_equal(ep_post_recv(&b, 5, 0x4000, 4096), 0);
		assert_int_equal(post_send_flags(5, a.buf, 10,
						 IBV_SEND_SIGNALED |
						 IBV_SEND_IP_CSUM), 0);
		assert_int_equal(ep_poll(a.scq, wc, 1, 2000), 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		assert_int_equal(ep_poll(b.rcq, wc, 1, 2000), 1);
	} else {
		assert_int_equal(post_send_flags(5, a.buf, 10,
						 IBV_SEND_IP_CSUM), EINVAL);
	}
	assert_int_equal(post_send_flags(5, a.buf, 10, 1u << 20), EINVAL);
	assert_int_equal(ep_poll(a.scq, wc, 1, 100), 0);
	if (type == IBV_QPT_UD)
		ibv_destroy_ah(ah);
	ep_close(&a);
	ep_close(&b);
}

static void
test_flags(void **state)
{
	(void)state;
	flags_column(IBV_QPT_RC);
	flags_column(IBV_QPT_UC);
	flags_column(IBV_QPT_UD);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_rc),
		cmocka_unit_test(test_uc),
		cmocka_unit_test(test_ud),
		cmocka_unit_test(test_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
