/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The completer: the responses to our requests. An ACK acknowledges every
 * request up to its PSN; a READ response or atomic ACK does the same for
 * the requests before it and carries the data of its own. A NAK rewinds
 * the requester (PSN sequence error), makes it wait (RNR) or fails the
 * WQE (access, invalid request, operational errors). A READ or atomic
 * left without its response when a later one is answered is asked again
 * on its own; the READs after it keep their responses. Progress restarts
 * the retransmission timer and the retry counts.
 *
 * WQEs are retired here, in posting order, whatever finished them (an
 * ACK, the requester for what nothing answers, a local operation): their
 * completions written to the send CQ where one is due, their slots freed
 * by the poll that reads it. A QP in error completes the rest flushed.
 */

#include <rte_cycles.h>

#include "droce_engine_pvt.h"
#include "droce_comp.h"
#include "droce_cq_eng.h"
#include "droce_dma.h"
#include "droce_req.h"
#include "droce_sched.h"

/*
 * The congestion window, the packets the requester may have in flight:
 * these three alone change it (and droce_comp_start()).
 */

/* @p acked packets were acknowledged: one more per window. */
static void
cwnd_ack(struct droce_qp_eng *qp, uint32_t acked)
{
	if (qp->comp.cwnd >= DROCE_MAX_INFLIGHT)
		return;
	qp->comp.cwnd_acked += acked;
	while (qp->comp.cwnd_acked >= qp->comp.cwnd) {
		qp->comp.cwnd_acked -= qp->comp.cwnd;
		qp->comp.cwnd++;
	}
}

/* A packet was lost (a PSN sequence NAK): half as many. */
static void
cwnd_loss(struct droce_qp_eng *qp)
{
	qp->comp.cwnd = RTE_MAX(qp->comp.cwnd / 2,
				(uint32_t)DROCE_MIN_INFLIGHT);
}

/* Nothing was answered for the QP's timeout: start again from few. */
static void
cwnd_timeout(struct droce_qp_eng *qp)
{
	qp->comp.cwnd = DROCE_MIN_INFLIGHT;
}

void
droce_comp_start(struct droce_qp_eng *qp)
{
	qp->comp.una_psn = qp->sq_psn;
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.rnr_left = qp->rnr_retry;
	qp->comp.cwnd = DROCE_MAX_INFLIGHT;
}

/*
 * The time a timer starts from: the clock now, not the pass's start the
 * caller has. A thread preempted between the two (an application thread
 * running the pass, an engine sharing its core) would otherwise start
 * the timer as long before the event as it was held, and it would fire
 * that much early (the lab saw a 67 ms timeout fire 65.4 ms after the
 * ACK it ran from).
 */
static inline uint64_t
timer_base(void)
{
	return rte_get_tsc_cycles();
}

/* Something was acknowledged: reset the retry counts and the timer. */
static void
progress(struct droce_qp_eng *qp, uint32_t psn)
{
	uint32_t next = droce_psn_add(psn, 1);
	int32_t acked = droce_psn_diff(next, qp->comp.una_psn);

	if (acked > 0) {
		qp->comp.una_psn = next;
		cwnd_ack(qp, (uint32_t)acked);
	}
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.rnr_left = qp->rnr_retry;
	qp->comp.rexmit_at = qp->timeout_cycles != 0 ?
		timer_base() + qp->timeout_cycles : 0;
}

/*
 * The responder has every request up to @p upto: mark done every SEND or
 * WRITE WQE whose last PSN is at or before it. A READ or atomic before it
 * that is still missing its response lost it (or its request): ask again.
 * @p psn is the PSN of the response that says so.
 * @return the index of the first WQE not done that is not before @p upto
 * (qp->req.cons if none), or of one being sent again.
 */
static uint32_t
ack_upto(struct droce_qp_eng *qp, uint32_t upto, uint32_t psn)
{
	struct droce_wq *sq = qp->cfg.sq;
	uint32_t idx;

	for (idx = qp->comp.oldest; idx != qp->req.cons; idx++) {
		struct droce_swqe *st = droce_swqe(qp, idx);

		if (st->state == DROCE_WQE_DONE)
			continue;
		if (st->state != DROCE_WQE_SENT ||
		    droce_psn_diff(st->last_psn, upto) > 0)
			break;
		if (droce_wqe_rd_atomic(droce_wq_slot(sq, idx)))
			droce_req_ask_again(qp, idx, psn);
		else
			st->state = DROCE_WQE_DONE;
	}
	return idx;
}

/*
 * The READ or atomic WQE a response to @p psn answers, acknowledging
 * what came before it: its index goes to *idx.
 */
static struct droce_send_wqe *
rd_atomic_wqe(struct droce_qp_eng *qp, uint32_t psn, uint32_t *idx)
{
	uint32_t i = ack_upto(qp, droce_psn_add(psn, DROCE_PSN_MASK), psn);
	const struct droce_swqe *st;
	struct droce_send_wqe *wqe;

	if (i == qp->req.cons)
		return NULL;
	st = droce_swqe(qp, i);
	wqe = droce_wq_slot(qp->cfg.sq, i);
	if (!droce_wqe_rd_atomic(wqe) || st->state != DROCE_WQE_SENT ||
	    droce_psn_diff(psn, st->first_psn) < 0 ||
	    droce_psn_diff(psn, st->last_psn) > 0)
		return NULL;
	*idx = i;
	return wqe;
}

/*
 * Is @p len bytes right for a READ response of position @p flags when
 * @p left bytes of the READ have not arrived yet? The IBTA's rules: a
 * FIRST or MIDDLE response carries exactly the path MTU and leaves some
 * for the LAST, which carries 1 to the MTU and ends the READ exactly; an
 * ONLY carries all that is asked (0 for an empty READ) up to the MTU.
 * (What is left is what a READ asked again asks for, so the same rules
 * hold for its responses.)
 */
static bool
read_response_len_ok(const struct droce_qp_eng *qp, uint32_t flags,
		     uint32_t len, uint32_t left)
{
	if ((flags & DROCE_OPF_ONLY) == DROCE_OPF_ONLY)
		return len == left && len <= qp->mtu;
	if (flags & DROCE_OPF_LAST)
		return len == left && len >= 1 && len <= qp->mtu;
	return len == qp->mtu && len < left;
}

/* What a READ response is to the READ it falls within. */
enum read_fit {
	READ_PLACE,     /**< the next of its bytes: placed */
	READ_GAP,       /**< past the next: those between are asked again */
	READ_OLD,       /**< before the next: taken already */
	READ_STRAY,     /**< a MIDDLE or LAST where the READ (or what is
			 *   asked again of it) starts: nothing asked */
	READ_BAD_LEN,   /**< the wrong length for its place: a bad
			 *   response, the READ fails */
};

/*
 * The place of a READ response at @p psn of @p len bytes and position
 * @p flags in the READ of @p wqe (@p st: how far its responses are),
 * judged by the completer's checks in their order. Nothing changes.
 */
static inline enum read_fit
read_fit(const struct droce_qp_eng *qp, const struct droce_send_wqe *wqe,
	 const struct droce_swqe *st, uint32_t flags, uint32_t psn,
	 uint32_t len)
{
	uint32_t expect = droce_psn_add(st->first_psn,
					st->done_bytes / qp->mtu);

	if (psn != expect)
		return droce_psn_diff(psn, expect) > 0 ? READ_GAP : READ_OLD;
	/* the READ's first byte comes in a FIRST or ONLY response (so does
	 * the first of the rest, if it was asked again) */
	if (st->done_bytes == 0 && !(flags & DROCE_OPF_FIRST))
		return READ_STRAY;
	if (!read_response_len_ok(qp, flags, len,
				  wqe->length - st->done_bytes))
		return READ_BAD_LEN;
	return READ_PLACE;
}

static void
read_response(struct droce_qp_eng *qp, const struct rte_mbuf *m,
	      uint32_t psn, const struct droce_wire_meta *meta)
{
	struct droce_send_wqe *wqe;
	struct droce_swqe *st;
	uint32_t idx, len = meta->payload_len;

	wqe = rd_atomic_wqe(qp, psn, &idx);
	if (wqe == NULL || !(droce_wr_flags(wqe->opcode) & DROCE_WR_READ))
		return;
	st = droce_swqe(qp, idx);
	switch (read_fit(qp, wqe, st, meta->op->flags, psn, len)) {
	case READ_PLACE:
		break;
	case READ_GAP:
		droce_req_ask_again(qp, idx, psn);
		return;
	case READ_OLD:
		return;
	case READ_STRAY:
		qp->stats.rx_dropped++;
		return;
	case READ_BAD_LEN:
		droce_comp_fail(qp, IBV_WC_BAD_RESP_ERR);
		return;
	}
	/* (checked as it is copied: nothing more happens if wrong) */
	if (unlikely(meta->icrc_unchecked)) {
		if (!droce_rx_copy_checked(qp->shard, m, meta,
				droce_sge_span(droce_send_wqe_sge(wqe),
					       wqe->num_sge, st->done_bytes,
					       len)))
			return;
	} else {
		droce_sge_write(droce_send_wqe_sge(wqe), wqe->num_sge,
				st->done_bytes, meta->payload, len);
	}
	st->done_bytes += len;
	progress(qp, psn);
	if (meta->op->flags & DROCE_OPF_LAST)
		st->state = DROCE_WQE_DONE;
}

static void
atomic_ack(struct droce_qp_eng *qp, const uint8_t *bth, uint32_t psn,
	   const struct droce_wire_meta *meta)
{
	struct droce_send_wqe *wqe;
	struct droce_atomicacketh ack;
	uint32_t idx;

	wqe = rd_atomic_wqe(qp, psn, &idx);
	if (wqe == NULL || !(droce_wr_flags(wqe->opcode) & DROCE_WR_ATOMIC))
		return;
	droce_atomicacketh_decode(bth + meta->op->offset[DROCE_EXT_ATOMICACKETH],
				  &ack);
	droce_sge_write(droce_send_wqe_sge(wqe), wqe->num_sge, 0, &ack.orig,
			sizeof(ack.orig));
	droce_swqe(qp, idx)->state = DROCE_WQE_DONE;
	progress(qp, psn);
}

static void
nak(struct droce_qp_eng *qp, uint8_t syndrome, uint32_t psn)
{
	uint8_t value = syndrome & DROCE_AETH_VALUE_MASK;
	uint32_t before = droce_psn_add(psn, DROCE_PSN_MASK);

	/* older than what is acknowledged: duplicated or overtaken */
	if (droce_psn_diff(psn, qp->comp.una_psn) < 0)
		return;
	/* a NAK for psn acknowledges everything before it */
	ack_upto(qp, before, psn);
	if (droce_psn_diff(psn, qp->comp.una_psn) > 0)
		progress(qp, before);
	if ((syndrome & DROCE_AETH_TYPE_MASK) == DROCE_AETH_RNR_NAK) {
		qp->stats.rnr_naks_rcvd++;
		if (qp->rnr_retry != 7) {
			if (qp->comp.rnr_left == 0) {
				droce_comp_retire(qp);
				droce_comp_fail(qp, IBV_WC_RNR_RETRY_EXC_ERR);
				return;
			}
			qp->comp.rnr_left--;
		}
		qp->comp.una_psn = droce_req_rewind(qp, psn);
		qp->comp.rnr_wait = true;
		qp->comp.rnr_at = timer_base() +
			droce_rnr_cycles(value, droce_eng.hz);
		qp->comp.rexmit_at = 0;
		return;
	}
	qp->stats.naks_rcvd++;
	droce_comp_retire(qp);
	switch (value) {
	case DROCE_NAK_PSN_SEQ_ERR:
		if (qp->comp.retry_left == 0) {
			droce_comp_fail(qp, IBV_WC_RETRY_EXC_ERR);
			return;
		}
		qp->comp.retry_left--;
		cwnd_loss(qp);
		qp->comp.una_psn = droce_req_rewind(qp, psn);
		qp->comp.rexmit_at = qp->timeout_cycles != 0 ?
			timer_base() + qp->timeout_cycles : 0;
		break;
	case DROCE_NAK_REM_ACCESS_ERR:
		droce_comp_fail(qp, IBV_WC_REM_ACCESS_ERR);
		break;
	case DROCE_NAK_REM_OP_ERR:
		droce_comp_fail(qp, IBV_WC_REM_OP_ERR);
		break;
	default:
		droce_comp_fail(qp, IBV_WC_REM_INV_REQ_ERR);
		break;
	}
}

/*
 * Is @p syndrome one the IBTA defines: an ACK, an RNR NAK, or a NAK with
 * one of its five codes? The reserved type and codes mean nothing a
 * requester could act on: such a response is dropped, not taken for an
 * error that would end the QP.
 */
static bool
aeth_defined(uint8_t syndrome)
{
	switch (syndrome & DROCE_AETH_TYPE_MASK) {
	case DROCE_AETH_ACK:
	case DROCE_AETH_RNR_NAK:
		return true;
	case DROCE_AETH_NAK:
		return (syndrome & DROCE_AETH_VALUE_MASK) <=
			DROCE_NAK_INVALID_RD_REQ;
	default:
		return false;
	}
}

/* What a response is to the requester, before what it answers. */
enum response_take {
	RESPONSE_TAKE,
	RESPONSE_IGNORE,        /**< the QP not sending (or not one that
				 *   is answered), a PSN never sent: stale
				 *   or forged */
	RESPONSE_BAD,           /**< an AETH the IBTA does not define */
};

/*
 * The first stages of droce_comp_rx(): is the response one the QP takes
 * at all? Its AETH, if it has one, goes to *@p aeth. Nothing changes.
 */
static inline enum response_take
response_take(const struct droce_qp_eng *qp, const uint8_t *bth,
	      const struct droce_wire_meta *meta, uint32_t psn,
	      struct droce_aeth *aeth)
{
	/* (an XRC target sends nothing to be answered) */
	if ((qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD) ||
	    !droce_tr_reliable(qp->tr) || qp->cfg.type == IBV_QPT_XRC_RECV)
		return RESPONSE_IGNORE;
	if (droce_psn_diff(psn, qp->req.sent_psn) >= 0)
		return RESPONSE_IGNORE;
	if (meta->op->flags & DROCE_OPF_AETH) {
		droce_aeth_decode(bth + meta->op->offset[DROCE_EXT_AETH], aeth);
		if (!aeth_defined(aeth->syndrome))
			return RESPONSE_BAD;
	}
	return RESPONSE_TAKE;
}

/*
 * Where a READ response MIDDLE or LAST whose ICRC is unchecked goes, if
 * it goes straight there and nothing else happens on its account: it
 * must pass every stage of droce_comp_rx() down to read_response()'s
 * copy with nothing to undo. An RC QP's response taken
 * (response_take()), to a PSN before the one the requester sends next
 * (no seek), within the oldest unfinished WQE, a READ with some of its
 * response placed already (rd_atomic_wqe() acknowledges nothing), and
 * the next of its bytes (read_fit()). Only such a packet is placed as
 * its ICRC is checked; its bytes land in the READ's own buffer,
 * undefined until the READ completes.
 */
static void *
read_in_place(const struct droce_qp_eng *qp, const uint8_t *bth,
	      uint32_t psn, const struct droce_wire_meta *meta)
{
	struct droce_send_wqe *wqe;
	const struct droce_swqe *st;
	struct droce_aeth aeth;

	if (qp->tr != DROCE_TR_RC ||
	    response_take(qp, bth, meta, psn, &aeth) != RESPONSE_TAKE ||
	    droce_psn_diff(psn, qp->req.psn) >= 0 ||
	    qp->comp.oldest == qp->req.cons)
		return NULL;
	st = droce_swqe(qp, qp->comp.oldest);
	wqe = droce_wq_slot(qp->cfg.sq, qp->comp.oldest);
	if (!(droce_wr_flags(wqe->opcode) & DROCE_WR_READ) ||
	    st->state != DROCE_WQE_SENT || st->done_bytes == 0 ||
	    droce_psn_diff(psn, st->last_psn) > 0 ||
	    read_fit(qp, wqe, st, meta->op->flags, psn,
		     meta->payload_len) != READ_PLACE)
		return NULL;
	return droce_sge_span(droce_send_wqe_sge(wqe), wqe->num_sge,
			      st->done_bytes, meta->payload_len);
}

/*
 * A response (ACK, NAK, READ response, atomic ACK), in stages:
 *
 *   stage      dropped, or what it does
 *   ---------  ---------------------------------------------------------
 *   ICRC       wrong: dropped (checked first, unless the packet is
 *              placed as it is checked: read_in_place())
 *   take       response_take(): the QP not sending, a PSN never sent:
 *              ignored; an AETH the IBTA does not define: dropped
 *   rewind     a PSN at or past the one the requester sends next
 *              answers packets sent before a rewind: the requester
 *              moves on to it (droce_req_seek()), up to a READ or atomic
 *              still due, and all before that is acknowledged
 *   answer     a READ response: read_response() (read_fit()); an atomic
 *              ACK: atomic_ack(); an ACK: ack_upto(); a NAK: nak()
 *   complete   droce_comp_retire(): the WQEs done complete, in order
 */
void
droce_comp_rx(struct droce_qp_eng *qp, struct rte_mbuf *m,
	      struct droce_wire_meta *meta)
{
	const uint8_t *bth = rte_pktmbuf_mtod_offset(m, const uint8_t *,
						     meta->bth_off);
	uint32_t psn = droce_bth_psn(bth);
	uint32_t flags = meta->op->flags;
	struct droce_aeth aeth = { 0 };

	/* an unchecked ICRC is checked first, unless the packet is placed
	 * as it is checked */
	if (unlikely(meta->icrc_unchecked) &&
	    read_in_place(qp, bth, psn, meta) == NULL &&
	    !droce_rx_icrc_late(qp->shard, m, meta))
		return;
	droce_qp_activate(qp);

	switch (response_take(qp, bth, meta, psn, &aeth)) {
	case RESPONSE_TAKE:
		break;
	case RESPONSE_IGNORE:
		return;
	case RESPONSE_BAD:
		qp->stats.rx_dropped++;
		return;
	}
	if (droce_psn_diff(psn, qp->req.psn) >= 0) {
		/* it answers packets sent before a rewind and not since */
		if (!(flags & (DROCE_OPF_READ | DROCE_OPF_ATOMIC)))
			droce_req_seek(qp,
				(aeth.syndrome & DROCE_AETH_TYPE_MASK) ==
				DROCE_AETH_ACK ? droce_psn_add(psn, 1) : psn);
		else if (flags & DROCE_OPF_ATOMIC)
			droce_req_take_answered(qp, psn);
		if (droce_psn_diff(psn, qp->req.psn) >= 0 &&
		    (flags & (DROCE_OPF_READ | DROCE_OPF_ATOMIC)))
			return;
	}

	if (droce_psn_diff(psn, qp->req.psn) >= 0) {
		/* an ACK past a READ or atomic whose response is still due
		 * (the seek stops there), or a NAK of the PSN the requester
		 * now resumes at: all before that PSN is acknowledged. A
		 * requester rewound far behind it would otherwise count it
		 * all in flight, its window shut, and its timer resend the
		 * same packets to retry_cnt. */
		uint32_t before = droce_psn_add(qp->req.psn, DROCE_PSN_MASK);
		bool rnr = (aeth.syndrome & DROCE_AETH_TYPE_MASK) ==
			DROCE_AETH_RNR_NAK;
		bool moved = droce_psn_diff(before, qp->comp.una_psn) >= 0;

		if (!moved && !rnr)
			return;
		if (moved) {
			ack_upto(qp, before, psn);
			progress(qp, before);
		}
		/* an RNR NAK of that PSN still holds the requester for its
		 * timer: the responder has no receive for it yet, and a
		 * resend at once (after a PSN-sequence NAK of the same PSN,
		 * which soft-RoCE sends with it) draws the next RNR NAK */
		if (rnr)
			nak(qp, aeth.syndrome, psn);
	} else if (flags & DROCE_OPF_READ) {
		read_response(qp, m, psn, meta);
	} else if (flags & DROCE_OPF_ATOMIC) {
		atomic_ack(qp, bth, psn, meta);
	} else if ((aeth.syndrome & DROCE_AETH_TYPE_MASK) == DROCE_AETH_ACK) {
		if (droce_psn_diff(psn, qp->comp.una_psn) >= 0) {
			ack_upto(qp, psn, psn);
			progress(qp, psn);
		}
	} else {
		nak(qp, aeth.syndrome, psn);
	}
	if (qp->state != IBV_QPS_ERR)
		droce_comp_retire(qp);
	if (qp->comp.oldest == qp->req.cons && qp->req.offset == 0)
		qp->comp.rexmit_at = 0;
}

static void
send_cqe(struct droce_qp_eng *qp, uint32_t idx, enum ibv_wc_status status)
{
	const struct droce_send_wqe *wqe = droce_wq_slot(qp->cfg.sq, idx);
	const struct droce_wr_info *w = &droce_wr_table[wqe->opcode];
	struct droce_cqe cqe = {
		.wr_id = wqe->wr_id,
		.qp_num = qp->cfg.qp_num,
		.wqe_idx = idx,
		.byte_len = w->cqe_len == DROCE_WR_LEN_MSG ? wqe->length :
			w->cqe_len == DROCE_WR_LEN_WORD ? 8 : 0,
		.status = (uint8_t)status,
		.opcode = w->wc_opcode,
		.flags = DROCE_CQE_SEND,
		.wq = qp->cfg.sq,
	};

	droce_cq_push(qp->cfg.send_cq, &cqe);
}

void
droce_comp_send_cqe(struct droce_qp_eng *qp, uint32_t idx,
		    enum ibv_wc_status status)
{
	const struct droce_send_wqe *wqe = droce_wq_slot(qp->cfg.sq, idx);

	if (unlikely(wqe->flags & (DROCE_WQE_TM_RNDV | DROCE_WQE_TM_FIN)))
		/* the engine's own: the tag's completion, if any */
		droce_tm_wqe_done(qp, idx, status);
	else
		send_cqe(qp, idx, status);
}

/* Complete, in order, the WQEs that are done: CQEs where due. */
void
droce_comp_retire(struct droce_qp_eng *qp)
{
	struct droce_wq *sq = qp->cfg.sq;
	uint32_t una;

	while (qp->comp.oldest != qp->req.cons) {
		struct droce_swqe *st = droce_swqe(qp, qp->comp.oldest);
		const struct droce_send_wqe *wqe;

		if (st->state != DROCE_WQE_DONE)
			break;
		if (st->status != IBV_WC_SUCCESS) {
			/* the QP fails; this WQE completes with its own error
			 * and the flush takes the rest */
			droce_qp_error(qp);
			return;
		}
		wqe = droce_wq_slot(sq, qp->comp.oldest);
		/* a READ or atomic holds its place at the responder until
		 * every one before it is answered too */
		if (droce_wqe_rd_atomic(wqe))
			droce_req_rd_atomic_done(qp);
		if (unlikely(wqe->flags & (DROCE_WQE_TM_RNDV |
					   DROCE_WQE_TM_FIN)))
			droce_tm_wqe_done(qp, qp->comp.oldest, IBV_WC_SUCCESS);
		else if ((wqe->flags & DROCE_WQE_SIGNALED) ||
			 qp->cfg.sq_sig_all)
			droce_comp_send_cqe(qp, qp->comp.oldest, IBV_WC_SUCCESS);
		qp->comp.oldest++;
	}
	/* everything before the oldest WQE not completed is answered (WQEs
	 * answered out of order after a lost READ response come here) */
	if (qp->comp.oldest != qp->req.cons || qp->req.offset != 0)
		una = droce_swqe(qp, qp->comp.oldest)->first_psn;
	else
		una = qp->req.psn;
	if (droce_psn_diff(una, qp->comp.una_psn) > 0)
		qp->comp.una_psn = una;
}

/*
 * Give up on the oldest WQE not done with @p status; the QP goes to ERR.
 * The WQEs before it that are done (answered by the response that fails
 * this one, say) complete first as they are: the error is not charged to
 * a WQE that was already answered. If one of those failed on its own, it
 * keeps its error and @p status is charged to nothing.
 */
void
droce_comp_fail(struct droce_qp_eng *qp, enum ibv_wc_status status)
{
	struct droce_swqe *st;

	droce_comp_retire(qp);
	if (qp->state == IBV_QPS_ERR)
		return;
	st = droce_swqe(qp, qp->comp.oldest);
	st->state = DROCE_WQE_DONE;
	st->status = (uint8_t)status;
	droce_qp_error(qp);
}

/*
 * A QP in ERR: every send WQE completes, signalled or not, the oldest
 * with its own error if it has one, the others flushed. Only the oldest:
 * a WQE behind it that failed on its own (a local protection error found
 * while the oldest was still waiting for its answer) was never going to
 * run once the oldest failed, so it is flushed like the rest.
 */
void
droce_comp_flush(struct droce_qp_eng *qp)
{
	uint32_t prod = __atomic_load_n(&qp->cfg.sq->prod_tail,
					__ATOMIC_ACQUIRE);
	bool first = true;

	while (qp->comp.oldest != prod) {
		const struct droce_swqe *w = droce_swqe(qp, qp->comp.oldest);
		/* only WQEs the engine already took can carry an error */
		enum ibv_wc_status st =
			first && (int32_t)(qp->comp.oldest - qp->req.seen) < 0 &&
			w->state == DROCE_WQE_DONE &&
			w->status != IBV_WC_SUCCESS ? w->status :
			IBV_WC_WR_FLUSH_ERR;

		droce_comp_send_cqe(qp, qp->comp.oldest, st);
		qp->comp.oldest++;
		first = false;
	}
	droce_req_restart(qp, qp->comp.oldest);
}

/*
 * Where a timeout resends from: the oldest PSN not acknowledged, or the
 * oldest READ response or atomic ACK missing if that is older (later
 * READs may have been answered meanwhile).
 */
static uint32_t
resend_point(const struct droce_qp_eng *qp)
{
	uint32_t idx;

	for (idx = qp->comp.oldest; idx != qp->req.cons; idx++) {
		const struct droce_swqe *st = droce_swqe(qp, idx);
		const struct droce_send_wqe *w;
		uint32_t psn;

		if (st->state == DROCE_WQE_DONE)
			continue;
		w = droce_wq_slot(qp->cfg.sq, idx);
		if (!droce_wqe_rd_atomic(w))
			break;
		psn = droce_psn_add(st->first_psn, st->done_bytes / qp->mtu);
		if (droce_psn_diff(psn, qp->comp.una_psn) < 0)
			return psn;
		break;
	}
	return qp->comp.una_psn;
}

void
droce_comp_timer(struct droce_qp_eng *qp, uint64_t now)
{
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return;
	if (qp->comp.rnr_wait) {
		if (now >= qp->comp.rnr_at)
			qp->comp.rnr_wait = false;
		return;
	}
	if (qp->comp.rexmit_at == 0 || now < qp->comp.rexmit_at)
		return;
	if (!droce_req_outstanding(qp)) {
		qp->comp.rexmit_at = 0;
		return;
	}
	qp->stats.timeouts++;
	if (qp->comp.retry_left == 0) {
		droce_comp_fail(qp, IBV_WC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry_left--;
	cwnd_timeout(qp);
	qp->comp.una_psn = droce_req_rewind(qp, resend_point(qp));
	qp->comp.rexmit_at = timer_base() + qp->timeout_cycles;
}
