/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The engine lcore's idle policy (lib/engine/droce_idle.c), on a clock of
 * one cycle a microsecond and the default settings (idle_sleep_us 20,
 * idle_yield_us 0, idle_spin_us 200): when it polls on, yields and
 * sleeps, and how long, as its comments say.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "droce_idle.h"

/* long ago: no application thread asked for a pass lately */
#define NEVER 0
#define T0 1000000000ull

static struct droce_idle_params p;
static struct droce_idle st;
static uint64_t now;

static int
setup(void **state)
{
	(void)state;
	p.cycles_us = 1;
	p.sleep_us = 20;
	p.yield_us = 0;
	p.spin_us = 200;
	memset(&st, 0, sizeof(st));
	now = T0;
	return 0;
}

/* One pass that did @p work, @p dt microseconds after the last. */
static enum droce_idle_act
pass_req(int work, uint64_t dt, uint64_t app_at, bool woke, bool requests,
	 unsigned int *us)
{
	struct droce_idle_pass pass = {
		.work = work, .app_at = app_at, .pass_since = now,
		.woke = woke, .requests = requests,
	};

	now += dt;
	pass.now = now;
	*us = 0;
	return droce_idle_next(&st, &p, &pass, us);
}

/* ...that received no request of a peer's */
static enum droce_idle_act
pass_at(int work, uint64_t dt, uint64_t app_at, bool woke,
	unsigned int *us)
{
	return pass_req(work, dt, app_at, woke, false, us);
}

static enum droce_idle_act
pass(int work, uint64_t app_at, unsigned int *us)
{
	return pass_at(work, 1, app_at, false, us);
}

/* Idle passes until it sleeps; @return how many it polled before. */
static unsigned int
polls_to_sleep(uint64_t app_at, unsigned int *us)
{
	unsigned int n = 0;

	while (pass(0, app_at, us) == DROCE_IDLE_POLL)
		n++;
	return n;
}

/* Busy-poll (idle_sleep_us 0): every pass goes on at once. */
static void
test_busy_poll(void **state)
{
	unsigned int us, i;

	(void)state;
	p.sleep_us = 0;
	for (i = 0; i < 1000; i++)
		assert_int_equal(pass(0, now, &us), DROCE_IDLE_GO);
}

/* Work goes on at once; with an application thread of the CPU busy in
 * droce, 15 idle polls, then sleeps of idle_sleep_us. */
static void
test_sleeps_beside_application(void **state)
{
	unsigned int us;

	(void)state;
	assert_int_equal(pass(1, now, &us), DROCE_IDLE_GO);
	assert_int_equal(polls_to_sleep(now, &us), 15);
	assert_int_equal(us, 20);
	/* each wake-up that finds nothing sleeps again (the application
	 * thread in droce 100 us ago) */
	assert_int_equal(pass_at(0, 20, now - 80, false, &us),
			 DROCE_IDLE_SLEEP);
	assert_int_equal(us, 20);
	assert_int_equal(pass_at(0, 20, now - 80, false, &us),
			 DROCE_IDLE_SLEEP);
	assert_int_equal(us, 20);
}

/* Alone on its CPU, it polls on for idle_spin_us after its last work,
 * then sleeps; new work starts the spell again. */
static void
test_polls_on_alone(void **state)
{
	unsigned int us, n;

	(void)state;
	assert_int_equal(pass(1, NEVER, &us), DROCE_IDLE_GO);
	n = polls_to_sleep(NEVER, &us);
	assert_int_equal(n, 199);
	assert_int_equal(us, 20);
	assert_int_equal(pass(1, NEVER, &us), DROCE_IDLE_GO);
	assert_int_equal(polls_to_sleep(NEVER, &us), 199);
	/* not with idle_spin_us 0 */
	p.spin_us = 0;
	assert_int_equal(pass(1, NEVER, &us), DROCE_IDLE_GO);
	assert_int_equal(polls_to_sleep(NEVER, &us), 15);
}

/* An application thread that asked for a pass within the last
 * millisecond stops the polling on; one quiet for longer does not. */
static void
test_application_stops_polling_on(void **state)
{
	unsigned int us;
	uint64_t asked;

	(void)state;
	assert_int_equal(pass(1, NEVER, &us), DROCE_IDLE_GO);
	asked = now;
	assert_int_equal(polls_to_sleep(asked, &us), 15);
	now = asked + 1000;
	assert_int_equal(pass(1, asked, &us), DROCE_IDLE_GO);
	assert_int_equal(polls_to_sleep(asked, &us), 199);
}

/* A pass that woke a thread reading an event fd: no polling on for a
 * millisecond, that thread runs next. */
static void
test_woken_thread_runs_next(void **state)
{
	unsigned int us;

	(void)state;
	assert_int_equal(pass_at(1, 1, NEVER, true, &us), DROCE_IDLE_GO);
	assert_int_equal(polls_to_sleep(NEVER, &us), 15);
	now += 1000;
	assert_int_equal(pass(1, NEVER, &us), DROCE_IDLE_GO);
	assert_int_equal(polls_to_sleep(NEVER, &us), 199);
}

/* Poll on after work until kept off the CPU for @p gap us. @return
 * whether it slept then. */
static bool
preempted(uint64_t gap)
{
	unsigned int us, i;

	assert_int_equal(pass(1, NEVER, &us), DROCE_IDLE_GO);
	for (i = 0; i < 20; i++)
		assert_int_equal(pass(0, NEVER, &us), DROCE_IDLE_POLL);
	return pass_at(0, gap, NEVER, false, &us) == DROCE_IDLE_SLEEP;
}

/* Whether it polls on after work now (it does for the whole 2000 us). */
static bool
polls_on(void)
{
	unsigned int us;

	assert_int_equal(pass(1, NEVER, &us), DROCE_IDLE_GO);
	return polls_to_sleep(NEVER, &us) == 1999;
}

/* Kept off its CPU for 500 us as it polled on (a thread of another
 * program wants it): it sleeps instead, and does not poll on for 5 ms;
 * after each next such time within a second, twice as long, up to
 * 320 ms; a second later it is 5 ms again. A shorter preemption changes
 * nothing. */
static void
test_preempted_backs_off(void **state)
{
	static const unsigned int backoff_ms[] = { 5, 10, 20, 40, 80, 160,
						   320, 320 };
	unsigned int i;

	(void)state;
	p.spin_us = 2000;
	assert_false(preempted(150));
	for (i = 0; i < sizeof(backoff_ms) / sizeof(backoff_ms[0]); i++) {
		assert_true(preempted(500));
		assert_false(polls_on());
		now += backoff_ms[i] * 1000 - 1000;
		assert_false(polls_on());
		now += 1000;
		assert_true(polls_on());
	}
	now += 1000000;
	assert_true(preempted(500));
	now += 5000;
	assert_true(polls_on());
}

/* Wake-ups that find the application thread running passes, or after it
 * ran one during the sleep: from the third in a row the sleep doubles,
 * up to 32 times; one that finds work nobody did, one after a sleep in
 * which it ran no pass, and one that finds a peer's request bring it
 * back to idle_sleep_us. */
static void
test_driven_sleeps_longer(void **state)
{
	static const unsigned int want[] = { 20, 20, 40, 80, 160, 320, 640,
					     640 };
	unsigned int us, i;

	(void)state;
	assert_int_equal(pass(1, now, &us), DROCE_IDLE_GO);
	polls_to_sleep(now, &us);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		/* alternately: its pass taken, or just done */
		assert_int_equal(pass_at(i % 2 ? -1 : 0, us, now + us - 2,
					 false, &us), DROCE_IDLE_SLEEP);
		assert_int_equal(us, want[i]);
	}
	/* the next wake-up finds frames nobody took: back to 20 */
	assert_int_equal(pass_at(1, us, NEVER, false, &us), DROCE_IDLE_GO);
	assert_int_equal(polls_to_sleep(now, &us), 15);
	assert_int_equal(us, 20);
	/* a wake-up to an application that ran no pass as it slept (it
	 * spins on its memory), though one just before it slept */
	for (i = 0; i < 4; i++)
		pass_at(-1, us, now, false, &us);
	assert_int_equal(us, 80);
	assert_int_equal(pass_at(0, us, now, false, &us), DROCE_IDLE_SLEEP);
	assert_int_equal(us, 20);
	/* the application ran passes as it slept, and the lcore found only
	 * what they would have taken (acknowledgements): longer sleeps, as
	 * long as it is so; a peer's request: back to 20 */
	for (i = 0; i < 4; i++) {
		assert_int_equal(pass_at(1, us, now + 1, false, &us),
				 DROCE_IDLE_GO);
		polls_to_sleep(now, &us);
	}
	assert_int_equal(us, 80);
	assert_int_equal(pass_req(1, us, now + us - 1, false, true, &us),
			 DROCE_IDLE_GO);
	polls_to_sleep(now, &us);
	assert_int_equal(us, 20);
}

/* Another thread's pass held for over a millisecond: the sleeps double,
 * up to a millisecond (or idle_sleep_us, if longer). */
static void
test_long_pass_sleeps_longer(void **state)
{
	static const unsigned int want[] = { 40, 80, 160, 320, 640, 1000,
					     1000 };
	struct droce_idle_pass ps = { .work = -1, .app_at = NEVER };
	unsigned int us, i;

	(void)state;
	ps.pass_since = now;
	now += 2000;
	for (i = 0; i < 16; i++) {
		ps.now = ++now;
		droce_idle_next(&st, &p, &ps, &us);
	}
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ps.now = ++now;
		assert_int_equal(droce_idle_next(&st, &p, &ps, &us),
				 DROCE_IDLE_SLEEP);
		assert_true(us >= want[i] / 2);
	}
	assert_int_equal(us, 1000);
	p.sleep_us = 5000;
	ps.now = ++now;
	droce_idle_next(&st, &p, &ps, &us);
	assert_int_equal(us, 5000);
}

/* idle_yield_us: past the first 15 polls it yields that long, then
 * sleeps. */
static void
test_yields_then_sleeps(void **state)
{
	unsigned int us, i;

	(void)state;
	p.yield_us = 50;
	assert_int_equal(pass(1, now, &us), DROCE_IDLE_GO);
	for (i = 0; i < 15; i++)
		assert_int_equal(pass(0, now, &us), DROCE_IDLE_POLL);
	assert_int_equal(pass_at(0, 1, now + 1, false, &us),
			 DROCE_IDLE_YIELD);
	assert_int_equal(pass_at(0, 30, now + 30, false, &us),
			 DROCE_IDLE_YIELD);
	assert_int_equal(pass_at(0, 10, now + 10, false, &us),
			 DROCE_IDLE_SLEEP);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_busy_poll, setup),
		cmocka_unit_test_setup(test_sleeps_beside_application, setup),
		cmocka_unit_test_setup(test_polls_on_alone, setup),
		cmocka_unit_test_setup(test_application_stops_polling_on,
				       setup),
		cmocka_unit_test_setup(test_woken_thread_runs_next, setup),
		cmocka_unit_test_setup(test_preempted_backs_off, setup),
		cmocka_unit_test_setup(test_driven_sleeps_longer, setup),
		cmocka_unit_test_setup(test_long_pass_sleeps_longer, setup),
		cmocka_unit_test_setup(test_yields_then_sleeps, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
