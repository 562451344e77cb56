/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * RC between droce0 and droce1 through the verbs API: every opcode of
 * ibv_post_send for RC, message sizes around the path MTU and up to
 * 1 MiB, data checked byte for byte, immediate data, atomics' semantics,
 * scatter/gather lists, inline data, many WRs in flight with and without
 * sq_sig_all, and the ibv_cq_ex iterator with every field droce offers.
 */

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <droce.h>

#include "harness.h"

#define BUF (4u << 20)
#define TIMEOUT_MS 10000

static struct ep a, b;
static struct ep_opts opts;
static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF,
};

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


static void
test_imm(void **state)
{
	static const uint32_t lens[] = { 0, 1, 1024, 3000 };
	struct ibv_wc wc;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i], imm = 0xa5000000u + (uint32_t)i;
		struct ibv_sge sge = {
			.addr = (uintptr_t)a.buf, .length = len,
			.lkey = a.mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = 10 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND_WITH_IMM,
			.send_flags = IBV_SEND_SIGNALED,
			.imm_data = htobe32(imm),
		}, *bad;

		/* SEND with immediate: the receive carries it */
		fill_pattern(a.buf, len, 300 + (uint32_t)i);
		assert_int_equal(ep_post_recv(&b, 20 + i, 0, 4096), 0);
		assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
		expect_one(a.scq, 10 + i, IBV_WC_SEND, &wc);
		expect_one(b.rcq, 20 + i, IBV_WC_RECV, &wc);
		assert_int_equal(wc.byte_len, len);
		assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
		assert_int_equal(be32toh(wc.imm_data), imm);
		assert_memory_equal(b.buf, a.buf, len);

		/* WRITE with immediate: data in place, the receive gets the
		 * immediate and the length, not the data */
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htobe32(imm + 0x100);
		wr.wr.rdma.remote_addr = (uintptr_t)(b.buf + 8192);
		wr.wr.rdma.rkey = b.mr->rkey;
		memset(b.buf, 0x5a, 64);
		assert_int_equal(ep_post_recv(&b, 30 + i, 0, 16), 0);
		assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
		expect_one(a.scq, 10 + i, IBV_WC_RDMA_WRITE, &wc);
		expect_one(b.rcq, 30 + i, IBV_WC_RECV_RDMA_WITH_IMM, &wc);
		assert_int_equal(wc.byte_len, len);
		assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
		assert_int_equal(be32toh(wc.imm_data), imm + 0x100);
		assert_memory_equal(b.buf + 8192, a.buf, len);
		/* the receive buffer is untouched */
		assert_int_equal(b.buf[0], 0x5a);
	}
}

static void
post_atomic(enum ibv_wr_opcode op, uint64_t wr_id, size_t loff, size_t roff,
	    uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(a.buf + loff), .length = 8,
		.lkey = a.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	wr.wr.atomic.remote_addr = (uintptr_t)(b.buf + roff);
	wr.wr.atomic.rkey = b.mr->rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	expect_one(a.scq, wr_id, op == IBV_WR_ATOMIC_CMP_AND_SWP ?
		   IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD, &wc);
	assert_int_equal(wc.byte_len, 8);
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void
test_atomics(void **state)
{
	uint8_t *target = b.buf + 65536;
	uint64_t v = 0x1122334455667788ull;

	(void)state;
	memset(target - 8, 0, 24);
	memcpy(target, &v, 8);
	/* compare equal: swapped, the old value returned */
	post_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 1, 0, 65536, v, 42);
	assert_int_equal(get64(a.buf), v);
	assert_int_equal(get64(target), 42);
	/* compare unequal: unchanged, the current value returned */
	post_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 2, 8, 65536, 41, 7);
	assert_int_equal(get64(a.buf + 8), 42);
	assert_int_equal(get64(target), 42);
	/* fetch and add, wrapping at 2^64 */
	post_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 3, 16, 65536, 100, 0);
	assert_int_equal(get64(a.buf + 16), 42);
	assert_int_equal(get64(target), 142);
	post_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 4, 24, 65536,
		    UINT64_MAX - 141, 0);
	assert_int_equal(get64(a.buf + 24), 142);
	assert_int_equal(get64(target), 0);
	/* the neighbours are untouched */
	assert_int_equal(get64(target - 8), 0);
	assert_int_equal(get64(target + 8), 0);
}

/* Odd-sized pieces on both sides of SEND, WRITE and READ. */
static void
test_multi_sge(void **state)
{
	static const uint32_t src_len[] = { 1, 1500, 777, 3 };
	static const uint32_t dst_len[] = { 1000, 1, 2000, 500 };
	const uint32_t total = 1 + 1500 + 777 + 3;
	struct ibv_sge src[4], dst[4];
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	uint8_t expect[4096], got[4096];
	struct ibv_wc wc;
	size_t off = 0, i;

	(void)state;
	/* scattered sources, 100 bytes apart, and their concatenation */
	for (i = 0; i < 4; i++) {
		src[i].addr = (uintptr_t)(a.buf + 100000 + i * 4096);
		src[i].length = src_len[i];
		src[i].lkey = a.mr->lkey;
		fill_pattern((uint8_t *)(uintptr_t)src[i].addr, src_len[i],
			     700 + (uint32_t)i);
		memcpy(expect + off, (void *)(uintptr_t)src[i].addr,
		       src_len[i]);
		off += src_len[i];
	}
	for (i = 0, off = 0; i < 4; i++) {
		dst[i].addr = (uintptr_t)(b.buf + 200000 + i * 4096);
		dst[i].length = dst_len[i];
		dst[i].lkey = b.mr->lkey;
		memset((void *)(uintptr_t)dst[i].addr, 0xee, dst_len[i] + 1);
	}

	/* SEND gathered from 4 pieces, scattered into 4 others */
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 5;
	rwr.sg_list = dst;
	rwr.num_sge = 4;
	assert_int_equal(ibv_post_recv(b.qp, &rwr, &rbad), 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 6;
	wr.sg_list = src;
	wr.num_sge = 4;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	expect_one(a.scq, 6, IBV_WC_SEND, &wc);
	expect_one(b.rcq, 5, IBV_WC_RECV, &wc);
	assert_int_equal(wc.byte_len, total);
	for (i = 0, off = 0; i < 4 && off < total; i++) {
		uint32_t n = dst_len[i] < total - off ? dst_len[i] :
			(uint32_t)(total - off);

		memcpy(got + off, (void *)(uintptr_t)dst[i].addr, n);
		off += n;
	}
	assert_memory_equal(got, expect, total);
	/* the message ends in the third piece: nothing past it */
	assert_int_equal(*(uint8_t *)(uintptr_t)(dst[2].addr + total -
		(dst_len[0] + dst_len[1])), 0xee);
	assert_int_equal(*(uint8_t *)(uintptr_t)dst[3].addr, 0xee);

	/* WRITE gathered from 4 pieces */
	memset(b.buf + 300000, 0xee, total + 1);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)(b.buf + 300000);
	wr.wr.rdma.rkey = b.mr->rkey;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	expect_one(a.scq, 6, IBV_WC_RDMA_WRITE, &wc);
	assert_memory_equal(b.buf + 300000, expect, total);
	assert_int_equal(b.buf[300000 + total], 0xee);

	/* READ it back, scattered into the 4 source pieces, cleared */
	for (i = 0; i < 4; i++)
		memset((void *)(uintptr_t)src[i].addr, 0, src_len[i]);
	wr.opcode = IBV_WR_RDMA_READ;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	expect_one(a.scq, 6, IBV_WC_RDMA_READ, &wc);
	assert_int_equal(wc.byte_len, total);
	for (i = 0, off = 0; i < 4; i++) {
		assert_memory_equal((void *)(uintptr_t)src[i].addr,
				    expect + off, src_len[i]);
		off += src_len[i];
	}
}

/* Inline data is copied at post time: the buffer is free on return. */
static void
test_inline(void **state)
{
	static const uint32_t lens[] = { 0, 1, 33, 64 };
	uint8_t copy[64];
	struct ibv_wc wc;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i];

		fill_pattern(a.buf, len, 900 + (uint32_t)i);
		memcpy(copy, a.buf, len);
		assert_int_equal(ep_post_recv(&b, 40 + i, 0, 128), 0);
		assert_int_equal(ep_post(&a, IBV_WR_SEND, 40 + i, 0, len, NULL,
					 0, IBV_SEND_SIGNALED |
					 IBV_SEND_INLINE), 0);
		memset(a.buf, 0, len);
		expect_one(a.scq, 40 + i, IBV_WC_SEND, &wc);
		expect_one(b.rcq, 40 + i, IBV_WC_RECV, &wc);
		assert_int_equal(wc.byte_len, len);
		assert_memory_equal(b.buf, copy, len);

		fill_pattern(a.buf, len, 950 + (uint32_t)i);
		memcpy(copy, a.buf, len);
		assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 50 + i, 0, len,
					 &b, 4096, IBV_SEND_SIGNALED |
					 IBV_SEND_INLINE), 0);
		memset(a.buf, 0, len);
		expect_one(a.scq, 50 + i, IBV_WC_RDMA_WRITE, &wc);
		assert_memory_equal(b.buf + 4096, copy, len);
	}
}

/*
 * Many WRITEs in flight, only every 16th signalled: completions for the
 * signalled ones only, in order; the data of all arrived.
 */
static void
test_many_in_flight(void **state)
{
	const unsigned int n = 4096;
	struct ibv_wc wc[64];
	unsigned int posted = 0, done = 0, expect_next = 15;

	(void)state;
	fill_pattern(a.buf, 1u << 20, 4242);
	memset(b.buf + (1u << 20), 0, 1u << 20);
	while (done < n / 16) {
		int got, j;

		/* at most 128 outstanding: the queue holds 256 */
		while (posted < n && posted - done * 16 < 128) {
			uint32_t len = 256;
			unsigned int flags = posted % 16 == 15 ?
				IBV_SEND_SIGNALED : 0;

			assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, posted,
						 (size_t)posted * len, len, &b,
						 (1u << 20) + (size_t)posted *
						 len, flags), 0);
			posted++;
		}
		got = ep_poll(a.scq, wc, 1, TIMEOUT_MS);
		assert_int_equal(got, 1);
		for (j = 0; j < got; j++) {
			assert_int_equal(wc[j].status, IBV_WC_SUCCESS);
			assert_int_equal(wc[j].wr_id, expect_next);
			expect_next += 16;
			done++;
		}
	}
	assert_int_equal(ep_poll(a.scq, wc, 1, 50), 0);
	assert_memory_equal(b.buf + (1u << 20), a.buf, 1u << 20);
}

/* With sq_sig_all, every WR completes, asked or not. */
static void
test_sq_sig_all(void **state)
{
	struct ep_opts o;
	struct ep c, d;
	struct ibv_wc wc;
	unsigned int i;

	(void)state;
	o = opts;
	o.sq_sig_all = true;
	assert_int_equal(ep_pair(&c, &d, 65536, &o), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(ep_post(&c, IBV_WR_RDMA_WRITE, i, 0, 100, &d,
					 0, 0), 0);
	for (i = 0; i < 100; i++) {
		assert_int_equal(ep_poll(c.scq, &wc, 1, TIMEOUT_MS), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, i);
	}
	ep_close(&c);
	ep_close(&d);
}

static uint64_t
wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Replace an endpoint's CQs and QP by ones on extended CQs. */
static void
ep_use_cq_ex(struct ep *e, uint64_t wc_flags, struct ibv_cq_ex **scq,
	     struct ibv_cq_ex **rcq)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = wc_flags,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_qp_init_attr qa;

	ibv_destroy_qp(e->qp);
	ibv_destroy_cq(e->scq);
	ibv_destroy_cq(e->rcq);
	*scq = ibv_create_cq_ex(e->ctx, &ca);
	*rcq = ibv_create_cq_ex(e->ctx, &ca);
	assert_non_null(*scq);
	assert_non_null(*rcq);
	e->scq = ibv_cq_ex_to_cq(*scq);
	e->rcq = ibv_cq_ex_to_cq(*rcq);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = 64;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	e->qp = ibv_create_qp(e->pd, &qa);
	assert_non_null(e->qp);
}

/* Wait for one completion on an extended CQ; the iterator stays open. */
static void
cq_ex_wait(struct ibv_cq_ex *cq)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct timespec t0, t;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((ret = ibv_start_poll(cq, &pa)) == ENOENT) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		assert_true(t.tv_sec - t0.tv_sec < TIMEOUT_MS / 1000);
	}
	assert_int_equal(ret, 0);
}

static void
test_cq_ex(void **state)
{
	const uint64_t flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
		IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	struct ibv_device_attr_ex dev;
	struct ibv_values_ex rt = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_cq_ex *cs, *cr, *ds, *dr;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ep c, d;
	uint64_t w0, w1, ts_send, ts_recv, n;
	int i;

	(void)state;
	assert_int_equal(ep_open(&c, 0, 65536, &opts), 0);
	assert_int_equal(ep_open(&d, 1, 65536, &opts), 0);
	ep_use_cq_ex(&c, flags, &cs, &cr);
	ep_use_cq_ex(&d, flags, &ds, &dr);
	assert_int_equal(ep_connect(&c, &d, &opts), 0);
	assert_int_equal(ep_connect(&d, &c, &opts), 0);
	assert_int_equal(ibv_query_device_ex(c.ctx, NULL, &dev), 0);
	assert_true(dev.hca_core_clock > 0);

	/* nothing yet: the iterator says so */
	assert_int_equal(ibv_start_poll(cs, &pa), ENOENT);

	w0 = wall_ns();
	assert_int_equal(ep_post_recv(&d, 77, 0, 4096), 0);
	for (i = 0; i < 3; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)c.buf, .length = 1000,
			.lkey = c.mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = 100 + (uint64_t)i, .sg_list = &sge,
			.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
			.opcode = i == 0 ? IBV_WR_SEND_WITH_IMM :
				IBV_WR_RDMA_WRITE,
			.imm_data = htobe32(0xfeedbeef),
		}, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)d.buf + 8192;
		wr.wr.rdma.rkey = d.mr->rkey;
		assert_int_equal(ibv_post_send(c.qp, &wr, &bad), 0);
	}

	/* the receive side */
	cq_ex_wait(dr);
	assert_int_equal(dr->wr_id, 77);
	assert_int_equal(dr->status, IBV_WC_SUCCESS);
	assert_int_equal(ibv_wc_read_opcode(dr), IBV_WC_RECV);
	assert_int_equal(ibv_wc_read_byte_len(dr), 1000);
	assert_true(ibv_wc_read_wc_flags(dr) & IBV_WC_WITH_IMM);
	assert_int_equal(be32toh(ibv_wc_read_imm_data(dr)), 0xfeedbeef);
	assert_int_equal(ibv_wc_read_qp_num(dr), d.qp->qp_num);
	assert_int_equal(ibv_wc_read_src_qp(dr), c.qp->qp_num);
	assert_int_equal(ibv_wc_read_vendor_err(dr), 0);
	ts_recv = ibv_wc_read_completion_ts(dr);
	assert_int_equal(ibv_next_poll(dr), ENOENT);
	ibv_end_poll(dr);

	/* the send side: three in order, one iterator pass */
	for (n = 0; n < 3;) {
		if (n == 0) {
			cq_ex_wait(cs);
		} else if (ibv_next_poll(cs) == ENOENT) {
			ibv_end_poll(cs);
			cq_ex_wait(cs);
		}
		assert_int_equal(cs->wr_id, 100 + n);
		assert_int_equal(cs->status, IBV_WC_SUCCESS);
		assert_int_equal(ibv_wc_read_opcode(cs),
				 n == 0 ? IBV_WC_SEND : IBV_WC_RDMA_WRITE);
		assert_int_equal(ibv_wc_read_qp_num(cs), c.qp->qp_num);
		if (n == 0)
			ts_send = ibv_wc_read_completion_ts(cs);
		else
			assert_true(ibv_wc_read_completion_ts(cs) >= ts_send);
		/* the wall clock of a completion is between the post and
		 * now */
		w1 = wall_ns();
		assert_true(ibv_wc_read_completion_wallclock_ns(cs) + 1000000 >=
			    w0);
		assert_true(ibv_wc_read_completion_wallclock_ns(cs) <=
			    w1 + 1000000);
		n++;
	}
	ibv_end_poll(cs);
	/* the receive completed after its send was posted, and both are
	 * on the HCA clock whose raw value the device reports */
	assert_int_equal(ibv_query_rt_values_ex(c.ctx, &rt), 0);
	assert_true((uint64_t)rt.raw_clock.tv_nsec >= ts_recv ||
		    rt.raw_clock.tv_sec > 0);
	assert_true(ts_send > 0 && ts_recv > 0);
	ep_close(&c);
	ep_close(&d);
}

#define POSTERS 4
#define PER_POSTER 3000

struct poster {
	pthread_t tid;
	unsigned int id;
	unsigned int enomem;
	int err;
};

static volatile int posters_go;

/* One of several threads posting WRITEs to the same QP at once. */
static void *
poster_main(void *arg)
{
	struct poster *p = arg;
	unsigned int i;

	while (!__atomic_load_n(&posters_go, __ATOMIC_ACQUIRE))
		;
	for (i = 0; i < PER_POSTER; i++) {
		size_t off = ((size_t)p->id * PER_POSTER + i) * 64;
		int ret;

		/* a full queue is ENOMEM: wait for the poller, go again */
		while ((ret = ep_post(&a, IBV_WR_RDMA_WRITE,
				      ((uint64_t)p->id << 32) | i, off, 64,
				      &b, off, IBV_SEND_SIGNALED)) == ENOMEM)
			p->enomem++;
		if (ret != 0) {
			p->err = ret;
			break;
		}
	}
	return NULL;
}

/*
 * post_send is safe from several threads: every WR completes exactly
 * once, each thread's WRs in the order it posted them, data all there.
 */
static void
test_threads(void **state)
{
	const size_t bytes = (size_t)POSTERS * PER_POSTER * 64;
	struct poster p[POSTERS];
	uint32_t next[POSTERS] = { 0 };
	unsigned int t, done = 0;
	struct ibv_wc wc[32];

	(void)state;
	fill_pattern(a.buf, bytes, 31337);
	memset(b.buf, 0, bytes);
	posters_go = 0;
	for (t = 0; t < POSTERS; t++) {
		p[t] = (struct poster){ .id = t };
		assert_int_equal(pthread_create(&p[t].tid, NULL, poster_main,
						&p[t]), 0);
	}
	__atomic_store_n(&posters_go, 1, __ATOMIC_RELEASE);
	while (done < POSTERS * PER_POSTER) {
		int got = ep_poll(a.scq, wc, 1, TIMEOUT_MS), j;

		assert_int_equal(got, 1);
		got += ibv_poll_cq(a.scq, 31, wc + 1);
		for (j = 0; j < got; j++) {
			uint32_t id = (uint32_t)(wc[j].wr_id >> 32);
			uint32_t seq = (uint32_t)wc[j].wr_id;

			assert_int_equal(wc[j].status, IBV_WC_SUCCESS);
			assert_true(id < POSTERS);
			assert_int_equal(seq, next[id]);
			next[id]++;
			done++;
		}
	}
	for (t = 0; t < POSTERS; t++) {
		pthread_join(p[t].tid, NULL);
		assert_int_equal(p[t].err, 0);
	}
	assert_int_equal(ibv_poll_cq(a.scq, 1, wc), 0);
	assert_memory_equal(b.buf, a.buf, bytes);
}

/* A FENCE'd WR waits for the READ before it; both complete in order. */
static void
test_fence(void **state)
{
	struct ibv_wc wc;

	(void)state;
	fill_pattern(b.buf + 500000, 65536, 99);
	memset(a.buf, 0, 65536);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_READ, 1, 0, 65536, &b,
				 500000, IBV_SEND_SIGNALED), 0);
	/* writes back what the READ fetched: right only after it */
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 2, 0, 65536, &b,
				 700000, IBV_SEND_SIGNALED | IBV_SEND_FENCE),
			 0);
	expect_one(a.scq, 1, IBV_WC_RDMA_READ, &wc);
	expect_one(a.scq, 2, IBV_WC_RDMA_WRITE, &wc);
	assert_memory_equal(b.buf + 700000, b.buf + 500000, 65536);
}

/*
 * A ping-pong of SENDs, each side answering what it received as an RPC
 * does, then a last message nobody answers: every SEND completes, the
 * unanswered one too, every byte lands, and no request is sent twice
 * nor waits for a timeout. Under rc_ops_one_cpu the polls run the
 * engine's passes, in which a receiver's ACK waits for the pass of its
 * answer (droce_resp_run()); the last one goes with whichever pass
 * comes next.
 */
#define PINGS 500

static void
pingpong_counters(struct droce_qp_counters *ca, struct droce_qp_counters *cb)
{
	assert_int_equal(droce_query_qp_counters(a.qp, ca), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, cb), 0);
}

/* Take the send completions @p e has (all of them, when @p all, up to
 * @p total), each successful and in order after *@p done. */
static void
pingpong_sent(struct ep *e, uint32_t *done, uint32_t total, bool all)
{
	struct ibv_wc wc[16];
	int n, i;

	do {
		n = all ? ep_poll(e->scq, wc, 1, TIMEOUT_MS) : 0;
		if (all)
			assert_int_equal(n, 1);
		n += ibv_poll_cq(e->scq, 15, wc + n);
		for (i = 0; i < n; i++) {
			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
			assert_int_equal(wc[i].wr_id, *done);
			(*done)++;
		}
	} while (all && *done < total);
}

static void
test_pingpong(void **state)
{
	struct droce_qp_counters ca0, cb0, ca, cb;
	uint32_t i, sent_a = 0, sent_b = 0;
	struct ibv_wc wc;

	(void)state;
	pingpong_counters(&ca0, &cb0);
	assert_int_equal(ep_post_recv(&b, 0, 0, 64), 0);
	for (i = 0; i < PINGS; i++) {
		/* a's ping lands in b's buffer, b's pong in a's, each at an
		 * offset of its own */
		fill_pattern(a.buf + 65536 + i * 8, 8, i);
		fill_pattern(b.buf + 65536 + i * 8, 8, ~i);
		assert_int_equal(ep_post_recv(&a, i, i * 8, 8), 0);
		assert_int_equal(ep_post(&a, IBV_WR_SEND, i, 65536 + i * 8, 8,
					 NULL, 0, IBV_SEND_SIGNALED), 0);
		expect_one(b.rcq, i, IBV_WC_RECV, &wc);
		assert_int_equal(ep_post_recv(&b, i + 1, (i + 1) * 8, 8), 0);
		assert_int_equal(ep_post(&b, IBV_WR_SEND, i, 65536 + i * 8, 8,
					 NULL, 0, IBV_SEND_SIGNALED), 0);
		expect_one(a.rcq, i, IBV_WC_RECV, &wc);
		pingpong_sent(&a, &sent_a, PINGS, false);
		pingpong_sent(&b, &sent_b, PINGS, false);
	}
	/* the last, unanswered: b takes it and goes quiet */
	assert_int_equal(ep_post(&a, IBV_WR_SEND, PINGS, 0, 8, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_one(b.rcq, PINGS, IBV_WC_RECV, &wc);
	pingpong_sent(&a, &sent_a, PINGS + 1, true);
	if (sent_b < PINGS)
		pingpong_sent(&b, &sent_b, PINGS, true);
	for (i = 0; i < PINGS; i++) {
		assert_memory_equal(b.buf + i * 8, a.buf + 65536 + i * 8, 8);
		assert_memory_equal(a.buf + i * 8, b.buf + 65536 + i * 8, 8);
	}
	assert_memory_equal(b.buf + PINGS * 8, a.buf, 8);
	pingpong_counters(&ca, &cb);
	assert_int_equal(ca.retransmits - ca0.retransmits, 0);
	assert_int_equal(ca.timeouts - ca0.timeouts, 0);
	assert_int_equal(cb.retransmits - cb0.retransmits, 0);
	assert_int_equal(cb.timeouts - cb0.timeouts, 0);
	/* each side sent its requests and at most an ACK for each it took
	 * (fewer when coalesced) */
	assert_true(ca.tx_pkts - ca0.tx_pkts >= PINGS + 1);
	assert_true(ca.tx_pkts - ca0.tx_pkts <= 2 * PINGS + 1);
	assert_true(cb.tx_pkts - cb0.tx_pkts >= PINGS + 1);
	assert_true(cb.tx_pkts - cb0.tx_pkts <= 2 * PINGS + 1);
}

/*
 * ibv_rc_pingpong's end: the side that takes the last message destroys
 * its QP at once. The ACK it owed goes all the same (under
 * rc_ops_one_cpu, one that waited for the pass of an answer): the last
 * SEND completes, and nothing is sent twice nor waits for a timeout.
 */
#define ROUNDS 20

static void
test_pingpong_destroy(void **state)
{
	struct droce_qp_counters c0, c1;
	struct ep c, d;
	struct ibv_wc wc;
	uint32_t i;

	(void)state;
	assert_int_equal(ep_pair(&c, &d, 65536, &opts), 0);
	assert_int_equal(droce_query_qp_counters(c.qp, &c0), 0);
	for (i = 0; i <= ROUNDS; i++) {
		assert_int_equal(ep_post_recv(&d, i, 0, 64), 0);
		assert_int_equal(ep_post(&c, IBV_WR_SEND, i, 0, 64, NULL, 0,
					 i == ROUNDS ? IBV_SEND_SIGNALED : 0),
				 0);
		expect_one(d.rcq, i, IBV_WC_RECV, &wc);
		if (i == ROUNDS)
			break;
		assert_int_equal(ep_post_recv(&c, i, 0, 64), 0);
		assert_int_equal(ep_post(&d, IBV_WR_SEND, i, 0, 64, NULL, 0,
					 0), 0);
		expect_one(c.rcq, i, IBV_WC_RECV, &wc);
	}
	assert_int_equal(ibv_destroy_qp(d.qp), 0);
	d.qp = NULL;
	expect_one(c.scq, ROUNDS, IBV_WC_SEND, &wc);
	assert_int_equal(droce_query_qp_counters(c.qp, &c1), 0);
	assert_int_equal(c1.retransmits - c0.retransmits, 0);
	assert_int_equal(c1.timeouts - c0.timeouts, 0);
	ep_close(&c);
	ep_close(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_sizes),
		cmocka_unit_test(test_write_sizes),
		cmocka_unit_test(test_read_sizes),
		cmocka_unit_test(test_imm),
		cmocka_unit_test(test_atomics),
		cmocka_unit_test(test_multi_sge),
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_many_in_flight),
		cmocka_unit_test(test_sq_sig_all),
		cmocka_unit_test(test_cq_ex),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_fence),
		cmocka_unit_test(test_pingpong),
		cmocka_unit_test(test_pingpong_destroy),
	};

	return pair_run_group_tests(tests, &pair);
}
