/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_CQ_ENG_H
#define DROCE_CQ_ENG_H

#include "droce_engine_pvt.h"

/*
 * Completion queues (lib/engine/droce_cq.c).
 */

/** Push a completion to @p ring (wakes an armed CQ). */
void droce_cq_push(struct droce_cq_ring *ring, const struct droce_cqe *cqe);

#endif /* DROCE_CQ_ENG_H */
