/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Neighbours: the engine answers ARP requests and IPv6 neighbour
 * solicitations for its addresses, so that a kernel peer on the same L2
 * reaches it, and resolves the MAC of its QPs' peers the same way. The
 * table is the device's primary shard's, which receives the frames that
 * are not RoCE; every shard looks addresses up in it, under its lock.
 */

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_ip.h>

#include "droce_engine_pvt.h"
#include "droce_neigh.h"
#include "droce_tx.h"

#define ICMPV6_NS 135
#define ICMPV6_NA 136
#define ND_OPT_SRC_LL 1
#define ND_OPT_TGT_LL 2
#define NA_FLAG_SOLICITED 0x40
#define NA_FLAG_OVERRIDE 0x20
#define IP_PROTO_ICMPV6 58

/* Retry every 100 ms for the first 10 tries, then every second. */
#define RETRY_FAST_MS 100
#define RETRY_SLOW_MS 1000
#define FAST_TRIES 10

static struct droce_neigh *
neigh_find(struct droce_dev *dev, const uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < DROCE_MAX_NEIGH; i++)
		if (dev->neigh[i].state != DROCE_NEIGH_FREE &&
		    memcmp(dev->neigh[i].gid, gid, 16) == 0)
			return &dev->neigh[i];
	return NULL;
}

/* A free entry, or NULL. */
static struct droce_neigh *
neigh_free(struct droce_dev *dev)
{
	unsigned int i;

	for (i = 0; i < DROCE_MAX_NEIGH; i++)
		if (dev->neigh[i].state == DROCE_NEIGH_FREE)
			return &dev->neigh[i];
	return NULL;
}

/*
 * An entry for an address droce must resolve itself: a free one, else a
 * pending one, else the next valid one round the table (paths keep the
 * MAC they resolved, so only later paths to its address ask again).
 */
static struct droce_neigh *
neigh_alloc(struct droce_dev *dev)
{
	struct droce_neigh *n = neigh_free(dev);
	unsigned int i;

	if (n != NULL)
		return n;
	for (i = 0; i < DROCE_MAX_NEIGH; i++)
		if (dev->neigh[i].state == DROCE_NEIGH_PENDING)
			return &dev->neigh[i];
	n = &dev->neigh[dev->neigh_evict];
	dev->neigh_evict = (dev->neigh_evict + 1) % DROCE_MAX_NEIGH;
	return n;
}

/*
 * What a peer's ARP or neighbour discovery says of @p gid. An answer
 * (@p solicited) fills an entry droce asked for; a request for droce's
 * address makes an entry for its sender if there is a free one. Neither
 * changes a resolved entry nor takes one from another address: anyone
 * on the link can send them, and a storm of them must not redirect or
 * push out the peers droce talks to. On the primary shard, whose the
 * table is: under its lock (the other shards resolve in it).
 */
static void
neigh_learn(struct droce_dev *dev, const uint8_t gid[16],
	    const struct rte_ether_addr *mac, bool solicited)
{
	struct droce_neigh *n;

	rte_spinlock_lock(&dev->neigh_lock);
	n = neigh_find(dev, gid);
	if (n == NULL) {
		if (solicited)
			goto out;
		n = neigh_free(dev);
		if (n == NULL)
			goto out;
		memcpy(n->gid, gid, 16);
	} else if (n->state == DROCE_NEIGH_PENDING) {
		dev->neigh_pending--;
	} else {
		goto out;
	}
	n->mac = *mac;
	n->state = DROCE_NEIGH_VALID;
out:
	rte_spinlock_unlock(&dev->neigh_lock);
}

void
droce_neigh_heard(struct droce_dev *dev, const uint8_t gid[16],
		  const struct rte_ether_addr *mac)
{
	neigh_learn(dev, gid, mac, false);
}

static struct rte_mbuf *
frame_alloc(struct droce_shard *sh, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(sh->dev->pool);

	if (m == NULL) {
		sh->stats.no_mbuf++;
		return NULL;
	}
	if (rte_pktmbuf_append(m, len) == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

static void
arp_send(struct droce_shard *sh, uint16_t op, const struct rte_ether_addr *tha,
	 rte_be32_t tip)
{
	struct rte_mbuf *m = frame_alloc(sh, sizeof(struct rte_ether_hdr) +
					 sizeof(struct rte_arp_hdr));
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;

	if (m == NULL)
		return;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	arp = (struct rte_arp_hdr *)(eth + 1);
	if (op == RTE_ARP_OP_REQUEST)
		memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	else
		eth->dst_addr = *tha;
	eth->src_addr = sh->dev->mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = sh->dev->mac;
	arp->arp_data.arp_sip = sh->dev->ipv4;
	if (op == RTE_ARP_OP_REQUEST)
		memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	else
		arp->arp_data.arp_tha = *tha;
	arp->arp_data.arp_tip = tip;
	droce_shard_tx(sh, m);
}

void
droce_neigh_arp_input(struct droce_shard *sh, struct rte_mbuf *m)
{
	const struct rte_arp_hdr *arp;
	struct rte_ether_addr sha;
	rte_be32_t sip, tip;
	uint8_t gid[16];
	uint16_t op;

	if (m->data_len < sizeof(struct rte_ether_hdr) + sizeof(*arp))
		goto out;
	arp = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *,
				      sizeof(struct rte_ether_hdr));
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4)
		goto out;
	op = rte_be_to_cpu_16(arp->arp_opcode);
	sha = arp->arp_data.arp_sha;
	sip = arp->arp_data.arp_sip;
	tip = arp->arp_data.arp_tip;
	if (sh->dev->ipv4 == 0 || tip != sh->dev->ipv4)
		goto out;
	droce_gid_from_ipv4(gid, sip);
	/* a request for us also tells us where its sender is */
	neigh_learn(sh->dev, gid, &sha, op != RTE_ARP_OP_REQUEST);
	if (op == RTE_ARP_OP_REQUEST)
		arp_send(sh, RTE_ARP_OP_REPLY, &sha, sip);
out:
	rte_pktmbuf_free(m);
}

/* Solicited-node multicast address and MAC of an IPv6 target. */
static void
solicited_node(const uint8_t target[16], uint8_t ip[16],
	       struct rte_ether_addr *mac)
{
	static const uint8_t prefix[13] = {
		0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff };

	memcpy(ip, prefix, sizeof(prefix));
	memcpy(ip + 13, target + 13, 3);
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(mac->addr_bytes + 2, ip + 12, 4);
}

/* Our source address towards dst: link-local for link-local peers. */
static const uint8_t *
nd_source(const struct droce_dev *dev, const uint8_t dst[16])
{
	if (dev->has_ipv6 && !(dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80) &&
	    dst[0] != 0xff)
		return dev->ipv6;
	return dev->ipv6_ll;
}

/* Send an NS (to the solicited-node group) or an NA (to dst). */
static void
nd_send(struct droce_shard *sh, uint8_t type, const uint8_t target[16],
	const uint8_t dst_ip[16], const struct rte_ether_addr *dst_mac)
{
	const uint16_t icmp_len = 8 + 16 + 8;
	struct rte_mbuf *m = frame_alloc(sh, 14 + 40 + icmp_len);
	struct rte_ether_addr mac;
	uint8_t *f, *ip, *icmp, group[16];
	uint16_t cksum;

	if (m == NULL)
		return;
	f = rte_pktmbuf_mtod(m, uint8_t *);
	ip = f + 14;
	icmp = ip + 40;
	if (type == ICMPV6_NS) {
		solicited_node(target, group, &mac);
		dst_ip = group;
		dst_mac = &mac;
	}
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, &sh->dev->mac, 6);
	droce_put_be16(f + 12, RTE_ETHER_TYPE_IPV6);
	droce_put_be32(ip, 6u << 28);
	droce_put_be16(ip + 4, icmp_len);
	ip[6] = IP_PROTO_ICMPV6;
	ip[7] = 255;
	memcpy(ip + 8,
	       nd_source(sh->dev, type == ICMPV6_NS ? target : dst_ip), 16);
	memcpy(ip + 24, dst_ip, 16);
	memset(icmp, 0, icmp_len);
	icmp[0] = type;
	if (type == ICMPV6_NA)
		icmp[4] = NA_FLAG_SOLICITED | NA_FLAG_OVERRIDE;
	memcpy(icmp + 8, target, 16);
	icmp[24] = type == ICMPV6_NS ? ND_OPT_SRC_LL : ND_OPT_TGT_LL;
	icmp[25] = 1;                 /* in units of 8 bytes */
	memcpy(icmp + 26, &sh->dev->mac, 6);
	cksum = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip, icmp);
	memcpy(icmp + 2, &cksum, 2);
	droce_shard_tx(sh, m);
}

static bool
ours_v6(const struct droce_dev *dev, const uint8_t addr[16])
{
	return memcmp(addr, dev->ipv6_ll, 16) == 0 ||
		(dev->has_ipv6 && memcmp(addr, dev->ipv6, 16) == 0);
}

/* The link-layer address option of type @p want, if present. */
static const uint8_t *
nd_option(const uint8_t *opt, uint32_t len, uint8_t want)
{
	while (len >= 8 && opt[1] != 0 && (uint32_t)opt[1] * 8 <= len) {
		if (opt[0] == want && opt[1] == 1)
			return opt + 2;
		len -= (uint32_t)opt[1] * 8;
		opt += (uint32_t)opt[1] * 8;
	}
	return NULL;
}

/* Check an ICMPv6 checksum (the frame is ours to modify: we free it). */
static bool
icmp_cksum_ok(struct rte_mbuf *m, const uint8_t *ip, const uint8_t *icmp)
{
	uint8_t *c = rte_pktmbuf_mtod_offset(m, uint8_t *, icmp + 2 -
					     rte_pktmbuf_mtod(m, uint8_t *));
	uint16_t stored, fresh;

	memcpy(&stored, c, 2);
	memset(c, 0, 2);
	fresh = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip, icmp);
	memcpy(c, &stored, 2);
	/* DPDK's sum writes a result of 0 as 0xffff, as UDP does */
	return stored == fresh || (stored == 0 && fresh == 0xffff);
}

bool
droce_neigh_nd_input(struct droce_shard *sh, struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *ip = f + 14, *icmp = ip + 40, *ll;
	uint32_t plen = droce_get_be16(ip + 4);
	struct rte_ether_addr mac;

	if (m->data_len < 14 + 40 + 24 || plen < 24 ||
	    plen > m->data_len - 14u - 40u)
		return false;
	if (icmp[0] != ICMPV6_NS && icmp[0] != ICMPV6_NA)
		return false;
	/* ND comes from the link only, with a valid checksum */
	if (ip[7] != 255 || icmp[1] != 0 || !icmp_cksum_ok(m, ip, icmp))
		goto done;
	if (icmp[0] == ICMPV6_NS) {
		if (!ours_v6(sh->dev, icmp + 8))
			goto done;
		ll = nd_option(icmp + 24, plen - 24, ND_OPT_SRC_LL);
		if (ll == NULL)
			goto done;
		memcpy(&mac, ll, 6);
		neigh_learn(sh->dev, ip + 8, &mac, false);
		nd_send(sh, ICMPV6_NA, icmp + 8, ip + 8, &mac);
	} else {
		ll = nd_option(icmp + 24, plen - 24, ND_OPT_TGT_LL);
		if (ll == NULL)
			goto done;
		memcpy(&mac, ll, 6);
		neigh_learn(sh->dev, icmp + 8, &mac, true);
	}
done:
	rte_pktmbuf_free(m);
	return true;
}

static void
neigh_solicit(struct droce_shard *sh, struct droce_neigh *n, uint64_t now)
{
	uint64_t ms = n->tries < FAST_TRIES ? RETRY_FAST_MS : RETRY_SLOW_MS;

	if (droce_gid_is_ipv4(n->gid)) {
		rte_be32_t ip;

		memcpy(&ip, n->gid + 12, 4);
		arp_send(sh, RTE_ARP_OP_REQUEST, NULL, ip);
	} else {
		nd_send(sh, ICMPV6_NS, n->gid, NULL, NULL);
	}
	if (n->tries < UINT8_MAX)
		n->tries++;
	n->next_try = now + droce_eng.hz / 1000 * ms;
}

/* Is @p gid one of the device's own? */
static bool
gid_is_own(const struct droce_dev *dev, const uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < dev->gid_count; i++)
		if (memcmp(dev->gid[i].raw, gid, 16) == 0)
			return true;
	return false;
}

int
droce_neigh_resolve(struct droce_shard *sh, const uint8_t gid[16],
		    struct rte_ether_addr *mac, uint64_t now)
{
	struct droce_dev *dev = sh->dev;
	struct droce_neigh *n;
	int ret = 0;

	if (gid_is_own(dev, gid)) {
		/* loopback: from now on each flush looks for frames to
		 * the device itself (droce_shard_tx_flush()) */
		*mac = dev->mac;
		__atomic_store_n(&dev->loopback, true, __ATOMIC_RELEASE);
		return 0;
	}
	rte_spinlock_lock(&dev->neigh_lock);
	n = neigh_find(dev, gid);
	if (n == NULL) {
		if (droce_gid_is_ipv4(gid) && dev->ipv4 == 0) {
			rte_spinlock_unlock(&dev->neigh_lock);
			return -EHOSTUNREACH;
		}
		n = neigh_alloc(dev);
		if (n->state != DROCE_NEIGH_PENDING)
			__atomic_store_n(&dev->neigh_pending,
					 dev->neigh_pending + 1,
					 __ATOMIC_RELAXED);
		memset(n, 0, sizeof(*n));
		memcpy(n->gid, gid, 16);
		n->state = DROCE_NEIGH_PENDING;
		/* the first ask goes from the asking shard's queue */
		neigh_solicit(sh, n, now);
	}
	if (n->state == DROCE_NEIGH_VALID)
		*mac = n->mac;
	else
		ret = -EAGAIN;
	rte_spinlock_unlock(&dev->neigh_lock);
	return ret;
}

void
droce_neigh_timer(struct droce_shard *sh, uint64_t now)
{
	unsigned int i;

	/* the primary asks again (the others add to neigh_pending) */
	if (sh->index != 0 ||
	    __atomic_load_n(&sh->dev->neigh_pending, __ATOMIC_RELAXED) == 0)
		return;
	rte_spinlock_lock(&sh->dev->neigh_lock);
	for (i = 0; i < DROCE_MAX_NEIGH; i++) {
		struct droce_neigh *n = &sh->dev->neigh[i];

		if (n->state == DROCE_NEIGH_PENDING && now >= n->next_try)
			neigh_solicit(sh, n, now);
	}
	rte_spinlock_unlock(&sh->dev->neigh_lock);
}
