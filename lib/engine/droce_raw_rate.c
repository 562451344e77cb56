/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Raw frames through a device's port, from its engine lcore: the packet
 * rate the port and lcore carry without RoCE, the yardstick the benchmark
 * measures droce against, and the round trip of a frame and its echo
 * between two lcores that poll for nothing else, the floor of any
 * latency over the port. While it runs, the lcore keeps receiving on its
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

/* A ping-pong frame's payload: a kind and the round trip's number. */
#define PING_KIND_OFF RTE_ETHER_HDR_LEN
#define PING_SEQ_OFF (RTE_ETHER_HDR_LEN + 4)
#define PING 1
#define PONG 2
/* A ping unanswered this long is sent again (the echoing side may not be
 * polling yet)... */
#define PING_RESEND_MS 10
/* ...and a side that hears nothing this long gives up. */
#define PING_GIVE_UP_MS 5000

struct raw_args {
	struct rte_ether_addr dst;
	uint32_t frame_len;
	uint32_t flags;
	uint64_t cycles;
	uint64_t sent;
};

/* Whether @p dev's port carries frames of @p frame_len bytes. */
static bool
raw_len_ok(const struct droce_dev *dev, uint32_t frame_len)
{
	return frame_len >= RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN &&
		frame_len <= (uint32_t)dev->eth_mtu + RTE_ETHER_HDR_LEN;
}

/* A plain frame of @p len bytes from @p src to @p dst in @p f: zeros of
 * an Ethernet type nobody uses. */
static void
plain_frame(uint8_t *f, uint32_t len, const struct rte_ether_addr *dst,
	    const struct rte_ether_addr *src)
{
	memset(f, 0, len);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	droce_put_be16(f + 12, RAW_ETHER_TYPE);
}

/* The kind of a ping-pong frame @p m (PING, PONG), or 0. */
static uint32_t
ping_kind(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);

	if (rte_pktmbuf_data_len(m) < PING_SEQ_OFF + 4 ||
	    droce_get_be16(f + 12) != RAW_ETHER_TYPE)
		return 0;
	return droce_get_be32(f + PING_KIND_OFF);
}

/*
 * Receive a burst of @p sh: echo each ping back to its sender (@p echoed,
 * if not NULL, becomes one past the highest number echoed), count the
 * pongs of round trip @p seq in @p pongs (if not NULL), free other pongs,
 * and hand everything else to the receive path, as any frame that is
 * not ours.
 */
static void
raw_rx(struct droce_shard *sh, uint32_t *echoed, uint32_t seq,
       unsigned int *pongs)
{
	struct rte_mbuf *pkts[DROCE_BURST], *rest[DROCE_BURST];
	unsigned int i, nrest = 0;
	uint16_t n = rte_eth_rx_burst(sh->port_id, 0, pkts, DROCE_BURST);

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
		uint32_t kind = ping_kind(m), num = 0;
		struct rte_ether_addr a;

		if (kind != 0) {
			/* (its number, kept apart from the @p seq looked for) */
			num = droce_get_be32(f + PING_SEQ_OFF);
			sh->stats.rx_frames++;
			sh->stats.rx_bytes += rte_pktmbuf_pkt_len(m);
		}
		switch (kind) {
		case PING:
			memcpy(&a, f + 6, 6);
			memcpy(f + 6, f, 6);
			memcpy(f, &a, 6);
			droce_put_be32(f + PING_KIND_OFF, PONG);
			m->ol_flags = 0;
			if (echoed != NULL && num >= *echoed)
				*echoed = num + 1;
			if (rte_eth_tx_burst(sh->port_id, 0, &m, 1) == 1) {
				sh->stats.tx_frames++;
				sh->stats.tx_bytes += rte_pktmbuf_pkt_len(m);
			} else {
				rte_pktmbuf_free(m);
			}
			break;
		case PONG:
			if (pongs != NULL && num == seq)
				(*pongs)++;
			rte_pktmbuf_free(m);
			break;
		default:
			rest[nrest++] = m;
			break;
		}
	}
	if (nrest != 0)
		droce_shard_rx_burst(sh, rest, nrest, 0, DROCE_RX_PORT);
}

static void
drain_others(struct droce_lcore *lc, const struct droce_shard *skip)
{
	unsigned int d;

	for (d = 0; d < lc->nshards; d++) {
		struct droce_shard *sh = lc->shards[d];

		/* (the other end of a ping-pong in one process echoes) */
		if (sh != skip && !sh->port_stopped)
			raw_rx(sh, NULL, 0, NULL);
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
		plain_frame(tmpl, a->frame_len, &a->dst, &sh->dev->mac);
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

	if (!raw_len_ok(dev, frame_len))
		return -EINVAL;
	ret = droce_shard_call(sh, raw_run, &a);
	*sent = a.sent;
	return ret;
}

struct pingpong_args {
	struct rte_ether_addr dst;
	uint32_t frame_len;
	uint32_t count;
	uint32_t *rtt_ns;       /**< NULL: the echoing side */
	uint32_t done;
};

/* Send ping @p seq of @p a through @p sh. @return 0, or -ENOMEM. */
static int
ping_send(struct droce_shard *sh, const struct pingpong_args *a,
	  uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(sh->dev->pool);
	uint8_t *f;

	if (m == NULL)
		return -ENOMEM;
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)a->frame_len);
	if (f == NULL) {
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	plain_frame(f, a->frame_len, &a->dst, &sh->dev->mac);
	droce_put_be32(f + PING_KIND_OFF, PING);
	droce_put_be32(f + PING_SEQ_OFF, seq);
	while (rte_eth_tx_burst(sh->port_id, 0, &m, 1) == 0)
		drain_others(sh->lc, sh);
	sh->stats.tx_frames++;
	sh->stats.tx_bytes += a->frame_len;
	return 0;
}

static int
pingpong_run(struct droce_shard *sh, void *arg)
{
	struct pingpong_args *a = arg;
	const uint64_t ms = droce_eng.hz / 1000;
	uint64_t heard = rte_get_tsc_cycles();

	if (sh->port_stopped)
		return -ENETDOWN;
	droce_shard_tx_flush(sh);
	while (a->done < a->count) {
		uint64_t sent, now;
		unsigned int pongs = 0;
		int ret;

		if (a->rtt_ns == NULL) {
			/* echo until the last ping is answered */
			uint32_t before = a->done;

			raw_rx(sh, &a->done, 0, NULL);
			drain_others(sh->lc, sh);
			now = rte_get_tsc_cycles();
			if (a->done != before)
				heard = now;
			else if (now - heard > ms * PING_GIVE_UP_MS)
				return -ETIMEDOUT;
			continue;
		}
		ret = ping_send(sh, a, a->done);
		if (ret != 0)
			return ret;
		sent = rte_get_tsc_cycles();
		do {
			raw_rx(sh, NULL, a->done, &pongs);
			drain_others(sh->lc, sh);
			now = rte_get_tsc_cycles();
		} while (pongs == 0 && now - sent < ms * PING_RESEND_MS);
		if (pongs != 0) {
			a->rtt_ns[a->done++] = (uint32_t)RTE_MIN(
				(now - sent) * 1000000000 / droce_eng.hz,
				(uint64_t)UINT32_MAX);
			heard = now;
		} else if (now - heard > ms * PING_GIVE_UP_MS) {
			return -ETIMEDOUT;
		}
	}
	return 0;
}

int
droce_dev_raw_pingpong(struct droce_dev *dev, const struct rte_ether_addr *dst,
		       uint32_t frame_len, uint32_t count, uint32_t *rtt_ns,
		       uint32_t *done)
{
	struct pingpong_args a = {
		.dst = *dst,
		.frame_len = frame_len,
		.count = count,
		.rtt_ns = rtt_ns,
	};
	int ret;

	if (!raw_len_ok(dev, frame_len))
		return -EINVAL;
	ret = droce_shard_call(dev->shards[0], pingpong_run, &a);
	*done = a.done;
	return ret;
}
