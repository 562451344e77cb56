/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_crc32(): known answers of the Ethernet CRC-32, agreement with
 * DPDK's rte_net_crc and with a bit-at-a-time reference, seeded chaining,
 * and the table and carry-less multiplication paths against each other at
 * every length and alignment; the CRC taken as the bytes are copied.
 * Without an EAL but for the comparison with rte_net_crc.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_net_crc.h>
#include <rte_vect.h>

#include "droce_dpdk_compat.h"
#include "droce_wire.h"
#include "droce_wire_pvt.h"

#define BUF_LEN 8192

static uint8_t buf[BUF_LEN + 64];

static void
fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/* One bit at a time, straight from the definition. */
static uint32_t
crc32_bitwise(const uint8_t *p, size_t len)
{
	uint32_t c = 0xffffffffu;
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		c ^= p[i];
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

static void
test_known_answers(void **state)
{
	static const struct {
		const char *s;
		uint32_t crc;
	} v[] = {
		{ "", 0x00000000 },
		{ "a", 0xe8b7be43 },
		{ "abc", 0x352441c2 },
		{ "123456789", 0xcbf43926 },
		{ "The quick brown fox jumps over the lazy dog", 0x414fa339 },
	};
	static const uint8_t zeros[32];
	static uint8_t ones[4096];
	size_t i;

	(void)state;
	for (i = 0; i < RTE_DIM(v); i++)
		assert_int_equal(droce_crc32(0, v[i].s, strlen(v[i].s)),
				 v[i].crc);
	assert_int_equal(droce_crc32(0, zeros, sizeof(zeros)), 0x190a55ad);
	memset(ones, 0xff, sizeof(ones));
	assert_int_equal(droce_crc32(0, ones, 32), 0xff6cab0b);
	/* long enough for the carry-less path */
	assert_int_equal(droce_crc32(0, ones, sizeof(ones)),
			 crc32_bitwise(ones, sizeof(ones)));
}

static void
test_matches_bitwise_every_length(void **state)
{
	size_t len;

	(void)state;
	fill(buf, BUF_LEN, 1);
	for (len = 0; len <= 2100; len++)
		assert_int_equal(droce_crc32(0, buf, len),
				 crc32_bitwise(buf, len));
	assert_int_equal(droce_crc32(0, buf, BUF_LEN),
			 crc32_bitwise(buf, BUF_LEN));
}

/*
 * rte_net_crc allocates its context with rte_zmalloc() from DPDK 25.03
 * on: an EAL for that, without hugepages or files.
 */
static int
eal_setup(void **state)
{
	static char *argv[] = {
		"test_crc32", "--no-huge", "-m", "64", "--no-shconf",
		"--no-pci", "--no-telemetry", "--log-level=lib.eal:error",
	};

	(void)state;
	return rte_eal_init((int)RTE_DIM(argv), argv) < 0 ? -1 : 0;
}

static void
test_matches_rte_net_crc(void **state)
{
	static const enum rte_net_crc_alg algs[] = {
		RTE_NET_CRC_SCALAR, RTE_NET_CRC_SSE42, RTE_NET_CRC_AVX512 };
	static const uint32_t lens[] = {
		1, 7, 8, 15, 16, 63, 64, 65, 127, 128, 129, 255, 256, 1024,
		1500, 4096, 4100, 8191 };
	size_t a, i;

	(void)state;
	fill(buf, BUF_LEN, 2);
	/* without an EAL DPDK allows no SIMD: allow all it may use */
	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	/* DPDK falls back to scalar where the CPU lacks an algorithm. */
	for (a = 0; a < RTE_DIM(algs); a++)
		for (i = 0; i < RTE_DIM(lens); i++)
			assert_int_equal(droce_crc32(0, buf, lens[i]),
					 droce_net_crc32_eth(algs[a], buf,
							     lens[i]));
}

static void
test_chaining(void **state)
{
	size_t len, split;

	(void)state;
	fill(buf, BUF_LEN, 3);
	for (len = 0; len <= 600; len += 37) {
		uint32_t whole = droce_crc32(0, buf, len);

		for (split = 0; split <= len; split++) {
			uint32_t c = droce_crc32(0, buf, split);

			assert_int_equal(droce_crc32(c, buf + split,
						     len - split), whole);
		}
	}
	/* three pieces, each long enough for the carry-less path */
	assert_int_equal(droce_crc32(droce_crc32(droce_crc32(0, buf, 1000),
						 buf + 1000, 3000),
				     buf + 4000, 4192),
			 droce_crc32(0, buf, BUF_LEN));
}

static void
test_clmul_matches_tables(void **state)
{
	size_t len, align;
	uint32_t seed;

	(void)state;
	if (!droce_crc32_have_clmul()) {
		/* Nothing to compare on this CPU: droce_crc32() uses the
		 * tables only, which the other tests cover. */
		print_message("no PCLMULQDQ: table path only\n");
		return;
	}
	fill(buf, sizeof(buf), 4);
	for (align = 0; align < 16; align++)
		for (len = 16; len <= 1100; len++)
			for (seed = 0; seed < 2; seed++) {
				uint32_t reg = seed ? 0x12345678u : ~0u;

				assert_int_equal(
					droce_crc32_clmul(reg, buf + align, len),
					droce_crc32_sw(reg, buf + align, len));
			}
	assert_int_equal(droce_crc32_clmul(0, buf, BUF_LEN),
			 droce_crc32_sw(0, buf, BUF_LEN));
}

static void
test_vclmul_matches_tables(void **state)
{
	size_t len, align;

	(void)state;
	if (!droce_crc32_have_vclmul()) {
		/* Nothing to compare on this CPU: droce_crc32() does not use
		 * the 512-bit path here, which the other tests cover. */
		print_message("no AVX-512 VPCLMULQDQ: 128-bit path only\n");
		return;
	}
	fill(buf, sizeof(buf), 5);
	for (align = 0; align < 64; align += 7)
		for (len = 64; len <= 3000; len++)
			assert_int_equal(droce_crc32_vclmul(0x9abcdef0u,
							    buf + align, len),
					 droce_crc32_sw(0x9abcdef0u,
							buf + align, len));
	assert_int_equal(droce_crc32_vclmul(~0u, buf, BUF_LEN),
			 droce_crc32_sw(~0u, buf, BUF_LEN));
}

static void
test_vclmul256_matches_tables(void **state)
{
	size_t len, align;

	(void)state;
	if (!droce_crc32_have_vclmul256()) {
		print_message("no VPCLMULQDQ with AVX2: no 256-bit path\n");
		return;
	}
	fill(buf, sizeof(buf), 10);
	for (align = 0; align < 64; align += 7)
		for (len = 128; len <= 3000; len++)
			assert_int_equal(droce_crc32_vclmul256(0x9abcdef0u,
							       buf + align,
							       len),
					 droce_crc32_sw(0x9abcdef0u,
							buf + align, len));
	assert_int_equal(droce_crc32_vclmul256(~0u, buf, BUF_LEN),
			 droce_crc32_sw(~0u, buf, BUF_LEN));
}

/*
 * A one-pass copy and CRC, @p copy, at each length from @p from to the
 * buffer's in steps of @p step: the CRC of the tables, the bytes, and
 * none written past them.
 */
static void
check_one_pass_copy(uint32_t (*copy)(uint32_t reg, void *dst,
				     const void *src, size_t len),
		    size_t from, size_t step)
{
	static uint8_t dst[BUF_LEN + 64];
	size_t len;

	for (len = from; len <= BUF_LEN; len += step) {
		memset(dst, 0, sizeof(dst));
		assert_int_equal(copy(0x9abcdef0u, dst + 3, buf + 5, len),
				 droce_crc32_sw(0x9abcdef0u, buf + 5, len));
		assert_memory_equal(dst + 3, buf + 5, len);
		assert_int_equal(dst[3 + len], 0);
	}
}

/*
 * droce_crc32_copy(): the CRC of droce_crc32() and the bytes of memcpy(),
 * at lengths either side of where the one-pass path starts and of each
 * 64-byte block, at several alignments of either side, nothing written
 * past the end; and each one-pass path the CPU has against the tables.
 */
static void
test_copy(void **state)
{
	static uint8_t dst[BUF_LEN + 128];
	static const size_t lens[] = {
		0, 1, 15, 63, 64, 65, 255, 256, 511, 512, 513, 575, 576, 577,
		1024, 1087, 4096, 4097, 4159, BUF_LEN,
	};
	size_t i, sa, da;

	(void)state;
	fill(buf, sizeof(buf), 9);
	for (i = 0; i < RTE_DIM(lens); i++) {
		for (sa = 0; sa < 64; sa += 21) {
			for (da = 0; da < 64; da += 13) {
				size_t len = lens[i];

				memset(dst, 0xa5, sizeof(dst));
				assert_int_equal(droce_crc32_copy(0x12345678u,
						dst + da, buf + sa, len),
					droce_crc32(0x12345678u, buf + sa,
						    len));
				assert_memory_equal(dst + da, buf + sa, len);
				assert_int_equal(dst[da + len], 0xa5);
				if (da > 0)
					assert_int_equal(dst[da - 1], 0xa5);
			}
		}
	}
	if (droce_crc32_have_vclmul())
		check_one_pass_copy(droce_crc32_vclmul_copy, 64, 64);
	if (droce_crc32_have_vclmul256())
		check_one_pass_copy(droce_crc32_vclmul256_copy, 128, 32);
}

/*
 * The masked first block: each implementation equals the tables run over
 * a copy whose first 64 bytes were ORed with the set bytes, and leaves
 * the buffer as it was.
 */
static void
test_masked64(void **state)
{
	static uint8_t copy[sizeof(buf)];
	uint8_t set[64];
	size_t len, align, i;

	(void)state;
	fill(buf, sizeof(buf), 6);
	fill(set, sizeof(set), 7);
	for (i = 0; i < sizeof(set); i++)
		set[i] &= (uint8_t)(i % 3 == 0 ? 0xff : i % 3 == 1 ? 0x0f : 0);
	for (align = 0; align < 64; align += 5)
		for (len = 64; len <= 1100; len++) {
			uint32_t want;

			memcpy(copy, buf + align, len);
			for (i = 0; i < 64; i++)
				copy[i] |= set[i];
			want = droce_crc32_sw(0x5a5a0ff0u, copy, len);
			assert_int_equal(droce_crc32_sw_masked64(0x5a5a0ff0u,
						buf + align, len, set), want);
			if (droce_crc32_have_clmul())
				assert_int_equal(droce_crc32_clmul_masked64(
						0x5a5a0ff0u, buf + align, len,
						set), want);
			if (droce_crc32_have_vclmul256() && len >= 128)
				assert_int_equal(droce_crc32_vclmul256_masked64(
						0x5a5a0ff0u, buf + align, len,
						set), want);
			if (droce_crc32_have_vclmul())
				assert_int_equal(droce_crc32_vclmul_masked64(
						0x5a5a0ff0u, buf + align, len,
						set), want);
			assert_int_equal(droce_crc32_masked64(0, buf + align,
							      len, set),
					 droce_crc32(0, copy, len));
		}
	memcpy(copy, buf, sizeof(buf));
	fill(buf, sizeof(buf), 6);
	assert_memory_equal(copy, buf, sizeof(buf));
}

/*
 * Fewer than 64 bytes: the same as the tables over a masked copy, and
 * nothing past the last byte read (it ends at an inaccessible page).
 */
static void
test_masked_short(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *map, *end, copy[64], set[64];
	size_t len, i;

	(void)state;
	map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + page, (size_t)page, PROT_NONE), 0);
	end = map + page;
	fill(end - 64, 64, 8);
	fill(set, sizeof(set), 9);
	for (len = 1; len < 64; len++) {
		uint32_t want;

		memcpy(copy, end - len, len);
		for (i = 0; i < len; i++)
			copy[i] |= set[i];
		want = droce_crc32(0, copy, len);
		assert_int_equal(droce_crc32_masked64(0, end - len, len, set),
				 want);
		assert_int_equal(droce_crc32_sw_masked64(0x5a5a0ff0u, end - len,
							 len, set),
				 droce_crc32_sw(0x5a5a0ff0u, copy, len));
		if (droce_crc32_have_clmul() && len >= 16)
			assert_int_equal(droce_crc32_clmul_masked_short(
					0x5a5a0ff0u, end - len, len, set),
					 droce_crc32_sw(0x5a5a0ff0u, copy, len));
		if (droce_crc32_have_vbmi() && len >= 4)
			assert_int_equal(droce_crc32_vbmi_masked_short(
					0x5a5a0ff0u, end - len, len, set),
					 droce_crc32_sw(0x5a5a0ff0u, copy, len));
	}
	assert_int_equal(droce_crc32_masked64(0x1234u, end, 0, set), 0x1234u);
	munmap(map, (size_t)page * 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_matches_bitwise_every_length),
		cmocka_unit_test_setup(test_matches_rte_net_crc, eal_setup),
		cmocka_unit_test(test_chaining),
		cmocka_unit_test(test_clmul_matches_tables),
		cmocka_unit_test(test_vclmul_matches_tables),
		cmocka_unit_test(test_vclmul256_matches_tables),
		cmocka_unit_test(test_masked64),
		cmocka_unit_test(test_masked_short),
		cmocka_unit_test(test_copy),
	};

	int ret = cmocka_run_group_tests(tests, NULL, NULL);

	rte_eal_cleanup();
	return ret;
}
