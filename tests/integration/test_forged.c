/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Forged requests: frames no droce requester would send, put on the wire
 * by a raw packet QP on droce0 (built with lib/wire's droce_wire_build)
 * to QPs on droce1 joined to a QPN of droce0's that no QP has. A sniffer
 * rule on the raw QP sees what droce1 answers. Each case is one rule of
 * the responder; the testing guide's table lists them:
 *
 *  - a duplicate READ is answered only within the range and key of the
 *    READ it repeats (a wider range, another key: dropped), and a part
 *    of it is answered with just that part;
 *  - a READ or atomic beyond max_dest_rd_atomic's resources, while every
 *    one is still answering, gets the Invalid Request NAK and the QP
 *    fails;
 *  - an XRC request with a stale PSN naming an SRQ that does not exist
 *    is dropped and the target QP lives on; an expected one naming none
 *    gets the Invalid Request NAK;
 *  - the requester drops ACKs and NAKs of the reserved AETH type or with
 *    a reserved NAK code, and NAKs for PSNs it has not sent;
 *  - a frame with another partition's P_Key, a VLAN ID, or an IPv4-mapped
 *    IPv6 source is dropped and counted whatever it asks;
 *  - a WRITE FIRST not of the path MTU, a WRITE ONLY above it: the
 *    Invalid Request NAK;
 *  - a READ response MIDDLE where the FIRST is due: dropped;
 *  - QPNs are not consecutive and a destroyed QP's is not reused at
 *    once: a WRITE to it reaches no QP;
 *  - ARP requests and unasked-for replies naming droce0's address with
 *    another MAC, and a storm of requests from other addresses, do not
 *    move where droce1 sends to droce0;
 *  - a READ response of the wrong length fails the READ it answers with
 *    IBV_WC_BAD_RESP_ERR, not a WR before it that it acknowledges;
 *  - READ responses follow the IBTA's length rules: FIRST and MIDDLE
 *    the path MTU, LAST 1 to the MTU ending the READ exactly, ONLY all
 *    that was asked (0 for an empty READ); anything else is a bad
 *    response, nothing placed past the READ's length;
 *  - frames that lie (bad ICRC, cut short, IP/UDP lengths, an IPv4
 *    fragment or header checksum, an IPv6 extension header) are dropped
 *    and counted, nothing written;
 *  - a MIDDLE or LAST without its FIRST, a FIRST or another request
 *    inside a message: the Invalid Request NAK, nothing of it placed;
 *  - PSNs far ahead get one PSN sequence NAK, far behind an ACK as a
 *    duplicate, and neither is written;
 *  - a QP in RESET, INIT or ERR takes nothing;
 *  - floods of duplicate READs and of RNR NAKs hold no more mbufs than
 *    a burst's worth, and the QP goes on;
 *  - CNPs to no QP or with a bad ICRC are dropped and cut nothing, a
 *    flood of them leaves the rate at DCQCN's floor at worst and the
 *    lcore answering; CE marks get one CNP per cnp_interval_us at most;
 *  - a storm of IPv6 neighbour solicitations fills the neighbour table
 *    no further than its size, each answered once, and the QP goes on;
 *  - soft-RoCE's requests of a recorded interop failure, replayed frame
 *    for frame: each duplicate is acknowledged with the last PSN taken
 *    in order, the shifted FIRST gets the Invalid Request NAK.
 *
 * Needs root (a raw packet QP). The first argument, if any, is the
 * recorded failure (tests/data/interop-cases/); without it that test
 * fails.
 */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <droce.h>
#include "droce_wire.h"

#include "harness.h"

#define BUF (1u << 20)
#define SLOT 2048u               /* one frame of the raw QP */
#define TX_OFF 0u                /* droce0's frames to send */
#define TX_SLOTS 64u
#define RX_OFF (256u << 10)      /* what droce0's port receives */
#define RX_SLOTS 256u
#define PEER_QPN 0x5a5a5u        /* droce0's QPN that no QP has */
#define RQ_PSN 0x1000u           /* what droce1's QPs expect first */
#define QUIET_MS 300             /* no answer for this long: none comes */

static struct ep_opts opts, raw_opts;
static struct ep a, b;           /* droce0's raw QP, droce1's RC QP */
static struct ibv_flow *sniffer;
static uint8_t mac0[6], mac1[6];
static unsigned int b_arp_requests;   /* ARP requests droce1 sent */

/* One frame droce1 sent, as the tests look at it. */
struct answer {
	uint8_t opcode;
	uint32_t psn;
	uint32_t dqpn;
	uint8_t syndrome;           /* AETH, or 0xff without one */
	uint32_t len;               /* payload */
	uint32_t off;               /* of the payload in the frame's slot */
	uint64_t slot;
	uint8_t dst_mac[6];
};

static int
raw_post_recv(uint64_t slot)
{
	struct ibv_sge sge = { (uintptr_t)(a.buf + RX_OFF + slot * SLOT), SLOT,
			       a.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(a.qp, &wr, &bad);
}

/* A request of @p opcode from droce0's PEER_QPN to @p dqpn at @p psn. */
static void
request(struct droce_wire_pkt *p, uint8_t opcode, uint32_t dqpn,
	uint32_t psn)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dst_mac.addr_bytes, mac1, 6);
	memcpy(p->src_mac.addr_bytes, mac0, 6);
	p->ip_version = 4;
	p->ttl = 64;
	p->ip_frag = 0x4000;
	memcpy(p->src_gid, a.gid.raw, 16);
	memcpy(p->dst_gid, b.gid.raw, 16);
	p->udp_dport = DROCE_UDP_PORT;
	p->udp_sport = droce_udp_sport(PEER_QPN, dqpn);
	p->bth.opcode = opcode;
	p->bth.pkey = 0xffff;
	p->bth.dqpn = dqpn;
	p->bth.psn = psn & DROCE_PSN_MASK;
	p->bth.ackreq = 1;
}

/* A READ of [va, va + len) under @p rkey, to droce1's RC QP. */
static void
read_req(struct droce_wire_pkt *p, uint32_t psn, uint64_t va, uint32_t len,
	 uint32_t rkey)
{
	request(p, DROCE_TR_RC | DROCE_OP_READ_REQUEST, b.qp->qp_num,
		psn);
	p->reth = (struct droce_reth) { va, rkey, len };
}

/* Put the frame @p f of @p len bytes on the wire from droce0. */
static void
inject_raw(const void *f, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(a.buf + TX_OFF), len, a.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	memcpy(a.buf + TX_OFF, f, len);
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
}

/* Put @p n frames on the wire from droce0, in order. */
static void
inject(const struct droce_wire_pkt *p, unsigned int n)
{
	struct ibv_send_wr wr[TX_SLOTS], *bad;
	struct ibv_sge sge[TX_SLOTS];
	struct ibv_wc wc[TX_SLOTS];
	unsigned int i, got = 0;
	uint64_t end = ep_now_ms() + 5000;

	assert_true(n <= TX_SLOTS);
	for (i = 0; i < n; i++) {
		uint8_t *f = a.buf + TX_OFF + i * SLOT;
		int len = droce_wire_build(f, SLOT, &p[i]);

		assert_true(len > 0);
		sge[i] = (struct ibv_sge) { (uintptr_t)f, (uint32_t)len,
					    a.mr->lkey };
		wr[i] = (struct ibv_send_wr) {
			.wr_id = i, .next = i + 1 < n ? &wr[i + 1] : NULL,
			.sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		};
	}
	assert_int_equal(ibv_post_send(a.qp, wr, &bad), 0);
	while (got < n) {
		int r = ibv_poll_cq(a.scq, (int)(n - got), wc);

		assert_true(r >= 0);
		for (i = 0; i < (unsigned int)r; i++)
			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		got += (unsigned int)r;
		assert_true(ep_now_ms() < end);
	}
}

/*
 * What droce1 sent droce0 until nothing came for QUIET_MS: up to @p max
 * RoCE frames into @p out (ARP and neighbour discovery left out). The
 * raw QP's receive slots of the frames returned stay held until the next
 * call; every other slot is posted again at once, so that a storm of
 * frames not returned leaves slots for the answers after it.
 * @return how many.
 */
static unsigned int
answers(struct answer *out, unsigned int max)
{
	static uint64_t held[RX_SLOTS];
	static unsigned int nheld;
	uint64_t quiet = ep_now_ms() + QUIET_MS;
	unsigned int n = 0, i;
	struct ibv_wc wc[32];

	for (i = 0; i < nheld; i++)
		assert_int_equal(raw_post_recv(held[i]), 0);
	nheld = 0;
	while (ep_now_ms() < quiet) {
		int r = ibv_poll_cq(a.rcq, 32, wc);

		assert_true(r >= 0);
		for (i = 0; i < (unsigned int)r; i++) {
			const uint8_t *f = a.buf + RX_OFF + wc[i].wr_id * SLOT;
			struct droce_wire_pkt p;
			bool roce;

			if (wc[i].status == IBV_WC_SUCCESS &&
			    memcmp(f + 6, mac1, 6) == 0 && f[12] == 0x08 &&
			    f[13] == 0x06 && f[21] == 1)
				b_arp_requests++;
			roce = wc[i].status == IBV_WC_SUCCESS &&
				memcmp(f + 6, mac1, 6) == 0 &&
				droce_wire_parse(f, wc[i].byte_len, 0, &p) == 0;
			if (roce)
				quiet = ep_now_ms() + QUIET_MS;
			if (!roce || n == max) {
				assert_int_equal(raw_post_recv(wc[i].wr_id),
						 0);
				continue;
			}
			held[nheld++] = wc[i].wr_id;
			out[n++] = (struct answer) {
				.opcode = p.bth.opcode, .psn = p.bth.psn,
				.dqpn = p.bth.dqpn,
				.syndrome = (p.op->flags & DROCE_OPF_AETH) ?
					p.aeth.syndrome : 0xff,
				.len = p.payload_len,
				.off = (uint32_t)(p.payload - f),
				.slot = wc[i].wr_id,
			};
			memcpy(out[n - 1].dst_mac, f, 6);
		}
	}
	return n;
}

static const uint8_t *
answer_payload(const struct answer *x)
{
	return a.buf + RX_OFF + x->slot * SLOT + x->off;
}

/* droce1's RC QP from RESET to RTS, joined to PEER_QPN, RQ_PSN next. */
static int
b_up(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	struct answer x[RX_SLOTS];

	(void)state;
	if (ibv_modify_qp(b.qp, &attr, IBV_QP_STATE) != 0 ||
	    ep_connect_remote(&b, PEER_QPN, RQ_PSN, &a.gid, &opts) != 0)
		return -1;
	answers(x, RX_SLOTS);   /* what came before: not this test's */
	return 0;
}

static int
setup(void **state)
{
	struct ibv_flow_attr sn = {
		.type = IBV_FLOW_ATTR_SNIFFER, .size = sizeof(sn), .port = 1,
	};
	struct droce_counters c;
	uint64_t end;
	unsigned int i;

	(void)state;
	ep_opts_default(&opts);
	opts.mtu = IBV_MTU_1024;
	opts.timeout = 20;      /* 4 s: no resend while a test answers */
	raw_opts = opts;
	raw_opts.qp_type = IBV_QPT_RAW_PACKET;
	raw_opts.max_send_wr = TX_SLOTS;
	raw_opts.max_recv_wr = RX_SLOTS;
	raw_opts.cqe = 2 * RX_SLOTS;
	if (ep_open(&a, 0, BUF, &raw_opts) != 0 || ep_raw_up(&a) != 0 ||
	    ep_open(&b, 1, BUF, &opts) != 0)
		return -1;
	for (i = 0; i < RX_SLOTS; i++)
		if (raw_post_recv(i) != 0)
			return -1;
	sniffer = ibv_create_flow(a.qp, &sn);
	if (sniffer == NULL || droce_query_mac(a.ctx, mac0) != 0 ||
	    droce_query_mac(b.ctx, mac1) != 0 || b_up(NULL) != 0)
		return -1;
	/* droce1 answers once it knows droce0's MAC */
	end = ep_now_ms() + 5000;
	do {
		if (droce_query_counters(b.ctx, &c) != 0 || ep_now_ms() > end)
			return -1;
	} while (c.rx_arp == 0);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	if (sniffer != NULL)
		ibv_destroy_flow(sniffer);
	ep_close(&b);
	ep_close(&a);
	return 0;
}

/*
 * A duplicate READ is answered from what the READ it repeats was granted:
 * not a byte more, nor under another key.
 */
static void
test_dup_read_within_original(void **state)
{
	struct ibv_mr *other = ibv_reg_mr(b.pd, b.buf + 4096, 8192,
					  IBV_ACCESS_REMOTE_READ |
					  IBV_ACCESS_LOCAL_WRITE);
	uint64_t va = (uintptr_t)b.buf;
	struct droce_wire_pkt p;
	struct answer x[8];

	(void)state;
	assert_non_null(other);
	fill_pattern(b.buf, 16384, 3);
	read_req(&p, RQ_PSN, va, 100, b.mr->rkey);
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].opcode, DROCE_TR_RC |
			 DROCE_OP_READ_RESPONSE_ONLY);
	assert_int_equal(x[0].psn, RQ_PSN);
	assert_int_equal(x[0].len, 100);
	assert_memory_equal(answer_payload(&x[0]), b.buf, 100);

	/* the same PSN for more than was asked, or under another key */
	read_req(&p, RQ_PSN, va, 3000, b.mr->rkey);
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 0);
	read_req(&p, RQ_PSN, va + 4096, 100, other->rkey);
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 0);
	read_req(&p, RQ_PSN, va + 60, 41, b.mr->rkey);
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 0);

	/* a part of it: that part */
	read_req(&p, RQ_PSN, va + 50, 50, b.mr->rkey);
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].psn, RQ_PSN);
	assert_int_equal(x[0].len, 50);
	assert_memory_equal(answer_payload(&x[0]), b.buf + 50, 50);

	/* and the QP goes on */
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	read_req(&p, RQ_PSN + 1, va + 1000, 8, b.mr->rkey);
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].psn, RQ_PSN + 1);
	assert_memory_equal(answer_payload(&x[0]), b.buf + 1000, 8);
	assert_int_equal(ibv_dereg_mr(other), 0);
}

/*
 * max_dest_rd_atomic (16) READs being answered, and one more: the
 * Invalid Request NAK at its PSN, and the QP fails.
 */
static void
test_reads_beyond_max_dest_rd_atomic(void **state)
{
	struct droce_wire_pkt p[17];
	struct answer x[RX_SLOTS];
	unsigned int i, n, naks = 0;

	(void)state;
	for (i = 0; i < 17; i++)
		read_req(&p[i], RQ_PSN + 4 * i, (uintptr_t)b.buf, 4096,
			 b.mr->rkey);
	inject(p, 17);
	n = answers(x, RX_SLOTS);
	for (i = 0; i < n; i++) {
		if (x[i].syndrome == 0xff ||
		    (x[i].syndrome & DROCE_AETH_TYPE_MASK) != DROCE_AETH_NAK)
			continue;
		naks++;
		assert_int_equal(x[i].syndrome,
				 DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
		assert_int_equal(x[i].psn, RQ_PSN + 4 * 16);
	}
	assert_int_equal(naks, 1);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_ERR);
}

/*
 * XRC: a stale request naming an SRQ that does not exist is a duplicate
 * like any other, and must not end the target QP; an expected one does.
 */
static void
test_xrc_stale_unknown_srq(void **state)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD, .fd = -1,
	};
	struct ibv_xrcd *xrcd = ibv_open_xrcd(b.ctx, &xa);
	struct ibv_cq *cq = ibv_create_cq(b.ctx, 16, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC, .xrcd = xrcd, .cq = cq, .pd = b.pd,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = xrcd,
	};
	struct ibv_sge sge = { (uintptr_t)b.buf, 4096, b.mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &sge,
				   .num_sge = 1 }, *bad;
	struct droce_wire_pkt p;
	struct ibv_srq *srq;
	struct ibv_qp *tgt;
	struct answer x[8];
	struct ibv_wc wc;
	uint32_t srqn;
	uint8_t data[64];

	(void)state;
	assert_non_null(xrcd);
	assert_non_null(cq);
	srq = ibv_create_srq_ex(b.ctx, &sa);
	assert_non_null(srq);
	assert_int_equal(ibv_get_srq_num(srq, &srqn), 0);
	assert_int_equal(ibv_post_srq_recv(srq, &rwr, &bad), 0);
	tgt = ibv_create_qp_ex(b.ctx, &qa);
	assert_non_null(tgt);
	assert_int_equal(ep_xrc_target_up(tgt, &a.gid, PEER_QPN, RQ_PSN), 0);
	memset(data, 0x5c, sizeof(data));

	/* stale, no such SRQ: dropped */
	request(&p, DROCE_TR_XRC | DROCE_OP_SEND_ONLY, tgt->qp_num,
		RQ_PSN - 1);
	p.xrceth.xrcsrq = srqn ^ 0x800;
	p.payload = data;
	p.payload_len = sizeof(data);
	inject(&p, 1);
	answers(x, 8);
	assert_int_equal(ep_qp_state(tgt), IBV_QPS_RTS);

	/* expected, its SRQ: taken */
	p.bth.psn = RQ_PSN;
	p.xrceth.xrcsrq = srqn;
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].syndrome & DROCE_AETH_TYPE_MASK, DROCE_AETH_ACK);
	assert_int_equal(ep_poll(cq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 7);
	assert_int_equal(wc.byte_len, sizeof(data));
	assert_memory_equal(b.buf, data, sizeof(data));

	/* expected, no such SRQ: the NAK, and the QP fails */
	p.bth.psn = RQ_PSN + 1;
	p.xrceth.xrcsrq = srqn ^ 0x800;
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].syndrome, DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
	assert_int_equal(x[0].psn, RQ_PSN + 1);
	assert_int_equal(ep_qp_state(tgt), IBV_QPS_ERR);

	assert_int_equal(ibv_destroy_qp(tgt), 0);
	assert_int_equal(ibv_destroy_srq(srq), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_close_xrcd(xrcd), 0);
}

/*
 * Headers droce takes from no one: another partition's P_Key, a VLAN it
 * is not on, an IPv6 source that is IPv4-mapped (droce0's IPv4 GID, as
 * if from the QP's peer). Each is counted and dropped; the partition's
 * limited-member P_Key and a priority tag (VLAN 0) are taken.
 */
static void
test_headers_refused(void **state)
{
	uint8_t data[32];
	union ibv_gid gid1_ll;
	struct droce_counters c0, c1;
	struct droce_wire_pkt p;
	struct answer x[8];
	int i;

	(void)state;
	assert_int_equal(ibv_query_gid(b.ctx, 1, 1, &gid1_ll), 0);
	memset(b.buf, 0, 4096);
	memset(data, 0xa7, sizeof(data));
	assert_int_equal(droce_query_counters(b.ctx, &c0), 0);
	for (i = 0; i < 4; i++) {
		request(&p, DROCE_TR_RC | DROCE_OP_WRITE_ONLY, b.qp->qp_num,
			RQ_PSN);
		p.reth = (struct droce_reth) { (uintptr_t)b.buf, b.mr->rkey,
					       sizeof(data) };
		p.payload = data;
		p.payload_len = sizeof(data);
		switch (i) {
		case 0:
			p.bth.pkey = 0x8123;
			break;
		case 1:
			p.has_vlan = true;
			p.vlan_tci = 5;
			break;
		case 2:
			p.ip_version = 6;
			memcpy(p.dst_gid, gid1_ll.raw, 16);
			break;
		default:
			/* the default partition's limited member, tagged
			 * with priority 3 in VLAN 0: taken */
			p.bth.pkey = 0x7fff;
			p.has_vlan = true;
			p.vlan_tci = 3 << 13;
			break;
		}
		inject(&p, 1);
		if (i < 3) {
			assert_int_equal(answers(x, 8), 0);
			assert_int_equal(b.buf[0], 0);
		}
	}
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].syndrome & DROCE_AETH_TYPE_MASK, DROCE_AETH_ACK);
	assert_memory_equal(b.buf, data, sizeof(data));
	assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
	assert_int_equal(c1.rx_bad_header - c0.rx_bad_header, 3);
}

/*
 * Packets whose payload is not what their place in the message says: a
 * WRITE FIRST shorter than the path MTU, a WRITE ONLY longer. Each is an
 * Invalid Request, NAKed at its PSN, and nothing of it is placed.
 */
static void
test_payload_not_path_mtu(void **state)
{
	static uint8_t data[1028];
	static const struct {
		uint8_t op;
		uint32_t len;
	} cases[] = {
		{ DROCE_OP_WRITE_FIRST, 100 },
		{ DROCE_OP_WRITE_FIRST, 1028 },
		{ DROCE_OP_WRITE_ONLY, 1028 },
	};
	struct droce_wire_pkt p;
	struct answer x[8];
	size_t i;

	(void)state;
	memset(data, 0x3c, sizeof(data));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(b_up(NULL), 0);
		memset(b.buf, 0, 4096);
		request(&p, DROCE_TR_RC | cases[i].op, b.qp->qp_num, RQ_PSN);
		p.reth = (struct droce_reth) { (uintptr_t)b.buf, b.mr->rkey,
					       2048 };
		p.payload = data;
		p.payload_len = cases[i].len;
		inject(&p, 1);
		assert_int_equal(answers(x, 8), 1);
		assert_int_equal(x[0].syndrome,
				 DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
		assert_int_equal(x[0].psn, RQ_PSN);
		assert_int_equal(ep_qp_state(b.qp), IBV_QPS_ERR);
		assert_int_equal(b.buf[0], 0);
	}
}

/*
 * The requester of a READ: a MIDDLE response where the first is due
 * answers nothing and is dropped; FIRST, MIDDLE, LAST complete it.
 */
static void
test_read_response_out_of_order(void **state)
{
	struct ibv_sge sge = { (uintptr_t)b.buf, 3000, b.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 11, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = 0x10000, .rkey = 0x1234 },
	}, *bad;
	static uint8_t data[3000];
	static const uint8_t ops[] = {
		DROCE_OP_READ_RESPONSE_FIRST, DROCE_OP_READ_RESPONSE_MIDDLE,
		DROCE_OP_READ_RESPONSE_LAST,
	};
	struct droce_wire_pkt p[3], stray;
	struct answer x[8];
	struct ibv_wc wc;
	uint32_t psn;
	int i;

	(void)state;
	memset(b.buf, 0, 4096);
	fill_pattern(data, sizeof(data), 12);
	assert_int_equal(ibv_post_send(b.qp, &wr, &bad), 0);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].opcode, DROCE_TR_RC | DROCE_OP_READ_REQUEST);
	psn = x[0].psn;
	for (i = 0; i < 3; i++) {
		request(&p[i], DROCE_TR_RC | ops[i], b.qp->qp_num,
			(psn + (uint32_t)i) & DROCE_PSN_MASK);
		p[i].bth.ackreq = 0;
		p[i].aeth = (struct droce_aeth) {
			DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, 1 };
		p[i].payload = data + 1024 * i;
		p[i].payload_len = i < 2 ? 1024 : 3000 - 2048;
	}
	/* the MIDDLE one, with the first PSN */
	stray = p[1];
	stray.bth.psn = psn;
	inject(&stray, 1);
	assert_int_equal(ep_poll(b.scq, &wc, 1, QUIET_MS), 0);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	assert_int_equal(b.buf[0], 0);

	inject(p, 3);
	assert_int_equal(ep_poll(b.scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.wr_id, 11);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(b.buf, data, sizeof(data));
}

/* An RC QP on droce1 on b's PD and CQs, in RESET. */
static struct ibv_qp *
b_qp(void)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = b.scq, .recv_cq = b.rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(b.pd, &qa);
}

/*
 * QPNs cannot be guessed from one another, and a destroyed QP's QPN is
 * not given to the next QP: a frame to it reaches no QP.
 */
static void
test_qpn_unpredictable(void **state)
{
	struct ibv_qp *qp[16];
	struct droce_counters c0, c1;
	struct droce_wire_pkt p;
	struct answer x[8];
	uint32_t gone;
	int i, j, steps = 0;

	(void)state;
	for (i = 0; i < 16; i++) {
		qp[i] = b_qp();
		assert_non_null(qp[i]);
		for (j = 0; j < i; j++)
			assert_int_not_equal(qp[i]->qp_num, qp[j]->qp_num);
		if (i > 0 && qp[i]->qp_num == qp[i - 1]->qp_num + 1)
			steps++;
		assert_true(qp[i]->qp_num > 1 && qp[i]->qp_num < 0xffffff);
	}
	/* (sixteen random tags in a row one apart: one chance in 2^180) */
	assert_true(steps < 15);
	gone = qp[0]->qp_num;
	for (i = 0; i < 16; i++)
		assert_int_equal(ibv_destroy_qp(qp[i]), 0);
	qp[0] = b_qp();
	assert_non_null(qp[0]);
	assert_int_not_equal(qp[0]->qp_num, gone);

	/* a WRITE to the QPN that is gone: counted, not answered */
	memset(b.buf, 0, 64);
	assert_int_equal(droce_query_counters(b.ctx, &c0), 0);
	request(&p, DROCE_TR_RC | DROCE_OP_WRITE_ONLY, gone, RQ_PSN);
	p.reth = (struct droce_reth) { (uintptr_t)b.buf, b.mr->rkey, 4 };
	p.payload = (const uint8_t *)"abcd";
	p.payload_len = 4;
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 0);
	assert_int_equal(b.buf[0], 0);
	assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
	assert_int_equal(c1.rx_not_ours - c0.rx_not_ours, 1);
	assert_int_equal(ibv_destroy_qp(qp[0]), 0);
}

/* An ARP frame from droce0's port: @p op, sender @p sha and @p sip,
 * target droce1's address. */
static void
arp(uint16_t op, const uint8_t sha[6], const uint8_t sip[4])
{
	uint8_t f[60] = { 0 };

	memcpy(f, op == 1 ? (const uint8_t *)"\xff\xff\xff\xff\xff\xff" :
	       mac1, 6);
	memcpy(f + 6, mac0, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	f[15] = 1;              /* Ethernet */
	f[16] = 0x08;           /* IPv4 */
	f[18] = 6;
	f[19] = 4;
	f[21] = (uint8_t)op;
	memcpy(f + 22, sha, 6);
	memcpy(f + 28, sip, 4);
	memcpy(f + 32, mac1, 6);
	memcpy(f + 38, b.gid.raw + 12, 4);
	inject_raw(f, sizeof(f));
}

/* A new RC QP on droce1 joined to droce0; the destination MAC of the
 * WRITE it sends. */
static void
new_qp_sends_to(uint8_t dst[6])
{
	struct ibv_sge sge = { (uintptr_t)b.buf, 16, b.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 5, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = 0x10000, .rkey = 0x1234 },
	}, *bad;
	struct ep c = b;
	struct answer x[8];

	c.qp = b_qp();
	assert_non_null(c.qp);
	assert_int_equal(ep_connect_remote(&c, PEER_QPN, RQ_PSN, &a.gid,
					   &opts), 0);
	assert_int_equal(ibv_post_send(c.qp, &wr, &bad), 0);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].opcode, DROCE_TR_RC | DROCE_OP_WRITE_ONLY);
	memcpy(dst, x[0].dst_mac, 6);
	assert_int_equal(ibv_destroy_qp(c.qp), 0);
}

/*
 * ARP from anyone on the link: a request and an unasked-for reply naming
 * droce0's address with another MAC must not move where droce1 sends to
 * droce0, and requests from a hundred other addresses (more than the
 * neighbour table holds) must not push droce0's entry out: a QP made
 * afterwards sends to droce0's MAC without asking again.
 */
static void
test_arp_does_not_redirect(void **state)
{
	static const uint8_t evil[6] = { 0x02, 0xee, 0xee, 0xee, 0xee, 0x01 };
	struct answer x[8];
	uint8_t sip[4], dst[6];
	unsigned int asked;
	int i;

	(void)state;
	arp(1, evil, a.gid.raw + 12);
	arp(2, evil, a.gid.raw + 12);
	answers(x, 8);          /* droce1's reply: not RoCE */
	new_qp_sends_to(dst);
	assert_memory_equal(dst, mac0, 6);

	memcpy(sip, a.gid.raw + 12, 4);
	for (i = 0; i < 100; i++) {
		sip[3] = (uint8_t)(100 + i);
		arp(1, evil, sip);
	}
	answers(x, 8);
	asked = b_arp_requests;
	new_qp_sends_to(dst);
	assert_memory_equal(dst, mac0, 6);
	assert_int_equal(b_arp_requests, asked);
}

/* An ACK or NAK from PEER_QPN to droce1's RC QP for @p psn. */
static void
ack(struct droce_wire_pkt *p, uint32_t psn, uint8_t syndrome)
{
	request(p, DROCE_TR_RC | DROCE_OP_ACKNOWLEDGE, b.qp->qp_num, psn);
	p->bth.ackreq = 0;
	p->aeth = (struct droce_aeth) { syndrome, 1 };
}

/*
 * The requester: ACKs and NAKs of the reserved AETH type or with a
 * reserved NAK code, and NAKs for PSNs never sent, are dropped; the WR
 * completes on the real ACK.
 */
static void
test_requester_undefined_aeth(void **state)
{
	static const uint8_t undefined[] = {
		0x40, 0x5f, DROCE_AETH_NAK | 5, DROCE_AETH_NAK | 0x1f,
	};
	struct ibv_sge sge = { (uintptr_t)b.buf, 64, b.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = 0x10000, .rkey = 0x1234 },
	}, *bad;
	struct droce_wire_pkt p;
	struct answer x[8];
	struct ibv_wc wc;
	uint32_t psn;
	size_t i;

	(void)state;
	assert_int_equal(ibv_post_send(b.qp, &wr, &bad), 0);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].opcode, DROCE_TR_RC | DROCE_OP_WRITE_ONLY);
	assert_int_equal(x[0].dqpn, PEER_QPN);
	psn = x[0].psn;
	for (i = 0; i < sizeof(undefined); i++) {
		ack(&p, psn, undefined[i]);
		inject(&p, 1);
	}
	/* a NAK for a PSN not sent yet */
	ack(&p, (psn + 3) & DROCE_PSN_MASK,
	    DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
	inject(&p, 1);
	assert_int_equal(ep_poll(b.scq, &wc, 1, QUIET_MS), 0);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);

	ack(&p, psn, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID);
	inject(&p, 1);
	assert_int_equal(ep_poll(b.scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.wr_id, 9);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
}

/* A READ response of @p op from PEER_QPN to droce1's RC QP. */
static void
read_resp(struct droce_wire_pkt *p, uint8_t op, uint32_t psn,
	  const uint8_t *data, uint32_t len)
{
	request(p, DROCE_TR_RC | op, b.qp->qp_num, psn);
	p->bth.ackreq = 0;
	p->aeth = (struct droce_aeth) {
		DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, 1 };
	p->payload = data;
	p->payload_len = len;
}

/*
 * A WRITE, then a READ whose response has the wrong length: the
 * response acknowledges the WRITE, which completes; the READ it answers
 * fails with IBV_WC_BAD_RESP_ERR, not the WRITE before it.
 */
static void
test_bad_read_response_fails_the_read(void **state)
{
	struct ibv_sge sge[2] = {
		{ (uintptr_t)b.buf, 64, b.mr->lkey },
		{ (uintptr_t)b.buf + 4096, 100, b.mr->lkey },
	};
	struct ibv_send_wr wr[2] = {
		{ .wr_id = 21, .next = &wr[1], .sg_list = &sge[0],
		  .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		  .send_flags = IBV_SEND_SIGNALED,
		  .wr.rdma = { .remote_addr = 0x10000, .rkey = 0x1234 } },
		{ .wr_id = 22, .sg_list = &sge[1], .num_sge = 1,
		  .opcode = IBV_WR_RDMA_READ,
		  .send_flags = IBV_SEND_SIGNALED,
		  .wr.rdma = { .remote_addr = 0x20000, .rkey = 0x1234 } },
	}, *bad;
	static uint8_t data[50];
	struct droce_wire_pkt p;
	struct answer x[8];
	struct ibv_wc wc;

	(void)state;
	assert_int_equal(ibv_post_send(b.qp, wr, &bad), 0);
	assert_int_equal(answers(x, 8), 2);
	assert_int_equal(x[1].opcode, DROCE_TR_RC | DROCE_OP_READ_REQUEST);
	read_resp(&p, DROCE_OP_READ_RESPONSE_ONLY, x[1].psn, data,
		  sizeof(data));
	inject(&p, 1);
	assert_int_equal(ep_poll(b.scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.wr_id, 21);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(ep_poll(b.scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.wr_id, 22);
	assert_int_equal(wc.status, IBV_WC_BAD_RESP_ERR);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_ERR);
}

/* One READ and the responses forged for it. */
struct read_case {
	uint32_t len;               /* of the READ */
	unsigned int n;
	uint8_t op[3];              /* READ_RESPONSE_* */
	uint32_t plen[3];
	bool ok;                    /* else IBV_WC_BAD_RESP_ERR */
};

#define R_FIRST DROCE_OP_READ_RESPONSE_FIRST
#define R_MIDDLE DROCE_OP_READ_RESPONSE_MIDDLE
#define R_LAST DROCE_OP_READ_RESPONSE_LAST
#define R_ONLY DROCE_OP_READ_RESPONSE_ONLY

static const struct read_case read_cases[] = {
	/* FIRST and MIDDLE carry the path MTU and leave some for LAST */
	{ 1024, 1, { R_FIRST }, { 1024 }, false },
	{ 2048, 3, { R_FIRST, R_MIDDLE, R_LAST }, { 1024, 1024, 0 }, false },
	{ 3000, 1, { R_FIRST }, { 1000 }, false },
	{ 3000, 2, { R_FIRST, R_MIDDLE }, { 1024, 1000 }, false },
	/* LAST ends the READ exactly, with 1 to the MTU */
	{ 3000, 3, { R_FIRST, R_MIDDLE, R_LAST }, { 1024, 1024, 900 },
	  false },
	{ 2048, 2, { R_FIRST, R_LAST }, { 1024, 1024 }, true },
	/* ONLY carries what is asked, up to the MTU, 0 for an empty READ */
	{ 100, 1, { R_ONLY }, { 99 }, false },
	{ 100, 1, { R_ONLY }, { 101 }, false },
	{ 3000, 1, { R_ONLY }, { 1024 }, false },
	{ 1024, 1, { R_ONLY }, { 1024 }, true },
	{ 0, 1, { R_ONLY }, { 0 }, true },
};

/*
 * READ responses of lengths the IBTA does not allow for their position
 * or for what the READ asked: IBV_WC_BAD_RESP_ERR, nothing placed past
 * the READ's length. The right ones complete it, every byte checked.
 */
static void
test_read_response_lengths(void **state)
{
	static uint8_t data[3 * 1024];
	static uint8_t before[4096];
	size_t i;

	(void)state;
	fill_pattern(data, sizeof(data), 17);
	for (i = 0; i < sizeof(read_cases) / sizeof(read_cases[0]); i++) {
		const struct read_case *c = &read_cases[i];
		struct ibv_sge sge = { (uintptr_t)b.buf, c->len, b.mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 30 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = 0x10000, .rkey = 0x1234 },
		}, *bad;
		struct droce_wire_pkt p[3];
		uint32_t off = 0;
		struct answer x[8];
		struct ibv_wc wc;
		unsigned int j;

		assert_int_equal(b_up(NULL), 0);
		memset(b.buf, 0, sizeof(before));
		memset(before, 0, sizeof(before));
		assert_int_equal(ibv_post_send(b.qp, &wr, &bad), 0);
		assert_int_equal(answers(x, 8), 1);
		for (j = 0; j < c->n; j++) {
			read_resp(&p[j], c->op[j],
				  (x[0].psn + j) & DROCE_PSN_MASK, data + off,
				  c->plen[j]);
			off += c->plen[j];
		}
		inject(p, c->n);
		if (ep_poll(b.scq, &wc, 1, 2000) != 1)
			fail_msg("case %zu: no completion", i);
		assert_int_equal(wc.wr_id, 30 + i);
		if (wc.status != (c->ok ? IBV_WC_SUCCESS :
				  IBV_WC_BAD_RESP_ERR))
			fail_msg("case %zu: %s", i,
				 ibv_wc_status_str(wc.status));
		if (c->ok)
			assert_memory_equal(b.buf, data, c->len);
		assert_memory_equal(b.buf + c->len, before + c->len,
				    sizeof(before) - c->len);
	}
}

/* A WRITE ONLY of @p len bytes of @p data into b.buf at @p psn. */
static void
write_only(struct droce_wire_pkt *p, uint32_t psn, const uint8_t *data,
	   uint32_t len)
{
	request(p, DROCE_TR_RC | DROCE_OP_WRITE_ONLY, b.qp->qp_num, psn);
	p->reth = (struct droce_reth) { (uintptr_t)b.buf, b.mr->rkey, len };
	p->payload = data;
	p->payload_len = len;
}

/* The IPv4 header checksum of the header at @p ip, written in. */
static void
ipv4_csum(uint8_t *ip)
{
	uint32_t sum = 0;
	unsigned int i;

	ip[10] = ip[11] = 0;
	for (i = 0; i < (ip[0] & 0xfu) * 4u; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	droce_put_be16(ip + 10, (uint16_t)~sum);
}

/* The sum of droce1's drop counters. */
static uint64_t
b_drops(const struct droce_counters *c)
{
	return c->rx_icrc_err + c->rx_malformed + c->rx_not_ours +
	       c->rx_bad_header;
}

/*
 * Frames that are not what they say: a bad ICRC, cut short, IP and UDP
 * lengths that lie (longer or shorter than what follows), an IPv4
 * fragment, a bad IPv4 header checksum, an IPv6 hop-by-hop extension
 * header before the UDP header. Each is dropped and counted by droce1
 * (the ICRC in rx_icrc_err, the rest among its drop counters), nothing
 * is answered or written, and the same WRITE whole is then taken.
 */
static void
test_malformed_frames(void **state)
{
	enum { N = 9 };
	uint8_t data[64], f[SLOT];
	struct droce_counters c0, c1;
	struct droce_wire_pkt p;
	struct answer x[8];
	int i, len;

	(void)state;
	memset(b.buf, 0, 4096);
	fill_pattern(data, sizeof(data), 21);
	assert_int_equal(droce_query_counters(b.ctx, &c0), 0);
	for (i = 0; i < N; i++) {
		uint8_t *ip = f + 14;

		write_only(&p, RQ_PSN, data, sizeof(data));
		if (i == 8)
			p.ip_version = 6;
		len = droce_wire_build(f, sizeof(f), &p);
		assert_true(len > 0);
		switch (i) {
		case 0:                 /* the ICRC */
			f[len - 1] ^= 1;
			break;
		case 1:                 /* cut short */
			len -= 8;
			break;
		case 2:                 /* IP length past the frame */
			droce_put_be16(ip + 2, droce_get_be16(ip + 2) + 64);
			ipv4_csum(ip);
			break;
		case 3:                 /* IP length short of the UDP one */
			droce_put_be16(ip + 2, droce_get_be16(ip + 2) - 8);
			ipv4_csum(ip);
			break;
		case 4:                 /* UDP length short of the IP one */
			droce_put_be16(ip + 24, droce_get_be16(ip + 24) - 8);
			break;
		case 5:                 /* UDP length past the IP packet */
			droce_put_be16(ip + 24, droce_get_be16(ip + 24) + 8);
			break;
		case 6:                 /* more fragments */
			ip[6] |= 0x20;
			ipv4_csum(ip);
			break;
		case 7:                 /* the IPv4 header checksum */
			ip[10] ^= 0x40;
			break;
		default:                /* IPv6, hop-by-hop options first */
			memmove(ip + 48, ip + 40, (size_t)len - 14 - 40);
			memset(ip + 40, 0, 8);
			ip[40] = ip[6];         /* its next header: UDP */
			ip[41] = 0;             /* 8 bytes */
			ip[42] = 1;             /* PadN of 4: 6 bytes of pad */
			ip[43] = 4;
			ip[6] = 0;              /* hop-by-hop */
			droce_put_be16(ip + 4, droce_get_be16(ip + 4) + 8);
			len += 8;
			break;
		}
		inject_raw(f, (uint32_t)len);
		assert_int_equal(answers(x, 8), 0);
		assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
		assert_int_equal(b_drops(&c1) - b_drops(&c0), (uint64_t)i + 1);
	}
	assert_int_equal(c1.rx_icrc_err - c0.rx_icrc_err, 1);
	assert_int_equal(b.buf[0], 0);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);

	write_only(&p, RQ_PSN, data, sizeof(data));
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].syndrome & DROCE_AETH_TYPE_MASK, DROCE_AETH_ACK);
	assert_int_equal(x[0].psn, RQ_PSN);
	assert_memory_equal(b.buf, data, sizeof(data));
}

/*
 * Packets out of their message's order, at the expected PSN: a MIDDLE or
 * LAST with no FIRST before it, a FIRST where the MIDDLE or LAST of a
 * message begun is due, a new request there. Each is an Invalid Request
 * NAKed at its PSN, the QP in ERR, nothing of it placed.
 */
static void
test_opcode_sequence(void **state)
{
	static const struct {
		uint8_t first;          /* 0xff: none */
		uint8_t op;
	} cases[] = {
		{ 0xff, DROCE_OP_WRITE_MIDDLE },
		{ 0xff, DROCE_OP_WRITE_LAST },
		{ 0xff, DROCE_OP_SEND_MIDDLE },
		{ 0xff, DROCE_OP_SEND_LAST },
		{ DROCE_OP_WRITE_FIRST, DROCE_OP_WRITE_FIRST },
		{ DROCE_OP_WRITE_FIRST, DROCE_OP_WRITE_ONLY },
		{ DROCE_OP_WRITE_FIRST, DROCE_OP_SEND_ONLY },
		{ DROCE_OP_WRITE_FIRST, DROCE_OP_READ_REQUEST },
		{ DROCE_OP_SEND_FIRST, DROCE_OP_SEND_FIRST },
		{ DROCE_OP_SEND_FIRST, DROCE_OP_WRITE_MIDDLE },
	};
	static uint8_t data[1024];
	struct droce_wire_pkt p[2];
	struct answer x[8];
	size_t i;

	(void)state;
	fill_pattern(data, sizeof(data), 22);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t psn = RQ_PSN, n = 0;
		unsigned int k;

		assert_int_equal(b_up(NULL), 0);
		assert_int_equal(ep_post_recv(&b, 1, 8192, 8192), 0);
		memset(b.buf, 0, 4 * 4096);
		if (cases[i].first != 0xff) {
			request(&p[n], DROCE_TR_RC | cases[i].first,
				b.qp->qp_num, psn);
			p[n].reth = (struct droce_reth) { (uintptr_t)b.buf,
							  b.mr->rkey, 4096 };
			p[n].payload = data;
			p[n].payload_len = sizeof(data);
			p[n].bth.ackreq = 0;
			n++;
			psn++;
		}
		request(&p[n], DROCE_TR_RC | cases[i].op, b.qp->qp_num, psn);
		p[n].reth = (struct droce_reth) { (uintptr_t)b.buf + 4096,
						  b.mr->rkey,
						  cases[i].op ==
						  DROCE_OP_READ_REQUEST ? 64 :
						  sizeof(data) };
		if (cases[i].op != DROCE_OP_READ_REQUEST) {
			p[n].payload = data;
			p[n].payload_len = sizeof(data);
		}
		n++;
		inject(p, n);
		assert_int_equal(answers(x, 8), 1);
		assert_int_equal(x[0].syndrome,
				 DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
		assert_int_equal(x[0].psn, psn);
		assert_int_equal(ep_qp_state(b.qp), IBV_QPS_ERR);
		/* the packet out of order placed nothing: not where its
		 * RETH points, nor in the receive WQE beyond what a SEND
		 * FIRST before it placed */
		for (k = 4096; k < 4 * 4096; k++)
			if (k < 8192 + sizeof(data) &&
			    cases[i].first == DROCE_OP_SEND_FIRST)
				continue;
			else
				assert_int_equal(b.buf[k], 0);
	}
}

/*
 * PSNs far from the expected one. Ahead (1000, and 2^23 - 1, the far
 * end of the window): a PSN sequence error NAK at the expected PSN, once
 * for the gap, nothing written. Behind (1, 1000 and 2^23 back): a
 * duplicate, acknowledged at the last PSN taken and not written again.
 * The expected WRITE is then taken.
 */
static void
test_psn_far(void **state)
{
	static const uint32_t ahead[] = { 1000, (1u << 23) - 1 };
	static const uint32_t behind[] = { 1, 1000, 1u << 23 };
	uint8_t data[64], other[64];
	struct droce_wire_pkt p;
	struct answer x[8];
	size_t i;

	(void)state;
	memset(b.buf, 0, 4096);
	fill_pattern(data, sizeof(data), 23);
	fill_pattern(other, sizeof(other), 24);
	for (i = 0; i < 2; i++) {
		write_only(&p, RQ_PSN + ahead[i], other, sizeof(other));
		inject(&p, 1);
		assert_int_equal(answers(x, 8), i == 0 ? 1 : 0);
		if (i == 0) {
			assert_int_equal(x[0].syndrome, DROCE_AETH_NAK |
					 DROCE_NAK_PSN_SEQ_ERR);
			assert_int_equal(x[0].psn, RQ_PSN);
		}
	}
	assert_int_equal(b.buf[0], 0);
	write_only(&p, RQ_PSN, data, sizeof(data));
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].syndrome & DROCE_AETH_TYPE_MASK, DROCE_AETH_ACK);
	assert_int_equal(x[0].psn, RQ_PSN);
	assert_memory_equal(b.buf, data, sizeof(data));

	for (i = 0; i < 3; i++) {
		write_only(&p, (RQ_PSN + 1 - behind[i]) & DROCE_PSN_MASK,
			   other, sizeof(other));
		inject(&p, 1);
		assert_int_equal(answers(x, 8), 1);
		assert_int_equal(x[0].syndrome & DROCE_AETH_TYPE_MASK,
				 DROCE_AETH_ACK);
		assert_int_equal(x[0].psn, RQ_PSN);
	}
	assert_memory_equal(b.buf, data, sizeof(data));
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
}

/*
 * A QP that is not ready to receive (RESET, INIT) or is in ERR: a WRITE
 * to it is dropped and counted (by the device: no QP takes it before
 * RTR; by the QP in ERR), unanswered, nothing written.
 */
static void
test_qp_not_ready(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	uint8_t data[64];
	struct droce_qp_counters q0, q1;
	struct droce_counters c0, c1;
	struct droce_wire_pkt p;
	struct answer x[8];
	int i;

	(void)state;
	memset(b.buf, 0, 4096);
	fill_pattern(data, sizeof(data), 25);
	for (i = 0; i < 3; i++) {
		switch (i) {
		case 0:
			attr.qp_state = IBV_QPS_RESET;
			assert_int_equal(ibv_modify_qp(b.qp, &attr,
						       IBV_QP_STATE), 0);
			break;
		case 1:
			attr.qp_state = IBV_QPS_INIT;
			attr.port_num = 1;
			attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
			assert_int_equal(ibv_modify_qp(b.qp, &attr,
						       IBV_QP_STATE |
						       IBV_QP_PKEY_INDEX |
						       IBV_QP_PORT |
						       IBV_QP_ACCESS_FLAGS), 0);
			break;
		default:
			attr.qp_state = IBV_QPS_ERR;
			assert_int_equal(ibv_modify_qp(b.qp, &attr,
						       IBV_QP_STATE), 0);
			break;
		}
		assert_int_equal(droce_query_counters(b.ctx, &c0), 0);
		assert_int_equal(droce_query_qp_counters(b.qp, &q0), 0);
		write_only(&p, RQ_PSN, data, sizeof(data));
		inject(&p, 1);
		assert_int_equal(answers(x, 8), 0);
		assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
		assert_int_equal(droce_query_qp_counters(b.qp, &q1), 0);
		/* no QP takes it before RTR; the QP in ERR drops it */
		assert_int_equal(b_drops(&c1) - b_drops(&c0), i < 2);
		assert_int_equal(q1.rx_dropped - q0.rx_dropped, i == 2);
		assert_int_equal(b.buf[0], 0);
	}
}

/*
 * A flood of duplicate READs: one READ of 64 KiB answered, then the
 * same request again 2048 times, as fast as droce0's raw QP sends. Each
 * is answered from the original's range at most; droce1 holds no more
 * mbufs than a burst's worth meanwhile; the next READ is answered whole.
 */
static void
test_dup_read_flood(void **state)
{
	enum { LEN = 65536, PKTS = LEN / 1024, DUPS = 2048 };
	struct droce_wire_pkt p[TX_SLOTS];
	struct droce_resources r0, r;
	struct droce_qp_counters q0, q1;
	struct answer x[RX_SLOTS];
	uint64_t peak = 0;
	unsigned int i, n;

	(void)state;
	fill_pattern(b.buf, 2 * LEN, 26);
	read_req(&p[0], RQ_PSN, (uintptr_t)b.buf, LEN, b.mr->rkey);
	inject(p, 1);
	assert_int_equal(answers(x, RX_SLOTS), PKTS);
	usleep(300 * 1000);
	assert_int_equal(droce_query_resources(b.ctx, &r0), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &q0), 0);
	for (i = 0; i < TX_SLOTS; i++)
		p[i] = p[0];
	for (n = 0; n < DUPS; n += TX_SLOTS) {
		inject(p, TX_SLOTS);
		assert_int_equal(droce_query_resources(b.ctx, &r), 0);
		peak = RTE_MAX(peak, r.mbufs_in_use);
	}
	answers(x, RX_SLOTS);
	assert_int_equal(droce_query_qp_counters(b.qp, &q1), 0);
	print_message("dup read flood: %u duplicates, %" PRIu64 " packets "
		      "sent, mbufs in use at most %" PRIu64 " (quiet %" PRIu64
		      ")\n", DUPS, q1.tx_pkts - q0.tx_pkts, peak,
		      r0.mbufs_in_use);
	assert_true(q1.dup_reqs - q0.dup_reqs >= 1);
	assert_true(q1.tx_pkts - q0.tx_pkts <= (uint64_t)DUPS * PKTS);
	assert_true(peak <= r0.mbufs_in_use + 1024);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);

	read_req(&p[0], (RQ_PSN + PKTS) & DROCE_PSN_MASK,
		 (uintptr_t)b.buf + LEN, 1024, b.mr->rkey);
	inject(p, 1);
	n = answers(x, RX_SLOTS);
	assert_int_equal(n, 1);
	assert_int_equal(x[0].opcode, DROCE_TR_RC |
			 DROCE_OP_READ_RESPONSE_ONLY);
	assert_memory_equal(answer_payload(&x[0]), b.buf + LEN, 1024);
}

/* A CNP from droce0's PEER_QPN to @p dqpn. */
static void
cnp(struct droce_wire_pkt *p, uint32_t dqpn)
{
	request(p, DROCE_OPCODE_CNP, dqpn, 0);
	p->bth.ackreq = 0;
	p->bth.becn = 1;
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * CNPs and CE marks that are not what they should be: a CNP to a QPN no
 * QP has is dropped as not ours; one with a bad ICRC as such, cutting
 * nothing; a flood of CNPs to a live QP, each counted, never takes its
 * rate below DCQCN's floor nor holds up the lcore (a READ behind it is
 * answered); WRITEs marked CE get the QP's peer a CNP, at most one each
 * cnp_interval_us; a CE-marked frame to no QP gets none.
 */
static void
test_cnp_abuse(void **state)
{
	enum { FLOOD = 4096, MARKED = 32 };
	struct droce_wire_pkt p[TX_SLOTS];
	struct droce_counters c0, c1;
	struct droce_qp_counters q0, q1;
	struct droce_qp_cc cc0, cc1;
	struct answer x[RX_SLOTS];
	uint8_t f[SLOT], data[64];
	uint64_t t0, us;
	unsigned int i, n, cnps;
	int len;

	(void)state;
	assert_int_equal(droce_query_counters(b.ctx, &c0), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &q0), 0);
	assert_int_equal(droce_query_qp_cc(b.qp, &cc0), 0);

	/* to no QP: not ours; with a bad ICRC: that, and no cut */
	cnp(&p[0], b.qp->qp_num ^ 0x40);
	inject(p, 1);
	cnp(&p[0], b.qp->qp_num);
	len = droce_wire_build(f, sizeof(f), &p[0]);
	assert_true(len > 0);
	f[len - 1] ^= 0x5a;
	inject_raw(f, (uint32_t)len);
	answers(x, RX_SLOTS);
	assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
	assert_int_equal(droce_query_qp_cc(b.qp, &cc1), 0);
	assert_int_equal(c1.rx_not_ours - c0.rx_not_ours, 1);
	assert_int_equal(c1.rx_icrc_err - c0.rx_icrc_err, 1);
	assert_int_equal(c1.rx_cnps, c0.rx_cnps);
	assert_int_equal(cc1.cuts, cc0.cuts);
	assert_int_equal(cc1.rate_kbps, cc0.rate_kbps);

	/* a flood: every CNP counted, the rate at its floor at worst */
	for (i = 0; i < TX_SLOTS; i++)
		cnp(&p[i], b.qp->qp_num);
	t0 = now_us();
	for (n = 0; n < FLOOD; n += TX_SLOTS)
		inject(p, TX_SLOTS);
	us = now_us() - t0;
	answers(x, RX_SLOTS);
	assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &q1), 0);
	assert_int_equal(droce_query_qp_cc(b.qp, &cc1), 0);
	print_message("%u CNPs in %" PRIu64 " us: %" PRIu64 " counted, rate "
		      "%" PRIu64 " kbit/s, %" PRIu64 " cuts\n", FLOOD, us,
		      q1.cnps_rcvd - q0.cnps_rcvd, cc1.rate_kbps,
		      cc1.cuts - cc0.cuts);
	assert_int_equal(q1.cnps_rcvd - q0.cnps_rcvd, FLOOD);
	assert_int_equal(c1.rx_cnps - c0.rx_cnps, FLOOD);
	assert_true(cc1.cuts - cc0.cuts >= 1);
	assert_true(cc1.rate_kbps >= 10000);     /* dcqcn_rate_min_mbps */
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	/* the lcore goes on: a READ is answered (at the floor's pace) */
	fill_pattern(b.buf, 64, 31);
	read_req(&p[0], RQ_PSN, (uintptr_t)b.buf, 64, b.mr->rkey);
	inject(p, 1);
	n = answers(x, RX_SLOTS);
	assert_int_equal(n, 1);
	assert_int_equal(x[0].opcode, DROCE_TR_RC |
			 DROCE_OP_READ_RESPONSE_ONLY);
	assert_memory_equal(answer_payload(&x[0]), b.buf, 64);

	/* WRITEs marked CE: CNPs to the peer's QP, not more than one each
	 * 50 us; a marked frame to no QP: none */
	assert_int_equal(droce_query_qp_counters(b.qp, &q0), 0);
	memset(data, 7, sizeof(data));
	for (i = 0; i < MARKED; i++) {
		write_only(&p[i], RQ_PSN + 1 + i, data, sizeof(data));
		p[i].tos = DROCE_ECN_CE;
		p[i].bth.ackreq = 0;
	}
	p[MARKED] = p[0];
	p[MARKED].bth.dqpn = b.qp->qp_num ^ 0x40;
	t0 = now_us();
	inject(p, MARKED + 1);
	us = now_us() - t0;
	n = answers(x, RX_SLOTS);
	assert_int_equal(droce_query_qp_counters(b.qp, &q1), 0);
	for (i = 0, cnps = 0; i < n; i++)
		if (x[i].opcode == DROCE_OPCODE_CNP) {
			assert_int_equal(x[i].dqpn, PEER_QPN);
			cnps++;
		}
	print_message("%u WRITEs marked CE in %" PRIu64 " us: %u CNPs\n",
		      MARKED, us, cnps);
	assert_int_equal(q1.ce_rcvd - q0.ce_rcvd, MARKED);
	assert_int_equal(q1.cnps_sent - q0.cnps_sent, cnps);
	assert_true(cnps >= 1);
	assert_true(cnps <= us / 50 + 1);
}

/*
 * The requester under a flood of RNR NAKs for the SEND it has sent
 * (RNR retries without end): it waits and sends again each time, holds
 * nothing more for it, and the SEND completes on the real ACK.
 */
static void
test_rnr_nak_flood(void **state)
{
	enum { NAKS = 1024 };
	struct ibv_sge sge = { (uintptr_t)b.buf, 64, b.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 13, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct droce_wire_pkt p[TX_SLOTS];
	struct droce_qp_counters q0, q1;
	struct droce_resources r0, r;
	struct answer x[8];
	struct ibv_wc wc;
	uint64_t peak = 0;
	uint32_t psn;
	unsigned int i;

	(void)state;
	assert_int_equal(ibv_post_send(b.qp, &wr, &bad), 0);
	assert_int_equal(answers(x, 8), 1);
	psn = x[0].psn;
	assert_int_equal(droce_query_resources(b.ctx, &r0), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &q0), 0);
	for (i = 0; i < TX_SLOTS; i++)
		ack(&p[i], psn, DROCE_AETH_RNR_NAK | 1);
	for (i = 0; i < NAKS; i += TX_SLOTS) {
		inject(p, TX_SLOTS);
		assert_int_equal(droce_query_resources(b.ctx, &r), 0);
		peak = RTE_MAX(peak, r.mbufs_in_use);
	}
	answers(x, 8);
	assert_int_equal(droce_query_qp_counters(b.qp, &q1), 0);
	print_message("rnr nak flood: %" PRIu64 " taken, %" PRIu64
		      " packets sent again, mbufs in use at most %" PRIu64
		      " (quiet %" PRIu64 ")\n",
		      q1.rnr_naks_rcvd - q0.rnr_naks_rcvd,
		      q1.tx_pkts - q0.tx_pkts, peak, r0.mbufs_in_use);
	assert_true(q1.rnr_naks_rcvd - q0.rnr_naks_rcvd >= 1);
	assert_true(q1.tx_pkts - q0.tx_pkts <= NAKS);
	assert_true(peak <= r0.mbufs_in_use + 1024);
	assert_int_equal(ep_poll(b.scq, &wc, 1, 0), 0);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);

	ack(&p[0], psn, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID);
	inject(p, 1);
	assert_int_equal(ep_poll(b.scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.wr_id, 13);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
}

/*
 * An IPv6 neighbour solicitation for droce1's link-local address from
 * fe80::@p n with droce0's MAC, hop limit 255, its checksum right.
 */
static void
nd_solicit(const union ibv_gid *target, uint16_t n)
{
	uint8_t f[14 + 40 + 32] = { 0 };
	uint8_t *ip = f + 14, *icmp = ip + 40;
	uint32_t sum = 0;
	unsigned int i;

	memcpy(f, mac1, 6);
	memcpy(f + 6, mac0, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	droce_put_be16(ip + 4, 32);
	ip[6] = 58;                     /* ICMPv6 */
	ip[7] = 255;
	ip[8] = 0xfe;
	ip[9] = 0x80;
	droce_put_be16(ip + 22, n);
	memcpy(ip + 24, target->raw, 16);
	icmp[0] = 135;                  /* neighbour solicitation */
	memcpy(icmp + 8, target->raw, 16);
	icmp[24] = 1;                   /* source link-layer address */
	icmp[25] = 1;
	memcpy(icmp + 26, mac0, 6);
	/* pseudo-header (addresses, length, next header), then ICMPv6 */
	for (i = 0; i < 32; i += 2)
		sum += droce_get_be16(ip + 8 + i);
	sum += 32 + 58;
	for (i = 0; i < 32; i += 2)
		sum += droce_get_be16(icmp + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	droce_put_be16(icmp + 2, (uint16_t)~sum);
	inject_raw(f, sizeof(f));
}

/*
 * A storm of neighbour solicitations from 500 addresses: droce1 answers
 * and learns them, its table never holds more than it has room for, no
 * mbuf is held once it is over, and its RC QP takes the next WRITE.
 */
static void
test_nd_storm(void **state)
{
	union ibv_gid ll;
	struct droce_resources r0, r1;
	struct droce_counters c0, c1;
	struct droce_wire_pkt p;
	struct answer x[8];
	uint8_t data[32];
	unsigned int i;

	(void)state;
	assert_int_equal(ibv_query_gid(b.ctx, 1, 1, &ll), 0);
	usleep(QUIET_MS * 1000);
	assert_int_equal(droce_query_resources(b.ctx, &r0), 0);
	assert_int_equal(droce_query_counters(b.ctx, &c0), 0);
	for (i = 0; i < 500; i++)
		nd_solicit(&ll, (uint16_t)(0x100 + i));
	answers(x, 8);
	assert_int_equal(droce_query_resources(b.ctx, &r1), 0);
	assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
	print_message("nd storm: neighbour entries %" PRIu64 " of %" PRIu64
		      ", frames sent %" PRIu64 "\n", r1.neigh, r1.neigh_max,
		      c1.tx_frames - c0.tx_frames);
	assert_true(r1.neigh <= r1.neigh_max);
	assert_true(r1.neigh >= r0.neigh);
	/* an advertisement for each, nothing more */
	assert_true(c1.tx_frames - c0.tx_frames <= 500);
	assert_int_equal(r1.mbufs_in_use, r0.mbufs_in_use);

	memset(b.buf, 0, 64);
	fill_pattern(data, sizeof(data), 27);
	write_only(&p, RQ_PSN, data, sizeof(data));
	inject(&p, 1);
	assert_int_equal(answers(x, 8), 1);
	assert_int_equal(x[0].syndrome & DROCE_AETH_TYPE_MASK, DROCE_AETH_ACK);
	assert_memory_equal(b.buf, data, sizeof(data));
}

/*
 * The recorded interop failure (tests/data/interop-cases/README.md):
 * bidirectional 64 KiB WRITEs at path MTU 1024 between droce and
 * soft-RoCE, whose requests to droce's QP 0x11 the replay takes, frame
 * by frame.
 */
static const char *shift_pcap;
#define SHIFT_QPN 0x11u           /* droce's QP in the capture */
#define SHIFT_FIRST_PSN 13566623u /* FIRST of the first whole message */
#define SHIFT_BASE_PSN 13566667u  /* the capture's first request */
#define SHIFT_MSG 65536u

/*
 * The frames of the pcapng file @p path: where each starts in the
 * returned buffer (which the caller frees), how much of it was kept and
 * how long it was on the wire.
 */
static uint8_t *
pcapng_frames(const char *path, const uint8_t **frame, uint32_t *caplen,
	      uint32_t *wirelen, unsigned int max, unsigned int *n)
{
	struct stat st;
	uint8_t *f;
	size_t off = 0;
	FILE *fp = fopen(path, "rb");
	uint32_t magic;

	assert_non_null(fp);
	assert_int_equal(fstat(fileno(fp), &st), 0);
	f = malloc((size_t)st.st_size);
	assert_non_null(f);
	assert_int_equal(fread(f, 1, (size_t)st.st_size, fp),
			 (size_t)st.st_size);
	fclose(fp);
	/* a section header block, little endian */
	memcpy(&magic, f + 8, 4);
	assert_int_equal(magic, 0x1a2b3c4d);
	*n = 0;
	while (off + 12 <= (size_t)st.st_size) {
		uint32_t type, blen;

		memcpy(&type, f + off, 4);
		memcpy(&blen, f + off + 4, 4);
		assert_true(blen >= 12 && off + blen <= (size_t)st.st_size);
		if (type == 6) {        /* enhanced packet block */
			assert_true(*n < max);
			memcpy(&caplen[*n], f + off + 20, 4);
			memcpy(&wirelen[*n], f + off + 24, 4);
			assert_true(28 + caplen[*n] <= blen);
			frame[(*n)++] = f + off + 28;
		}
		off += blen;
	}
	return f;
}

/*
 * The request in the captured frame @p f (IPv4, its first @p caplen
 * bytes kept of @p wirelen) to droce's QP @p qpn, as one from droce0's
 * PEER_QPN to droce1's RC QP, into droce1's region, carrying @p payload.
 * @return false if it is something else.
 */
static bool
captured_request(struct droce_wire_pkt *p, const uint8_t *f, uint32_t caplen,
		 uint32_t wirelen, uint32_t qpn, const uint8_t *payload)
{
	const uint32_t bth_off = 14 + 20 + 8;
	const struct droce_opcode_info *op;
	struct droce_bth bth;
	uint32_t hdrs;

	if (caplen < bth_off + DROCE_BTH_LEN || f[12] != 0x08 ||
	    f[13] != 0x00 || f[23] != 17 ||
	    ((f[36] << 8) | f[37]) != DROCE_UDP_PORT)
		return false;
	droce_bth_decode(f + bth_off, &bth);
	op = &droce_opcode_table[bth.opcode];
	if (bth.dqpn != qpn || !(op->flags & DROCE_OPF_REQ))
		return false;
	hdrs = bth_off + op->hdr_len;
	assert_true(caplen >= hdrs &&
		    wirelen >= hdrs + bth.padcnt + DROCE_ICRC_LEN);
	request(p, bth.opcode, b.qp->qp_num, bth.psn);
	p->bth.ackreq = bth.ackreq;
	if (op->flags & DROCE_OPF_RETH) {
		droce_reth_decode(f + bth_off + op->offset[DROCE_EXT_RETH],
				  &p->reth);
		p->reth.va = (uintptr_t)b.buf;
		p->reth.rkey = b.mr->rkey;
	}
	p->payload = payload;
	p->payload_len = wirelen - hdrs - bth.padcnt - DROCE_ICRC_LEN;
	return true;
}

/*
 * soft-RoCE's side of the recorded failure, replayed into droce1's QP:
 * 64 KiB WRITEs, then, after lost ACKs, the same messages again, and
 * finally the rest of them shifted by one PSN (an empty WRITE ONLY where
 * a message had ended, FIRSTs where MIDDLEs were due). Each request is
 * the capture's own (opcode, PSN, AckReq, RETH length, payload length;
 * the capture kept 128 bytes of each frame), readdressed to droce1 and
 * its region; those asking for an ACK are each followed by a look at
 * what droce1 answered.
 *
 * droce1 answers as droce did in the capture, and as soft-RoCE's own
 * responder answers a duplicate: with the last PSN it took in order,
 * here the FIRST of the message in progress (13566751, later 13566815).
 * That ACK tells a requester where to go on from; one naming the end
 * of the last whole message instead leaves a requester that resends
 * from far behind, with a window narrower than the gap, with nothing to
 * go on (doc/guides/interop.rst). The last frame, a FIRST where the
 * message in progress needs its MIDDLE, gets the Invalid Request NAK:
 * nothing else a responder may do with it.
 */
static void
test_replay_softroce_resend_shift(void **state)
{
	static const struct {
		uint32_t after;         /* ACK-asking request's PSN */
		uint32_t psn;           /* what droce1 answers */
		uint8_t syndrome;
	} want[] = {
		{ 13566686, 13566686, DROCE_AETH_ACK },  /* frame 22 */
		{ 13566750, 13566750, DROCE_AETH_ACK },  /* 153 */
		{ 13566686, 13566751, DROCE_AETH_ACK },  /* 1258 */
		{ 13566750, 13566751, DROCE_AETH_ACK },  /* 1323 */
		{ 13566814, 13566814, DROCE_AETH_ACK },  /* 1778 */
		{ 13566687, 13566815, DROCE_AETH_ACK },  /* 2301 */
		{ 13566751, 13566815, DROCE_AETH_ACK },  /* 2366 */
		{ 13566815, 13566815, DROCE_AETH_ACK },  /* 2561 */
		{ 13566816, 13566816,                    /* 2562 */
		  DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ },
	};
	enum { MAX_FRAMES = 4096 };
	static const uint8_t *frame[MAX_FRAMES];
	static uint32_t caplen[MAX_FRAMES], wirelen[MAX_FRAMES];
	static uint8_t payload[4096];
	static struct droce_wire_pkt req[MAX_FRAMES];
	unsigned int nframes, nreq = 0, i, start, next = 0;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	uint8_t *cap, *guard = b.buf + SHIFT_MSG;
	uint8_t before[4096];
	struct answer x[8];

	(void)state;
	assert_non_null(shift_pcap);
	/* (kept: the headers; the payloads are made up) */
	cap = pcapng_frames(shift_pcap, frame, caplen, wirelen, MAX_FRAMES,
			    &nframes);
	fill_pattern(payload, sizeof(payload), 9);
	/* droce1's QP expects the capture's PSNs */
	assert_int_equal(ibv_modify_qp(b.qp, &attr, IBV_QP_STATE), 0);
	assert_int_equal(ep_connect_remote(&b, PEER_QPN, SHIFT_FIRST_PSN,
					   &a.gid, &opts), 0);
	answers(x, 8);
	fill_pattern(guard, sizeof(before), 5);
	memcpy(before, guard, sizeof(before));

	for (i = 0; i < nframes; i++)
		if (captured_request(&req[nreq], frame[i], caplen[i],
				     wirelen[i], SHIFT_QPN, payload)) {
			assert_true(req[nreq].reth.dlen <= SHIFT_MSG &&
				    req[nreq].payload_len <= sizeof(payload));
			nreq++;
		}
	/* the capture starts inside a message: its first packets first, as
	 * soft-RoCE's own resend of them carries them */
	for (i = 0; i < nreq && req[i].bth.psn != SHIFT_FIRST_PSN; i++)
		;
	assert_true(i < nreq);
	start = i;
	while (req[i].bth.psn != SHIFT_BASE_PSN)
		i++;
	inject(&req[start], i - start);
	assert_int_equal(answers(x, 8), 0);

	/* then every request, in the capture's order */
	for (start = 0, i = 0; i < nreq; i++) {
		if (!req[i].bth.ackreq && i - start + 1 < TX_SLOTS &&
		    i + 1 < nreq)
			continue;
		inject(&req[start], i - start + 1);
		start = i + 1;
		/* an ACK asked for, or the last frame's NAK */
		if (!req[i].bth.ackreq && i + 1 < nreq) {
			assert_int_equal(answers(x, 8), 0);
			continue;
		}
		assert_true(next < sizeof(want) / sizeof(want[0]));
		assert_int_equal(req[i].bth.psn, want[next].after);
		assert_int_equal(answers(x, 8), 1);
		assert_int_equal(x[0].opcode,
				 DROCE_TR_RC | DROCE_OP_ACKNOWLEDGE);
		assert_int_equal(x[0].dqpn, PEER_QPN);
		assert_int_equal(x[0].psn, want[next].psn);
		assert_int_equal(x[0].syndrome & 0xe0,
				 want[next].syndrome & 0xe0);
		if ((want[next].syndrome & 0xe0) == DROCE_AETH_NAK)
			assert_int_equal(x[0].syndrome, want[next].syndrome);
		next++;
	}
	assert_int_equal(next, sizeof(want) / sizeof(want[0]));
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_ERR);
	/* the WRITEs stayed within their 64 KiB */
	assert_memory_equal(guard, before, sizeof(before));
	free(cap);
}

/* READ responses from PEER_QPN: [from, from + n) of a READ at @p first. */
static void
read_responses(struct droce_wire_pkt *p, uint32_t first, uint32_t from,
	       uint32_t n, uint32_t total, const uint8_t *data)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint32_t k = from + i;
		uint8_t op = k == from ? DROCE_OP_READ_RESPONSE_FIRST :
			k + 1 == total ? DROCE_OP_READ_RESPONSE_LAST :
			DROCE_OP_READ_RESPONSE_MIDDLE;

		if (total == 1)
			op = DROCE_OP_READ_RESPONSE_ONLY;
		request(&p[i], DROCE_TR_RC | op, b.qp->qp_num,
			(first + k) & DROCE_PSN_MASK);
		p[i].bth.ackreq = 0;
		p[i].aeth = (struct droce_aeth) {
			DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, 1 };
		p[i].payload = (uint8_t *)(uintptr_t)(data + 1024 * k);
		p[i].payload_len = 1024;
	}
}

/*
 * The requester of a READ that has half its responses, behind a READ
 * asked again: the timer sends both again (the second from where its
 * responses stopped); the first is answered, the second's request is
 * lost, and the timer asks for the second again from the same place. It
 * once went back to the second READ's first PSN for what it counted as
 * unacknowledged, and with the responses it had taken for packets in
 * flight its window stayed shut on the READ, nothing before it
 * outstanding, the timer stopped: the soak's READ stuck in RTS.
 */
static void
test_read_resumed_by_timer(void **state)
{
	enum { N = 40, HAVE = 20 };
	static uint8_t data[N * 1024], one[1024];
	struct ibv_sge sge[2] = {
		{ (uintptr_t)b.buf, sizeof(one), b.mr->lkey },
		{ (uintptr_t)(b.buf + 4096), sizeof(data), b.mr->lkey },
	};
	struct ibv_send_wr wr[2] = {
		{ .wr_id = 1, .next = &wr[1], .sg_list = &sge[0],
		  .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		  .send_flags = IBV_SEND_SIGNALED,
		  .wr.rdma = { .remote_addr = 0x10000, .rkey = 0x1234 } },
		{ .wr_id = 2, .sg_list = &sge[1], .num_sge = 1,
		  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
		  .wr.rdma = { .remote_addr = 0x20000, .rkey = 0x1234 } },
	}, *bad;
	struct droce_wire_pkt p[N];
	struct answer x[16];
	struct ibv_wc wc[2];
	uint32_t psn, n, i, k;
	bool resumed = false;

	(void)state;
	memset(b.buf, 0, 4096 + sizeof(data));
	fill_pattern(one, sizeof(one), 21);
	fill_pattern(data, sizeof(data), 22);
	assert_int_equal(ibv_post_send(b.qp, wr, &bad), 0);
	assert_int_equal(answers(x, 16), 2);
	psn = x[0].psn;         /* the first READ's; the second's is next */

	/* half the second READ's responses: the first is asked again */
	read_responses(p, psn + 1, 0, HAVE, N, data);
	inject(p, HAVE);
	answers(x, 16);
	/* the timer (4 s) goes back to the first READ, and the second
	 * from where its responses stopped */
	n = answers(x, 16);
	for (i = 0; n == 0 && i < 20; i++)
		n = answers(x, 16);
	assert_true(n > 0);
	/* the first READ answered; the second's request is lost: the timer
	 * asks for it again from its 21st response */
	read_responses(p, psn, 0, 1, 1, one);
	inject(p, 1);
	for (i = 0; i < 25 && !resumed; i++) {
		n = answers(x, 16);
		for (k = 0; k < n; k++)
			if (x[k].opcode ==
			    (DROCE_TR_RC | DROCE_OP_READ_REQUEST) &&
			    x[k].psn == ((psn + 1 + HAVE) & DROCE_PSN_MASK))
				resumed = true;
	}
	assert_true(resumed);
	read_responses(p, psn + 1, HAVE, N - HAVE, N, data);
	inject(p, N - HAVE);
	assert_int_equal(ep_poll(b.scq, wc, 2, 2000), 2);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[1].status, IBV_WC_SUCCESS);
	assert_memory_equal(b.buf, one, sizeof(one));
	assert_memory_equal(b.buf + 4096, data, sizeof(data));
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
}

/*
 * A requester its timer took back far behind an atomic that the
 * responder has answered past (the atomic's response lost): a
 * duplicate's ACK for a PSN after the atomic acknowledges all before the
 * atomic, and the atomic is asked again. The ACK was once dropped whole
 * as an answer to packets not sent since the rewind: the window stayed
 * shut on what the requester counted as unacknowledged, and each timeout
 * sent the same packets again, to retry_cnt (the soak's SEND before a
 * READ or atomic, failed with IBV_WC_RETRY_EXC_ERR).
 */
static void
test_ack_past_atomic_after_timeout(void **state)
{
	enum { N = 40 };        /* the SEND's packets, more than a window */
	struct ibv_sge sge[3] = {
		{ (uintptr_t)b.buf, N * 1024, b.mr->lkey },
		{ (uintptr_t)(b.buf + N * 1024), 8, b.mr->lkey },
		{ (uintptr_t)b.buf, 2048, b.mr->lkey },
	};
	struct ibv_send_wr wr[3] = {
		{ .wr_id = 1, .next = &wr[1], .sg_list = &sge[0],
		  .num_sge = 1, .opcode = IBV_WR_SEND,
		  .send_flags = IBV_SEND_SIGNALED },
		{ .wr_id = 2, .next = &wr[2], .sg_list = &sge[1],
		  .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		  .send_flags = IBV_SEND_SIGNALED,
		  .wr.atomic = { .remote_addr = 0x10000, .compare_add = 1,
				 .rkey = 0x1234 } },
		{ .wr_id = 3, .sg_list = &sge[2], .num_sge = 1,
		  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
	}, *bad;
	struct droce_wire_pkt p[2];
	struct answer x[64];
	struct ibv_wc wc[3];
	uint32_t psn, n, i, k;
	uint64_t orig;
	bool asked = false;

	(void)state;
	memset(b.buf + N * 1024, 0, 8);
	assert_int_equal(ibv_post_send(b.qp, wr, &bad), 0);
	assert_int_equal(answers(x, 64), N + 1 + 2);
	psn = x[0].psn;
	/* nothing answered: the timer (4 s) goes back to the SEND's first
	 * PSN, a window of fewer packets than the SEND has */
	n = answers(x, 64);
	for (i = 0; n == 0 && i < 20; i++)
		n = answers(x, 64);
	assert_true(n > 0 && n < N);
	assert_int_equal(x[0].psn, psn);
	/* the responder has it all: the ACK of a duplicate names the last
	 * SEND's last PSN, past the atomic */
	ack(&p[0], psn + N + 2, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID);
	inject(p, 1);
	assert_int_equal(ep_poll(b.scq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	/* the atomic is asked again, at once */
	for (i = 0; i < 3 && !asked; i++) {
		n = answers(x, 64);
		for (k = 0; k < n; k++)
			if (x[k].opcode == (DROCE_TR_RC | DROCE_OP_FETCH_ADD) &&
			    x[k].psn == ((psn + N) & DROCE_PSN_MASK))
				asked = true;
	}
	assert_true(asked);
	/* its answer, then the ACK again: the atomic and the SEND after it
	 * complete */
	request(&p[0], DROCE_TR_RC | DROCE_OP_ATOMIC_ACKNOWLEDGE,
		b.qp->qp_num, psn + N);
	p[0].bth.ackreq = 0;
	p[0].aeth = (struct droce_aeth) {
		DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, 2 };
	p[0].atomicacketh.orig = 41;
	ack(&p[1], psn + N + 2, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID);
	inject(p, 2);
	assert_int_equal(ep_poll(b.scq, wc, 2, 2000), 2);
	assert_int_equal(wc[0].wr_id, 2);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	memcpy(&orig, b.buf + N * 1024, 8);
	assert_int_equal(orig, 41);
	assert_int_equal(wc[1].wr_id, 3);
	assert_int_equal(wc[1].status, IBV_WC_SUCCESS);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
}

int
main(int argc, char **argv)
{
	if (argc > 1)
		shift_pcap = argv[1];

	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_dup_read_within_original, b_up),
		cmocka_unit_test_setup(test_reads_beyond_max_dest_rd_atomic,
				       b_up),
		cmocka_unit_test_setup(test_xrc_stale_unknown_srq, b_up),
		cmocka_unit_test_setup(test_requester_undefined_aeth, b_up),
		cmocka_unit_test_setup(test_headers_refused, b_up),
		cmocka_unit_test_setup(test_payload_not_path_mtu, b_up),
		cmocka_unit_test_setup(test_read_response_out_of_order, b_up),
		cmocka_unit_test_setup(test_read_resumed_by_timer, b_up),
		cmocka_unit_test_setup(test_ack_past_atomic_after_timeout,
				       b_up),
		cmocka_unit_test(test_qpn_unpredictable),
		cmocka_unit_test(test_arp_does_not_redirect),
		cmocka_unit_test_setup(test_bad_read_response_fails_the_read,
				       b_up),
		cmocka_unit_test_setup(test_read_response_lengths, b_up),
		cmocka_unit_test_setup(test_malformed_frames, b_up),
		cmocka_unit_test(test_opcode_sequence),
		cmocka_unit_test_setup(test_psn_far, b_up),
		cmocka_unit_test_setup(test_qp_not_ready, b_up),
		cmocka_unit_test_setup(test_dup_read_flood, b_up),
		cmocka_unit_test_setup(test_rnr_nak_flood, b_up),
		cmocka_unit_test_setup(test_cnp_abuse, b_up),
		cmocka_unit_test_setup(test_nd_storm, b_up),
		cmocka_unit_test_setup(test_replay_softroce_resend_shift,
				       b_up),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
