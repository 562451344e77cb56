/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * What the engine's start-up files share (droce_engine.c, droce_dev.c,
 * droce_port.c, droce_shard.c): nothing outside them uses it.
 */

#ifndef DROCE_START_H
#define DROCE_START_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mempool.h>

#include "droce_engine_pvt.h"

/* Why the engine does not start: logged, and the first reason given kept
 * for droce_engine_start_error(), which the verbs layer passes on. */
void droce_start_error(const char *fmt, ...) __rte_format_printf(1, 2);

/* The largest IB MTU whose packets fit an Ethernet MTU of @p eth_mtu. */
enum ibv_mtu droce_active_mtu(uint16_t eth_mtu);

/* The queues of ring pair @p pair (@p len characters): as many as the
 * most engine lcores of a device on either end. */
unsigned int droce_port_ring_queues(const char *pair, size_t len);

/* The port a device spec names, probing it if it is not there yet.
 * @return its id, or a negative errno. */
int droce_port_find(const char *spec, unsigned int socket);

/* Whether @p port reads what it sends at its virtual address (a virtual
 * device), where a NIC would need the memory mapped for its DMA. */
bool droce_port_reads_va(uint16_t port);

/* Why the port of device @p c did not come up with @p ret, in words into
 * @p why. @return the cause, a negative errno. */
int droce_port_why(const struct droce_dev_cfg *c, int ret, char *why,
		   size_t len);

/* Configure and start the port of @p dev, device @p c, for *@p nshards
 * shards and at least *@p nrxq receive queues (each updated to what the
 * port gives). @return 0 or a negative errno. */
int droce_port_configure(struct droce_dev *dev, const struct droce_dev_cfg *c,
		     uint32_t *nshards, uint16_t *nrxq);

/* Make device @p idx of the configuration, @p c, its mbufs from @p pool,
 * and add it to the engine's. @return 0 or a negative errno. */
int droce_dev_create(const struct droce_dev_cfg *c, unsigned int idx,
		     struct rte_mempool *pool);

#endif /* DROCE_START_H */
