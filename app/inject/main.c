/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-inject: between two RoCE endpoints, on two DPDK ports (two
 * NICs, taps through af_packet, memif to droce processes), forwarding
 * every frame both ways on one lcore and putting into the traffic the
 * events of a script; every frame goes to a pcapng trace with what was
 * done to it (doc/guides/lab.rst).
 *
 *   droce-inject [EAL options] -- --script FILE [--trace FILE]
 *                [--snap N] [--duration S] [--idle-us N]
 *
 * The ports are the first two DPDK finds (--vdev, or PCI devices).
 */

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "inject_fwd.h"

#define MAX_EVENTS 256
#define NB_DESC 1024
#define NB_MBUF 16383

static volatile bool stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = true;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: droce-inject [EAL options] -- --script FILE "
		"[--trace FILE] [--snap N] [--duration S] [--idle-us N]\n"
		"  --script FILE  the events (doc/guides/lab.rst; an empty "
		"file: none)\n"
		"  --trace FILE   every frame both ways, pcapng (default: "
		"none)\n"
		"  --snap N       bytes kept of each frame (default 128, the "
		"headers; 0: all)\n"
		"  --duration S   stop after S seconds (default: at SIGINT "
		"or SIGTERM)\n"
		"  --idle-us N    sleep N us when both ports have been idle "
		"a while (default 0:\n"
		"                 poll always; for a machine whose cores it "
		"shares)\n");
}

static int
port_start(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port, 0, NB_DESC,
					     rte_eth_dev_socket_id(port), NULL,
					     pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, NB_DESC,
					     rte_eth_dev_socket_id(port), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret == 0)
		/* (a port that has no such mode forwards what is its) */
		(void)rte_eth_promiscuous_enable(port);
	return ret;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "script", required_argument, NULL, 's' },
		{ "trace", required_argument, NULL, 't' },
		{ "snap", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "idle-us", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct inj_event ev[MAX_EVENTS];
	static struct inj_fwd fw;
	const char *script = NULL, *trace_path = NULL;
	unsigned long snap = 128;
	struct timespec ts;
	uint16_t port, n = 0;
	int ret, c;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "droce-inject: EAL: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			script = optarg;
			break;
		case 't':
			trace_path = optarg;
			break;
		case 'n':
			snap = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			fw.duration_s = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			fw.idle_us = (uint32_t)strtoul(optarg, NULL, 0);
			if (fw.idle_us > 100000) {
				fprintf(stderr, "droce-inject: --idle-us: at "
					"most 100000\n");
				return 1;
			}
			break;
		default:
			usage();
			return c == 'h' ? 0 : 1;
		}
	}
	if (script == NULL) {
		usage();
		return 1;
	}
	fw.nev = inj_script_read(script, ev, MAX_EVENTS);
	if (fw.nev < 0)
		return 1;
	fw.ev = ev;
	RTE_ETH_FOREACH_DEV(port) {
		if (n < 2)
			fw.port[n] = port;
		n++;
	}
	if (n < 2) {
		fprintf(stderr, "droce-inject: %u DPDK ports: two are needed "
			"(--vdev or PCI devices)\n", n);
		return 1;
	}
	fw.pool = rte_pktmbuf_pool_create("inject", NB_MBUF, 256, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (fw.pool == NULL) {
		fprintf(stderr, "droce-inject: mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	for (c = 0; c < 2; c++) {
		ret = port_start(fw.port[c], fw.pool);
		if (ret != 0) {
			fprintf(stderr, "droce-inject: port %u: %s\n",
				fw.port[c], rte_strerror(-ret));
			return 1;
		}
	}
	ret = trace_path != NULL ?
		inj_trace_open(&fw.trace, trace_path, (uint32_t)snap) : 0;
	if (ret < 0) {
		fprintf(stderr, "droce-inject: %s: %s\n", trace_path,
			strerror(-ret));
		return 1;
	}
	fw.hz = rte_get_tsc_hz();
	clock_gettime(CLOCK_REALTIME, &ts);
	fw.tsc0 = rte_get_tsc_cycles();
	fw.ns0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("droce-inject: forwarding port %u <-> port %u, %d events\n",
	       fw.port[0], fw.port[1], fw.nev);
	fflush(stdout);
	inj_fwd_run(&fw, &stop);
	ret = inj_trace_close(&fw.trace);
	inj_fwd_report(&fw, stdout);
	fflush(stdout);
	for (c = 0; c < 2; c++)
		rte_eth_dev_stop(fw.port[c]);
	rte_eal_cleanup();
	return ret < 0 ? 1 : 0;
}
