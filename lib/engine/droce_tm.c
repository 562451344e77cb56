/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Tag matching (ibv_post_srq_ops(3), rdma-core's tag matching document):
 * a TM SRQ holds a list of tagged buffers; a SEND arriving at one of its
 * RC QPs starts with a tag matching header (struct ibv_tmh). An eager
 * message whose tag matches a buffer (TMH.tag & mask == tag, the first
 * posted) lands there without its header; a rendezvous request (TMH and
 * struct ibv_rvh) makes the engine RDMA-READ the data from the sender
 * into the buffer and send a FIN back. A tagged message that matches
 * nothing is unexpected: it lands, header and all, in an ordinary SRQ
 * buffer, and matching stops until the application says it handled that
 * many unexpected messages (IBV_OPS_TM_SYNC with unexpected_cnt).
 *
 * The list and its phase counters are the engine lcore's: operations on
 * them (add, delete, sync) run there through control calls, between two
 * packets.
 */

#include <errno.h>
#include <infiniband/tm_types.h>

#include "droce_engine_pvt.h"

void
droce_tm_cqe(struct droce_srq_eng *srq, uint32_t qp_num,
	     enum ibv_wc_opcode opcode, enum ibv_wc_status status,
	     uint64_t wr_id, uint32_t byte_len, uint16_t wc_flags,
	     uint64_t tag, uint32_t priv)
{
	struct droce_cqe cqe = {
		.wr_id = wr_id,
		.ts = rte_get_tsc_cycles(),
		.qp_num = qp_num,
		.byte_len = byte_len,
		.imm = priv,
		.tm_tag = tag,
		.wc_flags = wc_flags,
		.status = (uint8_t)status,
		.opcode = (uint8_t)opcode,
		/* no slot of the SRQ's work queue to retire */
		.flags = DROCE_CQE_TM | DROCE_CQE_SRQ,
		.wq = &srq->wq,
	};

	droce_cq_push(srq->cq, &cqe);
}

static uint16_t
sync_req(const struct droce_tm *tm)
{
	return tm->hw_unexp != tm->sw_unexp ? IBV_WC_TM_SYNC_REQ : 0;
}

struct droce_tm_tag *
droce_tm_match(struct droce_tm *tm, uint64_t tag)
{
	struct droce_tm_tag *best = NULL;
	uint32_t i;

	if (tm->hw_unexp != tm->sw_unexp)
		return NULL;
	for (i = 0; i < tm->max_tags; i++) {
		struct droce_tm_tag *t = &tm->tags[i];

		if (!t->used || (tag & t->mask) != t->tag)
			continue;
		if (best == NULL || (int32_t)(t->seq - best->seq) < 0)
			best = t;
	}
	if (best != NULL)
		best->used = false;
	return best;
}

/* ------------------------------------------------------------------------
 * List operations, on the engine lcore.
 */

struct op_args {
	struct droce_srq_eng *srq;
	struct ibv_ops_wr *op;
};

static int
tm_op(struct droce_dev *dev, void *arg)
{
	struct op_args *a = arg;
	struct droce_srq_eng *srq = a->srq;
	struct droce_tm *tm = srq->tm;
	struct ibv_ops_wr *op = a->op;
	enum ibv_wc_opcode opcode;
	enum ibv_wc_status status = IBV_WC_SUCCESS;
	uint32_t i;

	switch (op->opcode) {
	case IBV_WR_TAG_ADD: {
		struct droce_tm_tag *t = NULL;

		for (i = 0; i < tm->max_tags; i++)
			if (!tm->tags[i].used) {
				t = &tm->tags[i];
				break;
			}
		if (t == NULL)
			return -ENOMEM;
		/* the buffer a matching message will be written into: the
		 * SRQ's PD's, writable, as a receive WQE's must be */
		if (droce_sge_check(dev, srq->pd, op->tm.add.sg_list,
				    (uint32_t)op->tm.add.num_sge, true) != 0)
			return -EINVAL;
		t->tag = op->tm.add.tag;
		t->mask = op->tm.add.mask;
		t->recv_wr_id = op->tm.add.recv_wr_id;
		t->num_sge = (uint32_t)op->tm.add.num_sge;
		t->length = 0;
		for (i = 0; i < t->num_sge; i++) {
			t->sge[i] = op->tm.add.sg_list[i];
			t->length += t->sge[i].length;
		}
		t->seq = tm->seq++;
		t->used = true;
		op->tm.handle = (uint32_t)(t - tm->tags) + 1;
		opcode = IBV_WC_TM_ADD;
		break;
	}
	case IBV_WR_TAG_DEL:
		/* consumed by a message meanwhile: that is an error */
		if (op->tm.handle == 0 || op->tm.handle > tm->max_tags ||
		    !tm->tags[op->tm.handle - 1].used)
			status = IBV_WC_TM_ERR;
		else
			tm->tags[op->tm.handle - 1].used = false;
		opcode = IBV_WC_TM_DEL;
		break;
	default:
		opcode = IBV_WC_TM_SYNC;
		break;
	}
	if (op->flags & IBV_OPS_TM_SYNC)
		tm->sw_unexp = op->tm.unexpected_cnt;
	if ((op->flags & IBV_OPS_SIGNALED) || status != IBV_WC_SUCCESS)
		droce_tm_cqe(srq, 0, opcode, status, op->wr_id, 0, sync_req(tm),
			     0, 0);
	return 0;
}

int
droce_tm_op(struct droce_dev *dev, struct droce_srq_eng *srq,
	    struct ibv_ops_wr *op)
{
	struct op_args a = { .srq = srq, .op = op };

	return droce_dev_call(dev, tm_op, &a);
}

/* ------------------------------------------------------------------------
 * Rendezvous: the engine's own READ and FIN on the QP's send queue.
 */

/* Claim a slot of @p qp's send queue for the engine. */
static struct droce_send_wqe *
claim(struct droce_qp_eng *qp, uint32_t *idx)
{
	if (droce_wq_claim(qp->cfg.sq, 1, idx) != 1)
		return NULL;
	return droce_wq_slot(qp->cfg.sq, *idx);
}

bool
droce_tm_rndv(struct droce_qp_eng *qp, const struct droce_tm_tag *t,
	      uint64_t va, uint32_t rkey, uint32_t len, uint64_t tag,
	      uint32_t priv)
{
	struct droce_wq *sq = qp->cfg.sq;
	struct droce_send_wqe *w;
	uint32_t idx;

	/* (the memory checked at TAG_ADD may be gone since) */
	if (len > t->length ||
	    t->num_sge * sizeof(struct ibv_sge) >
	    sq->stride - sizeof(struct droce_send_wqe) ||
	    droce_sge_check(qp->dev, qp->cfg.srq->pd, t->sge, t->num_sge,
			    true) != 0)
		return false;
	w = claim(qp, &idx);
	if (w == NULL)
		return false;
	memset(w, 0, sizeof(*w));
	w->wr_id = t->recv_wr_id;
	w->opcode = IBV_WR_RDMA_READ;
	w->flags = DROCE_WQE_TM_RNDV;
	w->num_sge = (uint16_t)t->num_sge;
	w->length = len;
	w->imm = priv;
	w->rkey = rkey;
	w->remote_addr = va;
	w->compare_add = tag;
	memcpy(droce_send_wqe_sge(w), t->sge,
	       t->num_sge * sizeof(struct ibv_sge));
	droce_wq_publish(sq);
	return true;
}

/* The FIN of a rendezvous: a SEND of a TMH the sender knows it by. */
static void
send_fin(struct droce_qp_eng *qp, uint64_t tag, uint32_t priv)
{
	struct ibv_tmh tmh = {
		.opcode = IBV_TMH_FIN,
		.app_ctx = priv,
		.tag = tag,
	};
	struct droce_send_wqe *w;
	uint32_t idx;

	w = claim(qp, &idx);
	if (w == NULL)
		return;         /* the sender's own queue is full: no FIN */
	memset(w, 0, sizeof(*w));
	w->opcode = IBV_WR_SEND;
	w->flags = DROCE_WQE_TM_FIN | DROCE_WQE_INLINE;
	w->length = sizeof(tmh);
	memcpy(droce_send_wqe_sge(w), &tmh, sizeof(tmh));
	droce_wq_publish(qp->cfg.sq);
}

void
droce_tm_wqe_done(struct droce_qp_eng *qp, uint32_t idx,
		  enum ibv_wc_status status)
{
	struct droce_wq *sq = qp->cfg.sq;
	const struct droce_send_wqe *w = droce_wq_slot(sq, idx);

	if (w->flags & DROCE_WQE_TM_RNDV) {
		/* the data's completion: the tag was the match's (as the
		 * devices that have tag matching report it, and rdma-core's
		 * tests expect); imm and compare_add keep the TMH's app_ctx
		 * and tag, both in network order, for the FIN */
		droce_tm_cqe(qp->cfg.srq, qp->cfg.qp_num, IBV_WC_TM_RECV,
			     status, w->wr_id,
			     status == IBV_WC_SUCCESS ? w->length : 0,
			     status == IBV_WC_SUCCESS ?
			     IBV_WC_TM_DATA_VALID : 0, 0, 0);
		if (status == IBV_WC_SUCCESS)
			send_fin(qp, w->compare_add, w->imm);
	}
	/* every WQE before it is complete: its slot is free */
	droce_wq_retire(sq, idx + 1);
}
