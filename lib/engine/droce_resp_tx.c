/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * What the responder sends: READ responses and atomic ACKs in request
 * order (at DCQCN's rate, as requests go), ACKs coalesced to one a pass,
 * NAKs. The responder's receive side (droce_resp.c) calls here, never
 * the other way.
 */

#include <limits.h>

#include <rte_cycles.h>

#include "droce_engine_pvt.h"
#include "droce_dma.h"
#include "droce_resp.h"
#include "droce_sched.h"
#include "droce_tx.h"

void
droce_resp_send_ack(struct droce_qp_eng *qp, uint8_t syndrome, uint32_t psn)
{
	uint8_t opcode = qp->tr | DROCE_OP_ACKNOWLEDGE;
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	struct droce_aeth aeth = { .syndrome = syndrome, .msn = qp->resp.msn };
	struct rte_mbuf *m;
	uint8_t *bth;

	m = droce_pkt_alloc(qp, opcode, psn, false, false, 0, &bth);
	if (m == NULL)
		return;
	droce_aeth_encode(bth + op->offset[DROCE_EXT_AETH], &aeth);
	droce_pkt_send(qp, m);
}

/* The sending resource that comes first in PSN order. */
static struct droce_rd_res *
res_next(struct droce_qp_eng *qp)
{
	struct droce_rd_res *best = NULL;
	uint32_t i;

	for (i = 0; i < droce_resp_res_slots(qp); i++) {
		struct droce_rd_res *r = &qp->rd_res[i];

		if (r->busy && r->sending &&
		    (best == NULL ||
		     droce_psn_diff(r->next_psn, best->next_psn) < 0))
			best = r;
	}
	return best;
}

static bool
send_atomic_ack(struct droce_qp_eng *qp, struct droce_rd_res *res)
{
	uint8_t opcode = qp->tr | DROCE_OP_ATOMIC_ACKNOWLEDGE;
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	struct droce_aeth aeth = {
		.syndrome = DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID,
		.msn = qp->resp.msn,
	};
	struct droce_atomicacketh ack = { .orig = res->orig };
	struct rte_mbuf *m;
	uint8_t *bth;

	m = droce_pkt_alloc(qp, opcode, res->first_psn, false, false, 0, &bth);
	if (m == NULL)
		return false;
	droce_aeth_encode(bth + op->offset[DROCE_EXT_AETH], &aeth);
	droce_atomicacketh_encode(bth + op->offset[DROCE_EXT_ATOMICACKETH],
				  &ack);
	droce_pkt_send(qp, m);
	return true;
}

/* One READ response packet. @return false if it could not be sent. */
static bool
send_read_response(struct droce_qp_eng *qp, struct droce_rd_res *res)
{
	uint32_t len = RTE_MIN(qp->mtu, res->length - res->sent);
	bool first = res->sent == 0, last = res->sent + len >= res->length;
	uint8_t base = first && last ? DROCE_OP_READ_RESPONSE_ONLY :
		first ? DROCE_OP_READ_RESPONSE_FIRST :
		last ? DROCE_OP_READ_RESPONSE_LAST :
		DROCE_OP_READ_RESPONSE_MIDDLE;
	uint8_t opcode = qp->tr | base;
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	struct droce_mr_eng *mr;
	struct rte_mbuf *m;
	uint64_t addr = 0;
	uint8_t *bth;

	/* each packet's bytes under the key as it is now: deregistered,
	 * invalidated or bound elsewhere since the request, nothing more is
	 * read */
	if (len != 0 &&
	    !droce_rkey_check_pd(qp, res->pd, res->rkey, res->va + res->sent,
				 len, IBV_ACCESS_REMOTE_READ, &addr)) {
		res->sending = false;
		qp->resp.res_sending--;
		droce_resp_nak_fatal(qp, DROCE_NAK_REM_ACCESS_ERR);
		return false;
	}
	mr = len != 0 ? droce_zc_region(qp, res->rkey, true, addr, len) :
		NULL;
	m = mr != NULL ? droce_pkt_alloc_zc(qp, opcode, res->next_psn, false,
					    false, mr, addr, len, &bth) : NULL;
	if (m == NULL) {
		mr = NULL;
		m = droce_pkt_alloc(qp, opcode, res->next_psn, false, false,
				    len, &bth);
	}
	if (m == NULL)
		return false;
	if (op->flags & DROCE_OPF_AETH) {
		struct droce_aeth aeth = {
			.syndrome = DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID,
			.msn = qp->resp.msn,
		};

		droce_aeth_encode(bth + op->offset[DROCE_EXT_AETH], &aeth);
	}
	if (len != 0 && mr == NULL)
		rte_memcpy(bth + op->hdr_len, (const void *)(uintptr_t)addr,
			   len);
	droce_pkt_send(qp, m);
	if (unlikely(qp->cc.rate != 0))
		droce_cc_sent(qp, len, rte_pktmbuf_pkt_len(m));
	res->sent += len;
	res->next_psn = droce_psn_add(res->next_psn, 1);
	if (last) {
		res->sending = false;
		qp->resp.res_sending--;
	}
	return true;
}

/*
 * Send up to @p budget packets of READ responses and atomic ACKs, oldest
 * first, READ responses at DCQCN's rate if @p paced. False when sending
 * failed (no mbuf), the rate held a response back, or the QP failed.
 */
static bool
send_owed(struct droce_qp_eng *qp, unsigned int budget, bool paced)
{
	while (qp->resp.res_sending > 0 && budget > 0) {
		struct droce_rd_res *res = res_next(qp);
		bool ok;

		if (res == NULL)
			break;
		/* READ responses go at DCQCN's rate, as requests do */
		if (unlikely(qp->cc.rate != 0) && paced && !res->atomic &&
		    !droce_cc_may_send(qp)) {
			qp->stats.cc_held++;
			return false;
		}
		if (res->atomic) {
			ok = send_atomic_ack(qp, res);
			if (ok) {
				res->sending = false;
				qp->resp.res_sending--;
			}
		} else {
			ok = send_read_response(qp, res);
		}
		if (!ok || qp->state == IBV_QPS_ERR)
			return false;
		budget--;
	}
	return true;
}

/*
 * An ACK can wait a pass. An application thread that runs the engine's
 * pass as it polls its CQ (run_to_completion) sees nothing the pass
 * completes until the pass is over; when the pass has completed a
 * receive, the application may well answer it at once with a request
 * (a ping-pong, an RPC), whose post or next poll runs the next pass. The
 * ACK owed then waits for that pass and goes with the answer: the
 * completion is seen without the ACK's time, and the two frames go in
 * one burst. It waits only
 *
 * - when its pass is an application thread's and completed one receive
 *   of the QP (more make a stream, whose sender waits on its ACKs);
 * - when the application answered the last such completion by the next
 *   pass (a request was waiting then);
 * - and never twice in a row.
 *
 * A pass later it goes, whoever runs that pass: if the application goes
 * quiet instead, the engine lcore's next pass sends it, after its idle
 * sleep at most. A QP modified or destroyed sends it first
 * (droce_resp_send_waiting()), and the engine lcore runs a last pass as it
 * stops: a program that takes its last message and exits still
 * acknowledges it.
 */

/* Whether requests of @p qp's wait to be sent. */
static bool
requests_waiting(const struct droce_qp_eng *qp)
{
	const struct droce_wq *sq = qp->cfg.sq;

	return sq != NULL &&
		__atomic_load_n(&sq->prod_tail, __ATOMIC_RELAXED) !=
		qp->req.cons;
}

/* In the first pass of @p qp's after an application thread's that
 * completed a receive: did the application answer? */
static void
look_for_answer(struct droce_qp_eng *qp, uint32_t pass)
{
	if (qp->resp.look && qp->resp.done_in != pass) {
		qp->resp.answers = requests_waiting(qp);
		qp->resp.look = false;
	}
}

void
droce_resp_completed(struct droce_qp_eng *qp)
{
	const struct droce_lcore *lc = qp->shard->lc;

	if (!lc->app_pass)
		return;
	look_for_answer(qp, lc->pass_no);
	qp->resp.done_twice = qp->resp.done_in == lc->pass_no;
	qp->resp.done_in = lc->pass_no;
	qp->resp.look = true;
}

/* Whether the ACK owed waits for the next pass (above). */
static bool
ack_waits(struct droce_qp_eng *qp)
{
	uint32_t pass = qp->shard->lc->pass_no;

	if (qp->resp.done_in != pass || qp->resp.done_twice ||
	    !qp->resp.answers || qp->resp.ack_waited) {
		qp->resp.ack_waited = false;
		return false;
	}
	qp->resp.ack_waited = true;
	return true;
}

bool
droce_resp_idle(const struct droce_qp_eng *qp)
{
	return !qp->resp.ack_pending && qp->resp.res_sending == 0;
}

/* What the responder owes, up to the QP's budget; with @p may_wait, an
 * ACK may wait a pass (above). */
static void
resp_run(struct droce_qp_eng *qp, uint64_t now, bool may_wait)
{
	if (qp->state < IBV_QPS_RTR || qp->state == IBV_QPS_ERR)
		return;
	/* a UD or raw QP answers nothing, and has no path of its own to
	 * resolve: its all-zero one would have the device solicit "::" */
	if (qp->tr == DROCE_TR_UD || qp->tr == DROCE_TR_NONE)
		return;
	if (!droce_qp_path_ready(qp, now))
		return;
	look_for_answer(qp, qp->shard->lc->pass_no);
	if (!send_owed(qp, DROCE_QP_BUDGET, true))
		return;
	if (qp->resp.ack_pending && !(may_wait && ack_waits(qp))) {
		struct droce_rd_res *res = res_next(qp);

		/* an ACK may not overtake the responses before it */
		if (res != NULL &&
		    droce_psn_diff(res->next_psn, qp->resp.ack_psn) <= 0)
			return;
		droce_resp_send_ack(qp, DROCE_AETH_ACK |
				    DROCE_AETH_CREDIT_INVALID,
				    qp->resp.ack_psn);
		qp->resp.ack_pending = false;
	}
}

void
droce_resp_run(struct droce_qp_eng *qp, uint64_t now)
{
	resp_run(qp, now, true);
}

void
droce_resp_send_waiting(struct droce_qp_eng *qp)
{
	qp->resp.ack_waited = false;
	resp_run(qp, rte_get_tsc_cycles(), false);
}

/* The READ responses and atomic ACKs of requests accepted before go
 * first: the responder answers in PSN order, and an error QP sends
 * nothing more. */
void
droce_resp_nak_fatal(struct droce_qp_eng *qp, uint8_t code)
{
	if (droce_tr_reliable(qp->tr)) {
		send_owed(qp, UINT_MAX, false);
		qp->stats.naks_sent++;
		droce_resp_send_ack(qp, DROCE_AETH_NAK | code, qp->resp.psn);
	}
	droce_qp_error(qp);
	/* the requester learns it from the NAK; the application here from
	 * the event (a receive completion, if any, comes with the flush) */
	if (qp->cfg.event != NULL)
		qp->cfg.event(qp->cfg.event_arg, IBV_EVENT_QP_FATAL);
}
