/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * libFuzzer target for the responder, through droce's public interfaces
 * only: the verbs API, droce.h and lib/wire's frame builder.
 *
 * The embedded default configuration gives two devices back to back.
 * droce1 holds the targets: an RC QP, an RC QP on a shared receive
 * queue and a UC QP, each connected to a QPN of
 * droce0's address that no QP has, and a UD QP, over memory regions with
 * different rights in two protection domains, a type 2 memory window
 * bound through the RC QP, a type 1 window that any QP of its protection
 * domain reaches, and posted receive WQEs. droce0 holds a raw packet QP:
 * it puts the frames of an input on the wire and, through a sniffer
 * rule, sees what droce1 answers.
 *
 * An input is a sequence of 40-byte records (struct rec); each becomes
 * one RoCEv2 frame, built by droce_wire_build() with the extension
 * headers its opcode has, its PSN relative to what the QP expects next,
 * its keys and addresses picked among the real ones or raw, and now and
 * then one thing wrong with it. Once droce1 has received every frame and
 * gone quiet, these must hold, or the target aborts:
 *
 *  - the guard areas around every region are as they were (they are
 *    poisoned for AddressSanitizer too: any access is reported at once);
 *  - every byte of the regions that no request of the input was granted
 *    (its rkey, the key's protection domain and rights, the window's QP,
 *    the range), and no posted receive WQE covers, is as it was;
 *  - every frame droce1 sent parses with all its checksums, from
 *    droce1's address to droce0's, an RC response to an RC QP's peer;
 *    the MSNs of each QP's AETHs never go back and count no more messages
 *    than the input has records;
 *  - every receive completion is for a WQE posted and not completed yet,
 *    and a successful SEND fits its WQE; no send completion comes
 *    unasked;
 *  - the device and QP counters only grow; every frame reaches droce1.
 *
 * Then every QP goes RESET -> INIT -> RTR -> RTS with the same PSNs (the
 * QP on the SRQ is made again, with a new SRQ: an SRQ keeps what a QP
 * left of its WQEs), the regions get their patterns back and the receive
 * WQEs are posted again (the window bound again if a SEND with
 * invalidate took it), so that each input starts from the same state.
 */

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <infiniband/verbs.h>

#include <droce.h>
#include "droce_wire.h"

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
 * One frame, as the input describes it (40 bytes, little-endian).
 *
 * op: below 0xc0, the operation (low 5 bits) in the transport of the QP
 * the frame goes to; from 0xc0, op2 is the whole opcode byte.
 * flags: SE, AckReq, MigReq, FECN, BECN, a pad count XOR (bits 5-6: the
 * BTH says another pad than the payload has), IPv6 (bit 7).
 * psn: offset from the PSN the QP expects next (as far as the harness
 * can tell: each in-order request moves it on).
 * qp: below 0x60 the RC QP, then the RC QP on the SRQ, from 0x80 the UC
 * QP, the UD QP, and QPNs near the RC QP's from 0xe0.
 * key: rkey (bits 0-2: MR1, the window, MR2, MR3, the type 1 window,
 * MR1's lkey, the window's previous rkey, aux), the base va is relative
 * to (bits 3-4: MR1, the window, MR2, MR3; bit 5: none, va is raw) and
 * the key a SEND with invalidate names (bits 6-7: the window, MR1, the
 * window's previous rkey, aux).
 * mut: below 0xb0 nothing is wrong; 0xb0-0xbf a UD Q_Key of aux; from
 * 0xc0 one of enum mutation, with extra as its parameter.
 * seed: the payload's bytes.
 * len: payload length (at most MAX_PAYLOAD, or taken modulo it + 1).
 * va, dlen: RETH or AtomicETH address offset and RETH length.
 * aux: immediate data, raw keys, Q_Key, AETH, XRCETH, FETH.
 * swap_add, compare: AtomicETH (swap_add also an AtomicAckETH).
 */
struct rec {
	uint8_t op;
	uint8_t op2;
	uint8_t flags;
	int8_t psn;
	uint8_t qp;
	uint8_t key;
	uint8_t mut;
	uint8_t seed;
	uint16_t len;
	uint16_t extra;
	int32_t va;
	uint32_t dlen;
	uint32_t aux;
	uint64_t swap_add;
	uint64_t compare;
};

#define REC_LEN 40
#define MAX_RECS 48
#define MAX_PAYLOAD 1400

enum mutation {
	MUT_ICRC,          /* a bit of the ICRC flipped */
	MUT_IPCSUM,        /* the IPv4 header checksum wrong */
	MUT_UDP_PORT,      /* not to port 4791 */
	MUT_DST_MAC,       /* to another MAC */
	MUT_BCAST_MAC,     /* to the broadcast MAC (and droce1's address) */
	MUT_SRC_IP,        /* from an address that is not the peer's */
	MUT_TRUNCATE,      /* extra % 64 + 1 bytes cut off the end */
	MUT_TRAILER,       /* extra % 32 + 1 bytes of Ethernet padding */
	MUT_TVER,          /* BTH transport version 1 */
	MUT_IP_FRAG,       /* an IPv4 fragment */
	MUT_VLAN,          /* an 802.1Q tag */
	MUT_PKEY,          /* another partition key */
	MUT_RESV,          /* BTH reserved bits set */
	MUT_UDP_LEN,       /* UDP length 4 too long */
	MUT_IP_LEN,        /* IP length 4 too short */
	MUT_TOS_TTL,       /* TOS and TTL changed (outside the ICRC) */
	MUT_NUM
};

/* Mutations that leave a frame droce1 takes for a valid one. */
#define MUT_DELIVERED ((1u << MUT_BCAST_MAC) | (1u << MUT_TRAILER) | \
		       (1u << MUT_VLAN) | (1u << MUT_PKEY) | \
		       (1u << MUT_RESV) | (1u << MUT_TOS_TTL))

static void
rec_decode(const uint8_t *p, struct rec *r)
{
	r->op = p[0];
	r->op2 = p[1];
	r->flags = p[2];
	r->psn = (int8_t)p[3];
	r->qp = p[4];
	r->key = p[5];
	r->mut = p[6];
	r->seed = p[7];
	r->len = (uint16_t)(p[8] | p[9] << 8);
	r->extra = (uint16_t)(p[10] | p[11] << 8);
	memcpy(&r->va, p + 12, 4);
	r->va = (int32_t)le32toh((uint32_t)r->va);
	memcpy(&r->dlen, p + 16, 4);
	r->dlen = le32toh(r->dlen);
	memcpy(&r->aux, p + 20, 4);
	r->aux = le32toh(r->aux);
	memcpy(&r->swap_add, p + 24, 8);
	r->swap_add = le64toh(r->swap_add);
	memcpy(&r->compare, p + 32, 8);
	r->compare = le64toh(r->compare);
}

/* ------------------------------------------------------------------------
 * The target's memory: regions between guard areas in one mapping.
 */

enum { PD_A, PD_B, PD_NUM };

enum region_id { R_MR1, R_MR2, R_MR3, R_RECV_A, R_RECV_B, R_RECV_S, R_NUM };

#define LW IBV_ACCESS_LOCAL_WRITE
#define RW IBV_ACCESS_REMOTE_WRITE
#define RR IBV_ACCESS_REMOTE_READ
#define RA IBV_ACCESS_REMOTE_ATOMIC

static const struct region_spec {
	const char *name;
	uint32_t len;
	int pd;
	int access;
} region_spec[R_NUM] = {
	[R_MR1] = { "MR1", 16384, PD_A, LW | RW | RR | RA |
		    IBV_ACCESS_MW_BIND },
	[R_MR2] = { "MR2", 8192, PD_A, RR },
	[R_MR3] = { "MR3", 8192, PD_B, LW | RW | RA },
	[R_RECV_A] = { "RECV_A", 12288, PD_A, LW },
	[R_RECV_B] = { "RECV_B", 8192, PD_B, LW },
	[R_RECV_S] = { "RECV_S", 8192, PD_A, LW },
};

/* Guard bytes before, between and after the regions: more than a page,
 * so that regions do not start on a page boundary either. */
#define GUARD_LEN (4096 + 64)

/* The type 1 window: another part of MR1, remote write and atomics (no
 * read), for every QP of MR1's PD. */
#define MW1_OFF 10240
#define MW1_LEN 2048
#define MW1_ACCESS (RW | RA)

/* The type 2 window: part of MR1, remote read and write (no atomics). */
#define MW_OFF 4096
#define MW_LEN 4096
#define MW_ACCESS (RW | RR)

/* ------------------------------------------------------------------------
 * QPs on droce1 and their receive WQEs.
 */

enum qp_id { Q_RC, Q_UC, Q_UD, Q_SRQ, Q_NUM, Q_NONE = Q_NUM };

/* The peers of the RC and UC QPs: QPNs of droce0's no QP has. */
#define PEER_QPN 0xabcde
#define PEER_SRQ_QPN 0xabcdf

#define MAX_WQE 8
#define MAX_SGE 3
#define SGE_GAP 16     /* pattern bytes between receive buffers */

struct wqe_spec {
	uint8_t nsge;
	uint16_t sge[MAX_SGE];
};

/* Sizes vary: short and long, several SGEs, none, odd lengths. */
static const struct wqe_spec rc_wqes[] = {
	{ 1, { 128 } }, { 2, { 64, 192 } }, { 1, { 1024 } },
	{ 3, { 100, 1, 900 } }, { 0, { 0 } }, { 1, { 2048 } },
};
static const struct wqe_spec uc_wqes[] = {
	{ 1, { 256 } }, { 1, { 1500 } }, { 2, { 8, 500 } },
};
/* the SRQ's */
static const struct wqe_spec srq_wqes[] = {
	{ 1, { 512 } }, { 2, { 100, 1000 } }, { 1, { 64 } }, { 0, { 0 } },
	{ 3, { 1, 300, 2048 } },
};
/* UD: the 40-byte GRH first */
static const struct wqe_spec ud_wqes[] = {
	{ 1, { 40 + 512 } }, { 1, { 40 + 1400 } }, { 2, { 40, 256 } },
};

static const struct qp_spec {
	const char *name;
	enum ibv_qp_type type;
	int pd;
	int access;
	enum region_id recv;
	const struct wqe_spec *wqes;
	unsigned int nwqe;
	uint32_t rq_psn;
	uint32_t peer;             /* the QPN it is connected to */
} qp_spec[Q_NUM] = {
	/* PSNs near the wrap: in-order sequences cross it */
	[Q_RC] = { "RC", IBV_QPT_RC, PD_A, RW | RR | RA, R_RECV_A, rc_wqes,
		   RTE_DIM(rc_wqes), 0xfffff8, PEER_QPN },
	[Q_UC] = { "UC", IBV_QPT_UC, PD_B, RW, R_RECV_B, uc_wqes,
		   RTE_DIM(uc_wqes), 0xfffffc, PEER_QPN },
	[Q_UD] = { "UD", IBV_QPT_UD, PD_A, 0, R_RECV_A, ud_wqes,
		   RTE_DIM(ud_wqes), 0, 0 },
	/* its receive WQEs are the SRQ's */
	[Q_SRQ] = { "SRQ", IBV_QPT_RC, PD_A, RW | RR | RA, R_RECV_S,
		    srq_wqes, RTE_DIM(srq_wqes), 0xfffffa, PEER_SRQ_QPN },
};

#define UD_QKEY 0x1234567u
#define UD_SRC_QPN 0x4242
#define PATH_MTU IBV_MTU_1024
#define MTU 1024
#define MAX_DEST_RD_ATOMIC 4

/* The raw QP's frame slots. */
#define SLOT 2048
#define TX_SLOTS MAX_RECS
#define RX_SLOTS 1024
#define MAX_FRAME 1514

/* How long droce1 may take to receive an input's frames (within
 * libFuzzer's -timeout, so that a hang is reported with what is known) */
#define RX_TIMEOUT_MS 5000

struct posted_wqe {
	uint32_t cap;              /* bytes the WQE takes */
	bool done;                 /* completed during this input */
};

struct target_qp {
	struct ibv_qp *qp;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_sge sge[MAX_WQE][MAX_SGE];
	struct posted_wqe wqe[MAX_WQE];
	uint32_t psn_next;         /* what the harness thinks comes next */
};

static struct fz {
	struct ibv_context *ctx[2];
	/* droce1 */
	struct ibv_pd *pd[PD_NUM];
	uint8_t *arena;
	size_t arena_len;
	uint8_t *pristine;         /* the arena as it must come back */
	uint8_t *may_change;       /* per byte: an input may change it */
	uint8_t *recv_slots;       /* per byte: a receive WQE covers it */
	size_t off[R_NUM];
	struct ibv_mr *mr[R_NUM];
	struct ibv_mw *mw;
	uint32_t mw_rkey;
	struct ibv_mw *mw1;
	uint32_t mw_old_rkey;
	bool mw_invalidated;
	struct target_qp t[Q_NUM];
	struct ibv_srq *srq;       /* Q_SRQ's */
	union ibv_gid gid1[2];     /* IPv4-mapped, link-local */
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
	union ibv_gid gid0[2];
	uint8_t mac0[6];
	/* counters as last seen */
	struct droce_counters dev[2];
	struct droce_qp_counters qpc[Q_NUM];
	/* the input being run, for reports */
	struct rec recs[MAX_RECS];
	unsigned int nrecs;
	uint64_t inputs;
	/* each QP's MSN as its responses said, this input */
	uint32_t msn[Q_NUM];
} fz;

/* ------------------------------------------------------------------------
 * Reports.
 */

static void
rec_print(unsigned int i, const struct rec *r)
{
	fprintf(stderr, "  #%u op=%02x op2=%02x flags=%02x psn=%+d qp=%02x "
		"key=%02x mut=%02x seed=%02x len=%u extra=%u va=%+d dlen=%u "
		"aux=%08x swap_add=%016llx compare=%016llx\n", i, r->op,
		r->op2, r->flags, r->psn, r->qp, r->key, r->mut, r->seed,
		r->len, r->extra, r->va, r->dlen, r->aux,
		(unsigned long long)r->swap_add,
		(unsigned long long)r->compare);
}

/* Report a broken invariant with the input's records, and abort. */
static void __attribute__((noreturn, format(printf, 1, 2)))
violation(const char *fmt, ...)
{
	va_list ap;
	unsigned int i;

	fprintf(stderr, "\nfuzz_responder: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\ninput %llu, %u records:\n",
		(unsigned long long)fz.inputs, fz.nrecs);
	for (i = 0; i < fz.nrecs; i++)
		rec_print(i, &fz.recs[i]);
	abort();
}

/* A setup step that failed: not a finding, but nothing can go on. */
static void __attribute__((noreturn))
setup_failed(const char *what)
{
	fprintf(stderr, "fuzz_responder: setup: %s failed (errno %d: %s)\n",
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
 * Keys, addresses and what a request may touch.
 */

static uint8_t *
region(enum region_id r)
{
	return fz.arena + fz.off[r];
}

static uint64_t
region_va(enum region_id r)
{
	return (uintptr_t)region(r);
}

static uint32_t
rec_rkey(const struct rec *r)
{
	switch (r->key & 7) {
	case 0: return fz.mr[R_MR1]->rkey;
	case 1: return fz.mw_rkey;
	case 2: return fz.mr[R_MR2]->rkey;
	case 3: return fz.mr[R_MR3]->rkey;
	case 4: return fz.mw1->rkey;
	case 5: return fz.mr[R_MR1]->lkey;
	case 6: return fz.mw_old_rkey;
	default: return r->aux;
	}
}

static uint64_t
rec_va(const struct rec *r)
{
	static const enum region_id base[4] = { R_MR1, R_MR1, R_MR2, R_MR3 };
	unsigned int b = (r->key >> 3) & 3;

	if (r->key & 0x20)
		return (uint64_t)(int64_t)r->va;
	return region_va(base[b]) + (b == 1 ? MW_OFF : 0) +
		(uint64_t)(int64_t)r->va;
}

static uint32_t
rec_ieth(const struct rec *r)
{
	switch (r->key >> 6) {
	case 0: return fz.mw_rkey;
	case 1: return fz.mr[R_MR1]->rkey;
	case 2: return fz.mw_old_rkey;
	default: return r->aux;
	}
}

/*
 * The range a request through QP @p q with @p rkey may touch with
 * @p right, as verbs grants it: a region of the QP's PD with that right,
 * or the window through the QP it is bound to. Only the RC and UC QPs
 * execute RDMA. @return false if none.
 */
static bool
granted(enum qp_id q, uint32_t rkey, int right, uint64_t *lo, uint64_t *hi)
{
	const struct qp_spec *qs = &qp_spec[q];
	unsigned int i;

	if (q == Q_NONE || qs->type == IBV_QPT_UD || !(qs->access & right))
		return false;
	if (qs->pd == PD_A && rkey == fz.mw1->rkey && (MW1_ACCESS & right)) {
		*lo = region_va(R_MR1) + MW1_OFF;
		*hi = *lo + MW1_LEN;
		return true;
	}
	if (q == Q_RC && rkey == fz.mw_rkey && !fz.mw_invalidated &&
	    (MW_ACCESS & right)) {
		*lo = region_va(R_MR1) + MW_OFF;
		*hi = *lo + MW_LEN;
		return true;
	}
	for (i = 0; i < R_NUM; i++) {
		const struct region_spec *rs = &region_spec[i];

		if (fz.mr[i]->rkey == rkey && rs->pd == qs->pd &&
		    (rs->access & right)) {
			*lo = region_va(i);
			*hi = *lo + rs->len;
			return true;
		}
	}
	return false;
}

/* Mark what [va, va + len) through @p q with @p rkey may change. */
static void
grant_mark(enum qp_id q, uint32_t rkey, int right, uint64_t va, uint64_t len)
{
	uint64_t lo, hi, end;

	if (!granted(q, rkey, right, &lo, &hi))
		return;
	end = va + len < va ? UINT64_MAX : va + len;
	lo = RTE_MAX(lo, va);
	hi = RTE_MIN(hi, end);
	if (lo < hi)
		memset(fz.may_change + (lo - (uintptr_t)fz.arena), 1, hi - lo);
}

/* ------------------------------------------------------------------------
 * Frames.
 */

/* The QP a record is for (Q_NONE: a QPN droce1's QPs do not have). */
static enum qp_id
rec_qp(const struct rec *r, uint32_t *qpn)
{
	enum qp_id q;

	if (r->qp < 0x60)
		q = Q_RC;
	else if (r->qp < 0x80)
		q = Q_SRQ;
	else if (r->qp < 0xb0)
		q = Q_UC;
	else if (r->qp < 0xe0)
		q = Q_UD;
	else
		q = Q_NONE;
	if (q != Q_NONE) {
		*qpn = fz.t[q].qp->qp_num;
		return q;
	}
	*qpn = (fz.t[Q_RC].qp->qp_num + (uint32_t)(int32_t)(r->qp - 0xf0)) &
		DROCE_PSN_MASK;
	for (q = 0; q < Q_NUM; q++)
		if (fz.t[q].qp->qp_num == *qpn)
			return q;
	return Q_NONE;
}

static uint8_t
qp_transport(enum qp_id q)
{
	switch (q) {
	case Q_UC: return DROCE_TR_UC;
	case Q_UD: return DROCE_TR_UD;
	default: return DROCE_TR_RC;
	}
}

static uint8_t
rec_opcode(const struct rec *r, enum qp_id q)
{
	if (r->op >= 0xc0)
		return r->op2;
	return qp_transport(q) | (r->op & 0x1f);
}

static int
rec_mutation(const struct rec *r)
{
	return r->mut >= 0xc0 ? (r->mut - 0xc0) % MUT_NUM : -1;
}

static uint32_t
rec_payload_len(const struct rec *r)
{
	return r->len <= MAX_PAYLOAD ? r->len : r->len % (MAX_PAYLOAD + 1);
}

/* The payload of @p r: bytes from its seed. */
static void
payload_fill(uint8_t *p, uint32_t len, uint8_t seed)
{
	uint32_t s = seed * 2654435761u + 1, i;

	for (i = 0; i < len; i++) {
		s = s * 1664525u + 1013904223u;
		p[i] = (uint8_t)(s >> 24);
	}
}

static uint32_t
read_npkts(uint32_t dlen)
{
	return dlen == 0 ? 1 : (uint32_t)(((uint64_t)dlen + MTU - 1) / MTU);
}

/* The extension headers of @p pkt's opcode from @p r. */
static void
fill_ext(struct droce_wire_pkt *pkt, const struct rec *r, uint32_t flags)
{
	if (flags & DROCE_OPF_RETH)
		pkt->reth = (struct droce_reth) { rec_va(r), rec_rkey(r),
						  r->dlen };
	if (flags & DROCE_OPF_ATOMICETH)
		pkt->atomiceth = (struct droce_atomiceth) {
			rec_va(r), rec_rkey(r), r->swap_add, r->compare };
	if (flags & DROCE_OPF_DETH)
		pkt->deth = (struct droce_deth) {
			(r->mut & 0xf0) == 0xb0 ? r->aux : UD_QKEY, 0,
			UD_SRC_QPN };
	if (flags & DROCE_OPF_XRCETH)
		pkt->xrceth.xrcsrq = r->aux & DROCE_PSN_MASK;
	if (flags & DROCE_OPF_FETH)
		pkt->feth = (struct droce_feth) { 0, r->aux & 3,
						  (r->aux >> 2) & 0xf };
	if (flags & DROCE_OPF_AETH)
		pkt->aeth = (struct droce_aeth) { (uint8_t)r->aux,
						  r->aux >> 8 };
	if (flags & DROCE_OPF_ATOMICACKETH)
		pkt->atomicacketh.orig = r->swap_add;
	pkt->immdt = r->aux;
	pkt->ieth_rkey = rec_ieth(r);
}

static void
fill_addresses(struct droce_wire_pkt *pkt, const struct rec *r, int mut)
{
	bool v6 = (r->flags & 0x80) != 0;

	memcpy(pkt->dst_mac.addr_bytes, fz.mac1, 6);
	memcpy(pkt->src_mac.addr_bytes, fz.mac0, 6);
	if (mut == MUT_DST_MAC)
		pkt->dst_mac.addr_bytes[5] ^= 0x40;
	else if (mut == MUT_BCAST_MAC)
		memset(pkt->dst_mac.addr_bytes, 0xff, 6);
	pkt->has_vlan = mut == MUT_VLAN;
	pkt->vlan_tci = r->extra & 0xfff;
	pkt->ip_version = v6 ? 6 : 4;
	pkt->ttl = mut == MUT_TOS_TTL ? (uint8_t)r->extra : 64;
	pkt->tos = mut == MUT_TOS_TTL ? (uint8_t)(r->extra >> 8) : 0;
	pkt->ip_frag = mut == MUT_IP_FRAG ? 0x2000 : 0x4000;
	pkt->flow_label = 0;
	memcpy(pkt->src_gid, fz.gid0[v6].raw, 16);
	memcpy(pkt->dst_gid, fz.gid1[v6].raw, 16);
	if (mut == MUT_SRC_IP)
		pkt->src_gid[15] ^= 0x08;
	pkt->udp_dport = mut == MUT_UDP_PORT ? DROCE_UDP_PORT + 1 :
		DROCE_UDP_PORT;
	pkt->udp_sport = droce_udp_sport(PEER_QPN, pkt->bth.dqpn);
}

/* Recompute the ICRC of the frame @p f of @p len bytes (up to its end). */
static void
icrc_redo(uint8_t *f, const struct droce_wire_pkt *pkt, uint32_t len)
{
	uint32_t n = len - pkt->l3_off - DROCE_ICRC_LEN;

	droce_icrc_put(f + len - DROCE_ICRC_LEN,
		       droce_icrc_calc(f + pkt->l3_off, n));
}

static void
ipv4_csum_redo(uint8_t *ip)
{
	uint32_t sum = 0;
	unsigned int i;

	ip[10] = 0;
	ip[11] = 0;
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
}

/* What a built frame gets afterwards: the mutations the builder cannot
 * express. @return the frame's new length. */
static uint32_t
mutate(uint8_t *f, uint32_t len, const struct droce_wire_pkt *pkt,
       const struct rec *r, int mut)
{
	uint8_t *ip = f + pkt->l3_off, *udp = f + pkt->l4_off;
	uint32_t n;

	switch (mut) {
	case MUT_ICRC:
		f[len - 1 - r->extra % 4] ^=
			(uint8_t)(1u << (r->extra >> 2 & 7));
		break;
	case MUT_IPCSUM:
		if (pkt->ip_version == 4)
			ip[11] ^= 1;
		else
			udp[7] ^= 1;
		break;
	case MUT_TRUNCATE:
		n = r->extra % 64u + 1;
		return len > 14 + n ? len - n : 14;
	case MUT_TRAILER:
		n = r->extra % 32u + 1;
		n = RTE_MIN(n, (uint32_t)MAX_FRAME - len);
		memset(f + len, 0, n);
		return len + n;
	case MUT_UDP_LEN:
		droce_put_be16(udp + 4,
			       (uint16_t)(droce_get_be16(udp + 4) + 4));
		break;
	case MUT_IP_LEN:
		if (pkt->ip_version == 4) {
			droce_put_be16(ip + 2,
				       (uint16_t)(droce_get_be16(ip + 2) - 4));
			ipv4_csum_redo(ip);
		} else {
			droce_put_be16(ip + 4,
				       (uint16_t)(droce_get_be16(ip + 4) - 4));
		}
		break;
	default:
		break;
	}
	return len;
}

/*
 * The frame of @p r at @p f (MAX_FRAME bytes), for QP @p q whose QPN is
 * @p qpn, with PSN @p psn. @return its length.
 */
static uint32_t
frame_build(uint8_t *f, const struct rec *r, enum qp_id q, uint32_t qpn,
	    uint32_t psn)
{
	static uint8_t payload[MAX_PAYLOAD];
	uint8_t opcode = rec_opcode(r, q);
	const struct droce_opcode_info *op = droce_opcode_get(opcode);
	int mut = rec_mutation(r);
	struct droce_wire_pkt pkt;
	uint8_t padx = (r->flags >> 5) & 3;
	int len;

	memset(&pkt, 0, sizeof(pkt));
	/* an opcode RoCEv2 does not define goes out as a SEND's frame */
	pkt.bth.opcode = op != NULL ? opcode :
		(uint8_t)(qp_transport(q) | DROCE_OP_SEND_ONLY);
	op = droce_opcode_get(pkt.bth.opcode);
	pkt.op = op;
	pkt.bth.se = r->flags & 1;
	pkt.bth.ackreq = (r->flags >> 1) & 1;
	pkt.bth.m = (r->flags >> 2) & 1;
	pkt.bth.fecn = (r->flags >> 3) & 1;
	pkt.bth.becn = (r->flags >> 4) & 1;
	pkt.bth.tver = mut == MUT_TVER ? 1 : 0;
	pkt.bth.pkey = mut == MUT_PKEY ? (uint16_t)(r->extra | 1) : 0xffff;
	if (mut == MUT_RESV) {
		pkt.bth.resv6 = r->extra & 0x3f;
		pkt.bth.resv7 = (r->extra >> 6) & 0x7f;
	}
	pkt.bth.dqpn = qpn;
	pkt.bth.psn = psn;
	fill_ext(&pkt, r, op->flags);
	fill_addresses(&pkt, r, mut);
	if (op->flags & DROCE_OPF_PAYLOAD) {
		pkt.payload_len = rec_payload_len(r);
		payload_fill(payload, pkt.payload_len, r->seed);
		pkt.payload = payload;
	}
	len = droce_wire_build(f, MAX_FRAME, &pkt);
	if (len < 0) {
		/* too long with its headers: without a payload then */
		pkt.payload_len = 0;
		len = droce_wire_build(f, MAX_FRAME, &pkt);
	}
	if (len < 0)
		violation("droce_wire_build() of opcode %#x: %d",
			  pkt.bth.opcode, len);
	/* what the builder derives: set by hand, the ICRC made again */
	pkt.l3_off = pkt.has_vlan ? 18 : 14;
	pkt.l4_off = (uint16_t)(pkt.l3_off + (pkt.ip_version == 4 ? 20 : 40));
	if (opcode != pkt.bth.opcode || padx != 0) {
		uint8_t *bth = f + pkt.l4_off + 8;

		/* (over IPv6 the UDP checksum stays the old one: droce1
		 * does not check it) */
		bth[0] = opcode;
		bth[1] ^= (uint8_t)(padx << 4);
		icrc_redo(f, &pkt, (uint32_t)len);
	}
	return mutate(f, (uint32_t)len, &pkt, r, mut);
}

/*
 * The PSN of @p r for QP @p q, and what the QP expects after it if the
 * record is an in-order request that arrives whole.
 */
static uint32_t
rec_psn(const struct rec *r, enum qp_id q, uint8_t opcode)
{
	struct target_qp *t = &fz.t[q == Q_NONE ? Q_RC : q];
	const struct droce_opcode_info *op = droce_opcode_get(opcode);
	uint32_t psn = droce_psn_add(t->psn_next, (uint32_t)(int32_t)r->psn);
	int mut = rec_mutation(r);

	if (r->psn != 0 || q == Q_NONE || op == NULL ||
	    !(op->flags & DROCE_OPF_REQ) ||
	    (opcode & DROCE_TR_MASK) != qp_transport(q) ||
	    (mut >= 0 && !((MUT_DELIVERED >> mut) & 1)))
		return psn;
	t->psn_next = droce_psn_add(psn, (op->flags & DROCE_OPF_READ) ?
				    read_npkts(r->dlen) : 1);
	return psn;
}

/* What the request of @p r may change if droce1 executes it. */
static void
rec_grants(const struct rec *r, enum qp_id q, uint8_t opcode)
{
	const struct droce_opcode_info *op = droce_opcode_get(opcode);

	if (op == NULL)
		return;
	if ((op->flags & DROCE_OPF_RETH) &&
	    (op->flags & (DROCE_OPF_WRITE | DROCE_OPF_ATOMIC_WRITE)))
		grant_mark(q, rec_rkey(r), RW, rec_va(r), r->dlen);
	if (op->flags & DROCE_OPF_ATOMICETH)
		grant_mark(q, rec_rkey(r), RA, rec_va(r), 8);
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

	if (ibv_query_qp(fz.t[Q_RC].qp, &attr, IBV_QP_STATE, &init) != 0)
		violation("ibv_query_qp() failed");
}

static void
send_frames(const uint32_t *lens, unsigned int n)
{
	struct ibv_send_wr wr[TX_SLOTS], *bad;
	struct ibv_sge sge[TX_SLOTS];
	struct ibv_wc wc[TX_SLOTS];
	unsigned int i, got = 0;
	uint64_t end;
	int ret;

	for (i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge) { (uintptr_t)(fz.tx + i * SLOT),
					    lens[i], fz.tx_mr->lkey };
		wr[i] = (struct ibv_send_wr) {
			.wr_id = i, .next = i + 1 < n ? &wr[i + 1] : NULL,
			.sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		};
	}
	ret = ibv_post_send(fz.raw, wr, &bad);
	if (ret != 0)
		violation("raw QP refused frame %u (%u bytes): %d",
			  (unsigned int)bad->wr_id, lens[bad->wr_id], ret);
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
 * A whole pass of the engine lcore (both devices' receive bursts, the
 * responders' sending, the transmit bursts) between this call and the
 * next: each control call waits for the start of a pass.
 */
static void
engine_pass(void)
{
	engine_barrier();
	engine_barrier();
}

/*
 * Wait for droce1 to have received @p n frames more than @p base, then
 * for both devices to go quiet: two whole engine passes in which neither
 * sent nor received a frame (a frame on the wire is received in the pass
 * after it was sent). The counts are not the input's alone: the engines
 * send ARP and neighbour discovery of their own at any time.
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
			violation("droce1 received %llu of %u frames (droce0 "
				  "sent %llu, dropped %llu)",
				  (unsigned long long)(c[1].rx_frames -
						       base[1].rx_frames), n,
				  (unsigned long long)(c[0].tx_frames -
						       base[0].tx_frames),
				  (unsigned long long)(c[0].tx_drop -
						       base[0].tx_drop));
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
			violation("droce1 does not go quiet: it sent %llu "
				  "frames since the input started",
				  (unsigned long long)(c[1].tx_frames -
						       base[1].tx_frames));
	}
}

/* ------------------------------------------------------------------------
 * Checks.
 */

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

static const char *
arena_where(size_t off, size_t *rel)
{
	unsigned int i;

	for (i = 0; i < R_NUM; i++)
		if (off >= fz.off[i] && off < fz.off[i] + region_spec[i].len) {
			*rel = off - fz.off[i];
			return region_spec[i].name;
		}
	*rel = off;
	return "a guard area";
}

static void
check_memory(void)
{
	size_t i, rel;
	unsigned int r;
	size_t at = 0;

	/* the guards: before each region, and after the last */
	for (r = 0; r <= R_NUM; r++) {
		size_t g = r < R_NUM ? fz.off[r] - GUARD_LEN :
			fz.off[R_NUM - 1] + region_spec[R_NUM - 1].len;
		size_t d = guard_diff(fz.arena + g, fz.pristine + g, GUARD_LEN);

		if (d != GUARD_LEN)
			violation("guard byte at arena offset %zu changed: "
				  "%#x, was %#x", g + d, fz.arena[g + d],
				  fz.pristine[g + d]);
	}
	for (r = 0; r < R_NUM; r++) {
		at = fz.off[r];
		for (i = at; i < at + region_spec[r].len; i++) {
			if (fz.arena[i] == fz.pristine[i] || fz.may_change[i] ||
			    fz.recv_slots[i])
				continue;
			violation("%s byte %zu changed (%#x, was %#x): no "
				  "request granted it", arena_where(i, &rel),
				  rel, fz.arena[i], fz.pristine[i]);
		}
	}
}

/* Is @p f a frame droce1 may have sent to droce0? */
static void
check_response(const uint8_t *f, uint32_t len)
{
	struct droce_wire_pkt pkt;
	enum qp_id q;
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
	if (pkt.ip_version != 4 ||
	    memcmp(pkt.src_gid, fz.gid1[0].raw, 16) != 0 ||
	    memcmp(pkt.dst_gid, fz.gid0[0].raw, 16) != 0 ||
	    memcmp(pkt.dst_mac.addr_bytes, fz.mac0, 6) != 0)
		violation("droce1 sent %s from or to another address",
			  pkt.op->name);
	if (pkt.bth.opcode == DROCE_OPCODE_CNP) {
		/* a forged request marked CE (ECN) is answered by a CNP */
		if ((pkt.bth.dqpn != PEER_QPN &&
		     pkt.bth.dqpn != PEER_SRQ_QPN) || pkt.bth.becn != 1 ||
		    (pkt.tos & DROCE_ECN_MASK) != DROCE_ECN_NOT_ECT)
			violation("droce1 sent a CNP to QPN %#x, BECN %u, "
				  "ECN %u", pkt.bth.dqpn, pkt.bth.becn,
				  pkt.tos & DROCE_ECN_MASK);
		return;
	}
	if ((pkt.bth.opcode & DROCE_TR_MASK) != DROCE_TR_RC ||
	    !(pkt.op->flags & DROCE_OPF_RESP) ||
	    (pkt.bth.dqpn != PEER_QPN && pkt.bth.dqpn != PEER_SRQ_QPN))
		violation("droce1 sent %s to QPN %#x: only RC responses to "
			  "%#x and %#x are due", pkt.op->name, pkt.bth.dqpn,
			  PEER_QPN, PEER_SRQ_QPN);
	q = pkt.bth.dqpn == PEER_QPN ? Q_RC : Q_SRQ;
	if (pkt.payload_len > MTU)
		violation("droce1 sent %s of %u bytes, path MTU %u",
			  pkt.op->name, pkt.payload_len, MTU);
	if (!(pkt.op->flags & DROCE_OPF_AETH))
		return;
	/* the MSN counts the messages the QP completed: from 0 after the
	 * reset, one at most per record, never back (the frames are seen
	 * in the order droce1 sent them) */
	if (droce_psn_diff(pkt.aeth.msn, fz.msn[q]) < 0)
		violation("droce1 sent %s with MSN %u after MSN %u",
			  pkt.op->name, pkt.aeth.msn, fz.msn[q]);
	if (pkt.aeth.msn > fz.nrecs)
		violation("droce1 sent %s with MSN %u: the input has %u "
			  "requests", pkt.op->name, pkt.aeth.msn, fz.nrecs);
	fz.msn[q] = pkt.aeth.msn;
}

/* Give the raw QP's receive slot @p slot back. @return 0 or an errno. */
static int
raw_post_recv(uint64_t slot)
{
	struct ibv_sge sge = { (uintptr_t)(fz.rx + slot * SLOT), SLOT,
			       fz.rx_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(fz.raw, &wr, &bad);
}

static void
check_responses(void)
{
	struct ibv_wc wc[64];
	int n, i;

	while ((n = ibv_poll_cq(fz.raw_rcq, 64, wc)) > 0)
		for (i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_SUCCESS)
				check_response(fz.rx + wc[i].wr_id * SLOT,
					       wc[i].byte_len);
			if (raw_post_recv(wc[i].wr_id) != 0)
				violation("raw QP receive repost failed");
		}
}

static void
check_recv_wc(enum qp_id q, const struct ibv_wc *wc)
{
	struct target_qp *t = &fz.t[q];
	uint64_t i = wc->wr_id;

	if (wc->qp_num != t->qp->qp_num || i >= qp_spec[q].nwqe)
		violation("%s QP: completion of QP %#x wr_id %llu",
			  qp_spec[q].name, wc->qp_num,
			  (unsigned long long)i);
	if (t->wqe[i].done)
		violation("%s QP: receive WQE %llu completed twice",
			  qp_spec[q].name, (unsigned long long)i);
	t->wqe[i].done = true;
	if (wc->status != IBV_WC_SUCCESS)
		return;
	if (wc->opcode == IBV_WC_RECV && wc->byte_len > t->wqe[i].cap)
		violation("%s QP: %u bytes received in a WQE of %u",
			  qp_spec[q].name, wc->byte_len, t->wqe[i].cap);
	if (q == Q_RC && (wc->wc_flags & IBV_WC_WITH_INV) &&
	    wc->invalidated_rkey == fz.mw_rkey)
		fz.mw_invalidated = true;
}

static void
check_completions(void)
{
	struct ibv_wc wc[16];
	enum qp_id q;
	int n, i;

	for (q = 0; q < Q_NUM; q++) {
		while ((n = ibv_poll_cq(fz.t[q].rcq, 16, wc)) > 0)
			for (i = 0; i < n; i++)
				check_recv_wc(q, &wc[i]);
		if (fz.t[q].scq != fz.t[q].rcq &&
		    ibv_poll_cq(fz.t[q].scq, 16, wc) > 0)
			violation("%s QP: a send completion (wr_id %llu, %s) "
				  "nothing was posted for", qp_spec[q].name,
				  (unsigned long long)wc[0].wr_id,
				  ibv_wc_status_str(wc[0].status));
	}
}

static void
check_counters(void)
{
	struct droce_counters c[2];
	struct droce_qp_counters qc;
	unsigned int d, i;
	enum qp_id q;

	counters(c);
	for (d = 0; d < 2; d++) {
		const uint64_t *now = (const uint64_t *)&c[d];
		const uint64_t *was = (const uint64_t *)&fz.dev[d];

		for (i = 0; i < sizeof(c[d]) / 8; i++)
			if (now[i] < was[i])
				violation("droce%u counter %u went back", d, i);
	}
	memcpy(fz.dev, c, sizeof(c));
	for (q = 0; q < Q_NUM; q++) {
		const uint64_t *now = (const uint64_t *)&qc;
		const uint64_t *was = (const uint64_t *)&fz.qpc[q];

		droce_query_qp_counters(fz.t[q].qp, &qc);
		for (i = 0; i < sizeof(qc) / 8; i++)
			if (now[i] < was[i])
				violation("%s QP counter %u went back",
					  qp_spec[q].name, i);
		fz.qpc[q] = qc;
	}
}

/* ------------------------------------------------------------------------
 * Bringing the targets (back) to their starting state.
 */

static int
qp_up(enum qp_id q)
{
	const struct qp_spec *s = &qp_spec[q];
	struct ibv_qp *qp = fz.t[q].qp;
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	if (s->type == IBV_QPT_UD) {
		a.qkey = UD_QKEY;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_QKEY);
	} else {
		a.qp_access_flags = (unsigned int)s->access;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	}
	if (ret != 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (s->type == IBV_QPT_UD) {
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	} else {
		a.path_mtu = PATH_MTU;
		a.dest_qp_num = s->peer;
		a.rq_psn = s->rq_psn;
		a.max_dest_rd_atomic = MAX_DEST_RD_ATOMIC;
		a.min_rnr_timer = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = fz.gid0[0];
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.port_num = 1;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN |
				    (s->type == IBV_QPT_RC ?
				     IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER : 0));
	}
	if (ret != 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (s->type == IBV_QPT_RC ?
			      IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

static int
qp_reset(enum qp_id q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int ret = ibv_modify_qp(fz.t[q].qp, &a, IBV_QP_STATE);

	return ret != 0 ? ret : qp_up(q);
}

/*
 * Create QP @p q (Q_SRQ with its SRQ) and bring it to RTS.
 * @return 0 or -1.
 */
static int
qp_create(enum qp_id q)
{
	const struct qp_spec *s = &qp_spec[q];
	struct target_qp *t = &fz.t[q];
	struct ibv_qp_init_attr qa = {
		.qp_type = s->type,
		.send_cq = t->scq,
		.recv_cq = t->rcq,
		.cap = { .max_send_wr = 16, .max_recv_wr = MAX_WQE,
			 .max_send_sge = 1, .max_recv_sge = MAX_SGE },
	};

	if (q == Q_SRQ) {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = MAX_WQE, .max_sge = MAX_SGE },
		};

		fz.srq = ibv_create_srq(fz.pd[s->pd], &sa);
		if (fz.srq == NULL)
			return -1;
		qa.srq = fz.srq;
		qa.cap.max_recv_wr = 0;
	}
	t->qp = ibv_create_qp(fz.pd[s->pd], &qa);
	return t->qp != NULL && qp_up(q) == 0 ? 0 : -1;
}

/*
 * An SRQ keeps what its QPs left of its WQEs: the QP on it starts each
 * input afresh, SRQ and all. @return 0 or -1.
 */
static int
srq_qp_renew(void)
{
	struct target_qp *t = &fz.t[Q_SRQ];

	if (ibv_destroy_qp(t->qp) != 0 || ibv_destroy_srq(fz.srq) != 0)
		return -1;
	t->qp = NULL;
	fz.srq = NULL;
	if (qp_create(Q_SRQ) != 0)
		return -1;
	/* its counters start from nothing again */
	return droce_query_qp_counters(t->qp, &fz.qpc[Q_SRQ]);
}

static int
post_recvs(enum qp_id q)
{
	const struct qp_spec *s = &qp_spec[q];
	struct target_qp *t = &fz.t[q];
	unsigned int i;

	for (i = 0; i < s->nwqe; i++) {
		struct ibv_recv_wr wr = {
			.wr_id = i, .sg_list = t->sge[i],
			.num_sge = s->wqes[i].nsge,
		}, *bad;

		t->wqe[i].done = false;
		if (q == Q_SRQ ? ibv_post_srq_recv(fz.srq, &wr, &bad) != 0 :
		    ibv_post_recv(t->qp, &wr, &bad) != 0)
			return -1;
	}
	return 0;
}

/* Bind the window through the RC QP with the next rkey of its own. */
static void
mw_bind(void)
{
	uint32_t rkey = ibv_inc_rkey(fz.mw_rkey);
	struct ibv_send_wr wr = {
		.wr_id = 0xb1d, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = fz.mw, .rkey = rkey,
			     .bind_info = { fz.mr[R_MR1],
					    region_va(R_MR1) + MW_OFF, MW_LEN,
					    MW_ACCESS } },
	}, *bad;
	struct ibv_wc wc;
	uint64_t end = now_ms() + RX_TIMEOUT_MS;
	int n;

	if (ibv_post_send(fz.t[Q_RC].qp, &wr, &bad) != 0)
		violation("posting the window's bind failed");
	while ((n = ibv_poll_cq(fz.t[Q_RC].scq, 1, &wc)) == 0)
		if (now_ms() > end)
			violation("the window's bind did not complete");
	if (n < 0 || wc.wr_id != 0xb1d || wc.status != IBV_WC_SUCCESS)
		violation("the window's bind: %s (an invalidated window "
			  "must bind again)", ibv_wc_status_str(wc.status));
	fz.mw_old_rkey = fz.mw_rkey;
	fz.mw_rkey = rkey;
	fz.mw_invalidated = false;
}

/* Bind the type 1 window (through the RC QP: any QP of the PD would do). */
static void
mw1_bind(void)
{
	struct ibv_mw_bind bind = {
		.wr_id = 0xb1e, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { fz.mr[R_MR1], region_va(R_MR1) + MW1_OFF,
			       MW1_LEN, MW1_ACCESS },
	};
	struct ibv_wc wc;
	uint64_t end = now_ms() + RX_TIMEOUT_MS;
	int n;

	SETUP(ibv_bind_mw(fz.t[Q_RC].qp, fz.mw1, &bind) == 0, "ibv_bind_mw");
	while ((n = ibv_poll_cq(fz.t[Q_RC].scq, 1, &wc)) == 0)
		SETUP(now_ms() < end, "the type 1 window's bind completing");
	SETUP(n == 1 && wc.wr_id == 0xb1e && wc.status == IBV_WC_SUCCESS,
	      "the type 1 window's bind");
}

static void
restore(void)
{
	unsigned int r;
	enum qp_id q;

	for (q = 0; q < Q_NUM; q++)
		if (q == Q_SRQ ? srq_qp_renew() != 0 : qp_reset(q) != 0)
			violation("%s QP: RESET -> RTS failed",
				  qp_spec[q].name);
	/* no QP takes a frame now: the memory is the harness's */
	for (r = 0; r < R_NUM; r++)
		memcpy(region(r), fz.pristine + fz.off[r], region_spec[r].len);
	memset(fz.may_change, 0, fz.arena_len);
	memset(fz.msn, 0, sizeof(fz.msn));
	for (q = 0; q < Q_NUM; q++) {
		fz.t[q].psn_next = qp_spec[q].rq_psn;
		if (post_recvs(q) != 0)
			violation("%s QP: posting receives failed",
				  qp_spec[q].name);
	}
	if (fz.mw_invalidated)
		mw_bind();
}

/* ------------------------------------------------------------------------
 * Setting up.
 */

static void
arena_setup(void)
{
	size_t off = GUARD_LEN;
	unsigned int r;

	for (r = 0; r < R_NUM; r++) {
		fz.off[r] = off;
		off += region_spec[r].len + GUARD_LEN;
	}
	fz.arena_len = off;
	fz.arena = mmap(NULL, off, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	SETUP(fz.arena != MAP_FAILED, "mmap");
	fz.pristine = malloc(off);
	fz.may_change = calloc(1, off);
	fz.recv_slots = calloc(1, off);
	SETUP(fz.pristine != NULL && fz.may_change != NULL &&
	      fz.recv_slots != NULL, "malloc");
	payload_fill(fz.pristine, (uint32_t)off, 0xa5);
	memcpy(fz.arena, fz.pristine, off);
	for (r = 0; r <= R_NUM; r++)
		GUARD_POISON(fz.arena + (r < R_NUM ? fz.off[r] - GUARD_LEN :
					 fz.off[R_NUM - 1] +
					 region_spec[R_NUM - 1].len),
			     GUARD_LEN);
}

static void
regions_setup(void)
{
	unsigned int r;

	for (r = 0; r < R_NUM; r++) {
		const struct region_spec *rs = &region_spec[r];

		fz.mr[r] = ibv_reg_mr(fz.pd[rs->pd], region(r), rs->len,
				      rs->access);
		SETUP(fz.mr[r] != NULL, "ibv_reg_mr");
	}
	fz.mw1 = ibv_alloc_mw(fz.pd[PD_A], IBV_MW_TYPE_1);
	SETUP(fz.mw1 != NULL, "ibv_alloc_mw (type 1)");
	fz.mw = ibv_alloc_mw(fz.pd[PD_A], IBV_MW_TYPE_2);
	SETUP(fz.mw != NULL, "ibv_alloc_mw");
	fz.mw_rkey = fz.mw->rkey;
}

/* Carve the receive buffers of QP @p q out of its receive region. */
static void
wqes_setup(enum qp_id q, size_t *next)
{
	const struct qp_spec *s = &qp_spec[q];
	struct target_qp *t = &fz.t[q];
	unsigned int i, j;

	for (i = 0; i < s->nwqe; i++) {
		t->wqe[i].cap = 0;
		for (j = 0; j < s->wqes[i].nsge; j++) {
			uint32_t len = s->wqes[i].sge[j];
			size_t at = fz.off[s->recv] + next[s->recv];

			next[s->recv] += len + SGE_GAP;
			SETUP(next[s->recv] <= region_spec[s->recv].len,
			      "receive buffers fit their region");
			t->sge[i][j] = (struct ibv_sge) {
				(uintptr_t)(fz.arena + at), len,
				fz.mr[s->recv]->lkey };
			memset(fz.recv_slots + at, 1, len);
			t->wqe[i].cap += len;
		}
	}
}

static void
qps_setup(void)
{
	size_t next[R_NUM] = { 0 };
	enum qp_id q;

	for (q = 0; q < Q_NUM; q++) {
		const struct qp_spec *s = &qp_spec[q];
		struct target_qp *t = &fz.t[q];

		t->rcq = ibv_create_cq(fz.ctx[1], 256, NULL, NULL, 0);
		t->scq = q == Q_RC ? ibv_create_cq(fz.ctx[1], 256, NULL, NULL,
						   0) : t->rcq;
		SETUP(t->rcq != NULL && t->scq != NULL, "ibv_create_cq");
		SETUP(qp_create(q) == 0, "creating a QP and bringing it to RTS");
		wqes_setup(q, next);
		t->psn_next = s->rq_psn;
		SETUP(post_recvs(q) == 0, "ibv_post_recv");
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
	fz.tx_mr = ibv_reg_mr(fz.pd0, fz.tx, (size_t)TX_SLOTS * SLOT, LW);
	fz.rx_mr = ibv_reg_mr(fz.pd0, fz.rx, (size_t)RX_SLOTS * SLOT, LW);
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

/* Until droce1 knows droce0's MAC its RC and UC QPs take no frame. */
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
	struct ibv_device **list;
	unsigned int i;
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
	for (i = 0; i < 2; i++) {
		SETUP(ibv_query_gid(fz.ctx[0], 1, (int)i, &fz.gid0[i]) == 0 &&
		      ibv_query_gid(fz.ctx[1], 1, (int)i, &fz.gid1[i]) == 0,
		      "ibv_query_gid");
	}
	/* to look at a reproducer's frames: FUZZ_RESPONDER_PCAP=prefix */
	if (getenv("FUZZ_RESPONDER_PCAP") != NULL) {
		char path[512];

		for (i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "%s-droce%u.pcap",
				 getenv("FUZZ_RESPONDER_PCAP"), i);
			SETUP(droce_mirror_start(fz.ctx[i], path) == 0,
			      "droce_mirror_start");
		}
	}
	droce_query_mac(fz.ctx[0], fz.mac0);
	droce_query_mac(fz.ctx[1], fz.mac1);
	for (i = 0; i < PD_NUM; i++) {
		fz.pd[i] = ibv_alloc_pd(fz.ctx[1]);
		SETUP(fz.pd[i] != NULL, "ibv_alloc_pd");
	}
	arena_setup();
	regions_setup();
	raw_setup();
	qps_setup();
	mw_bind();
	mw1_bind();
	wait_neighbour();
	check_responses();      /* ARP: nothing to see */
	counters(fz.dev);
	for (i = 0; i < Q_NUM; i++)
		droce_query_qp_counters(fz.t[i].qp, &fz.qpc[i]);
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
	unsigned int i;

	fz.inputs++;
	fz.nrecs = (unsigned int)RTE_MIN(size / REC_LEN, (size_t)MAX_RECS);
	if (fz.nrecs == 0)
		return 0;
	for (i = 0; i < fz.nrecs; i++) {
		struct rec *r = &fz.recs[i];
		uint32_t qpn;
		enum qp_id q;
		uint8_t opcode;

		rec_decode(data + (size_t)i * REC_LEN, r);
		q = rec_qp(r, &qpn);
		opcode = rec_opcode(r, q);
		lens[i] = frame_build(fz.tx + (size_t)i * SLOT, r, q, qpn,
				      rec_psn(r, q, opcode));
		rec_grants(r, q, opcode);
	}
	counters(base);
	send_frames(lens, fz.nrecs);
	wait_quiet(base, fz.nrecs);
	check_memory();
	check_responses();
	check_completions();
	check_counters();
	restore();
	return 0;
}
