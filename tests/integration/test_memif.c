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
 * Usage: test_memif WORKDIR [starved [IDLE_YIELD_US]]
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALIGN_UP(v, a) (((v) + (a) - 1) / (a) * (a))

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
static const char *idle_yield_us;     /* the engine's, if given */

#define PINGPONGS 1000
#define PINGPONG_LEN 4096

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
die(const char *fmt, ...)
{
	va_list ap;

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
		"--vdev=net_memif0,role=%s,socket=%s/memif.sock,id=0\n"
		"[engine]\ncores = %d\npcap = %s/%s.pcap\n%s%s%s\n"
		"[device droce0]\nport = net_memif0\n"
		"mac = 02:d7:0c:e0:09:%02x\nipv4 = 10.9.0.%d/24\n",
		name, (int)getpid(), memif_role, dir, core, dir, name,
		idle_yield_us != NULL ? "idle_yield_us = " : "",
		idle_yield_us != NULL ? idle_yield_us : "",
		idle_yield_us != NULL ? "\n" : "", last_octet, last_octet);
	CHECK(fclose(f) == 0);
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

static void
run(const char *dir, bool is_server, int to_peer, int from_peer)
{
	struct ep_opts o;
	struct ep e;
	struct info me, peer;

	role = is_server ? "server" : "client";
	wfd = to_peer;
	rfd = from_peer;
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
	if (is_server)
		put("l", 1);
	me.qpn = e.qp->qp_num;
	me.psn = e.psn;
	me.gid = e.gid;
	me.rkey = e.mr->rkey;
	me.addr = (uintptr_t)e.buf;
	put(&me, sizeof(me));
	get(&peer, sizeof(peer));
	if (ep_connect_remote(&e, peer.qpn, peer.psn, &peer.gid, &o) != 0)
		die("cannot connect");
	token('c');
	if (starved)
		pingpong(&e, is_server);
	else if (is_server)
		server(&e, &peer);
	else
		client(&e, &peer);
	token('z');
	ep_close(&e);
	printf("test_memif %s: ok\n", role);
}

int
main(int argc, char **argv)
{
	int s2c[2], c2s[2], status, ok;
	pid_t pid, busy[64];
	int nbusy = 0, i;

	if (argc < 2 || argc > 4 ||
	    (argc > 2 && strcmp(argv[2], "starved") != 0)) {
		fprintf(stderr,
			"usage: test_memif WORKDIR [starved [IDLE_YIELD_US]]\n");
		return 2;
	}
	starved = argc > 2;
	idle_yield_us = argc > 3 ? argv[3] : NULL;
	mkdir(argv[1], 0755);
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
		run(argv[1], false, c2s[1], s2c[0]);
		return 0;
	}
	close(s2c[0]);
	close(c2s[1]);
	run(argv[1], true, s2c[1], c2s[0]);
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
