/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-perf: a perftest-style benchmark. Within one process (the
 * default) droce0 is the client and droce1 the server; with --server on
 * one side and a HOST on the other, two processes run it over TCP-swapped
 * connection data, as perftest does. `raw` and --compare-raw measure plain
 * frames of the same size through the same ports and lcores, so droce's
 * rate reads as a ratio of what the port carries.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <droce_wire.h>

#include "perf.h"

static void
usage(FILE *out)
{
	fprintf(out,
		"Usage: droce-perf TEST [options] [HOST]\n"
		"TEST: write_bw read_bw send_bw atomic_bw write_lat send_lat raw memcpy\n"
		"      memcpy_crc (each copy CRCed once) wq\n"
		"      raw_lat (a ping-pong of raw frames as long as a\n"
		"      write_lat's, polled by the engine lcores alone)\n"
		"      cm (connections through the CM, -n of them, beside a\n"
		"      -s byte WRITE stream; -D: its quiet seconds, default 1)\n"
		"  -s, --size N         message size (default 65536; lat: 2)\n"
		"  -n, --iters N        messages (default: run for -D)\n"
		"  -D, --duration S     seconds (default 5)\n"
		"  -q, --qps N[,N...]   QPs (default 1, at most %d); several\n"
		"                       counts: a sweep of a _bw test over\n"
		"                       each, in one process, then one QP\n"
		"                       busy beside the most idle\n"
		"  -t, --tx-depth N     WRs in flight per QP (default 128)\n"
		"  -l, --post_list N    WRs per post call, chained (default 1)\n"
		"  -m, --mtu N          path MTU 256..4096 (default: the port's)\n"
		"  -x, --gid-index N    GID index (default 0)\n"
		"  -d, --ib-dev N       device index (two processes; default 0)\n"
		"  -p, --port N         TCP port (default %d)\n"
		"      --server         wait for a client (two processes)\n"
		"  -R, --compare-raw    also run raw frames of the same size\n"
		"      --raw-icrc       raw frames are RoCE packets no QP takes,\n"
		"                       their ICRCs computed and checked\n"
		"      --turns N        with -R in one process: the test and the\n"
		"                       raw frames take N turns each of D/N s,\n"
		"                       alternately; each rate from its turns'\n"
		"                       sums (default 1; one QP)\n"
		"      --no-progress    no progress line\n"
		"  -h, --help\n"
		"Without --server or HOST: one process, droce0 -> droce1.\n",
		PERF_MAX_QPS, PERF_DEFAULT_PORT);
}

static int
parse_test(const char *s, enum perf_test *t)
{
	static const char *const names[] = {
		"write_bw", "read_bw", "send_bw", "atomic_bw", "write_lat",
		"send_lat", "raw", "memcpy", "wq", "cm", "memcpy_crc",
		"raw_lat" };
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0) {
			*t = (enum perf_test)i;
			return 0;
		}
	return -1;
}

static int
parse_mtu(unsigned long v, enum ibv_mtu *m)
{
	switch (v) {
	case 256: *m = IBV_MTU_256; return 0;
	case 512: *m = IBV_MTU_512; return 0;
	case 1024: *m = IBV_MTU_1024; return 0;
	case 2048: *m = IBV_MTU_2048; return 0;
	case 4096: *m = IBV_MTU_4096; return 0;
	default: return -1;
	}
}

/* -q N or -q N,N,...: the QP count, or the counts of a sweep. */
static int
parse_qps(const char *s, struct perf_opts *o)
{
	char *end;

	o->nsweep = 0;
	for (;;) {
		unsigned long v = strtoul(s, &end, 0);

		if (end == s || v == 0 || v > PERF_MAX_QPS ||
		    o->nsweep == PERF_MAX_SWEEP)
			return -1;
		o->sweep[o->nsweep++] = (unsigned int)v;
		if (*end == '\0')
			break;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
	o->qps = o->sweep[0];
	if (o->nsweep == 1)
		o->nsweep = 0;
	return 0;
}

static bool
is_lat(enum perf_test t)
{
	return t == PERF_WRITE_LAT || t == PERF_SEND_LAT || t == PERF_RAW_LAT;
}

/* @p a's counts and seconds added to @p sum's. */
static void
result_add(struct perf_result *sum, const struct perf_result *a)
{
	sum->msgs += a->msgs;
	sum->bytes += a->bytes;
	sum->frames += a->frames;
	sum->secs += a->secs;
	if (a->peak_msg_rate > sum->peak_msg_rate)
		sum->peak_msg_rate = a->peak_msg_rate;
}

/*
 * -R --turns N: the test and the raw frames alternately, N turns of D/N
 * seconds each, their counts and seconds summed. A host whose speed
 * drifts within the run (another guest's load) then weighs on the two
 * alike, where one run after the other may see each at another speed.
 */
static int
bw_raw_turns(const struct perf_opts *o, struct perf_side *cl,
	     struct perf_side *sv, struct perf_result *r,
	     struct perf_result *raw)
{
	struct perf_opts turn = *o;
	unsigned int t;

	turn.duration = o->duration / o->turns;
	memset(r, 0, sizeof(*r));
	memset(raw, 0, sizeof(*raw));
	for (t = 0; t < o->turns; t++) {
		struct perf_result a = { 0 }, b = { 0 };

		if (perf_bw(&turn, cl, sv, &a) != 0)
			return -1;
		result_add(r, &a);
		if (perf_raw(&turn, o->test == PERF_READ_BW ? sv : cl,
			     &b) != 0)
			return -1;
		result_add(raw, &b);
	}
	return 0;
}

/* One process: droce0 to droce1. */
static int
run_local(struct perf_opts *o)
{
	struct perf_side cl, sv;
	struct perf_result r = { 0 }, raw;
	int ret = -1;

	if (perf_side_open(&cl, 0, o) < 0 || perf_side_open(&sv, 1, o) < 0)
		return -1;
	cl.peer = sv.me;
	sv.peer = cl.me;
	if (perf_side_connect(&cl, o) < 0 || perf_side_connect(&sv, o) < 0)
		goto out;
	if (o->test == PERF_CM) {
		ret = perf_cm(o, &cl, &sv);
		goto out;
	}
	perf_report_header(o);
	if (o->test == PERF_RAW)
		ret = perf_raw(o, &cl, &r);
	else if (o->test == PERF_RAW_LAT)
		ret = perf_raw_lat(o, &cl, false, &r);
	else if (is_lat(o->test))
		ret = perf_lat(o, &cl, &sv, &r);
	else if (o->compare_raw && o->turns > 1)
		ret = bw_raw_turns(o, &cl, &sv, &r, &raw);
	else
		ret = perf_bw(o, &cl, &sv, &r);
	if (ret == 0)
		perf_report(o, &r);
	if (ret == 0 && o->compare_raw && o->test != PERF_RAW &&
	    !is_lat(o->test)) {
		if (o->turns == 1)
			ret = perf_raw(o, o->test == PERF_READ_BW ? &sv : &cl,
				       &raw);
		if (ret == 0)
			perf_report_ratio(o, &r, &raw);
	}
out:
	free(r.qp_rate);
	perf_side_close(&cl);
	perf_side_close(&sv);
	return ret;
}

/* Two processes: this one is the server or the client. */
static int
run_remote(struct perf_opts *o)
{
	struct perf_side me;
	struct perf_result r = { 0 }, raw;
	int ret = -1;

	if (perf_side_open(&me, o->dev, o) < 0 || perf_exchange(o, &me) < 0 ||
	    perf_side_connect(&me, o) < 0)
		goto out;
	if (!o->server)
		perf_report_header(o);
	if (o->test == PERF_RAW_LAT) {
		ret = perf_raw_lat(o, &me, true, &r);
		if (ret == 0 && !o->server)
			perf_report(o, &r);
	} else if (is_lat(o->test)) {
		ret = perf_lat_remote(o, &me, !o->server, &r);
		if (ret == 0 && !o->server)
			perf_report(o, &r);
	} else if (o->server) {
		ret = perf_bw_server(o, &me);
	} else {
		ret = perf_sync(o);
		if (ret == 0 && o->test == PERF_RAW)
			ret = perf_raw(o, &me, &r);
		else if (ret == 0)
			ret = perf_bw(o, &me, NULL, &r);
		if (ret == 0)
			perf_report(o, &r);
		if (ret == 0 && o->compare_raw && o->test != PERF_RAW &&
		    o->test != PERF_READ_BW) {
			ret = perf_raw(o, &me, &raw);
			if (ret == 0)
				perf_report_ratio(o, &r, &raw);
		}
		if (perf_sync(o) < 0)
			ret = -1;
	}
out:
	free(r.qp_rate);
	perf_sync_close();
	perf_side_close(&me);
	return ret;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'D' },
		{ "qps", required_argument, NULL, 'q' },
		{ "tx-depth", required_argument, NULL, 't' },
		{ "post_list", required_argument, NULL, 'l' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "gid-index", required_argument, NULL, 'x' },
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "server", no_argument, NULL, 'S' },
		{ "compare-raw", no_argument, NULL, 'R' },
		{ "raw-icrc", no_argument, NULL, 'I' },
		{ "turns", required_argument, NULL, 'T' },
		{ "no-progress", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perf_opts o = {
		.size = 65536,
		.duration = 5,
		.qps = 1,
		.tx_depth = 128,
		.post_list = 1,
		.mtu = 0,               /* the port's active MTU */
		.port = PERF_DEFAULT_PORT,
		.progress = true,
		.turns = 1,
	};
	bool size_set = false, duration_set = false;
	int opt;

	if (argc < 2 || parse_test(argv[1], &o.test) < 0) {
		usage(stderr);
		return 2;
	}
	optind = 2;
	while ((opt = getopt_long(argc, argv, "s:n:D:q:t:l:m:x:d:p:Rh", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 's':
			o.size = (uint32_t)strtoul(optarg, NULL, 0);
			size_set = true;
			break;
		case 'n':
			o.iters = strtoull(optarg, NULL, 0);
			break;
		case 'D':
			o.duration = strtod(optarg, NULL);
			duration_set = true;
			break;
		case 'q':
			if (parse_qps(optarg, &o) < 0) {
				fprintf(stderr, "droce-perf: bad -q\n");
				return 2;
			}
			break;
		case 't':
			o.tx_depth = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'l':
			o.post_list = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			if (parse_mtu(strtoul(optarg, NULL, 0), &o.mtu) < 0) {
				fprintf(stderr, "droce-perf: bad MTU\n");
				return 2;
			}
			break;
		case 'x':
			o.gid_index = atoi(optarg);
			break;
		case 'd':
			o.dev = atoi(optarg);
			break;
		case 'p':
			o.port = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 'S':
			o.server = true;
			break;
		case 'R':
			o.compare_raw = true;
			break;
		case 'I':
			o.raw_icrc = true;
			break;
		case 'T':
			o.turns = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'P':
			o.progress = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		o.host = argv[optind];
	if (!size_set && is_lat(o.test))
		o.size = 2;
	if (o.test == PERF_ATOMIC_BW)
		o.size = 8;
	if (o.test == PERF_CM) {
		if (!size_set)
			o.size = 64;
		if (!duration_set)
			o.duration = 1;
		if (o.host != NULL || o.server) {
			fprintf(stderr, "droce-perf: cm runs in one process\n");
			return 2;
		}
	}
	if (o.turns == 0 ||
	    (o.turns > 1 && (o.host != NULL || o.server || o.qps != 1 ||
			     o.iters != 0 || o.nsweep != 0))) {
		fprintf(stderr, "droce-perf: --turns N runs one QP in one "
			"process for -D seconds\n");
		return 2;
	}
	if (o.qps == 0 || o.qps > PERF_MAX_QPS || o.tx_depth == 0 ||
	    o.post_list == 0 || o.post_list > PERF_MAX_POST_LIST ||
	    o.post_list > o.tx_depth ||
	    (is_lat(o.test) && o.qps != 1)) {
		usage(stderr);
		return 2;
	}
	if (o.test == PERF_WQ) {
		if (!size_set)
			o.size = 64;
		return perf_wq(&o) == 0 ? 0 : 1;
	}
	if (o.test == PERF_MEMCPY || o.test == PERF_MEMCPY_CRC) {
		struct perf_result r;

		perf_report_header(&o);
		if (perf_memcpy(&o, &r, o.test == PERF_MEMCPY_CRC ?
				droce_crc32 : NULL) != 0)
			return 1;
		perf_report(&o, &r);
		return 0;
	}
	/* as perftest: the port's active MTU unless told */
	if (o.mtu == 0 && perf_port_mtu(&o) != 0)
		return 1;
	if (o.nsweep != 0) {
		if (o.server || o.host != NULL || is_lat(o.test) ||
		    o.test == PERF_RAW || o.test == PERF_CM) {
			fprintf(stderr, "droce-perf: a sweep is of a _bw test, "
				"in one process\n");
			return 2;
		}
		return perf_sweep(&o) == 0 ? 0 : 1;
	}
	if (o.server || o.host != NULL)
		return run_remote(&o) == 0 ? 0 : 1;
	return run_local(&o) == 0 ? 0 : 1;
}
