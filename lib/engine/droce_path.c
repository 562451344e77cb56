/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The path to a peer, a QP's or an address handle's: its MAC (resolved by
 * droce_neigh.c, or a multicast group's), and the Ethernet, IP and UDP
 * header template every packet on it starts from.
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "droce_engine_pvt.h"
#include "droce_neigh.h"

#define DEFAULT_TTL 64

void
droce_path_ipv4_cksum(uint8_t *ip)
{
	uint16_t cksum;

	ip[10] = 0;
	ip[11] = 0;
	cksum = rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip);
	memcpy(ip + 10, &cksum, 2);
}

void
droce_path_build_header(const struct droce_dev *dev, struct droce_path *path)
{
	uint8_t *h = path->hdr;
	uint8_t *ip = h + 14;
	uint8_t ttl = path->ah.grh.hop_limit > 1 ? path->ah.grh.hop_limit :
		DEFAULT_TTL;
	/* the traffic class as given (its DSCP the device's if it gives
	 * none), its ECN field ECT(0) if the path's packets are
	 * ECN-capable */
	uint8_t tclass = path->ah.grh.traffic_class;
	uint8_t *udp;

	if ((tclass >> 2) == 0)
		tclass = (uint8_t)(dev->dscp << 2 | (tclass & 3u));
	if (path->ect)
		tclass = (uint8_t)((tclass & ~3u) | DROCE_ECN_ECT0);

	memcpy(h, &path->dmac, 6);
	memcpy(h + 6, &dev->mac, 6);
	if (path->ip_version == 4) {
		droce_put_be16(h + 12, RTE_ETHER_TYPE_IPV4);
		memset(ip, 0, 20);
		ip[0] = 0x45;
		ip[1] = tclass;
		droce_put_be16(ip + 6, RTE_IPV4_HDR_DF_FLAG);
		ip[8] = ttl;
		ip[9] = IPPROTO_UDP;
		memcpy(ip + 12, path->sgid + 12, 4);
		memcpy(ip + 16, path->dgid + 12, 4);
		droce_path_ipv4_cksum(ip);
		udp = ip + 20;
	} else {
		droce_put_be16(h + 12, RTE_ETHER_TYPE_IPV6);
		droce_put_be32(ip, 6u << 28 |
			       (uint32_t)tclass << 20 |
			       (path->ah.grh.flow_label & 0xfffff));
		droce_put_be16(ip + 4, 0);
		ip[6] = IPPROTO_UDP;
		ip[7] = ttl;
		memcpy(ip + 8, path->sgid, 16);
		memcpy(ip + 24, path->dgid, 16);
		udp = ip + 40;
	}
	droce_put_be16(udp, path->sport);
	droce_put_be16(udp + 2, DROCE_UDP_PORT);
	droce_put_be32(udp + 4, 0);
	path->hdr_len = (uint8_t)(udp + 8 - h);
}

/* The MAC of a multicast group is made from its address. */
static bool
multicast_mac(const uint8_t gid[16], struct rte_ether_addr *mac)
{
	if (droce_gid_is_ipv4(gid)) {
		if ((gid[12] & 0xf0) != 0xe0)
			return false;
		mac->addr_bytes[0] = 0x01;
		mac->addr_bytes[1] = 0x00;
		mac->addr_bytes[2] = 0x5e;
		mac->addr_bytes[3] = gid[13] & 0x7f;
		mac->addr_bytes[4] = gid[14];
		mac->addr_bytes[5] = gid[15];
		return true;
	}
	if (gid[0] != 0xff)
		return false;
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(&mac->addr_bytes[2], gid + 12, 4);
	return true;
}

bool
droce_path_ready(struct droce_shard *sh, struct droce_path *path,
		 uint64_t now)
{
	if (path->mac_ok)
		return true;
	if (droce_neigh_resolve(sh, path->dgid, &path->dmac, now) != 0)
		return false;
	path->mac_ok = true;
	droce_path_build_header(sh->dev, path);
	return true;
}

bool
droce_qp_path_ready(struct droce_qp_eng *qp, uint64_t now)
{
	return droce_path_ready(qp->shard, &qp->path, now);
}

int
droce_path_set(struct droce_shard *sh, struct droce_path *path,
	       const struct ibv_ah_attr *ah, uint64_t now)
{
	const union ibv_gid *sgid;
	int ret;

	if (!ah->is_global || ah->grh.sgid_index >= sh->dev->gid_count)
		return EINVAL;
	sgid = &sh->dev->gid[ah->grh.sgid_index];
	if (droce_gid_is_ipv4(sgid->raw) != droce_gid_is_ipv4(ah->grh.dgid.raw))
		return EINVAL;
	path->ah = *ah;
	memcpy(path->sgid, sgid->raw, 16);
	memcpy(path->dgid, ah->grh.dgid.raw, 16);
	path->ip_version = droce_gid_is_ipv4(path->dgid) ? 4 : 6;
	if (multicast_mac(path->dgid, &path->dmac)) {
		path->mac_ok = true;
		droce_path_build_header(sh->dev, path);
		return 0;
	}
	ret = droce_neigh_resolve(sh, path->dgid, &path->dmac, now);
	if (ret == -EHOSTUNREACH)
		return EHOSTUNREACH;
	path->mac_ok = ret == 0;
	if (path->mac_ok)
		droce_path_build_header(sh->dev, path);
	return 0;
}
