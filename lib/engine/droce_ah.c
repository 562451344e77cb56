/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Address handles: a path, resolved when the handle is made, that UD
 * WRs name. The handle is the application's; the engine lcore of its
 * device fills it in and reads it. And the multicast groups UD QPs are
 * attached to: a datagram to a group goes to each of its QPs.
 */

#include <errno.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "droce_engine_pvt.h"
#include "droce_tx.h"

/* How long the making of a handle waits for its MAC, as rdma-core's
 * neighbour lookup does. */
#define AH_RESOLVE_MS 3000

struct ah_args {
	struct droce_ah_eng *ah;
	const struct ibv_ah_attr *attr;
};

static int
ah_set(struct droce_shard *sh, void *arg)
{
	struct ah_args *a = arg;

	return -droce_path_set(sh, &a->ah->path, a->attr,
			       rte_get_tsc_cycles());
}

static int
ah_ready(struct droce_shard *sh, void *arg)
{
	struct ah_args *a = arg;

	return droce_path_ready(sh, &a->ah->path, rte_get_tsc_cycles()) ?
		0 : -EAGAIN;
}

struct droce_ah_eng *
droce_ah_create(struct droce_dev *dev, const struct ibv_ah_attr *attr)
{
	struct droce_shard *sh = dev->shards[0];
	struct droce_ah_eng *ah;
	struct ah_args a;
	uint64_t end;
	int ret;

	ah = rte_zmalloc("droce_ah", sizeof(*ah), RTE_CACHE_LINE_SIZE);
	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ah->dev = dev;
	a.ah = ah;
	a.attr = attr;
	ret = droce_shard_call(sh, ah_set, &a);
	end = rte_get_tsc_cycles() + droce_clock_hz() * AH_RESOLVE_MS / 1000;
	while (ret == 0 && droce_shard_call(sh, ah_ready, &a) != 0) {
		if (rte_get_tsc_cycles() > end) {
			ret = -EHOSTUNREACH;
			break;
		}
		rte_delay_us_sleep(1000);
	}
	if (ret != 0) {
		rte_free(ah);
		errno = -ret;
		return NULL;
	}
	return ah;
}

void
droce_ah_mac(const struct droce_ah_eng *ah, uint8_t mac[6])
{
	memcpy(mac, &ah->path.dmac, 6);
}

void
droce_ah_hdr(const struct droce_ah_eng *ah, struct droce_ud_hdr *h)
{
	RTE_BUILD_BUG_ON(sizeof(ah->path.hdr) > sizeof(h->bytes));
	h->len = ah->path.hdr_len;
	memcpy(h->bytes, ah->path.hdr, ah->path.hdr_len);
}

void
droce_ah_destroy(struct droce_ah_eng *ah)
{
	rte_free(ah);
}

/* ------------------------------------------------------------------------
 * Multicast groups, on the engine lcore of their device.
 */

static bool
is_group(const uint8_t gid[16])
{
	return droce_gid_is_ipv4(gid) ? (gid[12] & 0xf0) == 0xe0 :
		gid[0] == 0xff;
}

struct droce_mcast *
droce_mcast_find(struct droce_dev *dev, const uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < DROCE_MAX_MCAST; i++)
		if (dev->mcast[i].nqps != 0 &&
		    memcmp(dev->mcast[i].gid, gid, 16) == 0)
			return &dev->mcast[i];
	return NULL;
}

struct mcast_args {
	struct droce_qp_eng *qp;
	const uint8_t *gid;
};

static int
mcast_attach(struct droce_shard *sh, void *arg)
{
	struct mcast_args *a = arg;
	struct droce_mcast *g = droce_mcast_find(sh->dev, a->gid);
	unsigned int i;

	if (g == NULL) {
		for (i = 0; i < DROCE_MAX_MCAST; i++)
			if (sh->dev->mcast[i].nqps == 0)
				break;
		if (i == DROCE_MAX_MCAST)
			return ENOMEM;
		g = &sh->dev->mcast[i];
		memcpy(g->gid, a->gid, 16);
		sh->dev->nmcast++;
		/* what the device sends to the group comes back to it too
		 * (droce_shard_tx_flush()) */
		__atomic_store_n(&sh->dev->loopback, true, __ATOMIC_RELEASE);
	}
	for (i = 0; i < g->nqps; i++)
		if (g->qps[i] == a->qp)
			return 0;
	if (g->nqps == DROCE_MAX_MCAST_QP)
		return ENOMEM;
	g->qps[g->nqps++] = a->qp;
	return 0;
}

/* Take @p qp out of @p g. @return false if it was not in. */
static bool
group_remove(struct droce_dev *dev, struct droce_mcast *g,
	     const struct droce_qp_eng *qp)
{
	unsigned int i;

	for (i = 0; i < g->nqps; i++)
		if (g->qps[i] == qp)
			break;
	if (i == g->nqps)
		return false;
	g->qps[i] = g->qps[--g->nqps];
	if (g->nqps == 0)
		dev->nmcast--;
	return true;
}

static int
mcast_detach(struct droce_shard *sh, void *arg)
{
	struct mcast_args *a = arg;
	struct droce_mcast *g = droce_mcast_find(sh->dev, a->gid);

	return g != NULL && group_remove(sh->dev, g, a->qp) ? 0 : EINVAL;
}

int
droce_mcast_attach(struct droce_qp_eng *qp, const uint8_t gid[16])
{
	struct mcast_args a = { .qp = qp, .gid = gid };

	if (qp->tr != DROCE_TR_UD || !is_group(gid))
		return EINVAL;
	return droce_shard_call(qp->shard, mcast_attach, &a);
}

int
droce_mcast_detach(struct droce_qp_eng *qp, const uint8_t gid[16])
{
	struct mcast_args a = { .qp = qp, .gid = gid };

	return droce_shard_call(qp->shard, mcast_detach, &a);
}

void
droce_mcast_forget(struct droce_qp_eng *qp)
{
	struct droce_shard *sh = qp->shard;
	unsigned int i;

	for (i = 0; i < DROCE_MAX_MCAST && sh->dev->nmcast > 0; i++)
		if (sh->dev->mcast[i].nqps != 0)
			group_remove(sh->dev, &sh->dev->mcast[i], qp);
}
