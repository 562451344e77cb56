/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_RESP_H
#define DROCE_RESP_H

#include "droce_engine_pvt.h"

/*
 * The responder: requests from the peer, their answers, receive
 * completions (lib/engine/droce_resp.c).
 */

/**
 * One request packet. If its ICRC is still unchecked
 * (meta->icrc_unchecked), it is checked before the packet does anything,
 * or as its payload is copied to its place when the packet is a WRITE's
 * the QP expects (droce_rx_copy_checked()).
 */
void droce_resp_rx(struct droce_qp_eng *qp, struct rte_mbuf *m,
		   struct droce_wire_meta *meta, uint64_t now);

/** Send pending READ responses, atomic ACKs and ACKs. */
void droce_resp_run(struct droce_qp_eng *qp, uint64_t now);

/** Send now what @p qp's responder owes, an ACK that waits a pass too:
 * the QP is about to be modified or destroyed. */
void droce_resp_send_waiting(struct droce_qp_eng *qp);

/** A receive of @p qp completed, in the pass running: its ACK may wait
 * for the next (lib/engine/droce_resp_tx.c). */
void droce_resp_completed(struct droce_qp_eng *qp);

/** Send an ACK/NAK with @p syndrome for @p psn. */
void droce_resp_send_ack(struct droce_qp_eng *qp, uint8_t syndrome,
			 uint32_t psn);

/**
 * NAK @p code for the expected PSN and fail the QP (its READ responses
 * and atomic ACKs owed sent first), the application told by
 * IBV_EVENT_QP_FATAL (lib/engine/droce_resp_tx.c).
 */
void droce_resp_nak_fatal(struct droce_qp_eng *qp, uint8_t code);

/** Slots of @p qp's READ/atomic ring in use: max_dest_rd_atomic. */
static inline uint32_t
droce_resp_res_slots(const struct droce_qp_eng *qp)
{
	return RTE_MAX((uint32_t)qp->max_dest_rd_atomic, 1u);
}

/** Complete receive WQE @p idx of a message from QP @p src_qp, the
 * completion's sl @p sl. */
void droce_resp_recv_cqe_from(struct droce_qp_eng *qp, uint32_t idx,
			      uint64_t wr_id, enum ibv_wc_status status,
			      enum ibv_wc_opcode opcode, uint32_t byte_len,
			      uint16_t wc_flags, uint32_t imm, bool solicited,
			      uint32_t src_qp, uint8_t sl);

/** Complete receive WQE @p idx (of a message from the QP's peer). */
static inline void
droce_resp_recv_cqe(struct droce_qp_eng *qp, uint32_t idx, uint64_t wr_id,
		    enum ibv_wc_status status, enum ibv_wc_opcode opcode,
		    uint32_t byte_len, uint16_t wc_flags, uint32_t imm,
		    bool solicited)
{
	droce_resp_recv_cqe_from(qp, idx, wr_id, status, opcode, byte_len,
				 wc_flags, imm, solicited, qp->dest_qpn, 0);
}

/** Complete the posted receive WQEs of @p qp, in ERR: flushed. */
void droce_resp_flush(struct droce_qp_eng *qp);

/** Forget every message in progress (the QP is made, or RESET). */
void droce_resp_reset(struct droce_qp_eng *qp);

/** The QP reaches RTR: the next request expected is its RQ PSN. */
void droce_resp_start(struct droce_qp_eng *qp);

#endif /* DROCE_RESP_H */
