/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Frames: every opcode, over IPv4 and IPv6, tagged or not, with every pad
 * count, builds and parses back to the same view and the same bytes; each
 * kind of bad frame is refused with its own error and never read beyond
 * its end; the builder refuses what it cannot write.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_ip.h>

#include "droce_wire.h"

#define FRAME_CAP (DROCE_MAX_HDR_LEN + DROCE_MAX_MTU + 64)

static uint8_t payload[DROCE_MAX_MTU];
static uint8_t frame[FRAME_CAP];
static uint8_t again[FRAME_CAP];

static void
make_pkt(struct droce_wire_pkt *p, uint8_t opcode, int ip_version, bool vlan,
	 uint32_t plen)
{
	static const struct rte_ether_addr a = { { 2, 0, 0, 0, 0, 1 } };
	static const struct rte_ether_addr b = { { 2, 0, 0, 0, 0, 2 } };
	uint32_t i;

	memset(p, 0, sizeof(*p));
	p->dst_mac = b;
	p->src_mac = a;
	p->has_vlan = vlan;
	p->vlan_tci = 0x2064;
	p->ip_version = (uint8_t)ip_version;
	p->tos = 0x88;
	p->ttl = 64;
	p->ip_id = 0x1234;
	p->ip_frag = RTE_IPV4_HDR_DF_FLAG;
	p->flow_label = 0xabcde;
	if (ip_version == 4) {
		droce_gid_from_ipv4(p->src_gid, rte_cpu_to_be_32(0xc0a80101));
		droce_gid_from_ipv4(p->dst_gid, rte_cpu_to_be_32(0xc0a80102));
	} else {
		for (i = 0; i < 16; i++) {
			p->src_gid[i] = (uint8_t)(0xf0 + i);
			p->dst_gid[i] = (uint8_t)(0x10 + i);
		}
	}
	p->udp_sport = droce_udp_sport(0x11, 0x12);
	p->udp_dport = DROCE_UDP_PORT;
	p->bth.opcode = opcode;
	p->bth.se = 1;
	p->bth.pkey = 0xffff;
	p->bth.becn = 1;
	p->bth.dqpn = 0xabcdef;
	p->bth.ackreq = 1;
	p->bth.psn = 0xfffffe;
	p->xrceth.xrcsrq = 0x123456;
	p->deth.qkey = 0x80010000;
	p->deth.srcqp = 0x11;
	p->feth.sel = 1;
	p->feth.plt = 2;
	p->reth.va = 0x00007f0011223344ull;
	p->reth.rkey = 0xdeadbeef;
	p->reth.dlen = 5000;
	p->aeth.syndrome = 0x1f;
	p->aeth.msn = 0x10203;
	p->atomiceth.va = 0x1000;
	p->atomiceth.rkey = 0x77;
	p->atomiceth.swap_add = 0x0102030405060708ull;
	p->atomiceth.compare = 0x1112131415161718ull;
	p->atomicacketh.orig = 0xa1a2a3a4a5a6a7a8ull;
	p->immdt = 0xcafef00d;
	p->ieth_rkey = 0x4321;
	for (i = 0; i < DROCE_CNP_RESV_LEN; i++)
		p->cnp_resv[i] = 0;
	for (i = 0; i < plen; i++)
		payload[i] = (uint8_t)(i * 7 + opcode);
	p->payload = payload;
	p->payload_len = plen;
}

/* The fields the builder takes from the view must come back from parse. */
static void
assert_same_view(const struct droce_wire_pkt *a, const struct droce_wire_pkt *b)
{
	uint32_t f = b->op->flags;

	assert_memory_equal(&a->dst_mac, &b->dst_mac, RTE_ETHER_ADDR_LEN);
	assert_memory_equal(&a->src_mac, &b->src_mac, RTE_ETHER_ADDR_LEN);
	assert_int_equal(a->has_vlan, b->has_vlan);
	if (a->has_vlan)
		assert_int_equal(a->vlan_tci, b->vlan_tci);
	assert_int_equal(a->ip_version, b->ip_version);
	assert_int_equal(a->tos, b->tos);
	assert_int_equal(a->ttl, b->ttl);
	if (a->ip_version == 4) {
		assert_int_equal(a->ip_id, b->ip_id);
		assert_int_equal(a->ip_frag, b->ip_frag);
		assert_int_equal(a->udp_cksum, b->udp_cksum);
	} else {
		assert_int_equal(a->flow_label, b->flow_label);
	}
	assert_memory_equal(a->src_gid, b->src_gid, 16);
	assert_memory_equal(a->dst_gid, b->dst_gid, 16);
	assert_int_equal(a->udp_sport, b->udp_sport);
	assert_int_equal(a->udp_dport, b->udp_dport);
	assert_int_equal(a->bth.opcode, b->bth.opcode);
	assert_int_equal(a->bth.se, b->bth.se);
	assert_int_equal(a->bth.m, b->bth.m);
	assert_int_equal((4 - (a->payload_len & 3)) & 3, b->bth.padcnt);
	assert_int_equal(a->bth.tver, b->bth.tver);
	assert_int_equal(a->bth.pkey, b->bth.pkey);
	assert_int_equal(a->bth.fecn, b->bth.fecn);
	assert_int_equal(a->bth.becn, b->bth.becn);
	assert_int_equal(a->bth.dqpn, b->bth.dqpn);
	assert_int_equal(a->bth.ackreq, b->bth.ackreq);
	assert_int_equal(a->bth.psn, b->bth.psn);
	if (f & DROCE_OPF_XRCETH)
		assert_int_equal(a->xrceth.xrcsrq, b->xrceth.xrcsrq);
	if (f & DROCE_OPF_DETH) {
		assert_int_equal(a->deth.qkey, b->deth.qkey);
		assert_int_equal(a->deth.srcqp, b->deth.srcqp);
	}
	if (f & DROCE_OPF_FETH) {
		assert_int_equal(a->feth.sel, b->feth.sel);
		assert_int_equal(a->feth.plt, b->feth.plt);
	}
	if (f & DROCE_OPF_RETH) {
		assert_int_equal(a->reth.va, b->reth.va);
		assert_int_equal(a->reth.rkey, b->reth.rkey);
		assert_int_equal(a->reth.dlen, b->reth.dlen);
	}
	if (f & DROCE_OPF_AETH) {
		assert_int_equal(a->aeth.syndrome, b->aeth.syndrome);
		assert_int_equal(a->aeth.msn, b->aeth.msn);
	}
	if (f & DROCE_OPF_ATOMICETH) {
		assert_int_equal(a->atomiceth.va, b->atomiceth.va);
		assert_int_equal(a->atomiceth.rkey, b->atomiceth.rkey);
		assert_int_equal(a->atomiceth.swap_add, b->atomiceth.swap_add);
		assert_int_equal(a->atomiceth.compare, b->atomiceth.compare);
	}
	if (f & DROCE_OPF_ATOMICACKETH)
		assert_int_equal(a->atomicacketh.orig, b->atomicacketh.orig);
	if (f & DROCE_OPF_IMMDT)
		assert_int_equal(a->immdt, b->immdt);
	if (f & DROCE_OPF_IETH)
		assert_int_equal(a->ieth_rkey, b->ieth_rkey);
	assert_int_equal(a->payload_len, b->payload_len);
	if (a->payload_len != 0)
		assert_memory_equal(a->payload, b->payload, a->payload_len);
}

/* The UDP checksum of an IPv6 frame is the one computed afresh. */
static void
assert_ipv6_udp_cksum(uint8_t *ip, uint8_t *udp)
{
	uint16_t stored, fresh;

	memcpy(&stored, udp + 6, 2);
	memset(udp + 6, 0, 2);
	fresh = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip, udp);
	memcpy(udp + 6, &stored, 2);
	assert_int_not_equal(stored, 0);
	assert_int_equal(stored, fresh);
}

static void
round_trip(uint8_t opcode, int ipv, bool vlan, uint32_t plen)
{
	struct droce_wire_pkt in, out;
	int len;

	make_pkt(&in, opcode, ipv, vlan, plen);
	len = droce_wire_build(frame, sizeof(frame), &in);
	assert_true(len > 0);
	assert_int_equal(len, droce_wire_frame_len(&in));
	assert_int_equal(droce_wire_parse(frame, (uint32_t)len, 0, &out), 0);
	assert_true(out.icrc_ok);
	assert_int_equal(out.frame_len, len);
	assert_int_equal(out.l3_off, vlan ? 18 : 14);
	assert_int_equal(out.bth_off, out.l3_off + (ipv == 4 ? 20 : 40) + 8);
	assert_ptr_equal(out.payload, frame + out.bth_off + out.op->hdr_len);
	assert_same_view(&in, &out);
	/* IPv4 header checksum and IPv6 UDP checksum are valid */
	if (ipv == 4)
		assert_int_equal(rte_ipv4_cksum((const struct rte_ipv4_hdr *)
						(frame + out.l3_off)), 0);
	else
		assert_ipv6_udp_cksum(frame + out.l3_off, frame + out.l4_off);
	/* pad bytes are zero */
	if (out.bth.padcnt != 0) {
		static const uint8_t zero[3];

		assert_memory_equal(out.payload + plen, zero, out.bth.padcnt);
	}
	/* building the parsed view gives the same bytes */
	assert_int_equal(droce_wire_build(again, sizeof(again), &out), len);
	assert_memory_equal(frame, again, (size_t)len);
}

static void
test_round_trip_every_opcode(void **state)
{
	unsigned int op, ipv, vlan, plen;

	(void)state;
	for (op = 0; op < 256; op++) {
		const struct droce_opcode_info *info =
			droce_opcode_get((uint8_t)op);

		if (info == NULL)
			continue;
		for (ipv = 4; ipv <= 6; ipv += 2)
			for (vlan = 0; vlan < 2; vlan++) {
				if (!(info->flags & DROCE_OPF_PAYLOAD)) {
					round_trip((uint8_t)op, (int)ipv, vlan, 0);
					continue;
				}
				for (plen = 0; plen <= 9; plen++)
					round_trip((uint8_t)op, (int)ipv, vlan,
						   plen);
				round_trip((uint8_t)op, (int)ipv, vlan, 1024);
				round_trip((uint8_t)op, (int)ipv, vlan, 4093);
				round_trip((uint8_t)op, (int)ipv, vlan, 4096);
			}
	}
}

static void
test_round_trip_every_length(void **state)
{
	uint32_t plen;

	(void)state;
	for (plen = 0; plen <= DROCE_MAX_MTU; plen++) {
		round_trip(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, false, plen);
		round_trip(DROCE_TR_UD | DROCE_OP_SEND_ONLY_IMM, 6, false, plen);
	}
}

/* A frame shortened anywhere is refused as truncated, never read past. */
static void
test_truncated(void **state)
{
	struct droce_wire_pkt p, out;
	int len, ipv;
	uint32_t cut;

	(void)state;
	for (ipv = 4; ipv <= 6; ipv += 2) {
		make_pkt(&p, DROCE_TR_RC | DROCE_OP_WRITE_FIRST, ipv, true, 33);
		len = droce_wire_build(frame, sizeof(frame), &p);
		assert_true(len > 0);
		for (cut = 0; cut < (uint32_t)len; cut++) {
			/* a heap copy of exactly cut bytes: ASan sees overreads */
			uint8_t *copy = malloc(cut + 1);

			assert_non_null(copy);
			memcpy(copy, frame, cut);
			assert_int_equal(droce_wire_parse(copy, cut, 0, &out),
					 -DROCE_WIRE_ETRUNC);
			free(copy);
		}
	}
}

/* Rewrite the IPv4 header checksum after a test edits the header. */
static void
fix_ipv4_cksum(uint8_t *ip)
{
	uint16_t c;

	ip[10] = 0;
	ip[11] = 0;
	c = rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip);
	memcpy(ip + 10, &c, 2);
}

static int
build(uint8_t opcode, int ipv, uint32_t plen, struct droce_wire_pkt *p)
{
	int len;

	make_pkt(p, opcode, ipv, false, plen);
	len = droce_wire_build(frame, sizeof(frame), p);
	assert_true(len > 0);
	return len;
}

static void
test_errors(void **state)
{
	struct droce_wire_pkt p, out;
	uint8_t *ip = frame + 14, *udp = frame + 34, *bth = frame + 42;
	int len;

	(void)state;

	/* bad BTH TVer */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	bth[1] |= 0x01;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_EVERSION);

	/* IP version disagreeing with the Ethernet type */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	ip[0] = 0x65;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_EVERSION);

	/* undefined opcodes: reserved, RD, unknown transport */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	bth[0] = 0x15;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_EOPCODE);
	bth[0] = 0x44;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_EOPCODE);
	bth[0] = 0xe0;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_EOPCODE);

	/* payload after an opcode that has none (an ACK with 8 more bytes) */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	bth[0] = DROCE_TR_RC | DROCE_OP_ACKNOWLEDGE;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ELENGTH);

	/* headers longer than the packet: a CmpSwap without room for its AtomicETH */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 0, &p);
	bth[0] = DROCE_TR_RC | DROCE_OP_COMPARE_SWAP;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ELENGTH);

	/* pad count larger than what follows the headers */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 0, &p);
	bth[1] |= 0x30;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ELENGTH);

	/* payload and pad not a whole number of 4-byte words */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	droce_put_be16(ip + 2, droce_get_be16(ip + 2) + 1);
	droce_put_be16(udp + 4, droce_get_be16(udp + 4) + 1);
	fix_ipv4_cksum(ip);
	assert_int_equal(droce_wire_parse(frame, len + 1, 0, &out),
			 -DROCE_WIRE_ELENGTH);

	/* UDP length disagreeing with the IP length */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	droce_put_be16(udp + 4, droce_get_be16(udp + 4) - 4);
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ELENGTH);
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 6, 8, &p);
	droce_put_be16(frame + 54 + 4, droce_get_be16(frame + 54 + 4) + 4);
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ELENGTH);

	/* UDP too short for a BTH and ICRC */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 0, &p);
	droce_put_be16(ip + 2, 20 + 8 + 12);
	droce_put_be16(udp + 4, 8 + 12);
	fix_ipv4_cksum(ip);
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ELENGTH);

	/* IPv4 header length below 20 */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	ip[0] = 0x44;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ELENGTH);

	/* IPv4 header checksum: refused, unless asked not to check */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	ip[10] ^= 0x01;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_EIPCSUM);
	assert_true(out.icrc_ok); /* the checksum is outside the ICRC */
	assert_int_equal(droce_wire_parse(frame, len, DROCE_WIRE_NO_IPCSUM,
					  &out), 0);

	/* ICRC: refused with the view complete, unless asked not to check */
	len = build(DROCE_TR_RC | DROCE_OP_WRITE_ONLY, 4, 100, &p);
	frame[len - 60] ^= 0x80;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_EICRC);
	assert_false(out.icrc_ok);
	assert_int_equal(out.reth.rkey, 0xdeadbeef);
	assert_int_equal(out.payload_len, 100);
	assert_int_equal(droce_wire_parse(frame, len, DROCE_WIRE_NO_ICRC, &out),
			 0);
	assert_false(out.icrc_ok);
	len = build(DROCE_TR_RC | DROCE_OP_WRITE_ONLY, 6, 100, &p);
	frame[len - 1] ^= 0x01;
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_EICRC);
}

static void
test_not_roce(void **state)
{
	struct droce_wire_pkt p, out;
	uint8_t *ip = frame + 14, *udp = frame + 34;
	int len;

	(void)state;

	/* ARP */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	droce_put_be16(frame + 12, RTE_ETHER_TYPE_ARP);
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ENOTROCE);

	/* TCP */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	ip[9] = 6;
	fix_ipv4_cksum(ip);
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ENOTROCE);

	/* other UDP port */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	droce_put_be16(udp + 2, 4792);
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ENOTROCE);

	/* IPv4 fragments: more-fragments set, or an offset */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	droce_put_be16(ip + 6, RTE_IPV4_HDR_MF_FLAG);
	fix_ipv4_cksum(ip);
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ENOTROCE);
	droce_put_be16(ip + 6, 8);
	fix_ipv4_cksum(ip);
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ENOTROCE);

	/* IPv6 with an extension header */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 6, 8, &p);
	ip[6] = 0; /* hop-by-hop */
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ENOTROCE);

	/* QinQ outer tag */
	len = build(DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, 8, &p);
	droce_put_be16(frame + 12, RTE_ETHER_TYPE_QINQ);
	assert_int_equal(droce_wire_parse(frame, len, 0, &out),
			 -DROCE_WIRE_ENOTROCE);
}

/* Ethernet pads short frames to 60 bytes: the pad is not the ICRC. */
static void
test_ethernet_padding(void **state)
{
	struct droce_wire_pkt p, out;
	int len;

	(void)state;
	make_pkt(&p, DROCE_TR_RC | DROCE_OP_ACKNOWLEDGE, 4, false, 0);
	p.ttl = 1;
	len = droce_wire_build(frame, sizeof(frame), &p);
	assert_int_equal(len, 14 + 20 + 8 + 12 + 4 + 4);
	memset(frame + len, 0xee, 8);
	assert_int_equal(droce_wire_parse(frame, (uint32_t)len + 8, 0, &out), 0);
	assert_int_equal(out.frame_len, len);
	assert_int_equal(out.aeth.msn, 0x10203);
}

static void
test_build_refusals(void **state)
{
	struct droce_wire_pkt p;
	int len;

	(void)state;
	make_pkt(&p, DROCE_TR_RC | DROCE_OP_SEND_ONLY, 4, false, 64);
	len = droce_wire_build(frame, sizeof(frame), &p);
	assert_true(len > 0);
	assert_int_equal(droce_wire_build(frame, (uint32_t)len - 1, &p), -ENOSPC);
	assert_int_equal(droce_wire_build(frame, (uint32_t)len, &p), len);

	p.bth.opcode = 0x15;
	assert_int_equal(droce_wire_build(frame, sizeof(frame), &p), -EINVAL);
	assert_int_equal(droce_wire_frame_len(&p), 0);

	make_pkt(&p, DROCE_TR_RC | DROCE_OP_ACKNOWLEDGE, 4, false, 0);
	p.payload_len = 4;
	assert_int_equal(droce_wire_build(frame, sizeof(frame), &p), -EINVAL);

	make_pkt(&p, DROCE_TR_RC | DROCE_OP_SEND_ONLY, 5, false, 4);
	assert_int_equal(droce_wire_build(frame, sizeof(frame), &p), -EINVAL);
}

static void
test_strerror(void **state)
{
	(void)state;
	assert_string_equal(droce_wire_strerror(0), "ok");
	assert_string_equal(droce_wire_strerror(-DROCE_WIRE_ETRUNC),
			    "truncated");
	assert_string_equal(droce_wire_strerror(-DROCE_WIRE_EICRC), "bad ICRC");
	assert_string_equal(droce_wire_strerror(-DROCE_WIRE_ENOTROCE),
			    "not RoCEv2");
	assert_string_equal(droce_wire_strerror(-99), "unknown error");
}

static void
test_gid_and_sport(void **state)
{
	uint8_t gid[16];
	uint32_t q;
	uint16_t first;

	(void)state;
	droce_gid_from_ipv4(gid, rte_cpu_to_be_32(0xc0a84d0b));
	assert_true(droce_gid_is_ipv4(gid));
	assert_int_equal(gid[12], 192);
	assert_int_equal(gid[15], 11);
	gid[10] = 0;
	assert_false(droce_gid_is_ipv4(gid));

	/* source ports stay in 0xc000..0xffff and vary with the QPs */
	first = droce_udp_sport(0x11, 0x11);
	for (q = 0; q < 4096; q++)
		assert_true(droce_udp_sport(q, 0x11) >= 0xc000);
	assert_int_not_equal(first, droce_udp_sport(0x12, 0x11));
	assert_int_equal(first, droce_udp_sport(0x11, 0x11));
}

static void
test_pkey(void **state)
{
	uint8_t bth[DROCE_BTH_LEN];
	struct droce_bth h = { .opcode = 0x04, .pkey = 0x8123 };

	(void)state;
	droce_bth_encode(bth, &h);
	assert_int_equal(droce_bth_pkey(bth), 0x8123);
	/* the same partition, one of the two a full member */
	assert_true(droce_pkey_match(0xffff, 0xffff));
	assert_true(droce_pkey_match(0x7fff, 0xffff));
	assert_true(droce_pkey_match(0xffff, 0x7fff));
	assert_false(droce_pkey_match(0x7fff, 0x7fff));
	assert_false(droce_pkey_match(0x8123, 0xffff));
	assert_false(droce_pkey_match(0x0000, 0xffff));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_every_opcode),
		cmocka_unit_test(test_round_trip_every_length),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_not_roce),
		cmocka_unit_test(test_ethernet_padding),
		cmocka_unit_test(test_build_refusals),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_gid_and_sport),
		cmocka_unit_test(test_pkey),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
