/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Raw frames through a device's port, from its engine lcore: the packet
 * rate the port and lcore carry without RoCE, the yardstick the benchmark
 * measures droce against. While it runs, the lcore keeps receiving on its
 * other devices through the engine's receive path, which counts and drops
 * frames that are not RoCE, as its loop would.
 */

#include <errno.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "droce_engine_pvt.h"

/* An IEEE 802 local experimental Ethernet type: nobody's protocol. */
#define RAW_ETHER_TYPE 0x88b5

struct raw_args {
	struct rte_ether_addr dst;
	uint32_t frame_len;
	uint64_t cycles;
	uint64_t sent;
};

static void
drain_others(struct droce_lcore *lc, const struct droce_dev *skip)
{
	struct rte_mbuf *pkts[DROCE_BURST];
	unsigned int d;
	uint16_t n;

	for (d = 0; d < lc->ndevs; d++) {
		struct droce_dev *dev = lc->devs[d];

		if (dev == skip)
			continue;
		/* through the receive path, as any frame that is not ours */
		n = rte_eth_rx_burst(dev->port_id, 0, pkts, DROCE_BURST);
		if (n != 0)
			droce_dev_rx_burst(dev, pkts, n, 0);
	}
}

static int
raw_run(struct droce_dev *dev, void *arg)
{
	struct raw_args *a = arg;
	struct rte_mbuf *pkts[DROCE_BURST];
	uint8_t tmpl[RTE_ETHER_MAX_JUMBO_FRAME_LEN];
	uint64_t end = rte_get_tsc_cycles() + a->cycles;
	unsigned int i;

	memset(tmpl, 0, a->frame_len);
	memcpy(tmpl, &a->dst, 6);
	memcpy(tmpl + 6, &dev->mac, 6);
	droce_put_be16(tmpl + 12, RAW_ETHER_TYPE);
	droce_dev_tx_flush(dev);
	while (rte_get_tsc_cycles() < end) {
		uint16_t sent;

		if (rte_pktmbuf_alloc_bulk(dev->pool, pkts, DROCE_BURST) != 0) {
			drain_others(dev->lc, dev);
			continue;
		}
		for (i = 0; i < DROCE_BURST; i++) {
			void *p = rte_pktmbuf_append(pkts[i],
						     (uint16_t)a->frame_len);

			rte_memcpy(p, tmpl, a->frame_len);
		}
		sent = rte_eth_tx_burst(dev->port_id, 0, pkts, DROCE_BURST);
		if (sent < DROCE_BURST)
			rte_pktmbuf_free_bulk(pkts + sent, DROCE_BURST - sent);
		a->sent += sent;
		dev->stats.tx_frames += sent;
		dev->stats.tx_bytes += (uint64_t)sent * a->frame_len;
		drain_others(dev->lc, dev);
	}
	return 0;
}

int
droce_dev_raw(struct droce_dev *dev, const struct rte_ether_addr *dst,
	      uint32_t frame_len, uint32_t duration_ms, uint64_t *sent)
{
	struct raw_args a = {
		.dst = *dst,
		.frame_len = frame_len,
		.cycles = droce_eng.hz / 1000 * duration_ms,
	};
	int ret;

	if (frame_len < RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN ||
	    frame_len > (uint32_t)dev->eth_mtu + RTE_ETHER_HDR_LEN)
		return -EINVAL;
	ret = droce_dev_call(dev, raw_run, &a);
	*sent = a.sent;
	return ret;
}
