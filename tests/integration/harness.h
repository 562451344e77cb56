/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_TEST_HARNESS_H
#define DROCE_TEST_HARNESS_H

/*
 * Two RC endpoints through the public verbs API, written as an rdma-core
 * example program would: devices, PD, MR, CQs, QP, connection by
 * exchanging QPN/PSN/GID, posting and polling with timeouts.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
	uint32_t psn;
	union ibv_gid gid;
};

struct ep_opts {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_sge;
	uint32_t max_inline;
	int cqe;
	int access;              /* MR access (default: all) */
	int qp_access;           /* QP remote access (default: all) */
	enum ibv_mtu mtu;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	bool sq_sig_all;
	bool recv_cq_ex;         /* the receive CQ from ibv_create_cq_ex */
	int gid_index;
	enum ibv_qp_type qp_type;   /* RC (default), UC or UD */
	uint16_t max_tso_header;    /* not 0: the QP from ibv_create_qp_ex */
};

/** Defaults for @p o. */
void ep_opts_default(struct ep_opts *o);

/** Open device @p dev (0: droce0) and make an endpoint with a buffer. */
int ep_open(struct ep *e, int dev, size_t len, const struct ep_opts *o);

/**
 * Open @p a on droce0 and @p b on droce1, buffers of @p len bytes, and
 * join them (both to RTS). @return 0 or -1.
 */
int ep_pair(struct ep *a, struct ep *b, size_t len, const struct ep_opts *o);

/** Bring @p a to RTS talking to @p b (both RESET->INIT->RTR->RTS). */
int ep_connect(struct ep *a, struct ep *b, const struct ep_opts *o);

/** The same towards a peer known by its QPN, PSN and GID only. */
int ep_connect_remote(struct ep *a, uint32_t qpn, uint32_t psn,
		      const union ibv_gid *gid, const struct ep_opts *o);

/** Bring UD QP @p qp from RESET to RTS with Q_Key @p qkey. */
int ud_qp_up(struct ibv_qp *qp, uint32_t qkey, uint32_t sq_psn);

/** Bring the UD QP of @p e to RTS with Q_Key @p qkey. */
int ep_ud_up(struct ep *e, uint32_t qkey);

/** An address handle on @p e's PD for @p to's GID (gid_index of @p o). */
struct ibv_ah *ep_ah(struct ep *e, const struct ep *to,
		     const struct ep_opts *o);

/**
 * Post a UD SEND of e->buf[off, off + len) to @p qpn through @p ah with
 * Q_Key @p qkey; with immediate data @p imm (host order) if @p with_imm.
 */
int ep_post_ud(struct ep *e, uint64_t wr_id, size_t off, uint32_t len,
	       struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, bool with_imm,
	       uint32_t imm, unsigned int flags);

/** Free everything of @p e. */
void ep_close(struct ep *e);

/** @return the state of @p qp, or -1 if it cannot be queried. */
int ep_qp_state(struct ibv_qp *qp);

/**
 * Poll @p cq until @p n completions or @p timeout_ms pass.
 * @return completions read.
 */
int ep_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int timeout_ms);

/** Post one receive of [off, off + len) of e->buf. */
int ep_post_recv(struct ep *e, uint64_t wr_id, size_t off, uint32_t len);

/** Post one send-queue WR on e->buf[off, off + len) (remote side: rb). */
int ep_post(struct ep *e, enum ibv_wr_opcode op, uint64_t wr_id, size_t off,
	    uint32_t len, const struct ep *remote, size_t roff,
	    unsigned int flags);

/** ep_post() with immediate data @p imm (host order). */
int ep_post_imm(struct ep *e, enum ibv_wr_opcode op, uint64_t wr_id,
		size_t off, uint32_t len, const struct ep *remote, size_t roff,
		unsigned int flags, uint32_t imm);

/**
 * Write DIR/NAME.ini: droce0 and droce1 over the net_ring pair NAME
 * (addresses 10.0.SUBNET.1 and .2), both ports behind net_fault with
 * @p fault and seeds @p seed and @p seed + 1, and point DROCE_CONFIG at
 * it. LOSS_PCAP=1 in the environment mirrors every frame to
 * DIR/NAME-droceN.pcap.
 * @return 0 or -1 (errno set).
 */
int ep_fault_config(const char *dir, const char *name, unsigned int subnet,
		    const char *fault, unsigned int seed);

/**
 * Are the checksums of the Ethernet frame at @p f right: the IPv4 header
 * checksum (if IPv4), and the TCP or UDP checksum over IPv4 or IPv6
 * (computed here, independently of droce)? *tcp says which it carried.
 */
bool frame_csums_ok(const uint8_t *f, bool *tcp);

/**
 * Write at @p ip an IPv4 (20 bytes, TTL 64) or IPv6 (hop limit 64) header
 * from @p src to @p dst (4 or 16 bytes each, NULL: zeros), then a TCP
 * (20 bytes, PSH and ACK) or UDP header from port 4000 to @p dport, for
 * @p payload bytes after them; checksums, IPv4 ID and TCP sequence
 * number zero. @return the length of the two headers.
 */
uint32_t ip_l4_header(uint8_t *ip, bool v6, bool tcp, const uint8_t *src,
		      const uint8_t *dst, uint16_t dport, uint32_t payload);

/** Drop CAP_NET_RAW from this process for good. @return 0 or -1. */
int ep_drop_net_raw(void);

/** Fill @p p with a pattern depending on @p seed. */
void fill_pattern(uint8_t *p, size_t len, uint32_t seed);

#endif /* DROCE_TEST_HARNESS_H */
