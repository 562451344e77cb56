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
	enum ibv_qp_type qp_type;   /* RC (default), UC, UD or raw packet */
	uint16_t max_tso_header;    /* not 0: the QP from ibv_create_qp_ex */
	uint32_t qkey;              /* UD: the Q_Key ep_pair_up() gives */
	uint8_t traffic_class;      /* RC/UC: the address vector's */
};

/** Defaults for @p o. */
void ep_opts_default(struct ep_opts *o);

/**
 * Open device @p dev (0: droce0) by its place in the device list.
 * @return its context, or NULL.
 */
struct ibv_context *ep_open_device(int dev);

/** Open device @p dev (0: droce0) and make an endpoint with a buffer. */
int ep_open(struct ep *e, int dev, size_t len, const struct ep_opts *o);

/**
 * Open @p a on droce0 and @p b on droce1, buffers of @p len bytes, and
 * bring them up with ep_pair_up(). @return 0 or -1.
 */
int ep_pair(struct ep *a, struct ep *b, size_t len, const struct ep_opts *o);

/**
 * Bring the QPs of @p a and @p b to RTS as their type (o->qp_type) wants:
 * RC and UC joined to each other, UD with Q_Key o->qkey, raw packet QPs
 * as they are. @return 0 or -1.
 */
int ep_pair_up(struct ep *a, struct ep *b, const struct ep_opts *o);

/** Bring @p a to RTS talking to @p b (both RESET->INIT->RTR->RTS). */
int ep_connect(struct ep *a, struct ep *b, const struct ep_opts *o);

/** The same towards a peer known by its QPN, PSN and GID only. */
int ep_connect_remote(struct ep *a, uint32_t qpn, uint32_t psn,
		      const union ibv_gid *gid, const struct ep_opts *o);

/**
 * Bring XRC target QP @p t from RESET to RTS, joined to the initiator
 * @p qpn at @p gid, @p rq_psn next (path MTU 1024, every remote right,
 * max_dest_rd_atomic 16). @return 0 or -1.
 */
int ep_xrc_target_up(struct ibv_qp *t, const union ibv_gid *gid,
		     uint32_t qpn, uint32_t rq_psn);

/**
 * Join XRC initiator @p i (its device's GID @p igid) and target @p t (at
 * @p tgid), both in RESET: the target up as ep_xrc_target_up() brings it,
 * the initiator to RTS, @p psn each way, retry counts 7, max_rd_atomic
 * 16, the local ACK timeout @p timeout. @return 0 or -1.
 */
int ep_xrc_join(struct ibv_qp *i, const union ibv_gid *igid,
		struct ibv_qp *t, const union ibv_gid *tgid, uint32_t psn,
		uint8_t timeout);

/** Bring UD QP @p qp from RESET to RTS with Q_Key @p qkey. */
int ud_qp_up(struct ibv_qp *qp, uint32_t qkey, uint32_t sq_psn);

/** Bring the UD QP of @p e to RTS with Q_Key @p qkey. */
int ep_ud_up(struct ep *e, uint32_t qkey);

/** Bring the raw packet QP of @p e to RTS. */
int ep_raw_up(struct ep *e);

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

/*
 * Two endpoints as a cmocka fixture, made once for a group of tests or
 * afresh for each test. pair_setup() fills *opts with ep_opts_default()
 * and the file's tweak, opens *a on droce0 and *b on droce1 with buffers
 * of len bytes, brings their QPs up with ep_pair_up() (or the file's up)
 * and runs the file's ready; pair_teardown() runs the file's release and
 * closes both endpoints. The endpoints and options are the test file's
 * own variables, so that its tests and helpers name them directly.
 */
struct ep_pair_fixture {
	struct ep *a;
	struct ep *b;
	struct ep_opts *opts;
	size_t len;
	/** After the defaults: the options this file's pair differs in. */
	void (*tweak)(struct ep_opts *o);
	/** Instead of ep_pair_up(): bring up the QPs the tests use. */
	int (*up)(void);
	/** Once up: what else the tests start from. @return 0 or -1. */
	int (*ready)(void);
	/** Before the endpoints close: free what up and ready made. */
	void (*release)(void);
};

/**
 * cmocka setup of the fixture *state (see pair_test() and
 * pair_run_group()). @return 0, or -1 if any step failed.
 */
int pair_setup(void **state);

/** cmocka teardown of the fixture *state: release, then close both. */
int pair_teardown(void **state);

struct CMUnitTest;

/**
 * Run the @p n tests of @p tests as the cmocka group @p name on one pair
 * from fixture @p f, set up before the first and torn down after the
 * last. @return what cmocka_run_group_tests() returns.
 */
int pair_run_group(const char *name, const struct CMUnitTest *tests,
		   size_t n, struct ep_pair_fixture *f);

/** pair_run_group() of the array @p tests, named as cmocka names it. */
#define pair_run_group_tests(tests, f) \
	pair_run_group(#tests, tests, sizeof(tests) / sizeof((tests)[0]), f)

/** pair_run_group() of the array @p tests, named @p name. */
#define pair_run_group_tests_name(name, tests, f) \
	pair_run_group(name, tests, sizeof(tests) / sizeof((tests)[0]), f)

/** A cmocka test on a pair of its own from fixture @p f. */
#define pair_test(test, f) \
	cmocka_unit_test_prestate_setup_teardown(test, pair_setup, \
						 pair_teardown, (void *)(f))

/** A test that opens the endpoints of fixture @p f itself; closed after. */
#define pair_test_teardown(test, f) \
	cmocka_unit_test_prestate_setup_teardown(test, NULL, pair_teardown, \
						 (void *)(f))

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
 * (addresses 10.0.SUBNET.1 and .2, fd00:0:0:SUBNET::1 and ::2, SUBNET
 * in hex there), both ports behind net_fault with
 * @p fault and seeds @p seed and @p seed + 1, and point DROCE_CONFIG at
 * it. LOSS_PCAP=1 in the environment mirrors every frame to
 * DIR/NAME-droceN.pcap.
 * @return 0 or -1 (errno set).
 */
int ep_fault_config(const char *dir, const char *name, unsigned int subnet,
		    const char *fault, unsigned int seed);

/**
 * ep_fault_config() with @p engine and @p device (lines, "" or NULL)
 * added to the [engine] section and to each [device] section, and the
 * ports behind net_fault only if @p fault is not NULL. A @p name of
 * "switch:NAME" makes both ports of net_fault's switch NAME instead of
 * a net_ring pair (DIR/NAME.ini).
 */
int ep_config(const char *dir, const char *name, unsigned int subnet,
	      const char *engine, const char *device, const char *fault,
	      unsigned int seed);

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

/** The monotonic clock, in milliseconds. */
uint64_t ep_now_ms(void);

/** Bytes of DPDK's heap allocated, on every socket. */
size_t ep_heap_allocated(void);

/** The process's resident set, in KiB. */
long ep_rss_kib(void);

#endif /* DROCE_TEST_HARNESS_H */
