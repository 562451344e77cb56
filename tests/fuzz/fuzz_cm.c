/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * libFuzzer target for the connection manager (lib/cm).
 *
 * Per input, two things:
 *
 *  1. The MAD codec: droce_cm_mad_parse() of the whole input and of each
 *     MAD fed below; whatever parses must build to DROCE_MAD_LEN bytes
 *     that parse again to the same struct droce_cm_msg, and building
 *     that gives the same bytes again.
 *
 *  2. The CM protocol, with a live CM (the embedded default: droce0
 *     10.0.0.1 and droce1 10.0.0.2 back to back, each with a GSI) and a
 *     listener on 10.0.0.2 port LISTEN_PORT made through the rdma_cm
 *     API. The input is a sequence of records: one control byte, then up
 *     to DROCE_MAD_LEN bytes of MAD (the last record may be shorter).
 *     Each MAD is handed to droce_cm_rx() for droce1, from droce0's
 *     GID, as the CM's thread does for a datagram of its GSI, under
 *     droce_cm.lock. The control byte (enum ctl) may first make the
 *     header a valid CM SEND, point a REQ or SIDR_REQ at the listener
 *     and name a live connection in the comm IDs; after each MAD the
 *     listener's events are taken and its new connect requests
 *     accepted, rejected, destroyed or left pending as the byte says.
 *
 * After the input every child id is destroyed and every event taken;
 * then, or the target aborts: the CM's counters can be read, exactly the
 * listener is left of the ids, no event is queued, and every connection
 * left has no id and a timer running (nothing else would ever free it),
 * and there are no more than MAX_CONNS of them.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "droce_cm.h"
#include "droce_cm_mad.h"
#include "droce_cma_pvt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LISTEN_PORT 7471
#define BACKLOG 16
#define MAX_CHILDREN 256
/* connections in TimeWait live on for 2 ACK timeouts of the peer's REQ,
 * at most 4 s: a bound well above what the inputs of that time make */
#define MAX_CONNS 65536

#define REC_LEN (1 + DROCE_MAD_LEN)

enum ctl {
	CTL_FIX_HDR = 0x01,     /* base 1, class CM, version 2, SEND */
	CTL_SERVICE = 0x02,     /* REQ/SIDR_REQ: the listener's service */
	CTL_CONN = 0x04,        /* comm IDs of a live connection */
	CTL_ANSWER_SHIFT = 3,   /* 2 bits: enum answer */
	CTL_CONN_SHIFT = 5,     /* 3 bits: which connection */
};

enum answer { ANS_LEAVE, ANS_ACCEPT, ANS_REJECT, ANS_DESTROY };

/* offsets in a MAD */
#define OFF_ATTR_ID 16
#define OFF_DATA DROCE_MAD_HDR_LEN
#define OFF_REQ_SID (OFF_DATA + 8)
#define OFF_REQ_PRIV (OFF_DATA + 52 + 2 * 44)
#define OFF_SIDR_REQ_SID (OFF_DATA + 8)
#define OFF_SIDR_REQ_PRIV (OFF_DATA + 16)
#define OFF_LOCAL_ID OFF_DATA
#define OFF_REMOTE_ID (OFF_DATA + 4)
#define OFF_DREQ_QPN (OFF_DATA + 8)

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_cm: %s:%d: %s: ", __FILE__, __LINE__, \
			#cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

static struct {
	bool ready;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listener;
	struct cm_dev *dev;             /* droce1's */
	union ibv_gid peer;             /* droce0's GID, ::ffff:10.0.0.1 */
	struct rdma_cm_id *child[MAX_CHILDREN];
	unsigned int nchild;
	uint32_t qpn;
} fz;

/* ------------------------------------------------------------------------
 * The codec.
 */

static void
codec_check(const uint8_t *buf, size_t len)
{
	static struct droce_cm_msg m1, m2;
	uint8_t b1[DROCE_MAD_LEN], b2[DROCE_MAD_LEN];
	enum droce_cm_mad_err err;
	size_t n;

	memset(&m1, 0, sizeof(m1));
	if (droce_cm_mad_parse(buf, len, &m1) != DROCE_CM_MAD_OK)
		return;
	CHECK(len >= DROCE_MAD_LEN, "parsed %zu bytes", len);
	n = droce_cm_mad_build(&m1, b1);
	CHECK(n == DROCE_MAD_LEN, "build of attr %#x gave %zu",
	      m1.hdr.attr_id, n);
	memset(&m2, 0, sizeof(m2));
	err = droce_cm_mad_parse(b1, sizeof(b1), &m2);
	CHECK(err == DROCE_CM_MAD_OK, "rebuilt %s MAD: %s",
	      droce_cm_attr_name(m1.hdr.attr_id), droce_cm_mad_err_name(err));
	CHECK(memcmp(&m1, &m2, sizeof(m1)) == 0,
	      "%s MAD parses to another struct once rebuilt",
	      droce_cm_attr_name(m1.hdr.attr_id));
	n = droce_cm_mad_build(&m2, b2);
	CHECK(n == DROCE_MAD_LEN && memcmp(b1, b2, sizeof(b1)) == 0,
	      "%s MAD builds differently the second time",
	      droce_cm_attr_name(m1.hdr.attr_id));
}

/* ------------------------------------------------------------------------
 * The live CM.
 */

static void
setup(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int flags, i;

	/* droce0 and droce1 back to back: the embedded default */
	unsetenv("DROCE_CONFIG");
	CHECK(droce_cma_init() == 0, "droce_cma_init: %s", strerror(errno));
	fz.ch = rdma_create_event_channel();
	CHECK(fz.ch != NULL, "rdma_create_event_channel: %s",
	      strerror(errno));
	flags = fcntl(fz.ch->fd, F_GETFL);
	CHECK(flags >= 0 && fcntl(fz.ch->fd, F_SETFL, flags | O_NONBLOCK) == 0,
	      "O_NONBLOCK: %s", strerror(errno));
	CHECK(rdma_create_id(fz.ch, &fz.listener, NULL, RDMA_PS_TCP) == 0,
	      "rdma_create_id: %s", strerror(errno));
	sin.sin_port = htons(LISTEN_PORT);
	sin.sin_addr.s_addr = htonl(0x0a000002);
	CHECK(rdma_bind_addr(fz.listener, (struct sockaddr *)&sin) == 0,
	      "rdma_bind_addr: %s", strerror(errno));
	CHECK(rdma_listen(fz.listener, BACKLOG) == 0, "rdma_listen: %s",
	      strerror(errno));

	memset(&fz.peer, 0, sizeof(fz.peer));
	fz.peer.raw[10] = 0xff;
	fz.peer.raw[11] = 0xff;
	fz.peer.raw[12] = 10;
	fz.peer.raw[15] = 1;
	/* droce1's device, the one whose GSI the MADs come to */
	pthread_mutex_lock(&droce_cm.lock);
	for (i = 0; i < droce_cm.ndevs; i++)
		if (strcmp(ibv_get_device_name(droce_cm.devs[i].ctx->device),
			   "droce1") == 0)
			fz.dev = &droce_cm.devs[i];
	pthread_mutex_unlock(&droce_cm.lock);
	CHECK(fz.dev != NULL && fz.dev->ngid > 0, "no droce1 in the CM");
	CHECK(fz.listener->verbs == fz.dev->ctx,
	      "listener not bound to droce1");
	fz.qpn = 0x100;
	fz.ready = true;
}

static void
child_forget(unsigned int i)
{
	fz.child[i] = fz.child[--fz.nchild];
}

static void
child_destroy(unsigned int i)
{
	CHECK(rdma_destroy_id(fz.child[i]) == 0, "rdma_destroy_id: %s",
	      strerror(errno));
	child_forget(i);
}

/* Answer a new connect request on @p id. */
static void
answer(struct rdma_cm_id *id, enum answer how)
{
	struct rdma_conn_param p;

	if (fz.nchild == MAX_CHILDREN)
		how = ANS_DESTROY;
	switch (how) {
	case ANS_ACCEPT:
		memset(&p, 0, sizeof(p));
		p.responder_resources = 1;
		p.initiator_depth = 1;
		p.rnr_retry_count = 7;
		p.qp_num = fz.qpn++ & 0xffffff;
		/* it may fail: the request may be gone already */
		(void)rdma_accept(id, &p);
		break;
	case ANS_REJECT:
		(void)rdma_reject(id, NULL, 0);
		break;
	case ANS_DESTROY:
		CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id: %s",
		      strerror(errno));
		return;
	case ANS_LEAVE:
		break;
	}
	fz.child[fz.nchild++] = id;
}

/* Take every event of the listener's channel. */
static void
drain(enum answer how)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	unsigned int i;

	while (rdma_get_cm_event(fz.ch, &ev) == 0) {
		id = ev->id;
		CHECK(ev->event != RDMA_CM_EVENT_CONNECT_REQUEST ||
		      ev->listen_id == fz.listener,
		      "connect request of another listener");
		CHECK(id != fz.listener, "event %s for the listener",
		      rdma_event_str(ev->event));
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			for (i = 0; i < fz.nchild; i++)
				CHECK(fz.child[i] != id,
				      "connect request on a known child");
			CHECK(rdma_ack_cm_event(ev) == 0, "ack");
			answer(id, how);
		} else {
			CHECK(rdma_ack_cm_event(ev) == 0, "ack");
		}
	}
	CHECK(errno == EAGAIN, "rdma_get_cm_event: %s", strerror(errno));
}

/* Make @p mad point where the control byte says. */
static void
patch(uint8_t *mad, size_t len, uint8_t ctl)
{
	uint16_t attr;
	struct cm_conn *c, *pick = NULL;
	unsigned int n = 0, want = ctl >> CTL_CONN_SHIFT;
	uint64_t sid;
	uint8_t *priv = NULL;
	int i;

	if (len < DROCE_MAD_LEN)
		return;
	if (ctl & CTL_FIX_HDR) {
		mad[0] = DROCE_MAD_BASE_VERSION;
		mad[1] = DROCE_MAD_CLASS_CM;
		mad[2] = DROCE_MAD_CM_VERSION;
		mad[3] = DROCE_MAD_METHOD_SEND;
	}
	attr = (uint16_t)(mad[OFF_ATTR_ID] << 8 | mad[OFF_ATTR_ID + 1]);
	if ((ctl & CTL_SERVICE) && (attr == DROCE_CM_ATTR_REQ ||
				    attr == DROCE_CM_ATTR_SIDR_REQ)) {
		/* (a SIDR_REQ too: the CM takes it for any port space) */
		sid = droce_cma_service_id(DROCE_CMA_PS_TCP, LISTEN_PORT);
		for (i = 0; i < 8; i++)
			mad[OFF_REQ_SID + i] = (uint8_t)(sid >> (56 - 8 * i));
		priv = mad + (attr == DROCE_CM_ATTR_REQ ? OFF_REQ_PRIV :
			      OFF_SIDR_REQ_PRIV);
		priv[0] = 0;                    /* cma version */
		priv[1] = 4 << 4;               /* IPv4 */
		memset(priv + 4, 0, 12);
		memcpy(priv + 16, "\x0a\x00\x00\x01", 4);
		memset(priv + 20, 0, 12);
		memcpy(priv + 32, "\x0a\x00\x00\x02", 4);
	}
	if (!(ctl & CTL_CONN))
		return;
	LIST_FOREACH(c, &droce_cm.conns, all)
		n++;
	if (n == 0)
		return;
	want %= n;
	LIST_FOREACH(c, &droce_cm.conns, all)
		if (want-- == 0) {
			pick = c;
			break;
		}
	switch (attr) {
	case DROCE_CM_ATTR_SIDR_REP:
		/* request_id */
		for (i = 0; i < 4; i++)
			mad[OFF_LOCAL_ID + i] =
				(uint8_t)(pick->local_id >> (24 - 8 * i));
		return;
	case DROCE_CM_ATTR_DREQ:
		for (i = 0; i < 3; i++)
			mad[OFF_DREQ_QPN + i] =
				(uint8_t)(pick->local_qpn >> (16 - 8 * i));
		/* fall through */
	case DROCE_CM_ATTR_MRA:
	case DROCE_CM_ATTR_REJ:
	case DROCE_CM_ATTR_REP:
	case DROCE_CM_ATTR_RTU:
	case DROCE_CM_ATTR_DREP:
	case DROCE_CM_ATTR_LAP:
	case DROCE_CM_ATTR_APR:
		for (i = 0; i < 4; i++) {
			mad[OFF_LOCAL_ID + i] =
				(uint8_t)(pick->remote_id >> (24 - 8 * i));
			mad[OFF_REMOTE_ID + i] =
				(uint8_t)(pick->local_id >> (24 - 8 * i));
		}
		return;
	default:
		return;
	}
}

static void
feed(const uint8_t *rec, size_t len)
{
	uint8_t mad[DROCE_MAD_LEN];
	uint8_t ctl = rec[0];
	size_t n = len - 1;

	memcpy(mad, rec + 1, n);
	pthread_mutex_lock(&droce_cm.lock);
	patch(mad, n, ctl);
	droce_cm_rx(fz.dev, &fz.peer, 0, mad, n);
	pthread_mutex_unlock(&droce_cm.lock);
	codec_check(mad, n);
	drain((enum answer)((ctl >> CTL_ANSWER_SHIFT) & 3));
}

static void
invariants(void)
{
	struct droce_cm_stats s;
	struct cm_conn *c;
	unsigned int n = 0;

	CHECK(droce_cm_query_stats(&s) == 0, "droce_cm_query_stats: %s",
	      strerror(errno));
	CHECK(s.ids == 1 && s.listeners == 1,
	      "%llu ids, %llu listening: only the listener should be left",
	      (unsigned long long)s.ids, (unsigned long long)s.listeners);
	CHECK(s.events_queued == 0, "%llu events queued",
	      (unsigned long long)s.events_queued);
	pthread_mutex_lock(&droce_cm.lock);
	LIST_FOREACH(c, &droce_cm.conns, all) {
		n++;
		CHECK(c->ctx == NULL, "conn %08x (%s) still has an id",
		      c->local_id, droce_cm_state_name(c->state));
		CHECK(c->deadline_ms != 0,
		      "conn %08x (%s) has no id and no timer: it is leaked",
		      c->local_id, droce_cm_state_name(c->state));
	}
	CHECK(n == droce_cm.stats.conns, "%u conns listed, %llu counted", n,
	      (unsigned long long)droce_cm.stats.conns);
	pthread_mutex_unlock(&droce_cm.lock);
	CHECK(n <= MAX_CONNS, "%u connections", n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off, n;

	codec_check(data, size);
	if (!fz.ready)
		setup();
	for (off = 0; off + 1 < size; off += n) {
		n = size - off < REC_LEN ? size - off : REC_LEN;
		feed(data + off, n);
	}
	/* every child goes, and what they were told with them */
	drain(ANS_DESTROY);
	while (fz.nchild > 0)
		child_destroy(fz.nchild - 1);
	drain(ANS_DESTROY);
	invariants();
	return 0;
}
