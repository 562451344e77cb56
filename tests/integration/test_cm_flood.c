/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * A MAD flood: thousands of MADs a second put on the wire to droce1's
 * QP1 by a raw packet QP on droce0, from 32 addresses no device has,
 * while a steady pair of RC QPs on the same devices WRITEs 64 B
 * messages without pause. In each burst:
 *
 *  - REQs to a listener with a backlog of 8 that accepts nothing: 8 are
 *    held as connection requests, each other one REJected (consumer
 *    defined, the backlog's reason) and counted as an overflow;
 *  - REQs for a port nobody listens on: REJ, invalid service ID;
 *  - truncated MADs, MADs of another class, RTUs of no connection:
 *    dropped and counted;
 *  - REPs for no REQ: REJ, invalid communication ID; DREQs from a
 *    stranger: a DREP, nothing else touched;
 *  - datagrams to QP1 with a wrong Q_Key or another partition's P_Key:
 *    dropped below the CM, which never sees them.
 *
 * Every answer goes out at once, though ARP was never asked about the
 * senders (the engine remembers where a MAD came from); the CM holds no
 * more connections than the backlog, DPDK's heap and the process do not
 * grow with the flood, and the steady pair goes on at the rate it had
 * before (the ratio is printed; the test asks for half of it, as a
 * two-core machine running the flooder beside it can give). Once the
 * held requests are rejected a real client connects.
 *
 * Needs root (a raw packet QP).
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#include <droce.h>

#include "droce_cm.h"
#include "droce_cma_pvt.h"
#include "droce_wire.h"
#include "cm_util.h"
#include "harness.h"

#define BUF (4u << 20)
#define SLOT 2048u
#define TX_SLOTS 64u
#define BACKLOG 8
#define FORGED 32u                 /* sender addresses no device has */
#define FLOOD_MS 2000u
#define BURST_GAP_US 10000u        /* 64 MADs each 10 ms: 6,400 a second */
#define STEADY_DEPTH 32u
#define STEADY_MSG 64u

static struct ep_opts opts, raw_opts;
static struct ep a, b;             /* the steady pair */
static struct ep r;                /* droce0's raw QP */
static uint8_t mac0[6], mac1[6];

static atomic_bool steady_stop;
static atomic_uint_fast64_t steady_done;

/* The steady pair: STEADY_DEPTH 64 B WRITEs in flight until told. */
static void *
steady(void *arg)
{
	unsigned int out = 0;
	struct ibv_wc wc[32];
	uint64_t id = 0;
	int n, i;

	(void)arg;
	while (!atomic_load(&steady_stop) || out > 0) {
		while (!atomic_load(&steady_stop) && out < STEADY_DEPTH) {
			if (ep_post(&a, IBV_WR_RDMA_WRITE, id++, 0,
				    STEADY_MSG, &b, 0, IBV_SEND_SIGNALED) != 0)
				return (void *)1;
			out++;
		}
		n = ibv_poll_cq(a.scq, 32, wc);
		if (n < 0)
			return (void *)1;
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				return (void *)1;
		out -= (unsigned int)n;
		atomic_fetch_add(&steady_done, (uint64_t)n);
	}
	return NULL;
}

/* WRITEs the steady pair completed in @p ms. */
static double
steady_rate(unsigned int ms)
{
	uint64_t n0 = atomic_load(&steady_done), t0 = ep_now_ms();

	usleep(ms * 1000);
	return (double)(atomic_load(&steady_done) - n0) * 1000.0 /
		(double)(ep_now_ms() - t0);
}

/* A forged sender's address: 10.0.0.100 + k. */
static void
forged_gid(uint8_t gid[16], unsigned int k)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	gid[12] = 10;
	gid[15] = (uint8_t)(100 + k % FORGED);
}

/* The frame of a MAD of @p len bytes from forged sender @p k to droce1's
 * QP1, with Q_Key @p qkey and P_Key @p pkey. @return its length. */
static int
mad_frame(uint8_t *f, const uint8_t *mad, uint32_t len, unsigned int k,
	  uint32_t qkey, uint16_t pkey)
{
	struct droce_wire_pkt p;

	memset(&p, 0, sizeof(p));
	memcpy(p.dst_mac.addr_bytes, mac1, 6);
	memcpy(p.src_mac.addr_bytes, mac0, 6);
	p.ip_version = 4;
	p.ttl = 64;
	p.ip_frag = 0x4000;
	forged_gid(p.src_gid, k);
	memcpy(p.dst_gid, b.gid.raw, 16);
	p.udp_dport = DROCE_UDP_PORT;
	p.udp_sport = droce_udp_sport(DROCE_GSI_QPN, DROCE_GSI_QPN);
	p.bth.opcode = DROCE_TR_UD | DROCE_OP_SEND_ONLY;
	p.bth.pkey = pkey;
	p.bth.dqpn = DROCE_GSI_QPN;
	p.deth.qkey = qkey;
	p.deth.srcqp = DROCE_GSI_QPN;
	p.payload = mad;
	p.payload_len = len;
	return droce_wire_build(f, SLOT, &p);
}

/* Put the @p n frames of r's send slots on the wire from droce0. */
static void
inject(const uint32_t *lens, unsigned int n)
{
	struct ibv_send_wr wr[TX_SLOTS], *bad;
	struct ibv_sge sge[TX_SLOTS];
	struct ibv_wc wc[TX_SLOTS];
	unsigned int i, got = 0;
	uint64_t end = ep_now_ms() + 5000;

	for (i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge) { (uintptr_t)(r.buf + i * SLOT),
					    lens[i], r.mr->lkey };
		wr[i] = (struct ibv_send_wr) {
			.wr_id = i, .next = i + 1 < n ? &wr[i + 1] : NULL,
			.sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		};
	}
	assert_int_equal(ibv_post_send(r.qp, wr, &bad), 0);
	while (got < n) {
		int k = ibv_poll_cq(r.scq, (int)(n - got), wc);

		assert_true(k >= 0);
		for (i = 0; i < (unsigned int)k; i++)
			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		got += (unsigned int)k;
		assert_true(ep_now_ms() < end);
	}
}

/* What one burst holds, and what each kind should come to. */
enum kind {
	K_REQ_LISTENER,        /* held, or REJ consumer defined */
	K_REQ_NOBODY,          /* REJ invalid service ID */
	K_TRUNCATED,           /* dropped */
	K_CLASS,               /* dropped */
	K_RTU,                 /* dropped */
	K_REP,                 /* REJ invalid comm ID */
	K_DREQ,                /* DREP */
	K_QKEY,                /* below the CM */
	K_PKEY,                /* below the CM */
	KINDS
};

static const unsigned int per_burst[KINDS] = {
	[K_REQ_LISTENER] = 16, [K_REQ_NOBODY] = 16, [K_TRUNCATED] = 6,
	[K_CLASS] = 6, [K_RTU] = 4, [K_REP] = 4, [K_DREQ] = 4, [K_QKEY] = 4,
	[K_PKEY] = 4,
};

/* A REQ from forged sender @p k, comm ID @p id, to @p port. */
static void
req_msg(struct droce_cm_msg *m, unsigned int k, uint32_t id, uint16_t port)
{
	struct droce_cma_hdr ch = { .ip_version = 4, .src_port = 40000 };
	struct sockaddr_in dst = addr4(server_ip, 0);

	memset(m, 0, sizeof(*m));
	droce_cm_mad_hdr_init(&m->hdr, DROCE_CM_ATTR_REQ, id);
	m->req.local_comm_id = id;
	m->req.service_id = droce_cma_service_id(RDMA_PS_TCP, port);
	m->req.local_ca_guid = 0x0200000000000000ull | id;
	m->req.local_qkey = 0;
	m->req.local_qpn = 0x100000 | (id & 0xfffff);
	m->req.responder_resources = 1;
	m->req.initiator_depth = 1;
	m->req.remote_cm_response_timeout = 20;
	m->req.starting_psn = id & 0xffffff;
	m->req.local_cm_response_timeout = 20;
	m->req.retry_count = 7;
	m->req.pkey = 0xffff;
	m->req.path_mtu = IBV_MTU_1024;
	m->req.rnr_retry_count = 7;
	m->req.max_cm_retries = 1;
	forged_gid(m->req.primary.local_gid, k);
	memcpy(m->req.primary.remote_gid, b.gid.raw, 16);
	m->req.primary.local_lid = m->req.primary.remote_lid = 0xffff;
	m->req.primary.hop_limit = 64;
	m->req.primary.local_ack_timeout = 14;
	forged_gid(ch.src_addr, k);
	memset(ch.dst_addr, 0, 16);
	ch.dst_addr[10] = ch.dst_addr[11] = 0xff;
	memcpy(&ch.dst_addr[12], &dst.sin_addr, 4);
	droce_cma_hdr_build(&ch, m->req.private_data);
}

/*
 * One burst into r's send slots: per_burst of each kind, from forged
 * senders, comm IDs from *next_id. @return frames.
 */
static unsigned int
burst(uint32_t *lens, uint32_t *next_id, uint16_t port, uint16_t nobody)
{
	uint8_t mad[DROCE_MAD_LEN];
	struct droce_cm_msg m;
	unsigned int n = 0, kind, i;

	for (kind = 0; kind < KINDS; kind++)
		for (i = 0; i < per_burst[kind]; i++) {
			uint32_t id = (*next_id)++;
			uint32_t len = DROCE_MAD_LEN, qkey = DROCE_GSI_QKEY;
			uint16_t pkey = 0xffff;
			int fl;

			switch (kind) {
			case K_REQ_LISTENER:
			case K_QKEY:
			case K_PKEY:
				req_msg(&m, id, id, port);
				break;
			case K_REQ_NOBODY:
			case K_TRUNCATED:
			case K_CLASS:
				req_msg(&m, id, id, nobody);
				break;
			case K_RTU:
				memset(&m, 0, sizeof(m));
				droce_cm_mad_hdr_init(&m.hdr, DROCE_CM_ATTR_RTU,
						      id);
				m.rtu.local_comm_id = id;
				m.rtu.remote_comm_id = id * 7;
				break;
			case K_REP:
				memset(&m, 0, sizeof(m));
				droce_cm_mad_hdr_init(&m.hdr, DROCE_CM_ATTR_REP,
						      id);
				m.rep.local_comm_id = id;
				m.rep.remote_comm_id = id * 7;
				m.rep.local_qpn = id & 0xffffff;
				break;
			default:
				memset(&m, 0, sizeof(m));
				droce_cm_mad_hdr_init(&m.hdr,
						      DROCE_CM_ATTR_DREQ, id);
				m.dreq.local_comm_id = id;
				m.dreq.remote_comm_id = id * 7;
				m.dreq.remote_qpn = id & 0xffffff;
				break;
			}
			assert_int_equal(droce_cm_mad_build(&m, mad),
					 DROCE_MAD_LEN);
			if (kind == K_TRUNCATED)
				len = 100;
			if (kind == K_CLASS)
				mad[1] = 0x04;
			if (kind == K_QKEY)
				qkey = 0x1234;
			if (kind == K_PKEY)
				pkey = 0x8123;
			fl = mad_frame(r.buf + n * SLOT, mad, len, id, qkey,
				       pkey);
			assert_true(fl > 0);
			lens[n++] = (uint32_t)fl;
		}
	return n;
}

/* QP1 of droce1's CM. */
static struct ibv_qp *
gsi_of_server(void)
{
	struct sockaddr_in sa = addr4(server_ip, 0);
	union ibv_gid gid;
	struct cm_dev *dev;
	int index;

	droce_cma_addr_to_gid((struct sockaddr *)&sa, &gid);
	pthread_mutex_lock(&droce_cm.lock);
	dev = droce_cm_dev_by_gid(&gid, &index);
	pthread_mutex_unlock(&droce_cm.lock);
	assert_non_null(dev);
	return dev->gsi;
}

static void
test_cm_mad_flood(void **state)
{
	struct side srv = {0}, cli = {0};
	struct droce_cm_stats s0, s1, peak = {0};
	struct droce_qp_counters g0, g1;
	struct droce_counters d0, d1;
	struct droce_resources res;
	uint32_t lens[TX_SLOTS], next_id = 1;
	unsigned int bursts = 0, i, held = 0;
	struct rdma_cm_event *ev;
	double quiet, flooded;
	uint16_t port, nobody;
	pthread_t th;
	uint64_t end;
	size_t heap0, heap1;
	long rss0, rss1;
	void *ret;

	(void)state;
	port = listen_on(&srv, BACKLOG);
	nobody = (uint16_t)(port + 1);
	/* a port nobody listens on: the listener's own, plus one, is free
	 * in this process */
	s0 = cm_stats();
	assert_int_equal(droce_query_qp_counters(gsi_of_server(), &g0), 0);
	assert_int_equal(droce_query_counters(b.ctx, &d0), 0);
	heap0 = ep_heap_allocated();
	rss0 = ep_rss_kib();

	atomic_store(&steady_stop, false);
	assert_int_equal(pthread_create(&th, NULL, steady, NULL), 0);
	quiet = steady_rate(1000);
	{
		uint64_t n0 = atomic_load(&steady_done), t0 = ep_now_ms();

		end = t0 + FLOOD_MS;
		while (ep_now_ms() < end) {
			unsigned int n = burst(lens, &next_id, port, nobody);

			inject(lens, n);
			bursts++;
			s1 = cm_stats();
			if (s1.conns > peak.conns)
				peak.conns = s1.conns;
			if (s1.events_queued > peak.events_queued)
				peak.events_queued = s1.events_queued;
			usleep(BURST_GAP_US);
		}
		flooded = (double)(atomic_load(&steady_done) - n0) * 1000.0 /
			(double)(ep_now_ms() - t0);
	}
	atomic_store(&steady_stop, true);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);

	/* every MAD the CM took has been dealt with once it goes quiet */
	end = ep_now_ms() + 5000;
	do {
		usleep(100 * 1000);
		s1 = cm_stats();
	} while (s1.mads_received - s0.mads_received <
		 (uint64_t)bursts * (TX_SLOTS - per_burst[K_QKEY] -
				     per_burst[K_PKEY]) &&
		 ep_now_ms() < end);
	assert_int_equal(droce_query_qp_counters(gsi_of_server(), &g1), 0);
	assert_int_equal(droce_query_counters(b.ctx, &d1), 0);
	heap1 = ep_heap_allocated();
	rss1 = ep_rss_kib();
	print_message("%u bursts, %u MADs in %u ms; steady pair %.0f "
		      "WRITEs/s quiet, %.0f in the flood (ratio %.2f); "
		      "heap +%zd B, RSS %+ld KiB\n", bursts,
		      bursts * TX_SLOTS, FLOOD_MS, quiet, flooded,
		      flooded / quiet, (ssize_t)(heap1 - heap0),
		      rss1 - rss0);

	/* below the CM: the wrong Q_Key at QP1, the other P_Key at the
	 * device; the CM took every other one, and dropped the malformed,
	 * the other class and the unknown RTUs */
	assert_int_equal(g1.rx_dropped - g0.rx_dropped,
			 (uint64_t)bursts * per_burst[K_QKEY]);
	assert_int_equal(d1.rx_bad_header - d0.rx_bad_header,
			 (uint64_t)bursts * per_burst[K_PKEY]);
	assert_int_equal(s1.mads_received - s0.mads_received,
			 (uint64_t)bursts * (TX_SLOTS - per_burst[K_QKEY] -
					     per_burst[K_PKEY]));
	assert_int_equal(s1.mads_dropped - s0.mads_dropped,
			 (uint64_t)bursts * (per_burst[K_TRUNCATED] +
					     per_burst[K_CLASS] +
					     per_burst[K_RTU] +
					     per_burst[K_DREQ]));
	/* answered, each at once (no ARP wait: 32 senders at 3 s each
	 * would not fit in the time the test gave them) */
	assert_int_equal(s1.listen_overflow - s0.listen_overflow,
			 (uint64_t)bursts * per_burst[K_REQ_LISTENER] -
			 BACKLOG);
	assert_int_equal(s1.rej_sent[DROCE_CM_REJ_CONSUMER_DEFINED] -
			 s0.rej_sent[DROCE_CM_REJ_CONSUMER_DEFINED],
			 (uint64_t)bursts * per_burst[K_REQ_LISTENER] -
			 BACKLOG);
	assert_int_equal(s1.rej_sent[DROCE_CM_REJ_INVALID_SERVICE_ID] -
			 s0.rej_sent[DROCE_CM_REJ_INVALID_SERVICE_ID],
			 (uint64_t)bursts * per_burst[K_REQ_NOBODY]);
	assert_int_equal(s1.rej_sent[DROCE_CM_REJ_INVALID_COMM_ID] -
			 s0.rej_sent[DROCE_CM_REJ_INVALID_COMM_ID],
			 (uint64_t)bursts * per_burst[K_REP]);
	assert_int_equal(s1.send_failed - s0.send_failed, 0);
	assert_int_equal(droce_query_resources(b.ctx, &res), 0);
	assert_int_equal(res.neigh_pending, 0);

	/* bounded: the backlog's connections and events, no more */
	assert_true(peak.conns <= BACKLOG);
	assert_true(peak.events_queued <= BACKLOG);
	assert_int_equal(s1.conns, BACKLOG);
	assert_true(heap1 - heap0 < (1u << 20) || heap1 < heap0);
	assert_true(rss1 - rss0 < 8192);
	/* the steady pair went on: at half its quiet rate at least, a
	 * quarter where engine lcores outnumber the CPUs
	 * (DROCE_TEST_LCORES=4 on two: the flood's lcore and the pair's
	 * may take turns on one CPU, and 0.47 was seen) */
	assert_true(flooded > quiet /
		    (getenv("DROCE_TEST_LCORES") != NULL ? 4 : 2));

	/* the held requests refused, a real client gets in */
	for (i = 0; i < BACKLOG; i++) {
		struct rdma_cm_id *id;

		ev = expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
		assert_non_null(ev);
		id = ev->id;
		rdma_ack_cm_event(ev);
		assert_int_equal(rdma_reject(id, NULL, 0), 0);
		assert_int_equal(rdma_destroy_id(id), 0);
		held++;
	}
	assert_int_equal(held, BACKLOG);
	client_to(&cli, port);
	cm_request(&cli, &srv, &(struct rdma_conn_param) {
		.retry_count = 7, .rnr_retry_count = 7 });
	cm_establish(&cli, &srv, NULL);
	send_checked(&cli, &srv, "after the flood");
	assert_int_equal(rdma_disconnect(cli.id), 0);
	expect_ack(srv.ch, RDMA_CM_EVENT_DISCONNECTED);
	expect_ack(cli.ch, RDMA_CM_EVENT_DISCONNECTED);
	side_free(&cli);
	side_free(&srv);
}

static int
setup(void **state)
{
	(void)state;
	ep_opts_default(&opts);
	opts.max_send_wr = 64;
	opts.cqe = 256;
	raw_opts = opts;
	raw_opts.qp_type = IBV_QPT_RAW_PACKET;
	raw_opts.max_send_wr = TX_SLOTS;
	raw_opts.cqe = 2 * TX_SLOTS;
	if (ep_pair(&a, &b, BUF, &opts) != 0 ||
	    ep_open(&r, 0, BUF, &raw_opts) != 0 || ep_raw_up(&r) != 0 ||
	    droce_query_mac(a.ctx, mac0) != 0 ||
	    droce_query_mac(b.ctx, mac1) != 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	ep_close(&r);
	ep_close(&a);
	ep_close(&b);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cm_mad_flood),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
