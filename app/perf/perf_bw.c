/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Bandwidth tests: the client keeps tx_depth WRs in flight on each QP,
 * signals one in every tx_depth/4 (the slots of the others come back with
 * it, as on hardware), and counts completed messages. For send_bw the
 * server keeps receives posted.
 */

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

/* A send's wr_id: its QP above WR_SEQ_BITS, its number below. */
#define WR_SEQ_BITS 40
#define WR_SEQ_MASK ((1ull << WR_SEQ_BITS) - 1)

/*
 * An empty poll on the CPU of its engine runs the engine's pass itself
 * (run_to_completion), so waiting there costs no yield; but an engine
 * thread preempted in its pass holds it, and only a yield gives it the
 * CPU to finish. So this many empty polls in a row, then a yield.
 */
#define EMPTY_POLLS_TO_YIELD 64

/* After a poll that found @p n completions: yield if it is time. */
static void
idle_poll(int n, unsigned int *empty)
{
	*empty = n == 0 ? *empty + 1 : 0;
	if (*empty != 0 && *empty % EMPTY_POLLS_TO_YIELD == 0)
		sched_yield();
}

struct qp_state {
	uint64_t posted;
	uint64_t done;
	bool tail;             /* the last WR posted is signalled */
};

static enum ibv_wr_opcode
wr_opcode(enum perf_test t)
{
	switch (t) {
	case PERF_READ_BW:
		return IBV_WR_RDMA_READ;
	case PERF_SEND_BW:
		return IBV_WR_SEND;
	case PERF_ATOMIC_BW:
		return IBV_WR_ATOMIC_FETCH_AND_ADD;
	default:
		return IBV_WR_RDMA_WRITE;
	}
}

/*
 * Post @p n WRs of QP @p q in one chain, numbered from @p seq; every
 * @p sig-th is signalled, and the last one if @p signal_last.
 */
static int
post_wrs(const struct perf_opts *o, struct perf_side *s, unsigned int q,
	 uint64_t seq, unsigned int n, unsigned int sig, bool signal_last)
{
	uint32_t len = o->test == PERF_ATOMIC_BW ? 8 : o->size;
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf,
		.length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr[PERF_MAX_POST_LIST], *bad;
	unsigned int i;

	memset(wr, 0, n * sizeof(wr[0]));
	for (i = 0; i < n; i++) {
		struct ibv_send_wr *w = &wr[i];

		w->wr_id = ((uint64_t)q << WR_SEQ_BITS) | (seq + i);
		w->sg_list = &sge;
		w->num_sge = 1;
		w->opcode = wr_opcode(o->test);
		if ((seq + i) % sig == 0 || (signal_last && i + 1 == n))
			w->send_flags = IBV_SEND_SIGNALED;
		if (len <= 220 &&
		    (o->test == PERF_WRITE_BW || o->test == PERF_SEND_BW))
			w->send_flags |= IBV_SEND_INLINE;
		if (o->test == PERF_ATOMIC_BW) {
			w->wr.atomic.remote_addr = s->peer.addr;
			w->wr.atomic.rkey = s->peer.rkey;
			w->wr.atomic.compare_add = 1;
		} else {
			w->wr.rdma.remote_addr = s->peer.addr;
			w->wr.rdma.rkey = s->peer.rkey;
		}
		w->next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ibv_post_send(s->qp[q], wr, &bad);
}

static int
post_recvs(const struct perf_opts *o, struct perf_side *s, unsigned int q,
	   unsigned int n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf,
		.length = o->size,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr[32], *bad;
	unsigned int i, k;

	/* chains of up to 32: one publication each */
	while (n > 0) {
		k = n < 32 ? n : 32;
		for (i = 0; i < k; i++) {
			wr[i].wr_id = q;
			wr[i].sg_list = &sge;
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		if (ibv_post_recv(s->qp[q], wr, &bad) != 0)
			return -1;
		n -= k;
	}
	return 0;
}

/* Repost a receive for every receive completion on the server: one
 * chain for each run of completions of one QP (a receive's wr_id). */
static int
server_poll(const struct perf_opts *o, struct perf_side *sv)
{
	struct ibv_wc wc[32];
	unsigned int run = 0;
	int n, i;

	n = ibv_poll_cq(sv->cq, 32, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "droce-perf: server completion: %s\n",
				ibv_wc_status_str(wc[i].status));
			return -1;
		}
		run++;
		if (i + 1 < n && wc[i + 1].wr_id == wc[i].wr_id)
			continue;
		if (post_recvs(o, sv, (unsigned int)wc[i].wr_id, run) < 0)
			return -1;
		run = 0;
	}
	return n;
}

/*
 * Each busy QP's rate, and Jain's fairness index over them: (sum x)^2 /
 * (n sum x^2), 1 when all are equal, 1/n when one has it all.
 */
static void
qp_shares(const struct perf_opts *o, const struct qp_state *st,
	  unsigned int busy, struct perf_result *r)
{
	double sum = 0, sq = 0;
	unsigned int q;

	r->qp_rate = calloc(busy, sizeof(r->qp_rate[0]));
	if (r->qp_rate == NULL)
		return;
	r->nqp_rates = busy;
	for (q = 0; q < busy; q++) {
		double x = (double)st[q].done * o->size / r->secs / (1 << 20);

		r->qp_rate[q] = x;
		sum += x;
		sq += x * x;
	}
	r->jain = sq > 0 ? sum * sum / (busy * sq) : 0;
}

int
perf_bw(const struct perf_opts *o, struct perf_side *cl, struct perf_side *sv,
	struct perf_result *r)
{
	/* QPs 0..busy-1 carry the test, the others stay idle */
	const unsigned int busy = o->busy_qps != 0 ? o->busy_qps : o->qps;
	struct qp_state *st = calloc(o->qps, sizeof(*st));
	const unsigned int sig = o->tx_depth >= 4 ? o->tx_depth / 4 : 1;
	double t0, last, end, now;
	uint64_t total_posted = 0, total_done = 0, last_done = 0;
	unsigned int spins = 0, idle = 0;
	bool stop = false;
	unsigned int q;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	if (st == NULL)
		return -1;
	/* once: server_poll() posts each receive taken again, so a run
	 * (a turn of --turns) leaves the next as many as it found */
	if (o->test == PERF_SEND_BW && sv != NULL && !sv->recvs_posted) {
		for (q = 0; q < busy; q++)
			if (post_recvs(o, sv, q, o->tx_depth * PERF_RX_FACTOR) < 0)
				goto out;
		sv->recvs_posted = true;
	}
	t0 = perf_now();
	last = t0;
	end = t0 + o->duration;
	for (;;) {
		struct ibv_wc wc[32];
		int n, i;

		for (q = 0; q < busy && !stop; q++) {
			/* whole chains of post_list WRs, as perftest does */
			while (st[q].posted - st[q].done + o->post_list <=
			       o->tx_depth &&
			       (o->iters == 0 || total_posted < o->iters)) {
				uint64_t seq = st[q].posted + 1;
				unsigned int k = o->post_list;
				bool last_wr;

				if (o->iters != 0 &&
				    o->iters - total_posted < k)
					k = (unsigned int)(o->iters -
							   total_posted);
				last_wr = o->iters != 0 &&
					total_posted + k == o->iters;
				if (post_wrs(o, cl, q, seq, k, sig,
					     last_wr) != 0) {
					fprintf(stderr, "droce-perf: post failed\n");
					goto out;
				}
				st[q].posted += k;
				total_posted += k;
			}
		}
		n = ibv_poll_cq(cl->cq, 32, wc);
		idle_poll(n, &idle);
		for (i = 0; i < n; i++) {
			uint64_t seq = wc[i].wr_id & WR_SEQ_MASK;

			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "droce-perf: completion: %s\n",
					ibv_wc_status_str(wc[i].status));
				goto out;
			}
			q = (unsigned int)(wc[i].wr_id >> WR_SEQ_BITS);
			total_done += seq - st[q].done;
			st[q].done = seq;
		}
		if (sv != NULL && o->test == PERF_SEND_BW &&
		    server_poll(o, sv) < 0)
			goto out;
		/* the clock costs as much as a post: read it now and then */
		if (++spins % 64 != 0 && !stop)
			continue;
		now = perf_now();
		if (now - last >= 0.5) {
			double rate = (double)(total_done - last_done) /
				(now - last);

			if (rate > r->peak_msg_rate)
				r->peak_msg_rate = rate;
			if (o->progress)
				fprintf(stderr, "\r  %-10s %8.3f Mmsg/s %9.3f Gb/s  ",
					perf_test_name(o->test), rate / 1e6,
					rate * o->size * 8 / 1e9);
			last = now;
			last_done = total_done;
		}
		if (o->iters == 0 && now >= end)
			stop = true;
		if ((stop || (o->iters != 0 && total_posted == o->iters)) &&
		    total_done == total_posted)
			break;
		/* after the duration, an unsignalled tail needs a signal */
		for (q = 0; stop && q < busy; q++) {
			if (st[q].tail || st[q].posted % sig == 0) {
				st[q].tail = true;
				continue;
			}
			if (post_wrs(o, cl, q, st[q].posted + 1, 1, sig,
				     true) == 0) {
				st[q].posted++;
				total_posted++;
				st[q].tail = true;
			}
		}
	}
	r->secs = perf_now() - t0;
	r->msgs = total_done;
	r->bytes = total_done * o->size;
	if (busy > 1)
		qp_shares(o, st, busy, r);
	if (o->progress)
		fprintf(stderr, "\r%60s\r", "");
	ret = 0;
out:
	free(st);
	return ret;
}

int
perf_bw_server(const struct perf_opts *o, struct perf_side *sv)
{
	unsigned int q, idle = 0;
	int n;

	if (o->test != PERF_SEND_BW) {
		/* nothing to do here: wait on the socket, leave the CPU */
		if (perf_sync(o) < 0)
			return -1;
		return perf_sync(o);
	}
	for (q = 0; q < o->qps; q++)
		if (post_recvs(o, sv, q, o->tx_depth * PERF_RX_FACTOR) < 0)
			return -1;
	if (perf_sync(o) < 0)
		return -1;
	/* repost receives until the client says it is done (a sleep would
	 * leave the receive queue empty for tens of microseconds) */
	while (!perf_sync_ready()) {
		n = server_poll(o, sv);
		if (n < 0)
			return -1;
		idle_poll(n, &idle);
	}
	return perf_sync(o);
}
