/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Receive work queues, indirection tables and the RSS QPs on them
 * (ibv_create_wq(3), ibv_create_rwq_ind_table(3), ibv_create_qp_ex(3)
 * with rx_hash_conf): raw packet receive side scaling. A work queue is a
 * raw packet QP of droce's own with a receive queue only, completing to
 * the work queue's CQ with the work queue's number; an RSS QP has no
 * queues of its own: what its flow rules take goes to the work queue of
 * the table entry the frame's Toeplitz hash picks (lib/engine/
 * droce_raw_qp.c). All of a device's raw QPs, and so its work queues,
 * are served by its first engine lcore.
 */

#include <stdlib.h>
#include <string.h>

#include "droce_verbs_pvt.h"

/* The largest indirection table: 2^8 work queues. */
#define DROCE_MAX_IND_TABLE_LOG 8

/* The hash fields droce has (no IPsec SPI, no inner headers). */
#define DROCE_RX_HASH_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
	IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 | \
	IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP | \
	IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

static inline struct droce_rwq *
to_rwq(struct ibv_wq *w)
{
	return container_of(w, struct droce_rwq, wq);
}

static inline struct droce_ind_table *
to_ind_table(struct ibv_rwq_ind_table *t)
{
	return container_of(t, struct droce_ind_table, table);
}

static int
wq_post_recv(struct ibv_wq *wq, struct ibv_recv_wr *wr,
	     struct ibv_recv_wr **bad_wr)
{
	return droce_post_recv(to_rwq(wq)->qp, wr, bad_wr);
}

static struct ibv_wq *
create_wq(struct ibv_context *context, struct ibv_wq_init_attr *attr)
{
	struct ibv_qp_init_attr qa;
	struct droce_rwq *w;

	if (attr->wq_type != IBV_WQT_RQ || attr->pd == NULL ||
	    attr->cq == NULL || attr->pd->context != context ||
	    attr->cq->context != context) {
		errno = EINVAL;
		return NULL;
	}
	/* (no scatter FCS, VLAN stripping, CQE compression, padding) */
	if (attr->comp_mask != 0 || attr->create_flags != 0) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.send_cq = attr->cq;
	qa.recv_cq = attr->cq;
	qa.cap.max_recv_wr = attr->max_wr;
	qa.cap.max_recv_sge = attr->max_sge;
	/* EPERM without CAP_NET_RAW, as every raw packet QP */
	w->qp = ibv_create_qp(attr->pd, &qa);
	if (w->qp == NULL) {
		int err = errno;

		free(w);
		errno = err;
		return NULL;
	}
	w->wq.context = context;
	w->wq.wq_context = attr->wq_context;
	w->wq.pd = attr->pd;
	w->wq.cq = attr->cq;
	w->wq.wq_num = w->qp->qp_num;
	w->wq.handle = w->qp->handle;
	w->wq.state = IBV_WQS_RESET;
	w->wq.wq_type = IBV_WQT_RQ;
	w->wq.post_recv = wq_post_recv;
	return &w->wq;
}

/* A work queue's states as its QP's: RDY receives (RTR), as one does. */
static int
modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr)
{
	struct droce_rwq *w = to_rwq(wq);
	struct ibv_qp_attr qa;
	int ret = 0;

	if (attr->attr_mask & ~(uint32_t)(IBV_WQ_ATTR_STATE |
					  IBV_WQ_ATTR_CURR_STATE |
					  IBV_WQ_ATTR_FLAGS))
		return EINVAL;
	if ((attr->attr_mask & IBV_WQ_ATTR_FLAGS) && attr->flags_mask != 0)
		return EOPNOTSUPP;
	if ((attr->attr_mask & IBV_WQ_ATTR_CURR_STATE) &&
	    attr->curr_wq_state != wq->state)
		return EINVAL;
	if (!(attr->attr_mask & IBV_WQ_ATTR_STATE))
		return 0;
	memset(&qa, 0, sizeof(qa));
	switch (attr->wq_state) {
	case IBV_WQS_RESET:
		qa.qp_state = IBV_QPS_RESET;
		ret = ibv_modify_qp(w->qp, &qa, IBV_QP_STATE);
		break;
	case IBV_WQS_RDY:
		if (wq->state == IBV_WQS_RDY)
			return 0;
		if (wq->state != IBV_WQS_RESET)
			return EINVAL;
		qa.qp_state = IBV_QPS_INIT;
		qa.port_num = 1;
		ret = ibv_modify_qp(w->qp, &qa, IBV_QP_STATE | IBV_QP_PORT);
		if (ret == 0) {
			qa.qp_state = IBV_QPS_RTR;
			ret = ibv_modify_qp(w->qp, &qa, IBV_QP_STATE);
		}
		break;
	case IBV_WQS_ERR:
		qa.qp_state = IBV_QPS_ERR;
		ret = ibv_modify_qp(w->qp, &qa, IBV_QP_STATE);
		break;
	default:
		return EINVAL;
	}
	if (ret == 0)
		wq->state = attr->wq_state;
	return ret;
}

static int
destroy_wq(struct ibv_wq *wq)
{
	struct droce_rwq *w = to_rwq(wq);
	int ret;

	if (__atomic_load_n(&w->tables, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	ret = ibv_destroy_qp(w->qp);
	if (ret != 0)
		return ret;
	free(w);
	return 0;
}

static struct ibv_rwq_ind_table *
create_ind_table(struct ibv_context *context,
		 struct ibv_rwq_ind_table_init_attr *attr)
{
	struct droce_ind_table *t;
	uint32_t i, n;

	if (attr->comp_mask != 0 ||
	    attr->log_ind_tbl_size > DROCE_MAX_IND_TABLE_LOG ||
	    attr->ind_tbl == NULL) {
		errno = EINVAL;
		return NULL;
	}
	n = 1u << attr->log_ind_tbl_size;
	for (i = 0; i < n; i++)
		if (attr->ind_tbl[i] == NULL ||
		    attr->ind_tbl[i]->context != context ||
		    attr->ind_tbl[i]->wq_type != IBV_WQT_RQ) {
			errno = EINVAL;
			return NULL;
		}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto nomem;
	t->wqs = calloc(n, sizeof(*t->wqs));
	t->eng = calloc(n, sizeof(*t->eng));
	if (t->wqs == NULL || t->eng == NULL)
		goto nomem;
	t->size = n;
	for (i = 0; i < n; i++) {
		t->wqs[i] = to_rwq(attr->ind_tbl[i]);
		t->eng[i] = to_qp(t->wqs[i]->qp)->eng;
		__atomic_add_fetch(&t->wqs[i]->tables, 1, __ATOMIC_RELAXED);
	}
	t->table.context = context;
	t->table.ind_tbl_handle = (int)t->wqs[0]->wq.wq_num;
	t->table.ind_tbl_num = t->table.ind_tbl_handle;
	return &t->table;
nomem:
	if (t != NULL) {
		free(t->wqs);
		free(t->eng);
		free(t);
	}
	errno = ENOMEM;
	return NULL;
}

static int
destroy_ind_table(struct ibv_rwq_ind_table *table)
{
	struct droce_ind_table *t = to_ind_table(table);
	uint32_t i;

	if (__atomic_load_n(&t->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	for (i = 0; i < t->size; i++)
		__atomic_sub_fetch(&t->wqs[i]->tables, 1, __ATOMIC_RELEASE);
	free(t->wqs);
	free(t->eng);
	free(t);
	return 0;
}

int
droce_rss_qp_check(struct ibv_context *context,
		   const struct ibv_qp_init_attr_ex *attr,
		   struct droce_rss **rss)
{
	const struct ibv_rx_hash_conf *h = &attr->rx_hash_conf;
	struct droce_ind_table *t;
	struct droce_rss *r;

	*rss = NULL;
	if (attr->qp_type != IBV_QPT_RAW_PACKET ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE) ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) ||
	    attr->rwq_ind_tbl == NULL ||
	    attr->rwq_ind_tbl->context != context || attr->srq != NULL)
		return EINVAL;
	if (h->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ ||
	    (h->rx_hash_fields_mask & ~(uint64_t)DROCE_RX_HASH_FIELDS))
		return EOPNOTSUPP;
	if (h->rx_hash_key_len > DROCE_RSS_QP_KEY_LEN ||
	    (h->rx_hash_key_len != 0 && h->rx_hash_key == NULL))
		return EINVAL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return ENOMEM;
	t = to_ind_table(attr->rwq_ind_tbl);
	r->table = t;
	r->eng.fields = h->rx_hash_fields_mask;
	memcpy(r->eng.key, h->rx_hash_key, h->rx_hash_key_len);
	r->eng.size = t->size;
	r->eng.wqs = t->eng;
	__atomic_add_fetch(&t->users, 1, __ATOMIC_RELAXED);
	*rss = r;
	return 0;
}

void
droce_rss_free(struct droce_rss *rss)
{
	if (rss == NULL)
		return;
	__atomic_sub_fetch(&rss->table->users, 1, __ATOMIC_RELEASE);
	free(rss);
}

void
droce_verbs_set_wq_ops(struct droce_context *ctx)
{
	ctx->vctx.create_wq = create_wq;
	ctx->vctx.modify_wq = modify_wq;
	ctx->vctx.destroy_wq = destroy_wq;
	ctx->vctx.create_rwq_ind_table = create_ind_table;
	ctx->vctx.destroy_rwq_ind_table = destroy_ind_table;
}
