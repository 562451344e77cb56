/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * net_fault end to end. Two net_ring ports A and B sit back to back (A's
 * tx ring is B's rx ring and the other way round) and a fault port F
 * wraps A: frames sent on F reach B through F's tx faults, frames sent
 * on B reach F through its rx faults. Every frame carries its sequence
 * number and bytes derived from it, so a test can tell which frames
 * arrived, in what order, and which bits changed on the way.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_ip.h>
#include <rte_ring.h>

#include "droce_eth_fault.h"
#include "fault_rss.h"

#define NB_FRAMES 10000
#define BURST 32
#define RING_SIZE 8192
#define POOL_SIZE 8191
#define FRAME_MIN 64
#define FRAME_MAX 128
#define SEQ_OFF 14		/* after the Ethernet header */
#define QUIET_US 20000		/* nothing for so long: traffic is over */
#define MAX_QUEUES 2

static struct rte_mempool *pool;
static unsigned int pool_baseline;	/* free mbufs as the test began */
static unsigned int rig_serial;

/* A, B and F, and the two rings between A and B. */
struct rig {
	struct rte_ring *ab[MAX_QUEUES];
	struct rte_ring *ba[MAX_QUEUES];
	uint16_t nb_queues;
	uint16_t a;
	uint16_t b;
	uint16_t f;
	char a_name[RTE_ETH_NAME_MAX_LEN];
	char b_name[RTE_ETH_NAME_MAX_LEN];
	char f_name[RTE_ETH_NAME_MAX_LEN];
	int f_removed;		/* F's vdev already uninitialised */
};

/* One received frame. */
struct rec {
	uint32_t len;
	uint64_t tsc;
	uint8_t data[FRAME_MAX];
};

struct capture {
	struct rec *r;
	unsigned int n;
	unsigned int cap;
	uint64_t sent_tsc[NB_FRAMES];	/* by sequence number */
};

/* ---- frames ------------------------------------------------------------ */

static uint32_t
frame_len(uint32_t seq)
{
	return FRAME_MIN + seq % (FRAME_MAX - FRAME_MIN + 1);
}

static void
frame_fill(uint32_t seq, uint8_t *buf)
{
	static const uint8_t eth[SEQ_OFF] = {
		0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x88, 0xb5,
	};
	uint32_t len = frame_len(seq);
	uint32_t i;

	memcpy(buf, eth, sizeof(eth));
	memcpy(buf + SEQ_OFF, &seq, sizeof(seq));
	for (i = SEQ_OFF + sizeof(seq); i < len; i++)
		buf[i] = (uint8_t)(seq * 31u + i * 7u);
}

static struct rte_mbuf *
frame_mbuf(uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	assert_non_null(m);
	p = rte_pktmbuf_append(m, (uint16_t)frame_len(seq));
	assert_non_null(p);
	frame_fill(seq, (uint8_t *)p);
	return m;
}

static uint32_t
rec_seq(const struct rec *r)
{
	uint32_t seq;

	memcpy(&seq, r->data + SEQ_OFF, sizeof(seq));
	return seq;
}

/* Bits that differ from frame @p seq as sent; UINT32_MAX if sizes differ. */
static uint32_t
rec_bitdiff(const struct rec *r, uint32_t seq)
{
	uint8_t want[FRAME_MAX];
	uint32_t i, bits = 0;

	if (seq >= NB_FRAMES || r->len != frame_len(seq))
		return UINT32_MAX;
	frame_fill(seq, want);
	for (i = 0; i < r->len; i++)
		bits += (uint32_t)__builtin_popcount(r->data[i] ^ want[i]);
	return bits;
}

static int
rec_exact(const struct rec *r)
{
	return rec_bitdiff(r, rec_seq(r)) == 0;
}

/* ---- traffic ----------------------------------------------------------- */

static struct capture *
capture_new(void)
{
	struct capture *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->cap = 2 * NB_FRAMES;
	c->r = calloc(c->cap, sizeof(c->r[0]));
	assert_non_null(c->r);
	return c;
}

static void
capture_free(struct capture *c)
{
	free(c->r);
	free(c);
}

static unsigned int
poll_rx_q(uint16_t port, uint16_t queue, struct capture *c)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t nb, i;
	uint64_t now;

	nb = rte_eth_rx_burst(port, queue, pkts, BURST);
	/* after: a frame due at t was let out by a burst that began after t */
	now = rte_rdtsc();
	for (i = 0; i < nb; i++) {
		struct rec *r;
		const void *d;

		if (c->n == c->cap) {
			c->cap *= 2;
			c->r = realloc(c->r, c->cap * sizeof(c->r[0]));
			assert_non_null(c->r);
		}
		r = &c->r[c->n++];
		r->len = rte_pktmbuf_pkt_len(pkts[i]);
		r->tsc = now;
		assert_true(r->len <= FRAME_MAX);
		d = rte_pktmbuf_read(pkts[i], 0, r->len, r->data);
		assert_non_null(d);
		if (d != r->data)
			memcpy(r->data, d, r->len);
		rte_pktmbuf_free(pkts[i]);
	}
	return nb;
}

static unsigned int
poll_rx(uint16_t port, struct capture *c)
{
	return poll_rx_q(port, 0, c);
}

/*
 * Send frames 0 .. nb_frames-1 on tx_port's queue, polling the same
 * queue of rx_port as they go, then keep polling (and calling tx_burst
 * empty, which lets held tx frames out) until nothing has arrived for
 * quiet_us.
 */
static void
traffic_q(uint16_t tx_port, uint16_t rx_port, uint16_t queue,
	  uint32_t nb_frames, struct capture *c, uint64_t quiet_us)
{
	uint64_t quiet = quiet_us * rte_get_tsc_hz() / US_PER_S;
	struct rte_mbuf *pkts[BURST];
	uint16_t nb = 0, sent;
	uint32_t seq = 0;
	uint64_t last;

	while (seq < nb_frames || nb > 0) {
		while (nb < BURST && seq < nb_frames) {
			c->sent_tsc[seq] = rte_rdtsc();
			pkts[nb++] = frame_mbuf(seq++);
		}
		sent = rte_eth_tx_burst(tx_port, queue, pkts, nb);
		memmove(pkts, pkts + sent, (nb - sent) * sizeof(pkts[0]));
		nb -= sent;
		poll_rx_q(rx_port, queue, c);
	}
	for (last = rte_rdtsc(); rte_rdtsc() - last < quiet; ) {
		rte_eth_tx_burst(tx_port, queue, NULL, 0);
		if (poll_rx_q(rx_port, queue, c) > 0)
			last = rte_rdtsc();
	}
}

static void
traffic(uint16_t tx_port, uint16_t rx_port, uint32_t nb_frames,
	struct capture *c, uint64_t quiet_us)
{
	traffic_q(tx_port, rx_port, 0, nb_frames, c, quiet_us);
}

/* ---- ports ------------------------------------------------------------- */

static uint64_t
xstat(uint16_t port, const char *name)
{
	uint64_t id, value;

	assert_int_equal(rte_eth_xstats_get_id_by_name(port, name, &id), 0);
	assert_int_equal(rte_eth_xstats_get_by_id(port, &id, &value, 1), 1);
	return value;
}

static void
port_start_q(uint16_t port, uint16_t nb_queues)
{
	struct rte_eth_conf conf;
	uint16_t q;

	memset(&conf, 0, sizeof(conf));
	assert_int_equal(rte_eth_dev_configure(port, nb_queues, nb_queues,
					       &conf), 0);
	for (q = 0; q < nb_queues; q++) {
		assert_int_equal(rte_eth_rx_queue_setup(port, q, 512,
			rte_eth_dev_socket_id(port), NULL, pool), 0);
		assert_int_equal(rte_eth_tx_queue_setup(port, q, 512,
			rte_eth_dev_socket_id(port), NULL), 0);
	}
	assert_int_equal(rte_eth_dev_start(port), 0);
}

static void
port_start(uint16_t port)
{
	port_start_q(port, 1);
}

/* "ab<rig>.<queue>": A to B; "ba<rig>.<queue>": B to A */
static void
ring_name(char *name, size_t size, const char *dir, unsigned int id,
	  unsigned int queue)
{
	snprintf(name, size, "%s%u.%u", dir, id, queue);
}

/* A and B back to back, nb_queues rings each way; F not yet. */
static void
rig_rings_q(struct rig *r, uint16_t nb_queues)
{
	char name[RTE_RING_NAMESIZE];
	unsigned int id = rig_serial++;
	uint16_t q;
	int a, b;

	memset(r, 0, sizeof(*r));
	r->nb_queues = nb_queues;
	for (q = 0; q < nb_queues; q++) {
		ring_name(name, sizeof(name), "ab", id, q);
		r->ab[q] = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY,
					   RING_F_SP_ENQ | RING_F_SC_DEQ);
		ring_name(name, sizeof(name), "ba", id, q);
		r->ba[q] = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY,
					   RING_F_SP_ENQ | RING_F_SC_DEQ);
		assert_non_null(r->ab[q]);
		assert_non_null(r->ba[q]);
	}

	snprintf(name, sizeof(name), "a%u", id);
	a = rte_eth_from_rings(name, r->ba, nb_queues, r->ab, nb_queues,
			       SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "b%u", id);
	b = rte_eth_from_rings(name, r->ab, nb_queues, r->ba, nb_queues,
			       SOCKET_ID_ANY);
	assert_true(a >= 0 && a < RTE_MAX_ETHPORTS);
	assert_true(b >= 0 && b < RTE_MAX_ETHPORTS);
	r->a = (uint16_t)a;
	r->b = (uint16_t)b;
	assert_int_equal(rte_eth_dev_get_name_by_port(r->a, r->a_name), 0);
	assert_int_equal(rte_eth_dev_get_name_by_port(r->b, r->b_name), 0);
	snprintf(r->f_name, sizeof(r->f_name), "net_fault_%u", id);
}

static void
rig_rings(struct rig *r)
{
	rig_rings_q(r, 1);
}

/* rte_vdev_init() of F over A with "port=A[,faults]". */
static int
rig_try_fault(struct rig *r, const char *faults)
{
	char args[256];

	snprintf(args, sizeof(args), "port=%s%s%s", r->a_name,
		 faults[0] != '\0' ? "," : "", faults);
	return rte_vdev_init(r->f_name, args);
}

/* A, B and F over A with these faults, F and B started. */
static void
rig_open_q(struct rig *r, const char *faults, uint16_t nb_queues)
{
	rig_rings_q(r, nb_queues);
	assert_int_equal(rig_try_fault(r, faults), 0);
	assert_int_equal(rte_eth_dev_get_port_by_name(r->f_name, &r->f), 0);
	port_start_q(r->f, nb_queues);
	port_start_q(r->b, nb_queues);
}

static void
rig_open(struct rig *r, const char *faults)
{
	rig_open_q(r, faults, 1);
}

static void
ring_drain(struct rte_ring *ring)
{
	void *m;

	while (rte_ring_dequeue(ring, &m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(ring);
}

/* Close everything; every mbuf must be back in the pool. */
static void
rig_close(struct rig *r)
{
	uint16_t q;

	if (rte_eth_dev_is_valid_port(r->f)) {
		assert_int_equal(rte_eth_dev_stop(r->f), 0);
		assert_int_equal(rte_eth_dev_close(r->f), 0);
	}
	if (!r->f_removed)
		assert_int_equal(rte_vdev_uninit(r->f_name), 0);
	assert_false(rte_eth_dev_is_valid_port(r->a));
	if (rte_eth_dev_is_valid_port(r->b)) {
		assert_int_equal(rte_eth_dev_stop(r->b), 0);
		assert_int_equal(rte_eth_dev_close(r->b), 0);
	}
	rte_vdev_uninit(r->a_name);
	rte_vdev_uninit(r->b_name);
	for (q = 0; q < r->nb_queues; q++) {
		ring_drain(r->ab[q]);
		ring_drain(r->ba[q]);
	}
	assert_int_equal(rte_mempool_avail_count(pool), pool_baseline);
}

/* Five standard deviations of a binomial count. */
static void
assert_binomial(uint64_t k, unsigned int n, double p)
{
	double sd = sqrt(n * p * (1.0 - p));

	assert_true(fabs((double)k - n * p) <= 5.0 * sd);
}

static int
same_arrivals(const struct capture *x, const struct capture *y)
{
	unsigned int i;

	if (x->n != y->n)
		return 0;
	for (i = 0; i < x->n; i++)
		if (x->r[i].len != y->r[i].len ||
		    memcmp(x->r[i].data, y->r[i].data, x->r[i].len) != 0)
			return 0;
	return 1;
}

/* ---- tests ------------------------------------------------------------- */

/* --vdev net_ring_cl --vdev net_fault_cl,port=net_ring_cl (group setup) */
static void
test_vdev_from_eal_command_line(void **state __rte_unused)
{
	struct capture *c = capture_new();
	uint16_t f, ring;
	unsigned int i;

	assert_int_equal(rte_eth_dev_get_port_by_name("net_fault_cl", &f), 0);
	assert_int_equal(rte_eth_dev_get_port_by_name("net_ring_cl", &ring), 0);
	port_start(f);
	/* net_ring_cl loops its tx ring back to its rx ring */
	traffic(f, f, 100, c, QUIET_US);
	assert_int_equal(c->n, 100);
	for (i = 0; i < c->n; i++) {
		assert_true(rec_exact(&c->r[i]));
		assert_int_equal(rec_seq(&c->r[i]), i);
	}
	assert_int_equal(xstat(f, "tx_fault_passed"), 100);
	assert_int_equal(xstat(f, "rx_fault_passed"), 100);
	assert_int_equal(rte_eth_dev_stop(f), 0);
	assert_int_equal(rte_eth_dev_close(f), 0);
	assert_false(rte_eth_dev_is_valid_port(ring));
	assert_int_equal(rte_vdev_uninit("net_fault_cl"), 0);
	assert_int_equal(rte_mempool_avail_count(pool), pool_baseline);
	capture_free(c);
}

static void
test_bad_devargs_are_refused(void **state __rte_unused)
{
	static const char * const bad[] = {
		"bogus=1", "drop", "drop=", "drop=1.5", "drop=-0.1",
		"drop=abc", "drop=0.1x", "drop=nan", "drop=0.1,drop=0.2",
		"dup=2", "reorder=-1", "corrupt=1.01", "delay=0.5",
		"delay=0.5,delay_us=0", "delay_us=-5", "delay_us=10000001",
		"delay_us=1e3", "reorder_us=", "reorder_us=10000001",
		"seed=-1", "seed=x", "seed=18446744073709551616",
		"dir=sideways", "dir=",
		"rate_mbps=10", "switch=s,queue=10", "switch=s,kmax=10",
		"switch=s,rate_mbps=10,rate_pps=10", "switch=s,rate_mbps=0",
		"switch=s,rate_mbps=10000001", "switch=s,rate_pps=1000000001",
		"switch=s,rate_pps=10,kmin=5,kmax=4",
		"switch=s,rate_pps=10,queue=10,kmax=11",
		"switch=s,rate_pps=10,pmax=0.5", "switch=s,rate_pps=10,kmin=3",
		"switch=s,rate_pps=10,kmax=5,pmax=2", "switch=",
		"switch=a_name_of_17_chars",
	};
	struct rte_eth_dev_owner owner;
	char args[128];
	struct rig r;
	unsigned int i;
	uint16_t port;

	rig_rings(&r);
	for (i = 0; i < RTE_DIM(bad); i++) {
		print_message("refusing '%s'\n", bad[i]);
		assert_int_equal(rig_try_fault(&r, bad[i]), -EINVAL);
		assert_int_not_equal(
			rte_eth_dev_get_port_by_name(r.f_name, &port), 0);
		assert_int_equal(rte_eth_dev_owner_get(r.a, &owner), 0);
		assert_int_equal(owner.id, RTE_ETH_DEV_NO_OWNER);
	}
	assert_int_equal(rte_vdev_init(r.f_name, ""), -EINVAL);
	assert_int_equal(rte_vdev_init(r.f_name, "port=no_such_port"), -ENODEV);

	/* the edges of each range are fine */
	assert_int_equal(rig_try_fault(&r, "drop=0,dup=1,reorder=0.0,"
		"corrupt=1.0,delay=1,delay_us=10000000,reorder_us=0,"
		"seed=0xffffffffffffffff,"
		"dir=both"), 0);
	/* and a port has one fault port at most */
	snprintf(args, sizeof(args), "port=%s", r.a_name);
	assert_int_equal(rte_vdev_init("net_fault_again", args), -EBUSY);
	assert_int_equal(rte_eth_dev_get_port_by_name(r.f_name, &r.f), 0);
	rig_close(&r);
}

static void
test_control_ops_pass_through(void **state __rte_unused)
{
	struct rte_ether_addr mac = {{ 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 }};
	struct rte_eth_dev_info fi, ai;
	struct rte_eth_xstat_name *names;
	struct rte_ether_addr got, got_f;
	struct rte_eth_stats st;
	struct rte_eth_link link;
	struct capture *c = capture_new();
	uint16_t mtu, mtu_f, p;
	int n, i, ret, wrapped = 0, listed_a = 0, listed_f = 0;
	struct rig r;

	rig_open(&r, "");

	assert_int_equal(rte_eth_dev_info_get(r.f, &fi), 0);
	assert_int_equal(rte_eth_dev_info_get(r.a, &ai), 0);
	assert_string_equal(fi.driver_name, "net_fault");
	assert_int_equal(fi.max_mac_addrs, 1);
	assert_int_equal(fi.max_rx_queues, ai.max_rx_queues);
	assert_int_equal(fi.max_tx_queues, ai.max_tx_queues);
	assert_int_equal(fi.nb_rx_queues, 1);

	/* the application sees F, not the port F drives */
	RTE_ETH_FOREACH_DEV(p) {
		listed_a |= p == r.a;
		listed_f |= p == r.f;
	}
	assert_false(listed_a);
	assert_true(listed_f);

	assert_int_equal(rte_eth_link_get_nowait(r.f, &link), 0);
	assert_int_equal(link.link_status, RTE_ETH_LINK_UP);

	assert_int_equal(rte_eth_dev_set_link_down(r.f), 0);
	assert_int_equal(rte_eth_link_get_nowait(r.a, &link), 0);
	assert_int_equal(link.link_status, RTE_ETH_LINK_DOWN);
	assert_int_equal(rte_eth_link_get_nowait(r.f, &link), 0);
	assert_int_equal(link.link_status, RTE_ETH_LINK_DOWN);
	assert_int_equal(rte_eth_dev_set_link_up(r.f), 0);
	assert_int_equal(rte_eth_link_get_nowait(r.f, &link), 0);
	assert_int_equal(link.link_status, RTE_ETH_LINK_UP);

	/* net_ring has no mtu_set: F says the same... */
	ret = rte_eth_dev_set_mtu(r.a, 1400);
	assert_int_equal(rte_eth_dev_set_mtu(r.f, 1400), ret);
	assert_int_equal(rte_eth_dev_get_mtu(r.a, &mtu), 0);
	assert_int_equal(rte_eth_dev_get_mtu(r.f, &mtu_f), 0);
	assert_int_equal(mtu_f, mtu);
	/* ...but F takes any address (its loopback answers to it): A,
	 * which cannot take it, is made promiscuous */
	assert_int_not_equal(rte_eth_dev_default_mac_addr_set(r.a, &mac), 0);
	assert_int_equal(rte_eth_promiscuous_disable(r.a), 0);
	assert_int_equal(rte_eth_dev_default_mac_addr_set(r.f, &mac), 0);
	assert_int_equal(rte_eth_macaddr_get(r.f, &got_f), 0);
	assert_true(rte_is_same_ether_addr(&got_f, &mac));
	assert_int_equal(rte_eth_macaddr_get(r.a, &got), 0);
	assert_false(rte_is_same_ether_addr(&got, &mac));
	assert_int_equal(rte_eth_promiscuous_get(r.a), 1);
	assert_int_equal(rte_eth_promiscuous_disable(r.f), 0);

	assert_int_equal(rte_eth_promiscuous_enable(r.f), 0);
	assert_int_equal(rte_eth_promiscuous_get(r.a), 1);
	assert_int_equal(rte_eth_promiscuous_disable(r.f), 0);
	assert_int_equal(rte_eth_promiscuous_get(r.a), 0);
	assert_int_equal(rte_eth_allmulticast_enable(r.f), 0);
	assert_int_equal(rte_eth_allmulticast_get(r.a), 1);
	assert_int_equal(rte_eth_allmulticast_disable(r.f), 0);
	assert_int_equal(rte_eth_allmulticast_get(r.a), 0);

	traffic(r.f, r.b, 1000, c, QUIET_US);
	assert_int_equal(c->n, 1000);
	assert_int_equal(rte_eth_stats_get(r.f, &st), 0);
	assert_int_equal(st.opackets, 1000);
	assert_int_equal(xstat(r.f, "tx_fault_passed"), 1000);
	assert_int_equal(xstat(r.f, "tx_fault_dropped"), 0);

	/* ours per direction, then the wrapped port's, prefixed */
	n = rte_eth_xstats_get_names(r.f, NULL, 0);
	assert_true(n > 12);
	names = calloc((size_t)n, sizeof(*names));
	assert_non_null(names);
	assert_int_equal(rte_eth_xstats_get_names(r.f, names, (unsigned int)n), n);
	for (i = 0; i < n; i++)
		wrapped += strncmp(names[i].name, "wrapped_", 8) == 0;
	assert_int_equal(wrapped, rte_eth_xstats_get_names(r.a, NULL, 0));
	free(names);
	assert_int_equal(xstat(r.f, "wrapped_tx_good_packets"), 1000);

	assert_int_equal(rte_eth_xstats_reset(r.f), 0);
	assert_int_equal(xstat(r.f, "tx_fault_passed"), 0);
	assert_int_equal(xstat(r.f, "wrapped_tx_good_packets"), 0);

	rig_close(&r);
	capture_free(c);
}

static void
test_drop_loses_about_p_and_counts_each(void **state __rte_unused)
{
	struct capture *c = capture_new();
	uint64_t dropped;
	unsigned int i;
	struct rig r;

	rig_open(&r, "drop=0.1,seed=7");
	traffic(r.f, r.b, NB_FRAMES, c, QUIET_US);

	dropped = xstat(r.f, "tx_fault_dropped");
	assert_int_equal(c->n + dropped, NB_FRAMES);
	assert_binomial(dropped, NB_FRAMES, 0.1);
	assert_int_equal(xstat(r.f, "tx_fault_passed"), c->n);
	assert_int_equal(xstat(r.f, "rx_fault_dropped"), 0);
	for (i = 0; i < c->n; i++) {
		assert_true(rec_exact(&c->r[i]));
		if (i > 0)
			assert_true(rec_seq(&c->r[i]) > rec_seq(&c->r[i - 1]));
	}

	/* counts outlive the queue that made them */
	assert_int_equal(rte_eth_dev_stop(r.f), 0);
	assert_int_equal(rte_eth_tx_queue_setup(r.f, 0, 512,
		rte_eth_dev_socket_id(r.f), NULL), 0);
	assert_int_equal(xstat(r.f, "tx_fault_dropped"), dropped);
	assert_int_equal(rte_eth_xstats_reset(r.f), 0);
	assert_int_equal(xstat(r.f, "tx_fault_dropped"), 0);
	assert_int_equal(xstat(r.f, "tx_fault_passed"), 0);
	rig_close(&r);
	capture_free(c);
}

/*
 * Loopback: frames F sends to its own address come back on its receive
 * side, through its tx and then its rx faults, in order, and none
 * reaches B.
 */
static void
test_frames_to_itself_come_back(void **state __rte_unused)
{
	const uint32_t n = 512;
	struct capture *c = capture_new(), *cb = capture_new();
	struct rte_mbuf *pkts[BURST];
	struct rte_ether_addr own;
	uint64_t dropped, last;
	uint32_t seq = 0, i;
	uint16_t nb;
	struct rig r;

	rig_open(&r, "drop=0.2,seed=3");
	assert_true(droce_eth_fault_loopback(r.f));
	assert_false(droce_eth_fault_loopback(r.b));
	assert_int_equal(rte_eth_macaddr_get(r.f, &own), 0);
	while (seq < n) {
		for (nb = 0; nb < BURST && seq < n; nb++) {
			pkts[nb] = frame_mbuf(seq++);
			memcpy(rte_pktmbuf_mtod(pkts[nb], void *), &own,
			       RTE_ETHER_ADDR_LEN);
		}
		assert_int_equal(rte_eth_tx_burst(r.f, 0, pkts, nb), nb);
		poll_rx(r.f, c);
		poll_rx(r.b, cb);
	}
	for (last = rte_rdtsc();
	     rte_rdtsc() - last < QUIET_US * rte_get_tsc_hz() / US_PER_S; ) {
		if (poll_rx(r.f, c) + poll_rx(r.b, cb) > 0)
			last = rte_rdtsc();
	}
	/* (through the faults of both directions) */
	dropped = xstat(r.f, "tx_fault_dropped");
	assert_binomial(dropped, n, 0.2);
	assert_int_equal(c->n + dropped + xstat(r.f, "rx_fault_dropped"), n);
	assert_true(c->n > 0);
	assert_int_equal(cb->n, 0);
	for (i = 1; i < c->n; i++)
		assert_true(rec_seq(&c->r[i]) > rec_seq(&c->r[i - 1]));
	rig_close(&r);
	capture_free(c);
	capture_free(cb);
}

/* dup on one direction: extras are exact, adjacent and counted */
static void
check_dup(const char *faults, int rx)
{
	struct capture *c = capture_new();
	uint64_t dups, extra = 0;
	unsigned int i;
	struct rig r;

	rig_open(&r, faults);
	if (rx)
		traffic(r.b, r.f, NB_FRAMES, c, QUIET_US);
	else
		traffic(r.f, r.b, NB_FRAMES, c, QUIET_US);

	dups = xstat(r.f, rx ? "rx_fault_duplicated" : "tx_fault_duplicated");
	assert_int_equal(c->n, NB_FRAMES + dups);
	assert_binomial(dups, NB_FRAMES, 0.2);
	for (i = 0; i < c->n; i++) {
		assert_true(rec_exact(&c->r[i]));
		if (i > 0 && rec_seq(&c->r[i]) == rec_seq(&c->r[i - 1]))
			extra++;
		else
			assert_int_equal(rec_seq(&c->r[i]), i - extra);
	}
	assert_int_equal(extra, dups);
	rig_close(&r);
	capture_free(c);
}

static void
test_dup_delivers_exact_extra_copies(void **state __rte_unused)
{
	check_dup("dup=0.2,seed=3,dir=tx", 0);
	check_dup("dup=0.2,seed=3,dir=rx", 1);
}

/* corrupt on one direction: frame i arrives i-th, one bit off or none */
static void
check_corrupt(const char *faults, int rx)
{
	struct capture *c = capture_new();
	uint64_t corrupted, flipped = 0;
	unsigned int i;
	uint32_t bits;
	struct rig r;

	rig_open(&r, faults);
	if (rx)
		traffic(r.b, r.f, NB_FRAMES, c, QUIET_US);
	else
		traffic(r.f, r.b, NB_FRAMES, c, QUIET_US);

	corrupted = xstat(r.f, rx ? "rx_fault_corrupted" : "tx_fault_corrupted");
	assert_int_equal(c->n, NB_FRAMES);
	for (i = 0; i < c->n; i++) {
		bits = rec_bitdiff(&c->r[i], i);
		assert_true(bits <= 1);
		flipped += bits;
	}
	assert_int_equal(flipped, corrupted);
	assert_binomial(corrupted, NB_FRAMES, 0.05);
	rig_close(&r);
	capture_free(c);
}

static void
test_corrupt_flips_one_bit_per_counted_frame(void **state __rte_unused)
{
	check_corrupt("corrupt=0.05,seed=11,dir=tx", 0);
	check_corrupt("corrupt=0.05,seed=11,dir=rx", 1);
}

/* A frame the sender still holds a reference to must not change. */
static void
test_corrupt_copies_shared_frames_first(void **state __rte_unused)
{
	struct rte_mbuf *kept[BURST];
	struct capture *c = capture_new();
	struct rec orig;
	unsigned int i;
	struct rig r;

	rig_open(&r, "corrupt=1,dir=tx");
	for (i = 0; i < BURST; i++) {
		kept[i] = frame_mbuf(i);
		rte_mbuf_refcnt_update(kept[i], 1);
	}
	assert_int_equal(rte_eth_tx_burst(r.f, 0, kept, BURST), BURST);
	while (c->n < BURST)
		poll_rx(r.b, c);
	assert_int_equal(xstat(r.f, "tx_fault_corrupted"), BURST);
	for (i = 0; i < BURST; i++) {
		assert_int_equal(rec_bitdiff(&c->r[i], i), 1);
		assert_int_equal(rte_mbuf_refcnt_read(kept[i]), 1);
		orig.len = rte_pktmbuf_pkt_len(kept[i]);
		memcpy(orig.data, rte_pktmbuf_mtod(kept[i], void *), orig.len);
		assert_int_equal(rec_bitdiff(&orig, i), 0);
		rte_pktmbuf_free(kept[i]);
	}
	rig_close(&r);
	capture_free(c);
}

static void
test_reorder_swaps_with_next_frame_only(void **state __rte_unused)
{
	struct capture *c = capture_new();
	uint8_t *seen = calloc(NB_FRAMES, 1);
	uint32_t seq, max = 0;
	uint64_t reordered, late = 0;
	unsigned int i;
	struct rig r;

	/* p=1: every frame waits for the next, which does not wait */
	rig_open(&r, "reorder=1,dir=tx");
	traffic(r.f, r.b, 10, c, QUIET_US);
	assert_int_equal(c->n, 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(rec_seq(&c->r[i]), i ^ 1);
	assert_int_equal(xstat(r.f, "tx_fault_reordered"), 5);
	rig_close(&r);

	/*
	 * A held frame must not time out behind a preempted sender here:
	 * reorder_us is long, and the last frame, if held, leaves at stop.
	 */
	c->n = 0;
	rig_open(&r, "reorder=0.2,reorder_us=10000000,seed=5,dir=tx");
	traffic(r.f, r.b, NB_FRAMES, c, QUIET_US);
	reordered = xstat(r.f, "tx_fault_reordered");
	assert_int_equal(rte_eth_dev_stop(r.f), 0);
	while (poll_rx(r.b, c) > 0)
		;
	assert_int_equal(c->n, NB_FRAMES);
	for (i = 0; i < c->n; i++) {
		assert_true(rec_exact(&c->r[i]));
		seq = rec_seq(&c->r[i]);
		assert_false(seen[seq]);
		seen[seq] = 1;
		if (i > 0 && seq < max) {
			/* it comes right behind the one frame that passed it */
			assert_int_equal(rec_seq(&c->r[i - 1]), seq + 1);
			late++;
		}
		max = RTE_MAX(max, seq);
	}
	/* only the last frame, if held, had no successor to wait for */
	assert_true(late == reordered ||
		    (late + 1 == reordered &&
		     rec_seq(&c->r[NB_FRAMES - 1]) == NB_FRAMES - 1));
	assert_true(late > NB_FRAMES / 10);
	rig_close(&r);
	free(seen);
	capture_free(c);
}

static void
test_reorder_flushes_a_lone_frame(void **state __rte_unused)
{
	struct capture *c = capture_new();
	struct rig r;

	rig_open(&r, "reorder=1");	/* reorder_us=100 */
	traffic(r.f, r.b, 1, c, QUIET_US);
	assert_int_equal(c->n, 1);
	traffic(r.b, r.f, 1, c, QUIET_US);
	assert_int_equal(c->n, 2);
	assert_int_equal(xstat(r.f, "tx_fault_reordered"), 1);
	assert_int_equal(xstat(r.f, "rx_fault_reordered"), 1);
	rig_close(&r);
	capture_free(c);
}

static void
test_delay_holds_at_least_delay_us(void **state __rte_unused)
{
	const uint64_t delay_us = 100000;
	uint64_t hold = delay_us * rte_get_tsc_hz() / US_PER_S;
	struct capture *c = capture_new();
	uint8_t *seen = calloc(NB_FRAMES, 1);
	uint64_t delayed, held = 0;
	uint32_t seq, last_held = 0;
	unsigned int i;
	struct rig r;

	rig_open(&r, "delay=0.3,delay_us=100000,seed=9,dir=tx");
	traffic(r.f, r.b, NB_FRAMES, c, 2 * delay_us);
	delayed = xstat(r.f, "tx_fault_delayed");
	assert_binomial(delayed, NB_FRAMES, 0.3);
	assert_int_equal(c->n, NB_FRAMES);
	for (i = 0; i < c->n; i++) {
		assert_true(rec_exact(&c->r[i]));
		seq = rec_seq(&c->r[i]);
		assert_false(seen[seq]);
		seen[seq] = 1;
		if (c->r[i].tsc - c->sent_tsc[seq] >= hold) {
			/* delayed frames keep their order among themselves */
			assert_true(held == 0 || seq > last_held);
			last_held = seq;
			held++;
		}
	}
	assert_int_equal(held, delayed);
	rig_close(&r);
	free(seen);
	capture_free(c);
}

/*
 * Frames held back on tx leave on the port's rx bursts of the same
 * queue too: an application that sends no more but polls for frames,
 * as droce's engine does, sees them go out.
 */
static void
test_held_tx_frames_leave_on_rx_bursts(void **state __rte_unused)
{
	const unsigned int nb = 100;
	const uint64_t delay_us = 2000;
	uint64_t end = rte_rdtsc() + 50 * delay_us * rte_get_tsc_hz() /
		US_PER_S;
	struct capture *c = capture_new();
	struct rte_mbuf *pkts[BURST], *in[BURST];
	uint32_t seq = 0;
	uint16_t n, k;
	struct rig r;

	rig_open(&r, "delay=1,delay_us=2000,reorder=0.2,dir=tx");
	while (seq < nb) {
		n = (uint16_t)RTE_MIN((uint32_t)BURST, nb - seq);
		for (k = 0; k < n; k++)
			pkts[k] = frame_mbuf(seq + k);
		assert_int_equal(rte_eth_tx_burst(r.f, 0, pkts, n), n);
		seq += n;
	}
	assert_int_equal(xstat(r.f, "tx_fault_delayed"), nb);
	/* not one tx burst from here on */
	while (c->n < nb && rte_rdtsc() < end) {
		n = rte_eth_rx_burst(r.f, 0, in, BURST);
		rte_pktmbuf_free_bulk(in, n);
		poll_rx(r.b, c);
	}
	assert_int_equal(c->n, nb);
	assert_int_equal(xstat(r.f, "tx_fault_passed"), nb);
	rig_close(&r);
	capture_free(c);
}

/* Run the mix of faults; return the arrivals and the counters. */
static struct capture *
run_mix(const char *faults, uint64_t counts[6])
{
	static const char * const names[] = {
		"tx_fault_dropped", "tx_fault_duplicated", "tx_fault_reordered",
		"tx_fault_corrupted", "tx_fault_passed", "tx_fault_delayed",
	};
	struct capture *c = capture_new();
	unsigned int i;
	struct rig r;

	rig_open(&r, faults);
	traffic(r.f, r.b, NB_FRAMES, c, QUIET_US);
	for (i = 0; i < RTE_DIM(names); i++)
		counts[i] = xstat(r.f, names[i]);
	rig_close(&r);
	return c;
}

static void
test_same_seed_same_faults(void **state __rte_unused)
{
	const char *mix = "drop=0.1,dup=0.1,reorder=0.1,corrupt=0.1,"
			  "reorder_us=10000000,seed=42";
	uint64_t n1[6], n2[6], n3[6];
	struct capture *c1 = run_mix(mix, n1);
	struct capture *c2 = run_mix(mix, n2);
	struct capture *c3 = run_mix("drop=0.1,dup=0.1,reorder=0.1,corrupt=0.1,"
				     "reorder_us=10000000,seed=43", n3);

	assert_true(n1[0] > 0 && n1[1] > 0 && n1[2] > 0 && n1[3] > 0);
	assert_memory_equal(n1, n2, sizeof(n1));
	assert_true(same_arrivals(c1, c2));
	assert_false(same_arrivals(c1, c3));
	capture_free(c1);
	capture_free(c2);
	capture_free(c3);
}

static void
test_dir_rx_leaves_tx_alone(void **state __rte_unused)
{
	struct capture *c = capture_new();
	unsigned int i;
	struct rig r;

	rig_open(&r, "drop=0.5,corrupt=0.5,dup=0.5,dir=rx");
	traffic(r.f, r.b, 2000, c, QUIET_US);
	assert_int_equal(c->n, 2000);
	for (i = 0; i < c->n; i++) {
		assert_true(rec_exact(&c->r[i]));
		assert_int_equal(rec_seq(&c->r[i]), i);
	}
	assert_int_equal(xstat(r.f, "tx_fault_passed"), 2000);
	assert_int_equal(xstat(r.f, "tx_fault_dropped"), 0);
	assert_int_equal(xstat(r.f, "tx_fault_duplicated"), 0);
	assert_int_equal(xstat(r.f, "tx_fault_corrupted"), 0);

	c->n = 0;
	traffic(r.b, r.f, 2000, c, QUIET_US);
	assert_int_equal(c->n + xstat(r.f, "rx_fault_dropped"),
			 2000 + xstat(r.f, "rx_fault_duplicated"));
	assert_true(xstat(r.f, "rx_fault_dropped") > 0);
	assert_true(xstat(r.f, "rx_fault_corrupted") > 0);
	assert_int_equal(xstat(r.f, "rx_fault_passed"), c->n);
	rig_close(&r);

	/* and the other way round */
	c->n = 0;
	rig_open(&r, "drop=1,dir=tx");
	traffic(r.b, r.f, 100, c, QUIET_US);
	assert_int_equal(c->n, 100);
	traffic(r.f, r.b, 100, c, QUIET_US);
	assert_int_equal(c->n, 100);
	assert_int_equal(xstat(r.f, "tx_fault_dropped"), 100);
	assert_int_equal(xstat(r.f, "rx_fault_dropped"), 0);
	rig_close(&r);
	capture_free(c);
}

static void
test_stop_flushes_and_close_releases(void **state __rte_unused)
{
	struct capture *c = capture_new();
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_eth_link link;
	unsigned int i;
	struct rig r;

	/* held for a second: still inside F when it stops */
	rig_open(&r, "delay=1,delay_us=1000000");
	for (i = 0; i < 100; i++) {
		struct rte_mbuf *m = frame_mbuf(i);

		assert_int_equal(rte_eth_tx_burst(r.f, 0, &m, 1), 1);
	}
	poll_rx(r.b, c);
	assert_int_equal(c->n, 0);
	assert_int_equal(rte_eth_dev_stop(r.f), 0);
	/* tx frames went out, in order, as the port stopped */
	while (poll_rx(r.b, c) > 0)
		;
	assert_int_equal(c->n, 100);
	for (i = 0; i < c->n; i++)
		assert_int_equal(rec_seq(&c->r[i]), i);
	assert_int_equal(xstat(r.f, "tx_fault_passed"), 100);
	assert_int_equal(rte_eth_link_get_nowait(r.a, &link), 0);
	assert_int_equal(link.link_status, RTE_ETH_LINK_DOWN);
	assert_int_equal(rte_eth_link_get_nowait(r.f, &link), 0);
	assert_int_equal(link.link_status, RTE_ETH_LINK_DOWN);

	assert_int_equal(rte_eth_dev_start(r.f), 0);
	assert_int_equal(rte_eth_link_get_nowait(r.a, &link), 0);
	assert_int_equal(link.link_status, RTE_ETH_LINK_UP);
	/* rx frames held when the port stops are freed, and counted */
	for (i = 0; i < 50; i++) {
		struct rte_mbuf *m = frame_mbuf(i);

		assert_int_equal(rte_eth_tx_burst(r.b, 0, &m, 1), 1);
	}
	c->n = 0;
	poll_rx(r.f, c);
	poll_rx(r.f, c);
	assert_int_equal(c->n, 0);
	assert_int_equal(xstat(r.f, "rx_fault_delayed"), 50);
	assert_int_equal(rte_eth_dev_stop(r.f), 0);
	assert_int_equal(xstat(r.f, "rx_fault_dropped"), 50);

	assert_int_equal(rte_eth_dev_close(r.f), 0);
	assert_false(rte_eth_dev_is_valid_port(r.f));
	assert_false(rte_eth_dev_is_valid_port(r.a));
	rig_close(&r);

	/* the name is free again */
	memcpy(name, r.f_name, sizeof(name));
	rig_rings(&r);
	memcpy(r.f_name, name, sizeof(name));
	assert_int_equal(rig_try_fault(&r, ""), 0);
	assert_int_equal(rte_eth_dev_get_port_by_name(r.f_name, &r.f), 0);
	rig_close(&r);
	capture_free(c);
}

/* Queue i of F is queue i of A, and each draws its own faults. */
static void
test_queue_i_is_wrapped_queue_i(void **state __rte_unused)
{
	struct capture *c[MAX_QUEUES];
	uint64_t lost = 0;
	uint16_t q;
	struct rig r;

	rig_open_q(&r, "drop=0.5,seed=1,dir=tx", MAX_QUEUES);
	for (q = 0; q < MAX_QUEUES; q++) {
		c[q] = capture_new();
		traffic_q(r.f, r.b, q, 1000, c[q], QUIET_US);
		/* nothing went astray to the other queue */
		assert_int_equal(poll_rx_q(r.b, (uint16_t)(q ^ 1), c[q]), 0);
		lost += 1000 - c[q]->n;
	}
	assert_int_equal(xstat(r.f, "tx_fault_dropped"), lost);
	assert_false(same_arrivals(c[0], c[1]));
	rig_close(&r);
	for (q = 0; q < MAX_QUEUES; q++)
		capture_free(c[q]);
}

/* A full delay FIFO takes no more frames: the caller keeps them. */
static void
test_full_delay_queue_pushes_back(void **state __rte_unused)
{
	struct capture *c = capture_new();
	uint32_t seq, accepted = 0;
	struct rte_mbuf *m;
	unsigned int i;
	struct rig r;

	rig_open(&r, "delay=1,delay_us=1000000,dir=tx");
	for (seq = 0; seq < 6000; seq++) {
		m = frame_mbuf(seq);
		if (rte_eth_tx_burst(r.f, 0, &m, 1) == 0) {
			rte_pktmbuf_free(m);
			break;
		}
		accepted++;
	}
	assert_true(accepted > 0 && accepted < 6000);
	assert_int_equal(xstat(r.f, "tx_fault_delayed"), accepted);
	/* held, not lost: they all leave as the port stops */
	assert_int_equal(rte_eth_dev_stop(r.f), 0);
	while (poll_rx(r.b, c) > 0)
		;
	assert_int_equal(c->n, accepted);
	for (i = 0; i < c->n; i++) {
		assert_true(rec_exact(&c->r[i]));
		assert_int_equal(rec_seq(&c->r[i]), i);
	}
	assert_int_equal(xstat(r.f, "tx_fault_dropped"), 0);
	rig_close(&r);
	capture_free(c);
}

static void
test_uninit_while_started(void **state __rte_unused)
{
	struct rig r;
	unsigned int i;

	rig_open(&r, "delay=1,delay_us=1000000,dir=rx");
	for (i = 0; i < 20; i++) {
		struct rte_mbuf *m = frame_mbuf(i);

		assert_int_equal(rte_eth_tx_burst(r.b, 0, &m, 1), 1);
	}
	{
		struct rte_mbuf *none[BURST];

		assert_int_equal(rte_eth_rx_burst(r.f, 0, none, BURST), 0);
	}
	assert_int_equal(xstat(r.f, "rx_fault_delayed"), 20);
	assert_int_equal(rte_vdev_uninit(r.f_name), 0);
	r.f_removed = 1;
	assert_false(rte_eth_dev_is_valid_port(r.f));
	assert_false(rte_eth_dev_is_valid_port(r.a));
	rig_close(&r);
}


/* ---- switch ------------------------------------------------------------ */

#define SW_MAX 3
#define SW_IP_OFF 14

/* Ports of one switch: each a fault port over a ring port of its own. */
struct swrig {
	unsigned int n;
	unsigned int id;
	uint16_t f[SW_MAX];
	char f_name[SW_MAX][RTE_ETH_NAME_MAX_LEN];
	char a_name[SW_MAX][RTE_ETH_NAME_MAX_LEN];
	struct rte_ring *ring[SW_MAX];
};

/* Port k's address: 02:00:00:00:00:1k. */
static void
sw_mac(uint8_t *mac, unsigned int k)
{
	static const uint8_t base[6] = { 0x02, 0, 0, 0, 0, 0x10 };

	memcpy(mac, base, 6);
	mac[5] = (uint8_t)(0x10 + k);
}

/*
 * An IPv4 frame from port @p from to @p to (SW_MAX: broadcast) of
 * @p len bytes, its TOS's ECN bits @p ecn, sequence number @p seq.
 */
static struct rte_mbuf *
sw_frame(unsigned int from, unsigned int to, uint32_t seq, uint16_t len,
	 uint8_t ecn)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ipv4_hdr *ip;
	uint8_t *p;

	assert_non_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	assert_non_null(p);
	memset(p, 0, len);
	if (to == SW_MAX)
		memset(p, 0xff, 6);
	else
		sw_mac(p, to);
	sw_mac(p + 6, from);
	p[12] = 0x08;
	ip = (struct rte_ipv4_hdr *)(p + SW_IP_OFF);
	ip->version_ihl = 0x45;
	ip->type_of_service = ecn;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - SW_IP_OFF));
	ip->time_to_live = 64;
	ip->next_proto_id = 17;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	memcpy(p + SW_IP_OFF + 20, &seq, sizeof(seq));
	return m;
}

static void
sw_open(struct swrig *s, unsigned int n, const char * const *args)
{
	char name[RTE_RING_NAMESIZE], fargs[256];
	struct rte_ring *r[4];
	unsigned int k;
	int a;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->id = rig_serial++;
	for (k = 0; k < n; k++) {
		snprintf(name, sizeof(name), "sw%u.%u", s->id, k);
		s->ring[k] = rte_ring_create(name, 64, SOCKET_ID_ANY,
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
		assert_non_null(s->ring[k]);
		/* (four queues, for RSS: the ring is never written) */
		r[0] = r[1] = r[2] = r[3] = s->ring[k];
		snprintf(name, sizeof(name), "swa%u.%u", s->id, k);
		a = rte_eth_from_rings(name, r, 4, r, 4, SOCKET_ID_ANY);
		assert_true(a >= 0);
		assert_int_equal(rte_eth_dev_get_name_by_port((uint16_t)a,
			s->a_name[k]), 0);
		snprintf(s->f_name[k], sizeof(s->f_name[k]),
			 "net_fault_sw%u_%u", s->id, k);
		snprintf(fargs, sizeof(fargs), "port=%s,switch=t%u%s%s",
			 s->a_name[k], s->id, args[k][0] != '\0' ? "," : "",
			 args[k]);
		assert_int_equal(rte_vdev_init(s->f_name[k], fargs), 0);
		assert_int_equal(rte_eth_dev_get_port_by_name(s->f_name[k],
							      &s->f[k]), 0);
		port_start(s->f[k]);
	}
}

static void
sw_close(struct swrig *s)
{
	unsigned int k;

	for (k = 0; k < s->n; k++) {
		assert_int_equal(rte_eth_dev_stop(s->f[k]), 0);
		assert_int_equal(rte_eth_dev_close(s->f[k]), 0);
		assert_int_equal(rte_vdev_uninit(s->f_name[k]), 0);
		rte_vdev_uninit(s->a_name[k]);
		ring_drain(s->ring[k]);
	}
	/* frames still queued went back with the switch */
	assert_int_equal(rte_mempool_avail_count(pool), pool_baseline);
}

static void
sw_send(struct swrig *s, unsigned int from, struct rte_mbuf *m)
{
	assert_int_equal(rte_eth_tx_burst(s->f[from], 0, &m, 1), 1);
}

/*
 * Frames @p port receives within @p us, into @p c. The switch's queues
 * keep virtual time, so a frame due within @p us is due however late
 * this thread runs: a last poll after the end, until the port is
 * empty, takes the frames due while it was not running.
 */
static unsigned int
sw_recv_port(uint16_t port, struct capture *c, uint64_t us)
{
	uint64_t end = rte_rdtsc() + us * rte_get_tsc_hz() / US_PER_S;
	unsigned int n = 0, k;

	do
		n += poll_rx(port, c);
	while (rte_rdtsc() < end);
	while ((k = poll_rx(port, c)) != 0)
		n += k;
	return n;
}

/* Frames port @p k receives within @p us, into @p c. */
static unsigned int
sw_recv(struct swrig *s, unsigned int k, struct capture *c, uint64_t us)
{
	return sw_recv_port(s->f[k], c, us);
}

static uint32_t
sw_seq(const struct rec *r)
{
	uint32_t seq;

	memcpy(&seq, r->data + SW_IP_OFF + 20, sizeof(seq));
	return seq;
}

/* Unknown and broadcast destinations go to every other port; a learnt
 * one to its port alone. */
static void
test_switch_forwards_by_learnt_address(void **state __rte_unused)
{
	static const char * const args[SW_MAX] = { "", "", "" };
	struct capture *c = capture_new();
	struct swrig s;

	sw_open(&s, 3, args);
	/* 1 to 0, whose address no port has sent from: to 0 and 2 */
	sw_send(&s, 1, sw_frame(1, 0, 1, 64, 0));
	assert_int_equal(sw_recv(&s, 0, c, 1000), 1);
	assert_int_equal(sw_seq(&c->r[0]), 1);
	assert_int_equal(sw_recv(&s, 2, c, 1000), 1);
	assert_int_equal(xstat(s.f[1], "rx_queue_flooded"), 2);
	/* 0 to 1, learnt: 1 alone */
	sw_send(&s, 0, sw_frame(0, 1, 2, 64, 0));
	assert_int_equal(sw_recv(&s, 1, c, 1000), 1);
	assert_int_equal(sw_seq(&c->r[c->n - 1]), 2);
	assert_int_equal(sw_recv(&s, 2, c, 1000), 0);
	assert_int_equal(sw_recv(&s, 0, c, 1000), 0);
	/* a broadcast from 2: to 0 and 1 */
	sw_send(&s, 2, sw_frame(2, SW_MAX, 3, 64, 0));
	assert_int_equal(sw_recv(&s, 0, c, 1000), 1);
	assert_int_equal(sw_recv(&s, 1, c, 1000), 1);
	assert_int_equal(sw_recv(&s, 2, c, 1000), 0);
	assert_int_equal(xstat(s.f[1], "rx_queue_queued"), 2);
	assert_int_equal(xstat(s.f[1], "rx_queue_sent"), 2);
	assert_int_equal(xstat(s.f[1], "rx_queue_sent_bytes"), 128);
	assert_int_equal(xstat(s.f[1], "rx_queue_dropped"), 0);
	/* a frame to the sender's own address comes back to it alone, as
	 * a NIC's loopback turns it */
	sw_send(&s, 0, sw_frame(0, 0, 4, 64, 0));
	assert_int_equal(sw_recv(&s, 0, c, 1000), 1);
	assert_int_equal(sw_seq(&c->r[c->n - 1]), 4);
	assert_int_equal(sw_recv(&s, 1, c, 1000), 0);
	assert_int_equal(sw_recv(&s, 2, c, 1000), 0);
	sw_close(&s);
	capture_free(c);
}

/*
 * A queue with a rate lets frames out no faster than its line, holds
 * queue= of them (frames with rate_pps=, bytes with rate_mbps=) and drops
 * the rest at its tail.
 */
static void
test_switch_queue_paces_and_drops_at_tail(void **state __rte_unused)
{
	static const char * const pps[SW_MAX] = {
		"rate_pps=1000,queue=10", "", "" };
	static const char * const mbps[SW_MAX] = {
		"rate_mbps=8,queue=1240", "", "" };
	struct capture *c = capture_new();
	struct rte_mbuf *m[50];
	uint64_t t0, hz = rte_get_tsc_hz();
	unsigned int i, got;
	struct swrig s;

	/* 1000 frames/s: 1 ms each; 50 at once into a queue of 10 */
	sw_open(&s, 2, pps);
	sw_send(&s, 0, sw_frame(0, 1, 0, 64, 0));     /* 0's address */
	assert_int_equal(sw_recv(&s, 1, c, 1000), 1);
	for (i = 0; i < RTE_DIM(m); i++)
		m[i] = sw_frame(1, 0, i, 64, 0);
	t0 = rte_rdtsc();
	assert_int_equal(rte_eth_tx_burst(s.f[1], 0, m, RTE_DIM(m)),
			 RTE_DIM(m));
	c->n = 0;
	got = sw_recv(&s, 0, c, 30000);
	print_message("%u of 50 through a queue of 10, the last after "
		      "%.1f ms\n", got,
		      (double)(c->r[got - 1].tsc - t0) * 1e3 / (double)hz);
	assert_true(got >= 10 && got <= 11);
	assert_int_equal(xstat(s.f[0], "rx_queue_dropped"), 50 - got);
	assert_int_equal(xstat(s.f[0], "rx_queue_queued"), got);
	for (i = 0; i < got; i++) {
		assert_int_equal(sw_seq(&c->r[i]), i);
		/* frame i left at i + 1 ms at the soonest */
		assert_true((c->r[i].tsc - t0) * 1000 >= i * hz);
	}
	assert_true((c->r[got - 1].tsc - t0) * 1000 >= got * hz * 9 / 10);
	assert_true(xstat(s.f[0], "rx_queue_backlog_max") >= 9);
	sw_close(&s);

	/* 8 Mb/s: a byte a microsecond; 100-byte frames take 124 us on the
	 * wire; 1240 bytes hold ten */
	sw_open(&s, 2, mbps);
	sw_send(&s, 0, sw_frame(0, 1, 0, 64, 0));
	c->n = 0;
	assert_int_equal(sw_recv(&s, 1, c, 1000), 1);
	for (i = 0; i < 20; i++)
		m[i] = sw_frame(1, 0, i, 100, 0);
	t0 = rte_rdtsc();
	assert_int_equal(rte_eth_tx_burst(s.f[1], 0, m, 20), 20);
	c->n = 0;
	got = sw_recv(&s, 0, c, 20000);
	assert_true(got >= 10 && got <= 11);
	assert_int_equal(xstat(s.f[0], "rx_queue_dropped"), 20 - got);
	assert_true((c->r[got - 1].tsc - t0) * 1000000 >= got * 124 * hz);
	sw_close(&s);
	capture_free(c);
}

/*
 * RED: ECN-capable frames that find fewer than kmin frames ahead pass
 * unmarked, those that find kmax or more are all marked CE, those in
 * between some of them; the IPv4 checksum stays right; frames that are
 * not ECN-capable are never marked.
 */
static void
test_switch_red_marks_between_kmin_and_kmax(void **state __rte_unused)
{
	static const char * const args[SW_MAX] = {
		"rate_pps=200,queue=100,kmin=10,kmax=30,pmax=0.5", "", "" };
	struct capture *c = capture_new();
	struct rte_mbuf *m[62];
	unsigned int i, got, marked = 0, between = 0;
	struct swrig s;

	sw_open(&s, 2, args);
	sw_send(&s, 0, sw_frame(0, 1, 0, 64, 0));
	assert_int_equal(sw_recv(&s, 1, c, 1000), 1);
	for (i = 0; i < 60; i++)
		m[i] = sw_frame(1, 0, i, 64, 2);        /* ECT(0) */
	m[60] = sw_frame(1, 0, 60, 64, 0);              /* not ECT */
	m[61] = sw_frame(1, 0, 61, 64, 1);              /* ECT(1) */
	assert_int_equal(rte_eth_tx_burst(s.f[1], 0, m, 62), 62);
	c->n = 0;
	got = sw_recv(&s, 0, c, 400000);
	assert_int_equal(got, 62);
	for (i = 0; i < got; i++) {
		const struct rte_ipv4_hdr *ip = (const void *)
			(c->r[i].data + SW_IP_OFF);
		uint32_t seq = sw_seq(&c->r[i]);
		bool ce = (ip->type_of_service & 3) == 3;

		assert_int_equal(seq, i);
		assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
		marked += ce;
		if (seq <= 10)
			assert_false(ce);
		else if (seq >= 31 && seq < 60)
			assert_true(ce);
		else if (seq < 31)
			between += ce;
		if (seq == 60)
			assert_int_equal(ip->type_of_service, 0);
		if (seq == 61)
			assert_true(ce);
	}
	print_message("%u marked, %u of them between kmin and kmax\n",
		      marked, between);
	/* between: a chance rising to 0.5, about 5 of 20 */
	assert_true(between >= 1 && between <= 15);
	assert_int_equal(xstat(s.f[0], "rx_queue_ce_marked"), marked);
	sw_close(&s);
	capture_free(c);
}

/* ---- main -------------------------------------------------------------- */

/*
 * Toeplitz, bit by bit, as the RSS specification defines it: for each
 * set bit of the input, the 32 key bits starting at that bit's place
 * are XORed into the hash. (Written apart from DPDK's rte_softrss(),
 * which net_fault and droce use, so that both are checked.)
 */
static uint32_t
toeplitz(const uint8_t *key, const uint8_t *in, unsigned int len)
{
	uint32_t hash = 0;
	unsigned int i, b;

	for (i = 0; i < len; i++)
		for (b = 0; b < 8; b++) {
			unsigned int at = i * 8 + b, k;
			uint32_t w = 0;

			if (!(in[i] & (0x80 >> b)))
				continue;
			for (k = 0; k < 32; k++)
				if (key[(at + k) / 8] & (0x80 >> ((at + k) % 8)))
					w |= 1u << (31 - k);
			hash ^= w;
		}
	return hash;
}

static const uint8_t rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/*
 * The verification values of the RSS specification for that key:
 * 66.9.149.187:2794 to 161.142.100.80:1766 hashes to 0x51ccc178 with its
 * ports, 0x323e8fc2 without. This test's Toeplitz gives them, and so
 * does net_fault's hash of the frame (UDP here, as TCP there: the same
 * tuple).
 */
static void
test_rss_hash_matches_the_specification(void **state __rte_unused)
{
	static const uint8_t tuple[12] = {
		66, 9, 149, 187, 161, 142, 100, 80,
		2794 >> 8, 2794 & 0xff, 1766 >> 8, 1766 & 0xff,
	};
	static const uint8_t v6[36] = {
		0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff,
		0, 0, 0, 0, 0, 0, 0, 7,
		0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03,
		0, 0, 0, 0, 0, 0, 0, 1,
		2794 >> 8, 2794 & 0xff, 1766 >> 8, 1766 & 0xff,
	};
	uint8_t f[14 + 40 + 8];
	uint32_t h;

	assert_int_equal(toeplitz(rss_key, tuple, 12), 0x51ccc178);
	assert_int_equal(toeplitz(rss_key, tuple, 8), 0x323e8fc2);
	assert_int_equal(toeplitz(rss_key, v6, 36), 0x40207d3d);

	memset(f, 0, sizeof(f));
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 9] = IPPROTO_UDP;
	memcpy(f + 14 + 12, tuple, 8);
	memcpy(f + 14 + 20, tuple + 8, 4);
	assert_true(droce_fault_rss_hash(f, 14 + 20 + 8, rss_key,
					 RTE_ETH_RSS_NONFRAG_IPV4_UDP, &h));
	assert_int_equal(h, 0x51ccc178);
	/* not a function asked for, not UDP, a fragment: no hash */
	assert_false(droce_fault_rss_hash(f, 14 + 20 + 8, rss_key,
					  RTE_ETH_RSS_NONFRAG_IPV6_UDP, &h));
	f[14 + 6] = 0x20;	/* more fragments */
	assert_false(droce_fault_rss_hash(f, 14 + 20 + 8, rss_key,
					  RTE_ETH_RSS_NONFRAG_IPV4_UDP, &h));
	f[14 + 6] = 0;
	f[14 + 9] = IPPROTO_TCP;
	assert_false(droce_fault_rss_hash(f, 14 + 20 + 8, rss_key,
					  RTE_ETH_RSS_NONFRAG_IPV4_UDP, &h));

	memset(f, 0, sizeof(f));
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[14 + 6] = IPPROTO_UDP;
	memcpy(f + 14 + 8, v6, 32);
	memcpy(f + 14 + 40, v6 + 32, 4);
	assert_true(droce_fault_rss_hash(f, sizeof(f), rss_key,
					 RTE_ETH_RSS_NONFRAG_IPV6_UDP, &h));
	assert_int_equal(h, 0x40207d3d);
}

/*
 * A switch port configured for RSS over four receive queues puts each
 * UDP frame on the queue its hash picks from the default redirection
 * table (entry hash % 128, queue entry % 4), and frames that are not
 * UDP on queue 0. Without RSS every frame goes to queue 0.
 */
static void
test_switch_rss_spreads_by_toeplitz(void **state __rte_unused)
{
	static const char * const args[SW_MAX] = { "", "" };
	struct rte_eth_conf conf;
	struct capture *c[4];
	struct swrig s;
	unsigned int got[4] = { 0 }, q, i, nb = 256;
	uint16_t k;

	sw_open(&s, 2, args);
	assert_int_equal(rte_eth_dev_stop(s.f[1]), 0);
	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf.rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)rss_key;
	conf.rx_adv_conf.rss_conf.rss_key_len = sizeof(rss_key);
	conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_NONFRAG_IPV4_UDP;
	assert_int_equal(rte_eth_dev_configure(s.f[1], 4, 1, &conf), 0);
	for (k = 0; k < 4; k++)
		assert_int_equal(rte_eth_rx_queue_setup(s.f[1], k, 512,
			rte_eth_dev_socket_id(s.f[1]), NULL, pool), 0);
	assert_int_equal(rte_eth_tx_queue_setup(s.f[1], 0, 512,
		rte_eth_dev_socket_id(s.f[1]), NULL), 0);
	assert_int_equal(rte_eth_dev_start(s.f[1]), 0);
	for (q = 0; q < 4; q++)
		c[q] = capture_new();

	/* 1 makes its address known; then 0 sends it frames whose UDP
	 * ports are their sequence numbers, 10.0.0.1 to 10.0.0.2 */
	sw_send(&s, 1, sw_frame(1, 0, 0, 64, 0));
	assert_int_equal(sw_recv(&s, 0, c[0], 1000), 1);
	c[0]->n = 0;
	for (i = 0; i < nb; i++) {
		struct rte_mbuf *m = sw_frame(0, 1, 0xc0001000u + i * 7919,
					      64, 0);
		uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *,
						      SW_IP_OFF);
		static const uint8_t addrs[8] = { 10, 0, 0, 1, 10, 0, 0, 2 };

		memcpy(ip + 12, addrs, 8);
		if (i == nb - 1)
			ip[9] = IPPROTO_TCP;	/* not hashed: queue 0 */
		sw_send(&s, 0, m);
	}
	for (i = 0; i < 100; i++)
		for (q = 0; q < 4; q++)
			got[q] += poll_rx_q(s.f[1], (uint16_t)q, c[q]);
	assert_int_equal(got[0] + got[1] + got[2] + got[3], nb);
	for (q = 0; q < 4; q++) {
		/* a quarter each, give or take */
		assert_true(got[q] > nb / 8);
		for (i = 0; i < c[q]->n; i++) {
			const uint8_t *ip = c[q]->r[i].data + SW_IP_OFF;
			uint8_t tuple[12];

			if (ip[9] != IPPROTO_UDP) {
				assert_int_equal(q, 0);
				continue;
			}
			memcpy(tuple, ip + 12, 8);
			memcpy(tuple + 8, ip + 20, 4);
			assert_int_equal(toeplitz(rss_key, tuple, 12) % 128 % 4,
					 q);
		}
		capture_free(c[q]);
	}
	sw_close(&s);
}

/*
 * droce_eth_fault.h: a fault port over a port, a switch's ports and what
 * they need of their user, made by a program instead of --vdev.
 */
static void
test_application_interface(void **state __rte_unused)
{
	struct swrig s;
	struct capture *c = capture_new();
	char name[32], want[RTE_ETH_NAME_MAX_LEN];
	unsigned int k;
	struct rig r;
	int f;

	/* over a port: named net_fault_<name>, owning what it wraps */
	rig_rings(&r);
	assert_true(droce_eth_fault_wrap("api_bad", r.a, "drop=2") < 0);
	snprintf(name, sizeof(name), "api%u", rig_serial);
	f = droce_eth_fault_wrap(name, r.a, "drop=1");
	assert_true(f >= 0);
	r.f = (uint16_t)f;
	snprintf(want, sizeof(want), "net_fault_%s", name);
	assert_int_equal(rte_eth_dev_get_port_by_name(want, &r.f), 0);
	assert_int_equal(r.f, f);
	snprintf(r.f_name, sizeof(r.f_name), "%s", want);
	assert_int_equal(droce_eth_fault_wrap(name, r.b, ""), -EEXIST);
	assert_true(droce_eth_fault_wrap("api_owned", r.a, "") < 0);
	assert_false(droce_eth_fault_dma_only(r.f));
	assert_false(droce_eth_fault_dma_only(r.b));
	assert_false(droce_eth_fault_dma_only(RTE_MAX_ETHPORTS - 1));
	port_start(r.f);
	port_start(r.b);
	traffic(r.f, r.b, 100, c, QUIET_US);
	assert_int_equal(c->n, 0);
	assert_int_equal(xstat(r.f, "tx_fault_dropped"), 100);
	rig_close(&r);

	/* reading only memory mapped for its DMA */
	rig_rings(&r);
	snprintf(name, sizeof(name), "api%u", rig_serial);
	f = droce_eth_fault_wrap(name, r.a, "dma=1");
	assert_true(f >= 0);
	r.f = (uint16_t)f;
	snprintf(r.f_name, sizeof(r.f_name), "net_fault_%s", name);
	assert_true(droce_eth_fault_dma_only(r.f));
	rig_close(&r);

	/* two ports of a switch, which reach each other */
	memset(&s, 0, sizeof(s));
	s.n = 2;
	s.id = rig_serial++;
	for (k = 0; k < s.n; k++) {
		char sw[16];

		snprintf(name, sizeof(name), "apisw%u.%u", s.id, k);
		snprintf(sw, sizeof(sw), "t%u", s.id);
		f = droce_eth_fault_switch_port(name, sw, 4, SOCKET_ID_ANY,
						k == 1 ? "rate_mbps=1000" : "");
		assert_true(f >= 0);
		s.f[k] = (uint16_t)f;
		snprintf(s.f_name[k], sizeof(s.f_name[k]), "net_fault_%s",
			 name);
		port_start(s.f[k]);
	}
	assert_true(droce_eth_fault_switch_port("apisw_bad", "t", 17,
						SOCKET_ID_ANY, "") < 0);
	assert_true(droce_eth_fault_switch_port("apisw_bad", "t", 1,
						SOCKET_ID_ANY, "kmin=x") < 0);
	sw_send(&s, 0, sw_frame(0, 1, 7, 64, 0));
	assert_int_equal(sw_recv(&s, 1, c, 1000), 1);
	sw_send(&s, 1, sw_frame(1, 0, 8, 64, 0));
	assert_int_equal(sw_recv(&s, 0, c, 1000), 1);
	assert_int_equal(sw_seq(&c->r[0]), 7);
	assert_int_equal(sw_seq(&c->r[1]), 8);
	for (k = 0; k < s.n; k++) {
		assert_int_equal(rte_eth_dev_stop(s.f[k]), 0);
		assert_int_equal(rte_eth_dev_close(s.f[k]), 0);
		assert_int_equal(rte_vdev_uninit(s.f_name[k]), 0);
	}
	assert_int_equal(rte_mempool_avail_count(pool), pool_baseline);
	capture_free(c);
}

static void
ext_free(void *addr __rte_unused, void *opaque __rte_unused)
{
}

/* (frames of 64 + PL bytes: the capture takes up to FRAME_MAX) */
#define PL 60

/* One frame on F: its first 64 bytes from the pool, then @p len from
 * @p ext at IO address @p iova. @return how many B received. */
static unsigned int
dma_send(struct rig *r, struct rte_mbuf_ext_shared_info *sh, uint8_t *ext,
	 uint64_t iova, uint16_t len, struct capture *c)
{
	struct rte_mbuf *h = rte_pktmbuf_alloc(pool);
	struct rte_mbuf *p = rte_pktmbuf_alloc(pool);
	uint8_t *d;

	assert_non_null(h);
	assert_non_null(p);
	d = (uint8_t *)rte_pktmbuf_append(h, 64);
	memset(d, 0, 64);
	memset(d, 0xff, 12);
	rte_mbuf_ext_refcnt_update(sh, 1);
	rte_pktmbuf_attach_extbuf(p, ext, iova, len, sh);
	p->data_len = len;
	h->next = p;
	h->nb_segs = 2;
	h->pkt_len = 64u + len;
	assert_int_equal(rte_eth_tx_burst(r->f, 0, &h, 1), 1);
	rte_eth_tx_burst(r->f, 0, NULL, 0);
	return sw_recv_port(r->b, c, 2000);
}

/*
 * dma=1: F sends what a NIC behind an IOMMU could read. Bytes from the
 * mbuf pool (DPDK's memory) pass; bytes of memory of the test's own
 * pass only once registered with rte_extmem_register() and mapped for
 * F with rte_dev_dma_map(), at the IO address they were mapped at, and
 * no longer once unmapped. Each frame that could not be read is counted
 * and freed. Without dma=1 any memory passes.
 */
static void
test_dma_sends_mapped_memory_only(void **state __rte_unused)
{
	struct rte_mbuf_ext_shared_info sh = { .free_cb = ext_free };
	struct capture *c = capture_new();
	struct rte_eth_dev_info info;
	size_t pg = 4096, len = 4 * pg;
	uint8_t *mem = aligned_alloc(pg, len);
	uint64_t iova;
	struct rig r;

	assert_non_null(mem);
	memset(mem, 0x5a, len);
	iova = (uint64_t)(uintptr_t)mem;
	rte_mbuf_ext_refcnt_set(&sh, 1);

	rig_open(&r, "dma=1");
	assert_int_equal(rte_eth_dev_info_get(r.f, &info), 0);
	/* not mapped: lost */
	assert_int_equal(dma_send(&r, &sh, mem + 100, iova + 100, PL, c),
			 0);
	assert_int_equal(xstat(r.f, "tx_fault_unmapped"), 1);
	/* mapped */
	assert_int_equal(rte_extmem_register(mem, len, NULL, 0, pg), 0);
	assert_int_equal(rte_dev_dma_map(info.device, mem, iova, len), 0);
	assert_int_equal(dma_send(&r, &sh, mem + 100, iova + 100, PL, c),
			 1);
	assert_int_equal(dma_send(&r, &sh, mem + len - PL,
				  iova + len - PL, PL, c), 1);
	/* at another IO address than mapped, or beyond the range: lost */
	assert_int_equal(dma_send(&r, &sh, mem + 100, iova + 100 + pg, PL,
				  c), 0);
	assert_int_equal(dma_send(&r, &sh, mem + len - PL / 2,
				  iova + len - PL / 2,
				  PL, c), 0);
	assert_int_equal(xstat(r.f, "tx_fault_unmapped"), 3);
	/* unmapped: lost again */
	assert_int_equal(rte_dev_dma_unmap(info.device, mem, iova, len), 0);
	assert_int_equal(dma_send(&r, &sh, mem + 100, iova + 100, PL, c),
			 0);
	assert_int_equal(xstat(r.f, "tx_fault_unmapped"), 4);
	assert_int_equal(rte_extmem_unregister(mem, len), 0);
	rig_close(&r);

	/* a port without dma=1 reads any memory */
	rig_open(&r, "");
	assert_int_equal(dma_send(&r, &sh, mem + 100, iova + 100, PL, c),
			 1);
	assert_int_equal(xstat(r.f, "tx_fault_unmapped"), 0);
	rig_close(&r);
	/* every frame let go of the memory */
	assert_int_equal(rte_mbuf_ext_refcnt_read(&sh), 1);
	free(mem);
	capture_free(c);
}

static int
test_setup(void **state __rte_unused)
{
	pool_baseline = rte_mempool_avail_count(pool);
	return 0;
}

/*
 * Nothing to do after a test that passed. After one that failed half-way,
 * close every port and empty every ring, so that the next test starts
 * clean (mbufs the failed test still held stay lost: the baseline moves).
 */
static int
test_teardown(void **state __rte_unused)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_ring *ring;
	unsigned int i;
	uint16_t p;

	for (p = 0; p < RTE_MAX_ETHPORTS; p++) {
		if (!rte_eth_dev_is_valid_port(p) ||
		    rte_eth_dev_get_name_by_port(p, name) != 0)
			continue;
		rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
		rte_vdev_uninit(name);
	}
	for (i = 0; i < 2 * MAX_QUEUES * rig_serial; i++) {
		ring_name(name, sizeof(name), i & 1 ? "ba" : "ab",
			  i / (2 * MAX_QUEUES), (i / 2) % MAX_QUEUES);
		ring = rte_ring_lookup(name);
		if (ring != NULL)
			ring_drain(ring);
	}
	return 0;
}

#define FAULT_TEST(t) cmocka_unit_test_setup_teardown(t, test_setup, \
						      test_teardown)

static int
eal_setup(void **state __rte_unused)
{
	char *argv[] = {
		"test_fault",
		"--no-huge",
		"-m",
		"256",
		"--no-pci",
		"--no-shconf",	/* --in-memory: refused with --no-huge */
		"--log-level=pmd.net.fault:debug",
		"-l",
		"0",
		"--vdev=net_ring_cl",
		"--vdev=net_fault_cl,port=net_ring_cl",
	};

	if (rte_eal_init((int)RTE_DIM(argv), argv) < 0)
		return -1;
	pool = rte_pktmbuf_pool_create("fault_test", POOL_SIZE, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
	return pool != NULL ? 0 : -1;
}

static int
eal_teardown(void **state __rte_unused)
{
	rte_mempool_free(pool);
	return rte_eal_cleanup();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		FAULT_TEST(test_vdev_from_eal_command_line),
		FAULT_TEST(test_bad_devargs_are_refused),
		FAULT_TEST(test_control_ops_pass_through),
		FAULT_TEST(test_drop_loses_about_p_and_counts_each),
		FAULT_TEST(test_frames_to_itself_come_back),
		FAULT_TEST(test_dup_delivers_exact_extra_copies),
		FAULT_TEST(test_corrupt_flips_one_bit_per_counted_frame),
		FAULT_TEST(test_corrupt_copies_shared_frames_first),
		FAULT_TEST(test_reorder_swaps_with_next_frame_only),
		FAULT_TEST(test_reorder_flushes_a_lone_frame),
		FAULT_TEST(test_delay_holds_at_least_delay_us),
		FAULT_TEST(test_same_seed_same_faults),
		FAULT_TEST(test_dir_rx_leaves_tx_alone),
		FAULT_TEST(test_stop_flushes_and_close_releases),
		FAULT_TEST(test_queue_i_is_wrapped_queue_i),
		FAULT_TEST(test_full_delay_queue_pushes_back),
		FAULT_TEST(test_uninit_while_started),
		FAULT_TEST(test_switch_forwards_by_learnt_address),
		FAULT_TEST(test_switch_queue_paces_and_drops_at_tail),
		FAULT_TEST(test_switch_red_marks_between_kmin_and_kmax),
		FAULT_TEST(test_rss_hash_matches_the_specification),
		FAULT_TEST(test_switch_rss_spreads_by_toeplitz),
		FAULT_TEST(test_dma_sends_mapped_memory_only),
		FAULT_TEST(test_held_tx_frames_leave_on_rx_bursts),
		FAULT_TEST(test_application_interface),
	};

	return cmocka_run_group_tests(tests, eal_setup, eal_teardown);
}
