/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Unreliable datagram QPs, droce0 to droce1, through the verbs API.
 *
 * With no argument, on the embedded default:
 *  - idle UD QPs in RTS make their devices send nothing;
 *  - SEND and SEND with immediate at 0, 1, MTU-1 and MTU bytes through an
 *    address handle: the receive buffer starts with the 40-byte GRH area
 *    (20 zero bytes and the sender's IPv4 header), byte_len counts it,
 *    src_qp names the sender, IBV_WC_GRH is set; every byte checked;
 *  - an address handle destroyed as soon as the post of its datagrams
 *    returns, another made: every datagram still arrives whole;
 *  - an answer through ibv_create_ah_from_wc(), and what
 *    ibv_init_ah_from_wc() reads from the GRH; the same over IPv6 GIDs
 *    (the GRH area is then the IPv6 header);
 *  - Q_Keys: a datagram with another Q_Key is dropped (and counted), a
 *    WR Q_Key with the high bit set sends the QP's own;
 *  - no receive posted: the datagram is lost, the next one arrives;
 *  - a datagram longer than the receive buffer: IBV_WC_LOC_LEN_ERR, and
 *    the QP goes on to the next;
 *  - what UD has not got refused at post time with bad_wr: WRITE, READ,
 *    atomics, more than the MTU, no address handle, FENCE; the UD
 *    attribute table of ibv_modify_qp;
 *  - a UD QP and an RC QP sharing one SRQ;
 *  - the extended post API with ibv_wr_set_ud_addr();
 *  - multicast, IPv4 and IPv6 groups: a datagram to a group and QPN
 *    0xFFFFFF reaches every QP attached to it and no other; detach, and
 *    a QP destroyed while attached, stop it;
 *  - a privileged Q_Key needs CAP_NET_RAW (EPERM without it);
 *  - QP1, the GSI, on each device: a UD QP from ibv_create_qp_ex() with
 *    IBV_QP_CREATE_SOURCE_QPN and source QPN 1 has qp_num 1; a MAD-sized
 *    datagram from one device's QP1 to the other's, Q_Key 0x80010000,
 *    arrives from src_qp 1 with its GRH naming the sender; one per device
 *    (EBUSY until it is destroyed), source QPN 1 only, on UD only;
 *    another Q_Key dropped and counted; an ordinary UD QP, even one whose
 *    table slot is 1, still gets its own datagrams; without a QP1,
 *    datagrams to QPN 1 are not the device's; the GSI's own Q_Key needs
 *    no CAP_NET_RAW;
 *  - TSO (IBV_WR_TSO, as IPoIB uses it): a header of IPoIB's four bytes,
 *    IPv4 or IPv6 and TCP, and a payload of several MSS arrive as that
 *    many datagrams, each the header made that segment's (IP length,
 *    IPv4 ID, TCP sequence number, PSH on the last only, checksums right:
 *    IBV_WC_IP_CSUM_OK over IPv4) and its piece of the payload; through
 *    ibv_wr_send_tso() too; a QP made without max_tso_header, a header
 *    that is not IPoIB/IP/TCP, a segment over the MTU refused;
 *  - IBV_SEND_IP_CSUM on a UD SEND of an IPoIB datagram fills its IPv4
 *    and UDP checksums.
 *
 * With WORKDIR FAULT_ARGS, both ports behind net_fault: a stream of
 * datagrams loses whole ones only: every completion names a datagram
 * that arrived entire and right, in order, and some were lost.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <droce.h>

#include "harness.h"

#define BUF (4u << 20)
#define RECV_OFF (2u << 20)
#define GRH 40
#define QKEY 0x11111111u
#define GSI_QKEY 0x80010000u
#define MAD 256u

static struct ep_opts opts;
static struct ep a, b;
static struct ibv_ah *ah_ab, *ah_ba;
static uint32_t mtu;
static const char *fault_args;

static void
ud_opts(struct ep_opts *o)
{
	o->qp_type = IBV_QPT_UD;
	o->max_recv_wr = 512;
	o->qkey = QKEY;
}

/* Address handles both ways; the path MTU. */
static int
ud_ready(void)
{
	struct ibv_port_attr port;

	ah_ab = ep_ah(&a, &b, &opts);
	ah_ba = ep_ah(&b, &a, &opts);
	if (ah_ab == NULL || ah_ba == NULL)
		return -1;
	if (ibv_query_port(a.ctx, 1, &port) != 0)
		return -1;
	mtu = 128u << port.active_mtu;
	return 0;
}

static void
ud_release(void)
{
	ibv_destroy_ah(ah_ab);
	ibv_destroy_ah(ah_ba);
}

static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .tweak = ud_opts,
	.ready = ud_ready, .release = ud_release,
};

/* Wait for the signalled SEND @p wr_id of @p e. */
static void
expect_send_done(struct ep *e, uint64_t wr_id, uint32_t len)
{
	struct ibv_wc wc;

	assert_int_equal(ep_poll(e->scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.opcode, IBV_WC_SEND);
	assert_int_equal(wc.byte_len, len);
}

/* The IPv4 address of @p gid (IPv4-mapped), as bytes. */
static const uint8_t *
gid_ipv4(const union ibv_gid *gid)
{
	return gid->raw + 12;
}

/*
 * A UD QP has no path of its own (each WR names one): brought up and
 * left idle, it makes its device send nothing. The responder once asked
 * for a path for every QP it ran, and a UD QP's, all zeros, had its
 * device solicit the neighbour "::" every 100 ms, then every second, for
 * as long as the QP lived.
 */
static void
test_ud_idle_sends_nothing(void **state)
{
	struct droce_counters ca0, cb0, ca1, cb1;

	(void)state;
	assert_int_equal(droce_query_counters(a.ctx, &ca0), 0);
	assert_int_equal(droce_query_counters(b.ctx, &cb0), 0);
	usleep(1500 * 1000);
	assert_int_equal(droce_query_counters(a.ctx, &ca1), 0);
	assert_int_equal(droce_query_counters(b.ctx, &cb1), 0);
	assert_int_equal(ca1.tx_frames, ca0.tx_frames);
	assert_int_equal(cb1.tx_frames, cb0.tx_frames);
}

static void
test_ud_send(void **state)
{
	const uint32_t sizes[] = { 0, 1, 100, mtu - 1, mtu };
	unsigned int i, imm;

	(void)state;
	for (imm = 0; imm < 2; imm++) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint32_t len = sizes[i];
			uint8_t *got = b.buf + RECV_OFF;
			struct ibv_wc wc;

			fill_pattern(a.buf, len, 100 * imm + i);
			memset(got, 0xee, GRH + mtu + 1);
			assert_int_equal(ep_post_recv(&b, 7, RECV_OFF,
						      GRH + mtu), 0);
			assert_int_equal(ep_post_ud(&a, 10 + i, 0, len, ah_ab,
						    b.qp->qp_num, QKEY, imm,
						    0xabc000 + i,
						    IBV_SEND_SIGNALED), 0);
			expect_send_done(&a, 10 + i, len);
			assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.wr_id, 7);
			assert_int_equal(wc.opcode, IBV_WC_RECV);
			assert_int_equal(wc.byte_len, GRH + len);
			assert_int_equal(wc.src_qp, a.qp->qp_num);
			assert_int_equal(wc.qp_num, b.qp->qp_num);
			assert_true(wc.wc_flags & IBV_WC_GRH);
			/* the network header type, as a RoCE NIC gives
			 * it: IPv4 */
			assert_int_equal(wc.sl, 2);
			assert_int_equal(wc.pkey_index, 0);
			assert_int_equal(wc.slid, 0);
			if (imm) {
				assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
				assert_int_equal(be32toh(wc.imm_data),
						 0xabc000 + i);
			} else {
				assert_false(wc.wc_flags & IBV_WC_WITH_IMM);
			}
			/* GRH area: 20 zero bytes, then the IPv4 header */
			for (unsigned int k = 0; k < 20; k++)
				assert_int_equal(got[k], 0);
			assert_int_equal(got[20], 0x45);
			assert_int_equal(got[20 + 9], 17);
			assert_memory_equal(got + 20 + 12, gid_ipv4(&a.gid), 4);
			assert_memory_equal(got + 20 + 16, gid_ipv4(&b.gid), 4);
			assert_memory_equal(got + GRH, a.buf, len);
			/* nothing written past the message */
			assert_int_equal(got[GRH + len], 0xee);
		}
	}
}

/*
 * A program may destroy an address handle as soon as its post returns,
 * its datagrams not yet sent (mckey does, its sends unsignalled): each
 * datagram goes where the handle said when it was posted. More
 * datagrams than a pass sends are posted in one list, the handle is
 * destroyed at once and another made, to a multicast group no QP is
 * attached to, likely in the same memory: every datagram still reaches
 * droce1's QP, whole and in order. (droce once kept a pointer to the
 * handle in the WQE: the rest went out as garbage, or to "::".)
 */
static void
test_ud_ah_destroyed_after_post(void **state)
{
	enum { N = 200, LEN = 64 };
	static struct ibv_send_wr wr[N];
	static struct ibv_sge sge[N];
	struct ibv_ah_attr group = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid.raw = { [10] = 0xff, [11] = 0xff, [12] = 239,
				       [13] = 9, [14] = 9, [15] = 9 },
			 .hop_limit = 1 },
	};
	struct ibv_send_wr *bad;
	struct ibv_ah *ah, *other;
	uint8_t want[LEN];
	struct ibv_wc wc;
	unsigned int i;

	(void)state;
	for (i = 0; i < N; i++)
		assert_int_equal(ep_post_recv(&b, i, RECV_OFF + i * (GRH + LEN),
					      GRH + LEN), 0);
	ah = ep_ah(&a, &b, &opts);
	assert_non_null(ah);
	for (i = 0; i < N; i++) {
		fill_pattern(a.buf + i * LEN, LEN, 500 + i);
		sge[i] = (struct ibv_sge) {
			.addr = (uintptr_t)(a.buf + i * LEN),
			.length = LEN,
			.lkey = a.mr->lkey,
		};
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = i == N - 1 ? IBV_SEND_SIGNALED : 0;
		wr[i].wr.ud.ah = ah;
		wr[i].wr.ud.remote_qpn = b.qp->qp_num;
		wr[i].wr.ud.remote_qkey = QKEY;
		wr[i].next = i + 1 < N ? &wr[i + 1] : NULL;
	}
	assert_int_equal(ibv_post_send(a.qp, wr, &bad), 0);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	other = ibv_create_ah(a.pd, &group);
	assert_non_null(other);
	expect_send_done(&a, N - 1, LEN);
	for (i = 0; i < N; i++) {
		assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, i);
		assert_int_equal(wc.byte_len, GRH + LEN);
		fill_pattern(want, LEN, 500 + i);
		assert_memory_equal(b.buf + RECV_OFF + i * (GRH + LEN) + GRH,
				    want, LEN);
	}
	assert_int_equal(ibv_destroy_ah(other), 0);
}

static void
test_ud_ah_from_wc(void **state)
{
	struct ibv_ah_attr attr;
	struct ibv_ah *back;
	struct ibv_wc wc;
	struct ibv_grh *grh = (struct ibv_grh *)(b.buf + RECV_OFF);

	(void)state;
	fill_pattern(a.buf, 64, 9);
	assert_int_equal(ep_post_recv(&b, 1, RECV_OFF, GRH + mtu), 0);
	assert_int_equal(ep_post_ud(&a, 1, 0, 64, ah_ab, b.qp->qp_num, QKEY,
				    false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 1, 64);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);

	assert_int_equal(ibv_init_ah_from_wc(b.ctx, 1, &wc, grh, &attr), 0);
	assert_int_equal(attr.is_global, 1);
	assert_int_equal(attr.port_num, 1);
	assert_memory_equal(attr.grh.dgid.raw, a.gid.raw, 16);
	assert_int_equal(attr.grh.sgid_index, opts.gid_index);
	assert_int_equal(attr.grh.hop_limit, 64);

	/* answer the sender through a handle made from its datagram */
	back = ibv_create_ah_from_wc(b.pd, &wc, grh, 1);
	assert_non_null(back);
	fill_pattern(b.buf, 200, 10);
	assert_int_equal(ep_post_recv(&a, 2, RECV_OFF, GRH + mtu), 0);
	assert_int_equal(ep_post_ud(&b, 2, 0, 200, back, wc.src_qp, QKEY,
				    false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&b, 2, 200);
	assert_int_equal(ep_poll(a.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.src_qp, b.qp->qp_num);
	assert_memory_equal(a.buf + RECV_OFF + GRH, b.buf, 200);
	assert_int_equal(ibv_destroy_ah(back), 0);

	/* a datagram that came without a GRH has no address to answer */
	wc.wc_flags = 0;
	assert_int_equal(ibv_init_ah_from_wc(b.ctx, 1, &wc, grh, &attr), 0);
	assert_int_equal(attr.is_global, 0);
}

/* The index of the first IPv6 (not IPv4-mapped) GID of @p e, or -1. */
static int
ipv6_gid(struct ep *e, union ibv_gid *gid)
{
	int i;

	for (i = 0; ibv_query_gid(e->ctx, 1, i, gid) == 0; i++)
		if (!(gid->global.subnet_prefix == 0 && gid->raw[10] == 0xff &&
		      gid->raw[11] == 0xff))
			return i;
	return -1;
}

static void
test_ud_ipv6(void **state)
{
	union ibv_gid ga, gb;
	int ia = ipv6_gid(&a, &ga), ib = ipv6_gid(&b, &gb);
	struct ibv_ah_attr attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = gb, .sgid_index = (uint8_t)ia,
			 .hop_limit = 33, .traffic_class = 0x20 },
	};
	const uint8_t *grh = b.buf + RECV_OFF;
	struct ibv_ah *ah, *back;
	struct ibv_ah_attr from;
	struct ibv_wc wc;

	(void)state;
	assert_true(ia >= 0 && ib >= 0);
	ah = ibv_create_ah(a.pd, &attr);
	assert_non_null(ah);
	fill_pattern(a.buf, 300, 12);
	assert_int_equal(ep_post_recv(&b, 8, RECV_OFF, GRH + mtu), 0);
	assert_int_equal(ep_post_ud(&a, 8, 0, 300, ah, b.qp->qp_num, QKEY,
				    false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 8, 300);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, GRH + 300);
	assert_true(wc.wc_flags & IBV_WC_GRH);
	/* the network header type, where a RoCE NIC gives it: IPv6 */
	assert_int_equal(wc.sl, 1);
	/* the GRH area is the IPv6 header: version 6, UDP, the hop limit
	 * and class sent, the two addresses */
	assert_int_equal(grh[0] >> 4, 6);
	assert_int_equal((grh[0] & 0xf) << 4 | grh[1] >> 4, 0x20);
	assert_int_equal(grh[6], 17);
	assert_int_equal(grh[7], 33);
	assert_memory_equal(grh + 8, ga.raw, 16);
	assert_memory_equal(grh + 24, gb.raw, 16);
	assert_memory_equal(grh + GRH, a.buf, 300);

	/* read back: the sender's GID, b's own index, the class */
	assert_int_equal(ibv_init_ah_from_wc(b.ctx, 1, &wc,
					     (struct ibv_grh *)(void *)
					     (b.buf + RECV_OFF), &from), 0);
	assert_memory_equal(from.grh.dgid.raw, ga.raw, 16);
	assert_int_equal(from.grh.sgid_index, ib);
	assert_int_equal(from.grh.hop_limit, 33);
	assert_int_equal(from.grh.traffic_class, 0x20);
	/* and an answer that way */
	back = ibv_create_ah_from_wc(b.pd, &wc, (struct ibv_grh *)(void *)
				     (b.buf + RECV_OFF), 1);
	assert_non_null(back);
	assert_int_equal(ep_post_recv(&a, 9, RECV_OFF, GRH + mtu), 0);
	assert_int_equal(ep_post_ud(&b, 9, 0, 100, back, a.qp->qp_num, QKEY,
				    false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&b, 9, 100);
	assert_int_equal(ep_poll(a.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(a.buf[RECV_OFF] >> 4, 6);
	assert_int_equal(ibv_destroy_ah(back), 0);
	assert_int_equal(ibv_destroy_ah(ah), 0);
}

static uint64_t
rx_dropped_qp(struct ibv_qp *qp)
{
	struct droce_qp_counters c;

	assert_int_equal(droce_query_qp_counters(qp, &c), 0);
	return c.rx_dropped;
}

static uint64_t
rx_dropped(struct ep *e)
{
	return rx_dropped_qp(e->qp);
}

static void
test_ud_qkey(void **state)
{
	uint64_t dropped = rx_dropped(&b);
	struct ibv_wc wc;

	(void)state;
	assert_int_equal(ep_post_recv(&b, 3, RECV_OFF, GRH + mtu), 0);
	/* another Q_Key: dropped at the receiver, the WQE stays */
	fill_pattern(a.buf, 32, 1);
	assert_int_equal(ep_post_ud(&a, 1, 0, 32, ah_ab, b.qp->qp_num,
				    QKEY + 1, false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 1, 32);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);
	assert_int_equal(rx_dropped(&b), dropped + 1);

	/* the high bit set: the sender's QP's Q_Key goes (the same here) */
	fill_pattern(a.buf, 32, 2);
	assert_int_equal(ep_post_ud(&a, 2, 0, 32, ah_ab, b.qp->qp_num,
				    0x80000000u, false, 0,
				    IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 2, 32);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 3);
	assert_memory_equal(b.buf + RECV_OFF + GRH, a.buf, 32);
}

static void
test_ud_no_recv(void **state)
{
	uint64_t dropped = rx_dropped(&b);
	struct ibv_wc wc;

	(void)state;
	/* nothing posted: lost, silently */
	assert_int_equal(ep_post_ud(&a, 1, 0, 16, ah_ab, b.qp->qp_num, QKEY,
				    false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 1, 16);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);
	assert_int_equal(rx_dropped(&b), dropped + 1);
	/* the next one arrives */
	fill_pattern(a.buf, 16, 3);
	assert_int_equal(ep_post_recv(&b, 4, RECV_OFF, GRH + mtu), 0);
	assert_int_equal(ep_post_ud(&a, 2, 0, 16, ah_ab, b.qp->qp_num, QKEY,
				    false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 2, 16);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.wr_id, 4);
	assert_memory_equal(b.buf + RECV_OFF + GRH, a.buf, 16);
}

/* A second UD QP on @p e's device, in RTS. */
static struct ibv_qp *
extra_qp(struct ep *e, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = e->scq,
		.recv_cq = e->rcq,
		.srq = srq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &qa);

	assert_non_null(qp);
	assert_int_equal(ud_qp_up(qp, QKEY, 0), 0);
	return qp;
}

static void
test_ud_too_long(void **state)
{
	struct ibv_qp *c = extra_qp(&b, NULL);
	struct ibv_sge sge = {
		.addr = (uintptr_t)(b.buf + RECV_OFF), .length = GRH + 99,
		.lkey = b.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	struct ibv_wc wc;

	(void)state;
	assert_int_equal(ibv_post_recv(c, &wr, &bad), 0);
	assert_int_equal(ep_post_ud(&a, 1, 0, 100, ah_ab, c->qp_num, QKEY,
				    false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 1, 100);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(wc.status, IBV_WC_LOC_LEN_ERR);
	/* one datagram must not end the QP: the next one arrives */
	assert_int_equal(ep_qp_state(c), IBV_QPS_RTS);
	wr.wr_id = 6;
	sge.length = GRH + 100;
	assert_int_equal(ibv_post_recv(c, &wr, &bad), 0);
	assert_int_equal(ep_post_ud(&a, 2, 0, 100, ah_ab, c->qp_num, QKEY,
				    false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 2, 100);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.wr_id, 6);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, GRH + 100);
	assert_int_equal(ibv_destroy_qp(c), 0);
}

static void
test_ud_rules(void **state)
{
	static const enum ibv_wr_opcode not_ud[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV,
		IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV,
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)a.buf, .length = 8, .lkey = a.mr->lkey,
	};
	struct ibv_send_wr ok = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.wr.ud = { .ah = ah_ab, .remote_qpn = b.qp->qp_num,
			   .remote_qkey = QKEY },
	};
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_attr attr;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(not_ud) / sizeof(not_ud[0]); i++) {
		wr = ok;
		wr.opcode = not_ud[i];
		bad = NULL;
		assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
		assert_ptr_equal(bad, &wr);
	}
	/* more than the MTU, no handle, a fence */
	wr = ok;
	sge.length = mtu + 1;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	sge.length = 8;
	wr.wr.ud.ah = NULL;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	wr = ok;
	wr.send_flags = IBV_SEND_FENCE;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	/* the handle of another device */
	wr = ok;
	wr.wr.ud.ah = ah_ba;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	/* a good WR after a bad one: nothing from the bad one on */
	wr = ok;
	wr.opcode = IBV_WR_RDMA_READ;
	ok.next = &wr;
	assert_int_equal(ibv_post_send(a.qp, &ok, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	ok.next = NULL;

	/* UD's attribute table: a path or connected attributes refused */
	memset(&attr, 0, sizeof(attr));
	attr.path_mtu = IBV_MTU_1024;
	assert_int_equal(ibv_modify_qp(a.qp, &attr, IBV_QP_PATH_MTU), EINVAL);
	attr.dest_qp_num = 5;
	assert_int_equal(ibv_modify_qp(a.qp, &attr, IBV_QP_DEST_QPN), EINVAL);
	attr.qkey = QKEY;
	assert_int_equal(ibv_modify_qp(a.qp, &attr, IBV_QP_QKEY), 0);
	/* INIT needs the Q_Key */
	{
		struct ibv_qp_init_attr qa = {
			.send_cq = a.scq, .recv_cq = a.rcq,
			.qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp *q = ibv_create_qp(a.pd, &qa);

		assert_non_null(q);
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IBV_QPS_INIT;
		attr.port_num = 1;
		assert_int_equal(ibv_modify_qp(q, &attr, IBV_QP_STATE |
					       IBV_QP_PKEY_INDEX |
					       IBV_QP_PORT), EINVAL);
		attr.qkey = 7;
		assert_int_equal(ibv_modify_qp(q, &attr, IBV_QP_STATE |
					       IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					       IBV_QP_QKEY), 0);
		assert_int_equal(ibv_modify_qp(q, &attr, IBV_QP_STATE |
					       IBV_QP_AV), EINVAL);
		assert_int_equal(ibv_destroy_qp(q), 0);
	}
	/* an address handle needs a GID: RoCE has no LIDs */
	{
		struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };

		assert_null(ibv_create_ah(a.pd, &aa));
		assert_int_equal(errno, EINVAL);
		aa.is_global = 1;
		aa.grh.dgid = b.gid;
		aa.grh.sgid_index = 9;
		assert_null(ibv_create_ah(a.pd, &aa));
	}
	/* a PD with a handle on it is busy */
	assert_int_equal(ibv_dealloc_pd(a.pd), EBUSY);
}

static void
test_ud_srq(void **state)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct ibv_srq *srq = ibv_create_srq(b.pd, &sa);
	struct ibv_qp *ud, *rc;
	struct ibv_qp_init_attr qa = {
		.send_cq = b.scq, .recv_cq = b.rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct ep peer;
	struct ibv_sge sge;
	struct ibv_recv_wr rw = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc[2];
	struct ep_opts rc_opts;
	bool seen_ud = false, seen_rc = false;
	int i;

	(void)state;
	assert_non_null(srq);
	ud = extra_qp(&b, srq);
	qa.srq = srq;
	rc = ibv_create_qp(b.pd, &qa);
	assert_non_null(rc);
	/* an RC peer on droce0, joined to rc */
	ep_opts_default(&rc_opts);
	assert_int_equal(ep_open(&peer, 0, 1 << 16, &rc_opts), 0);
	{
		struct ep me = b;

		me.qp = rc;
		me.psn = 77;
		assert_int_equal(ep_connect(&peer, &me, &rc_opts), 0);
		assert_int_equal(ep_connect(&me, &peer, &rc_opts), 0);
	}
	for (i = 0; i < 2; i++) {
		sge = (struct ibv_sge) {
			.addr = (uintptr_t)(b.buf + RECV_OFF + i * 8192),
			.length = 8192, .lkey = b.mr->lkey,
		};
		rw.wr_id = 100 + i;
		assert_int_equal(ibv_post_srq_recv(srq, &rw, &rbad), 0);
	}
	fill_pattern(a.buf, 300, 4);
	assert_int_equal(ep_post_ud(&a, 1, 0, 300, ah_ab, ud->qp_num, QKEY,
				    false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 1, 300);
	fill_pattern(peer.buf, 500, 5);
	assert_int_equal(ep_post(&peer, IBV_WR_SEND, 2, 0, 500, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(peer.scq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);

	assert_int_equal(ep_poll(b.rcq, wc, 2, 2000), 2);
	for (i = 0; i < 2; i++) {
		const uint8_t *p = b.buf + RECV_OFF + (wc[i].wr_id - 100) * 8192;

		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		if (wc[i].qp_num == ud->qp_num) {
			assert_int_equal(wc[i].byte_len, GRH + 300);
			assert_memory_equal(p + GRH, a.buf, 300);
			seen_ud = true;
		} else {
			assert_int_equal(wc[i].qp_num, rc->qp_num);
			assert_int_equal(wc[i].byte_len, 500);
			assert_memory_equal(p, peer.buf, 500);
			seen_rc = true;
		}
	}
	assert_true(seen_ud && seen_rc);
	ep_close(&peer);
	assert_int_equal(ibv_destroy_qp(ud), 0);
	assert_int_equal(ibv_destroy_qp(rc), 0);
	assert_int_equal(ibv_destroy_srq(srq), 0);
}

/* A UD QP on a from @p qa (Q_Key QKEY), brought to RTS. */
static struct ibv_qp *
ud_qp_ex_up(struct ibv_qp_init_attr_ex *qa)
{
	struct ibv_qp *q = ibv_create_qp_ex(a.ctx, qa);

	assert_non_null(q);
	assert_int_equal(ud_qp_up(q, QKEY, 0), 0);
	return q;
}

static void
test_ud_qp_ex(void **state)
{
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = a.scq, .recv_cq = a.rcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = a.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
			IBV_QP_EX_WITH_SEND_WITH_IMM,
	};
	struct ibv_qp *q;
	struct ibv_qp_ex *x;
	struct ibv_wc wc[2];
	int i;

	(void)state;
	q = ud_qp_ex_up(&qa);
	x = ibv_qp_to_qp_ex(q);
	assert_non_null(x);

	fill_pattern(a.buf, 128, 6);
	for (i = 0; i < 2; i++)
		assert_int_equal(ep_post_recv(&b, 20 + i,
					      RECV_OFF + i * 4096,
					      GRH + mtu), 0);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, ah_ab, b.qp->qp_num, QKEY);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 128);
	x->wr_id = 2;
	ibv_wr_send_imm(x, htobe32(0x5151));
	ibv_wr_set_ud_addr(x, ah_ab, b.qp->qp_num, QKEY);
	ibv_wr_set_inline_data(x, a.buf, 64);
	assert_int_equal(ibv_wr_complete(x), 0);
	assert_int_equal(ep_poll(a.scq, wc, 2, 2000), 2);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[1].status, IBV_WC_SUCCESS);
	assert_int_equal(ep_poll(b.rcq, wc, 2, 2000), 2);
	assert_int_equal(wc[0].wr_id, 20);
	assert_int_equal(wc[0].byte_len, GRH + 128);
	assert_int_equal(wc[0].src_qp, q->qp_num);
	assert_memory_equal(b.buf + RECV_OFF + GRH, a.buf, 128);
	assert_int_equal(wc[1].wr_id, 21);
	assert_int_equal(wc[1].byte_len, GRH + 64);
	assert_int_equal(be32toh(wc[1].imm_data), 0x5151);
	assert_memory_equal(b.buf + RECV_OFF + 4096 + GRH, a.buf, 64);

	/* no address, or an operation UD has not got: nothing posted */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 8);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, 1, 0);
	ibv_wr_set_ud_addr(x, ah_ab, b.qp->qp_num, QKEY);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	assert_int_equal(ep_poll(a.scq, wc, 1, 100), 0);
	assert_int_equal(ibv_destroy_qp(q), 0);
}

/* Post a receive of GRH + MTU bytes at slot @p slot of b's buffer on @p qp. */
static void
recv_on(struct ibv_qp *qp, uint64_t wr_id, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(b.buf + RECV_OFF + (size_t)slot * 8192),
		.length = GRH + mtu, .lkey = b.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
}

/* Send to @p group from a through @p gah; the QPs of @p want get it. */
static void
group_send(struct ibv_ah *gah, struct ibv_qp **want, int nwant,
	   uint32_t seed)
{
	struct ibv_wc wc[4];
	int i, j;

	fill_pattern(a.buf, 256, seed);
	assert_int_equal(ep_post_ud(&a, seed, 0, 256, gah, 0xffffff, QKEY,
				    false, 0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, seed, 256);
	assert_int_equal(ep_poll(b.rcq, wc, 4, 300), nwant);
	for (i = 0; i < nwant; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].src_qp, a.qp->qp_num);
		assert_int_equal(wc[i].byte_len, GRH + 256);
		for (j = 0; j < nwant; j++)
			if (want[j] != NULL && want[j]->qp_num == wc[i].qp_num)
				break;
		assert_true(j < nwant);
		want[j] = NULL;         /* once each */
		assert_memory_equal(b.buf + RECV_OFF + wc[i].wr_id * 8192 +
				    GRH, a.buf, 256);
	}
}

static void
multicast(int gid_index, const union ibv_gid *group)
{
	struct ibv_qp *c1 = extra_qp(&b, NULL), *c2 = extra_qp(&b, NULL);
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *group, .sgid_index = (uint8_t)gid_index,
			 .hop_limit = 1 },
	};
	struct ibv_ah *gah = ibv_create_ah(a.pd, &aa);
	struct ibv_qp *want[2];
	struct ibv_ah_attr back;
	struct ibv_wc wc;

	assert_non_null(gah);
	assert_int_equal(ibv_attach_mcast(c1, group, 0), 0);
	assert_int_equal(ibv_attach_mcast(c2, group, 0), 0);
	assert_int_equal(ibv_attach_mcast(c2, group, 0), 0);    /* again */
	recv_on(c1, 0, 0);
	recv_on(c1, 1, 1);
	recv_on(c2, 2, 2);
	recv_on(c2, 3, 3);
	want[0] = c1;
	want[1] = c2;
	group_send(gah, want, 2, 21);

	/* the GRH says where it went: no one address to answer */
	memset(&wc, 0, sizeof(wc));
	wc.wc_flags = IBV_WC_GRH;
	assert_int_equal(ibv_init_ah_from_wc(b.ctx, 1, &wc,
					     (struct ibv_grh *)(b.buf +
								RECV_OFF),
					     &back), -1);
	assert_int_equal(errno, EINVAL);

	assert_int_equal(ibv_detach_mcast(c2, group, 0), 0);
	assert_int_equal(ibv_detach_mcast(c2, group, 0), EINVAL);
	want[0] = c1;
	group_send(gah, want, 1, 22);

	/* gone while attached: the group forgets it */
	assert_int_equal(ibv_destroy_qp(c1), 0);
	group_send(gah, want, 0, 23);
	assert_int_equal(ibv_destroy_qp(c2), 0);
	assert_int_equal(ibv_destroy_ah(gah), 0);
}

static void
test_ud_multicast(void **state)
{
	union ibv_gid v4 = { .raw = { [10] = 0xff, [11] = 0xff,
				      239, 1, 2, 3 } };
	union ibv_gid v6 = { .raw = { 0xff, 0x0e, [14] = 0x12, [15] = 0x34 } };
	struct ibv_qp_init_attr qa = {
		.send_cq = b.scq, .recv_cq = b.rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *rc;
	union ibv_gid gid;
	int i;

	(void)state;
	multicast(opts.gid_index, &v4);
	/* over IPv6 from the first IPv6 GID, if the device has one */
	for (i = 0; ibv_query_gid(a.ctx, 1, i, &gid) == 0; i++) {
		if (gid.raw[10] != 0xff || gid.raw[11] != 0xff ||
		    gid.global.subnet_prefix != 0) {
			print_message("IPv6 group from GID index %d\n", i);
			multicast(i, &v6);
			break;
		}
	}
	/* only UD QPs, only groups */
	rc = ibv_create_qp(b.pd, &qa);
	assert_non_null(rc);
	assert_int_equal(ibv_attach_mcast(rc, &v4, 0), EINVAL);
	assert_int_equal(ibv_destroy_qp(rc), 0);
	assert_int_equal(ibv_attach_mcast(b.qp, &b.gid, 0), EINVAL);
}

/* ------------------------------------------------------------------------
 * QP1, the GSI.
 */

/*
 * A UD (or @p type) QP on @p e's device from ibv_create_qp_ex() with
 * creation flags @p flags and source QPN @p source_qpn.
 * @return it, or NULL with errno set.
 */
static struct ibv_qp *
flagged_qp(struct ep *e, enum ibv_qp_type type, uint32_t flags,
	   uint32_t source_qpn)
{
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = e->scq, .recv_cq = e->rcq, .qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = e->pd,
		.create_flags = flags,
		.source_qpn = source_qpn,
	};

	return ibv_create_qp_ex(e->ctx, &qa);
}

/* QP1 of @p e's device, at RTS with the GSI's Q_Key. */
static struct ibv_qp *
gsi_up(struct ep *e)
{
	struct ibv_qp *qp = flagged_qp(e, IBV_QPT_UD,
				       IBV_QP_CREATE_SOURCE_QPN, 1);

	assert_non_null(qp);
	assert_int_equal(qp->qp_num, 1);
	assert_int_equal(ud_qp_up(qp, GSI_QKEY, 0), 0);
	return qp;
}

/*
 * What goes to QP1 starts as a MAD does (the CM class's header, a DREP):
 * captures of these tests are read by tshark's MAD dissector, which
 * takes anything else for a malformed MAD. The rest is the pattern.
 */
static void
mad_shape(uint8_t *buf, uint32_t seed)
{
	static const uint8_t hdr[8] = { 1, 0x07, 2, 0x03, 0, 0, 0, 0 };

	memcpy(buf, hdr, sizeof(hdr));
	memset(buf + 8, 0, 16);
	buf[15] = (uint8_t)seed;        /* the TID */
	buf[17] = 0x16;                 /* attribute: DREP */
}

/* Post a signalled UD SEND of @p len bytes of from->buf on @p qp. */
static void
send_on(struct ibv_qp *qp, struct ep *from, uint64_t wr_id, uint32_t len,
	struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)from->buf, .length = len,
		.lkey = from->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr = { .ud = { .ah = ah, .remote_qpn = qpn,
				.remote_qkey = qkey } },
	};
	struct ibv_send_wr *bad;

	assert_int_equal(ibv_post_send(qp, &wr, &bad), 0);
}

/* Post a receive of GRH + MTU bytes at @p off of @p e's buffer on @p qp. */
static void
recv_at(struct ibv_qp *qp, struct ep *e, uint64_t wr_id, size_t off)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->buf + off), .length = GRH + mtu,
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
}

/*
 * A MAD from QP1 of @p from to QP1 of @p to (Q_Key 0x80010000, given as
 * such in the WR): it lands in @p to's QP1 from src_qp 1, after a GRH
 * naming @p from's address, every byte as sent.
 */
static void
gsi_mad(struct ep *from, struct ibv_qp *fqp, struct ep *to,
	struct ibv_qp *tqp, struct ibv_ah *ah, uint32_t seed)
{
	uint8_t *got = to->buf + RECV_OFF;
	struct ibv_grh *grh = (struct ibv_grh *)got;
	struct ibv_ah_attr back;
	struct ibv_wc wc;
	unsigned int k;

	fill_pattern(from->buf, MAD, seed);
	mad_shape(from->buf, seed);
	memset(got, 0xee, GRH + mtu);
	recv_at(tqp, to, seed, RECV_OFF);
	send_on(fqp, from, seed, MAD, ah, 1, GSI_QKEY);
	assert_int_equal(ep_poll(from->scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.qp_num, 1);
	assert_int_equal(wc.wr_id, seed);
	assert_int_equal(ep_poll(to->rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, seed);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.qp_num, 1);
	assert_int_equal(wc.src_qp, 1);
	assert_int_equal(wc.byte_len, GRH + MAD);
	assert_true(wc.wc_flags & IBV_WC_GRH);
	for (k = 0; k < 20; k++)
		assert_int_equal(got[k], 0);
	assert_int_equal(got[20], 0x45);
	assert_memory_equal(got + 20 + 12, gid_ipv4(&from->gid), 4);
	assert_memory_equal(got + 20 + 16, gid_ipv4(&to->gid), 4);
	assert_memory_equal(got + GRH, from->buf, MAD);
	assert_int_equal(got[GRH + MAD], 0xee);
	/* the address an answer goes to: the sender's GID */
	assert_int_equal(ibv_init_ah_from_wc(to->ctx, 1, &wc, grh, &back), 0);
	assert_memory_equal(back.grh.dgid.raw, from->gid.raw, 16);
}

static void
test_ud_gsi_mad(void **state)
{
	struct ibv_qp *ga = gsi_up(&a), *gb = gsi_up(&b);
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	(void)state;
	assert_int_equal(ibv_query_qp(gb, &attr, IBV_QP_STATE | IBV_QP_QKEY,
				      &init), 0);
	assert_int_equal(attr.qp_state, IBV_QPS_RTS);
	assert_int_equal(attr.qkey, GSI_QKEY);
	assert_int_equal(init.qp_type, IBV_QPT_UD);
	gsi_mad(&a, ga, &b, gb, ah_ab, 31);
	gsi_mad(&b, gb, &a, ga, ah_ba, 32);
	assert_int_equal(ibv_destroy_qp(ga), 0);
	assert_int_equal(ibv_destroy_qp(gb), 0);
}

static void
test_ud_gsi_one_per_device(void **state)
{
	struct ibv_qp *g, *g2, *gb;
	struct ibv_context *ctx2;
	struct ibv_pd *pd2;
	struct ibv_cq *cq2;
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = IBV_QP_CREATE_SOURCE_QPN,
		.source_qpn = 1,
	};

	(void)state;
	g = flagged_qp(&a, IBV_QPT_UD, IBV_QP_CREATE_SOURCE_QPN, 1);
	assert_non_null(g);
	assert_int_equal(g->qp_num, 1);
	/* a second one on the same device: busy */
	errno = 0;
	assert_null(flagged_qp(&a, IBV_QPT_UD, IBV_QP_CREATE_SOURCE_QPN, 1));
	assert_int_equal(errno, EBUSY);
	/* through another context of the device too */
	ctx2 = ep_open_device(0);
	assert_non_null(ctx2);
	pd2 = ibv_alloc_pd(ctx2);
	assert_non_null(pd2);
	cq2 = ibv_create_cq(ctx2, 4, NULL, NULL, 0);
	assert_non_null(cq2);
	qa.send_cq = cq2;
	qa.recv_cq = cq2;
	qa.pd = pd2;
	errno = 0;
	assert_null(ibv_create_qp_ex(ctx2, &qa));
	assert_int_equal(errno, EBUSY);
	/* the other device has its own */
	gb = flagged_qp(&b, IBV_QPT_UD, IBV_QP_CREATE_SOURCE_QPN, 1);
	assert_non_null(gb);
	assert_int_equal(gb->qp_num, 1);
	/* free again once the first is gone */
	assert_int_equal(ibv_destroy_qp(g), 0);
	g2 = ibv_create_qp_ex(ctx2, &qa);
	assert_non_null(g2);
	assert_int_equal(g2->qp_num, 1);
	errno = 0;
	assert_null(flagged_qp(&a, IBV_QPT_UD, IBV_QP_CREATE_SOURCE_QPN, 1));
	assert_int_equal(errno, EBUSY);
	assert_int_equal(ibv_destroy_qp(g2), 0);
	g = flagged_qp(&a, IBV_QPT_UD, IBV_QP_CREATE_SOURCE_QPN, 1);
	assert_non_null(g);
	assert_int_equal(g->qp_num, 1);
	assert_int_equal(ibv_destroy_qp(g), 0);
	assert_int_equal(ibv_destroy_qp(gb), 0);
	assert_int_equal(ibv_destroy_cq(cq2), 0);
	assert_int_equal(ibv_dealloc_pd(pd2), 0);
	assert_int_equal(ibv_close_device(ctx2), 0);
}

static void
test_ud_gsi_refused(void **state)
{
	struct ibv_qp *q;

	(void)state;
	/* source QPN 1 only */
	errno = 0;
	assert_null(flagged_qp(&a, IBV_QPT_UD, IBV_QP_CREATE_SOURCE_QPN, 2));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(flagged_qp(&a, IBV_QPT_UD, IBV_QP_CREATE_SOURCE_QPN, 0));
	assert_int_equal(errno, EINVAL);
	/* UD only */
	errno = 0;
	assert_null(flagged_qp(&a, IBV_QPT_RC, IBV_QP_CREATE_SOURCE_QPN, 1));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(flagged_qp(&a, IBV_QPT_UC, IBV_QP_CREATE_SOURCE_QPN, 1));
	assert_int_equal(errno, EINVAL);
	/* a flag droce has not got */
	errno = 0;
	assert_null(flagged_qp(&a, IBV_QPT_UD, IBV_QP_CREATE_SOURCE_QPN |
			       IBV_QP_CREATE_SCATTER_FCS, 1));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(flagged_qp(&a, IBV_QPT_UD,
			       IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, 0));
	assert_int_equal(errno, EOPNOTSUPP);
	/* none of those took QP1 */
	q = flagged_qp(&a, IBV_QPT_UD, IBV_QP_CREATE_SOURCE_QPN, 1);
	assert_non_null(q);
	assert_int_equal(q->qp_num, 1);
	assert_int_equal(ibv_destroy_qp(q), 0);
	/* no flags: an ordinary QP, QPN of the table */
	q = flagged_qp(&a, IBV_QPT_UD, 0, 1);
	assert_non_null(q);
	assert_int_not_equal(q->qp_num, 1);
	assert_true(q->qp_num >= 0x1000);
	assert_int_equal(ibv_destroy_qp(q), 0);
}

static void
test_ud_gsi_qkey(void **state)
{
	struct ibv_qp *ga = gsi_up(&a), *gb = gsi_up(&b);
	uint64_t dropped;
	struct ibv_wc wc;

	(void)state;
	dropped = rx_dropped_qp(gb);
	recv_at(gb, &b, 41, RECV_OFF);
	/* from an ordinary QP, with its Q_Key: not the GSI's */
	fill_pattern(a.buf, MAD, 41);
	mad_shape(a.buf, 41);
	assert_int_equal(ep_post_ud(&a, 41, 0, MAD, ah_ab, 1, QKEY, false, 0,
				    IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 41, MAD);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);
	assert_int_equal(rx_dropped_qp(gb), dropped + 1);
	/* naming the GSI's, privileged: the QP's own goes, not the GSI's */
	assert_int_equal(ep_post_ud(&a, 42, 0, MAD, ah_ab, 1, GSI_QKEY, false,
				    0, IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 42, MAD);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);
	assert_int_equal(rx_dropped_qp(gb), dropped + 2);
	/* from QP1: taken, into the WQE the dropped ones left */
	send_on(ga, &a, 43, MAD, ah_ab, 1, GSI_QKEY);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 41);
	assert_int_equal(wc.qp_num, 1);
	assert_int_equal(wc.src_qp, 1);
	assert_memory_equal(b.buf + RECV_OFF + GRH, a.buf, MAD);
	assert_int_equal(rx_dropped_qp(gb), dropped + 2);
	assert_int_equal(ibv_destroy_qp(ga), 0);
	assert_int_equal(ibv_destroy_qp(gb), 0);
}

/*
 * An ordinary UD QP of b in table slot 1 (QPN ...001): made and
 * destroyed until one lands there (slots are taken round the table).
 */
static struct ibv_qp *
slot1_qp(void)
{
	struct ibv_device_attr da;
	int i;

	assert_int_equal(ibv_query_device(b.ctx, &da), 0);
	for (i = 0; i <= da.max_qp; i++) {
		struct ibv_qp *q = extra_qp(&b, NULL);

		if ((q->qp_num & (uint32_t)(da.max_qp - 1)) == 1)
			return q;
		assert_int_equal(ibv_destroy_qp(q), 0);
	}
	fail_msg("no QP in slot 1 after %d", da.max_qp + 1);
	return NULL;
}

static void
test_ud_gsi_beside_others(void **state)
{
	struct ibv_qp *ga = gsi_up(&a), *gb = gsi_up(&b), *s1 = slot1_qp();
	struct ibv_qp *to[3] = { gb, s1, b.qp };
	uint32_t qkey[3] = { GSI_QKEY, QKEY, QKEY };
	struct droce_counters c0, c1;
	struct ibv_wc wc;
	unsigned int i;

	(void)state;
	assert_int_not_equal(s1->qp_num, 1);
	/* each QP gets what is sent to it, and nothing else */
	for (i = 0; i < 3; i++)
		recv_at(to[i], &b, 50 + i, RECV_OFF + (size_t)i * 8192);
	for (i = 0; i < 3; i++) {
		fill_pattern(a.buf, MAD, 50 + i);
		mad_shape(a.buf, 50 + i);
		send_on(i == 0 ? ga : a.qp, &a, 50 + i, MAD, ah_ab,
			to[i]->qp_num, qkey[i]);
		assert_int_equal(ep_poll(a.scq, &wc, 1, 2000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, 50 + i);
		assert_int_equal(wc.qp_num, to[i]->qp_num);
		assert_int_equal(wc.src_qp, i == 0 ? 1 : a.qp->qp_num);
		assert_int_equal(wc.byte_len, GRH + MAD);
		assert_memory_equal(b.buf + RECV_OFF + (size_t)i * 8192 + GRH,
				    a.buf, MAD);
	}
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 100), 0);

	/* the QP in slot 1 goes, QP1 stays: QPN 1 still reaches it */
	assert_int_equal(ibv_destroy_qp(s1), 0);
	recv_at(gb, &b, 60, RECV_OFF);
	fill_pattern(a.buf, MAD, 60);
	mad_shape(a.buf, 60);
	send_on(ga, &a, 60, MAD, ah_ab, 1, GSI_QKEY);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 2000), 1);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 60);
	assert_int_equal(wc.qp_num, 1);
	assert_memory_equal(b.buf + RECV_OFF + GRH, a.buf, MAD);

	/* no QP1: a datagram to QPN 1 is not the device's */
	assert_int_equal(ibv_destroy_qp(gb), 0);
	assert_int_equal(droce_query_counters(b.ctx, &c0), 0);
	send_on(ga, &a, 61, MAD, ah_ab, 1, GSI_QKEY);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);
	assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
	assert_int_equal(c1.rx_not_ours, c0.rx_not_ours + 1);
	assert_int_equal(ibv_destroy_qp(ga), 0);
}

static void
test_ud_privileged_qkey(void **state)
{
	struct ibv_qp_attr attr = { .qkey = 0x80010000u };

	(void)state;
	/* (the last test: it stays dropped) */
	assert_int_equal(ep_drop_net_raw(), 0);
	assert_int_equal(ibv_modify_qp(b.qp, &attr, IBV_QP_QKEY), EPERM);
	attr.qkey = 0x00010000u;
	assert_int_equal(ibv_modify_qp(b.qp, &attr, IBV_QP_QKEY), 0);
}

/*
 * Without CAP_NET_RAW (after test_ud_privileged_qkey()): QP1 takes the
 * GSI's Q_Key, and no other privileged one; and works.
 */
static void
test_ud_gsi_unprivileged(void **state)
{
	struct ibv_qp *ga, *gb;
	struct ibv_qp_attr attr = { .qkey = GSI_QKEY };

	(void)state;
	gb = flagged_qp(&b, IBV_QPT_UD, IBV_QP_CREATE_SOURCE_QPN, 1);
	assert_non_null(gb);
	assert_int_equal(ibv_modify_qp(b.qp, &attr, IBV_QP_QKEY), EPERM);
	attr.qkey = GSI_QKEY + 1;
	assert_int_equal(ud_qp_up(gb, GSI_QKEY + 1, 0), -1);
	assert_int_equal(ep_qp_state(gb), IBV_QPS_RESET);
	assert_int_equal(ud_qp_up(gb, GSI_QKEY, 0), 0);
	assert_int_equal(ibv_modify_qp(gb, &attr, IBV_QP_QKEY), EPERM);
	ga = gsi_up(&a);
	gsi_mad(&a, ga, &b, gb, ah_ab, 71);
	assert_int_equal(ibv_destroy_qp(ga), 0);
	assert_int_equal(ibv_destroy_qp(gb), 0);
}

/* ------------------------------------------------------------------------
 * TSO and checksums, IPoIB style.
 */

#define TSO_HDR_MAX 96

/* A UD QP on a with TSO headers of up to @p max_tso_header bytes, at RTS. */
static struct ibv_qp *
tso_qp(uint32_t max_tso_header)
{
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = a.scq, .recv_cq = a.rcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1,
			 .max_send_sge = 2, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			(max_tso_header ? IBV_QP_INIT_ATTR_MAX_TSO_HEADER : 0),
		.pd = a.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO,
		.max_tso_header = (uint16_t)max_tso_header,
	};

	return ud_qp_ex_up(&qa);
}

/*
 * An IPoIB header (Ethernet type, two zero bytes), IPv4 (ID 0x1234) or
 * IPv6 and TCP (sequence number 0x10203040) or UDP into @p h, for
 * @p payload bytes after it; checksums zero. @return its length.
 */
static uint32_t
ipoib_header(uint8_t *h, bool v6, bool tcp, uint32_t payload)
{
	uint32_t hlen;

	memset(h, 0, TSO_HDR_MAX);
	h[0] = v6 ? 0x86 : 0x08;
	h[1] = v6 ? 0xdd : 0x00;
	hlen = 4 + ip_l4_header(h + 4, v6, tcp, a.gid.raw + (v6 ? 0 : 12),
				b.gid.raw + (v6 ? 0 : 12), 80, payload);
	if (!v6) {
		h[4 + 4] = 0x12;
		h[4 + 5] = 0x34;
	}
	if (tcp)
		memcpy(h + hlen - 20 + 4, "\x10\x20\x30\x40", 4);
	return hlen;
}

/*
 * Are the checksums of the IPoIB datagram at @p p right? It becomes an
 * Ethernet frame for the harness's checker (the IPoIB header's two
 * reserved bytes dropped).
 */
static bool
ipoib_csums_ok(const uint8_t *p, uint32_t len, bool *tcp)
{
	static uint8_t f[GRH + 8192];

	memset(f, 0, 12);
	memcpy(f + 12, p, 2);
	memcpy(f + 14, p + 4, len - 4);
	return frame_csums_ok(f, tcp);
}

/*
 * A TSO WR of @p payload bytes in segments of @p mss to b, through
 * ibv_post_send or the extended API: each segment arrives as a datagram
 * of its own with its header right.
 */
static void
tso_case(struct ibv_qp *q, bool v6, uint32_t payload, uint16_t mss,
	 bool qpx)
{
	const uint32_t nseg = (payload + mss - 1) / mss;
	static uint8_t hdr[TSO_HDR_MAX];
	uint32_t hlen = ipoib_header(hdr, v6, true, 0);
	uint8_t *data = a.buf + 65536;
	struct ibv_sge sge = { (uintptr_t)data, payload, a.mr->lkey };
	struct ibv_wc wc;
	uint32_t i;

	fill_pattern(data, payload, mss + v6);
	for (i = 0; i < nseg; i++)
		assert_int_equal(ep_post_recv(&b, 100 + i,
					      RECV_OFF + (size_t)i * 4096,
					      GRH + mtu), 0);
	if (qpx) {
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(q);

		ibv_wr_start(x);
		x->wr_id = 9;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send_tso(x, hdr, (uint16_t)hlen, mss);
		ibv_wr_set_ud_addr(x, ah_ab, b.qp->qp_num, QKEY);
		ibv_wr_set_sge_list(x, 1, &sge);
		assert_int_equal(ibv_wr_complete(x), 0);
	} else {
		struct ibv_send_wr wr = {
			.wr_id = 9, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_TSO, .send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { ah_ab, b.qp->qp_num, QKEY },
			.tso = { hdr, (uint16_t)hlen, mss },
		}, *bad;

		assert_int_equal(ibv_post_send(q, &wr, &bad), 0);
	}
	assert_int_equal(ep_poll(a.scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 9);
	assert_int_equal(wc.opcode, IBV_WC_TSO);
	for (i = 0; i < nseg; i++) {
		uint32_t off = i * mss;
		uint32_t n = payload - off < mss ? payload - off : mss;
		const uint8_t *got = b.buf + RECV_OFF + (size_t)i * 4096 + GRH;
		const uint8_t *ip = got + 4, *tcp = ip + (v6 ? 40 : 20);
		bool is_tcp;

		assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, 100 + i);
		assert_int_equal(wc.byte_len, GRH + hlen + n);
		assert_int_equal(wc.src_qp, q->qp_num);
		/* IPoIB's header as it was */
		assert_memory_equal(got, hdr, 4);
		if (v6) {
			assert_int_equal(ip[4] << 8 | ip[5], 20 + n);
			assert_false(wc.wc_flags & IBV_WC_IP_CSUM_OK);
		} else {
			assert_int_equal(ip[2] << 8 | ip[3], 40 + n);
			assert_int_equal(ip[4] << 8 | ip[5], 0x1234 + i);
			assert_true(wc.wc_flags & IBV_WC_IP_CSUM_OK);
		}
		assert_int_equal((uint32_t)tcp[4] << 24 | tcp[5] << 16 |
				 tcp[6] << 8 | tcp[7],
				 0x10203040u + off);
		assert_int_equal(tcp[13], i == nseg - 1 ? 0x18 : 0x10);
		assert_true(ipoib_csums_ok(got, hlen + n, &is_tcp));
		assert_true(is_tcp);
		assert_memory_equal(got + hlen, data + off, n);
	}
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 50), 0);
}

static void
test_ud_tso(void **state)
{
	struct ibv_device_attr_ex dev;
	struct ibv_qp *q = tso_qp(TSO_HDR_MAX), *plain;
	static uint8_t hdr[TSO_HDR_MAX];
	uint8_t *data = a.buf + 65536;
	struct ibv_sge sge = { (uintptr_t)data, 3000, a.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_TSO, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { ah_ab, b.qp->qp_num, QKEY },
	}, *bad;
	uint32_t hlen;

	(void)state;
	assert_int_equal(ibv_query_device_ex(a.ctx, NULL, &dev), 0);
	assert_true(dev.tso_caps.supported_qpts & (1u << IBV_QPT_UD));
	assert_true(dev.orig_attr.device_cap_flags & IBV_DEVICE_UD_IP_CSUM);

	tso_case(q, false, 5000, (uint16_t)(mtu - 44 - 24), false);
	tso_case(q, true, 4000, 700, false);
	tso_case(q, false, 1000, 300, true);
	/* one segment: the payload fits an MSS */
	tso_case(q, true, 200, 500, true);

	/* refused, bad_wr on it */
	hlen = ipoib_header(hdr, false, true, 0);
	wr.tso.hdr = hdr;
	wr.tso.hdr_sz = (uint16_t)hlen;
	wr.tso.mss = (uint16_t)(mtu - hlen + 1);          /* over the MTU */
	bad = NULL;
	assert_int_equal(ibv_post_send(q, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	wr.tso.mss = 500;
	hlen = ipoib_header(hdr, false, false, 0);        /* UDP, not TCP */
	wr.tso.hdr_sz = (uint16_t)hlen;
	assert_int_equal(ibv_post_send(q, &wr, &bad), EINVAL);
	hlen = ipoib_header(hdr, false, true, 0);
	hdr[0] = 0x88;                                     /* not IP */
	wr.tso.hdr_sz = (uint16_t)hlen;
	assert_int_equal(ibv_post_send(q, &wr, &bad), EINVAL);
	/* a UD QP made without max_tso_header has no room for one */
	plain = tso_qp(0);
	hdr[0] = 0x08;
	assert_int_equal(ibv_post_send(plain, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	assert_int_equal(ep_poll(a.scq, (struct ibv_wc[1]){ 0 }, 1, 50), 0);
	assert_int_equal(ibv_destroy_qp(plain), 0);
	assert_int_equal(ibv_destroy_qp(q), 0);
}

/* IBV_SEND_IP_CSUM: an IPoIB IPv4/UDP datagram's checksums filled. */
static void
test_ud_ip_csum(void **state)
{
	const uint32_t payload = 300;
	uint8_t *d = a.buf + 65536;
	uint32_t hlen = ipoib_header(d, false, false, payload);
	const uint8_t *got = b.buf + RECV_OFF + GRH;
	struct ibv_wc wc;
	bool tcp;

	(void)state;
	fill_pattern(d + hlen, payload, 55);
	assert_int_equal(ep_post_recv(&b, 5, RECV_OFF, GRH + mtu), 0);
	assert_int_equal(ep_post_ud(&a, 6, 65536, hlen + payload, ah_ab,
				    b.qp->qp_num, QKEY, false, 0,
				    IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM), 0);
	expect_send_done(&a, 6, hlen + payload);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_true(wc.wc_flags & IBV_WC_IP_CSUM_OK);
	assert_true(ipoib_csums_ok(got, hlen + payload, &tcp));
	assert_false(tcp);
	/* the checksums were zero when posted: droce filled them */
	assert_true(got[4 + 10] != 0 || got[4 + 11] != 0);
	assert_memory_equal(got + hlen, d + hlen, payload);

	/* without the flag, a datagram goes as it is: not CSUM_OK */
	assert_int_equal(ep_post_recv(&b, 7, RECV_OFF, GRH + mtu), 0);
	assert_int_equal(ep_post_ud(&a, 8, 65536, hlen + payload, ah_ab,
				    b.qp->qp_num, QKEY, false, 0,
				    IBV_SEND_SIGNALED), 0);
	expect_send_done(&a, 8, hlen + payload);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_false(wc.wc_flags & IBV_WC_IP_CSUM_OK);
	assert_memory_equal(got, d, hlen + payload);
}

/*
 * Under loss: @p n datagrams of several sizes, each with its index as
 * immediate data; what arrives is whole, right and in order.
 */
static void
test_ud_loss(void **state)
{
	const unsigned int n = 400;
	unsigned int i, got = 0, last = 0;
	struct ibv_wc wc;

	(void)state;
	for (i = 0; i < n; i++)
		assert_int_equal(ep_post_recv(&b, i, RECV_OFF +
					      (size_t)i * 4096,
					      GRH + mtu), 0);
	fill_pattern(a.buf, BUF / 2, 11);
	for (i = 0; i < n; i++) {
		uint32_t len = 1 + (i * 37) % mtu;

		while (ep_post_ud(&a, i, (size_t)i * 1024, len, ah_ab,
				  b.qp->qp_num, QKEY, true, i,
				  IBV_SEND_SIGNALED) == ENOMEM)
			assert_int_equal(ep_poll(a.scq, &wc, 1, 2000), 1);
	}
	while (ep_poll(b.rcq, &wc, 1, 1000) == 1) {
		uint32_t idx = be32toh(wc.imm_data);
		uint32_t len = 1 + (idx * 37) % mtu;

		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		/* receive WQEs are taken in order: the got-th one */
		assert_int_equal(wc.wr_id, got);
		assert_true(got == 0 || idx > last);
		assert_int_equal(wc.byte_len, GRH + len);
		assert_memory_equal(b.buf + RECV_OFF + (size_t)got * 4096 +
				    GRH, a.buf + (size_t)idx * 1024, len);
		last = idx;
		got++;
	}
	print_message("%u of %u datagrams arrived (%s)\n", got, n, fault_args);
	assert_true(got > 0 && got < n);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ud_idle_sends_nothing),
		cmocka_unit_test(test_ud_send),
		cmocka_unit_test(test_ud_ah_destroyed_after_post),
		cmocka_unit_test(test_ud_ah_from_wc),
		cmocka_unit_test(test_ud_ipv6),
		cmocka_unit_test(test_ud_qkey),
		cmocka_unit_test(test_ud_no_recv),
		cmocka_unit_test(test_ud_too_long),
		cmocka_unit_test(test_ud_rules),
		cmocka_unit_test(test_ud_srq),
		cmocka_unit_test(test_ud_qp_ex),
		cmocka_unit_test(test_ud_multicast),
		cmocka_unit_test(test_ud_tso),
		cmocka_unit_test(test_ud_ip_csum),
		/* (QP1 to QP1: a GSI QP of each device) */
		cmocka_unit_test(test_ud_gsi_mad),
		cmocka_unit_test(test_ud_gsi_one_per_device),
		cmocka_unit_test(test_ud_gsi_refused),
		cmocka_unit_test(test_ud_gsi_qkey),
		cmocka_unit_test(test_ud_gsi_beside_others),
		cmocka_unit_test(test_ud_privileged_qkey),
		cmocka_unit_test(test_ud_gsi_unprivileged),
	};
	/* loopback (DROCE_TEST_LOOPBACK): both ends on one device, which
	 * has one GSI QP, so the tests before QP1's */
	const size_t one_device = 14;
	const struct CMUnitTest loss_tests[] = {
		cmocka_unit_test(test_ud_loss),
	};

	if (argc == 1 && getenv("DROCE_TEST_LOOPBACK") != NULL)
		return pair_run_group("tests", tests, one_device, &pair);
	if (argc == 1)
		return pair_run_group_tests(tests, &pair);
	if (argc != 3) {
		fprintf(stderr, "usage: test_ud [WORKDIR FAULT_ARGS]\n");
		return 2;
	}
	fault_args = argv[2];
	if (ep_fault_config(argv[1], "ud", 4, fault_args, 9) != 0) {
		perror("test_ud: config");
		return 1;
	}
	return pair_run_group_tests_name(fault_args, loss_tests, &pair);
}
