/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_DPDK_COMPAT_H
#define DROCE_DPDK_COMPAT_H

/**
 * @file
 * Where the DPDK releases droce builds with (22.11, 24.11 and 25.11:
 * meson.build refuses others) differ in an API droce uses, the
 * difference is bridged here, once, by a version check; the rest of
 * droce is written against the names below.
 *
 *  - telemetry: rte_tel_data_add_{dict,array}_u64() became _uint() in
 *    23.03, and the old names went in 25.11: droce_tel_dict_u64(),
 *    droce_tel_array_u64().
 *  - rte_net_crc: a global algorithm up to 24.11, a context per user
 *    from 25.03: droce_net_crc32_eth().
 *  - the ethdev driver interface: eth_dev_ops.stats_get takes the
 *    per-queue counters apart from 25.11: DROCE_ETH_STATS_GET_QSTATS.
 */

#include <stdint.h>

#include <rte_version.h>

/* ---- telemetry ----------------------------------------------------- */

#include <rte_telemetry.h>

/** Add the unsigned value @p v to telemetry dictionary @p d as @p name. */
static inline int
droce_tel_dict_u64(struct rte_tel_data *d, const char *name, uint64_t v)
{
#if RTE_VERSION >= RTE_VERSION_NUM(23, 3, 0, 0)
	return rte_tel_data_add_dict_uint(d, name, v);
#else
	return rte_tel_data_add_dict_u64(d, name, v);
#endif
}

/** Append the unsigned value @p v to telemetry array @p d. */
static inline int
droce_tel_array_u64(struct rte_tel_data *d, uint64_t v)
{
#if RTE_VERSION >= RTE_VERSION_NUM(23, 3, 0, 0)
	return rte_tel_data_add_array_uint(d, v);
#else
	return rte_tel_data_add_array_u64(d, v);
#endif
}

/* ---- rte_net_crc (what droce's own CRC is checked against) ------- */

#include <rte_net_crc.h>

/**
 * The Ethernet CRC-32 of @p len bytes at @p data as DPDK's rte_net_crc
 * computes it with algorithm @p alg (DPDK falls back to the scalar one
 * where the CPU lacks it). @return the CRC, or 0 if no context could be
 * made (25.03 on).
 */
static inline uint32_t
droce_net_crc32_eth(enum rte_net_crc_alg alg, const void *data, uint32_t len)
{
#if RTE_VERSION >= RTE_VERSION_NUM(25, 3, 0, 0)
	struct rte_net_crc *ctx = rte_net_crc_set_alg(alg, RTE_NET_CRC32_ETH);
	uint32_t crc;

	if (ctx == NULL)
		return 0;
	crc = rte_net_crc_calc(ctx, data, len);
	rte_net_crc_free(ctx);
	return crc;
#else
	rte_net_crc_set_alg(alg);
	return rte_net_crc_calc(data, len, RTE_NET_CRC32_ETH);
#endif
}

/* ---- the ethdev driver interface ----------------------------------- */

/**
 * The parameters of an eth_dev_ops.stats_get callback after its first
 * two: `fn(struct rte_eth_dev *dev, struct rte_eth_stats *stats
 * DROCE_ETH_STATS_GET_QSTATS)`. From 25.11 on ethdev passes the
 * per-queue counters apart, which a driver may leave alone.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(25, 11, 0, 0)
#define DROCE_ETH_STATS_GET_QSTATS \
	, struct eth_queue_stats *qstats __rte_unused
#else
#define DROCE_ETH_STATS_GET_QSTATS
#endif

#endif /* DROCE_DPDK_COMPAT_H */
