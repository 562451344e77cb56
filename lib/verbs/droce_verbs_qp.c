/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Queue pairs: creation with caps enforced as a hardware provider does,
 * the state machine with its attribute masks, and posting. A post
 * validates each WR, builds the WQEs in place in the work queue and
 * publishes them with one store; no syscall, no lock.
 */

#include <linux/capability.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_malloc.h>

#include "droce_verbs_pvt.h"

/* ------------------------------------------------------------------------
 * The QP state table: which transitions exist, and for each the
 * attributes it requires and those it allows (InfiniBand, "QP state
 * transition" attribute tables), for RC and, with fewer attributes, UC.
 */

struct transition {
	bool valid;
	int req;
	int opt;
};

#define ST(a, b) [IBV_QPS_ ## a][IBV_QPS_ ## b]
#define ALT (IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE)

static const struct transition rc_table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	ST(RESET, RESET) = { true, 0, 0 },
	ST(RESET, INIT) = { true, IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		IBV_QP_ACCESS_FLAGS, 0 },
	ST(INIT, RESET) = { true, 0, 0 },
	ST(INIT, ERR) = { true, 0, 0 },
	ST(INIT, INIT) = { true, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		IBV_QP_ACCESS_FLAGS },
	ST(INIT, RTR) = { true, IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		IBV_QP_MIN_RNR_TIMER, IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
		IBV_QP_PKEY_INDEX },
	ST(RTR, RESET) = { true, 0, 0 },
	ST(RTR, ERR) = { true, 0, 0 },
	ST(RTR, RTS) = { true, IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
		IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT,
		IBV_QP_CUR_STATE | ALT | IBV_QP_ACCESS_FLAGS |
		IBV_QP_MIN_RNR_TIMER },
	ST(RTS, RESET) = { true, 0, 0 },
	ST(RTS, ERR) = { true, 0, 0 },
	ST(RTS, RTS) = { true, 0, IBV_QP_CUR_STATE | ALT |
		IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER },
	ST(RTS, SQD) = { true, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY },
	ST(SQD, RESET) = { true, 0, 0 },
	ST(SQD, ERR) = { true, 0, 0 },
	ST(SQD, RTS) = { true, 0, IBV_QP_CUR_STATE | ALT |
		IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER },
	ST(SQD, SQD) = { true, 0, IBV_QP_AV | ALT | IBV_QP_ACCESS_FLAGS |
		IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER | IBV_QP_TIMEOUT |
		IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
		IBV_QP_MAX_DEST_RD_ATOMIC },
	ST(SQE, RESET) = { true, 0, 0 },
	ST(SQE, ERR) = { true, 0, 0 },
	ST(ERR, RESET) = { true, 0, 0 },
	ST(ERR, ERR) = { true, 0, 0 },
};

/* UD: no path, no PSN checks on receipt; a Q_Key instead. */
static const struct transition ud_table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	ST(RESET, RESET) = { true, 0, 0 },
	ST(RESET, INIT) = { true, IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		IBV_QP_QKEY, 0 },
	ST(INIT, RESET) = { true, 0, 0 },
	ST(INIT, ERR) = { true, 0, 0 },
	ST(INIT, INIT) = { true, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		IBV_QP_QKEY },
	ST(INIT, RTR) = { true, 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY },
	ST(RTR, RESET) = { true, 0, 0 },
	ST(RTR, ERR) = { true, 0, 0 },
	ST(RTR, RTS) = { true, IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	ST(RTS, RESET) = { true, 0, 0 },
	ST(RTS, ERR) = { true, 0, 0 },
	ST(RTS, RTS) = { true, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	ST(RTS, SQD) = { true, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY },
	ST(SQD, RESET) = { true, 0, 0 },
	ST(SQD, ERR) = { true, 0, 0 },
	ST(SQD, RTS) = { true, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	ST(SQD, SQD) = { true, 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY },
	ST(SQE, RESET) = { true, 0, 0 },
	ST(SQE, ERR) = { true, 0, 0 },
	ST(SQE, RTS) = { true, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	ST(ERR, RESET) = { true, 0, 0 },
	ST(ERR, ERR) = { true, 0, 0 },
};

/* Raw packet: a port, nothing else. */
static const struct transition raw_table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	ST(RESET, RESET) = { true, 0, 0 },
	ST(RESET, INIT) = { true, IBV_QP_PORT, 0 },
	ST(INIT, RESET) = { true, 0, 0 },
	ST(INIT, ERR) = { true, 0, 0 },
	ST(INIT, INIT) = { true, 0, IBV_QP_PORT },
	ST(INIT, RTR) = { true, 0, 0 },
	ST(RTR, RESET) = { true, 0, 0 },
	ST(RTR, ERR) = { true, 0, 0 },
	ST(RTR, RTS) = { true, 0, 0 },
	ST(RTS, RESET) = { true, 0, 0 },
	ST(RTS, ERR) = { true, 0, 0 },
	ST(RTS, RTS) = { true, 0, 0 },
	ST(ERR, RESET) = { true, 0, 0 },
	ST(ERR, ERR) = { true, 0, 0 },
};

int
droce_qp_attr_check(enum ibv_qp_type type, enum ibv_qp_state cur,
		    enum ibv_qp_state next, int mask)
{
	/* UC has RC's table without what only acknowledged, READ or
	 * atomic traffic needs */
	const int rc_only = IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER |
		IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		IBV_QP_TIMEOUT;
	/* an XRC initiator has RC's requester only, a target its
	 * responder only */
	const int resp_only = IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	const int req_only = IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY;
	const struct transition *t;
	int req, opt, strip = 0;

	if ((type != IBV_QPT_RC && type != IBV_QPT_UC &&
	     type != IBV_QPT_UD && type != IBV_QPT_XRC_SEND &&
	     type != IBV_QPT_XRC_RECV && type != IBV_QPT_RAW_PACKET) ||
	    cur > IBV_QPS_ERR || next > IBV_QPS_ERR)
		return EINVAL;
	t = type == IBV_QPT_UD ? &ud_table[cur][next] :
		type == IBV_QPT_RAW_PACKET ? &raw_table[cur][next] :
		&rc_table[cur][next];
	if (!t->valid)
		return EINVAL;
	if (type == IBV_QPT_UC)
		strip = rc_only;
	else if (type == IBV_QPT_XRC_SEND)
		strip = resp_only;
	else if (type == IBV_QPT_XRC_RECV)
		strip = req_only;
	req = t->req & ~strip;
	opt = t->opt & ~strip;
	mask &= ~IBV_QP_STATE;
	if ((mask & req) != req)
		return EINVAL;
	if (mask & ~(req | opt))
		return EINVAL;
	return 0;
}

/* ------------------------------------------------------------------------
 * Creation and destruction.
 */

int
droce_wq_init(struct droce_wq *wq, uint32_t max_wr, uint32_t stride,
	      uint32_t max_sge, uint32_t max_inline)
{
	uint32_t slots = rte_align32pow2(RTE_MAX(max_wr, 1u));

	memset(wq, 0, sizeof(*wq));
	wq->stride = RTE_ALIGN_CEIL(stride, RTE_CACHE_LINE_SIZE);
	wq->slots = rte_zmalloc("droce_wq", (size_t)slots * wq->stride,
				RTE_CACHE_LINE_SIZE);
	if (wq->slots == NULL)
		return -ENOMEM;
	wq->mask = slots - 1;
	wq->max_wr = max_wr;
	wq->max_sge = max_sge;
	wq->max_inline = max_inline;
	return 0;
}

/* An asynchronous event of the QP, from its engine lcore. */
static void
qp_event(void *arg, enum ibv_event_type type)
{
	struct droce_qp *qp = arg;
	struct ibv_async_event ev = {
		.element.qp = &qp->qpx.qp_base,
		.event_type = type,
	};

	droce_async_event(qp->ctx, &ev);
}

/*
 * Whether a QP of @p attr's type may be made with what @p attr, @p pd
 * and @p xrcd give (an XRC target has an XRC domain, every other QP a
 * PD). @return 0 or the errno.
 */
static int
qp_kind_check(struct ibv_context *context, const struct ibv_pd *pd,
	      const struct ibv_qp_init_attr *attr,
	      const struct droce_xrcd *xrcd)
{
	enum ibv_qp_type type = attr->qp_type;

	if (type != IBV_QPT_RC && type != IBV_QPT_UC &&
	    type != IBV_QPT_UD && type != IBV_QPT_XRC_SEND &&
	    type != IBV_QPT_XRC_RECV && type != IBV_QPT_RAW_PACKET)
		return EOPNOTSUPP;
	/* tag matching is RC's */
	if (attr->srq != NULL && to_srq(attr->srq)->eng.tm != NULL &&
	    type != IBV_QPT_RC)
		return EINVAL;
	if (type == IBV_QPT_RAW_PACKET &&
	    (attr->srq != NULL || !droce_has_net_raw()))
		return attr->srq != NULL ? EINVAL : EPERM;
	if ((attr->srq != NULL && attr->srq->context != context) ||
	    (type == IBV_QPT_XRC_RECV ? xrcd == NULL : pd == NULL))
		return EINVAL;
	return 0;
}

/*
 * What @p attr asks that a QP of its kind has not, taken out of it: a QP
 * on an RSS table (@p rss) has neither queues nor CQs of its own, nothing
 * is received into an XRC QP (its SRQs are), and an XRC target sends
 * nothing itself. @return 0, or EINVAL if what is left is not a QP
 * droce can make.
 */
static int
qp_attr_fit(struct ibv_qp_init_attr *attr, const struct droce_rss *rss)
{
	struct ibv_qp_cap *cap = &attr->cap;
	bool ini = attr->qp_type == IBV_QPT_XRC_SEND;
	bool tgt = attr->qp_type == IBV_QPT_XRC_RECV;

	if (rss != NULL) {
		attr->srq = NULL;
		attr->send_cq = NULL;
		attr->recv_cq = NULL;
		memset(cap, 0, sizeof(*cap));
	}
	if (ini || tgt) {
		attr->srq = NULL;
		attr->recv_cq = NULL;
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	if (tgt) {
		attr->send_cq = NULL;
		memset(cap, 0, sizeof(*cap));
	}
	if ((attr->send_cq == NULL && !tgt && rss == NULL) ||
	    (attr->recv_cq == NULL && !ini && !tgt && rss == NULL) ||
	    cap->max_send_wr > DROCE_MAX_QP_WR ||
	    cap->max_recv_wr > DROCE_MAX_QP_WR ||
	    cap->max_send_sge > DROCE_MAX_SGE ||
	    cap->max_recv_sge > DROCE_MAX_SGE ||
	    cap->max_inline_data > DROCE_MAX_INLINE)
		return EINVAL;
	return 0;
}

/*
 * @p qp's send and receive queues, of @p attr's capabilities (those of a
 * QP on an SRQ: no receive queue). A send WQE has room for its SGEs or
 * inline data, an atomic's one SGE, a TSO header of @p tso_hdr bytes
 * after the SGEs, a UD datagram's headers; a QP of a TM SRQ room for the
 * engine's rendezvous READs and FINs too. @return 0 or -ENOMEM.
 */
static int
qp_queues_init(struct droce_qp *qp, struct ibv_qp_init_attr *attr,
	       uint32_t tso_hdr)
{
	struct ibv_qp_cap *cap = &attr->cap;
	uint32_t sges = RTE_MAX(cap->max_send_sge, 1u);
	uint32_t send_payload, sq_wr = cap->max_send_wr;

	send_payload = RTE_MAX(sges * (uint32_t)sizeof(struct ibv_sge),
			       cap->max_inline_data);
	if (tso_hdr != 0)
		send_payload = RTE_MAX(send_payload, sges *
				       (uint32_t)sizeof(struct ibv_sge) +
				       tso_hdr);
	if (attr->srq != NULL) {
		qp->srq = to_srq(attr->srq);
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	/* (droce_send_wqe_ud_hdr) */
	if (attr->qp_type == IBV_QPT_UD)
		send_payload = RTE_ALIGN_CEIL(send_payload +
					      sizeof(struct droce_send_wqe),
					      RTE_CACHE_LINE_SIZE) -
			sizeof(struct droce_send_wqe) + DROCE_UD_HDR_ROOM;
	/* however few WRs the application asked (rdma-core's tests ask
	 * none), into up to DROCE_TM_MAX_SGE pieces */
	if (qp->srq != NULL && qp->srq->eng.tm != NULL) {
		sq_wr += DROCE_TM_RNDV_WQES;
		send_payload = RTE_MAX(send_payload, DROCE_TM_MAX_SGE *
				       (uint32_t)sizeof(struct ibv_sge));
	}
	if (droce_wq_init(&qp->sq, sq_wr,
			  sizeof(struct droce_send_wqe) + send_payload,
			  cap->max_send_sge, cap->max_inline_data) < 0)
		return -ENOMEM;
	if (qp->srq == NULL &&
	    droce_wq_init(&qp->rq, cap->max_recv_wr,
			  sizeof(struct droce_recv_wqe) +
			  RTE_MAX(cap->max_recv_sge, 1u) *
			  sizeof(struct ibv_sge), cap->max_recv_sge, 0) < 0)
		return -ENOMEM;
	return 0;
}

/* @p qp's engine half, of @p qp's queues and CQs. NULL (errno) if none. */
static struct droce_qp_eng *
qp_eng_create(struct droce_qp *qp, struct ibv_pd *pd, enum ibv_qp_type type,
	      bool gsi, struct droce_rss *rss)
{
	struct droce_qp_cfg cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.type = type;
	/* a target's PD and CQ are those of the SRQ each message names */
	cfg.pd = pd != NULL ? pd_eng(pd) : NULL;
	cfg.send_cq = qp->send_cq != NULL ? &qp->send_cq->ring : NULL;
	cfg.recv_cq = qp->recv_cq != NULL ? &qp->recv_cq->ring : NULL;
	/* a TM SRQ reports every receive to its own CQ */
	if (qp->srq != NULL && qp->srq->eng.tm != NULL)
		cfg.recv_cq = &qp->srq->cq->ring;
	cfg.xrcd = qp->xrcd != NULL ? qp->xrcd->id : 0;
	cfg.sq = &qp->sq;
	cfg.rq = qp->srq != NULL ? NULL : &qp->rq;
	cfg.srq = qp->srq != NULL ? &qp->srq->eng : NULL;
	cfg.rss = rss != NULL ? &rss->eng : NULL;
	cfg.sq_sig_all = qp->sq_sig_all;
	cfg.gsi = gsi;
	cfg.event = qp_event;
	cfg.event_arg = qp;
	cfg.user_bytes = sizeof(*qp);
	return droce_qp_create(qp->ctx->dev, &cfg);
}

/* A QP that never was: its queues and itself freed, errno kept. */
static void
qp_free(struct droce_qp *qp)
{
	int err = errno;

	rte_free(qp->sq.slots);
	rte_free(qp->rq.slots);
	rte_free(qp);
	errno = err;
}

/* What a QP uses is held while it is: CQs, PD, XRC domain and SRQ. */
static void
qp_hold(struct droce_qp *qp, struct ibv_pd *pd)
{
	if (qp->send_cq != NULL)
		__atomic_add_fetch(&qp->send_cq->nqps, 1, __ATOMIC_RELAXED);
	if (qp->recv_cq != NULL)
		__atomic_add_fetch(&qp->recv_cq->nqps, 1, __ATOMIC_RELAXED);
	if (pd != NULL)
		__atomic_add_fetch(&to_pd(pd)->users, 1, __ATOMIC_RELAXED);
	if (qp->xrcd != NULL)
		__atomic_add_fetch(&qp->xrcd->users, 1, __ATOMIC_RELAXED);
	if (qp->srq != NULL)
		__atomic_add_fetch(&qp->srq->users, 1, __ATOMIC_RELAXED);
}

/* The struct ibv_qp the application sees, in RESET. */
static void
qp_base_init(struct droce_qp *qp, struct ibv_context *context,
	     struct ibv_pd *pd, const struct ibv_qp_init_attr *attr)
{
	struct ibv_qp *b = &qp->qpx.qp_base;

	b->context = context;
	b->qp_context = attr->qp_context;
	b->pd = pd;
	b->send_cq = attr->send_cq;
	b->recv_cq = attr->recv_cq;
	b->srq = attr->srq;
	b->qp_num = droce_qp_num(qp->eng);
	b->handle = b->qp_num;
	b->state = IBV_QPS_RESET;
	b->qp_type = attr->qp_type;
	pthread_mutex_init(&b->mutex, NULL);
	pthread_cond_init(&b->cond, NULL);
}

/*
 * Make a QP; an XRC target (XRC_RECV) has @p xrcd instead of a PD, and
 * neither queues nor CQs of its own, an XRC initiator (XRC_SEND) a send
 * queue only. With @p gsi, a UD QP is the device's QP1. With @p rss, a
 * raw packet QP receives into the work queues of that table, and has
 * neither queues nor CQs of its own.
 */
static struct ibv_qp *
create_qp(struct ibv_context *context, struct ibv_pd *pd,
	  struct ibv_qp_init_attr *attr, struct droce_xrcd *xrcd,
	  uint32_t tso_hdr, bool gsi, struct droce_rss *rss)
{
	struct droce_qp *qp;
	int err;

	err = qp_kind_check(context, pd, attr, xrcd);
	if (err == 0)
		err = qp_attr_fit(attr, rss);
	if (err != 0) {
		errno = err;
		return NULL;
	}
	qp = rte_zmalloc("droce_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE);
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (qp_queues_init(qp, attr, tso_hdr) < 0) {
		errno = ENOMEM;
		qp_free(qp);
		return NULL;
	}
	qp->ctx = to_ctx(context);
	qp->send_cq = attr->send_cq != NULL ? to_cq(attr->send_cq) : NULL;
	qp->recv_cq = attr->recv_cq != NULL ? to_cq(attr->recv_cq) : NULL;
	qp->xrcd = attr->qp_type == IBV_QPT_XRC_RECV ? xrcd : NULL;
	qp->rss = rss;
	qp->cap = attr->cap;
	qp->sq_sig_all = attr->sq_sig_all != 0;
	qp->max_tso_header = (uint16_t)tso_hdr;
	pthread_mutex_init(&qp->modify_lock, NULL);
	qp->eng = qp_eng_create(qp, pd, attr->qp_type, gsi, rss);
	if (qp->eng == NULL) {
		qp_free(qp);
		return NULL;
	}
	qp_hold(qp, pd);
	qp_base_init(qp, context, pd, attr);
	return &qp->qpx.qp_base;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	return create_qp(pd->context, pd, attr, NULL,
			 attr->qp_type == IBV_QPT_RAW_PACKET ? DROCE_TSO_HDR :
			 0, false, NULL);
}

/*
 * The creation flags droce has: IBV_QP_CREATE_SOURCE_QPN, on a UD QP,
 * with source QPN 1 only: the device's GSI, which sends from QPN 1 and
 * receives what is sent to it (one per device: EBUSY while it exists).
 * Another flag is refused with EOPNOTSUPP, as soft-RoCE's provider
 * refuses one it has not got. @return 0 or the errno, *gsi set.
 */
static int
create_flags_check(const struct ibv_qp_init_attr_ex *attr, bool *gsi)
{
	*gsi = false;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS))
		return 0;
	if (attr->create_flags & ~(uint32_t)IBV_QP_CREATE_SOURCE_QPN)
		return EOPNOTSUPP;
	if (!(attr->create_flags & IBV_QP_CREATE_SOURCE_QPN))
		return 0;
	if (attr->qp_type != IBV_QPT_UD || attr->source_qpn != DROCE_GSI_QPN)
		return EINVAL;
	*gsi = true;
	return 0;
}

struct ibv_qp *
droce_create_qp_ex(struct ibv_context *context,
		   struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
		IBV_QP_INIT_ATTR_CREATE_FLAGS |
		IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
		IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
		IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH;
	/* an XRC target has a domain, every other QP a PD */
	const uint32_t needed = attr->qp_type == IBV_QPT_XRC_RECV ?
		IBV_QP_INIT_ATTR_XRCD : IBV_QP_INIT_ATTR_PD;
	struct droce_xrcd *xrcd = NULL;
	struct droce_rss *rss = NULL;
	struct ibv_qp_init_attr a;
	uint32_t tso_hdr = 0;
	struct ibv_qp *ibqp;
	bool gsi;
	int err;

	if (!(attr->comp_mask & needed) || (attr->comp_mask & ~known)) {
		errno = (attr->comp_mask & needed) ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	err = create_flags_check(attr, &gsi);
	if (err != 0) {
		errno = err;
		return NULL;
	}
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		if (attr->xrcd == NULL || attr->xrcd->context != context) {
			errno = EINVAL;
			return NULL;
		}
		xrcd = to_xrcd(attr->xrcd);
	}
	if (attr->comp_mask & (IBV_QP_INIT_ATTR_IND_TABLE |
			       IBV_QP_INIT_ATTR_RX_HASH)) {
		err = droce_rss_qp_check(context, attr, &rss);
		if (err != 0) {
			errno = err;
			return NULL;
		}
	}
	memset(&a, 0, sizeof(a));
	a.qp_context = attr->qp_context;
	a.send_cq = attr->send_cq;
	a.recv_cq = attr->recv_cq;
	a.srq = attr->srq;
	a.cap = attr->cap;
	a.qp_type = attr->qp_type;
	a.sq_sig_all = attr->sq_sig_all;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER) {
		/* TSO is for raw packet and UD QPs only */
		if (attr->qp_type != IBV_QPT_RAW_PACKET &&
		    attr->qp_type != IBV_QPT_UD) {
			errno = EINVAL;
			return NULL;
		}
		tso_hdr = attr->max_tso_header;
	}
	if (attr->qp_type == IBV_QPT_RAW_PACKET)
		tso_hdr = RTE_MAX(tso_hdr, (uint32_t)DROCE_TSO_HDR);
	ibqp = create_qp(context, xrcd != NULL ? NULL : attr->pd, &a, xrcd,
			 tso_hdr, gsi, rss);
	if (ibqp == NULL) {
		droce_rss_free(rss);
		return NULL;
	}
	attr->cap = a.cap;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		err = droce_qpx_init(to_qp(ibqp), attr->send_ops_flags);
		if (err != 0) {
			ibv_destroy_qp(ibqp);
			errno = err;
			return NULL;
		}
	}
	return ibqp;
}

struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	/* only a QP made with send_ops_flags has the ibv_wr_* API */
	return to_qp(qp)->batch != NULL ? &to_qp(qp)->qpx : NULL;
}

/* Forget the completions of a destroyed QP still in a CQ. */
static void
cq_clean(struct droce_cq *cq, const struct droce_qp *qp)
{
	uint32_t i, prod;

	if (!cq->single_threaded)
		rte_spinlock_lock(&cq->lock);
	prod = __atomic_load_n(&cq->ring.prod, __ATOMIC_ACQUIRE);
	for (i = cq->ring.cons; i != prod; i++) {
		struct droce_cqe *cqe = &cq->ring.cqes[i & cq->ring.mask];

		if (cqe->wq == &qp->sq || cqe->wq == &qp->rq ||
		    (qp->srq != NULL && cqe->wq == &qp->srq->eng.wq &&
		     cqe->qp_num == qp->qpx.qp_base.qp_num))
			cqe->wq = NULL;
	}
	if (!cq->single_threaded)
		rte_spinlock_unlock(&cq->lock);
}

int
ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct droce_qp *qp = to_qp(ibqp);

	/* as the kernel: flow rules steering to it go first */
	if (__atomic_load_n(&qp->flows, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;

	droce_qp_destroy(qp->eng);
	if (qp->send_cq != NULL) {
		cq_clean(qp->send_cq, qp);
		__atomic_sub_fetch(&qp->send_cq->nqps, 1, __ATOMIC_RELAXED);
	}
	if (qp->recv_cq != NULL) {
		if (qp->recv_cq != qp->send_cq)
			cq_clean(qp->recv_cq, qp);
		__atomic_sub_fetch(&qp->recv_cq->nqps, 1, __ATOMIC_RELAXED);
	}
	if (ibqp->pd != NULL)
		__atomic_sub_fetch(&to_pd(ibqp->pd)->users, 1,
				   __ATOMIC_RELEASE);
	if (qp->xrcd != NULL)
		__atomic_sub_fetch(&qp->xrcd->users, 1, __ATOMIC_RELEASE);
	if (qp->srq != NULL)
		__atomic_sub_fetch(&qp->srq->users, 1, __ATOMIC_RELEASE);
	if (qp->rss != NULL)
		droce_rss_free(qp->rss);
	pthread_mutex_destroy(&qp->modify_lock);
	droce_qpx_free(qp);
	rte_free(qp->sq.slots);
	rte_free(qp->rq.slots);
	rte_free(qp);
	return 0;
}

/* ------------------------------------------------------------------------
 * Modify and query.
 */

static void
wq_reset(struct droce_wq *wq)
{
	__atomic_store_n(&wq->head.raw, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&wq->tail.raw, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&wq->retired, 0, __ATOMIC_RELEASE);
}

/*
 * Linux lets only a process with CAP_NET_RAW make a raw packet QP or give
 * a QP a privileged Q_Key (high bit set); so does droce, but for the
 * GSI's own Q_Key on the GSI (QP1 is the kernel's under Linux: here the
 * connection manager, an unprivileged library, sets it up).
 */
bool
droce_has_net_raw(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) != 0)
		return false;
	return (data[CAP_TO_INDEX(CAP_NET_RAW)].effective &
		CAP_TO_MASK(CAP_NET_RAW)) != 0;
}

int
ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct droce_qp *qp = to_qp(ibqp);
	enum ibv_qp_state cur, next;
	int ret;

	pthread_mutex_lock(&qp->modify_lock);
	cur = droce_qp_state(qp->eng);
	if ((attr_mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		ret = EINVAL;
		goto out;
	}
	next = (attr_mask & IBV_QP_STATE) ? attr->qp_state : cur;
	ret = droce_qp_attr_check(ibqp->qp_type, cur, next, attr_mask);
	if (ret != 0)
		goto out;
	if ((attr_mask & IBV_QP_PORT) && attr->port_num != 1) {
		ret = EINVAL;
		goto out;
	}
	if ((attr_mask & IBV_QP_PKEY_INDEX) && attr->pkey_index != 0) {
		ret = EINVAL;
		goto out;
	}
	if ((attr_mask & IBV_QP_QKEY) && (attr->qkey & DROCE_QKEY_PRIVILEGED) &&
	    !(ibqp->qp_num == DROCE_GSI_QPN && attr->qkey == DROCE_GSI_QKEY) &&
	    !droce_has_net_raw()) {
		ret = EPERM;
		goto out;
	}
	ret = droce_qp_modify(qp->eng, attr, attr_mask);
	if (ret != 0)
		goto out;
	if (next == IBV_QPS_RESET) {
		/* the completions of the old queue contents go with them */
		if (qp->send_cq != NULL)
			cq_clean(qp->send_cq, qp);
		if (qp->recv_cq != NULL && qp->recv_cq != qp->send_cq)
			cq_clean(qp->recv_cq, qp);
		wq_reset(&qp->sq);
		wq_reset(&qp->rq);
	}
	ibqp->state = next;
out:
	pthread_mutex_unlock(&qp->modify_lock);
	return ret;
}

int
ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
	     struct ibv_qp_init_attr *init_attr)
{
	struct droce_qp *qp = to_qp(ibqp);
	int ret;

	RTE_SET_USED(attr_mask);
	ret = droce_qp_query(qp->eng, attr);
	if (ret != 0)
		return ret;
	attr->cap = qp->cap;
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->sq_sig_all = qp->sq_sig_all;
	return 0;
}

/* ------------------------------------------------------------------------
 * Posting.
 */

#define KNOWN_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
	IBV_SEND_SOLICITED | IBV_SEND_INLINE | IBV_SEND_IP_CSUM)

/*
 * A TSO WR: its header is, on a raw packet QP, Ethernet (a VLAN tag
 * allowed), on a UD QP IPoIB's four bytes (Ethernet type, two reserved),
 * then IPv4 or IPv6 and TCP, exactly, and fits the QP's header room; a
 * segment fits the MTU (on UD, one datagram each, the header with it);
 * the payload is at most DROCE_MAX_TSO bytes, not inline.
 * @return 0 or EINVAL.
 */
static int
tso_wr_check(const struct droce_qp *qp, const struct ibv_send_wr *wr,
	     uint64_t len)
{
	bool ud = qp->qpx.qp_base.qp_type == IBV_QPT_UD;
	const uint8_t *h = wr->tso.hdr;
	uint32_t hsz = wr->tso.hdr_sz, l4;
	uint32_t l3 = ud ? DROCE_IPOIB_HDR_LEN : RTE_ETHER_HDR_LEN;
	uint32_t seg_max = ud ? 128u << qp->ctx->attr.active_mtu :
		qp->ctx->attr.eth_mtu + 18u;
	uint16_t type;

	if (h == NULL || wr->tso.mss == 0 || len > DROCE_MAX_TSO ||
	    (wr->send_flags & (IBV_SEND_INLINE | IBV_SEND_FENCE)) ||
	    hsz > qp->max_tso_header ||
	    hsz + (uint32_t)wr->num_sge * sizeof(struct ibv_sge) >
	    qp->sq.stride - sizeof(struct droce_send_wqe) -
	    (ud ? DROCE_UD_HDR_ROOM : 0) ||
	    hsz + wr->tso.mss > seg_max || hsz < l3)
		return EINVAL;
	type = ud ? (uint16_t)(h[0] << 8 | h[1]) :
		(uint16_t)(h[12] << 8 | h[13]);
	if (!ud && type == 0x8100 && hsz >= 18) {
		l3 = 18;
		type = (uint16_t)(h[16] << 8 | h[17]);
	}
	if (type == 0x0800 && hsz >= l3 + 20 && (h[l3] >> 4) == 4 &&
	    h[l3 + 9] == IPPROTO_TCP)
		l4 = l3 + (h[l3] & 0xfu) * 4;
	else if (type == 0x86dd && hsz >= l3 + 40 && h[l3 + 6] == IPPROTO_TCP)
		l4 = l3 + 40;
	else
		return EINVAL;
	if (hsz < l4 + 20 || hsz != l4 + (h[l4 + 12] >> 4) * 4u)
		return EINVAL;
	return 0;
}

/* @return 0, or why the WR cannot be posted on a UD QP. */
static int
ud_wr_check(const struct droce_qp *qp, const struct ibv_send_wr *wr,
	    uint64_t len)
{
	/* to a handle of this device */
	if (wr->wr.ud.ah == NULL ||
	    wr->wr.ud.ah->context != qp->qpx.qp_base.context ||
	    (wr->send_flags & IBV_SEND_FENCE))
		return EINVAL;
	if (droce_wr_flags(wr->opcode) & DROCE_WR_TSO)
		return tso_wr_check(qp, wr, len);
	/* one packet of at most the port's MTU */
	if (len > (128u << qp->ctx->attr.active_mtu))
		return EINVAL;
	return 0;
}

/* @return 0, or why a BIND_MW WR cannot be posted on this QP. */
static int
bind_wr_check(const struct droce_qp *qp, const struct ibv_send_wr *wr,
	      bool type1_bind)
{
	const struct ibv_mw *mw = wr->bind_mw.mw;
	const struct ibv_mr *mr = wr->bind_mw.bind_info.mr;

	if (mw == NULL || mw->context != qp->qpx.qp_base.context ||
	    (mr != NULL && mr->context != mw->context))
		return EINVAL;
	/* a WR binds type 2 windows; type 1 through ibv_bind_mw() */
	if ((mw->type == IBV_MW_TYPE_1) != type1_bind)
		return EINVAL;
	return 0;
}

/* @return 0, or why the WR cannot be posted on a raw packet QP. */
static int
raw_wr_check(const struct droce_qp *qp, const struct ibv_send_wr *wr,
	     uint64_t len)
{
	if (droce_wr_flags(wr->opcode) & DROCE_WR_TSO)
		return tso_wr_check(qp, wr, len);
	/* a whole frame: an Ethernet header, at most the MTU after it (and
	 * a VLAN tag) */
	if (len < RTE_ETHER_HDR_LEN ||
	    len > (uint64_t)qp->ctx->attr.eth_mtu + RTE_ETHER_HDR_LEN + 4u ||
	    (wr->send_flags & IBV_SEND_FENCE))
		return EINVAL;
	return 0;
}

/*
 * @return 0, or why the WR cannot be posted on this QP: the opcode table
 * (droce_wr_table) says which opcodes each QP type takes and what they
 * carry; the QP type's own rules follow.
 */
static int
send_wr_check(const struct droce_qp *qp, const struct ibv_send_wr *wr,
	      bool type1_bind)
{
	enum ibv_qp_type type = qp->qpx.qp_base.qp_type;
	const struct droce_wr_info *op;
	uint64_t len = 0;
	int i, err;

	err = droce_wr_allowed(wr->opcode, type);
	if (err != 0)
		return err;
	op = droce_wr_info(wr->opcode);
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    !(op->flags & DROCE_WR_INLINE))
		return EINVAL;
	if (op->flags & DROCE_WR_LOCAL)
		/* no data: a window's bind, or a key to invalidate */
		return (op->flags & DROCE_WR_INV) ? 0 :
			bind_wr_check(qp, wr, type1_bind);
	if ((wr->send_flags & ~(unsigned int)KNOWN_SEND_FLAGS) ||
	    ((wr->send_flags & IBV_SEND_IP_CSUM) &&
	     type != IBV_QPT_RAW_PACKET && type != IBV_QPT_UD))
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	if (wr->num_sge > 0 && wr->sg_list == NULL)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > (1ull << 31))
		return EINVAL;
	if (type == IBV_QPT_UD) {
		err = ud_wr_check(qp, wr, len);
		if (err != 0)
			return err;
	}
	if (type == IBV_QPT_RAW_PACKET) {
		err = raw_wr_check(qp, wr, len);
		if (err != 0)
			return err;
	}
	/* (an ATOMIC_WRITE's 8 bytes fit any WQE, which has room for an SGE) */
	if ((wr->send_flags & IBV_SEND_INLINE) && len > qp->sq.max_inline &&
	    !(op->flags & DROCE_WR_WORD))
		return EINVAL;
	if (op->flags & DROCE_WR_WORD) {
		/* 8 bytes at an aligned address; an atomic's result comes
		 * back into its one SGE */
		uint64_t raddr = (op->flags & DROCE_WR_ATOMIC) ?
			wr->wr.atomic.remote_addr : wr->wr.rdma.remote_addr;

		if (len != 8 || (raddr & 7) ||
		    ((op->flags & DROCE_WR_ATOMIC) && wr->num_sge != 1))
			return EINVAL;
	}
	return 0;
}

static void
send_wqe_build(const struct droce_qp *qp, struct droce_send_wqe *wqe,
	       const struct ibv_send_wr *wr)
{
	const struct droce_wr_info *op = droce_wr_info(wr->opcode);
	struct ibv_sge *sge = droce_send_wqe_sge(wqe);
	uint32_t len = 0;
	int i;

	wqe->wr_id = wr->wr_id;
	wqe->opcode = (uint8_t)wr->opcode;
	wqe->flags = 0;
	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		wqe->flags |= DROCE_WQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_FENCE)
		wqe->flags |= DROCE_WQE_FENCE;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		wqe->flags |= DROCE_WQE_SOLICITED;
	if (wr->send_flags & IBV_SEND_IP_CSUM)
		wqe->flags |= DROCE_WQE_IP_CSUM;
	wqe->imm = wr->imm_data;
	if (op->flags & DROCE_WR_LOCAL) {
		/* no data: a window's bind, or the key to invalidate (imm) */
		if (!(op->flags & DROCE_WR_INV)) {
			const struct ibv_mw_bind_info *b =
				&wr->bind_mw.bind_info;

			wqe->mw = &to_mw(wr->bind_mw.mw)->eng;
			wqe->rkey = wr->bind_mw.rkey;
			wqe->remote_addr = b->addr;
			wqe->bind_length = b->length;
			*droce_send_wqe_bind(wqe) = (struct droce_bind) {
				.mr = b->mr != NULL ? &to_mr(b->mr)->eng : NULL,
				.access = b->mw_access_flags,
			};
		}
		wqe->num_sge = 0;
		wqe->length = 0;
		return;
	}
	if (qp->qpx.qp_base.qp_type == IBV_QPT_UD) {
		wqe->remote_qpn = wr->wr.ud.remote_qpn & 0xffffff;
		droce_ah_hdr(to_ah(wr->wr.ud.ah)->eng,
			     droce_send_wqe_ud_hdr(wqe, qp->sq.stride));
		wqe->remote_qkey = wr->wr.ud.remote_qkey;
		wqe->swap = 0;
	} else if (op->flags & DROCE_WR_ATOMIC) {
		wqe->rkey = wr->wr.atomic.rkey;
		wqe->remote_addr = wr->wr.atomic.remote_addr;
		wqe->compare_add = wr->wr.atomic.compare_add;
		wqe->swap = wr->wr.atomic.swap;
	} else {
		wqe->rkey = wr->wr.rdma.rkey;
		wqe->remote_addr = wr->wr.rdma.remote_addr;
		wqe->compare_add = 0;
		wqe->swap = 0;
	}
	if (op->flags & DROCE_WR_TSO) {
		/* the MSS and the header's size; the header after the SGEs */
		wqe->imm = (uint32_t)wr->tso.mss << 16 | wr->tso.hdr_sz;
		for (i = 0; i < wr->num_sge; i++) {
			sge[i] = wr->sg_list[i];
			len += wr->sg_list[i].length;
		}
		wqe->num_sge = (uint16_t)wr->num_sge;
		wqe->length = len;
		memcpy(droce_send_wqe_tso_hdr(wqe), wr->tso.hdr,
		       wr->tso.hdr_sz);
		return;
	}
	if (qp->qpx.qp_base.qp_type == IBV_QPT_XRC_SEND) {
		/* the SRQ number goes where the opcode leaves room
		 * (droce_send_wqe_srqn()) */
		if (op->flags & DROCE_WR_ATOMIC)
			wqe->imm = wr->qp_type.xrc.remote_srqn;
		else
			wqe->swap = wr->qp_type.xrc.remote_srqn;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		/* copied now: the caller may reuse its buffers on return */
		uint8_t *d = (uint8_t *)sge;

		wqe->flags |= DROCE_WQE_INLINE;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(d + len,
			       (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		wqe->num_sge = 0;
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			sge[i] = wr->sg_list[i];
			len += wr->sg_list[i].length;
		}
		wqe->num_sge = (uint16_t)wr->num_sge;
	}
	wqe->length = len;
}

int
droce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		struct ibv_send_wr **bad_wr)
{
	return droce_post_send_wr(to_qp(ibqp), wr, bad_wr, false);
}

int
droce_post_send_wr(struct droce_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr, bool type1_bind)
{
	enum ibv_qp_state state = droce_qp_state(qp->eng);
	struct ibv_send_wr *w, *bad = NULL;
	uint32_t nvalid = 0, claimed, head = 0, i;
	int err = 0;

	/* an XRC target has no send queue */
	if (state < IBV_QPS_RTS ||
	    qp->qpx.qp_base.qp_type == IBV_QPT_XRC_RECV) {
		*bad_wr = wr;
		return EINVAL;
	}
	for (w = wr; w != NULL; w = w->next) {
		err = send_wr_check(qp, w, type1_bind);
		if (err != 0) {
			const struct droce_wr_info *op =
				droce_wr_info(w->opcode);

			DROCE_VERBS_LOG(DEBUG, "QP 0x%x (%s): WR %" PRIu64
					" (%s) refused: %s",
					qp->qpx.qp_base.qp_num,
					droce_qp_type_name(
						qp->qpx.qp_base.qp_type),
					w->wr_id, op != NULL ? op->name :
					"no such opcode", strerror(err));
			bad = w;
			break;
		}
		nvalid++;
	}
	claimed = nvalid ? droce_wq_claim(&qp->sq, nvalid, &head) : 0;
	for (i = 0, w = wr; i < claimed; i++, w = w->next)
		send_wqe_build(qp, droce_wq_slot(&qp->sq, head + i), w);
	if (claimed != 0) {
		droce_wq_publish(&qp->sq);
		/* the next post's slot, last read by the engine's core: its
		 * line comes over while this thread is elsewhere */
		__builtin_prefetch(droce_wq_slot(&qp->sq, head + claimed), 1);
		droce_qp_kick(qp->eng);
		/* a request posted to an idle queue is sent at once, by this
		 * thread if it is to run the engine's pass; behind others, it
		 * goes with the pass the poller's next poll of its CQ runs */
		if (head == __atomic_load_n(&qp->sq.retired, __ATOMIC_RELAXED))
			droce_dev_drive(qp->ctx->dev);
	}
	if (claimed < nvalid) {
		*bad_wr = w;
		return ENOMEM;
	}
	if (bad != NULL) {
		*bad_wr = bad;
		return err;
	}
	return 0;
}

int
droce_wq_post_recv(struct droce_wq *wq, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct ibv_recv_wr *w, *bad = NULL;
	uint32_t nvalid = 0, claimed, head = 0, i;

	for (w = wr; w != NULL; w = w->next) {
		if (w->num_sge < 0 || (uint32_t)w->num_sge > wq->max_sge ||
		    (w->num_sge > 0 && w->sg_list == NULL)) {
			bad = w;
			break;
		}
		nvalid++;
	}
	claimed = nvalid ? droce_wq_claim(wq, nvalid, &head) : 0;
	for (i = 0, w = wr; i < claimed; i++, w = w->next) {
		struct droce_recv_wqe *wqe = droce_wq_slot(wq, head + i);
		struct ibv_sge *sge = droce_recv_wqe_sge(wqe);
		uint32_t len = 0;
		int s;

		wqe->wr_id = w->wr_id;
		wqe->num_sge = (uint32_t)w->num_sge;
		for (s = 0; s < w->num_sge; s++) {
			sge[s] = w->sg_list[s];
			len += w->sg_list[s].length;
		}
		wqe->length = len;
	}
	if (claimed != 0)
		droce_wq_publish(wq);
	if (claimed < nvalid) {
		*bad_wr = w;
		return ENOMEM;
	}
	if (bad != NULL) {
		*bad_wr = bad;
		return EINVAL;
	}
	return 0;
}

int
droce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		struct ibv_recv_wr **bad_wr)
{
	struct droce_qp *qp = to_qp(ibqp);
	int ret;

	/* a QP with an SRQ has no receive queue of its own, nor has an
	 * XRC QP */
	if (droce_qp_state(qp->eng) == IBV_QPS_RESET || qp->srq != NULL ||
	    ibqp->qp_type == IBV_QPT_XRC_SEND ||
	    ibqp->qp_type == IBV_QPT_XRC_RECV) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = droce_wq_post_recv(&qp->rq, wr, bad_wr);
	/* (a QP in the error state flushes what is posted) */
	droce_qp_kick(qp->eng);
	return ret;
}
