/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Zero copy (on by default, [engine] zero_copy): RC payloads of at least
 * zero_copy_min bytes (1024 here) leave from the registered memory
 * itself, in a segment of their own, and over the in-process ring pair
 * the receiver takes them so, reading the payload where it lies. SENDs,
 * WRITEs and READ responses arrive whole, of every length about a
 * packet's; bytes that span two SGEs are copied; a region deregistered
 * while a WRITE from it is in flight is let go of by the ports before
 * the call returns, and nothing reads it after: the buffer is freed at
 * once (the ASan build would see a read of it).
 */

#include <endian.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <droce.h>
#include <rte_ethdev.h>

#include "harness.h"

#define MSG (64u * 1024)
#define BUF (8u * MSG)
#define BIG (1u << 20)      /* the region deregistered in flight */

static struct ep_opts opts;
static struct ep a, b;
static bool faults;         /* behind net_fault: packets are sent again */
static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF,
};

/*
 * With dma=1 among FAULT_ARGS, the ports send only memory mapped for
 * their DMA, as NICs behind an IOMMU: the frames they could not read,
 * of both (net_fault's xstat tx_fault_unmapped), else 0.
 */
static uint64_t
unmapped(void)
{
	uint64_t sum = 0, id, v;
	unsigned int i;
	uint16_t port;

	for (i = 0; i < 2; i++) {
		char name[32];

		snprintf(name, sizeof(name), "net_fault_droce%u", i);
		if (rte_eth_dev_get_port_by_name(name, &port) != 0)
			continue;
		assert_int_equal(rte_eth_xstats_get_id_by_name(port,
			"tx_fault_unmapped", &id), 0);
		assert_int_equal(rte_eth_xstats_get_by_id(port, &id, &v, 1),
				 1);
		sum += v;
	}
	return sum;
}

static void
counters(struct droce_counters *ca, struct droce_counters *cb)
{
	assert_int_equal(droce_query_counters(a.ctx, ca), 0);
	assert_int_equal(droce_query_counters(b.ctx, cb), 0);
}

static void
one_ok(struct ibv_cq *cq, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	assert_int_equal(ep_poll(cq, &wc, 1, 10000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, op);
}

/* SEND, WRITE and READ of 64 KiB and of lengths about a packet's (the
 * pad in the third segment): each byte arrives, the packets left in
 * place and were taken in segments. */
static void
test_in_place(void **state)
{
	static const uint32_t lens[] = { MSG, 1024, 1025, 1027, 2047, 4099,
					 MSG - 1 };
	struct droce_counters ca0, cb0, ca1, cb1;
	uint64_t pkts = 0;
	unsigned int i;

	(void)state;
	counters(&ca0, &cb0);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i];

		fill_pattern(a.buf, MSG, 11 * i);
		fill_pattern(b.buf + MSG, MSG, 11 * i + 1);
		memset(b.buf + 2 * MSG, 0, 2 * MSG);
		memset(a.buf + 2 * MSG, 0, MSG);
		assert_int_equal(ep_post_recv(&b, i, 2 * MSG, MSG), 0);
		assert_int_equal(ep_post(&a, IBV_WR_SEND, i, 0, len, &b, 0,
					 IBV_SEND_SIGNALED), 0);
		assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, i, 0, len, &b,
					 3 * MSG, IBV_SEND_SIGNALED), 0);
		assert_int_equal(ep_post(&a, IBV_WR_RDMA_READ, i, 2 * MSG, len,
					 &b, MSG, IBV_SEND_SIGNALED), 0);
		one_ok(b.rcq, IBV_WC_RECV);
		one_ok(a.scq, IBV_WC_SEND);
		one_ok(a.scq, IBV_WC_RDMA_WRITE);
		one_ok(a.scq, IBV_WC_RDMA_READ);
		assert_memory_equal(b.buf + 2 * MSG, a.buf, len);
		assert_memory_equal(b.buf + 3 * MSG, a.buf, len);
		assert_memory_equal(a.buf + 2 * MSG, b.buf + MSG, len);
		/* (nothing past the message was touched) */
		if (len < MSG) {
			assert_int_equal(b.buf[2 * MSG + len], 0);
			assert_int_equal(a.buf[2 * MSG + len], 0);
		}
		pkts += len / 1024;
	}
	counters(&ca1, &cb1);
	print_message("in place: droce0 sent %" PRIu64 ", droce1 %" PRIu64
		      "; taken in segments: droce0 %" PRIu64 ", droce1 %"
		      PRIu64 "\n", ca1.tx_zero_copy - ca0.tx_zero_copy,
		      cb1.tx_zero_copy - cb0.tx_zero_copy,
		      ca1.rx_segmented - ca0.rx_segmented,
		      cb1.rx_segmented - cb0.rx_segmented);
	/* every full packet of a SEND and a WRITE from droce0, of a READ
	 * response from droce1 */
	assert_true(ca1.tx_zero_copy - ca0.tx_zero_copy >= 2 * pkts);
	assert_true(cb1.tx_zero_copy - cb0.tx_zero_copy >= pkts);
	assert_true(cb1.rx_segmented - cb0.rx_segmented >= 2 * pkts);
	assert_true(ca1.rx_segmented - ca0.rx_segmented >= pkts);
	assert_int_equal(ca1.tx_zero_copy_fallback, ca0.tx_zero_copy_fallback);
	/* (behind net_fault's delay a packet is sent again before the first
	 * is answered; once the WR completed its buffer is filled anew, and
	 * the late duplicate, read from it, fails its ICRC) */
	if (!faults) {
		assert_int_equal(cb1.rx_icrc_err, cb0.rx_icrc_err);
		assert_int_equal(ca1.rx_icrc_err, ca0.rx_icrc_err);
	}
	/* (with dma=1: every region was mapped for the port's DMA) */
	assert_int_equal(unmapped(), 0);
}

/* A WRITE from three SGEs: the packets within one leave in place, those
 * across two are copied; the bytes arrive in order. */
static void
test_sges(void **state)
{
	static const uint32_t sz[] = { 1500, 3000, 5000 };
	struct ibv_sge sge[3];
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = sge, .num_sge = 3,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)(b.buf + 4 * MSG),
			     .rkey = b.mr->rkey },
	}, *bad;
	struct droce_counters ca0, cb0, ca1, cb1;
	uint32_t off = 0, i;

	(void)state;
	fill_pattern(a.buf, 4 * MSG, 5);
	memset(b.buf + 4 * MSG, 0, MSG);
	for (i = 0; i < 3; i++) {
		/* apart in memory, so that they are not one span */
		sge[i].addr = (uintptr_t)(a.buf + i * MSG);
		sge[i].length = sz[i];
		sge[i].lkey = a.mr->lkey;
	}
	counters(&ca0, &cb0);
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	one_ok(a.scq, IBV_WC_RDMA_WRITE);
	counters(&ca1, &cb1);
	for (i = 0; i < 3; i++) {
		assert_memory_equal(b.buf + 4 * MSG + off, a.buf + i * MSG,
				    sz[i]);
		off += sz[i];
	}
	/* 9500 bytes in 1024-byte packets: [0,1024) in the first SGE,
	 * [1024,2048) across, [2048,3072) and [3072,4096) in the second,
	 * [4096,5120) across, [5120,6144) ... [8192,9216) in the third,
	 * [9216,9500) too short */
	print_message("in place %" PRIu64 " of 10 packets\n",
		      ca1.tx_zero_copy - ca0.tx_zero_copy);
	if (faults)
		assert_true(ca1.tx_zero_copy - ca0.tx_zero_copy >= 7);
	else
		assert_int_equal(ca1.tx_zero_copy - ca0.tx_zero_copy, 7);
}

/*
 * Regions that share pages: three over one buffer, the second's pages
 * overlapping both others'. Each sends a WRITE in place; deregistering
 * the first and the third leaves the second's pages mapped (with dma=1
 * its WRITE still leaves in place and arrives), and the second gone, a
 * region over the same pages maps them again.
 */
static void
test_shared_pages(void **state)
{
	size_t len = 6 * 4096;
	uint8_t *mem = aligned_alloc(4096, len);
	struct ibv_mr *mr[3];
	struct droce_counters c0, c1, cb;
	unsigned int i;

	(void)state;
	assert_non_null(mem);
	fill_pattern(mem, len, 23);
	mr[0] = ibv_reg_mr(a.pd, mem, 2 * 4096 + 100, IBV_ACCESS_LOCAL_WRITE);
	mr[1] = ibv_reg_mr(a.pd, mem + 2 * 4096 - 100, 2 * 4096 + 200,
			   IBV_ACCESS_LOCAL_WRITE);
	mr[2] = ibv_reg_mr(a.pd, mem + 4 * 4096 - 50, 2 * 4096 + 50,
			   IBV_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 3; i++)
		assert_non_null(mr[i]);
	for (i = 0; i < 4; i++) {
		/* 0, 1, 2; then 1 alone, the others gone */
		unsigned int k = i < 3 ? i : 1;
		struct ibv_sge sge = { (uintptr_t)mr[k]->addr, 4096,
				       mr[k]->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)b.buf,
				     .rkey = b.mr->rkey },
		}, *bad;

		if (i == 3) {
			assert_int_equal(ibv_dereg_mr(mr[0]), 0);
			assert_int_equal(ibv_dereg_mr(mr[2]), 0);
		}
		memset(b.buf, 0, 4096);
		counters(&c0, &cb);
		assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
		one_ok(a.scq, IBV_WC_RDMA_WRITE);
		counters(&c1, &cb);
		assert_memory_equal(b.buf, mr[k]->addr, 4096);
		assert_true(c1.tx_zero_copy - c0.tx_zero_copy >= 2);
	}
	assert_int_equal(ibv_dereg_mr(mr[1]), 0);
	/* the pages again, all three runs gone by now */
	mr[0] = ibv_reg_mr(a.pd, mem, len, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr[0]);
	assert_int_equal(ibv_dereg_mr(mr[0]), 0);
	assert_int_equal(unmapped(), 0);
	free(mem);
}

/*
 * A 1 MiB WRITE from a region of its own, deregistered right after it is
 * posted and the memory freed at once: deregistration returns once no
 * port holds a packet that points into it, and the requester reads no
 * more of it (the WRITE fails with a local protection error if it was
 * not all sent by then, and the QP fails with it: this test is the
 * last).
 */
static void
test_dereg_in_flight(void **state)
{
	uint8_t *mem = malloc(BIG);
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)b.buf,
			     .rkey = b.mr->rkey },
	}, *bad;
	struct droce_counters c;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	uint64_t z, t;

	(void)state;
	assert_non_null(mem);
	fill_pattern(mem, BIG, 17);
	assert_int_equal(droce_query_counters(a.ctx, &c), 0);
	z = c.tx_zero_copy;
	mr = ibv_reg_mr(a.pd, mem, BIG, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	sge = (struct ibv_sge){ (uintptr_t)mem, BUF, mr->lkey };
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	/* (let some go first) */
	while (droce_query_counters(a.ctx, &c) == 0 && c.tx_zero_copy == z)
		;
	t = ep_now_ms();
	assert_int_equal(ibv_dereg_mr(mr), 0);
	print_message("deregistered in %" PRIu64 " ms\n", ep_now_ms() - t);
	memset(mem, 0xee, BIG);
	free(mem);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 10000), 1);
	print_message("the WRITE: %s\n", ibv_wc_status_str(wc.status));
	assert_true(wc.status == IBV_WC_SUCCESS ||
		    wc.status == IBV_WC_LOC_PROT_ERR);
	/* (a byte of 0xee would mean a read after the region was gone; the
	 * WRITE's bytes may be partly there if it failed) */
	if (wc.status == IBV_WC_SUCCESS) {
		uint8_t *want = malloc(BUF);

		assert_non_null(want);
		fill_pattern(want, BUF, 17);
		assert_memory_equal(b.buf, want, BUF);
		free(want);
	}
	/* (with dma=1 the region stayed mapped until the ports let go) */
	assert_int_equal(unmapped(), 0);
}

/*
 * test_zero_copy WORKDIR [FAULT_ARGS]: droce0 and droce1 over a ring
 * pair, zero_copy_min down to the 1024-byte packets of their path MTU
 * (the default, 4096, takes only a jumbo path's); with FAULT_ARGS both
 * ports behind net_fault (delay=1,delay_us=N holds every frame a while,
 * so that the region deregistered in flight has packets in the ports'
 * hands; dma=1 makes the ports send only memory mapped for their DMA,
 * as a NIC behind an IOMMU does, so that droce must map each region).
 */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_place),
		cmocka_unit_test(test_sges),
		cmocka_unit_test(test_shared_pages),
		cmocka_unit_test(test_dereg_in_flight),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: test_zero_copy WORKDIR [FAULT_ARGS]\n");
		return 2;
	}
	faults = argc > 2;
	if (ep_config(argv[1], "zc", 9, "zero_copy_min = 1024\n", NULL,
		      faults ? argv[2] : NULL, 5) != 0) {
		perror("test_zero_copy: config");
		return 1;
	}
	if (faults)
		print_message("faults: %s\n", argv[2]);
	return pair_run_group_tests(tests, &pair);
}
