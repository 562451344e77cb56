/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * libFuzzer target for the requester and the completer of an RC QP: the
 * responses it gets to the requests of a mix of WQEs, as a responder
 * that answers anything at all would send them.
 *
 * The embedded default configuration gives two devices back to back.
 * droce1 holds the target: an RC QP connected to a QPN of droce0's
 * address that no QP has, each of its send WQEs with a local buffer of
 * its own (one memory region each, between guard areas). droce0 holds a
 * raw packet QP: through a sniffer rule it sees the requests droce1
 * sends, and it puts the input's responses on the wire.
 *
 * An input is a header (struct hdr: the QP's retry counts and
 * max_rd_atomic), up to MAX_WQE WQE descriptions (struct wqe_rec: SEND,
 * SEND with immediate, WRITE, WRITE with immediate, READ, compare and
 * swap, fetch and add; a length around the path MTU; one or two SGEs,
 * unsignalled, fenced, or with a wrong lkey) and then a sequence of
 * 20-byte response records (struct rec): an ACK, an RNR NAK, a NAK,
 * READ responses FIRST/MIDDLE/LAST/ONLY or an atomic ACK, with its PSN
 * relative to a WQE's first PSN, any AETH syndrome and MSN, a payload of
 * the length its position calls for give or take a little, or of any
 * length, now and then a broken ICRC. The WQEs are posted, droce1 sends
 * their requests, then the responses go in bursts (a record may ask for
 * droce1 to go quiet before it). Throughout, or the target aborts:
 *
 *  - every request droce1 sends parses, goes to the peer, and has a PSN
 *    of a WQE it may send with that WQE's opcode (a READ asked again
 *    asks for a tail of its range); nothing at or after a WQE that
 *    failed its local checks is sent;
 *  - the completer's oldest unacknowledged PSN (read from the engine
 *    while it is quiet) moves back only where the requester sends again
 *    (at once, or when an RNR NAK's wait is over) and stays within the
 *    PSNs the WQEs took.
 *
 * At the end the QP is moved to ERR and every WQE completes; then:
 *
 *  - the guard areas around every buffer, the bytes between two SGEs of
 *    a WQE, and every byte of a buffer no READ or atomic result may land
 *    in are as they were (guards are poisoned for AddressSanitizer too);
 *  - completions come in posting order, each WQE at most once, every
 *    signalled one once, an unsignalled one only with an error;
 *  - their statuses are successes, then at most one error of the kinds
 *    a requester reports (IBV_WC_LOC_PROT_ERR only for a WQE with a
 *    wrong lkey, IBV_WC_BAD_RESP_ERR only for a READ or an atomic: a
 *    bad response beyond one still unanswered is charged to it), then
 *    flushes;
 *  - droce's mbuf pool holds what it held before the input.
 *
 * Then the QP goes RESET -> RTS with the same PSN and the buffers get
 * their pattern back, so that each input starts from the same state.
 */

#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rte_mempool.h>

#include <droce.h>
#include "droce_wire.h"
/* (the oldest unacknowledged PSN is the engine's alone: peeked at while
 * the engine is quiet) */
#include "droce_engine_pvt.h"
#include "droce_verbs_pvt.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define GUARD_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#endif
#endif
#ifndef GUARD_POISON
#define GUARD_POISON(p, n) do { (void)(p); (void)(n); } while (0)
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------------------
 * The input.
 */

/**
 * The QP (4 bytes): retry_cnt (bits 0-2), rnr_retry (bits 3-5),
 * max_rd_atomic (bits 6-7: 1, 2, 4, 16); how many WQEs (1 + nwqe % 8);
 * two bytes unused.
 */
struct hdr {
	uint8_t qp;
	uint8_t nwqe;
	uint8_t unused[2];
};

#define HDR_LEN 4

/**
 * A send WQE (2 bytes). op: the operation (bits 0-2, enum wqe_op) and
 * the length (bits 3-5, wqe_lens[]). flags: unsignalled (bit 0), two
 * SGEs (bit 1), a wrong lkey (bits 2-4 all set), fenced (bit 5).
 */
struct wqe_rec {
	uint8_t op;
	uint8_t flags;
};

#define WQE_REC_LEN 2
#define MAX_WQE 8

enum wqe_op {
	W_SEND, W_SEND_IMM, W_WRITE, W_WRITE_IMM, W_READ, W_CAS, W_FADD,
	W_READ2,              /* a READ too: they deserve the weight */
};

static const uint32_t wqe_lens[8] = { 0, 1, 8, 100, 1024, 1025, 2048, 3000 };

/**
 * A response (20 bytes, little-endian).
 * kind: bits 0-2 enum resp_kind; bit 3: aeth is the whole syndrome
 * (else the kind's type with the value bits of aeth); bit 7: droce1
 * goes quiet before this record's frame is sent.
 * wqe: whose first PSN the PSN is relative to (modulo nwqe + 1; nwqe:
 * the PSN after the last WQE's). psn: the offset.
 * aeth: the AETH syndrome (or its value bits). flags: ICRC broken
 * (bit 0), AckReq (bit 1), the payload length is the one the response's
 * place calls for plus (int8_t)len (bit 2; else len modulo MAX_PAYLOAD
 * + 1).
 * seed: the payload's bytes. len: see flags. msn: the AETH MSN.
 * orig: the atomic ACK's original value.
 */
struct rec {
	uint8_t kind;
	uint8_t wqe;
	int8_t psn;
	uint8_t aeth;
	uint8_t flags;
	uint8_t seed;
	uint16_t len;
	uint32_t msn;
	uint64_t orig;
};

#define REC_LEN 20
#define MAX_RECS 48

enum resp_kind {
	K_ACK, K_RNR_NAK, K_NAK, K_READ_FIRST, K_READ_MIDDLE, K_READ_LAST,
	K_READ_ONLY, K_ATOMIC_ACK,
};

#define K_RAW_AETH 0x08
#define K_SYNC 0x80

static void
rec_decode(const uint8_t *p, struct rec *r)
{
	r->kind = p[0];
	r->wqe = p[1];
	r->psn = (int8_t)p[2];
	r->aeth = p[3];
	r->flags = p[4];
	r->seed = p[5];
	r->len = (uint16_t)(p[6] | p[7] << 8);
	memcpy(&r->msn, p + 8, 4);
	r->msn = le32toh(r->msn);
	memcpy(&r->orig, p + 12, 8);
	r->orig = le64toh(r->orig);
}

/* ------------------------------------------------------------------------
 * The target.
 */

/* The peer: a QPN of droce0's no QP has. */
#define PEER_QPN 0xabcde
/* PSNs near the wrap: the WQEs' cross it */
#define SQ_PSN 0xfffff6u
#define PATH_MTU IBV_MTU_1024
#define MTU 1024u
#define REMOTE_VA 0x100000000ull
#define REMOTE_STRIDE 0x10000u
#define RKEY 0x1234u

/* Each WQE's local buffer: room for the longest, two SGEs and a gap. */
#define BUF_LEN 4096u
#define SGE_GAP 16u
#define GUARD_LEN (4096u + 64u)

/* The raw QP's frame slots. */
#define SLOT 2048
#define TX_SLOTS MAX_RECS
#define RX_SLOTS 1024
#define MAX_FRAME 1514
/* (more than the path MTU, within an Ethernet frame) */
#define MAX_PAYLOAD 1400

/* How long droce1 may take to receive an input's frames */
#define RX_TIMEOUT_MS 5000

struct wqe {
	enum wqe_op op;
	uint32_t len;
	bool signalled;
	bool two_sge;
	bool bad_lkey;
	bool fence;
	uint32_t first_psn;        /* if it and all before it are sent */
	uint32_t npsn;             /* PSNs it takes */
	uint32_t sge_len[2];
	bool completed;
};

static struct fz {
	struct ibv_context *ctx[2];
	/* droce1 */
	struct ibv_pd *pd;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
	uint8_t *arena;
	size_t arena_len;
	uint8_t *pristine;
	struct ibv_mr *mr[MAX_WQE];
	union ibv_gid gid1;
	uint8_t mac1[6];
	/* droce0 */
	struct ibv_pd *pd0;
	struct ibv_cq *raw_scq;
	struct ibv_cq *raw_rcq;
	struct ibv_qp *raw;
	struct ibv_flow *sniffer;
	uint8_t *tx;
	uint8_t *rx;
	struct ibv_mr *tx_mr;
	struct ibv_mr *rx_mr;
	union ibv_gid gid0;
	uint8_t mac0[6];
	struct rte_mempool *pool;
	unsigned int pool_in_use;  /* after setting up */
	/* the input being run */
	struct hdr hdr;
	struct wqe w[MAX_WQE];
	unsigned int nwqe;
	uint32_t end_psn;          /* after the last WQE's PSNs */
	uint32_t halt_psn;         /* nothing at or after it goes out */
	uint32_t una;              /* relative to SQ_PSN, as last seen */
	uint64_t resent;           /* the QP's retransmits, as last seen */
	struct rec recs[MAX_RECS];
	unsigned int nrecs;
	uint64_t inputs;
} fz;

/* ------------------------------------------------------------------------
 * Reports.
 */

static void
input_print(void)
{
	unsigned int i;

	fprintf(stderr, "input %llu: qp=%02x, %u WQEs:\n",
		(unsigned long long)fz.inputs, fz.hdr.qp, fz.nwqe);
	for (i = 0; i < fz.nwqe; i++) {
		const struct wqe *w = &fz.w[i];

		fprintf(stderr, "  WQE %u: op %d len %u%s%s%s%s, PSN %#x+%u\n",
			i, w->op, w->len, w->signalled ? "" : " unsignalled",
			w->two_sge ? " 2 SGEs" : "",
			w->bad_lkey ? " bad lkey" : "",
			w->fence ? " fence" : "", w->first_psn, w->npsn);
	}
	fprintf(stderr, "%u responses:\n", fz.nrecs);
	for (i = 0; i < fz.nrecs; i++) {
		const struct rec *r = &fz.recs[i];

		fprintf(stderr, "  #%u kind=%02x wqe=%u psn=%+d aeth=%02x "
			"flags=%02x seed=%02x len=%u msn=%#x orig=%016llx\n",
			i, r->kind, r->wqe, r->psn, r->aeth, r->flags, r->seed,
			r->len, r->msn, (unsigned long long)r->orig);
	}
}

/* Report a broken invariant with the input, and abort. */
static void __attribute__((noreturn, format(printf, 1, 2)))
violation(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\nfuzz_requester: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	input_print();
	abort();
}

/* A setup step that failed: not a finding, but nothing can go on. */
static void __attribute__((noreturn))
setup_failed(const char *what)
{
	fprintf(stderr, "fuzz_requester: setup: %s failed (errno %d: %s)\n",
		what, errno, strerror(errno));
	abort();
}

#define SETUP(cond, what) do { if (!(cond)) setup_failed(what); } while (0)

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------------
 * The WQEs.
 */

static uint8_t *
wqe_buf(unsigned int i)
{
	return fz.arena + GUARD_LEN + (size_t)i * (BUF_LEN + GUARD_LEN);
}

static bool
op_read(enum wqe_op op)
{
	return op == W_READ || op == W_READ2;
}

static bool
op_atomic(enum wqe_op op)
{
	return op == W_CAS || op == W_FADD;
}

/* The BTH opcodes a request of @p w may have (bit per operation). */
static uint32_t
op_wire_mask(enum wqe_op op)
{
	switch (op) {
	case W_SEND:
		return 1u << DROCE_OP_SEND_FIRST | 1u << DROCE_OP_SEND_MIDDLE |
			1u << DROCE_OP_SEND_LAST | 1u << DROCE_OP_SEND_ONLY;
	case W_SEND_IMM:
		return 1u << DROCE_OP_SEND_FIRST | 1u << DROCE_OP_SEND_MIDDLE |
			1u << DROCE_OP_SEND_LAST_IMM |
			1u << DROCE_OP_SEND_ONLY_IMM;
	case W_WRITE:
		return 1u << DROCE_OP_WRITE_FIRST |
			1u << DROCE_OP_WRITE_MIDDLE |
			1u << DROCE_OP_WRITE_LAST | 1u << DROCE_OP_WRITE_ONLY;
	case W_WRITE_IMM:
		return 1u << DROCE_OP_WRITE_FIRST |
			1u << DROCE_OP_WRITE_MIDDLE |
			1u << DROCE_OP_WRITE_LAST_IMM |
			1u << DROCE_OP_WRITE_ONLY_IMM;
	case W_CAS:
		return 1u << DROCE_OP_COMPARE_SWAP;
	case W_FADD:
		return 1u << DROCE_OP_FETCH_ADD;
	default:
		return 1u << DROCE_OP_READ_REQUEST;
	}
}

/* Decode the header and the WQEs; give each its PSNs. @return bytes. */
static size_t
wqes_decode(const uint8_t *data, size_t size)
{
	uint32_t psn = SQ_PSN;
	unsigned int i;

	memcpy(&fz.hdr, data, HDR_LEN);
	fz.nwqe = 1u + fz.hdr.nwqe % MAX_WQE;
	if (size < HDR_LEN + (size_t)fz.nwqe * WQE_REC_LEN)
		fz.nwqe = (unsigned int)((size - HDR_LEN) / WQE_REC_LEN);
	fz.halt_psn = DROCE_PSN_MASK + 1;   /* none */
	for (i = 0; i < fz.nwqe; i++) {
		const uint8_t *p = data + HDR_LEN + i * WQE_REC_LEN;
		struct wqe *w = &fz.w[i];

		memset(w, 0, sizeof(*w));
		w->op = (enum wqe_op)(p[0] & 7);
		w->len = op_atomic(w->op) ? 8 : wqe_lens[(p[0] >> 3) & 7];
		w->signalled = !(p[1] & 1);
		w->two_sge = (p[1] & 2) && w->len >= 2 && !op_atomic(w->op);
		/* (an empty SGE's key is never looked at, as rxe's) */
		w->bad_lkey = ((p[1] >> 2) & 7) == 7 && w->len != 0;
		w->fence = (p[1] & 0x20) != 0;
		w->sge_len[0] = w->two_sge ? w->len / 2 : w->len;
		w->sge_len[1] = w->len - w->sge_len[0];
		w->first_psn = psn;
		w->npsn = op_atomic(w->op) || w->len == 0 ? 1 :
			(w->len + MTU - 1) / MTU;
		if (w->bad_lkey && fz.halt_psn > DROCE_PSN_MASK)
			fz.halt_psn = psn;
		/* a WQE that fails locally takes no PSN */
		if (!w->bad_lkey)
			psn = droce_psn_add(psn, w->npsn);
	}
	fz.end_psn = psn;
	return HDR_LEN + (size_t)fz.nwqe * WQE_REC_LEN;
}

static void
wqes_post(void)
{
	struct ibv_send_wr wr[MAX_WQE], *bad;
	struct ibv_sge sge[MAX_WQE][2];
	unsigned int i;
	int ret;

	for (i = 0; i < fz.nwqe; i++) {
		const struct wqe *w = &fz.w[i];
		uint8_t *buf = wqe_buf(i);
		uint32_t lkey = fz.mr[i]->lkey ^
			(w->bad_lkey ? 0x80000000u : 0);
		uint64_t raddr = REMOTE_VA + (uint64_t)i * REMOTE_STRIDE;
		static const enum ibv_wr_opcode opcode[] = {
			[W_SEND] = IBV_WR_SEND,
			[W_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
			[W_WRITE] = IBV_WR_RDMA_WRITE,
			[W_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
			[W_READ] = IBV_WR_RDMA_READ,
			[W_CAS] = IBV_WR_ATOMIC_CMP_AND_SWP,
			[W_FADD] = IBV_WR_ATOMIC_FETCH_AND_ADD,
			[W_READ2] = IBV_WR_RDMA_READ,
		};

		sge[i][0] = (struct ibv_sge) { (uintptr_t)buf, w->sge_len[0],
					       lkey };
		sge[i][1] = (struct ibv_sge) {
			(uintptr_t)(buf + w->sge_len[0] + SGE_GAP),
			w->sge_len[1], lkey };
		wr[i] = (struct ibv_send_wr) {
			.wr_id = i, .next = i + 1 < fz.nwqe ? &wr[i + 1] : NULL,
			.sg_list = sge[i], .num_sge = w->two_sge ? 2 : 1,
			.opcode = opcode[w->op],
			.send_flags = (w->signalled ? IBV_SEND_SIGNALED : 0) |
				(w->fence ? IBV_SEND_FENCE : 0),
			.imm_data = htobe32(0x1000 + i),
		};
		if (op_atomic(w->op)) {
			wr[i].wr.atomic.remote_addr = raddr;
			wr[i].wr.atomic.rkey = RKEY;
			wr[i].wr.atomic.compare_add = 0x1111 * (i + 1);
			wr[i].wr.atomic.swap = 0x2222 * (i + 1);
		} else {
			wr[i].wr.rdma.remote_addr = raddr;
			wr[i].wr.rdma.rkey = RKEY;
		}
	}
	ret = ibv_post_send(fz.qp, wr, &bad);
	if (ret != 0)
		violation("ibv_post_send refused WQE %llu: %d",
			  (unsigned long long)bad->wr_id, ret);
}

/* ------------------------------------------------------------------------
 * Response frames.
 */

/* The PSN of @p r: an offset from a WQE's first PSN, or from the end. */
static uint32_t
rec_psn(const struct rec *r, unsigned int *wi)
{
	unsigned int i = r->wqe % (fz.nwqe + 1);

	*wi = i;
	return droce_psn_add(i < fz.nwqe ? fz.w[i].first_psn : fz.end_psn,
			     (uint32_t)(int32_t)r->psn);
}

/*
 * The payload length the place of a READ response of @p kind at @p psn
 * calls for, if it is one of WQE @p wi's PSNs (else the MTU).
 */
static uint32_t
natural_len(enum resp_kind kind, unsigned int wi, uint32_t psn)
{
	const struct wqe *w;
	int32_t at;

	if (kind == K_READ_FIRST || kind == K_READ_MIDDLE ||
	    wi >= fz.nwqe)
		return MTU;
	w = &fz.w[wi];
	at = droce_psn_diff(psn, w->first_psn);
	if (at < 0 || (uint32_t)at * MTU > w->len)
		return MTU;
	return RTE_MIN(w->len - (uint32_t)at * MTU, MTU);
}

static uint32_t
rec_payload_len(const struct rec *r, unsigned int wi, uint32_t psn)
{
	enum resp_kind kind = (enum resp_kind)(r->kind & 7);
	int64_t n;

	if (!(r->flags & 4))
		return r->len % (MAX_PAYLOAD + 1);
	n = (int64_t)natural_len(kind, wi, psn) + (int8_t)(r->len & 0xff);
	return n < 0 ? 0 : (uint32_t)RTE_MIN(n, (int64_t)MAX_PAYLOAD);
}

static void
payload_fill(uint8_t *p, uint32_t len, uint8_t seed)
{
	uint32_t s = seed * 2654435761u + 1, i;

	for (i = 0; i < len; i++) {
		s = s * 1664525u + 1013904223u;
		p[i] = (uint8_t)(s >> 24);
	}
}

static uint8_t
rec_syndrome(const struct rec *r)
{
	uint8_t v = r->aeth & DROCE_AETH_VALUE_MASK;

	if (r->kind & K_RAW_AETH) {
		/* an RNR NAK waits its timer: 0.01 to 1.28 ms, no more */
		if ((r->aeth & DROCE_AETH_TYPE_MASK) == DROCE_AETH_RNR_NAK)
			return (uint8_t)((r->aeth & ~DROCE_AETH_VALUE_MASK) |
					 (1 + v % 14));
		return r->aeth;
	}
	switch (r->kind & 7) {
	case K_RNR_NAK:
		return (uint8_t)(DROCE_AETH_RNR_NAK | (1 + v % 14));
	case K_NAK:
		return (uint8_t)(DROCE_AETH_NAK | (v % 5));
	default:
		return (uint8_t)(DROCE_AETH_ACK | v);
	}
}

/* The frame of @p r at @p f (SLOT bytes). @return its length. */
static uint32_t
frame_build(uint8_t *f, const struct rec *r)
{
	static uint8_t payload[MAX_PAYLOAD];
	static const uint8_t opcode[] = {
		[K_ACK] = DROCE_OP_ACKNOWLEDGE,
		[K_RNR_NAK] = DROCE_OP_ACKNOWLEDGE,
		[K_NAK] = DROCE_OP_ACKNOWLEDGE,
		[K_READ_FIRST] = DROCE_OP_READ_RESPONSE_FIRST,
		[K_READ_MIDDLE] = DROCE_OP_READ_RESPONSE_MIDDLE,
		[K_READ_LAST] = DROCE_OP_READ_RESPONSE_LAST,
		[K_READ_ONLY] = DROCE_OP_READ_RESPONSE_ONLY,
		[K_ATOMIC_ACK] = DROCE_OP_ATOMIC_ACKNOWLEDGE,
	};
	struct droce_wire_pkt pkt;
	unsigned int wi;
	uint32_t psn = rec_psn(r, &wi);
	int len;

	memset(&pkt, 0, sizeof(pkt));
	memcpy(pkt.dst_mac.addr_bytes, fz.mac1, 6);
	memcpy(pkt.src_mac.addr_bytes, fz.mac0, 6);
	pkt.ip_version = 4;
	pkt.ttl = 64;
	pkt.ip_frag = 0x4000;
	memcpy(pkt.src_gid, fz.gid0.raw, 16);
	memcpy(pkt.dst_gid, fz.gid1.raw, 16);
	pkt.udp_dport = DROCE_UDP_PORT;
	pkt.udp_sport = droce_udp_sport(PEER_QPN, fz.qp->qp_num);
	pkt.bth.opcode = DROCE_TR_RC | opcode[r->kind & 7];
	pkt.op = droce_opcode_get(pkt.bth.opcode);
	pkt.bth.pkey = 0xffff;
	pkt.bth.dqpn = fz.qp->qp_num;
	pkt.bth.psn = psn;
	pkt.bth.ackreq = (r->flags >> 1) & 1;
	pkt.aeth = (struct droce_aeth) { rec_syndrome(r),
					 r->msn & DROCE_PSN_MASK };
	pkt.atomicacketh.orig = r->orig;
	if (pkt.op->flags & DROCE_OPF_PAYLOAD) {
		pkt.payload_len = rec_payload_len(r, wi, psn);
		payload_fill(payload, pkt.payload_len, r->seed);
		pkt.payload = payload;
	}
	len = droce_wire_build(f, MAX_FRAME, &pkt);
	if (len < 0) {
		pkt.payload_len = 0;
		len = droce_wire_build(f, MAX_FRAME, &pkt);
	}
	if (len < 0)
		violation("droce_wire_build() of %s: %d", pkt.op->name, len);
	if (r->flags & 1)
		f[len - 1] ^= 0x10;     /* the ICRC: dropped */
	return (uint32_t)len;
}

/* ------------------------------------------------------------------------
 * Putting frames on the wire and waiting for droce1 to be done.
 */

static void
counters(struct droce_counters c[2])
{
	droce_query_counters(fz.ctx[0], &c[0]);
	droce_query_counters(fz.ctx[1], &c[1]);
}

/* One pass of the engine lcore at least: a control call waits for it. */
static void
engine_barrier(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(fz.qp, &attr, IBV_QP_STATE, &init) != 0)
		violation("ibv_query_qp() failed");
}

static void
engine_pass(void)
{
	engine_barrier();
	engine_barrier();
}

static void
send_frames(const uint32_t *lens, unsigned int first, unsigned int n)
{
	struct ibv_send_wr wr[TX_SLOTS], *bad;
	struct ibv_sge sge[TX_SLOTS];
	struct ibv_wc wc[TX_SLOTS];
	unsigned int i, got = 0;
	uint64_t end;
	int ret;

	for (i = 0; i < n; i++) {
		unsigned int s = first + i;

		sge[i] = (struct ibv_sge) { (uintptr_t)(fz.tx + s * SLOT),
					    lens[s], fz.tx_mr->lkey };
		wr[i] = (struct ibv_send_wr) {
			.wr_id = s, .next = i + 1 < n ? &wr[i + 1] : NULL,
			.sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		};
	}
	ret = ibv_post_send(fz.raw, wr, &bad);
	if (ret != 0)
		violation("raw QP refused frame %u: %d",
			  (unsigned int)bad->wr_id, ret);
	end = now_ms() + RX_TIMEOUT_MS;
	while (got < n) {
		int r = ibv_poll_cq(fz.raw_scq, (int)(n - got), wc);

		if (r < 0)
			violation("raw send CQ: %d", r);
		for (i = 0; i < (unsigned int)r; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				violation("raw send of frame %llu: %s",
					  (unsigned long long)wc[i].wr_id,
					  ibv_wc_status_str(wc[i].status));
		got += (unsigned int)r;
		if (r == 0 && now_ms() > end)
			violation("raw sends not completed: %u of %u", got, n);
	}
}

/*
 * Wait for droce1 to have received @p n frames more than @p base, then
 * for both devices to go quiet: two whole engine passes in which neither
 * sent nor received a frame. (An RNR NAK's wait may outlast that: what
 * droce1 sends after it is seen by a later wait.)
 */
static void
wait_quiet(const struct droce_counters base[2], unsigned int n)
{
	struct droce_counters c[2], last[2];
	uint64_t end = now_ms() + RX_TIMEOUT_MS;
	unsigned int calm = 0;

	for (;;) {
		counters(c);
		if (c[1].rx_frames - base[1].rx_frames >= n)
			break;
		if (now_ms() > end)
			violation("droce1 received %llu of %u frames",
				  (unsigned long long)(c[1].rx_frames -
						       base[1].rx_frames), n);
		engine_barrier();
	}
	while (calm < 2) {
		memcpy(last, c, sizeof(c));
		engine_pass();
		counters(c);
		if (c[0].tx_frames == last[0].tx_frames &&
		    c[1].tx_frames == last[1].tx_frames &&
		    c[0].rx_frames == last[0].rx_frames &&
		    c[1].rx_frames == last[1].rx_frames)
			calm++;
		else
			calm = 0;
		if (now_ms() > end)
			violation("droce1 does not go quiet");
	}
}

/* ------------------------------------------------------------------------
 * Checks.
 */

/* A request droce1 sent: from and to the right places, a PSN it may
 * send, of the WQE the PSN is of. */
static void
check_request(const struct droce_wire_pkt *pkt)
{
	uint32_t psn = pkt->bth.psn;
	uint8_t op = pkt->bth.opcode & 0x1f;
	const struct wqe *w = NULL;
	unsigned int i;

	if (pkt->bth.opcode == DROCE_OPCODE_CNP) {
		/* a forged response marked CE (ECN) is answered by a CNP */
		if (pkt->bth.dqpn != PEER_QPN || pkt->bth.becn != 1 ||
		    (pkt->tos & DROCE_ECN_MASK) != DROCE_ECN_NOT_ECT)
			violation("droce1 sent a CNP to QPN %#x, BECN %u, "
				  "ECN %u", pkt->bth.dqpn, pkt->bth.becn,
				  pkt->tos & DROCE_ECN_MASK);
		return;
	}
	if ((pkt->bth.opcode & DROCE_TR_MASK) != DROCE_TR_RC ||
	    !(pkt->op->flags & DROCE_OPF_REQ) || pkt->bth.dqpn != PEER_QPN)
		violation("droce1 sent %s to QPN %#x: only RC requests to "
			  "%#x are due", pkt->op->name, pkt->bth.dqpn,
			  PEER_QPN);
	if (pkt->payload_len > MTU)
		violation("droce1 sent %s of %u bytes, path MTU %u",
			  pkt->op->name, pkt->payload_len, MTU);
	if (droce_psn_diff(psn, SQ_PSN) < 0 ||
	    droce_psn_diff(psn, fz.end_psn) >= 0)
		violation("droce1 sent %s with PSN %#x, outside its WQEs' "
			  "[%#x, %#x)", pkt->op->name, psn, SQ_PSN,
			  fz.end_psn);
	if (fz.halt_psn <= DROCE_PSN_MASK &&
	    droce_psn_diff(psn, fz.halt_psn) >= 0)
		violation("droce1 sent %s with PSN %#x, at or after a WQE "
			  "that failed locally (%#x)", pkt->op->name, psn,
			  fz.halt_psn);
	for (i = 0; i < fz.nwqe; i++) {
		int32_t at = droce_psn_diff(psn, fz.w[i].first_psn);

		if (!fz.w[i].bad_lkey && at >= 0 &&
		    (uint32_t)at < fz.w[i].npsn) {
			w = &fz.w[i];
			break;
		}
	}
	if (w == NULL || !((op_wire_mask(w->op) >> op) & 1))
		violation("droce1 sent %s with PSN %#x: not of WQE %u's "
			  "operation %d", pkt->op->name, psn, i,
			  w != NULL ? (int)w->op : -1);
	if (op == DROCE_OP_READ_REQUEST) {
		uint64_t va = REMOTE_VA + (uint64_t)i * REMOTE_STRIDE;
		uint32_t done = (uint32_t)droce_psn_diff(psn, w->first_psn) *
			MTU;

		/* the READ from psn's response on: the tail of its range */
		if (pkt->reth.va != va + done || pkt->reth.rkey != RKEY ||
		    pkt->reth.dlen != w->len - RTE_MIN(done, w->len))
			violation("droce1 sent a READ request (PSN %#x) for "
				  "%u bytes at %#llx, WQE %u asks %u at %#llx",
				  psn, pkt->reth.dlen,
				  (unsigned long long)pkt->reth.va, i, w->len,
				  (unsigned long long)va);
	}
}

static void
check_frame(const uint8_t *f, uint32_t len)
{
	struct droce_wire_pkt pkt;
	uint16_t type;
	int ret;

	if (len < 14 || memcmp(f + 6, fz.mac1, 6) != 0)
		return;         /* not droce1's */
	type = droce_get_be16(f + 12);
	if (type == RTE_ETHER_TYPE_ARP ||
	    (type == RTE_ETHER_TYPE_IPV6 && len >= 14 + 40 && f[14 + 6] == 58))
		return;         /* ARP, neighbour discovery */
	ret = droce_wire_parse(f, len, 0, &pkt);
	if (ret != 0)
		violation("droce1 sent a frame (type %#x, %u bytes) that does "
			  "not parse: %s", type, len, droce_wire_strerror(ret));
	if (memcmp(pkt.src_gid, fz.gid1.raw, 16) != 0 ||
	    memcmp(pkt.dst_gid, fz.gid0.raw, 16) != 0 ||
	    memcmp(pkt.dst_mac.addr_bytes, fz.mac0, 6) != 0)
		violation("droce1 sent %s from or to another address",
			  pkt.op->name);
	check_request(&pkt);
}

static int
raw_post_recv(uint64_t slot)
{
	struct ibv_sge sge = { (uintptr_t)(fz.rx + slot * SLOT), SLOT,
			       fz.rx_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(fz.raw, &wr, &bad);
}

/* What droce1 sent since the last look. */
static void
check_requests(bool check)
{
	struct ibv_wc wc[64];
	int n, i;

	while ((n = ibv_poll_cq(fz.raw_rcq, 64, wc)) > 0)
		for (i = 0; i < n; i++) {
			if (check && wc[i].status == IBV_WC_SUCCESS)
				check_frame(fz.rx + wc[i].wr_id * SLOT,
					    wc[i].byte_len);
			if (raw_post_recv(wc[i].wr_id) != 0)
				violation("raw QP receive repost failed");
		}
}

/*
 * The completer's oldest unacknowledged PSN, read while the engine is
 * quiet: it moves on but where the requester goes back to send again
 * (no retransmission timer runs here: timeout 0), and stays within the
 * WQEs' PSNs.
 */
static const struct droce_qp_eng *
qp_eng(void)
{
	return container_of(fz.qp, struct droce_qp, qpx.qp_base)->eng;
}

static void
check_una(void)
{
	const struct droce_qp_eng *qp = qp_eng();
	uint32_t una = __atomic_load_n(&qp->comp.una_psn, __ATOMIC_ACQUIRE);
	int32_t rel = droce_psn_diff(una, SQ_PSN);

	if (qp->state == IBV_QPS_ERR)
		return;         /* the flush owns the state */
	if (rel < 0 || rel > droce_psn_diff(fz.end_psn, SQ_PSN))
		violation("una %#x outside the WQEs' PSNs [%#x, %#x]", una,
			  SQ_PSN, fz.end_psn);
	/* back only where the requester went back to send again: a READ
	 * acknowledged without its data is asked again from its first PSN,
	 * which is then unacknowledged again; an RNR NAK moves it back at
	 * once and sends again when its wait is over (which may have just
	 * happened: one pass lets the requester send) */
	if ((uint32_t)rel < fz.una && qp->stats.retransmits == fz.resent &&
	    !__atomic_load_n(&qp->comp.rnr_wait, __ATOMIC_ACQUIRE)) {
		engine_pass();
		if (qp->stats.retransmits == fz.resent)
			violation("una went back from %#x to %#x, nothing "
				  "sent again", droce_psn_add(SQ_PSN, fz.una),
				  una);
	}
	fz.una = (uint32_t)rel;
	fz.resent = qp->stats.retransmits;
}

/* Read the guard bytes as they are: they are poisoned for everyone else. */
__attribute__((no_sanitize("address")))
static size_t
guard_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return len;
}

/*
 * May byte @p off of WQE @p i's buffer change? Only where a READ's data
 * or an atomic's result lands: its SGEs, up to its length.
 */
static bool
may_change(unsigned int i, uint32_t off)
{
	const struct wqe *w = &fz.w[i];

	if (i >= fz.nwqe || w->bad_lkey ||
	    !(op_read(w->op) || op_atomic(w->op)))
		return false;
	if (off < w->sge_len[0])
		return true;
	return w->two_sge && off >= w->sge_len[0] + SGE_GAP &&
		off < w->sge_len[0] + SGE_GAP + w->sge_len[1];
}

static void
check_memory(void)
{
	unsigned int i;
	uint32_t off;

	for (i = 0; i <= MAX_WQE; i++) {
		size_t g = (size_t)i * (BUF_LEN + GUARD_LEN);
		size_t d = guard_diff(fz.arena + g, fz.pristine + g, GUARD_LEN);

		if (d != GUARD_LEN)
			violation("the guard before buffer %u changed at byte "
				  "%zu", i, d);
	}
	for (i = 0; i < MAX_WQE; i++) {
		const uint8_t *b = wqe_buf(i);
		const uint8_t *p = fz.pristine + (b - fz.arena);

		for (off = 0; off < BUF_LEN; off++)
			if (b[off] != p[off] && !may_change(i, off))
				violation("WQE %u's buffer changed at byte %u "
					  "(%#x, was %#x)", i, off, b[off],
					  p[off]);
	}
}

static bool
remote_error(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_BAD_RESP_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_RETRY_EXC_ERR:
		return true;
	default:
		return false;
	}
}

/* Move the QP to ERR, take every completion and check them. */
static void
check_completions(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[MAX_WQE + 1];
	bool failed = false;
	int64_t last = -1;
	unsigned int i;
	int n, k;

	if (ibv_modify_qp(fz.qp, &a, IBV_QP_STATE) != 0)
		violation("the QP would not go to ERR");
	engine_pass();
	n = ibv_poll_cq(fz.scq, MAX_WQE + 1, wc);
	if (n < 0)
		violation("polling the send CQ: %d", n);
	for (k = 0; k < n; k++) {
		uint64_t id = wc[k].wr_id;
		const struct wqe *w;

		if (id >= fz.nwqe)
			violation("a completion of wr_id %llu, never posted",
				  (unsigned long long)id);
		w = &fz.w[id];
		if (fz.w[id].completed)
			violation("WQE %llu completed twice",
				  (unsigned long long)id);
		if ((int64_t)id <= last)
			violation("WQE %llu completed after WQE %lld",
				  (unsigned long long)id, (long long)last);
		fz.w[id].completed = true;
		last = (int64_t)id;
		if (wc[k].status == IBV_WC_SUCCESS) {
			if (failed)
				violation("WQE %llu succeeded after a failed "
					  "one", (unsigned long long)id);
			if (!w->signalled)
				violation("unsignalled WQE %llu completed "
					  "with success",
					  (unsigned long long)id);
			continue;
		}
		if (wc[k].status == IBV_WC_WR_FLUSH_ERR) {
			failed = true;
			continue;
		}
		if (failed)
			violation("WQE %llu: %s after a failed WQE: only "
				  "the first failing one carries its error",
				  (unsigned long long)id,
				  ibv_wc_status_str(wc[k].status));
		failed = true;
		if (wc[k].status == IBV_WC_LOC_PROT_ERR ? !w->bad_lkey :
		    !remote_error(wc[k].status))
			violation("WQE %llu: %s", (unsigned long long)id,
				  ibv_wc_status_str(wc[k].status));
		/* a bad response is one to a READ: the one it answers, or
		 * a READ or atomic before it still waiting for its own
		 * (charged the oldest failure, that one) */
		if (wc[k].status == IBV_WC_BAD_RESP_ERR &&
		    !op_read(w->op) && !op_atomic(w->op))
			violation("WQE %llu, operation %d: a bad response",
				  (unsigned long long)id, (int)w->op);
	}
	for (i = 0; i < fz.nwqe; i++)
		if (fz.w[i].signalled && !fz.w[i].completed)
			violation("signalled WQE %u never completed", i);
}

static void
check_mbufs(void)
{
	unsigned int in_use = rte_mempool_in_use_count(fz.pool);

	if (in_use != fz.pool_in_use)
		violation("%u mbufs out of the pool, %u before the input",
			  in_use, fz.pool_in_use);
}

/* ------------------------------------------------------------------------
 * Bringing the target (back) to its starting state.
 */

static int
qp_up(void)
{
	static const uint8_t rd_atomic[4] = { 1, 2, 4, 16 };
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ret = ibv_modify_qp(fz.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret != 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = PATH_MTU;
	a.dest_qp_num = PEER_QPN;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = fz.gid0;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(fz.qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret != 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = SQ_PSN;
	a.timeout = 0;          /* no retransmission: the input decides */
	a.retry_cnt = fz.hdr.qp & 7;
	a.rnr_retry = (fz.hdr.qp >> 3) & 7;
	a.max_rd_atomic = rd_atomic[fz.hdr.qp >> 6];
	return ibv_modify_qp(fz.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void
restore(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	unsigned int i;

	if (ibv_modify_qp(fz.qp, &a, IBV_QP_STATE) != 0)
		violation("the QP would not go to RESET");
	/* no QP takes a frame now: the memory is the harness's */
	for (i = 0; i < MAX_WQE; i++)
		memcpy(wqe_buf(i), fz.pristine + (wqe_buf(i) - fz.arena),
		       BUF_LEN);
}

/* ------------------------------------------------------------------------
 * Setting up.
 */

static void
arena_setup(void)
{
	unsigned int i;

	fz.arena_len = GUARD_LEN + (size_t)MAX_WQE * (BUF_LEN + GUARD_LEN);
	fz.arena = mmap(NULL, fz.arena_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	SETUP(fz.arena != MAP_FAILED, "mmap");
	fz.pristine = malloc(fz.arena_len);
	SETUP(fz.pristine != NULL, "malloc");
	payload_fill(fz.pristine, (uint32_t)fz.arena_len, 0xa5);
	memcpy(fz.arena, fz.pristine, fz.arena_len);
	for (i = 0; i <= MAX_WQE; i++)
		GUARD_POISON(fz.arena + (size_t)i * (BUF_LEN + GUARD_LEN),
			     GUARD_LEN);
	for (i = 0; i < MAX_WQE; i++) {
		fz.mr[i] = ibv_reg_mr(fz.pd, wqe_buf(i), BUF_LEN,
				      IBV_ACCESS_LOCAL_WRITE);
		SETUP(fz.mr[i] != NULL, "ibv_reg_mr");
	}
}

static void
raw_setup(void)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = TX_SLOTS, .max_recv_wr = RX_SLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_flow_attr sn = {
		.type = IBV_FLOW_ATTR_SNIFFER, .size = sizeof(sn), .port = 1,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	unsigned int i;

	fz.pd0 = ibv_alloc_pd(fz.ctx[0]);
	fz.tx = aligned_alloc(64, (size_t)TX_SLOTS * SLOT);
	fz.rx = aligned_alloc(64, (size_t)RX_SLOTS * SLOT);
	SETUP(fz.pd0 != NULL && fz.tx != NULL && fz.rx != NULL, "droce0 PD");
	fz.tx_mr = ibv_reg_mr(fz.pd0, fz.tx, (size_t)TX_SLOTS * SLOT,
			      IBV_ACCESS_LOCAL_WRITE);
	fz.rx_mr = ibv_reg_mr(fz.pd0, fz.rx, (size_t)RX_SLOTS * SLOT,
			      IBV_ACCESS_LOCAL_WRITE);
	fz.raw_scq = ibv_create_cq(fz.ctx[0], TX_SLOTS * 2, NULL, NULL, 0);
	fz.raw_rcq = ibv_create_cq(fz.ctx[0], RX_SLOTS * 2, NULL, NULL, 0);
	SETUP(fz.tx_mr != NULL && fz.rx_mr != NULL && fz.raw_scq != NULL &&
	      fz.raw_rcq != NULL, "droce0 MRs and CQs");
	qa.send_cq = fz.raw_scq;
	qa.recv_cq = fz.raw_rcq;
	fz.raw = ibv_create_qp(fz.pd0, &qa);
	SETUP(fz.raw != NULL, "the raw packet QP (run as root)");
	SETUP(ibv_modify_qp(fz.raw, &a, IBV_QP_STATE | IBV_QP_PORT) == 0,
	      "raw QP to INIT");
	a.qp_state = IBV_QPS_RTR;
	SETUP(ibv_modify_qp(fz.raw, &a, IBV_QP_STATE) == 0, "raw QP to RTR");
	a.qp_state = IBV_QPS_RTS;
	SETUP(ibv_modify_qp(fz.raw, &a, IBV_QP_STATE) == 0, "raw QP to RTS");
	for (i = 0; i < RX_SLOTS; i++)
		SETUP(raw_post_recv(i) == 0, "raw QP receives");
	fz.sniffer = ibv_create_flow(fz.raw, &sn);
	SETUP(fz.sniffer != NULL, "the sniffer rule");
}

static struct ibv_context *
open_dev(struct ibv_device **list, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			return ibv_open_device(list[i]);
	return NULL;
}

/* Until droce1 knows droce0's MAC its QP sends nothing. */
static void
wait_neighbour(void)
{
	struct droce_counters c;
	uint64_t end = now_ms() + RX_TIMEOUT_MS;

	do {
		droce_query_counters(fz.ctx[1], &c);
		SETUP(now_ms() < end, "droce1 resolving droce0's address");
	} while (c.rx_arp == 0);
	engine_barrier();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = MAX_WQE, .max_recv_wr = 1,
			 .max_send_sge = 2, .max_recv_sge = 1 },
	};
	struct droce_counters base[2];
	struct ibv_device **list;
	int n;

	(void)argc;
	(void)argv;
	/* droce0 and droce1 back to back: the embedded default */
	unsetenv("DROCE_CONFIG");
	list = ibv_get_device_list(&n);
	SETUP(list != NULL, "ibv_get_device_list");
	fz.ctx[0] = open_dev(list, n, "droce0");
	fz.ctx[1] = open_dev(list, n, "droce1");
	ibv_free_device_list(list);
	SETUP(fz.ctx[0] != NULL && fz.ctx[1] != NULL, "opening droce0/1");
	SETUP(ibv_query_gid(fz.ctx[0], 1, 0, &fz.gid0) == 0 &&
	      ibv_query_gid(fz.ctx[1], 1, 0, &fz.gid1) == 0, "ibv_query_gid");
	/* to look at a reproducer's frames: FUZZ_REQUESTER_PCAP=prefix */
	if (getenv("FUZZ_REQUESTER_PCAP") != NULL) {
		char path[512];
		unsigned int i;

		for (i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "%s-droce%u.pcap",
				 getenv("FUZZ_REQUESTER_PCAP"), i);
			SETUP(droce_mirror_start(fz.ctx[i], path) == 0,
			      "droce_mirror_start");
		}
	}
	droce_query_mac(fz.ctx[0], fz.mac0);
	droce_query_mac(fz.ctx[1], fz.mac1);
	fz.pd = ibv_alloc_pd(fz.ctx[1]);
	SETUP(fz.pd != NULL, "ibv_alloc_pd");
	arena_setup();
	raw_setup();
	fz.scq = ibv_create_cq(fz.ctx[1], 64, NULL, NULL, 0);
	fz.rcq = ibv_create_cq(fz.ctx[1], 64, NULL, NULL, 0);
	SETUP(fz.scq != NULL && fz.rcq != NULL, "ibv_create_cq");
	qa.send_cq = fz.scq;
	qa.recv_cq = fz.rcq;
	fz.qp = ibv_create_qp(fz.pd, &qa);
	SETUP(fz.qp != NULL, "ibv_create_qp");
	SETUP(qp_up() == 0, "bringing the QP to RTS");
	wait_neighbour();
	counters(base);
	wait_quiet(base, 0);
	check_requests(false);  /* ARP: nothing to see */
	fz.pool = rte_mempool_lookup("droce_mbufs");
	SETUP(fz.pool != NULL, "droce's mbuf pool");
	fz.pool_in_use = rte_mempool_in_use_count(fz.pool);
	restore();
	return 0;
}

/* ------------------------------------------------------------------------
 * One input.
 */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint32_t lens[MAX_RECS];
	struct droce_counters base[2];
	unsigned int i, from;
	size_t off;

	if (size < HDR_LEN + WQE_REC_LEN)
		return 0;
	fz.inputs++;
	off = wqes_decode(data, size);
	fz.nrecs = (unsigned int)RTE_MIN((size - off) / REC_LEN,
					 (size_t)MAX_RECS);
	fz.una = 0;
	for (i = 0; i < fz.nrecs; i++) {
		rec_decode(data + off + (size_t)i * REC_LEN, &fz.recs[i]);
		lens[i] = frame_build(fz.tx + (size_t)i * SLOT, &fz.recs[i]);
	}
	if (qp_up() != 0)
		violation("the QP would not go RESET -> RTS");
	fz.resent = qp_eng()->stats.retransmits;

	counters(base);
	wqes_post();
	wait_quiet(base, 0);
	check_requests(true);
	check_una();
	/* the responses, in bursts up to each record that asks for quiet */
	for (from = 0; from < fz.nrecs; from = i) {
		for (i = from + 1; i < fz.nrecs; i++)
			if (fz.recs[i].kind & K_SYNC)
				break;
		counters(base);
		send_frames(lens, from, i - from);
		wait_quiet(base, i - from);
		check_requests(true);
		check_una();
	}
	check_completions();
	counters(base);
	wait_quiet(base, 0);
	check_requests(true);
	check_memory();
	check_mbufs();
	restore();
	return 0;
}
