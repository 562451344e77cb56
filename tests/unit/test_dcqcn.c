/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * DCQCN's reaction point (lib/engine/droce_dcqcn.c) against sequences
 * worked out from the rules in droce_dcqcn.h: a port of 10 Gb/s, the
 * default parameters (g = 1/256, alpha and the rate-increase timer every
 * 55 us, 10 MiB byte counter, F = 5, 10 Mb/s floor) but the paper's
 * increases of 40 and 100 Mb/s (the defaults, a NIC's 5 and 50 Mb/s,
 * are checked apart). Rates in kbit/s, alpha of 65536; the rate's halving and
 * alpha's decrement are rounded up.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "droce_dcqcn.h"

#define GBPS10 10000000u
#define MIB10 (10u << 20)

static struct droce_dcqcn_params p;

static void
expect(const struct droce_dcqcn *st, uint64_t rate, uint64_t target)
{
	assert_int_equal(st->rate, rate);
	assert_int_equal(st->target, target);
}

/* A CNP halves the rate at alpha 1 and keeps alpha at 1 while CNPs keep
 * coming; the target is the rate before the cut. */
static void
test_decrease(void **state)
{
	struct droce_dcqcn st;

	(void)state;
	droce_dcqcn_init(&st, &p, 0);
	expect(&st, GBPS10, GBPS10);
	droce_dcqcn_cnp(&st, &p, 10);
	expect(&st, 5000000, GBPS10);
	/* alpha's period: (1 - g) * 1 + g */
	droce_dcqcn_tick(&st, &p, 55);
	assert_int_equal(st.alpha, 65536);
	droce_dcqcn_cnp(&st, &p, 60);
	expect(&st, 2500000, 5000000);
	droce_dcqcn_tick(&st, &p, 110);
	assert_int_equal(st.alpha, 65536);
	assert_int_equal(st.cnps, 2);
}

/* No CNP: alpha decays by g a period; the timer's first five events are
 * fast recovery (half way to the target), the sixth additive increase;
 * the next CNP cuts by the decayed alpha. */
static void
test_recovery(void **state)
{
	static const struct {
		uint64_t now, rate, target;
		uint32_t alpha;
	} seq[] = {
		{ 165, 3750000, 5000000, 65280 },    /* 65536 - 256 */
		{ 170, 4375000, 5000000, 65280 },
		{ 225, 4687500, 5000000, 65025 },    /* 65280 - 255 */
		{ 280, 4843750, 5000000, 64770 },    /* 65025 - 255 */
		{ 335, 4921875, 5000000, 64516 },    /* fifth: T was 4 */
		{ 390, 4980938, 5040000, 64263 },    /* T 5: additive */
	};
	struct droce_dcqcn st;
	unsigned int i;

	(void)state;
	droce_dcqcn_init(&st, &p, 0);
	droce_dcqcn_cnp(&st, &p, 10);
	droce_dcqcn_tick(&st, &p, 55);
	droce_dcqcn_cnp(&st, &p, 60);
	droce_dcqcn_tick(&st, &p, 110);
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		droce_dcqcn_tick(&st, &p, seq[i].now);
		expect(&st, seq[i].rate, seq[i].target);
		assert_int_equal(st.alpha, seq[i].alpha);
	}
	/* 4980938 * 64263 / 131072 = 2442093 off */
	droce_dcqcn_cnp(&st, &p, 391);
	expect(&st, 2538845, 4980938);
	assert_int_equal(st.timer_events, 0);
}

/* The byte counter's events: fast recovery, then additive; with both
 * stages past F, hyper increase by i * 100 Mb/s. */
static void
test_byte_counter_and_hyper(void **state)
{
	static const struct {
		uint64_t now, rate, target;
	} seq[] = {
		{ 57, 5030469, 5080000 },    /* T 0, B 6: additive */
		{ 112, 5075235, 5120000 },
		{ 167, 5117618, 5160000 },
		{ 222, 5158809, 5200000 },
		{ 277, 5199405, 5240000 },   /* T 4 */
		{ 332, 5269703, 5340000 },   /* T 5, B 6: hyper, i = 1 */
		{ 387, 5404852, 5540000 },   /* T 6: i = 2 */
	};
	struct droce_dcqcn st;
	unsigned int i;

	(void)state;
	droce_dcqcn_init(&st, &p, 0);
	droce_dcqcn_cnp(&st, &p, 1);
	droce_dcqcn_cnp(&st, &p, 2);
	expect(&st, 2500000, 5000000);
	/* four events and a byte short of the fifth */
	droce_dcqcn_sent(&st, &p, 5ull * MIB10 - 1);
	expect(&st, 4843750, 5000000);
	assert_int_equal(st.byte_events, 4);
	droce_dcqcn_sent(&st, &p, 1);
	expect(&st, 4921875, 5000000);
	droce_dcqcn_sent(&st, &p, MIB10);
	expect(&st, 4980938, 5040000);
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		droce_dcqcn_tick(&st, &p, seq[i].now);
		expect(&st, seq[i].rate, seq[i].target);
	}
}

/* Cuts stop at the floor; increases stop at the port's rate; a long idle
 * time costs no more than one event. */
static void
test_bounds(void **state)
{
	struct droce_dcqcn st;
	unsigned int i;

	(void)state;
	droce_dcqcn_init(&st, &p, 0);
	for (i = 0; i < 12; i++)
		droce_dcqcn_cnp(&st, &p, i);
	assert_int_equal(st.rate, 10000);
	droce_dcqcn_init(&st, &p, 0);
	droce_dcqcn_cnp(&st, &p, 1);
	droce_dcqcn_sent(&st, &p, 100ull * MIB10);
	expect(&st, GBPS10, GBPS10);
	/* an hour later: alpha long at 0, the rate at the port's */
	droce_dcqcn_tick(&st, &p, 3600ull * 1000000);
	expect(&st, GBPS10, GBPS10);
	assert_int_equal(st.alpha, 0);
	assert_true(st.increase_at > 3600ull * 1000000);
}

/*
 * A tick ten periods late (the engine lcore held up, the QP sending
 * nothing meanwhile): one rate-increase period passed for the QP, not
 * ten at once.
 */
static void
test_late_tick(void **state)
{
	struct droce_dcqcn st;

	(void)state;
	droce_dcqcn_init(&st, &p, 0);
	droce_dcqcn_cnp(&st, &p, 0);
	expect(&st, GBPS10 / 2, GBPS10);
	droce_dcqcn_tick(&st, &p, 10 * 55);
	/* one step of fast recovery: half way to the target */
	expect(&st, GBPS10 / 4 * 3, GBPS10);
	assert_int_equal(st.timer_events, 1);
	assert_int_equal(st.increase_at, 11 * 55);
	/* and on time from there */
	droce_dcqcn_tick(&st, &p, 11 * 55);
	assert_int_equal(st.timer_events, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decrease),
		cmocka_unit_test(test_recovery),
		cmocka_unit_test(test_byte_counter_and_hyper),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_late_tick),
	};

	droce_dcqcn_defaults(&p, GBPS10);
	if (p.rate_ai != 5000 || p.rate_hai != 50000) {
		fprintf(stderr, "test_dcqcn: default increases not 5 and "
			"50 Mb/s\n");
		return 1;
	}
	p.rate_ai = 40000;
	p.rate_hai = 100000;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
