/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Flow rules: ibv_create_flow/ibv_destroy_flow for raw packet QPs. The
 * specs after struct ibv_flow_attr (Ethernet, IPv4, IPv4 extended, IPv6,
 * TCP, UDP; values and masks in network order) become one rule the
 * engine matches received frames against. Normal and sniffer rules are
 * offered; tunnels, inner headers, actions and VLAN or flow label
 * matches are not (EOPNOTSUPP).
 */

#include <stdlib.h>
#include <string.h>

#include "droce_verbs_pvt.h"

struct droce_flow {
	struct ibv_flow flow;
	struct droce_flow_eng eng;
	struct droce_qp *qp;
};

static void
field(struct droce_flow_field *f, const void *val, const void *mask,
      size_t n)
{
	memcpy(f->val, val, n);
	memcpy(f->mask, mask, n);
}

/* Add one spec to @p e. @return 0, EINVAL or EOPNOTSUPP. */
static int
add_spec(struct droce_flow_eng *e, const struct ibv_flow_spec *s)
{
	switch (s->hdr.type) {
	case IBV_FLOW_SPEC_ETH: {
		const struct ibv_flow_spec_eth *eth = &s->eth;

		if (s->hdr.size < sizeof(*eth))
			return EINVAL;
		if (eth->mask.vlan_tag != 0)
			return EOPNOTSUPP;
		field(&e->dmac, eth->val.dst_mac, eth->mask.dst_mac, 6);
		field(&e->smac, eth->val.src_mac, eth->mask.src_mac, 6);
		field(&e->ether_type, &eth->val.ether_type,
		      &eth->mask.ether_type, 2);
		e->layers |= DROCE_FLOW_ETH;
		return 0;
	}
	case IBV_FLOW_SPEC_IPV4: {
		const struct ibv_flow_spec_ipv4 *ip = &s->ipv4;

		if (s->hdr.size < sizeof(*ip))
			return EINVAL;
		field(&e->src_ip, &ip->val.src_ip, &ip->mask.src_ip, 4);
		field(&e->dst_ip, &ip->val.dst_ip, &ip->mask.dst_ip, 4);
		e->layers |= DROCE_FLOW_IPV4;
		return 0;
	}
	case IBV_FLOW_SPEC_IPV4_EXT: {
		const struct ibv_flow_spec_ipv4_ext *ip = &s->ipv4_ext;

		if (s->hdr.size < sizeof(*ip))
			return EINVAL;
		if (ip->mask.flags != 0)
			return EOPNOTSUPP;
		field(&e->src_ip, &ip->val.src_ip, &ip->mask.src_ip, 4);
		field(&e->dst_ip, &ip->val.dst_ip, &ip->mask.dst_ip, 4);
		field(&e->proto, &ip->val.proto, &ip->mask.proto, 1);
		field(&e->tos, &ip->val.tos, &ip->mask.tos, 1);
		field(&e->ttl, &ip->val.ttl, &ip->mask.ttl, 1);
		e->layers |= DROCE_FLOW_IPV4;
		return 0;
	}
	case IBV_FLOW_SPEC_IPV6: {
		const struct ibv_flow_spec_ipv6 *ip = &s->ipv6;

		if (s->hdr.size < sizeof(*ip))
			return EINVAL;
		if (ip->mask.flow_label != 0)
			return EOPNOTSUPP;
		field(&e->src_ip, ip->val.src_ip, ip->mask.src_ip, 16);
		field(&e->dst_ip, ip->val.dst_ip, ip->mask.dst_ip, 16);
		field(&e->proto, &ip->val.next_hdr, &ip->mask.next_hdr, 1);
		field(&e->tos, &ip->val.traffic_class,
		      &ip->mask.traffic_class, 1);
		field(&e->ttl, &ip->val.hop_limit, &ip->mask.hop_limit, 1);
		e->layers |= DROCE_FLOW_IPV6;
		return 0;
	}
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP: {
		const struct ibv_flow_spec_tcp_udp *l4 = &s->tcp_udp;

		if (s->hdr.size < sizeof(*l4))
			return EINVAL;
		if (e->layers & (DROCE_FLOW_TCP | DROCE_FLOW_UDP))
			return EINVAL;
		field(&e->sport, &l4->val.src_port, &l4->mask.src_port, 2);
		field(&e->dport, &l4->val.dst_port, &l4->mask.dst_port, 2);
		e->layers |= s->hdr.type == IBV_FLOW_SPEC_TCP ?
			DROCE_FLOW_TCP : DROCE_FLOW_UDP;
		return 0;
	}
	default:
		return EOPNOTSUPP;
	}
}

static struct ibv_flow *
create_flow(struct ibv_qp *ibqp, struct ibv_flow_attr *attr)
{
	struct droce_qp *qp = to_qp(ibqp);
	const uint8_t *p = (const uint8_t *)(attr + 1);
	struct droce_flow *f;
	unsigned int i;
	int err = 0;

	if (ibqp->qp_type != IBV_QPT_RAW_PACKET || attr->port != 1 ||
	    attr->comp_mask != 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->type != IBV_FLOW_ATTR_NORMAL &&
	     attr->type != IBV_FLOW_ATTR_SNIFFER) || attr->flags != 0) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	f->eng.sniffer = attr->type == IBV_FLOW_ATTR_SNIFFER;
	for (i = 0; i < attr->num_of_specs && err == 0; i++) {
		/* specs follow each other unaligned (applications pack
		 * them): read each into one of our own */
		struct ibv_flow_spec s;

		memset(&s, 0, sizeof(s));
		memcpy(&s.hdr, p, sizeof(s.hdr));
		if (s.hdr.size < sizeof(s.hdr)) {
			err = EINVAL;
			break;
		}
		memcpy(&s, p, RTE_MIN((size_t)s.hdr.size, sizeof(s)));
		err = add_spec(&f->eng, &s);
		p += s.hdr.size;
	}
	/* a sniffer takes everything: specs would be a mistake */
	if (err == 0 && f->eng.sniffer && attr->num_of_specs != 0)
		err = EINVAL;
	if (err == 0 && (f->eng.layers & DROCE_FLOW_IPV4) &&
	    (f->eng.layers & DROCE_FLOW_IPV6))
		err = EINVAL;
	f->qp = qp;
	f->eng.qp = qp->eng;
	if (err == 0 && droce_flow_attach(&f->eng) < 0)
		err = ENOMEM;
	if (err != 0) {
		free(f);
		errno = err;
		return NULL;
	}
	__atomic_add_fetch(&qp->flows, 1, __ATOMIC_RELAXED);
	f->flow.context = ibqp->context;
	f->flow.handle = (uint32_t)(uintptr_t)f;
	return &f->flow;
}

static int
destroy_flow(struct ibv_flow *flow)
{
	struct droce_flow *f = container_of(flow, struct droce_flow, flow);

	droce_flow_detach(&f->eng);
	__atomic_sub_fetch(&f->qp->flows, 1, __ATOMIC_RELEASE);
	free(f);
	return 0;
}

void
droce_verbs_set_flow_ops(struct droce_context *ctx)
{
	ctx->vctx.ibv_create_flow = create_flow;
	ctx->vctx.ibv_destroy_flow = destroy_flow;
}
