/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The requester: turns send WQEs into request packets. SEND and RDMA
 * WRITE messages are segmented by the path MTU into FIRST/MIDDLE/LAST (or
 * ONLY) packets, a READ is one request whose responses take a PSN each,
 * an atomic is one request. PSNs are assigned here; an ACK is requested
 * on every message's last packet and every DROCE_ACK_EVERY packets.
 * Retransmission rewinds to a PSN (go-back-N) and sends again from
 * there; the retransmission and RNR timers live here too.
 */

#include <rte_memcpy.h>
#include <rte_prefetch.h>

#include "droce_engine_pvt.h"
#include "droce_comp.h"
#include "droce_dma.h"
#include "droce_req.h"
#include "droce_sched.h"
#include "droce_tx.h"

/* PSNs a WQE takes: its packets, or for a READ its responses. */
static uint32_t
wqe_npkts(const struct droce_qp_eng *qp, const struct droce_send_wqe *wqe)
{
	if (droce_wr_flags(wqe->opcode) & DROCE_WR_ATOMIC)
		return 1;
	return wqe->length == 0 ? 1 : (wqe->length + qp->mtu - 1) / qp->mtu;
}

/* @return true if a READ or atomic before cons is missing its answer. */
static bool
rd_atomic_unanswered(const struct droce_qp_eng *qp)
{
	uint32_t idx;

	for (idx = qp->comp.oldest; idx != qp->req.cons; idx++)
		if (droce_swqe(qp, idx)->state != DROCE_WQE_DONE &&
		    droce_wqe_rd_atomic(droce_wq_slot(qp->cfg.sq, idx)))
			return true;
	return false;
}

/*
 * Begin a WQE: wait for a fence or a read/atomic slot, check its local
 * buffers, give it its PSNs.
 * @return 0 to send it, -EAGAIN to wait, 1 if it failed locally (it is
 * DONE with an error status and takes no PSN).
 */
static int
req_start(struct droce_qp_eng *qp, struct droce_send_wqe *wqe,
	  struct droce_swqe *st)
{
	bool rd_atomic = droce_wqe_rd_atomic(wqe);
	bool write_local = rd_atomic;
	/* started before and rewound since: it holds its responder
	 * resource still, and counts already */
	bool again = (int32_t)(qp->req.cons - qp->req.started) < 0;

	if ((wqe->flags & DROCE_WQE_FENCE) && rd_atomic_unanswered(qp))
		return -EAGAIN;
	if (rd_atomic && !again &&
	    qp->req.rd_atomic >= RTE_MAX((uint32_t)qp->max_rd_atomic, 1u))
		return -EAGAIN;
	if (!(wqe->flags & DROCE_WQE_INLINE) &&
	    droce_sge_check(qp->shard, qp->cfg.pd, droce_send_wqe_sge(wqe),
			    wqe->num_sge, write_local) != 0) {
		st->status = IBV_WC_LOC_PROT_ERR;
		st->state = DROCE_WQE_DONE;
		return 1;
	}
	st->first_psn = qp->req.psn;
	st->npkts = wqe_npkts(qp, wqe);
	st->last_psn = droce_psn_add(st->first_psn, st->npkts - 1);
	/* a READ asks again from what has not arrived: the responder may
	 * have narrowed its resource to that part when asked again before */
	if (!again)
		st->done_bytes = 0;
	st->asked = false;
	st->status = IBV_WC_SUCCESS;
	st->state = DROCE_WQE_SENDING;
	qp->req.offset = 0;
	if (rd_atomic && !again)
		qp->req.rd_atomic++;
	return 0;
}

/*
 * A request packet for @p psn goes out, the requester moves on to
 * @p next: count it if it went before, or move the high-water mark.
 */
static inline void
count_sent(struct droce_qp_eng *qp, uint32_t psn, uint32_t next)
{
	if (unlikely(droce_psn_diff(psn, qp->req.sent_psn) < 0))
		qp->stats.retransmits++;
	if (droce_psn_diff(next, qp->req.sent_psn) > 0)
		qp->req.sent_psn = next;
}

/* The BTH opcode of a packet of @p wqe, by its position in the message. */
static inline uint8_t
wire_opcode(uint8_t tr, const struct droce_send_wqe *wqe, bool first,
	    bool last)
{
	enum droce_wr_pos pos = first ? (last ? DROCE_POS_ONLY :
					 DROCE_POS_FIRST) :
		last ? DROCE_POS_LAST : DROCE_POS_MIDDLE;

	return tr | droce_wr_table[wqe->opcode].wire[pos];
}

static void req_halt(struct droce_qp_eng *qp);

/*
 * A packet of a SEND or WRITE whose @p len payload bytes at @p off of
 * @p wqe go from the registered memory itself, or NULL: they are copied
 * (droce_zc_region() says when; and bytes in more than one SGE are).
 */
static struct rte_mbuf *
send_in_place(struct droce_qp_eng *qp, struct droce_send_wqe *wqe,
	      uint32_t off, uint32_t len, uint8_t opcode, uint32_t psn,
	      bool ackreq, bool se, uint8_t **bth)
{
	const struct ibv_sge *sge = droce_send_wqe_sge(wqe);
	struct droce_mr_eng *mr;
	uint32_t i;

	for (i = 0; i < wqe->num_sge && off >= sge[i].length; i++)
		off -= sge[i].length;
	if (i == wqe->num_sge || sge[i].length - off < len)
		return NULL;
	mr = droce_zc_region(qp, sge[i].lkey, false, sge[i].addr + off, len);
	if (mr == NULL)
		return NULL;
	return droce_pkt_alloc_zc(qp, opcode, psn, ackreq, se, mr,
				  sge[i].addr + off, len, bth);
}

/* Send the next packet of a SEND or WRITE. @return false if out of mbufs. */
static bool
send_data(struct droce_qp_eng *qp, struct droce_send_wqe *wqe,
	  struct droce_swqe *st)
{
	uint32_t off = qp->req.offset;
	uint32_t len = RTE_MIN(qp->mtu, wqe->length - off);
	bool first = off == 0, last = off + len >= wqe->length;
	uint8_t opcode = wire_opcode(qp->tr, wqe, first, last);
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	uint32_t psn = qp->req.psn;
	/* ask often enough that a small window never waits for the timer;
	 * UC asks nothing */
	bool ackreq = droce_tr_reliable(qp->tr) &&
		(last || ++qp->req.noack_pkts >=
		RTE_MIN((uint32_t)DROCE_ACK_EVERY, qp->comp.cwnd / 2));
	bool se = last && (wqe->flags & DROCE_WQE_SOLICITED);
	struct rte_mbuf *m;
	bool in_place;
	uint8_t *bth;

	/* its memory deregistered since it began (req_start() checked it
	 * then; a WQE sent again from its start is not begun again):
	 * nothing more of it is read, as a NIC's mapping of it is gone; it
	 * fails */
	if (!(wqe->flags & DROCE_WQE_INLINE) && len != 0 &&
	    unlikely(droce_sge_check(qp->shard, qp->cfg.pd,
				     droce_send_wqe_sge(wqe), wqe->num_sge,
				     false) != 0)) {
		st->status = IBV_WC_LOC_PROT_ERR;
		st->state = DROCE_WQE_DONE;
		req_halt(qp);
		return false;
	}
	m = NULL;
	if (!(wqe->flags & DROCE_WQE_INLINE))
		m = send_in_place(qp, wqe, off, len, opcode, psn, ackreq, se,
				  &bth);
	in_place = m != NULL;
	if (m == NULL)
		m = droce_pkt_alloc(qp, opcode, psn, ackreq, se, len, &bth);
	if (m == NULL)
		return false;
	count_sent(qp, psn, droce_psn_add(psn, 1));
	if (ackreq)
		qp->req.noack_pkts = 0;
	if (op->flags & DROCE_OPF_RETH) {
		struct droce_reth reth = {
			.va = wqe->remote_addr,
			.rkey = wqe->rkey,
			.dlen = wqe->length,
		};

		droce_reth_encode(bth + op->offset[DROCE_EXT_RETH], &reth);
	}
	if (op->flags & DROCE_OPF_XRCETH)
		droce_put_be32(bth + op->offset[DROCE_EXT_XRCETH],
			       droce_send_wqe_srqn(wqe) & DROCE_PSN_MASK);
	if (op->flags & DROCE_OPF_IMMDT)
		memcpy(bth + op->offset[DROCE_EXT_IMMDT], &wqe->imm, 4);
	if (op->flags & DROCE_OPF_IETH)
		droce_put_be32(bth + op->offset[DROCE_EXT_IETH], wqe->imm);
	if (wqe->flags & DROCE_WQE_INLINE)
		rte_memcpy(bth + op->hdr_len,
			   (const uint8_t *)droce_send_wqe_sge(wqe) + off, len);
	else if (!in_place)
		droce_sge_read(droce_send_wqe_sge(wqe), wqe->num_sge, off,
			       bth + op->hdr_len, len);
	droce_pkt_send(qp, m);
	if (unlikely(qp->cc.rate != 0))
		droce_cc_sent(qp, len, rte_pktmbuf_pkt_len(m));

	qp->req.psn = droce_psn_add(psn, 1);
	qp->req.offset = off + len;
	if (last) {
		/* UC: sent is done, nothing will answer */
		st->state = qp->tr == DROCE_TR_UC ? DROCE_WQE_DONE :
			DROCE_WQE_SENT;
		qp->req.offset = 0;
		qp->req.cons++;
	}
	return true;
}

/*
 * A UD datagram of @p len payload bytes to the WR's address handle and
 * QP, with a DETH carrying the Q_Key (the QP's own when the WR's has its
 * high bit set, ibv_post_send(3)), and the next PSN: its payload is to be
 * written at *payload, then droce_pkt_send(). @return NULL if out of
 * mbufs.
 */
static struct rte_mbuf *
ud_packet(struct droce_qp_eng *qp, const struct droce_send_wqe *wqe,
	  uint32_t len, bool se, uint8_t **payload)
{
	uint8_t opcode = wire_opcode(DROCE_TR_UD, wqe, true, true);
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	struct droce_deth deth = {
		.qkey = (wqe->remote_qkey & DROCE_QKEY_PRIVILEGED) ? qp->qkey :
			wqe->remote_qkey,
		.srcqp = qp->cfg.qp_num,
	};
	const struct droce_ud_hdr *uh =
		droce_send_wqe_ud_hdr(wqe, qp->cfg.sq->stride);
	struct rte_mbuf *m;
	uint8_t *bth;

	m = droce_pkt_alloc_to(qp, uh->bytes, uh->len, wqe->remote_qpn,
			       opcode, qp->req.psn, false, se, len, &bth);
	if (m == NULL)
		return NULL;
	/* flows spread as a connected QP's do: by the pair of QPs */
	droce_put_be16(bth - 8, droce_udp_sport(qp->cfg.qp_num,
						wqe->remote_qpn));
	droce_deth_encode(bth + op->offset[DROCE_EXT_DETH], &deth);
	if (op->flags & DROCE_OPF_IMMDT)
		memcpy(bth + op->offset[DROCE_EXT_IMMDT], &wqe->imm, 4);
	qp->req.psn = droce_psn_add(qp->req.psn, 1);
	qp->req.sent_psn = qp->req.psn;
	*payload = bth + op->hdr_len;
	return m;
}

/*
 * The datagrams of a UD TSO WQE from qp->req.offset on: each one the
 * header (IPoIB's four bytes, IP, TCP) made that segment's, checksums
 * filled, then up to an MSS of the payload, as a hardware provider cuts
 * IPoIB's large sends. @return false if out of mbufs (qp->req.offset
 * says where to go on).
 */
static bool
send_ud_tso(struct droce_qp_eng *qp, struct droce_send_wqe *wqe)
{
	uint32_t mss = wqe->imm >> 16, hlen = wqe->imm & 0xffff;
	const uint8_t *hdr = droce_send_wqe_tso_hdr(wqe);

	do {
		uint32_t off = qp->req.offset;
		uint32_t n = RTE_MIN(mss, wqe->length - off);
		bool last = off + n >= wqe->length;
		struct rte_mbuf *m;
		uint8_t *p;

		if (!droce_shard_tx_room(qp->shard))
			return false;
		m = ud_packet(qp, wqe, hlen + n,
			      last && (wqe->flags & DROCE_WQE_SOLICITED), &p);
		if (m == NULL)
			return false;
		memcpy(p, hdr, hlen);
		droce_tso_header(p, DROCE_IPOIB_HDR_LEN, hlen, off, n,
				 off / mss, last);
		droce_sge_read(droce_send_wqe_sge(wqe), wqe->num_sge, off,
			       p + hlen, n);
		droce_ipoib_csum(p, hlen + n);
		droce_pkt_send(qp, m);
		qp->req.offset = off + n;
	} while (qp->req.offset < wqe->length);
	qp->req.offset = 0;
	return true;
}

/*
 * Send a UD WQE: one datagram, or a TSO WQE's segments.
 * @return false if it cannot go yet.
 */
static bool
send_ud(struct droce_qp_eng *qp, struct droce_send_wqe *wqe,
	struct droce_swqe *st)
{
	struct rte_mbuf *m;
	uint8_t *p;

	if (droce_wr_flags(wqe->opcode) & DROCE_WR_TSO) {
		if (!send_ud_tso(qp, wqe))
			return false;
	} else {
		m = ud_packet(qp, wqe, wqe->length,
			      (wqe->flags & DROCE_WQE_SOLICITED) != 0, &p);
		if (m == NULL)
			return false;
		if (wqe->flags & DROCE_WQE_INLINE)
			rte_memcpy(p, droce_send_wqe_sge(wqe), wqe->length);
		else
			droce_sge_read(droce_send_wqe_sge(wqe), wqe->num_sge,
				       0, p, wqe->length);
		if (wqe->flags & DROCE_WQE_IP_CSUM)
			droce_ipoib_csum(p, wqe->length);
		droce_pkt_send(qp, m);
	}
	/* nothing will answer: sent is done */
	st->state = DROCE_WQE_DONE;
	qp->req.cons++;
	return true;
}

/* Send the frame of a raw packet WR: it is done once out. */
static bool
send_raw(struct droce_qp_eng *qp, struct droce_send_wqe *wqe,
	 struct droce_swqe *st)
{
	if (!droce_raw_qp_send(qp, wqe))
		return false;
	st->state = DROCE_WQE_DONE;
	qp->req.cons++;
	return true;
}

/*
 * Send the request of a READ (for what has not arrived yet) or an atomic,
 * the requester staying where it is. @return false if out of mbufs.
 */
static bool
rd_atomic_request(struct droce_qp_eng *qp, const struct droce_send_wqe *wqe,
		  const struct droce_swqe *st)
{
	uint16_t flags = droce_wr_flags(wqe->opcode);
	uint8_t opcode = wire_opcode(qp->tr, wqe, true, true);
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	uint32_t done = st->done_bytes;
	uint32_t psn = droce_psn_add(st->first_psn, done / qp->mtu);
	struct rte_mbuf *m;
	uint8_t *bth;

	m = droce_pkt_alloc(qp, opcode, psn, true, false, 0, &bth);
	if (m == NULL)
		return false;
	count_sent(qp, psn, droce_psn_add(st->last_psn, 1));
	if (op->flags & DROCE_OPF_XRCETH)
		droce_put_be32(bth + op->offset[DROCE_EXT_XRCETH],
			       droce_send_wqe_srqn(wqe) & DROCE_PSN_MASK);
	if (flags & DROCE_WR_READ) {
		struct droce_reth reth = {
			.va = wqe->remote_addr + done,
			.rkey = wqe->rkey,
			.dlen = wqe->length - done,
		};

		droce_reth_encode(bth + op->offset[DROCE_EXT_RETH], &reth);
	} else {
		bool cas = (flags & DROCE_WR_COMPARE) != 0;
		struct droce_atomiceth a = {
			.va = wqe->remote_addr,
			.rkey = wqe->rkey,
			.swap_add = cas ? wqe->swap : wqe->compare_add,
			.compare = cas ? wqe->compare_add : 0,
		};

		droce_atomiceth_encode(bth + op->offset[DROCE_EXT_ATOMICETH],
				       &a);
	}
	droce_pkt_send(qp, m);
	return true;
}

/* Send the READ or atomic at cons and move past it. */
static bool
send_rd_atomic(struct droce_qp_eng *qp, struct droce_send_wqe *wqe,
	       struct droce_swqe *st)
{
	if (!rd_atomic_request(qp, wqe, st))
		return false;
	qp->req.noack_pkts = 0;
	qp->req.psn = droce_psn_add(st->last_psn, 1);
	st->state = DROCE_WQE_SENT;
	st->asked = false;
	qp->req.cons++;
	return true;
}

void
droce_req_ask_again(struct droce_qp_eng *qp, uint32_t idx, uint32_t psn)
{
	struct droce_swqe *st = droce_swqe(qp, idx);

	/* the answer to the last request may still be on its way: a
	 * response to something sent after that request says it is not */
	if (st->asked && droce_psn_diff(psn, st->asked_mark) < 0)
		return;
	if (!rd_atomic_request(qp, droce_wq_slot(qp->cfg.sq, idx), st))
		return;         /* out of mbufs: a later response or the timer */
	st->asked = true;
	st->asked_mark = qp->req.sent_psn;
}

/*
 * The WQE at cons failed locally: nothing to send, it completes in turn,
 * and the WQEs after it wait for the flush.
 */
static void
req_halt(struct droce_qp_eng *qp)
{
	qp->req.halted = true;
	qp->req.halt_idx = qp->req.cons;
	qp->req.cons++;
	droce_comp_retire(qp);
}

/*
 * A WQE that sends nothing (binding a window, invalidating one) does its
 * work when the requester comes to it, takes no PSN and completes in
 * turn; if it fails, the QP fails with it.
 */
static void
req_local(struct droce_qp_eng *qp, struct droce_send_wqe *wqe,
	  struct droce_swqe *st)
{
	if (droce_wr_flags(wqe->opcode) & DROCE_WR_INV)
		st->status = droce_mw_invalidate(qp, wqe->imm, false) ?
			IBV_WC_SUCCESS : IBV_WC_MW_BIND_ERR;
	else
		st->status = (uint8_t)droce_mw_bind(qp, wqe);
	st->first_psn = qp->req.psn;
	st->last_psn = droce_psn_add(qp->req.psn, DROCE_PSN_MASK);
	st->npkts = 0;
	st->state = DROCE_WQE_DONE;
	if ((int32_t)(qp->req.cons - qp->req.started) >= 0)
		qp->req.started = qp->req.cons + 1;
	if (st->status != IBV_WC_SUCCESS) {
		req_halt(qp);
		return;
	}
	qp->req.cons++;
	droce_comp_retire(qp);
}

void
droce_req_fetch(struct droce_qp_eng *qp)
{
	struct droce_wq *sq = qp->cfg.sq;
	uint32_t prod;

	if (sq == NULL ||
	    (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD))
		return;
	prod = __atomic_load_n(&sq->prod_tail, __ATOMIC_ACQUIRE);
	while (qp->req.seen != prod) {
		const uint8_t *w = droce_wq_slot(sq, qp->req.seen);

		droce_swqe(qp, qp->req.seen)->state = DROCE_WQE_POSTED;
		rte_prefetch0(w);
		if (sq->stride > RTE_CACHE_LINE_SIZE)
			rte_prefetch0(w + RTE_CACHE_LINE_SIZE);
		qp->req.seen++;
	}
}

void
droce_req_run(struct droce_qp_eng *qp, uint64_t now)
{
	struct droce_wq *sq = qp->cfg.sq;
	unsigned int budget = DROCE_QP_BUDGET;
	bool sent = false;
	uint32_t prod;

	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return;
	/* (a UD or raw WR has its own destination) */
	if (qp->comp.rnr_wait ||
	    (qp->tr != DROCE_TR_UD && qp->tr != DROCE_TR_NONE &&
	     !droce_qp_path_ready(qp, now)))
		return;
	/* WQEs posted since the last look (droce_req_fetch() before the
	 * pass's receive burst) */
	prod = qp->req.seen;
	while (budget > 0 && qp->req.cons != prod) {
		struct droce_send_wqe *wqe = droce_wq_slot(sq, qp->req.cons);
		struct droce_swqe *st = droce_swqe(qp, qp->req.cons);
		bool ok;

		/* the port is not taking frames: wait for it rather than
		 * lose them (UC could not get them back) */
		if (!droce_shard_tx_room(qp->shard))
			break;

		if (unlikely(qp->req.halted) &&
		    (int32_t)(qp->req.cons - qp->req.halt_idx) >= 0) {
			/* resent up to the failed WQE: step over it, so that
			 * it completes in turn, and send nothing after it */
			if (qp->req.cons == qp->req.halt_idx) {
				qp->req.cons++;
				droce_comp_retire(qp);
			}
			break;
		}
		if (unlikely(st->state == DROCE_WQE_DONE)) {
			/* answered in full after an earlier WQE's responses
			 * went missing: resending from before it, skip it */
			qp->req.psn = droce_psn_add(st->last_psn, 1);
			qp->req.cons++;
			continue;
		}
		if ((uint32_t)droce_psn_diff(qp->req.psn, qp->comp.una_psn) >=
		    qp->comp.cwnd)
			break;
		if (unlikely(droce_wr_flags(wqe->opcode) & DROCE_WR_LOCAL)) {
			if (qp->sq_draining)
				break;
			req_local(qp, wqe, st);
			if (qp->req.halted)
				break;
			continue;
		}
		if (st->state == DROCE_WQE_POSTED) {
			int ret;

			if (qp->sq_draining)
				break;
			ret = req_start(qp, wqe, st);
			if (ret < 0)
				break;
			if ((int32_t)(qp->req.cons - qp->req.started) >= 0)
				qp->req.started = qp->req.cons + 1;
			if (ret == 1) {
				req_halt(qp);
				break;
			}
		}
		/* paced by DCQCN: not yet (the QP stays active) */
		if (unlikely(qp->cc.rate != 0) && !droce_cc_may_send(qp)) {
			qp->stats.cc_held++;
			break;
		}
		if (qp->tr == DROCE_TR_UD)
			ok = send_ud(qp, wqe, st);
		else if (qp->tr == DROCE_TR_NONE)
			ok = send_raw(qp, wqe, st);
		else if (droce_wqe_rd_atomic(wqe))
			ok = send_rd_atomic(qp, wqe, st);
		else
			ok = send_data(qp, wqe, st);
		if (!ok)
			break;
		sent = true;
		budget--;
	}
	if (!droce_tr_reliable(qp->tr)) {
		if (sent)
			droce_comp_retire(qp);
		return;
	}
	if (sent)
		droce_comp_timer_start(qp);
}

void
droce_req_start(struct droce_qp_eng *qp)
{
	qp->req.psn = qp->sq_psn;
	qp->req.sent_psn = qp->sq_psn;
	qp->req.started = qp->req.cons;
}

void
droce_req_restart(struct droce_qp_eng *qp, uint32_t idx)
{
	qp->req.cons = idx;
	qp->req.seen = idx;
	qp->req.offset = 0;
	qp->req.rd_atomic = 0;
}

uint32_t
droce_req_rewind(struct droce_qp_eng *qp, uint32_t psn)
{
	struct droce_wq *sq = qp->cfg.sq;
	uint32_t idx, end, j;
	struct droce_swqe *st;
	const struct droce_send_wqe *w;
	int32_t into;

	/* the WQE holding psn, among those sent or being sent */
	end = qp->req.cons;
	if (end != qp->req.seen &&
	    droce_swqe(qp, end)->state == DROCE_WQE_SENDING)
		end++;
	for (idx = qp->comp.oldest; idx != end; idx++) {
		st = droce_swqe(qp, idx);
		if (st->state != DROCE_WQE_DONE &&
		    droce_psn_diff(st->last_psn, psn) >= 0)
			break;
	}
	if (idx == end)
		return psn;

	/* later WQEs start over; this one resumes at psn */
	for (j = idx + 1; j != end; j++) {
		st = droce_swqe(qp, j);
		if (st->state != DROCE_WQE_DONE)
			st->state = DROCE_WQE_POSTED;
	}
	st = droce_swqe(qp, idx);
	w = droce_wq_slot(sq, idx);
	into = droce_psn_diff(psn, st->first_psn);
	if (into < 0)
		into = 0;
	st->state = DROCE_WQE_SENDING;
	if (droce_wr_flags(w->opcode) & DROCE_WR_READ) {
		/* responses up to psn arrived: re-read the rest */
		qp->req.psn = droce_psn_add(st->first_psn,
					    st->done_bytes / qp->mtu);
	} else if (droce_wqe_rd_atomic(w)) {
		qp->req.psn = st->first_psn;
	} else {
		qp->req.offset = (uint32_t)into * qp->mtu;
		qp->req.psn = droce_psn_add(st->first_psn, (uint32_t)into);
	}
	qp->req.cons = idx;
	qp->req.noack_pkts = 0;
	/* what is resent starts at una: a READ resumes after the responses
	 * it has, and counting those as in flight could close the window
	 * on it for good (with nothing sent before it, the timer stops) */
	return qp->req.psn;
}

void
droce_req_seek(struct droce_qp_eng *qp, uint32_t psn)
{
	struct droce_wq *sq = qp->cfg.sq;
	uint32_t idx = qp->req.cons;
	struct droce_swqe *st;

	if (droce_psn_diff(psn, qp->req.psn) <= 0 ||
	    droce_psn_diff(psn, qp->req.sent_psn) > 0)
		return;
	for (; idx != qp->req.started; idx++) {
		const struct droce_send_wqe *w = droce_wq_slot(sq, idx);

		st = droce_swqe(qp, idx);
		if (st->state == DROCE_WQE_DONE)
			continue;
		if (droce_wqe_rd_atomic(w)) {
			/* the requester is at it already, or it was rewound
			 * (POSTED) and is sent again from its start: its
			 * response is due */
			if (idx == qp->req.cons)
				return;
			qp->req.offset = 0;
			qp->req.psn = st->first_psn;
			qp->req.cons = idx;
			return;
		}
		if (droce_psn_diff(st->last_psn, psn) >= 0) {
			/* psn is inside: resume there */
			st->state = DROCE_WQE_SENDING;
			qp->req.offset = (uint32_t)droce_psn_diff(psn,
						st->first_psn) * qp->mtu;
			qp->req.psn = psn;
			qp->req.cons = idx;
			return;
		}
		st->state = DROCE_WQE_SENT;
	}
	qp->req.offset = 0;
	qp->req.psn = psn;
	qp->req.cons = idx;
}

bool
droce_req_take_answered(struct droce_qp_eng *qp, uint32_t psn)
{
	struct droce_send_wqe *wqe;
	struct droce_swqe *st;

	/* the requester is at psn, at the start of a WQE it sent before */
	if (psn != qp->req.psn || qp->req.offset != 0 ||
	    (int32_t)(qp->req.cons - qp->req.started) >= 0 ||
	    (qp->req.halted &&
	     (int32_t)(qp->req.cons - qp->req.halt_idx) >= 0))
		return false;
	wqe = droce_wq_slot(qp->cfg.sq, qp->req.cons);
	st = droce_swqe(qp, qp->req.cons);
	if (!(droce_wr_flags(wqe->opcode) & DROCE_WR_ATOMIC))
		return false;
	if (st->state == DROCE_WQE_POSTED) {
		/* PSNs come out as they did the first time */
		int ret = req_start(qp, wqe, st);

		if (ret == 1)
			req_halt(qp);   /* its MR went meanwhile */
		if (ret != 0)
			return false;
	} else if (st->state != DROCE_WQE_SENDING || st->first_psn != psn) {
		return false;
	}
	st->state = DROCE_WQE_SENT;
	qp->req.psn = droce_psn_add(psn, 1);
	qp->req.cons++;
	return true;
}

bool
droce_req_waiting(const struct droce_qp_eng *qp, uint64_t *wake_at)
{
	if (qp->req.cons != qp->req.seen)
		return false;
	if (qp->comp.rnr_wait)
		*wake_at = qp->comp.rnr_at;
	else if (droce_req_outstanding(qp))
		*wake_at = qp->comp.rexmit_at;   /* 0: timeout 0, none */
	else
		*wake_at = 0;
	return true;
}
