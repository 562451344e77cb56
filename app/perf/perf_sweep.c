/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * A QP-count sweep (-q A,B,...): the same bandwidth test over each count
 * of QPs in turn, in one process; then one QP busy beside the largest
 * count idle, which is what idle QPs cost the lcore. Each rate is read
 * against one QP's, measured right before it (this machine's speed
 * drifts within minutes). With each count, the memory a QP takes: droce's
 * records of it and its queues (droce_query_resources()), and what the
 * DPDK heap grew by for each (CQ share and all).
 */

#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include <droce.h>

#include "perf.h"

struct sweep_row {
	unsigned int qps;
	unsigned int busy;
	double rate;               /* messages a second */
	double base;               /* one QP's, right before */
	double state_bytes;        /* per QP */
	double queue_bytes;
	double heap_bytes;
};

static size_t
heap_allocated(void)
{
	struct rte_malloc_socket_stats s;
	size_t sum = 0;
	int i;

	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (rte_malloc_get_socket_stats(i, &s) == 0)
			sum += s.heap_allocsz_bytes;
	return sum;
}

/* One count: both sides made, connected, measured and closed. */
static int
sweep_one(struct perf_opts *o, struct sweep_row *row)
{
	struct perf_side cl, sv;
	struct droce_resources res;
	struct perf_result r;
	size_t heap0 = heap_allocated();
	int ret = -1;

	o->qps = row->qps;
	o->busy_qps = row->busy;
	if (perf_side_open(&cl, 0, o) < 0 || perf_side_open(&sv, 1, o) < 0)
		goto out;
	cl.peer = sv.me;
	sv.peer = cl.me;
	if (perf_side_connect(&cl, o) < 0 || perf_side_connect(&sv, o) < 0)
		goto out;
	row->heap_bytes = (double)(heap_allocated() - heap0) / (2.0 * o->qps);
	/* the client's device: its QPs and nothing else's */
	droce_query_resources(cl.ctx, &res);
	row->state_bytes = (double)res.qp_bytes / (double)res.qps;
	row->queue_bytes = (double)res.qp_queue_bytes / (double)res.qps;
	if (perf_bw(o, &cl, &sv, &r) < 0)
		goto out;
	row->rate = (double)r.msgs / r.secs;
	free(r.qp_rate);
	ret = 0;
out:
	perf_side_close(&cl);
	perf_side_close(&sv);
	return ret;
}

int
perf_sweep(struct perf_opts *o)
{
	struct sweep_row rows[PERF_MAX_SWEEP + 1];
	unsigned int i, n = 0, most = 0;

	memset(rows, 0, sizeof(rows));
	for (i = 0; i < o->nsweep; i++) {
		rows[n].qps = o->sweep[i];
		rows[n++].busy = o->sweep[i];
		if (o->sweep[i] > most)
			most = o->sweep[i];
	}
	if (most > 1) {
		rows[n].qps = most;
		rows[n++].busy = 1;
	}
	printf(" %s, %u B, %u WRs in flight per busy QP, %.1f s each\n",
	       perf_test_name(o->test), o->size, o->tx_depth, o->duration);
	printf(" %-7s %-7s %-15s %-13s %-7s %-13s %-14s %s\n", "QPs",
	       "busy", "MsgRate[Mpps]", "1 QP[Mpps]", "ratio", "state[B/QP]",
	       "queues[B/QP]", "heap[B/QP]");
	for (i = 0; i < n; i++) {
		struct sweep_row one = { .qps = 1, .busy = 1 };

		if (sweep_one(o, &one) < 0 || sweep_one(o, &rows[i]) < 0) {
			fprintf(stderr, "droce-perf: %u QPs failed\n",
				rows[i].qps);
			return -1;
		}
		rows[i].base = one.rate;
		printf(" %-7u %-7u %-15.3f %-13.3f %-7.2f %-13.0f %-14.0f "
		       "%.0f\n", rows[i].qps, rows[i].busy, rows[i].rate / 1e6,
		       one.rate / 1e6, one.rate > 0 ? rows[i].rate / one.rate : 0,
		       rows[i].state_bytes, rows[i].queue_bytes,
		       rows[i].heap_bytes);
		fflush(stdout);
	}
	printf(" 1 QP: the same test on one QP, right before; ratio: the row's "
	       "rate over it;\n state: droce's records of a QP (engine and "
	       "verbs, READ/atomic resources);\n queues: its send and receive "
	       "queues; heap: the DPDK heap's growth per QP\n with both sides "
	       "made.\n");
	return 0;
}
