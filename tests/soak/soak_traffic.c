/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The soak's traffic. A worker is a thread that owns the QPs of one kind
 * on both devices: it posts on droce0's side, receives on droce1's, and
 * checks everything on the way as a verbs application would. Each
 * message has a sequence number in its stream (one sending QP), and its
 * bytes are a function of the stream, the number and the length alone,
 * so any copy of it can be checked without keeping the original.
 *
 * Per kind:
 *  - RC: SEND, SEND with immediate, SEND with invalidate (of a type 2
 *    window droce1 binds through its QP, WRITEs going through it while
 *    bound), WRITE, WRITE with immediate, READ, both atomics and
 *    ATOMIC_WRITE. Every completion once and in posting order, every
 *    receive the next message of the stream, every atomic's result the
 *    model's, the target the model's at the end.
 *  - SRQ: two RC pairs whose receivers take their WQEs from one SRQ, in
 *    whatever order the messages come; each QP's receives in its order.
 *  - XRC: an initiator on droce0, a target and an XRC SRQ on droce1.
 *  - UC: SEND and WRITE, with and without immediate. A receive names
 *    its message (immediate or header); every message before it not
 *    seen is lost (a plain WRITE that lost a packet must have placed
 *    only whole packets from its start), unless it turns up right after
 *    (overtaken); a one-packet message may arrive twice. A 0-byte probe
 *    settles the last ones.
 *  - UD: datagrams of up to the MTU; lost, duplicated or overtaken ones
 *    are counted, any that arrives must be whole and right.
 *
 * Memory is allocated and touched when a worker is made, so that the
 * resident set stays flat while it runs.
 */

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>

#include <droce.h>

#include "droce_engine.h"
#include "harness.h"
#include "soak.h"

#define SLOT (1u << 20)         /* the largest message */
#define UD_SLOT 2048u           /* a datagram and its GRH area */
#define UD_MTU 1024u
#define GRH 40u
#define MTU 1024u
#define WIN 8u                  /* messages in flight per stream */
#define MAX_STREAMS 2
#define HIST 4096u              /* UD: datagrams remembered */
#define POISON 0xa5
#define QKEY 0x11111111u
#define PROBE_MS 20
#define RECHECK_MS 5
#ifndef STUCK_MS
#define STUCK_MS 120000
#endif
#define UD_LINGER_MS 300

#define WR_STREAM_SHIFT 56
#define WR_PROBE (1ull << 62)
#define WR_BIND (1ull << 61)
#define WR_SEQ_MASK ((1ull << WR_STREAM_SHIFT) - 1)
#define IMM_PROBE 0x80000000u
#define HDR_SEQ_MASK ((1ull << 48) - 1)

/* One message of a stream, in its slot while in flight. */
struct rec {
	uint64_t seq;
	uint64_t expect;        /* atomics: the old value to come back */
	uint32_t len;
	uint32_t inv_rkey;      /* SEND with invalidate: the key */
	uint8_t op;             /* enum ibv_wr_opcode */
	bool busy;
	bool send_done;
	bool recv_due;          /* a receive completion is to come */
	bool resolved;          /* UC: arrived, or known lost */
	uint64_t recheck_ms;    /* UC: a WRITE to look at again then */
};

/* UC, UD: what was sent, to check what arrives (late or twice too). */
struct hist {
	uint64_t seq;
	uint32_t len;
	uint8_t op;
	bool valid;
	uint8_t seen;
};

enum mw_state { MW_FREE, MW_BINDING, MW_BOUND, MW_INVALIDATING };

struct stream {
	struct soak_worker *w;
	unsigned int idx;               /* in its worker */
	uint32_t id;                    /* in the run: the pattern's */
	struct ibv_qp *sqp;             /* sender, droce0 */
	struct ibv_qp *rqp;             /* receiver, droce1 (XRC: target) */
	uint32_t srqn;                  /* XRC: the SRQ's number */
	struct ibv_ah *ah;              /* UD */
	uint8_t *abuf, *bbuf;
	struct ibv_mr *amr, *bmr;
	size_t slot;
	unsigned int ndst;              /* WRITE targets on droce1 */
	size_t alen, blen;
	uint64_t next_seq;              /* the next to post */
	uint64_t oldest;                /* the oldest not retired */
	uint64_t next_scomp;            /* the next send completion */
	uint64_t oldest_ms;             /* when oldest last moved */
	struct rec rec[WIN];
	uint64_t rfifo[WIN];            /* ordered kinds: receives to come */
	unsigned int rhead, rtail;
	uint64_t model;                 /* the atomic target's value */
	int64_t last_recv;              /* UC: the last seq settled */
	uint64_t progress_ms;           /* UC: when last settled */
	uint64_t probe_ms;              /* UC: when last probed */
	bool probe_out;                 /* UC: a probe not completed yet */
	struct hist *hist;              /* UC, UD */
	uint64_t max_seen;
	bool any_seen;
	struct ibv_mw *mw;              /* RC */
	uint32_t mw_rkey;
	enum mw_state mw_state;
};

struct soak_worker {
	enum soak_kind kind;
	unsigned int id;
	pthread_t thread;
	bool started;
	uint64_t rng;
	struct ibv_context *actx, *bctx;
	struct ibv_pd *apd, *bpd;
	struct ibv_cq *ascq, *arcq, *bscq, *brcq;
	struct ibv_srq *srq;
	struct ibv_xrcd *xrcd;
	union ibv_gid agid, bgid;
	uint8_t *ring;
	struct ibv_mr *ring_mr;
	unsigned int nrecv;
	size_t rslot;
	struct stream s[MAX_STREAMS];
	unsigned int ns;
	struct soak_tally tally;
	int ret;
};

uint8_t soak_qp_timeout = 14;
static bool posting = true;
static bool failed;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static char failures[8][512];
static unsigned int nfailures;

static const char *const kind_names[SOAK_KIND_MAX] = {
	[SOAK_RC] = "rc", [SOAK_UC] = "uc", [SOAK_UD] = "ud",
	[SOAK_XRC] = "xrc", [SOAK_SRQ] = "srq",
};

const char *
soak_kind_name(enum soak_kind k)
{
	return k < SOAK_KIND_MAX ? kind_names[k] : "?";
}

uint64_t
soak_now_ms(void)
{
	return ep_now_ms();
}

void
soak_fail(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fail_lock);
	if (nfailures < RTE_DIM(failures)) {
		va_start(ap, fmt);
		vsnprintf(failures[nfailures], sizeof(failures[0]), fmt, ap);
		va_end(ap);
	}
	nfailures++;
	pthread_mutex_unlock(&fail_lock);
	__atomic_store_n(&failed, true, __ATOMIC_RELEASE);
	soak_stop_posting();
}

bool
soak_failed(void)
{
	return __atomic_load_n(&failed, __ATOMIC_ACQUIRE);
}

void
soak_print_failures(void)
{
	unsigned int i;

	pthread_mutex_lock(&fail_lock);
	for (i = 0; i < nfailures && i < RTE_DIM(failures); i++)
		fprintf(stderr, "droce-soak: FAIL: %s\n", failures[i]);
	if (nfailures > RTE_DIM(failures))
		fprintf(stderr, "droce-soak: ... and %u more\n",
			nfailures - (unsigned int)RTE_DIM(failures));
	pthread_mutex_unlock(&fail_lock);
}

void
soak_stop_posting(void)
{
	__atomic_store_n(&posting, false, __ATOMIC_RELEASE);
}

/* ---- patterns ---------------------------------------------------------- */

static inline uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t
rnd(struct soak_worker *w)
{
	w->rng += UINT64_C(0x9e3779b97f4a7c15);
	return mix64(w->rng);
}

/* The name a message of 8 bytes or more starts with. */
static inline uint64_t
pat_header(uint32_t id, uint64_t seq)
{
	return (uint64_t)id << 48 | (seq & HDR_SEQ_MASK);
}

/*
 * Byte @p i of message @p seq of stream @p id, @p len bytes long: its
 * name first (if it has room), then words of a counter-based generator,
 * so any range can be made or checked alone.
 */
static inline uint64_t
pat_word(uint32_t id, uint64_t seq, size_t w)
{
	return mix64(pat_header(id, seq) * UINT64_C(0x100000001b3) + w);
}

static void
pat_fill(uint8_t *p, uint32_t len, uint32_t id, uint64_t seq)
{
	size_t i = 0, w = 0;

	if (len >= 8) {
		uint64_t h = pat_header(id, seq);

		memcpy(p, &h, 8);
		i = 8;
	}
	for (; i + 8 <= len; i += 8, w++) {
		uint64_t v = pat_word(id, seq, w);

		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = pat_word(id, seq, w);

		memcpy(p + i, &v, len - i);
	}
}

/*
 * The first byte of p[0, n) that is not what message @p seq (@p len
 * bytes) has there, or n if all are.
 */
static size_t
pat_mismatch(const uint8_t *p, size_t n, uint32_t len, uint32_t id,
	     uint64_t seq)
{
	uint8_t want[8];
	size_t i = 0, w = 0, k;

	if (len >= 8) {
		uint64_t h = pat_header(id, seq);

		memcpy(want, &h, 8);
		for (k = 0; k < 8 && k < n; k++)
			if (p[k] != want[k])
				return k;
		i = 8;
	}
	for (; i < n; i += 8, w++) {
		uint64_t v = pat_word(id, seq, w);
		size_t m = n - i < 8 ? n - i : 8;

		if (m == 8 && memcmp(p + i, &v, 8) == 0)
			continue;
		memcpy(want, &v, 8);
		for (k = 0; k < m; k++)
			if (p[i + k] != want[k])
				return i + k;
	}
	return n;
}

/* Is p[from, to) all poison? */
static bool
poisoned(const uint8_t *p, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		if (p[i] != POISON)
			return false;
	return true;
}

/* ---- sizes and opcodes ------------------------------------------------- */

struct mix {
	uint8_t op;
	uint8_t weight;
};

static const struct mix rc_mix[] = {
	{ IBV_WR_SEND, 3 }, { IBV_WR_SEND_WITH_IMM, 2 },
	{ IBV_WR_SEND_WITH_INV, 1 }, { IBV_WR_RDMA_WRITE, 3 },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, 2 }, { IBV_WR_RDMA_READ, 3 },
	{ IBV_WR_ATOMIC_CMP_AND_SWP, 1 }, { IBV_WR_ATOMIC_FETCH_AND_ADD, 1 },
	{ IBV_WR_ATOMIC_WRITE, 1 }, { 0, 0 },
};
static const struct mix uc_mix[] = {
	{ IBV_WR_SEND, 3 }, { IBV_WR_SEND_WITH_IMM, 2 },
	{ IBV_WR_RDMA_WRITE, 3 }, { IBV_WR_RDMA_WRITE_WITH_IMM, 2 },
	{ 0, 0 },
};
static const struct mix ud_mix[] = {
	{ IBV_WR_SEND, 1 }, { IBV_WR_SEND_WITH_IMM, 1 }, { 0, 0 },
};
/* droce's XRC has no ATOMIC_WRITE; a target has no window to invalidate */
static const struct mix xrc_mix[] = {
	{ IBV_WR_SEND, 3 }, { IBV_WR_SEND_WITH_IMM, 2 },
	{ IBV_WR_RDMA_WRITE, 3 }, { IBV_WR_RDMA_WRITE_WITH_IMM, 2 },
	{ IBV_WR_RDMA_READ, 3 }, { IBV_WR_ATOMIC_CMP_AND_SWP, 1 },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, 1 }, { 0, 0 },
};
static const struct mix srq_mix[] = {
	{ IBV_WR_SEND, 3 }, { IBV_WR_SEND_WITH_IMM, 2 },
	{ IBV_WR_RDMA_WRITE, 2 }, { IBV_WR_RDMA_WRITE_WITH_IMM, 2 },
	{ IBV_WR_RDMA_READ, 2 }, { IBV_WR_ATOMIC_FETCH_AND_ADD, 1 },
	{ 0, 0 },
};

static const struct mix *const mixes[SOAK_KIND_MAX] = {
	[SOAK_RC] = rc_mix, [SOAK_UC] = uc_mix, [SOAK_UD] = ud_mix,
	[SOAK_XRC] = xrc_mix, [SOAK_SRQ] = srq_mix,
};

static uint8_t
pick_op(struct soak_worker *w)
{
	const struct mix *m = mixes[w->kind];
	unsigned int total = 0, i, r;

	for (i = 0; m[i].weight != 0; i++)
		total += m[i].weight;
	r = (unsigned int)(rnd(w) % total);
	for (i = 0; r >= m[i].weight; i++)
		r -= m[i].weight;
	return m[i].op;
}

/*
 * A length of 0 to @p max: one in four from the edges (empty, a word,
 * around the MTU), the rest spread evenly over the powers of two, so
 * that small messages are many and megabyte ones still common.
 */
static uint32_t
pick_len(struct soak_worker *w, uint32_t max)
{
	static const uint32_t edges[] = {
		0, 1, 7, 8, 9, 1023, 1024, 1025, 2047, 2048, 4096,
		SLOT - 1, SLOT,
	};
	uint64_t r = rnd(w);
	uint32_t len;

	if ((r & 3) == 0) {
		len = edges[(r >> 2) % RTE_DIM(edges)];
	} else {
		unsigned int e = (unsigned int)((r >> 8) % 21);

		len = (1u << e) + (uint32_t)((r >> 16) % (1u << e));
	}
	return len > max ? (uint32_t)(rnd(w) % (max + 1)) : len;
}

static bool
op_recv(uint8_t op)
{
	return (droce_wr_flags(op) & DROCE_WR_SEND) ||
		op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

static bool
op_imm(uint8_t op)
{
	return (droce_wr_flags(op) & DROCE_WR_IMM) != 0;
}

static bool
op_atomic(uint8_t op)
{
	return (droce_wr_flags(op) & DROCE_WR_ATOMIC) != 0;
}

static bool
ordered(const struct soak_worker *w)
{
	return w->kind == SOAK_RC || w->kind == SOAK_XRC ||
		w->kind == SOAK_SRQ;
}

/* ---- tallies ----------------------------------------------------------- */

static inline void
bump(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

static void
count_done(struct soak_worker *w, const struct rec *r)
{
	bump(&w->tally.done, 1);
	bump(&w->tally.bytes, r->len);
	bump(&w->tally.ops[r->op & (SOAK_NOPS - 1)], 1);
}

void
soak_worker_tally(const struct soak_worker *w, struct soak_tally *t)
{
	const uint64_t *from = (const uint64_t *)&w->tally;
	uint64_t *to = (uint64_t *)t;
	size_t i;

	for (i = 0; i < sizeof(*t) / sizeof(uint64_t); i++)
		to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
}

enum soak_kind
soak_worker_kind(const struct soak_worker *w)
{
	return w->kind;
}

/* ---- where things are -------------------------------------------------- */

static uint8_t *
a_src(struct stream *s, uint64_t seq)
{
	return s->abuf + (seq % WIN) * s->slot;
}

static uint8_t *
a_dst(struct stream *s, uint64_t seq)
{
	return s->abuf + (WIN + seq % WIN) * s->slot;
}

static uint8_t *
b_dst(struct stream *s, uint64_t seq)
{
	return s->bbuf + (seq % s->ndst) * s->slot;
}

static uint8_t *
b_src(struct stream *s, uint64_t seq)
{
	return s->bbuf + (s->ndst + seq % WIN) * s->slot;
}

static uint8_t *
b_atomic(struct stream *s)
{
	return s->bbuf + (s->ndst + WIN) * s->slot;
}

/* Bytes after a message that must stay poison: up to 8, in its slot. */
static size_t
tail_of(const struct stream *s, uint32_t len)
{
	return len + 8 <= s->slot ? len + 8 : s->slot;
}

static const char *
op_name(uint8_t op)
{
	const struct droce_wr_info *i = droce_wr_info(op);

	return i != NULL ? i->name : "?";
}

#define SFAIL(s, seq, fmt, ...) \
	soak_fail("%s%u stream %u msg %llu: " fmt, \
		  soak_kind_name((s)->w->kind), (s)->w->id, (s)->idx, \
		  (unsigned long long)(seq), ##__VA_ARGS__)

/* ---- posting ----------------------------------------------------------- */

static int
post_ring(struct soak_worker *w, unsigned int k)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(w->ring + k * w->rslot),
		.length = (uint32_t)w->rslot,
		.lkey = w->ring_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (w->srq != NULL)
		return ibv_post_srq_recv(w->srq, &wr, &bad);
	return ibv_post_recv(w->s[0].rqp, &wr, &bad);
}

/* RC: droce1 binds its window again, under the next key. */
static void
mw_bind(struct stream *s)
{
	struct ibv_send_wr wr = {
		.wr_id = WR_BIND | (uint64_t)s->idx << WR_STREAM_SHIFT,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret;

	s->mw_rkey = ibv_inc_rkey(s->mw_rkey);
	wr.bind_mw.mw = s->mw;
	wr.bind_mw.rkey = s->mw_rkey;
	wr.bind_mw.bind_info.mr = s->bmr;
	wr.bind_mw.bind_info.addr = (uintptr_t)s->bbuf;
	wr.bind_mw.bind_info.length = s->ndst * s->slot;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ret = ibv_post_send(s->rqp, &wr, &bad);
	if (ret != 0)
		soak_fail("rc%u: BIND_MW: %s", s->w->id, strerror(ret));
	s->mw_state = MW_BINDING;
}

/* Post the next message of @p s if its slot is free. @return posted. */
static bool
stream_post(struct stream *s)
{
	struct soak_worker *w = s->w;
	uint64_t seq = s->next_seq;
	struct rec *r = &s->rec[seq % WIN];
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint32_t rkey = s->bmr->rkey;
	uint8_t op;
	uint32_t len;
	int ret;

	if (r->busy)
		return false;
	op = pick_op(w);
	if (op == IBV_WR_SEND_WITH_INV && s->mw_state != MW_BOUND)
		op = IBV_WR_SEND;
	len = op_atomic(op) || op == IBV_WR_ATOMIC_WRITE ? 8 :
		pick_len(w, w->kind == SOAK_UD ? UD_MTU : SLOT);
	/* a UC or UD SEND without immediate carries its name */
	if (!ordered(w) && op == IBV_WR_SEND && len < 8)
		len = 8;

	memset(&wr, 0, sizeof(wr));
	memset(r, 0, sizeof(*r));
	wr.wr_id = seq | (uint64_t)s->idx << WR_STREAM_SHIFT;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	sge.addr = (uintptr_t)a_src(s, seq);
	sge.length = len;
	sge.lkey = s->amr->lkey;
	if (op_imm(op))
		wr.imm_data = htobe32((uint32_t)seq);

	switch (op) {
	case IBV_WR_SEND_WITH_INV:
		wr.invalidate_rkey = s->mw_rkey;
		r->inv_rkey = s->mw_rkey;
		s->mw_state = MW_INVALIDATING;
		/* fall through */
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		pat_fill(a_src(s, seq), len, s->id, seq);
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		pat_fill(a_src(s, seq), len, s->id, seq);
		memset(b_dst(s, seq), POISON, tail_of(s, len));
		/* through the window, while droce1 has it bound */
		if (s->mw_state == MW_BOUND && (rnd(w) & 1))
			rkey = s->mw_rkey;
		wr.wr.rdma.remote_addr = (uintptr_t)b_dst(s, seq);
		wr.wr.rdma.rkey = rkey;
		break;
	case IBV_WR_RDMA_READ:
		pat_fill(b_src(s, seq), len, s->id, seq);
		memset(a_dst(s, seq), POISON, tail_of(s, len));
		sge.addr = (uintptr_t)a_dst(s, seq);
		wr.wr.rdma.remote_addr = (uintptr_t)b_src(s, seq);
		wr.wr.rdma.rkey = rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		memset(a_dst(s, seq), POISON, 16);
		sge.addr = (uintptr_t)a_dst(s, seq);
		wr.wr.atomic.remote_addr = (uintptr_t)b_atomic(s);
		wr.wr.atomic.rkey = rkey;
		r->expect = s->model;
		if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.compare_add = rnd(w);
			s->model += wr.wr.atomic.compare_add;
		} else {
			/* half of them compare equal and swap */
			wr.wr.atomic.compare_add = (rnd(w) & 1) ? s->model :
				s->model ^ (1 + (rnd(w) & 0xff));
			wr.wr.atomic.swap = rnd(w);
			if (wr.wr.atomic.compare_add == s->model)
				s->model = wr.wr.atomic.swap;
		}
		break;
	case IBV_WR_ATOMIC_WRITE: {
		uint64_t v = rnd(w);

		memcpy(a_src(s, seq), &v, 8);
		wr.wr.rdma.remote_addr = (uintptr_t)b_atomic(s);
		wr.wr.rdma.rkey = rkey;
		s->model = v;
		break;
	}
	default:
		break;
	}
	if (w->kind == SOAK_XRC)
		wr.qp_type.xrc.remote_srqn = s->srqn;
	if (w->kind == SOAK_UD) {
		wr.wr.ud.ah = s->ah;
		wr.wr.ud.remote_qpn = s->rqp->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	}
	if (s->hist != NULL) {
		struct hist *h = &s->hist[seq % HIST];

		h->seq = seq;
		h->len = len;
		h->op = op;
		h->valid = true;
		h->seen = 0;
	}
	r->seq = seq;
	r->op = op;
	r->len = len;
	r->busy = true;
	/* only RC, XRC and SRQ wait for the receive: UC and UD may lose it */
	r->recv_due = op_recv(op) && ordered(w);
	if (r->recv_due)
		s->rfifo[s->rtail++ % WIN] = seq;
	ret = ibv_post_send(s->sqp, &wr, &bad);
	if (ret != 0) {
		SFAIL(s, seq, "post %s: %s", op_name(op), strerror(ret));
		return false;
	}
	if (s->oldest == seq)
		s->oldest_ms = soak_now_ms();
	s->next_seq++;
	bump(&w->tally.posted, 1);
	return true;
}

/* UC: a 0-byte SEND naming the next message: all before it are settled. */
static void
uc_probe(struct stream *s)
{
	struct ibv_send_wr wr = {
		.wr_id = WR_PROBE,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(IMM_PROBE | (uint32_t)s->next_seq),
	}, *bad;
	int ret = ibv_post_send(s->sqp, &wr, &bad);

	if (ret != 0)
		soak_fail("uc%u: probe: %s", s->w->id, strerror(ret));
	s->probe_ms = soak_now_ms();
	s->probe_out = true;
	bump(&s->w->tally.probes, 1);
}

/* ---- checking ---------------------------------------------------------- */

/* @p p holds message @p r whole, poison after it (up to @p tail). */
static void
check_bytes(struct stream *s, const struct rec *r, const uint8_t *p,
	    size_t tail, const char *where)
{
	size_t bad = pat_mismatch(p, r->len, r->len, s->id, r->seq);

	if (bad != r->len)
		SFAIL(s, r->seq, "%s %u bytes: byte %zu wrong at %s",
		      op_name(r->op), r->len, bad, where);
	else if (!poisoned(p, r->len, tail))
		SFAIL(s, r->seq, "%s %u bytes: written past its end at %s",
		      op_name(r->op), r->len, where);
}

/* What a finished message left where it went (not SENDs: at receive). */
static void
check_placed(struct stream *s, const struct rec *r)
{
	uint64_t old;

	switch (r->op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		check_bytes(s, r, b_dst(s, r->seq), tail_of(s, r->len),
			    "droce1");
		break;
	case IBV_WR_RDMA_READ:
		check_bytes(s, r, a_dst(s, r->seq), tail_of(s, r->len),
			    "droce0");
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		memcpy(&old, a_dst(s, r->seq), 8);
		if (old != r->expect)
			SFAIL(s, r->seq, "%s returned %#llx, the model %#llx",
			      op_name(r->op), (unsigned long long)old,
			      (unsigned long long)r->expect);
		if (!poisoned(a_dst(s, r->seq), 8, 16))
			SFAIL(s, r->seq, "%s wrote past its 8 bytes",
			      op_name(r->op));
		break;
	default:
		break;
	}
}

/* Retire the messages at the front that are finished, in order. */
static void
retire(struct stream *s)
{
	while (s->oldest != s->next_seq) {
		struct rec *r = &s->rec[s->oldest % WIN];

		if (!r->send_done || r->recv_due ||
		    (s->w->kind == SOAK_UC && !r->resolved))
			break;
		if (ordered(s->w)) {
			check_placed(s, r);
			count_done(s->w, r);
		}
		r->busy = false;
		s->oldest++;
		s->oldest_ms = soak_now_ms();
	}
}

/*
 * UC: a plain WRITE before one that arrived. Whole, or lost: then the
 * packets that were placed are whole packets from its start, and the
 * rest is as it was. A WRITE held back behind the next message arrives
 * after it (a FIRST or ONLY packet starts a message whatever its PSN),
 * and may be being written as this looks: what is neither is looked at
 * again a little later (@p final false), and only then fails.
 * @return true if settled.
 */
static bool
uc_write_settle(struct stream *s, struct rec *r, bool final)
{
	const uint8_t *p = b_dst(s, r->seq);
	size_t good = pat_mismatch(p, r->len, r->len, s->id, r->seq);
	size_t whole = good / MTU * MTU;

	if (good == r->len && poisoned(p, r->len, tail_of(s, r->len))) {
		count_done(s->w, r);
		if (final)
			bump(&s->w->tally.reordered, 1);
		return true;
	}
	/* bytes of the pattern that happen to be poison may end a prefix */
	if (!poisoned(p, good, tail_of(s, r->len)) ||
	    !poisoned(p, whole, good)) {
		if (!final)
			return false;
		SFAIL(s, r->seq, "UC WRITE %u bytes, lost: %zu right, "
		      "then not as it was", r->len, good);
		return true;
	}
	bump(&s->w->tally.lost, 1);
	if (whole != 0)
		bump(&s->w->tally.partial, 1);
	return true;
}

/* UC: everything before @p upto not settled yet is lost (or a WRITE). */
static void
uc_settle(struct stream *s, uint64_t upto)
{
	uint64_t seq;

	for (seq = (uint64_t)(s->last_recv + 1); seq < upto; seq++) {
		struct rec *r = &s->rec[seq % WIN];

		if (!r->busy || r->seq != seq) {
			SFAIL(s, seq, "UC: settled but not in flight");
			return;
		}
		if (r->op == IBV_WR_RDMA_WRITE &&
		    !uc_write_settle(s, r, false)) {
			r->recheck_ms = soak_now_ms() + RECHECK_MS;
			continue;
		}
		if (r->op != IBV_WR_RDMA_WRITE)
			bump(&s->w->tally.lost, 1);
		r->resolved = true;
	}
	if ((int64_t)upto - 1 > s->last_recv)
		s->last_recv = (int64_t)upto - 1;
	s->progress_ms = soak_now_ms();
	retire(s);
}

/* The name of a UC or UD message: its immediate, or its first 8 bytes. */
static bool
msg_name(struct stream *s, const struct ibv_wc *wc, const uint8_t *data,
	 uint32_t len, uint64_t *seq)
{
	uint64_t h;

	if (wc->wc_flags & IBV_WC_WITH_IMM) {
		*seq = be32toh(wc->imm_data);
		return true;
	}
	if (len < 8) {
		soak_fail("%s%u: a receive of %u bytes without a name",
			  soak_kind_name(s->w->kind), s->w->id, len);
		return false;
	}
	memcpy(&h, data, 8);
	if (h >> 48 != s->id) {
		soak_fail("%s%u: a receive of stream %llu",
			  soak_kind_name(s->w->kind), s->w->id,
			  (unsigned long long)(h >> 48));
		return false;
	}
	*seq = h & HDR_SEQ_MASK;
	return true;
}

/*
 * UC: a receive names its message. A FIRST or ONLY packet starts a
 * message whatever its PSN (droce's UC responder): so a message of
 * one packet that the link duplicated arrives twice, and one held back
 * behind the next arrives after it. Those are counted; anything else out
 * of order, or any byte wrong, fails.
 */
static void
uc_recv(struct soak_worker *w, const struct ibv_wc *wc, const uint8_t *data)
{
	struct stream *s = &w->s[0];
	struct hist *h;
	struct rec *r, late;
	uint64_t seq;

	if ((wc->wc_flags & IBV_WC_WITH_IMM) &&
	    (be32toh(wc->imm_data) & IMM_PROBE)) {
		uint64_t upto = be32toh(wc->imm_data) & ~IMM_PROBE;

		if (wc->opcode != IBV_WC_RECV || wc->byte_len != 0 ||
		    upto > s->next_seq)
			SFAIL(s, upto, "UC probe: opcode %d, %u bytes",
			      wc->opcode, wc->byte_len);
		else if ((int64_t)upto > s->last_recv + 1)
			uc_settle(s, upto);
		return;
	}
	if (!msg_name(s, wc, data, wc->byte_len, &seq))
		return;
	h = &s->hist[seq % HIST];
	if (seq >= s->next_seq || !h->valid || h->seq != seq) {
		SFAIL(s, seq, "UC: a receive for a message never sent");
		return;
	}
	r = &s->rec[seq % WIN];
	if (!r->busy || r->seq != seq) {
		/* its slot has moved on: check what the receive holds */
		memset(&late, 0, sizeof(late));
		late.seq = seq;
		late.op = h->op;
		late.len = h->len;
		r = &late;
	}
	if (r->op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    wc->byte_len != r->len)
			SFAIL(s, seq, "UC WRITE_WITH_IMM: opcode %d, %u bytes",
			      wc->opcode, wc->byte_len);
		else if (r != &late)
			check_bytes(s, r, b_dst(s, seq), tail_of(s, r->len),
				    "droce1");
	} else {
		if (wc->opcode != IBV_WC_RECV || wc->byte_len != r->len ||
		    !!(wc->wc_flags & IBV_WC_WITH_IMM) != op_imm(r->op))
			SFAIL(s, seq, "UC %s: opcode %d, %u bytes, flags %#x",
			      op_name(r->op), wc->opcode, wc->byte_len,
			      wc->wc_flags);
		else
			check_bytes(s, r, data, r->len, "the receive");
	}
	if (h->seen++ != 0) {
		bump(&w->tally.dups, 1);
		return;
	}
	count_done(w, r);
	if ((int64_t)seq <= s->last_recv) {
		/* taken for lost when a later one came: it was overtaken */
		bump(&w->tally.lost, (uint64_t)-1);
		bump(&w->tally.reordered, 1);
		return;
	}
	uc_settle(s, seq);
	r->resolved = true;
	s->last_recv = (int64_t)seq;
	retire(s);
}

static void
ud_recv(struct soak_worker *w, const struct ibv_wc *wc, const uint8_t *data)
{
	struct stream *s = &w->s[0];
	const uint8_t *p = data + GRH;
	uint32_t len;
	struct hist *h;
	struct rec r;
	uint64_t seq;

	if (wc->byte_len < GRH || !(wc->wc_flags & IBV_WC_GRH) ||
	    wc->src_qp != s->sqp->qp_num) {
		soak_fail("ud%u: a datagram of %u bytes from QP %#x, flags %#x",
			  w->id, wc->byte_len, wc->src_qp, wc->wc_flags);
		return;
	}
	len = wc->byte_len - GRH;
	if (!msg_name(s, wc, p, len, &seq))
		return;
	h = &s->hist[seq % HIST];
	if (!h->valid || h->seq != seq || seq >= s->next_seq) {
		SFAIL(s, seq, "UD: a datagram never sent");
		return;
	}
	if (len != h->len || !!(wc->wc_flags & IBV_WC_WITH_IMM) !=
	    op_imm(h->op)) {
		SFAIL(s, seq, "UD %s of %u bytes arrived with %u", op_name(h->op),
		      h->len, len);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.seq = seq;
	r.len = len;
	r.op = h->op;
	check_bytes(s, &r, p, len, "the receive");
	if (h->seen++ != 0) {
		bump(&w->tally.dups, 1);
		return;
	}
	count_done(w, &r);
	if (s->any_seen && seq < s->max_seen)
		bump(&w->tally.reordered, 1);
	if (!s->any_seen || seq > s->max_seen)
		s->max_seen = seq;
	s->any_seen = true;
}

static struct stream *
stream_of_rqpn(struct soak_worker *w, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < w->ns; i++)
		if (w->s[i].rqp->qp_num == qpn)
			return &w->s[i];
	return NULL;
}

/* RC, XRC, SRQ: the next receive-consuming message of its QP. */
static void
ordered_recv(struct soak_worker *w, const struct ibv_wc *wc,
	     const uint8_t *data)
{
	struct stream *s = stream_of_rqpn(w, wc->qp_num);
	struct rec *r;
	uint64_t seq;

	if (s == NULL) {
		soak_fail("%s%u: a receive for QP %#x", soak_kind_name(w->kind),
			  w->id, wc->qp_num);
		return;
	}
	if (s->rhead == s->rtail) {
		soak_fail("%s%u stream %u: a receive no message asked for",
			  soak_kind_name(w->kind), w->id, s->idx);
		return;
	}
	seq = s->rfifo[s->rhead++ % WIN];
	r = &s->rec[seq % WIN];
	if (w->kind == SOAK_XRC && wc->src_qp != s->sqp->qp_num)
		SFAIL(s, seq, "XRC receive from QP %#x", wc->src_qp);
	if (r->op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    wc->byte_len != r->len)
			SFAIL(s, seq, "WRITE_WITH_IMM arrived as opcode %d, "
			      "%u bytes", wc->opcode, wc->byte_len);
	} else {
		if (wc->opcode != IBV_WC_RECV || wc->byte_len != r->len)
			SFAIL(s, seq, "%s of %u bytes arrived as opcode %d, "
			      "%u bytes", op_name(r->op), r->len, wc->opcode,
			      wc->byte_len);
		else
			check_bytes(s, r, data, r->len, "the receive");
	}
	if (op_imm(r->op) != !!(wc->wc_flags & IBV_WC_WITH_IMM) ||
	    (op_imm(r->op) && be32toh(wc->imm_data) != (uint32_t)seq))
		SFAIL(s, seq, "%s: immediate %#x, flags %#x", op_name(r->op),
		      be32toh(wc->imm_data), wc->wc_flags);
	if (r->op == IBV_WR_SEND_WITH_INV) {
		if (!(wc->wc_flags & IBV_WC_WITH_INV) ||
		    wc->invalidated_rkey != r->inv_rkey)
			SFAIL(s, seq, "SEND_WITH_INV: flags %#x, key %#x not "
			      "%#x", wc->wc_flags, wc->invalidated_rkey,
			      r->inv_rkey);
		s->mw_state = MW_FREE;
	} else if (wc->wc_flags & IBV_WC_WITH_INV) {
		SFAIL(s, seq, "%s arrived invalidating", op_name(r->op));
	}
	r->recv_due = false;
	retire(s);
}

/* ---- polling ----------------------------------------------------------- */

/* What the QPs of @p s say of themselves, for a failure's message. */
static void
qp_story(struct stream *s, char *buf, size_t len)
{
	struct droce_qp_counters c0, c1;

	droce_query_qp_counters(s->sqp, &c0);
	droce_query_qp_counters(s->rqp, &c1);
	snprintf(buf, len, "sender QP %#x %s: %llu packets, %llu resent, "
		 "%llu timeouts, %llu NAKs; receiver QP %#x %s: %llu packets, "
		 "%llu duplicates, %llu NAKs sent, %llu dropped",
		 s->sqp->qp_num,
		 droce_qp_state_str((enum ibv_qp_state)ep_qp_state(s->sqp)),
		 (unsigned long long)c0.tx_pkts,
		 (unsigned long long)c0.retransmits,
		 (unsigned long long)c0.timeouts,
		 (unsigned long long)c0.naks_rcvd, s->rqp->qp_num,
		 droce_qp_state_str((enum ibv_qp_state)ep_qp_state(s->rqp)),
		 (unsigned long long)c1.rx_pkts,
		 (unsigned long long)c1.dup_reqs,
		 (unsigned long long)c1.naks_sent,
		 (unsigned long long)c1.rx_dropped);
}

/* The oldest message has not finished for STUCK_MS: say what is known. */
static void
stuck(struct stream *s)
{
	const struct rec *r = &s->rec[s->oldest % WIN];
	char story[320];

	qp_story(s, story, sizeof(story));
	SFAIL(s, s->oldest, "%s of %u bytes stuck for %u s (sent %d, "
	      "received %d; %s)", op_name(r->op), r->len, STUCK_MS / 1000,
	      r->send_done, !r->recv_due, story);
}

static unsigned int
poll_send(struct soak_worker *w)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(w->ascq, 16, wc), i;

	if (n < 0) {
		soak_fail("%s%u: poll: %d", soak_kind_name(w->kind), w->id, n);
		return 0;
	}
	for (i = 0; i < n; i++) {
		struct stream *s = &w->s[(wc[i].wr_id >> WR_STREAM_SHIFT) & 3];
		uint64_t seq = wc[i].wr_id & WR_SEQ_MASK;
		struct rec *r = &s->rec[seq % WIN];

		if (wc[i].wr_id & WR_PROBE) {
			if (wc[i].status != IBV_WC_SUCCESS)
				soak_fail("uc%u: probe: %s", w->id,
					  ibv_wc_status_str(wc[i].status));
			s->probe_out = false;
			continue;
		}
		if (wc[i].status != IBV_WC_SUCCESS) {
			char story[320] = "";

			if (!soak_failed())
				qp_story(s, story, sizeof(story));
			SFAIL(s, seq, "%s of %u bytes: %s %s", op_name(r->op),
			      r->len, ibv_wc_status_str(wc[i].status), story);
			continue;
		}
		if (seq != s->next_scomp || !r->busy || r->seq != seq) {
			SFAIL(s, seq, "completed out of order (expected %llu)",
			      (unsigned long long)s->next_scomp);
			continue;
		}
		s->next_scomp++;
		if (wc[i].opcode != droce_wr_info(r->op)->wc_opcode)
			SFAIL(s, seq, "%s completed as opcode %d",
			      op_name(r->op), wc[i].opcode);
		if (r->op == IBV_WR_RDMA_READ && wc[i].byte_len != r->len)
			SFAIL(s, seq, "READ of %u completed with %u", r->len,
			      wc[i].byte_len);
		r->send_done = true;
		if (w->kind == SOAK_UD)
			r->resolved = true;
		retire(s);
	}
	return (unsigned int)n;
}

static unsigned int
poll_recv(struct soak_worker *w)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(w->brcq, 16, wc), i;

	if (n < 0) {
		soak_fail("%s%u: poll: %d", soak_kind_name(w->kind), w->id, n);
		return 0;
	}
	for (i = 0; i < n; i++) {
		unsigned int k = (unsigned int)wc[i].wr_id;
		const uint8_t *data = w->ring + k * w->rslot;
		int ret;

		if (k >= w->nrecv || wc[i].status != IBV_WC_SUCCESS) {
			soak_fail("%s%u: receive %u: %s",
				  soak_kind_name(w->kind), w->id, k,
				  ibv_wc_status_str(wc[i].status));
			continue;
		}
		if (w->kind == SOAK_UC)
			uc_recv(w, &wc[i], data);
		else if (w->kind == SOAK_UD)
			ud_recv(w, &wc[i], data);
		else
			ordered_recv(w, &wc[i], data);
		ret = post_ring(w, k);
		if (ret != 0)
			soak_fail("%s%u: post_recv: %s",
				  soak_kind_name(w->kind), w->id,
				  strerror(ret));
	}
	return (unsigned int)n;
}

/* droce1's own sends: the window binds of RC. */
static unsigned int
poll_bsend(struct soak_worker *w)
{
	struct ibv_wc wc[4];
	int n = ibv_poll_cq(w->bscq, 4, wc), i;

	for (i = 0; i < n; i++) {
		struct stream *s = &w->s[(wc[i].wr_id >> WR_STREAM_SHIFT) & 3];

		if (wc[i].status != IBV_WC_SUCCESS ||
		    wc[i].opcode != IBV_WC_BIND_MW ||
		    !(wc[i].wr_id & WR_BIND) || s->mw_state != MW_BINDING) {
			soak_fail("rc%u: BIND_MW: %s, opcode %d", w->id,
				  ibv_wc_status_str(wc[i].status),
				  wc[i].opcode);
			continue;
		}
		s->mw_state = MW_BOUND;
	}
	return n > 0 ? (unsigned int)n : 0;
}

/* Is anything of @p s still to come? */
static bool
stream_busy(const struct stream *s)
{
	return s->oldest != s->next_seq || s->mw_state == MW_BINDING;
}

/* UC: the WRITEs that were being written when settled, looked at again. */
static void
uc_recheck(struct stream *s, uint64_t now)
{
	bool any = false;
	uint64_t seq;

	for (seq = s->oldest; seq != s->next_seq; seq++) {
		struct rec *r = &s->rec[seq % WIN];

		if (r->recheck_ms == 0 || now < r->recheck_ms)
			continue;
		uc_write_settle(s, r, true);
		r->recheck_ms = 0;
		r->resolved = true;
		any = true;
	}
	if (any)
		retire(s);
}

/* UC: the window waits on messages that may be lost: settle them. */
static void
uc_maybe_probe(struct stream *s, uint64_t now)
{
	uint64_t seq;

	/* one at a time: an engine kept busy elsewhere must not find the
	 * send queue filled with them */
	if (s->oldest == s->next_seq || s->probe_out ||
	    now < s->progress_ms + PROBE_MS || now < s->probe_ms + PROBE_MS)
		return;
	for (seq = s->oldest; seq != s->next_seq; seq++)
		if (!s->rec[seq % WIN].send_done)
			return;
	uc_probe(s);
}

static void *
worker_main(void *arg)
{
	struct soak_worker *w = arg;
	unsigned int sleep_us = 0, i;
	uint64_t drained_ms = 0;

	while (!soak_failed()) {
		bool post = __atomic_load_n(&posting, __ATOMIC_ACQUIRE);
		uint64_t now = soak_now_ms();
		unsigned int work = 0;
		bool busy = false;

		for (i = 0; i < w->ns && post; i++) {
			struct stream *s = &w->s[i];
			unsigned int k;

			for (k = 0; k < 4 && stream_post(s); k++)
				work++;
			if (s->mw != NULL && s->mw_state == MW_FREE)
				mw_bind(s);
		}
		work += poll_send(w);
		work += poll_recv(w);
		work += poll_bsend(w);
		for (i = 0; i < w->ns; i++) {
			struct stream *s = &w->s[i];

			if (w->kind == SOAK_UC) {
				uc_recheck(s, now);
				uc_maybe_probe(s, now);
			}
			if (stream_busy(s))
				busy = true;
			if (s->oldest != s->next_seq &&
			    now > s->oldest_ms + STUCK_MS)
				stuck(s);
		}
		if (!post && !busy) {
			/* UD: stragglers and duplicates still on the way */
			if (w->kind != SOAK_UD)
				break;
			if (drained_ms == 0)
				drained_ms = now;
			else if (now - drained_ms > UD_LINGER_MS)
				break;
		}
		if (work != 0) {
			sleep_us = 0;
			continue;
		}
		/* idle: back off, leaving the CPUs to the engine */
		sleep_us = sleep_us == 0 ? 20 : RTE_MIN(sleep_us * 2, 1000u);
		{
			struct timespec ts = { 0, (long)sleep_us * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	if (w->kind == SOAK_UD)
		bump(&w->tally.lost, w->tally.posted - w->tally.done);
	return NULL;
}

int
soak_worker_start(struct soak_worker *w)
{
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
		return -1;
	w->started = true;
	return 0;
}

int
soak_worker_join(struct soak_worker *w)
{
	if (!w->started)
		return 0;
	w->started = false;
	return pthread_join(w->thread, NULL) == 0 ? 0 : -1;
}

/* ---- making the QPs ---------------------------------------------------- */

static struct ibv_qp *
make_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
	struct ibv_srq *srq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.qp_type = type,
		.cap = {
			.max_send_wr = 4 * WIN,
			.max_recv_wr = 4 * WIN,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	return ibv_create_qp(pd, &qa);
}

static void
opts_of(struct ep_opts *o, enum ibv_qp_type type)
{
	ep_opts_default(o);
	o->qp_type = type;
	/* retry_cnt 7: exhausting it takes eight losses of the same packet
	 * in a row, which these rates never give */
	o->timeout = soak_qp_timeout;
	o->retry_cnt = 7;
	o->rnr_retry = 7;
}

/* @p sqp on droce0 and @p rqp on droce1, RC or UC, joined both ways. */
static int
join_pair(struct soak_worker *w, struct ibv_qp *sqp, struct ibv_qp *rqp,
	  enum ibv_qp_type type)
{
	struct ep_opts o;
	struct ep a = { .qp = sqp }, b = { .qp = rqp };

	opts_of(&o, type);
	a.psn = 0xfff000 + (uint32_t)(rnd(w) & 0xfff);
	b.psn = 0xfff000 + (uint32_t)(rnd(w) & 0xfff);
	if (ep_connect_remote(&a, rqp->qp_num, b.psn, &w->bgid, &o) != 0 ||
	    ep_connect_remote(&b, sqp->qp_num, a.psn, &w->agid, &o) != 0)
		return -1;
	return 0;
}

static uint8_t *
touched(size_t len)
{
	uint8_t *p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	if (p != NULL)
		memset(p, 0, len);
	return p;
}

static int
stream_memory(struct soak_worker *w, struct stream *s)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	s->slot = w->kind == SOAK_UD ? UD_SLOT : SLOT;
	/* UC: a late duplicate of a WRITE (taken as a new message) must
	 * not land in a slot given to a message since */
	s->ndst = w->kind == SOAK_UC ? 4 * WIN : WIN;
	s->alen = 2 * WIN * s->slot;
	s->blen = (s->ndst + WIN) * s->slot + 4096;
	s->abuf = touched(s->alen);
	s->bbuf = touched(s->blen);
	if (s->abuf == NULL || s->bbuf == NULL)
		return -1;
	s->amr = ibv_reg_mr(w->apd, s->abuf, s->alen, access);
	s->bmr = ibv_reg_mr(w->bpd, s->bbuf, s->blen,
			    access | (w->kind == SOAK_RC ?
				      IBV_ACCESS_MW_BIND : 0));
	if (s->amr == NULL || s->bmr == NULL)
		return -1;
	if (w->kind == SOAK_UD || w->kind == SOAK_UC) {
		s->hist = calloc(HIST, sizeof(*s->hist));
		if (s->hist == NULL)
			return -1;
	}
	s->last_recv = -1;
	s->progress_ms = soak_now_ms();
	return 0;
}

static int
worker_queues(struct soak_worker *w)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD, .fd = -1,
	};
	unsigned int i;

	w->actx = ep_open_device(0);
	w->bctx = ep_open_device(1);
	if (w->actx == NULL || w->bctx == NULL ||
	    ibv_query_gid(w->actx, 1, 0, &w->agid) != 0 ||
	    ibv_query_gid(w->bctx, 1, 0, &w->bgid) != 0)
		return -1;
	w->apd = ibv_alloc_pd(w->actx);
	w->bpd = ibv_alloc_pd(w->bctx);
	w->ascq = ibv_create_cq(w->actx, 256, NULL, NULL, 0);
	w->arcq = ibv_create_cq(w->actx, 16, NULL, NULL, 0);
	w->bscq = ibv_create_cq(w->bctx, 64, NULL, NULL, 0);
	w->brcq = ibv_create_cq(w->bctx, 256, NULL, NULL, 0);
	if (w->apd == NULL || w->bpd == NULL || w->ascq == NULL ||
	    w->arcq == NULL || w->bscq == NULL || w->brcq == NULL)
		return -1;

	w->ns = w->kind == SOAK_SRQ ? 2 : 1;
	w->nrecv = w->ns * WIN * (w->kind == SOAK_UC ? 2 : 1);
	if (w->kind == SOAK_UD)
		w->nrecv = 4 * WIN;
	w->rslot = w->kind == SOAK_UD ? UD_SLOT : SLOT;
	w->ring = touched(w->nrecv * w->rslot);
	if (w->ring == NULL)
		return -1;
	w->ring_mr = ibv_reg_mr(w->bpd, w->ring, w->nrecv * w->rslot,
				IBV_ACCESS_LOCAL_WRITE);
	if (w->ring_mr == NULL)
		return -1;

	if (w->kind == SOAK_SRQ) {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = 4 * WIN, .max_sge = 1 },
		};

		w->srq = ibv_create_srq(w->bpd, &sa);
		if (w->srq == NULL)
			return -1;
	} else if (w->kind == SOAK_XRC) {
		struct ibv_srq_init_attr_ex sa = {
			.attr = { .max_wr = 4 * WIN, .max_sge = 1 },
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE |
				IBV_SRQ_INIT_ATTR_XRCD |
				IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
			.srq_type = IBV_SRQT_XRC,
			.cq = w->brcq,
			.pd = w->bpd,
		};

		w->xrcd = ibv_open_xrcd(w->bctx, &xa);
		if (w->xrcd == NULL)
			return -1;
		sa.xrcd = w->xrcd;
		w->srq = ibv_create_srq_ex(w->bctx, &sa);
		if (w->srq == NULL)
			return -1;
	}
	for (i = 0; i < w->ns; i++) {
		w->s[i].w = w;
		w->s[i].idx = i;
		w->s[i].id = w->id * MAX_STREAMS + i + 1;
		if (stream_memory(w, &w->s[i]) != 0)
			return -1;
	}
	return 0;
}

static int
worker_qps(struct soak_worker *w)
{
	struct stream *s = &w->s[0];
	unsigned int i;

	switch (w->kind) {
	case SOAK_RC:
	case SOAK_UC: {
		enum ibv_qp_type t = w->kind == SOAK_RC ? IBV_QPT_RC :
			IBV_QPT_UC;

		s->sqp = make_qp(w->apd, w->ascq, w->arcq, NULL, t);
		s->rqp = make_qp(w->bpd, w->bscq, w->brcq, NULL, t);
		if (s->sqp == NULL || s->rqp == NULL ||
		    join_pair(w, s->sqp, s->rqp, t) != 0)
			return -1;
		if (w->kind == SOAK_RC) {
			s->mw = ibv_alloc_mw(w->bpd, IBV_MW_TYPE_2);
			if (s->mw == NULL)
				return -1;
			s->mw_rkey = s->mw->rkey;
		}
		break;
	}
	case SOAK_UD: {
		struct ibv_ah_attr ah = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = w->bgid, .hop_limit = 64 },
		};

		s->sqp = make_qp(w->apd, w->ascq, w->arcq, NULL, IBV_QPT_UD);
		s->rqp = make_qp(w->bpd, w->bscq, w->brcq, NULL, IBV_QPT_UD);
		if (s->sqp == NULL || s->rqp == NULL ||
		    ud_qp_up(s->sqp, QKEY, (uint32_t)rnd(w) & 0xffffff) != 0 ||
		    ud_qp_up(s->rqp, QKEY, (uint32_t)rnd(w) & 0xffffff) != 0)
			return -1;
		s->ah = ibv_create_ah(w->apd, &ah);
		if (s->ah == NULL)
			return -1;
		break;
	}
	case SOAK_XRC: {
		struct ibv_qp_init_attr qa = {
			.send_cq = w->ascq,
			.qp_type = IBV_QPT_XRC_SEND,
			.cap = { .max_send_wr = 4 * WIN, .max_send_sge = 1 },
		};
		struct ibv_qp_init_attr_ex ta = {
			.qp_type = IBV_QPT_XRC_RECV,
			.comp_mask = IBV_QP_INIT_ATTR_XRCD,
			.xrcd = w->xrcd,
		};

		s->sqp = ibv_create_qp(w->apd, &qa);
		s->rqp = ibv_create_qp_ex(w->bctx, &ta);
		if (s->sqp == NULL || s->rqp == NULL ||
		    ibv_get_srq_num(w->srq, &s->srqn) != 0 ||
		    ep_xrc_join(s->sqp, &w->agid, s->rqp, &w->bgid,
				0xfff000 + (uint32_t)(rnd(w) & 0xfff),
				soak_qp_timeout) != 0)
			return -1;
		break;
	}
	case SOAK_SRQ:
		for (i = 0; i < w->ns; i++) {
			s = &w->s[i];
			s->sqp = make_qp(w->apd, w->ascq, w->arcq, NULL,
					 IBV_QPT_RC);
			s->rqp = make_qp(w->bpd, w->bscq, w->brcq, w->srq,
					 IBV_QPT_RC);
			if (s->sqp == NULL || s->rqp == NULL ||
			    join_pair(w, s->sqp, s->rqp, IBV_QPT_RC) != 0)
				return -1;
		}
		break;
	default:
		return -1;
	}
	for (i = 0; i < w->nrecv; i++)
		if (post_ring(w, i) != 0)
			return -1;
	return 0;
}

struct soak_worker *
soak_worker_create(enum soak_kind k, unsigned int id, unsigned int seed)
{
	struct soak_worker *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	w->kind = k;
	w->id = id;
	w->rng = mix64((uint64_t)seed << 16 | id);
	if (worker_queues(w) != 0 || worker_qps(w) != 0) {
		fprintf(stderr, "droce-soak: %s%u: setting up: %s\n",
			soak_kind_name(k), id, strerror(errno));
		soak_worker_destroy(w);
		return NULL;
	}
	return w;
}

unsigned int
soak_worker_qps(const struct soak_worker *w, int dev, struct ibv_qp **qps,
		unsigned int max)
{
	unsigned int i, n = 0;

	for (i = 0; i < w->ns && n < max; i++)
		qps[n++] = dev == 0 ? w->s[i].sqp : w->s[i].rqp;
	return n;
}

/* The atomic targets end as the models say. @return mismatches. */
static void
check_models(struct soak_worker *w)
{
	unsigned int i;

	for (i = 0; i < w->ns; i++) {
		struct stream *s = &w->s[i];
		uint64_t v;

		if (s->bbuf == NULL || w->kind == SOAK_UC ||
		    w->kind == SOAK_UD)
			continue;
		memcpy(&v, b_atomic(s), 8);
		if (v != s->model)
			soak_fail("%s%u stream %u: the atomic target ends at "
				  "%#llx, the model at %#llx",
				  soak_kind_name(w->kind), w->id, i,
				  (unsigned long long)v,
				  (unsigned long long)s->model);
	}
}

void
soak_worker_destroy(struct soak_worker *w)
{
	unsigned int i;

	if (w == NULL)
		return;
	soak_worker_join(w);
	if (!soak_failed())
		check_models(w);
	for (i = 0; i < w->ns; i++) {
		struct stream *s = &w->s[i];

		if (s->ah != NULL)
			ibv_destroy_ah(s->ah);
		if (s->sqp != NULL)
			ibv_destroy_qp(s->sqp);
		if (s->rqp != NULL)
			ibv_destroy_qp(s->rqp);
		if (s->mw != NULL)
			ibv_dealloc_mw(s->mw);
		if (s->amr != NULL)
			ibv_dereg_mr(s->amr);
		if (s->bmr != NULL)
			ibv_dereg_mr(s->bmr);
		free(s->abuf);
		free(s->bbuf);
		free(s->hist);
	}
	if (w->srq != NULL)
		ibv_destroy_srq(w->srq);
	if (w->xrcd != NULL)
		ibv_close_xrcd(w->xrcd);
	if (w->ring_mr != NULL)
		ibv_dereg_mr(w->ring_mr);
	free(w->ring);
	if (w->ascq != NULL)
		ibv_destroy_cq(w->ascq);
	if (w->arcq != NULL)
		ibv_destroy_cq(w->arcq);
	if (w->bscq != NULL)
		ibv_destroy_cq(w->bscq);
	if (w->brcq != NULL)
		ibv_destroy_cq(w->brcq);
	if (w->apd != NULL)
		ibv_dealloc_pd(w->apd);
	if (w->bpd != NULL)
		ibv_dealloc_pd(w->bpd);
	if (w->actx != NULL)
		ibv_close_device(w->actx);
	if (w->bctx != NULL)
		ibv_close_device(w->bctx);
	free(w);
}
