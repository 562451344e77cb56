/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * A device's queries and counters, and the control calls that run on its
 * engine lcores (droce_dev_call()).
 */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "droce_engine_pvt.h"
#include "droce_start.h"

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
enum ibv_mtu
droce_active_mtu(uint16_t eth_mtu)
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
	const struct droce_shard *sh = dev->shards[0];
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
	if (rte_eth_link_get_nowait(sh->port_id, &link) == 0) {
		/* a stopped port is down, whatever its driver says */
		attr->link_up = link.link_status == RTE_ETH_LINK_UP &&
			!__atomic_load_n(&sh->port_stopped, __ATOMIC_RELAXED);
		attr->link_speed_mbps = link.link_speed;
	}
	attr->gid_count = dev->gid_count;
	memcpy(attr->gid, dev->gid, sizeof(attr->gid));
	attr->port_id = sh->port_id;
	attr->lcore = sh->lc->lcore_id;
}

/* The counters of a device: the sums of its shards'. */
void
droce_dev_stats(struct droce_dev *dev, struct droce_dev_stats *stats)
{
	uint32_t i;

	*stats = dev->shards[0]->stats;
	for (i = 1; i < dev->nshards; i++) {
		const struct droce_dev_stats *s = &dev->shards[i]->stats;

#define ADD_COUNTER(name, desc) stats->name += s->name;
		DROCE_DEV_COUNTERS(ADD_COUNTER)
#undef ADD_COUNTER
	}
}

int
droce_shard_count(struct droce_shard *sh, void *arg)
{
	struct droce_dev_resources *r = arg;
	unsigned int i;

	r->qps += sh->nlive;
	r->qps_active += sh->nactive;
	for (i = 0; i < sh->nlive; i++)
		droce_qp_bytes(sh->live[i], &r->qp_bytes, &r->qp_queue_bytes);
	r->tx_queued += sh->ntx;
	return 0;
}

int
droce_dev_resources(struct droce_dev *dev, struct droce_dev_resources *r)
{
	return droce_dev_call_shards(dev, droce_shard_count_primary,
				     droce_shard_count, r);
}

int
droce_shard_count_primary(struct droce_shard *sh, void *arg)
{
	const struct droce_dev *dev = sh->dev;
	struct droce_dev_resources *r = arg;
	unsigned int i;

	memset(r, 0, sizeof(*r));
	/* its QPs and queued frames, as every shard's */
	droce_shard_count(sh, r);
	r->qps_max = DROCE_MAX_QP + 1;    /* the table's and QP1 */
	for (i = 0; i < DROCE_MAX_MR; i++)
		r->mrs += sh->mrs[i] != NULL;
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
droce_shard_call(struct droce_shard *sh,
		 int (*fn)(struct droce_shard *sh, void *arg), void *arg)
{
	struct droce_ctl_req req = { .fn = fn, .sh = sh, .arg = arg };
	unsigned int spins = 0;
	long nap_ns = 5000;

	/* on the lcore (in its pass, or its own thread as it starts; an
	 * application thread running a pass has its lcore id) */
	if (rte_lcore_id() == sh->lc->lcore_id)
		return fn(sh, arg);
	while (rte_ring_enqueue(sh->lc->ctl, &req) != 0)
		sched_yield();
	while (!__atomic_load_n(&req.done, __ATOMIC_ACQUIRE)) {
		if (++spins < 1000) {
			/* on the lcore's CPU, the call is run here */
			droce_dev_drive(sh->dev);
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

/* droce_dev_call()'s function and argument, run on the primary shard */
struct dev_fn {
	int (*fn)(struct droce_dev *dev, void *arg);
	void *arg;
};

static int
dev_fn_run(struct droce_shard *sh, void *arg)
{
	const struct dev_fn *f = arg;

	return f->fn(sh->dev, f->arg);
}

int
droce_dev_call(struct droce_dev *dev,
	       int (*fn)(struct droce_dev *dev, void *arg), void *arg)
{
	struct dev_fn f = { fn, arg };

	return droce_shard_call(dev->shards[0], dev_fn_run, &f);
}

int
droce_dev_call_shards(struct droce_dev *dev,
		      int (*first)(struct droce_shard *sh, void *arg),
		      int (*rest)(struct droce_shard *sh, void *arg), void *arg)
{
	uint32_t i;
	int ret;

	ret = droce_shard_call(dev->shards[0], first, arg);
	for (i = 1; ret == 0 && i < dev->nshards; i++)
		ret = droce_shard_call(dev->shards[i], rest, arg);
	return ret;
}

