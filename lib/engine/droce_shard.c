/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * A device made: its port found and started (droce_port.c), behind
 * net_fault if asked, its addresses and GIDs, its mirror, and its shards,
 * one per engine lcore it runs on, each with its own queues and rings.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_ring.h>
#include <rte_string_fns.h>

#include "droce_engine_pvt.h"
#include "droce_mirror.h"
#include "droce_eth_fault.h"
#include "droce_start.h"

/* frames on their way from one shard to another: as a NIC's receive
 * ring, a few bursts (the mbufs they hold are the pool's) */
#define HANDOFF_SLOTS 256

/* GID table: the IPv4-mapped address, the link-local IPv6 address, then
 * the configured IPv6 address. */
static void
dev_gids(struct droce_dev *dev)
{
	const uint8_t *m = dev->mac.addr_bytes;
	uint8_t *ll = dev->ipv6_ll;

	memset(ll, 0, 16);
	ll[0] = 0xfe;
	ll[1] = 0x80;
	ll[8] = m[0] ^ 2;
	ll[9] = m[1];
	ll[10] = m[2];
	ll[11] = 0xff;
	ll[12] = 0xfe;
	ll[13] = m[3];
	ll[14] = m[4];
	ll[15] = m[5];
	dev->gid_count = 0;
	if (dev->ipv4 != 0)
		droce_gid_from_ipv4(dev->gid[dev->gid_count++].raw, dev->ipv4);
	memcpy(dev->gid[dev->gid_count++].raw, ll, 16);
	if (dev->has_ipv6)
		memcpy(dev->gid[dev->gid_count++].raw, dev->ipv6, 16);
}

/*
 * Each device mirrors what its port sends and receives to a file of its
 * own: the configured path with "%s" replaced by the device name, or with
 * "-NAME" added before its extension.
 */
static int
mirror_open(const struct droce_dev *dev, struct droce_pcap_mirror **mirror)
{
	const char *p = droce_eng.cfg.pcap;
	const char *pct = strstr(p, "%s");
	const char *dot = strrchr(p, '.');
	char path[sizeof(droce_eng.cfg.pcap) + 64];
	int ret;

	if (pct != NULL)
		snprintf(path, sizeof(path), "%.*s%s%s", (int)(pct - p), p,
			 dev->name, pct + 2);
	else if (dot != NULL && strchr(dot, '/') == NULL)
		snprintf(path, sizeof(path), "%.*s-%s%s", (int)(dot - p), p,
			 dev->name, dot);
	else
		snprintf(path, sizeof(path), "%s-%s", p, dev->name);
	ret = droce_mirror_open(path, mirror);
	if (ret < 0)
		droce_start_error("%s: cannot write %s: %s", dev->name, path,
				  strerror(-ret));
	return ret;
}

/* A ring of @p count slots (count - 1 entries), single consumer. Not a
 * named ring: an engine started again in the same process makes its
 * own. */
static int
ring_alloc(const char *name, unsigned int count, struct rte_ring **r)
{
	ssize_t size = rte_ring_get_memsize(count);
	int ret;

	if (size < 0)
		return (int)size;
	*r = rte_zmalloc(name, (size_t)size, RTE_CACHE_LINE_SIZE);
	if (*r == NULL)
		return -ENOMEM;
	ret = rte_ring_init(*r, name, count, RING_F_SC_DEQ);
	if (ret < 0) {
		rte_free(*r);
		*r = NULL;
	}
	return ret;
}

/* The ring posters kick sleeping QPs into: room for every QP (a QP is
 * put to sleep at most once a pass, is kicked at most once each time,
 * and each pass empties the ring first). */
static int
kick_ring(struct droce_shard *sh)
{
	return ring_alloc("droce_kick", rte_align32pow2(DROCE_MAX_QP + 1 + 1),
			  &sh->kick);
}

/* The ring of frames other shards received for @p sh. */
static int
handoff_ring(struct droce_shard *sh)
{
	return ring_alloc("droce_handoff", HANDOFF_SLOTS, &sh->handoff);
}

/*
 * The @p nshards shards of @p dev, each with its own queues and rings, on
 * the engine lcores @p c names; the port's receive queues dealt among
 * them; each mirroring to @p mirror.
 */
static int
shards_create(struct droce_dev *dev, const struct droce_dev_cfg *c,
	      unsigned int idx, uint32_t nshards, uint16_t nrxq,
	      struct droce_pcap_mirror *mirror)
{
	uint32_t i;
	uint16_t q;
	int ret;

	for (i = 0; i < nshards; i++) {
		struct droce_shard *s = rte_zmalloc("droce_shard", sizeof(*s),
						    RTE_CACHE_LINE_SIZE);

		if (s == NULL)
			return -ENOMEM;
		dev->shards[dev->nshards++] = s;
		s->dev = dev;
		s->index = i;
		s->port_id = dev->port_id;
		s->mirror = mirror;
		s->txq = (uint16_t)i;
		for (q = (uint16_t)i; q < nrxq; q = (uint16_t)(q + nshards))
			s->rxq[s->nrxq++] = q;
		ret = kick_ring(s);
		if (ret == 0 && nshards > 1)
			ret = handoff_ring(s);
		if (ret < 0)
			return ret;
		s->lc = &droce_eng.lcores[c->nlcores != 0 ? c->lcores[i] :
					  idx % droce_eng.nlcores];
		s->lc->shards[s->lc->nshards++] = s;
	}
	return 0;
}

/* Its port: found (by name, or a port of net_fault's switch), put behind
 * net_fault if asked. @return its port id, or a negative errno. */
static int
dev_port(const struct droce_dev_cfg *c, uint32_t nshards)
{
	char why[256];
	bool sw = strncmp(c->port, "switch:", 7) == 0;
	int port, fport;

	port = sw ? droce_eth_fault_switch_port(c->name, c->port + 7,
			(uint16_t)nshards, rte_socket_id(), c->fault) :
		droce_port_find(c->port, rte_socket_id());
	if (port < 0) {
		port = droce_port_why(c, port, why, sizeof(why));
		droce_start_error("%s: no port '%s': %s", c->name, c->port,
				  why);
		return port;
	}
	if (sw || c->fault[0] == '\0')
		return port;
	fport = droce_eth_fault_wrap(c->name, (uint16_t)port, c->fault);
	if (fport < 0)
		droce_start_error("%s: cannot put port %d behind net_fault "
				  "(%s): %s", c->name, port, c->fault,
				  strerror(-fport));
	return fport;
}

int
droce_dev_create(const struct droce_dev_cfg *c, unsigned int idx,
		 struct rte_mempool *pool)
{
	struct droce_pcap_mirror *mirror = NULL;
	struct droce_dev *dev;
	char why[256];
	uint32_t nshards = RTE_MAX(c->nlcores, 1u);
	uint16_t nrxq;
	int port;
	int ret;

	dev = rte_zmalloc("droce_dev", sizeof(*dev), RTE_CACHE_LINE_SIZE);
	if (dev == NULL)
		return -ENOMEM;
	strlcpy(dev->name, c->name, sizeof(dev->name));
	port = dev_port(c, nshards);
	if (port < 0) {
		rte_free(dev);
		return port;
	}
	dev->port_id = (uint16_t)port;
	dev->dma_map = !droce_port_reads_va(dev->port_id) ||
		droce_eth_fault_dma_only(dev->port_id);
	/* (its frames to itself go through its faults) */
	dev->port_loops = droce_eth_fault_loopback(dev->port_id);
	dev->pool = pool;
	if (c->has_mac)
		dev->mac = c->mac;
	else
		rte_eth_macaddr_get(dev->port_id, &dev->mac);
	dev->ipv4 = c->ipv4;
	dev->ipv4_prefix = c->ipv4_prefix;
	dev->has_ipv6 = c->has_ipv6;
	memcpy(dev->ipv6, c->ipv6, 16);
	dev->eth_mtu = c->mtu;
	dev->cc = c->cc;
	dev->cc_rate_max = c->cc.rate_max;
	dev->dscp = c->dscp;
	dev->key_rand = rte_rand();
	rte_spinlock_init(&dev->neigh_lock);
	rte_spinlock_init(&dev->mw_lock);
	/* (a switch's port receives on its queue 0 alone) */
	nrxq = strncmp(c->port, "ring:", 5) == 0 ?
		(uint16_t)droce_port_ring_queues(c->port + 5,
						 strcspn(c->port + 5, ":")) :
		1;
	ret = droce_port_configure(dev, c, &nshards, &nrxq);
	if (ret < 0) {
		ret = droce_port_why(c, ret, why, sizeof(why));
		droce_start_error("%s: cannot start port %u (%s): %s",
				  dev->name, dev->port_id, c->port, why);
		rte_free(dev);
		return ret;
	}
	dev->active_mtu = droce_active_mtu(dev->eth_mtu);
	dev_gids(dev);
	if (droce_eng.cfg.pcap[0] != '\0') {
		ret = mirror_open(dev, &mirror);
		if (ret < 0) {
			rte_eth_dev_stop(dev->port_id);
			rte_free(dev);
			return ret;
		}
	}
	/* (a failure from here on ends the engine's start: what was made
	 * stays until the process exits) */
	ret = shards_create(dev, c, idx, nshards, nrxq, mirror);
	if (ret < 0)
		return ret;
	droce_eng.devs[droce_eng.ndevs++] = dev;
	if (dev->nshards > 1)
		droce_eng.cq_shared = true;
	DROCE_LOG(INFO, "%s: port %u, lcore %u (of %u), MTU %u", dev->name,
		  dev->port_id, dev->shards[0]->lc->lcore_id, dev->nshards,
		  dev->eth_mtu);
	return 0;
}
