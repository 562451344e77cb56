/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The responder: requests from the peer. Packets are taken in PSN order:
 * a gap gets one NAK (PSN sequence error) until it is filled, a duplicate
 * is answered again (re-ACKed, READs re-executed from the duplicate's
 * RETH, atomics answered from the replay ring, never executed twice).
 * Before any byte moves, the rkey, PD, range and access right are checked;
 * a failure is NAKed and puts the QP in error. SENDs without a receive
 * WQE are RNR NAKed. READ responses and atomic ACKs leave in request
 * order, ACKs are coalesced to one per pass (droce_resp_tx.c). Receive
 * WQEs complete here.
 */

#include <rte_cycles.h>

#include "droce_engine_pvt.h"
#include "droce_cq_eng.h"
#include "droce_dma.h"
#include "droce_neigh.h"
#include "droce_resp.h"
#include "droce_sched.h"

#define NO_OPCODE 0xff

/*
 * UC: drop the message in progress (a packet of it was lost, or it was
 * refused): nothing of it completes, and the next FIRST or ONLY packet
 * starts the next message. A receive WQE it had taken serves that one.
 */
static void
uc_drop(struct droce_qp_eng *qp)
{
	qp->resp.opcode = NO_OPCODE;
	qp->resp.roffset = 0;
}

/* A request refused: RC NAKs it and fails the QP, UC drops the message. */
static void
refuse(struct droce_qp_eng *qp, uint8_t code)
{
	if (qp->tr == DROCE_TR_UC)
		uc_drop(qp);
	else
		droce_resp_nak_fatal(qp, code);
}

static void
rnr_nak(struct droce_qp_eng *qp, uint32_t psn)
{
	if (qp->tr == DROCE_TR_UC) {
		/* no receive WQE: the message is lost */
		uc_drop(qp);
		return;
	}
	qp->stats.rnr_naks_sent++;
	droce_resp_send_ack(qp, DROCE_AETH_RNR_NAK | qp->min_rnr_timer, psn);
	/* the packets behind it in the same flight are sent again after the
	 * requester's RNR wait: dropped as after a sequence NAK, not
	 * answered with one (which a requester would charge to its retry
	 * count once its wait is over, an RNR episode at a time) */
	qp->resp.nak_sent = true;
}

/* Acknowledge @p psn with the next coalesced ACK if the packet asked. */
static void
in_order_done(struct droce_qp_eng *qp, const uint8_t *bth, uint32_t psn)
{
	qp->resp.psn = droce_psn_add(psn, 1);
	qp->resp.done_psn = psn;
	if (droce_bth_ackreq(bth) && droce_tr_reliable(qp->tr)) {
		qp->resp.ack_pending = true;
		qp->resp.ack_psn = psn;
	}
}

/* Is this packet the right one after what came before? */
static bool
sequence_ok(const struct droce_qp_eng *qp, uint32_t flags)
{
	const struct droce_opcode_info *cur;

	if (qp->resp.opcode == NO_OPCODE)
		return (flags & DROCE_OPF_FIRST) != 0;
	cur = &droce_opcode_table[qp->resp.opcode];
	if ((cur->flags & DROCE_OPF_SEND) != (flags & DROCE_OPF_SEND) ||
	    (cur->flags & DROCE_OPF_WRITE) != (flags & DROCE_OPF_WRITE))
		return false;
	return (flags & DROCE_OPF_FIRST) == 0;
}

/*
 * Does a SEND or WRITE packet carry what its place in the message says:
 * a FIRST or MIDDLE packet exactly the path MTU, a LAST or ONLY one at
 * most that?
 */
static bool
length_ok(const struct droce_qp_eng *qp, uint32_t flags, uint32_t len)
{
	if (!(flags & (DROCE_OPF_SEND | DROCE_OPF_WRITE)))
		return true;
	return (flags & DROCE_OPF_LAST) ? len <= qp->mtu : len == qp->mtu;
}

/*
 * The request stage (droce_resp_rx()): is the packet one the QP may take
 * where it stands, its opcode next in sequence, its length what its
 * position in the message says, its operation one the QP's access flags
 * allow? Nothing changes. @return 0, or the NAK an RC QP answers with
 * (Invalid Request).
 */
static inline uint8_t
request_check(const struct droce_qp_eng *qp, uint32_t flags, uint32_t len)
{
	if (!sequence_ok(qp, flags) || !length_ok(qp, flags, len))
		return DROCE_NAK_INVALID_REQ;
	if (((flags & (DROCE_OPF_WRITE | DROCE_OPF_ATOMIC_WRITE)) &&
	     !(qp->access & IBV_ACCESS_REMOTE_WRITE)) ||
	    ((flags & DROCE_OPF_READ) &&
	     !(qp->access & IBV_ACCESS_REMOTE_READ)) ||
	    ((flags & DROCE_OPF_ATOMIC) &&
	     !(qp->access & IBV_ACCESS_REMOTE_ATOMIC)))
		return DROCE_NAK_INVALID_REQ;
	return 0;
}

/* The receive WQE in use. */
static struct droce_recv_wqe *
cur_rwqe(struct droce_qp_eng *qp)
{
	return qp->cfg.srq != NULL ? qp->srq_wqe :
		droce_wq_slot(qp->cfg.rq, qp->resp.rwqe);
}

/*
 * Take the next WQE of the QP's SRQ: copy it out and free its slot. Below
 * the armed limit, raise the SRQ's event (once: it disarms).
 */
static struct droce_recv_wqe *
srq_take(struct droce_qp_eng *qp)
{
	struct droce_srq_eng *srq = qp->cfg.srq;
	uint32_t prod = __atomic_load_n(&srq->wq.prod_tail, __ATOMIC_ACQUIRE);
	const struct droce_recv_wqe *w;
	uint32_t limit;

	if (srq->cons == prod)
		return NULL;
	w = droce_wq_slot(&srq->wq, srq->cons);
	memcpy(qp->srq_wqe, w, sizeof(*w) + (size_t)w->num_sge *
	       sizeof(struct ibv_sge));
	srq->cons++;
	__atomic_store_n(&srq->wq.retired, srq->cons, __ATOMIC_RELEASE);
	limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	if (limit != 0 && prod - srq->cons < limit &&
	    __atomic_compare_exchange_n(&srq->limit, &limit, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED) &&
	    srq->event != NULL)
		srq->event(srq->event_arg, IBV_EVENT_SRQ_LIMIT_REACHED);
	return qp->srq_wqe;
}

/* The receive WQE a SEND (or WRITE with immediate) lands in, if any. */
static struct droce_recv_wqe *
recv_wqe(struct droce_qp_eng *qp, bool *fatal)
{
	struct droce_wq *rq = qp->cfg.rq;
	struct droce_recv_wqe *wqe;

	*fatal = false;
	if (qp->resp.has_rwqe)
		return cur_rwqe(qp);
	if (qp->cfg.srq != NULL) {
		wqe = srq_take(qp);
		if (wqe == NULL)
			return NULL;
	} else {
		uint32_t cons = qp->resp.rq_cons;

		if ((int32_t)(qp->resp.rq_seen - cons) <= 0) {
			qp->resp.rq_seen = __atomic_load_n(&rq->prod_tail,
							   __ATOMIC_ACQUIRE);
			if (qp->resp.rq_seen == cons)
				return NULL;
		}
		wqe = droce_wq_slot(rq, cons);
		/* the next one, written on the poster's core, on its way */
		if (cons + 1 != qp->resp.rq_seen)
			rte_prefetch0(droce_wq_slot(rq, cons + 1));
	}
	if (droce_sge_check(qp->shard, qp->cfg.pd, droce_recv_wqe_sge(wqe),
			    wqe->num_sge, true) != 0) {
		droce_resp_recv_cqe(qp, qp->resp.rq_cons, wqe->wr_id,
				    IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, 0, 0,
				    false);
		qp->resp.rq_cons++;
		*fatal = true;
		return NULL;
	}
	qp->resp.has_rwqe = true;
	qp->resp.rwqe = qp->resp.rq_cons;
	qp->resp.roffset = 0;
	return wqe;
}

/*
 * A message longer than the receive WQE in use: the WQE completes with
 * IBV_WC_LOC_LEN_ERR. RC and XRC NAK it and fail the QP; UC drops the
 * rest of the message and UD the datagram, and the QP goes on, as the
 * IBTA's class D errors do (a sender must not be able to end a UC or UD
 * QP with one frame).
 */
static void
too_long(struct droce_qp_eng *qp, const struct droce_recv_wqe *wqe)
{
	droce_resp_recv_cqe(qp, qp->resp.rwqe, wqe->wr_id, IBV_WC_LOC_LEN_ERR,
			    IBV_WC_RECV, 0, 0, 0, false);
	qp->resp.rq_cons = qp->resp.rwqe + 1;
	qp->resp.has_rwqe = false;
	if (qp->tr == DROCE_TR_UC)
		uc_drop(qp);
	else if (droce_tr_reliable(qp->tr))
		droce_resp_nak_fatal(qp, DROCE_NAK_INVALID_REQ);
}

/* Complete the receive WQE in use. */
static void
recv_done(struct droce_qp_eng *qp, const uint8_t *bth,
	  const struct droce_opcode_info *op, enum ibv_wc_opcode wc_opcode,
	  uint32_t byte_len)
{
	struct droce_recv_wqe *wqe = cur_rwqe(qp);
	uint16_t wc_flags = 0;
	uint32_t imm = 0;

	if (qp->resp.tm != DROCE_TM_NONE) {
		droce_tm_recv_done(qp, wqe->wr_id, byte_len);
		qp->resp.has_rwqe = false;
		return;
	}
	if (op->flags & DROCE_OPF_IMMDT) {
		memcpy(&imm, bth + op->offset[DROCE_EXT_IMMDT], 4);
		wc_flags |= IBV_WC_WITH_IMM;
	}
	if (op->flags & DROCE_OPF_IETH) {
		/* the key it invalidated, in host order as verbs has it */
		imm = droce_get_be32(bth + op->offset[DROCE_EXT_IETH]);
		wc_flags |= IBV_WC_WITH_INV;
	}
	droce_resp_recv_cqe(qp, qp->resp.rwqe, wqe->wr_id, IBV_WC_SUCCESS,
			    wc_opcode, byte_len, wc_flags, imm,
			    droce_bth_se(bth));
	qp->resp.rq_cons = qp->resp.rwqe + 1;
	qp->resp.has_rwqe = false;
}

/*
 * The first packet of a SEND to a TM SRQ: its tag matched, or not
 * (droce_tm_recv_start()); the responder's part is the receive WQE an
 * unexpected message takes, the NAKs and the acknowledgement.
 * @return true if the packet was handled here.
 */
static bool
tm_start(struct droce_qp_eng *qp, const uint8_t *bth,
	 const struct droce_wire_meta *meta, uint32_t psn)
{
	bool fatal;

	switch (droce_tm_recv_start(qp, meta)) {
	case DROCE_TM_START_RECEIVE:
		return false;
	case DROCE_TM_START_UNEXPECTED:
		/* only once an ordinary WQE is there to take it, or the
		 * retry after an RNR NAK would count it again */
		if (recv_wqe(qp, &fatal) == NULL) {
			if (fatal)
				droce_resp_nak_fatal(qp, DROCE_NAK_REM_OP_ERR);
			else
				rnr_nak(qp, psn);
			qp->resp.tm = DROCE_TM_NONE;
			return true;
		}
		droce_tm_unexpected(qp);
		return false;
	case DROCE_TM_START_BAD_BUFFER:
		droce_resp_nak_fatal(qp, DROCE_NAK_REM_OP_ERR);
		return true;
	case DROCE_TM_START_RNDV:
		qp->resp.msn = droce_psn_add(qp->resp.msn, 1);
		in_order_done(qp, bth, psn);
		return true;
	}
	return false;
}

static void
do_send(struct droce_qp_eng *qp, const uint8_t *bth,
	const struct droce_wire_meta *meta, uint32_t psn)
{
	const struct droce_opcode_info *op = meta->op;
	struct droce_recv_wqe *wqe;
	uint32_t len = meta->payload_len;
	uint32_t skip;
	bool fatal;

	if (unlikely(qp->cfg.srq != NULL && qp->cfg.srq->tm != NULL) &&
	    (op->flags & DROCE_OPF_FIRST) && !qp->resp.has_rwqe &&
	    tm_start(qp, bth, meta, psn))
		return;
	wqe = recv_wqe(qp, &fatal);
	if (wqe == NULL) {
		if (fatal)
			droce_resp_nak_fatal(qp, DROCE_NAK_REM_OP_ERR);
		else
			rnr_nak(qp, psn);
		return;
	}
	if (qp->resp.roffset + len - RTE_MIN((uint32_t)qp->resp.tm_skip, len) >
	    wqe->length) {
		too_long(qp, wqe);
		return;
	}
	/* SEND with invalidate: the key goes as the message completes; a
	 * key that is not a type 2 window bound to this QP is refused */
	if ((op->flags & DROCE_OPF_IETH) &&
	    !droce_mw_invalidate(qp, droce_get_be32(bth +
						    op->offset[DROCE_EXT_IETH]),
				 true)) {
		refuse(qp, DROCE_NAK_INVALID_REQ);
		return;
	}
	/* a matched message's TMH is not placed */
	skip = RTE_MIN((uint32_t)qp->resp.tm_skip, len);
	qp->resp.tm_skip = 0;
	droce_sge_write(droce_recv_wqe_sge(wqe), wqe->num_sge, qp->resp.roffset,
			meta->payload + skip, len - skip);
	qp->resp.roffset += len - skip;
	qp->resp.opcode = droce_bth_opcode(bth);
	if (op->flags & DROCE_OPF_LAST) {
		recv_done(qp, bth, op, IBV_WC_RECV, qp->resp.roffset);
		qp->resp.opcode = NO_OPCODE;
		qp->resp.msn = droce_psn_add(qp->resp.msn, 1);
	}
	in_order_done(qp, bth, psn);
}

/* The WRITE a packet belongs to: the one its RETH starts, or the one
 * under way. */
struct write_span {
	uint64_t va;
	uint32_t rkey;
	uint32_t left;          /**< bytes of it still to come */
};

/*
 * The length and rkey stages of a WRITE packet (droce_resp_rx()): the
 * WRITE it belongs to into *@p w; its payload fits what is left of it
 * (and ends it if LAST), in memory its rkey grants for remote writes
 * (all of it, on the packet that starts it), at *@p addr. Nothing
 * changes. @return 0, or the NAK an RC QP answers with (Invalid
 * Request, Remote Access Error).
 */
static inline uint8_t
write_target(const struct droce_qp_eng *qp, const uint8_t *bth,
	     const struct droce_opcode_info *op, uint32_t len,
	     struct write_span *w, uint64_t *addr)
{
	if (op->flags & DROCE_OPF_RETH) {
		struct droce_reth reth;

		droce_reth_decode(bth + op->offset[DROCE_EXT_RETH], &reth);
		w->va = reth.va;
		w->rkey = reth.rkey;
		w->left = reth.dlen;
		if (reth.dlen != 0 &&
		    !droce_rkey_check(qp, reth.rkey, reth.va, reth.dlen,
				      IBV_ACCESS_REMOTE_WRITE, addr))
			return DROCE_NAK_REM_ACCESS_ERR;
	} else {
		w->va = qp->resp.va;
		w->rkey = qp->resp.rkey;
		w->left = qp->resp.remaining;
	}
	if (len > w->left || ((op->flags & DROCE_OPF_LAST) && len != w->left))
		return DROCE_NAK_INVALID_REQ;
	/* (a FIRST or ONLY packet's bytes are the start of what the RETH's
	 * check granted, at the address it gave) */
	if (len != 0 && !(op->flags & DROCE_OPF_RETH) &&
	    !droce_rkey_check(qp, w->rkey, w->va, len,
			      IBV_ACCESS_REMOTE_WRITE, addr))
		return DROCE_NAK_REM_ACCESS_ERR;
	return 0;
}

static void
do_write(struct droce_qp_eng *qp, const struct rte_mbuf *m,
	 const uint8_t *bth, const struct droce_wire_meta *meta, uint32_t psn)
{
	const struct droce_opcode_info *op = meta->op;
	uint32_t len = meta->payload_len;
	bool imm = (op->flags & DROCE_OPF_IMMDT) != 0;
	struct write_span w;
	uint64_t addr = 0;
	uint8_t nak;
	bool fatal;

	nak = write_target(qp, bth, op, len, &w, &addr);
	if (nak != 0) {
		refuse(qp, nak);
		return;
	}
	/* with immediate: no receive WQE, no write (the retry comes back) */
	if (imm && (op->flags & DROCE_OPF_LAST) && recv_wqe(qp, &fatal) == NULL) {
		if (fatal)
			droce_resp_nak_fatal(qp, DROCE_NAK_REM_OP_ERR);
		else
			rnr_nak(qp, psn);
		return;
	}
	if (op->flags & DROCE_OPF_RETH) {
		qp->resp.rkey = w.rkey;
		qp->resp.msg_len = w.left;
	}
	if (len != 0) {
		/* (checked as it is copied: nothing more happens if wrong) */
		if (unlikely(meta->icrc_unchecked)) {
			if (!droce_rx_copy_checked(qp->shard, m, meta,
						   (void *)(uintptr_t)addr))
				return;
		} else {
			rte_memcpy((void *)(uintptr_t)addr, meta->payload, len);
		}
	}
	qp->resp.va = w.va + len;
	qp->resp.remaining = w.left - len;
	qp->resp.opcode = droce_bth_opcode(bth);
	if (op->flags & DROCE_OPF_LAST) {
		if (imm)
			recv_done(qp, bth, op, IBV_WC_RECV_RDMA_WITH_IMM,
				  qp->resp.msg_len);
		qp->resp.opcode = NO_OPCODE;
		qp->resp.msn = droce_psn_add(qp->resp.msn, 1);
	}
	in_order_done(qp, bth, psn);
}

/*
 * The aligned 8 bytes at @p va under @p rkey with @p access, for an
 * atomic or an ATOMIC_WRITE: a misaligned va (or a zero-based window
 * that puts an aligned va at a misaligned address) is an Invalid Request,
 * a key that does not grant them a Remote Access Error; either is NAKed
 * and fails the QP. @return true with *addr set.
 */
static bool
word_target(struct droce_qp_eng *qp, uint32_t rkey, uint64_t va,
	    uint32_t access, uint64_t *addr)
{
	if (va & 7) {
		droce_resp_nak_fatal(qp, DROCE_NAK_INVALID_REQ);
		return false;
	}
	if (!droce_rkey_check(qp, rkey, va, 8, access, addr)) {
		droce_resp_nak_fatal(qp, DROCE_NAK_REM_ACCESS_ERR);
		return false;
	}
	if (*addr & 7) {
		droce_resp_nak_fatal(qp, DROCE_NAK_INVALID_REQ);
		return false;
	}
	return true;
}

/*
 * ATOMIC_WRITE (memory placement extensions): 8 bytes placed at once at
 * an aligned address. It is answered by an ACK and needs no responder
 * resource: a duplicate is acknowledged again, never placed again, as a
 * WRITE's is.
 */
static void
do_atomic_write(struct droce_qp_eng *qp, const uint8_t *bth,
		const struct droce_wire_meta *meta, uint32_t psn)
{
	const struct droce_opcode_info *op = meta->op;
	struct droce_reth reth;
	uint64_t addr, value;

	droce_reth_decode(bth + op->offset[DROCE_EXT_RETH], &reth);
	if (reth.dlen != sizeof(value) || meta->payload_len != sizeof(value)) {
		droce_resp_nak_fatal(qp, DROCE_NAK_INVALID_REQ);
		return;
	}
	if (!word_target(qp, reth.rkey, reth.va, IBV_ACCESS_REMOTE_WRITE,
			 &addr))
		return;
	/* the bytes as they came, in one store */
	memcpy(&value, meta->payload, sizeof(value));
	__atomic_store_n((uint64_t *)(uintptr_t)addr, value, __ATOMIC_SEQ_CST);
	qp->resp.msn = droce_psn_add(qp->resp.msn, 1);
	in_order_done(qp, bth, psn);
}

/* A slot of the read/atomic ring for a new request, or NULL if busy. */
static struct droce_rd_res *
res_alloc(struct droce_qp_eng *qp)
{
	uint32_t n = droce_resp_res_slots(qp);
	struct droce_rd_res *res = &qp->rd_res[qp->resp.res_head % n];

	if (res->busy && res->sending) {
		/* answering the request for the first time: one too many;
		 * answering it again for a duplicate: the requester, asking
		 * for more, has what it wanted of it */
		if (!res->replay)
			return NULL;
		qp->resp.res_sending--;
	}
	qp->resp.res_head++;
	memset(res, 0, sizeof(*res));
	res->busy = 1;
	return res;
}

/*
 * A READ or atomic while every one of max_dest_rd_atomic's resources is
 * still answering an earlier one: the requester asked for more than the
 * QP grants, which the IBTA answers with an Invalid Request NAK.
 */
static void
too_many_rd_atomic(struct droce_qp_eng *qp)
{
	droce_resp_nak_fatal(qp, DROCE_NAK_INVALID_REQ);
}

static uint32_t
read_npkts(const struct droce_qp_eng *qp, uint32_t len)
{
	return len == 0 ? 1 : (len + qp->mtu - 1) / qp->mtu;
}

/*
 * Start the responses of a READ at @p psn, or restart them there for a
 * duplicate (which may ask for the part from one of its responses on: the
 * resource keeps the PSNs of the whole READ, so that a later duplicate
 * from further back still finds it).
 */
static void
read_start(struct droce_qp_eng *qp, struct droce_rd_res *res, uint32_t psn,
	   const struct droce_reth *reth, bool dup)
{
	if (!dup) {
		res->first_psn = psn;
		res->last_psn = droce_psn_add(psn,
					      read_npkts(qp, reth->dlen) - 1);
		res->req_va = reth->va;
		res->req_len = reth->dlen;
	}
	res->atomic = 0;
	res->replay = dup;
	res->va = reth->va;
	res->pd = qp->cfg.pd;
	res->length = reth->dlen;
	res->rkey = reth->rkey;
	res->next_psn = psn;
	res->sent = 0;
	if (!res->sending) {
		res->sending = true;
		qp->resp.res_sending++;
	}
}

static void
do_read(struct droce_qp_eng *qp, const uint8_t *bth,
	const struct droce_wire_meta *meta, uint32_t psn)
{
	const struct droce_opcode_info *op = meta->op;
	struct droce_rd_res *res;
	struct droce_reth reth;
	uint64_t addr = 0;

	droce_reth_decode(bth + op->offset[DROCE_EXT_RETH], &reth);
	if (reth.dlen != 0 &&
	    !droce_rkey_check(qp, reth.rkey, reth.va, reth.dlen,
			      IBV_ACCESS_REMOTE_READ, &addr)) {
		droce_resp_nak_fatal(qp, DROCE_NAK_REM_ACCESS_ERR);
		return;
	}
	res = res_alloc(qp);
	if (res == NULL) {
		too_many_rd_atomic(qp);
		return;
	}
	read_start(qp, res, psn, &reth, false);
	qp->resp.msn = droce_psn_add(qp->resp.msn, 1);
	qp->resp.psn = droce_psn_add(res->last_psn, 1);
}

static void
do_atomic(struct droce_qp_eng *qp, const uint8_t *bth,
	  const struct droce_wire_meta *meta, uint32_t psn)
{
	const struct droce_opcode_info *op = meta->op;
	struct droce_atomiceth a;
	struct droce_rd_res *res;
	uint64_t *target;
	uint64_t addr;

	droce_atomiceth_decode(bth + op->offset[DROCE_EXT_ATOMICETH], &a);
	if (!word_target(qp, a.rkey, a.va, IBV_ACCESS_REMOTE_ATOMIC, &addr))
		return;
	res = res_alloc(qp);
	if (res == NULL) {
		too_many_rd_atomic(qp);
		return;
	}
	target = (uint64_t *)(uintptr_t)addr;
	if ((droce_bth_opcode(bth) & ~DROCE_TR_MASK) ==
	    DROCE_OP_COMPARE_SWAP) {
		uint64_t expected = a.compare;

		__atomic_compare_exchange_n(target, &expected, a.swap_add, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		res->orig = expected;
	} else {
		res->orig = __atomic_fetch_add(target, a.swap_add,
					       __ATOMIC_SEQ_CST);
	}
	res->atomic = 1;
	res->first_psn = psn;
	res->last_psn = psn;
	res->next_psn = psn;
	res->sending = true;
	qp->resp.res_sending++;
	qp->resp.msn = droce_psn_add(qp->resp.msn, 1);
	qp->resp.psn = droce_psn_add(psn, 1);
}

/*
 * Is the READ @p reth, a duplicate of the one of @p res, a part of it: its
 * key, and its range within the original's (a requester resending from
 * one of the responses on asks for the rest)?
 */
static bool
dup_read_within(const struct droce_rd_res *res, const struct droce_reth *reth)
{
	return reth->rkey == res->rkey && reth->va >= res->req_va &&
		reth->dlen <= res->req_len &&
		reth->va - res->req_va <= res->req_len - reth->dlen;
}

/* An old request again: answer it as it was answered before. */
static void
duplicate(struct droce_qp_eng *qp, const uint8_t *bth,
	  const struct droce_wire_meta *meta, uint32_t psn)
{
	const struct droce_opcode_info *op = meta->op;
	uint32_t i;

	qp->stats.dup_reqs++;
	if (op->flags & (DROCE_OPF_READ | DROCE_OPF_ATOMIC)) {
		for (i = 0; i < droce_resp_res_slots(qp); i++) {
			struct droce_rd_res *res = &qp->rd_res[i];

			if (!res->busy || droce_psn_diff(psn, res->first_psn) < 0 ||
			    droce_psn_diff(psn, res->last_psn) > 0)
				continue;
			if (op->flags & DROCE_OPF_ATOMIC) {
				if (res->atomic && psn == res->first_psn &&
				    !res->sending) {
					res->next_psn = psn;
					res->replay = true;
					res->sending = true;
					qp->resp.res_sending++;
				}
			} else if (!res->atomic) {
				struct droce_reth reth;
				uint64_t addr = 0;

				droce_reth_decode(bth +
						  op->offset[DROCE_EXT_RETH],
						  &reth);
				/* again only what the READ was granted */
				if (!dup_read_within(res, &reth) ||
				    (reth.dlen != 0 &&
				     !droce_rkey_check(qp, reth.rkey, reth.va,
						       reth.dlen,
						       IBV_ACCESS_REMOTE_READ,
						       &addr))) {
					qp->stats.rx_dropped++;
					return;
				}
				read_start(qp, res, psn, &reth, true);
			}
			return;
		}
		return;
	}
	/* SEND or WRITE: acknowledge the SENDs and WRITEs received so far,
	 * if the packet asks (the last of a message always does): a
	 * requester going back over its messages gets an ACK per message
	 * it resends, not one per packet. The PSN is the last SEND's or
	 * WRITE's, not that of a READ or atomic after it: an ACK ending
	 * where a READ ends would say nothing of the READ's data, yet
	 * soft-RoCE (Linux 6.1) completes the READ on it, without the data
	 * of a response still on its way or lost. */
	if (droce_bth_ackreq(bth)) {
		qp->resp.ack_pending = true;
		qp->resp.ack_psn = qp->resp.done_psn;
	}
}

/*
 * UC: no duplicates, no ACKs, no NAKs. A packet out of sequence (one was
 * lost) drops the message in progress; a FIRST or ONLY packet starts the
 * next one whatever its PSN.
 */
static void
uc_rx(struct droce_qp_eng *qp, const uint8_t *bth,
      const struct droce_wire_meta *meta, uint32_t psn)
{
	uint32_t flags = meta->op->flags;

	if (psn != qp->resp.psn || !sequence_ok(qp, flags)) {
		uc_drop(qp);
		if (!(flags & DROCE_OPF_FIRST))
			return;
	}
	if (!length_ok(qp, flags, meta->payload_len)) {
		uc_drop(qp);
		qp->stats.rx_dropped++;
		return;
	}
	if ((flags & DROCE_OPF_WRITE) &&
	    !(qp->access & IBV_ACCESS_REMOTE_WRITE)) {
		uc_drop(qp);
		return;
	}
	if (flags & DROCE_OPF_SEND)
		do_send(qp, bth, meta, psn);
	else if (flags & DROCE_OPF_WRITE)
		do_write(qp, NULL, bth, meta, psn);
	else
		uc_drop(qp);
}

/*
 * The 40 bytes a UD receive buffer starts with, as RoCEv2 providers fill
 * them: the IPv6 header, or 20 zero bytes and the IPv4 header (which
 * ibv_init_ah_from_wc() tells apart by the IPv4 header's checksum).
 */
static void
ud_grh(const uint8_t *ip, uint8_t ip_version, uint8_t grh[DROCE_GRH_LEN])
{
	if (ip_version == 6) {
		memcpy(grh, ip, DROCE_GRH_LEN);
		return;
	}
	memset(grh, 0, DROCE_GRH_LEN - 20);
	memcpy(grh + DROCE_GRH_LEN - 20, ip, 20);
}

/* The sender of a MAD, from its frame's source MAC and its GRH area. */
static void
gsi_heard(struct droce_shard *sh, const uint8_t *frame,
	  const uint8_t grh[DROCE_GRH_LEN])
{
	struct rte_ether_addr mac;
	uint8_t gid[16];
	rte_be32_t ip;

	memcpy(&mac, frame + 6, sizeof(mac));
	if (grh[20] == 0x45) {
		memcpy(&ip, grh + 20 + 12, 4);
		droce_gid_from_ipv4(gid, ip);
	} else {
		memcpy(gid, grh + 8, 16);
	}
	droce_neigh_heard(sh->dev, gid, &mac);
}

/*
 * UD: a datagram with the QP's Q_Key lands in the next receive WQE, after
 * the GRH area; without a WQE it is dropped, as is one with another Q_Key.
 */
static void
ud_rx(struct droce_qp_eng *qp, const uint8_t *frame, const uint8_t *bth,
      const struct droce_wire_meta *meta)
{
	const struct droce_opcode_info *op = meta->op;
	uint32_t len = meta->payload_len;
	struct droce_recv_wqe *wqe;
	uint8_t grh[DROCE_GRH_LEN];
	struct droce_deth deth;
	uint16_t wc_flags = IBV_WC_GRH;
	uint32_t imm = 0;
	bool fatal;

	if ((op->flags & (DROCE_OPF_SEND | DROCE_OPF_FIRST | DROCE_OPF_LAST |
			  DROCE_OPF_DETH)) != (DROCE_OPF_SEND |
			  DROCE_OPF_FIRST | DROCE_OPF_LAST | DROCE_OPF_DETH)) {
		qp->stats.rx_dropped++;
		return;
	}
	droce_deth_decode(bth + op->offset[DROCE_EXT_DETH], &deth);
	if (deth.qkey != qp->qkey || len > qp->mtu) {
		qp->stats.rx_dropped++;
		return;
	}
	wqe = recv_wqe(qp, &fatal);
	if (wqe == NULL) {
		if (fatal)
			droce_resp_nak_fatal(qp, 0);
		else
			qp->stats.rx_dropped++;
		return;
	}
	if (len + DROCE_GRH_LEN > wqe->length) {
		/* as a too-long message does on the other transports */
		too_long(qp, wqe);
		return;
	}
	ud_grh(frame + meta->l3_off, meta->ip_version, grh);
	if (qp->cfg.gsi)
		gsi_heard(qp->shard, frame, grh);
	droce_sge_write(droce_recv_wqe_sge(wqe), wqe->num_sge, 0, grh,
			DROCE_GRH_LEN);
	droce_sge_write(droce_recv_wqe_sge(wqe), wqe->num_sge, DROCE_GRH_LEN,
			meta->payload, len);
	if (op->flags & DROCE_OPF_IMMDT) {
		memcpy(&imm, bth + op->offset[DROCE_EXT_IMMDT], 4);
		wc_flags |= IBV_WC_WITH_IMM;
	}
	/* IPoIB's checksums, as a provider with IBV_DEVICE_UD_IP_CSUM
	 * checks them (the first byte: IPv4's Ethernet type) */
	if (len >= DROCE_IPOIB_HDR_LEN + 20 && meta->payload[0] == 0x08)
		wc_flags |= droce_ipoib_csum_ok(meta->payload, len);
	droce_resp_recv_cqe_from(qp, qp->resp.rwqe, wqe->wr_id, IBV_WC_SUCCESS,
				 IBV_WC_RECV, len + DROCE_GRH_LEN, wc_flags, imm,
				 droce_bth_se(bth), deth.srcqp,
				 meta->ip_version == 4 ? DROCE_WC_SL_IPV4 :
				 DROCE_WC_SL_IPV6);
	qp->resp.rq_cons = qp->resp.rwqe + 1;
	qp->resp.has_rwqe = false;
}

/*
 * XRC target: the SRQ the packet's XRCETH names, of the QP's XRC domain,
 * gives the receive WQE (a new message takes its WQE there), the CQ and
 * the PD memory is checked against. @return false if it names none.
 */
static bool
xrc_target(struct droce_qp_eng *qp, const uint8_t *bth,
	   const struct droce_wire_meta *meta)
{
	uint32_t srqn = droce_get_be32(bth + meta->op->offset[DROCE_EXT_XRCETH]) &
		DROCE_PSN_MASK;
	struct droce_srq_eng *srq = srqn >= 1 && srqn <= DROCE_MAX_SRQ ?
		qp->shard->dev->srqs[srqn - 1] : NULL;

	if (srq == NULL || srq->xrcd == 0 || srq->xrcd != qp->cfg.xrcd)
		return false;
	qp->cfg.pd = srq->pd;
	if (!qp->resp.has_rwqe) {
		qp->cfg.srq = srq;
		qp->cfg.recv_cq = srq->cq;
	}
	return true;
}

/*
 * Does a WRITE MIDDLE or LAST whose ICRC is unchecked go straight to its
 * place, and nothing else happen on its account? It must pass every
 * stage of droce_resp_rx() as the one expected next, with nothing to
 * undo: an RC QP that is not in error and knows its path, this PSN
 * expected with no NAK out for a gap, and the request and the WRITE
 * stages passed with the same checks as there. Only such a packet is
 * placed as its ICRC is checked.
 */
static bool
write_in_place(const struct droce_qp_eng *qp, const uint8_t *bth,
	       const struct droce_wire_meta *meta, uint32_t psn)
{
	struct write_span w;
	uint64_t addr;

	return qp->tr == DROCE_TR_RC && qp->state != IBV_QPS_ERR &&
		(droce_bth_opcode(bth) & DROCE_TR_MASK) == DROCE_TR_RC &&
		qp->path.mac_ok && psn == qp->resp.psn &&
		!qp->resp.nak_sent &&
		request_check(qp, meta->op->flags, meta->payload_len) == 0 &&
		write_target(qp, bth, meta->op, meta->payload_len, &w,
			     &addr) == 0;
}

/*
 * A request, in stages, each refusing with its IBTA class (RC and XRC;
 * UC takes the same checks in uc_rx() but drops the message instead of
 * answering, UD has ud_rx()):
 *
 *   stage       refused when                      answered with
 *   ----------  --------------------------------  ------------------------
 *   ICRC        wrong (checked first, unless the  nothing: dropped
 *               packet is placed as it is
 *               checked: write_in_place())
 *   QP          in error, another transport       nothing: dropped
 *   path        the peer's MAC not yet known      nothing: dropped
 *   PSN         ahead of the one expected         sequence NAK, once
 *               behind it                         duplicate(): answered
 *                                                 again, not executed
 *   XRC SRQ     none of the QP's domain named     Invalid Request, fatal
 *   request     request_check(): opcode out of    Invalid Request, fatal
 *               sequence, length wrong for its
 *               position, access flags deny it
 *   operation   each in its own order:
 *     SEND      no receive WQE                    RNR NAK (the WQE's
 *                                                 SGEs bad: Remote
 *                                                 Operational Error)
 *               longer than the WQE               Invalid Request, fatal
 *     WRITE     write_target(): beyond the        Invalid Request, fatal
 *               message; memory not granted       Remote Access Error,
 *                                                 fatal
 *               with immediate, no receive WQE    RNR NAK, as a SEND's
 *     READ      memory not granted                Remote Access Error
 *     atomic    word_target(): misaligned; not    Invalid Request; Remote
 *               granted                           Access Error; fatal
 *               READ and atomic: no resource      Invalid Request, fatal
 *   execute     placed, the message completed
 *   acknowledge in_order_done(): the next coalesced ACK; a READ
 *               response or atomic ACK queued
 */
void
droce_resp_rx(struct droce_qp_eng *qp, struct rte_mbuf *m,
	      struct droce_wire_meta *meta, uint64_t now)
{
	const uint8_t *bth = rte_pktmbuf_mtod_offset(m, const uint8_t *,
						     meta->bth_off);
	uint32_t flags = meta->op->flags;
	uint32_t psn = droce_bth_psn(bth);
	int32_t diff;
	uint8_t nak;

	/* an unchecked ICRC is checked first, unless the packet is placed
	 * as it is checked */
	if (unlikely(meta->icrc_unchecked) &&
	    !write_in_place(qp, bth, meta, psn) &&
	    !droce_rx_icrc_late(qp->shard, m, meta))
		return;
	droce_qp_activate(qp);

	if (qp->state == IBV_QPS_ERR) {
		qp->stats.rx_dropped++;
		return;
	}
	if ((droce_bth_opcode(bth) & DROCE_TR_MASK) != qp->tr) {
		qp->stats.rx_dropped++;
		return;
	}
	if (qp->tr == DROCE_TR_UD) {
		ud_rx(qp, rte_pktmbuf_mtod(m, const uint8_t *), bth, meta);
		return;
	}
	if (!droce_qp_path_ready(qp, now))
		return;
	if (qp->tr == DROCE_TR_XRC &&
	    (qp->cfg.type != IBV_QPT_XRC_RECV ||
	     !(flags & DROCE_OPF_XRCETH))) {
		/* an initiator only sends; a target's requests name an SRQ */
		qp->stats.rx_dropped++;
		return;
	}
	if (qp->tr == DROCE_TR_UC) {
		uc_rx(qp, bth, meta, psn);
		return;
	}
	diff = droce_psn_diff(psn, qp->resp.psn);
	if (diff > 0) {
		if (!qp->resp.nak_sent) {
			qp->stats.naks_sent++;
			droce_resp_send_ack(qp, DROCE_AETH_NAK |
					    DROCE_NAK_PSN_SEQ_ERR,
					    qp->resp.psn);
			qp->resp.nak_sent = true;
		}
		return;
	}
	/* the SRQ an XRC request names, once its PSN is known to be one the
	 * QP takes: a stale frame naming no SRQ is dropped, and only an
	 * expected one can fail the QP */
	if (qp->tr == DROCE_TR_XRC && !xrc_target(qp, bth, meta)) {
		if (diff < 0)
			qp->stats.rx_dropped++;
		else
			droce_resp_nak_fatal(qp, DROCE_NAK_INVALID_REQ);
		return;
	}
	if (diff < 0) {
		duplicate(qp, bth, meta, psn);
		return;
	}
	qp->resp.nak_sent = false;

	nak = request_check(qp, flags, meta->payload_len);
	if (nak != 0) {
		droce_resp_nak_fatal(qp, nak);
		return;
	}
	if (flags & DROCE_OPF_SEND)
		do_send(qp, bth, meta, psn);
	else if (flags & DROCE_OPF_WRITE)
		do_write(qp, m, bth, meta, psn);
	else if (flags & DROCE_OPF_READ)
		do_read(qp, bth, meta, psn);
	else if (flags & DROCE_OPF_ATOMIC)
		do_atomic(qp, bth, meta, psn);
	else if (flags & DROCE_OPF_ATOMIC_WRITE)
		do_atomic_write(qp, bth, meta, psn);
	else
		droce_resp_nak_fatal(qp, DROCE_NAK_INVALID_REQ);
}

void
droce_resp_recv_cqe_from(struct droce_qp_eng *qp, uint32_t idx,
			 uint64_t wr_id, enum ibv_wc_status status,
			 enum ibv_wc_opcode opcode, uint32_t byte_len,
			 uint16_t wc_flags, uint32_t imm, bool solicited,
			 uint32_t src_qp, uint8_t sl)
{
	struct droce_cqe cqe = {
		.wr_id = wr_id,
		.qp_num = qp->cfg.qp_num,
		.wqe_idx = idx,
		.byte_len = byte_len,
		.imm = imm,
		.src_qp = src_qp,
		.wc_flags = wc_flags,
		.status = (uint8_t)status,
		.opcode = (uint8_t)opcode,
		.sl = sl,
		/* an SRQ's slot was freed when the engine took it */
		.flags = (solicited ? DROCE_CQE_SOLICITED : 0) |
			(qp->cfg.srq != NULL ? DROCE_CQE_SRQ : 0),
		.wq = qp->cfg.srq != NULL ? &qp->cfg.srq->wq : qp->cfg.rq,
	};

	droce_cq_push(qp->cfg.recv_cq, &cqe);
	droce_resp_completed(qp);
}

/*
 * A QP in ERR: its posted receive WQEs complete flushed. An SRQ's WQEs
 * stay for its other QPs: only the one this QP took completes, and the
 * application hears that no more will be taken.
 */
void
droce_resp_flush(struct droce_qp_eng *qp)
{
	struct droce_wq *rq = qp->cfg.rq;
	uint32_t prod;

	if (qp->cfg.srq != NULL) {
		if (qp->resp.has_rwqe)
			droce_resp_recv_cqe(qp, 0, qp->srq_wqe->wr_id,
					    IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0,
					    0, 0, false);
		qp->resp.has_rwqe = false;
		if (!qp->resp.last_wqe && qp->cfg.event != NULL)
			qp->cfg.event(qp->cfg.event_arg,
				      IBV_EVENT_QP_LAST_WQE_REACHED);
		qp->resp.last_wqe = true;
		return;
	}
	prod = __atomic_load_n(&rq->prod_tail, __ATOMIC_ACQUIRE);
	while (qp->resp.rq_cons != prod) {
		struct droce_recv_wqe *wqe = droce_wq_slot(rq, qp->resp.rq_cons);

		droce_resp_recv_cqe(qp, qp->resp.rq_cons, wqe->wr_id,
				    IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 0, 0,
				    false);
		qp->resp.rq_cons++;
	}
	qp->resp.has_rwqe = false;
}

void
droce_resp_reset(struct droce_qp_eng *qp)
{
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->resp.opcode = 0xff;
}

void
droce_resp_start(struct droce_qp_eng *qp)
{
	qp->resp.psn = qp->rq_psn;
	qp->resp.done_psn = droce_psn_add(qp->rq_psn, DROCE_PSN_MASK);
	qp->resp.opcode = 0xff;
}
