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

/* Parse the IPv4 header at ip; *l4_len gets the bytes it says follow it. */
static int
parse_ipv4(const uint8_t *ip, uint32_t avail, struct droce_wire_pkt *pkt,
	   uint32_t *ihl, uint32_t *l4_len)
{
	uint32_t tot_len;
	rte_be32_t addr;

	if (avail < IPV4_HLEN)
		return -DROCE_WIRE_ETRUNC;
	if ((ip[0] >> 4) != 4)
		return -DROCE_WIRE_EVERSION;
	*ihl = (uint32_t)(ip[0] & 0xf) * 4;
	if (*ihl < IPV4_HLEN)
		return -DROCE_WIRE_ELENGTH;
	if (avail < *ihl)
		return -DROCE_WIRE_ETRUNC;
	pkt->tos = ip[1];
	tot_len = droce_get_be16(ip + 2);
	pkt->ip_id = droce_get_be16(ip + 4);
	pkt->ip_frag = droce_get_be16(ip + 6);
	pkt->ttl = ip[8];
	pkt->ip_cksum = droce_get_be16(ip + 10);
	memcpy(&addr, ip + 12, sizeof(addr));
	droce_gid_from_ipv4(pkt->src_gid, addr);
	memcpy(&addr, ip + 16, sizeof(addr));
	droce_gid_from_ipv4(pkt->dst_gid, addr);
	if (ip[9] != IP_PROTO_UDP)
		return -DROCE_WIRE_ENOTROCE;
	/* MF set or a fragment offset: RoCEv2 is never fragmented. */
	if (pkt->ip_frag & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))
		return -DROCE_WIRE_ENOTROCE;
	if (tot_len < *ihl)
		return -DROCE_WIRE_ELENGTH;
	if (tot_len > avail)
		return -DROCE_WIRE_ETRUNC;
	*l4_len = tot_len - *ihl;
	return 0;
}

/* Parse the IPv6 header at ip; *l4_len gets the bytes it says follow it. */
static int
parse_ipv6(const uint8_t *ip, uint32_t avail, struct droce_wire_pkt *pkt,
	   uint32_t *l4_len)
{
	uint32_t vtc;

	if (avail < IPV6_HLEN)
		return -DROCE_WIRE_ETRUNC;
	vtc = droce_get_be32(ip);
	if ((vtc >> 28) != 6)
		return -DROCE_WIRE_EVERSION;
	pkt->tos = (uint8_t)(vtc >> 20);
	pkt->flow_label = vtc & 0xfffff;
	pkt->ttl = ip[7];
	memcpy(pkt->src_gid, ip + 8, 16);
	memcpy(pkt->dst_gid, ip + 24, 16);
	/* Extension headers are not used by RoCEv2. */
	if (ip[6] != IP_PROTO_UDP)
		return -DROCE_WIRE_ENOTROCE;
	*l4_len = droce_get_be16(ip + 4);
	if (*l4_len > avail - IPV6_HLEN)
		return -DROCE_WIRE_ETRUNC;
	return 0;
}

int
droce_wire_parse(const void *frame, uint32_t len, unsigned int flags,
		 struct droce_wire_pkt *pkt)
{
	const uint8_t *f = frame;
	const uint8_t *bth;
	const struct droce_opcode_info *op;
	uint32_t off, ihl = IPV6_HLEN, l4_len = 0, udp_len, rest;
	uint16_t type;
	int ret;

	memset(pkt, 0, sizeof(*pkt));

	/* Ethernet */
	if (len < ETH_HLEN)
		return -DROCE_WIRE_ETRUNC;
	memcpy(&pkt->dst_mac, f, RTE_ETHER_ADDR_LEN);
	memcpy(&pkt->src_mac, f + 6, RTE_ETHER_ADDR_LEN);
	type = droce_get_be16(f + 12);
	off = ETH_HLEN;
	if (type == RTE_ETHER_TYPE_VLAN) {
		if (len < ETH_HLEN + VLAN_HLEN)
			return -DROCE_WIRE_ETRUNC;
		pkt->has_vlan = true;
		pkt->vlan_tci = droce_get_be16(f + 14);
		type = droce_get_be16(f + 16);
		off += VLAN_HLEN;
	}

	/* IP */
	pkt->l3_off = (uint16_t)off;
	if (type == RTE_ETHER_TYPE_IPV4) {
		pkt->ip_version = 4;
		ret = parse_ipv4(f + off, len - off, pkt, &ihl, &l4_len);
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		pkt->ip_version = 6;
		ret = parse_ipv6(f + off, len - off, pkt, &l4_len);
	} else {
		return -DROCE_WIRE_ENOTROCE;
	}
	if (ret != 0)
		return ret;
	off += ihl;

	/* UDP */
	pkt->l4_off = (uint16_t)off;
	if (l4_len < UDP_HLEN)
		return -DROCE_WIRE_ELENGTH;
	pkt->udp_sport = droce_get_be16(f + off);
	pkt->udp_dport = droce_get_be16(f + off + 2);
	udp_len = droce_get_be16(f + off + 4);
	pkt->udp_cksum = droce_get_be16(f + off + 6);
	if (pkt->udp_dport != DROCE_UDP_PORT)
		return -DROCE_WIRE_ENOTROCE;
	if (udp_len != l4_len)
		return -DROCE_WIRE_ELENGTH;
	off += UDP_HLEN;
	pkt->frame_len = off - UDP_HLEN + udp_len;

	/* BTH */
	pkt->bth_off = (uint16_t)off;
	if (udp_len < UDP_HLEN + DROCE_BTH_LEN + DROCE_ICRC_LEN)
		return -DROCE_WIRE_ELENGTH;
	bth = f + off;
	droce_bth_decode(bth, &pkt->bth);
	if (pkt->bth.tver != 0)
		return -DROCE_WIRE_EVERSION;
	op = droce_opcode_get(pkt->bth.opcode);
	if (op == NULL)
		return -DROCE_WIRE_EOPCODE;
	pkt->op = op;

	/* Extension headers, payload, pad, ICRC */
	rest = udp_len - UDP_HLEN;
	if (rest < (uint32_t)op->hdr_len + DROCE_ICRC_LEN)
		return -DROCE_WIRE_ELENGTH;
	rest -= op->hdr_len + DROCE_ICRC_LEN;
	/* payload and pad fill whole 4-byte words */
	if (rest < pkt->bth.padcnt || (rest & 3) != 0)
		return -DROCE_WIRE_ELENGTH;
	if (!(op->flags & DROCE_OPF_PAYLOAD) && rest != 0)
		return -DROCE_WIRE_ELENGTH;
	decode_ext(bth, op, pkt);
	pkt->payload = bth + op->hdr_len;
	pkt->payload_len = rest - pkt->bth.padcnt;
	pkt->icrc = droce_icrc_get(f + pkt->frame_len - DROCE_ICRC_LEN);

	if (!(flags & DROCE_WIRE_NO_ICRC))
		pkt->icrc_ok = droce_icrc_calc(f + pkt->l3_off, pkt->frame_len -
					       pkt->l3_off - DROCE_ICRC_LEN) ==
			pkt->icrc;
	if (pkt->ip_version == 4 && !(flags & DROCE_WIRE_NO_IPCSUM) &&
	    rte_ipv4_cksum((const struct rte_ipv4_hdr *)(f + pkt->l3_off)) != 0)
		return -DROCE_WIRE_EIPCSUM;
	if (!(flags & DROCE_WIRE_NO_ICRC) && !pkt->icrc_ok)
		return -DROCE_WIRE_EICRC;
	return 0;
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
