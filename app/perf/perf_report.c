/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* Results in perftest's columns, and the ratio to the raw frame rate. */

#include <stdio.h>

#include "perf.h"

#define LINE "---------------------------------------------------------------------------------------\n"

const char *
perf_test_name(enum perf_test t)
{
	static const char *const names[] = {
		[PERF_WRITE_BW] = "write_bw",
		[PERF_READ_BW] = "read_bw",
		[PERF_SEND_BW] = "send_bw",
		[PERF_ATOMIC_BW] = "atomic_bw",
		[PERF_WRITE_LAT] = "write_lat",
		[PERF_SEND_LAT] = "send_lat",
		[PERF_RAW] = "raw",
		[PERF_MEMCPY] = "memcpy",
		[PERF_WQ] = "wq",
		[PERF_CM] = "cm",
		[PERF_MEMCPY_CRC] = "memcpy_crc",
		[PERF_RAW_LAT] = "raw_lat",
	};

	return names[t];
}

static bool
is_lat(const struct perf_opts *o)
{
	return o->test == PERF_WRITE_LAT || o->test == PERF_SEND_LAT ||
		o->test == PERF_RAW_LAT;
}

void
perf_report_header(const struct perf_opts *o)
{
	if (o->quiet)
		return;
	printf(LINE);
	printf("                    droce-perf %s\n", perf_test_name(o->test));
	printf(" Number of qps   : %-8u        Transport type : IB\n", o->qps);
	printf(" Connection type : RC              Using SRQ      : OFF\n");
	printf(" TX depth        : %-8u        Mtu            : %u[B]\n",
	       o->tx_depth, 128u << o->mtu);
	printf(" Link type       : Ethernet        GID index      : %d\n",
	       o->gid_index);
	printf(LINE);
	if (is_lat(o))
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  "
		       "t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
		       "99%% percentile[usec]   99.9%% percentile[usec]\n");
	else if (o->test == PERF_RAW && o->raw_icrc)
		printf(" #frame_bytes  #frames      Mpps       Gb/s"
		       "   (RoCE, ICRC computed and checked)\n");
	else if (o->test == PERF_RAW)
		printf(" #frame_bytes  #frames      Mpps       Gb/s\n");
	else if (o->test == PERF_MEMCPY)
		printf(" #bytes     #copies        GB/s\n");
	else if (o->test == PERF_MEMCPY_CRC)
		printf(" #bytes     #copies        GB/s   (each copy CRCed)\n");
	else
		printf(" #bytes     #iterations    BW peak[MB/sec]    "
		       "BW average[MB/sec]   MsgRate[Mpps]\n");
}

/* Several QPs: the least, mean and most each got, their fairness, and
 * each one's rate where there are few. */
static void
report_shares(const struct perf_result *r)
{
	double lo, hi, sum = 0;
	unsigned int q;

	if (r->nqp_rates == 0)
		return;
	lo = hi = r->qp_rate[0];
	for (q = 0; q < r->nqp_rates; q++) {
		lo = r->qp_rate[q] < lo ? r->qp_rate[q] : lo;
		hi = r->qp_rate[q] > hi ? r->qp_rate[q] : hi;
		sum += r->qp_rate[q];
	}
	printf(" per QP [MB/sec]: min %.2f  mean %.2f  max %.2f  "
	       "Jain's index %.4f\n", lo, sum / r->nqp_rates, hi, r->jain);
	if (r->nqp_rates > 16)
		return;
	printf(" per QP [MB/sec]:");
	for (q = 0; q < r->nqp_rates; q++)
		printf(" %.2f", r->qp_rate[q]);
	printf("\n");
}

void
perf_report(const struct perf_opts *o, const struct perf_result *r)
{
	double avg_mb = (double)r->bytes / r->secs / (1 << 20);
	double peak_mb = r->peak_msg_rate * o->size / (1 << 20);

	if (is_lat(o)) {
		printf(" %-7u %-10lu     %-10.2f     %-10.2f     %-10.2f"
		       "         %-10.2f     %-10.2f      %-10.2f"
		       "              %-10.2f\n", o->size,
		       (unsigned long)r->msgs, r->lat_min, r->lat_max,
		       r->lat_typ, r->lat_avg, r->lat_stdev, r->lat_p99,
		       r->lat_p999);
	} else if (o->test == PERF_MEMCPY || o->test == PERF_MEMCPY_CRC) {
		printf(" %-10u %-14lu %-10.2f\n", o->size, (unsigned long)r->msgs,
		       (double)r->bytes / r->secs / 1e9);
	} else if (o->test == PERF_RAW) {
		printf(" %-13u %-12lu %-10.3f %-10.3f\n", perf_frame_len(o),
		       (unsigned long)r->frames, (double)r->frames / r->secs / 1e6,
		       (double)r->bytes * 8 / r->secs / 1e9);
	} else {
		printf(" %-10u %-14lu %-18.2f %-20.2f %-10.6f\n", o->size,
		       (unsigned long)r->msgs, peak_mb > avg_mb ? peak_mb : avg_mb,
		       avg_mb, (double)r->msgs / r->secs / 1e6);
		report_shares(r);
	}
	if (!o->quiet)
		printf(LINE);
}

void
perf_report_ratio(const struct perf_opts *o, const struct perf_result *roce,
		  const struct perf_result *raw)
{
	double roce_pps = (double)perf_packets(o, roce) / roce->secs;
	double raw_pps = (double)raw->frames / raw->secs;

	printf(" frames of %u B through the same port and lcore:\n",
	       perf_frame_len(o));
	printf("   raw%s %10.3f Mpps\n", o->raw_icrc ? "+icrc     " : "         ",
	       raw_pps / 1e6);
	printf("   RoCE %-7s %10.3f Mpps  (%.3f Mmsg/s)\n",
	       perf_test_name(o->test), roce_pps / 1e6,
	       (double)roce->msgs / roce->secs / 1e6);
	printf("   ratio        %10.2f\n", raw_pps > 0 ? roce_pps / raw_pps : 0);
	printf(LINE);
}
