/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_IDLE_H
#define DROCE_IDLE_H

/*
 * What an engine lcore does between passes: go on at once, poll on, yield
 * its CPU or sleep, and for how long (lib/engine/droce_idle.c). Plain C
 * on clock cycles, so that the policy is tested apart from any clock.
 */

#include <stdbool.h>
#include <stdint.h>

enum droce_idle_act {
	DROCE_IDLE_GO,          /**< a pass at once: there is work */
	DROCE_IDLE_POLL,        /**< a pause, then a pass */
	DROCE_IDLE_YIELD,       /**< sched_yield(), then a pass */
	DROCE_IDLE_SLEEP,       /**< sleep the time given, then a pass */
};

/** The engine's settings ([engine] of the configuration). */
struct droce_idle_params {
	uint64_t cycles_us;     /**< clock cycles in a microsecond */
	unsigned int sleep_us;  /**< idle_sleep_us (0: busy-poll) */
	unsigned int yield_us;  /**< idle_yield_us */
	unsigned int spin_us;   /**< idle_spin_us */
};

/** What a pass found. */
struct droce_idle_pass {
	int work;               /**< > 0 work done, 0 none, < 0 another
				 *   thread was running the pass */
	uint64_t now;           /**< the clock after it */
	uint64_t app_at;        /**< an application thread of the lcore's
				 *   CPU last asked for a pass */
	uint64_t pass_since;    /**< the pass of another thread began */
	bool woke;              /**< it woke a thread reading an event fd */
	bool requests;          /**< it received requests from peers */
};

/** An engine lcore's idle spells: zero it to begin. */
struct droce_idle {
	unsigned int passes;    /**< passes without work in a row */
	unsigned int taken;     /**< ...that found a long pass of another's */
	unsigned int driven;    /**< wake-ups in a row that found the
				 *   application thread running passes */
	bool slept;             /**< the last decision was a sleep... */
	uint64_t slept_at;      /**< ...taken then */
	uint64_t since;         /**< the spell began */
	uint64_t worked_at;     /**< the last pass with work */
	uint64_t quiet_until;   /**< no polling on before this */
	uint64_t polled_at;     /**< the last poll on past IDLE_PASSES, or 0 */
	uint64_t gap_at;        /**< it was last kept off its CPU polling */
	unsigned int backoff_us; /**< ...and stopped polling on this long */
};

/**
 * After a pass @p pass of an lcore in state @p st: what it does next,
 * and with DROCE_IDLE_SLEEP, for how many microseconds (*sleep_us).
 */
enum droce_idle_act droce_idle_next(struct droce_idle *st,
				    const struct droce_idle_params *p,
				    const struct droce_idle_pass *pass,
				    unsigned int *sleep_us);

#endif /* DROCE_IDLE_H */
