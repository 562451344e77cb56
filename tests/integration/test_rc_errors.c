/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * RC error paths between droce0 and droce1 through the verbs API, each
 * test on a fresh pair of QPs (an error leaves them in ERR):
 *  - remote access errors: RDMA WRITE, READ and both atomics with a bad
 *    rkey, a range past the end of the MR, an MR without the right, and
 *    the rkey of an MR of another PD of the target. The failing WR
 *    completes with IBV_WC_REM_ACCESS_ERR, the WRs before it succeed, the
 *    target memory does not change, both QPs go to ERR, every later WR
 *    (signalled or not) and every posted receive is flushed in order,
 *    and WRs posted in ERR are accepted and flushed too; a READ and an
 *    atomic the responder took before the failing request are answered;
 *  - atomics on an address that is not 8-byte aligned;
 *  - local protection: a wrong lkey, an SGE past its MR, a READ or atomic
 *    into an MR without LOCAL_WRITE (IBV_WC_LOC_PROT_ERR), also behind a
 *    SEND that is retried after RNR NAKs; behind a WR that fails at the
 *    responder, the locally failed WR is flushed, not failed again;
 *  - a SEND longer than its receive (IBV_WC_LOC_LEN_ERR at the receiver,
 *    IBV_WC_REM_INV_REQ_ERR at the requester);
 *  - receiver not ready: infinite RNR retry waits for the receive,
 *    a finite count ends in IBV_WC_RNR_RETRY_EXC_ERR;
 *  - a peer that is gone (destroyed, in ERR, in RESET): retry_cnt
 *    retransmissions, then IBV_WC_RETRY_EXC_ERR;
 *  - recovery: ERR -> RESET -> RTS carries traffic again.
 */

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <droce.h>

#include "droce_engine.h"
#include "harness.h"

#define BUF (64u << 10)
/* a completion that is due arrives within this */
#define POLL_MS 2000
/* how long "nothing more" is watched for */
#define QUIET_MS 20

/* Where things live in a's buffer. */
#define A_BAD 0                 /* local side of the failing WR */
#define A_GOOD 8192             /* what the WRITE before it carries */
#define A_LATE 16384            /* where the READ after it would land */
#define A_ATOM 20480            /* the result of the atomic after it */
#define A_SEND 24576            /* what SENDs carry */
#define A_READ 28672            /* where the READ before it lands */
#define A_RECV 49152            /* a's receives, RECV_LEN each */

/* Where things live in b's buffer. */
#define B_TGT 8192              /* the target of the failing WR */
#define B_OOB_MR 16384          /* length of the short MR (from 0) */
#define B_GOOD 32768            /* where the WRITE before it lands */
#define B_LATE 36864            /* where the WRITE after it would land */
#define B_ATOM 40960            /* the target of the atomic after it */
#define B_READ 45056            /* what the READ before it fetches */
#define B_RECV 49152            /* b's receives, RECV_LEN each */

#define RECV_LEN 1024
#define RDMA_LEN 3000           /* three packets at the 1024-byte MTU */
#define GOOD_LEN 64

#define ALL_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct ep a, b;
static struct ep_opts opts;
/* MRs and a PD beside the endpoints', freed before them */
static struct ibv_mr *extra_mr[2];
static struct ibv_pd *extra_pd;
/* what the buffers should hold */
static uint8_t *want_a, *want_b;

/* ------------------------------------------------------------------------
 * Helpers.
 */

static void
opts_fast(struct ep_opts *o)
{
	ep_opts_default(o);
	o->timeout = 10;        /* ~4 ms: errors here come as NAKs */
	o->retry_cnt = 2;
	o->rnr_retry = 7;
	o->min_rnr_timer = 1;   /* 0.01 ms */
}

/* Open a and b on droce0 and droce1 and connect them both ways. */
static void
pair_open(const struct ep_opts *o)
{
	assert_int_equal(ep_pair(&a, &b, BUF, o), 0);
	fill_pattern(a.buf, BUF, 0xa);
	fill_pattern(b.buf, BUF, 0xb);
	want_a = malloc(BUF);
	want_b = malloc(BUF);
	assert_non_null(want_a);
	assert_non_null(want_b);
	memcpy(want_a, a.buf, BUF);
	memcpy(want_b, b.buf, BUF);
}

/* What a test made beside the endpoints. */
static void
free_extras(void)
{
	size_t i;

	for (i = 0; i < sizeof(extra_mr) / sizeof(extra_mr[0]); i++) {
		if (extra_mr[i] != NULL)
			ibv_dereg_mr(extra_mr[i]);
		extra_mr[i] = NULL;
	}
	if (extra_pd != NULL)
		ibv_dealloc_pd(extra_pd);
	extra_pd = NULL;
	free(want_a);
	free(want_b);
	want_a = NULL;
	want_b = NULL;
}

/* Each test opens a and b with pair_open() and timers of its own; the
 * fixture closes them after it. */
static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .release = free_extras,
};

static struct ibv_mr *
extra_reg(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	size_t i;

	for (i = 0; i < sizeof(extra_mr) / sizeof(extra_mr[0]); i++) {
		if (extra_mr[i] == NULL) {
			extra_mr[i] = ibv_reg_mr(pd, addr, len, access);
			assert_non_null(extra_mr[i]);
			return extra_mr[i];
		}
	}
	fail_msg("too many extra MRs");
	return NULL;
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void
modify_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = state;
	assert_int_equal(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
}

/* A send WR with every field of its own. */
struct req {
	enum ibv_wr_opcode op;
	uint64_t wr_id;
	uint8_t *laddr;
	uint32_t len;
	uint32_t lkey;
	uint64_t raddr;
	uint32_t rkey;
	unsigned int flags;
	uint64_t compare_add;
	uint64_t swap;
	uint32_t imm;           /* network order */
};

/* What an opcode is: droce's opcode table. */
static bool
is_atomic(enum ibv_wr_opcode op)
{
	return (droce_wr_flags(op) & DROCE_WR_ATOMIC) != 0;
}

/* An atomic or an ATOMIC_WRITE: 8 bytes at an aligned address. */
static bool
is_word(enum ibv_wr_opcode op)
{
	return (droce_wr_flags(op) & DROCE_WR_WORD) != 0;
}

static void
req_to_wr(const struct req *r, struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	sge->addr = (uintptr_t)r->laddr;
	sge->length = r->len;
	sge->lkey = r->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = r->wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = r->op;
	wr->send_flags = r->flags;
	wr->imm_data = r->imm;
	if (is_atomic(r->op)) {
		wr->wr.atomic.remote_addr = r->raddr;
		wr->wr.atomic.rkey = r->rkey;
		wr->wr.atomic.compare_add = r->compare_add;
		wr->wr.atomic.swap = r->swap;
	} else {
		wr->wr.rdma.remote_addr = r->raddr;
		wr->wr.rdma.rkey = r->rkey;
	}
}

static int
post_req(struct ibv_qp *qp, const struct req *r)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;

	req_to_wr(r, &wr, &sge);
	return ibv_post_send(qp, &wr, &bad);
}

/* Post a receive of RECV_LEN at slot @p i of e's receive area. */
static void
post_recv_slot(struct ep *e, size_t area, uint64_t wr_id, unsigned int i)
{
	assert_int_equal(ep_post_recv(e, wr_id, area + i * RECV_LEN,
				      RECV_LEN), 0);
}

/* The next completion of @p cq is @p wr_id of @p qp with @p status. */
static void
expect_wc(struct ibv_cq *cq, const struct ibv_qp *qp, uint64_t wr_id,
	  enum ibv_wc_status status, struct ibv_wc *out)
{
	struct ibv_wc wc;
	int n;

	n = ep_poll(cq, &wc, 1, POLL_MS);
	if (n != 1)
		fail_msg("no completion for wr_id %" PRIu64 " (expected %s)",
			 wr_id, ibv_wc_status_str(status));
	if (wc.wr_id != wr_id || wc.status != status)
		fail_msg("completion wr_id %" PRIu64 " %s (vendor_err %u), "
			 "expected wr_id %" PRIu64 " %s", wc.wr_id,
			 ibv_wc_status_str(wc.status), wc.vendor_err, wr_id,
			 ibv_wc_status_str(status));
	assert_int_equal(wc.qp_num, qp->qp_num);
	if (out != NULL)
		*out = wc;
}

/* Nothing more arrives on @p cq for a while. */
static void
expect_quiet(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	if (ep_poll(cq, &wc, 1, QUIET_MS) != 0)
		fail_msg("unexpected completion wr_id %" PRIu64 " %s",
			 wc.wr_id, ibv_wc_status_str(wc.status));
}

/* @p buf holds what @p want says, byte for byte. */
static void
check_memory(const char *what, const uint8_t *buf, const uint8_t *want)
{
	size_t i;

	for (i = 0; i < BUF; i++)
		if (buf[i] != want[i])
			fail_msg("%s changed at offset %zu: 0x%02x, expected "
				 "0x%02x", what, i, buf[i], want[i]);
}

/* ------------------------------------------------------------------------
 * Remote access errors.
 */

enum fault {
	BAD_RKEY,               /* an rkey that names no MR */
	OUT_OF_BOUNDS,          /* the range runs past the end of the MR */
	NO_RIGHT,               /* the MR lacks the right the op needs */
	OTHER_PD,               /* an MR of another PD of the target */
};

static int
right_of(enum ibv_wr_opcode op)
{
	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_ATOMIC_WRITE)
		return IBV_ACCESS_REMOTE_WRITE;
	if (op == IBV_WR_RDMA_READ)
		return IBV_ACCESS_REMOTE_READ;
	return IBV_ACCESS_REMOTE_ATOMIC;
}

/* Build the failing WR (wr_id 2) on the target b with @p fault. */
static void
bad_req(enum ibv_wr_opcode op, enum fault fault, struct req *r)
{
	uint32_t len = is_word(op) ? 8 : RDMA_LEN;
	struct ibv_mr *mr;

	memset(r, 0, sizeof(*r));
	r->op = op;
	r->wr_id = 2;
	r->laddr = a.buf + A_BAD;
	r->len = len;
	r->lkey = a.mr->lkey;
	r->raddr = (uintptr_t)(b.buf + B_TGT);
	r->flags = IBV_SEND_SIGNALED;
	r->compare_add = 0x1111;
	r->swap = 0x2222;

	switch (fault) {
	case BAD_RKEY:
		/* the MR's slot, another key */
		r->rkey = b.mr->rkey ^ 0x80000000u;
		break;
	case OUT_OF_BOUNDS:
		mr = extra_reg(b.pd, b.buf, B_OOB_MR, ALL_ACCESS);
		r->rkey = mr->rkey;
		/* starts inside, ends outside; an atomic at the very end */
		r->raddr = (uintptr_t)(b.buf + B_OOB_MR) -
			(is_word(op) ? 0 : len / 2);
		break;
	case NO_RIGHT:
		mr = extra_reg(b.pd, b.buf, BUF, ALL_ACCESS & ~right_of(op));
		r->rkey = mr->rkey;
		break;
	case OTHER_PD:
		extra_pd = ibv_alloc_pd(b.ctx);
		assert_non_null(extra_pd);
		mr = extra_reg(extra_pd, b.buf, BUF, ALL_ACCESS);
		r->rkey = mr->rkey;
		break;
	}
	/* the compare value matches: only the error stops the swap */
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP)
		memcpy(&r->compare_add, (const void *)(uintptr_t)r->raddr, 8);
}

/*
 * Before the failing WR, two WRITEs that succeed (the first unsignalled:
 * no completion); after it, a WRITE (unsignalled), a SEND, a READ
 * (unsignalled) and an atomic that must all be flushed without touching
 * memory; receives on both sides flushed.
 */
static void
remote_error(enum ibv_wr_opcode op, enum fault fault)
{
	struct ibv_wc wc;
	struct req r;
	unsigned int i;

	opts_fast(&opts);
	pair_open(&opts);
	bad_req(op, fault, &r);

	for (i = 0; i < 3; i++)
		post_recv_slot(&a, A_RECV, 300 + i, i);
	post_recv_slot(&b, B_RECV, 400, 0);

	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 0, A_GOOD, GOOD_LEN,
				 &b, B_GOOD, 0), 0);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 1, A_GOOD + GOOD_LEN,
				 GOOD_LEN, &b, B_GOOD + GOOD_LEN,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(post_req(a.qp, &r), 0);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 3, A_GOOD, GOOD_LEN,
				 &b, B_LATE, 0), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 4, A_SEND, 32, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_READ, 5, A_LATE, GOOD_LEN,
				 &b, B_GOOD, 0), 0);
	assert_int_equal(post_req(a.qp, &(struct req){
		.op = IBV_WR_ATOMIC_FETCH_AND_ADD, .wr_id = 6,
		.laddr = a.buf + A_ATOM, .len = 8, .lkey = a.mr->lkey,
		.raddr = (uintptr_t)(b.buf + B_ATOM), .rkey = b.mr->rkey,
		.flags = IBV_SEND_SIGNALED, .compare_add = 1 }), 0);

	/* in order: the good ones, the failing one, then every later WR */
	expect_wc(a.scq, a.qp, 1, IBV_WC_SUCCESS, &wc);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
	expect_wc(a.scq, a.qp, 2, IBV_WC_REM_ACCESS_ERR, NULL);
	for (i = 3; i <= 6; i++)
		expect_wc(a.scq, a.qp, i, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);
	for (i = 0; i < 3; i++)
		expect_wc(a.rcq, a.qp, 300 + i, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.rcq);

	/* both ends of the connection are in error */
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_ERR);
	expect_wc(b.rcq, b.qp, 400, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(b.rcq);
	expect_quiet(b.scq);

	/* only the WRITEs before the error moved bytes */
	memcpy(want_b + B_GOOD, want_a + A_GOOD, 2 * GOOD_LEN);
	check_memory("target", b.buf, want_b);
	check_memory("requester", a.buf, want_a);

	/* in ERR, posting works and everything posted is flushed */
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 7, A_GOOD, GOOD_LEN,
				 &b, B_LATE, IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 8, A_SEND, 32, NULL, 0, 0),
			 0);
	post_recv_slot(&a, A_RECV, 303, 3);
	expect_wc(a.scq, a.qp, 7, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_wc(a.scq, a.qp, 8, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_wc(a.rcq, a.qp, 303, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);
	expect_quiet(b.rcq);
	check_memory("target", b.buf, want_b);
	check_memory("requester", a.buf, want_a);
}

static void
test_write_bad_rkey(void **state)
{
	(void)state;
	remote_error(IBV_WR_RDMA_WRITE, BAD_RKEY);
}

static void
test_write_out_of_bounds(void **state)
{
	(void)state;
	remote_error(IBV_WR_RDMA_WRITE, OUT_OF_BOUNDS);
}

static void
test_write_no_remote_write(void **state)
{
	(void)state;
	remote_error(IBV_WR_RDMA_WRITE, NO_RIGHT);
}

static void
test_write_other_pd(void **state)
{
	(void)state;
	remote_error(IBV_WR_RDMA_WRITE, OTHER_PD);
}

static void
test_read_bad_rkey(void **state)
{
	(void)state;
	remote_error(IBV_WR_RDMA_READ, BAD_RKEY);
}

static void
test_read_out_of_bounds(void **state)
{
	(void)state;
	remote_error(IBV_WR_RDMA_READ, OUT_OF_BOUNDS);
}

static void
test_read_no_remote_read(void **state)
{
	(void)state;
	remote_error(IBV_WR_RDMA_READ, NO_RIGHT);
}

static void
test_read_other_pd(void **state)
{
	(void)state;
	remote_error(IBV_WR_RDMA_READ, OTHER_PD);
}

static void
test_cmp_swap_bad_rkey(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_CMP_AND_SWP, BAD_RKEY);
}

static void
test_cmp_swap_out_of_bounds(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_CMP_AND_SWP, OUT_OF_BOUNDS);
}

static void
test_cmp_swap_no_remote_atomic(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_CMP_AND_SWP, NO_RIGHT);
}

static void
test_cmp_swap_other_pd(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_CMP_AND_SWP, OTHER_PD);
}

static void
test_fetch_add_bad_rkey(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, BAD_RKEY);
}

static void
test_fetch_add_out_of_bounds(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, OUT_OF_BOUNDS);
}

static void
test_fetch_add_no_remote_atomic(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, NO_RIGHT);
}

static void
test_fetch_add_other_pd(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD, OTHER_PD);
}

static void
test_atomic_write_bad_rkey(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_WRITE, BAD_RKEY);
}

static void
test_atomic_write_out_of_bounds(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_WRITE, OUT_OF_BOUNDS);
}

static void
test_atomic_write_no_remote_write(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_WRITE, NO_RIGHT);
}

static void
test_atomic_write_other_pd(void **state)
{
	(void)state;
	remote_error(IBV_WR_ATOMIC_WRITE, OTHER_PD);
}

/* A failing WR completes with its error even when not signalled. */
static void
test_unsignalled_error_completes(void **state)
{
	struct req r;

	(void)state;
	opts_fast(&opts);
	pair_open(&opts);
	bad_req(IBV_WR_RDMA_WRITE, BAD_RKEY, &r);
	r.flags = 0;
	assert_int_equal(post_req(a.qp, &r), 0);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 3, A_GOOD, GOOD_LEN,
				 &b, B_LATE, IBV_SEND_SIGNALED), 0);
	expect_wc(a.scq, a.qp, 2, IBV_WC_REM_ACCESS_ERR, NULL);
	expect_wc(a.scq, a.qp, 3, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	check_memory("target", b.buf, want_b);
}

/*
 * A READ and an atomic accepted before the failing request are answered
 * before its NAK (a responder answers in PSN order): both succeed, with
 * their data, and only the failing WR and those after it fail. The WRs
 * go in one post, so they reach the responder together.
 */
static void
test_rd_atomic_before_error(void **state)
{
	struct ibv_send_wr wr[4], *bad = NULL;
	struct ibv_sge sge[4];
	uint64_t old, now;
	struct ibv_wc wc;
	struct req r;
	int i;

	(void)state;
	opts_fast(&opts);
	pair_open(&opts);
	memcpy(&old, b.buf + B_ATOM, 8);
	req_to_wr(&(struct req){
		.op = IBV_WR_RDMA_READ, .wr_id = 1, .laddr = a.buf + A_READ,
		.len = RDMA_LEN, .lkey = a.mr->lkey,
		.raddr = (uintptr_t)(b.buf + B_READ), .rkey = b.mr->rkey,
		.flags = IBV_SEND_SIGNALED }, &wr[0], &sge[0]);
	req_to_wr(&(struct req){
		.op = IBV_WR_ATOMIC_FETCH_AND_ADD, .wr_id = 2,
		.laddr = a.buf + A_ATOM, .len = 8, .lkey = a.mr->lkey,
		.raddr = (uintptr_t)(b.buf + B_ATOM), .rkey = b.mr->rkey,
		.flags = IBV_SEND_SIGNALED, .compare_add = 5 },
		&wr[1], &sge[1]);
	bad_req(IBV_WR_RDMA_WRITE, BAD_RKEY, &r);
	r.wr_id = 3;
	req_to_wr(&r, &wr[2], &sge[2]);
	req_to_wr(&(struct req){
		.op = IBV_WR_SEND, .wr_id = 4, .laddr = a.buf + A_SEND,
		.len = 32, .lkey = a.mr->lkey, .flags = IBV_SEND_SIGNALED },
		&wr[3], &sge[3]);
	for (i = 0; i < 3; i++)
		wr[i].next = &wr[i + 1];
	assert_int_equal(ibv_post_send(a.qp, wr, &bad), 0);

	expect_wc(a.scq, a.qp, 1, IBV_WC_SUCCESS, &wc);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
	assert_int_equal(wc.byte_len, RDMA_LEN);
	expect_wc(a.scq, a.qp, 2, IBV_WC_SUCCESS, &wc);
	assert_int_equal(wc.opcode, IBV_WC_FETCH_ADD);
	expect_wc(a.scq, a.qp, 3, IBV_WC_REM_ACCESS_ERR, NULL);
	expect_wc(a.scq, a.qp, 4, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);

	memcpy(want_a + A_READ, want_b + B_READ, RDMA_LEN);
	memcpy(want_a + A_ATOM, &old, 8);
	now = old + 5;
	memcpy(want_b + B_ATOM, &now, 8);
	check_memory("requester", a.buf, want_a);
	check_memory("target", b.buf, want_b);
}

/* ------------------------------------------------------------------------
 * Misaligned atomics.
 */

/*
 * An atomic on an address that is not 8-byte aligned never executes.
 * rdma-core's soft-RoCE refuses it at post time (EINVAL, the QP intact);
 * a provider that posts it must complete it with an error (the
 * responder's answer is a NAK, invalid request) and the QP goes to ERR.
 */
static void
misaligned_atomic(enum ibv_wr_opcode op)
{
	struct ibv_send_wr wr, *bad = NULL;
	uint64_t before, old;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct req r;
	int ret;

	opts_fast(&opts);
	pair_open(&opts);
	memcpy(&before, b.buf + B_TGT, 8);
	r = (struct req){
		.op = op, .wr_id = 2, .laddr = a.buf + A_BAD, .len = 8,
		.lkey = a.mr->lkey, .raddr = (uintptr_t)(b.buf + B_TGT + 4),
		.rkey = b.mr->rkey, .flags = IBV_SEND_SIGNALED,
		.compare_add = 1, .swap = 0x5555,
	};
	req_to_wr(&r, &wr, &sge);
	ret = ibv_post_send(a.qp, &wr, &bad);
	if (ret == 0) {
		assert_int_equal(ep_poll(a.scq, &wc, 1, POLL_MS), 1);
		assert_int_equal(wc.wr_id, 2);
		if (wc.status != IBV_WC_REM_INV_REQ_ERR &&
		    wc.status != IBV_WC_REM_ACCESS_ERR)
			fail_msg("misaligned atomic completed with %s",
				 ibv_wc_status_str(wc.status));
		assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
		check_memory("target", b.buf, want_b);
		check_memory("requester", a.buf, want_a);
		return;
	}
	assert_int_equal(ret, EINVAL);
	assert_ptr_equal(bad, &wr);
	expect_quiet(a.scq);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTS);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	check_memory("target", b.buf, want_b);
	check_memory("requester", a.buf, want_a);

	/* the QP is intact: the aligned atomic goes through */
	r.raddr = (uintptr_t)(b.buf + B_TGT);
	r.wr_id = 3;
	r.compare_add = op == IBV_WR_ATOMIC_CMP_AND_SWP ? before : 1;
	assert_int_equal(post_req(a.qp, &r), 0);
	expect_wc(a.scq, a.qp, 3, IBV_WC_SUCCESS, &wc);
	if (op == IBV_WR_ATOMIC_WRITE) {
		/* the requester's 8 bytes, placed */
		assert_memory_equal(b.buf + B_TGT, a.buf + A_BAD, 8);
		return;
	}
	memcpy(&old, a.buf + A_BAD, 8);
	assert_int_equal(old, before);
	memcpy(&old, b.buf + B_TGT, 8);
	assert_int_equal(old, op == IBV_WR_ATOMIC_CMP_AND_SWP ? 0x5555 :
			 before + 1);
}

static void
test_cmp_swap_misaligned(void **state)
{
	(void)state;
	misaligned_atomic(IBV_WR_ATOMIC_CMP_AND_SWP);
}

static void
test_fetch_add_misaligned(void **state)
{
	(void)state;
	misaligned_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD);
}

static void
test_atomic_write_misaligned(void **state)
{
	(void)state;
	misaligned_atomic(IBV_WR_ATOMIC_WRITE);
}

/* ------------------------------------------------------------------------
 * Local protection.
 */

/*
 * WR 2 fails locally with IBV_WC_LOC_PROT_ERR, before anything goes on
 * the wire: the peer sees nothing and stays in RTS, the requester goes to
 * ERR and flushes the WR after it.
 */
static void
local_error(const struct req *r)
{
	post_recv_slot(&b, B_RECV, 400, 0);
	post_recv_slot(&a, A_RECV, 300, 0);
	assert_int_equal(post_req(a.qp, r), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 3, A_SEND, 32, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_wc(a.scq, a.qp, 2, IBV_WC_LOC_PROT_ERR, NULL);
	expect_wc(a.scq, a.qp, 3, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);
	expect_wc(a.rcq, a.qp, 300, IBV_WC_WR_FLUSH_ERR, NULL);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	/* nothing reached b: its receive is still posted */
	expect_quiet(b.rcq);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	check_memory("target", b.buf, want_b);
	check_memory("requester", a.buf, want_a);
}

static void
test_send_bad_lkey(void **state)
{
	(void)state;
	opts_fast(&opts);
	pair_open(&opts);
	local_error(&(struct req){
		.op = IBV_WR_SEND, .wr_id = 2, .laddr = a.buf + A_SEND,
		.len = 100, .lkey = a.mr->lkey ^ 0x80000000u,
		.flags = IBV_SEND_SIGNALED });
}

static void
test_write_bad_lkey(void **state)
{
	(void)state;
	opts_fast(&opts);
	pair_open(&opts);
	local_error(&(struct req){
		.op = IBV_WR_RDMA_WRITE, .wr_id = 2, .laddr = a.buf + A_GOOD,
		.len = RDMA_LEN, .lkey = a.mr->lkey ^ 0x80000000u,
		.raddr = (uintptr_t)(b.buf + B_TGT), .rkey = b.mr->rkey,
		.flags = IBV_SEND_SIGNALED });
}

/* A SEND whose SGE runs past the end of its MR. */
static void
test_send_lkey_out_of_bounds(void **state)
{
	struct ibv_mr *mr;

	(void)state;
	opts_fast(&opts);
	pair_open(&opts);
	mr = extra_reg(a.pd, a.buf, A_SEND + 16, IBV_ACCESS_LOCAL_WRITE);
	local_error(&(struct req){
		.op = IBV_WR_SEND, .wr_id = 2, .laddr = a.buf + A_SEND,
		.len = 100, .lkey = mr->lkey, .flags = IBV_SEND_SIGNALED });
}

/* A READ lands in local memory: its MR needs LOCAL_WRITE. */
static void
test_read_no_local_write(void **state)
{
	struct ibv_mr *mr;

	(void)state;
	opts_fast(&opts);
	pair_open(&opts);
	mr = extra_reg(a.pd, a.buf, BUF, IBV_ACCESS_REMOTE_READ);
	local_error(&(struct req){
		.op = IBV_WR_RDMA_READ, .wr_id = 2, .laddr = a.buf + A_BAD,
		.len = RDMA_LEN, .lkey = mr->lkey,
		.raddr = (uintptr_t)(b.buf + B_TGT), .rkey = b.mr->rkey,
		.flags = IBV_SEND_SIGNALED });
}

/* So does an atomic's result; the remote word must not change. */
static void
test_atomic_no_local_write(void **state)
{
	struct ibv_mr *mr;

	(void)state;
	opts_fast(&opts);
	pair_open(&opts);
	mr = extra_reg(a.pd, a.buf, BUF, IBV_ACCESS_REMOTE_READ);
	local_error(&(struct req){
		.op = IBV_WR_ATOMIC_FETCH_AND_ADD, .wr_id = 2,
		.laddr = a.buf + A_BAD, .len = 8, .lkey = mr->lkey,
		.raddr = (uintptr_t)(b.buf + B_TGT), .rkey = b.mr->rkey,
		.flags = IBV_SEND_SIGNALED, .compare_add = 1 });
}

/*
 * A local error behind a SEND that waits for an RNR retry: when the SEND
 * goes again, the failed WR and the one after it must not go with it.
 * The SEND itself may complete either way (it was in flight when the
 * error was found), but no byte of the failed WRITE or of the WR after it
 * reaches the target.
 */
static void
local_error_behind_rnr(void)
{
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	struct ibv_wc wc;
	int i;

	opts_fast(&opts);
	opts.rnr_retry = 7;
	opts.min_rnr_timer = 1;
	pair_open(&opts);
	req_to_wr(&(struct req){
		.op = IBV_WR_SEND, .wr_id = 1, .laddr = a.buf + A_SEND,
		.len = 100, .lkey = a.mr->lkey, .flags = IBV_SEND_SIGNALED },
		&wr[0], &sge[0]);
	req_to_wr(&(struct req){
		.op = IBV_WR_RDMA_WRITE, .wr_id = 2, .laddr = a.buf + A_GOOD,
		.len = RDMA_LEN, .lkey = a.mr->lkey ^ 0x80000000u,
		.raddr = (uintptr_t)(b.buf + B_TGT), .rkey = b.mr->rkey,
		.flags = IBV_SEND_SIGNALED }, &wr[1], &sge[1]);
	req_to_wr(&(struct req){
		.op = IBV_WR_RDMA_WRITE, .wr_id = 3, .laddr = a.buf + A_GOOD,
		.len = GOOD_LEN, .lkey = a.mr->lkey,
		.raddr = (uintptr_t)(b.buf + B_LATE), .rkey = b.mr->rkey,
		.flags = IBV_SEND_SIGNALED }, &wr[2], &sge[2]);
	for (i = 0; i < 2; i++)
		wr[i].next = &wr[i + 1];
	assert_int_equal(ibv_post_send(a.qp, wr, &bad), 0);
	sleep_ms(20);
	assert_int_equal(ep_post_recv(&b, 400, B_RECV, RECV_LEN), 0);

	assert_int_equal(ep_poll(a.scq, &wc, 1, POLL_MS), 1);
	assert_int_equal(wc.wr_id, 1);
	if (wc.status == IBV_WC_SUCCESS) {
		expect_wc(b.rcq, b.qp, 400, IBV_WC_SUCCESS, &wc);
		assert_int_equal(wc.byte_len, 100);
		memcpy(want_b + B_RECV, want_a + A_SEND, 100);
	} else {
		/* the QP failed before the WRITE's turn: only the first
		 * failing WR carries its error, the rest are flushed */
		assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	}
	check_memory("target", b.buf, want_b);
	check_memory("requester", a.buf, want_a);
	expect_wc(a.scq, a.qp, 2, wc.status == IBV_WC_SUCCESS ?
		  IBV_WC_LOC_PROT_ERR : IBV_WC_WR_FLUSH_ERR, NULL);
	expect_wc(a.scq, a.qp, 3, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	check_memory("target", b.buf, want_b);
}

/* How many RNR rounds pass before the receive comes varies: try a few. */
static void
test_local_error_behind_rnr(void **state)
{
	int i;

	for (i = 0; i < 8; i++) {
		local_error_behind_rnr();
		pair_teardown(state);
	}
}

/*
 * A local error behind a WR that fails at the responder: the WRITE with
 * a bad rkey goes out, the WRITE after it fails its lkey check before
 * the NAK comes back. Only the first failing WR completes with its own
 * error; the locally failed one was never going to run once the first
 * failed, and is flushed with the rest.
 */
static void
test_local_error_behind_remote_error(void **state)
{
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	struct req r;
	int i;

	(void)state;
	opts_fast(&opts);
	pair_open(&opts);
	bad_req(IBV_WR_RDMA_WRITE, BAD_RKEY, &r);
	req_to_wr(&r, &wr[0], &sge[0]);
	req_to_wr(&(struct req){
		.op = IBV_WR_RDMA_WRITE, .wr_id = 3, .laddr = a.buf + A_GOOD,
		.len = GOOD_LEN, .lkey = a.mr->lkey ^ 0x80000000u,
		.raddr = (uintptr_t)(b.buf + B_LATE), .rkey = b.mr->rkey,
		.flags = IBV_SEND_SIGNALED }, &wr[1], &sge[1]);
	req_to_wr(&(struct req){
		.op = IBV_WR_RDMA_WRITE, .wr_id = 4, .laddr = a.buf + A_GOOD,
		.len = GOOD_LEN, .lkey = a.mr->lkey,
		.raddr = (uintptr_t)(b.buf + B_LATE), .rkey = b.mr->rkey,
		.flags = IBV_SEND_SIGNALED }, &wr[2], &sge[2]);
	for (i = 0; i < 2; i++)
		wr[i].next = &wr[i + 1];
	assert_int_equal(ibv_post_send(a.qp, wr, &bad), 0);

	expect_wc(a.scq, a.qp, 2, IBV_WC_REM_ACCESS_ERR, NULL);
	expect_wc(a.scq, a.qp, 3, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_wc(a.scq, a.qp, 4, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	check_memory("target", b.buf, want_b);
	check_memory("requester", a.buf, want_a);
}

/* ------------------------------------------------------------------------
 * Receive too small.
 */

/*
 * A SEND of @p len into a receive of @p room: the receiver completes it
 * with IBV_WC_LOC_LEN_ERR, the requester gets IBV_WC_REM_INV_REQ_ERR,
 * both QPs go to ERR and nothing is written past the receive buffer.
 */
static void
recv_too_small(uint32_t len, uint32_t room)
{
	opts_fast(&opts);
	pair_open(&opts);
	assert_int_equal(ep_post_recv(&b, 400, B_RECV, room), 0);
	assert_int_equal(ep_post_recv(&b, 401, B_TGT, RECV_LEN), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 1, A_GOOD, len, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 2, A_SEND, 10, NULL, 0,
				 IBV_SEND_SIGNALED), 0);

	expect_wc(b.rcq, b.qp, 400, IBV_WC_LOC_LEN_ERR, NULL);
	expect_wc(b.rcq, b.qp, 401, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(b.rcq);
	expect_wc(a.scq, a.qp, 1, IBV_WC_REM_INV_REQ_ERR, NULL);
	expect_wc(a.scq, a.qp, 2, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_ERR);
	/* the receive buffer is undefined; nothing past it is written */
	memcpy(want_b + B_RECV, b.buf + B_RECV, room);
	check_memory("receiver", b.buf, want_b);
}

static void
test_recv_too_small(void **state)
{
	(void)state;
	recv_too_small(100, 50);
}

/* The first packet fits, the second runs over. */
static void
test_recv_too_small_multi_packet(void **state)
{
	(void)state;
	recv_too_small(RDMA_LEN, 1500);
}

/* ------------------------------------------------------------------------
 * Receiver not ready.
 */

/*
 * With rnr_retry 7 the requester waits for the receive as long as it
 * takes: the message arrives once, whole, when the receive is posted.
 */
static void
rnr_infinite(enum ibv_wr_opcode op, uint32_t len)
{
	struct droce_qp_counters ca, cb;
	struct ibv_wc wc;

	opts_fast(&opts);
	opts.rnr_retry = 7;
	opts.min_rnr_timer = 1;
	pair_open(&opts);
	assert_int_equal(post_req(a.qp, &(struct req){
		.op = op, .wr_id = 1, .laddr = a.buf + A_SEND, .len = len,
		.lkey = a.mr->lkey, .raddr = (uintptr_t)(b.buf + B_GOOD),
		.rkey = b.mr->rkey, .flags = IBV_SEND_SIGNALED,
		.imm = htobe32(0x12345678) }), 0);
	sleep_ms(20);
	expect_quiet(a.scq);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTS);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	assert_int_equal(ep_post_recv(&b, 400, B_RECV, 4096), 0);

	expect_wc(a.scq, a.qp, 1, IBV_WC_SUCCESS, &wc);
	assert_int_equal(wc.opcode, op == IBV_WR_SEND ? IBV_WC_SEND :
			 IBV_WC_RDMA_WRITE);
	expect_wc(b.rcq, b.qp, 400, IBV_WC_SUCCESS, &wc);
	assert_int_equal(wc.byte_len, len);
	assert_int_equal(wc.src_qp, a.qp->qp_num);
	if (op == IBV_WR_SEND) {
		assert_int_equal(wc.opcode, IBV_WC_RECV);
		assert_memory_equal(b.buf + B_RECV, a.buf + A_SEND, len);
	} else {
		assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
		assert_int_equal(wc.imm_data, htobe32(0x12345678));
		assert_memory_equal(b.buf + B_GOOD, a.buf + A_SEND, len);
	}
	/* exactly once */
	expect_quiet(b.rcq);

	assert_int_equal(droce_query_qp_counters(a.qp, &ca), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &cb), 0);
	assert_true(ca.rnr_naks_rcvd > 0);
	assert_true(cb.rnr_naks_sent > 0);
	/* the rest of a multi-packet message's flight waits with it: no
	 * sequence NAK for it (it would count against retry_cnt) */
	assert_int_equal(cb.naks_sent, 0);
	assert_int_equal(ca.naks_rcvd, 0);
	assert_int_equal(ca.timeouts, 0);

	/* the connection is fine afterwards */
	post_recv_slot(&b, B_RECV, 401, 4);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 2, A_SEND, 64, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_wc(a.scq, a.qp, 2, IBV_WC_SUCCESS, NULL);
	expect_wc(b.rcq, b.qp, 401, IBV_WC_SUCCESS, NULL);
	assert_memory_equal(b.buf + B_RECV + 4 * RECV_LEN, a.buf + A_SEND, 64);
}

static void
test_rnr_infinite_retry(void **state)
{
	(void)state;
	rnr_infinite(IBV_WR_SEND, 200);
}

static void
test_rnr_infinite_retry_multi_packet(void **state)
{
	(void)state;
	rnr_infinite(IBV_WR_SEND, RDMA_LEN);
}

/* The receive a WRITE with immediate consumes is missing: RNR too. */
static void
test_rnr_infinite_retry_write_imm(void **state)
{
	(void)state;
	rnr_infinite(IBV_WR_RDMA_WRITE_WITH_IMM, RDMA_LEN);
}

/* rnr_retry retries after the first RNR NAK, then the WR fails. */
static void
rnr_exhausted(uint8_t rnr_retry)
{
	struct droce_qp_counters ca;

	opts_fast(&opts);
	opts.rnr_retry = rnr_retry;
	opts.min_rnr_timer = 1;
	pair_open(&opts);
	post_recv_slot(&a, A_RECV, 300, 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 1, A_SEND, 200, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 2, A_SEND, 20, NULL, 0, 0),
			 0);
	expect_wc(a.scq, a.qp, 1, IBV_WC_RNR_RETRY_EXC_ERR, NULL);
	expect_wc(a.scq, a.qp, 2, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);
	expect_wc(a.rcq, a.qp, 300, IBV_WC_WR_FLUSH_ERR, NULL);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	/* RNR is not an error of the responder */
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	assert_int_equal(droce_query_qp_counters(a.qp, &ca), 0);
	assert_int_equal(ca.rnr_naks_rcvd, (uint64_t)rnr_retry + 1);
	check_memory("receiver", b.buf, want_b);
}

static void
test_rnr_retry_exceeded(void **state)
{
	(void)state;
	rnr_exhausted(1);
}

static void
test_rnr_retry_zero(void **state)
{
	(void)state;
	rnr_exhausted(0);
}

/* ------------------------------------------------------------------------
 * Transport retries exhausted.
 */

enum gone {
	PEER_DESTROYED,
	PEER_IN_ERR,
	PEER_IN_RESET,
};

static void
peer_gone(enum gone how, enum ibv_wr_opcode op)
{
	struct droce_qp_counters ca;
	uint64_t t0, elapsed;

	opts_fast(&opts);
	opts.timeout = 8;       /* 4.096 us * 2^8: ~1 ms */
	opts.retry_cnt = 2;
	pair_open(&opts);
	switch (how) {
	case PEER_DESTROYED:
		assert_int_equal(ibv_destroy_qp(b.qp), 0);
		b.qp = NULL;
		break;
	case PEER_IN_ERR:
		modify_state(b.qp, IBV_QPS_ERR);
		break;
	case PEER_IN_RESET:
		modify_state(b.qp, IBV_QPS_RESET);
		break;
	}

	post_recv_slot(&a, A_RECV, 300, 0);
	t0 = now_us();
	assert_int_equal(ep_post(&a, op, 1, A_LATE, GOOD_LEN, &b, B_GOOD,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 2, A_GOOD, GOOD_LEN,
				 &b, B_LATE, 0), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 3, A_SEND, 32, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_wc(a.scq, a.qp, 1, IBV_WC_RETRY_EXC_ERR, NULL);
	elapsed = now_us() - t0;
	expect_wc(a.scq, a.qp, 2, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_wc(a.scq, a.qp, 3, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);
	expect_wc(a.rcq, a.qp, 300, IBV_WC_WR_FLUSH_ERR, NULL);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);

	/* the first try and retry_cnt retries, each a full timeout */
	assert_int_equal(droce_query_qp_counters(a.qp, &ca), 0);
	assert_int_equal(ca.timeouts, (uint64_t)opts.retry_cnt + 1);
	assert_true(ca.retransmits >= opts.retry_cnt);
	if (elapsed < 3000)
		fail_msg("retries exhausted after %" PRIu64 " us, under "
			 "3 timeouts of ~1 ms", elapsed);
	check_memory("target", b.buf, want_b);
	check_memory("requester", a.buf, want_a);
}

static void
test_retry_exc_peer_destroyed(void **state)
{
	(void)state;
	peer_gone(PEER_DESTROYED, IBV_WR_RDMA_WRITE);
}

static void
test_retry_exc_peer_err(void **state)
{
	(void)state;
	peer_gone(PEER_IN_ERR, IBV_WR_RDMA_WRITE);
}

static void
test_retry_exc_peer_reset(void **state)
{
	(void)state;
	peer_gone(PEER_IN_RESET, IBV_WR_RDMA_WRITE);
}

/* A READ whose responses never come. */
static void
test_retry_exc_read(void **state)
{
	(void)state;
	peer_gone(PEER_DESTROYED, IBV_WR_RDMA_READ);
}

/* ------------------------------------------------------------------------
 * Recovery.
 */

/* Put a (and b) in ERR with a bad rkey and drain the completions. */
static void
break_pair(void)
{
	struct req r;

	bad_req(IBV_WR_RDMA_WRITE, BAD_RKEY, &r);
	post_recv_slot(&a, A_RECV, 300, 0);
	assert_int_equal(post_req(a.qp, &r), 0);
	expect_wc(a.scq, a.qp, 2, IBV_WC_REM_ACCESS_ERR, NULL);
	expect_wc(a.rcq, a.qp, 300, IBV_WC_WR_FLUSH_ERR, NULL);
	expect_quiet(a.scq);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
}

/* SEND, WRITE and READ between a and b, all checked. */
static void
traffic_ok(void)
{
	struct ibv_wc wc;

	fill_pattern(a.buf + A_SEND, 300, 77);
	fill_pattern(a.buf + A_GOOD, RDMA_LEN, 78);
	fill_pattern(b.buf + B_TGT, RDMA_LEN, 79);
	post_recv_slot(&b, B_RECV, 410, 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 10, A_SEND, 300, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 11, A_GOOD, RDMA_LEN,
				 &b, B_GOOD, IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_READ, 12, A_BAD, RDMA_LEN,
				 &b, B_TGT, IBV_SEND_SIGNALED), 0);
	expect_wc(a.scq, a.qp, 10, IBV_WC_SUCCESS, &wc);
	assert_int_equal(wc.opcode, IBV_WC_SEND);
	expect_wc(a.scq, a.qp, 11, IBV_WC_SUCCESS, &wc);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
	expect_wc(a.scq, a.qp, 12, IBV_WC_SUCCESS, &wc);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
	assert_int_equal(wc.byte_len, RDMA_LEN);
	expect_wc(b.rcq, b.qp, 410, IBV_WC_SUCCESS, &wc);
	assert_int_equal(wc.byte_len, 300);
	assert_int_equal(wc.src_qp, a.qp->qp_num);
	assert_memory_equal(b.buf + B_RECV, a.buf + A_SEND, 300);
	assert_memory_equal(b.buf + B_GOOD, a.buf + A_GOOD, RDMA_LEN);
	assert_memory_equal(a.buf + A_BAD, b.buf + B_TGT, RDMA_LEN);
	expect_quiet(a.scq);
	expect_quiet(b.rcq);
}

/* ERR -> RESET -> INIT -> RTR -> RTS towards a new peer QP. */
static void
test_recover_new_peer(void **state)
{
	(void)state;
	opts_fast(&opts);
	pair_open(&opts);
	break_pair();

	/* ERR leads only to RESET (and ERR) */
	assert_int_equal(ibv_modify_qp(a.qp, &(struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS }, IBV_QP_STATE), EINVAL);
	assert_int_equal(ibv_modify_qp(a.qp, &(struct ibv_qp_attr){
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE },
		IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		IBV_QP_ACCESS_FLAGS), EINVAL);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	modify_state(a.qp, IBV_QPS_RESET);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RESET);
	ep_close(&b);
	assert_int_equal(ep_open(&b, 1, BUF, &opts), 0);
	assert_int_equal(ep_connect(&a, &b, &opts), 0);
	assert_int_equal(ep_connect(&b, &a, &opts), 0);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTS);
	traffic_ok();
}

/* Both ends back through RESET, connected to each other again. */
static void
test_recover_same_pair(void **state)
{
	(void)state;
	opts_fast(&opts);
	pair_open(&opts);
	break_pair();
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_ERR);

	modify_state(a.qp, IBV_QPS_RESET);
	modify_state(b.qp, IBV_QPS_RESET);
	assert_int_equal(ep_connect(&a, &b, &opts), 0);
	assert_int_equal(ep_connect(&b, &a, &opts), 0);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTS);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	traffic_ok();
	/* and again, from the other side */
	post_recv_slot(&a, A_RECV, 320, 0);
	assert_int_equal(ep_post(&b, IBV_WR_SEND, 20, B_GOOD, 100, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_wc(b.scq, b.qp, 20, IBV_WC_SUCCESS, NULL);
	expect_wc(a.rcq, a.qp, 320, IBV_WC_SUCCESS, NULL);
	assert_memory_equal(a.buf + A_RECV, b.buf + B_GOOD, 100);
}

#define T(f) pair_test_teardown(f, &pair)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_write_bad_rkey),
		T(test_write_out_of_bounds),
		T(test_write_no_remote_write),
		T(test_write_other_pd),
		T(test_read_bad_rkey),
		T(test_read_out_of_bounds),
		T(test_read_no_remote_read),
		T(test_read_other_pd),
		T(test_cmp_swap_bad_rkey),
		T(test_cmp_swap_out_of_bounds),
		T(test_cmp_swap_no_remote_atomic),
		T(test_cmp_swap_other_pd),
		T(test_fetch_add_bad_rkey),
		T(test_fetch_add_out_of_bounds),
		T(test_fetch_add_no_remote_atomic),
		T(test_fetch_add_other_pd),
		T(test_atomic_write_bad_rkey),
		T(test_atomic_write_out_of_bounds),
		T(test_atomic_write_no_remote_write),
		T(test_atomic_write_other_pd),
		T(test_unsignalled_error_completes),
		T(test_rd_atomic_before_error),
		T(test_cmp_swap_misaligned),
		T(test_fetch_add_misaligned),
		T(test_atomic_write_misaligned),
		T(test_send_bad_lkey),
		T(test_write_bad_lkey),
		T(test_send_lkey_out_of_bounds),
		T(test_read_no_local_write),
		T(test_atomic_no_local_write),
		T(test_local_error_behind_rnr),
		T(test_local_error_behind_remote_error),
		T(test_recv_too_small),
		T(test_recv_too_small_multi_packet),
		T(test_rnr_infinite_retry),
		T(test_rnr_infinite_retry_multi_packet),
		T(test_rnr_infinite_retry_write_imm),
		T(test_rnr_retry_exceeded),
		T(test_rnr_retry_zero),
		T(test_retry_exc_peer_destroyed),
		T(test_retry_exc_peer_err),
		T(test_retry_exc_peer_reset),
		T(test_retry_exc_read),
		T(test_recover_new_peer),
		T(test_recover_same_pair),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
