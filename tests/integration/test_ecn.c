/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ECN and CNPs (DCQCN), with both ports behind net_fault marking
 * Congestion Experienced on every ECN-capable frame they receive
 * (test_ecn WORKDIR ce=1,dir=rx). A 256 KiB WRITE arrives whole; each
 * side's QP, its packets marked, sends its peer CNPs, at most one a
 * cnp_interval_us (50 us), each received; each CNP cuts the sender's
 * rate (the reaction point), never below the configured floor, and the
 * rate holds its packets back. Both devices' frames are mirrored to pcap
 * and read back: droce0's RC packets go ECT(0), the CNPs droce1 sent are
 * opcode 0x81 with BECN set, sixteen zero bytes, a good ICRC, droce0's
 * QP as destination and no ECT, one for each counted; what droce1
 * received came marked CE. Then a READ's responses, marked as they
 * arrive, make the requester's CNPs cut the responder's rate, which
 * paces the responses.
 */

#include <endian.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <droce.h>
#include <droce_pcapfile.h>
#include <droce_wire.h>

#include "harness.h"

#define MSG (256u * 1024)
#define MIN_MBPS 500                /* dcqcn_rate_min_mbps */
#define MIN_MBPS_STR "500"
#define BUF (2 * MSG)
#define DEV_DSCP 26                 /* the devices' dscp = */
#define DEV_DSCP_STR "26"
#define QP_TCLASS 0x28              /* a QP's own: DSCP 10 */

static struct ep_opts opts;
static struct ep a, b;
static struct ep_pair_fixture pair = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF,
};
static const char *workdir;

struct seen {
	unsigned int roce, ect0, ce, cnps, cnps_ok;
	unsigned int dscp_dev;       /* non-CNPs with the device's DSCP */
};

/* Read @p path: what its RoCE frames from source @p src carried. */
static void
read_capture(const char *path, uint32_t src, uint32_t cnp_dqpn,
	     struct seen *s)
{
	static uint8_t buf[DROCE_PCAP_SNAPLEN];
	struct droce_pcapfile pf;
	struct droce_pcap_rec rec;
	struct droce_wire_pkt pkt;

	memset(s, 0, sizeof(*s));
	assert_int_equal(droce_pcap_open_read(&pf, path), 0);
	while (droce_pcap_read(&pf, &rec, buf, sizeof(buf)) == 1) {
		if (droce_wire_parse(buf, rec.caplen, 0, &pkt) != 0 ||
		    pkt.ip_version != 4 ||
		    memcmp(pkt.src_gid + 12, &src, 4) != 0)
			continue;
		s->roce++;
		if (pkt.tos >> 2 == DEV_DSCP &&
		    pkt.bth.opcode != DROCE_OPCODE_CNP)
			s->dscp_dev++;
		if (pkt.bth.opcode == DROCE_OPCODE_CNP) {
			static const uint8_t zero[DROCE_CNP_RESV_LEN];

			s->cnps++;
			if (pkt.bth.becn == 1 && pkt.icrc_ok &&
			    pkt.bth.dqpn == cnp_dqpn &&
			    (pkt.tos & DROCE_ECN_MASK) == DROCE_ECN_NOT_ECT &&
			    memcmp(pkt.cnp_resv, zero, sizeof(zero)) == 0)
				s->cnps_ok++;
		} else if ((pkt.tos & DROCE_ECN_MASK) == DROCE_ECN_ECT0) {
			s->ect0++;
		} else if ((pkt.tos & DROCE_ECN_MASK) == DROCE_ECN_CE) {
			s->ce++;
		}
	}
	droce_pcap_close(&pf);
}

static void
test_cnps(void **state)
{
	struct droce_qp_counters qa0, qb0, qa1, qb1;
	struct droce_qp_cc cc0, cc1;
	struct droce_counters cb;
	char pa[512], pb[512];
	struct ibv_wc wc;
	struct seen sa, sb;
	uint64_t t0, us;
	uint32_t ip_a, ip_b;
	int i;

	(void)state;
	snprintf(pa, sizeof(pa), "%s/ecn-droce0.pcap", workdir);
	snprintf(pb, sizeof(pb), "%s/ecn-droce1.pcap", workdir);
	assert_int_equal(droce_mirror_start(a.ctx, pa), 0);
	assert_int_equal(droce_mirror_start(b.ctx, pb), 0);
	assert_int_equal(droce_query_qp_counters(a.qp, &qa0), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &qb0), 0);
	/* no CNP yet: the port's rate */
	assert_int_equal(droce_query_qp_cc(a.qp, &cc0), 0);
	assert_true(cc0.rate_kbps > 0);
	assert_int_equal(cc0.target_kbps, cc0.rate_kbps);
	fill_pattern(a.buf, MSG, 3);
	memset(b.buf + MSG, 0, MSG);
	t0 = ep_now_ms();
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 1, 0, MSG, &b, MSG,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 10000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(b.buf + MSG, a.buf, MSG);
	/* every CNP sent has arrived */
	for (i = 0; i < 100; i++) {
		assert_int_equal(droce_query_qp_counters(a.qp, &qa1), 0);
		assert_int_equal(droce_query_qp_counters(b.qp, &qb1), 0);
		struct timespec ts = { 0, 10000000 };

		if (qa1.cnps_rcvd - qa0.cnps_rcvd ==
		    qb1.cnps_sent - qb0.cnps_sent &&
		    qb1.cnps_rcvd - qb0.cnps_rcvd ==
		    qa1.cnps_sent - qa0.cnps_sent)
			break;
		nanosleep(&ts, NULL);
	}
	us = (ep_now_ms() - t0 + 1) * 1000;
	assert_int_equal(droce_mirror_stop(a.ctx), 0);
	assert_int_equal(droce_mirror_stop(b.ctx), 0);
	print_message("droce1: %" PRIu64 " packets marked CE, %" PRIu64
		      " CNPs sent; droce0: %" PRIu64 " marked, %" PRIu64
		      " CNPs sent, in %" PRIu64 " us\n",
		      qb1.ce_rcvd - qb0.ce_rcvd, qb1.cnps_sent - qb0.cnps_sent,
		      qa1.ce_rcvd - qa0.ce_rcvd, qa1.cnps_sent - qa0.cnps_sent,
		      us);
	/* every WRITE packet came marked; some CNPs, not more than one a
	 * 50 us; all of them received; the ACKs marked too, answered */
	assert_true(qb1.ce_rcvd - qb0.ce_rcvd >= MSG / 1024);
	assert_true(qb1.cnps_sent - qb0.cnps_sent >= 1);
	assert_true(qb1.cnps_sent - qb0.cnps_sent <= us / 50 + 1);
	assert_int_equal(qa1.cnps_rcvd - qa0.cnps_rcvd,
			 qb1.cnps_sent - qb0.cnps_sent);
	assert_true(qa1.ce_rcvd - qa0.ce_rcvd >= 1);
	assert_true(qa1.cnps_sent - qa0.cnps_sent >= 1);
	assert_int_equal(qb1.cnps_rcvd - qb0.cnps_rcvd,
			 qa1.cnps_sent - qa0.cnps_sent);
	/* the reaction point: the CNPs cut droce0's rate (DCQCN), and its
	 * WRITE went paced at it */
	assert_int_equal(droce_query_qp_cc(a.qp, &cc1), 0);
	print_message("droce0's QP: %" PRIu64 " kbit/s (port %" PRIu64
		      "), target %" PRIu64 ", alpha %u/65536, %" PRIu64
		      " cuts, held back %" PRIu64 " times\n",
		      cc1.rate_kbps, cc0.rate_kbps, cc1.target_kbps, cc1.alpha,
		      cc1.cuts, qa1.cc_held - qa0.cc_held);
	/* (every CNP cut the rate; the rate it recovered to by the end
	 * depends on the machine's speed, the cuts do not) */
	assert_int_equal(cc1.cuts, qa1.cnps_rcvd);
	assert_true(cc1.rate_kbps >= MIN_MBPS * 1000);
	assert_true(qa1.cc_held > qa0.cc_held);
	assert_int_equal(droce_query_counters(b.ctx, &cb), 0);
	assert_true(cb.rx_ce >= MSG / 1024);
	assert_true(cb.tx_cnps >= qb1.cnps_sent - qb0.cnps_sent);

	/* the wire: droce0's packets ECT(0); droce1's CNPs to droce0's QP,
	 * as many as counted, every one well formed; what droce1 received
	 * from droce0 marked CE by the fault port */
	ip_a = htobe32(0x0a000b01);          /* 10.0.11.1 */
	ip_b = htobe32(0x0a000b02);
	read_capture(pa, ip_a, b.qp->qp_num, &sa);
	read_capture(pb, ip_b, a.qp->qp_num, &sb);
	print_message("droce0 sent %u RoCE frames, %u ECT(0), %u CNPs; "
		      "droce1 sent %u CNPs (%u well formed)\n", sa.roce,
		      sa.ect0, sa.cnps, sb.cnps, sb.cnps_ok);
	assert_true(sa.ect0 >= MSG / 1024);
	assert_int_equal(sa.ect0 + sa.cnps, sa.roce);
	/* with the device's DSCP: the address vector gave none */
	assert_int_equal(sa.dscp_dev, sa.ect0);
	assert_int_equal(sb.cnps, qb1.cnps_sent - qb0.cnps_sent);
	assert_int_equal(sb.cnps_ok, sb.cnps);
	read_capture(pb, ip_a, b.qp->qp_num, &sb);
	assert_true(sb.ce >= MSG / 1024);
}

/* A READ's responses, marked as they reach the requester: its CNPs cut
 * the responder's rate, which paces the responses; the bytes arrive. */
static void
test_read_responses_paced(void **state)
{
	struct droce_qp_counters qa0, qb0, qa1, qb1;
	struct droce_qp_cc cc0, cc1;
	struct ibv_wc wc;

	(void)state;
	assert_int_equal(droce_query_qp_counters(a.qp, &qa0), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &qb0), 0);
	assert_int_equal(droce_query_qp_cc(b.qp, &cc0), 0);
	fill_pattern(b.buf, MSG, 9);
	memset(a.buf + MSG, 0, MSG);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_READ, 2, MSG, MSG, &b, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 10000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(a.buf + MSG, b.buf, MSG);
	assert_int_equal(droce_query_qp_counters(a.qp, &qa1), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &qb1), 0);
	assert_int_equal(droce_query_qp_cc(b.qp, &cc1), 0);
	print_message("responder: %" PRIu64 " CNPs received, %" PRIu64
		      " cuts, held back %" PRIu64 " times, %" PRIu64
		      " kbit/s\n", qb1.cnps_rcvd - qb0.cnps_rcvd,
		      cc1.cuts - cc0.cuts, qb1.cc_held - qb0.cc_held,
		      cc1.rate_kbps);
	assert_true(qa1.ce_rcvd - qa0.ce_rcvd >= MSG / 1024);
	assert_true(qb1.cnps_rcvd - qb0.cnps_rcvd >= 1);
	assert_true(cc1.cuts - cc0.cuts >= 1);
	assert_true(qb1.cc_held > qb0.cc_held);
}

/*
 * A QP whose address vector gives a traffic class: its packets carry
 * that DSCP, not the device's, and are still ECN-capable.
 */
static void
test_qp_traffic_class(void **state)
{
	static uint8_t buf[DROCE_PCAP_SNAPLEN];
	struct ep_opts o = opts;
	struct droce_pcapfile pf;
	struct droce_pcap_rec rec;
	struct droce_wire_pkt pkt;
	struct ep c, d;
	struct ibv_wc wc;
	unsigned int own = 0, other = 0;
	char path[512];

	(void)state;
	o.traffic_class = QP_TCLASS;
	assert_int_equal(ep_open(&c, 0, 4096, &o), 0);
	assert_int_equal(ep_open(&d, 1, 4096, &o), 0);
	assert_int_equal(ep_connect(&c, &d, &o), 0);
	assert_int_equal(ep_connect(&d, &c, &o), 0);
	snprintf(path, sizeof(path), "%s/ecn-tclass.pcap", workdir);
	assert_int_equal(droce_mirror_start(c.ctx, path), 0);
	assert_int_equal(ep_post(&c, IBV_WR_RDMA_WRITE, 3, 0, 3000, &d, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(c.scq, &wc, 1, 10000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(droce_mirror_stop(c.ctx), 0);
	assert_int_equal(droce_pcap_open_read(&pf, path), 0);
	while (droce_pcap_read(&pf, &rec, buf, sizeof(buf)) == 1) {
		if (droce_wire_parse(buf, rec.caplen, 0, &pkt) != 0 ||
		    pkt.bth.opcode == DROCE_OPCODE_CNP ||
		    memcmp(pkt.src_gid, c.gid.raw, 16) != 0)
			continue;
		if ((pkt.tos & ~DROCE_ECN_MASK) == QP_TCLASS &&
		    (pkt.tos & DROCE_ECN_MASK) == DROCE_ECN_ECT0)
			own++;
		else
			other++;
	}
	droce_pcap_close(&pf);
	print_message("%u packets with the QP's traffic class, %u other\n",
		      own, other);
	assert_true(own >= 3);
	assert_int_equal(other, 0);
	ep_close(&c);
	ep_close(&d);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cnps),
		cmocka_unit_test(test_read_responses_paced),
		cmocka_unit_test(test_qp_traffic_class),
	};

	if (argc < 3) {
		fprintf(stderr, "usage: test_ecn WORKDIR FAULT_ARGS\n");
		return 2;
	}
	workdir = argv[1];
	/* (a floor of DCQCN's above the default 10 Mb/s: the rate never
	 * goes below it) */
	if (ep_config(argv[1], "ecn", 11, NULL,
		      "dcqcn_rate_min_mbps = " MIN_MBPS_STR "\n"
		      "dscp = " DEV_DSCP_STR "\n", argv[2],
		      21) != 0) {
		perror("test_ecn: config");
		return 1;
	}
	return pair_run_group_tests(tests, &pair);
}
