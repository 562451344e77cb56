/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_WIRE_PVT_H
#define DROCE_WIRE_PVT_H

/*
 * Internals of lib/wire that its tests reach: each CRC-32 implementation
 * on its own, so that they can be checked against each other.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Raw CRC register update (no inversion), slice-by-8 tables. */
uint32_t droce_crc32_sw(uint32_t reg, const void *buf, size_t len);

/* Raw CRC register update by carry-less multiplication; len >= 16 and
 * droce_crc32_have_clmul() required. */
uint32_t droce_crc32_clmul(uint32_t reg, const void *buf, size_t len);

/* true if this CPU can run droce_crc32_clmul(). */
bool droce_crc32_have_clmul(void);

/* The same with 512-bit registers (AVX-512 VPCLMULQDQ); len >= 64 and
 * droce_crc32_have_vclmul() required. */
uint32_t droce_crc32_vclmul(uint32_t reg, const void *buf, size_t len);

/* droce_crc32_vclmul() of the @p len bytes at @p src, copied to @p dst
 * as they are read; len a multiple of 64, at least 64. */
uint32_t droce_crc32_vclmul_copy(uint32_t reg, void *dst, const void *src,
				 size_t len);

/* true if this CPU can run droce_crc32_vclmul(). */
bool droce_crc32_have_vclmul(void);

/* The same with 256-bit registers (VPCLMULQDQ with AVX2); len >= 128 and
 * droce_crc32_have_vclmul256() required; the copy's len a multiple of
 * 32. */
uint32_t droce_crc32_vclmul256(uint32_t reg, const void *buf, size_t len);
uint32_t droce_crc32_vclmul256_copy(uint32_t reg, void *dst, const void *src,
				    size_t len);

/* true if this CPU can run the droce_crc32_vclmul256 functions. */
bool droce_crc32_have_vclmul256(void);

/*
 * Each implementation's update over @p len bytes whose first 64 are
 * taken OR @p set (droce_crc32_masked64()): at least 64 bytes (128 for
 * the 256-bit registers), but for the tables, which take any length.
 */
uint32_t droce_crc32_sw_masked64(uint32_t reg, const void *buf, size_t len,
				 const uint8_t set[64]);
uint32_t droce_crc32_clmul_masked64(uint32_t reg, const void *buf,
				    size_t len, const uint8_t set[64]);
uint32_t droce_crc32_vclmul_masked64(uint32_t reg, const void *buf,
				     size_t len, const uint8_t set[64]);
uint32_t droce_crc32_vclmul256_masked64(uint32_t reg, const void *buf,
					size_t len, const uint8_t set[64]);

/* The same over 4 to 63 bytes with AVX-512 VBMI, reading none past them;
 * droce_crc32_have_vbmi() required. */
uint32_t droce_crc32_vbmi_masked_short(uint32_t reg, const void *buf,
				       size_t len, const uint8_t set[64]);

/* The same over 16 to 63 bytes by carry-less multiplication;
 * droce_crc32_have_clmul() required. */
uint32_t droce_crc32_clmul_masked_short(uint32_t reg, const void *buf,
					size_t len, const uint8_t set[64]);

/* true if this CPU can run droce_crc32_vbmi_masked_short(). */
bool droce_crc32_have_vbmi(void);

#endif /* DROCE_WIRE_PVT_H */
