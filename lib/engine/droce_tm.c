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
 * packets. The responder hands the first packet of each SEND to a TM
 * SRQ here (droce_tm_recv_start()) and keeps what is its own: the
 * receive WQE an unexpected message takes, NAKs and ACKs.
 */

#include <errno.h>
#include <infiniband/tm_types.h>

#include "droce_engine_pvt.h"
#include "droce_cq_eng.h"
#include "droce_dma.h"

static void
tm_cqe(struct droce_srq_eng *srq, uint32_t qp_num,
       enum ibv_wc_opcode opcode, enum ibv_wc_status status,
       uint64_t wr_id, uint32_t byte_len, uint16_t wc_flags,
       uint64_t tag, uint32_t priv)
{
	struct droce_cqe cqe = {
		.wr_id = wr_id,
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

static struct droce_tm_tag *
tm_match(struct droce_tm *tm, uint64_t tag)
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
tm_op(struct droce_shard *sh, void *arg)
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
		if (droce_sge_check(sh, srq->pd, op->tm.add.sg_list,
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
		tm_cqe(srq, 0, opcode, status, op->wr_id, 0, sync_req(tm),
			     0, 0);
	return 0;
}

int
droce_tm_op(struct droce_dev *dev, struct droce_srq_eng *srq,
	    struct ibv_ops_wr *op)
{
	struct droce_shard *sh = dev->shards[0];
	struct op_args a = { .srq = srq, .op = op };

	return droce_shard_call(sh, tm_op, &a);
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

static bool
tm_rndv(struct droce_qp_eng *qp, const struct droce_tm_tag *t,
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
	    droce_sge_check(qp->shard, qp->cfg.srq->pd, t->sge, t->num_sge,
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
		tm_cqe(qp->cfg.srq, qp->cfg.qp_num, IBV_WC_TM_RECV,
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

/* ------------------------------------------------------------------------
 * Receive: the first packet of a SEND to a TM SRQ, and its completion.
 */

enum droce_tm_start
droce_tm_recv_start(struct droce_qp_eng *qp,
		    const struct droce_wire_meta *meta)
{
	struct droce_tm *tm = qp->cfg.srq->tm;
	const struct droce_opcode_info *op = meta->op;
	const uint8_t *p = meta->payload;
	uint32_t len = meta->payload_len;
	struct droce_tm_tag *t;
	struct ibv_tmh tmh;
	struct ibv_rvh rvh;

	qp->resp.tm = DROCE_TM_PLAIN;
	if (len < sizeof(tmh))
		return DROCE_TM_START_RECEIVE;
	memcpy(&tmh, p, sizeof(tmh));
	if (tmh.opcode == IBV_TMH_NO_TAG) {
		qp->resp.tm = DROCE_TM_NO_TAG;
		return DROCE_TM_START_RECEIVE;
	}
	/* a FIN, or unknown: plain */
	if (tmh.opcode != IBV_TMH_EAGER && tmh.opcode != IBV_TMH_RNDV)
		return DROCE_TM_START_RECEIVE;
	qp->resp.tm_tag = rte_be_to_cpu_64(tmh.tag);
	qp->resp.tm_priv = rte_be_to_cpu_32(tmh.app_ctx);
	/* a rendezvous request is one packet, header and RVH in it */
	if (tmh.opcode == IBV_TMH_RNDV &&
	    ((op->flags & (DROCE_OPF_FIRST | DROCE_OPF_LAST)) !=
	     (DROCE_OPF_FIRST | DROCE_OPF_LAST) ||
	     len < sizeof(tmh) + sizeof(rvh)))
		t = NULL;
	else
		t = tm_match(tm, qp->resp.tm_tag);
	if (t == NULL)
		return DROCE_TM_START_UNEXPECTED;
	if (tmh.opcode == IBV_TMH_EAGER) {
		struct droce_recv_wqe *w = qp->srq_wqe;

		/* checked at TAG_ADD, but its memory may be gone since: as
		 * a receive WQE's would */
		if (droce_sge_check(qp->shard, qp->cfg.srq->pd, t->sge,
				    t->num_sge, true) != 0) {
			tm_cqe(qp->cfg.srq, qp->cfg.qp_num, IBV_WC_TM_RECV,
			       IBV_WC_LOC_PROT_ERR, t->recv_wr_id, 0,
			       IBV_WC_TM_MATCH, qp->resp.tm_tag,
			       qp->resp.tm_priv);
			qp->resp.tm = DROCE_TM_NONE;
			return DROCE_TM_START_BAD_BUFFER;
		}

		w->wr_id = t->recv_wr_id;
		w->num_sge = t->num_sge;
		w->length = t->length;
		memcpy(droce_recv_wqe_sge(w), t->sge,
		       t->num_sge * sizeof(struct ibv_sge));
		qp->resp.has_rwqe = true;
		qp->resp.rwqe = 0;
		qp->resp.roffset = 0;
		qp->resp.tm = DROCE_TM_EAGER;
		qp->resp.tm_skip = sizeof(tmh);
		return DROCE_TM_START_RECEIVE;
	}
	/* rendezvous: matched now, its data valid once the READ is done */
	memcpy(&rvh, p + sizeof(tmh), sizeof(rvh));
	tm_cqe(qp->cfg.srq, qp->cfg.qp_num, IBV_WC_TM_RECV, IBV_WC_SUCCESS,
	       t->recv_wr_id, 0, IBV_WC_TM_MATCH, qp->resp.tm_tag,
	       qp->resp.tm_priv);
	if (!tm_rndv(qp, t, rte_be_to_cpu_64(rvh.va),
		     rte_be_to_cpu_32(rvh.rkey), rte_be_to_cpu_32(rvh.len),
		     tmh.tag, tmh.app_ctx))
		/* the application reads it itself (IBV_WC_TM_RNDV_INCOMPLETE) */
		tm_cqe(qp->cfg.srq, qp->cfg.qp_num, IBV_WC_TM_RECV,
		       IBV_WC_TM_RNDV_INCOMPLETE, t->recv_wr_id, 0, 0,
		       qp->resp.tm_tag, qp->resp.tm_priv);
	qp->resp.tm = DROCE_TM_NONE;
	return DROCE_TM_START_RNDV;
}

void
droce_tm_unexpected(struct droce_qp_eng *qp)
{
	qp->cfg.srq->tm->hw_unexp++;
	qp->resp.tm = DROCE_TM_UNEXPECTED;
}

void
droce_tm_recv_done(struct droce_qp_eng *qp, uint64_t wr_id, uint32_t byte_len)
{
	struct droce_srq_eng *srq = qp->cfg.srq;

	switch (qp->resp.tm) {
	case DROCE_TM_EAGER:
		tm_cqe(srq, qp->cfg.qp_num, IBV_WC_TM_RECV,
		       IBV_WC_SUCCESS, wr_id, byte_len,
		       IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID,
		       qp->resp.tm_tag, qp->resp.tm_priv);
		break;
	case DROCE_TM_NO_TAG:
		tm_cqe(srq, qp->cfg.qp_num, IBV_WC_TM_NO_TAG,
		       IBV_WC_SUCCESS, wr_id, byte_len, 0, 0, 0);
		break;
	case DROCE_TM_UNEXPECTED:
		/* a tag matching completion that matched nothing, as the
		 * devices that have tag matching report it (and rdma-core's
		 * tests expect): no flags, no tag (the TMH is in the
		 * buffer); the application handles it, then syncs */
		tm_cqe(srq, qp->cfg.qp_num, IBV_WC_TM_RECV,
		       IBV_WC_SUCCESS, wr_id, byte_len, 0, 0, 0);
		break;
	default:
		tm_cqe(srq, qp->cfg.qp_num, IBV_WC_RECV, IBV_WC_SUCCESS,
		       wr_id, byte_len, 0, 0, 0);
		break;
	}
	qp->resp.tm = DROCE_TM_NONE;
}
