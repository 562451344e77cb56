/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Shared receive queues: ibv_create_srq (and _ex, basic, XRC and tag
 * matching types), ibv_modify_srq (the limit, and max_wr: a resize moves
 * the WQEs not taken yet to a new ring while posts wait), ibv_query_srq,
 * ibv_destroy_srq and ibv_post_srq_recv. The application posts into the
 * SRQ's work queue as into a QP's; the engine lcore of the device takes
 * WQEs in posting order for the QPs attached and raises
 * IBV_EVENT_SRQ_LIMIT_REACHED when the armed limit is crossed.
 */

#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "droce_verbs_pvt.h"

/* An asynchronous event of the SRQ, from the engine lcore. */
static void
srq_event(void *arg, enum ibv_event_type type)
{
	struct droce_srq *srq = arg;
	struct ibv_async_event ev = {
		.element.srq = &srq->srq,
		.event_type = type,
	};

	droce_async_event(srq->ctx, &ev);
}

static struct ibv_srq *
create_srq(struct ibv_context *context, struct ibv_pd *pd,
	   struct ibv_srq_attr *attr, void *srq_context)
{
	struct droce_srq *srq;

	if (pd->context != context || attr->max_wr == 0 ||
	    attr->max_wr > DROCE_MAX_SRQ_WR || attr->max_sge > DROCE_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	srq = rte_zmalloc("droce_srq", sizeof(*srq), RTE_CACHE_LINE_SIZE);
	if (srq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (droce_wq_init(&srq->eng.wq, attr->max_wr,
			  sizeof(struct droce_recv_wqe) +
			  RTE_MAX(attr->max_sge, 1u) * sizeof(struct ibv_sge),
			  attr->max_sge, 0) < 0) {
		rte_free(srq);
		errno = ENOMEM;
		return NULL;
	}
	srq->ctx = to_ctx(context);
	rte_rwlock_init(&srq->post_lock);
	srq->eng.event = srq_event;
	srq->eng.event_arg = srq;
	srq->eng.pd = pd_eng(pd);
	if (droce_srq_register(srq->ctx->dev, &srq->eng) < 0) {
		rte_free(srq->eng.wq.slots);
		rte_free(srq);
		errno = ENOMEM;
		return NULL;
	}
	/* the limit is not armed at creation (ibv_create_srq(3)) */
	attr->srq_limit = 0;
	srq->srq.context = context;
	srq->srq.srq_context = srq_context;
	srq->srq.pd = pd;
	srq->srq.handle = 0;
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	__atomic_add_fetch(&to_pd(pd)->users, 1, __ATOMIC_RELAXED);
	return &srq->srq;
}

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init_attr)
{
	return create_srq(pd->context, pd, &init_attr->attr,
			  init_attr->srq_context);
}

struct ibv_srq *
droce_create_srq_ex(struct ibv_context *context,
		    struct ibv_srq_init_attr_ex *attr)
{
	uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ |
		IBV_SRQ_INIT_ATTR_TM;
	struct ibv_srq *ibsrq;
	struct droce_srq *srq;
	bool xrc, tm;

	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) ||
	    (attr->comp_mask & ~known)) {
		errno = EINVAL;
		return NULL;
	}
	xrc = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
		attr->srq_type == IBV_SRQT_XRC;
	tm = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
		attr->srq_type == IBV_SRQT_TM;
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	    attr->srq_type != IBV_SRQT_BASIC && !xrc && !tm) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* a TM SRQ has its list's size and a CQ of its own */
	if (tm && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TM) ||
		   !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
		   attr->cq == NULL || attr->cq->context != context ||
		   attr->tm_cap.max_num_tags == 0 ||
		   attr->tm_cap.max_num_tags > DROCE_TM_MAX_TAGS ||
		   attr->tm_cap.max_ops == 0)) {
		errno = EINVAL;
		return NULL;
	}
	/* an XRC SRQ has a domain and a CQ of its own */
	if (xrc && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ||
		    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
		    attr->xrcd == NULL || attr->cq == NULL ||
		    attr->xrcd->context != context ||
		    attr->cq->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	ibsrq = create_srq(context, attr->pd, &attr->attr, attr->srq_context);
	if (ibsrq == NULL || (!xrc && !tm))
		return ibsrq;
	srq = to_srq(ibsrq);
	if (tm) {
		struct droce_tm *t = rte_zmalloc("droce_tm", sizeof(*t), 0);

		if (t != NULL)
			t->tags = rte_zmalloc("droce_tm_tags",
					      attr->tm_cap.max_num_tags *
					      sizeof(*t->tags), 0);
		if (t == NULL || t->tags == NULL) {
			rte_free(t);
			ibv_destroy_srq(ibsrq);
			errno = ENOMEM;
			return NULL;
		}
		t->max_tags = attr->tm_cap.max_num_tags;
		srq->cq = to_cq(attr->cq);
		__atomic_add_fetch(&srq->cq->nqps, 1, __ATOMIC_RELAXED);
		srq->eng.cq = &srq->cq->ring;
		srq->eng.tm = t;
		return ibsrq;
	}
	srq->xrcd = to_xrcd(attr->xrcd);
	srq->cq = to_cq(attr->cq);
	__atomic_add_fetch(&srq->xrcd->users, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&srq->cq->nqps, 1, __ATOMIC_RELAXED);
	srq->eng.cq = &srq->cq->ring;
	/* last: from here an XRCETH may name it */
	__atomic_store_n(&srq->eng.xrcd, srq->xrcd->id, __ATOMIC_RELEASE);
	return ibsrq;
}

struct resize_args {
	struct droce_srq_eng *srq;
	uint8_t *slots;
	uint32_t mask;
	uint32_t max_wr;
};

/*
 * On the engine lcore, posts held off: the WQEs not taken yet move to
 * the new ring at the same indices.
 */
static int
srq_resize(struct droce_dev *dev, void *arg)
{
	struct resize_args *a = arg;
	struct droce_wq *wq = &a->srq->wq;
	uint32_t idx, prod = __atomic_load_n(&wq->prod_tail, __ATOMIC_ACQUIRE);
	uint8_t *old = wq->slots;

	RTE_SET_USED(dev);
	if (prod - a->srq->cons > a->max_wr)
		return EINVAL;          /* more outstanding than that */
	for (idx = a->srq->cons; idx != prod; idx++)
		memcpy(a->slots + (size_t)(idx & a->mask) * wq->stride,
		       old + (size_t)(idx & wq->mask) * wq->stride,
		       wq->stride);
	wq->slots = a->slots;
	wq->mask = a->mask;
	wq->max_wr = a->max_wr;
	a->slots = old;
	return 0;
}

static int
resize(struct droce_srq *srq, uint32_t max_wr)
{
	struct resize_args a = { .srq = &srq->eng, .max_wr = max_wr };
	uint32_t n = rte_align32pow2(max_wr);
	int ret;

	if (max_wr == 0 || max_wr > DROCE_MAX_SRQ_WR ||
	    max_wr < __atomic_load_n(&srq->eng.limit, __ATOMIC_ACQUIRE))
		return EINVAL;
	a.mask = n - 1;
	a.slots = rte_zmalloc("droce_wq", (size_t)n * srq->eng.wq.stride,
			      RTE_CACHE_LINE_SIZE);
	if (a.slots == NULL)
		return ENOMEM;
	rte_rwlock_write_lock(&srq->post_lock);
	ret = droce_dev_call(srq->ctx->dev, srq_resize, &a);
	rte_rwlock_write_unlock(&srq->post_lock);
	rte_free(a.slots);      /* the old ring, or the unused new one */
	return ret;
}

int
ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
	       int attr_mask)
{
	struct droce_srq *srq = to_srq(ibsrq);
	int ret;

	if (attr_mask & ~(IBV_SRQ_LIMIT | IBV_SRQ_MAX_WR))
		return EINVAL;
	if (attr_mask & IBV_SRQ_MAX_WR) {
		ret = resize(srq, attr->max_wr);
		if (ret != 0)
			return ret;
	}
	if (attr_mask & IBV_SRQ_LIMIT) {
		if (attr->srq_limit > srq->eng.wq.max_wr)
			return EINVAL;
		__atomic_store_n(&srq->eng.limit, attr->srq_limit,
				 __ATOMIC_RELEASE);
	}
	return 0;
}

int
ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct droce_srq *srq = to_srq(ibsrq);

	attr->max_wr = srq->eng.wq.max_wr;
	attr->max_sge = srq->eng.wq.max_sge;
	attr->srq_limit = __atomic_load_n(&srq->eng.limit, __ATOMIC_ACQUIRE);
	return 0;
}

int
ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct droce_srq *srq = to_srq(ibsrq);

	if (__atomic_load_n(&srq->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	droce_srq_unregister(srq->ctx->dev, &srq->eng);
	if (srq->xrcd != NULL)
		__atomic_sub_fetch(&srq->xrcd->users, 1, __ATOMIC_RELEASE);
	/* completions of it still in its CQ name no slot now */
	if (srq->cq != NULL)
		__atomic_sub_fetch(&srq->cq->nqps, 1, __ATOMIC_RELEASE);
	if (srq->eng.tm != NULL) {
		rte_free(srq->eng.tm->tags);
		rte_free(srq->eng.tm);
	}
	__atomic_sub_fetch(&to_pd(ibsrq->pd)->users, 1, __ATOMIC_RELEASE);
	pthread_mutex_destroy(&ibsrq->mutex);
	pthread_cond_destroy(&ibsrq->cond);
	rte_free(srq->eng.wq.slots);
	rte_free(srq);
	return 0;
}

int
droce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct droce_srq *srq = to_srq(ibsrq);
	int ret;

	rte_rwlock_read_lock(&srq->post_lock);
	ret = droce_wq_post_recv(&srq->eng.wq, wr, bad_wr);
	rte_rwlock_read_unlock(&srq->post_lock);
	return ret;
}

int
droce_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *op,
		   struct ibv_ops_wr **bad_op)
{
	struct droce_srq *srq = to_srq(ibsrq);
	int i, ret;

	for (; op != NULL; op = op->next) {
		ret = 0;
		if (srq->eng.tm == NULL ||
		    (op->opcode != IBV_WR_TAG_ADD &&
		     op->opcode != IBV_WR_TAG_DEL &&
		     op->opcode != IBV_WR_TAG_SYNC) ||
		    (op->flags & ~(IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC)))
			ret = EINVAL;
		if (ret == 0 && op->opcode == IBV_WR_TAG_ADD) {
			if (op->tm.add.num_sge < 0 ||
			    op->tm.add.num_sge > DROCE_TM_MAX_SGE ||
			    (op->tm.add.num_sge > 0 &&
			     op->tm.add.sg_list == NULL))
				ret = EINVAL;
			for (i = 0; ret == 0 && i < op->tm.add.num_sge; i++)
				if (op->tm.add.sg_list[i].length == 0)
					ret = EINVAL;
		}
		if (ret == 0)
			ret = -droce_tm_op(srq->ctx->dev, &srq->eng, op);
		if (ret != 0) {
			*bad_op = op;
			return ret;
		}
	}
	return 0;
}
