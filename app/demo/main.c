/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-demo: RDMA between droce0 and droce1, the two devices of the
 * embedded default wired back to back inside this process. It exchanges
 * SEND, SEND with immediate, RDMA WRITE, RDMA READ and both atomics with
 * every byte checked, then measures throughput and latency for a few
 * seconds and prints a summary table.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <droce.h>

#include "../perf/perf.h"

#define TIMEOUT_S 5.0

static struct perf_side a, b;
static int failures;

static void
pattern(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1664525u + 1013904223u;
		p[i] = (uint8_t)(seed >> 24);
	}
}

static int
wait_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = perf_now() + TIMEOUT_S;

	while (perf_now() < end)
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return wc->status == IBV_WC_SUCCESS ? 0 : -1;
	return -1;
}

static void
result(const char *what, uint32_t bytes, bool ok, const char *detail)
{
	printf("  %-34s %9u   %s%s\n", what, bytes, ok ? "ok" : "FAILED",
	       detail);
	if (!ok)
		failures++;
}

static int
post(struct perf_side *s, enum ibv_wr_opcode op, uint32_t off, uint32_t len,
     uint64_t raddr, uint64_t cmp, uint64_t swap, uint32_t imm)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + off,
		.length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(imm);
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = s->peer.rkey;
		wr.wr.atomic.compare_add = cmp;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = s->peer.rkey;
	}
	return ibv_post_send(s->qp[0], &wr, &bad);
}

static int
post_recv(struct perf_side *s, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + off,
		.length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp[0], &wr, &bad);
}

static void
exchange(void)
{
	const uint32_t mib = 1u << 20;
	struct ibv_wc wc;
	uint64_t *target = (uint64_t *)(void *)(b.buf + 2 * mib);
	uint64_t *orig = (uint64_t *)(void *)(a.buf + 2 * mib);
	char detail[96];
	bool ok;

	printf("\n  %-34s %9s   %s\n", "operation (droce0 -> droce1)", "bytes",
	       "result");

	pattern(a.buf, 4000, 1);
	ok = post_recv(&b, 0, 8192) == 0 && post(&a, IBV_WR_SEND, 0, 4000, 0,
						  0, 0, 0) == 0 &&
		wait_one(a.cq, &wc) == 0 && wait_one(b.cq, &wc) == 0 &&
		wc.byte_len == 4000 && memcmp(a.buf, b.buf, 4000) == 0;
	result("SEND", 4000, ok, ", data checked");

	pattern(a.buf, 64, 2);
	ok = post_recv(&b, 0, 8192) == 0 &&
		post(&a, IBV_WR_SEND_WITH_IMM, 0, 64, 0, 0, 0, 0xc0ffee) == 0 &&
		wait_one(a.cq, &wc) == 0 && wait_one(b.cq, &wc) == 0 &&
		(wc.wc_flags & IBV_WC_WITH_IMM) &&
		ntohl(wc.imm_data) == 0xc0ffee && memcmp(a.buf, b.buf, 64) == 0;
	result("SEND with immediate 0xc0ffee", 64, ok, ", data checked");

	pattern(a.buf, mib, 3);
	ok = post(&a, IBV_WR_RDMA_WRITE, 0, mib, a.peer.addr + mib, 0, 0, 0) == 0 &&
		wait_one(a.cq, &wc) == 0 && memcmp(a.buf, b.buf + mib, mib) == 0;
	result("RDMA WRITE", mib, ok, ", data checked");

	pattern(b.buf + 3 * mib, mib, 4);
	ok = post(&a, IBV_WR_RDMA_READ, mib, mib, a.peer.addr + 3 * mib, 0, 0,
		  0) == 0 && wait_one(a.cq, &wc) == 0 &&
		memcmp(a.buf + mib, b.buf + 3 * mib, mib) == 0;
	result("RDMA READ", mib, ok, ", data checked");

	*target = 41;
	ok = post(&a, IBV_WR_ATOMIC_CMP_AND_SWP, 2 * mib, 8,
		  a.peer.addr + 2 * mib, 41, 4242, 0) == 0 &&
		wait_one(a.cq, &wc) == 0 && *orig == 41 && *target == 4242;
	snprintf(detail, sizeof(detail), ", was %" PRIu64 ", now %" PRIu64,
		 *orig, *target);
	result("ATOMIC compare 41, swap 4242", 8, ok, detail);

	ok = post(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, 2 * mib, 8,
		  a.peer.addr + 2 * mib, 8, 0, 0) == 0 &&
		wait_one(a.cq, &wc) == 0 && *orig == 4242 && *target == 4250;
	snprintf(detail, sizeof(detail), ", was %" PRIu64 ", now %" PRIu64,
		 *orig, *target);
	result("ATOMIC fetch and add 8", 8, ok, detail);
}

struct run {
	enum perf_test test;
	uint32_t size;
	struct perf_result r;
	int ret;
};

static void
measure(double seconds)
{
	struct run runs[] = {
		{ PERF_WRITE_BW, 65536, { 0 }, 0 },
		{ PERF_READ_BW, 65536, { 0 }, 0 },
		{ PERF_SEND_BW, 4096, { 0 }, 0 },
		{ PERF_WRITE_BW, 64, { 0 }, 0 },
		{ PERF_ATOMIC_BW, 8, { 0 }, 0 },
		{ PERF_WRITE_LAT, 2, { 0 }, 0 },
	};
	unsigned int i;

	printf("\n  throughput and latency, droce0 -> droce1, %g s each:\n",
	       seconds);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct perf_opts o = {
			.test = runs[i].test,
			.size = runs[i].size,
			.duration = seconds,
			.qps = 1,
			.tx_depth = 128,
			.post_list = 1,
			.mtu = IBV_MTU_1024,
			.progress = true,
			.iters = runs[i].test == PERF_WRITE_LAT ? 20000 : 0,
		};
		struct perf_side cl, sv;

		runs[i].ret = -1;
		if (perf_side_open(&cl, 0, &o) < 0 ||
		    perf_side_open(&sv, 1, &o) < 0)
			break;
		cl.peer = sv.me;
		sv.peer = cl.me;
		if (perf_side_connect(&cl, &o) == 0 &&
		    perf_side_connect(&sv, &o) == 0)
			runs[i].ret = o.test == PERF_WRITE_LAT ?
				perf_lat(&o, &cl, &sv, &runs[i].r) :
				perf_bw(&o, &cl, &sv, &runs[i].r);
		perf_side_close(&cl);
		perf_side_close(&sv);
		if (runs[i].ret != 0)
			failures++;
	}

	printf("\n  %-10s %8s %12s %10s %10s %12s\n", "test", "bytes",
	       "messages", "Mmsg/s", "Gb/s", "latency us");
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		const struct run *r = &runs[i];

		if (r->ret != 0) {
			printf("  %-10s %8u   FAILED\n", perf_test_name(r->test),
			       r->size);
			continue;
		}
		if (r->test == PERF_WRITE_LAT)
			printf("  %-10s %8u %12" PRIu64 " %10s %10s %12.2f\n",
			       perf_test_name(r->test), r->size, r->r.msgs, "-",
			       "-", r->r.lat_typ);
		else
			printf("  %-10s %8u %12" PRIu64 " %10.3f %10.3f %12s\n",
			       perf_test_name(r->test), r->size, r->r.msgs,
			       (double)r->r.msgs / r->r.secs / 1e6,
			       (double)r->r.bytes * 8 / r->r.secs / 1e9, "-");
	}
}

int
main(int argc, char **argv)
{
	struct perf_opts o = {
		.size = 4u << 20,
		.qps = 1,
		.tx_depth = 16,
		.mtu = IBV_MTU_1024,
	};
	struct ibv_port_attr port;
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	int d;

	printf("droce demo: RDMA between droce0 and droce1, back to back in "
	       "this process\n\n");
	if (perf_side_open(&a, 0, &o) < 0 || perf_side_open(&b, 1, &o) < 0) {
		fprintf(stderr, "droce-demo: cannot open droce0 and droce1\n");
		return 1;
	}
	a.peer = b.me;
	b.peer = a.me;
	for (d = 0; d < 2; d++) {
		struct perf_side *s = d ? &b : &a;
		char gid[INET6_ADDRSTRLEN];

		ibv_query_port(s->ctx, 1, &port);
		inet_ntop(AF_INET6, s->me.gid, gid, sizeof(gid));
		printf("  %s  MAC %02x:%02x:%02x:%02x:%02x:%02x  GID %s  %s, "
		       "MTU %u, QP 0x%06x\n", ibv_get_device_name(s->ctx->device),
		       s->me.mac[0], s->me.mac[1], s->me.mac[2], s->me.mac[3],
		       s->me.mac[4], s->me.mac[5], gid,
		       ibv_port_state_str(port.state), 128u << port.active_mtu,
		       s->me.qpn[0]);
	}
	if (perf_side_connect(&a, &o) < 0 || perf_side_connect(&b, &o) < 0) {
		fprintf(stderr, "droce-demo: cannot connect the QPs\n");
		return 1;
	}
	exchange();
	perf_side_close(&a);
	perf_side_close(&b);
	if (seconds > 0)
		measure(seconds);
	printf("\n%s\n", failures ? "droce demo: FAILED" :
	       "droce demo: every operation checked, all ok");
	return failures ? 1 : 0;
}
