/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Run-time checks of fault_abi.h: before the driver writes into a
 * structure it declared itself, it reads the same fields through the
 * libraries' own public getters and compares. A mismatch means the
 * installed DPDK is not the one fault_abi.h describes; the probe then
 * fails instead of corrupting memory.
 */

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_version.h>

#include "fault_pvt.h"

static int
fault_abi_mismatch(const char *what)
{
	FAULT_LOG(ERR, "%s: %s differs from fault_abi.h (DPDK 22.11 driver ABI); "
		  "refusing to load", rte_version(), what);
	return -ENOTSUP;
}

/* The dynamic symbol table knows how large rte_eth_devices[] really is. */
static int
fault_abi_check_devices_size(void)
{
	const ElfW(Sym) *sym;
	void *extra = NULL;
	Dl_info info;

	if (dladdr1(rte_eth_devices, &info, &extra, RTLD_DL_SYMENT) == 0 ||
	    extra == NULL || info.dli_sname == NULL ||
	    strcmp(info.dli_sname, "rte_eth_devices") != 0)
		return 0;	/* linked statically: nothing to compare with */
	sym = extra;
	if (sym->st_size != sizeof(struct rte_eth_dev) * RTE_MAX_ETHPORTS)
		return fault_abi_mismatch("sizeof(struct rte_eth_dev)");
	return 0;
}

int
droce_fault_abi_check_vdev(const struct rte_vdev_device *vdev,
			   const struct rte_vdev_driver *drv)
{
	const struct rte_device *d = &vdev->device;

	if (rte_dev_name(d) != d->name || d->name == NULL ||
	    rte_dev_bus_info(d) != d->bus_info ||
	    rte_dev_driver(d) != d->driver ||
	    rte_dev_bus(d) != d->bus ||
	    rte_dev_numa_node(d) != d->numa_node ||
	    rte_dev_devargs(d) != d->devargs)
		return fault_abi_mismatch("struct rte_device");
	if (d->devargs != NULL && strcmp(d->devargs->name, d->name) != 0)
		return fault_abi_mismatch("struct rte_vdev_device");
	if (rte_driver_name(&drv->driver) != drv->driver.name)
		return fault_abi_mismatch("struct rte_vdev_driver");
	return 0;
}

int
droce_fault_abi_check_port(uint16_t port_id)
{
	const struct rte_eth_dev *dev = &rte_eth_devices[port_id];
	const struct rte_eth_dev_data *data = dev->data;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	uint16_t by_name, mtu;

	if (!rte_eth_dev_is_valid_port(port_id) ||
	    dev->state != RTE_ETH_DEV_ATTACHED || data == NULL)
		return fault_abi_mismatch("rte_eth_dev.state");
	if (data->port_id != port_id)
		return fault_abi_mismatch("rte_eth_dev_data.port_id");
	if (rte_eth_dev_get_name_by_port(port_id, name) != 0 ||
	    strcmp(name, data->name) != 0 ||
	    rte_eth_dev_get_port_by_name(data->name, &by_name) != 0 ||
	    by_name != port_id)
		return fault_abi_mismatch("rte_eth_dev_data.name");
	if (rte_eth_dev_get_mtu(port_id, &mtu) != 0 || mtu != data->mtu)
		return fault_abi_mismatch("rte_eth_dev_data.mtu");
	if (rte_eth_dev_socket_id(port_id) != data->numa_node)
		return fault_abi_mismatch("rte_eth_dev_data.numa_node");
	if (data->mac_addrs == NULL || rte_eth_macaddr_get(port_id, &mac) != 0 ||
	    !rte_is_same_ether_addr(&mac, &data->mac_addrs[0]))
		return fault_abi_mismatch("rte_eth_dev_data.mac_addrs");
	if (rte_eth_promiscuous_get(port_id) != data->promiscuous ||
	    rte_eth_allmulticast_get(port_id) != data->all_multicast)
		return fault_abi_mismatch("rte_eth_dev_data flags");
	/* dev_info needs the bus to have bound a driver: not so mid-probe */
	if (dev->device != NULL && dev->device->driver != NULL) {
		if (rte_eth_dev_info_get(port_id, &info) != 0 ||
		    info.device != dev->device ||
		    info.dev_flags != &data->dev_flags ||
		    info.nb_rx_queues != data->nb_rx_queues ||
		    info.nb_tx_queues != data->nb_tx_queues ||
		    strcmp(info.driver_name, dev->device->driver->name) != 0)
			return fault_abi_mismatch("rte_eth_dev.device");
	}
	return fault_abi_check_devices_size();
}

int
droce_fault_abi_check_new_port(const struct rte_eth_dev *dev,
			       const char *name, uint16_t other_port)
{
	const struct rte_eth_dev_data *data = dev->data;
	const struct rte_eth_dev_data *other = rte_eth_devices[other_port].data;
	ptrdiff_t distance;

	if (data == NULL || strcmp(data->name, name) != 0)
		return fault_abi_mismatch("rte_eth_dev.data or its name");
	if (data->port_id >= RTE_MAX_ETHPORTS ||
	    &rte_eth_devices[data->port_id] != dev ||
	    rte_eth_dev_allocated(name) != dev)
		return fault_abi_mismatch("rte_eth_dev_data.port_id");
	if (dev->state != RTE_ETH_DEV_UNUSED || dev->dev_ops != NULL ||
	    dev->device != NULL || data->dev_private != NULL)
		return fault_abi_mismatch("struct rte_eth_dev");
	/* the two fields rte_eth_dev_allocate() sets besides name and id */
	if (data->mtu != RTE_ETHER_MTU ||
	    data->backer_port_id != RTE_MAX_ETHPORTS)
		return fault_abi_mismatch("rte_eth_dev_data.mtu/backer_port_id");
	/* every port's data is one slot of a single array */
	if (other == NULL || data->port_id == other_port)
		return fault_abi_mismatch("rte_eth_dev.data");
	distance = (const char *)data - (const char *)other;
	if (distance != ((ptrdiff_t)data->port_id - (ptrdiff_t)other_port) *
			(ptrdiff_t)sizeof(struct rte_eth_dev_data))
		return fault_abi_mismatch("sizeof(struct rte_eth_dev_data)");
	return fault_abi_check_devices_size();
}
