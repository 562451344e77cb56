/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The configuration file (lib/engine/droce_config.c, doc/guides/user.rst):
 * each key of [engine] and [device NAME] where it lands, its defaults,
 * its bounds and the values refused. No EAL: the parser is plain C over
 * DPDK's rte_cfgfile.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "droce_engine_pvt.h"

/* the engine's log type, which the parser's messages go to */
int droce_engine_logtype;

static char path[256];
static struct droce_cfg cfg;

/* @p text as the file, parsed into cfg. @return the parser's result. */
static int
parse(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	return droce_config_parse_file(path, &cfg);
}

#define DEV "[device d0]\nport = net_null0\nipv4 = 10.0.0.1/24\n"

/* A device section and nothing else: every other key at its default. */
static void
test_defaults(void **state)
{
	const struct droce_dev_cfg *d = &cfg.dev[0];

	(void)state;
	assert_int_equal(parse(DEV), 0);
	assert_string_equal(cfg.eal_args,
			    "--no-huge -m 512 --no-pci --no-shconf");
	assert_int_equal(cfg.ncores, 1);
	assert_int_equal(cfg.cores[0], -1);
	assert_int_equal(cfg.idle_sleep_us, 20);
	assert_int_equal(cfg.idle_yield_us, 0);
	assert_int_equal(cfg.idle_spin_us, 200);
	assert_int_equal(cfg.run_to_completion, DROCE_RTC_AUTO);
	assert_int_equal(cfg.link_wait_s, 0);
	assert_string_equal(cfg.pcap, "");
	assert_int_equal(cfg.mbufs, 16384);
	assert_int_equal(cfg.mbuf_cache, 256);
	assert_true(cfg.ecn);
	assert_int_equal(cfg.cnp_interval_us, 50);
	assert_int_equal(cfg.zero_copy_min, 4096);
	assert_int_equal(cfg.ndevs, 1);
	assert_string_equal(d->name, "d0");
	assert_string_equal(d->port, "net_null0");
	assert_string_equal(d->fault, "");
	assert_false(d->has_mac);
	assert_int_equal(d->ipv4, htonl(0x0a000001));
	assert_int_equal(d->ipv4_prefix, 24);
	assert_false(d->has_ipv6);
	assert_int_equal(d->mtu, 1500);
	assert_int_equal(d->dscp, 0);
	assert_false(d->no_rss);
	assert_int_equal(d->nlcores, 0);
	assert_int_equal(d->cc.rate_max, 0);
	assert_int_equal(d->cc.g_shift, 8);
}

/* Every [engine] key, where it lands. */
static void
test_engine_keys(void **state)
{
	(void)state;
	assert_int_equal(parse("[eal]\nargs = --in-memory\n"
			       "[engine]\ncores = 2, 3\n"
			       "idle_sleep_us = 0\nidle_yield_us = 7\n"
			       "idle_spin_us = 0\n"
			       "link_wait_s = 3600\nmbufs = 1024\n"
			       "mbuf_cache = 0\nzero_copy_min = 65535\n"
			       "cnp_interval_us = 1000000\n"
			       "run_to_completion = never\necn = off\n"
			       "zero_copy = auto\npcap = /tmp/x.pcap\n" DEV),
			 0);
	assert_string_equal(cfg.eal_args, "--in-memory");
	assert_int_equal(cfg.ncores, 2);
	assert_int_equal(cfg.cores[0], 2);
	assert_int_equal(cfg.cores[1], 3);
	assert_int_equal(cfg.idle_sleep_us, 0);
	assert_int_equal(cfg.idle_yield_us, 7);
	assert_int_equal(cfg.idle_spin_us, 0);
	assert_int_equal(cfg.link_wait_s, 3600);
	assert_int_equal(cfg.mbufs, 1024);
	assert_int_equal(cfg.mbuf_cache, 0);
	assert_int_equal(cfg.zero_copy_min, 65535);
	assert_int_equal(cfg.cnp_interval_us, 1000000);
	assert_int_equal(cfg.run_to_completion, DROCE_RTC_NEVER);
	assert_false(cfg.ecn);
	assert_string_equal(cfg.pcap, "/tmp/x.pcap");

	assert_int_equal(parse("[engine]\nrun_to_completion = always\n"
			       "ecn = on\nzero_copy = off\n"
			       "zero_copy_min = 100\n" DEV), 0);
	assert_int_equal(cfg.run_to_completion, DROCE_RTC_ALWAYS);
	assert_true(cfg.ecn);
	/* off wins over a threshold, wherever it is written */
	assert_int_equal(cfg.zero_copy_min, 0);
	assert_int_equal(parse("[engine]\nrun_to_completion = auto\n" DEV), 0);
	assert_int_equal(cfg.run_to_completion, DROCE_RTC_AUTO);
}

/* Each numeric [engine] key: its bounds, and what is not a number. */
static void
test_engine_bounds(void **state)
{
	static const struct {
		const char *key, *lo, *hi, *below, *above;
	} keys[] = {
		{ "idle_sleep_us", "0", "1000000", NULL, "1000001" },
		{ "idle_yield_us", "0", "1000000", NULL, "1000001" },
		{ "idle_spin_us", "0", "1000000", NULL, "1000001" },
		{ "link_wait_s", "0", "3600", NULL, "3601" },
		{ "mbufs", "1024", "4194304", "1023", "4194305" },
		{ "mbuf_cache", "0", "512", NULL, "513" },
		{ "zero_copy_min", "1", "65535", "0", "65536" },
		{ "cnp_interval_us", "0", "1000000", NULL, "1000001" },
	};
	char text[512];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *vals[] = { keys[i].lo, keys[i].hi, keys[i].below,
				       keys[i].above, "x", "12x", "-1" };
		unsigned int k;

		for (k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
			if (vals[k] == NULL)
				continue;
			snprintf(text, sizeof(text), "[engine]\n%s = %s\n" DEV,
				 keys[i].key, vals[k]);
			print_message("%s = '%s'\n", keys[i].key, vals[k]);
			assert_int_equal(parse(text), k < 2 ? 0 : -EINVAL);
		}
	}
}

/* The named [engine] values: anything else refused. */
static void
test_engine_names(void **state)
{
	static const char *const bad[] = {
		"[engine]\nrun_to_completion = yes\n",
		"[engine]\necn = 1\n",
		"[engine]\nzero_copy = on\n",
		"[engine]\ncores = x\n",
		"[engine]\ncores = 1024\n",
		"[engine]\ncores = 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n",
	};
	char text[512];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s" DEV, bad[i]);
		print_message("%s", bad[i]);
		assert_int_equal(parse(text), -EINVAL);
	}
}

/* Every [device NAME] key, where it lands. */
static void
test_device_keys(void **state)
{
	const struct droce_dev_cfg *d = &cfg.dev[0];
	static const uint8_t v6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0,
					0, 0, 0, 0, 0, 0, 0, 2 };

	(void)state;
	assert_int_equal(parse("[engine]\ncores = 0,1\n"
			       "[device one]\nport = net_tap0\n"
			       "fault = loss=0.01\n"
			       "mac = 02:00:00:00:00:07\nipv6 = fd00::2/96\n"
			       "mtu = 9600\ndscp = 63\nrss = off\n"
			       "lcores = 1,0\n"
			       "dcqcn_rate_max_mbps = 25000\n"
			       "dcqcn_rate_min_mbps = 10\n"
			       "dcqcn_ai_mbps = 5\ndcqcn_hai_mbps = 50\n"
			       "dcqcn_g_shift = 16\n"
			       "dcqcn_alpha_period_us = 55\n"
			       "dcqcn_increase_period_us = 300\n"
			       "dcqcn_byte_counter = 1099511627776\n"
			       "dcqcn_fast_recovery = 1000\n"), 0);
	assert_string_equal(d->name, "one");
	assert_string_equal(d->port, "net_tap0");
	assert_string_equal(d->fault, "loss=0.01");
	assert_true(d->has_mac);
	assert_int_equal(d->mac.addr_bytes[0], 0x02);
	assert_int_equal(d->mac.addr_bytes[5], 0x07);
	assert_int_equal(d->ipv4, 0);
	assert_true(d->has_ipv6);
	assert_memory_equal(d->ipv6, v6, 16);
	assert_int_equal(d->ipv6_prefix, 96);
	assert_int_equal(d->mtu, 9600);
	assert_int_equal(d->dscp, 63);
	assert_true(d->no_rss);
	assert_int_equal(d->nlcores, 2);
	assert_int_equal(d->lcores[0], 1);
	assert_int_equal(d->lcores[1], 0);
	assert_int_equal(d->cc.rate_max, 25000000);
	assert_int_equal(d->cc.rate_min, 10000);
	assert_int_equal(d->cc.rate_ai, 5000);
	assert_int_equal(d->cc.rate_hai, 50000);
	assert_int_equal(d->cc.g_shift, 16);
	assert_int_equal(d->cc.alpha_period_us, 55);
	assert_int_equal(d->cc.increase_period_us, 300);
	assert_int_equal(d->cc.byte_counter, 1ull << 40);
	assert_int_equal(d->cc.fast_recovery, 1000);

	/* the prefixes' defaults; "lcore" for one */
	assert_int_equal(parse("[device two]\nport = p\nipv4 = 10.0.0.2\n"
			       "ipv6 = fd00::2\nrss = auto\nlcore = 0\n"), 0);
	assert_int_equal(d->ipv4_prefix, 32);
	assert_int_equal(d->ipv6_prefix, 64);
	assert_false(d->no_rss);
	assert_int_equal(d->nlcores, 1);
}

/* A [device NAME] key's value refused, or a device without what it
 * needs. */
static void
test_device_bad(void **state)
{
	static const char *const bad[] = {
		"ipv4 = 10.0.0.1\n",                      /* no port */
		"port = p\n",                             /* no address */
		"port = p\nipv4 = 10.0.0.1/33\n",
		"port = p\nipv4 = 10.0.0\n",
		"port = p\nipv6 = fd00::1/129\n",
		"port = p\nipv6 = fd00::x\n",
		"port = p\nipv4 = 10.0.0.1\nmac = 02:00:00:00:00\n",
		"port = p\nipv4 = 10.0.0.1\nmtu = 575\n",
		"port = p\nipv4 = 10.0.0.1\nmtu = 9601\n",
		"port = p\nipv4 = 10.0.0.1\ndscp = 64\n",
		"port = p\nipv4 = 10.0.0.1\nrss = on\n",
		"port = p\nipv4 = 10.0.0.1\nlcores = 1\n",  /* one core */
		"port = p\nipv4 = 10.0.0.1\nlcores = 0,0\n",
		"port = p\nipv4 = 10.0.0.1\nlcores = x\n",
		"port = p\nipv4 = 10.0.0.1\ndcqcn_g_shift = 17\n",
		"port = p\nipv4 = 10.0.0.1\ndcqcn_g_shift = 0\n",
		"port = p\nipv4 = 10.0.0.1\ndcqcn_rate_min_mbps = 0\n",
		"port = p\nipv4 = 10.0.0.1\ndcqcn_fast_recovery = 1001\n",
	};
	char text[512];
	unsigned int i;

	(void)state;
	assert_int_equal(parse("[device d]\nport = p\nipv4 = 10.0.0.1/32\n"
			       "mtu = 576\ndscp = 0\n"), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[device d]\n%s", bad[i]);
		print_message("%s", bad[i]);
		assert_int_equal(parse(text), -EINVAL);
	}
}

/* The devices in the file's order, other sections passed over; none, too
 * many, a malformed file or none refused. */
static void
test_devices(void **state)
{
	char text[4096];
	size_t len = 0;
	unsigned int i;

	(void)state;
	assert_int_equal(parse("[device b]\nport = p1\nipv4 = 10.0.0.2\n"
			       "[other]\nx = 1\n"
			       "[device a]\nport = p0\nipv4 = 10.0.0.1\n"), 0);
	assert_int_equal(cfg.ndevs, 2);
	assert_string_equal(cfg.dev[0].name, "b");
	assert_string_equal(cfg.dev[1].name, "a");
	assert_string_equal(cfg.dev[1].port, "p0");

	assert_int_equal(parse("[engine]\nmbufs = 2048\n"), -EINVAL);
	for (i = 0; i <= DROCE_MAX_DEVS; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"[device d%u]\nport = p\n"
					"ipv4 = 10.0.0.%u\n", i, i + 1);
	assert_int_equal(parse(text), -EINVAL);
	/* a file that is there but no .ini file */
	assert_int_equal(parse("[engine]\nmbufs =\n" DEV), -EINVAL);
	assert_int_equal(parse("[device d0\n"), -EINVAL);
	assert_int_equal(droce_config_parse_file("/nonexistent/droce.ini",
						 &cfg), -ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_engine_keys),
		cmocka_unit_test(test_engine_bounds),
		cmocka_unit_test(test_engine_names),
		cmocka_unit_test(test_device_keys),
		cmocka_unit_test(test_device_bad),
		cmocka_unit_test(test_devices),
	};
	const char *tmp = getenv("TMPDIR");
	char dir[200];
	int ret;

	snprintf(dir, sizeof(dir), "%s/droce-config-XXXXXX",
		 tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof(path), "%s/droce.ini", dir);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	rmdir(dir);
	return ret;
}
