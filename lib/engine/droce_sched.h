/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_SCHED_H
#define DROCE_SCHED_H

#include "droce_engine_pvt.h"

/*
 * The QPs a pass runs (lib/engine/droce_sched.c).
 */

/** Put @p qp among the QPs each pass runs (if it is not already). */
void droce_qp_activate(struct droce_qp_eng *qp);

/** Take @p qp out of dev->active and off dev->wheel (it is going). */
void droce_qp_unschedule(struct droce_qp_eng *qp);

/** Take the QPs their posters kicked into dev->active. */
void droce_qp_kicks(struct droce_shard *sh);

/** Take the sleeping QPs whose timers are due by @p now into
 * dev->active (dev->wheel). */
void droce_qp_timers(struct droce_shard *sh, uint64_t now);

/**
 * After a pass ran @p qp: if it has had nothing to do for
 * DROCE_QP_SLEEP_US, and will have nothing until a frame, a state change,
 * a post or its timer comes, take it out of dev->active (onto dev->wheel
 * if it has a timer).
 * @return true if it was taken out (dev->active[qp's index] is now
 * another QP).
 */
bool droce_qp_try_sleep(struct droce_qp_eng *qp, uint64_t now);

/**
 * Requester and completer have nothing to do until a WQE is posted, a
 * frame comes or *wake_at (a TSC time; 0: no timer) passes: everything
 * posted has been sent, and what is outstanding waits for an answer
 * (droce_req.c).
 */
bool droce_req_waiting(const struct droce_qp_eng *qp, uint64_t *wake_at);

/** The responder has nothing to send until a frame comes
 * (droce_resp.c). */
bool droce_resp_idle(const struct droce_qp_eng *qp);

#endif /* DROCE_SCHED_H */
