/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_FAULT_DRV_H
#define DROCE_FAULT_DRV_H

/**
 * @file
 * The DPDK driver interface net_fault is written against, from one of
 * two places, chosen by meson (drivers/net/fault/meson.build):
 *
 *  - DPDK's own driver headers, ethdev_driver.h and bus_vdev_driver.h
 *    (with dev_driver.h), where the DPDK being built against installs
 *    them: any version droce builds with. meson then defines
 *    FAULT_DPDK_DRIVER_HEADERS.
 *  - fault_abi.h, droce's declaration of the same interface, where they
 *    are missing, as in Debian 12's libdpdk-dev: DPDK 22.11 only, which
 *    meson enforces.
 *
 * The driver reads the same either way. Only droce's own declarations
 * need the probe's cross-checks against the running libraries; with
 * DPDK's headers they are no-ops.
 */

#ifdef FAULT_DPDK_DRIVER_HEADERS

#include <stdint.h>

#include <rte_common.h>
#include <ethdev_driver.h>
#include <bus_vdev_driver.h>

static inline int
droce_fault_abi_check_vdev(const struct rte_vdev_device *vdev __rte_unused,
			   const struct rte_vdev_driver *drv __rte_unused)
{
	return 0;
}

static inline int
droce_fault_abi_check_port(uint16_t port_id __rte_unused)
{
	return 0;
}

static inline int
droce_fault_abi_check_new_port(const struct rte_eth_dev *dev __rte_unused,
			       const char *name __rte_unused,
			       uint16_t other_port __rte_unused)
{
	return 0;
}

#else

#include "fault_abi.h"

#endif /* FAULT_DPDK_DRIVER_HEADERS */

#endif /* DROCE_FAULT_DRV_H */
