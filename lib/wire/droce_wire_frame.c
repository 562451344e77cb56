/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Whole frames: Ethernet (optionally 802.1Q tagged) / IPv4 or IPv6 / UDP /
 * BTH / extension headers / payload / pad / ICRC, decoded into a
 * struct droce_wire_pkt and built back from one.
 */

#include <errno.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "droce_wire.h"

#define ETH_HLEN 14
#define VLAN_HLEN 4
#define IPV4_HLEN 20
#define IPV6_HLEN 40
#define UDP_HLEN 8
#define IP_PROTO_UDP 17

const char *
droce_wire_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return "ok";
	case DROCE_WIRE_ENOTROCE:
		return "not RoCEv2";
	case DROCE_WIRE_ETRUNC:
		return "truncated";
	case DROCE_WIRE_EVERSION:
		return "bad version";
	case DROCE_WIRE_EOPCODE:
		return "bad opcode";
	case DROCE_WIRE_ELENGTH:
		return "bad length";
	case DROCE_WIRE_EIPCSUM:
		return "bad IPv4 checksum";
	case DROCE_WIRE_EICRC:
		return "bad ICRC";
	default:
		return "unknown error";
	}
}

/* Decode every extension header the opcode has, from the BTH at b. */
static void
decode_ext(const uint8_t *b, const struct droce_opcode_info *op,
	   struct droce_wire_pkt *pkt)
{
	uint32_t f = op->flags;

	if (f & DROCE_OPF_XRCETH)
		droce_xrceth_decode(b + op->offset[DROCE_EXT_XRCETH], &pkt->xrceth);
	if (f & DROCE_OPF_DETH)
		droce_deth_decode(b + op->offset[DROCE_EXT_DETH], &pkt->deth);
	if (f & DROCE_OPF_FETH)
		droce_feth_decode(b + op->offset[DROCE_EXT_FETH], &pkt->feth);
	if (f & DROCE_OPF_RETH)
		droce_reth_decode(b + op->offset[DROCE_EXT_RETH], &pkt->reth);
	if (f & DROCE_OPF_AETH)
		droce_aeth_decode(b + op->offset[DROCE_EXT_AETH], &pkt->aeth);
	if (f & DROCE_OPF_ATOMICETH)
		droce_atomiceth_decode(b + op->offset[DROCE_EXT_ATOMICETH],
				       &pkt->atomiceth);
	if (f & DROCE_OPF_ATOMICACKETH)
		droce_atomicacketh_decode(b + op->offset[DROCE_EXT_ATOMICACKETH],
					  &pkt->atomicacketh);
	if (f & DROCE_OPF_IMMDT)
		pkt->immdt = droce_get_be32(b + op->offset[DROCE_EXT_IMMDT]);
	if (f & DROCE_OPF_IETH)
		pkt->ieth_rkey = droce_get_be32(b + op->offset[DROCE_EXT_IETH]);
	if (f & DROCE_OPF_CNP)
		memcpy(pkt->cnp_resv, b + op->offset[DROCE_EXT_CNP],
		       DROCE_CNP_RESV_LEN);
}

/* Encode every extension header the opcode has, after the BTH at b. */
static void
encode_ext(uint8_t *b, const struct droce_opcode_info *op,
	   const struct droce_wire_pkt *pkt)
{
	uint32_t f = op->flags;

	if (f & DROCE_OPF_XRCETH)
		droce_xrceth_encode(b + op->offset[DROCE_EXT_XRCETH], &pkt->xrceth);
	if (f & DROCE_OPF_DETH)
		droce_deth_encode(b + op->offset[DROCE_EXT_DETH], &pkt->deth);
	if (f & DROCE_OPF_FETH)
		droce_feth_encode(b + op->offset[DROCE_EXT_FETH], &pkt->feth);
	if (f & DROCE_OPF_RETH)
		droce_reth_encode(b + op->offset[DROCE_EXT_RETH], &pkt->reth);
	if (f & DROCE_OPF_AETH)
		droce_aeth_encode(b + op->offset[DROCE_EXT_AETH], &pkt->aeth);
	if (f & DROCE_OPF_ATOMICETH)
		droce_atomiceth_encode(b + op->offset[DROCE_EXT_ATOMICETH],
				       &pkt->atomiceth);
	if (f & DROCE_OPF_ATOMICACKETH)
		droce_atomicacketh_encode(b + op->offset[DROCE_EXT_ATOMICACKETH],
					  &pkt->atomicacketh);
	if (f & DROCE_OPF_IMMDT)
		droce_put_be32(b + op->offset[DROCE_EXT_IMMDT], pkt->immdt);
	if (f & DROCE_OPF_IETH)
		droce_put_be32(b + op->offset[DROCE_EXT_IETH], pkt->ieth_rkey);
	if (f & DROCE_OPF_CNP)
		memcpy(b + op->offset[DROCE_EXT_CNP], pkt->cnp_resv,
		       DROCE_CNP_RESV_LEN);
}

/* Check the IPv4 header at ip; *l4_len gets the bytes it says follow it. */
static int
check_ipv4(const uint8_t *ip, uint32_t avail, uint32_t *ihl, uint32_t *l4_len)
{
	uint32_t tot_len;

	if (avail < IPV4_HLEN)
		return -DROCE_WIRE_ETRUNC;
	if ((ip[0] >> 4) != 4)
		return -DROCE_WIRE_EVERSION;
	*ihl = (uint32_t)(ip[0] & 0xf) * 4;
	if (*ihl < IPV4_HLEN)
		return -DROCE_WIRE_ELENGTH;
	if (avail < *ihl)
		return -DROCE_WIRE_ETRUNC;
	if (ip[9] != IP_PROTO_UDP)
		return -DROCE_WIRE_ENOTROCE;
	/* MF set or a fragment offset: RoCEv2 is never fragmented. */
	if (droce_get_be16(ip + 6) &
	    (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))
		return -DROCE_WIRE_ENOTROCE;
	tot_len = droce_get_be16(ip + 2);
	if (tot_len < *ihl)
		return -DROCE_WIRE_ELENGTH;
	if (tot_len > avail)
		return -DROCE_WIRE_ETRUNC;
	*l4_len = tot_len - *ihl;
	return 0;
}

/* Check the IPv6 header at ip; *l4_len gets the bytes it says follow it. */
static int
check_ipv6(const uint8_t *ip, uint32_t avail, uint32_t *l4_len)
{
	if (avail < IPV6_HLEN)
		return -DROCE_WIRE_ETRUNC;
	if ((ip[0] >> 4) != 6)
		return -DROCE_WIRE_EVERSION;
	/* Extension headers are not used by RoCEv2. */
	if (ip[6] != IP_PROTO_UDP)
		return -DROCE_WIRE_ENOTROCE;
	*l4_len = droce_get_be16(ip + 4);
	if (*l4_len > avail - IPV6_HLEN)
		return -DROCE_WIRE_ETRUNC;
	return 0;
}

int
droce_wire_parse_meta(const void *frame, uint32_t len, unsigned int flags,
		      struct droce_wire_meta *meta)
{
	return droce_wire_parse_meta_seg(frame, len, len, flags, meta);
}

int
droce_wire_parse_meta_seg(const void *frame, uint32_t seg_len, uint32_t len,
			  unsigned int flags, struct droce_wire_meta *meta)
{
	const uint8_t *f = frame;
	const uint8_t *bth;
	const struct droce_opcode_info *op;
	uint32_t off, ihl = IPV6_HLEN, l4_len = 0, udp_len, rest;
	uint16_t type;
	bool icrc_ok = true;
	int ret;

	meta->op = NULL;
	meta->payload = NULL;
	if (seg_len >= len) {
		/* whole: each header is checked against the frame's length
		 * as it is read */
		seg_len = len;
	} else {
		/* in segments: the headers against the first's too (each
		 * check below that tests seg_len, as they are read) */
		flags |= DROCE_WIRE_NO_ICRC;
		if (seg_len < ETH_HLEN + VLAN_HLEN + IPV4_HLEN)
			return -DROCE_WIRE_ETRUNC;
	}

	/* Ethernet */
	if (len < ETH_HLEN)
		return -DROCE_WIRE_ETRUNC;
	type = droce_get_be16(f + 12);
	off = ETH_HLEN;
	if (type == RTE_ETHER_TYPE_VLAN) {
		if (len < ETH_HLEN + VLAN_HLEN)
			return -DROCE_WIRE_ETRUNC;
		type = droce_get_be16(f + 16);
		off += VLAN_HLEN;
	}

	/* IP */
	meta->l3_off = (uint16_t)off;
	if (type == RTE_ETHER_TYPE_IPV4) {
		meta->ip_version = 4;
		ret = check_ipv4(f + off, len - off, &ihl, &l4_len);
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		meta->ip_version = 6;
		if (seg_len < len && seg_len - off < IPV6_HLEN)
			return -DROCE_WIRE_ETRUNC;
		ret = check_ipv6(f + off, len - off, &l4_len);
	} else {
		return -DROCE_WIRE_ENOTROCE;
	}
	if (ret != 0)
		return ret;
	off += ihl;
	/* (the IPv4 options, UDP, and the BTH) */
	if (seg_len < len && seg_len < off + UDP_HLEN + DROCE_BTH_LEN)
		return -DROCE_WIRE_ETRUNC;

	/* UDP */
	meta->l4_off = (uint16_t)off;
	if (l4_len < UDP_HLEN)
		return -DROCE_WIRE_ELENGTH;
	if (droce_get_be16(f + off + 2) != DROCE_UDP_PORT)
		return -DROCE_WIRE_ENOTROCE;
	udp_len = droce_get_be16(f + off + 4);
	if (udp_len != l4_len)
		return -DROCE_WIRE_ELENGTH;
	off += UDP_HLEN;
	meta->frame_len = off - UDP_HLEN + udp_len;

	/* BTH */
	meta->bth_off = (uint16_t)off;
	if (udp_len < UDP_HLEN + DROCE_BTH_LEN + DROCE_ICRC_LEN)
		return -DROCE_WIRE_ELENGTH;
	bth = f + off;
	if ((bth[1] & 0xf) != 0)
		return -DROCE_WIRE_EVERSION;
	op = droce_opcode_get(bth[0]);
	if (op == NULL)
		return -DROCE_WIRE_EOPCODE;
	meta->op = op;
	meta->padcnt = (bth[1] >> 4) & 3;

	/* Extension headers, payload, pad, ICRC */
	rest = udp_len - UDP_HLEN;
	if (rest < (uint32_t)op->hdr_len + DROCE_ICRC_LEN)
		return -DROCE_WIRE_ELENGTH;
	rest -= op->hdr_len + DROCE_ICRC_LEN;
	/* payload and pad fill whole 4-byte words */
	if (rest < meta->padcnt || (rest & 3) != 0)
		return -DROCE_WIRE_ELENGTH;
	if (!(op->flags & DROCE_OPF_PAYLOAD) && rest != 0)
		return -DROCE_WIRE_ELENGTH;
	meta->payload_len = rest - meta->padcnt;
	if (seg_len < off + op->hdr_len)
		return -DROCE_WIRE_ETRUNC;   /* (only in segments) */
	if (seg_len - off - op->hdr_len >= meta->payload_len)
		meta->payload = bth + op->hdr_len;

	if (!(flags & DROCE_WIRE_NO_ICRC))
		icrc_ok = droce_icrc_calc(f + meta->l3_off, meta->frame_len -
					  meta->l3_off - DROCE_ICRC_LEN) ==
			droce_icrc_get(f + meta->frame_len - DROCE_ICRC_LEN);
	if (meta->ip_version == 4 && !(flags & DROCE_WIRE_NO_IPCSUM) &&
	    rte_ipv4_cksum((const struct rte_ipv4_hdr *)(f + meta->l3_off)) != 0)
		return -DROCE_WIRE_EIPCSUM;
	if (!icrc_ok)
		return -DROCE_WIRE_EICRC;
	return 0;
}

/* Decode the Ethernet, IP and UDP fields of a frame meta checked. */
static void
decode_l2_l4(const uint8_t *f, const struct droce_wire_meta *meta,
	     struct droce_wire_pkt *pkt)
{
	const uint8_t *ip = f + meta->l3_off;
	const uint8_t *udp = f + meta->l4_off;
	rte_be32_t addr;

	memcpy(&pkt->dst_mac, f, RTE_ETHER_ADDR_LEN);
	memcpy(&pkt->src_mac, f + 6, RTE_ETHER_ADDR_LEN);
	if (meta->l3_off == ETH_HLEN + VLAN_HLEN) {
		pkt->has_vlan = true;
		pkt->vlan_tci = droce_get_be16(f + 14);
	}
	pkt->ip_version = meta->ip_version;
	if (meta->ip_version == 4) {
		pkt->tos = ip[1];
		pkt->ip_id = droce_get_be16(ip + 4);
		pkt->ip_frag = droce_get_be16(ip + 6);
		pkt->ttl = ip[8];
		pkt->ip_cksum = droce_get_be16(ip + 10);
		memcpy(&addr, ip + 12, sizeof(addr));
		droce_gid_from_ipv4(pkt->src_gid, addr);
		memcpy(&addr, ip + 16, sizeof(addr));
		droce_gid_from_ipv4(pkt->dst_gid, addr);
	} else {
		uint32_t vtc = droce_get_be32(ip);

		pkt->tos = (uint8_t)(vtc >> 20);
		pkt->flow_label = vtc & 0xfffff;
		pkt->ttl = ip[7];
		memcpy(pkt->src_gid, ip + 8, 16);
		memcpy(pkt->dst_gid, ip + 24, 16);
	}
	pkt->udp_sport = droce_get_be16(udp);
	pkt->udp_dport = droce_get_be16(udp + 2);
	pkt->udp_cksum = droce_get_be16(udp + 6);
}

int
droce_wire_parse(const void *frame, uint32_t len, unsigned int flags,
		 struct droce_wire_pkt *pkt)
{
	const uint8_t *f = frame;
	struct droce_wire_meta meta;
	int ret;

	memset(pkt, 0, sizeof(*pkt));
	ret = droce_wire_parse_meta(frame, len, flags, &meta);
	/* the view is complete when only a checksum failed */
	if (ret != 0 && ret != -DROCE_WIRE_EICRC && ret != -DROCE_WIRE_EIPCSUM)
		return ret;

	decode_l2_l4(f, &meta, pkt);
	pkt->l3_off = meta.l3_off;
	pkt->l4_off = meta.l4_off;
	pkt->bth_off = meta.bth_off;
	pkt->frame_len = meta.frame_len;
	pkt->op = meta.op;
	droce_bth_decode(f + meta.bth_off, &pkt->bth);
	decode_ext(f + meta.bth_off, meta.op, pkt);
	pkt->payload = f + meta.bth_off + meta.op->hdr_len;
	pkt->payload_len = meta.payload_len;
	pkt->icrc = droce_icrc_get(f + meta.frame_len - DROCE_ICRC_LEN);
	if (!(flags & DROCE_WIRE_NO_ICRC))
		pkt->icrc_ok = ret != -DROCE_WIRE_EICRC &&
			(ret == 0 || droce_icrc_calc(f + meta.l3_off,
				meta.frame_len - meta.l3_off - DROCE_ICRC_LEN) ==
			 pkt->icrc);
	return ret;
}

/* Headers, payload and pad: what follows the UDP header, ICRC included. */
static uint32_t
udp_payload_len(const struct droce_opcode_info *op, uint32_t payload_len)
{
	uint32_t pad = (4 - (payload_len & 3)) & 3;

	return op->hdr_len + payload_len + pad + DROCE_ICRC_LEN;
}

uint32_t
droce_wire_frame_len(const struct droce_wire_pkt *pkt)
{
	const struct droce_opcode_info *op = droce_opcode_get(pkt->bth.opcode);
	uint32_t len;

	if (op == NULL)
		return 0;
	len = ETH_HLEN + (pkt->has_vlan ? VLAN_HLEN : 0);
	len += pkt->ip_version == 6 ? IPV6_HLEN : IPV4_HLEN;
	return len + UDP_HLEN + udp_payload_len(op, pkt->payload_len);
}

int
droce_wire_build(void *buf, uint32_t cap, const struct droce_wire_pkt *pkt)
{
	const struct droce_opcode_info *op = droce_opcode_get(pkt->bth.opcode);
	uint8_t *f = buf;
	uint8_t *ip, *udp, *bth;
	struct droce_bth b;
	uint32_t udp_len, frame_len, pad, off;
	uint16_t cksum;

	if (op == NULL || (pkt->ip_version != 4 && pkt->ip_version != 6))
		return -EINVAL;
	if (!(op->flags & DROCE_OPF_PAYLOAD) && pkt->payload_len != 0)
		return -EINVAL;
	udp_len = UDP_HLEN + udp_payload_len(op, pkt->payload_len);
	if (udp_len + (pkt->ip_version == 4 ? IPV4_HLEN : 0) > UINT16_MAX)
		return -EINVAL;
	frame_len = droce_wire_frame_len(pkt);
	if (frame_len > cap)
		return -ENOSPC;

	/* Ethernet */
	memcpy(f, &pkt->dst_mac, RTE_ETHER_ADDR_LEN);
	memcpy(f + 6, &pkt->src_mac, RTE_ETHER_ADDR_LEN);
	off = 12;
	if (pkt->has_vlan) {
		droce_put_be16(f + off, RTE_ETHER_TYPE_VLAN);
		droce_put_be16(f + off + 2, pkt->vlan_tci);
		off += VLAN_HLEN;
	}
	droce_put_be16(f + off, pkt->ip_version == 4 ? RTE_ETHER_TYPE_IPV4 :
		       RTE_ETHER_TYPE_IPV6);
	off += 2;

	/* IP */
	ip = f + off;
	if (pkt->ip_version == 4) {
		ip[0] = 0x45;
		ip[1] = pkt->tos;
		droce_put_be16(ip + 2, (uint16_t)(IPV4_HLEN + udp_len));
		droce_put_be16(ip + 4, pkt->ip_id);
		droce_put_be16(ip + 6, pkt->ip_frag);
		ip[8] = pkt->ttl;
		ip[9] = IP_PROTO_UDP;
		droce_put_be16(ip + 10, 0);
		memcpy(ip + 12, pkt->src_gid + 12, 4);
		memcpy(ip + 16, pkt->dst_gid + 12, 4);
		/* rte_ipv4_cksum() returns it in the order it is stored in */
		cksum = rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip);
		memcpy(ip + 10, &cksum, sizeof(cksum));
		udp = ip + IPV4_HLEN;
	} else {
		droce_put_be32(ip, 6u << 28 | (uint32_t)pkt->tos << 20 |
			       (pkt->flow_label & 0xfffff));
		droce_put_be16(ip + 4, (uint16_t)udp_len);
		ip[6] = IP_PROTO_UDP;
		ip[7] = pkt->ttl;
		memcpy(ip + 8, pkt->src_gid, 16);
		memcpy(ip + 24, pkt->dst_gid, 16);
		udp = ip + IPV6_HLEN;
	}

	/* UDP */
	droce_put_be16(udp, pkt->udp_sport);
	droce_put_be16(udp + 2, pkt->udp_dport);
	droce_put_be16(udp + 4, (uint16_t)udp_len);
	droce_put_be16(udp + 6, 0);

	/* BTH, extension headers, payload, pad */
	bth = udp + UDP_HLEN;
	pad = (4 - (pkt->payload_len & 3)) & 3;
	b = pkt->bth;
	b.padcnt = (uint8_t)pad;
	droce_bth_encode(bth, &b);
	encode_ext(bth, op, pkt);
	if (pkt->payload_len != 0)
		memcpy(bth + op->hdr_len, pkt->payload, pkt->payload_len);
	memset(bth + op->hdr_len + pkt->payload_len, 0, pad);

	/* ICRC */
	droce_icrc_put(f + frame_len - DROCE_ICRC_LEN,
		       droce_icrc_calc(ip, (uint32_t)(f + frame_len -
						      DROCE_ICRC_LEN - ip)));
	/*
	 * UDP checksum: IPv4 carries the given value (RoCEv2 senders put 0);
	 * IPv6 forbids 0, so it is computed, over the ICRC too (which
	 * does not cover it).
	 */
	if (pkt->ip_version == 4) {
		droce_put_be16(udp + 6, pkt->udp_cksum);
	} else {
		cksum = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip,
					      udp);
		memcpy(udp + 6, &cksum, sizeof(cksum));
	}

	return (int)frame_len;
}
