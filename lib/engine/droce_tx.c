/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Transmit: the frames a device sends. Requester, responder and the
 * other senders build a packet from its path's header template
 * (droce_pkt_alloc_to()), finish its lengths (droce_pkt_send()) and
 * queue it; the ICRCs of everything queued are computed together just
 * before the burst goes (where the CPU can overlap one frame's CRC with
 * the next), the frames mirrored then, and what the port refuses stays
 * queued, finished, for the next pass.
 */

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_memcpy.h>

#include "droce_engine_pvt.h"
#include "droce_mirror.h"
#include "droce_tx.h"

/*
 * Into @p m: the path's header @p hdr, then the BTH of a packet with
 * @p payload_len payload bytes (its pad count) and its extension headers'
 * room, @p extra bytes more (payload, pad, ICRC) with the pad zeroed.
 * @return false if @p m has no room.
 */
static bool
pkt_headers(struct rte_mbuf *m, const uint8_t *hdr, uint8_t hdr_len,
	    uint32_t dqpn, uint8_t opcode, uint32_t psn, bool ackreq, bool se,
	    uint32_t payload_len, uint32_t extra, uint8_t **bth)
{
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	uint32_t pad = (4 - (payload_len & 3)) & 3;
	const struct droce_bth h = {
		.opcode = opcode,
		.se = se,
		.padcnt = (uint8_t)pad,
		.pkey = DROCE_DEFAULT_PKEY,
		.dqpn = dqpn,
		.ackreq = ackreq,
		.psn = psn,
	};
	uint8_t *f;

	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hdr_len + op->hdr_len +
							extra));
	if (f == NULL)
		return false;
	rte_memcpy(f, hdr, hdr_len);
	*bth = f + hdr_len;
	droce_bth_encode(*bth, &h);
	if (pad != 0 && extra != 0)
		memset(*bth + op->hdr_len + payload_len, 0, pad);
	return true;
}

struct rte_mbuf *
droce_pkt_alloc_to(struct droce_qp_eng *qp, const uint8_t *hdr,
		   uint8_t hdr_len, uint32_t dqpn, uint8_t opcode, uint32_t psn,
		   bool ackreq, bool se, uint32_t payload_len, uint8_t **bth)
{
	uint32_t pad = (4 - (payload_len & 3)) & 3;
	struct rte_mbuf *m = droce_mbuf_alloc(qp->shard);

	if (m == NULL) {
		qp->shard->stats.no_mbuf++;
		return NULL;
	}
	if (!pkt_headers(m, hdr, hdr_len, dqpn, opcode, psn, ackreq, se,
			 payload_len, payload_len + pad + DROCE_ICRC_LEN, bth)) {
		droce_mbuf_free(qp->shard, m);
		return NULL;
	}
	return m;
}

struct droce_mr_eng *
droce_zc_region(struct droce_qp_eng *qp, uint32_t key, bool remote,
		uint64_t addr, uint32_t len)
{
	struct droce_mr_eng *mr;

	if (droce_eng.cfg.zero_copy_min == 0 ||
	    len < droce_eng.cfg.zero_copy_min || !droce_tr_reliable(qp->tr))
		return NULL;
	/* (IPv4: over IPv6 the UDP checksum would read the payload again) */
	if (!qp->shard->dev->zero_copy ||
	    (qp->path.hdr[RTE_ETHER_HDR_LEN] >> 4) != 4)
		goto copy;
	mr = droce_mr_lookup(qp->shard, key, remote);
	if (mr == NULL || mr->mw_type != 0 ||
	    (qp->shard->dev->dma_map && !mr->dma_mapped) || addr < mr->addr ||
	    addr - mr->addr > mr->length || len > mr->length - (addr - mr->addr))
		goto copy;
	return mr;
copy:
	qp->shard->stats.tx_zero_copy_fallback++;
	return NULL;
}

struct rte_mbuf *
droce_pkt_alloc_zc(struct droce_qp_eng *qp, uint8_t opcode, uint32_t psn,
		   bool ackreq, bool se, struct droce_mr_eng *mr,
		   uint64_t addr, uint32_t len, uint8_t **bth)
{
	uint32_t pad = (4 - (len & 3)) & 3;
	struct rte_mbuf *seg[3];
	uint8_t *tail;

	/* (not beyond what the count holds: it is 16 bits) */
	if (rte_mbuf_ext_refcnt_read(&mr->zc) > UINT16_MAX - DROCE_TX_BUF)
		return NULL;
	if (rte_pktmbuf_alloc_bulk(qp->shard->dev->pool, seg,
				   RTE_DIM(seg)) != 0) {
		qp->shard->stats.no_mbuf++;
		return NULL;
	}
	tail = (uint8_t *)rte_pktmbuf_append(seg[2], (uint16_t)(pad +
							      DROCE_ICRC_LEN));
	if (tail == NULL ||
	    !pkt_headers(seg[0], qp->path.hdr, qp->path.hdr_len, qp->dest_qpn,
			 opcode, psn, ackreq, se, len, 0, bth)) {
		rte_pktmbuf_free_bulk(seg, RTE_DIM(seg));
		return NULL;
	}
	memset(tail, 0, pad);
	/* the payload where it lies: a port that lets go of the segment
	 * gives the region's count back */
	rte_mbuf_ext_refcnt_update(&mr->zc, 1);
	rte_pktmbuf_attach_extbuf(seg[1], (void *)(uintptr_t)addr,
				  rte_eal_iova_mode() == RTE_IOVA_VA ?
				  (rte_iova_t)addr : RTE_BAD_IOVA,
				  (uint16_t)len, &mr->zc);
	seg[1]->data_len = (uint16_t)len;
	seg[0]->next = seg[1];
	seg[1]->next = seg[2];
	seg[0]->nb_segs = RTE_DIM(seg);
	seg[0]->pkt_len = seg[0]->data_len + len + seg[2]->data_len;
	qp->shard->stats.tx_zero_copy++;
	return seg[0];
}

void
droce_pkt_send(struct droce_qp_eng *qp, struct rte_mbuf *m)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *ip = f + RTE_ETHER_HDR_LEN;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint8_t *udp;

	if ((ip[0] >> 4) == 4) {
		/* the template's header checksum is that of its header with
		 * a length of 0: the length is added to it (RFC 1624) */
		uint32_t sum;

		droce_put_be16(ip + 2, (uint16_t)(len - RTE_ETHER_HDR_LEN));
		sum = (uint16_t)~droce_get_be16(ip + 10) +
			(len - RTE_ETHER_HDR_LEN);
		sum = (sum & 0xffff) + (sum >> 16);
		droce_put_be16(ip + 10, (uint16_t)~sum);
		udp = ip + 20;
	} else {
		droce_put_be16(ip + 4, (uint16_t)(len - RTE_ETHER_HDR_LEN - 40));
		udp = ip + 40;
	}
	droce_put_be16(udp + 4, (uint16_t)(len - (uint32_t)(udp - f)));
	qp->stats.tx_pkts++;
	/* the ICRC (and IPv6's UDP checksum) as the burst goes */
	droce_shard_tx_frame(qp->shard, m, true);
}

void
droce_cc_cnp(struct droce_qp_eng *qp, uint64_t now)
{
	const struct droce_dcqcn_params *p = &qp->shard->dev->cc;
	uint64_t us = now / droce_eng.us_cycles;

	if (qp->cc.rate == 0)
		droce_dcqcn_init(&qp->cc, p, us);
	droce_dcqcn_tick(&qp->cc, p, us);
	droce_dcqcn_cnp(&qp->cc, p, us);
}

void
droce_cc_sent(struct droce_qp_eng *qp, uint32_t bytes, uint32_t frame_len)
{
	const struct droce_dcqcn_params *p = &qp->shard->dev->cc;
	uint64_t now = rte_get_tsc_cycles();
	uint64_t wire = frame_len + DROCE_ETH_WIRE_OVERHEAD;

	droce_dcqcn_sent(&qp->cc, p, bytes);
	/* the frame's time on the wire at the rate, in TSC cycles (a line
	 * of that speed takes no more); a QP late by less than
	 * DROCE_CC_SLACK_US catches up */
	qp->cc_next = RTE_MAX(qp->cc_next,
			      now - DROCE_CC_SLACK_US * droce_eng.us_cycles) +
		wire * 8 * droce_eng.hz / (qp->cc.rate * 1000);
}

void
droce_pkt_send_cnp(struct droce_qp_eng *qp)
{
	struct rte_mbuf *m;
	uint8_t *bth, *ip;

	m = droce_pkt_alloc(qp, DROCE_OPCODE_CNP, 0, false, false, 0, &bth);
	if (m == NULL)
		return;
	bth[4] |= DROCE_BTH_BECN;
	memset(bth + DROCE_BTH_LEN, 0, DROCE_CNP_RESV_LEN);
	ip = rte_pktmbuf_mtod_offset(m, uint8_t *, RTE_ETHER_HDR_LEN);
	if ((ip[0] >> 4) == 4) {
		/* (the template's checksum, of the header as changed) */
		ip[1] &= (uint8_t)~DROCE_ECN_MASK;
		droce_path_ipv4_cksum(ip);
	} else {
		ip[1] &= (uint8_t)~(DROCE_ECN_MASK << 4);
	}
	qp->stats.cnps_sent++;
	qp->shard->stats.tx_cnps++;
	droce_pkt_send(qp, m);
}

void
droce_shard_tx_frame(struct droce_shard *sh, struct rte_mbuf *m, bool roce)
{
	if (sh->ntx == DROCE_TX_BUF)
		droce_shard_tx_flush(sh);
	if (sh->ntx == DROCE_TX_BUF) {
		/* the port is not draining: lose it, retransmission recovers */
		sh->stats.tx_drop++;
		rte_pktmbuf_free(m);
		return;
	}
	sh->tx_roce[sh->ntx] = roce;
	sh->tx[sh->ntx++] = m;
}

/*
 * The ICRC of a RoCE frame built by droce (Ethernet without a tag, then
 * IPv4 or IPv6), and over IPv6 the UDP checksum, which covers the ICRC.
 */
static inline void
roce_finish(struct rte_mbuf *m)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *ip = f + RTE_ETHER_HDR_LEN, *udp;
	uint32_t len = m->data_len;
	uint16_t cksum;

	if (unlikely(m->nb_segs > 1)) {
		/* zero copy (IPv4 only: no UDP checksum over the payload) */
		struct rte_mbuf *last = rte_pktmbuf_lastseg(m);

		len = rte_pktmbuf_pkt_len(m);
		droce_icrc_put(rte_pktmbuf_mtod_offset(last, uint8_t *,
						       last->data_len -
						       DROCE_ICRC_LEN),
			       droce_icrc_calc_mbuf(m, RTE_ETHER_HDR_LEN,
						    len - RTE_ETHER_HDR_LEN -
						    DROCE_ICRC_LEN));
		return;
	}
	droce_icrc_put(f + len - DROCE_ICRC_LEN,
		       droce_icrc_calc_frame(ip, len - RTE_ETHER_HDR_LEN -
					     DROCE_ICRC_LEN));
	if ((ip[0] >> 4) != 6)
		return;
	udp = ip + 40;
	udp[6] = 0;
	udp[7] = 0;
	cksum = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip, udp);
	memcpy(udp + 6, &cksum, 2);
}

/* Finish the frames queued since the last time: ICRCs, then mirrors. */
static void
tx_finish(struct droce_shard *sh)
{
	uint16_t i;

	for (i = sh->nready; i < sh->ntx; i++)
		if (sh->tx_roce[i])
			roce_finish(sh->tx[i]);
	if (sh->mirror != NULL)
		for (i = sh->nready; i < sh->ntx; i++)
			droce_mirror_frame(sh->mirror, sh->tx[i]);
	sh->nready = sh->ntx;
}

/* Free what is queued: the port cannot send it. */
static void
tx_drop_queued(struct droce_shard *sh, uint16_t from)
{
	uint16_t n = (uint16_t)(sh->ntx - from);

	rte_pktmbuf_free_bulk(sh->tx + from, n);
	sh->stats.tx_drop += n;
	sh->ntx = from;
	if (sh->nready > from)
		sh->nready = from;
}

/* Into the loop queue, or lost if it is full (as a port that refuses
 * frames with its link down loses them: retransmission recovers). */
static void
loop_push(struct droce_shard *sh, struct rte_mbuf *m)
{
	sh->stats.tx_frames++;
	sh->stats.tx_bytes += rte_pktmbuf_pkt_len(m);
	if (sh->loop_tail - sh->loop_head == DROCE_LOOP_BUF) {
		sh->stats.tx_drop++;
		rte_pktmbuf_free(m);
		return;
	}
	sh->loop[sh->loop_tail++ & (DROCE_LOOP_BUF - 1)] = m;
}

/*
 * Loopback, as a NIC's, of one frame @p m the device sends: to its own
 * MAC it goes to the loop queue alone (@return true), unless the port
 * turns such frames back itself; with @p copy, a copy goes there too and
 * @p m on to the port. One taken whole is mirrored first if @p mirror (a
 * frame not queued for the port yet, which no flush will mirror).
 */
static bool
loop_frame(struct droce_shard *sh, struct rte_mbuf *m, bool copy, bool mirror)
{
	struct rte_mbuf *c;

	if (!sh->dev->port_loops &&
	    rte_is_same_ether_addr(rte_pktmbuf_mtod(m,
				const struct rte_ether_addr *),
				&sh->dev->mac)) {
		if (mirror && sh->mirror != NULL)
			droce_mirror_frame(sh->mirror, m);
		loop_push(sh, m);
		return true;
	}
	if (copy) {
		c = rte_pktmbuf_copy(m, sh->dev->pool, 0, UINT32_MAX);
		if (c != NULL)
			loop_push(sh, c);
		else
			sh->stats.no_mbuf++;
	}
	return false;
}

bool
droce_shard_tx_loop(struct droce_shard *sh, struct rte_mbuf *m)
{
	return loop_frame(sh, m, rte_is_multicast_ether_addr(
			rte_pktmbuf_mtod(m, const struct rte_ether_addr *)),
			  true);
}

/* Is @p eth a RoCEv2 datagram to a multicast group? */
static bool
roce_to_group(const uint8_t *eth, uint32_t len)
{
	const uint8_t *ip = eth + RTE_ETHER_HDR_LEN;
	uint16_t type = droce_get_be16(eth + 12);

	if (!rte_is_multicast_ether_addr((const struct rte_ether_addr *)eth))
		return false;
	if (type == RTE_ETHER_TYPE_IPV4 && len >= RTE_ETHER_HDR_LEN + 28)
		return ip[9] == IPPROTO_UDP &&
			droce_get_be16(ip + 22) == DROCE_UDP_PORT;
	return type == RTE_ETHER_TYPE_IPV6 && len >= RTE_ETHER_HDR_LEN + 48 &&
		ip[6] == IPPROTO_UDP &&
		droce_get_be16(ip + 42) == DROCE_UDP_PORT;
}

/*
 * Loopback, as a NIC's: of the frames queued since @p from (finished,
 * mirrored), those to the device's own MAC go to its loop queue instead
 * of the port, in order (unless the port turns them back itself), and a
 * datagram to a group the device has QPs in goes to both (a copy). Its
 * next pass receives them.
 */
static void
tx_loop(struct droce_shard *sh, uint16_t from)
{
	bool groups = __atomic_load_n(&sh->dev->nmcast,
				      __ATOMIC_RELAXED) != 0;
	uint16_t i, kept = from;

	for (i = from; i < sh->ntx; i++) {
		struct rte_mbuf *m = sh->tx[i];

		if (!loop_frame(sh, m, unlikely(groups) &&
				roce_to_group(rte_pktmbuf_mtod(m,
						const uint8_t *), m->data_len),
				false))
			sh->tx[kept++] = m;
	}
	sh->ntx = kept;
	sh->nready = kept;
}

unsigned int
droce_shard_loop_rx(struct droce_shard *sh, uint64_t now)
{
	struct rte_mbuf *pkts[DROCE_BURST];
	unsigned int n = 0;

	while (n < DROCE_BURST && sh->loop_head != sh->loop_tail)
		pkts[n++] = sh->loop[sh->loop_head++ & (DROCE_LOOP_BUF - 1)];
	if (n != 0)
		droce_shard_rx_burst(sh, pkts, n, now, DROCE_RX_LOOP);
	return n;
}

void
droce_shard_tx_flush(struct droce_shard *sh)
{
	uint16_t sent, i, from;

	if (unlikely(sh->port_stopped)) {
		/* no burst on a stopped port: lost, as on a NIC whose port
		 * is down; retransmission recovers once it is started */
		if (sh->ntx != 0)
			tx_drop_queued(sh, 0);
		return;
	}
	if (sh->ntx == 0)
		return;
	from = sh->nready;
	tx_finish(sh);
	if (unlikely(__atomic_load_n(&sh->dev->loopback,
				     __ATOMIC_RELAXED))) {
		tx_loop(sh, from);
		if (sh->ntx == 0)
			return;
	}
	sent = rte_eth_tx_burst(sh->port_id, sh->txq, sh->tx, sh->ntx);
	for (i = 0; i < sent; i++)
		sh->stats.tx_bytes += rte_pktmbuf_pkt_len(sh->tx[i]);
	sh->stats.tx_frames += sent;
	/* keep what the port refused for the next pass (finished) while
	 * the link is up; with the link down (a memif peer gone) a port may
	 * refuse every frame for good, and frames kept would hold their
	 * mbufs long after their QPs gave up: they are lost, as a NIC loses
	 * them, and retransmission recovers if the link comes back */
	if (sent < sh->ntx && !sh->dev->link_up)
		tx_drop_queued(sh, sent);
	if (sent < sh->ntx)
		memmove(sh->tx, sh->tx + sent,
			(size_t)(sh->ntx - sent) * sizeof(sh->tx[0]));
	sh->ntx = (uint16_t)(sh->ntx - sent);
	sh->nready = sh->ntx;
}
