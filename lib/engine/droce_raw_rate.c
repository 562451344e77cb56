/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Raw frames through a device's port, from its engine lcore: the packet
 * rate the port and lcore carry without RoCE, the yardstick the benchmark
 * measures droce against. While it runs, the lcore keeps receiving on its
 * other devices through the engine's receive path, which counts and drops
 * frames that are not RoCE, as its loop would.
 *
 * With DROCE_DEV_RAW_ROCE the frames are RoCEv2 packets that no QP takes:
 * their ICRCs are computed as they go, like droce's own, and checked by
 * the receiving engine before it drops them, which gives the rate left
 * once the two CRCs every RoCE packet costs are paid, and nothing else.
 */

#include <errno.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "droce_engine_pvt.h"
#include "droce_tx.h"

/* An IEEE 802 local experimental Ethernet type: nobody's protocol. */
#define RAW_ETHER_TYPE 0x88b5

/* Frames a transmit burst sends: the size at which the raw rate peaks
 * here (64 gives some 3 % less). */
#define RAW_BURST 32

/* A QPN no device gives out (the tag of a QPN is never 0). */
#define RAW_DEST_QPN 1

struct raw_args {
	struct rte_ether_addr dst;
	uint32_t frame_len;
	uint32_t flags;
	uint64_t cycles;
	uint64_t sent;
};

static void
drain_others(struct droce_lcore *lc, const struct droce_shard *skip)
{
	struct rte_mbuf *pkts[DROCE_BURST];
	unsigned int d;
	uint16_t n;

	for (d = 0; d < lc->nshards; d++) {
		struct droce_shard *sh = lc->shards[d];

		if (sh == skip || sh->port_stopped)
			continue;
		/* through the receive path, as any frame that is not ours */
		n = rte_eth_rx_burst(sh->port_id, 0, pkts, DROCE_BURST);
		if (n != 0)
			droce_shard_rx_burst(sh, pkts, n, 0, DROCE_RX_PORT);
	}
}

/*
 * A SEND of @p frame_len bytes from @p dev's address to itself, for a QP
 * nobody has. @return false if no such packet is that long.
 */
static bool
roce_template(struct droce_dev *dev, const struct rte_ether_addr *dst,
	      uint32_t frame_len, uint8_t *tmpl)
{
	static const uint8_t zeros[RTE_ETHER_MAX_JUMBO_FRAME_LEN];
	struct droce_wire_pkt p = {
		.dst_mac = *dst,
		.src_mac = dev->mac,
		.ip_version = dev->ipv4 != 0 ? 4 : 6,
		.ttl = 64,
		.udp_sport = 0xc000,
		.udp_dport = DROCE_UDP_PORT,
		.bth = {
			.opcode = DROCE_TR_RC | DROCE_OP_SEND_ONLY,
			.pkey = DROCE_DEFAULT_PKEY,
			.dqpn = RAW_DEST_QPN,
		},
		.payload = zeros,
	};
	uint32_t hdr = RTE_ETHER_HDR_LEN + (p.ip_version == 4 ? 20 : 40) +
		8 + 12 + DROCE_ICRC_LEN;

	if (frame_len < hdr || (frame_len - hdr) % 4 != 0)
		return false;
	p.payload_len = frame_len - hdr;
	if (p.ip_version == 4) {
		droce_gid_from_ipv4(p.src_gid, dev->ipv4);
		droce_gid_from_ipv4(p.dst_gid, dev->ipv4);
	} else {
		memcpy(p.src_gid, dev->ipv6_ll, 16);
		memcpy(p.dst_gid, dev->ipv6_ll, 16);
	}
	return droce_wire_build(tmpl, frame_len, &p) == (int)frame_len;
}

/* Queue a burst of RoCE frames the way droce's own go. */
static uint16_t
send_roce(struct droce_shard *sh, struct rte_mbuf **pkts)
{
	uint64_t before = sh->stats.tx_frames;
	unsigned int i;

	for (i = 0; i < RAW_BURST; i++)
		droce_shard_tx_frame(sh, pkts[i], true);
	droce_shard_tx_flush(sh);
	return (uint16_t)(sh->stats.tx_frames - before);
}

static int
raw_run(struct droce_shard *sh, void *arg)
{
	struct raw_args *a = arg;
	struct rte_mbuf *pkts[RAW_BURST];
	uint8_t tmpl[RTE_ETHER_MAX_JUMBO_FRAME_LEN];
	uint64_t end = rte_get_tsc_cycles() + a->cycles;
	bool roce = (a->flags & DROCE_DEV_RAW_ROCE) != 0;
	unsigned int i;

	/* DPDK forbids bursts on a stopped port */
	if (sh->port_stopped)
		return -ENETDOWN;
	if (roce) {
		if (!roce_template(sh->dev, &a->dst, a->frame_len, tmpl))
			return -EINVAL;
	} else {
		memset(tmpl, 0, a->frame_len);
		memcpy(tmpl, &a->dst, 6);
		memcpy(tmpl + 6, &sh->dev->mac, 6);
		droce_put_be16(tmpl + 12, RAW_ETHER_TYPE);
	}
	droce_shard_tx_flush(sh);
	while (rte_get_tsc_cycles() < end) {
		uint16_t sent;

		if (rte_pktmbuf_alloc_bulk(sh->dev->pool, pkts,
					   RAW_BURST) != 0) {
			drain_others(sh->lc, sh);
			continue;
		}
		for (i = 0; i < RAW_BURST; i++) {
			void *p = rte_pktmbuf_append(pkts[i],
						     (uint16_t)a->frame_len);

			rte_memcpy(p, tmpl, a->frame_len);
		}
		if (roce) {
			/* what the port refused waits in the queue */
			a->sent += send_roce(sh, pkts);
			drain_others(sh->lc, sh);
			continue;
		}
		sent = rte_eth_tx_burst(sh->port_id, 0, pkts, RAW_BURST);
		if (sent < RAW_BURST)
			rte_pktmbuf_free_bulk(pkts + sent, RAW_BURST - sent);
		a->sent += sent;
		sh->stats.tx_frames += sent;
		sh->stats.tx_bytes += (uint64_t)sent * a->frame_len;
		drain_others(sh->lc, sh);
	}
	return 0;
}

int
droce_dev_raw(struct droce_dev *dev, const struct rte_ether_addr *dst,
	      uint32_t frame_len, uint32_t duration_ms, uint32_t flags,
	      uint64_t *sent)
{
	struct droce_shard *sh = dev->shards[0];
	struct raw_args a = {
		.dst = *dst,
		.frame_len = frame_len,
		.flags = flags,
		.cycles = droce_eng.hz / 1000 * duration_ms,
	};
	int ret;

	if (frame_len < RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN ||
	    frame_len > (uint32_t)dev->eth_mtu + RTE_ETHER_HDR_LEN)
		return -EINVAL;
	ret = droce_shard_call(sh, raw_run, &a);
	*sent = a.sent;
	return ret;
}
