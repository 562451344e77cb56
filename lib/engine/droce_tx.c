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

struct rte_mbuf *
droce_pkt_alloc_to(struct droce_qp_eng *qp, const uint8_t *hdr,
		   uint8_t hdr_len, uint32_t dqpn, uint8_t opcode, uint32_t psn,
		   bool ackreq, bool se, uint32_t payload_len, uint8_t **bth)
{
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	uint32_t pad = (4 - (payload_len & 3)) & 3;
	uint32_t len = hdr_len + op->hdr_len + payload_len + pad +
		DROCE_ICRC_LEN;
	struct rte_mbuf *m = rte_pktmbuf_alloc(qp->dev->pool);
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

	if (m == NULL) {
		qp->dev->stats.no_mbuf++;
		return NULL;
	}
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (f == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	rte_memcpy(f, hdr, hdr_len);
	*bth = f + hdr_len;
	droce_bth_encode(*bth, &h);
	if (pad != 0)
		memset(*bth + op->hdr_len + payload_len, 0, pad);
	return m;
}

void
droce_pkt_send(struct droce_qp_eng *qp, struct rte_mbuf *m)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *ip = f + RTE_ETHER_HDR_LEN;
	uint32_t len = m->data_len;
	uint16_t cksum;
	uint8_t *udp;

	if ((ip[0] >> 4) == 4) {
		droce_put_be16(ip + 2, (uint16_t)(len - RTE_ETHER_HDR_LEN));
		ip[10] = 0;
		ip[11] = 0;
		cksum = rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip);
		memcpy(ip + 10, &cksum, 2);
		udp = ip + 20;
	} else {
		droce_put_be16(ip + 4, (uint16_t)(len - RTE_ETHER_HDR_LEN - 40));
		udp = ip + 40;
	}
	droce_put_be16(udp + 4, (uint16_t)(f + len - udp));
	qp->stats.tx_pkts++;
	/* the ICRC (and IPv6's UDP checksum) as the burst goes */
	droce_dev_tx_frame(qp->dev, m, true);
}

void
droce_dev_tx_frame(struct droce_dev *dev, struct rte_mbuf *m, bool roce)
{
	if (dev->ntx == DROCE_TX_BUF)
		droce_dev_tx_flush(dev);
	if (dev->ntx == DROCE_TX_BUF) {
		/* the port is not draining: lose it, retransmission recovers */
		dev->stats.tx_drop++;
		rte_pktmbuf_free(m);
		return;
	}
	dev->tx_roce[dev->ntx] = roce;
	dev->tx[dev->ntx++] = m;
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
tx_finish(struct droce_dev *dev)
{
	uint16_t i;

	for (i = dev->nready; i < dev->ntx; i++)
		if (dev->tx_roce[i])
			roce_finish(dev->tx[i]);
	if (dev->mirror != NULL)
		for (i = dev->nready; i < dev->ntx; i++)
			droce_mirror_frame(dev->mirror, dev->tx[i]);
	dev->nready = dev->ntx;
}

/* Free what is queued: the port cannot send it. */
static void
tx_drop_queued(struct droce_dev *dev, uint16_t from)
{
	uint16_t n = (uint16_t)(dev->ntx - from);

	rte_pktmbuf_free_bulk(dev->tx + from, n);
	dev->stats.tx_drop += n;
	dev->ntx = from;
	if (dev->nready > from)
		dev->nready = from;
}

void
droce_dev_tx_flush(struct droce_dev *dev)
{
	uint16_t sent, i;

	if (unlikely(dev->port_stopped)) {
		/* no burst on a stopped port: lost, as on a NIC whose port
		 * is down; retransmission recovers once it is started */
		if (dev->ntx != 0)
			tx_drop_queued(dev, 0);
		return;
	}
	if (dev->ntx == 0) {
		/* net_fault sends frames it held back on a later burst */
		if (unlikely(dev->faulty))
			rte_eth_tx_burst(dev->port_id, dev->txq, NULL, 0);
		return;
	}
	tx_finish(dev);
	sent = rte_eth_tx_burst(dev->port_id, dev->txq, dev->tx, dev->ntx);
	for (i = 0; i < sent; i++)
		dev->stats.tx_bytes += rte_pktmbuf_pkt_len(dev->tx[i]);
	dev->stats.tx_frames += sent;
	/* keep what the port refused for the next pass (finished) while
	 * the link is up; with the link down (a memif peer gone) a port may
	 * refuse every frame for good, and frames kept would hold their
	 * mbufs long after their QPs gave up: they are lost, as a NIC loses
	 * them, and retransmission recovers if the link comes back */
	if (sent < dev->ntx && !dev->primary->link_up)
		tx_drop_queued(dev, sent);
	if (sent < dev->ntx)
		memmove(dev->tx, dev->tx + sent,
			(size_t)(dev->ntx - sent) * sizeof(dev->tx[0]));
	dev->ntx = (uint16_t)(dev->ntx - sent);
	dev->nready = dev->ntx;
}
