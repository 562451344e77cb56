/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The ICRC: known answers from frames Linux soft-RoCE sent, the masked
 * fields (and only those) left out, IPv6, and the mbuf-chain variant
 * agreeing with the contiguous one for every way of splitting a frame.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rte_mbuf.h>

#include "droce_wire.h"

/* rc_atomic_cas.pcap frame 1: RC CmpSwap from 192.168.77.12 (rdma_rxe) */
static const uint8_t cmp_swap[] = {
	0x52, 0x54, 0x00, 0x77, 0x00, 0x11, 0x52, 0x54, 0x00, 0x77, 0x00, 0x12,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x48, 0x5c, 0xf6, 0x40, 0x00, 0x40, 0x11,
	0xc2, 0x46, 0xc0, 0xa8, 0x4d, 0x0c, 0xc0, 0xa8, 0x4d, 0x0b, 0xc1, 0x21,
	0x12, 0xb7, 0x00, 0x34, 0x00, 0x00, 0x13, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x11, 0x80, 0x59, 0x4e, 0xe6, 0x00, 0x00, 0x55, 0xc4, 0xad, 0xbe,
	0x20, 0x00, 0x00, 0x00, 0x02, 0x53, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe2, 0x0a,
	0x4e, 0x83,
};

/* rc_send.pcap frame 1: RC SEND Only of 64 bytes (rdma_rxe) */
static const uint8_t send_only[] = {
	0x52, 0x54, 0x00, 0x77, 0x00, 0x11, 0x52, 0x54, 0x00, 0x77, 0x00, 0x12,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x6c, 0xe3, 0xfe, 0x40, 0x00, 0x40, 0x11,
	0x3b, 0x1a, 0xc0, 0xa8, 0x4d, 0x0c, 0xc0, 0xa8, 0x4d, 0x0b, 0xc1, 0x21,
	0x12, 0xb7, 0x00, 0x58, 0x00, 0x00, 0x04, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x11, 0x80, 0x8a, 0x32, 0xca, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x01, 0x0e,
	0x23, 0x38,
};

#define L3 14

static void
test_known_answers(void **state)
{
	(void)state;
	/* stored least significant byte first: e2 0a 4e 83 is 0x834e0ae2 */
	assert_int_equal(droce_icrc_calc(cmp_swap + L3,
					 sizeof(cmp_swap) - L3 - 4), 0x834e0ae2);
	assert_int_equal(droce_icrc_get(cmp_swap + sizeof(cmp_swap) - 4),
			 0x834e0ae2);
	assert_true(droce_icrc_verify(cmp_swap + L3, sizeof(cmp_swap) - L3));
	assert_true(droce_icrc_verify(send_only + L3, sizeof(send_only) - L3));
	assert_int_equal(droce_icrc_hdr_len(send_only + L3), 40);
}

/* Every bit of the IPv4 frame: masked ones keep the ICRC, others change it. */
static void
test_masked_fields_ipv4(void **state)
{
	uint8_t f[sizeof(send_only)];
	uint32_t len = sizeof(f) - L3, byte;
	int bit;

	(void)state;
	for (byte = L3; byte < sizeof(f); byte++) {
		uint32_t rel = byte - L3;
		bool masked = rel == 1 || rel == 8 || rel == 10 || rel == 11 ||
			rel == 26 || rel == 27 || rel == 32;

		for (bit = 0; bit < 8; bit++) {
			memcpy(f, send_only, sizeof(f));
			f[byte] ^= (uint8_t)(1u << bit);
			assert_int_equal(droce_icrc_verify(f + L3, len), masked);
			/* read in place, without a copy */
			assert_int_equal(droce_icrc_verify_frame(f + L3, len),
					 masked);
		}
	}
}

/* The same for an IPv6 frame built here. */
static void
test_masked_fields_ipv6(void **state)
{
	static uint8_t payload[37];
	struct droce_wire_pkt p;
	uint8_t f[256], g[256];
	uint32_t byte;
	int len, bit;

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(payload, 0x5a, sizeof(payload));
	p.ip_version = 6;
	p.tos = 0x12;
	p.flow_label = 0x54321;
	p.ttl = 255;
	p.src_gid[0] = 0xfe;
	p.dst_gid[15] = 0x01;
	p.udp_sport = 0xc123;
	p.udp_dport = DROCE_UDP_PORT;
	p.bth.opcode = DROCE_TR_RC | DROCE_OP_SEND_ONLY_IMM;
	p.bth.pkey = 0xffff;
	p.bth.dqpn = 0x11;
	p.bth.psn = 0x123;
	p.immdt = 0x01020304;
	p.payload = payload;
	p.payload_len = sizeof(payload);
	len = droce_wire_build(f, sizeof(f), &p);
	assert_true(len > 0);
	for (byte = L3; byte < (uint32_t)len; byte++) {
		uint32_t rel = byte - L3;
		bool masked = rel <= 3 || rel == 7 || rel == 46 || rel == 47 ||
			rel == 52;

		for (bit = 0; bit < 8; bit++) {
			memcpy(g, f, (size_t)len);
			g[byte] ^= (uint8_t)(1u << bit);
			/* the version nibble is covered */
			if (rel == 0 && bit >= 4)
				masked = false;
			else if (rel == 0)
				masked = true;
			assert_int_equal(droce_icrc_verify(g + L3,
							   (uint32_t)len - L3),
					 masked);
			assert_int_equal(droce_icrc_verify_frame(g + L3,
							(uint32_t)len - L3),
					 masked);
		}
	}
}

/* Point a stack mbuf at part of a buffer. */
static void
seg_init(struct rte_mbuf *m, uint8_t *data, uint16_t len, uint16_t headroom)
{
	memset(m, 0, sizeof(*m));
	m->buf_addr = data - headroom;
	m->data_off = headroom;
	m->data_len = len;
	m->buf_len = (uint16_t)(len + headroom);
	m->nb_segs = 1;
}

static void
test_mbuf_chain(void **state)
{
	static uint8_t frame[2048];
	static uint8_t payload[1500];
	struct rte_mbuf segs[3];
	struct droce_wire_pkt p;
	uint32_t a, b, icrc, len, i;
	int n;

	(void)state;
	memset(&p, 0, sizeof(p));
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13);
	p.ip_version = 4;
	p.ttl = 64;
	droce_gid_from_ipv4(p.src_gid, rte_cpu_to_be_32(0x0a000001));
	droce_gid_from_ipv4(p.dst_gid, rte_cpu_to_be_32(0x0a000002));
	p.udp_sport = 0xc000;
	p.udp_dport = DROCE_UDP_PORT;
	p.bth.opcode = DROCE_TR_RC | DROCE_OP_WRITE_ONLY;
	p.bth.psn = 7;
	p.reth.dlen = sizeof(payload);
	p.payload = payload;
	p.payload_len = sizeof(payload);
	n = droce_wire_build(frame, sizeof(frame), &p);
	assert_true(n > 0);
	len = (uint32_t)n - L3 - DROCE_ICRC_LEN;
	icrc = droce_icrc_get(frame + n - DROCE_ICRC_LEN);
	assert_int_equal(droce_icrc_calc(frame + L3, len), icrc);

	/* one segment, then every split into two and a sample into three;
	 * the first segment always holds Ethernet + IP + UDP + BTH */
	for (a = 54; a <= (uint32_t)n; a += 1) {
		seg_init(&segs[0], frame, (uint16_t)a, 0);
		seg_init(&segs[1], frame + a, (uint16_t)(n - a), 0);
		segs[0].next = a < (uint32_t)n ? &segs[1] : NULL;
		assert_int_equal(droce_icrc_calc_mbuf(&segs[0], L3, len), icrc);
		for (b = a + 1; b < (uint32_t)n && (a % 97) == 0; b += 5) {
			seg_init(&segs[1], frame + a, (uint16_t)(b - a), 0);
			seg_init(&segs[2], frame + b, (uint16_t)(n - b), 0);
			segs[1].next = &segs[2];
			assert_int_equal(droce_icrc_calc_mbuf(&segs[0], L3, len),
					 icrc);
		}
	}
	/* a chain shorter than asked */
	seg_init(&segs[0], frame, 100, 0);
	assert_int_equal(droce_icrc_calc_mbuf(&segs[0], L3, len), 0);
}

/*
 * The ICRC read from the frame equals the copying one and leaves every
 * byte as it was: IPv4 with and without options, IPv6, every length
 * around the 64-byte first block.
 */
static void
test_frame(void **state)
{
	static uint8_t payload[4096];
	static uint8_t frame[4096 + 256], before[4096 + 256];
	struct droce_wire_pkt p;
	uint32_t plen;
	int ipv, len;

	(void)state;
	for (plen = 0; plen < sizeof(payload); plen++)
		payload[plen] = (uint8_t)(plen * 31 + 7);
	for (ipv = 4; ipv <= 6; ipv += 2) {
		for (plen = 0; plen <= 4096; plen += plen < 300 ? 1 : 97) {
			memset(&p, 0, sizeof(p));
			p.ip_version = (uint8_t)ipv;
			p.tos = 0x5c;
			p.ttl = 33;
			p.flow_label = 0x12345;
			p.udp_sport = 0xc001;
			p.udp_dport = DROCE_UDP_PORT;
			p.bth.opcode = DROCE_TR_RC | DROCE_OP_WRITE_ONLY;
			p.bth.fecn = 1;
			p.bth.psn = plen;
			p.payload = payload;
			p.payload_len = plen;
			len = droce_wire_build(frame, sizeof(frame), &p);
			assert_true(len > 0);
			memcpy(before, frame, (size_t)len);
			assert_int_equal(droce_icrc_calc_frame(frame + L3,
					(uint32_t)len - L3 - DROCE_ICRC_LEN),
					 droce_icrc_get(frame + len -
							DROCE_ICRC_LEN));
			assert_memory_equal(frame, before, (size_t)len);
			if (ipv == 6)
				continue;
			/* IPv4 with 8 bytes of options (NOPs) after the
			 * header: the copying ICRC is the reference */
			memmove(frame + L3 + 28, frame + L3 + 20,
				(size_t)len - L3 - 20);
			memset(frame + L3 + 20, 1, 8);
			frame[L3] = 0x47;
			len += 8;
			memcpy(before, frame, (size_t)len);
			assert_int_equal(droce_icrc_calc_frame(frame + L3,
					(uint32_t)len - L3 - DROCE_ICRC_LEN),
					 droce_icrc_calc(frame + L3,
					(uint32_t)len - L3 - DROCE_ICRC_LEN));
			assert_memory_equal(frame, before, (size_t)len);
		}
	}
	/* IPv4 packets whose ICRC input is under 64 bytes (an ACK, a short
	 * SEND), read in place too */
	for (plen = 0; plen <= 40; plen++) {
		memset(&p, 0, sizeof(p));
		p.ip_version = 4;
		p.tos = 0x5c;
		p.ttl = 33;
		p.udp_sport = 0xc001;
		p.udp_dport = DROCE_UDP_PORT;
		p.bth.opcode = DROCE_TR_RC | (plen % 2 ? DROCE_OP_SEND_ONLY :
					      DROCE_OP_ACKNOWLEDGE);
		p.bth.psn = plen;
		p.aeth.syndrome = 0x1f;
		p.aeth.msn = plen;
		p.payload = payload;
		p.payload_len = plen % 2 ? plen : 0;
		len = droce_wire_build(frame, sizeof(frame), &p);
		assert_true(len > 0);
		memcpy(before, frame, (size_t)len);
		assert_int_equal(droce_icrc_calc_frame(frame + L3,
				(uint32_t)len - L3 - DROCE_ICRC_LEN),
				 droce_icrc_get(frame + len - DROCE_ICRC_LEN));
		assert_memory_equal(frame, before, (size_t)len);
	}
	/* the golden frame too */
	memcpy(frame, send_only, sizeof(send_only));
	assert_int_equal(droce_icrc_calc_frame(frame + L3,
			 sizeof(send_only) - L3 - DROCE_ICRC_LEN),
			 droce_icrc_get(send_only + sizeof(send_only) - 4));
	assert_memory_equal(frame, send_only, sizeof(send_only));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_masked_fields_ipv4),
		cmocka_unit_test(test_masked_fields_ipv6),
		cmocka_unit_test(test_mbuf_chain),
		cmocka_unit_test(test_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
