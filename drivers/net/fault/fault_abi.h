/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_FAULT_ABI_H
#define DROCE_FAULT_ABI_H

/**
 * @file
 * The driver side of DPDK 22.11 that net_fault needs, declared here
 * because Debian 12 does not ship it.
 *
 * A poll-mode driver is written against ethdev_driver.h,
 * bus_vdev_driver.h and dev_driver.h. Debian's libdpdk-dev 22.11.x
 * installs none of them, although librte_ethdev.so.23 and
 * librte_bus_vdev.so.23 export every function they declare (version node
 * INTERNAL). This header states, in droce's words, the part of that
 * interface the fault driver uses: the layouts of the driver, device,
 * vdev, ethdev and ethdev data structures, the table of device
 * operations, and the prototypes of the INTERNAL functions called.
 *
 * It matches DPDK 22.11 (LTS) only. The driver reaches it through
 * fault_drv.h, and only where DPDK's own driver headers are not
 * installed; meson then refuses any DPDK but 22.11.x at configure time
 * (drivers/net/fault/meson.build), and the #error below is a second
 * guard.
 * The member order and types follow DPDK v22.11's own sources. Each
 * offset the driver relies on was then read back from the machine code
 * of Debian 12's amd64 libraries (22.11.11), e.g. with
 *   objdump -d --no-show-raw-insn /usr/lib/x86_64-linux-gnu/librte_ethdev.so.23
 * in rte_eth_dev_allocate(), rte_eth_dev_release_port(), rte_eth_link_get(),
 * rte_eth_dev_socket_id() and the public functions that call each
 * operation, and in the vdev bus' probe, remove and DMA-map paths. Those
 * numbers are asserted at the end of this file, and the probe function
 * cross-checks the layouts against the running libraries before it
 * touches anything (fault_abi.c). (One copy of those sources in
 * circulation has an extra "netns" member in rte_device and after
 * rte_eth_dev_data.name; Debian's binaries have neither.)
 *
 * Where the installed public headers define something (rte_ethdev.h,
 * rte_ethdev_core.h, rte_dev.h, rte_devargs.h), it is used from there.
 *
 * Two rules keep the driver safe with a partial declaration:
 *  - structures the libraries allocate (rte_eth_dev, rte_eth_dev_data,
 *    rte_vdev_device) are only ever used through pointers, and are
 *    declared in full up to their last member;
 *  - structures the driver allocates (eth_dev_ops, rte_vdev_driver) have
 *    their real size, so the libraries never read past their end:
 *    eth_dev_ops is typed up to the last callback the driver fills and
 *    padded with empty slots to the size of DPDK 22.11's table.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>

#include <rte_version.h>

#if RTE_VERSION < RTE_VERSION_NUM(22, 11, 0, 0) || \
	RTE_VERSION >= RTE_VERSION_NUM(22, 12, 0, 0)
#error "fault_abi.h is the DPDK 22.11 driver ABI: build against DPDK's driver headers"
#endif

#if defined(_RTE_ETHDEV_DRIVER_H_) || defined(DEV_DRIVER_H) || \
	defined(BUS_VDEV_DRIVER_H)
#error "fault_abi.h replaces DPDK's driver headers: include one or the other"
#endif

#include <rte_common.h>
#include <rte_compat.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_ethdev_core.h>
#include <rte_bus_vdev.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- EAL: generic driver and device ---------------------------------- */

/** A driver as the EAL sees it (embedded in each bus' driver type). */
struct rte_driver {
	RTE_TAILQ_ENTRY(rte_driver) next;
	const char *name;		/**< what the bus matches devices against */
	const char *alias;		/**< second name, or NULL */
};

/** A device as the EAL sees it (embedded in each bus' device type). */
struct rte_device {
	RTE_TAILQ_ENTRY(rte_device) next;
	const char *name;
	const char *bus_info;
	const struct rte_driver *driver;	/**< set by the bus once probed */
	const struct rte_bus *bus;
	int numa_node;
	struct rte_devargs *devargs;	/**< user's arguments, args after the name */
};

/* ---- vdev bus ---------------------------------------------------------- */

/** A virtual device instance (one per --vdev or rte_vdev_init()). */
struct rte_vdev_device {
	RTE_TAILQ_ENTRY(rte_vdev_device) next;
	struct rte_device device;
};

/** A virtual device driver, registered with rte_vdev_register(). */
struct rte_vdev_driver {
	RTE_TAILQ_ENTRY(rte_vdev_driver) next;
	struct rte_driver driver;
	int (*probe)(struct rte_vdev_device *dev);
	int (*remove)(struct rte_vdev_device *dev);
	int (*dma_map)(struct rte_vdev_device *dev, void *addr,
		       uint64_t iova, size_t len);
	int (*dma_unmap)(struct rte_vdev_device *dev, void *addr,
			 uint64_t iova, size_t len);
	uint32_t drv_flags;
};

/**
 * Add a driver to the vdev bus; call it from a constructor, before
 * rte_eal_init() scans the bus.
 */
__rte_internal
void rte_vdev_register(struct rte_vdev_driver *driver);

/** Take a driver off the vdev bus. */
__rte_internal
void rte_vdev_unregister(struct rte_vdev_driver *driver);

/**
 * Register vdev driver @p vdrv as @p nm when the program starts, as
 * 22.11's bus_vdev_driver.h does (its RTE_PMD_EXPORT_NAME() still takes
 * a second argument).
 */
#define RTE_PMD_REGISTER_VDEV(nm, vdrv) \
RTE_INIT(vdrvinitfn_ ## vdrv) \
{ \
	(vdrv).driver.name = RTE_STR(nm); \
	rte_vdev_register(&(vdrv)); \
} \
RTE_PMD_EXPORT_NAME(nm, __COUNTER__)

/* ---- ethdev ------------------------------------------------------------ */

struct rte_eth_dev;
struct rte_eth_dev_data;
struct rte_eth_rxtx_callback;
struct rte_intr_handle;

/**
 * The operations an ethdev driver provides, called by the rte_eth_*()
 * control functions. Members up to tx_queue_release carry their types;
 * the rest of DPDK 22.11's table (tx_done_cleanup ... cman_config_get,
 * 66 callbacks) is reserved space the driver leaves empty, which ethdev
 * reports as -ENOTSUP.
 */
struct eth_dev_ops {
	int (*dev_configure)(struct rte_eth_dev *dev);
	int (*dev_start)(struct rte_eth_dev *dev);
	int (*dev_stop)(struct rte_eth_dev *dev);
	int (*dev_set_link_up)(struct rte_eth_dev *dev);
	int (*dev_set_link_down)(struct rte_eth_dev *dev);
	int (*dev_close)(struct rte_eth_dev *dev);
	int (*dev_reset)(struct rte_eth_dev *dev);
	int (*link_update)(struct rte_eth_dev *dev, int wait_to_complete);
	int (*is_removed)(struct rte_eth_dev *dev);

	int (*promiscuous_enable)(struct rte_eth_dev *dev);
	int (*promiscuous_disable)(struct rte_eth_dev *dev);
	int (*allmulticast_enable)(struct rte_eth_dev *dev);
	int (*allmulticast_disable)(struct rte_eth_dev *dev);
	void (*mac_addr_remove)(struct rte_eth_dev *dev, uint32_t index);
	int (*mac_addr_add)(struct rte_eth_dev *dev,
			    struct rte_ether_addr *mac_addr,
			    uint32_t index, uint32_t vmdq);
	int (*mac_addr_set)(struct rte_eth_dev *dev,
			    struct rte_ether_addr *mac_addr);
	int (*set_mc_addr_list)(struct rte_eth_dev *dev,
				struct rte_ether_addr *mc_addr_set,
				uint32_t nb_mc_addr);
	int (*mtu_set)(struct rte_eth_dev *dev, uint16_t mtu);

	int (*stats_get)(struct rte_eth_dev *dev, struct rte_eth_stats *stats);
	int (*stats_reset)(struct rte_eth_dev *dev);
	int (*xstats_get)(struct rte_eth_dev *dev, struct rte_eth_xstat *stats,
			  unsigned int n);
	int (*xstats_reset)(struct rte_eth_dev *dev);
	int (*xstats_get_names)(struct rte_eth_dev *dev,
				struct rte_eth_xstat_name *names,
				unsigned int size);
	int (*queue_stats_mapping_set)(struct rte_eth_dev *dev,
				       uint16_t queue_id, uint8_t stat_idx,
				       uint8_t is_rx);

	int (*dev_infos_get)(struct rte_eth_dev *dev,
			     struct rte_eth_dev_info *dev_info);
	void (*rxq_info_get)(struct rte_eth_dev *dev, uint16_t rx_queue_id,
			     struct rte_eth_rxq_info *qinfo);
	void (*txq_info_get)(struct rte_eth_dev *dev, uint16_t tx_queue_id,
			     struct rte_eth_txq_info *qinfo);
	int (*rx_burst_mode_get)(struct rte_eth_dev *dev, uint16_t queue_id,
				 struct rte_eth_burst_mode *mode);
	int (*tx_burst_mode_get)(struct rte_eth_dev *dev, uint16_t queue_id,
				 struct rte_eth_burst_mode *mode);
	int (*fw_version_get)(struct rte_eth_dev *dev, char *fw_version,
			      size_t fw_size);
	const uint32_t *(*dev_supported_ptypes_get)(struct rte_eth_dev *dev);
	int (*dev_ptypes_set)(struct rte_eth_dev *dev, uint32_t ptype_mask);

	int (*vlan_filter_set)(struct rte_eth_dev *dev, uint16_t vlan_id,
			       int on);
	int (*vlan_tpid_set)(struct rte_eth_dev *dev, enum rte_vlan_type type,
			     uint16_t tpid);
	void (*vlan_strip_queue_set)(struct rte_eth_dev *dev,
				     uint16_t rx_queue_id, int on);
	int (*vlan_offload_set)(struct rte_eth_dev *dev, int mask);
	int (*vlan_pvid_set)(struct rte_eth_dev *dev, uint16_t vlan_id, int on);

	int (*rx_queue_start)(struct rte_eth_dev *dev, uint16_t queue_id);
	int (*rx_queue_stop)(struct rte_eth_dev *dev, uint16_t queue_id);
	int (*tx_queue_start)(struct rte_eth_dev *dev, uint16_t queue_id);
	int (*tx_queue_stop)(struct rte_eth_dev *dev, uint16_t queue_id);
	int (*rx_queue_setup)(struct rte_eth_dev *dev, uint16_t rx_queue_id,
			      uint16_t nb_rx_desc, unsigned int socket_id,
			      const struct rte_eth_rxconf *rx_conf,
			      struct rte_mempool *mb_pool);
	void (*rx_queue_release)(struct rte_eth_dev *dev, uint16_t queue_id);
	int (*rx_queue_intr_enable)(struct rte_eth_dev *dev,
				    uint16_t rx_queue_id);
	int (*rx_queue_intr_disable)(struct rte_eth_dev *dev,
				     uint16_t rx_queue_id);
	int (*tx_queue_setup)(struct rte_eth_dev *dev, uint16_t tx_queue_id,
			      uint16_t nb_tx_desc, unsigned int socket_id,
			      const struct rte_eth_txconf *tx_conf);
	void (*tx_queue_release)(struct rte_eth_dev *dev, uint16_t queue_id);

	/** The 66 later callbacks of DPDK 22.11, never filled here. */
	void (*reserved[66])(void);
};

/**
 * One ethdev port, per process: fast-path entry points first, then the
 * pointers to its shared data, operations and bus device. The array
 * rte_eth_devices[] holds RTE_MAX_ETHPORTS of them.
 */
struct rte_eth_dev {
	eth_rx_burst_t rx_pkt_burst;
	eth_tx_burst_t tx_pkt_burst;
	eth_tx_prep_t tx_pkt_prepare;
	eth_rx_queue_count_t rx_queue_count;
	eth_rx_descriptor_status_t rx_descriptor_status;
	eth_tx_descriptor_status_t tx_descriptor_status;
	struct rte_eth_dev_data *data;
	void *process_private;
	const struct eth_dev_ops *dev_ops;
	struct rte_device *device;
	struct rte_intr_handle *intr_handle;
	struct rte_eth_dev_cb_list link_intr_cbs;
	struct rte_eth_rxtx_callback *post_rx_burst_cbs[RTE_MAX_QUEUES_PER_PORT];
	struct rte_eth_rxtx_callback *pre_tx_burst_cbs[RTE_MAX_QUEUES_PER_PORT];
	enum rte_eth_dev_state state;
	void *security_ctx;
} __rte_cache_aligned;

/**
 * The part of a port kept in shared memory (one slot per port in the
 * "rte_eth_dev_data" memzone). ethdev frees rx_queues, tx_queues,
 * dev_private, mac_addrs and hash_mac_addrs with rte_free() when the
 * port is released.
 */
struct rte_eth_dev_data {
	char name[RTE_ETH_NAME_MAX_LEN];
	void **rx_queues;		/**< driver queue objects, by queue id */
	void **tx_queues;
	uint16_t nb_rx_queues;
	uint16_t nb_tx_queues;
	struct rte_eth_dev_sriov sriov;
	void *dev_private;		/**< the driver's own per-port state */
	struct rte_eth_link dev_link;	/**< written as one 64-bit word */
	struct rte_eth_conf dev_conf;	/**< as given to rte_eth_dev_configure() */
	uint16_t mtu;
	uint32_t min_rx_buf_size;
	uint64_t rx_mbuf_alloc_failed;
	struct rte_ether_addr *mac_addrs;	/**< [0] is the default address */
	uint64_t mac_pool_sel[RTE_ETH_NUM_RECEIVE_MAC_ADDR];
	struct rte_ether_addr *hash_mac_addrs;
	uint16_t port_id;
	__extension__
	uint8_t promiscuous : 1,
		scattered_rx : 1,
		all_multicast : 1,
		dev_started : 1,
		lro : 1,
		dev_configured : 1,
		flow_configured : 1;
	uint8_t rx_queue_state[RTE_MAX_QUEUES_PER_PORT];
	uint8_t tx_queue_state[RTE_MAX_QUEUES_PER_PORT];
	uint32_t dev_flags;		/**< RTE_ETH_DEV_* */
	int numa_node;
	struct rte_vlan_filter_conf vlan_filter_conf;
	struct rte_eth_dev_owner owner;
	uint16_t representor_id;
	uint16_t backer_port_id;
	pthread_mutex_t flow_ops_mutex;
} __rte_cache_aligned;

/** Every port of this process, indexed by port id. */
extern struct rte_eth_dev rte_eth_devices[];

/**
 * Take a free port slot and name it. The slot's data is zeroed except
 * name, port_id, mtu (RTE_ETHER_MTU) and backer_port_id
 * (RTE_MAX_ETHPORTS); its state stays RTE_ETH_DEV_UNUSED until
 * rte_eth_dev_probing_finish().
 *
 * @return the port, or NULL if the name is taken or no slot is free.
 */
__rte_internal
struct rte_eth_dev *rte_eth_dev_allocate(const char *name);

/** @return the port of that name, attached or not, or NULL. */
__rte_internal
struct rte_eth_dev *rte_eth_dev_allocated(const char *name);

/**
 * Announce a fully set-up port: install its fast-path functions, send
 * RTE_ETH_EVENT_NEW and mark it RTE_ETH_DEV_ATTACHED.
 */
__rte_internal
void rte_eth_dev_probing_finish(struct rte_eth_dev *dev);

/**
 * Give a port slot back: send RTE_ETH_EVENT_DESTROY (if attached), free
 * what rte_eth_dev_data lists as ethdev-freed, and zero the slot.
 *
 * @return 0, or -EINVAL for a NULL port.
 */
__rte_internal
int rte_eth_dev_release_port(struct rte_eth_dev *eth_dev);

/* ---- what the build can check ------------------------------------------ */

#define FAULT_ABI_ASSERT(cond) _Static_assert(cond, \
	"fault_abi.h does not match this DPDK: " #cond)

#define FAULT_ABI_SAME_TYPE(a, b) __builtin_types_compatible_p( \
	__typeof__(a), __typeof__(b))

/* Against the installed public headers, on every architecture. */
FAULT_ABI_ASSERT(RTE_ETH_NAME_MAX_LEN == RTE_DEV_NAME_MAX_LEN);
FAULT_ABI_ASSERT(sizeof(struct rte_eth_link) == sizeof(uint64_t));
FAULT_ABI_ASSERT(_Alignof(struct rte_eth_link) == sizeof(uint64_t));
FAULT_ABI_ASSERT(sizeof(((struct rte_devargs *)0)->name) ==
		 RTE_DEV_NAME_MAX_LEN);
FAULT_ABI_ASSERT(FAULT_ABI_SAME_TYPE(
	((struct rte_eth_dev *)0)->rx_pkt_burst,
	((struct rte_eth_fp_ops *)0)->rx_pkt_burst));
FAULT_ABI_ASSERT(FAULT_ABI_SAME_TYPE(
	((struct rte_eth_dev *)0)->tx_pkt_burst,
	((struct rte_eth_fp_ops *)0)->tx_pkt_burst));
FAULT_ABI_ASSERT(FAULT_ABI_SAME_TYPE(
	((struct rte_eth_dev *)0)->tx_pkt_prepare,
	((struct rte_eth_fp_ops *)0)->tx_pkt_prepare));
FAULT_ABI_ASSERT(FAULT_ABI_SAME_TYPE(
	((struct rte_eth_dev *)0)->rx_queue_count,
	((struct rte_eth_fp_ops *)0)->rx_queue_count));
FAULT_ABI_ASSERT(FAULT_ABI_SAME_TYPE(
	((struct rte_eth_dev *)0)->rx_descriptor_status,
	((struct rte_eth_fp_ops *)0)->rx_descriptor_status));
FAULT_ABI_ASSERT(FAULT_ABI_SAME_TYPE(
	((struct rte_eth_dev *)0)->tx_descriptor_status,
	((struct rte_eth_fp_ops *)0)->tx_descriptor_status));
/* 47 typed callbacks and 66 reserved: DPDK 22.11's 113. */
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, reserved) ==
		 47 * sizeof(void (*)(void)));
FAULT_ABI_ASSERT(sizeof(struct eth_dev_ops) == 113 * sizeof(void (*)(void)));

/*
 * Numbers read from Debian 12's amd64 librte_ethdev.so.23 and
 * librte_bus_vdev.so.23 (22.11.11), built with RTE_MAX_ETHPORTS 32 and
 * RTE_MAX_QUEUES_PER_PORT 1024. Another build configuration needs them
 * re-read (see the objdump recipe at the top).
 */
#if defined(RTE_ARCH_X86_64)
FAULT_ABI_ASSERT(RTE_MAX_ETHPORTS == 32);
FAULT_ABI_ASSERT(RTE_MAX_QUEUES_PER_PORT == 1024);
FAULT_ABI_ASSERT(RTE_CACHE_LINE_SIZE == 64);

/* librte_bus_vdev (driver matching, probe, remove, DMA map, allocation)
 * and librte_eal's rte_dev_*() and rte_driver_name() accessors */
FAULT_ABI_ASSERT(offsetof(struct rte_driver, name) == 0x10);
FAULT_ABI_ASSERT(offsetof(struct rte_driver, alias) == 0x18);
FAULT_ABI_ASSERT(offsetof(struct rte_device, name) == 0x10);
FAULT_ABI_ASSERT(offsetof(struct rte_device, bus_info) == 0x18);
FAULT_ABI_ASSERT(offsetof(struct rte_device, driver) == 0x20);
FAULT_ABI_ASSERT(offsetof(struct rte_device, bus) == 0x28);
FAULT_ABI_ASSERT(offsetof(struct rte_device, numa_node) == 0x30);
FAULT_ABI_ASSERT(offsetof(struct rte_device, devargs) == 0x38);
FAULT_ABI_ASSERT(offsetof(struct rte_vdev_device, device) == 0x10);
FAULT_ABI_ASSERT(sizeof(struct rte_vdev_device) == 0x50);
FAULT_ABI_ASSERT(offsetof(struct rte_vdev_driver, driver) == 0x10);
FAULT_ABI_ASSERT(offsetof(struct rte_vdev_driver, probe) == 0x30);
FAULT_ABI_ASSERT(offsetof(struct rte_vdev_driver, remove) == 0x38);
FAULT_ABI_ASSERT(offsetof(struct rte_vdev_driver, dma_map) == 0x40);
FAULT_ABI_ASSERT(offsetof(struct rte_vdev_driver, dma_unmap) == 0x48);
FAULT_ABI_ASSERT(offsetof(struct rte_vdev_driver, drv_flags) == 0x50);

/* librte_ethdev: rte_eth_devices[] is 0x81000 bytes, 32 ports */
FAULT_ABI_ASSERT(sizeof(struct rte_eth_dev) == 0x4080);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev, data) == 0x30);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev, process_private) == 0x38);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev, dev_ops) == 0x40);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev, device) == 0x48);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev, intr_handle) == 0x50);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev, state) == 0x4068);

/* rte_eth_dev_allocate(), _release_port(), _link_get(), _socket_id() */
FAULT_ABI_ASSERT(sizeof(struct rte_eth_dev_data) == 0x1800);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, rx_queues) == 0x40);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, tx_queues) == 0x48);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, dev_private) == 0x60);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, dev_link) == 0x68);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, dev_conf) == 0x70);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, dev_conf) +
		 offsetof(struct rte_eth_conf, intr_conf) == 0x948);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, mtu) == 0x950);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, mac_addrs) == 0x960);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, hash_mac_addrs) == 0xd68);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, port_id) == 0xd70);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, rx_queue_state) == 0xd73);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, numa_node) == 0x1578);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, backer_port_id) == 0x17ca);
FAULT_ABI_ASSERT(offsetof(struct rte_eth_dev_data, flow_ops_mutex) == 0x17d0);

/* the callback each rte_eth_*() control function calls */
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, dev_configure) == 0x0);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, dev_start) == 0x8);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, dev_stop) == 0x10);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, dev_set_link_up) == 0x18);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, dev_set_link_down) == 0x20);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, dev_close) == 0x28);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, dev_reset) == 0x30);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, link_update) == 0x38);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, is_removed) == 0x40);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, promiscuous_enable) == 0x48);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, promiscuous_disable) == 0x50);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, allmulticast_enable) == 0x58);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, allmulticast_disable) == 0x60);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, mac_addr_set) == 0x78);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, mtu_set) == 0x88);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, stats_get) == 0x90);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, stats_reset) == 0x98);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, xstats_get) == 0xa0);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, xstats_reset) == 0xa8);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, xstats_get_names) == 0xb0);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, dev_infos_get) == 0xc0);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, rxq_info_get) == 0xc8);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, fw_version_get) == 0xe8);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, rx_queue_setup) == 0x148);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, rx_queue_release) == 0x150);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, tx_queue_setup) == 0x168);
FAULT_ABI_ASSERT(offsetof(struct eth_dev_ops, tx_queue_release) == 0x170);
/* rte_eth_cman_config_get() calls the last one, at 0x380 */
FAULT_ABI_ASSERT(sizeof(struct eth_dev_ops) == 0x388);
#endif /* RTE_ARCH_X86_64 */

/* ---- what only the running libraries can tell (fault_abi.c) ----------- */

/**
 * Check the device and driver layouts against the EAL's own accessors
 * (rte_dev_name(), rte_dev_devargs(), rte_driver_name(), ...).
 *
 * @return 0, or -ENOTSUP with an error logged if they disagree.
 */
int droce_fault_abi_check_vdev(const struct rte_vdev_device *vdev,
			       const struct rte_vdev_driver *drv);

/**
 * Check an attached port's rte_eth_dev and rte_eth_dev_data against
 * what the public rte_eth_*() getters return for it.
 *
 * @return 0, or -ENOTSUP with an error logged if they disagree.
 */
int droce_fault_abi_check_port(uint16_t port_id);

/**
 * Check a port just returned by rte_eth_dev_allocate(name): its name, its
 * place in rte_eth_devices[], the defaults ethdev wrote, and the distance
 * between its data slot and that of another port.
 *
 * @return 0, or -ENOTSUP with an error logged if they disagree.
 */
int droce_fault_abi_check_new_port(const struct rte_eth_dev *dev,
				   const char *name, uint16_t other_port);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_FAULT_ABI_H */
