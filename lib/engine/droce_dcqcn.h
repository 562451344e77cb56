/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_DCQCN_H
#define DROCE_DCQCN_H

/**
 * @file
 * The reaction point of DCQCN (Zhu et al., "Congestion Control for
 * Large-Scale RDMA Deployments", SIGCOMM 2015): the rate a sending QP
 * may use, cut when a CNP arrives and raised again in stages while none
 * does. Pure arithmetic on a QP's state, no clock of its own: the caller
 * says what happened and when (in microseconds).
 *
 * - A CNP: the target rate takes the current one, the current rate is
 *   cut to rate * (1 - alpha / 2) (not below rate_min), and both
 *   increase stages start over.
 * - Every alpha_period_us: alpha = (1 - g) * alpha + g if a CNP came in
 *   the period, else (1 - g) * alpha, with g = 2^-g_shift.
 * - An increase event: the rate-increase timer (every
 *   increase_period_us since the last CNP) or the byte counter (every
 *   byte_counter bytes sent since the last CNP). With T and B the timer's
 *   and the byte counter's events since the last CNP, before this one:
 *   fast recovery while both are below F (fast_recovery); additive
 *   increase (the target up by rate_ai) while one is; hyper increase
 *   (the target up by i * rate_hai, i = min(T, B) - F + 1) once both
 *   are. Each then sets the rate half way to the target. The target
 *   never exceeds rate_max.
 *
 * The rate's halving and alpha's decrement are rounded up, so that the
 * rate reaches its target and alpha reaches 0.
 *
 * Rates are in kbit/s; alpha is a fraction of DROCE_DCQCN_ALPHA_ONE.
 */

#include <stdbool.h>
#include <stdint.h>

/** alpha = 1.0 */
#define DROCE_DCQCN_ALPHA_ONE (1u << 16)

/** The parameters of a device's QPs (the defaults: a NIC's). */
struct droce_dcqcn_params {
	uint64_t rate_max;          /**< kbit/s: the port's speed */
	uint64_t rate_min;          /**< kbit/s: never cut below */
	uint64_t rate_ai;           /**< kbit/s: additive increase */
	uint64_t rate_hai;          /**< kbit/s: hyper increase */
	uint32_t g_shift;           /**< g = 2^-g_shift (8: 1/256) */
	uint32_t alpha_init;        /**< alpha at start, of ALPHA_ONE */
	uint32_t alpha_period_us;   /**< alpha's update period */
	uint32_t increase_period_us; /**< the rate-increase timer */
	uint64_t byte_counter;      /**< bytes to a byte-counter event */
	uint32_t fast_recovery;     /**< F: the stages of fast recovery */
};

/** A sending QP's state. */
struct droce_dcqcn {
	uint64_t rate;              /**< kbit/s: the current rate */
	uint64_t target;            /**< kbit/s: the target rate */
	uint32_t alpha;             /**< of DROCE_DCQCN_ALPHA_ONE */
	uint32_t timer_events;      /**< T: timer events since the CNP */
	uint32_t byte_events;       /**< B: byte-counter events since it */
	uint64_t bytes;             /**< sent since the last byte event */
	uint64_t alpha_at;          /**< us: the next alpha update */
	uint64_t increase_at;       /**< us: the next timer event */
	bool cnp_in_period;         /**< a CNP since the last alpha update */
	uint64_t cnps;              /**< CNPs taken */
};

/** Fill @p p with the defaults (for a port of @p rate_max kbit/s). */
void droce_dcqcn_defaults(struct droce_dcqcn_params *p, uint64_t rate_max);

/** Start @p st at full rate at time @p now. */
void droce_dcqcn_init(struct droce_dcqcn *st,
		      const struct droce_dcqcn_params *p, uint64_t now);

/** A CNP arrived for the QP at @p now. */
void droce_dcqcn_cnp(struct droce_dcqcn *st,
		     const struct droce_dcqcn_params *p, uint64_t now);

/** The QP sent @p bytes more: byte-counter events fall due. */
void droce_dcqcn_sent(struct droce_dcqcn *st,
		      const struct droce_dcqcn_params *p, uint64_t bytes);

/**
 * Time is @p now: alpha updates and timer events that fell due. A tick
 * four or more rate-increase periods late counts as one period: the QP
 * could not send meanwhile (its lcore was held up), and a burst of
 * increases at once would send it well past what its path takes.
 */
void droce_dcqcn_tick(struct droce_dcqcn *st,
		      const struct droce_dcqcn_params *p, uint64_t now);

#endif /* DROCE_DCQCN_H */
