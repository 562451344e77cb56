/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Engine start-up: the configuration, DPDK's EAL (initialised in a thread
 * of the engine's own, which becomes the main lcore, so the application's
 * threads keep their affinity), the ports, the devices on them, and the
 * engine lcores. Also the control calls that run on an engine lcore.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_bus.h>
#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_string_fns.h>

#include "droce_engine_pvt.h"
#include "droce_eth_fault.h"

RTE_LOG_REGISTER(droce_engine_logtype, lib.droce.engine, NOTICE);

struct droce_engine droce_eng;

#define RX_DESC 1024
#define START_RETRY_MS 100
#define START_TRIES 100
#define TX_DESC 1024
/* how long an exiting process waits for its ports to close */
#define CLOSE_WAIT_MS 2000
#define MAX_EAL_ARGS 64
/* frames on their way from one shard to another: as a NIC's receive
 * ring, a few bursts (the mbufs they hold are the pool's) */
#define HANDOFF_SLOTS 256

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
static int start_state;   /* 0 not started, 1 starting, 2 done */
static int start_result;
static bool stop_registered;
/* why the start failed, in words (droce_engine_start_error()) */
static char start_why[256];
/* set by ports_close() once every port is closed */
static uint32_t ports_closed;

/*
 * Why the engine does not start: logged, and the first reason given kept
 * for droce_engine_start_error(), which the verbs layer passes on.
 */
static void __rte_format_printf(1, 2)
start_error(const char *fmt, ...)
{
	char why[sizeof(start_why)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	DROCE_LOG(ERR, "%s", why);
	if (start_why[0] == '\0')
		strlcpy(start_why, why, sizeof(start_why));
}

const char *
droce_engine_start_error(void)
{
	return start_why;
}

uint64_t
droce_clock(void)
{
	return rte_get_tsc_cycles();
}

uint64_t
droce_clock_hz(void)
{
	return droce_eng.hz;
}

unsigned int
droce_dev_count(void)
{
	return droce_eng.ndevs;
}

struct droce_dev *
droce_dev_get(unsigned int idx)
{
	return idx < droce_eng.ndevs ? droce_eng.devs[idx] : NULL;
}

/* The largest IB MTU whose packets fit an Ethernet MTU. */
static enum ibv_mtu
active_mtu(uint16_t eth_mtu)
{
	/* IPv6 + UDP + BTH + the longest extension headers + ICRC */
	const uint32_t overhead = 40 + 8 + DROCE_BTH_LEN + 28 + 4;
	enum ibv_mtu m;

	for (m = IBV_MTU_4096; m > IBV_MTU_256; m--)
		if (droce_mtu_bytes(m) + overhead <= eth_mtu)
			break;
	return m;
}

void
droce_dev_query(struct droce_dev *dev, struct droce_dev_attr *attr)
{
	struct rte_eth_link link;
	const uint8_t *m = dev->mac.addr_bytes;
	uint8_t eui[8] = { m[0] ^ 2, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5] };

	memset(attr, 0, sizeof(*attr));
	strlcpy(attr->name, dev->name, sizeof(attr->name));
	attr->mac = dev->mac;
	memcpy(&attr->guid, eui, sizeof(eui));
	attr->eth_mtu = dev->eth_mtu;
	attr->active_mtu = dev->active_mtu;
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(dev->port_id, &link) == 0) {
		/* a stopped port is down, whatever its driver says */
		attr->link_up = link.link_status == RTE_ETH_LINK_UP &&
			!__atomic_load_n(&dev->port_stopped, __ATOMIC_RELAXED);
		attr->link_speed_mbps = link.link_speed;
	}
	attr->gid_count = dev->gid_count;
	memcpy(attr->gid, dev->gid, sizeof(attr->gid));
	attr->port_id = dev->port_id;
	attr->lcore = dev->lc->lcore_id;
}

/* The counters of a device: the sums of its shards'. */
void
droce_dev_stats(struct droce_dev *dev, struct droce_dev_stats *stats)
{
	uint32_t i;

	*stats = dev->stats;
	for (i = 1; i < dev->nshards; i++) {
		const struct droce_dev_stats *s = &dev->shards[i]->stats;

#define ADD_COUNTER(name, desc) stats->name += s->name;
		DROCE_DEV_COUNTERS(ADD_COUNTER)
#undef ADD_COUNTER
	}
}

int
droce_dev_count_shard(struct droce_dev *dev, void *arg)
{
	struct droce_dev_resources *r = arg;
	unsigned int i;

	r->qps += dev->nlive;
	r->qps_active += dev->nactive;
	for (i = 0; i < dev->nlive; i++)
		droce_qp_bytes(dev->live[i], &r->qp_bytes, &r->qp_queue_bytes);
	r->tx_queued += dev->ntx;
	return 0;
}

int
droce_dev_resources(struct droce_dev *dev, struct droce_dev_resources *r)
{
	return droce_dev_call_shards(dev, droce_dev_count_resources,
				     droce_dev_count_shard, r);
}

int
droce_dev_count_resources(struct droce_dev *dev, void *arg)
{
	struct droce_dev_resources *r = arg;
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->qps = dev->nlive;
	r->qps_max = DROCE_MAX_QP + 1;    /* the table's and QP1 */
	r->qps_active = dev->nactive;
	for (i = 0; i < dev->nlive; i++)
		droce_qp_bytes(dev->live[i], &r->qp_bytes, &r->qp_queue_bytes);
	for (i = 0; i < DROCE_MAX_MR; i++)
		r->mrs += dev->mrs[i] != NULL;
	r->mrs_max = DROCE_MAX_MR;
	for (i = 0; i < DROCE_MAX_SRQ; i++)
		r->srqs += dev->srqs[i] != NULL;
	r->srqs_max = DROCE_MAX_SRQ;
	for (i = 0; i < DROCE_MAX_NEIGH; i++)
		r->neigh += dev->neigh[i].state != DROCE_NEIGH_FREE;
	r->neigh_max = DROCE_MAX_NEIGH;
	r->neigh_pending = dev->neigh_pending;
	r->mcast_groups = dev->nmcast;
	r->mcast_groups_max = DROCE_MAX_MCAST;
	r->flows = dev->nflows;
	r->flows_max = DROCE_MAX_FLOWS;
	r->tx_queued = dev->ntx;
	r->tx_queued_max = DROCE_TX_BUF;
	r->mbufs_in_use = rte_mempool_in_use_count(dev->pool);
	r->mbufs = dev->pool->size;
	return 0;
}

void
droce_port_event_hook(void (*fn)(struct droce_dev *dev,
				 enum ibv_event_type type))
{
	__atomic_store_n(&droce_eng.port_event, fn, __ATOMIC_RELEASE);
}

int
droce_dev_call(struct droce_dev *dev,
	       int (*fn)(struct droce_dev *dev, void *arg), void *arg)
{
	struct droce_ctl_req req = { .fn = fn, .dev = dev, .arg = arg };
	unsigned int spins = 0;
	long nap_ns = 5000;

	/* on the lcore (in its pass, or its own thread as it starts; an
	 * application thread running a pass has its lcore id) */
	if (rte_lcore_id() == dev->lc->lcore_id)
		return fn(dev, arg);
	while (rte_ring_enqueue(dev->lc->ctl, &req) != 0)
		sched_yield();
	while (!__atomic_load_n(&req.done, __ATOMIC_ACQUIRE)) {
		if (++spins < 1000) {
			/* on the lcore's CPU, the call is run here */
			droce_dev_drive(dev);
			rte_pause();
		} else {
			/* a long call (a raw run lasts seconds) is waited
			 * for in longer naps, that wake the engines' cores
			 * less often */
			struct timespec ts = { 0, nap_ns };

			nanosleep(&ts, NULL);
			if (nap_ns < 1000000)
				nap_ns *= 2;
		}
	}
	return req.ret;
}

int
droce_dev_call_shards(struct droce_dev *dev,
		      int (*first)(struct droce_dev *dev, void *arg),
		      int (*rest)(struct droce_dev *dev, void *arg), void *arg)
{
	struct droce_dev *p = dev->primary;
	uint32_t i;
	int ret;

	ret = droce_dev_call(p, first, arg);
	for (i = 1; ret == 0 && i < p->nshards; i++)
		ret = droce_dev_call(p->shards[i], rest, arg);
	return ret;
}

/* ------------------------------------------------------------------------
 * Ports.
 */

/* On the device's lcore: no burst is running on the port. */
static int
port_stop_call(struct droce_dev *dev, void *arg)
{
	int ret;

	RTE_SET_USED(arg);
	if (dev->port_stopped)
		return 0;
	/* the queued frames go too (droce_dev_tx_flush() drops them);
	 * droce_dev_query() reads the flag from other threads */
	__atomic_store_n(&dev->port_stopped, true, __ATOMIC_RELAXED);
	droce_dev_tx_flush(dev);
	ret = rte_eth_dev_stop(dev->port_id);
	if (ret < 0) {
		__atomic_store_n(&dev->port_stopped, false, __ATOMIC_RELAXED);
		DROCE_LOG(ERR, "%s: cannot stop port %u: %s", dev->name,
			  dev->port_id, strerror(-ret));
		return ret;
	}
	DROCE_LOG(INFO, "%s: port %u stopped", dev->name, dev->port_id);
	droce_dev_link_event(dev, false);
	return 0;
}

static int
port_start_call(struct droce_dev *dev, void *arg)
{
	int ret;

	RTE_SET_USED(arg);
	if (!dev->port_stopped)
		return 0;
	ret = rte_eth_dev_start(dev->port_id);
	if (ret < 0) {
		DROCE_LOG(ERR, "%s: cannot start port %u: %s", dev->name,
			  dev->port_id, strerror(-ret));
		return ret;
	}
	__atomic_store_n(&dev->port_stopped, false, __ATOMIC_RELAXED);
	/* PORT_ACTIVE as soon as the link is up, not a check period on */
	dev->link_check_at = 0;
	DROCE_LOG(INFO, "%s: port %u started", dev->name, dev->port_id);
	return 0;
}

/* On a shard but the primary: no more bursts on the port (@p arg
 * non-NULL), or bursts again. */
static int
shard_port_call(struct droce_dev *dev, void *arg)
{
	__atomic_store_n(&dev->port_stopped, arg != NULL, __ATOMIC_RELAXED);
	droce_dev_tx_flush(dev);
	return 0;
}

/* The other shards stop their bursts before the primary stops the port,
 * and start them after it started it. */
int
droce_dev_port_stop(struct droce_dev *dev)
{
	uint32_t i;
	int ret;

	for (i = 1; i < dev->nshards; i++)
		droce_dev_call(dev->shards[i], shard_port_call, dev);
	ret = droce_dev_call(dev, port_stop_call, NULL);
	for (i = 1; ret < 0 && i < dev->nshards; i++)
		droce_dev_call(dev->shards[i], shard_port_call, NULL);
	return ret;
}

int
droce_dev_port_start(struct droce_dev *dev)
{
	return droce_dev_call_shards(dev, port_start_call, shard_port_call,
				     NULL);
}

/*
 * The queues of ring pair @p pair (@p len characters): as many as the
 * most engine lcores of a device on either end, each end's queue q
 * wired to the other's.
 */
static unsigned int
ring_queues(const char *pair, size_t len)
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
	nq = ring_queues(pair, strlen(pair));
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
static int
find_port(const char *spec, unsigned int socket)
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
static bool
port_reads_va(uint16_t port)
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
static int
port_why(const struct droce_dev_cfg *c, int ret, char *why, size_t len)
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
static int
port_start(struct droce_dev *dev, const struct droce_dev_cfg *c,
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
			port_why(c, ret, why, sizeof(why));
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
mirror_open(struct droce_dev *dev)
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
	ret = droce_mirror_open(path, &dev->mirror);
	if (ret < 0)
		start_error("%s: cannot write %s: %s", dev->name, path,
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
kick_ring(struct droce_dev *dev)
{
	return ring_alloc("droce_kick", rte_align32pow2(DROCE_MAX_QP + 1 + 1),
			  &dev->kick);
}

/* The ring of frames other shards received for @p dev. */
static int
handoff_ring(struct droce_dev *dev)
{
	return ring_alloc("droce_handoff", HANDOFF_SLOTS, &dev->handoff);
}

/*
 * The shards of @p dev past the first (@p dev itself): copies of it
 * as it is before any QP, each with its own queues and rings, on the
 * engine lcores @p c names; the port's receive queues dealt among them.
 */
static int
shards_create(struct droce_dev *dev, const struct droce_dev_cfg *c,
	      unsigned int idx, uint32_t nshards, uint16_t nrxq)
{
	uint32_t i;
	uint16_t q;
	int ret;

	dev->primary = dev;
	dev->shards[0] = dev;
	dev->nshards = nshards;
	rte_spinlock_init(&dev->neigh_lock);
	rte_spinlock_init(&dev->mw_lock);
	for (i = 1; i < nshards; i++) {
		struct droce_dev *s = rte_malloc("droce_dev", sizeof(*s),
						 RTE_CACHE_LINE_SIZE);

		if (s == NULL)
			return -ENOMEM;
		memcpy(s, dev, sizeof(*s));
		s->shard = i;
		s->nshards = 0;
		s->next_slot = 0;
		memset(s->shards, 0, sizeof(s->shards));
		dev->shards[i] = s;
		s->kick = NULL;
		ret = kick_ring(s);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < nshards; i++) {
		struct droce_dev *s = dev->shards[i];

		s->txq = (uint16_t)i;
		s->nrxq = 0;
		for (q = (uint16_t)i; q < nrxq; q = (uint16_t)(q + nshards))
			s->rxq[s->nrxq++] = q;
		if (nshards > 1) {
			ret = handoff_ring(s);
			if (ret < 0)
				return ret;
		}
		s->lc = &droce_eng.lcores[c->nlcores != 0 ? c->lcores[i] :
					  idx % droce_eng.nlcores];
		s->lc->devs[s->lc->ndevs++] = s;
	}
	return 0;
}

static int
dev_create(const struct droce_dev_cfg *c, unsigned int idx,
	   struct rte_mempool *pool)
{
	struct droce_dev *dev;
	char why[256];
	bool sw;
	uint32_t nshards = RTE_MAX(c->nlcores, 1u);
	uint16_t nrxq;
	int port;
	int ret;

	dev = rte_zmalloc("droce_dev", sizeof(*dev), RTE_CACHE_LINE_SIZE);
	if (dev == NULL)
		return -ENOMEM;
	strlcpy(dev->name, c->name, sizeof(dev->name));
	sw = strncmp(c->port, "switch:", 7) == 0;
	port = sw ? droce_eth_fault_switch_port(c->name, c->port + 7,
			(uint16_t)nshards, rte_socket_id(), c->fault) :
		find_port(c->port, rte_socket_id());
	if (port < 0) {
		port = port_why(c, port, why, sizeof(why));
		start_error("%s: no port '%s': %s", c->name, c->port, why);
		rte_free(dev);
		return port;
	}
	if (!sw && c->fault[0] != '\0') {
		int fport = droce_eth_fault_wrap(c->name, (uint16_t)port,
						 c->fault);

		if (fport < 0) {
			start_error("%s: cannot put port %d behind net_fault "
				    "(%s): %s", c->name, port, c->fault,
				    strerror(-fport));
			rte_free(dev);
			return fport;
		}
		port = fport;
	}
	dev->port_id = (uint16_t)port;
	dev->dma_map = !port_reads_va(dev->port_id) ||
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
	/* (a switch's port receives on its queue 0 alone) */
	nrxq = strncmp(c->port, "ring:", 5) == 0 ?
		(uint16_t)ring_queues(c->port + 5, strcspn(c->port + 5, ":")) :
		1;
	ret = port_start(dev, c, &nshards, &nrxq);
	if (ret < 0) {
		ret = port_why(c, ret, why, sizeof(why));
		start_error("%s: cannot start port %u (%s): %s", dev->name,
			    dev->port_id, c->port, why);
		rte_free(dev);
		return ret;
	}
	dev->active_mtu = active_mtu(dev->eth_mtu);
	dev_gids(dev);
	if (droce_eng.cfg.pcap[0] != '\0') {
		ret = mirror_open(dev);
		if (ret < 0) {
			rte_eth_dev_stop(dev->port_id);
			rte_free(dev);
			return ret;
		}
	}
	ret = kick_ring(dev);
	if (ret < 0) {
		rte_eth_dev_stop(dev->port_id);
		rte_free(dev);
		return ret;
	}
	/* (a failure from here on ends the engine's start: what was made
	 * stays until the process exits) */
	ret = shards_create(dev, c, idx, nshards, nrxq);
	if (ret < 0)
		return ret;
	droce_eng.devs[droce_eng.ndevs++] = dev;
	if (dev->nshards > 1)
		droce_eng.cq_shared = true;
	DROCE_LOG(INFO, "%s: port %u, lcore %u (of %u), MTU %u", dev->name,
		  dev->port_id, dev->lc->lcore_id, dev->nshards, dev->eth_mtu);
	return 0;
}

/* ------------------------------------------------------------------------
 * EAL and lcores.
 */

/* The engine's CPUs: as configured, or the last CPU this process may use. */
static void
pick_cores(struct droce_cfg *cfg)
{
	cpu_set_t set;
	int cpu, last = 0;

	if (cfg->cores[0] >= 0)
		return;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &set))
				last = cpu;
	cfg->cores[0] = last;
}

static int
eal_init(struct droce_cfg *cfg)
{
	static char args[sizeof(cfg->eal_args)];
	static char lcores[DROCE_MAX_LCORES * 16];
	char *argv[MAX_EAL_ARGS];
	char *save = NULL, *tok;
	int argc = 0;
	unsigned int i;
	size_t off = 0;

	argv[argc++] = (char *)(uintptr_t)"droce";
	strlcpy(args, cfg->eal_args, sizeof(args));
	for (tok = strtok_r(args, " \t", &save); tok != NULL &&
	     argc < MAX_EAL_ARGS - 4; tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	if (strstr(cfg->eal_args, "--log-level") == NULL) {
		argv[argc++] = (char *)(uintptr_t)"--log-level=lib.eal:warning";
		argv[argc++] = (char *)(uintptr_t)
			"--log-level=lib.telemetry:error";
	}
	/* engine lcore i runs on CPU cores[i]; lcore 0 is the main one */
	for (i = 0; i < cfg->ncores; i++)
		off += (size_t)snprintf(lcores + off, sizeof(lcores) - off,
					"%s%u@%d", i ? "," : "", i,
					cfg->cores[i]);
	argv[argc++] = (char *)(uintptr_t)"--lcores";
	argv[argc++] = lcores;
	if (rte_eal_init(argc, argv) < 0)
		return -rte_errno ? -rte_errno : -EINVAL;
	return 0;
}

/*
 * Wait up to link_wait_s for every port's link, so that a verbs program
 * that checks its port at once (perftest does) finds it active when the
 * peer comes within that time. Looked at every LINK_WAIT_POLL_US: a
 * memif peer whose program gives up at once (its tool finds no one on
 * TCP yet) is connected for a few milliseconds only, and a link up for
 * so short a time is up all the same.
 */
#define LINK_WAIT_POLL_US 200

static void
links_wait(const struct droce_cfg *cfg)
{
	uint64_t end = rte_get_timer_cycles() +
		(uint64_t)cfg->link_wait_s * rte_get_timer_hz();
	unsigned int i;

	for (i = 0; i < droce_eng.ndevs; i++) {
		struct droce_dev *dev = droce_eng.devs[i];
		struct rte_eth_link link;

		for (;;) {
			if (rte_eth_link_get_nowait(dev->port_id, &link) == 0 &&
			    link.link_status == RTE_ETH_LINK_UP)
				break;
			if (rte_get_timer_cycles() >= end) {
				DROCE_LOG(WARNING, "%s: link still down after "
					  "%u s", dev->name, cfg->link_wait_s);
				return;
			}
			rte_delay_us_sleep(LINK_WAIT_POLL_US);
		}
	}
}

/*
 * Before DPDK probes them: each device's memif server socket left by a
 * process that is gone is replaced; one another process serves ends the
 * start here (DPDK would only say that its address is in use).
 */
static int
ports_claim(const struct droce_cfg *cfg)
{
	char why[256];
	unsigned int i;
	int ret;

	for (i = 0; i < cfg->ndevs; i++) {
		const struct droce_dev_cfg *c = &cfg->dev[i];

		ret = droce_memif_claim(c->name, cfg->eal_args, c->port, why,
					sizeof(why));
		if (ret < 0) {
			start_error("%s: port %s cannot start: %s", c->name,
				    c->port, why);
			return ret;
		}
	}
	return 0;
}

static int
engine_init(void)
{
	struct droce_cfg *cfg = &droce_eng.cfg;
	struct rte_mempool *pool;
	unsigned int i, lcore;
	uint16_t max_mtu = 0;
	int ret;

	ret = droce_config_load(cfg);
	if (ret < 0)
		return ret;
	ret = ports_claim(cfg);
	if (ret < 0)
		return ret;
	pick_cores(cfg);
	ret = eal_init(cfg);
	if (ret < 0) {
		start_error("EAL initialisation failed: %s", strerror(-ret));
		return ret;
	}
	droce_eng.hz = rte_get_tsc_hz();
	droce_eng.us_cycles = RTE_MAX(droce_eng.hz / 1000000, (uint64_t)1);

	i = 0;
	RTE_LCORE_FOREACH(lcore) {
		struct droce_lcore *lc = &droce_eng.lcores[i];
		char name[RTE_RING_NAMESIZE];

		if (i == DROCE_MAX_LCORES)
			break;
		lc->lcore_id = lcore;
		lc->idx = i;
		lc->cpu = cfg->cores[i];
		rte_spinlock_init(&lc->pass_lock);
		snprintf(name, sizeof(name), "droce_ctl_%u", i);
		lc->ctl = rte_ring_create(name, 256, SOCKET_ID_ANY,
					  RING_F_MP_HTS_ENQ | RING_F_SC_DEQ);
		if (lc->ctl == NULL)
			return -rte_errno;
		i++;
	}
	droce_eng.nlcores = i;

	for (i = 0; i < cfg->ndevs; i++)
		max_mtu = RTE_MAX(max_mtu, cfg->dev[i].mtu);
	/* DPDK's default size at least: some PMDs (af_packet) want their
	 * whole frame slot to fit in one mbuf */
	pool = rte_pktmbuf_pool_create("droce_mbufs", cfg->mbufs,
				       cfg->mbuf_cache, 0,
				       RTE_MAX(RTE_MBUF_DEFAULT_BUF_SIZE,
					       RTE_PKTMBUF_HEADROOM + max_mtu +
					       14 + 4),
				       rte_socket_id());
	if (pool == NULL) {
		start_error("cannot create the mbuf pool: %s",
			    rte_strerror(rte_errno));
		return -rte_errno;
	}
	for (i = 0; i < cfg->ndevs; i++) {
		ret = dev_create(&cfg->dev[i], i, pool);
		if (ret < 0) {
			/* (the reason, if the step that failed gave none) */
			if (start_why[0] == '\0')
				start_error("%s: not started: %s",
					    cfg->dev[i].name, strerror(-ret));
			return ret;
		}
	}
	if (cfg->link_wait_s != 0)
		links_wait(cfg);
	/* port events are the changes from here on */
	for (i = 0; i < droce_eng.ndevs; i++) {
		struct droce_dev *dev = droce_eng.devs[i];
		struct rte_eth_link link;

		dev->link_up = rte_eth_link_get_nowait(dev->port_id,
						       &link) == 0 &&
			link.link_status == RTE_ETH_LINK_UP;
	}
	return 0;
}

/*
 * Stop and close every device's port: what a port holds outside the
 * process goes with it (a memif server's socket file, which the next
 * server on it could not bind; a tap interface; an af_xdp socket). Run
 * on DPDK's interrupt thread, where net_memif tears a connection down
 * when its peer leaves: its stop, run from another thread at that
 * moment, would free the same memory twice ("Invalid memory").
 */
static void
ports_close(void *unused)
{
	unsigned int i;

	RTE_SET_USED(unused);
	for (i = 0; i < droce_eng.ndevs; i++) {
		struct droce_dev *dev = droce_eng.devs[i];

		if (!dev->port_stopped)
			rte_eth_dev_stop(dev->port_id);
		rte_eth_dev_close(dev->port_id);
	}
	__atomic_store_n(&ports_closed, 1, __ATOMIC_RELEASE);
}

/*
 * ports_close() on DPDK's interrupt thread, waited for a while: a
 * process that exits on that thread runs it at once, and one whose
 * interrupt thread does not come leaves its ports as they are (a memif
 * server's socket file, then, is replaced at the next start).
 */
static void
ports_close_at_exit(void)
{
	uint64_t end;
	int ret;

	if (rte_thread_is_intr()) {
		ports_close(NULL);
		return;
	}
	ret = rte_eal_alarm_set(1, ports_close, NULL);
	if (ret < 0) {
		DROCE_LOG(WARNING, "ports not closed at exit: %s",
			  strerror(-ret));
		return;
	}
	end = rte_get_timer_cycles() +
		rte_get_timer_hz() / 1000 * CLOSE_WAIT_MS;
	while (!__atomic_load_n(&ports_closed, __ATOMIC_ACQUIRE) &&
	       rte_get_timer_cycles() < end)
		rte_delay_us_sleep(1000);
	if (!__atomic_load_n(&ports_closed, __ATOMIC_ACQUIRE)) {
		rte_eal_alarm_cancel(ports_close, NULL);
		DROCE_LOG(WARNING, "ports not closed at exit: DPDK's "
			  "interrupt thread did not come in %d ms",
			  CLOSE_WAIT_MS);
	}
}

/*
 * Stop the engine lcores for good: each told to stop and waited for,
 * then its pass taken, so that no application thread runs one either
 * (its ports closed, its mirrors closed under it). An exit() on an
 * engine lcore's own thread (from a signal handler that interrupted
 * it) neither waits for that lcore nor takes its pass: the thread never
 * comes back to its loop, nor to a pass it was in.
 */
static void
lcores_stop(void)
{
	unsigned int self = rte_lcore_id();
	unsigned int i;

	for (i = 0; i < droce_eng.nlcores; i++)
		__atomic_store_n(&droce_eng.lcores[i].stop, 1, __ATOMIC_RELEASE);
	/* the main lcore runs the engine in its own thread: let it notice */
	for (i = 0; i < droce_eng.nlcores; i++)
		while (droce_eng.lcores[i].lcore_id != self &&
		       __atomic_load_n(&droce_eng.lcores[i].stop,
				       __ATOMIC_ACQUIRE) != 2)
			sched_yield();
	for (i = 0; i < droce_eng.nlcores; i++)
		if (droce_eng.lcores[i].lcore_id != self)
			rte_spinlock_lock(&droce_eng.lcores[i].pass_lock);
}

static void
engine_stop(void)
{
	unsigned int i;

	/* telemetry's control calls would wait for lcores that are gone */
	droce_telemetry_close();
	lcores_stop();
	ports_close_at_exit();
	for (i = 0; i < droce_eng.ndevs; i++)
		if (droce_eng.devs[i]->mirror != NULL)
			droce_mirror_close(droce_eng.devs[i]->mirror);
}

/* The engine's own thread: initialise, report, then be the main lcore. */
static void *
engine_thread(void *unused)
{
	unsigned int i;
	int ret;

	RTE_SET_USED(unused);
	ret = engine_init();
	if (ret == 0)
		droce_telemetry_init();
	if (ret == 0)
		for (i = 1; i < droce_eng.nlcores; i++)
			rte_eal_remote_launch(droce_lcore_main,
					      &droce_eng.lcores[i],
					      droce_eng.lcores[i].lcore_id);

	pthread_mutex_lock(&start_lock);
	start_result = ret;
	start_state = 2;
	pthread_cond_broadcast(&start_cond);
	pthread_mutex_unlock(&start_lock);

	if (ret == 0)
		droce_lcore_main(&droce_eng.lcores[0]);
	return NULL;
}

int
droce_engine_start(void)
{
	pthread_t tid;
	int ret;

	pthread_mutex_lock(&start_lock);
	if (start_state == 0) {
		start_state = 1;
		ret = pthread_create(&tid, NULL, engine_thread, NULL);
		if (ret != 0) {
			start_state = 2;
			start_result = -ret;
		} else {
			pthread_detach(tid);
		}
	}
	while (start_state != 2)
		pthread_cond_wait(&start_cond, &start_lock);
	ret = start_result;
	if (ret == 0 && !stop_registered) {
		stop_registered = true;
		atexit(engine_stop);
	}
	pthread_mutex_unlock(&start_lock);
	return ret;
}
