/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Raw packet QPs and flow rules, droce0 (a) to droce1 (b), through the
 * verbs API:
 *  - a frame of an Ethernet type of its own, sent whole by a's raw QP,
 *    reaches b's raw QP through a rule on b's MAC and that type, byte
 *    for byte; without the rule, or after ibv_destroy_flow, it does not;
 *  - IPv4/UDP, IPv4/TCP and IPv6/UDP frames sent with zeroed checksums
 *    and IBV_SEND_IP_CSUM arrive with right ones (checked here, and
 *    IBV_WC_IP_CSUM_OK on IPv4), steered by IP address and port rules;
 *    a rule on another port does not take them;
 *  - TSO: a TCP header over IPv4 or IPv6 and a payload of several MSS
 *    arrive as that many segments, each with its IP length (and IPv4
 *    ID), TCP sequence number and checksums right, PSH only on the
 *    last, the payload whole; cut by DPDK's GSO library over IPv4
 *    (net_ring has no TSO: the tx_gso counter), by droce over IPv6;
 *    through ibv_wr_send_tso too; a header that is not TCP is refused;
 *  - an IPv6 TCP frame whose payload length is 40 bytes too long is
 *    still taken by a rule on its port;
 *  - loopback: a raw QP's frame to its own device's MAC reaches that
 *    device's rules alone, one to a group its rules and the wire;
 *  - receive side scaling: an RSS QP over an indirection table of four
 *    work queues puts each frame in the one the Toeplitz hash of its
 *    addresses (computed here) names;
 *  - a sniffer rule sees RoCE traffic too, and RoCE between the devices
 *    keeps working while a broad rule is in place;
 *  - the RAW_PACKET column of the opcode table of ibv_post_send(3): SEND
 *    and TSO work (above); every other opcode is EINVAL with bad_wr;
 *  - the rules: flows on raw QPs only, unknown spec types EOPNOTSUPP,
 *    a QP with rules does not go, frames shorter than an Ethernet header
 *    or longer than the MTU refused, CAP_NET_RAW needed (EPERM).
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <droce.h>

#include "harness.h"

#define BUF (1u << 20)
#define RECV_OFF (512u * 1024)
#define SLOT 2048
#define ETYPE 0x88b5            /* local experimental */

static struct ep_opts opts;
static struct ep a, b;
static uint8_t mac_a[6], mac_b[6];

static void
raw_opts(struct ep_opts *o)
{
	o->qp_type = IBV_QPT_RAW_PACKET;
}

/* Both MACs known, receives posted on b. */
static int
raw_ready(void)
{
	int i;

	if (droce_query_mac(a.ctx, mac_a) != 0 ||
	    droce_query_mac(b.ctx, mac_b) != 0)
		return -1;
	for (i = 0; i < 64; i++)
		if (ep_post_recv(&b, i, RECV_OFF + (size_t)i * SLOT, SLOT) != 0)
			return -1;
	return 0;
}

static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .tweak = raw_opts,
	.ready = raw_ready,
};

/* An Ethernet header from a to b of @p type at @p f. */
static size_t
eth(uint8_t *f, uint16_t type)
{
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = (uint8_t)(type >> 8);
	f[13] = (uint8_t)type;
	return 14;
}

/* Send a's buffer [0, len) as one frame. */
static void
send_frame(uint32_t len, unsigned int flags)
{
	struct ibv_wc wc;

	assert_int_equal(ep_post(&a, IBV_WR_SEND, len, 0, len, NULL, 0,
				 flags | IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_SEND);
	assert_int_equal(wc.wr_id, len);
}

/* Expect b's next receive to hold @p len bytes of a's buffer. */
static void
expect_frame(uint32_t len, struct ibv_wc *wc)
{
	assert_int_equal(ep_poll(b.rcq, wc, 1, 2000), 1);
	assert_int_equal(wc->status, IBV_WC_SUCCESS);
	assert_int_equal(wc->opcode, IBV_WC_RECV);
	assert_int_equal(wc->byte_len, len);
	assert_memory_equal(b.buf + RECV_OFF + wc->wr_id * SLOT, a.buf, len);
}

/* A rule for b's raw QP from the specs after @p attr. */
static struct ibv_flow *
rule(struct ibv_flow_attr *attr, unsigned int nspecs, size_t size)
{
	attr->type = IBV_FLOW_ATTR_NORMAL;
	attr->size = (uint16_t)size;
	attr->num_of_specs = (uint8_t)nspecs;
	attr->port = 1;
	return ibv_create_flow(b.qp, attr);
}

struct eth_rule {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_eth eth;
} __attribute__((packed));

static struct ibv_flow *
eth_rule(uint16_t type)
{
	struct eth_rule r;

	memset(&r, 0, sizeof(r));
	r.eth.type = IBV_FLOW_SPEC_ETH;
	r.eth.size = sizeof(r.eth);
	memcpy(r.eth.val.dst_mac, mac_b, 6);
	memset(r.eth.mask.dst_mac, 0xff, 6);
	r.eth.val.ether_type = htobe16(type);
	r.eth.mask.ether_type = 0xffff;
	return rule(&r.attr, 1, sizeof(r));
}

static void
test_raw_eth(void **state)
{
	struct ibv_flow *f;
	struct ibv_wc wc;
	uint32_t len;

	(void)state;
	len = (uint32_t)eth(a.buf, ETYPE);
	fill_pattern(a.buf + len, 500, 1);
	len += 500;
	/* no rule: nothing */
	send_frame(len, 0);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);

	f = eth_rule(ETYPE);
	assert_non_null(f);
	send_frame(len, 0);
	expect_frame(len, &wc);
	assert_false(wc.wc_flags & IBV_WC_IP_CSUM_OK);
	/* inline, and the shortest frame: a bare header */
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 14, 0, 14, NULL, 0,
				 IBV_SEND_SIGNALED | IBV_SEND_INLINE), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 2000), 1);
	expect_frame(14, &wc);
	/* another type is not this rule's */
	eth(a.buf, ETYPE + 1);
	send_frame(len, 0);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);

	assert_int_equal(ibv_destroy_flow(f), 0);
	eth(a.buf, ETYPE);
	send_frame(len, 0);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);
}

/*
 * An IPv4 (or IPv6) frame to b's address with a UDP or TCP segment of
 * @p payload bytes from port 4000 to @p dport, checksums zero. @return
 * its length.
 */
static uint32_t
ip_frame(bool v6, bool tcp, uint16_t dport, uint32_t payload)
{
	uint8_t *f = a.buf;
	size_t l3 = eth(f, v6 ? 0x86dd : 0x0800);
	uint32_t hlen = ip_l4_header(f + l3, v6, tcp,
				     a.gid.raw + (v6 ? 0 : 12),
				     b.gid.raw + (v6 ? 0 : 12), dport, payload);

	fill_pattern(f + l3 + hlen, payload, dport);
	return (uint32_t)(l3 + hlen + payload);
}

/* Check the checksums of the frame at @p f as an independent party. */
static void
check_csums(const uint8_t *f, bool v6, bool tcp)
{
	const uint8_t *l4 = f + 14 + (v6 ? 40 : 20);
	bool was_tcp;

	assert_int_equal(f[14] >> 4, v6 ? 6 : 4);
	assert_int_not_equal(l4[tcp ? 16 : 6] | l4[tcp ? 17 : 7], 0);
	assert_true(frame_csums_ok(f, &was_tcp));
	assert_int_equal(was_tcp, tcp);
}

struct l4_rule {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_ipv4 ip;
	struct ibv_flow_spec_tcp_udp l4;
} __attribute__((packed));

struct l4_rule6 {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_ipv6 ip;
	struct ibv_flow_spec_tcp_udp l4;
} __attribute__((packed));

static struct ibv_flow *
l4_rule(bool v6, bool tcp, uint16_t dport)
{
	if (v6) {
		struct l4_rule6 r;

		memset(&r, 0, sizeof(r));
		r.ip.type = IBV_FLOW_SPEC_IPV6;
		r.ip.size = sizeof(r.ip);
		memcpy(r.ip.val.dst_ip, b.gid.raw, 16);
		memset(r.ip.mask.dst_ip, 0xff, 16);
		r.l4.type = tcp ? IBV_FLOW_SPEC_TCP : IBV_FLOW_SPEC_UDP;
		r.l4.size = sizeof(r.l4);
		r.l4.val.dst_port = htobe16(dport);
		r.l4.mask.dst_port = 0xffff;
		return rule(&r.attr, 2, sizeof(r));
	} else {
		struct l4_rule r;

		memset(&r, 0, sizeof(r));
		r.ip.type = IBV_FLOW_SPEC_IPV4;
		r.ip.size = sizeof(r.ip);
		memcpy(&r.ip.val.dst_ip, b.gid.raw + 12, 4);
		r.ip.mask.dst_ip = 0xffffffff;
		r.l4.type = tcp ? IBV_FLOW_SPEC_TCP : IBV_FLOW_SPEC_UDP;
		r.l4.size = sizeof(r.l4);
		r.l4.val.dst_port = htobe16(dport);
		r.l4.mask.dst_port = 0xffff;
		return rule(&r.attr, 2, sizeof(r));
	}
}

static void
ip_case(bool v6, bool tcp)
{
	struct ibv_flow *other = l4_rule(v6, tcp, 5001);
	struct ibv_flow *f = l4_rule(v6, tcp, 5000);
	uint32_t len;
	struct ibv_wc wc;

	assert_non_null(other);
	assert_non_null(f);
	len = ip_frame(v6, tcp, 5000, 300);
	send_frame(len, IBV_SEND_IP_CSUM);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, len);
	check_csums(b.buf + RECV_OFF + wc.wr_id * SLOT, v6, tcp);
	/* the IPv4 receive side saw them right too */
	assert_int_equal(!!(wc.wc_flags & IBV_WC_IP_CSUM_OK), !v6);
	/* the payload is what was sent */
	assert_memory_equal(b.buf + RECV_OFF + wc.wr_id * SLOT + len - 300,
			    a.buf + len - 300, 300);
	/* a port no rule names: nothing */
	len = ip_frame(v6, tcp, 5002, 300);
	send_frame(len, IBV_SEND_IP_CSUM);
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);
	assert_int_equal(ibv_destroy_flow(f), 0);
	assert_int_equal(ibv_destroy_flow(other), 0);
}

static void
test_raw_ipv4_udp(void **state)
{
	(void)state;
	ip_case(false, false);
}

static void
test_raw_ipv4_tcp(void **state)
{
	(void)state;
	ip_case(false, true);
}

static void
test_raw_ipv6_udp(void **state)
{
	(void)state;
	ip_case(true, false);
}

/*
 * An IPv6 TCP frame whose payload length also counts the IPv6 header
 * (40 bytes more than the frame holds, as rdma-core's tests send them):
 * a rule on the TCP port still takes it, as a NIC's parser does.
 */
static void
test_raw_ipv6_tcp_long_length(void **state)
{
	struct ibv_flow *f;
	struct ibv_wc wc;
	uint32_t len, plen;

	(void)state;
	f = l4_rule(true, true, 5000);
	assert_non_null(f);
	len = ip_frame(true, true, 5000, 300);
	plen = (uint32_t)(a.buf[18] << 8 | a.buf[19]) + 40;
	a.buf[18] = (uint8_t)(plen >> 8);
	a.buf[19] = (uint8_t)plen;
	send_frame(len, 0);
	expect_frame(len, &wc);
	assert_int_equal(ibv_destroy_flow(f), 0);
}

/* A rule on a's own raw QP for frames to @p dst of type ETYPE. */
static struct ibv_flow *
own_rule(struct ibv_qp *qp, const uint8_t *dst)
{
	struct eth_rule r;

	memset(&r, 0, sizeof(r));
	r.attr.type = IBV_FLOW_ATTR_NORMAL;
	r.attr.size = sizeof(r);
	r.attr.num_of_specs = 1;
	r.attr.port = 1;
	r.eth.type = IBV_FLOW_SPEC_ETH;
	r.eth.size = sizeof(r.eth);
	memcpy(r.eth.val.dst_mac, dst, 6);
	memset(r.eth.mask.dst_mac, 0xff, 6);
	r.eth.val.ether_type = htobe16(ETYPE);
	r.eth.mask.ether_type = 0xffff;
	return ibv_create_flow(qp, &r.attr);
}

/*
 * Loopback, as a NIC's switch: a raw QP's frame to its own device's MAC
 * reaches that device's rules and not the wire; one to a group reaches
 * them and the wire (b) both.
 */
static void
test_raw_loopback(void **state)
{
	static const uint8_t group[6] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xa7 };
	struct ibv_flow *fa, *fb, *fg;
	struct ibv_wc wc;
	uint32_t len = 14 + 200;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(ep_post_recv(&a, i, RECV_OFF +
					      (size_t)i * SLOT, SLOT), 0);
	fa = own_rule(a.qp, mac_a);
	assert_non_null(fa);
	eth(a.buf, ETYPE);
	memcpy(a.buf, mac_a, 6);
	fill_pattern(a.buf + 14, 200, 7);
	send_frame(len, 0);
	assert_int_equal(ep_poll(a.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, len);
	assert_memory_equal(a.buf + RECV_OFF + wc.wr_id * SLOT, a.buf, len);

	fg = own_rule(a.qp, group);
	fb = own_rule(b.qp, group);
	assert_non_null(fg);
	assert_non_null(fb);
	memcpy(a.buf, group, 6);
	send_frame(len, 0);
	assert_int_equal(ep_poll(a.rcq, &wc, 1, 2000), 1);
	assert_int_equal(wc.byte_len, len);
	assert_memory_equal(a.buf + RECV_OFF + wc.wr_id * SLOT, a.buf, len);
	expect_frame(len, &wc);
	/* the frame to a's own MAC went nowhere else */
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 200), 0);
	assert_int_equal(ibv_destroy_flow(fa), 0);
	assert_int_equal(ibv_destroy_flow(fg), 0);
	assert_int_equal(ibv_destroy_flow(fb), 0);
}

/* The Toeplitz hash of @p n bytes under @p key, bit by bit. */
static uint32_t
toeplitz(const uint8_t *key, const uint8_t *in, unsigned int n)
{
	uint32_t h = 0, win = (uint32_t)key[0] << 24 | key[1] << 16 |
		key[2] << 8 | key[3];
	unsigned int i, bit;

	for (i = 0; i < n; i++)
		for (bit = 0; bit < 8; bit++) {
			if (in[i] & (0x80 >> bit))
				h ^= win;
			win = win << 1 | ((key[i + 4] >> (7 - bit)) & 1);
		}
	return h;
}

#define RSS_WQS 4

/*
 * Receive side scaling: four work queues on b over two CQs, a table of
 * them, an RSS QP hashing IPv4 source and destination with a key of its
 * own. 32 frames from as many source addresses each arrive once, in the
 * work queue the Toeplitz hash (computed here) names, with its number
 * as qp_num; the objects in use refuse to go (EBUSY); a hash droce has
 * not got is refused.
 */
static void
test_raw_rss(void **state)
{
	static const uint8_t key[40] = {
		0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2,
		0x83, 0x19, 0xdb, 0x1a, 0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9,
		0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7, 0xd9, 0x56,
		0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a,
	};
	struct ibv_wq *wq[RSS_WQS];
	struct ibv_cq *cq[2];
	struct ibv_rwq_ind_table *tbl;
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 2,
						  .ind_tbl = wq };
	struct ibv_qp_init_attr_ex qa;
	struct ibv_wq_attr wa = { .attr_mask = IBV_WQ_ATTR_STATE,
				  .wq_state = IBV_WQS_RDY };
	struct ibv_flow *f;
	struct ibv_qp *rss;
	unsigned int i, j, used = 0;
	uint32_t len;

	(void)state;
	for (i = 0; i < 2; i++) {
		cq[i] = ibv_create_cq(b.ctx, 64, NULL, NULL, 0);
		assert_non_null(cq[i]);
	}
	for (i = 0; i < RSS_WQS; i++) {
		struct ibv_wq_init_attr wia = {
			.wq_type = IBV_WQT_RQ, .max_wr = 32, .max_sge = 1,
			.pd = b.pd, .cq = cq[i % 2],
		};
		struct ibv_sge sge;
		struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

		wq[i] = ibv_create_wq(b.ctx, &wia);
		assert_non_null(wq[i]);
		assert_int_equal(ibv_modify_wq(wq[i], &wa), 0);
		assert_int_equal(wq[i]->state, IBV_WQS_RDY);
		for (j = 0; j < 32; j++) {
			wr.wr_id = i * 100 + j;
			sge.addr = (uintptr_t)(b.buf + RECV_OFF +
					       (size_t)(i * 32 + j) * SLOT);
			sge.length = SLOT;
			sge.lkey = b.mr->lkey;
			assert_int_equal(ibv_post_wq_recv(wq[i], &wr, &bad), 0);
		}
	}
	tbl = ibv_create_rwq_ind_table(b.ctx, &ta);
	assert_non_null(tbl);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		IBV_QP_INIT_ATTR_RX_HASH;
	qa.pd = b.pd;
	qa.rwq_ind_tbl = tbl;
	qa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa.rx_hash_conf.rx_hash_key_len = sizeof(key);
	qa.rx_hash_conf.rx_hash_key = (uint8_t *)(uintptr_t)key;
	qa.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
		IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_IPSEC_SPI;
	errno = 0;
	assert_null(ibv_create_qp_ex(b.ctx, &qa));
	assert_int_equal(errno, EOPNOTSUPP);
	qa.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
		IBV_RX_HASH_DST_IPV4;
	rss = ibv_create_qp_ex(b.ctx, &qa);
	assert_non_null(rss);
	assert_int_equal(ibv_destroy_rwq_ind_table(tbl), EBUSY);
	assert_int_equal(ibv_destroy_wq(wq[0]), EBUSY);
	{
		struct eth_rule r;

		memset(&r, 0, sizeof(r));
		r.attr.type = IBV_FLOW_ATTR_NORMAL;
		r.attr.size = sizeof(r);
		r.attr.num_of_specs = 1;
		r.attr.port = 1;
		r.eth.type = IBV_FLOW_SPEC_ETH;
		r.eth.size = sizeof(r.eth);
		memcpy(r.eth.val.dst_mac, mac_b, 6);
		memset(r.eth.mask.dst_mac, 0xff, 6);
		f = ibv_create_flow(rss, &r.attr);
		assert_non_null(f);
	}

	for (i = 0; i < 32; i++) {
		uint8_t *ip = a.buf + 14;
		struct ibv_wc wc;
		uint32_t want;

		len = ip_frame(false, false, 5000, 100);
		ip[12] = 10;
		ip[13] = (uint8_t)i;
		ip[14] = (uint8_t)(i * 7);
		ip[15] = (uint8_t)(i * 13 + 1);
		want = toeplitz(key, ip + 12, 8) & (RSS_WQS - 1);
		send_frame(len, 0);
		assert_int_equal(ep_poll(cq[want % 2], &wc, 1, 2000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.byte_len, len);
		assert_int_equal(wc.qp_num, wq[want]->wq_num);
		assert_int_equal(wc.wr_id / 100, want);
		assert_memory_equal(b.buf + RECV_OFF +
				    (size_t)(want * 32 + wc.wr_id % 100) *
				    SLOT, a.buf, len);
		used |= 1u << want;
	}
	/* 32 addresses reach more than one work queue */
	assert_true(__builtin_popcount(used) > 1);

	assert_int_equal(ibv_destroy_flow(f), 0);
	assert_int_equal(ibv_destroy_qp(rss), 0);
	assert_int_equal(ibv_destroy_rwq_ind_table(tbl), 0);
	for (i = 0; i < RSS_WQS; i++)
		assert_int_equal(ibv_destroy_wq(wq[i]), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(ibv_destroy_cq(cq[i]), 0);
}

/*
 * A TSO WR of @p payload bytes in segments of @p mss, its header the
 * first bytes of a's buffer (as ip_frame() makes it), the payload after
 * them; b checks every segment.
 */
static void
tso_case(bool v6, uint32_t payload, uint16_t mss, bool qpx)
{
	uint32_t hlen = ip_frame(v6, true, 5000, 0);
	uint32_t nseg = (payload + mss - 1) / mss, i, off = 0;
	struct ibv_flow *f = l4_rule(v6, true, 5000);
	uint8_t *hdr = a.buf, *data = a.buf + 4096;
	const uint8_t *ip0 = hdr + 14;
	const uint8_t *tcp0 = ip0 + (v6 ? 40 : 20);
	uint32_t seq0 = (uint32_t)tcp0[4] << 24 | tcp0[5] << 16 |
		tcp0[6] << 8 | tcp0[7];
	struct ibv_sge sge = { (uintptr_t)data, payload, a.mr->lkey };
	struct droce_counters c0, c1;
	struct ibv_wc wc;

	assert_non_null(f);
	fill_pattern(data, payload, mss);
	assert_int_equal(droce_query_counters(a.ctx, &c0), 0);
	if (qpx) {
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a.qp);

		assert_non_null(x);
		ibv_wr_start(x);
		x->wr_id = 9;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send_tso(x, hdr, (uint16_t)hlen, mss);
		ibv_wr_set_sge(x, sge.lkey, sge.addr, sge.length);
		assert_int_equal(ibv_wr_complete(x), 0);
	} else {
		struct ibv_send_wr wr = {
			.wr_id = 9, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_TSO, .send_flags = IBV_SEND_SIGNALED,
			.tso = { .hdr = hdr, .hdr_sz = (uint16_t)hlen,
				 .mss = mss },
		}, *bad;

		assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	}
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_TSO);
	assert_int_equal(wc.wr_id, 9);
	for (i = 0; i < nseg; i++) {
		uint32_t n = payload - off < mss ? payload - off : mss;
		const uint8_t *s, *ip, *tcp;
		uint32_t seq;

		assert_int_equal(ep_poll(b.rcq, &wc, 1, 5000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.byte_len, hlen + n);
		s = b.buf + RECV_OFF + wc.wr_id * SLOT;
		ip = s + 14;
		tcp = ip + (v6 ? 40 : 20);
		check_csums(s, v6, true);
		if (v6) {
			assert_int_equal(ip[4] << 8 | ip[5], 20 + n);
		} else {
			assert_int_equal(ip[2] << 8 | ip[3], 40 + n);
			assert_int_equal(ip[4] << 8 | ip[5], i);   /* ID */
		}
		seq = (uint32_t)tcp[4] << 24 | tcp[5] << 16 | tcp[6] << 8 |
			tcp[7];
		assert_int_equal(seq, seq0 + off);
		assert_int_equal(tcp[13] & 0x08, i == nseg - 1 ? 0x08 : 0);
		assert_int_equal(tcp[13] & 0x10, 0x10);
		assert_memory_equal(s + hlen, data + off, n);
		off += n;
	}
	assert_int_equal(ep_poll(b.rcq, &wc, 1, 100), 0);
	assert_int_equal(ibv_destroy_flow(f), 0);
	/* net_ring has no TSO: DPDK's GSO library cut TCP over IPv4, droce
	 * the rest */
	assert_int_equal(droce_query_counters(a.ctx, &c1), 0);
	assert_int_equal(c1.tx_gso - c0.tx_gso, !v6 && nseg > 1);
	assert_int_equal(c1.tx_tso_offload, c0.tx_tso_offload);
}

static void
test_raw_tso(void **state)
{
	uint32_t hlen;
	struct ibv_sge sge = { (uintptr_t)a.buf + 4096, 3000, a.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_TSO,
	}, *bad;

	(void)state;
	tso_case(false, 10000, 1000, false);
	tso_case(false, 1000, 1000, false);     /* one segment */
	tso_case(true, 4000, 1400, false);
	/* a header that is not TCP's */
	hlen = ip_frame(false, false, 5000, 0);
	wr.tso.hdr = a.buf;
	wr.tso.hdr_sz = (uint16_t)hlen;
	wr.tso.mss = 1000;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	/* segments larger than the MTU */
	hlen = ip_frame(false, true, 5000, 0);
	wr.tso.hdr_sz = (uint16_t)hlen;
	wr.tso.mss = 1500;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
}

/* The same through the extended post API. */
static void
test_raw_tso_qp_ex(void **state)
{
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = a.scq, .recv_cq = a.rcq,
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
		.pd = a.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO,
		.max_tso_header = 256,
	};
	struct ibv_qp *old = a.qp;

	(void)state;
	a.qp = ibv_create_qp_ex(a.ctx, &qa);
	assert_non_null(a.qp);
	assert_int_equal(ep_raw_up(&a), 0);
	tso_case(false, 5000, 1200, true);
	assert_int_equal(ibv_destroy_qp(a.qp), 0);
	a.qp = old;
}

/* RoCE keeps working under a broad rule; a sniffer sees it. */
static void
test_raw_sniffer_and_roce(void **state)
{
	struct ibv_flow_attr sn = {
		.type = IBV_FLOW_ATTR_SNIFFER, .size = sizeof(sn), .port = 1,
	};
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} __attribute__((packed)) all;
	struct ibv_flow *sniff, *broad;
	struct ep_opts ro;
	struct ep c, d;
	struct ibv_wc wc;
	int got = 0;

	(void)state;
	sniff = ibv_create_flow(b.qp, &sn);
	assert_non_null(sniff);
	/* every frame to b's MAC */
	memset(&all, 0, sizeof(all));
	all.eth.type = IBV_FLOW_SPEC_ETH;
	all.eth.size = sizeof(all.eth);
	memcpy(all.eth.val.dst_mac, mac_b, 6);
	memset(all.eth.mask.dst_mac, 0xff, 6);
	broad = rule(&all.attr, 1, sizeof(all));
	assert_non_null(broad);

	ep_opts_default(&ro);
	assert_int_equal(ep_pair(&c, &d, 1 << 16, &ro), 0);
	fill_pattern(c.buf, 4000, 5);
	assert_int_equal(ep_post(&c, IBV_WR_RDMA_WRITE, 1, 0, 4000, &d, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(c.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(d.buf, c.buf, 4000);
	/* b's raw QP got copies of what reached droce1 (the WRITE's
	 * packets: the sniffer's, and the broad rule does not steal RoCE) */
	while (ep_poll(b.rcq, &wc, 1, 200) == 1) {
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		got++;
	}
	assert_true(got >= 4);
	assert_int_equal(ibv_destroy_flow(sniff), 0);
	assert_int_equal(ibv_destroy_flow(broad), 0);
	ep_close(&c);
	ep_close(&d);
}

static void
test_raw_rules(void **state)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_tcp_udp vx;
	} __attribute__((packed)) bad;
	struct ep_opts ro;
	struct ep c;
	struct ibv_flow *f;
	struct ibv_flow_attr attr = { .size = sizeof(attr), .port = 1 };
	struct ibv_wc wc;

	(void)state;
	/* an unknown spec type */
	memset(&bad, 0, sizeof(bad));
	bad.vx.type = IBV_FLOW_SPEC_VXLAN_TUNNEL;
	bad.vx.size = sizeof(bad.vx);
	assert_null(rule(&bad.attr, 1, sizeof(bad)));
	assert_int_equal(errno, EOPNOTSUPP);
	/* flows are for raw QPs */
	ep_opts_default(&ro);
	assert_int_equal(ep_open(&c, 1, 1 << 16, &ro), 0);
	assert_null(ibv_create_flow(c.qp, &attr));
	assert_int_equal(errno, EINVAL);
	ep_close(&c);
	/* a QP with a rule does not go */
	f = eth_rule(ETYPE);
	assert_non_null(f);
	assert_int_equal(ibv_destroy_qp(b.qp), EBUSY);
	assert_int_equal(ibv_destroy_flow(f), 0);
	/* a frame must have its header, and fit the MTU */
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 1, 0, 13, NULL, 0, 0),
			 EINVAL);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 1, 0, 1500 + 14 + 5, NULL,
				 0, 0), EINVAL);
	/* what a raw QP does not do */
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 1, 0, 64, &b, 0, 0),
			 EINVAL);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 100), 0);
}

static void
test_raw_opcode_column(void **state)
{
	static const enum ibv_wr_opcode refused[] = {
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV,
		IBV_WR_ATOMIC_WRITE, (enum ibv_wr_opcode)77,
	};
	struct ibv_sge sge = { (uintptr_t)a.buf, 64, a.mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	unsigned int i;

	(void)state;
	eth(a.buf, ETYPE);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		memset(&wr, 0, sizeof(wr));
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = refused[i];
		wr.send_flags = IBV_SEND_SIGNALED;
		bad = NULL;
		assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
		assert_ptr_equal(bad, &wr);
	}
	assert_int_equal(ep_poll(a.scq, &wc, 1, 100), 0);
}

/* Drop CAP_NET_RAW from this process (the last test). */
static void
test_raw_needs_net_raw(void **state)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = a.scq, .recv_cq = a.rcq,
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	(void)state;
	assert_int_equal(ep_drop_net_raw(), 0);
	assert_null(ibv_create_qp(a.pd, &qa));
	assert_int_equal(errno, EPERM);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_eth),
		cmocka_unit_test(test_raw_ipv4_udp),
		cmocka_unit_test(test_raw_ipv4_tcp),
		cmocka_unit_test(test_raw_ipv6_udp),
		cmocka_unit_test(test_raw_ipv6_tcp_long_length),
		cmocka_unit_test(test_raw_loopback),
		cmocka_unit_test(test_raw_rss),
		cmocka_unit_test(test_raw_tso),
		cmocka_unit_test(test_raw_tso_qp_ex),
		cmocka_unit_test(test_raw_sniffer_and_roce),
		cmocka_unit_test(test_raw_rules),
		cmocka_unit_test(test_raw_opcode_column),
		cmocka_unit_test(test_raw_needs_net_raw),
	};

	return pair_run_group_tests(tests, &pair);
}
