/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * QPs on the engine side, their life: creation in the device's QPN
 * table, the state transitions (attributes already checked by the verbs
 * layer), errors and flushing (the completer's and the responder's), SRQ
 * numbers. Which QPs a pass runs is droce_sched.c's, the path to the peer
 * droce_path.c's; what a QP does with packets is the requester's
 * (droce_req.c), the completer's (droce_comp.c) and the responder's
 * (droce_resp.c).
 */

#include <errno.h>

#include <rte_cycles.h>
#include <rte_random.h>
#include <rte_malloc.h>

#include "droce_engine_pvt.h"
#include "droce_comp.h"
#include "droce_req.h"
#include "droce_resp.h"
#include "droce_sched.h"

/* RNR NAK timer codes to microseconds (InfiniBand, table of RNR delays). */
static const uint32_t rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

uint64_t
droce_rnr_cycles(uint8_t code, uint64_t hz)
{
	return (uint64_t)rnr_us[code & 31] * hz / 1000000;
}

uint32_t
droce_qp_num(const struct droce_qp_eng *qp)
{
	return qp->cfg.qp_num;
}

const char *
droce_qp_state_name(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET",
		[IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR",
		[IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD",
		[IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned int)s < RTE_DIM(names) && names[s] != NULL ?
		names[s] : "?";
}

const char *
droce_qp_type_name(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	case IBV_QPT_XRC_SEND:
		return "XRC_SEND";
	case IBV_QPT_XRC_RECV:
		return "XRC_RECV";
	case IBV_QPT_RAW_PACKET:
		return "RAW_PACKET";
	default:
		return "?";
	}
}

enum ibv_qp_state
droce_qp_state(const struct droce_qp_eng *qp)
{
	return __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
}

void
droce_qp_stats(struct droce_qp_eng *qp, struct droce_qp_stats *stats)
{
	*stats = qp->stats;
}

void
droce_qp_cc_read(const struct droce_qp_eng *qp, uint64_t *rate,
		 uint64_t *target, uint32_t *alpha, uint64_t *cuts)
{
	const struct droce_dcqcn_params *p = &qp->shard->dev->cc;
	uint64_t r = __atomic_load_n(&qp->cc.rate, __ATOMIC_RELAXED);

	*rate = r != 0 ? r : p->rate_max;
	*target = r != 0 ? __atomic_load_n(&qp->cc.target, __ATOMIC_RELAXED) :
		p->rate_max;
	*alpha = r != 0 ? __atomic_load_n(&qp->cc.alpha, __ATOMIC_RELAXED) :
		p->alpha_init;
	*cuts = __atomic_load_n(&qp->cc.cnps, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
 * Creation and destruction, on the engine lcore.
 */

/* Bytes of the copy of a receive WQE a QP without an RQ works from. */
static size_t
srq_wqe_len(const struct droce_qp_cfg *cfg)
{
	size_t len;

	if (cfg->srq == NULL && cfg->type != IBV_QPT_XRC_RECV)
		return 0;
	/* an XRC target takes WQEs from whichever SRQ a message names:
	 * room for the largest */
	len = cfg->srq != NULL ? cfg->srq->wq.stride :
		sizeof(struct droce_recv_wqe) +
		DROCE_MAX_SGE * sizeof(struct ibv_sge);
	/* a TM SRQ's tagged buffers are used in place of WQEs */
	if (cfg->srq != NULL && cfg->srq->tm != NULL)
		len = RTE_MAX(len, sizeof(struct droce_recv_wqe) +
			      DROCE_TM_MAX_SGE * sizeof(struct ibv_sge));
	return len;
}

void
droce_qp_bytes(const struct droce_qp_eng *qp, uint64_t *state,
	       uint64_t *queues)
{
	const struct droce_wq *sq = qp->cfg.sq, *rq = qp->cfg.rq;

	*state += sizeof(*qp) + qp->cfg.user_bytes +
		(uint64_t)qp->rd_res_cap * sizeof(*qp->rd_res);
	*queues += (uint64_t)(sq->mask + 1) * (sq->stride + sizeof(*qp->swqe)) +
		srq_wqe_len(&qp->cfg);
	if (rq != NULL)
		*queues += (uint64_t)(rq->mask + 1) * rq->stride;
}

static void
qp_free(struct droce_qp_eng *qp)
{
	rte_free(qp->rd_res);
	rte_free(qp->srq_wqe);
	rte_free(qp->swqe);
	rte_free(qp);
}

/*
 * A QPN for @p qp and a place in the loop. The GSI takes QPN 1, outside
 * the table, while no other QP has it; every other QP a slot of the
 * table and a tag.
 */
static int
qp_insert(struct droce_shard *sh, void *arg)
{
	struct droce_qp_eng *qp = arg;
	uint32_t step = sh->dev->nshards, nslots, n, k = 0, i = 0, tag;

	if (qp->cfg.gsi) {
		if (sh->qp1 != NULL)
			return -EBUSY;
		qp->slot = DROCE_MAX_QP;
		qp->cfg.qp_num = DROCE_GSI_QPN;
		qp->live_idx = sh->nlive;
		sh->live[sh->nlive++] = qp;
		sh->qp1 = qp;
		droce_qp_activate(qp);
		return 0;
	}
	/* the free slot after the last one taken, and a tag of its own;
	 * a shard's slots are those equal to its index modulo the shards
	 * (droce_dev_owner()) */
	nslots = (DROCE_MAX_QP - sh->index + step - 1) / step;
	for (n = 0; n < nslots; n++) {
		k = (sh->next_slot + n) % nslots;
		i = sh->index + k * step;
		if (sh->qps[i] == NULL)
			break;
	}
	if (n == nslots)
		return -ENOMEM;
	sh->next_slot = (k + 1) % nslots;
	tag = 1 + (uint32_t)(rte_rand() % DROCE_QPN_TAGS);
	qp->slot = i;
	qp->cfg.qp_num = tag << DROCE_QPN_SLOT_BITS | i;
	qp->live_idx = sh->nlive;
	sh->live[sh->nlive++] = qp;
	sh->qps[i] = qp;
	droce_qp_activate(qp);
	return 0;
}

/*
 * Does a QP made with @p cfg go to the shards of its device in turn? An
 * RC or UC QP with a receive queue of its own does; any other goes to
 * the primary, which has the device's SRQs, multicast groups, flow rules
 * and QP1 (an XRC target takes its WQEs from whichever SRQ a message
 * names).
 */
static bool
qp_spread(const struct droce_qp_cfg *cfg)
{
	return cfg->srq == NULL &&
		(cfg->type == IBV_QPT_RC || cfg->type == IBV_QPT_UC);
}

struct droce_qp_eng *
droce_qp_create(struct droce_dev *dev, const struct droce_qp_cfg *cfg)
{
	struct droce_shard *sh = dev->shards[0];
	struct droce_shard *first;
	struct droce_qp_eng *qp;
	int ret;

	if (cfg->type != IBV_QPT_RC && cfg->type != IBV_QPT_UC &&
	    cfg->type != IBV_QPT_UD && cfg->type != IBV_QPT_XRC_SEND &&
	    cfg->type != IBV_QPT_XRC_RECV &&
	    cfg->type != IBV_QPT_RAW_PACKET) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* the GSI is a UD QP */
	if (cfg->gsi && cfg->type != IBV_QPT_UD) {
		errno = EINVAL;
		return NULL;
	}
	qp = rte_zmalloc("droce_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE);
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	qp->active_idx = DROCE_QP_ASLEEP;
	if (srq_wqe_len(cfg) != 0) {
		qp->srq_wqe = rte_zmalloc("droce_srq_wqe", srq_wqe_len(cfg),
					  RTE_CACHE_LINE_SIZE);
		if (qp->srq_wqe == NULL) {
			qp_free(qp);
			errno = ENOMEM;
			return NULL;
		}
	}
	qp->swqe = rte_zmalloc("droce_swqe", (size_t)(cfg->sq->mask + 1) *
			       sizeof(*qp->swqe), RTE_CACHE_LINE_SIZE);
	if (qp->swqe == NULL) {
		qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	first = sh;
	if (dev->nshards > 1 && qp_spread(cfg))
		first = dev->shards[__atomic_fetch_add(&dev->next_shard, 1,
						       __ATOMIC_RELAXED) %
				    dev->nshards];
	qp->shard = first;
	qp->cfg = *cfg;
	qp->tr = cfg->type == IBV_QPT_UC ? DROCE_TR_UC :
		cfg->type == IBV_QPT_UD ? DROCE_TR_UD :
		cfg->type == IBV_QPT_XRC_SEND || cfg->type == IBV_QPT_XRC_RECV ?
		DROCE_TR_XRC : cfg->type == IBV_QPT_RAW_PACKET ? DROCE_TR_NONE :
		DROCE_TR_RC;
	if (qp->tr == DROCE_TR_UD) {
		/* a datagram is one packet of at most the port's MTU */
		qp->path_mtu = dev->active_mtu;
		qp->mtu = droce_mtu_bytes(dev->active_mtu);
	} else if (qp->tr == DROCE_TR_NONE) {
		/* a raw WR is one frame */
		qp->mtu = dev->eth_mtu + RTE_ETHER_HDR_LEN + 4;
	}
	qp->state = IBV_QPS_RESET;
	droce_resp_reset(qp);
	qp->pkey_index = 0;
	/* a shard that is full passes the QP on to the next */
	do {
		ret = droce_shard_call(qp->shard, qp_insert, qp);
		if (ret != -ENOMEM || !qp_spread(cfg))
			break;
		qp->shard = dev->shards[(qp->shard->index + 1) % dev->nshards];
	} while (qp->shard != first);
	if (ret < 0) {
		qp_free(qp);
		errno = -ret;
		return NULL;
	}
	return qp;
}

static int
qp_remove(struct droce_shard *sh, void *arg)
{
	struct droce_qp_eng *qp = arg;
	struct droce_qp_eng *last = sh->live[sh->nlive - 1];

	/* an ACK that waits for a pass would never go */
	droce_resp_send_waiting(qp);
	/* no kick naming it may stay behind in the ring */
	droce_qp_kicks(sh);
	droce_qp_unschedule(qp);
	sh->live[qp->live_idx] = last;
	last->live_idx = qp->live_idx;
	sh->nlive--;
	if (qp == sh->qp1)
		sh->qp1 = NULL;
	else
		sh->qps[qp->slot] = NULL;
	droce_mcast_forget(qp);
	return 0;
}

void
droce_qp_destroy(struct droce_qp_eng *qp)
{
	droce_shard_call(qp->shard, qp_remove, qp);
	qp_free(qp);
}

/* ------------------------------------------------------------------------
 * State transitions.
 */

/* Forget all transport state (RESET). */
static void
qp_reset(struct droce_qp_eng *qp)
{
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	droce_resp_reset(qp);
	memset(&qp->cc, 0, sizeof(qp->cc));
	qp->cc_next = 0;
	qp->cnp_next = 0;
	if (qp->rd_res != NULL)
		memset(qp->rd_res, 0, qp->rd_res_cap * sizeof(*qp->rd_res));
	qp->path.mac_ok = false;
	qp->sq_draining = 0;
}

struct modify_args {
	struct droce_qp_eng *qp;
	const struct ibv_qp_attr *attr;
	int mask;
	/* READ/atomic resources for the responder: a larger ring to take,
	 * of rd_res_cap entries (the one given up comes back in it) */
	struct droce_rd_res *rd_res;
	uint32_t rd_res_cap;
};

/* Whether @p dev can give what @p mask asks of @p attr. @return 0 or
 * EINVAL. */
static int
modify_check(const struct droce_dev *dev, const struct ibv_qp_attr *attr,
	     int mask)
{
	if ((mask & IBV_QP_PATH_MTU) && attr->path_mtu > dev->active_mtu)
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > DROCE_MAX_RD_ATOMIC)
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > DROCE_MAX_RD_ATOMIC)
		return EINVAL;
	return 0;
}

/* The attributes of @p mask other than the path and the state, as
 * they are kept. */
static void
modify_attrs(struct droce_qp_eng *qp, const struct ibv_qp_attr *attr,
	     int mask)
{
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IBV_QP_PORT)
		qp->port_num = attr->port_num;
	if (mask & IBV_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IBV_QP_PATH_MTU) {
		qp->path_mtu = attr->path_mtu;
		qp->mtu = droce_mtu_bytes(attr->path_mtu);
	}
	if (mask & IBV_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num & DROCE_PSN_MASK;
	if (mask & IBV_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn & DROCE_PSN_MASK;
	if (mask & IBV_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & DROCE_PSN_MASK;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer & 31;
	if (mask & IBV_QP_TIMEOUT) {
		qp->timeout = attr->timeout;
		qp->timeout_cycles = droce_timeout_cycles(attr->timeout,
							  droce_eng.hz);
	}
	if (mask & IBV_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt & 7;
	if (mask & IBV_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry & 7;
}

/* The responder's larger ring of READ/atomic resources, if @p a brings
 * one: the entries in use keep their places, the ring given up goes
 * back in @p a. */
static void
modify_rd_res(struct droce_qp_eng *qp, struct modify_args *a)
{
	struct droce_rd_res *old = qp->rd_res;

	if (a->rd_res_cap <= qp->rd_res_cap)
		return;
	if (old != NULL)
		memcpy(a->rd_res, old, qp->rd_res_cap * sizeof(*old));
	qp->rd_res = a->rd_res;
	/* (rd_res_wanted() reads it outside the lcore) */
	__atomic_store_n(&qp->rd_res_cap, a->rd_res_cap, __ATOMIC_RELAXED);
	a->rd_res = old;
}

/* @p qp into @p next: the responder starts at INIT to RTR, the
 * requester at RTR to RTS. */
static void
modify_state(struct droce_dev *dev, struct droce_qp_eng *qp,
	     enum ibv_qp_state next)
{
	switch (next) {
	case IBV_QPS_RESET:
		qp_reset(qp);
		break;
	case IBV_QPS_RTR:
		if (qp->state == IBV_QPS_INIT) {
			droce_resp_start(qp);
			if (qp->path.mac_ok)
				droce_path_build_header(dev, &qp->path);
		}
		break;
	case IBV_QPS_RTS:
		if (qp->state == IBV_QPS_RTR) {
			droce_req_start(qp);
			droce_comp_start(qp);
		}
		qp->sq_draining = 0;
		break;
	case IBV_QPS_SQD:
		qp->sq_draining = 1;
		break;
	case IBV_QPS_ERR:
		/* (which sets the state itself) */
		droce_qp_error(qp);
		return;
	default:
		break;
	}
	__atomic_store_n(&qp->state, next, __ATOMIC_RELEASE);
}

static int
qp_modify(struct droce_shard *sh, void *arg)
{
	struct modify_args *a = arg;
	struct droce_qp_eng *qp = a->qp;
	const struct ibv_qp_attr *attr = a->attr;
	int mask = a->mask;
	int ret;

	droce_qp_activate(qp);
	/* the ACK that waits for a pass goes as the QP is (a QP taken
	 * to ERR, or to RESET, would never send it) */
	droce_resp_send_waiting(qp);
	ret = modify_check(sh->dev, attr, mask);
	if (ret != 0)
		return ret;
	if (mask & IBV_QP_AV) {
		/* a connected QP's packets are ECN-capable (the flows
		 * DCQCN acts on); UD's, QP1's CM MADs among them, are not */
		qp->path.ect = droce_eng.cfg.ecn && droce_tr_connected(qp->tr);
		ret = droce_path_set(sh, &qp->path, &attr->ah_attr,
				     rte_get_tsc_cycles());
		if (ret != 0)
			return ret;
	}
	modify_attrs(qp, attr, mask);
	if ((mask & (IBV_QP_DEST_QPN | IBV_QP_AV)) &&
	    droce_tr_connected(qp->tr))
		qp->path.sport = droce_rss_sport(sh->dev, &qp->path,
						 qp->cfg.qp_num, qp->dest_qpn);
	modify_rd_res(qp, a);
	if (mask & IBV_QP_STATE)
		modify_state(sh->dev, qp, attr->qp_state);
	return 0;
}

/*
 * READ/atomic resources a responder needs after this change: one for
 * each it grants (at least one, as the responder takes one to answer a
 * READ beyond its grant with a NAK), or 0 if it has them already.
 */
static uint32_t
rd_res_wanted(const struct droce_qp_eng *qp, const struct ibv_qp_attr *attr,
	      int mask)
{
	uint32_t n = qp->max_dest_rd_atomic;

	if (qp->tr != DROCE_TR_RC && qp->tr != DROCE_TR_XRC)
		return 0;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) {
		if (attr->max_dest_rd_atomic > DROCE_MAX_RD_ATOMIC)
			return 0;       /* refused on the lcore */
		n = attr->max_dest_rd_atomic;
	} else if (!(mask & IBV_QP_STATE) || attr->qp_state != IBV_QPS_RTR) {
		return 0;
	}
	n = RTE_MAX(n, 1u);
	/* read outside the lcore: only the lcore grows it, and it looks
	 * again before taking what this call allocated */
	return n > __atomic_load_n(&qp->rd_res_cap, __ATOMIC_RELAXED) ? n : 0;
}

int
droce_qp_modify(struct droce_qp_eng *qp, const struct ibv_qp_attr *attr,
		int mask)
{
	struct modify_args a = { .qp = qp, .attr = attr, .mask = mask };
	int ret;

	/* allocated here, not on the lcore, which only swaps it in */
	a.rd_res_cap = rd_res_wanted(qp, attr, mask);
	if (a.rd_res_cap != 0) {
		a.rd_res = rte_zmalloc("droce_rd_res", a.rd_res_cap *
				       sizeof(*a.rd_res), RTE_CACHE_LINE_SIZE);
		if (a.rd_res == NULL)
			return ENOMEM;
	}
	ret = droce_shard_call(qp->shard, qp_modify, &a);
	rte_free(a.rd_res);
	return ret;
}

struct query_args {
	struct droce_qp_eng *qp;
	struct ibv_qp_attr *attr;
};

static int
qp_query(struct droce_shard *sh, void *arg)
{
	struct query_args *a = arg;
	const struct droce_qp_eng *qp = a->qp;
	struct ibv_qp_attr *attr = a->attr;

	RTE_SET_USED(sh);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = qp->path_mtu;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->state >= IBV_QPS_RTR ? qp->resp.psn : qp->rq_psn;
	attr->sq_psn = qp->state >= IBV_QPS_RTS ? qp->req.psn : qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->ah_attr = qp->path.ah;
	attr->pkey_index = qp->pkey_index;
	attr->sq_draining = qp->sq_draining;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->port_num = qp->port_num;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	return 0;
}

int
droce_qp_query(struct droce_qp_eng *qp, struct ibv_qp_attr *attr)
{
	struct query_args a = { .qp = qp, .attr = attr };

	return droce_shard_call(qp->shard, qp_query, &a);
}

/* ------------------------------------------------------------------------
 * Errors and flushing.
 */

void
droce_qp_error(struct droce_qp_eng *qp)
{
	__atomic_store_n(&qp->state, IBV_QPS_ERR, __ATOMIC_RELEASE);
	droce_comp_timers_stop(qp);
}

void
droce_qp_flush(struct droce_qp_eng *qp)
{
	droce_comp_flush(qp);
	droce_resp_flush(qp);
}

/* ------------------------------------------------------------------------
 * SRQ numbers.
 */

static int
srq_insert(struct droce_shard *sh, void *arg)
{
	struct droce_srq_eng *srq = arg;
	uint32_t i;

	for (i = 0; i < DROCE_MAX_SRQ; i++)
		if (sh->dev->srqs[i] == NULL)
			break;
	if (i == DROCE_MAX_SRQ)
		return -ENOMEM;
	sh->dev->srqs[i] = srq;
	srq->srqn = i + 1;
	return 0;
}

int
droce_srq_register(struct droce_dev *dev, struct droce_srq_eng *srq)
{
	struct droce_shard *sh = dev->shards[0];
	return droce_shard_call(sh, srq_insert, srq);
}

static int
srq_remove(struct droce_shard *sh, void *arg)
{
	struct droce_srq_eng *srq = arg;

	if (srq->srqn != 0 && sh->dev->srqs[srq->srqn - 1] == srq)
		sh->dev->srqs[srq->srqn - 1] = NULL;
	return 0;
}

void
droce_srq_unregister(struct droce_dev *dev, struct droce_srq_eng *srq)
{
	struct droce_shard *sh = dev->shards[0];
	droce_shard_call(sh, srq_remove, srq);
}
