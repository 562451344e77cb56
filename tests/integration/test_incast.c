/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Incast through a bottleneck: SENDERS devices (droce1 ... droceN) WRITE
 * to droce0 as fast as they may, all through net_fault's switch. Every
 * port's line is RATE_MBPS (2.5 Gb/s, path MTU 4096); the queue in front
 * of droce0 is the bottleneck: it drops at its tail beyond QUEUE_BYTES
 * and marks ECN-capable frames CE between KMIN_BYTES and KMAX_BYTES
 * (with a chance rising to PMAX, 1, at KMAX), as a switch set up for
 * DCQCN does. Beside the bulk
 * flows a small flow, one 64-byte WRITE at a time from droce1, at most
 * one each 50 us, times its round trips through the same queue.
 *
 *   test_incast WORKDIR SENDERS on|off [SECONDS]
 *
 * With congestion control on ([engine] ecn = on: DCQCN), measured after
 * the first second: the queue stays near KMIN (its mean backlog below
 * KMAX), next to nothing is dropped (at most one frame in a thousand),
 * the line is at least 90% busy (in the median 100 ms slice: the few
 * slices in which the machine gave this process no CPU say nothing of
 * DCQCN), and the senders' shares are fair
 * (Jain's index >= 0.95), as they were within that first second. With it
 * off the same traffic overflows the queue: frames are dropped and the
 * senders go back N. Then, with CC on, droce1 WRITEs alone for a while:
 * DCQCN brings its rate back to the line's, and even there it must go at
 * the line's pace, not put its window in the queue at once (the queue
 * stays below KMAX, the line at least 85% busy). Each run prints its
 * figures on a line of its own (devtools/incast.sh gathers them into a
 * table); INCAST_TRACE=1 in the
 * environment prints each sender's share and DCQCN state every 100 ms.
 */

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include <rte_ethdev.h>

#include <droce.h>

#include "harness.h"

#define SENDERS_MAX 8
#define RATE_MBPS 2500
#define QUEUE_BYTES (512u * 1024)
#define KMIN_BYTES (16u * 1024)
#define KMAX_BYTES (128u * 1024)
#define PMAX "1.0"
#define MSG (64u * 1024)            /* each bulk WRITE */
#define DEPTH 8                     /* bulk WRITEs outstanding a sender */
#define BUF (MSG * DEPTH)
#define SMALL 64                    /* the small flow's WRITEs ... */
#define SMALL_GAP_NS 50000          /* ... one each 50 us at most */
#define WARMUP_US 1000000           /* the flows converge in this time */
#define SLICE_US 100000             /* fairness measured per slice too */
#define LAT_MAX 200000              /* round trips kept */
#define SLICES_MAX 1000
#define ALONE_US 400000             /* droce1 alone this long, at the end */
#define ALONE_SETTLE_US 100000      /* ... measured after this much */
#define ALONE_SLICE_US 10000        /* ... slice by slice */

static const char *workdir;
static unsigned int nsenders;
static bool cc_on;
static unsigned int seconds = 4;
static struct ep_opts opts;
static struct ep snd[SENDERS_MAX], rcv[SENDERS_MAX];
static struct ep small_s, small_r;
static uint64_t lat_ns[LAT_MAX];
static double slice_util[SLICES_MAX];

/* The bottleneck's counters: droce0's switch queue, in net_fault. */
enum qstat { Q_QUEUED, Q_DROPPED, Q_MARKED, Q_SENT, Q_SENT_BYTES,
	     Q_BACKLOG_MEAN, Q_BACKLOG_MAX, Q_MAX };

static const char * const qstat_names[Q_MAX] = {
	"rx_queue_queued", "rx_queue_dropped", "rx_queue_ce_marked",
	"rx_queue_sent", "rx_queue_sent_bytes", "rx_queue_backlog_mean",
	"rx_queue_backlog_max",
};

static uint16_t bn_port;
static uint64_t bn_ids[Q_MAX];

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
bottleneck_read(uint64_t v[Q_MAX])
{
	assert_int_equal(rte_eth_xstats_get_by_id(bn_port, bn_ids, v, Q_MAX),
			 Q_MAX);
}

/* How busy the bottleneck's line was from reading @p a to reading @p b,
 * @p ns later (its frames with their Ethernet overhead). */
static double
line_util(const uint64_t a[Q_MAX], const uint64_t b[Q_MAX], uint64_t ns)
{
	return (double)(b[Q_SENT_BYTES] - a[Q_SENT_BYTES] +
			24 * (b[Q_SENT] - a[Q_SENT])) * 8 * 1e3 / RATE_MBPS /
		(double)ns;
}

static double
jain(const double *x, unsigned int n)
{
	double sum = 0, sq = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return sq == 0 ? 0 : sum * sum / (n * sq);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The senders' QP counters, summed. */
static void
senders_counters(struct droce_qp_counters *sum)
{
	struct droce_qp_counters c;
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < nsenders; i++) {
		assert_int_equal(droce_query_qp_counters(snd[i].qp, &c), 0);
		sum->retransmits += c.retransmits;
		sum->timeouts += c.timeouts;
		sum->naks_rcvd += c.naks_rcvd;
		sum->cnps_rcvd += c.cnps_rcvd;
	}
}

/* Sender @p i keeps DEPTH bulk WRITEs in flight, *@p out of them now:
 * @return how many completed (each a success). */
static unsigned int
sender_pump(unsigned int i, unsigned int *out)
{
	struct ibv_wc wc[16];
	int n, k;

	while (*out < DEPTH) {
		assert_int_equal(ep_post(&snd[i], IBV_WR_RDMA_WRITE, i, 0, MSG,
					 &rcv[i], 0, IBV_SEND_SIGNALED), 0);
		(*out)++;
	}
	n = ibv_poll_cq(snd[i].scq, 16, wc);
	assert_true(n >= 0);
	for (k = 0; k < n; k++) {
		if (wc[k].status != IBV_WC_SUCCESS)
			fail_msg("sender %u: %s", i,
				 ibv_wc_status_str(wc[k].status));
	}
	*out -= (unsigned int)n;
	return (unsigned int)n;
}

/* Sender @p i's @p out WRITEs still in flight complete (each a success). */
static void
sender_drain(unsigned int i, unsigned int out)
{
	struct ibv_wc wc;

	for (; out > 0; out--) {
		assert_int_equal(ep_poll(snd[i].scq, &wc, 1, 20000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
	}
}

/*
 * Sender 0 alone, the others quiet, after the congestion. Its rate goes
 * back to the line's; there it must still be paced, as a NIC's line
 * paces it, not send DEPTH messages into the queue at once.
 */
static void
alone(void)
{
	uint64_t t, t0 = now_ns(), q0[Q_MAX], q1[Q_MAX], qs[Q_MAX];
	uint64_t from_at = t0 + ALONE_SETTLE_US * 1000ull;
	uint64_t end_at = t0 + ALONE_US * 1000ull;
	uint64_t slice_t = 0;
	unsigned int out = 0, nslice = 0;
	bool measuring = false;
	struct droce_qp_cc cc;
	double util, util_median;

	memset(q0, 0, sizeof(q0));
	for (t = t0; t < end_at; t = now_ns()) {
		sender_pump(0, &out);
		if (!measuring && t >= from_at) {
			measuring = true;
			assert_int_equal(rte_eth_xstats_reset(bn_port), 0);
			bottleneck_read(q0);
			memcpy(qs, q0, sizeof(qs));
			slice_t = t;
		} else if (measuring && t - slice_t >= ALONE_SLICE_US * 1000ull &&
			   nslice < SLICES_MAX) {
			bottleneck_read(q1);
			slice_util[nslice++] = line_util(qs, q1, t - slice_t);
			memcpy(qs, q1, sizeof(qs));
			slice_t = t;
		}
	}
	bottleneck_read(q1);
	droce_query_qp_cc(snd[0].qp, &cc);
	sender_drain(0, out);
	util = line_util(q0, q1, end_at - from_at);
	qsort(slice_util, nslice, sizeof(slice_util[0]), cmp_double);
	util_median = nslice > 0 ? slice_util[nslice / 2] : 0;
	printf("alone rate_mbps=%" PRIu64 " cuts=%" PRIu64 " util=%.3f "
	       "util_median=%.3f marked=%" PRIu64 " backlog_max=%" PRIu64 "\n",
	       cc.rate_kbps / 1000, cc.cuts, util, util_median,
	       q1[Q_MARKED] - q0[Q_MARKED], q1[Q_BACKLOG_MAX]);
	fflush(stdout);
	assert_true(cc.cuts > 0);
	assert_int_equal(cc.rate_kbps, RATE_MBPS * 1000ull);
	assert_true(q1[Q_BACKLOG_MAX] < KMAX_BYTES);
	/* (a lone QP paced in software: the lcore's passes are not on time
	 * to the microsecond, under sanitizers least of all; and the slice
	 * in the middle, as above: a host that takes this process's CPUs
	 * for a spell says nothing of the pacing) */
	assert_true(util_median >= 0.85);
}

static void
test_incast(void **state)
{
	uint64_t done[SENDERS_MAX] = { 0 }, at_warm[SENDERS_MAX] = { 0 };
	uint64_t at_slice[SENDERS_MAX] = { 0 };
	unsigned int out[SENDERS_MAX] = { 0 };
	uint64_t q0[Q_MAX], q1[Q_MAX], qs[Q_MAX];
	struct droce_qp_counters c0, c1;
	uint64_t t0, t, warm_at, end_at, slice_at, small_at = 0, slice_t = 0;
	uint64_t converged_us = 0;
	double share[SENDERS_MAX], j, util, util_median, goodput;
	double min_slice_jain = 1.0;
	unsigned int nlat = 0, slices = 0, nslice = 0, i;
	bool small_out = false, warm = false;
	struct ibv_wc wc[16];
	int n;

	(void)state;
	t0 = now_ns();
	warm_at = t0 + WARMUP_US * 1000ull;
	end_at = t0 + seconds * 1000000000ull;
	slice_at = t0 + SLICE_US * 1000ull;
	memset(&c0, 0, sizeof(c0));
	memset(q0, 0, sizeof(q0));
	memset(qs, 0, sizeof(qs));
	for (t = t0; t < end_at; t = now_ns()) {
		for (i = 0; i < nsenders; i++)
			done[i] += (uint64_t)sender_pump(i, &out[i]) * MSG;
		if (!small_out && t - small_at >= SMALL_GAP_NS) {
			assert_int_equal(ep_post(&small_s, IBV_WR_RDMA_WRITE,
				99, 0, SMALL, &small_r, 0,
				IBV_SEND_SIGNALED), 0);
			small_out = true;
			small_at = t;
		}
		n = ibv_poll_cq(small_s.scq, 1, wc);
		if (n == 1) {
			assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
			small_out = false;
			if (warm && nlat < LAT_MAX)
				lat_ns[nlat++] = now_ns() - small_at;
		}
		if (!warm && t >= warm_at) {
			warm = true;
			memcpy(at_warm, done, sizeof(done));
			/* the queue's figures from now on */
			assert_int_equal(rte_eth_xstats_reset(bn_port), 0);
			bottleneck_read(q0);
			senders_counters(&c0);
			memcpy(qs, q0, sizeof(qs));
			slice_t = t;
		}
		if (t >= slice_at) {
			/* fairness over each slice, from the start */
			for (i = 0; i < nsenders; i++) {
				share[i] = (double)(done[i] - at_slice[i]);
				at_slice[i] = done[i];
			}
			j = jain(share, nsenders);
			slices++;
			if (getenv("INCAST_TRACE") != NULL) {
				struct droce_qp_cc cc;
				uint64_t qv[Q_MAX];

				bottleneck_read(qv);
				printf("%5" PRIu64 " ms backlog_max %" PRIu64
				       " dropped %" PRIu64 ":", (t - t0) / 1000000,
				       qv[Q_BACKLOG_MAX], qv[Q_DROPPED]);
				for (i = 0; i < nsenders; i++) {
					droce_query_qp_cc(snd[i].qp, &cc);
					printf(" %.0f (%" PRIu64 "/%" PRIu64
					       " a%u c%" PRIu64 ")",
					       share[i] * 8 / SLICE_US,
					       cc.rate_kbps / 1000,
					       cc.target_kbps / 1000, cc.alpha,
					       cc.cuts);
				}
				printf("\n");
			}
			if (j >= 0.95 && converged_us == 0)
				converged_us = (t - t0) / 1000;
			else if (j < 0.95 && t < warm_at)
				converged_us = 0;
			if (t >= warm_at && j < min_slice_jain)
				min_slice_jain = j;
			if (warm && t > slice_t && nslice < SLICES_MAX) {
				/* the line's use, slice by slice */
				uint64_t qv[Q_MAX];

				bottleneck_read(qv);
				slice_util[nslice++] = line_util(qs, qv,
								 t - slice_t);
				memcpy(qs, qv, sizeof(qs));
				slice_t = t;
			}
			slice_at += SLICE_US * 1000ull;
		}
	}
	bottleneck_read(q1);
	senders_counters(&c1);
	/* what is still outstanding completes */
	for (i = 0; i < nsenders; i++)
		sender_drain(i, out[i]);
	if (small_out)
		assert_int_equal(ep_poll(small_s.scq, wc, 1, 20000), 1);

	{
		double secs = (double)(end_at - warm_at) / 1e9;
		uint64_t queued = q1[Q_QUEUED] - q0[Q_QUEUED];
		uint64_t dropped = q1[Q_DROPPED] - q0[Q_DROPPED];
		uint64_t p50 = 0, p99 = 0;

		util = line_util(q0, q1, end_at - warm_at);
		/* (the slice in the middle: a few slices in which this
		 * process lost its CPUs to others say nothing of DCQCN) */
		qsort(slice_util, nslice, sizeof(slice_util[0]), cmp_double);
		util_median = nslice > 0 ? slice_util[nslice / 2] : 0;
		for (i = 0; i < nsenders; i++)
			share[i] = (double)(done[i] - at_warm[i]) * 8 /
				secs / 1e6;
		j = jain(share, nsenders);
		for (i = 0, goodput = 0; i < nsenders; i++)
			goodput += share[i] / RATE_MBPS;
		if (nlat > 0) {
			qsort(lat_ns, nlat, sizeof(lat_ns[0]), cmp_u64);
			p50 = lat_ns[nlat / 2];
			p99 = lat_ns[nlat * 99 / 100];
		}
		printf("incast senders=%u cc=%s rate_mbps=%u util=%.3f "
		       "util_median=%.3f goodput=%.3f jain=%.3f "
		       "min_slice_jain=%.3f "
		       "converged_ms=%" PRIu64 " queued=%" PRIu64 " dropped=%"
		       PRIu64 " marked=%" PRIu64 " backlog_mean=%" PRIu64
		       " backlog_max=%" PRIu64 " retransmits=%" PRIu64
		       " timeouts=%" PRIu64 " naks=%" PRIu64 " cnps=%" PRIu64
		       " small_p50_us=%.1f small_p99_us=%.1f small_n=%u\n",
		       nsenders, cc_on ? "on" : "off", RATE_MBPS, util,
		       util_median, goodput, j,
		       min_slice_jain, converged_us / 1000, queued, dropped,
		       q1[Q_MARKED] - q0[Q_MARKED], q1[Q_BACKLOG_MEAN],
		       q1[Q_BACKLOG_MAX], c1.retransmits - c0.retransmits,
		       c1.timeouts - c0.timeouts, c1.naks_rcvd - c0.naks_rcvd,
		       c1.cnps_rcvd - c0.cnps_rcvd, p50 / 1e3, p99 / 1e3, nlat);
		printf("  per sender Mb/s:");
		for (i = 0; i < nsenders; i++)
			printf(" %.0f", share[i]);
		printf("\n");
		fflush(stdout);

		if (cc_on) {
			assert_true(util_median >= 0.90);
			assert_true(j >= 0.95);
			assert_true(converged_us != 0 &&
				    converged_us <= WARMUP_US);
			assert_true(dropped <= queued / 1000);
			assert_true(q1[Q_BACKLOG_MEAN] < KMAX_BYTES);
			assert_true(q1[Q_MARKED] > 0);
			alone();
		} else {
			assert_true(dropped > 0);
			assert_true(c1.retransmits - c0.retransmits > 0);
			assert_int_equal(q1[Q_MARKED], 0);
		}
	}
}

static int
setup(void **state)
{
	unsigned int i;

	(void)state;
	ep_opts_default(&opts);
	opts.mtu = IBV_MTU_4096;
	for (i = 0; i < nsenders; i++) {
		if (ep_open(&rcv[i], 0, BUF, &opts) != 0 ||
		    ep_open(&snd[i], (int)i + 1, BUF, &opts) != 0 ||
		    ep_connect(&snd[i], &rcv[i], &opts) != 0 ||
		    ep_connect(&rcv[i], &snd[i], &opts) != 0)
			return -1;
	}
	if (ep_open(&small_r, 0, 4096, &opts) != 0 ||
	    ep_open(&small_s, 1, 4096, &opts) != 0 ||
	    ep_connect(&small_s, &small_r, &opts) != 0 ||
	    ep_connect(&small_r, &small_s, &opts) != 0)
		return -1;
	if (rte_eth_dev_get_port_by_name("net_fault_droce0", &bn_port) != 0)
		return -1;
	for (i = 0; i < Q_MAX; i++)
		if (rte_eth_xstats_get_id_by_name(bn_port, qstat_names[i],
						  &bn_ids[i]) != 0)
			return -1;
	return 0;
}

static int
teardown(void **state)
{
	unsigned int i;

	(void)state;
	ep_close(&small_s);
	ep_close(&small_r);
	for (i = 0; i < nsenders; i++) {
		ep_close(&snd[i]);
		ep_close(&rcv[i]);
	}
	return 0;
}

/* WORKDIR/incast.ini: droce0 ... droceN on switch "incast", droce0's
 * queue the bottleneck. */
static int
write_config(void)
{
	char path[512];
	unsigned int i;
	FILE *f;

	snprintf(path, sizeof(path), "%s", workdir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/incast.ini", workdir);
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fprintf(f, "[eal]\nargs = --no-huge -m 512 --no-pci --no-shconf\n"
		"[engine]\nidle_sleep_us = 0\necn = %s\n", cc_on ? "on" : "off");
	for (i = 0; i <= nsenders; i++) {
		fprintf(f, "[device droce%u]\nport = switch:incast\n"
			"mac = 02:d7:0c:e1:00:%02x\nipv4 = 10.0.31.%u/24\n"
			"mtu = 9000\n", i, i + 1, i + 1);
		/* every port's line RATE_MBPS fast, droce0's the bottleneck */
		if (i == 0)
			fprintf(f, "fault = rate_mbps=%u,queue=%u,kmin=%u,"
				"kmax=%u,pmax=" PMAX ",seed=1\n", RATE_MBPS,
				QUEUE_BYTES, KMIN_BYTES, KMAX_BYTES);
		else
			fprintf(f, "fault = rate_mbps=%u,seed=%u\n",
				RATE_MBPS, i + 1);
	}
	if (fclose(f) != 0)
		return -1;
	return setenv("DROCE_CONFIG", path, 1);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_incast, setup, teardown),
	};

	if (argc < 4 || atoi(argv[2]) < 1 || atoi(argv[2]) > SENDERS_MAX ||
	    (strcmp(argv[3], "on") != 0 && strcmp(argv[3], "off") != 0)) {
		fprintf(stderr, "usage: test_incast WORKDIR SENDERS(1-%u) "
			"on|off [SECONDS]\n", SENDERS_MAX);
		return 2;
	}
	workdir = argv[1];
	nsenders = (unsigned int)atoi(argv[2]);
	cc_on = strcmp(argv[3], "on") == 0;
	if (argc > 4)
		seconds = (unsigned int)atoi(argv[4]);
	if (seconds < 2)
		seconds = 2;
	if (write_config() != 0) {
		perror("test_incast: config");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
