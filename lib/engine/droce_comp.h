/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_COMP_H
#define DROCE_COMP_H

#include "droce_engine_pvt.h"

/*
 * The completer: responses to our requests, send WQEs retired in order,
 * their completions (lib/engine/droce_comp.c).
 */

/**
 * One response packet (ACK, NAK, READ response, atomic ACK). If its ICRC
 * is still unchecked (meta->icrc_unchecked), it is checked before the
 * packet does anything, or as its payload is copied to its place when
 * the packet is the READ response the QP expects next.
 */
void droce_comp_rx(struct droce_qp_eng *qp, struct rte_mbuf *m,
		   struct droce_wire_meta *meta);

/** Retire, in order, the send WQEs that are done: CQEs where due. */
void droce_comp_retire(struct droce_qp_eng *qp);

/** Fail the oldest send WQE with @p status; the QP goes to ERR. */
void droce_comp_fail(struct droce_qp_eng *qp, enum ibv_wc_status status);

/** Complete send WQE @p idx with @p status (a CQE if one is due). */
void droce_comp_send_cqe(struct droce_qp_eng *qp, uint32_t idx,
			 enum ibv_wc_status status);

/** Complete every send WQE of @p qp, in ERR: flushed. */
void droce_comp_flush(struct droce_qp_eng *qp);

/**
 * The QP reaches RTS: nothing is acknowledged before its SQ PSN, every
 * retry is left, and the window is open.
 */
void droce_comp_start(struct droce_qp_eng *qp);

/** Retransmission and RNR timers. */
void droce_comp_timer(struct droce_qp_eng *qp, uint64_t now);

/** The QP failed: its timers stop. */
static inline void
droce_comp_timers_stop(struct droce_qp_eng *qp)
{
	qp->comp.rexmit_at = 0;
	qp->comp.rnr_wait = false;
}

/**
 * The requester sent something: the retransmission timer starts unless
 * it runs already (or the QP has none), from the clock now rather than
 * the pass's start (droce_comp.c, timer_base()).
 */
static inline void
droce_comp_timer_start(struct droce_qp_eng *qp)
{
	if (qp->comp.rexmit_at == 0 && qp->timeout_cycles != 0)
		qp->comp.rexmit_at = rte_get_tsc_cycles() + qp->timeout_cycles;
}

#endif /* DROCE_COMP_H */
