/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Receive path: validate once, then demultiplex. A frame for another
 * shard of the device goes to it (its hand-off ring). ARP and neighbour
 * discovery go to the neighbour code; RoCEv2 frames are checked (lengths,
 * checksums, ICRC), addressed (our MAC and IP, a live QP whose peer sent
 * them) and handed to the responder (requests) or the completer
 * (responses). Anything else is counted and dropped.
 */

#include <rte_ether.h>
#include <rte_ip.h>

#include "droce_engine_pvt.h"
#include "droce_comp.h"
#include "droce_mirror.h"
#include "droce_memif.h"
#include "droce_neigh.h"
#include "droce_resp.h"
#include "droce_tx.h"

#define IP_PROTO_ICMPV6 58

/*
 * Is the packet for this device: to its address, or to a group some QP
 * of it is attached to (*group set)?
 */
static bool
our_ip(struct droce_dev *dev, const uint8_t *frame,
       const struct droce_wire_meta *meta, uint8_t src_gid[16],
       struct droce_mcast **group)
{
	const uint8_t *ip = frame + meta->l3_off;
	uint8_t dst_gid[16];

	*group = NULL;
	if (meta->ip_version == 4) {
		rte_be32_t dst, src;

		memcpy(&dst, ip + 16, 4);
		memcpy(&src, ip + 12, 4);
		droce_gid_from_ipv4(src_gid, src);
		if (dev->ipv4 != 0 && dst == dev->ipv4)
			return true;
		if (dev->nmcast == 0 || (ip[16] & 0xf0) != 0xe0)
			return false;
		droce_gid_from_ipv4(dst_gid, dst);
	} else {
		memcpy(src_gid, ip + 8, 16);
		if (memcmp(ip + 24, dev->ipv6_ll, 16) == 0 ||
		    (dev->has_ipv6 && memcmp(ip + 24, dev->ipv6, 16) == 0))
			return true;
		if (dev->nmcast == 0 || ip[24] != 0xff)
			return false;
		memcpy(dst_gid, ip + 24, 16);
	}
	*group = droce_mcast_find(dev, dst_gid);
	return *group != NULL;
}

/* A datagram to a group: each attached QP gets it. */
static void
rx_group(struct droce_shard *sh, struct droce_mcast *g, struct rte_mbuf *m,
	 struct droce_wire_meta *meta, uint64_t now)
{
	const uint8_t *bth = rte_pktmbuf_mtod_offset(m, const uint8_t *,
						     meta->bth_off);
	unsigned int i;

	if (droce_bth_dqpn(bth) != DROCE_MCAST_QPN ||
	    (droce_bth_opcode(bth) & DROCE_TR_MASK) != DROCE_TR_UD) {
		sh->stats.rx_not_ours++;
		return;
	}
	droce_lcore_request_in(sh->lc);
	for (i = 0; i < g->nqps; i++) {
		struct droce_qp_eng *qp = g->qps[i];

		if (qp->state < IBV_QPS_RTR)
			continue;
		qp->stats.rx_pkts++;
		droce_resp_rx(qp, m, meta, now);
	}
}

/* The QP a packet is for, if it is live and the packet is from its peer. */
static struct droce_qp_eng *
rx_qp(struct droce_shard *sh, const uint8_t *bth, const uint8_t src_gid[16])
{
	struct droce_qp_eng *qp = droce_qp_by_qpn(sh, droce_bth_dqpn(bth));

	if (qp == NULL || qp->state < IBV_QPS_RTR)
		return NULL;
	/* a connected QP hears only its peer */
	if (qp->tr != DROCE_TR_UD && memcmp(src_gid, qp->path.dgid, 16) != 0)
		return NULL;
	return qp;
}

/* Hand @p m, received by shard @p sh, to shard @p to, whose it is. */
static void
handoff(struct droce_shard *sh, struct droce_shard *to, struct rte_mbuf *m)
{
	if (rte_ring_mp_enqueue(to->handoff, m) == 0) {
		sh->stats.rx_handoff++;
		return;
	}
	sh->stats.rx_handoff_drop++;
	rte_pktmbuf_free(m);
}

/*
 * Where the payload of @p m, a frame in segments, is: in one segment
 * (@return true, meta->payload set), or not.
 */
static bool
rx_payload_seg(const struct rte_mbuf *m, struct droce_wire_meta *meta)
{
	uint32_t off = meta->bth_off + meta->op->hdr_len;

	if (meta->payload != NULL || meta->payload_len == 0)
		return true;
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	if (m == NULL || m->data_len - off < meta->payload_len)
		return false;
	meta->payload = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	return true;
}

/* droce_wire_parse_meta() of @p m, whole or in segments; its ICRC is
 * checked later. */
static inline int
rx_parse(const struct rte_mbuf *m, struct droce_wire_meta *meta)
{
	int ret;

	ret = droce_wire_parse_meta_seg(rte_pktmbuf_mtod(m, const uint8_t *),
					m->data_len, rte_pktmbuf_pkt_len(m),
					DROCE_WIRE_NO_ICRC, meta);
	if (unlikely(ret == 0 && m->nb_segs > 1) && !rx_payload_seg(m, meta))
		ret = -DROCE_WIRE_ETRUNC;
	return ret;
}

/*
 * A frame in segments (a sender's chain around the payload it sent from
 * its memory, on an in-process port; a port's scattered receive) stays so
 * where the receive path takes it so: a RoCE frame for a connected QP,
 * its headers in the first segment and its payload in one segment, while
 * no raw QP has rules (@return 1, @p meta filled). Anything else (UD,
 * whose GRH and payload are read whole; ARP, ND, raw QPs' frames) is made
 * one segment (@return 0), or dropped if it cannot be (-1).
 */
static int
rx_segments(struct droce_shard *sh, struct rte_mbuf *m, bool handed,
	    struct droce_wire_meta *meta)
{
	if (__atomic_load_n(&sh->dev->nflows, __ATOMIC_RELAXED) == 0 &&
	    rx_parse(m, meta) == 0 && !(meta->op->flags & DROCE_OPF_DETH)) {
		sh->stats.rx_segmented += !handed;
		return 1;
	}
	if (rte_pktmbuf_linearize(m) == 0)
		return 0;
	sh->stats.rx_malformed++;
	rte_pktmbuf_free(m);
	return -1;
}

/*
 * The first look at a frame received by a shard other than the primary:
 * RoCE for one of its own QPs, to our MAC, goes on (@return true, @p meta
 * filled); RoCE for another shard's goes to that shard; anything else to
 * the primary, whose are the raw QPs' rules, ARP and neighbour discovery
 * (and every frame, while there are rules: the primary passes a RoCE
 * frame on to its shard after them).
 */
static bool
rx_shard(struct droce_shard *sh, struct rte_mbuf *m,
	 struct droce_wire_meta *meta, bool parsed)
{
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	struct droce_shard *to = sh->dev->shards[0];

	/* while raw QPs have rules, each frame passes them first */
	if (__atomic_load_n(&sh->dev->nflows, __ATOMIC_RELAXED) == 0 &&
	    (parsed || rx_parse(m, meta) == 0)) {
		const struct rte_ether_hdr *eth =
			(const struct rte_ether_hdr *)frame;

		to = droce_dev_owner(sh->dev, droce_bth_dqpn(frame +
							 meta->bth_off));
		if (to == sh) {
			if (rte_is_same_ether_addr(&eth->dst_addr,
						   &sh->dev->mac) ||
			    rte_is_multicast_ether_addr(&eth->dst_addr))
				return true;
			sh->stats.rx_not_ours++;
			rte_pktmbuf_free(m);
			return false;
		}
	}
	handoff(sh, to, m);
	return false;
}

/*
 * The first look at a frame: what is not RoCE goes where it belongs (raw
 * QPs' rules, ARP, neighbour discovery: the primary shard's) or is
 * dropped; a RoCE frame for another shard's QP goes to that shard, one
 * for this shard's is checked but for its ICRC. A frame handed by
 * another shard was counted and mirrored there, one looped back was
 * mirrored as it was sent. @return true if @p m is RoCE for this shard,
 * @p meta filled, its ICRC still to check.
 */
static bool
rx_first(struct droce_shard *sh, struct rte_mbuf *m,
	 struct droce_wire_meta *meta, enum droce_rx_from from)
{
	bool handed = from == DROCE_RX_HANDED;

	const struct rte_ether_hdr *eth;
	const uint8_t *frame;
	bool parsed = false;
	uint16_t type;
	int ret;

	if (unlikely(m->nb_segs > 1)) {
		int seg = rx_segments(sh, m, handed, meta);

		if (seg < 0)
			return false;
		parsed = seg == 1;
	}
	if (likely(!handed)) {
		sh->stats.rx_frames++;
		sh->stats.rx_bytes += rte_pktmbuf_pkt_len(m);
		if (sh->mirror != NULL && from == DROCE_RX_PORT)
			droce_mirror_frame(sh->mirror, m);
		if (sh->index != 0)
			return rx_shard(sh, m, meta, parsed);
	}
	/* raw packet QPs' flow rules see frames first, on the primary (a
	 * frame another shard handed on was shown them there already) */
	if (unlikely(sh->dev->nflows != 0) && sh->index == 0 &&
	    droce_flow_rx(sh->dev, m))
		goto drop;
	frame = rte_pktmbuf_mtod(m, const uint8_t *);
	if (m->data_len < sizeof(*eth)) {
		sh->stats.rx_malformed++;
		goto drop;
	}
	eth = (const struct rte_ether_hdr *)frame;
	type = rte_be_to_cpu_16(eth->ether_type);
	if (type == RTE_ETHER_TYPE_ARP) {
		sh->stats.rx_arp++;
		droce_neigh_arp_input(sh, m);
		return false;
	}
	if (unlikely(type == DROCE_MEMIF_LEAVE_TYPE) && sh->dev->memif &&
	    droce_memif_leave_rx(sh, m))
		return false;
	if (!rte_is_same_ether_addr(&eth->dst_addr, &sh->dev->mac) &&
	    !rte_is_multicast_ether_addr(&eth->dst_addr)) {
		sh->stats.rx_not_ours++;
		goto drop;
	}
	if (type == RTE_ETHER_TYPE_IPV6 && m->data_len >= 14 + 40 &&
	    frame[14 + 6] == IP_PROTO_ICMPV6) {
		if (droce_neigh_nd_input(sh, m))
			return false;
		sh->stats.rx_not_ours++;
		goto drop;
	}
	ret = parsed ? 0 : rx_parse(m, meta);
	if (ret == 0) {
		struct droce_shard *to;

		/* (a frame handed here is this shard's, unless the
		 * primary had it for its raw QPs' rules) */
		if (likely(sh->handoff == NULL))
			return true;
		to = droce_dev_owner(sh->dev, droce_bth_dqpn(frame +
							 meta->bth_off));
		if (to == sh)
			return true;
		handoff(sh, to, m);
		return false;
	}
	if (ret == -DROCE_WIRE_ENOTROCE)
		sh->stats.rx_not_ours++;
	else
		sh->stats.rx_malformed++;
drop:
	rte_pktmbuf_free(m);
	return false;
}

/*
 * Headers a RoCE frame for droce may not have, whatever its QP: a P_Key
 * of another partition than the default one (droce's only), an 802.1Q
 * tag with a VLAN ID (droce joins no VLAN; a priority tag, VLAN 0, is
 * what lossless RoCE networks put on every frame), or an IPv6 source
 * that is an IPv4-mapped address (which no IPv6 host may send from, and
 * which would pass for an IPv4 peer's GID).
 */
static bool
header_refused(const uint8_t *frame, const struct droce_wire_meta *meta)
{
	if (!droce_pkey_match(droce_bth_pkey(frame + meta->bth_off),
			      DROCE_DEFAULT_PKEY))
		return true;
	if (meta->l3_off != RTE_ETHER_HDR_LEN &&
	    (droce_get_be16(frame + RTE_ETHER_HDR_LEN) & 0xfff) != 0)
		return true;
	return meta->ip_version == 6 &&
		droce_gid_is_ipv4(frame + meta->l3_off + 8);
}

/* The ECN field of the IP header of a RoCE frame. */
static inline uint8_t
rx_ecn(const uint8_t *frame, const struct droce_wire_meta *meta)
{
	const uint8_t *ip = frame + meta->l3_off;

	return meta->ip_version == 4 ? ip[1] & DROCE_ECN_MASK :
		(ip[1] >> 4) & DROCE_ECN_MASK;
}

/*
 * A packet for @p qp came marked Congestion Experienced: the notification
 * point answers with a CNP to the peer QP, at most one each
 * cnp_interval_us (a connected QP: a UD QP has no one path to answer).
 */
static void
rx_ce(struct droce_shard *sh, struct droce_qp_eng *qp, uint64_t now)
{
	sh->stats.rx_ce++;
	qp->stats.ce_rcvd++;
	if (!droce_eng.cfg.ecn || !droce_tr_connected(qp->tr) ||
	    (int64_t)(now - qp->cnp_next) < 0 ||
	    qp->state < IBV_QPS_RTR || qp->state == IBV_QPS_ERR ||
	    !droce_qp_path_ready(qp, now))
		return;
	qp->cnp_next = now + (uint64_t)droce_eng.cfg.cnp_interval_us *
		droce_eng.us_cycles;
	droce_pkt_send_cnp(qp);
}

/* Count frame @p m in @p why, refused, if it is a RoCE frame: its ICRC
 * right (an unchecked one is checked now). */
static void
rx_refused(struct droce_shard *sh, const struct rte_mbuf *m,
	   struct droce_wire_meta *meta, uint64_t *why)
{
	if (droce_rx_icrc_late(sh, m, meta))
		(*why)++;
}

/* A RoCE frame with a good ICRC: to the QP (or group) it is for. */
static void
rx_roce(struct droce_shard *sh, struct rte_mbuf *m,
	struct droce_wire_meta *meta, uint64_t now)
{
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	struct droce_mcast *group;
	uint8_t src_gid[16];
	struct droce_qp_eng *qp;

	/* (a frame whose ICRC is still unchecked counts once it is) */
	sh->stats.rx_roce += !meta->icrc_unchecked;
	if (unlikely(header_refused(frame, meta))) {
		rx_refused(sh, m, meta, &sh->stats.rx_bad_header);
		return;
	}
	if (!our_ip(sh->dev, frame, meta, src_gid, &group)) {
		rx_refused(sh, m, meta, &sh->stats.rx_not_ours);
		return;
	}
	if (unlikely(group != NULL)) {
		if (droce_rx_icrc_late(sh, m, meta))
			rx_group(sh, group, m, meta, now);
		return;
	}
	qp = rx_qp(sh, frame + meta->bth_off, src_gid);
	if (qp == NULL) {
		rx_refused(sh, m, meta, &sh->stats.rx_not_ours);
		return;
	}
	qp->stats.rx_pkts++;
	if (unlikely(meta->op->flags & DROCE_OPF_CNP)) {
		qp->stats.cnps_rcvd++;
		sh->stats.rx_cnps++;
		if (droce_eng.cfg.ecn && droce_tr_connected(qp->tr))
			droce_cc_cnp(qp, now);
		return;
	}
	if (unlikely(rx_ecn(frame, meta) == DROCE_ECN_CE))
		rx_ce(sh, qp, now);
	if (meta->op->flags & DROCE_OPF_REQ) {
		droce_lcore_request_in(sh->lc);
		droce_resp_rx(qp, m, meta, now);
	} else {
		droce_comp_rx(qp, m, meta);
	}
}

/* droce_icrc_verify_frame() of a frame in segments. */
static bool
icrc_verify_segs(const struct rte_mbuf *m, const struct droce_wire_meta *meta)
{
	uint32_t len = meta->frame_len - meta->l3_off - DROCE_ICRC_LEN;
	uint8_t buf[DROCE_ICRC_LEN];
	const void *icrc;

	icrc = rte_pktmbuf_read(m, meta->frame_len - DROCE_ICRC_LEN,
				DROCE_ICRC_LEN, buf);
	return icrc != NULL &&
		droce_icrc_calc_mbuf(m, meta->l3_off, len) ==
		droce_icrc_get(icrc);
}

bool
droce_rx_icrc_ok(const struct rte_mbuf *m, const struct droce_wire_meta *meta)
{
	if (likely(m->nb_segs == 1))
		return droce_icrc_verify_frame(
			rte_pktmbuf_mtod_offset(m, const uint8_t *,
						meta->l3_off),
			meta->frame_len - meta->l3_off);
	return icrc_verify_segs(m, meta);
}

bool
droce_rx_copy_checked(struct droce_shard *sh, const struct rte_mbuf *m,
		      const struct droce_wire_meta *meta, void *dst)
{
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *,
						    meta->l3_off);
	uint32_t at = meta->bth_off + meta->op->hdr_len;
	uint8_t tail[3 + DROCE_ICRC_LEN];
	const uint8_t *t;
	uint32_t crc;

	/* the headers in place (the first segment holds them), the
	 * payload as it is copied, then the pad */
	crc = droce_icrc_calc_frame(l3, at - meta->l3_off);
	crc = droce_crc32_copy(crc, dst, meta->payload, meta->payload_len);
	t = rte_pktmbuf_read(m, at + meta->payload_len,
			     meta->padcnt + DROCE_ICRC_LEN, tail);
	if (t == NULL ||
	    droce_crc32(crc, t, meta->padcnt) !=
	    droce_icrc_get(t + meta->padcnt)) {
		sh->stats.rx_icrc_err++;
		return false;
	}
	sh->stats.rx_roce++;
	sh->stats.rx_copy_checked++;
	return true;
}

bool
droce_rx_icrc_late(struct droce_shard *sh, const struct rte_mbuf *m,
		   struct droce_wire_meta *meta)
{
	if (!meta->icrc_unchecked)
		return true;
	meta->icrc_unchecked = false;
	if (!droce_rx_icrc_ok(m, meta)) {
		sh->stats.rx_icrc_err++;
		return false;
	}
	sh->stats.rx_roce++;
	return true;
}

/*
 * Whether the ICRC of a frame may wait to be checked as its payload is
 * copied to its place (droce_rx_copy_checked()), one pass over the bytes
 * instead of two: an RC WRITE's or READ response's MIDDLE or LAST packet
 * without immediate data, of some size, not marked CE. Its place comes
 * from the QP's state alone, within the WRITE or READ under way, whose
 * bytes are undefined until it ends; the responder (completer) still
 * checks the ICRC first unless the packet is the one it expects
 * (droce_resp_rx(), droce_comp_rx()).
 */
static inline bool
rx_icrc_later(const struct rte_mbuf *m, const struct droce_wire_meta *meta)
{
	unsigned int op = (unsigned int)(meta->op - droce_opcode_table);

	return (op == (DROCE_TR_RC | DROCE_OP_WRITE_MIDDLE) ||
		op == (DROCE_TR_RC | DROCE_OP_WRITE_LAST) ||
		op == (DROCE_TR_RC | DROCE_OP_READ_RESPONSE_MIDDLE) ||
		op == (DROCE_TR_RC | DROCE_OP_READ_RESPONSE_LAST)) &&
		meta->payload_len >= DROCE_RX_COPY_CHECKED_MIN &&
		rx_ecn(rte_pktmbuf_mtod(m, const uint8_t *), meta) !=
		DROCE_ECN_CE;
}

void
droce_shard_rx_burst(struct droce_shard *sh, struct rte_mbuf **pkts,
		   unsigned int n, uint64_t now, enum droce_rx_from from)
{
	struct droce_wire_meta meta[DROCE_BURST];
	struct rte_mbuf *roce[DROCE_BURST];
	bool ok[DROCE_BURST];
	uint64_t t = droce_clock_now();
	unsigned int i, k = 0;

	RTE_ASSERT(n <= DROCE_BURST);
	/* three passes: the ICRCs one after another, where the CPU can run
	 * one frame's CRC alongside the next */
	for (i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		if (rx_first(sh, pkts[i], &meta[k], from))
			roce[k++] = pkts[i];
	}
	droce_clock_mark(sh->lc, &t, DROCE_STAGE_PARSE);
	for (i = 0; i < k; i++) {
		meta[i].icrc_unchecked = rx_icrc_later(roce[i], &meta[i]);
		ok[i] = meta[i].icrc_unchecked ||
			droce_rx_icrc_ok(roce[i], &meta[i]);
	}
	droce_clock_mark(sh->lc, &t, DROCE_STAGE_ICRC);
	for (i = 0; i < k; i++) {
		if (ok[i])
			rx_roce(sh, roce[i], &meta[i], now);
		else
			sh->stats.rx_icrc_err++;
		droce_mbuf_free(sh, roce[i]);
	}
	droce_clock_mark(sh->lc, &t, DROCE_STAGE_RECEIVE);
}
