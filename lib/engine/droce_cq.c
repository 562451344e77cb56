/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The engine's end of a completion queue: completions are written into
 * the ring the application polls, the producer index published after
 * each, and an armed CQ's channel told. A full ring loses the completion
 * and the application hears it once (IBV_EVENT_CQ_ERR). A CQ takes the
 * completions of QPs on several engine lcores of a device under a lock.
 */

#include "droce_engine_pvt.h"
#include "droce_cq_eng.h"

/* One producer at a time: the lock where a CQ's QPs may be on several
 * lcores (droce_eng.cq_shared). */
static void
cq_push(struct droce_cq_ring *ring, const struct droce_cqe *cqe);

void
droce_cq_push(struct droce_cq_ring *ring, const struct droce_cqe *cqe)
{
	if (likely(!droce_eng.cq_shared)) {
		cq_push(ring, cqe);
		return;
	}
	rte_spinlock_lock(&ring->lock);
	cq_push(ring, cqe);
	rte_spinlock_unlock(&ring->lock);
}

static void
cq_push(struct droce_cq_ring *ring, const struct droce_cqe *cqe)
{
	uint32_t prod = ring->prod;
	uint32_t armed;

	if (prod - ring->cons_seen >= ring->depth)
		ring->cons_seen = __atomic_load_n(&ring->cons,
						  __ATOMIC_ACQUIRE);
	if (prod - ring->cons_seen >= ring->depth) {
		/* the completion is lost: the application hears it once */
		if (__atomic_exchange_n(&ring->overrun, 1,
					__ATOMIC_RELAXED) == 0 &&
		    !ring->ignore_overrun && ring->event != NULL)
			ring->event(ring, IBV_EVENT_CQ_ERR);
		return;
	}
	ring->cqes[prod & ring->mask] = *cqe;
	if (ring->timestamps)
		ring->cqes[prod & ring->mask].ts = rte_get_tsc_cycles();
	__atomic_store_n(&ring->prod, prod + 1, __ATOMIC_RELEASE);
	/* the next slot's line, last read on the poller's core */
	__builtin_prefetch(&ring->cqes[(prod + 1) & ring->mask], 1, 3);

	/* no channel, no one to wake */
	if (ring->notify == NULL)
		return;
	/* The poller arms, then polls; this publishes, then looks at the
	 * arming. Each side's store must be seen before its load, or both
	 * could miss the other and the completion would wait unannounced:
	 * a full fence here, and one in droce_req_notify_cq(). */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	armed = __atomic_load_n(&ring->armed, __ATOMIC_ACQUIRE);
	if (armed == 0)
		return;
	if (armed == DROCE_CQ_ARMED_SOLICITED &&
	    !(cqe->flags & DROCE_CQE_SOLICITED) && cqe->status == IBV_WC_SUCCESS)
		return;
	if (__atomic_compare_exchange_n(&ring->armed, &armed, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		ring->notify(ring);
}

struct owed_args {
	const struct droce_cq_ring *ring;
	uint32_t owed;
};

/* On a shard's lcore, its QPs: what each send queue owes the ring. */
static int
cq_owed_shard(struct droce_shard *sh, void *arg)
{
	struct owed_args *a = arg;
	uint32_t i, idx, end;

	for (i = 0; i < sh->nlive; i++) {
		const struct droce_qp_eng *qp = sh->live[i];
		const struct droce_wq *sq = qp->cfg.sq;

		if (qp->cfg.send_cq != a->ring || sq == NULL)
			continue;
		end = __atomic_load_n(&sq->prod_tail, __ATOMIC_ACQUIRE);
		for (idx = qp->comp.oldest; idx != end; idx++) {
			const struct droce_send_wqe *wqe =
				droce_wq_slot(sq, idx);

			if (qp->cfg.sq_sig_all ||
			    (wqe->flags & DROCE_WQE_SIGNALED))
				a->owed++;
		}
	}
	return 0;
}

int
droce_cq_owed(struct droce_dev *dev, const struct droce_cq_ring *ring,
	      uint32_t *owed)
{
	struct owed_args a = { .ring = ring };
	int ret;

	ret = droce_dev_call_shards(dev, cq_owed_shard, cq_owed_shard, &a);
	*owed = a.owed;
	return ret;
}
