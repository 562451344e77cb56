/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* 24-bit PSN arithmetic, above all across the wrap from 0xffffff to 0. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "droce_wire.h"

static void
test_add_wraps(void **state)
{
	(void)state;
	assert_int_equal(droce_psn_add(0, 1), 1);
	assert_int_equal(droce_psn_add(0xffffff, 1), 0);
	assert_int_equal(droce_psn_add(0xfffffe, 5), 3);
	assert_int_equal(droce_psn_add(0x800000, 0x800000), 0);
	assert_int_equal(droce_psn_add(5, DROCE_PSN_MASK), 4); /* i.e. -1 */
}

static void
test_diff_across_wrap(void **state)
{
	(void)state;
	assert_int_equal(droce_psn_diff(0, 0xffffff), 1);
	assert_int_equal(droce_psn_diff(0xffffff, 0), -1);
	assert_int_equal(droce_psn_diff(2, 0xfffffe), 4);
	assert_int_equal(droce_psn_diff(0xfffffe, 2), -4);
	assert_int_equal(droce_psn_diff(100, 100), 0);
	/* the window is half the space each way */
	assert_int_equal(droce_psn_diff(0x7fffff, 0), 0x7fffff);
	assert_int_equal(droce_psn_diff(0x800000, 0), -0x800000);
	/* upper bits of the inputs do not matter */
	assert_int_equal(droce_psn_diff(0xff000001, 0x00ffffff), 2);
}

static void
test_before(void **state)
{
	(void)state;
	assert_true(droce_psn_before(0xffffff, 0));
	assert_false(droce_psn_before(0, 0xffffff));
	assert_true(droce_psn_before(10, 11));
	assert_false(droce_psn_before(11, 11));
	assert_true(droce_psn_before(0xfffff0, 0x10));
}

static void
test_in_window(void **state)
{
	uint32_t i;

	(void)state;
	assert_true(droce_psn_in_window(0xfffffe, 0xfffffe, 4));
	assert_true(droce_psn_in_window(0xffffff, 0xfffffe, 4));
	assert_true(droce_psn_in_window(0, 0xfffffe, 4));
	assert_true(droce_psn_in_window(1, 0xfffffe, 4));
	assert_false(droce_psn_in_window(2, 0xfffffe, 4));
	assert_false(droce_psn_in_window(0xfffffd, 0xfffffe, 4));
	assert_false(droce_psn_in_window(7, 7, 0));
	for (i = 0; i < 1000; i++)
		assert_true(droce_psn_in_window(droce_psn_add(0xffff00, i),
						0xffff00, 1000));
}

static void
test_diff_agrees_with_add(void **state)
{
	static const uint32_t bases[] = { 0, 1, 0x7fffff, 0x800000,
					  0xfffff0, 0xffffff };
	size_t b;
	int32_t d;

	(void)state;
	for (b = 0; b < RTE_DIM(bases); b++)
		for (d = -3000; d <= 3000; d += 7)
			assert_int_equal(droce_psn_diff(
				droce_psn_add(bases[b], (uint32_t)d), bases[b]), d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_wraps),
		cmocka_unit_test(test_diff_across_wrap),
		cmocka_unit_test(test_before),
		cmocka_unit_test(test_in_window),
		cmocka_unit_test(test_diff_agrees_with_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
