/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_ETH_FAULT_H
#define DROCE_ETH_FAULT_H

/**
 * @file
 * net_fault from an application, as rte_eth_ring.h is net_ring's: make
 * a fault port in front of a port the application has, or a port of one
 * of net_fault's switches, and ask what it needs of its user. The
 * faults, the switch queue and their arguments are net_fault's own
 * (fault_ethdev.c): the caller hands them on as a user wrote them.
 *
 * A fault port sends what it held back (delay=, reorder=) on its own
 * later bursts, rx ones of the same queue number included: an
 * application that polls its receive queues needs no empty tx bursts.
 * A frame it sends to its own address comes back on its receive side.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Put a net_fault port, "net_fault_<name>", in front of port @p port,
 * which it then owns and drives (the application uses the new port
 * alone).
 *
 * @param name
 *   Its name after "net_fault_" (at most 53 characters are kept).
 * @param port
 *   The port to wrap, not started.
 * @param args
 *   net_fault's arguments but port=: "drop=0.05,seed=7", ...; "" for
 *   none.
 * @return
 *   The new port's id, or a negative errno: -EINVAL (bad arguments),
 *   -ENODEV (no such port), -EBUSY (it has an owner), -EEXIST (a port
 *   of that name exists), -ENOMEM.
 */
int droce_eth_fault_wrap(const char *name, uint16_t port, const char *args);

/**
 * Make a port of net_fault's switch @p sw (made with its first port),
 * "net_fault_<name>": what the ports of a switch send reaches the port
 * of its destination address, through a queue in front of that port
 * which may be a bottleneck.
 *
 * @param name
 *   Its name after "net_fault_" (at most 53 characters are kept).
 * @param sw
 *   The switch's name (at most 16 characters).
 * @param nb_queues
 *   Receive and transmit queues it may be configured with (1 to 16).
 * @param socket
 *   NUMA socket of its memory.
 * @param args
 *   net_fault's arguments but port= and switch=: the queue's
 *   (rate_mbps=, queue=, kmin=, ...) and the faults; "" for none.
 * @return
 *   The new port's id, or a negative errno, as droce_eth_fault_wrap()'s
 *   and -ENOSPC (the switch, or the process's switches, full).
 */
int droce_eth_fault_switch_port(const char *name, const char *sw,
				uint16_t nb_queues, unsigned int socket,
				const char *args);

/**
 * Whether port @p port is a net_fault port that reads only memory mapped
 * for its DMA (dma=1), as a NIC behind an IOMMU does: its user maps the
 * memory it sends from with rte_dev_dma_map() first.
 *
 * @return true for such a port; false for any other port, or none.
 */
bool droce_eth_fault_dma_only(uint16_t port);

/**
 * Whether port @p port turns a frame sent to its own MAC address back to
 * its receive queues itself, as a NIC's loopback does: net_fault's ports
 * do, through their faults both ways.
 * @return true for such a port; false for any other port, or none.
 */
bool droce_eth_fault_loopback(uint16_t port);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_ETH_FAULT_H */
