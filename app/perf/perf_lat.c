/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Latency tests, ping-pong as perftest does: write_lat writes the message
 * into the peer's buffer, whose last byte the peer watches, and the peer
 * writes back; send_lat sends and waits for the peer's send. Half the
 * round trip is one latency sample.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <droce.h>

#include "perf.h"

#define LAT_TIMEOUT_S 10.0

static int
post(struct perf_side *s, enum ibv_wr_opcode op, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf,
		.length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED | (len <= 220 ? IBV_SEND_INLINE : 0);
	wr.wr.rdma.remote_addr = s->peer.addr + s->buf_len / 2;
	wr.wr.rdma.rkey = s->peer.rkey;
	return ibv_post_send(s->qp[0], &wr, &bad);
}

static int
post_recv(struct perf_side *s, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + s->buf_len / 2,
		.length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp[0], &wr, &bad);
}

/* Empty polls between looks at the clock while waiting: a look costs
 * as much as a third of an empty poll, and delays seeing what came. */
#define POLLS_PER_LOOK 256

/* Wait for a completion of @p opcode (others are counted and dropped). */
static int
wait_wc(struct perf_side *s, enum ibv_wc_opcode opcode)
{
	double end = perf_now() + LAT_TIMEOUT_S;
	unsigned int polls = 0;
	struct ibv_wc wc;

	for (;;) {
		int n = ibv_poll_cq(s->cq, 1, &wc);

		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				fprintf(stderr, "droce-perf: completion: %s\n",
					ibv_wc_status_str(wc.status));
				return -1;
			}
			if (wc.opcode == opcode)
				return 0;
			continue;
		}
		if (++polls % POLLS_PER_LOOK == 0 && perf_now() > end)
			return -1;
	}
}

/* Wait until the last byte written into our buffer says @p mark. */
static int
wait_mark(struct perf_side *s, uint32_t len, uint8_t mark)
{
	volatile uint8_t *p = s->buf + s->buf_len / 2 + len - 1;
	double end = perf_now() + LAT_TIMEOUT_S;
	unsigned int polls = 0;

	while (*p != mark)
		if (++polls % POLLS_PER_LOOK == 0 && perf_now() > end)
			return -1;
	return 0;
}

/* One side's move: send ours, marked with @p mark. */
static int
ping(const struct perf_opts *o, struct perf_side *s, uint8_t mark)
{
	s->buf[o->size - 1] = mark;
	if (o->test == PERF_WRITE_LAT)
		return post(s, IBV_WR_RDMA_WRITE, o->size) == 0 &&
			wait_wc(s, IBV_WC_RDMA_WRITE) == 0 ? 0 : -1;
	return post(s, IBV_WR_SEND, o->size) == 0 ? 0 : -1;
}

/* One side's wait for the other's move marked @p mark. */
static int
pong(const struct perf_opts *o, struct perf_side *s, uint8_t mark)
{
	if (o->test == PERF_WRITE_LAT)
		return wait_mark(s, o->size, mark);
	if (wait_wc(s, IBV_WC_RECV) != 0)
		return -1;
	return post_recv(s, o->size);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
lat_stats(double *us, uint64_t n, struct perf_result *r)
{
	double sum = 0, sq = 0;
	uint64_t i;

	qsort(us, n, sizeof(*us), cmp_double);
	for (i = 0; i < n; i++)
		sum += us[i];
	r->lat_avg = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (us[i] - r->lat_avg) * (us[i] - r->lat_avg);
	r->lat_stdev = sqrt(sq / (double)n);
	r->lat_min = us[0];
	r->lat_max = us[n - 1];
	r->lat_typ = us[n / 2];
	r->lat_p99 = us[(uint64_t)((double)n * 0.99)];
	r->lat_p999 = us[(uint64_t)((double)n * 0.999)];
}

static uint64_t
lat_iters(const struct perf_opts *o)
{
	return o->iters != 0 ? o->iters : 10000;
}

static int
prepare(const struct perf_opts *o, struct perf_side *s)
{
	unsigned int i;

	if (o->size == 0 || o->size > s->buf_len / 2)
		return -1;
	if (o->test == PERF_SEND_LAT)
		for (i = 0; i < 16; i++)
			if (post_recv(s, o->size) != 0)
				return -1;
	return 0;
}

int
perf_lat(const struct perf_opts *o, struct perf_side *cl, struct perf_side *sv,
	 struct perf_result *r)
{
	uint64_t n = lat_iters(o), i;
	double *us = calloc(n, sizeof(*us));
	double t0;

	memset(r, 0, sizeof(*r));
	if (us == NULL || prepare(o, cl) < 0 || prepare(o, sv) < 0) {
		free(us);
		return -1;
	}
	t0 = perf_now();
	for (i = 0; i < n; i++) {
		uint8_t mark = (uint8_t)(i % 255 + 1);
		double start = perf_now();

		if (ping(o, cl, mark) < 0 || pong(o, sv, mark) < 0 ||
		    ping(o, sv, mark) < 0 || pong(o, cl, mark) < 0) {
			fprintf(stderr, "droce-perf: ping-pong %lu failed\n",
				(unsigned long)i);
			free(us);
			return -1;
		}
		us[i] = (perf_now() - start) * 1e6 / 2;
	}
	r->secs = perf_now() - t0;
	r->msgs = n;
	lat_stats(us, n, r);
	free(us);
	return 0;
}

int
perf_lat_remote(const struct perf_opts *o, struct perf_side *me,
		bool initiator, struct perf_result *r)
{
	uint64_t n = lat_iters(o), i;
	double *us = calloc(n, sizeof(*us));
	double t0;

	memset(r, 0, sizeof(*r));
	if (us == NULL || prepare(o, me) < 0 || perf_sync(o) < 0) {
		free(us);
		return -1;
	}
	t0 = perf_now();
	for (i = 0; i < n; i++) {
		uint8_t mark = (uint8_t)(i % 255 + 1);
		double start = perf_now();
		int ret = initiator ?
			(ping(o, me, mark) || pong(o, me, mark)) :
			(pong(o, me, mark) || ping(o, me, mark));

		if (ret != 0) {
			fprintf(stderr, "droce-perf: ping-pong %lu failed\n",
				(unsigned long)i);
			free(us);
			return -1;
		}
		us[i] = (perf_now() - start) * 1e6 / 2;
	}
	r->secs = perf_now() - t0;
	r->msgs = n;
	lat_stats(us, n, r);
	free(us);
	return perf_sync(o);
}

/*
 * raw_lat: droce_raw_pingpong() with the peer's device, frames as long as
 * a write_lat's packets; half of each round trip, as the others report.
 * In one process droce1 echoes on its lcore, in two the server does.
 */
int
perf_raw_lat(const struct perf_opts *o, struct perf_side *me, bool remote,
	     struct perf_result *r)
{
	uint32_t n = (uint32_t)lat_iters(o), done = 0, i;
	uint32_t *rtt = calloc(n, sizeof(*rtt));
	double *us = calloc(n, sizeof(*us));
	double t0;
	int ret = -1, err;

	memset(r, 0, sizeof(*r));
	if (rtt == NULL || us == NULL || (remote && perf_sync(o) < 0))
		goto out;
	t0 = perf_now();
	err = droce_raw_pingpong(me->ctx, me->peer.mac, perf_frame_len(o), n,
				 remote && o->server ? NULL : rtt, &done);
	if (err != 0) {
		fprintf(stderr, "droce-perf: raw_lat: %s after %u round "
			"trips\n", strerror(err), done);
		goto out;
	}
	r->secs = perf_now() - t0;
	r->msgs = n;
	for (i = 0; i < n; i++)
		us[i] = rtt[i] / 2000.0;
	lat_stats(us, n, r);
	ret = remote ? perf_sync(o) : 0;
out:
	free(rtt);
	free(us);
	return ret;
}
