/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Faults of the port and of the machine, in one process: both devices'
 * ports behind net_fault injecting nothing, the wire cut (net_fault's
 * link down) and mended, the mbuf pool emptied and given back. Each ends
 * as on a RoCE NIC:
 *
 *  - a cut shorter than the QPs' timeout x retry_cnt: IBV_EVENT_PORT_ERR,
 *    then IBV_EVENT_PORT_ACTIVE once mended; the WRs posted meanwhile
 *    complete, every byte right;
 *  - a cut longer than that: the first WR ends in IBV_WC_RETRY_EXC_ERR,
 *    the others are flushed, the QP is in ERR; once mended a new pair of
 *    QPs works;
 *  - no mbuf to be had (the test holds every one of the pool): the WRs
 *    wait, no_mbuf counts, the QP stays in RTS; given back, they
 *    complete;
 *  - droce1's port stopped (droce_port_stop(): rte_eth_dev_stop() between
 *    two bursts of its lcore) for less than timeout x retry_cnt:
 *    IBV_EVENT_PORT_ERR, the port reads down, nothing is received or
 *    sent there (droce_raw_send() ENETDOWN); started again,
 *    IBV_EVENT_PORT_ACTIVE, and the WRITEs of both sides posted meanwhile
 *    complete, every byte right;
 *  - stopped for longer: the QPs of both sides end in
 *    IBV_WC_RETRY_EXC_ERR, the rest flushed, after exactly retry_cnt + 1
 *    timeouts; started again, a new pair works;
 *  - after each, once the endpoints are closed, the pool holds every
 *    mbuf it held before: none leaked.
 *
 * Usage: test_faults WORKDIR
 */

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <droce.h>

#include "harness.h"

#define BUF (1u << 20)
#define MSG 65536u
#define NWR 8

static struct ep_opts opts;
static struct ep a, b;
static unsigned int pool_in_use;   /* before the endpoints opened */

static struct rte_mempool *
pool(void)
{
	struct rte_mempool *mp = rte_mempool_lookup("droce_mbufs");

	assert_non_null(mp);
	return mp;
}

/* The mbufs out of the pool once droce has gone quiet. */
static unsigned int
quiet_in_use(void)
{
	usleep(300 * 1000);
	return rte_mempool_in_use_count(pool());
}

static uint16_t
droce1_port(void)
{
	uint16_t p;

	assert_int_equal(rte_eth_dev_get_port_by_name("net_fault_droce1", &p),
			 0);
	return p;
}

/* The next asynchronous event of @p ctx within @p ms, or -1. */
static int
next_event(struct ibv_context *ctx, struct ibv_async_event *ev, int ms)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -1;
	return ibv_get_async_event(ctx, ev);
}

static void
expect_event(struct ibv_context *ctx, enum ibv_event_type type)
{
	struct ibv_async_event ev;

	assert_int_equal(next_event(ctx, &ev, 5000), 0);
	assert_int_equal(ev.event_type, type);
	ibv_ack_async_event(&ev);
}

/* A pair with QPs of @p timeout and @p retry_cnt. */
static void
open_pair(uint8_t timeout, uint8_t retry_cnt)
{
	ep_opts_default(&opts);
	opts.timeout = timeout;
	opts.retry_cnt = retry_cnt;
	opts.max_send_wr = 2 * NWR;
	assert_int_equal(ep_pair(&a, &b, BUF, &opts), 0);
	fill_pattern(a.buf, BUF, 1);
	memset(b.buf, 0, BUF);
}

/* NWR WRITEs of MSG bytes from a to b, the last one signalled. */
static void
post_writes(void)
{
	unsigned int i;

	for (i = 0; i < NWR; i++)
		assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, i, i * MSG,
					 MSG, &b, i * MSG,
					 i + 1 == NWR ? IBV_SEND_SIGNALED : 0),
				 0);
}

static void
expect_written(void)
{
	struct ibv_wc wc;

	assert_int_equal(ep_poll(a.scq, &wc, 1, 10000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, NWR - 1);
	assert_memory_equal(b.buf, a.buf, NWR * MSG);
}

static void
close_pair(void)
{
	ep_close(&a);
	ep_close(&b);
	assert_int_equal(quiet_in_use(), pool_in_use);
}

static int
before(void **state)
{
	(void)state;
	pool_in_use = quiet_in_use();
	return 0;
}

/* A cut shorter than timeout x retry_cnt (67 ms x 7): nothing lost. */
static void
test_short_cut(void **state)
{
	uint16_t port;

	(void)state;
	open_pair(14, 7);
	port = droce1_port();
	assert_int_equal(rte_eth_dev_set_link_down(port), 0);
	expect_event(b.ctx, IBV_EVENT_PORT_ERR);
	post_writes();
	usleep(200 * 1000);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTS);
	assert_int_equal(rte_eth_dev_set_link_up(port), 0);
	expect_event(b.ctx, IBV_EVENT_PORT_ACTIVE);
	expect_written();
	close_pair();
}

/* A cut longer than timeout x retry_cnt (17 ms x 3): the QP gives up. */
static void
test_long_cut(void **state)
{
	struct ibv_wc wc[NWR];
	uint16_t port;
	unsigned int i;

	(void)state;
	open_pair(12, 3);
	port = droce1_port();
	assert_int_equal(rte_eth_dev_set_link_down(port), 0);
	expect_event(b.ctx, IBV_EVENT_PORT_ERR);
	for (i = 0; i < NWR; i++)
		assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, i, i * MSG,
					 MSG, &b, i * MSG, IBV_SEND_SIGNALED),
				 0);
	assert_int_equal(ep_poll(a.scq, wc, NWR, 5000), NWR);
	assert_int_equal(wc[0].status, IBV_WC_RETRY_EXC_ERR);
	for (i = 1; i < NWR; i++) {
		assert_int_equal(wc[i].wr_id, i);
		assert_int_equal(wc[i].status, IBV_WC_WR_FLUSH_ERR);
	}
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
	assert_int_equal(rte_eth_dev_set_link_up(port), 0);
	expect_event(b.ctx, IBV_EVENT_PORT_ACTIVE);
	close_pair();

	/* mended: a new pair works */
	open_pair(14, 7);
	post_writes();
	expect_written();
	close_pair();
}

/* Not one mbuf to be had for 200 ms: the WRs wait, then complete. */
static void
test_mbuf_pool_empty(void **state)
{
	struct rte_mempool *mp = pool();
	struct droce_counters c0, c1;
	struct rte_mbuf **held;
	unsigned int n = 0;

	(void)state;
	open_pair(14, 7);
	held = calloc(mp->size, sizeof(*held));
	assert_non_null(held);
	assert_int_equal(droce_query_counters(a.ctx, &c0), 0);
	while (n < mp->size && (held[n] = rte_pktmbuf_alloc(mp)) != NULL)
		n++;
	post_writes();
	usleep(200 * 1000);
	assert_int_equal(droce_query_counters(a.ctx, &c1), 0);
	assert_true(c1.no_mbuf > c0.no_mbuf);
	assert_int_equal(c1.tx_frames, c0.tx_frames);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTS);
	rte_pktmbuf_free_bulk(held, n);
	free(held);
	expect_written();
	close_pair();
}

/* droce1's port stopped for 200 ms (QPs of 67 ms x 7): nothing lost. */
static void
test_port_stop_short(void **state)
{
	struct droce_counters c0, c1;
	struct ibv_port_attr pa;
	struct ibv_wc wc;
	uint8_t mac[6];
	uint64_t sent;

	(void)state;
	open_pair(14, 7);
	fill_pattern(b.buf + BUF / 2, MSG, 2);
	assert_int_equal(droce_port_stop(b.ctx), 0);
	expect_event(b.ctx, IBV_EVENT_PORT_ERR);
	/* stopping twice is no error, and no second event */
	assert_int_equal(droce_port_stop(b.ctx), 0);
	assert_int_equal(ibv_query_port(b.ctx, 1, &pa), 0);
	assert_int_equal(pa.state, IBV_PORT_DOWN);
	assert_int_equal(droce_query_mac(a.ctx, mac), 0);
	assert_int_equal(droce_raw_send(b.ctx, mac, 64, 1, 0, &sent),
			 ENETDOWN);
	assert_int_equal(droce_query_counters(b.ctx, &c0), 0);
	/* both ways: droce0's requests reach a stopped port, droce1's never
	 * leave it */
	post_writes();
	assert_int_equal(ep_post(&b, IBV_WR_RDMA_WRITE, 100, BUF / 2, MSG, &a,
				 BUF / 2, IBV_SEND_SIGNALED), 0);
	usleep(200 * 1000);
	assert_int_equal(droce_query_counters(b.ctx, &c1), 0);
	assert_int_equal(c1.rx_frames, c0.rx_frames);
	assert_int_equal(c1.tx_frames, c0.tx_frames);
	assert_true(c1.tx_drop > c0.tx_drop);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTS);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_RTS);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 0), 0);
	assert_int_equal(droce_port_start(b.ctx), 0);
	expect_event(b.ctx, IBV_EVENT_PORT_ACTIVE);
	assert_int_equal(droce_port_start(b.ctx), 0);
	assert_int_equal(ibv_query_port(b.ctx, 1, &pa), 0);
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	expect_written();
	assert_int_equal(ep_poll(b.scq, &wc, 1, 10000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 100);
	assert_memory_equal(a.buf + BUF / 2, b.buf + BUF / 2, MSG);
	close_pair();
}

/* Each side's send queue: the WR at its head timed out, the rest flushed. */
static void
expect_retry_exceeded(struct ep *e, unsigned int n, uint8_t retry_cnt,
		      const struct droce_qp_counters *before)
{
	struct droce_qp_counters qc;
	struct ibv_wc wc[NWR];
	unsigned int i;

	assert_int_equal(ep_poll(e->scq, wc, (int)n, 5000), (int)n);
	assert_int_equal(wc[0].status, IBV_WC_RETRY_EXC_ERR);
	for (i = 1; i < n; i++) {
		assert_int_equal(wc[i].wr_id, wc[0].wr_id + i);
		assert_int_equal(wc[i].status, IBV_WC_WR_FLUSH_ERR);
	}
	assert_int_equal(ep_qp_state(e->qp), IBV_QPS_ERR);
	/* the first send and retry_cnt more, then it gave up */
	assert_int_equal(droce_query_qp_counters(e->qp, &qc), 0);
	assert_int_equal(qc.timeouts - before->timeouts, retry_cnt + 1u);
}

/* Stopped for longer than timeout x retry_cnt (17 ms x 3): both give up. */
static void
test_port_stop_long(void **state)
{
	struct droce_qp_counters qa, qb;
	unsigned int i;

	(void)state;
	open_pair(12, 3);
	assert_int_equal(droce_query_qp_counters(a.qp, &qa), 0);
	assert_int_equal(droce_query_qp_counters(b.qp, &qb), 0);
	assert_int_equal(droce_port_stop(b.ctx), 0);
	expect_event(b.ctx, IBV_EVENT_PORT_ERR);
	for (i = 0; i < NWR; i++) {
		assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, i, i * MSG,
					 MSG, &b, i * MSG, IBV_SEND_SIGNALED),
				 0);
		assert_int_equal(ep_post(&b, IBV_WR_RDMA_WRITE, 100 + i,
					 i * MSG, MSG, &a, i * MSG,
					 IBV_SEND_SIGNALED), 0);
	}
	expect_retry_exceeded(&a, NWR, 3, &qa);
	expect_retry_exceeded(&b, NWR, 3, &qb);
	assert_int_equal(droce_port_start(b.ctx), 0);
	expect_event(b.ctx, IBV_EVENT_PORT_ACTIVE);
	close_pair();

	/* started again: a new pair works */
	open_pair(14, 7);
	post_writes();
	expect_written();
	close_pair();
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_short_cut, before),
		cmocka_unit_test_setup(test_long_cut, before),
		cmocka_unit_test_setup(test_mbuf_pool_empty, before),
		cmocka_unit_test_setup(test_port_stop_short, before),
		cmocka_unit_test_setup(test_port_stop_long, before),
	};
	struct ibv_device **list;

	if (argc != 2) {
		fprintf(stderr, "usage: test_faults WORKDIR\n");
		return 2;
	}
	/* each port behind a net_fault injecting nothing (whose link down
	 * cuts the wire), the mbuf pool without per-lcore caches (so that
	 * the test can take every mbuf there is) */
	if (ep_config(argv[1], "faults", 7, "mbufs = 4096\nmbuf_cache = 0\n",
		      NULL, "drop=0", 1) != 0)
		return 1;
	/* droce starts with the first device list */
	list = ibv_get_device_list(NULL);
	if (list == NULL)
		return 1;
	ibv_free_device_list(list);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
