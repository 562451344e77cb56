/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Raw packet QPs: whole Ethernet frames. A raw QP sends the frame its
 * WR holds, its IP and TCP/UDP checksums filled in on request, or the
 * segments of a TSO WR (a TCP header and MSS-sized pieces); it
 * receives the frames its flow rules match, offered here before the RoCE
 * path sees them. A normal rule takes a frame away from the engine,
 * except what droce's own transport lives on (RoCEv2, ARP, neighbour
 * discovery), which the engine always keeps; a sniffer rule gets a copy
 * of every frame.
 */

#include <errno.h>

#include <rte_ethdev.h>
#include <rte_gso.h>
#include <rte_ip.h>

#include <rte_thash.h>

#include "droce_engine_pvt.h"
#include "droce_dma.h"
#include "droce_resp.h"
#include "droce_tx.h"

#define ETH_P_VLAN 0x8100
#define IPPROTO_UDP_ 17
#define IPPROTO_TCP_ 6
#define IP_PROTO_ICMPV6 58

/* Where the layers of a frame are; NULL where it has none. */
struct frame_view {
	const uint8_t *eth;
	const uint8_t *ether_type;  /**< after any VLAN tag */
	const uint8_t *ip4;
	const uint8_t *ip6;
	/** the TCP or UDP header, within an IP length that fits (what
	 * checksums are computed over) */
	const uint8_t *l4;
	/** the TCP or UDP header as a NIC's parser finds it, whatever the
	 * IP length says (what rules match) */
	const uint8_t *l4_hdr;
	uint8_t proto;
};

/*
 * The layers of @p len bytes at @p f from the Ethernet type at @p off
 * on, the IP header (if any) at @p l3. A TCP or UDP header counts for
 * checksums only if the IP header's length stays within the bytes there
 * are (they are computed over that length); for rules, if its bytes are
 * there (rdma-core's tests send IPv6 with the header counted in the
 * payload length, and a NIC's rules take them).
 */
static void
view_from_type(const uint8_t *f, uint32_t off, uint32_t l3, uint32_t len,
	       struct frame_view *v)
{
	uint16_t type = droce_get_be16(f + off);
	uint32_t ip_len;

	v->ether_type = f + off;
	if (type == RTE_ETHER_TYPE_IPV4 && len >= l3 + 20 &&
	    (f[l3] >> 4) == 4 && len >= l3 + (f[l3] & 0xfu) * 4u) {
		v->ip4 = f + l3;
		v->proto = f[l3 + 9];
		ip_len = droce_get_be16(f + l3 + 2);
		off = l3 + (f[l3] & 0xfu) * 4u;
	} else if (type == RTE_ETHER_TYPE_IPV6 && len >= l3 + 40) {
		v->ip6 = f + l3;
		v->proto = f[l3 + 6];
		ip_len = 40u + droce_get_be16(f + l3 + 4);
		off = l3 + 40;
	} else {
		return;
	}
	if ((v->proto == IPPROTO_UDP_ && len >= off + 8) ||
	    (v->proto == IPPROTO_TCP_ && len >= off + 20))
		v->l4_hdr = f + off;
	if (l3 + ip_len > len)
		return;
	if ((v->proto == IPPROTO_UDP_ && ip_len >= off - l3 + 8) ||
	    (v->proto == IPPROTO_TCP_ && ip_len >= off - l3 + 20))
		v->l4 = f + off;
}

static void
frame_view(const uint8_t *f, uint32_t len, struct frame_view *v)
{
	uint32_t off = 12;

	memset(v, 0, sizeof(*v));
	if (len < 14)
		return;
	v->eth = f;
	if (droce_get_be16(f + off) == ETH_P_VLAN && len >= 18)
		off += 4;
	view_from_type(f, off, off + 2, len, v);
}

static bool
field_ok(const uint8_t *p, const struct droce_flow_field *f, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if ((p[i] & f->mask[i]) != (f->val[i] & f->mask[i]))
			return false;
	return true;
}

static bool
flow_match(const struct droce_flow_eng *fl, const struct frame_view *v)
{
	uint32_t l = fl->layers;

	if (l & DROCE_FLOW_ETH) {
		if (v->eth == NULL || !field_ok(v->eth, &fl->dmac, 6) ||
		    !field_ok(v->eth + 6, &fl->smac, 6) ||
		    !field_ok(v->ether_type, &fl->ether_type, 2))
			return false;
	}
	if (l & DROCE_FLOW_IPV4) {
		if (v->ip4 == NULL || !field_ok(v->ip4 + 12, &fl->src_ip, 4) ||
		    !field_ok(v->ip4 + 16, &fl->dst_ip, 4) ||
		    !field_ok(v->ip4 + 9, &fl->proto, 1) ||
		    !field_ok(v->ip4 + 1, &fl->tos, 1) ||
		    !field_ok(v->ip4 + 8, &fl->ttl, 1))
			return false;
	}
	if (l & DROCE_FLOW_IPV6) {
		uint8_t tclass;

		if (v->ip6 == NULL)
			return false;
		tclass = (uint8_t)(droce_get_be32(v->ip6) >> 20);
		if (!field_ok(v->ip6 + 8, &fl->src_ip, 16) ||
		    !field_ok(v->ip6 + 24, &fl->dst_ip, 16) ||
		    !field_ok(v->ip6 + 6, &fl->proto, 1) ||
		    !field_ok(&tclass, &fl->tos, 1) ||
		    !field_ok(v->ip6 + 7, &fl->ttl, 1))
			return false;
	}
	if (l & (DROCE_FLOW_TCP | DROCE_FLOW_UDP)) {
		uint8_t want = (l & DROCE_FLOW_TCP) ? IPPROTO_TCP_ :
			IPPROTO_UDP_;

		if (v->l4_hdr == NULL || v->proto != want ||
		    !field_ok(v->l4_hdr, &fl->sport, 2) ||
		    !field_ok(v->l4_hdr + 2, &fl->dport, 2))
			return false;
	}
	return true;
}

/* Frames the engine's own transport needs, whatever the rules say. */
static bool
engine_frame(const struct frame_view *v)
{
	uint16_t type;

	if (v->ether_type == NULL)
		return false;
	type = droce_get_be16(v->ether_type);
	if (type == RTE_ETHER_TYPE_ARP)
		return true;
	if (v->ip6 != NULL && v->proto == IP_PROTO_ICMPV6)
		return true;
	return v->l4 != NULL && v->proto == IPPROTO_UDP_ &&
		droce_get_be16(v->l4 + 2) == DROCE_UDP_PORT;
}

/*
 * IPv4 with TCP or UDP whose checksums are right (a UDP checksum of 0,
 * none, is not): IBV_WC_IP_CSUM_OK. The sum of a header or segment with
 * its checksum in is all ones.
 */
static uint16_t
csum_flags(const struct frame_view *v)
{
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)v->ip4;
	uint32_t hlen, l4_len, sum;

	/* (a TCP or UDP header is there only if the IP length fits) */
	if (ip == NULL || v->l4 == NULL)
		return 0;
	hlen = rte_ipv4_hdr_len(ip);
	if (rte_raw_cksum(ip, hlen) != 0xffff)
		return 0;
	l4_len = rte_be_to_cpu_16(ip->total_length) - hlen;
	if (v->proto == IPPROTO_UDP_ && v->l4[6] == 0 && v->l4[7] == 0)
		return 0;
	sum = (uint32_t)rte_ipv4_phdr_cksum(ip, 0) +
		rte_raw_cksum(v->l4, l4_len);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff ? IBV_WC_IP_CSUM_OK : 0;
}

/* The work queue of RSS QP @p rss that frame @p v goes to. */
static struct droce_qp_eng *
rss_wq(const struct droce_rss_eng *rss, const struct frame_view *v)
{
	uint32_t t[RTE_THASH_V6_L4_LEN], ports = 0, i;
	uint64_t fl = rss->fields;
	unsigned int n = 0;
	bool sp = false, dp = false;

	if (v->ip4 != NULL) {
		if (fl & IBV_RX_HASH_SRC_IPV4)
			t[n++] = droce_get_be32(v->ip4 + 12);
		if (fl & IBV_RX_HASH_DST_IPV4)
			t[n++] = droce_get_be32(v->ip4 + 16);
	} else if (v->ip6 != NULL) {
		if (fl & IBV_RX_HASH_SRC_IPV6)
			for (i = 0; i < 4; i++)
				t[n++] = droce_get_be32(v->ip6 + 8 + 4 * i);
		if (fl & IBV_RX_HASH_DST_IPV6)
			for (i = 0; i < 4; i++)
				t[n++] = droce_get_be32(v->ip6 + 24 + 4 * i);
	}
	if (v->l4_hdr != NULL && v->proto == IPPROTO_TCP_) {
		sp = fl & IBV_RX_HASH_SRC_PORT_TCP;
		dp = fl & IBV_RX_HASH_DST_PORT_TCP;
	} else if (v->l4_hdr != NULL && v->proto == IPPROTO_UDP_) {
		sp = fl & IBV_RX_HASH_SRC_PORT_UDP;
		dp = fl & IBV_RX_HASH_DST_PORT_UDP;
	}
	if (sp)
		ports |= (uint32_t)droce_get_be16(v->l4_hdr) << 16;
	if (dp)
		ports |= droce_get_be16(v->l4_hdr + 2);
	if (sp || dp)
		t[n++] = ports;
	return rss->wqs[(n != 0 ? rte_softrss(t, n, rss->key) : 0) &
			(rss->size - 1)];
}

/*
 * The next receive WQE of raw QP @p qp takes the frame (of an RSS QP,
 * the next of the work queue its hash picks).
 */
static void
raw_deliver(struct droce_qp_eng *qp, const uint8_t *f, uint32_t len,
	    uint16_t wc_flags)
{
	struct droce_wq *rq;
	struct droce_recv_wqe *wqe;
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	uint32_t idx;

	if (qp->cfg.rss != NULL) {
		struct frame_view v;

		frame_view(f, len, &v);
		qp = rss_wq(qp->cfg.rss, &v);
	}
	rq = qp->cfg.rq;
	idx = qp->resp.rq_cons;
	if (qp->state < IBV_QPS_RTR || qp->state == IBV_QPS_ERR)
		return;
	if (idx == __atomic_load_n(&rq->prod_tail, __ATOMIC_ACQUIRE)) {
		qp->stats.rx_dropped++;
		return;
	}
	wqe = droce_wq_slot(rq, idx);
	if (droce_sge_check(qp->shard, qp->cfg.pd, droce_recv_wqe_sge(wqe),
			    wqe->num_sge, true) != 0)
		st = IBV_WC_LOC_PROT_ERR;
	else if (len > wqe->length)
		st = IBV_WC_LOC_LEN_ERR;
	else
		droce_sge_write(droce_recv_wqe_sge(wqe), wqe->num_sge, 0, f,
				len);
	qp->stats.rx_pkts++;
	droce_resp_recv_cqe(qp, idx, wqe->wr_id, st, IBV_WC_RECV,
			    st == IBV_WC_SUCCESS ? len : 0,
			    st == IBV_WC_SUCCESS ? wc_flags : 0, 0, false);
	qp->resp.rq_cons = idx + 1;
	if (st != IBV_WC_SUCCESS)
		droce_qp_error(qp);
}

bool
droce_flow_rx(struct droce_dev *dev, const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	struct frame_view v;
	bool taken = false;
	uint16_t flags = 0;
	bool flags_done = false;
	uint32_t i;

	frame_view(f, m->data_len, &v);
	for (i = 0; i < dev->nflows; i++) {
		struct droce_flow_eng *fl = dev->flows[i];

		/* a normal rule takes a frame once, the first that matches */
		if ((!fl->sniffer && taken) || !flow_match(fl, &v))
			continue;
		if (!flags_done) {
			flags = csum_flags(&v);
			flags_done = true;
		}
		raw_deliver(fl->qp, f, m->data_len, flags);
		if (!fl->sniffer)
			taken = true;
	}
	return taken && !engine_frame(&v);
}

/*
 * Fill the IPv4 header checksum, and the TCP or UDP checksum over IPv4
 * or IPv6, of the packet whose IP header is at @p l3 and TCP/UDP header
 * (of protocol @p proto) at @p l4, if any.
 */
static void
fill_csums(uint8_t *l3, uint8_t *l4, uint8_t proto)
{
	bool v4 = (l3[0] >> 4) == 4;
	uint8_t *c;
	uint16_t sum;

	if (v4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	if (l4 == NULL)
		return;
	c = l4 + (proto == IPPROTO_TCP_ ? 16 : 6);
	c[0] = 0;
	c[1] = 0;
	sum = v4 ? rte_ipv4_udptcp_cksum((const struct rte_ipv4_hdr *)l3, l4) :
		rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)l3, l4);
	memcpy(c, &sum, 2);
}

/* The layers of a UD payload that starts with an IPoIB header. */
static void
ipoib_view(const uint8_t *p, uint32_t len, struct frame_view *v)
{
	memset(v, 0, sizeof(*v));
	if (len >= DROCE_IPOIB_HDR_LEN && p[2] == 0 && p[3] == 0)
		view_from_type(p, 0, DROCE_IPOIB_HDR_LEN, len, v);
}

void
droce_ipoib_csum(uint8_t *p, uint32_t len)
{
	struct frame_view v;

	ipoib_view(p, len, &v);
	if (v.ip4 != NULL || v.ip6 != NULL)
		fill_csums((uint8_t *)(uintptr_t)(v.ip4 != NULL ? v.ip4 : v.ip6),
			   (uint8_t *)(uintptr_t)v.l4, v.proto);
}

uint16_t
droce_ipoib_csum_ok(const uint8_t *p, uint32_t len)
{
	struct frame_view v;

	ipoib_view(p, len, &v);
	return csum_flags(&v);
}

/*
 * Have the port fill the checksums of frame @p m (IP header at @p l3,
 * TCP/UDP at @p l4 if any), if it can fill every one of them: the IPv4
 * header checksum is zeroed and the TCP/UDP one seeded with the pseudo
 * header's, as DPDK wants. @return false if the port cannot.
 */
static bool
csum_offload(struct droce_shard *sh, struct rte_mbuf *m, uint8_t *l3,
	     uint8_t *l4, uint8_t proto)
{
	bool v4 = (l3[0] >> 4) == 4;
	uint64_t need = v4 ? RTE_ETH_TX_OFFLOAD_IPV4_CKSUM : 0;
	uint64_t flags = v4 ? RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM :
		RTE_MBUF_F_TX_IPV6;
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t sum;

	if (l4 != NULL) {
		need |= proto == IPPROTO_TCP_ ? RTE_ETH_TX_OFFLOAD_TCP_CKSUM :
			RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
		flags |= proto == IPPROTO_TCP_ ? RTE_MBUF_F_TX_TCP_CKSUM :
			RTE_MBUF_F_TX_UDP_CKSUM;
	}
	if (need == 0 || (sh->dev->tx_offloads & need) != need)
		return false;
	m->l2_len = (uint64_t)(l3 - f);
	m->l3_len = v4 ? (l3[0] & 0xfu) * 4u : 40;
	m->ol_flags |= flags;
	if (v4)
		((struct rte_ipv4_hdr *)l3)->hdr_checksum = 0;
	if (l4 != NULL) {
		sum = v4 ? rte_ipv4_phdr_cksum((struct rte_ipv4_hdr *)l3,
					       flags) :
			rte_ipv6_phdr_cksum((struct rte_ipv6_hdr *)l3, flags);
		memcpy(l4 + (proto == IPPROTO_TCP_ ? 16 : 6), &sum, 2);
	}
	sh->stats.tx_csum_offload++;
	return true;
}

/*
 * Fill the IPv4 header and TCP/UDP checksums of frame @p m to send: the
 * port does if it can, else droce.
 */
static void
raw_csum(struct droce_shard *sh, struct rte_mbuf *m)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	struct frame_view v;
	uint8_t *l3, *l4;

	frame_view(f, m->data_len, &v);
	if (v.ip4 == NULL && v.ip6 == NULL)
		return;
	l3 = (uint8_t *)(uintptr_t)(v.ip4 != NULL ? v.ip4 : v.ip6);
	l4 = (uint8_t *)(uintptr_t)v.l4;
	if (!csum_offload(sh, m, l3, l4, v.proto))
		fill_csums(l3, l4, v.proto);
}

/* ------------------------------------------------------------------------
 * TSO: a TCP header and its payload cut into MSS-sized segments.
 */

void
droce_tso_header(uint8_t *hdr, uint32_t l3, uint32_t hdr_len, uint32_t off,
		 uint32_t len, uint32_t seg, bool last)
{
	uint8_t *ip = hdr + l3, *tcp;
	uint32_t seq;

	if ((ip[0] >> 4) == 4) {
		uint32_t ihl = (ip[0] & 0xfu) * 4;

		droce_put_be16(ip + 2, (uint16_t)(hdr_len - l3 + len));
		droce_put_be16(ip + 4, (uint16_t)(droce_get_be16(ip + 4) + seg));
		tcp = ip + ihl;
	} else {
		droce_put_be16(ip + 4, (uint16_t)(hdr_len - l3 - 40 + len));
		tcp = ip + 40;
	}
	seq = droce_get_be32(tcp + 4) + off;
	droce_put_be32(tcp + 4, seq);
	if (!last)
		tcp[13] &= (uint8_t)~0x09;      /* FIN and PSH: the last one */
}

/* Where the IP header of a raw frame's header starts (after VLAN). */
static uint32_t
l3_offset(const uint8_t *f)
{
	return droce_get_be16(f + 12) == ETH_P_VLAN ? 18 : 14;
}

/*
 * The segments of a raw TSO WQE from qp->req.offset on, cut by droce:
 * each one a frame of its own, its checksums filled as raw_csum does.
 */
static bool
tso_soft(struct droce_qp_eng *qp, struct droce_send_wqe *wqe)
{
	uint32_t mss = wqe->imm >> 16, hlen = wqe->imm & 0xffff;
	const uint8_t *hdr = droce_send_wqe_tso_hdr(wqe);
	uint32_t l3 = l3_offset(hdr);

	do {
		uint32_t off = qp->req.offset;
		uint32_t n = RTE_MIN(mss, wqe->length - off);
		struct rte_mbuf *m;
		uint8_t *f;

		if (!droce_shard_tx_room(qp->shard))
			return false;
		m = rte_pktmbuf_alloc(qp->shard->dev->pool);
		if (m == NULL) {
			qp->shard->stats.no_mbuf++;
			return false;
		}
		f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hlen + n));
		if (f == NULL) {
			rte_pktmbuf_free(m);
			return false;
		}
		memcpy(f, hdr, hlen);
		droce_tso_header(f, l3, hlen, off, n, off / mss,
				 off + n >= wqe->length);
		droce_sge_read(droce_send_wqe_sge(wqe), wqe->num_sge, off,
			       f + hlen, n);
		raw_csum(qp->shard, m);
		qp->stats.tx_pkts++;
		droce_shard_tx(qp->shard, m);
		qp->req.offset = off + n;
	} while (qp->req.offset < wqe->length);
	qp->req.offset = 0;
	return true;
}

/*
 * The whole of a TSO WQE over IPv4 as one packet for segmentation: its
 * header then the payload, in as many mbufs as it takes, with the
 * offload fields DPDK's TSO and GSO read (the IPv4 checksum zeroed, the
 * TCP one seeded with the pseudo header's, without the length).
 * @return NULL if the mbufs ran out.
 */
static struct rte_mbuf *
tso_packet(struct droce_shard *sh, struct droce_send_wqe *wqe)
{
	uint32_t mss = wqe->imm >> 16, hlen = wqe->imm & 0xffff;
	const uint8_t *hdr = droce_send_wqe_tso_hdr(wqe);
	struct rte_mbuf *head = NULL, *m;
	uint32_t off = 0;
	uint8_t *f, *ip, *tcp;
	uint16_t sum;

	while (head == NULL || off < wqe->length) {
		uint32_t room, n;

		m = rte_pktmbuf_alloc(sh->dev->pool);
		if (m == NULL || (head != NULL && rte_pktmbuf_chain(head, m))) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			sh->stats.no_mbuf++;
			return NULL;
		}
		room = rte_pktmbuf_tailroom(m);
		f = rte_pktmbuf_mtod(m, uint8_t *);
		if (head == NULL) {
			memcpy(f, hdr, hlen);
			room -= hlen;
			m->data_len = (uint16_t)hlen;
			m->pkt_len = hlen;
			head = m;
		}
		n = RTE_MIN(room, wqe->length - off);
		droce_sge_read(droce_send_wqe_sge(wqe), wqe->num_sge, off,
			       rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len),
			       n);
		m->data_len = (uint16_t)(m->data_len + n);
		if (m != head)
			head->pkt_len += n;
		else
			head->pkt_len = m->data_len;
		off += n;
	}
	f = rte_pktmbuf_mtod(head, uint8_t *);
	ip = f + l3_offset(f);
	tcp = ip + (ip[0] & 0xfu) * 4u;
	head->l2_len = (uint64_t)(ip - f);
	head->l3_len = (uint64_t)(tcp - ip);
	head->l4_len = (uint64_t)(tcp[12] >> 4) * 4u;
	head->tso_segsz = (uint16_t)mss;
	head->ol_flags |= RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_IPV4 |
		RTE_MBUF_F_TX_IP_CKSUM;
	((struct rte_ipv4_hdr *)ip)->hdr_checksum = 0;
	sum = rte_ipv4_phdr_cksum((struct rte_ipv4_hdr *)ip, head->ol_flags);
	memcpy(tcp + 16, &sum, 2);
	return head;
}

/*
 * Send a segment DPDK's GSO library made (a header mbuf, then the
 * payload's), as one mbuf (it fits: it is no larger than the MTU) with
 * its checksums filled as raw_csum does.
 */
static void
gso_send(struct droce_shard *sh, struct rte_mbuf *m)
{
	m->ol_flags &= ~RTE_MBUF_F_TX_OFFLOAD_MASK;
	if (rte_pktmbuf_linearize(m) != 0) {
		sh->stats.tx_drop++;
		rte_pktmbuf_free(m);
		return;
	}
	raw_csum(sh, m);
	droce_shard_tx(sh, m);
}

/*
 * A raw TSO WQE: TCP over IPv4 whole to the port if it segments (TSO),
 * else through DPDK's GSO library; TCP over IPv6 by droce (ethdev's TSO
 * capability does not say it covers IPv6, and the GSO library has no
 * TCP over IPv6), as is whatever the others cannot take.
 */
static bool
raw_tso(struct droce_qp_eng *qp, struct droce_send_wqe *wqe)
{
	const uint64_t port_tso = RTE_ETH_TX_OFFLOAD_TCP_TSO |
		RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
		RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
	uint32_t mss = wqe->imm >> 16, hlen = wqe->imm & 0xffff;
	const uint8_t *hdr = droce_send_wqe_tso_hdr(wqe);
	struct droce_shard *sh = qp->shard;
	struct rte_mbuf *segs[DROCE_GSO_SEGS];
	struct rte_gso_ctx gso = {
		.direct_pool = sh->dev->pool,
		.indirect_pool = sh->dev->pool,
		.gso_types = RTE_ETH_TX_OFFLOAD_TCP_TSO,
		.gso_size = (uint16_t)(hlen + mss),
	};
	uint32_t nseg = (wqe->length + mss - 1) / mss;
	struct rte_mbuf *m;
	int i, n;

	if (qp->req.offset != 0 || (hdr[l3_offset(hdr)] >> 4) != 4 ||
	    nseg < 2)
		return tso_soft(qp, wqe);
	if ((sh->dev->tx_offloads & port_tso) == port_tso &&
	    hlen + wqe->length <= UINT16_MAX) {
		m = tso_packet(sh, wqe);
		if (m == NULL)
			return false;
		sh->stats.tx_tso_offload++;
		qp->stats.tx_pkts += nseg;
		droce_shard_tx(sh, m);
		return true;
	}
	if (nseg > DROCE_GSO_SEGS || gso.gso_size < RTE_GSO_SEG_SIZE_MIN)
		return tso_soft(qp, wqe);
	m = tso_packet(sh, wqe);
	if (m == NULL)
		return false;
	n = rte_gso_segment(m, &gso, segs, DROCE_GSO_SEGS);
	/* the segments hold their own references to the payload */
	rte_pktmbuf_free(m);
	if (n < 0) {
		sh->stats.no_mbuf++;
		return false;
	}
	sh->stats.tx_gso++;
	qp->stats.tx_pkts += (uint64_t)n;
	for (i = 0; i < n; i++)
		gso_send(sh, segs[i]);
	return true;
}

bool
droce_raw_qp_send(struct droce_qp_eng *qp, struct droce_send_wqe *wqe)
{
	struct rte_mbuf *m;
	uint8_t *f;

	if (droce_wr_flags(wqe->opcode) & DROCE_WR_TSO)
		return raw_tso(qp, wqe);
	m = rte_pktmbuf_alloc(qp->shard->dev->pool);

	if (m == NULL) {
		qp->shard->stats.no_mbuf++;
		return false;
	}
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)wqe->length);
	if (f == NULL) {
		rte_pktmbuf_free(m);
		return false;
	}
	if (wqe->flags & DROCE_WQE_INLINE)
		memcpy(f, droce_send_wqe_sge(wqe), wqe->length);
	else
		droce_sge_read(droce_send_wqe_sge(wqe), wqe->num_sge, 0, f,
			       wqe->length);
	if (wqe->flags & DROCE_WQE_IP_CSUM)
		raw_csum(qp->shard, m);
	qp->stats.tx_pkts++;
	/* while the device has rules, its raw QPs' frames reach them as a
	 * NIC's switch takes them back: one to the device's own MAC the
	 * device alone, one to a group or broadcast the port and the
	 * device too; so two raw QPs of one device talk as on one port */
	if (unlikely(__atomic_load_n(&qp->shard->dev->nflows,
				     __ATOMIC_RELAXED) != 0) &&
	    droce_shard_tx_loop(qp->shard, m))
		return true;
	droce_shard_tx(qp->shard, m);
	return true;
}

/* ------------------------------------------------------------------------
 * Rules, on the engine lcore of their QP's device.
 */

static int
flow_insert(struct droce_shard *sh, void *arg)
{
	struct droce_flow_eng *flow = arg;

	if (sh->dev->nflows == DROCE_MAX_FLOWS)
		return -ENOMEM;
	sh->dev->flows[sh->dev->nflows++] = flow;
	return 0;
}

int
droce_flow_attach(struct droce_flow_eng *flow)
{
	return droce_shard_call(flow->qp->shard, flow_insert, flow);
}

static int
flow_remove(struct droce_shard *sh, void *arg)
{
	struct droce_flow_eng *flow = arg;
	uint32_t i;

	for (i = 0; i < sh->dev->nflows; i++)
		if (sh->dev->flows[i] == flow)
			break;
	if (i == sh->dev->nflows)
		return 0;
	/* keep the order: the first normal rule to match takes a frame */
	memmove(&sh->dev->flows[i], &sh->dev->flows[i + 1],
		(sh->dev->nflows - i - 1) * sizeof(sh->dev->flows[0]));
	sh->dev->nflows--;
	return 0;
}

void
droce_flow_detach(struct droce_flow_eng *flow)
{
	droce_shard_call(flow->qp->shard, flow_remove, flow);
}
