/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_ENGINE_PVT_H
#define DROCE_ENGINE_PVT_H

/*
 * Inside the engine: devices, lcores, QP transport state. Everything here
 * except the configuration is owned by one engine lcore.
 */

#include <stdio.h>

#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include <droce_wire.h>

#include "droce_dcqcn.h"
#include "droce_engine.h"

extern int droce_engine_logtype;
#define DROCE_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, droce_engine_logtype, \
		RTE_FMT("droce: " RTE_FMT_HEAD(__VA_ARGS__, ) "\n", \
			RTE_FMT_TAIL(__VA_ARGS__, )))

/* frames a receive burst takes: more per pass spreads its fixed costs (the
 * posters' indices read across cores) over more packets */
#define DROCE_BURST 64
#define DROCE_MAX_DEVS 16
#define DROCE_MAX_LCORES 16
/*
 * A QPN is a slot of shard->qps in its low DROCE_QPN_SLOT_BITS (15) bits
 * and a tag drawn at random for each QP above them (1..0x1fe: never
 * QP0, QP1 or the multicast QPN), so that QPNs are not predictable and a QPN that named
 * a destroyed QP names no QP made in its slot since. QP1, the GSI, has
 * no slot: it is shard->qp1, which droce_qp_by_qpn() gives for QPN 1.
 */
#define DROCE_QPN_SLOT(qpn) ((qpn) & (DROCE_MAX_QP - 1))
#define DROCE_QPN_TAGS ((1u << (24 - DROCE_QPN_SLOT_BITS)) - 2)
/** MR table slots, indexed by bits 8.. of a key; the rest are random. */
#define DROCE_MR_BITS 14
#define DROCE_MAX_MR (1u << DROCE_MR_BITS)
#define DROCE_KEY_SLOT_SHIFT 8
#define DROCE_KEY_SLOT_MASK ((DROCE_MAX_MR - 1) << DROCE_KEY_SLOT_SHIFT)
#define DROCE_MAX_NEIGH 64
/** A tick of a device's timer wheel: 2^16 TSC cycles (tens of us). */
#define DROCE_WHEEL_SHIFT 16
/** Ticks of a turn of the wheel (some 100 ms: a timer further away
 * waits on a list for more than one turn). */
#define DROCE_WHEEL_SLOTS 4096u
/** The destination QPN of a datagram to a multicast group. */
#define DROCE_MCAST_QPN 0xffffff
#define DROCE_TX_BUF 128
/** Frames to the device's own address waiting for its next pass
 * (droce_dev_loop); a power of two. */
#define DROCE_LOOP_BUF 256
/** Packets in flight per QP before the requester waits for ACKs. */
#define DROCE_MAX_INFLIGHT 1024
/**
 * Packets in flight after a loss: the window halves on a NAK and drops to
 * this on a timeout, then grows by one packet per window acknowledged.
 * Go-back-N resends the whole window, so a full one on a lossy link would
 * be lost again and again.
 */
#define DROCE_MIN_INFLIGHT 16
/** Request an ACK at least every this many packets. */
#define DROCE_ACK_EVERY 64
/** The GRH area at the head of every UD receive buffer. */
#define DROCE_GRH_LEN 40
/** Packets a QP may send per pass of the loop. */
#define DROCE_QP_BUDGET 64

/* ------------------------------------------------------------------------
 * Configuration (lib/engine/droce_config.c).
 */

struct droce_dev_cfg {
	char name[64];
	char port[256];             /**< "ring:PAIR:END", an ethdev name or PCI */
	char fault[256];            /**< net_fault arguments, or "" */
	bool has_mac;
	struct rte_ether_addr mac;
	rte_be32_t ipv4;
	uint8_t ipv4_prefix;
	bool has_ipv6;
	uint8_t ipv6[16];
	uint8_t ipv6_prefix;
	uint16_t mtu;
	/** the DSCP of its packets whose address gives none */
	uint8_t dscp;
	/** rss = off: its port's RSS not used (droce_dev.rss) */
	bool no_rss;
	/** DCQCN's parameters for its QPs; rate_max 0: the port's speed */
	struct droce_dcqcn_params cc;
	/** its engine lcores, indices into the engine cores; none: one,
	 * the devices taken round the cores in turn */
	unsigned int nlcores;
	unsigned int lcores[DROCE_MAX_LCORES];
};

/**
 * run_to_completion: which application threads run an engine lcore's
 * pass themselves, when they post a send, find a CQ empty or wait for a
 * control call (droce_dev_drive()).
 */
enum droce_rtc {
	DROCE_RTC_AUTO,   /**< a thread on the lcore's CPU (it has no core
			   *   of its own to run on while the thread polls) */
	DROCE_RTC_ALWAYS, /**< any thread */
	DROCE_RTC_NEVER,  /**< none: the lcore alone */
};

struct droce_cfg {
	char eal_args[1024];
	unsigned int ncores;
	int cores[DROCE_MAX_LCORES]; /**< CPUs for engine lcores; -1: pick */
	unsigned int idle_sleep_us;  /**< 0: busy-poll */
	unsigned int idle_yield_us;  /**< idle: yield so long, then sleep */
	/** idle, its CPU to itself: poll so long after the last work */
	unsigned int idle_spin_us;
	/** Who else runs an lcore's pass: enum droce_rtc */
	unsigned int run_to_completion;
	unsigned int link_wait_s;    /**< wait at start for links to be up */
	char pcap[512];              /**< mirror every frame here if set */
	unsigned int mbufs;
	unsigned int mbuf_cache;   /**< per-lcore cache of the pool */
	/** connected QPs' packets are ECN-capable, and one that arrives
	 * marked Congestion Experienced has its QP send a CNP */
	bool ecn;
	/** the least time between two CNPs of a QP */
	unsigned int cnp_interval_us;
	/** send RC payloads of at least this many bytes from the registered
	 * memory itself, where the port allows (droce_dev.zero_copy);
	 * 0: never */
	unsigned int zero_copy_min;
	unsigned int ndevs;
	struct droce_dev_cfg dev[DROCE_MAX_DEVS];
};

/** Fill @p cfg from DROCE_CONFIG or the embedded default. */
int droce_config_load(struct droce_cfg *cfg);

/** Parse the .ini file at @p path into @p cfg. */
int droce_config_parse_file(const char *path, struct droce_cfg *cfg);

/* ------------------------------------------------------------------------
 * Lcores and control calls (lib/engine/droce_lcore.c).
 */

struct droce_shard;
struct droce_dev;

struct droce_ctl_req {
	int (*fn)(struct droce_shard *sh, void *arg);
	struct droce_shard *sh;
	void *arg;
	int ret;
	uint32_t done;
};

#ifndef DROCE_PASS_CLOCK
/** Whether the pass clock is built in (meson's pass_clock option). */
#define DROCE_PASS_CLOCK 0
#endif

/*
 * The stages of a pass over a device, as the pass clock times them
 * (meson's pass_clock option: an rdtsc at the end of each, some 12 ns
 * here; off, nothing is read or counted).
 */
enum droce_stage {
	DROCE_STAGE_PASS,       /**< the pass's own: its lock, control
				 *   calls, from one device to the next */
	DROCE_STAGE_FETCH,      /**< QPs kicked and timed out; new WQEs */
	DROCE_STAGE_POLL,       /**< the port's receive burst */
	DROCE_STAGE_PARSE,      /**< each frame's first look, its headers */
	DROCE_STAGE_ICRC,       /**< the received frames' ICRCs checked */
	DROCE_STAGE_RECEIVE,    /**< frames to their QPs' responder or
				 *   completer, and freed */
	DROCE_STAGE_QPS,        /**< the active QPs run: ACKs, responses,
				 *   requests built */
	DROCE_STAGE_SEND,       /**< timers of the neighbours; the ICRCs of
				 *   what goes, and the transmit burst */
	DROCE_STAGES
};

/** What the pass clock of an engine lcore counted. */
struct droce_pass_clock {
	uint64_t cycles[DROCE_STAGES];    /**< TSC cycles in each stage */
	uint64_t frames_in;               /**< frames the passes received */
	uint64_t frames_out;              /**< frames they sent */
	uint64_t passes;                  /**< passes it ran */
	uint64_t last;                    /**< TSC of the last mark */
};

struct droce_lcore {
	/* read by application threads on every post and poll
	 * (droce_dev_drive()): apart from the line each pass writes, which
	 * would otherwise go back and forth between the two CPUs twice a
	 * post */
	unsigned int lcore_id;
	unsigned int idx;
	int cpu;                      /**< the CPU it is pinned to */
	struct rte_ring *ctl;         /**< droce_ctl_req pointers */
	unsigned int nshards;
	struct droce_shard *shards[DROCE_MAX_DEVS];   /**< it runs */
	/** held by whoever runs a pass: the lcore, or an application
	 * thread (droce_dev_drive()); droce_pass_trylock() */
	alignas(RTE_CACHE_LINE_SIZE) uint32_t pass_lock;
	uint32_t stop;
	uint64_t pass_since;          /**< TSC the pass running began */
	/** TSC an application thread on its CPU last asked for a pass */
	uint64_t app_at;
	uint64_t idle_loops;
	bool app_pass;                /**< the pass running is an
				       *   application thread's */
	uint32_t pass_no;             /**< passes run, whoever ran them */
	uint32_t requests;            /**< requests received from peers */
	/** the cache of the engine's mbuf pool (every device's) that the
	 * thread running the pass has, looked up once a pass: DPDK finds it
	 * by its thread-local lcore id, which a shared library reaches
	 * through a call each time. NULL outside a pass, and for a thread
	 * without an lcore id. */
	struct rte_mempool_cache *mcache;
	struct droce_pass_clock clock;   /**< with pass_clock only */
};

/** A request of a peer's came (in a pass: its lock held; the lcore's
 * idle policy reads the count outside its passes). */
static inline void
droce_lcore_request_in(struct droce_lcore *lc)
{
	__atomic_store_n(&lc->requests, lc->requests + 1, __ATOMIC_RELAXED);
}

/** The pass clock's time now (0 without it). */
static inline uint64_t
droce_clock_now(void)
{
	return DROCE_PASS_CLOCK ? rte_rdtsc() : 0;
}

/** The time from *@p t to now goes to @p stage of @p lc; *@p t = now. */
static inline void
droce_clock_mark(struct droce_lcore *lc, uint64_t *t, enum droce_stage stage)
{
	uint64_t now;

	if (!DROCE_PASS_CLOCK)
		return;
	now = rte_rdtsc();
	lc->clock.cycles[stage] += now - *t;
	lc->clock.last = now;
	*t = now;
}

int droce_lcore_main(void *arg);

/**
 * Run @p fn on DPDK's interrupt thread, where net_memif tears a
 * connection down when its peer closes it, and wait up to @p wait_ms for
 * *@p done, which @p fn (or what it leaves for that thread) sets once it
 * is through. If the thread does not come (or @p fn cannot be handed to
 * it), @p fn is cancelled and a warning headed @p what logged.
 * @return whether *@p done was set.
 */
bool droce_intr_run_wait(void (*fn)(void *), const uint32_t *done,
			 unsigned int wait_ms, const char *what);

/** Log what the pass clock of @p lc counted, if anything (pass_clock). */
void droce_lcore_clock_report(const struct droce_lcore *lc);

/*
 * The pass lock. DPDK's spinlock releases with an exchange on x86, a
 * full barrier that waits for every store of the pass to drain (some 4%
 * of a busy engine lcore's time, in 64-byte write_bw); a release store
 * is all unlocking needs. Taking it looks first, so that a thread that
 * finds it held does not pull the line away from the one holding it.
 */
static inline bool
droce_pass_trylock(uint32_t *l)
{
	return __atomic_load_n(l, __ATOMIC_RELAXED) == 0 &&
		__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE) == 0;
}

static inline void
droce_pass_unlock(uint32_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static inline void
droce_pass_lock(uint32_t *l)
{
	while (!droce_pass_trylock(l))
		rte_pause();
}

/**
 * Run @p fn(@p sh, @p arg) on the engine lcore of shard @p sh, as
 * droce_dev_call() does on a device's primary shard.
 * @return what @p fn returned.
 */
int droce_shard_call(struct droce_shard *sh,
		     int (*fn)(struct droce_shard *sh, void *arg), void *arg);

/**
 * The link of @p dev is now @p up (as last seen: dev->link_up): if that
 * is a change, tell the verbs layer (IBV_EVENT_PORT_ACTIVE or
 * IBV_EVENT_PORT_ERR). On the device's primary engine lcore.
 */
void droce_dev_link_event(struct droce_dev *dev, bool up);

/* ------------------------------------------------------------------------
 * Devices.
 */

enum droce_neigh_state {
	DROCE_NEIGH_FREE,
	DROCE_NEIGH_PENDING,
	DROCE_NEIGH_VALID,
};

struct droce_neigh {
	uint8_t gid[16];
	struct rte_ether_addr mac;
	uint8_t state;
	uint8_t tries;
	uint64_t next_try;
};

struct droce_pcap_mirror;
struct droce_qp_eng;

/** A multicast group some UD QPs of a device are attached to. */
struct droce_mcast {
	uint8_t gid[16];
	uint32_t nqps;              /**< 0: the entry is free */
	struct droce_qp_eng *qps[DROCE_MAX_MCAST_QP];
};

/*
 * A device is a struct droce_dev: its port, addresses and GIDs, and what
 * every lcore that runs it shares (the neighbour table, SRQs, flow rules,
 * multicast groups, congestion settings, the link's state). It runs on one
 * shard per engine lcore, each a struct droce_shard pointing at it: its
 * QPs and their tables, its queues of the port, its frames to send, its
 * counters. A QPN's slot says its shard (droce_dev_owner()). The first
 * shard, the primary, runs what is the device's alone: ARP and neighbour
 * discovery, and the QPs that are not RC or UC without an SRQ (QP1, UD,
 * raw packet, XRC), with the frames that are not RoCE. Memory regions are
 * in every shard's table. A frame a shard receives for another goes to
 * that one's hand-off ring.
 */
struct droce_dev {
	char name[64];
	uint16_t port_id;
	/* every shard, in order: shards[0] the primary */
	uint32_t nshards;
	struct droce_shard *shards[DROCE_MAX_LCORES];
	uint32_t next_shard;          /**< the next QP's (round robin) */
	/** the port spreads frames over the shards' queues by RSS under
	 * droce_rss_key (entry i of its redirection table, of
	 * rss_reta_size, the queue of shard i % nshards), and connected
	 * QPs choose their UDP source ports to land on their peer's shard
	 * (droce_rss_sport()) */
	bool rss;
	uint16_t rss_reta_size;
	struct rte_mempool *pool;
	struct rte_ether_addr mac;
	rte_be32_t ipv4;
	uint8_t ipv4_prefix;
	bool has_ipv6;
	uint8_t ipv6[16];
	uint8_t ipv6_ll[16];          /**< link-local, from the MAC */
	uint16_t eth_mtu;
	enum ibv_mtu active_mtu;
	uint8_t gid_count;
	union ibv_gid gid[4];
	/** What the port does for us: RTE_ETH_TX_OFFLOAD_IPV4_CKSUM,
	 * _UDP_CKSUM, _TCP_CKSUM, _TCP_TSO where it has them, and
	 * _MULTI_SEGS (it takes chained mbufs) */
	uint64_t tx_offloads;
	/** DCQCN's parameters for the device's QPs; cc_rate_max as
	 * configured, 0: the port's speed */
	struct droce_dcqcn_params cc;
	uint64_t cc_rate_max;
	/** the DSCP of packets whose traffic class gives none */
	uint8_t dscp;
	/** The port can send RC payloads from the registered memory itself
	 * (droce_pkt_alloc_zc(), those of [engine] zero_copy_min bytes and
	 * more): it reads at virtual addresses, or at IO addresses that
	 * are the virtual ones (IOVA as VA), and takes chains
	 * (MULTI_SEGS). */
	bool zero_copy;
	/** the port reads only memory mapped for its DMA (a PCI NIC, or
	 * net_fault with dma=1), not any memory at its virtual address as
	 * a virtual device does: zero copy sends from a region only once
	 * it is mapped for it (droce_dma_map(), droce_mr_eng.dma_mapped) */
	bool dma_map;
	struct rte_device *dma_dev;   /**< the port's device, to map for */
	/** A path to one of the device's own GIDs was resolved or a QP
	 * joined a group: a shard's flush looks for frames to loop back
	 * (until then none does); port_loops that the port turns frames to
	 * the device's MAC back itself (net_fault, through its faults), and
	 * is left to. */
	bool loopback;
	bool port_loops;

	/* written while the device runs: apart from the above, which its
	 * shards read on every packet */
	/** held by a shard at the neighbour table */
	rte_spinlock_t neigh_lock __rte_cache_aligned;
	/** held by a shard that binds, invalidates or reads a memory
	 * window (shards share them), or removes a region */
	rte_spinlock_t mw_lock;
	uint32_t neigh_pending;       /**< entries being resolved */
	uint32_t neigh_evict;         /**< the valid entry a full table gives
				       *   up next for droce's own lookups */
	struct droce_neigh neigh[DROCE_MAX_NEIGH];
	struct droce_srq_eng *srqs[DROCE_MAX_SRQ];  /**< by number - 1 */
	uint64_t key_rand;
	uint32_t nflows;              /**< flow rules (rx looks if > 0) */
	struct droce_flow_eng *flows[DROCE_MAX_FLOWS];
	uint32_t nmcast;              /**< groups in use (rx looks if > 0) */
	struct droce_mcast mcast[DROCE_MAX_MCAST];
	uint64_t link_check_at;       /**< next look at the link */
	bool link_up;                 /**< as last seen */
	/** the port is net_memif's, whose peer tells it when it leaves
	 * (lib/engine/droce_memif_leave.c) */
	bool memif;
	bool memif_server;            /**< its memif role */
	/** enum droce_memif_peer: what its memif peer said and did */
	uint8_t memif_peer;
};

/* A memif port's peer (struct droce_dev's memif_peer). */
enum droce_memif_peer {
	DROCE_MEMIF_PEER_HERE,        /**< polled as any port */
	DROCE_MEMIF_PEER_LEAVING,     /**< said it leaves: bursts stopping */
	DROCE_MEMIF_PEER_LEFT,        /**< told the bursts stopped */
	DROCE_MEMIF_PEER_GONE,        /**< the link seen down since */
	DROCE_MEMIF_PEER_COMING,      /**< and up again: bursts starting */
};

/* A device's shard: what one engine lcore runs of it. */
struct droce_shard {
	struct droce_dev *dev;
	struct droce_lcore *lc;
	uint32_t index;               /**< its index among the shards */
	uint16_t port_id;             /**< dev->port_id */
	uint16_t txq;                 /**< the port's queue it sends on */
	uint16_t nrxq;                /**< the port's queues it polls */
	uint16_t rxq[DROCE_MAX_LCORES];
	/** frames for it that another shard received (multi-producer);
	 * NULL with a single shard */
	struct rte_ring *handoff;
	/** by DROCE_QPN_SLOT(QPN) */
	struct droce_qp_eng *qps[DROCE_MAX_QP];
	uint32_t next_slot;           /**< where the search for a free one
				       *   starts (the how-manyth of the
				       *   shard's): slots are reused last */
	/** QP1, the GSI (a UD QP made with IBV_QP_CREATE_SOURCE_QPN), or
	 * NULL: the primary's, outside qps, in live as every QP */
	struct droce_qp_eng *qp1;
	uint32_t nlive;
	/** dense: the table's QPs and QP1 */
	struct droce_qp_eng *live[DROCE_MAX_QP + 1];
	/** the QPs a pass runs: those with work, or that may have some
	 * (a QP found idle leaves it, and comes back with a frame for it,
	 * a change of its state, or a WQE posted: droce_qp_kick()) */
	uint32_t nactive;
	struct droce_qp_eng *active[DROCE_MAX_QP + 1];
	uint32_t pass_next;           /**< where the next pass starts in it */
	/** QPs their posters woke (multi-producer, the lcore consumes) */
	struct rte_ring *kick;
	/** a kick found the ring full: every QP is run once */
	bool kick_lost;
	/** sleeping QPs with a timer: a hashed wheel, a list per tick of
	 * 2^DROCE_WHEEL_SHIFT TSC cycles (droce_qp_timers()) */
	struct droce_qp_eng *wheel[DROCE_WHEEL_SLOTS];
	uint64_t wheel_tick;          /**< the first tick not looked at */
	uint32_t nwheel;              /**< QPs on it */
	struct droce_mr_eng *mrs[DROCE_MAX_MR];
	/* frames to send: [0, nready) finished (ICRC in, mirrored),
	 * [nready, ntx) queued, roce[] saying which need an ICRC */
	uint16_t ntx;
	uint16_t nready;
	struct rte_mbuf *tx[DROCE_TX_BUF];
	bool tx_roce[DROCE_TX_BUF];
	/** Loopback, as a NIC's: frames the shard sent to the device's own
	 * MAC, which its next pass receives (droce_shard_loop_rx()) without
	 * the port; [loop_head, loop_tail) modulo DROCE_LOOP_BUF */
	uint32_t loop_head;
	uint32_t loop_tail;
	struct rte_mbuf *loop[DROCE_LOOP_BUF];
	struct droce_dev_stats stats;
	/** the device's mirror, as this shard last took it */
	struct droce_pcap_mirror *mirror;
	/** Stopped by droce_dev_port_stop(): neither polled nor sent to
	 * (DPDK forbids bursts on a stopped port) until started again */
	bool port_stopped;
};

/**
 * On @p sh's lcore (through droce_shard_call()): no more bursts on its
 * port if @p arg is not NULL (what it had queued to send goes), or bursts
 * again; for a shard but the primary while the port is stopped, and for
 * every shard while a memif peer is gone (lib/engine/droce_memif_leave.c).
 * @return 0.
 */
int droce_shard_bursts(struct droce_shard *sh, void *arg);

/**
 * droce_shard_call() of @p first on the primary shard of @p dev, then, while
 * each returns 0, of @p rest on each other shard, in order, with @p arg.
 * @return the first that did not return 0, or 0.
 */
int droce_dev_call_shards(struct droce_dev *dev,
			  int (*first)(struct droce_shard *sh, void *arg),
			  int (*rest)(struct droce_shard *sh, void *arg),
			  void *arg);

/**
 * On the primary shard @p sh of a device: count what it holds into the
 * struct droce_dev_resources @p r (the QPs, its own; the rest, the
 * device's). Run on its engine lcore, where alone its tables change.
 * @return 0.
 */
int droce_shard_count_primary(struct droce_shard *sh, void *r);

/**
 * On shard @p sh of a device but the primary: add its QPs and queued
 * frames to @p r (a struct droce_dev_resources the primary's
 * droce_shard_count_primary() filled).
 */
int droce_shard_count(struct droce_shard *sh, void *r);

/** The engine's global state. */
struct droce_engine {
	struct droce_cfg cfg;
	unsigned int ndevs;
	struct droce_dev *devs[DROCE_MAX_DEVS];
	unsigned int nlcores;
	struct droce_lcore lcores[DROCE_MAX_LCORES];
	/** some device has several engine lcores: completions are pushed
	 * under the CQ's lock (its QPs may be on several) */
	bool cq_shared;
	uint64_t hz;
	/** TSC cycles a microsecond: DCQCN's clock runs in microseconds */
	uint64_t us_cycles;
	/** Told of port state changes (droce_port_event_hook()) */
	void (*port_event)(struct droce_dev *dev, enum ibv_event_type type);
};

extern struct droce_engine droce_eng;

/** The group @p gid of @p dev, if some QP is attached to it. */
struct droce_mcast *droce_mcast_find(struct droce_dev *dev,
				     const uint8_t gid[16]);

/** Detach @p qp from every group of its device (it is going). */
void droce_mcast_forget(struct droce_qp_eng *qp);

/**
 * Offer a received frame to the flow rules of @p dev: each raw packet QP
 * with a rule matching it gets a copy.
 * @return true if a normal (not sniffer) rule took it.
 */
bool droce_flow_rx(struct droce_dev *dev, const struct rte_mbuf *m);

/**
 * Send the frame of raw packet WQE @p wqe of @p qp (of a TSO WQE, the
 * segments from byte qp->req.offset of its payload on).
 * @return false if out of mbufs (try again: qp->req.offset says where).
 */
bool droce_raw_qp_send(struct droce_qp_eng *qp, struct droce_send_wqe *wqe);

/**
 * Make @p hdr (a copy of a TSO header) the header of the segment at byte
 * @p off of @p len payload bytes, the @p seg'th: the IP lengths and ID,
 * the TCP sequence number, FIN and PSH on the last only; the IP and TCP
 * headers start at @p l3 in it. Checksums are filled afterwards.
 */
void droce_tso_header(uint8_t *hdr, uint32_t l3, uint32_t hdr_len,
		      uint32_t off, uint32_t len, uint32_t seg, bool last);

/**
 * Fill, in software, the IPv4 header checksum and the TCP or UDP checksum
 * of the @p len bytes at @p p: an IPoIB header (a UD QP's TSO segment or
 * IBV_SEND_IP_CSUM datagram), then IPv4 or IPv6. Anything else is left
 * as it is.
 */
void droce_ipoib_csum(uint8_t *p, uint32_t len);

/**
 * @return IBV_WC_IP_CSUM_OK if the @p len bytes at @p p (a UD datagram
 * received) are an IPoIB header, IPv4 and TCP or UDP whose checksums are
 * right, else 0.
 */
uint16_t droce_ipoib_csum_ok(const uint8_t *p, uint32_t len);


/** Payloads from this size on may have their ICRC checked as they are
 * copied to their place (lib/engine/droce_rx.c). */
#define DROCE_RX_COPY_CHECKED_MIN 2048

/** Is the ICRC of received frame @p m right (whole or in segments)? */
bool droce_rx_icrc_ok(const struct rte_mbuf *m,
		      const struct droce_wire_meta *meta);

/**
 * Check the ICRC of @p m now if it is still unchecked (counting it in
 * rx_roce, or in rx_icrc_err if wrong). @return false if it is wrong.
 */
bool droce_rx_icrc_late(struct droce_shard *sh, const struct rte_mbuf *m,
			struct droce_wire_meta *meta);

/**
 * Copy the payload of @p m to @p dst while its ICRC is checked, one
 * pass over the bytes; counted in rx_roce, or rx_icrc_err if the ICRC is
 * wrong. @return false then: the bytes at @p dst are the frame's all the
 * same (the caller's place for them must be undefined until a right
 * frame has come).
 */
bool droce_rx_copy_checked(struct droce_shard *sh, const struct rte_mbuf *m,
			   const struct droce_wire_meta *meta, void *dst);

/** Where the frames of a receive burst come from. */
enum droce_rx_from {
	DROCE_RX_PORT,		/**< the port */
	DROCE_RX_HANDED,	/**< another shard of the device, which
				 *   received (counted, mirrored) them */
	DROCE_RX_LOOP,		/**< the device itself: sent to its own
				 *   address (mirrored as they were sent) */
};

/**
 * Handle a burst of @p n received frames (lib/engine/droce_rx.c), at
 * most DROCE_BURST, from @p from.
 */
void droce_shard_rx_burst(struct droce_shard *sh, struct rte_mbuf **pkts,
			unsigned int n, uint64_t now, enum droce_rx_from from);

/**
 * Receive, through droce_shard_rx_burst(), up to DROCE_BURST of the
 * frames @p sh sent to its own address (lib/engine/droce_tx.c).
 * @return how many.
 */
unsigned int droce_shard_loop_rx(struct droce_shard *sh, uint64_t now);

/** @return the table slot of a memory key. */
static inline uint32_t
droce_key_slot(uint32_t key)
{
	return (key & DROCE_KEY_SLOT_MASK) >> DROCE_KEY_SLOT_SHIFT;
}

/**
 * @return the region or bound window of @p key (lkey or rkey per
 * @p remote), or NULL.
 */
static inline struct droce_mr_eng *
droce_mr_lookup(const struct droce_shard *sh, uint32_t key, bool remote)
{
	struct droce_mr_eng *mr = sh->mrs[droce_key_slot(key)];

	/* (a window's lkey is 0: no local key) */
	if (mr == NULL || (remote ? mr->rkey : mr->lkey) != key ||
	    (mr->mw_type != 0 && (!remote || !mr->bound)))
		return NULL;
	return mr;
}

/**
 * Bind (or, type 1, unbind) the window of BIND_MW @p wqe posted on @p qp.
 * @return IBV_WC_SUCCESS, or IBV_WC_MW_BIND_ERR (nothing changed).
 */
enum ibv_wc_status droce_mw_bind(struct droce_qp_eng *qp,
				 struct droce_send_wqe *wqe);

/**
 * Invalidate the type 2 window of @p rkey for @p qp: a LOCAL_INV, or a
 * SEND with invalidate from the peer (@p remote: the window must be bound
 * to @p qp). @return false if @p rkey names no such window.
 */
bool droce_mw_invalidate(struct droce_qp_eng *qp, uint32_t rkey, bool remote);

/* ------------------------------------------------------------------------
 * QPs: transport state (lib/engine/droce_qp.c, droce_req.c, droce_resp.c,
 * droce_comp.c).
 */

/** State of a send WQE in the engine. */
enum droce_wqe_state {
	DROCE_WQE_POSTED,      /**< nothing sent yet */
	DROCE_WQE_SENDING,     /**< some packets sent */
	DROCE_WQE_SENT,        /**< every request packet sent */
	DROCE_WQE_DONE,        /**< completed (status set) */
};

/** What the engine knows of a send WQE, beside the WQE itself. */
struct droce_swqe {
	uint32_t first_psn;
	uint32_t last_psn;
	uint32_t npkts;            /**< packets (READ: response packets) */
	uint32_t done_bytes;       /**< READ: response bytes placed */
	uint32_t asked_mark;       /**< sent_psn when asked again */
	uint8_t state;             /**< enum droce_wqe_state */
	uint8_t status;            /**< enum ibv_wc_status once DONE */
	bool asked;                /**< READ/atomic asked again */
};

/** A read or atomic request the responder has accepted. */
struct droce_rd_res {
	uint8_t busy;
	uint8_t atomic;            /**< else READ */
	uint8_t replay;            /**< sending again, for a duplicate */
	uint32_t first_psn;        /**< PSN of the request */
	uint32_t last_psn;         /**< of its last response */
	/* READ: the range asked and granted (a duplicate, under the same
	 * key, asks for a part of it), and what is being sent (the part a
	 * duplicate asked for) */
	uint64_t req_va;
	uint32_t req_len;
	uint64_t va;               /**< the part being sent, as asked */
	uint32_t length;
	uint32_t rkey;
	const struct droce_pd_eng *pd; /**< the QP's when it was asked (an
					* XRC target's changes) */
	uint32_t next_psn;         /**< next response to send */
	uint32_t sent;             /**< bytes sent */
	bool sending;
	/* atomic */
	uint64_t orig;
};

/**
 * Where packets go: an address vector made into the Ethernet, IP and UDP
 * headers every packet to it starts with. A connected QP has one; a UD
 * QP takes one from each WR's address handle.
 */
struct droce_path {
	struct ibv_ah_attr ah;
	uint8_t ip_version;
	uint8_t sgid[16];
	uint8_t dgid[16];
	bool mac_ok;
	struct rte_ether_addr dmac;
	uint16_t sport;            /**< as set; a UD packet sets its own */
	bool ect;                  /**< its packets ECN-capable: ECT(0) */
	uint8_t hdr_len;           /**< Ethernet + IP + UDP */
	uint8_t hdr[14 + 40 + 8];  /**< their template */
};

/** An address handle: a path of its device. */
struct droce_ah_eng {
	struct droce_dev *dev;
	struct droce_path path;
};

/**
 * Take the path of address vector @p ah on @p sh; resolution of the MAC
 * starts (a multicast address needs none).
 * @return 0, or EINVAL, EHOSTUNREACH.
 */
int droce_path_set(struct droce_shard *sh, struct droce_path *path,
		   const struct ibv_ah_attr *ah, uint64_t now);

/** Build the Ethernet, IP and UDP header template of @p path
 * (lib/engine/droce_path.c). */
void droce_path_build_header(const struct droce_dev *dev,
			     struct droce_path *path);

/**
 * Put the checksum of the IPv4 header at @p ip, a template's (its total
 * length 0: droce_pkt_send() adds each packet's to it), in its place.
 */
void droce_path_ipv4_cksum(uint8_t *ip);

/**
 * Make sure @p path knows its MAC and has its header template.
 * @return true when it can be sent on.
 */
bool droce_path_ready(struct droce_shard *sh, struct droce_path *path,
		      uint64_t now);

/**
 * The requester's state of a QP: what it sends next. Written by the
 * requester alone (droce_req.c, and droce_raw_qp.c for raw packet QPs);
 * the completer moves it through droce_req_rewind(), droce_req_seek(),
 * droce_req_ask_again(), droce_req_take_answered() and
 * droce_req_restart().
 */
struct droce_req_state {
	uint32_t seen;         /**< next WQE index never looked at */
	uint32_t cons;         /**< next WQE to send from */
	uint32_t psn;          /**< next PSN to send */
	uint32_t sent_psn;     /**< after the highest PSN sent */
	uint32_t started;      /**< WQEs before it got their PSNs */
	uint32_t offset;       /**< bytes of WQE cons sent */
	uint32_t noack_pkts;   /**< sent since the last that asked an ACK */
	uint32_t rd_atomic;    /**< READ/atomic WQEs in flight */
	bool halted;           /**< a WQE failed locally: */
	uint32_t halt_idx;     /**< this one; nothing from it is sent */
};

/**
 * The completer's state of a QP: what was acknowledged, the retries left,
 * the timers and the congestion window. Written by the completer alone
 * (droce_comp.c): on an ACK, a NAK, a timeout, and as the QP reaches RTR
 * (droce_comp_reset()); the requester starts the retransmission timer
 * through droce_comp_timer_start().
 */
struct droce_comp_state {
	uint32_t oldest;       /**< oldest WQE not completed */
	uint32_t una_psn;      /**< oldest PSN not acknowledged */
	/** packets allowed in flight: one more per window acknowledged,
	 * halved on a PSN sequence NAK, DROCE_MIN_INFLIGHT on a timeout */
	uint32_t cwnd;
	uint32_t cwnd_acked;   /**< acknowledged towards cwnd + 1 */
	uint8_t retry_left;
	uint8_t rnr_left;
	bool rnr_wait;
	uint64_t rexmit_at;    /**< 0: timer stopped */
	uint64_t rnr_at;
};

/**
 * The responder's state of a QP: written by droce_resp.c, droce_resp_tx.c
 * (READ responses and ACKs) and droce_tm.c (tag matching) alone, and by
 * droce_raw_qp.c for raw packet QPs.
 */
struct droce_resp_state {
	uint32_t psn;          /**< expected */
	uint32_t msn;
	bool nak_sent;         /**< for the current sequence gap */
	bool ack_pending;
	/* an ACK that waits for the pass after an application
	 * thread's that completed a receive (droce_resp_tx.c) */
	uint32_t done_in;      /**< the lcore's pass that did */
	bool done_twice;       /**< it completed more than one */
	bool look;             /**< the next pass sees if it answered */
	bool answers;          /**< the application answered the last one */
	bool ack_waited;       /**< the ACK owed waited a pass already */
	uint32_t ack_psn;
	/** the last packet of a SEND or WRITE taken in order: what
	 * the ACK of a duplicate says (never a READ's or an atomic's
	 * PSN, which a requester must not take for their answer) */
	uint32_t done_psn;
	uint8_t opcode;        /**< of the message in progress (0xff) */
	/* RDMA WRITE in progress: each packet's range is checked
	 * and translated on its own, under the key as it is then
	 * (deregistered, invalidated or bound again between two) */
	uint64_t va;           /**< the next packet's, as the wire
				*   gives it */
	uint32_t remaining;
	uint32_t rkey;
	uint32_t msg_len;      /**< bytes of the message so far */
	/* SEND in progress */
	bool has_rwqe;
	uint32_t rwqe;         /**< RQ index of the receive WQE in use */
	uint32_t roffset;
	uint32_t rq_cons;      /**< next receive WQE to take */
	/** the RQ's prod_tail as last read: the poster's line is
	 * read again when rq_cons reaches it */
	uint32_t rq_seen;
	bool last_wqe;         /**< SRQ: LAST_WQE_REACHED raised */
	/* tag matching: the message in progress */
	uint8_t tm;            /**< enum droce_tm_msg */
	uint8_t tm_skip;       /**< TMH bytes not to place */
	uint64_t tm_tag;
	uint32_t tm_priv;
	/* READ/atomic resources: a ring of qp->rd_res */
	uint32_t res_head;
	uint32_t res_sending;  /**< READ responses to send (count) */
};

/** droce_qp_eng.active_idx of a QP not in shard->active */
#define DROCE_QP_ASLEEP UINT32_MAX
/** How long a QP is found idle before it leaves shard->active... */
#define DROCE_QP_SLEEP_US 200
/** ...while no more than this many QPs are in it (beyond, at once). */
#define DROCE_QP_FEW 256

struct droce_qp_eng {
	struct droce_shard *shard;
	struct droce_qp_cfg cfg;
	/** With an SRQ: the receive WQE in use, copied out of the SRQ */
	struct droce_recv_wqe *srq_wqe;
	uint8_t tr;                /**< DROCE_TR_RC, _UC or _UD */
	enum ibv_qp_state state;
	uint32_t slot;             /**< index in shard->qps (QP1: none,
				    *   DROCE_MAX_QP) */
	uint32_t live_idx;         /**< index in shard->live */
	uint32_t active_idx;       /**< index in shard->active, or
				    *   DROCE_QP_ASLEEP */
	uint64_t idle_since;       /**< TSC of the first pass that found
				    *   it idle (0: busy) */
	/* asleep with a timer: on shard->wheel's list of wake_at's tick */
	struct droce_qp_eng *wheel_next;
	struct droce_qp_eng **wheel_pprev;  /**< NULL: on no list */
	uint64_t wake_at;
	/** 1 while the QP is out of shard->active: the poster that takes it
	 * back to 0 kicks the QP into shard->kick (droce_qp_kick()) */
	alignas(RTE_CACHE_LINE_SIZE) uint32_t asleep;

	/* attributes */
	uint32_t dest_qpn;
	enum ibv_mtu path_mtu;
	uint32_t mtu;              /**< bytes */
	uint32_t access;           /**< qp_access_flags */
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t sq_draining;
	uint32_t qkey;
	uint32_t sq_psn;           /**< attr.sq_psn as set */
	uint32_t rq_psn;           /**< attr.rq_psn as set */
	uint64_t timeout_cycles;   /**< 0: no retransmission timer */

	struct droce_path path;    /**< RC, UC: the peer */

	/* requester and completer */
	struct droce_swqe *swqe;   /**< per send queue slot */
	struct droce_req_state req;
	struct droce_comp_state comp;
	struct droce_resp_state resp;
	/** the responder's READ/atomic resources, RTE_MAX(1,
	 * max_dest_rd_atomic) of them (allocated by droce_qp_modify(): an
	 * idle QP keeps no more than it grants) */
	struct droce_rd_res *rd_res;
	uint32_t rd_res_cap;       /**< entries of rd_res */

	struct droce_qp_stats stats;
	/** TSC: the earliest its next CNP may go */
	uint64_t cnp_next;
	/** DCQCN's reaction point: its rate (0 until its first CNP: not
	 * paced) */
	struct droce_dcqcn cc;
	/** TSC: the earliest its next packet may go while paced */
	uint64_t cc_next;
};

/** Add the bytes @p qp takes to @p state (its records) and @p queues. */
void droce_qp_bytes(const struct droce_qp_eng *qp, uint64_t *state,
		    uint64_t *queues);

/**
 * The QP of @p sh with QPN @p qpn, or NULL. A table QP is found by its
 * slot; only a miss looks further, at QP1 (whose QPN no table QP has:
 * theirs have a tag above the slot).
 */
static inline struct droce_qp_eng *
droce_qp_by_qpn(const struct droce_shard *sh, uint32_t qpn)
{
	struct droce_qp_eng *qp = sh->qps[DROCE_QPN_SLOT(qpn)];

	if (likely(qp != NULL && qp->cfg.qp_num == qpn))
		return qp;
	return qpn == DROCE_GSI_QPN ? sh->qp1 : NULL;
}

/**
 * The shard of device @p dev (any shard of it) that has QPN @p qpn: that
 * of its slot, the slots of shard s being those equal to s modulo the
 * shards; QP1 and multicast are the primary's.
 */
static inline struct droce_shard *
droce_dev_owner(const struct droce_dev *dev, uint32_t qpn)
{
	if (dev->nshards == 1 || qpn == DROCE_GSI_QPN ||
	    qpn == DROCE_MCAST_QPN)
		return dev->shards[0];
	return dev->shards[DROCE_QPN_SLOT(qpn) % dev->nshards];
}

/**
 * Map [addr, addr + len) for the DMA of the port of @p dev,
 * DPDK's own memory excepted (lib/engine/droce_dmamap.c).
 * @return 0, or a negative errno: then nothing was mapped.
 */
int droce_dma_map(struct droce_dev *dev, uint64_t addr, uint64_t len);

/** Let go of what droce_dma_map() of the same range mapped. */
void droce_dma_unmap(struct droce_dev *dev, uint64_t addr, uint64_t len);

/** The bytes of droce_rss_key, the Toeplitz key droce's ports use. */
#define DROCE_RSS_KEY_LEN 40
extern const uint8_t droce_rss_key[DROCE_RSS_KEY_LEN];

/**
 * The RSS hash (Toeplitz, droce_rss_key) a port gives a RoCEv2 packet
 * from @p sgid to @p dgid (IPv4-mapped GIDs where @p ipv4) from UDP port
 * @p sport.
 */
uint32_t droce_rss_hash(const uint8_t sgid[16], const uint8_t dgid[16],
			bool ipv4, uint16_t sport);

/**
 * The UDP source port for packets of QP @p src_qpn of @p dev to QP
 * @p dst_qpn over @p path: droce_udp_sport(), or with RSS on the device
 * (droce_dev.rss) the nearest port whose hash lands on the shard that
 * has @p dst_qpn at a like device (lib/engine/droce_rss.c).
 */
uint16_t droce_rss_sport(const struct droce_dev *dev,
			 const struct droce_path *path,
			 uint32_t src_qpn, uint32_t dst_qpn);

/** qp->tr of a raw packet QP: no RoCE transport. */
#define DROCE_TR_NONE 0xff

/** RC and XRC are acknowledged; UC and UD are not. */
static inline bool
droce_tr_reliable(uint8_t tr)
{
	return tr == DROCE_TR_RC || tr == DROCE_TR_XRC;
}

/** RC, UC and XRC QPs each have one peer QP: the flows ECN and DCQCN act
 * on (a UD QP's packets go anywhere, a raw packet QP's are not RoCE). */
static inline bool
droce_tr_connected(uint8_t tr)
{
	return tr == DROCE_TR_RC || tr == DROCE_TR_UC || tr == DROCE_TR_XRC;
}

/** What a message to a TM SRQ turned out to be. */
enum droce_tm_msg {
	DROCE_TM_NONE,         /**< not a TM SRQ's */
	DROCE_TM_PLAIN,        /**< no TMH, or a FIN: an ordinary receive */
	DROCE_TM_NO_TAG,       /**< TMH NO_TAG: IBV_WC_TM_NO_TAG */
	DROCE_TM_UNEXPECTED,   /**< tagged, matched nothing: an ordinary
				* receive asking for a sync */
	DROCE_TM_EAGER,        /**< matched: into the tagged buffer */
};

/** What the first packet of a SEND to a TM SRQ is, by its TMH, and
 * what the responder does with it next (droce_tm_recv_start()). */
enum droce_tm_start {
	/** a receive like any other: into the tagged buffer it matched (as
	 * the WQE in use, its TMH not placed) or an ordinary WQE, as
	 * qp->resp.tm says */
	DROCE_TM_START_RECEIVE,
	/** tagged, matched nothing: into an ordinary WQE, once there is one
	 * (then droce_tm_unexpected()) */
	DROCE_TM_START_UNEXPECTED,
	/** the memory of the buffer it matched is gone: that buffer's
	 * completion is written; the QP fails (Remote Operational Error) */
	DROCE_TM_START_BAD_BUFFER,
	/** a rendezvous request, matched: the engine's READ posted (or the
	 * tag completed RNDV_INCOMPLETE); the message is done with */
	DROCE_TM_START_RNDV,
};

/**
 * The first packet of a SEND to @p qp's TM SRQ, without a receive WQE in
 * use: its TMH read, matched against the SRQ's tagged buffers.
 */
enum droce_tm_start droce_tm_recv_start(struct droce_qp_eng *qp,
					const struct droce_wire_meta *meta);

/** A tagged message that matched nothing takes the ordinary receive WQE
 * now in use, and counts towards the next sync. */
void droce_tm_unexpected(struct droce_qp_eng *qp);

/** Complete the message @p qp received into the buffer of @p wr_id, a
 * tagged or ordinary one of its TM SRQ, as qp->resp.tm says. */
void droce_tm_recv_done(struct droce_qp_eng *qp, uint64_t wr_id,
			uint32_t byte_len);

/** An engine-posted WQE @p idx of @p qp completed with @p status. */
void droce_tm_wqe_done(struct droce_qp_eng *qp, uint32_t idx,
		       enum ibv_wc_status status);

/**
 * Is @p wqe a READ or an atomic: answered by a response, holding a
 * responder resource (max_rd_atomic) until then?
 */
static inline bool
droce_wqe_rd_atomic(const struct droce_send_wqe *wqe)
{
	return (droce_wr_flags(wqe->opcode) & DROCE_WR_RD_ATOMIC) != 0;
}

/** The engine's state of send WQE @p idx. */
static inline struct droce_swqe *
droce_swqe(const struct droce_qp_eng *qp, uint32_t idx)
{
	return &qp->swqe[idx & qp->cfg.sq->mask];
}

/** Path MTU in bytes. */
static inline uint32_t
droce_mtu_bytes(enum ibv_mtu mtu)
{
	return 128u << mtu;
}

/** Microseconds in a timeout exponent: 4.096 us * 2^t. */
static inline uint64_t
droce_timeout_cycles(uint8_t t, uint64_t hz)
{
	if (t == 0)
		return 0;
	return (uint64_t)(4096.0e-9 * (double)(1ull << (t > 31 ? 31 : t)) *
			  (double)hz);
}

/** RNR timer (IBA table of encoded delays), in cycles. */
uint64_t droce_rnr_cycles(uint8_t code, uint64_t hz);

/** Move @p qp to ERR: its timers stop, the loop flushes it. */
void droce_qp_error(struct droce_qp_eng *qp);

/** Flush both queues of @p qp, in ERR: the completer's and responder's. */
void droce_qp_flush(struct droce_qp_eng *qp);

/**
 * Make sure the QP knows its peer's MAC and has its header template.
 * @return true when it can send.
 */
bool droce_qp_path_ready(struct droce_qp_eng *qp, uint64_t now);

/** An mbuf of @p sh's pool for a packet, reset, or NULL: as
 * rte_pktmbuf_alloc(), through the cache of the thread whose pass it is. */
static inline struct rte_mbuf *
droce_mbuf_alloc(const struct droce_shard *sh)
{
	struct rte_mbuf *m;

	if (rte_mempool_generic_get(sh->dev->pool, (void **)&m, 1,
				    sh->lc->mcache) < 0)
		return NULL;
	rte_pktmbuf_reset(m);
	return m;
}

/** Free @p m and the segments after it: as rte_pktmbuf_free(), those
 * of @p sh's pool through the cache of the thread whose pass it is. */
static inline void
droce_mbuf_free(const struct droce_shard *sh, struct rte_mbuf *m)
{
	while (m != NULL) {
		struct rte_mbuf *next = m->next;

		m = rte_pktmbuf_prefree_seg(m);
		if (m != NULL && m->pool == sh->dev->pool)
			rte_mempool_generic_put(m->pool, (void **)&m, 1,
						sh->lc->mcache);
		else if (m != NULL)
			rte_mempool_put(m->pool, m);
		m = next;
	}
}

#endif /* DROCE_ENGINE_PVT_H */
