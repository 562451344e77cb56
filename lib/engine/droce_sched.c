/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The QPs a pass runs. A pass visits shard->active, not every QP: one found
 * with nothing to do leaves it (droce_qp_try_sleep()) and comes back when
 * something may give it work: a frame for it (droce_resp_rx(),
 * droce_comp_rx(), a raw QP's flow), a change of its state (qp_modify()),
 * or a WQE its application posts (droce_qp_kick(): the poster, not the
 * lcore, notices, and hands the QP over through shard->kick). The poster
 * publishes its WQE, fences, reads asleep; the lcore sets asleep,
 * fences, reads the queue's producer index: one of them sees the other.
 */

#include <rte_ring.h>

#include "droce_engine_pvt.h"
#include "droce_comp.h"
#include "droce_resp.h"
#include "droce_sched.h"

/* Off the wheel's list it is on, if any. */
static void
wheel_remove(struct droce_qp_eng *qp)
{
	if (qp->wheel_pprev == NULL)
		return;
	*qp->wheel_pprev = qp->wheel_next;
	if (qp->wheel_next != NULL)
		qp->wheel_next->wheel_pprev = qp->wheel_pprev;
	qp->wheel_pprev = NULL;
	qp->shard->nwheel--;
}

/* Onto the list of the tick of wake_at (or, if that tick has been
 * looked at already, of the first one not: it is due). */
static void
wheel_add(struct droce_qp_eng *qp, uint64_t wake_at)
{
	struct droce_shard *sh = qp->shard;
	uint64_t tick = RTE_MAX(wake_at >> DROCE_WHEEL_SHIFT, sh->wheel_tick);
	struct droce_qp_eng **head = &sh->wheel[tick % DROCE_WHEEL_SLOTS];

	qp->wake_at = wake_at;
	qp->wheel_next = *head;
	if (*head != NULL)
		(*head)->wheel_pprev = &qp->wheel_next;
	*head = qp;
	qp->wheel_pprev = head;
	sh->nwheel++;
}

void
droce_qp_timers(struct droce_shard *sh, uint64_t now)
{
	uint64_t tick = now >> DROCE_WHEEL_SHIFT, t = sh->wheel_tick;

	if (likely(sh->nwheel == 0) || t >= tick) {
		sh->wheel_tick = RTE_MAX(t, tick);
		return;
	}
	/* each list of the ticks now past, each at most once; a QP due
	 * later (a turn or more) stays on its list */
	if (tick - t > DROCE_WHEEL_SLOTS)
		t = tick - DROCE_WHEEL_SLOTS;
	for (; t < tick; t++) {
		struct droce_qp_eng **pp = &sh->wheel[t % DROCE_WHEEL_SLOTS];

		while (*pp != NULL) {
			struct droce_qp_eng *qp = *pp;

			if (qp->wake_at <= now)
				droce_qp_activate(qp);    /* *pp: the next */
			else
				pp = &qp->wheel_next;
		}
	}
	sh->wheel_tick = tick;
}

static void
active_remove(struct droce_qp_eng *qp)
{
	struct droce_shard *sh = qp->shard;
	struct droce_qp_eng *last;

	if (qp->active_idx == DROCE_QP_ASLEEP)
		return;
	last = sh->active[sh->nactive - 1];
	sh->active[qp->active_idx] = last;
	last->active_idx = qp->active_idx;
	sh->nactive--;
	qp->active_idx = DROCE_QP_ASLEEP;
}

void
droce_qp_activate(struct droce_qp_eng *qp)
{
	struct droce_shard *sh = qp->shard;

	if (qp->active_idx != DROCE_QP_ASLEEP)
		return;
	wheel_remove(qp);
	__atomic_store_n(&qp->asleep, 0, __ATOMIC_RELAXED);
	qp->active_idx = sh->nactive;
	sh->active[sh->nactive++] = qp;
}

void
droce_qp_kicks(struct droce_shard *sh)
{
	void *qps[64];
	unsigned int n, i;

	if (unlikely(__atomic_load_n(&sh->kick_lost, __ATOMIC_ACQUIRE))) {
		__atomic_store_n(&sh->kick_lost, false, __ATOMIC_RELAXED);
		for (i = 0; i < sh->nlive; i++)
			droce_qp_activate(sh->live[i]);
	}
	do {
		n = rte_ring_sc_dequeue_burst(sh->kick, qps, RTE_DIM(qps),
					      NULL);
		for (i = 0; i < n; i++)
			droce_qp_activate(qps[i]);
	} while (n == RTE_DIM(qps));
}

/* What the QP's poster may have published that a pass must take. */
static bool
posts_taken(const struct droce_qp_eng *qp)
{
	const struct droce_wq *sq = qp->cfg.sq, *rq = qp->cfg.rq;

	switch (qp->state) {
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
		return sq == NULL || __atomic_load_n(&sq->prod_tail,
			__ATOMIC_RELAXED) == qp->req.seen;
	case IBV_QPS_ERR:
		/* flushed, both queues */
		return (sq == NULL || __atomic_load_n(&sq->prod_tail,
			__ATOMIC_RELAXED) == qp->comp.oldest) &&
			(rq == NULL || qp->cfg.srq != NULL ||
			 __atomic_load_n(&rq->prod_tail, __ATOMIC_RELAXED) ==
			 qp->resp.rq_cons);
	default:
		/* RESET, INIT, RTR: WQEs wait for the move to RTS */
		return true;
	}
}

bool
droce_qp_try_sleep(struct droce_qp_eng *qp, uint64_t now)
{
	uint64_t wake_at = 0;

	switch (qp->state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
		break;
	case IBV_QPS_RTR:
		if (!droce_resp_idle(qp)) {
			qp->idle_since = 0;
			return false;
		}
		break;
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
		/* waiting for answers is idle too: they wake it, or its
		 * timer does */
		if (!droce_req_waiting(qp, &wake_at) || !droce_resp_idle(qp)) {
			qp->idle_since = 0;
			return false;
		}
		break;
	case IBV_QPS_ERR:
		break;
	default:
		qp->idle_since = 0;
		return false;
	}
	/* a QP that talks back and forth stays while passes are short:
	 * only one idle for a while is worth the kick its next post would
	 * cost. Among many QPs with work, a pass's visit to it costs more
	 * than that kick: it goes at once. */
	if (qp->shard->nactive <= DROCE_QP_FEW) {
		if (qp->idle_since == 0) {
			qp->idle_since = now;
			return false;
		}
		if (now - qp->idle_since <
		    droce_eng.hz / 1000000 * DROCE_QP_SLEEP_US)
			return false;
	}
	__atomic_store_n(&qp->asleep, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!posts_taken(qp)) {
		__atomic_store_n(&qp->asleep, 0, __ATOMIC_RELAXED);
		qp->idle_since = 0;
		return false;
	}
	active_remove(qp);
	if (wake_at != 0)
		wheel_add(qp, wake_at);
	qp->idle_since = 0;
	return true;
}

void
droce_qp_kick(struct droce_qp_eng *qp)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (likely(__atomic_load_n(&qp->asleep, __ATOMIC_RELAXED) == 0))
		return;
	if (__atomic_exchange_n(&qp->asleep, 0, __ATOMIC_ACQ_REL) == 0)
		return;
	if (rte_ring_mp_enqueue(qp->shard->kick, qp) != 0)
		__atomic_store_n(&qp->shard->kick_lost, true, __ATOMIC_RELEASE);
}

void
droce_qp_unschedule(struct droce_qp_eng *qp)
{
	active_remove(qp);
	wheel_remove(qp);
}
