/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Address handles for UD QPs: made from an address vector, or from the
 * GRH area and completion of a datagram received (ibv_init_ah_from_wc()
 * reads it as rdma-core does: the IPv4 header in its last 20 bytes, told
 * apart from an IPv6 header by its checksum). And multicast: UD QPs
 * attached to groups.
 */

#include <netinet/in.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_malloc.h>

#include "droce_verbs_pvt.h"

#define GRH_IPV4_OFF 20

/* Address handles alive in the process, against DROCE_MAX_AH. */
static uint32_t ah_count;

struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct droce_context *ctx = to_ctx(pd->context);
	struct droce_ah *ah;

	/* RoCE addresses by GID: there is no LID to go by */
	if (attr == NULL || attr->port_num != 1 || !attr->is_global) {
		errno = EINVAL;
		return NULL;
	}
	if (__atomic_add_fetch(&ah_count, 1, __ATOMIC_RELAXED) >
	    DROCE_MAX_AH) {
		__atomic_sub_fetch(&ah_count, 1, __ATOMIC_RELAXED);
		errno = ENOMEM;
		return NULL;
	}
	ah = rte_zmalloc("droce_ah_v", sizeof(*ah), 0);
	if (ah != NULL)
		ah->eng = droce_ah_create(ctx->dev, attr);
	else
		errno = ENOMEM;
	if (ah == NULL || ah->eng == NULL) {
		int err = errno;

		rte_free(ah);
		__atomic_sub_fetch(&ah_count, 1, __ATOMIC_RELAXED);
		errno = err;
		return NULL;
	}
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	__atomic_add_fetch(&to_pd(pd)->users, 1, __ATOMIC_RELAXED);
	return &ah->ah;
}

int
ibv_destroy_ah(struct ibv_ah *ibah)
{
	struct droce_ah *ah = to_ah(ibah);

	__atomic_sub_fetch(&to_pd(ibah->pd)->users, 1, __ATOMIC_RELEASE);
	droce_ah_destroy(ah->eng);
	rte_free(ah);
	__atomic_sub_fetch(&ah_count, 1, __ATOMIC_RELAXED);
	return 0;
}

/* The index of @p gid in the device's table, or -1 with errno set. */
static int
gid_index(struct droce_context *ctx, const uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < ctx->attr.gid_count; i++)
		if (memcmp(ctx->attr.gid[i].raw, gid, 16) == 0)
			return (int)i;
	errno = ENOENT;
	return -1;
}

/* Does the IPv4 header at @p ip have a right checksum? */
static bool
ipv4_header_ok(const uint8_t *ip)
{
	/* the sum of a header with its checksum in is all ones */
	return ip[0] == 0x45 && rte_raw_cksum(ip, 20) == 0xffff;
}

int
ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
		    struct ibv_wc *wc, struct ibv_grh *grh,
		    struct ibv_ah_attr *ah_attr)
{
	struct droce_context *ctx = to_ctx(context);
	const uint8_t *g = (const uint8_t *)grh;
	uint8_t local[16];
	uint32_t vtf;
	int idx;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	ah_attr->is_global = 1;
	vtf = be32toh(grh->version_tclass_flow);
	if ((vtf >> 28) != 6 || ipv4_header_ok(g + GRH_IPV4_OFF)) {
		const uint8_t *ip = g + GRH_IPV4_OFF;

		if ((ip[0] >> 4) != 4) {
			errno = EPROTONOSUPPORT;
			return -1;
		}
		/* a datagram sent to a group has no one address to answer */
		if ((ip[16] & 0xf0) == 0xe0) {
			errno = EINVAL;
			return -1;
		}
		memset(local, 0, 10);
		local[10] = 0xff;
		local[11] = 0xff;
		memcpy(local + 12, ip + 16, 4);
		idx = gid_index(ctx, local);
		if (idx < 0)
			return -1;
		memcpy(ah_attr->grh.dgid.raw, local, 12);
		memcpy(ah_attr->grh.dgid.raw + 12, ip + 12, 4);
		ah_attr->grh.hop_limit = ip[8];
		ah_attr->grh.traffic_class = ip[1];
	} else {
		if (grh->dgid.raw[0] == 0xff) {
			errno = EINVAL;
			return -1;
		}
		if (grh->next_hdr != IPPROTO_UDP) {
			errno = EPROTONOSUPPORT;
			return -1;
		}
		idx = gid_index(ctx, grh->dgid.raw);
		if (idx < 0)
			return -1;
		ah_attr->grh.dgid = grh->sgid;
		ah_attr->grh.hop_limit = grh->hop_limit;
		ah_attr->grh.traffic_class = (uint8_t)(vtf >> 20);
		ah_attr->grh.flow_label = vtf & 0xfffff;
	}
	ah_attr->grh.sgid_index = (uint8_t)idx;
	return 0;
}

struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
		      struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0)
		return NULL;
	return ibv_create_ah(pd, &attr);
}

int
ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
			    struct ibv_ah_attr *attr,
			    uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	struct droce_ah_eng *ah;

	ah = droce_ah_create(to_ctx(context)->dev, attr);
	if (ah == NULL)
		return -1;
	droce_ah_mac(ah, eth_mac);
	droce_ah_destroy(ah);
	if (vid != NULL)
		*vid = 0xffff;          /* no VLAN */
	return 0;
}

int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	RTE_SET_USED(lid);      /* RoCE groups are addresses, not LIDs */
	if (qp->qp_type != IBV_QPT_UD)
		return EINVAL;
	return droce_mcast_attach(to_qp(qp)->eng, gid->raw);
}

int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	RTE_SET_USED(lid);
	if (qp->qp_type != IBV_QPT_UD)
		return EINVAL;
	return droce_mcast_detach(to_qp(qp)->eng, gid->raw);
}
