/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Memory region and window keys. Bits 8 to 21 of a key index the device's
 * table; the rest are random for every registration, so keys are unique
 * on the device and cannot be guessed from one another, and a window's
 * low 8 bits are the application's to change at each bind, as verbs
 * wants (ibv_inc_rkey()). The table is the engine lcore's: registration
 * goes through a control call, and binding and invalidation run there.
 * A device with several engine lcores has the table in each shard, the
 * same in all; windows are shared, bound and read under one lock.
 */

#include <errno.h>

#include <rte_cycles.h>
#include <rte_random.h>

#include "droce_engine_pvt.h"

static uint32_t
fresh_key(uint32_t slot)
{
	uint32_t r;

	do {
		r = ((uint32_t)rte_rand() & ~DROCE_KEY_SLOT_MASK) |
			slot << DROCE_KEY_SLOT_SHIFT;
	} while (r == 0);
	return r;
}

static int
mr_insert(struct droce_shard *sh, void *arg)
{
	struct droce_mr_eng *mr = arg;
	uint32_t i, slot;

	/* start where the last search ended: slots are not reused at once */
	for (i = 0; i < DROCE_MAX_MR; i++) {
		slot = (uint32_t)(sh->dev->key_rand + i) & (DROCE_MAX_MR - 1);
		if (sh->mrs[slot] == NULL)
			break;
	}
	if (i == DROCE_MAX_MR)
		return -ENOMEM;
	sh->dev->key_rand = slot + 1;
	mr->rkey = fresh_key(slot);
	if (mr->mw_type != 0) {
		mr->lkey = 0;
	} else {
		do {
			mr->lkey = fresh_key(slot);
		} while (mr->lkey == mr->rkey);
	}
	sh->mrs[slot] = mr;
	return 0;
}

/* On a shard but the primary: the region the primary took in, in the
 * same slot. */
static int
mr_place(struct droce_shard *sh, void *arg)
{
	struct droce_mr_eng *mr = arg;

	sh->mrs[droce_key_slot(mr->rkey)] = mr;
	return 0;
}

/* Called only if a region's count fell below its own base: never. */
static void
zc_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
	RTE_VERIFY(0);
}

/* On the primary: the region back in the slot of its keys, if free. */
static int
mr_reinsert(struct droce_shard *sh, void *arg)
{
	struct droce_mr_eng *mr = arg;
	uint32_t slot = droce_key_slot(mr->rkey);

	if (sh->mrs[slot] != NULL)
		return -EBUSY;
	sh->mrs[slot] = mr;
	return 0;
}

/* Into every shard's table by @p first on the primary, with what zero
 * copy needs. */
static int
mr_enter(struct droce_dev *dev, struct droce_mr_eng *mr,
	 int (*first)(struct droce_shard *sh, void *arg))
{
	int ret;

	mr->gone = false;
	mr->zc.free_cb = zc_free;
	mr->zc.fcb_opaque = mr;
	rte_mbuf_ext_refcnt_set(&mr->zc, DROCE_MR_ZC_BASE);
	/* where zero copy needs the region mapped for the port's DMA (not
	 * an on-demand one: mapping would pin it, and its pages need not
	 * be there; zero copy copies from it instead) */
	mr->dma_mapped = mr->mw_type == 0 && dev->zero_copy && dev->dma_map &&
		droce_eng.cfg.zero_copy_min != 0 &&
		!(mr->access & IBV_ACCESS_ON_DEMAND) &&
		droce_dma_map(dev, mr->addr, mr->length) == 0;
	ret = droce_dev_call_shards(dev, first, mr_place, mr);
	if (ret != 0 && mr->dma_mapped)
		droce_dma_unmap(dev, mr->addr, mr->length);
	return ret;
}

int
droce_mr_register(struct droce_dev *dev, struct droce_mr_eng *mr)
{
	return mr_enter(dev, mr, mr_insert);
}

int
droce_mr_reregister(struct droce_dev *dev, struct droce_mr_eng *mr)
{
	return mr_enter(dev, mr, mr_reinsert);
}

/* A window lets go of its region. */
static void
mw_unbind(struct droce_mr_eng *mw)
{
	if (mw->bound && mw->mr != NULL)
		mw->mr->windows--;
	mw->bound = false;
	mw->mr = NULL;
	mw->qp = NULL;
}

static int
mr_remove(struct droce_shard *sh, void *arg)
{
	struct droce_mr_eng *mr = arg;
	uint32_t slot = droce_key_slot(mr->rkey);
	int ret = 0;

	rte_spinlock_lock(&sh->dev->mw_lock);
	if (mr->mw_type == 0 && mr->windows != 0)
		ret = -EBUSY;
	else if (mr->mw_type != 0)
		mw_unbind(mr);
	else
		mr->gone = true;
	rte_spinlock_unlock(&sh->dev->mw_lock);
	if (ret == 0 && sh->mrs[slot] == mr)
		sh->mrs[slot] = NULL;
	return ret;
}

/* Out of the primary's table first, where a region with windows is
 * refused; then of the other shards' (no window binds to it now). */
int
droce_mr_unregister(struct droce_dev *dev, struct droce_mr_eng *mr)
{
	uint64_t until;
	int ret;

	ret = droce_dev_call_shards(dev, mr_remove, mr_remove, mr);
	if (ret != 0 || mr->mw_type != 0)
		return ret;
	/* no lcore sends from it now: wait for the ports to let go of what
	 * was sent from it in place (a ring pair's peer has yet to take it,
	 * net_fault delays it) */
	until = rte_get_timer_cycles() +
		rte_get_timer_hz() / 1000 * DROCE_MR_ZC_WAIT_MS;
	while (rte_mbuf_ext_refcnt_read(&mr->zc) != DROCE_MR_ZC_BASE) {
		if (rte_get_timer_cycles() > until)
			return -EBUSY;
		droce_dev_drive(dev);
		rte_delay_us_sleep(10);
	}
	/* the port holds nothing of it: its DMA may lose sight of it */
	if (mr->dma_mapped) {
		droce_dma_unmap(dev, mr->addr, mr->length);
		mr->dma_mapped = false;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Binding and invalidation, from a QP's send queue or a SEND with
 * invalidate, on the engine lcore.
 */

static enum ibv_wc_status
mw_bind(struct droce_qp_eng *qp, struct droce_send_wqe *wqe)
{
	struct droce_mr_eng *mw = wqe->mw;
	const struct droce_bind *b = droce_send_wqe_bind(wqe);
	struct droce_mr_eng *mr = b->mr;
	uint64_t addr = wqe->remote_addr, len = wqe->bind_length;

	if (mw->pd != qp->cfg.pd ||
	    droce_key_slot(wqe->rkey) != droce_key_slot(mw->rkey) ||
	    (wqe->rkey & ~0xffu) != (mw->rkey & ~0xffu))
		return IBV_WC_MW_BIND_ERR;
	/* a type 2 window is invalidated before it is bound again, and
	 * under a new key: a peer still using the old one (a WRITE half
	 * placed) must not reach the new binding */
	if (mw->mw_type == IBV_MW_TYPE_2 &&
	    (mw->bound || (mw->was_bound && wqe->rkey == mw->rkey)))
		return IBV_WC_MW_BIND_ERR;
	if (mr == NULL || len == 0) {
		/* unbind (type 1) */
		if (mw->mw_type == IBV_MW_TYPE_2)
			return IBV_WC_MW_BIND_ERR;
		mw_unbind(mw);
		mw->rkey = wqe->rkey;
		return IBV_WC_SUCCESS;
	}
	if (droce_mr_lookup(qp->shard, mr->lkey, false) != mr || mr->gone ||
	    mr->pd != mw->pd || !(mr->access & IBV_ACCESS_MW_BIND) ||
	    addr < mr->addr || addr - mr->addr > mr->length ||
	    len > mr->length - (addr - mr->addr) ||
	    /* remote write and atomic need the region's local write */
	    ((b->access & (IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(mr->access & IBV_ACCESS_LOCAL_WRITE)))
		return IBV_WC_MW_BIND_ERR;
	mw_unbind(mw);
	mw->addr = addr;
	mw->length = len;
	mw->access = b->access;
	mw->rkey = wqe->rkey;
	mw->mr = mr;
	mw->qp = mw->mw_type == IBV_MW_TYPE_2 ? qp : NULL;
	mw->bound = true;
	mw->was_bound = true;
	mr->windows++;
	return IBV_WC_SUCCESS;
}

enum ibv_wc_status
droce_mw_bind(struct droce_qp_eng *qp, struct droce_send_wqe *wqe)
{
	rte_spinlock_t *lock = &qp->shard->dev->mw_lock;
	enum ibv_wc_status status;

	rte_spinlock_lock(lock);
	status = mw_bind(qp, wqe);
	rte_spinlock_unlock(lock);
	return status;
}

bool
droce_mw_invalidate(struct droce_qp_eng *qp, uint32_t rkey, bool remote)
{
	rte_spinlock_t *lock = &qp->shard->dev->mw_lock;
	struct droce_mr_eng *mw;
	bool ok;

	rte_spinlock_lock(lock);
	mw = droce_mr_lookup(qp->shard, rkey, true);
	/* type 2 windows only, of the QP's PD; remotely, bound to it */
	ok = mw != NULL && mw->mw_type == IBV_MW_TYPE_2 &&
		mw->pd == qp->cfg.pd && (!remote || mw->qp == qp);
	if (ok)
		mw_unbind(mw);
	rte_spinlock_unlock(lock);
	return ok;
}
