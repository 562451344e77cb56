/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_NEIGH_H
#define DROCE_NEIGH_H

#include "droce_engine_pvt.h"

/*
 * Neighbours: ARP and IPv6 ND (lib/engine/droce_neigh.c).
 */

/**
 * Look up the MAC of @p gid, starting resolution if unknown. One of the
 * device's own GIDs resolves at once to its own MAC (loopback).
 * @return 0 with *mac set, -EAGAIN while resolving, -EHOSTUNREACH.
 */
int droce_neigh_resolve(struct droce_shard *sh, const uint8_t gid[16],
			struct rte_ether_addr *mac, uint64_t now);

/** Retry pending resolutions (called every loop, cheap when idle). */
void droce_neigh_timer(struct droce_shard *sh, uint64_t now);

/**
 * A datagram for QP1 came from @p gid at @p mac: remembered as an ARP
 * request for droce's address is (a free entry or one being resolved),
 * so that the CM's answer need not wait for ARP or ND.
 */
void droce_neigh_heard(struct droce_dev *dev, const uint8_t gid[16],
		       const struct rte_ether_addr *mac);

/** Handle an ARP frame; consumes @p m. */
void droce_neigh_arp_input(struct droce_shard *sh, struct rte_mbuf *m);

/**
 * Handle an ICMPv6 frame (neighbour solicitation/advertisement).
 * @return true if it was ND and @p m is consumed.
 */
bool droce_neigh_nd_input(struct droce_shard *sh, struct rte_mbuf *m);

#endif /* DROCE_NEIGH_H */
