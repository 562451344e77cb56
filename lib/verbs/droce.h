/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_H
#define DROCE_H

/**
 * @file
 * droce's own additions to the verbs API, for tools that want more than
 * <infiniband/verbs.h> says: the counters of a device and of a QP, raw
 * frames through a device's port (the benchmark's yardstick), and a pcap
 * mirror of a device's frames switched on and off at run time. Like a
 * provider's direct-verbs header, it works on the verbs objects droce
 * hands out.
 */

#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_counters.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Counters of a device (its port, as the engine sees it): a uint64_t
 * member for each entry of DROCE_DEV_COUNTERS (droce_counters.h), named
 * as the entry and in its order; the entry describes it.
 */
struct droce_counters {
	DROCE_DEV_COUNTERS(DROCE_COUNTER_MEMBER)
};

/**
 * Counters of a QP: a uint64_t member for each entry of
 * DROCE_QP_COUNTERS (droce_counters.h), named as the entry and in its
 * order; the entry describes it.
 */
struct droce_qp_counters {
	DROCE_QP_COUNTERS(DROCE_COUNTER_MEMBER)
};

/** Read the counters of the device of @p ctx. @return 0. */
int droce_query_counters(struct ibv_context *ctx, struct droce_counters *c);

/** Read the counters of @p qp. @return 0. */
int droce_query_qp_counters(struct ibv_qp *qp, struct droce_qp_counters *c);

/**
 * What DCQCN's reaction point ([engine] ecn = on) makes of a connected
 * QP's sending: the rate it may send at, cut by each CNP from its peer
 * and raised again while none comes; the port's speed until a first CNP.
 */
struct droce_qp_cc {
	uint64_t rate_kbps;         /**< the rate now, kbit/s */
	uint64_t target_kbps;       /**< the rate it recovers towards */
	uint32_t alpha;             /**< DCQCN's alpha, of 65536 */
	uint64_t cuts;              /**< CNPs that cut the rate */
};

/** Read DCQCN's state of @p qp. @return 0. */
int droce_query_qp_cc(struct ibv_qp *qp, struct droce_qp_cc *cc);

/**
 * What the device of a context holds: a uint64_t member for each entry
 * of DROCE_DEV_RESOURCES (droce_counters.h), named as the entry and in
 * its order; the entry describes it. Each table comes with its size.
 */
struct droce_resources {
	DROCE_DEV_RESOURCES(DROCE_COUNTER_MEMBER)
};

/**
 * Count what the device of @p ctx holds (its QPs, memory regions,
 * neighbour entries, queued frames, the mbufs of its pool in use).
 * @return 0.
 */
int droce_query_resources(struct ibv_context *ctx, struct droce_resources *r);

/** The name of QP state @p s ("RESET" ... "ERR"), or "?". */
const char *droce_qp_state_str(enum ibv_qp_state s);

/** The MAC address of the device of @p ctx. @return 0. */
int droce_query_mac(struct ibv_context *ctx, uint8_t mac[6]);

/** droce_raw_send(): RoCEv2 packets (below). */
#define DROCE_RAW_ROCE (1u << 0)

/**
 * Send frames of @p frame_len bytes to @p dst_mac for @p duration_ms from
 * the engine lcore of @p ctx's device, as fast as its port takes them.
 * The receiver counts them in its rx_frames. While this runs the lcore
 * does nothing else but receive on its other devices.
 *
 * The frames are of an Ethernet type nobody uses; with DROCE_RAW_ROCE in
 * @p flags they are RoCEv2 SENDs (from the device's address to itself,
 * for a QP no device has) whose ICRCs are computed as droce's own
 * packets' are, and checked by a receiving droce engine before it drops
 * them: the rate left once every packet's two CRCs are paid.
 *
 * @return 0 with *sent frames, EINVAL (frame length out of range; with
 * DROCE_RAW_ROCE, also one no SEND has: headers plus a multiple of 4), or
 * ENETDOWN if the port is stopped (droce_port_stop()).
 */
int droce_raw_send(struct ibv_context *ctx, const uint8_t dst_mac[6],
		   uint32_t frame_len, uint32_t duration_ms, uint32_t flags,
		   uint64_t *sent);

/**
 * A ping-pong of raw frames of @p frame_len bytes (the Ethernet type of
 * droce_raw_send()'s) between the engine lcore of @p ctx's device and
 * @p dst_mac, each side polling its port and nothing else: the round trip
 * under which no message over the port can go. With @p rtt_ns, @p count
 * round trips, each ping sent once the last came back, their times in
 * @p rtt_ns[0 .. count - 1] (nanoseconds); with @p rtt_ns NULL, the other
 * side: it echoes pings until ping number count - 1. A device of the
 * same engine lcore (droce0 and droce1 of one process) echoes without
 * being asked. A ping not answered within 10 ms is sent again (the other
 * side may not be polling yet); *done counts the round trips made (or
 * pings echoed).
 *
 * @return 0, EINVAL (frame length out of range), ENETDOWN (the port is
 * stopped) or ETIMEDOUT (nothing heard for 5 s).
 */
int droce_raw_pingpong(struct ibv_context *ctx, const uint8_t dst_mac[6],
		       uint32_t frame_len, uint32_t count, uint32_t *rtt_ns,
		       uint32_t *done);

/**
 * Start mirroring every frame the device of @p ctx sends and receives
 * into the pcap file @p path (created, or truncated), until
 * droce_mirror_stop(). The device's engine lcore makes the switch between
 * two bursts: its data path takes no lock for it.
 *
 * @return 0, EBUSY if the device is mirroring already (the [engine] pcap
 * setting included; @p path is left alone), or the errno of creating
 * @p path.
 */
int droce_mirror_start(struct ibv_context *ctx, const char *path);

/**
 * Stop mirroring the device of @p ctx and close the file, with every
 * frame mirrored so far in it.
 *
 * @return 0, or ENOENT if the device was not mirroring.
 */
int droce_mirror_stop(struct ibv_context *ctx);

/**
 * Stop the DPDK port of the device of @p ctx, as rte_eth_dev_stop()
 * would, but between two bursts of the engine lcore that polls it: an
 * application must not call rte_eth_dev_stop() on a droce device's port
 * itself, since DPDK forbids stopping a port while another thread runs
 * its rx or tx burst, and the engine runs them all the time.
 *
 * While stopped, the port is neither polled nor sent to (frames are
 * dropped and counted in tx_drop), its link reads down, and every
 * context of the device gets IBV_EVENT_PORT_ERR (if the link was up).
 * QPs stay in their state and retransmit as on a NIC whose link is down:
 * if the port is started again within their timeout and retry_cnt, their
 * work completes; if not, the WR at the head ends in
 * IBV_WC_RETRY_EXC_ERR and the rest are flushed.
 *
 * @return 0 (also if the port is stopped already), or the errno of
 * rte_eth_dev_stop() (the port then still runs).
 */
int droce_port_stop(struct ibv_context *ctx);

/**
 * Start the port of the device of @p ctx again after droce_port_stop()
 * (rte_eth_dev_start(): its configuration, MAC and multicast settings as
 * they were). IBV_EVENT_PORT_ACTIVE follows once its link is up (a
 * net_memif port's when its peer is connected).
 *
 * @return 0 (also if the port runs already), or the errno of
 * rte_eth_dev_start() (the port then stays stopped).
 */
int droce_port_start(struct ibv_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_H */
