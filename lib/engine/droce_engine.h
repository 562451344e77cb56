/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_ENGINE_H
#define DROCE_ENGINE_H

/**
 * @file
 * The droce engine: RoCE devices on DPDK ports, run by poll-mode lcores.
 *
 * This header is what the verbs layer (lib/verbs) sees of the engine:
 *
 *  - start-up from a configuration (droce_engine_start()) and the list of
 *    devices it made;
 *  - the work queues and completion queues an application thread shares
 *    with the engine lcore that owns a QP: the only shared structures on
 *    the fast path. Posting builds WQEs in place in a work queue and
 *    publishes them with one store; the engine writes completions into a
 *    CQ ring the application polls;
 *  - synchronous control calls (droce_dev_call()) that run a function on
 *    the engine lcore owning a device, so that every piece of transport
 *    state is touched by that lcore alone.
 */

#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_atomic.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_mbuf_core.h>
#include <rte_spinlock.h>

#include "droce_counters.h"

#ifdef __cplusplus
extern "C" {
#endif

struct droce_dev;
struct droce_qp_eng;

/* ------------------------------------------------------------------------
 * Start-up and devices.
 */

/**
 * Start the engine once per process: read the configuration named by the
 * environment variable DROCE_CONFIG (or the embedded default: droce0 and
 * droce1 back to back over a net_ring pair), initialise DPDK's EAL in a
 * thread of its own, bring up the ports and launch the engine lcores.
 * Later calls return the first call's result at once. The ports close
 * when the process exits (a memif server's socket file goes with its
 * port); a memif server's socket file left by a process that is gone is
 * replaced, one another process serves is not.
 *
 * @return 0, or a negative errno, the cause where droce knows it: e.g.
 *   -EADDRINUSE, a memif server's socket served by another process;
 *   -ECONNREFUSED, a memif client's socket served by none (the reason
 *   is logged and droce_engine_start_error() says it).
 */
int droce_engine_start(void);

/**
 * Why droce_engine_start() failed, in words that name the device, its
 * port and the cause, e.g. "droce0: port net_memif0 cannot start: memif
 * socket /run/x.sock is served by another live process (pid 4242)".
 *
 * @return that text, or "" if the engine started, was not asked to, or
 *   failed on its configuration file (which the log names).
 */
const char *droce_engine_start_error(void);

/** @return how many devices the engine runs (0 before start). */
unsigned int droce_dev_count(void);

/** @return device @p idx, or NULL. */
struct droce_dev *droce_dev_get(unsigned int idx);

/** What the verbs layer reports about a device. */
struct droce_dev_attr {
	char name[64];
	struct rte_ether_addr mac;
	uint64_t guid;            /**< EUI-64 from the MAC, network order */
	uint16_t eth_mtu;         /**< Ethernet MTU of the port */
	enum ibv_mtu active_mtu;  /**< largest IB MTU the port carries */
	bool link_up;
	uint32_t link_speed_mbps;
	uint8_t gid_count;        /**< valid entries of gid[] */
	union ibv_gid gid[4];
	uint16_t port_id;         /**< DPDK port */
	unsigned int lcore;       /**< engine lcore owning the device */
};

/** Fill @p attr for @p dev. */
void droce_dev_query(struct droce_dev *dev, struct droce_dev_attr *attr);

/**
 * Run @p fn(dev, arg) on the engine lcore that owns @p dev and wait for
 * it. Control operations (create, modify, destroy) go through here so
 * that transport state has a single writer.
 *
 * @return what @p fn returned.
 */
int droce_dev_call(struct droce_dev *dev,
		   int (*fn)(struct droce_dev *dev, void *arg), void *arg);

/**
 * Run a pass of the engine lcore of @p dev in this thread, if the
 * configuration's run_to_completion wants it of this thread (auto: the
 * thread is on the lcore's CPU, where the lcore cannot run while it
 * polls) and no other thread is running one. Called as an application
 * posts sends, finds a CQ empty or waits for a control call.
 */
void droce_dev_drive(struct droce_dev *dev);

/**
 * Say that the pass this thread runs woke a thread waiting on an event
 * fd (a completion channel, the async events): an engine lcore then
 * leaves its CPU to that thread instead of polling on.
 */
void droce_engine_woke(void);

/**
 * Call @p fn on a device's engine lcore whenever its port's link goes up
 * (IBV_EVENT_PORT_ACTIVE) or down (IBV_EVENT_PORT_ERR). The link is looked
 * at every DROCE_LINK_CHECK_MS.
 */
void droce_port_event_hook(void (*fn)(struct droce_dev *dev,
				      enum ibv_event_type type));

#define DROCE_LINK_CHECK_MS 100

/** Current time of the engine's clock, in TSC cycles. */
uint64_t droce_clock(void);

/** TSC cycles per second. */
uint64_t droce_clock_hz(void);

/* ------------------------------------------------------------------------
 * Work queues: the application produces, the engine consumes.
 *
 * A droce work queue keeps each WQE in its slot from the post until the
 * application polls the completion that retires it: the engine reads the
 * WQE in place when it sends, and again when it resends, and a slot is
 * free again only then (`retired`, moved by the poller), which is how a
 * post beyond max_send_wr fails with ENOMEM as on hardware. An rte_ring
 * frees a slot when its element is dequeued, so the engine would have
 * to copy each WQE out (doc/guides/architecture.rst has the measurement).
 *
 * Posting is in the manner of rte_ring's RTS mode: a poster claims slots
 * by moving `head` (compare-and-swap, so several threads may post),
 * fills them in place, then counts its claim finished in `tail`; the
 * poster that finishes the last claim outstanding moves the published
 * position up to the head. A poster preempted between its claim and its
 * finish holds back only what the engine sees (the WQEs posted after it
 * wait for it, as their order requires), never another poster or the
 * engine: nobody waits for anybody.
 */

/** Bits of a QPN that say its place in its device's table. */
#define DROCE_QPN_SLOT_BITS 15
/** QPs a device holds besides QP1, the GSI. */
#define DROCE_MAX_QP (1u << DROCE_QPN_SLOT_BITS)

/**
 * Outstanding READ/atomic requests a QP can have, each way (as many as
 * Linux soft-RoCE, so perftest's exchange of them works both ways).
 */
#define DROCE_MAX_RD_ATOMIC 128

/** A position in a work queue and a count of claims, changed together. */
union droce_wq_pos {
	uint64_t raw;
	struct {
		uint32_t pos;       /**< slot index */
		uint32_t cnt;       /**< claims made (head), finished (tail) */
	};
};

/** A work queue shared by an application and an engine lcore. */
struct droce_wq {
	/* each on its own line: posters claim without touching the line
	 * the engine polls */
	alignas(RTE_CACHE_LINE_SIZE) union droce_wq_pos head; /**< claimed */
	/** published up to prod_tail (what the engine reads), and claims
	 * finished */
	alignas(RTE_CACHE_LINE_SIZE) union {
		union droce_wq_pos tail;
		uint32_t prod_tail;
	};
	alignas(RTE_CACHE_LINE_SIZE) uint32_t retired; /**< freed by polls */
	alignas(RTE_CACHE_LINE_SIZE) uint8_t *slots;
	uint32_t mask;              /**< slot count - 1 (a power of two) */
	uint32_t stride;            /**< bytes per slot */
	uint32_t max_wr;            /**< what the application may post */
	uint32_t max_sge;
	uint32_t max_inline;
};

/** @return slot @p idx of @p wq. */
static inline void *
droce_wq_slot(const struct droce_wq *wq, uint32_t idx)
{
	return wq->slots + (size_t)(idx & wq->mask) * wq->stride;
}

/**
 * Claim up to @p n slots for posting; droce_wq_publish() must follow,
 * whether they were filled or not.
 * @return how many were claimed (0 if the queue is full: then nothing is
 * to publish); *head receives the index of the first one.
 */
static inline uint32_t
droce_wq_claim(struct droce_wq *wq, uint32_t n, uint32_t *head)
{
	union droce_wq_pos h, next;

	h.raw = __atomic_load_n(&wq->head.raw, __ATOMIC_RELAXED);
	for (;;) {
		uint32_t used = h.pos - __atomic_load_n(&wq->retired,
							__ATOMIC_ACQUIRE);
		uint32_t avail = wq->max_wr > used ? wq->max_wr - used : 0;
		uint32_t take = RTE_MIN(n, avail);

		if (take == 0)
			return 0;
		next.pos = h.pos + take;
		next.cnt = h.cnt + 1;
		if (__atomic_compare_exchange_n(&wq->head.raw, &h.raw,
						next.raw, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			*head = h.pos;
			return take;
		}
	}
}

/**
 * Count a claim filled. If no other claim is outstanding, publish
 * everything claimed so far; else the last of them to finish will. Never
 * waits for another poster.
 */
static inline void
droce_wq_publish(struct droce_wq *wq)
{
	union droce_wq_pos t, h, next;

	/* (acquire: a finish seen here makes its claim seen in head) */
	t.raw = __atomic_load_n(&wq->tail.raw, __ATOMIC_ACQUIRE);
	do {
		/* every claim up to h.pos is finished once the count of
		 * finished claims reaches h's count of claims made; a claim
		 * made after h is published by its own finish */
		h.raw = __atomic_load_n(&wq->head.raw, __ATOMIC_RELAXED);
		next.cnt = t.cnt + 1;
		next.pos = next.cnt == h.cnt ? h.pos : t.pos;
	} while (!__atomic_compare_exchange_n(&wq->tail.raw, &t.raw, next.raw,
					      false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
}

/**
 * Free the slots of @p wq before @p next for posting again. retired
 * only moves forward: pollers retire the slots of the completions they
 * read, the engine those of the WQEs it posted itself (tag matching's
 * rendezvous), in either order.
 */
static inline void
droce_wq_retire(struct droce_wq *wq, uint32_t next)
{
	uint32_t cur = __atomic_load_n(&wq->retired, __ATOMIC_RELAXED);

	while ((int32_t)(next - cur) > 0 &&
	       !__atomic_compare_exchange_n(&wq->retired, &cur, next, false,
					    __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}

/* ------------------------------------------------------------------------
 * Work request opcodes: ibv_post_send(3)'s opcode x QP type table, and
 * what each opcode is, in one place that the verbs layer's checks, the
 * engine and the tests read (lib/engine/droce_wr.c).
 */

/** What a work request opcode is (DROCE_WR_*). */
#define DROCE_WR_SEND      (1u << 0)  /**< a SEND: the peer's receive WQE
					* takes it */
#define DROCE_WR_WRITE     (1u << 1)  /**< placed at a remote address
					* (RETH), answered by an ACK */
#define DROCE_WR_READ      (1u << 2)  /**< an RDMA READ */
#define DROCE_WR_ATOMIC    (1u << 3)  /**< compare-and-swap or fetch-and-add:
					* 8 bytes back into its one SGE */
#define DROCE_WR_COMPARE   (1u << 4)  /**< compares before it swaps */
#define DROCE_WR_LOCAL     (1u << 5)  /**< done by the requester alone:
					* nothing on the wire */
#define DROCE_WR_IMM       (1u << 6)  /**< carries immediate data */
#define DROCE_WR_INV       (1u << 7)  /**< carries a key to invalidate */
#define DROCE_WR_TSO       (1u << 8)  /**< a TCP payload cut by the MSS */
#define DROCE_WR_DATA      (1u << 9)  /**< carries the bytes of its SGEs */
#define DROCE_WR_INLINE    (1u << 10) /**< may be IBV_SEND_INLINE */
#define DROCE_WR_WORD      (1u << 11) /**< exactly 8 bytes, at an 8-byte
					* aligned remote address */
/** A READ or an atomic: it holds a responder resource (max_rd_atomic)
 * until its response comes, and a FENCE waits for it. */
#define DROCE_WR_RD_ATOMIC (DROCE_WR_READ | DROCE_WR_ATOMIC)

/** The bit of QP type @p t in droce_wr_info.qp_types. */
#define DROCE_QPT(t) (1u << (t))

/** What the byte_len of a WR's completion is. */
enum droce_wr_len {
	DROCE_WR_LEN_MSG,   /**< the message's length */
	DROCE_WR_LEN_WORD,  /**< 8: an atomic's result */
	DROCE_WR_LEN_NONE,  /**< 0: nothing moved */
};

/** The packets of a message, by position (droce_wr_info.wire). */
enum droce_wr_pos {
	DROCE_POS_ONLY,
	DROCE_POS_FIRST,
	DROCE_POS_MIDDLE,
	DROCE_POS_LAST,
};

/** A work request opcode. */
struct droce_wr_info {
	const char *name;           /**< "SEND", "RDMA_WRITE", ... */
	uint16_t flags;             /**< DROCE_WR_* */
	/** QP types ibv_post_send(3) allows it on (DROCE_QPT()); others
	 * refuse it with EINVAL */
	uint16_t qp_types;
	/** of those, the types droce cannot carry it on: EOPNOTSUPP */
	uint16_t missing;
	uint8_t wc_opcode;          /**< enum ibv_wc_opcode of its completion */
	uint8_t cqe_len;            /**< enum droce_wr_len */
	/** BTH opcodes of its packets (the transport's bits added), by
	 * enum droce_wr_pos; a one-packet request has DROCE_POS_ONLY only */
	uint8_t wire[4];
	uint64_t qpx_op;            /**< the IBV_QP_EX_WITH_* it needs */
};

/** Entries of droce_wr_table: enum ibv_wr_opcode's values. */
#define DROCE_WR_NUM 16

/** The table, by enum ibv_wr_opcode. */
extern const struct droce_wr_info droce_wr_table[DROCE_WR_NUM];

/** @return the entry of WR opcode @p opcode, or NULL if there is none. */
static inline const struct droce_wr_info *
droce_wr_info(unsigned int opcode)
{
	const struct droce_wr_info *w;

	if (opcode >= DROCE_WR_NUM)
		return NULL;
	w = &droce_wr_table[opcode];
	return w->name != NULL ? w : NULL;
}

/** @return the DROCE_WR_* flags of @p opcode (posted: it exists). */
static inline uint16_t
droce_wr_flags(uint8_t opcode)
{
	return droce_wr_table[opcode & (DROCE_WR_NUM - 1)].flags;
}

/**
 * May @p opcode be posted on a QP of @p type?
 * @return 0, EINVAL (not on this type, or no such opcode) or EOPNOTSUPP
 * (allowed, but droce cannot carry it there).
 */
static inline int
droce_wr_allowed(unsigned int opcode, enum ibv_qp_type type)
{
	const struct droce_wr_info *w = droce_wr_info(opcode);

	if (w == NULL || (unsigned int)type > 15 ||
	    !(w->qp_types & DROCE_QPT(type)))
		return EINVAL;
	return (w->missing & DROCE_QPT(type)) ? EOPNOTSUPP : 0;
}

/** Send WQE flags (DROCE_WQE_*). */
#define DROCE_WQE_SIGNALED  (1u << 0)
#define DROCE_WQE_FENCE     (1u << 1)
#define DROCE_WQE_SOLICITED (1u << 2)
#define DROCE_WQE_INLINE    (1u << 3)
#define DROCE_WQE_IP_CSUM   (1u << 4) /**< raw: fill IP and L4 checksums */
/* WQEs the engine posts itself for tag matching's rendezvous: no
 * completion of their own */
#define DROCE_WQE_TM_RNDV   (1u << 5) /**< the READ of a matched message */
#define DROCE_WQE_TM_FIN    (1u << 6) /**< the FIN that answers it */

/**
 * A send work request as posted; inline data or the SGEs follow it. The
 * application writes it and the engine only reads it: what the engine
 * learns about it lives in engine memory, so the slot's cache lines do
 * not bounce between the two cores.
 */
struct droce_send_wqe {
	uint64_t wr_id;
	uint8_t opcode;            /**< enum ibv_wr_opcode */
	uint8_t flags;             /**< DROCE_WQE_* */
	uint16_t num_sge;
	uint32_t length;           /**< total bytes of the message */
	uint32_t imm;              /**< imm_data (network order) or inv. rkey */
	union {
		uint32_t rkey;
		uint32_t remote_qpn;        /**< UD */
	};
	uint64_t remote_addr;
	union {
		uint64_t compare_add;
		uint32_t remote_qkey;       /**< UD */
		uint64_t bind_length;       /**< BIND_MW */
	};
	union {
		uint64_t swap;
		struct droce_mr_eng *mw;    /**< BIND_MW: the window */
	};
	/* struct ibv_sge sge[num_sge], or the inline bytes; BIND_MW: a
	 * struct droce_bind (remote_addr is its address, rkey the window's
	 * new rkey) */
};

/**
 * The SRQ number an XRC_SEND WQE goes to: atomics carry it in imm (they
 * have no immediate), the others in swap (only atomics use it).
 */
static inline uint32_t
droce_send_wqe_srqn(const struct droce_send_wqe *wqe)
{
	return (droce_wr_flags(wqe->opcode) & DROCE_WR_ATOMIC) ?
		wqe->imm : (uint32_t)wqe->swap;
}

/** What a BIND_MW WQE carries besides the window, address and length. */
struct droce_bind {
	struct droce_mr_eng *mr;    /**< NULL: unbind */
	uint32_t access;            /**< what the window grants */
};

/*
 * A TSO WQE (IBV_WR_TSO): imm holds the MSS (high 16 bits) and the
 * header's size (low 16), the SGEs of the payload come first and the
 * header, copied at post time, after them.
 */

/** The largest TSO payload. */
#define DROCE_MAX_TSO (256u * 1024)
/** The TSO header room a raw packet QP has by default. */
#define DROCE_TSO_HDR 128
/** Most segments a TSO WR is cut into by DPDK's GSO library (more: by
 * droce) */
#define DROCE_GSO_SEGS 256
/** A UD TSO header starts with IPoIB's: Ethernet type, two zero bytes. */
#define DROCE_IPOIB_HDR_LEN 4

/** @return the header of TSO @p wqe. */
static inline uint8_t *
droce_send_wqe_tso_hdr(struct droce_send_wqe *wqe)
{
	return (uint8_t *)((struct ibv_sge *)(wqe + 1) + wqe->num_sge);
}

/** @return the bind of a BIND_MW @p wqe. */
static inline struct droce_bind *
droce_send_wqe_bind(struct droce_send_wqe *wqe)
{
	return (struct droce_bind *)(wqe + 1);
}

/**
 * A UD WQE carries the Ethernet, IP and UDP headers of its datagram,
 * copied from its address handle as it is posted, as a hardware provider
 * copies the address vector into its WQE: a program may destroy the
 * handle as soon as the post returns (mckey does, its sends unsignalled).
 * They take the last DROCE_UD_HDR_ROOM bytes of the WQE's slot.
 */
#define DROCE_UD_HDR_ROOM 64

struct droce_ud_hdr {
	uint8_t len;
	uint8_t bytes[DROCE_UD_HDR_ROOM - 1];
};

/** @return the datagram headers of UD @p wqe, in a slot of @p stride. */
static inline struct droce_ud_hdr *
droce_send_wqe_ud_hdr(const struct droce_send_wqe *wqe, uint32_t stride)
{
	return (struct droce_ud_hdr *)(uintptr_t)
		((const uint8_t *)wqe + stride - DROCE_UD_HDR_ROOM);
}

/** @return the SGEs (or inline data) of @p wqe. */
static inline struct ibv_sge *
droce_send_wqe_sge(struct droce_send_wqe *wqe)
{
	return (struct ibv_sge *)(wqe + 1);
}

/** A receive work request as posted; the SGEs follow it. */
struct droce_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;           /**< total bytes of the buffers */
	/* struct ibv_sge sge[num_sge] */
};

/** @return the SGEs of @p wqe. */
static inline struct ibv_sge *
droce_recv_wqe_sge(struct droce_recv_wqe *wqe)
{
	return (struct ibv_sge *)(wqe + 1);
}

/* ------------------------------------------------------------------------
 * Completion queues: the engine produces, applications poll.
 */

/** CQE flags. */
#define DROCE_CQE_SEND       (1u << 0) /**< completes a send-queue WQE */
#define DROCE_CQE_SOLICITED  (1u << 1) /**< wakes solicited-only waiters */
#define DROCE_CQE_SRQ        (1u << 2) /**< its SRQ slot is free already */
/** droce_cqe.sl of a UD receive over IPv4 and over IPv6: the L3 header
 * type a RoCE NIC's completion gives (mlx5's; UCX and others read it to
 * know where the GRH area holds the source address) */
#define DROCE_WC_SL_IPV6 1
#define DROCE_WC_SL_IPV4 2
#define DROCE_CQE_TM         (1u << 3) /**< tag matching: tm_tag is set */

/** One completion. */
struct droce_cqe {
	uint64_t wr_id;
	uint64_t ts;               /**< TSC when the engine completed it (0
				     *   unless its CQ has timestamps) */
	uint32_t qp_num;
	uint32_t wqe_idx;          /**< work queue index it retires up to */
	uint32_t byte_len;
	uint32_t imm;              /**< imm_data (network order) / inv. rkey */
	union {
		struct {
			uint32_t src_qp;
			uint32_t vendor_err;
		};
		uint64_t tm_tag;   /**< DROCE_CQE_TM: the TMH's tag (imm: its
				    * app_ctx) */
	};
	uint16_t wc_flags;         /**< enum ibv_wc_flags */
	uint8_t status;            /**< enum ibv_wc_status */
	uint8_t opcode;            /**< enum ibv_wc_opcode */
	uint8_t flags;             /**< DROCE_CQE_* */
	/** a UD receive's: the RoCE network header type, as a RoCE NIC
	 * reports it in wc.sl (DROCE_WC_SL_IPV4 or _IPV6); else 0 */
	uint8_t sl;
	uint8_t resv[2];
	struct droce_wq *wq;       /**< the work queue it retires slots of */
};

/** A completion queue. */
struct droce_cq_ring {
	alignas(RTE_CACHE_LINE_SIZE) uint32_t prod;  /**< written by engine */
	/** held by the producer while several engine lcores may be */
	rte_spinlock_t lock;
	/** cons as the engine last read it: it reads the pollers' line
	 * again only when that says the ring is full */
	uint32_t cons_seen;
	alignas(RTE_CACHE_LINE_SIZE) uint32_t cons;  /**< moved by pollers */
	/** 0: not armed; 1: next completion; 2: next solicited one */
	alignas(RTE_CACHE_LINE_SIZE) uint32_t armed;
	uint32_t overrun;          /**< set by the engine if it was full */
	/** Full: drop the completion and say nothing (else the first
	 * overrun raises IBV_EVENT_CQ_ERR through event) */
	bool ignore_overrun;
	void (*event)(struct droce_cq_ring *ring, enum ibv_event_type type);
	alignas(RTE_CACHE_LINE_SIZE) struct droce_cqe *cqes;
	uint32_t mask;
	uint32_t depth;            /**< usable entries */
	/** the completions carry the TSC they were written at (asked for
	 * with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP or _WALLCLOCK); else 0:
	 * an rdtsc is not paid for what nobody reads */
	bool timestamps;
	/** Called by the engine when an armed CQ gets a completion; NULL
	 * for a CQ without a completion channel */
	void (*notify)(struct droce_cq_ring *ring);
};

#define DROCE_CQ_ARMED_ANY 1
#define DROCE_CQ_ARMED_SOLICITED 2

/**
 * The completions the QPs of @p dev still owe @p ring: signalled send
 * WQEs posted and not yet completed (a QP's send queue writes them
 * whatever happens, flushed if not done). Receives are not counted:
 * they complete only if a message comes. Counted on each engine lcore
 * of the device; a completion written meanwhile may be counted here and
 * in the ring too, never in neither.
 *
 * @return 0, *owed set.
 */
int droce_cq_owed(struct droce_dev *dev, const struct droce_cq_ring *ring,
		  uint32_t *owed);

/* ------------------------------------------------------------------------
 * Engine objects created by the verbs layer.
 */

/** A protection domain. */
struct droce_pd_eng {
	uint32_t handle;
};

/**
 * A memory region, or a memory window (mw_type set): access rights are
 * enum ibv_access_flags. A window shares the key space of regions; it has
 * an rkey only, whose low 8 bits the application chooses at each bind
 * (ibv_inc_rkey()), and grants access while bound.
 */
struct droce_mr_eng {
	uint64_t addr;             /**< start (iova == address) */
	uint64_t length;
	uint32_t lkey;             /**< a window: 0, never valid */
	uint32_t rkey;
	uint32_t access;           /**< a window: what it grants */
	const struct droce_pd_eng *pd;
	/* memory windows: written on the engine lcore only */
	uint8_t mw_type;           /**< 0: a region; IBV_MW_TYPE_1 or _2 */
	bool bound;                /**< a window: bound, its rkey valid */
	bool was_bound;            /**< a window: bound once, under rkey */
	const struct droce_qp_eng *qp; /**< a bound type 2 window: its QP */
	struct droce_mr_eng *mr;   /**< a bound window: its region */
	uint32_t windows;          /**< a region: windows bound to it */
	bool gone;                 /**< a region being deregistered: no
				    *   window binds to it */
	/** a region: the count of packets sent from its memory in place
	 * (zero copy), each holding one while a port has it, over a base
	 * of DROCE_MR_ZC_BASE the region holds itself */
	struct rte_mbuf_ext_shared_info zc;
	/** mapped for the DMA of a port that reads only mapped memory
	 * (droce_dev.dma_map): zero copy may send from it there */
	bool dma_mapped;
};

/** What a region's zero-copy count is while no packet holds it: 2, so
 * that DPDK's shortcut for a count of 1 (its owner alone, not atomic)
 * never runs while several engine lcores send from the region. */
#define DROCE_MR_ZC_BASE 2

/** How long deregistering a region waits for ports to let go of it. */
#define DROCE_MR_ZC_WAIT_MS 2000

/**
 * Register @p mr (a region, or a window: mw_type set) with @p dev: it
 * gets fresh keys (a window an rkey only), unique on the device and not
 * guessable from earlier ones.
 * @return 0 or -ENOMEM.
 */
int droce_mr_register(struct droce_dev *dev, struct droce_mr_eng *mr);

/**
 * Register region @p mr with @p dev again, under the keys it had (its
 * place, PD and access as they are now): after droce_mr_unregister(), as
 * ibv_rereg_mr() keeps a region's keys.
 * @return 0, or -EBUSY if another region took its slot meanwhile.
 */
int droce_mr_reregister(struct droce_dev *dev, struct droce_mr_eng *mr);

/**
 * Forget @p mr: its keys are refused from now on. A window bound to a
 * region lets go of it. A region's memory that packets still being sent
 * point to (zero copy) is waited for, until the ports have let go of it.
 * @return 0; -EBUSY for a region windows are bound to (it stays), or
 * whose memory a port still held after DROCE_MR_ZC_WAIT_MS (its keys are
 * gone; called again, it waits again).
 */
int droce_mr_unregister(struct droce_dev *dev, struct droce_mr_eng *mr);

/**
 * An asynchronous event of a QP or SRQ, raised on the engine lcore: the
 * verbs layer queues it for ibv_get_async_event().
 */
typedef void (*droce_event_fn)(void *arg, enum ibv_event_type type);

/**
 * A shared receive queue. The application posts into wq as into a QP's
 * receive queue; the engine lcore of the SRQ's device takes WQEs in
 * posting order for whichever attached QP needs one, copies each out and
 * frees its slot at once (wq.retired), since QPs complete their receives
 * into different CQs, polled in any order.
 */
struct droce_srq_eng {
	struct droce_wq wq;
	uint32_t cons;              /**< next WQE to take (engine only) */
	/** Armed limit (0: not armed): when fewer WQEs than this are left
	 * the engine raises IBV_EVENT_SRQ_LIMIT_REACHED and disarms it. */
	uint32_t limit;
	droce_event_fn event;
	void *event_arg;
	uint32_t srqn;              /**< its number (droce_srq_register()) */
	struct droce_tm *tm;        /**< a tag matching SRQ's list */
	/* XRC: the SRQ an XRCETH names; its receives complete to its own
	 * CQ, and memory reached through it is checked against its PD */
	uint32_t xrcd;              /**< XRC domain, 0: not an XRC SRQ */
	struct droce_cq_ring *cq;
	const struct droce_pd_eng *pd;
};

/* ------------------------------------------------------------------------
 * Tag matching (lib/engine/droce_tm.c).
 */

/** Tagged buffers of a TM SRQ, and SGEs of one. */
#define DROCE_TM_MAX_TAGS 4096
#define DROCE_TM_MAX_SGE 4
/** The most a rendezvous request may carry: one packet of the least MTU. */
#define DROCE_TM_MAX_RNDV_HDR 256
/**
 * Send queue slots a QP of a TM SRQ has besides what the application
 * asked: the engine's rendezvous READs and their FINs go there.
 */
#define DROCE_TM_RNDV_WQES 32

/** A tagged buffer. */
struct droce_tm_tag {
	uint64_t tag;
	uint64_t mask;
	uint64_t recv_wr_id;
	uint32_t seq;               /**< posting order */
	uint32_t num_sge;
	uint32_t length;            /**< bytes of its buffers */
	bool used;
	struct ibv_sge sge[DROCE_TM_MAX_SGE];
};

/**
 * The matching list of a TM SRQ and its phase: matching is on while the
 * unexpected messages the engine passed on (hw_unexp) are as many as the
 * application says it handled (sw_unexp, IBV_OPS_TM_SYNC).
 */
struct droce_tm {
	uint32_t max_tags;
	uint32_t seq;
	uint32_t hw_unexp;
	uint32_t sw_unexp;
	struct droce_tm_tag *tags;  /**< [max_tags]; handle = index + 1 */
};

/**
 * Do one list operation (IBV_WR_TAG_ADD, _DEL, _SYNC) of @p op on TM SRQ
 * @p srq of @p dev, on its engine lcore; its completion, when asked for
 * or failed, goes to the SRQ's CQ. An ADD's handle is put in
 * op->tm.handle.
 * @return 0, or -ENOMEM (no free tagged buffer) or -EINVAL (an ADD's
 * buffer is not memory of the SRQ's PD with local write): nothing was
 * done.
 */
int droce_tm_op(struct droce_dev *dev, struct droce_srq_eng *srq,
		struct ibv_ops_wr *op);

/** SRQs per device; scatter/gather entries per work request. */
#define DROCE_MAX_SRQ 4096
#define DROCE_MAX_SGE 32

/**
 * Give @p srq a number on @p dev, by which XRCETHs name it.
 * @return 0 or -ENOMEM.
 */
int droce_srq_register(struct droce_dev *dev, struct droce_srq_eng *srq);

/** Forget @p srq: its number names nothing from now on. */
void droce_srq_unregister(struct droce_dev *dev, struct droce_srq_eng *srq);

/* ------------------------------------------------------------------------
 * Address handles (UD).
 */

struct droce_ah_eng;

/**
 * Make an address handle on @p dev for @p attr (a RoCEv2 GID and an SGID
 * index of the device): the peer's MAC is resolved before this returns
 * (a multicast group's is made from its address).
 * @return the handle, or NULL with errno EINVAL, EHOSTUNREACH (no answer
 * within 3 s) or ENOMEM.
 */
struct droce_ah_eng *droce_ah_create(struct droce_dev *dev,
				     const struct ibv_ah_attr *attr);

/* ------------------------------------------------------------------------
 * Flow rules (raw packet QPs).
 */

/** What a flow rule looks at (DROCE_FLOW_*), each field under a mask. */
#define DROCE_FLOW_ETH   (1u << 0)
#define DROCE_FLOW_IPV4  (1u << 1)
#define DROCE_FLOW_IPV6  (1u << 2)
#define DROCE_FLOW_TCP   (1u << 3)
#define DROCE_FLOW_UDP   (1u << 4)

/** A field of @p len bytes and its mask. */
struct droce_flow_field {
	uint8_t val[16];
	uint8_t mask[16];
};

/**
 * A flow rule, made from ibv_flow_attr and its specs by the verbs layer:
 * a frame matches when every layer named is there and each field, under
 * its mask, equals the rule's. Values are in network order.
 */
struct droce_flow_eng {
	uint32_t layers;            /**< DROCE_FLOW_* */
	bool sniffer;               /**< every frame, besides its own way */
	struct droce_flow_field dmac, smac, ether_type;
	struct droce_flow_field src_ip, dst_ip; /**< IPv4: the first 4 bytes */
	struct droce_flow_field proto, tos, ttl; /**< IPv6: next hdr, class, hop */
	struct droce_flow_field sport, dport;
	struct droce_qp_eng *qp;
};

/** Flow rules per device. */
#define DROCE_MAX_FLOWS 64

/**
 * Steer the frames @p flow matches to its raw packet QP (flow->qp).
 * @return 0 or -ENOMEM.
 */
int droce_flow_attach(struct droce_flow_eng *flow);

/** Remove @p flow: the engine forgets it before this returns. */
void droce_flow_detach(struct droce_flow_eng *flow);

/** Multicast groups per device, and QPs per group. */
#define DROCE_MAX_MCAST 64
#define DROCE_MAX_MCAST_QP 32

/**
 * Attach UD QP @p qp to multicast group @p gid (an IPv4-mapped 224.0.0.0/4
 * or an ff00::/8 GID): datagrams to the group and QPN 0xFFFFFF reach it.
 * @return 0, EINVAL (not a group), ENOMEM (too many groups or QPs).
 * Attaching twice is no error.
 */
int droce_mcast_attach(struct droce_qp_eng *qp, const uint8_t gid[16]);

/** Detach @p qp from @p gid. @return 0 or EINVAL (not attached). */
int droce_mcast_detach(struct droce_qp_eng *qp, const uint8_t gid[16]);

/** Copy the MAC @p ah sends to into @p mac. */
void droce_ah_mac(const struct droce_ah_eng *ah, uint8_t mac[6]);

/** Copy the datagram headers of @p ah into @p h (a UD WQE's). */
void droce_ah_hdr(const struct droce_ah_eng *ah, struct droce_ud_hdr *h);

/** Free @p ah: no posted WR may name it any more. */
void droce_ah_destroy(struct droce_ah_eng *ah);

/** A Q_Key with this bit is privileged; in a UD WR: use the QP's. */
#define DROCE_QKEY_PRIVILEGED 0x80000000u

/** QP1, the GSI: a UD QP each device may have one of (CM MADs use it). */
#define DROCE_GSI_QPN 1u
/** The GSI's well-known Q_Key (privileged). */
#define DROCE_GSI_QKEY 0x80010000u

/** The longest Toeplitz key an RSS QP may have (a NIC's usual 40 bytes). */
#define DROCE_RSS_QP_KEY_LEN 40

/**
 * Receive side scaling of a raw packet QP (ibv_create_qp_ex with
 * rx_hash_conf and an indirection table): a frame its rules take goes to
 * the receive work queue of entry hash & (size - 1), the Toeplitz hash
 * under its key of the fields it names, as rte_softrss() takes them
 * (source address, destination address, source port << 16 | destination
 * port; a field not named, or a frame without it, left out).
 */
struct droce_rss_eng {
	uint64_t fields;            /**< enum ibv_rx_hash_fields */
	uint8_t key[DROCE_RSS_QP_KEY_LEN]; /**< zero padded */
	uint32_t size;              /**< entries of wqs, a power of two */
	/** each a raw packet QP with a receive queue only: a work queue */
	struct droce_qp_eng *const *wqs;
};

/** QP attributes the engine keeps (the verbs layer checks transitions). */
struct droce_qp_cfg {
	enum ibv_qp_type type;
	uint32_t qp_num;
	const struct droce_pd_eng *pd;
	struct droce_cq_ring *send_cq;
	struct droce_cq_ring *recv_cq;
	struct droce_wq *sq;
	struct droce_wq *rq;        /**< NULL with an SRQ */
	struct droce_srq_eng *srq;
	/** RAW_PACKET: what its rules take goes to these work queues (its
	 * own receive queue has none) */
	const struct droce_rss_eng *rss;
	uint32_t xrcd;              /**< XRC_RECV: its XRC domain */
	bool sq_sig_all;
	/** UD: be the device's GSI, QP number DROCE_GSI_QPN, instead of
	 * taking a QPN of the device's table */
	bool gsi;
	droce_event_fn event;       /**< the QP's asynchronous events */
	void *event_arg;
	/** bytes the caller keeps for the QP besides sq and rq (counted
	 * in the device's qp_bytes) */
	uint32_t user_bytes;
};

/**
 * Create the engine side of a QP on @p dev (state RESET).
 * @return the QP, or NULL with errno set: EOPNOTSUPP (a type droce has
 * not got), EINVAL (cfg->gsi on a QP that is not UD), EBUSY (cfg->gsi:
 * the device has its GSI already, until that QP is destroyed), ENOMEM.
 */
struct droce_qp_eng *droce_qp_create(struct droce_dev *dev,
				 const struct droce_qp_cfg *cfg);

/**
 * Apply a verbs modify (already validated against the state table) on the
 * engine lcore.
 * @return 0 or a positive errno, as ibv_modify_qp().
 */
int droce_qp_modify(struct droce_qp_eng *qp, const struct ibv_qp_attr *attr,
		    int mask);

/** Copy the QP's current attributes out (on the engine lcore). */
int droce_qp_query(struct droce_qp_eng *qp, struct ibv_qp_attr *attr);

/** QP number of @p qp. */
uint32_t droce_qp_num(const struct droce_qp_eng *qp);

/** The name of QP state @p s (RESET, INIT, ... ERR), or "?". */
const char *droce_qp_state_name(enum ibv_qp_state s);

/** The name of QP type @p t (RC, UC, UD, XRC_SEND, ...), or "?". */
const char *droce_qp_type_name(enum ibv_qp_type t);

/** Current state of @p qp. */
enum ibv_qp_state droce_qp_state(const struct droce_qp_eng *qp);

/** Destroy @p qp: the engine forgets it before this returns. */
void droce_qp_destroy(struct droce_qp_eng *qp);

/**
 * After WQEs of @p qp were published (its SQ, or its RQ): wake the QP if
 * its engine lcore set it aside as idle. Any thread; one fence and one
 * load while the QP is awake.
 */
void droce_qp_kick(struct droce_qp_eng *qp);

/**
 * Per-QP counters: a uint64_t for each entry of DROCE_QP_COUNTERS
 * (droce_counters.h), named and described there, in its order.
 */
struct droce_qp_stats {
	DROCE_QP_COUNTERS(DROCE_COUNTER_MEMBER)
};

/**
 * Per-device counters: a uint64_t for each entry of DROCE_DEV_COUNTERS
 * (droce_counters.h), named and described there, in its order.
 */
struct droce_dev_stats {
	DROCE_DEV_COUNTERS(DROCE_COUNTER_MEMBER)
};

/**
 * Send frames of @p frame_len bytes (an Ethernet type nobody uses) to
 * @p dst for @p duration_ms from the engine lcore of @p dev, as fast as the
 * port takes them: the raw rate droce's RoCE traffic is measured against.
 * The lcore's other devices keep receiving meanwhile. @p flags:
 * DROCE_DEV_RAW_ROCE for RoCEv2 packets no QP takes, their ICRCs
 * computed on send and checked on receipt.
 *
 * @return 0 with *sent frames, or -EINVAL for a frame length out of range.
 */
int droce_dev_raw(struct droce_dev *dev, const struct rte_ether_addr *dst,
		  uint32_t frame_len, uint32_t duration_ms, uint32_t flags,
		  uint64_t *sent);

/** droce_dev_raw(): RoCEv2 packets, ICRCs and all. */
#define DROCE_DEV_RAW_ROCE (1u << 0)

/**
 * A ping-pong of raw frames of @p frame_len bytes with @p dst, on the
 * engine lcore of @p dev, which polls for nothing else meanwhile: with
 * @p rtt_ns, @p count pings, each sent once the last came back, their
 * round trips in @p rtt_ns (nanoseconds); without, the echoing side,
 * until ping count - 1 is echoed. An echoing side on the same lcore (a
 * device of the same process) is served as the pings go. A ping not
 * answered in 10 ms is sent again.
 *
 * @return 0, -EINVAL for a frame length out of range, -ENETDOWN (the port
 * is stopped) or -ETIMEDOUT (nothing heard for 5 s); *done: round trips
 * made, or pings echoed.
 */
int droce_dev_raw_pingpong(struct droce_dev *dev,
			   const struct rte_ether_addr *dst,
			   uint32_t frame_len, uint32_t count,
			   uint32_t *rtt_ns, uint32_t *done);

/**
 * Start mirroring every frame @p dev sends and receives into the pcap
 * file @p path (created, or truncated). The switch is made on the engine
 * lcore of @p dev, so its data path takes no lock for it.
 *
 * @return 0, -EBUSY if @p dev is mirroring already (the file is not
 * touched), or the negative errno of creating the file.
 */
int droce_dev_mirror_start(struct droce_dev *dev, const char *path);

/**
 * Stop mirroring @p dev, whether droce_dev_mirror_start() or the [engine]
 * pcap setting started it, and close its file.
 *
 * @return 0, or -ENOENT if @p dev was not mirroring.
 */
int droce_dev_mirror_stop(struct droce_dev *dev);

/**
 * Stop the port of @p dev (rte_eth_dev_stop()) on its engine lcore,
 * between two passes of its loop, so that no burst runs on it while it
 * stops or after: DPDK forbids both. Frames waiting to be sent are
 * dropped (tx_drop); the QPs stay as they are and their timers run on,
 * so they retransmit once the port is started again, or fail with
 * IBV_WC_RETRY_EXC_ERR if it stays stopped longer than their timeout
 * and retry_cnt allow. IBV_EVENT_PORT_ERR is raised if the link was up.
 *
 * @return 0 (also if it was stopped already), or the negative errno of
 * rte_eth_dev_stop() (the port then still runs).
 */
int droce_dev_port_stop(struct droce_dev *dev);

/**
 * Start the port of @p dev again after droce_dev_port_stop(); its link
 * is looked at at once, IBV_EVENT_PORT_ACTIVE raised when it is up.
 *
 * @return 0 (also if it was running), or the negative errno of
 * rte_eth_dev_start() (the port then stays stopped).
 */
int droce_dev_port_start(struct droce_dev *dev);

/** Read the counters of @p dev. */
void droce_dev_stats(struct droce_dev *dev, struct droce_dev_stats *stats);

/**
 * What a device holds: a uint64_t for each entry of DROCE_DEV_RESOURCES
 * (droce_counters.h), named and described there, in its order.
 */
struct droce_dev_resources {
	DROCE_DEV_RESOURCES(DROCE_COUNTER_MEMBER)
};

/**
 * Count what @p dev holds, on all its engine lcores, into @p r.
 * @return 0, or what droce_dev_call() returns.
 */
int droce_dev_resources(struct droce_dev *dev, struct droce_dev_resources *r);

/** Read the counters of @p qp. */
void droce_qp_stats(struct droce_qp_eng *qp, struct droce_qp_stats *stats);

/**
 * DCQCN's state of @p qp, read as it is: its rate and target (kbit/s;
 * the port's speed before a first CNP), alpha (of 65536) and the CNPs
 * that cut the rate.
 */
void droce_qp_cc_read(const struct droce_qp_eng *qp, uint64_t *rate,
		      uint64_t *target, uint32_t *alpha, uint64_t *cuts);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_ENGINE_H */
