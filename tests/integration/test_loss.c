/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * RC over a lossy link: droce0 and droce1 over a net_ring pair with both
 * ports behind net_fault (drivers/net/fault), which drops, duplicates,
 * reorders or corrupts frames as the arguments say. Long streams of
 * SEND, SEND with immediate, RDMA WRITE (with immediate), RDMA READ,
 * atomics and ATOMIC_WRITE, many in flight, must come through exactly
 * once, in order and byte-exact: each completion once and in posting
 * order, every receive matched to its message, no atomic executed twice,
 * no ATOMIC_WRITE placed again after what followed it.
 *
 * Usage: test_loss WORKDIR FAULT_ARGS
 *   e.g. test_loss build/tests/loss drop=0.05
 * Each device gets FAULT_ARGS plus a seed of its own.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include <droce.h>

#include "droce_engine.h"
#include "harness.h"

#define BUF (16u << 20)
#define TIMEOUT_MS 30000
#define QUIET_MS 300

/* Send WRs in flight at most, and receives kept posted. */
#define WINDOW 64
#define NRECV 128
#define RECV_SLOT 8192

/* Where things live in the two buffers. */
#define A_SRC 0                         /* a: what SENDs and WRITEs carry */
#define A_SRC_END (8u << 20)
#define A_READ (8u << 20)               /* a: where READs land */
#define A_READ_END (13u << 20)
#define A_ATOMIC (14u << 20)            /* a: atomics' old values */
#define B_RECV 0                        /* b: receive slots */
#define B_WRITE (2u << 20)              /* b: where WRITEs land */
#define B_WRITE_END (10u << 20)
#define B_READ (10u << 20)              /* b: what READs fetch */
#define B_READ_END (15u << 20)
#define B_ATOMIC (15u << 20)            /* b: the atomic targets */

static struct ep a, b;
static struct ep_opts opts;
static const char *fault_args;
static unsigned int seed_base = 1;

/* One operation of a stream. */
struct op {
	enum ibv_wr_opcode opcode;
	uint32_t len;
	size_t loff;            /* in a->buf */
	size_t roff;            /* in b->buf */
	uint64_t compare_add;
	uint64_t swap;
};

/* What an opcode is: droce's opcode table. */
static uint16_t
flags_of(enum ibv_wr_opcode op)
{
	return droce_wr_info(op)->flags;
}

/* A SEND, or a WRITE's immediate, takes a receive. */
static bool
consumes_recv(enum ibv_wr_opcode op)
{
	return (flags_of(op) & DROCE_WR_SEND) ||
		((flags_of(op) & DROCE_WR_WRITE) &&
		 (flags_of(op) & DROCE_WR_IMM));
}

static bool
has_imm(enum ibv_wr_opcode op)
{
	return (flags_of(op) & DROCE_WR_IMM) != 0;
}

/* Sizes on both sides of the 1024-byte path MTU. */
static uint32_t
size_of(unsigned int i)
{
	static const uint32_t sizes[] = {
		0, 1, 63, 700, 1023, 1024, 1025, 2048, 3001, 4096, 8000,
	};

	return sizes[(i * 7u) % (sizeof(sizes) / sizeof(sizes[0]))];
}

static int
post_op(const struct op *o, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(a.buf + o->loff),
		.length = o->len,
		.lkey = a.mr->lkey,
	};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = o->opcode;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (has_imm(o->opcode))
		wr.imm_data = htobe32((uint32_t)wr_id);
	if (flags_of(o->opcode) & DROCE_WR_ATOMIC) {
		wr.wr.atomic.remote_addr = (uintptr_t)(b.buf + o->roff);
		wr.wr.atomic.rkey = b.mr->rkey;
		wr.wr.atomic.compare_add = o->compare_add;
		wr.wr.atomic.swap = o->swap;
	} else if (!(flags_of(o->opcode) & DROCE_WR_SEND)) {
		wr.wr.rdma.remote_addr = (uintptr_t)(b.buf + o->roff);
		wr.wr.rdma.rkey = b.mr->rkey;
	}
	return ibv_post_send(a.qp, &wr, &bad);
}

static void
post_recv_slot(unsigned int k)
{
	assert_int_equal(ep_post_recv(&b, k, B_RECV +
				      (size_t)(k % NRECV) * RECV_SLOT,
				      RECV_SLOT), 0);
}

/* Check the receive completion of the k-th receive-consuming op. */
static void
check_recv(const struct ibv_wc *wc, unsigned int k, const struct op *o,
	   unsigned int idx)
{
	const uint8_t *slot = b.buf + B_RECV + (size_t)(k % NRECV) * RECV_SLOT;

	if (wc->status != IBV_WC_SUCCESS)
		fail_msg("receive %u (op %u): %s", k, idx,
			 ibv_wc_status_str(wc->status));
	if (wc->wr_id != k)
		fail_msg("receive %u completed as %llu", k,
			 (unsigned long long)wc->wr_id);
	assert_int_equal(wc->qp_num, b.qp->qp_num);
	if (o->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
		assert_int_equal(wc->opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		assert_int_equal(wc->byte_len, o->len);
	} else {
		assert_int_equal(wc->opcode, IBV_WC_RECV);
		assert_int_equal(wc->byte_len, o->len);
		assert_memory_equal(slot, a.buf + o->loff, o->len);
	}
	if (has_imm(o->opcode)) {
		assert_true(wc->wc_flags & IBV_WC_WITH_IMM);
		assert_int_equal(be32toh(wc->imm_data), idx);
	} else {
		assert_int_equal(wc->wc_flags & IBV_WC_WITH_IMM, 0);
	}
}

/* Nothing more may complete on either side. */
static void
expect_quiet(void)
{
	struct ibv_wc wc;

	assert_int_equal(ep_poll(a.scq, &wc, 1, QUIET_MS), 0);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 1), 0);
	assert_int_equal(ep_poll(a.rcq, &wc, 1, 1), 0);
	assert_int_equal(ep_poll(b.scq, &wc, 1, 1), 0);
}

/*
 * Run @p n ops from a to b, at most WINDOW in flight, and check every
 * completion of both sides as it comes.
 */
static void
run_stream(const struct op *ops, unsigned int n)
{
	unsigned int *recv_op = calloc(n + 1, sizeof(*recv_op));
	unsigned int posted = 0, done = 0, nrecv_ops = 0, recvd = 0, k;
	uint64_t deadline = ep_now_ms() + TIMEOUT_MS;
	unsigned int i;

	assert_non_null(recv_op);
	for (i = 0; i < n; i++)
		if (consumes_recv(ops[i].opcode))
			recv_op[nrecv_ops++] = i;
	for (k = 0; k < NRECV && k < nrecv_ops; k++)
		post_recv_slot(k);

	while (done < n || recvd < nrecv_ops) {
		struct ibv_wc wc[16];
		int got, j;

		while (posted < n && posted - done < WINDOW) {
			assert_int_equal(post_op(&ops[posted], posted), 0);
			posted++;
		}
		got = ibv_poll_cq(a.scq, 16, wc);
		assert_true(got >= 0);
		for (j = 0; j < got; j++, done++) {
			if (wc[j].status != IBV_WC_SUCCESS)
				fail_msg("op %u: %s", done,
					 ibv_wc_status_str(wc[j].status));
			if (wc[j].wr_id != done)
				fail_msg("op %u completed as %llu", done,
					 (unsigned long long)wc[j].wr_id);
			assert_int_equal(wc[j].opcode,
				droce_wr_info(ops[done].opcode)->wc_opcode);
			if (ops[done].opcode == IBV_WR_RDMA_READ)
				assert_int_equal(wc[j].byte_len,
						 ops[done].len);
		}
		got = ibv_poll_cq(b.rcq, 16, wc);
		assert_true(got >= 0);
		for (j = 0; j < got; j++, recvd++) {
			assert_true(recvd < nrecv_ops);
			check_recv(&wc[j], recvd, &ops[recv_op[recvd]],
				   recv_op[recvd]);
			/* the slot is checked: give it to a later message */
			if (recvd + NRECV < nrecv_ops)
				post_recv_slot(recvd + NRECV);
		}
		if (ep_now_ms() > deadline)
			fail_msg("stuck: %u/%u ops completed, %u/%u received",
				 done, n, recvd, nrecv_ops);
	}
	free(recv_op);
	expect_quiet();
}

/* Lay out ops[0..n) over the regions; fill what they carry. */
static void
layout(struct op *ops, unsigned int n)
{
	size_t src = A_SRC, wr = B_WRITE, rd_l = A_READ, rd_r = B_READ;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct op *o = &ops[i];

		switch (o->opcode) {
		case IBV_WR_RDMA_READ:
			assert_true(rd_l + o->len <= A_READ_END);
			assert_true(rd_r + o->len <= B_READ_END);
			o->loff = rd_l;
			o->roff = rd_r;
			memset(a.buf + rd_l, 0xee, o->len + 1);
			fill_pattern(b.buf + rd_r, o->len, i + 7000);
			rd_l += o->len + 1;
			rd_r += o->len + 3;
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			o->len = 8;
			o->loff = A_ATOMIC + 8 * (size_t)i;
			memset(a.buf + o->loff, 0xee, 8);
			break;
		case IBV_WR_ATOMIC_WRITE:
			/* what it places: compare_add, from a's memory */
			o->len = 8;
			o->loff = src;
			memcpy(a.buf + src, &o->compare_add, 8);
			src += 8;
			break;
		default:
			assert_true(src + o->len <= A_SRC_END);
			o->loff = src;
			fill_pattern(a.buf + src, o->len, i);
			src += o->len + 5;
			if (o->opcode == IBV_WR_RDMA_WRITE ||
			    o->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
				assert_true(wr + o->len <= B_WRITE_END);
				o->roff = wr;
				memset(b.buf + wr, 0xee, o->len + 1);
				wr += o->len + 1;
			}
			break;
		}
	}
}

/* Every WRITE and READ moved its bytes, and nothing past them. */
static void
check_data(const struct op *ops, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct op *o = &ops[i];

		switch (o->opcode) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			assert_memory_equal(b.buf + o->roff, a.buf + o->loff,
					    o->len);
			break;
		case IBV_WR_RDMA_READ:
			assert_memory_equal(a.buf + o->loff, b.buf + o->roff,
					    o->len);
			assert_int_equal(a.buf[o->loff + o->len], 0xee);
			break;
		default:
			break;
		}
	}
}

static struct op *
ops_of(enum ibv_wr_opcode op, unsigned int n)
{
	struct op *ops = calloc(n, sizeof(*ops));
	unsigned int i;

	assert_non_null(ops);
	for (i = 0; i < n; i++) {
		ops[i].opcode = op;
		ops[i].len = size_of(i);
	}
	return ops;
}

static void
test_send_stream(void **state)
{
	struct op *ops = ops_of(IBV_WR_SEND, 1500);
	unsigned int i;

	(void)state;
	for (i = 0; i < 1500; i += 3)
		ops[i].opcode = IBV_WR_SEND_WITH_IMM;
	layout(ops, 1500);
	run_stream(ops, 1500);
	free(ops);
}

static void
test_write_stream(void **state)
{
	struct op *ops = ops_of(IBV_WR_RDMA_WRITE, 1500);
	unsigned int i;

	(void)state;
	for (i = 0; i < 1500; i += 5)
		ops[i].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	layout(ops, 1500);
	run_stream(ops, 1500);
	check_data(ops, 1500);
	free(ops);
}

static void
test_read_stream(void **state)
{
	struct op *ops = ops_of(IBV_WR_RDMA_READ, 1200);

	(void)state;
	layout(ops, 1200);
	run_stream(ops, 1200);
	check_data(ops, 1200);
	free(ops);
}

/*
 * FETCH_ADD of 1, n times: each sees the count of those before it, the
 * target ends at n. Then a CMP_SWP chain i -> i + 1: an execution twice
 * would either fail the next compare or leave the wrong value.
 */
static void
test_atomics_once(void **state)
{
	const unsigned int n = 800;
	struct op *ops = ops_of(IBV_WR_ATOMIC_FETCH_AND_ADD, n);
	uint64_t *target = (uint64_t *)(b.buf + B_ATOMIC);
	unsigned int i;

	(void)state;
	*target = 0;
	for (i = 0; i < n; i++) {
		if (i < n / 2) {
			ops[i].compare_add = 1;
		} else {
			ops[i].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			ops[i].compare_add = i;
			ops[i].swap = i + 1;
		}
		ops[i].roff = B_ATOMIC;
	}
	layout(ops, n);
	run_stream(ops, n);
	for (i = 0; i < n; i++) {
		uint64_t old;

		memcpy(&old, a.buf + ops[i].loff, 8);
		if (old != i)
			fail_msg("atomic %u saw %llu", i,
				 (unsigned long long)old);
	}
	assert_int_equal(*target, n);
	free(ops);
}

/*
 * ATOMIC_WRITE of 1000 + i, each followed by two FETCH_ADDs of 1 on the
 * same target: they see what it wrote, then one more. An ATOMIC_WRITE
 * placed again when resent after its first FETCH_ADD (a duplicate taken
 * for new) would show in the second.
 */
static void
test_atomic_writes_once(void **state)
{
	const unsigned int n = 900;
	struct op *ops = ops_of(IBV_WR_ATOMIC_WRITE, n);
	uint64_t *target = (uint64_t *)(b.buf + B_ATOMIC + 192);
	unsigned int i;

	(void)state;
	*target = 0;
	for (i = 0; i < n; i++) {
		ops[i].roff = B_ATOMIC + 192;
		if (i % 3 == 0) {
			ops[i].compare_add = 1000 + i;
		} else {
			ops[i].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			ops[i].compare_add = 1;
		}
	}
	layout(ops, n);
	{ struct droce_qp_counters c0, c1; droce_query_qp_counters(b.qp, &c0);
	run_stream(ops, n);
	droce_query_qp_counters(b.qp, &c1); printf("dups %llu\n", (unsigned long long)(c1.dup_reqs - c0.dup_reqs)); }
	for (i = 0; i < n; i++) {
		uint64_t old, want = 1000 + i - i % 3 + (i % 3 == 2);

		if (i % 3 == 0)
			continue;
		memcpy(&old, a.buf + ops[i].loff, 8);
		if (old != want)
			fail_msg("FETCH_ADD %u saw %llu, not %llu", i,
				 (unsigned long long)old,
				 (unsigned long long)want);
	}
	assert_int_equal(*target, 1000 + n - 3 + 2);
	free(ops);
}

/* All of them interleaved in one stream. */
static void
test_mixed_stream(void **state)
{
	static const enum ibv_wr_opcode mix[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_SEND_WITH_IMM,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_WRITE,
	};
	const unsigned int n = 1600;
	struct op *ops = ops_of(IBV_WR_SEND, n);
	uint64_t *target = (uint64_t *)(b.buf + B_ATOMIC + 64);
	uint64_t count = 0, last_write = 0;
	unsigned int i;

	(void)state;
	*target = 0;
	for (i = 0; i < n; i++) {
		ops[i].opcode = mix[i % (sizeof(mix) / sizeof(mix[0]))];
		if (ops[i].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			ops[i].compare_add = 1;
			ops[i].roff = B_ATOMIC + 64;
		} else if (ops[i].opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
			/* a target of its own, untouched: compare fails */
			ops[i].compare_add = ~(uint64_t)0;
			ops[i].swap = 1;
			ops[i].roff = B_ATOMIC + 128;
		} else if (ops[i].opcode == IBV_WR_ATOMIC_WRITE) {
			/* the last one's value stays */
			ops[i].compare_add = 5000 + i;
			ops[i].roff = B_ATOMIC + 256;
			last_write = 5000 + i;
		}
	}
	layout(ops, n);
	run_stream(ops, n);
	check_data(ops, n);
	for (i = 0; i < n; i++) {
		uint64_t old;

		if (ops[i].opcode != IBV_WR_ATOMIC_FETCH_AND_ADD)
			continue;
		memcpy(&old, a.buf + ops[i].loff, 8);
		assert_int_equal(old, count);
		count++;
	}
	assert_int_equal(*target, count);
	assert_int_equal(*(uint64_t *)(b.buf + B_ATOMIC + 128), 0);
	assert_int_equal(*(uint64_t *)(b.buf + B_ATOMIC + 256), last_write);
	free(ops);
}

/* The faults asked for did happen, and the transport saw them. */
static void
test_faults_seen(void **state)
{
	struct droce_qp_counters ca, cb;

	(void)state;
	assert_int_equal(droce_query_qp_counters(a.qp, &ca), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &cb), 0);
	print_message("requester: %llu packets, %llu retransmitted, "
		      "%llu timeouts, %llu NAKs received; responder: %llu "
		      "duplicates answered, %llu NAKs sent\n",
		      (unsigned long long)ca.tx_pkts,
		      (unsigned long long)ca.retransmits,
		      (unsigned long long)ca.timeouts,
		      (unsigned long long)ca.naks_rcvd,
		      (unsigned long long)cb.dup_reqs,
		      (unsigned long long)cb.naks_sent);
	if (strstr(fault_args, "drop=") != NULL &&
	    strstr(fault_args, "drop=0,") == NULL)
		assert_true(ca.retransmits > 0);
	if (strstr(fault_args, "dup=") != NULL)
		assert_true(cb.dup_reqs > 0);
}

static void
loss_opts(struct ep_opts *o)
{
	/* 4.096 us * 2^10: a lost tail costs about 4 ms */
	o->timeout = 10;
	o->retry_cnt = 7;
}

static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .tweak = loss_opts,
};

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_stream),
		cmocka_unit_test(test_write_stream),
		cmocka_unit_test(test_read_stream),
		cmocka_unit_test(test_atomics_once),
		cmocka_unit_test(test_atomic_writes_once),
		cmocka_unit_test(test_mixed_stream),
		cmocka_unit_test(test_faults_seen),
	};

	if (argc < 3) {
		fprintf(stderr, "usage: test_loss WORKDIR FAULT_ARGS [SEED]\n");
		return 2;
	}
	fault_args = argv[2];
	if (argc > 3)
		seed_base = (unsigned int)strtoul(argv[3], NULL, 0);
	/* LOSS_PCAP=1: mirror every frame to WORKDIR/loss-droceN.pcap */
	if (ep_fault_config(argv[1], "loss", 1, fault_args, seed_base) != 0) {
		perror("test_loss: config");
		return 1;
	}
	/* LOSS_ONLY=test_read_stream runs that test alone */
	if (getenv("LOSS_ONLY") != NULL)
		cmocka_set_test_filter(getenv("LOSS_ONLY"));
	print_message("faults: %s\n", fault_args);
	return pair_run_group_tests_name(fault_args, tests, &pair);
}
