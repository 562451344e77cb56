/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Ports: found (or probed, or made from a ring pair), configured (queues,
 * RSS and its indirection table, DCQCN's rates from the port's speed),
 * started, and stopped and started again by control calls.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_string_fns.h>

#include "droce_engine_pvt.h"
#include "droce_memif.h"
#include "droce_tx.h"
#include "droce_start.h"

#define RX_DESC 1024
#define TX_DESC 1024
#define START_RETRY_MS 100
#define START_TRIES 100

/* On the device's lcore: no burst is running on the port. */
static int
port_stop_call(struct droce_shard *sh, void *arg)
{
	int ret;

	RTE_SET_USED(arg);
	if (sh->port_stopped)
		return 0;
	/* the queued frames go too (droce_shard_tx_flush() drops them);
	 * droce_dev_query() reads the flag from other threads */
	__atomic_store_n(&sh->port_stopped, true, __ATOMIC_RELAXED);
	droce_shard_tx_flush(sh);
	ret = rte_eth_dev_stop(sh->port_id);
	if (ret < 0) {
		__atomic_store_n(&sh->port_stopped, false, __ATOMIC_RELAXED);
		DROCE_LOG(ERR, "%s: cannot stop port %u: %s", sh->dev->name,
			  sh->port_id, strerror(-ret));
		return ret;
	}
	DROCE_LOG(INFO, "%s: port %u stopped", sh->dev->name, sh->port_id);
	droce_dev_link_event(sh->dev, false);
	return 0;
}

static int
port_start_call(struct droce_shard *sh, void *arg)
{
	int ret;

	RTE_SET_USED(arg);
	if (!sh->port_stopped)
		return 0;
	ret = rte_eth_dev_start(sh->port_id);
	if (ret < 0) {
		DROCE_LOG(ERR, "%s: cannot start port %u: %s", sh->dev->name,
			  sh->port_id, strerror(-ret));
		return ret;
	}
	__atomic_store_n(&sh->port_stopped, false, __ATOMIC_RELAXED);
	/* PORT_ACTIVE as soon as the link is up, not a check period on */
	sh->dev->link_check_at = 0;
	DROCE_LOG(INFO, "%s: port %u started", sh->dev->name, sh->port_id);
	return 0;
}

int
droce_shard_bursts(struct droce_shard *sh, void *arg)
{
	__atomic_store_n(&sh->port_stopped, arg != NULL, __ATOMIC_RELAXED);
	droce_shard_tx_flush(sh);
	return 0;
}

/* The other shards stop their bursts before the primary stops the port,
 * and start them after it started it. */
int
droce_dev_port_stop(struct droce_dev *dev)
{
	struct droce_shard *sh = dev->shards[0];
	uint32_t i;
	int ret;

	for (i = 1; i < dev->nshards; i++)
		droce_shard_call(dev->shards[i], droce_shard_bursts, sh);
	ret = droce_shard_call(sh, port_stop_call, NULL);
	for (i = 1; ret < 0 && i < dev->nshards; i++)
		droce_shard_call(dev->shards[i], droce_shard_bursts, NULL);
	return ret;
}

int
droce_dev_port_start(struct droce_dev *dev)
{
	return droce_dev_call_shards(dev, port_start_call, droce_shard_bursts,
				     NULL);
}

/*
 * The queues of ring pair @p pair (@p len characters): as many as the
 * most engine lcores of a device on either end, each end's queue q
 * wired to the other's.
 */
unsigned int
droce_port_ring_queues(const char *pair, size_t len)
{
	const struct droce_cfg *cfg = &droce_eng.cfg;
	unsigned int i, nq = 1;

	for (i = 0; i < cfg->ndevs; i++) {
		const char *p = cfg->dev[i].port;

		if (strncmp(p, "ring:", 5) == 0 &&
		    strncmp(p + 5, pair, len) == 0 && p[5 + len] == ':')
			nq = RTE_MAX(nq, cfg->dev[i].nlcores);
	}
	return nq;
}

/* "ring:PAIR:END": one end of a pair of ports wired back to back. */
static int
ring_port(const char *spec, unsigned int socket)
{
	char pair[17], rname[RTE_RING_NAMESIZE], pname[RTE_ETH_NAME_MAX_LEN];
	struct rte_ring *r[2][DROCE_MAX_LCORES];
	const char *colon;
	unsigned long end;
	unsigned int i, q, nq;
	int port;

	colon = strrchr(spec, ':');
	/* the pair's name goes into ring names: at most 16 characters */
	if (colon == NULL || colon == spec + 4 || colon - spec - 5 >= 17)
		return -EINVAL;
	end = strtoul(colon + 1, NULL, 10);
	if (end > 1)
		return -EINVAL;
	snprintf(pair, sizeof(pair), "%.*s", (int)(colon - spec - 5), spec + 5);
	nq = droce_port_ring_queues(pair, strlen(pair));
	for (i = 0; i < 2; i++) {
		for (q = 0; q < nq; q++) {
			/* queue 0's name is that of a pair of one queue */
			if (q == 0)
				snprintf(rname, sizeof(rname), "drp_%s_%u",
					 pair, i);
			else
				snprintf(rname, sizeof(rname), "drp_%s_%u_%u",
					 pair, i, q);
			r[i][q] = rte_ring_lookup(rname);
			if (r[i][q] == NULL)
				r[i][q] = rte_ring_create(rname, 4096,
					(int)socket,
					RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (r[i][q] == NULL)
				return -rte_errno;
		}
	}
	snprintf(pname, sizeof(pname), "droce_ring_%s_%lu", pair, end);
	/* end 0 sends on rings 0 and receives on rings 1; end 1 the
	 * reverse */
	port = rte_eth_from_rings(pname, r[1 - end], nq, r[end], nq, socket);
	return port < 0 ? -rte_errno : port;
}

bool
droce_port_devargs(const char *eal_args, const char *port, char *buf,
		   size_t len)
{
	size_t n = strcspn(port, ",");
	const char *p = eal_args;

	strlcpy(buf, port, len);
	if (port[n] != '\0')
		return false;
	while ((p = strstr(p, "--vdev")) != NULL) {
		p += strlen("--vdev");
		p += strspn(p, "= \t");
		if (strncmp(p, port, n) == 0 && strchr(", \t", p[n]) != NULL) {
			snprintf(buf, len, "%.*s", (int)strcspn(p, " \t"), p);
			return true;
		}
	}
	return false;
}

/* The port a device spec names, probing it if it is not there yet. */
int
droce_port_find(const char *spec, unsigned int socket)
{
	char name[RTE_ETH_NAME_MAX_LEN], args[sizeof(droce_eng.cfg.eal_args)];
	uint16_t port;

	if (strncmp(spec, "ring:", 5) == 0)
		return ring_port(spec, socket);
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(spec, ","), spec);
	if (rte_eth_dev_get_port_by_name(name, &port) == 0)
		return port;
	/* a --vdev of the EAL arguments whose probe failed (DPDK's log
	 * says why) is not probed again by its name alone: that would be
	 * a device of its driver's defaults (net_memif's: a client on
	 * /run/memif.sock), not the one configured */
	if (droce_port_devargs(droce_eng.cfg.eal_args, spec, args,
			       sizeof(args)))
		return -ENODEV;
	if (rte_dev_probe(spec) < 0)
		return -ENODEV;
	if (rte_eth_dev_get_port_by_name(name, &port) == 0)
		return port;
	return -ENODEV;
}

/*
 * Whether @p port reads what it sends at its virtual address: a virtual
 * device (net_ring, memif, af_packet, af_xdp, tap) copies or hands on
 * mbufs in the process, where a NIC's DMA would need the registered
 * memory mapped for it and its IO address. Zero copy is for the former.
 */
bool
droce_port_reads_va(uint16_t port)
{
	struct rte_eth_dev_info info;
	const struct rte_bus *bus;

	if (rte_eth_dev_info_get(port, &info) != 0 || info.device == NULL)
		return false;
	bus = rte_dev_bus(info.device);
	return bus != NULL && strcmp(rte_bus_name(bus), "vdev") == 0;
}

/*
 * DCQCN's parameters for the port's QPs: as configured, the highest rate
 * the port's speed unless set (100 Gb/s where the port says none).
 */
static void
cc_params(struct droce_dev *dev)
{
	struct rte_eth_link link;
	uint64_t mbps = 100000;

	if (dev->cc_rate_max != 0) {
		dev->cc.rate_max = dev->cc_rate_max;
		return;
	}
	if (rte_eth_link_get_nowait(dev->port_id, &link) == 0 &&
	    link.link_speed != 0 &&
	    link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		mbps = link.link_speed;
	dev->cc.rate_max = mbps * 1000;
}

/*
 * RSS for a device of @p nshards shards, each polling one of @p nrxq
 * queues, where the port hashes UDP over IP with a key of droce's
 * length or more and a redirection table at least as long as the
 * shards (lib/engine/droce_rss.c): @p conf asks for it under droce's
 * key, padded with zeros into @p key, and dev->rss says so.
 */
static void
rss_conf(struct droce_dev *dev, const struct rte_eth_dev_info *info,
	 struct rte_eth_conf *conf, uint8_t *key, uint32_t nshards,
	 uint16_t nrxq, bool no_rss)
{
	uint64_t hf = info->flow_type_rss_offloads &
		(RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP);

	dev->rss = false;
	if (no_rss || nshards < 2 || nrxq != nshards ||
	    !(hf & RTE_ETH_RSS_NONFRAG_IPV4_UDP) ||
	    info->hash_key_size < DROCE_RSS_KEY_LEN ||
	    info->reta_size < nshards)
		return;
	memset(key, 0, info->hash_key_size);
	memcpy(key, droce_rss_key, DROCE_RSS_KEY_LEN);
	conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf->rx_adv_conf.rss_conf.rss_key = key;
	conf->rx_adv_conf.rss_conf.rss_key_len = info->hash_key_size;
	conf->rx_adv_conf.rss_conf.rss_hf = hf;
	dev->rss = true;
	dev->rss_reta_size = info->reta_size;
}

/*
 * Entry i of the port's redirection table, the queue of shard i modulo
 * the shards: what NICs set by default, set here where the port lets it
 * be (where it does not, its default is taken for that).
 */
static void
rss_reta(struct droce_dev *dev, uint32_t nshards)
{
	struct rte_eth_rss_reta_entry64
		reta[RTE_ETH_RSS_RETA_SIZE_512 / RTE_ETH_RETA_GROUP_SIZE];
	unsigned int i;
	int ret;

	if (dev->rss_reta_size > RTE_ETH_RSS_RETA_SIZE_512)
		return;		/* (then NICs have the default already) */
	memset(reta, 0, sizeof(reta));
	for (i = 0; i < dev->rss_reta_size; i++) {
		struct rte_eth_rss_reta_entry64 *g =
			&reta[i / RTE_ETH_RETA_GROUP_SIZE];

		g->mask |= UINT64_C(1) << (i % RTE_ETH_RETA_GROUP_SIZE);
		g->reta[i % RTE_ETH_RETA_GROUP_SIZE] = (uint16_t)(i % nshards);
	}
	ret = rte_eth_dev_rss_reta_update(dev->port_id, reta,
					  dev->rss_reta_size);
	if (ret != 0 && ret != -ENOTSUP)
		DROCE_LOG(WARNING, "%s: port %u's RSS table not set (%s): "
			  "its default taken", dev->name, dev->port_id,
			  strerror(-ret));
}

/*
 * Why the port of device @p c did not come up with @p ret, in words
 * into @p why: what a memif port's socket says (droce_memif_why()), else
 * the error's name.
 * @return the cause, a negative errno.
 */
int
droce_port_why(const struct droce_dev_cfg *c, int ret, char *why, size_t len)
{
	int cause = droce_memif_why(droce_eng.cfg.eal_args, c->port, ret,
				    why, len);

	if (why[0] == '\0')
		strlcpy(why, strerror(-ret), len);
	return cause;
}

/*
 * Configure and start the port of @p dev, device @p c: a send queue for
 * each of its *nshards shards (fewer if the port has fewer: *nshards
 * says how many), and as many receive queues, or *nrxq if that is more
 * (a ring pair's other end's send queues).
 */
int
droce_port_configure(struct droce_dev *dev, const struct droce_dev_cfg *c,
		     uint32_t *nshards, uint16_t *nrxq)
{
	char why[256];
	uint8_t rss_key[UINT8_MAX + 1];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr port_mac;
	uint32_t maxq;
	uint16_t q;
	int ret, tries;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_info_get(dev->port_id, &info);
	if (ret < 0)
		return ret;
	conf.rxmode.mtu = dev->eth_mtu;
	dev->memif = info.driver_name != NULL &&
		strcmp(info.driver_name, "net_memif") == 0;
	dev->memif_server = dev->memif &&
		droce_memif_server(droce_eng.cfg.eal_args, c->port);
	/* checksums and segments the port can make of raw QPs' frames */
	dev->tx_offloads = info.tx_offload_capa &
		(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
		 RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_TSO |
		 RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
	conf.txmode.offloads = dev->tx_offloads;
	/* a port that reads only mapped memory sends from regions mapped
	 * for it, at their virtual addresses as IO addresses */
	dev->dma_dev = info.device;
	dev->zero_copy = (!dev->dma_map ||
			  rte_eal_iova_mode() == RTE_IOVA_VA) &&
		(dev->tx_offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
	if (info.max_mtu < dev->eth_mtu) {
		DROCE_LOG(WARNING, "%s: port MTU at most %u", dev->name,
			  info.max_mtu);
		dev->eth_mtu = info.max_mtu;
		conf.rxmode.mtu = info.max_mtu;
	}
	maxq = RTE_MIN(info.max_tx_queues, info.max_rx_queues);
	if (maxq < *nshards) {
		maxq = RTE_MAX(maxq, 1u);
		DROCE_LOG(WARNING, "%s: port %u has %u send and %u receive "
			  "queues: %u engine lcores, not %u", dev->name,
			  dev->port_id, info.max_tx_queues, info.max_rx_queues,
			  maxq, *nshards);
		*nshards = maxq;
	}
	*nrxq = (uint16_t)RTE_MAX(*nrxq, *nshards);
	rss_conf(dev, &info, &conf, rss_key, *nshards, *nrxq, c->no_rss);
	ret = rte_eth_dev_configure(dev->port_id, *nrxq, (uint16_t)*nshards,
				    &conf);
	if (ret < 0)
		return ret;
	/* tx queues first: net_tap of DPDK 24.11 and 25.11 gives a tx
	 * queue its TSO context only if it opens the queue's file, which
	 * an rx queue set up before it has opened */
	for (q = 0; q < *nshards; q++) {
		ret = rte_eth_tx_queue_setup(dev->port_id, q, TX_DESC,
					     rte_eth_dev_socket_id(dev->port_id),
					     NULL);
		if (ret < 0)
			return ret;
	}
	for (q = 0; q < *nrxq; q++) {
		ret = rte_eth_rx_queue_setup(dev->port_id, q, RX_DESC,
					     rte_eth_dev_socket_id(dev->port_id),
					     NULL, dev->pool);
		if (ret < 0)
			return ret;
	}
	/* a port whose peer is not there yet (a memif client before its
	 * server) refuses to start: give the peer some time */
	for (tries = 0; (ret = rte_eth_dev_start(dev->port_id)) < 0 &&
	     tries < START_TRIES; tries++) {
		struct timespec ts = { 0, START_RETRY_MS * 1000000L };

		if (tries == 0) {
			droce_port_why(c, ret, why, sizeof(why));
			DROCE_LOG(NOTICE, "%s: port %u (%s) does not start "
				  "yet: %s; retrying for %d s", dev->name,
				  dev->port_id, c->port, why,
				  START_TRIES * START_RETRY_MS / 1000);
		}
		nanosleep(&ts, NULL);
	}
	if (ret < 0)
		return ret;
	/* a memif client its server refused (the server's port was not
	 * started yet) dials it again: as long again as for the start */
	ret = droce_memif_connect(dev->name, droce_eng.cfg.eal_args, c->port,
				  dev->port_id, START_TRIES * START_RETRY_MS);
	if (ret < 0)
		return ret;
	/* Frames for our MAC only; promiscuous where the port's MAC is not
	 * ours (the MAC check is done in software either way). */
	if (rte_eth_macaddr_get(dev->port_id, &port_mac) == 0 &&
	    !rte_is_same_ether_addr(&port_mac, &dev->mac) &&
	    rte_eth_dev_default_mac_addr_set(dev->port_id, &dev->mac) != 0)
		rte_eth_promiscuous_enable(dev->port_id);
	rte_eth_allmulticast_enable(dev->port_id);
	if (dev->rss)
		rss_reta(dev, *nshards);
	cc_params(dev);
	return 0;
}

