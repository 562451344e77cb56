/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The opcode x QP type table of ibv_post_send(3), for the QP types droce
 * has (RC, UC and UD), droce0 to droce1. Each opcode is posted behind a
 * signalled RDMA WRITE (on UD a SEND), in one chain:
 *
 *  - allowed and there: both WRs complete in order and the opcode does
 *    what it says (SEND and SEND with immediate received, WRITEs placed,
 *    READ read, compare-and-swap and fetch-and-add applied once);
 *  - allowed but not yet in droce (memory windows: LOCAL_INV, BIND_MW,
 *    SEND_WITH_INV; ATOMIC_WRITE on RC; TSO on UD): EOPNOTSUPP with
 *    bad_wr on it;
 *  - not allowed on the type (READ and atomics on UC, all but SEND and
 *    TSO on UD, TSO on RC and UC, an opcode that does not exist): EINVAL
 *    with bad_wr on it.
 *
 * In the last two cases the WR ahead of it was posted and completes.
 * XRC and raw packet QPs are refused at creation for now (verbs_ctl).
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

#define BUF (1u << 16)
#define GRH 40
#define QKEY 0x1234

enum expect { WORKS, NOT_YET, REFUSED };

struct cell {
	enum ibv_wr_opcode opcode;
	enum expect rc;
	enum expect uc;
	enum expect ud;
};

static const struct cell table[] = {
	{ IBV_WR_SEND, WORKS, WORKS, WORKS },
	{ IBV_WR_SEND_WITH_IMM, WORKS, WORKS, WORKS },
	{ IBV_WR_RDMA_WRITE, WORKS, WORKS, REFUSED },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, WORKS, WORKS, REFUSED },
	{ IBV_WR_RDMA_READ, WORKS, REFUSED, REFUSED },
	{ IBV_WR_ATOMIC_CMP_AND_SWP, WORKS, REFUSED, REFUSED },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, WORKS, REFUSED, REFUSED },
	{ IBV_WR_LOCAL_INV, NOT_YET, NOT_YET, REFUSED },
	{ IBV_WR_BIND_MW, NOT_YET, NOT_YET, REFUSED },
	{ IBV_WR_SEND_WITH_INV, NOT_YET, NOT_YET, REFUSED },
	{ IBV_WR_TSO, REFUSED, REFUSED, NOT_YET },
	{ IBV_WR_ATOMIC_WRITE, NOT_YET, REFUSED, REFUSED },
	{ (enum ibv_wr_opcode)77, REFUSED, REFUSED, REFUSED },
};

static struct ep_opts opts;
static struct ep a, b;
static struct ibv_ah *ah;         /* UD: a to b */

static void
pair(enum ibv_qp_type type)
{
	ep_opts_default(&opts);
	opts.qp_type = type;
	assert_int_equal(ep_open(&a, 0, BUF, &opts), 0);
	assert_int_equal(ep_open(&b, 1, BUF, &opts), 0);
	if (type == IBV_QPT_UD) {
		assert_int_equal(ep_ud_up(&a, QKEY), 0);
		assert_int_equal(ep_ud_up(&b, QKEY), 0);
		ah = ep_ah(&a, &b, &opts);
		assert_non_null(ah);
		return;
	}
	assert_int_equal(ep_connect(&a, &b, &opts), 0);
	assert_int_equal(ep_connect(&b, &a, &opts), 0);
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
	if (opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		sge[1].length = 8;
		wr[1].wr.atomic.rkey = b.mr->rkey;
		wr[1].wr.atomic.remote_addr = (uintptr_t)b.buf + 0x3000;
		wr[1].wr.atomic.compare_add =
			opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? 40 : 2;
		wr[1].wr.atomic.swap = 41;
	} else if (is_ud()) {
		sge[1].length = 1000;   /* within the MTU */
		ud_to_b(&wr[1]);
	} else {
		wr[1].wr.rdma.rkey = b.mr->rkey;
		wr[1].wr.rdma.remote_addr = (uintptr_t)b.buf + 0x2000;
	}
	return ibv_post_send(a.qp, wr, bad);
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
	static const enum ibv_wc_opcode wc_op[] = {
		[IBV_WR_SEND] = IBV_WC_SEND,
		[IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND,
		[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
		[IBV_WR_RDMA_WRITE_WITH_IMM] = IBV_WC_RDMA_WRITE,
		[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
		[IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP,
		[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
	};
	uint64_t *target = (uint64_t *)(void *)(b.buf + 0x3000);
	uint64_t *result = (uint64_t *)(void *)(a.buf + 0x1000);
	bool recv = opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM ||
		opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
	uint32_t len = is_ud() ? 1000 : 1500;
	uint32_t grh = is_ud() ? GRH : 0;
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_wc wc[2];

	fill_pattern(a.buf, BUF / 2, (uint32_t)opcode);
	fill_pattern(b.buf + 0x2000, 1500, 100 + (uint32_t)opcode);
	memset(b.buf, 0, 0x2000);
	*target = 40;
	post_head_recv();
	if (recv)
		assert_int_equal(ep_post_recv(&b, 9, 0x4000, 4096), 0);
	assert_int_equal(post_pair(opcode, wr, &bad), 0);
	assert_int_equal(ep_poll(a.scq, wc, 2, 5000), 2);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[1].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[1].opcode, wc_op[opcode]);
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
		assert_int_equal(ep_poll(b.rcq, wc, 1, 5000), 1);
		assert_int_equal(wc[0].opcode, IBV_WC_RECV);
		assert_int_equal(wc[0].byte_len, grh + len);
		assert_int_equal(!!(wc[0].wc_flags & IBV_WC_WITH_IMM),
				 opcode == IBV_WR_SEND_WITH_IMM);
		assert_memory_equal(b.buf + 0x4000 + grh, a.buf + 0x1000, len);
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

static void
run_column(enum ibv_qp_type type)
{
	size_t i;

	pair(type);
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		enum expect e = type == IBV_QPT_RC ? table[i].rc :
			type == IBV_QPT_UC ? table[i].uc : table[i].ud;

		print_message("%s opcode %d: %s\n", type_name(type),
			      table[i].opcode,
			      e == WORKS ? "works" : e == NOT_YET ?
			      "EOPNOTSUPP (not yet)" : "EINVAL");
		if (e == WORKS)
			check_works(table[i].opcode);
		else
			check_refused(table[i].opcode,
				      e == NOT_YET ? EOPNOTSUPP : EINVAL);
	}
	if (type == IBV_QPT_UD)
		ibv_destroy_ah(ah);
	ep_close(&a);
	ep_close(&b);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc),
		cmocka_unit_test(test_uc),
		cmocka_unit_test(test_ud),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
