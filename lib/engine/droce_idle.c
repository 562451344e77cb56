/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * An idle engine lcore polls a few passes, then sleeps idle_sleep_us at a
 * time; with idle_yield_us, it first yields its CPU that long (to a
 * thread sharing the core, back at once if none). The yield keeps a
 * pipeline of two engines and their applications pinned to two cores
 * moving (a sleep costs some 20 us more than asked in a virtual
 * machine), but under Linux's EEVDF scheduler (6.6 on) each yield while
 * another thread wants the core pushes the engine's deadline a time
 * slice further: an engine that yields among busy threads is kept off
 * its core for hundreds of milliseconds, longer than a peer's
 * retransmissions last. So yielding is asked for, not done by default
 * (doc/guides/user.rst). A pass an application thread is running counts
 * as idle: that thread has the work in hand.
 *
 * Three things change the sleep:
 *
 * - An engine that has its CPU to itself polls on for idle_spin_us after
 *   its last work: the next frame of a stream is on its way, and a
 *   sleeping receiver costs its peer the window. As far as it can tell
 *   nothing else wants the CPU: no application thread of its CPU asked
 *   for a pass or was woken by one in the last APP_QUIET_US (that thread
 *   runs, or is about to), and the kernel has not kept it off the CPU
 *   for a time slice as it polled (a thread of another program wants
 *   it; then it does not poll on for 5 ms, twice that after each next
 *   such preemption within a second, up to 320 ms).
 * - One whose wake-ups keep finding the application thread running its
 *   passes (run_to_completion) was woken for nothing: each such wake-up
 *   only costs that thread two context switches, which in a virtual
 *   machine take longer than the sleep. After DRIVEN_WAKES of them in a
 *   row, its sleeps double with each next one, up to 2^DRIVEN_SHIFT_MAX
 *   times idle_sleep_us. A wake-up was for nothing if it found the
 *   thread in a pass, or if that thread ran one while the lcore slept
 *   and the lcore found no request of a peer's: only acknowledgements
 *   and responses, which end in the completions the thread polls for
 *   (or nothing). The time since the thread's last pass says little:
 *   the wake-up itself takes some 20 us here. A wake-up that finds a
 *   request ends it, as does one after the thread ran no pass: a thread
 *   that spins on its memory (ib_write_lat) waits for what only this
 *   lcore will place, and runs passes only as it posts and polls for
 *   its own request's completion.
 * - A pass another thread has held for long (a control call that runs
 *   seconds): each wake-up to find it so costs the thread sharing the CPU
 *   a context switch, so they come less and less often. A short one (the
 *   thread polls its CQ, a pass at a time) is no reason to sleep longer:
 *   that thread may spin on its memory next, waiting for what only this
 *   lcore will receive.
 */

#include "droce_idle.h"

/* Passes without work before an idle engine yields or sleeps. */
#define IDLE_PASSES 16
/* A pass another thread has held this long is a long one... */
#define TAKEN_LONG_US 1000
/* ...and the engine's sleeps grow to this (or idle_sleep_us) at most. */
#define SLEEP_MAX_US 1000u
/* An application thread that asked for a pass (or was woken by one)
 * this recently may want the CPU. */
#define APP_QUIET_US 1000
/* A polling engine kept off its CPU this long was preempted by a thread
 * that wants it (a short preemption is the kernel's own)... */
#define POLL_GAP_US 500
/* ...and it does not poll on for so long after, twice as long after each
 * next one within a second of the last (a daemon that ran once costs
 * little; busy threads of other programs soon stop the polling on). */
#define BACKOFF_MIN_US 5000
#define BACKOFF_MAX_US 320000
#define BACKOFF_RESET_US 1000000
/* Needless wake-ups in a row before the sleeps grow (above). */
#define DRIVEN_WAKES 3
#define DRIVEN_SHIFT_MAX 5u
/* (the sleep doubles at most this often, whatever the reasons) */
#define SHIFT_MAX 6u

static unsigned int
min_u(unsigned int a, unsigned int b)
{
	return a < b ? a : b;
}

/* Whether an idle engine may poll on rather than sleep (above). */
static bool
may_spin(struct droce_idle *st, const struct droce_idle_params *p,
	 const struct droce_idle_pass *pass)
{
	uint64_t now = pass->now, polled_at = st->polled_at;

	st->polled_at = 0;
	if (now - st->worked_at >= p->cycles_us * p->spin_us ||
	    now < st->quiet_until ||
	    now - pass->app_at < p->cycles_us * APP_QUIET_US)
		return false;
	if (polled_at != 0 && now - polled_at >= p->cycles_us * POLL_GAP_US) {
		if (st->backoff_us == 0 ||
		    now - st->gap_at > p->cycles_us * BACKOFF_RESET_US)
			st->backoff_us = BACKOFF_MIN_US;
		else if (st->backoff_us < BACKOFF_MAX_US)
			st->backoff_us *= 2;
		st->gap_at = now;
		st->quiet_until = now + p->cycles_us * st->backoff_us;
		return false;
	}
	st->polled_at = now;
	return true;
}

/* How long an idle engine sleeps now. */
static unsigned int
sleep_time(const struct droce_idle *st, unsigned int sleep_us)
{
	unsigned int driven = st->driven < DRIVEN_WAKES ? 0 :
		min_u(st->driven - DRIVEN_WAKES + 1, DRIVEN_SHIFT_MAX);
	unsigned int shift = min_u(st->taken + driven, SHIFT_MAX);
	uint64_t us = (uint64_t)sleep_us << shift;
	unsigned int cap = sleep_us > SLEEP_MAX_US ? sleep_us : SLEEP_MAX_US;

	return us < cap ? (unsigned int)us : cap;
}

enum droce_idle_act
droce_idle_next(struct droce_idle *st, const struct droce_idle_params *p,
		const struct droce_idle_pass *pass, unsigned int *sleep_us)
{
	uint64_t now = pass->now;

	if (p->sleep_us == 0)
		return DROCE_IDLE_GO;
	if (pass->woke)
		/* the thread it woke runs next */
		st->quiet_until = now + p->cycles_us * APP_QUIET_US;
	if (st->slept) {
		st->slept = false;
		st->driven = pass->work < 0 ||
			(!pass->requests && pass->app_at > st->slept_at) ?
			st->driven + 1 : 0;
	}
	if (pass->work > 0) {
		st->passes = 0;
		st->taken = 0;
		st->worked_at = now;
		st->polled_at = 0;
		return DROCE_IDLE_GO;
	}
	st->taken = pass->work < 0 &&
		now - pass->pass_since > p->cycles_us * TAKEN_LONG_US ?
		st->taken + 1 : 0;
	if (++st->passes == 1)
		st->since = now;
	if ((st->passes < IDLE_PASSES && st->driven == 0) ||
	    may_spin(st, p, pass))
		return DROCE_IDLE_POLL;
	if (now - st->since < p->cycles_us * p->yield_us)
		return DROCE_IDLE_YIELD;
	*sleep_us = sleep_time(st, p->sleep_us);
	st->slept = true;
	st->slept_at = now;
	return DROCE_IDLE_SLEEP;
}
