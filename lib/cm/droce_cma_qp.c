/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma_cm's QPs and SRQs: made on an id's device, moved through INIT, RTR
 * and RTS with what REQ and REP negotiated.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "droce_cma_pvt.h"

int
droce_cma_qp_attr(struct cm_id *id, struct ibv_qp_attr *a, int *mask)
{
	struct cm_conn *c = id->conn;
	enum ibv_qp_type t = id->id.qp ? id->id.qp->qp_type : id->id.qp_type;
	enum ibv_qp_state s = a->qp_state;

	memset(a, 0, sizeof(*a));
	a->qp_state = s;
	switch (s) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (t == IBV_QPT_UD) {
			a->qkey = RDMA_UDP_QKEY;
			*mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
			if (t == IBV_QPT_RC)
				a->qp_access_flags |= IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_REMOTE_ATOMIC;
			*mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		*mask = IBV_QP_STATE;
		if (t == IBV_QPT_UD)
			return 0;
		if (c == NULL)
			return -EINVAL;
		droce_cm_ah_attr(&a->ah_attr, &c->dgid, c->sgid_index,
				 id->tos);
		a->path_mtu = c->mtu;
		a->dest_qp_num = c->remote_qpn;
		a->rq_psn = c->rq_psn;
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (t == IBV_QPT_RC) {
			a->max_dest_rd_atomic = c->responder_resources;
			a->min_rnr_timer = CM_MIN_RNR_TIMER;
			*mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
		}
		return 0;
	case IBV_QPS_RTS:
		a->sq_psn = t == IBV_QPT_UD ? 0 : c != NULL ? c->sq_psn : 0;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (t == IBV_QPT_RC) {
			if (c == NULL)
				return -EINVAL;
			a->timeout = id->ack_timeout;
			a->retry_cnt = c->retry_count;
			a->rnr_retry = c->peer_rnr_retry;
			a->max_rd_atomic = c->initiator_depth;
			*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		}
		return 0;
	case IBV_QPS_ERR:
		*mask = IBV_QP_STATE;
		return 0;
	default:
		return -EINVAL;
	}
}

int
droce_cma_modify_qp(struct cm_id *id, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask, ret;

	ret = droce_cma_qp_attr(id, &a, &mask);
	if (ret != 0)
		return ret;
	ret = ibv_modify_qp(id->id.qp, &a, mask);
	return ret > 0 ? -ret : ret;
}

void
droce_cma_ah_attr(const struct cm_id *id, struct ibv_ah_attr *ah)
{
	int index = 0;

	if (droce_cm_dev_by_gid(&id->id.route.addr.addr.ibaddr.sgid,
				&index) != id->dev)
		index = 0;
	droce_cm_ah_attr(ah, &id->id.route.addr.addr.ibaddr.dgid,
			 (uint8_t)index, id->tos);
}

int
rdma_init_qp_attr(struct rdma_cm_id *cid, struct ibv_qp_attr *qp_attr,
		  int *qp_attr_mask)
{
	int ret;

	if (cid == NULL || qp_attr == NULL || qp_attr_mask == NULL)
		return droce_cma_fail(EINVAL);
	pthread_mutex_lock(&droce_cm.lock);
	ret = droce_cma_qp_attr(cm_id_of(cid), qp_attr, qp_attr_mask);
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : droce_cma_fail(-ret);
}

/* CQs (and their channels) for a QP the application gave none. */
static int
own_cqs(struct cm_id *id, struct ibv_qp_init_attr_ex *qa)
{
	struct rdma_cm_id *c = &id->id;
	int n;

	if (qa->send_cq == NULL) {
		n = qa->cap.max_send_wr > 0 ? (int)qa->cap.max_send_wr : 1;
		c->send_cq_channel = ibv_create_comp_channel(c->verbs);
		if (c->send_cq_channel == NULL)
			return -1;
		c->send_cq = ibv_create_cq(c->verbs, n, c, c->send_cq_channel,
					   0);
		if (c->send_cq == NULL)
			return -1;
		qa->send_cq = c->send_cq;
		id->own_cqs = true;
	}
	if (qa->recv_cq == NULL) {
		n = qa->cap.max_recv_wr > 0 ? (int)qa->cap.max_recv_wr : 1;
		c->recv_cq_channel = ibv_create_comp_channel(c->verbs);
		if (c->recv_cq_channel == NULL)
			return -1;
		c->recv_cq = ibv_create_cq(c->verbs, n, c, c->recv_cq_channel,
					   0);
		if (c->recv_cq == NULL)
			return -1;
		qa->recv_cq = c->recv_cq;
		id->own_cqs = true;
	}
	return 0;
}

static void
free_own_cqs(struct cm_id *id)
{
	struct rdma_cm_id *c = &id->id;

	if (!id->own_cqs)
		return;
	if (c->send_cq != NULL)
		ibv_destroy_cq(c->send_cq);
	if (c->recv_cq != NULL)
		ibv_destroy_cq(c->recv_cq);
	if (c->send_cq_channel != NULL)
		ibv_destroy_comp_channel(c->send_cq_channel);
	if (c->recv_cq_channel != NULL)
		ibv_destroy_comp_channel(c->recv_cq_channel);
	c->send_cq = c->recv_cq = NULL;
	c->send_cq_channel = c->recv_cq_channel = NULL;
	id->own_cqs = false;
}

int
rdma_create_qp_ex(struct rdma_cm_id *cid, struct ibv_qp_init_attr_ex *attr)
{
	struct cm_id *id;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp *qp;
	int ret, err;

	if (cid == NULL || attr == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	if (cid->verbs == NULL || id->dev == NULL || cid->qp != NULL)
		return droce_cma_fail(EINVAL);
	qa = *attr;
	if (!(qa.comp_mask & IBV_QP_INIT_ATTR_PD) || qa.pd == NULL) {
		qa.pd = cid->pd != NULL ? cid->pd : id->dev->pd;
		qa.comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (qa.pd->context->device != cid->verbs->device)
		return droce_cma_fail(EINVAL);
	if (qa.srq == NULL)
		qa.srq = cid->srq;
	if (own_cqs(id, &qa) != 0) {
		err = errno;
		free_own_cqs(id);
		return droce_cma_fail(err);
	}
	qp = ibv_create_qp_ex(cid->verbs, &qa);
	if (qp == NULL) {
		err = errno;
		free_own_cqs(id);
		return droce_cma_fail(err);
	}
	pthread_mutex_lock(&droce_cm.lock);
	cid->qp = qp;
	cid->pd = qa.pd;
	cid->qp_type = qp->qp_type;
	ret = droce_cma_modify_qp(id, IBV_QPS_INIT);
	if (ret == 0 && qp->qp_type == IBV_QPT_UD) {
		ret = droce_cma_modify_qp(id, IBV_QPS_RTR);
		if (ret == 0)
			ret = droce_cma_modify_qp(id, IBV_QPS_RTS);
	}
	if (ret != 0)
		cid->qp = NULL;
	pthread_mutex_unlock(&droce_cm.lock);
	if (ret != 0) {
		ibv_destroy_qp(qp);
		free_own_cqs(id);
		return droce_cma_fail(-ret);
	}
	attr->cap = qa.cap;
	return 0;
}

int
rdma_create_qp(struct rdma_cm_id *cid, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex qa = {0};
	int ret;

	if (attr == NULL)
		return droce_cma_fail(EINVAL);
	qa.qp_context = attr->qp_context;
	qa.send_cq = attr->send_cq;
	qa.recv_cq = attr->recv_cq;
	qa.srq = attr->srq;
	qa.cap = attr->cap;
	qa.qp_type = attr->qp_type;
	qa.sq_sig_all = attr->sq_sig_all;
	qa.pd = pd;
	qa.comp_mask = pd != NULL ? IBV_QP_INIT_ATTR_PD : 0;
	ret = rdma_create_qp_ex(cid, &qa);
	if (ret == 0) {
		attr->cap = qa.cap;
		attr->send_cq = cid->qp->send_cq;
		attr->recv_cq = cid->qp->recv_cq;
	}
	return ret;
}

void
rdma_destroy_qp(struct rdma_cm_id *cid)
{
	struct cm_id *id = cm_id_of(cid);
	struct ibv_qp *qp;

	/* out of the id first: the CM's thread may be about to move it to
	 * the error state (a DREQ coming in) */
	pthread_mutex_lock(&droce_cm.lock);
	qp = cid->qp;
	cid->qp = NULL;
	pthread_mutex_unlock(&droce_cm.lock);
	if (qp != NULL)
		ibv_destroy_qp(qp);
	free_own_cqs(id);
}

int
rdma_create_srq_ex(struct rdma_cm_id *cid, struct ibv_srq_init_attr_ex *attr)
{
	struct cm_id *id;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_srq *srq;

	if (cid == NULL || attr == NULL || cid->verbs == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	sa = *attr;
	if (!(sa.comp_mask & IBV_SRQ_INIT_ATTR_PD) || sa.pd == NULL) {
		sa.pd = cid->pd != NULL ? cid->pd : id->dev->pd;
		sa.comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	srq = ibv_create_srq_ex(cid->verbs, &sa);
	if (srq == NULL)
		return -1;
	cid->srq = srq;
	cid->pd = sa.pd;
	attr->attr = sa.attr;
	return 0;
}

int
rdma_create_srq(struct rdma_cm_id *cid, struct ibv_pd *pd,
		struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex sa = {0};
	int ret;

	if (attr == NULL)
		return droce_cma_fail(EINVAL);
	sa.srq_context = attr->srq_context;
	sa.attr = attr->attr;
	sa.pd = pd;
	sa.comp_mask = pd != NULL ? IBV_SRQ_INIT_ATTR_PD : 0;
	ret = rdma_create_srq_ex(cid, &sa);
	if (ret == 0)
		attr->attr = sa.attr;
	return ret;
}

void
rdma_destroy_srq(struct rdma_cm_id *cid)
{
	if (cid->srq != NULL)
		ibv_destroy_srq(cid->srq);
	cid->srq = NULL;
}
