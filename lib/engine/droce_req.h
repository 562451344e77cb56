/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_REQ_H
#define DROCE_REQ_H

#include "droce_engine_pvt.h"

/*
 * The requester: send WQEs into request packets (lib/engine/droce_req.c).
 */

/**
 * Take note of the WQEs posted since the last look, and fetch them into
 * this core's cache (the application wrote them on another): early in a
 * pass, so that they are here when droce_req_run() comes. Only in RTS
 * and SQD: in the other states WQEs wait.
 */
void droce_req_fetch(struct droce_qp_eng *qp);

/** Send what the send queue and the window allow. */
void droce_req_run(struct droce_qp_eng *qp, uint64_t now);

/** The QP reaches RTS: sending starts at its SQ PSN. */
void droce_req_start(struct droce_qp_eng *qp);

/**
 * Start over at WQE @p idx, with nothing in flight (the WQEs before it
 * are all completed or flushed).
 */
void droce_req_restart(struct droce_qp_eng *qp, uint32_t idx);

/**
 * Go back to @p psn: send everything from there again (go-back-N).
 * @return the PSN sending resumes at (a READ resumes after the responses
 * it has): the oldest PSN not acknowledged from now on.
 */
uint32_t droce_req_rewind(struct droce_qp_eng *qp, uint32_t psn);

/**
 * The responder has every packet before @p psn, some of which were sent
 * before a rewind and are due to go again: move the requester forward
 * to @p psn, or to the first READ or atomic on the way, whose response
 * is still wanted.
 */
void droce_req_seek(struct droce_qp_eng *qp, uint32_t psn);

/**
 * The ACK of the atomic WQE the requester is about to send again came
 * (its first send was answered after a rewind): take the WQE as sent, so
 * that the ACK completes it instead of being dropped and the atomic
 * resent. @return true if it was taken.
 */
bool droce_req_take_answered(struct droce_qp_eng *qp, uint32_t psn);

/**
 * A response to @p psn came, after the READ or atomic WQE @p idx, which
 * is still missing its own: its request or responses were lost. Send its
 * request again (a READ from its first missing response) without moving
 * the requester, unless it was asked again already and @p psn may answer
 * something sent before that.
 */
void droce_req_ask_again(struct droce_qp_eng *qp, uint32_t idx,
			 uint32_t psn);

/** A READ or atomic WQE completed: one fewer in flight. */
static inline void
droce_req_rd_atomic_done(struct droce_qp_eng *qp)
{
	qp->req.rd_atomic--;
}

/*
 * @return true if some request is waiting for an acknowledgement: one
 * that got its PSNs and has not completed. Not only those sent since the
 * last timeout (oldest to cons): a timeout rewinds cons, and if the port
 * takes no frame meanwhile (a memif port whose peer died refuses them
 * all) nothing is sent again, yet the requests still wait; the timer
 * must run on to retry_cnt, or the QP would wait for ever.
 */
static inline bool
droce_req_outstanding(const struct droce_qp_eng *qp)
{
	return (int32_t)(qp->req.started - qp->comp.oldest) > 0 ||
		qp->comp.oldest != qp->req.cons || qp->req.offset != 0;
}

#endif /* DROCE_REQ_H */
