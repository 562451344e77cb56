/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * CRC-32 (Ethernet polynomial, reflected) with a seed, so that the ICRC's
 * pseudo-header and the segments of an mbuf chain chain without a copy.
 *
 * Two implementations of the same register update:
 *  - slice-by-8 tables, for short buffers and CPUs without PCLMULQDQ;
 *  - folding by carry-less multiplication: four 128-bit lanes are folded
 *    64 bytes at a time, then into one lane, and the last lane plus the
 *    tail finish through the tables (a lane's CRC with a zero seed equals
 *    the CRC of everything folded into it).
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>

#include "droce_wire.h"
#include "droce_wire_pvt.h"
#include "droce_crc32_tables.h"

#if defined(RTE_ARCH_X86)
#include <immintrin.h>
#define DROCE_HAVE_CLMUL_CODE 1
#endif

static inline uint32_t
load_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_le_to_cpu_32(v);
}

uint32_t
droce_crc32_sw(uint32_t reg, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len >= 8) {
		uint32_t lo = load_le32(p) ^ reg;
		uint32_t hi = load_le32(p + 4);

		reg = crc32_slice8[7][lo & 0xff] ^
			crc32_slice8[6][(lo >> 8) & 0xff] ^
			crc32_slice8[5][(lo >> 16) & 0xff] ^
			crc32_slice8[4][lo >> 24] ^
			crc32_slice8[3][hi & 0xff] ^
			crc32_slice8[2][(hi >> 8) & 0xff] ^
			crc32_slice8[1][(hi >> 16) & 0xff] ^
			crc32_slice8[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len-- > 0)
		reg = crc32_slice8[0][(reg ^ *p++) & 0xff] ^ (reg >> 8);
	return reg;
}

#ifdef DROCE_HAVE_CLMUL_CODE

/* Move lane x forward by the distance whose constants k holds, add next. */
static inline __attribute__((target("pclmul,sse2"))) __m128i
fold(__m128i x, __m128i k, __m128i next)
{
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(hi, lo), next);
}

__attribute__((target("pclmul,sse2"))) uint32_t
droce_crc32_clmul(uint32_t reg, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	const __m128i k512 = _mm_set_epi64x((long long)CRC32_FOLD512_LO,
					    (long long)CRC32_FOLD512_HI);
	const __m128i k128 = _mm_set_epi64x((long long)CRC32_FOLD128_LO,
					    (long long)CRC32_FOLD128_HI);
	__m128i x0, x1, x2, x3;
	uint8_t lane[16];

	/* The seed enters as an XOR into the first four bytes. */
	x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p),
			   _mm_cvtsi32_si128((int)reg));
	if (len < 64) {
		/* short: one lane from the start */
		p += 16;
		len -= 16;
		goto one_lane;
	}
	x1 = _mm_loadu_si128((const __m128i *)(p + 16));
	x2 = _mm_loadu_si128((const __m128i *)(p + 32));
	x3 = _mm_loadu_si128((const __m128i *)(p + 48));
	p += 64;
	len -= 64;

	while (len >= 64) {
		x0 = fold(x0, k512, _mm_loadu_si128((const __m128i *)p));
		x1 = fold(x1, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
		x2 = fold(x2, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
		x3 = fold(x3, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
		p += 64;
		len -= 64;
	}

	x0 = fold(x0, k128, x1);
	x0 = fold(x0, k128, x2);
	x0 = fold(x0, k128, x3);
one_lane:
	while (len >= 16) {
		x0 = fold(x0, k128, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}

	_mm_storeu_si128((__m128i *)lane, x0);
	reg = droce_crc32_sw(0, lane, sizeof(lane));
	return droce_crc32_sw(reg, p, len);
}

static bool have_clmul;

RTE_INIT(droce_crc32_detect)
{
	__builtin_cpu_init();
	have_clmul = __builtin_cpu_supports("pclmul") &&
		__builtin_cpu_supports("sse2");
}

bool
droce_crc32_have_clmul(void)
{
	return have_clmul;
}

#else

uint32_t
droce_crc32_clmul(uint32_t reg, const void *buf, size_t len)
{
	return droce_crc32_sw(reg, buf, len);
}

bool
droce_crc32_have_clmul(void)
{
	return false;
}

#endif

/* Below this many bytes the tables beat setting up a lane. */
#define CLMUL_MIN_LEN 32

uint32_t
droce_crc32(uint32_t crc, const void *buf, size_t len)
{
	uint32_t reg = ~crc;

	if (len >= CLMUL_MIN_LEN && droce_crc32_have_clmul())
		reg = droce_crc32_clmul(reg, buf, len);
	else
		reg = droce_crc32_sw(reg, buf, len);
	return ~reg;
}
