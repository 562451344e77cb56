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

/** Retransmission and RNR timers. */
void droce_req_timer(struct droce_qp_eng *qp, uint64_t now);

/**
 * Go back to @p psn: send everything from there again (go-back-N). The
 * oldest PSN not acknowledged becomes the one sending resumes at (a READ
 * resumes after the responses it has).
 */
void droce_req_rewind(struct droce_qp_eng *qp, uint32_t psn);

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

#endif /* DROCE_REQ_H */
