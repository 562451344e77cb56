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
 *    64 bytes at a time (four 512-bit registers, 256 bytes at a time,
 *    with AVX-512), then into one lane, which Barrett reduction turns
 *    into the CRC (a lane's CRC with a zero seed equals the CRC of
 *    everything folded into it); a tail under 16 bytes joins the last
 *    lane through an overlapping load.
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

uint32_t
droce_crc32_sw_masked64(uint32_t reg, const void *buf, size_t len,
			const uint8_t set[64])
{
	/* the first bytes through a masked copy: none past len is read */
	size_t n = len < 64 ? len : 64;
	uint8_t first[64];
	size_t i;

	memcpy(first, buf, n);
	for (i = 0; i < n; i++)
		first[i] |= set[i];
	reg = droce_crc32_sw(reg, first, n);
	return droce_crc32_sw(reg, (const uint8_t *)buf + n, len - n);
}

#ifdef DROCE_HAVE_CLMUL_CODE

/* Move lane x forward by the distance whose constants k holds, add next. */
static inline __attribute__((target("pclmul,sse4.1"))) __m128i
fold(__m128i x, __m128i k, __m128i next)
{
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(hi, lo), next);
}

/* The CRC of a 128-bit lane, by Barrett reduction (no tables). */
static inline __attribute__((target("pclmul,sse4.1"))) uint32_t
lane_reduce(__m128i x)
{
	const __m128i k32 = _mm_set_epi64x((long long)CRC32_FOLD32_LO,
					   (long long)CRC32_FOLD32_HI);
	const __m128i k0 = _mm_set_epi64x(0, (long long)CRC32_FOLD0_HI);
	const __m128i hi_mask = _mm_set_epi64x(-1, 0);
	const __m128i mu = _mm_cvtsi64_si128((long long)CRC32_MU_REFLECTED);
	const __m128i poly = _mm_cvtsi64_si128((long long)CRC32_POLY_REFLECTED33);
	__m128i y, z, q;
	uint64_t zz;

	/* x * x^32, at most 96 bits, then its top 32 bits folded away */
	y = _mm_xor_si128(_mm_clmulepi64_si128(x, k32, 0x00),
			  _mm_clmulepi64_si128(x, k32, 0x11));
	z = _mm_xor_si128(_mm_clmulepi64_si128(y, k0, 0x00),
			  _mm_and_si128(y, hi_mask));
	zz = (uint64_t)_mm_extract_epi64(z, 1);
	/* quotient, then the remainder */
	q = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)(zz & 0xffffffffu)),
				 mu, 0x00);
	q = _mm_and_si128(q, _mm_cvtsi32_si128(-1));
	q = _mm_clmulepi64_si128(q, poly, 0x00);
	return (uint32_t)(zz >> 32) ^ (uint32_t)((uint64_t)_mm_cvtsi128_si64(q) >> 32);
}

/*
 * pshufb masks: 16 bytes from offset 16 - s shift a lane s bytes towards
 * its end (later in the message), from offset 16 + s s bytes towards its
 * start; 0x80 makes a zero byte.
 */
static const uint8_t shuffle_tbl[48] = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

/*
 * The CRC of lane x followed by the last @p r (< 16) bytes of @p last, the
 * 16 bytes the message ends with, with no table: the lane's first r
 * bytes, alone in a lane, are folded into its last 16 - r bytes joined
 * by the tail.
 */
static inline __attribute__((target("pclmul,sse4.1"))) uint32_t
lane_finish_with(__m128i x, __m128i last, size_t r)
{
	const __m128i k128 = _mm_set_epi64x((long long)CRC32_FOLD128_LO,
					    (long long)CRC32_FOLD128_HI);
	__m128i head, rest, down;

	if (r == 0)
		return lane_reduce(x);
	down = _mm_loadu_si128((const __m128i *)(shuffle_tbl + 16 + r));
	head = _mm_shuffle_epi8(x, _mm_loadu_si128((const __m128i *)
					(shuffle_tbl + r)));
	rest = _mm_blendv_epi8(_mm_shuffle_epi8(x, down), last, down);
	return lane_reduce(fold(head, k128, rest));
}

/* lane_finish_with() the last @p r bytes before @p end: needs 16 readable
 * bytes before end. */
static inline __attribute__((target("pclmul,sse4.1"))) uint32_t
lane_finish(__m128i x, const uint8_t *end, size_t r)
{
	return lane_finish_with(x, _mm_loadu_si128((const __m128i *)(end - 16)),
				r);
}

/*
 * The CRC of lanes x0..x3 (the first 64 bytes, the seed in) followed by
 * the @p len bytes at @p p.
 */
static inline __attribute__((target("pclmul,sse4.1"))) uint32_t
clmul_from4(__m128i x0, __m128i x1, __m128i x2, __m128i x3,
	    const uint8_t *p, size_t len)
{
	const __m128i k512 = _mm_set_epi64x((long long)CRC32_FOLD512_LO,
					    (long long)CRC32_FOLD512_HI);
	const __m128i k384 = _mm_set_epi64x((long long)CRC32_FOLD384_LO,
					    (long long)CRC32_FOLD384_HI);
	const __m128i k256 = _mm_set_epi64x((long long)CRC32_FOLD256_LO,
					    (long long)CRC32_FOLD256_HI);
	const __m128i k128 = _mm_set_epi64x((long long)CRC32_FOLD128_LO,
					    (long long)CRC32_FOLD128_HI);

	while (len >= 64) {
		x0 = fold(x0, k512, _mm_loadu_si128((const __m128i *)p));
		x1 = fold(x1, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
		x2 = fold(x2, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
		x3 = fold(x3, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
		p += 64;
		len -= 64;
	}

	/* the four lanes into one, side by side rather than in a chain */
	x0 = _mm_xor_si128(fold(x0, k384, fold(x2, k128, x3)),
			   fold(x1, k256, _mm_setzero_si128()));
	while (len >= 16) {
		x0 = fold(x0, k128, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}
	return lane_finish(x0, p + len, len);
}

__attribute__((target("pclmul,sse4.1"))) uint32_t
droce_crc32_clmul(uint32_t reg, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	const __m128i k128 = _mm_set_epi64x((long long)CRC32_FOLD128_LO,
					    (long long)CRC32_FOLD128_HI);
	__m128i x0;

	/* The seed enters as an XOR into the first four bytes. */
	x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p),
			   _mm_cvtsi32_si128((int)reg));
	if (len >= 64)
		return clmul_from4(x0,
				   _mm_loadu_si128((const __m128i *)(p + 16)),
				   _mm_loadu_si128((const __m128i *)(p + 32)),
				   _mm_loadu_si128((const __m128i *)(p + 48)),
				   p + 64, len - 64);
	/* short: one lane from the start */
	p += 16;
	len -= 16;
	while (len >= 16) {
		x0 = fold(x0, k128, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}
	return lane_finish(x0, p + len, len);
}

__attribute__((target("pclmul,sse4.1"))) uint32_t
droce_crc32_clmul_masked64(uint32_t reg, const void *buf, size_t len,
			   const uint8_t set[64])
{
	const uint8_t *p = buf;
	__m128i x[4];
	int i;

	for (i = 0; i < 4; i++)
		x[i] = _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + 16 * i)),
				    _mm_loadu_si128((const __m128i *)(set + 16 * i)));
	x[0] = _mm_xor_si128(x[0], _mm_cvtsi32_si128((int)reg));
	return clmul_from4(x[0], x[1], x[2], x[3], p + 64, len - 64);
}

/*
 * 16 to 63 bytes, the first taken OR @p set: one lane, each 16 bytes
 * ORed as they are loaded, the last few in the 16 bytes the message ends
 * with (ORed too), so nothing past it is read. The tables would do, but
 * between two short frames (ACKs) their 8 KiB leave the cache, and a
 * miss costs more than the lane.
 */
__attribute__((target("pclmul,sse4.1"))) uint32_t
droce_crc32_clmul_masked_short(uint32_t reg, const void *buf, size_t len,
			       const uint8_t set[64])
{
	const uint8_t *p = buf;
	const __m128i k128 = _mm_set_epi64x((long long)CRC32_FOLD128_LO,
					    (long long)CRC32_FOLD128_HI);
	__m128i x;
	size_t i;

	x = _mm_xor_si128(_mm_or_si128(_mm_loadu_si128((const __m128i *)p),
				       _mm_loadu_si128((const __m128i *)set)),
			  _mm_cvtsi32_si128((int)reg));
	for (i = 16; i + 16 <= len; i += 16)
		x = fold(x, k128,
			 _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + i)),
				      _mm_loadu_si128((const __m128i *)
						      (set + i))));
	return lane_finish_with(x, _mm_or_si128(
			_mm_loadu_si128((const __m128i *)(p + len - 16)),
			_mm_loadu_si128((const __m128i *)(set + len - 16))),
		len - i);
}

/* Fold each 128-bit lane of a 512-bit register by the constants in k. */
static inline __attribute__((target("avx512f,avx512vl,vpclmulqdq")))
__m512i
fold512(__m512i x, __m512i k, __m512i next)
{
	__m512i hi = _mm512_clmulepi64_epi128(x, k, 0x00);
	__m512i lo = _mm512_clmulepi64_epi128(x, k, 0x11);

	return _mm512_ternarylogic_epi64(hi, lo, next, 0x96); /* a^b^c */
}

static inline __attribute__((target("avx512f,avx512vl,vpclmulqdq")))
__m512i
k512(uint64_t k_hi, uint64_t k_lo)
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k_lo,
						     (long long)k_hi));
}

/* 64 bytes at @p p, and the same at @p d unless it is NULL. */
static inline __attribute__((always_inline,
			     target("avx512f,avx512vl,vpclmulqdq")))
__m512i
load512(const uint8_t *p, uint8_t *d)
{
	__m512i z = _mm512_loadu_si512(p);

	if (d != NULL)
		_mm512_storeu_si512(d, z);
	return z;
}

/*
 * The CRC of z0 (the first 64 bytes, the seed in) followed by the
 * @p len bytes at @p p: four registers 256 bytes a step while there is
 * that much, then one, then 128-bit lanes. With @p d, the bytes are
 * also copied there as they are read: @p len must then be a multiple of
 * 64 (no lane is left for the 128-bit steps). Inlined, so that d NULL
 * costs nothing.
 */
static inline __attribute__((always_inline,
			     target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1")))
uint32_t
vclmul_from(__m512i z0, const uint8_t *p, size_t len, uint8_t *d)
{
	const __m512i k2048 = k512(CRC32_FOLD2048_HI, CRC32_FOLD2048_LO);
	const __m512i k4 = k512(CRC32_FOLD512_HI, CRC32_FOLD512_LO);
	const __m128i k384 = _mm_set_epi64x((long long)CRC32_FOLD384_LO,
					    (long long)CRC32_FOLD384_HI);
	const __m128i k256 = _mm_set_epi64x((long long)CRC32_FOLD256_LO,
					    (long long)CRC32_FOLD256_HI);
	const __m128i k128 = _mm_set_epi64x((long long)CRC32_FOLD128_LO,
					    (long long)CRC32_FOLD128_HI);
	__m512i z1, z2, z3;
	__m128i x;

	if (len >= 192 + 256) {
		z1 = load512(p, d);
		z2 = load512(p + 64, d != NULL ? d + 64 : NULL);
		z3 = load512(p + 128, d != NULL ? d + 128 : NULL);
		p += 192;
		d = d != NULL ? d + 192 : NULL;
		len -= 192;
		while (len >= 256) {
			z0 = fold512(z0, k2048, load512(p, d));
			z1 = fold512(z1, k2048, load512(p + 64,
					d != NULL ? d + 64 : NULL));
			z2 = fold512(z2, k2048, load512(p + 128,
					d != NULL ? d + 128 : NULL));
			z3 = fold512(z3, k2048, load512(p + 192,
					d != NULL ? d + 192 : NULL));
			p += 256;
			d = d != NULL ? d + 256 : NULL;
			len -= 256;
		}
		/* four registers into one, 512 bits apart */
		z0 = fold512(z0, k4, z1);
		z0 = fold512(z0, k4, z2);
		z0 = fold512(z0, k4, z3);
	}
	while (len >= 64) {
		z0 = fold512(z0, k4, load512(p, d));
		p += 64;
		d = d != NULL ? d + 64 : NULL;
		len -= 64;
	}
	/* its four lanes into one, 384, 256 and 128 bits before the last:
	 * the first three moved at once, then the four added up */
	z1 = _mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(
			k384), k256, 1), k128, 2);
	z1 = _mm512_xor_si512(_mm512_clmulepi64_epi128(z0, z1, 0x00),
			      _mm512_clmulepi64_epi128(z0, z1, 0x11));
	z1 = _mm512_mask_blend_epi64(0xc0, z1, z0);
	z2 = _mm512_castsi256_si512(_mm256_xor_si256(
			_mm512_castsi512_si256(z1),
			_mm512_extracti64x4_epi64(z1, 1)));
	x = _mm_xor_si128(_mm512_castsi512_si128(z2),
			  _mm512_extracti32x4_epi32(z2, 1));
	while (len >= 16) {
		x = fold(x, k128, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}
	return lane_finish(x, p + len, len);
}

__attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1"))) uint32_t
droce_crc32_vclmul(uint32_t reg, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	/* the seed enters as an XOR into the first four bytes */
	return vclmul_from(_mm512_xor_si512(_mm512_loadu_si512(p),
			   _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)reg))),
			   p + 64, len - 64, NULL);
}

__attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1"))) uint32_t
droce_crc32_vclmul_copy(uint32_t reg, void *dst, const void *src, size_t len)
{
	const uint8_t *p = src;
	uint8_t *d = dst;

	return vclmul_from(_mm512_xor_si512(load512(p, d),
			   _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)reg))),
			   p + 64, len - 64, d + 64);
}

__attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1"))) uint32_t
droce_crc32_vclmul_masked64(uint32_t reg, const void *buf, size_t len,
			    const uint8_t set[64])
{
	const uint8_t *p = buf;
	__m512i z0 = _mm512_or_si512(_mm512_loadu_si512(p),
				     _mm512_loadu_si512(set));

	return vclmul_from(_mm512_xor_si512(z0,
			   _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)reg))),
			   p + 64, len - 64, NULL);
}

/* Byte i is i: where a byte permutation starts from. */
static const uint8_t iota64[64] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
	32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
	48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
};

/*
 * Fewer than 64 bytes, in place: loaded under a mask (the bytes past
 * them are not read), the seed XORed into the first four, then moved to
 * the end of the register behind zero bytes, which leave the CRC as it
 * is: the register is then a 64-byte block like any other.
 */
__attribute__((target("avx512f,avx512vl,avx512bw,avx512vbmi,vpclmulqdq,pclmul,sse4.1"))) uint32_t
droce_crc32_vbmi_masked_short(uint32_t reg, const void *buf, size_t len,
			      const uint8_t set[64])
{
	const unsigned int off = 64 - (unsigned int)len;
	const __mmask64 in = ~0ULL >> off;
	const uint8_t *p = buf;
	__m512i z, to;

	z = _mm512_or_si512(_mm512_maskz_loadu_epi8(in, p),
			    _mm512_maskz_loadu_epi8(in, set));
	z = _mm512_xor_si512(z, _mm512_zextsi128_si512(
				 _mm_cvtsi32_si128((int)reg)));
	/* byte i of the result is byte i - off */
	to = _mm512_sub_epi8(_mm512_loadu_si512(iota64),
			     _mm512_set1_epi8((char)off));
	z = _mm512_maskz_permutexvar_epi8(~0ULL << off, to, z);
	return vclmul_from(z, p + len, 0, NULL);
}

/*
 * 256-bit registers (VPCLMULQDQ with AVX2, on CPUs without AVX-512):
 * two lanes a register, four registers 128 bytes a step.
 */
static inline __attribute__((always_inline, target("avx2,vpclmulqdq")))
__m256i
fold256(__m256i x, __m256i k, __m256i next)
{
	__m256i hi = _mm256_clmulepi64_epi128(x, k, 0x00);
	__m256i lo = _mm256_clmulepi64_epi128(x, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(hi, lo), next);
}

static inline __attribute__((always_inline, target("avx2,vpclmulqdq")))
__m256i
k256(uint64_t k_hi, uint64_t k_lo)
{
	return _mm256_broadcastsi128_si256(_mm_set_epi64x((long long)k_lo,
							  (long long)k_hi));
}

/* 32 bytes at @p p, and the same at @p d unless it is NULL. */
static inline __attribute__((always_inline, target("avx2,vpclmulqdq")))
__m256i
load256(const uint8_t *p, uint8_t *d)
{
	__m256i y = _mm256_loadu_si256((const __m256i *)p);

	if (d != NULL)
		_mm256_storeu_si256((__m256i *)d, y);
	return y;
}

/*
 * The CRC of y0 and y1 (the first 64 bytes, the seed in) followed by
 * the @p len (at least 64) bytes at @p p: four registers 128 bytes a
 * step, then one, then 128-bit lanes. With @p d, the bytes are also
 * copied there as they are read: @p len must then be a multiple of 32.
 */
static inline __attribute__((always_inline,
			     target("avx2,vpclmulqdq,pclmul,sse4.1")))
uint32_t
vclmul256_from(__m256i y0, __m256i y1, const uint8_t *p, size_t len,
	       uint8_t *d)
{
	const __m256i k1024 = k256(CRC32_FOLD1024_HI, CRC32_FOLD1024_LO);
	const __m256i k2 = k256(CRC32_FOLD256_HI, CRC32_FOLD256_LO);
	const __m128i k128 = _mm_set_epi64x((long long)CRC32_FOLD128_LO,
					    (long long)CRC32_FOLD128_HI);
	__m256i y2, y3;
	__m128i x;

	y2 = load256(p, d);
	y3 = load256(p + 32, d != NULL ? d + 32 : NULL);
	p += 64;
	d = d != NULL ? d + 64 : NULL;
	len -= 64;
	while (len >= 128) {
		y0 = fold256(y0, k1024, load256(p, d));
		y1 = fold256(y1, k1024, load256(p + 32,
				d != NULL ? d + 32 : NULL));
		y2 = fold256(y2, k1024, load256(p + 64,
				d != NULL ? d + 64 : NULL));
		y3 = fold256(y3, k1024, load256(p + 96,
				d != NULL ? d + 96 : NULL));
		p += 128;
		d = d != NULL ? d + 128 : NULL;
		len -= 128;
	}
	/* four registers into one, 256 bits apart */
	y0 = fold256(y0, k2, y1);
	y0 = fold256(y0, k2, y2);
	y0 = fold256(y0, k2, y3);
	while (len >= 32) {
		y0 = fold256(y0, k2, load256(p, d));
		p += 32;
		d = d != NULL ? d + 32 : NULL;
		len -= 32;
	}
	/* its two lanes into one */
	x = fold(_mm256_castsi256_si128(y0), k128,
		 _mm256_extracti128_si256(y0, 1));
	while (len >= 16) {
		x = fold(x, k128, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}
	return lane_finish(x, p + len, len);
}

/* The seed into the first four bytes of a register. */
static inline __attribute__((always_inline, target("avx2,vpclmulqdq")))
__m256i
seed256(__m256i y, uint32_t reg)
{
	return _mm256_xor_si256(y, _mm256_zextsi128_si256(
					_mm_cvtsi32_si128((int)reg)));
}

__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1"))) uint32_t
droce_crc32_vclmul256(uint32_t reg, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	return vclmul256_from(seed256(load256(p, NULL), reg),
			      load256(p + 32, NULL), p + 64, len - 64, NULL);
}

__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1"))) uint32_t
droce_crc32_vclmul256_copy(uint32_t reg, void *dst, const void *src,
			   size_t len)
{
	const uint8_t *p = src;
	uint8_t *d = dst;

	return vclmul256_from(seed256(load256(p, d), reg),
			      load256(p + 32, d + 32), p + 64, len - 64,
			      d + 64);
}

__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1"))) uint32_t
droce_crc32_vclmul256_masked64(uint32_t reg, const void *buf, size_t len,
			       const uint8_t set[64])
{
	const uint8_t *p = buf;
	__m256i y0 = _mm256_or_si256(load256(p, NULL), load256(set, NULL));
	__m256i y1 = _mm256_or_si256(load256(p + 32, NULL),
				     load256(set + 32, NULL));

	return vclmul256_from(seed256(y0, reg), y1, p + 64, len - 64, NULL);
}

static bool have_clmul;
static bool have_vclmul;
static bool have_vclmul256;
static bool have_vbmi;

RTE_INIT(droce_crc32_detect)
{
	__builtin_cpu_init();
	have_clmul = __builtin_cpu_supports("pclmul") &&
		__builtin_cpu_supports("sse4.1");
	have_vclmul = have_clmul && __builtin_cpu_supports("avx512f") &&
		__builtin_cpu_supports("avx512vl") &&
		__builtin_cpu_supports("vpclmulqdq");
	have_vbmi = have_vclmul && __builtin_cpu_supports("avx512bw") &&
		__builtin_cpu_supports("avx512vbmi");
	have_vclmul256 = have_clmul && __builtin_cpu_supports("avx2") &&
		__builtin_cpu_supports("vpclmulqdq");
}

bool
droce_crc32_have_vclmul256(void)
{
	return have_vclmul256;
}

bool
droce_crc32_have_vbmi(void)
{
	return have_vbmi;
}

bool
droce_crc32_have_vclmul(void)
{
	return have_vclmul;
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

uint32_t
droce_crc32_clmul_masked64(uint32_t reg, const void *buf, size_t len,
			   const uint8_t set[64])
{
	return droce_crc32_sw_masked64(reg, buf, len, set);
}

uint32_t
droce_crc32_vclmul_masked64(uint32_t reg, const void *buf, size_t len,
			    const uint8_t set[64])
{
	return droce_crc32_sw_masked64(reg, buf, len, set);
}

uint32_t
droce_crc32_vclmul_copy(uint32_t reg, void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return droce_crc32_sw(reg, src, len);
}

uint32_t
droce_crc32_vclmul(uint32_t reg, const void *buf, size_t len)
{
	return droce_crc32_sw(reg, buf, len);
}

bool
droce_crc32_have_clmul(void)
{
	return false;
}

uint32_t
droce_crc32_clmul_masked_short(uint32_t reg, const void *buf, size_t len,
			       const uint8_t set[64])
{
	return droce_crc32_sw_masked64(reg, buf, len, set);
}

bool
droce_crc32_have_vclmul(void)
{
	return false;
}

uint32_t
droce_crc32_vclmul256(uint32_t reg, const void *buf, size_t len)
{
	return droce_crc32_sw(reg, buf, len);
}

uint32_t
droce_crc32_vclmul256_copy(uint32_t reg, void *dst, const void *src,
			   size_t len)
{
	memcpy(dst, src, len);
	return droce_crc32_sw(reg, src, len);
}

uint32_t
droce_crc32_vclmul256_masked64(uint32_t reg, const void *buf, size_t len,
			       const uint8_t set[64])
{
	return droce_crc32_sw_masked64(reg, buf, len, set);
}

bool
droce_crc32_have_vclmul256(void)
{
	return false;
}

uint32_t
droce_crc32_vbmi_masked_short(uint32_t reg, const void *buf, size_t len,
			      const uint8_t set[64])
{
	return droce_crc32_sw_masked64(reg, buf, len, set);
}

bool
droce_crc32_have_vbmi(void)
{
	return false;
}

#endif

/* Below this many bytes the tables beat setting up a lane. */
#define CLMUL_MIN_LEN 32
/* From here 512-bit registers pay off. */
#define VCLMUL_MIN_LEN 512
/* From here 256-bit ones do (where there are no 512-bit ones). */
#define VCLMUL256_MIN_LEN 256

/* Whether @p len bytes go through 256-bit registers: long enough, on a
 * CPU that has them and not the 512-bit ones. */
static inline bool
use_vclmul256(size_t len)
{
	return len >= VCLMUL256_MIN_LEN && droce_crc32_have_vclmul256() &&
		!droce_crc32_have_vclmul();
}

uint32_t
droce_crc32_masked64(uint32_t crc, const void *buf, size_t len,
		     const uint8_t set[64])
{
	uint32_t reg = ~crc;

	if (len < 64) {
		if (len == 0)
			return crc;
		/* the seed needs four bytes to go into */
		if (droce_crc32_have_vbmi() && len >= 4)
			reg = droce_crc32_vbmi_masked_short(reg, buf, len, set);
		else if (droce_crc32_have_clmul() && len >= 16)
			reg = droce_crc32_clmul_masked_short(reg, buf, len,
							     set);
		else
			reg = droce_crc32_sw_masked64(reg, buf, len, set);
	} else if (droce_crc32_have_vclmul())
		reg = droce_crc32_vclmul_masked64(reg, buf, len, set);
	else if (use_vclmul256(len))
		reg = droce_crc32_vclmul256_masked64(reg, buf, len, set);
	else if (droce_crc32_have_clmul())
		reg = droce_crc32_clmul_masked64(reg, buf, len, set);
	else
		reg = droce_crc32_sw_masked64(reg, buf, len, set);
	return ~reg;
}

uint32_t
droce_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	/* 512- or 256-bit registers copy and fold whole 64-byte blocks in
	 * one pass; the rest, and CPUs with neither, copy then CRC */
	size_t bulk = len & ~(size_t)63;

	if (len >= VCLMUL_MIN_LEN && droce_crc32_have_vclmul())
		crc = ~droce_crc32_vclmul_copy(~crc, dst, src, bulk);
	else if (use_vclmul256(len))
		crc = ~droce_crc32_vclmul256_copy(~crc, dst, src, bulk);
	else
		bulk = 0;
	dst = (uint8_t *)dst + bulk;
	src = (const uint8_t *)src + bulk;
	len -= bulk;
	memcpy(dst, src, len);
	return droce_crc32(crc, src, len);
}

uint32_t
droce_crc32(uint32_t crc, const void *buf, size_t len)
{
	uint32_t reg = ~crc;

	if (len >= VCLMUL_MIN_LEN && droce_crc32_have_vclmul())
		reg = droce_crc32_vclmul(reg, buf, len);
	else if (use_vclmul256(len))
		reg = droce_crc32_vclmul256(reg, buf, len);
	else if (len >= CLMUL_MIN_LEN && droce_crc32_have_clmul())
		reg = droce_crc32_clmul(reg, buf, len);
	else
		reg = droce_crc32_sw(reg, buf, len);
	return ~reg;
}
