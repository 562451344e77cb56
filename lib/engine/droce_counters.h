/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_COUNTERS_H
#define DROCE_COUNTERS_H

/**
 * @file
 * droce's counters, each named and described once.
 *
 * Each list is an X-macro: DROCE_DEV_COUNTERS(X) expands to
 * X(name, description) for every counter of a device, in order, and
 * DROCE_QP_COUNTERS(X) likewise for a QP. Everything that holds or shows
 * the counters is made from these lists: the engine's struct
 * droce_dev_stats and struct droce_qp_stats, the public struct
 * droce_counters and struct droce_qp_counters of droce.h (one uint64_t
 * member per entry, named as the entry, in list order), the telemetry
 * commands /droce/dev_stats and /droce/qp_stats, droce-pmd's `show
 * device` and `show qp`, and the tests that check those. A counter added
 * here appears in all of them.
 *
 * Every counter is a 64-bit count that only grows. To go through them
 * all, define a macro of two arguments and hand it to a list:
 *
 * @code
 * struct droce_counters c;
 *
 * droce_query_counters(ctx, &c);
 * #define SHOW(name, desc) printf("%s %" PRIu64 "\n", #name, c.name);
 * DROCE_DEV_COUNTERS(SHOW)
 * #undef SHOW
 * @endcode
 *
 * An entry is `X(name, "description")`, the description a string
 * literal: the tests read the lists from this file.
 */

#include <stdint.h>

/** The counters of a device (its port, as the engine sees it). */
#define DROCE_DEV_COUNTERS(X) \
	X(rx_frames, "frames received") \
	X(rx_bytes, "bytes of the frames received") \
	X(tx_frames, "frames sent") \
	X(tx_bytes, "bytes of the frames sent") \
	X(rx_roce, "RoCEv2 frames received, their ICRC good") \
	X(rx_icrc_err, "dropped: RoCEv2 frames with a bad ICRC") \
	X(rx_malformed, "dropped: truncated, or bad RoCEv2 headers") \
	X(rx_not_ours, "dropped: not to our MAC or IP, or no live QP") \
	X(rx_bad_header, "dropped: another partition (P_Key) or VLAN, " \
	  "or an IPv4-mapped IPv6 source") \
	X(rx_arp, "ARP frames received") \
	X(rx_handoff, "frames received for another engine lcore of the " \
	  "device, handed to it") \
	X(rx_handoff_drop, "dropped: frames for another engine lcore whose " \
	  "hand-off ring was full") \
	X(tx_drop, "dropped: frames the port refused (at once with its " \
	  "link down), or sent while the port was stopped") \
	X(no_mbuf, "packets not built: the mbuf pool was empty") \
	X(tx_csum_offload, \
	  "raw frames whose checksums the port filled (IBV_SEND_IP_CSUM, TSO)") \
	X(tx_tso_offload, "TSO WRs the port segmented") \
	X(tx_gso, "TSO WRs DPDK's GSO library segmented (the port has no TSO)") \
	X(app_passes, "engine passes over the device an application thread " \
	  "ran as it posted or polled (run_to_completion)") \
	X(tx_zero_copy, "packets sent with their payload read from the " \
	  "registered memory itself, in a segment of its own (zero_copy)") \
	X(tx_zero_copy_fallback, "packets zero_copy could have sent so that " \
	  "were copied: the port takes no segments, or IPv6, or a window") \
	X(rx_segmented, "RoCEv2 frames received in segments and taken so, " \
	  "their payload read where it lay") \
	X(rx_copy_checked, "RoCEv2 frames whose ICRC was checked as their " \
	  "payload was copied to its place: one pass over the bytes") \
	X(rx_ce, "RoCEv2 frames received marked Congestion Experienced") \
	X(tx_cnps, "CNPs sent: a QP's packet arrived marked CE (ecn)") \
	X(rx_cnps, "CNPs received for a QP of the device")

/** The counters of a QP. */
#define DROCE_QP_COUNTERS(X) \
	X(tx_pkts, "packets sent: requests, responses, ACKs") \
	X(rx_pkts, "packets received") \
	X(retransmits, "request packets sent again (go-back-N)") \
	X(timeouts, "retransmission timer expiries") \
	X(naks_sent, "NAKs sent (not RNR NAKs)") \
	X(naks_rcvd, "NAKs received (not RNR NAKs)") \
	X(rnr_naks_sent, "RNR NAKs sent: no receive WQE") \
	X(rnr_naks_rcvd, "RNR NAKs received") \
	X(dup_reqs, "duplicate requests answered") \
	X(ce_rcvd, "packets received marked Congestion Experienced") \
	X(cnps_sent, "CNPs sent to the peer, at most one a cnp_interval_us") \
	X(cnps_rcvd, "CNPs received from the peer") \
	X(cc_held, "passes in which DCQCN's rate held the next packet back") \
	X(rx_dropped, "not taken: the QP in ERR, wrong transport, UD Q_Key, " \
	  "no WQE, " \
	  "a stale or undefined request or response")

/**
 * What a device holds at the moment: gauges, not counters. Every table
 * the engine keeps is of a size fixed when it starts, and nothing it
 * receives allocates memory: a flood fills a table or the mbuf pool and
 * is then dropped and counted. Each entry in use comes with the size of
 * its table (_max). The mbuf pool is the engine's, shared by its devices.
 */
#define DROCE_DEV_RESOURCES(X) \
	X(qps, "QPs of the device") \
	X(qps_max, "QPs a device can have") \
	X(qps_active, "QPs each pass of the engine runs (the others idle, " \
	  "woken by a frame, a state change or a post)") \
	X(qp_bytes, "memory the QPs take besides their queues: droce's " \
	  "records of them and their READ/atomic resources") \
	X(qp_queue_bytes, "memory of the QPs' send and receive queues") \
	X(mrs, "memory regions and windows registered") \
	X(mrs_max, "memory regions and windows a device can have") \
	X(srqs, "shared receive queues") \
	X(srqs_max, "shared receive queues a device can have") \
	X(neigh, "neighbour entries in use (ARP, IPv6 ND)") \
	X(neigh_max, "neighbour entries a device has") \
	X(neigh_pending, "neighbour entries being resolved") \
	X(mcast_groups, "multicast groups joined") \
	X(mcast_groups_max, "multicast groups a device can join") \
	X(flows, "flow rules of raw packet QPs") \
	X(flows_max, "flow rules a device can have") \
	X(tx_queued, "frames built and not yet taken by the port") \
	X(tx_queued_max, "frames the device queues for its port") \
	X(mbufs_in_use, "mbufs of the engine's pool taken (lcore caches " \
	  "included)") \
	X(mbufs, "mbufs of the engine's pool")

/**
 * A struct member for one counter: `struct s { DROCE_DEV_COUNTERS(
 * DROCE_COUNTER_MEMBER) };` holds a uint64_t per device counter.
 */
#define DROCE_COUNTER_MEMBER(name, desc) uint64_t name;

#endif /* DROCE_COUNTERS_H */
