/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Two processes, each with its own droce device, joined by a net_memif
 * link: the server and the client swap QPN, PSN, GID, rkey and buffer
 * address over a pipe (as rdma-core's examples do over TCP), then the
 * client runs SEND, SEND with immediate, RDMA WRITE, RDMA READ and both
 * atomics, sizes around the path MTU up to 1 MiB, and both sides check
 * every byte.
 *
 * With "starved", the same two processes on a machine kept busy on
 * purpose: two busy threads per CPU of other processes, at the same
 * priority, for the whole run. The pair plays ping-pong with 4096-byte
 * SENDs, 1000 round trips polled as ibv_rc_pingpong polls, the QPs'
 * timeout 14 and retry_cnt 7 (0.47 s of retransmissions): every one must
 * complete, 20 ms each at most on average. An engine that
 * yields its CPU among such threads (given as IDLE_YIELD_US; droce's
 * default is not to) is kept off its core for hundreds of milliseconds
 * under Linux's EEVDF scheduler, and the pair fails.
 *
 * With "shared", each process and its engine lcore share one CPU (the
 * server's 1, the client's 0), as a program pinned with taskset runs: the
 * same checks of every opcode, then 1000 round trips of an 8-byte WRITE
 * ping-pong in which each side waits for the other's WRITE by spinning
 * on its own memory, as ib_write_lat does, calling nothing of droce's.
 * Every round trip must complete (the engine still gets the CPU it
 * shares with a thread that never yields), and each side's app_passes
 * counter must show that its application thread ran engine passes
 * itself as it posted and polled (run_to_completion's default, auto).
 *
 * With "killed", the peer dies mid-transfer and another takes its place.
 * The server process has, besides its memif device droce0, droce1 and
 * droce2 on a net_ring pair, all three on one engine lcore, with SENDs
 * streaming between them the whole time. The server streams WRITEs to
 * the first client, which the test kills (SIGKILL) once some have
 * landed: the server's QP ends in IBV_WC_RETRY_EXC_ERR after exactly
 * retry_cnt + 1 timeouts and within the time they take (plus a second
 * for the machine), the WRs behind it flushed; the memif link going
 * down raises IBV_EVENT_PORT_ERR; every SEND between droce1 and droce2
 * completes, each received whole. Then a second client process connects
 * to the same socket: IBV_EVENT_PORT_ACTIVE, and a new QP pair to it
 * runs every opcode as above. At the end the server's mbuf pool holds
 * what it held before any QP was made.
 *
 * With "restart", servers run again on the same configuration, socket
 * path (a file in WORKDIR) and all: two runs in a row, each a server
 * process serving a client as above and exiting; both start and serve,
 * and no socket file outlives either. Then a third, killed (SIGKILL) once
 * connected: its socket file stays behind, and a fourth run on the same
 * configuration replaces it, says so in its log, and serves its client.
 *
 * With "served", a second server on the socket a live one serves: its
 * ibv_get_device_list() fails with EADDRINUSE and its log names the
 * socket and the live server's pid; the socket file is left as it was,
 * and the first server then serves its client.
 *
 * With "together", a server and a client process started at the same
 * moment, 50 times in a row, as mpirun and ucx_perftest start both sides:
 * released together, or the server or the client first by up to 300 ms,
 * in turn, half of the rounds with link_wait_s set as in the memif sample
 * configurations. In every round both ports must be active within
 * 3 s (with link_wait_s, as soon as the device is open), and a SEND each
 * way must land. A client that connects while the server's port is
 * probed but not started is refused by net_memif ("ID 0 not found"), and
 * nothing in DPDK connects it again.
 *
 * Usage: test_memif WORKDIR
 *                   [starved [IDLE_YIELD_US] | shared | killed | restart |
 *                    served | together]
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALIGN_UP(v, a) (((v) + (a) - 1) / (a) * (a))

#include <rte_lcore.h>
#include <rte_mempool.h>

#include <droce.h>

#include "harness.h"

#define BUF (4u << 20)
#define TIMEOUT_MS 10000

struct info {
	uint32_t qpn;
	uint32_t psn;
	union ibv_gid gid;
	uint32_t rkey;
	uint64_t addr;
};

static const char *role;
static int wfd, rfd;
static bool starved;
static bool killed;
static bool shared;
/* the configurations written once, by the test, for every run */
static bool same_config;
/* the memif socket a file in WORKDIR, not an abstract socket (which
 * goes with the last process that has it) */
static bool socket_file;
/* where the test hears that this side has opened its device ('o') and,
 * doomed, that it is connected ('c'); -1: nobody listens */
static int ready_fd = -1;
static const char *idle_yield_us;     /* the engine's, if given */
static unsigned int link_wait_s;      /* the engine's, if not 0 */

#define PINGPONGS 1000
#define PINGPONG_LEN 4096

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "test_memif %s: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

#define CHECK(cond) do { \
	if (!(cond)) \
		die("%s:%d: %s", __FILE__, __LINE__, #cond); \
} while (0)

static void
put(const void *p, size_t len)
{
	CHECK(write(wfd, p, len) == (ssize_t)len);
}

static void
get(void *p, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(rfd, (uint8_t *)p + got, len - got);

		CHECK(n > 0);
		got += (size_t)n;
	}
}

static void
token(char t)
{
	char c;

	put(&t, 1);
	get(&c, 1);
	CHECK(c == t);
}

/* Tell the test @p t (ready_fd), if it listens. */
static void
tell(char t)
{
	if (ready_fd >= 0)
		CHECK(write(ready_fd, &t, 1) == 1);
}

static void
write_config(const char *dir, const char *name, const char *memif_role,
	     int last_octet, int core)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.ini", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fprintf(f, "[eal]\nargs = --no-huge -m 256 --no-pci --no-shconf "
		"--file-prefix=droce-test-%s-%d "
		"--vdev=net_memif0,role=%s,socket=%s/memif.sock,%sid=0\n"
		"[engine]\ncores = %d\npcap = %s/%s.pcap\n%s%s%s\n",
		name, (int)getpid(), memif_role, dir,
		socket_file ? "socket-abstract=no," : "", core, dir, name,
		idle_yield_us != NULL ? "idle_yield_us = " : "",
		idle_yield_us != NULL ? idle_yield_us : "",
		idle_yield_us != NULL ? "\n" : "");
	if (link_wait_s != 0)
		fprintf(f, "link_wait_s = %u\n", link_wait_s);
	fprintf(f, "[device droce0]\nport = net_memif0\n"
		"mac = 02:d7:0c:e0:09:%02x\nipv4 = 10.9.0.%d/24\n",
		last_octet, last_octet);
	/* the server's other QPs: two devices on a net_ring pair, driven
	 * by the same lcore as the memif port */
	if (killed && strcmp(memif_role, "server") == 0)
		fprintf(f, "[device droce1]\nport = ring:killed:0\n"
			"mac = 02:d7:0c:e0:0a:01\nipv4 = 10.9.1.1/24\n"
			"[device droce2]\nport = ring:killed:1\n"
			"mac = 02:d7:0c:e0:0a:02\nipv4 = 10.9.1.2/24\n");
	CHECK(fclose(f) == 0);
	CHECK(setenv("DROCE_CONFIG", path, 1) == 0);
}

/* Point DROCE_CONFIG at DIR/NAME.ini, written already. */
static void
use_config(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.ini", dir, name);
	CHECK(setenv("DROCE_CONFIG", path, 1) == 0);
}

static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 4096, 65537,
				  1u << 20 };

#define expect_ok(cq, op, wc) expect_ok_at(__LINE__, cq, op, wc)

static void
expect_ok_at(int line, struct ibv_cq *cq, enum ibv_wc_opcode op,
	     struct ibv_wc *wc)
{
	if (ep_poll(cq, wc, 1, TIMEOUT_MS) != 1)
		die("line %d: no completion in %d ms", line, TIMEOUT_MS);
	if (wc->status != IBV_WC_SUCCESS)
		die("completion status %s", ibv_wc_status_str(wc->status));
	CHECK(wc->opcode == op);
}

static void
server(struct ep *e, const struct info *peer)
{
	static uint8_t want[BUF];
	struct ibv_wc wc;
	uint64_t *word = (uint64_t *)(void *)(e->buf + BUF - 64);
	size_t i, off;

	(void)peer;
	/* SEND: every size lands whole, each in a buffer of its own (the
	 * client does not wait for our checks) */
	for (i = 0, off = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		CHECK(ep_post_recv(e, i, off, sizes[i] + 64) == 0);
		off += ALIGN_UP(sizes[i] + 64, 64);
	}
	token('s');
	for (i = 0, off = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		expect_ok(e->rcq, IBV_WC_RECV, &wc);
		CHECK(wc.wr_id == i);
		CHECK(wc.byte_len == sizes[i]);
		fill_pattern(want, sizes[i], 100 + (uint32_t)i);
		CHECK(memcmp(e->buf + off, want, sizes[i]) == 0);
		off += ALIGN_UP(sizes[i] + 64, 64);
	}
	/* SEND with immediate */
	CHECK(ep_post_recv(e, 77, 0, 64) == 0);
	token('i');
	expect_ok(e->rcq, IBV_WC_RECV, &wc);
	CHECK(wc.wc_flags & IBV_WC_WITH_IMM);
	CHECK(ntohl(wc.imm_data) == 0x12345678);
	/* WRITE: the client's pattern appears in our buffer */
	token('w');
	token('W');
	fill_pattern(want, 1u << 20, 200);
	CHECK(memcmp(e->buf + 8, want, 1u << 20) == 0);
	/* READ: the client reads a pattern of ours */
	fill_pattern(e->buf + (2u << 20), 1u << 20, 300);
	token('r');
	token('R');
	/* atomics on a word of ours */
	*word = 1000;
	token('a');
	token('A');
	CHECK(*word == 1000 + 5 + 5);
}

static void
client(struct ep *e, const struct info *peer)
{
	struct ibv_wc wc;
	uint64_t *orig = (uint64_t *)(void *)(e->buf + BUF - 8);
	struct ep remote = { 0 };
	struct ibv_mr mr = { 0 };
	size_t i;

	/* what ep_post needs of the other side */
	remote.buf = (uint8_t *)(uintptr_t)peer->addr;
	mr.rkey = peer->rkey;
	remote.mr = &mr;

	token('s');
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill_pattern(e->buf, sizes[i], 100 + (uint32_t)i);
		CHECK(ep_post(e, IBV_WR_SEND, i, 0, sizes[i], NULL, 0,
			      IBV_SEND_SIGNALED) == 0);
		expect_ok(e->scq, IBV_WC_SEND, &wc);
	}
	{
		struct ibv_sge sge = { (uintptr_t)e->buf, 16, e->mr->lkey };
		struct ibv_send_wr wr = { 0 }, *bad;

		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(0x12345678);
		token('i');
		CHECK(ibv_post_send(e->qp, &wr, &bad) == 0);
		expect_ok(e->scq, IBV_WC_SEND, &wc);
	}
	token('w');
	fill_pattern(e->buf, 1u << 20, 200);
	CHECK(ep_post(e, IBV_WR_RDMA_WRITE, 1, 0, 1u << 20, &remote, 8,
		      IBV_SEND_SIGNALED) == 0);
	expect_ok(e->scq, IBV_WC_RDMA_WRITE, &wc);
	token('W');
	token('r');
	{
		static uint8_t want[1u << 20];

		memset(e->buf + 4096, 0, 1u << 20);
		CHECK(ep_post(e, IBV_WR_RDMA_READ, 2, 4096, 1u << 20, &remote,
			      2u << 20, IBV_SEND_SIGNALED) == 0);
		expect_ok(e->scq, IBV_WC_RDMA_READ, &wc);
		fill_pattern(want, 1u << 20, 300);
		CHECK(memcmp(e->buf + 4096, want, 1u << 20) == 0);
	}
	token('R');
	token('a');
	{
		struct ibv_sge sge = { (uintptr_t)orig, 8, e->mr->lkey };
		struct ibv_send_wr wr = { 0 }, *bad;

		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.atomic.remote_addr = peer->addr + BUF - 64;
		wr.wr.atomic.rkey = peer->rkey;

		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.compare_add = 5;
		CHECK(ibv_post_send(e->qp, &wr, &bad) == 0);
		expect_ok(e->scq, IBV_WC_FETCH_ADD, &wc);
		CHECK(*orig == 1000);
		/* compare fails: nothing swapped, the value comes back */
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 99;
		CHECK(ibv_post_send(e->qp, &wr, &bad) == 0);
		expect_ok(e->scq, IBV_WC_COMP_SWAP, &wc);
		CHECK(*orig == 1005);
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.compare_add = 5;
		CHECK(ibv_post_send(e->qp, &wr, &bad) == 0);
		expect_ok(e->scq, IBV_WC_FETCH_ADD, &wc);
		CHECK(*orig == 1005);
	}
	token('A');
}

/*
 * Ping-pong: the client SENDs, the server answers each SEND it receives
 * with one of its own; both poll their CQs without pause.
 */
static void
pingpong(struct ep *e, bool is_server)
{
	struct ibv_wc wc;
	uint64_t worst = 0, t0, start;
	int i;

	CHECK(ep_post_recv(e, 1, PINGPONG_LEN, PINGPONG_LEN) == 0);
	token('p');
	start = ep_now_ms();
	for (i = 0; i < PINGPONGS; i++) {
		t0 = ep_now_ms();
		if (!is_server)
			CHECK(ep_post(e, IBV_WR_SEND, 2, 0, PINGPONG_LEN, NULL,
				      0, IBV_SEND_SIGNALED) == 0);
		expect_ok(e->rcq, IBV_WC_RECV, &wc);
		CHECK(wc.byte_len == PINGPONG_LEN);
		CHECK(ep_post_recv(e, 1, PINGPONG_LEN, PINGPONG_LEN) == 0);
		if (is_server)
			CHECK(ep_post(e, IBV_WR_SEND, 2, 0, PINGPONG_LEN, NULL,
				      0, IBV_SEND_SIGNALED) == 0);
		expect_ok(e->scq, IBV_WC_SEND, &wc);
		if (ep_now_ms() - t0 > worst)
			worst = ep_now_ms() - t0;
	}
	printf("test_memif %s: %d round trips, %.2f ms each on average, the "
	       "slowest %llu ms\n", role, PINGPONGS,
	       (double)(ep_now_ms() - start) / PINGPONGS,
	       (unsigned long long)worst);
	/* engines that get their share of the CPUs keep a round trip to a
	 * few time slices on average: 0.3 to 0.5 ms here, 4 ms with the
	 * interop suite of another clone running too, 43 to 46 ms when they
	 * yield among the busy threads */
	if (!is_server && ep_now_ms() - start > PINGPONGS * 20)
		die("%d round trips took %.1f s: the engines starve",
		    PINGPONGS, (double)(ep_now_ms() - start) / 1000);
}

/* Wait for the peer's WRITE to put @p v in @p word, spinning. */
static void
spin_for(const uint64_t *word, uint64_t v)
{
	uint64_t deadline = ep_now_ms() + TIMEOUT_MS;
	unsigned int spins = 0;

	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != v)
		if ((++spins & 0xfff) == 0 && ep_now_ms() > deadline)
			die("round trip %llu: no WRITE in %d ms",
			    (unsigned long long)v, TIMEOUT_MS);
}

/* A thread of the process that polls for a while, then ends. */
static void *
poller(void *arg)
{
	struct ep *e = arg;
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < 1000; i++)
		CHECK(ibv_poll_cq(e->scq, 1, &wc) == 0);
	return (void *)(uintptr_t)rte_lcore_id();
}

/*
 * Application threads that ran engine passes are registered threads of
 * DPDK's, each with an lcore id of its own (never the engine's), which
 * a thread gives back as it ends.
 */
static void
lcore_ids(struct ep *e)
{
	unsigned int engine = rte_get_main_lcore();
	pthread_t t;
	void *id;

	CHECK(rte_lcore_id() != LCORE_ID_ANY && rte_lcore_id() != engine);
	CHECK(rte_lcore_has_role(rte_lcore_id(), ROLE_NON_EAL) == 1);
	CHECK(pthread_create(&t, NULL, poller, e) == 0);
	CHECK(pthread_join(t, &id) == 0);
	CHECK((uintptr_t)id != LCORE_ID_ANY && (uintptr_t)id != engine &&
	      (uintptr_t)id != rte_lcore_id());
	CHECK(rte_lcore_has_role((unsigned int)(uintptr_t)id,
				 ROLE_NON_EAL) == 0);
}

/*
 * "shared": the client WRITEs round trip i's number into the server's
 * word, the server waits for it, spinning, and WRITEs it back.
 */
static void
spin_pingpong(struct ep *e, const struct info *peer, bool is_server)
{
	const size_t word_off = BUF - 128, src_off = BUF - 256;
	uint64_t *word = (uint64_t *)(void *)(e->buf + word_off);
	uint64_t *src = (uint64_t *)(void *)(e->buf + src_off);
	struct ep remote = { 0 };
	struct ibv_mr mr = { 0 };
	struct droce_counters c;
	struct ibv_wc wc;
	uint64_t i, start;

	remote.buf = (uint8_t *)(uintptr_t)peer->addr;
	mr.rkey = peer->rkey;
	remote.mr = &mr;
	*word = 0;
	token('q');
	start = ep_now_ms();
	for (i = 1; i <= PINGPONGS; i++) {
		if (is_server)
			spin_for(word, i);
		*src = i;
		CHECK(ep_post(e, IBV_WR_RDMA_WRITE, i, src_off, 8, &remote,
			      word_off, IBV_SEND_SIGNALED) == 0);
		expect_ok(e->scq, IBV_WC_RDMA_WRITE, &wc);
		if (!is_server)
			spin_for(word, i);
	}
	CHECK(droce_query_counters(e->ctx, &c) == 0);
	printf("test_memif %s: %d WRITE round trips, %.1f us each on "
	       "average; %llu engine passes run by the application\n", role,
	       PINGPONGS, (double)(ep_now_ms() - start) * 1000 / PINGPONGS,
	       (unsigned long long)c.app_passes);
	CHECK(c.app_passes > 0);
	lcore_ids(e);
}

/* Swap QPN, PSN, GID, rkey and address with the peer; join its QP. */
static void
exchange(struct ep *e, struct info *peer, const struct ep_opts *o)
{
	struct info me;

	me.qpn = e->qp->qp_num;
	me.psn = e->psn;
	me.gid = e->gid;
	me.rkey = e->mr->rkey;
	me.addr = (uintptr_t)e->buf;
	put(&me, sizeof(me));
	get(peer, sizeof(*peer));
	if (ep_connect_remote(e, peer->qpn, peer->psn, &peer->gid, o) != 0)
		die("cannot connect");
	token('c');
}

/*
 * One side, @p name in messages and file names. A first client of
 * "killed" (@p doomed) connects, then waits to be killed.
 */
static void
run(const char *dir, const char *name, bool is_server, bool doomed,
    int to_peer, int from_peer)
{
	struct ep_opts o;
	struct ep e;
	struct info peer;

	role = name;
	wfd = to_peer;
	rfd = from_peer;
	if (shared) {
		cpu_set_t one;

		/* the engine's CPU, which its thread inherits too */
		CPU_ZERO(&one);
		CPU_SET(is_server ? 1 : 0, &one);
		CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
	}
	if (same_config)
		use_config(dir, role);
	else
		write_config(dir, role, is_server ? "server" : "client",
			     is_server ? 1 : 2, is_server ? 1 : 0);
	ep_opts_default(&o);
	o.max_recv_wr = 64;
	/* the memif server listens before the client connects */
	if (!is_server) {
		char c;

		get(&c, 1);
	}
	if (ep_open(&e, 0, BUF, &o) != 0)
		die("cannot open droce0: %s", strerror(errno));
	tell('o');
	if (is_server)
		put("l", 1);
	exchange(&e, &peer, &o);
	if (doomed) {
		tell('c');
		for (;;)
			pause();
	}
	if (starved)
		pingpong(&e, is_server);
	else if (is_server)
		server(&e, &peer);
	else
		client(&e, &peer);
	if (shared)
		spin_pingpong(&e, &peer, is_server);
	token('z');
	ep_close(&e);
	printf("test_memif %s: ok\n", role);
}

/* ------------------------------------------------------------------------
 * "killed": the peer dies mid-transfer, another takes its place.
 */

#define KILL_MSG 65536u          /* WRITEs to the doomed peer */
#define KILL_WINDOW 16           /* of them in flight */
#define KILL_AFTER 32            /* landed before the peer is killed */
#define RING_MSG 8192u           /* SENDs between droce1 and droce2 */
#define RING_WINDOW 32
#define RING_SLOTS 64            /* receives posted ahead */
#define RING_MIN 2000            /* SENDs at least, before and after */

/* SENDs from droce1 (r0) to droce2 (r1), each checked as it lands. */
struct ring_stream {
	struct ep r0, r1;
	uint64_t posted, sent, received;
};

/* Reap what completed; with @p more, keep RING_WINDOW SENDs in flight. */
static void
ring_pump(struct ring_stream *rs, bool more)
{
	static uint8_t want[RING_MSG];
	struct ibv_wc wc[16];
	int i, n;

	n = ibv_poll_cq(rs->r0.scq, 16, wc);
	CHECK(n >= 0);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			die("droce1's SEND %llu: %s",
			    (unsigned long long)wc[i].wr_id,
			    ibv_wc_status_str(wc[i].status));
		CHECK(wc[i].wr_id == rs->sent);
		rs->sent++;
	}
	n = ibv_poll_cq(rs->r1.rcq, 16, wc);
	CHECK(n >= 0);
	for (i = 0; i < n; i++) {
		size_t off = (rs->received % RING_SLOTS) * RING_MSG;

		if (wc[i].status != IBV_WC_SUCCESS)
			die("droce2's receive %llu: %s",
			    (unsigned long long)wc[i].wr_id,
			    ibv_wc_status_str(wc[i].status));
		CHECK(wc[i].wr_id == rs->received);
		CHECK(wc[i].byte_len == RING_MSG);
		fill_pattern(want, RING_MSG, 1000 + (uint32_t)rs->received);
		CHECK(memcmp(rs->r1.buf + off, want, RING_MSG) == 0);
		CHECK(ep_post_recv(&rs->r1, rs->received + RING_SLOTS, off,
				   RING_MSG) == 0);
		rs->received++;
	}
	/* a slot is written again only once its SEND has completed */
	while (more && rs->posted - rs->sent < RING_WINDOW) {
		size_t off = (rs->posted % RING_SLOTS) * RING_MSG;

		fill_pattern(rs->r0.buf + off, RING_MSG,
			     1000 + (uint32_t)rs->posted);
		CHECK(ep_post(&rs->r0, IBV_WR_SEND, rs->posted, off, RING_MSG,
			      NULL, 0, IBV_SEND_SIGNALED) == 0);
		rs->posted++;
	}
}

/* Every SEND posted completes and lands. */
static void
ring_drain(struct ring_stream *rs)
{
	uint64_t end = ep_now_ms() + TIMEOUT_MS;

	while (rs->sent < rs->posted || rs->received < rs->posted) {
		ring_pump(rs, false);
		if (ep_now_ms() > end)
			die("droce1 to droce2: %llu SENDs, %llu completed, "
			    "%llu received", (unsigned long long)rs->posted,
			    (unsigned long long)rs->sent,
			    (unsigned long long)rs->received);
	}
}

/*
 * The next asynchronous event of @p ctx within @p ms (pumping @p rs
 * meanwhile, if given): its type, or -1.
 */
static int
next_event(struct ibv_context *ctx, int ms, struct ring_stream *rs)
{
	uint64_t end = ep_now_ms() + (uint64_t)ms;

	do {
		struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
		struct ibv_async_event ev;
		int type;

		if (rs != NULL)
			ring_pump(rs, true);
		if (poll(&p, 1, rs != NULL ? 0 : 10) == 1) {
			CHECK(ibv_get_async_event(ctx, &ev) == 0);
			type = (int)ev.event_type;
			ibv_ack_async_event(&ev);
			return type;
		}
	} while (ep_now_ms() < end);
	return -1;
}

/*
 * The server of "killed": WRITEs to the first client until it is killed
 * and the QP gives up, while droce1 and droce2 stream SENDs; then the
 * second client, through the same socket.
 */
static void
server_killed(const char *dir, pid_t first, pid_t second, const int fds[4])
{
	struct ibv_wc wc[16];
	struct ring_stream rs;
	struct ibv_device **list;
	struct ibv_context *ctl;
	struct droce_qp_counters qc_kill, qc;
	struct rte_mempool *mp;
	struct ep_opts o;
	struct ep e, remote;
	struct ibv_mr rmr;
	struct info peer;
	uint64_t posted = 0, done = 0, t_kill = 0, t_fail = 0, t_port = 0;
	uint64_t ring_at_kill = 0, ring_at_fail = 0, limit;
	unsigned int in_use, i;
	bool failed = false;
	int status, n;

	role = "server";
	wfd = fds[0];
	rfd = fds[1];
	write_config(dir, role, "server", 1, 1);
	/* droce starts with the first device list: the pool as it is before
	 * any QP exists */
	list = ibv_get_device_list(NULL);
	CHECK(list != NULL);
	ibv_free_device_list(list);
	mp = rte_mempool_lookup("droce_mbufs");
	CHECK(mp != NULL);
	usleep(300 * 1000);
	in_use = rte_mempool_in_use_count(mp);
	/* droce0's port events, heard by a context open throughout */
	ctl = ep_open_device(0);
	CHECK(ctl != NULL);
	/* QPs of 67 ms x 7 (0.54 s to give up), as in ep_opts_default() */
	ep_opts_default(&o);

	memset(&rs, 0, sizeof(rs));
	CHECK(ep_open(&rs.r0, 1, RING_SLOTS * RING_MSG, &o) == 0);
	CHECK(ep_open(&rs.r1, 2, RING_SLOTS * RING_MSG, &o) == 0);
	CHECK(ep_pair_up(&rs.r0, &rs.r1, &o) == 0);
	for (i = 0; i < RING_SLOTS; i++)
		CHECK(ep_post_recv(&rs.r1, i, i * RING_MSG, RING_MSG) == 0);

	/* the first client */
	CHECK(ep_open(&e, 0, BUF, &o) == 0);
	put("l", 1);
	exchange(&e, &peer, &o);
	if (next_event(ctl, TIMEOUT_MS, &rs) != IBV_EVENT_PORT_ACTIVE)
		die("no PORT_ACTIVE as the first client connected");
	memset(&remote, 0, sizeof(remote));
	memset(&rmr, 0, sizeof(rmr));
	remote.buf = (uint8_t *)(uintptr_t)peer.addr;
	rmr.rkey = peer.rkey;
	remote.mr = &rmr;
	fill_pattern(e.buf, BUF, 7);
	for (;;) {
		struct pollfd p = { .fd = ctl->async_fd, .events = POLLIN };
		uint64_t now;

		ring_pump(&rs, true);
		while (!failed && posted - done < KILL_WINDOW) {
			size_t off = (posted % 32) * KILL_MSG;

			CHECK(ep_post(&e, IBV_WR_RDMA_WRITE, posted, off,
				      KILL_MSG, &remote, off,
				      IBV_SEND_SIGNALED) == 0);
			posted++;
		}
		n = ibv_poll_cq(e.scq, 16, wc);
		CHECK(n >= 0);
		now = ep_now_ms();
		for (i = 0; i < (unsigned int)n; i++, done++) {
			CHECK(wc[i].wr_id == done);
			if (wc[i].status == IBV_WC_SUCCESS) {
				CHECK(!failed);
			} else if (!failed) {
				/* the first to fail is the one at the head,
				 * its retries spent, and only once killed */
				if (wc[i].status != IBV_WC_RETRY_EXC_ERR ||
				    t_kill == 0)
					die("WRITE %u: %s", (unsigned int)done,
					    ibv_wc_status_str(wc[i].status));
				failed = true;
				t_fail = now;
				ring_at_fail = rs.sent;
			} else {
				CHECK(wc[i].status == IBV_WC_WR_FLUSH_ERR);
			}
		}
		if (poll(&p, 1, 0) == 1) {
			CHECK(t_port == 0 && t_kill != 0);
			CHECK(next_event(ctl, 0, NULL) == IBV_EVENT_PORT_ERR);
			t_port = now;
		}
		if (t_kill == 0 && done >= KILL_AFTER) {
			CHECK(droce_query_qp_counters(e.qp, &qc_kill) == 0);
			CHECK(kill(first, SIGKILL) == 0);
			t_kill = ep_now_ms();
			ring_at_kill = rs.sent;
		}
		if (failed && done == posted && t_port != 0 &&
		    rs.posted >= RING_MIN)
			break;
		if (t_kill != 0 && now > t_kill + TIMEOUT_MS)
			die("%s %llu ms after the peer was killed",
			    failed ? "no PORT_ERR" : "no RETRY_EXC_ERR",
			    (unsigned long long)(now - t_kill));
	}
	CHECK(ep_qp_state(e.qp) == IBV_QPS_ERR);
	CHECK(droce_query_qp_counters(e.qp, &qc) == 0);
	/* timeout 14: 4.096 us x 2^14 = 67 ms a try, 8 tries; a second
	 * more for a machine that is busy */
	limit = (o.retry_cnt + 1u) * 68u + 1000;
	printf("test_memif server: the peer killed after %llu WRITEs: "
	       "RETRY_EXC_ERR after %llu ms and %llu timeouts, PORT_ERR after "
	       "%llu ms; droce1 to droce2 meanwhile: %llu SENDs\n",
	       (unsigned long long)KILL_AFTER,
	       (unsigned long long)(t_fail - t_kill),
	       (unsigned long long)(qc.timeouts - qc_kill.timeouts),
	       (unsigned long long)(t_port - t_kill),
	       (unsigned long long)(ring_at_fail - ring_at_kill));
	CHECK(qc.timeouts - qc_kill.timeouts == o.retry_cnt + 1u);
	CHECK(t_fail - t_kill <= limit);
	CHECK(t_port - t_kill <= 1000);
	/* the other QPs were served while this one waited */
	CHECK(ring_at_fail > ring_at_kill);
	CHECK(waitpid(first, &status, 0) == first);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ring_drain(&rs);
	ep_close(&rs.r0);
	ep_close(&rs.r1);
	ep_close(&e);
	/* with the link down, and no peer to come: nothing held by frames
	 * for the dead peer */
	usleep(300 * 1000);
	if (rte_mempool_in_use_count(mp) != in_use)
		die("the peer dead: %u mbufs in use, %u before",
		    rte_mempool_in_use_count(mp), in_use);

	/* the second client, on the same socket */
	wfd = fds[2];
	rfd = fds[3];
	put("l", 1);
	if (next_event(ctl, TIMEOUT_MS, NULL) != IBV_EVENT_PORT_ACTIVE)
		die("no PORT_ACTIVE as the second client connected");
	CHECK(ep_open(&e, 0, BUF, &o) == 0);
	exchange(&e, &peer, &o);
	server(&e, &peer);
	token('z');
	ep_close(&e);
	ibv_close_device(ctl);
	CHECK(waitpid(second, &status, 0) == second);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* and none held by the second peer's QPs */
	usleep(300 * 1000);
	if (rte_mempool_in_use_count(mp) != in_use)
		die("%u mbufs in use, %u before", rte_mempool_in_use_count(mp),
		    in_use);
	printf("test_memif server: ok\n");
}

/*
 * "killed": two clients, forked before droce starts anywhere (a child of
 * a process running DPDK cannot run DPDK itself); the second waits for
 * the server's word before it connects.
 */
static int
main_killed(const char *dir)
{
	int p[4][2], fds[4];
	pid_t pid[2];
	int i, j;

	for (i = 0; i < 4; i++)
		CHECK(pipe(p[i]) == 0);
	/* p[2c]: server to client c, p[2c + 1]: client c to server */
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		CHECK(pid[i] >= 0);
		if (pid[i] != 0)
			continue;
		/* gone with the server, however it ends */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (j = 0; j < 4; j++) {
			if (j != 2 * i)
				close(p[j][0]);
			if (j != 2 * i + 1)
				close(p[j][1]);
		}
		run(dir, i == 0 ? "client" : "client2", false, i == 0,
		    p[2 * i + 1][1], p[2 * i][0]);
		exit(0);
	}
	for (i = 0; i < 2; i++) {
		close(p[2 * i][0]);
		close(p[2 * i + 1][1]);
		fds[2 * i] = p[2 * i][1];
		fds[2 * i + 1] = p[2 * i + 1][0];
	}
	server_killed(dir, pid[0], pid[1], fds);
	return 0;
}

/* ------------------------------------------------------------------------
 * "restart" and "served": servers again on the same socket path.
 */

/* A server and a client process of run(), as the test started them. */
struct pair {
	pid_t server;
	pid_t client;
	int ready;               /* the server's ready_fd, read here */
	int go;                  /* a byte here starts the client; -1 */
};

/* This process's output, stdout and stderr, to DIR/NAME.log from here. */
static void
log_to(const char *dir, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s.log", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	CHECK(dup2(fd, STDOUT_FILENO) == STDOUT_FILENO);
	CHECK(dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	close(fd);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

/*
 * Show the lines of DIR/NAME.log with the test's output.
 * @return whether one has @p want in it (NULL: none looked for).
 */
static bool
log_show(const char *dir, const char *name, const char *want)
{
	char path[512], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.log", dir, name);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		printf("test_memif %s: %s.log: %s", role, name, line);
		found |= want != NULL && strstr(line, want) != NULL;
	}
	fclose(f);
	fflush(stdout);
	return found;
}

/*
 * The first line of DIR/NAME.log with @p want in it, from there on, into
 * @p line (@p len bytes, the newline dropped). @return whether there is.
 */
static bool
log_find(const char *dir, const char *name, const char *want, char *line,
	 size_t len)
{
	char path[512], buf[1024];
	bool found = false;
	const char *at;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.log", dir, name);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (!found && fgets(buf, sizeof(buf), f) != NULL) {
		at = strstr(buf, want);
		if (at != NULL) {
			snprintf(line, len, "%.*s", (int)strcspn(at, "\n"), at);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* DIR/NAME.log has a line with @p want in it; its lines are shown. */
static void
log_expect(const char *dir, const char *name, const char *want)
{
	if (!log_show(dir, name, want))
		die("%s.log has no \"%s\"", name, want);
}

/*
 * Fork a server (its output to DIR/@p log, if given) and a client of
 * run(), joined by pipes as main() joins them. With @p doomed both wait
 * to be killed once connected; with @p gate the client starts only when
 * a byte comes on pr->go.
 */
static void
pair_start(struct pair *pr, const char *dir, const char *log, bool doomed,
	   bool gate)
{
	int s2c[2], c2s[2], ready[2], go[2] = { -1, -1 };
	char c;

	/* (nothing of ours printed again by the children) */
	fflush(stdout);
	CHECK(pipe(s2c) == 0 && pipe(c2s) == 0 && pipe(ready) == 0);
	CHECK(!gate || pipe(go) == 0);
	pr->server = fork();
	CHECK(pr->server >= 0);
	if (pr->server == 0) {
		/* gone with the test, however it ends */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(s2c[0]);
		close(c2s[1]);
		close(ready[0]);
		if (gate) {
			close(go[0]);
			close(go[1]);
		}
		if (log != NULL)
			log_to(dir, log);
		ready_fd = ready[1];
		run(dir, "server", true, doomed, s2c[1], c2s[0]);
		exit(0);
	}
	pr->client = fork();
	CHECK(pr->client >= 0);
	if (pr->client == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(s2c[1]);
		close(c2s[0]);
		close(ready[0]);
		close(ready[1]);
		if (gate) {
			close(go[1]);
			CHECK(read(go[0], &c, 1) == 1);
			close(go[0]);
		}
		run(dir, "client", false, doomed, c2s[1], s2c[0]);
		exit(0);
	}
	close(s2c[0]);
	close(s2c[1]);
	close(c2s[0]);
	close(c2s[1]);
	close(ready[1]);
	if (gate)
		close(go[0]);
	pr->ready = ready[0];
	pr->go = go[1];
}

/* The server of @p pr tells @p t within TIMEOUT_MS. */
static void
pair_heard(const struct pair *pr, char t)
{
	struct pollfd p = { .fd = pr->ready, .events = POLLIN };
	char c = 0;

	if (poll(&p, 1, TIMEOUT_MS) != 1 || read(pr->ready, &c, 1) != 1 ||
	    c != t)
		die("the server did not tell '%c' within %d ms", t,
		    TIMEOUT_MS);
}

/* Both processes of @p pr exit, and exit 0. */
static void
pair_end(struct pair *pr, const char *what)
{
	int server, client;

	CHECK(waitpid(pr->server, &server, 0) == pr->server);
	CHECK(waitpid(pr->client, &client, 0) == pr->client);
	close(pr->ready);
	if (pr->go >= 0)
		close(pr->go);
	if (!WIFEXITED(server) || WEXITSTATUS(server) != 0)
		die("%s: the server failed", what);
	if (!WIFEXITED(client) || WEXITSTATUS(client) != 0)
		die("%s: the client failed", what);
}

/* Whether the memif socket file @p sock is there. */
static bool
sock_there(const char *sock)
{
	struct stat st;

	return stat(sock, &st) == 0 && S_ISSOCK(st.st_mode);
}

/*
 * "restart": the same configuration for every server run (DIR/server.ini,
 * written once), and for every client run.
 */
static int
main_restart(const char *dir)
{
	char sock[512], want[640];
	bool left[2];
	struct pair pr;
	int run_no, status;

	role = "restart";
	snprintf(sock, sizeof(sock), "%s/memif.sock", dir);
	unlink(sock);
	write_config(dir, "server", "server", 1, 1);
	write_config(dir, "client", "client", 2, 0);
	same_config = true;
	/* twice in a row, each run serving its client and exiting (the
	 * second must start whatever the first left behind: looked at
	 * after it) */
	for (run_no = 1; run_no <= 2; run_no++) {
		pair_start(&pr, dir, NULL, false, false);
		pair_end(&pr, run_no == 1 ? "run 1" : "run 2");
		left[run_no - 1] = sock_there(sock);
		printf("test_memif restart: run %d served its client\n",
		       run_no);
	}
	for (run_no = 1; run_no <= 2; run_no++)
		if (left[run_no - 1])
			die("run %d: the server's socket %s outlived it",
			    run_no, sock);
	/* killed once connected: its socket file stays behind */
	pair_start(&pr, dir, NULL, true, false);
	pair_heard(&pr, 'o');
	pair_heard(&pr, 'c');
	CHECK(kill(pr.server, SIGKILL) == 0);
	CHECK(waitpid(pr.server, &status, 0) == pr.server);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK(kill(pr.client, SIGKILL) == 0);
	CHECK(waitpid(pr.client, &status, 0) == pr.client);
	close(pr.ready);
	if (!sock_there(sock))
		die("the killed server left no socket file behind");
	printf("test_memif restart: run 3 killed (SIGKILL), its socket "
	       "left behind\n");
	/* the next run on it replaces it, and serves */
	pair_start(&pr, dir, "server4", false, false);
	pair_end(&pr, "run 4, after the kill");
	snprintf(want, sizeof(want), "memif socket %s was left by a process "
		 "that is gone", sock);
	log_expect(dir, "server4", want);
	if (sock_there(sock))
		die("run 4: the server's socket %s outlived it", sock);
	printf("test_memif restart: run 4 replaced the socket the killed "
	       "server left, and served its client\n");
	return 0;
}

/*
 * The second server of "served", on the socket the first serves: no
 * device, and EADDRINUSE (its log, which the test reads, says why).
 */
static void
contend(const char *dir)
{
	struct ibv_device **list;
	int n = -1;

	role = "server2";
	write_config(dir, role, "server", 3, 1);
	list = ibv_get_device_list(&n);
	if (list != NULL)
		die("started on the socket another server serves");
	if (errno != EADDRINUSE)
		die("ibv_get_device_list: %s, not EADDRINUSE", strerror(errno));
	CHECK(n == 0);
	printf("test_memif server2: no devices: %s\n", strerror(errno));
}

/*
 * "served": the first server serves its socket; a second on it is
 * refused, and the first, its socket file as it was, serves its client.
 */
static int
main_served(const char *dir)
{
	char sock[512], want[640];
	struct stat before, after;
	struct pair pr;
	pid_t pid;
	int status;

	role = "served";
	snprintf(sock, sizeof(sock), "%s/memif.sock", dir);
	unlink(sock);
	pair_start(&pr, dir, NULL, false, true);
	pair_heard(&pr, 'o');
	CHECK(stat(sock, &before) == 0);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pr.ready);
		close(pr.go);
		log_to(dir, "server2");
		contend(dir);
		exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	snprintf(want, sizeof(want), "memif socket %s is served by another "
		 "live process (pid %d)", sock, (int)pr.server);
	log_expect(dir, "server2", want);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("the second server did not fail as it should");
	CHECK(stat(sock, &after) == 0);
	if (!S_ISSOCK(after.st_mode) || after.st_ino != before.st_ino)
		die("the second server took the first's socket %s", sock);
	/* the first server's client, now */
	CHECK(write(pr.go, "g", 1) == 1);
	pair_end(&pr, "the first server");
	printf("test_memif served: the second server refused, the first "
	       "served its client\n");
	return 0;
}

/* ------------------------------------------------------------------------
 * "together": server and client started at the same moment.
 */

#define ROUNDS 50
#define ROUND_LINK_MS 3000       /* both links up within this */
#define ROUND_LINK_WAIT_S 3      /* link_wait_s, every other pair of rounds */
#define ROUND_STAGGER_MS 300     /* the most one side starts before the other */
#define ROUND_MSG 256u           /* the SEND each way */
#define ROUND_DEADLINE_S 30      /* a side that takes longer is stuck */

/* Who is released first in a round. */
enum round_order {
	ROUND_TOGETHER,
	ROUND_SERVER_FIRST,
	ROUND_CLIENT_FIRST,
};

static const char *const round_order_name[] = {
	[ROUND_TOGETHER] = "together",
	[ROUND_SERVER_FIRST] = "server first",
	[ROUND_CLIENT_FIRST] = "client first",
};

/*
 * Port 1 of @p e's device is active within @p ms (0: at once).
 * @return how long it took, in ms; -1 if it did not come up.
 */
static long
port_active_within(const struct ep *e, unsigned int ms)
{
	uint64_t start = ep_now_ms();
	struct ibv_port_attr pa;

	for (;;) {
		CHECK(ibv_query_port(e->ctx, 1, &pa) == 0);
		if (pa.state == IBV_PORT_ACTIVE)
			return (long)(ep_now_ms() - start);
		if (ep_now_ms() - start >= ms)
			return -1;
		usleep(1000);
	}
}

/*
 * One side of a round: released when @p go is closed, it opens droce0,
 * waits for its port, joins the peer's QP and SENDs it ROUND_MSG bytes
 * as the peer SENDs it as many.
 */
static void
round_side(const char *dir, bool is_server, bool waits, int to_peer,
	   int from_peer, int go)
{
	static uint8_t want[ROUND_MSG];
	struct ep_opts o;
	struct ibv_wc wc;
	struct info peer;
	struct ep e;
	long up;
	char c;

	role = is_server ? "server" : "client";
	wfd = to_peer;
	rfd = from_peer;
	use_config(dir, waits ? (is_server ? "server-w" : "client-w") : role);
	/* a side that hangs ends the round, not the test */
	alarm(ROUND_DEADLINE_S);
	CHECK(read(go, &c, 1) == 0);
	close(go);
	ep_opts_default(&o);
	if (ep_open(&e, 0, 2 * ROUND_MSG, &o) != 0)
		die("cannot open droce0: %s", strerror(errno));
	/* with link_wait_s, the port is active as the device opens (perftest
	 * gives up on one that is not) */
	up = port_active_within(&e, waits ? 0 : ROUND_LINK_MS);
	if (up < 0 && waits)
		die("port down as the device opened, link_wait_s %d",
		    ROUND_LINK_WAIT_S);
	if (up < 0)
		die("port down %d ms after the device opened", ROUND_LINK_MS);
	printf("test_memif %s: port active %ld ms after the device opened\n",
	       role, up);
	exchange(&e, &peer, &o);
	CHECK(ep_post_recv(&e, 1, ROUND_MSG, ROUND_MSG) == 0);
	token('s');
	fill_pattern(e.buf, ROUND_MSG, is_server ? 1 : 2);
	CHECK(ep_post(&e, IBV_WR_SEND, 2, 0, ROUND_MSG, NULL, 0,
		      IBV_SEND_SIGNALED) == 0);
	expect_ok(e.scq, IBV_WC_SEND, &wc);
	expect_ok(e.rcq, IBV_WC_RECV, &wc);
	CHECK(wc.byte_len == ROUND_MSG);
	fill_pattern(want, ROUND_MSG, is_server ? 2 : 1);
	CHECK(memcmp(e.buf + ROUND_MSG, want, ROUND_MSG) == 0);
	token('z');
	ep_close(&e);
	printf("test_memif %s: ok\n", role);
}

/*
 * Fork one side of a round, its output to DIR/server.log or client.log,
 * released by go[@p gate]: no write end of either go pipe stays open in
 * it (one would hold its own release, or the other side's, back).
 */
static pid_t
round_fork(const char *dir, bool is_server, bool waits, const int s2c[2],
	   const int c2s[2], int go[2][2], int gate)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close(go[0][1]);
	close(go[1][1]);
	close(go[1 - gate][0]);
	close(is_server ? s2c[0] : s2c[1]);
	close(is_server ? c2s[1] : c2s[0]);
	log_to(dir, is_server ? "server" : "client");
	if (is_server)
		round_side(dir, true, waits, s2c[1], c2s[0], go[gate][0]);
	else
		round_side(dir, false, waits, c2s[1], s2c[0], go[gate][0]);
	exit(0);
}

/* Whether the side @p pid of a round ended well; its log shown if not. */
static bool
round_side_ok(const char *dir, pid_t pid, const char *name)
{
	int status;

	CHECK(waitpid(pid, &status, 0) == pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	if (WIFSIGNALED(status))
		printf("test_memif together: the %s died of signal %d\n",
		       name, WTERMSIG(status));
	log_show(dir, name, NULL);
	return false;
}

/*
 * Round @p n: a server and a client, released as @p order says (the
 * second @p lag_ms after the first), with link_wait_s if @p waits.
 * @return whether both came up and swapped their SENDs.
 */
static bool
round_run(const char *dir, unsigned int n, enum round_order order,
	  unsigned int lag_ms, bool waits)
{
	int s2c[2], c2s[2], go[2][2];
	pid_t server, client;
	uint64_t start = ep_now_ms();
	char dials[128];
	bool ok, redialed;

	CHECK(pipe(s2c) == 0 && pipe(c2s) == 0);
	CHECK(pipe(go[0]) == 0 && pipe(go[1]) == 0);
	server = round_fork(dir, true, waits, s2c, c2s, go, 0);
	/* together: one pipe releases both */
	client = round_fork(dir, false, waits, s2c, c2s, go,
			    order == ROUND_TOGETHER ? 0 : 1);
	close(s2c[0]);
	close(s2c[1]);
	close(c2s[0]);
	close(c2s[1]);
	close(go[0][0]);
	close(go[1][0]);
	/* closing a pipe's last write end is the release */
	close(go[order == ROUND_CLIENT_FIRST ? 1 : 0][1]);
	if (order != ROUND_TOGETHER)
		usleep(lag_ms * 1000);
	close(go[order == ROUND_CLIENT_FIRST ? 0 : 1][1]);
	ok = round_side_ok(dir, server, "server");
	ok &= round_side_ok(dir, client, "client");
	/* a client the server refused says so, and how often it dialed */
	redialed = log_find(dir, "client", "memif link up after", dials,
			    sizeof(dials));
	printf("test_memif together: round %u (%s, %u ms apart%s): %s in "
	       "%llu ms%s%s\n", n, round_order_name[order],
	       order == ROUND_TOGETHER ? 0 : lag_ms,
	       waits ? ", link_wait_s" : "", ok ? "up" : "FAILED",
	       (unsigned long long)(ep_now_ms() - start),
	       redialed ? ", the client's " : "", redialed ? dials : "");
	return ok;
}

/*
 * "together": ROUNDS rounds, each order in turn, with and without
 * link_wait_s, the lag varied; every round must come up.
 */
static int
main_together(const char *dir)
{
	unsigned int n, up = 0;

	role = "together";
	write_config(dir, "server", "server", 1, 1);
	write_config(dir, "client", "client", 2, 0);
	link_wait_s = ROUND_LINK_WAIT_S;
	write_config(dir, "server-w", "server", 1, 1);
	write_config(dir, "client-w", "client", 2, 0);
	for (n = 0; n < ROUNDS; n++)
		up += round_run(dir, n + 1, (enum round_order)(n % 3),
				(n * 53) % ROUND_STAGGER_MS, (n / 3) % 2 == 1);
	printf("test_memif together: %u of %d rounds up\n", up, ROUNDS);
	return up == ROUNDS ? 0 : 1;
}

int
main(int argc, char **argv)
{
	int s2c[2], c2s[2], status, ok;
	pid_t pid, busy[64];
	int nbusy = 0, i;
	bool restart, served, together;

	killed = argc == 3 && strcmp(argv[2], "killed") == 0;
	shared = argc == 3 && strcmp(argv[2], "shared") == 0;
	restart = argc == 3 && strcmp(argv[2], "restart") == 0;
	served = argc == 3 && strcmp(argv[2], "served") == 0;
	together = argc == 3 && strcmp(argv[2], "together") == 0;
	if (argc < 2 || argc > 4 ||
	    (argc > 2 && !killed && !shared && !restart && !served &&
	     !together && strcmp(argv[2], "starved") != 0)) {
		fprintf(stderr, "usage: test_memif WORKDIR [starved "
			"[IDLE_YIELD_US] | shared | killed | restart | "
			"served | together]\n");
		return 2;
	}
	starved = argc > 2 && !killed && !shared && !restart && !served &&
		!together;
	idle_yield_us = argc > 3 ? argv[3] : NULL;
	mkdir(argv[1], 0755);
	if (killed)
		return main_killed(argv[1]);
	socket_file = restart || served;
	if (restart)
		return main_restart(argv[1]);
	if (served)
		return main_served(argv[1]);
	if (together)
		return main_together(argv[1]);
	/* the machine kept busy: two spinning processes per CPU */
	for (i = 0; starved && i < 2 * sysconf(_SC_NPROCESSORS_ONLN) &&
	     nbusy < 64; i++) {
		pid_t parent = getpid();

		busy[nbusy] = fork();
		if (busy[nbusy] == 0) {
			/* gone with the test, however it ends */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
			/* another program's, as the scheduler sees it */
			setsid();
			for (;;)
				;
		}
		if (busy[nbusy] > 0)
			nbusy++;
	}
	if (pipe(s2c) != 0 || pipe(c2s) != 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	/* each side keeps its own ends only: a peer that dies is an end
	 * of file, not a wait */
	if (pid == 0) {
		close(c2s[0]);
		close(s2c[1]);
		run(argv[1], "client", false, false, c2s[1], s2c[0]);
		return 0;
	}
	close(s2c[0]);
	close(c2s[1]);
	run(argv[1], "server", true, false, s2c[1], c2s[0]);
	ok = waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		WEXITSTATUS(status) == 0;
	for (i = 0; i < nbusy; i++) {
		kill(busy[i], SIGKILL);
		waitpid(busy[i], NULL, 0);
	}
	if (!ok) {
		fprintf(stderr, "test_memif: the client failed\n");
		return 1;
	}
	return 0;
}
