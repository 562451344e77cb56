/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_TX_H
#define DROCE_TX_H

#include "droce_engine_pvt.h"

/*
 * Transmit (lib/engine/droce_tx.c).
 */

/**
 * Allocate an mbuf starting with the @p hdr_len bytes of a path's
 * Ethernet, IP and UDP headers at @p hdr, then a BTH from @p qp to
 * @p dqpn: *bth points at it, the extension headers and the payload
 * follow (the opcode's table entry says where).
 */
struct rte_mbuf *droce_pkt_alloc_to(struct droce_qp_eng *qp,
				    const uint8_t *hdr, uint8_t hdr_len,
				    uint32_t dqpn, uint8_t opcode, uint32_t psn,
				    bool ackreq, bool se, uint32_t payload_len,
				    uint8_t **bth);

/**
 * The region @p len payload bytes at @p addr, under @p key (an lkey, or
 * if @p remote an rkey), are sent from in place by @p qp, or NULL: they
 * are copied. Zero copy takes RC and XRC packets of at least
 * zero_copy_min bytes (those alone complete once the peer has them),
 * over IPv4, on a port that can (droce_dev.zero_copy), from a region
 * (not a window); the packets it could have taken but for the port, the
 * path or a window are counted (tx_zero_copy_fallback).
 */
struct droce_mr_eng *droce_zc_region(struct droce_qp_eng *qp, uint32_t key,
				     bool remote, uint64_t addr,
				     uint32_t len);

/**
 * A packet of @p qp whose @p len payload bytes at @p addr, in region
 * @p mr (droce_zc_region()), are sent from where they lie: its headers
 * in one segment (as droce_pkt_alloc() writes them, *bth at its BTH),
 * the payload in a second attached to that memory, the pad and ICRC in
 * a third. The port's freeing the second gives @p mr's count back.
 * @return NULL if out of mbufs: the caller copies.
 */
struct rte_mbuf *droce_pkt_alloc_zc(struct droce_qp_eng *qp, uint8_t opcode,
				    uint32_t psn, bool ackreq, bool se,
				    struct droce_mr_eng *mr, uint64_t addr,
				    uint32_t len, uint8_t **bth);

/** Allocate an mbuf with the headers of @p qp, BTH included. */
static inline struct rte_mbuf *
droce_pkt_alloc(struct droce_qp_eng *qp, uint8_t opcode, uint32_t psn,
		bool ackreq, bool se, uint32_t payload_len, uint8_t **bth)
{
	return droce_pkt_alloc_to(qp, qp->path.hdr, qp->path.hdr_len,
				  qp->dest_qpn, opcode, psn, ackreq, se,
				  payload_len, bth);
}

/** A CNP arrived for @p qp at TSC @p now: DCQCN cuts its rate. */
void droce_cc_cnp(struct droce_qp_eng *qp, uint64_t now);

/**
 * How late a paced QP may be and still catch up, the engine lcore's
 * passes coming at no exact time: it may then send that much at once.
 */
#define DROCE_CC_SLACK_US 16

/**
 * Whether @p qp, paced by DCQCN, may send its next packet now (DCQCN's
 * timers run first): against the clock as it is, as droce_cc_sent() set
 * that packet's time (the time a pass began would give a QP run late in
 * a long pass less than its rate). A QP DCQCN has cut is paced from then
 * on, at the port's speed too once it is back there: a software port (a
 * ring, memif, net_fault's switch) takes a burst faster than any line
 * would, and a QP let go at once would put its whole window in a
 * congested queue.
 */
static inline bool
droce_cc_may_send(struct droce_qp_eng *qp)
{
	const struct droce_dcqcn_params *p = &qp->shard->dev->cc;
	uint64_t now;

	if (likely(qp->cc.rate == 0))
		return true;
	now = rte_get_tsc_cycles();
	droce_dcqcn_tick(&qp->cc, p, now / droce_eng.us_cycles);
	return (int64_t)(now - qp->cc_next) >= 0;
}

/**
 * Bytes an Ethernet frame takes on the wire besides itself: preamble
 * and start delimiter, FCS and the gap before the next frame.
 */
#define DROCE_ETH_WIRE_OVERHEAD 24

/**
 * @p qp sent a packet of @p bytes of payload in a frame of @p frame_len
 * bytes (no FCS): the next waits the frame's time on the wire at the
 * rate.
 */
void droce_cc_sent(struct droce_qp_eng *qp, uint32_t bytes,
		   uint32_t frame_len);

/**
 * Send a CNP to @p qp's peer QP: BTH with BECN set, 16 reserved zero
 * bytes; not ECN-capable itself.
 */
void droce_pkt_send_cnp(struct droce_qp_eng *qp);

/** Finish a packet: lengths, IPv4 checksum; queue it (the ICRC follows). */
void droce_pkt_send(struct droce_qp_eng *qp, struct rte_mbuf *m);

/**
 * Queue @p m for transmission on @p sh; if @p roce, its ICRC (and an
 * IPv6 UDP checksum, which covers it) is still to be computed: that is
 * done for every queued frame together, just before they go, where the
 * CPU can overlap one frame's CRC with the next (and the frame is
 * mirrored then, as it goes).
 */
void droce_shard_tx_frame(struct droce_shard *sh, struct rte_mbuf *m,
			bool roce);

/** Queue frame @p m, complete, for transmission on @p sh. */
static inline void
droce_shard_tx(struct droce_shard *sh, struct rte_mbuf *m)
{
	droce_shard_tx_frame(sh, m, false);
}

/**
 * Loop @p m, a frame not queued for the port yet, back to @p sh as a
 * NIC's switch turns frames back: one to the device's own address goes
 * to it alone (mirrored as sent; unless the port turns such frames back
 * itself), a copy of one to a group or broadcast goes to it too. Its next
 * pass receives them, counted as sent and received (lost if the loop
 * queue is full).
 * @return true if @p m was taken (it is not to go to the port).
 */
bool droce_shard_tx_loop(struct droce_shard *sh, struct rte_mbuf *m);

/** Send what is queued on @p sh. */
void droce_shard_tx_flush(struct droce_shard *sh);

/**
 * Is there room to queue a burst more on @p sh (flushing first if not)?
 * A sender finding none waits for the port rather than lose frames, and
 * leaves the room to the responder's answers.
 */
static inline bool
droce_shard_tx_room(struct droce_shard *sh)
{
	if (unlikely(sh->ntx >= DROCE_TX_BUF - DROCE_BURST))
		droce_shard_tx_flush(sh);
	return sh->ntx < DROCE_TX_BUF - DROCE_BURST;
}

#endif /* DROCE_TX_H */
