/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_FAULT_RSS_H
#define DROCE_FAULT_RSS_H

/**
 * @file
 * The RSS of net_fault's switch ports (fault_rxtx.c): the hash a NIC
 * gives a frame. Public DPDK headers only, so that tests can check it
 * against the specification's vectors without the driver's.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>

/** A switch port's RSS redirection table's entries. */
#define FAULT_RETA_SIZE 128
/** Its Toeplitz key's bytes. */
#define FAULT_RSS_KEY_LEN 40
/** The hash functions it has: on IPv4 and IPv6 addresses and UDP ports. */
#define FAULT_RSS_OFFLOADS (RTE_ETH_RSS_NONFRAG_IPV4_UDP | \
			    RTE_ETH_RSS_NONFRAG_IPV6_UDP)

/**
 * The Toeplitz hash a NIC's RSS gives an IPv4 or IPv6 frame @p eth with
 * UDP in it (of @p len bytes), under @p key, for the hash functions
 * @p hf (RTE_ETH_RSS_*).
 * @return false for any other frame (*hash then unchanged).
 */
bool droce_fault_rss_hash(const uint8_t *eth, uint32_t len,
			  const uint8_t key[FAULT_RSS_KEY_LEN], uint64_t hf,
			  uint32_t *hash);

#endif /* DROCE_FAULT_RSS_H */
