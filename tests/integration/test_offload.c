/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Checksums a port can fill: droce0 on a net_tap port (which offers IPv4,
 * UDP and TCP checksum offload), a raw QP sending with IBV_SEND_IP_CSUM
 * and TSO. The frames are read back from the tap's kernel side through
 * an AF_PACKET socket: their checksums are right (computed here), and the
 * device's tx_csum_offload counter says the port filled them, not droce;
 * TCP over IPv4 is segmented by the port (which offers TSO: the
 * tx_tso_offload counter), over IPv6 by droce, each segment as it must
 * be.
 * Needs root (a tap, CAP_NET_RAW); runs in a network namespace of its
 * own, so that the tap's name is this run's alone.
 *
 * Usage: test_offload WORKDIR
 */

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <droce.h>

#include "harness.h"

#define IFACE "dtcsum0"
#define BUF (1u << 20)

static struct ep_opts opts;
static struct ep a;
static uint8_t mac[6];
static int sock = -1;

static int
setup(void **state)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct ifreq ifr;
	int fd;

	(void)state;
	ep_opts_default(&opts);
	opts.qp_type = IBV_QPT_RAW_PACKET;
	if (ep_open(&a, 0, BUF, &opts) != 0 || ep_raw_up(&a) != 0)
		return -1;
	if (droce_query_mac(a.ctx, mac) != 0)
		return -1;
	/* the tap's kernel side, up, every frame it gets */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", IFACE);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		return -1;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
		return -1;
	close(fd);
	sock = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(IFACE);
	if (sock < 0 || sll.sll_ifindex == 0 ||
	    bind(sock, (struct sockaddr *)&sll, sizeof(sll)) != 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	if (sock >= 0)
		close(sock);
	ep_close(&a);
	return 0;
}

/* The next frame from droce0 on port @p dport, within 2 s; its length. */
static ssize_t
next_frame(uint8_t *f, size_t cap, uint16_t dport)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };

	while (poll(&p, 1, 2000) == 1) {
		ssize_t n = recv(sock, f, cap, 0);
		uint32_t l4;

		if (n < 14 + 40 + 8 || memcmp(f + 6, mac, 6) != 0)
			continue;
		l4 = ((f[12] << 8 | f[13]) == 0x86dd) ? 14 + 40 :
			14 + (f[14] & 0xfu) * 4u;
		if ((f[l4 + 2] << 8 | f[l4 + 3]) == dport)
			return n;
	}
	return -1;
}

/* A frame to the tap's side: IPv4 or IPv6, UDP or TCP, to @p dport. */
static uint32_t
build(bool v6, bool tcp, uint16_t dport, uint32_t payload)
{
	static const uint8_t dst4[4] = { 10, 0, 78, 2 };
	static const uint8_t dst6[16] = { 0xfe, 0x80, [15] = 1 };
	uint8_t *f = a.buf;
	uint32_t hlen;

	memset(f, 0xff, 6);                     /* broadcast */
	memcpy(f + 6, mac, 6);
	f[12] = v6 ? 0x86 : 0x08;
	f[13] = v6 ? 0xdd : 0x00;
	hlen = ip_l4_header(f + 14, v6, tcp, a.gid.raw + (v6 ? 0 : 12),
			    v6 ? dst6 : dst4, dport, payload);
	fill_pattern(f + 14 + hlen, payload, dport);
	return 14 + hlen + payload;
}

static struct droce_counters
counters(void)
{
	struct droce_counters c;

	assert_int_equal(droce_query_counters(a.ctx, &c), 0);
	return c;
}

static void
test_ip_csum(void **state)
{
	static const struct { bool v6, tcp; } cases[] = {
		{ false, false }, { false, true }, { true, false }, { true, true },
	};
	uint8_t f[2048];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint16_t dport = (uint16_t)(7000 + i);
		uint32_t len = build(cases[i].v6, cases[i].tcp, dport, 300);
		uint64_t before = counters().tx_csum_offload;
		struct ibv_wc wc;
		ssize_t n;
		bool tcp;

		assert_int_equal(ep_post(&a, IBV_WR_SEND, i, 0, len, NULL, 0,
					 IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM),
				 0);
		assert_int_equal(ep_poll(a.scq, &wc, 1, 2000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		n = next_frame(f, sizeof(f), dport);
		assert_int_equal(n, len);
		assert_true(frame_csums_ok(f, &tcp));
		assert_int_equal(tcp, cases[i].tcp);
		/* the port filled them */
		assert_int_equal(counters().tx_csum_offload, before + 1);
	}
}

/*
 * A TSO WR of 5000 bytes in segments of 1200 to @p dport: each segment
 * as the kernel sees it, with its lengths, IPv4 ID, sequence number,
 * PSH on the last only, checksums and payload right.
 */
static void
tso_case(bool v6, uint16_t dport)
{
	const uint32_t payload = 5000, mss = 1200;
	const uint32_t nseg = (payload + mss - 1) / mss;
	uint32_t hlen = build(v6, true, dport, 0), off, i;
	struct ibv_sge sge = { (uintptr_t)a.buf + 65536, payload,
			       a.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_TSO, .send_flags = IBV_SEND_SIGNALED,
		.tso = { .hdr = a.buf, .hdr_sz = (uint16_t)hlen,
			 .mss = (uint16_t)mss },
	}, *bad;
	struct droce_counters c0 = counters(), c1;
	uint8_t f[2048];
	struct ibv_wc wc;

	fill_pattern(a.buf + 65536, payload, 77);
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	for (i = 0, off = 0; i < nseg; i++, off += mss) {
		uint32_t n = payload - off < mss ? payload - off : mss;
		const uint8_t *ip = f + 14, *tcp = ip + (v6 ? 40 : 20);
		bool is_tcp;

		assert_int_equal(next_frame(f, sizeof(f), dport), hlen + n);
		assert_true(frame_csums_ok(f, &is_tcp));
		assert_true(is_tcp);
		if (v6) {
			assert_int_equal(ip[4] << 8 | ip[5], 20 + n);
		} else {
			assert_int_equal(ip[2] << 8 | ip[3], 40 + n);
			assert_int_equal(ip[4] << 8 | ip[5], i);
		}
		assert_int_equal((uint32_t)tcp[4] << 24 | tcp[5] << 16 |
				 tcp[6] << 8 | tcp[7], off);
		assert_int_equal(tcp[13] & 0x08, i == nseg - 1 ? 0x08 : 0);
		assert_memory_equal(f + hlen, a.buf + 65536 + off, n);
	}
	c1 = counters();
	if (v6) {
		/* droce cut them; the port filled each one's checksums */
		assert_int_equal(c1.tx_tso_offload, c0.tx_tso_offload);
		assert_int_equal(c1.tx_csum_offload,
				 c0.tx_csum_offload + nseg);
	} else {
		/* the port cut them (and filled their checksums) */
		assert_int_equal(c1.tx_tso_offload, c0.tx_tso_offload + 1);
		assert_int_equal(c1.tx_csum_offload, c0.tx_csum_offload);
	}
	assert_int_equal(c1.tx_gso, c0.tx_gso);
}

static void
test_tso(void **state)
{
	(void)state;
	tso_case(false, 7100);
	tso_case(true, 7101);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ip_csum),
		cmocka_unit_test(test_tso),
	};
	char path[512];
	FILE *cfg;

	if (argc != 2) {
		fprintf(stderr, "usage: test_offload WORKDIR\n");
		return 2;
	}
	if (unshare(CLONE_NEWNET) != 0) {
		perror("unshare(CLONE_NEWNET)");
		return 1;
	}
	mkdir(argv[1], 0755);
	snprintf(path, sizeof(path), "%s/offload.ini", argv[1]);
	cfg = fopen(path, "w");
	if (cfg == NULL) {
		perror(path);
		return 1;
	}
	fprintf(cfg, "[eal]\nargs = --no-huge -m 512 --no-pci --no-shconf "
		"--vdev=net_tap0,iface=%s\n"
		"[engine]\nidle_sleep_us = 20\nlink_wait_s = 5\n"
		"[device droce0]\nport = net_tap0\n"
		"mac = 02:d7:0c:e0:4e:01\nipv4 = 10.0.78.1/24\n", IFACE);
	fclose(cfg);
	setenv("DROCE_CONFIG", path, 1);
	return cmocka_run_group_tests(tests, setup, teardown);
}
