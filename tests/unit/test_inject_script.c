/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* droce-inject's scripts (app/inject/inject_script.c): what each line
 * becomes, and the lines refused. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "droce_wire.h"
#include "inject.h"

#define MAX 16

/* @p text read as a script: the number of events, or -1 */
static int
read_text(const char *text, struct inj_event *ev)
{
	char path[] = "/tmp/droce-inject-script-XXXXXX";
	int fd = mkstemp(path), n;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	n = inj_script_read(path, ev, MAX);
	unlink(path);
	return n;
}

static void
test_match_fields(void **state)
{
	struct inj_event ev[MAX];

	(void)state;
	assert_int_equal(read_text("# a comment\n\n"
				   "drop dir=ab flow=2 rpsn=1000 iter=1\n"
				   "ce dir=ba dqpn=0x11 psn=5 count=all # on\n"
				   "corrupt op=RC_RDMA_WRITE_ONLY count=3\n",
				   ev), 3);
	assert_int_equal(ev[0].action, INJ_DROP);
	assert_int_equal(ev[0].line, 3);
	assert_int_equal(ev[0].dir, 0);
	assert_int_equal(ev[0].flow, 2);
	assert_int_equal(ev[0].rpsn, 1000);
	assert_int_equal(ev[0].iter, 1);
	assert_int_equal(ev[0].count, 1);
	assert_int_equal(ev[0].psn, INJ_ANY);
	assert_int_equal(ev[1].action, INJ_CE);
	assert_int_equal(ev[1].dir, 1);
	assert_int_equal(ev[1].dqpn, 0x11);
	assert_int_equal(ev[1].psn, 5);
	assert_int_equal(ev[1].count, 0);
	assert_int_equal(ev[2].opcode, 0x0a);
	assert_int_equal(ev[2].count, 3);
}

static void
test_reorder_defaults(void **state)
{
	struct inj_event ev[MAX];

	(void)state;
	assert_int_equal(read_text("reorder rpsn=7\n"
				   "reorder rpsn=8 k=3 us=500\n"
				   "delay rpsn=9 us=2000\n", ev), 3);
	assert_int_equal(ev[0].action, INJ_REORDER);
	assert_int_equal(ev[0].k, 1);
	assert_int_equal(ev[0].us, 10000);
	assert_int_equal(ev[1].k, 3);
	assert_int_equal(ev[1].us, 500);
	assert_int_equal(ev[2].action, INJ_DELAY);
	assert_int_equal(ev[2].us, 2000);
}

static void
test_rewrite_values(void **state)
{
	struct inj_event ev[MAX];

	(void)state;
	assert_int_equal(read_text(
		"rewrite field=psn value=+100\n"
		"rewrite field=msn value=-2\n"
		"rewrite field=opcode value=RC_RDMA_WRITE_LAST\n"
		"rewrite field=rkey value=0xdead\n"
		"rewrite field=va value=0xffffffffffffffff\n"
		"rewrite field=psn value=0xffffff\n", ev), 6);
	assert_int_equal(ev[0].action, INJ_REWRITE);
	assert_int_equal(ev[0].field, INJ_F_PSN);
	assert_int_equal(ev[0].relative, 1);
	assert_int_equal(ev[0].value, 100);
	assert_int_equal(ev[1].field, INJ_F_MSN);
	assert_int_equal(ev[1].relative, -1);
	assert_int_equal(ev[1].value, 2);
	assert_int_equal(ev[2].field, INJ_F_OPCODE);
	assert_int_equal(ev[2].value, 0x08);
	assert_int_equal(ev[3].field, INJ_F_RKEY);
	assert_int_equal(ev[3].relative, 0);
	assert_int_equal(ev[3].value, 0xdead);
	assert_true(ev[4].value == UINT64_MAX);
	assert_int_equal(ev[5].value, 0xffffff);
}

static void
test_refused(void **state)
{
	static const char *const bad[] = {
		"explode rpsn=1\n",                 /* no such action */
		"drop rpsn\n",                      /* no key=value */
		"drop dir=up\n",
		"drop rpsn=65536\n",                /* rpsn is 16 bits */
		"drop iter=0\n",
		"drop op=RC_NO_SUCH_THING\n",
		"delay rpsn=1\n",                   /* delay needs us */
		"reorder k=0\n",
		"rewrite rpsn=1\n",                 /* no field */
		"rewrite field=psn\n",              /* no value */
		"rewrite value=5 field=psn\n",      /* value before field */
		"rewrite field=colour value=1\n",
		"rewrite field=psn value=0x1000000\n",
		"rewrite field=se value=2\n",
		"rewrite field=rkey value=+1\n",    /* +N for psn, msn only */
		"rewrite field=psn value=abc\n",
		"rewrite field=psn value=1 field=msn value=1\n",
	};
	struct inj_event ev[MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("%s", bad[i]);
		assert_int_equal(read_text(bad[i], ev), -1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_fields),
		cmocka_unit_test(test_reorder_defaults),
		cmocka_unit_test(test_rewrite_values),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
