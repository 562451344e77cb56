/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_FAULT_PVT_H
#define DROCE_FAULT_PVT_H

/**
 * @file
 * net_fault internals shared by its control path (fault_ethdev.c,
 * fault_args.c) and its fast path (fault_rxtx.c).
 */

#include <stdint.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_rwlock.h>
#include <rte_spinlock.h>

#include "droce_dpdk_compat.h"
#include "fault_drv.h"
#include "fault_rss.h"

extern int droce_fault_logtype;

#define FAULT_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, droce_fault_logtype, \
		RTE_FMT("net_fault: " RTE_FMT_HEAD(__VA_ARGS__,) "\n", \
			RTE_FMT_TAIL(__VA_ARGS__,)))

/** The faults, in the order a frame meets them and draws for them. */
enum fault_kind {
	FAULT_DROP,
	FAULT_CORRUPT,
	FAULT_DUP,
	FAULT_REORDER,
	FAULT_DELAY,
	FAULT_CE,		/* marks ECN CE on an ECN-capable frame */
	FAULT_KIND_MAX,
};

/** Per-queue counters; the xstats are "rx_fault_<name>", "tx_fault_<name>". */
enum fault_stat {
	FAULT_STAT_DROPPED,	/**< frames freed: drop=, or held at stop */
	FAULT_STAT_DUPLICATED,	/**< extra copies made */
	FAULT_STAT_REORDERED,	/**< frames held back behind the next one */
	FAULT_STAT_DELAYED,	/**< frames held for delay_us */
	FAULT_STAT_CORRUPTED,	/**< frames with one bit flipped */
	FAULT_STAT_PASSED,	/**< mbufs handed on, copies included */
	FAULT_STAT_CE_MARKED,	/**< ECN-capable IP frames marked CE */
	FAULT_STAT_UNMAPPED,	/**< tx frames freed, with dma=1, for bytes
				 *   in memory not mapped for the port */
	FAULT_STAT_MAX,
};

/** Directions, as bits of fault_params.dir and index of per-port tables. */
enum fault_dir {
	FAULT_RX,
	FAULT_TX,
	FAULT_DIR_MAX,
};

#define FAULT_DIR_BIT(d) (1u << (d))

/** Largest delay_us= and reorder_us= accepted: ten seconds. */
#define FAULT_US_MAX 10000000
/** Default reorder_us=: how long a reordered frame waits for a successor. */
#define FAULT_REORDER_US_DEFAULT 100
/** Frames taken from the wrapped port (rx) or the caller (tx) per burst. */
#define FAULT_BURST_MAX 64
/** Frames a queue can have ready to hand on (power of two). */
#define FAULT_READY_SIZE 512
/** Delayed frames (or frame pairs) a queue can hold (power of two). */
#define FAULT_DELAY_SIZE 4096
/** A frame and its duplicate travel together: at most two mbufs held. */
#define FAULT_HELD_MAX 2
/** Frames a wrapped port's loop ring holds (sent to its own address). */
#define FAULT_LOOP_SIZE 1024

/** Longest switch= name, with its NUL. */
#define FAULT_SWITCH_NAMESIZE 17
/** Ports one switch can have. */
#define FAULT_SWITCH_PORTS 16
/** Switches a process can have. */
#define FAULT_SWITCHES 8
/** Largest rate_mbps= (10 Tb/s) and rate_pps= accepted. */
#define FAULT_RATE_MBPS_MAX 10000000
#define FAULT_RATE_PPS_MAX 1000000000
/** Default queue= of a port with a rate: bytes, or frames with rate_pps. */
#define FAULT_QUEUE_BYTES_DEFAULT (1024 * 1024)
#define FAULT_QUEUE_FRAMES_DEFAULT 1024
/** Largest queue= (and kmin=, kmax=): 1 GiB, or that many frames. */
#define FAULT_QUEUE_MAX (1u << 30)
/** Bytes a frame takes on Ethernet besides itself: preamble, start
 * delimiter, FCS and the gap before the next. */
#define FAULT_WIRE_OVERHEAD 24

/** What the devargs asked for, after parsing. */
struct fault_params {
	char port[RTE_ETH_NAME_MAX_LEN];	/**< name of the wrapped port */
	double prob[FAULT_KIND_MAX];		/**< each in [0, 1] */
	uint64_t delay_us;
	uint64_t reorder_us;			/**< then a held frame goes alone */
	uint64_t seed;
	unsigned int dir;			/**< FAULT_DIR_BIT()s */
	/* A port of a switch (fault_switch.c), and the queue in front of
	 * it: what the other ports send it waits there for the line. */
	char sw[FAULT_SWITCH_NAMESIZE];		/**< switch=, or "" */
	uint64_t rate;				/**< Mb/s, or frames/s; 0 none */
	bool rate_pps;				/**< rate counts frames */
	uint64_t queue;				/**< bytes (frames) it holds */
	uint64_t kmin;				/**< RED marks from here ... */
	uint64_t kmax;				/**< ... to here; 0: no marking */
	double pmax;				/**< marking probability at kmax */
	bool dma;				/**< sends mapped memory only */
};

/** Ranges rte_dev_dma_map() can map for a port at once. */
#define FAULT_DMA_MAPS 256

/**
 * What was mapped for a dma=1 port's DMA (fault_dma.c): read by its tx
 * queues, written by rte_dev_dma_map() and rte_dev_dma_unmap().
 */
struct fault_dma {
	rte_rwlock_t lock;
	unsigned int n;
	struct {
		uintptr_t va;
		uint64_t iova;
		size_t len;
	} map[FAULT_DMA_MAPS];
};

/**
 * May a dma=1 port read every segment of @p m: in DPDK's own memory, or
 * in a range of @p dma at the IO address the segment gives?
 */
bool droce_fault_dma_ok(struct fault_dma *dma, const struct rte_mbuf *m);

struct rte_vdev_device;

/** The vdev driver's dma_map and dma_unmap: ranges of a dma=1 port. */
int droce_fault_dma_map(struct rte_vdev_device *vdev, void *addr,
			uint64_t iova, size_t len);
int droce_fault_dma_unmap(struct rte_vdev_device *vdev, void *addr,
			  uint64_t iova, size_t len);

/** A port's switch queue counters: xstats "rx_queue_<name>". */
enum fault_qstat {
	FAULT_QSTAT_QUEUED,	/**< frames that joined the queue */
	FAULT_QSTAT_DROPPED,	/**< frames that found it full */
	FAULT_QSTAT_MARKED,	/**< ECN-capable frames marked CE by RED */
	FAULT_QSTAT_SENT,	/**< frames that left it to the port */
	FAULT_QSTAT_SENT_BYTES,	/**< their bytes */
	FAULT_QSTAT_FLOODED,	/**< copies sent to every port (broadcast,
				 *   multicast, unknown destination) */
	FAULT_QSTAT_BACKLOG_MAX,	/**< most a frame found ahead of it */
	FAULT_QSTAT_BACKLOG_MEAN,	/**< mean of what each found */
	FAULT_QSTAT_MAX,
};

/** A frame in a switch queue and the TSC cycle it has left the line at. */
struct fault_slot {
	struct rte_mbuf *m;
	uint64_t due;
};

struct fault_switch;

/** Receive queues a switch port spreads frames over (RSS). */
#define FAULT_SWITCH_RXQ 16

/** What one of a switch port's receive queues takes frames from. */
struct fault_swq {
	struct rte_ring *ring;		/**< of struct fault_slot */
	/* its consumer's alone */
	struct fault_slot head;
	bool has_head;
} __rte_cache_aligned;

/**
 * One port of a switch: its address as learnt from what it sends, and
 * the queue in front of it, which every other port's tx fills (many
 * producers) and its rx queues empty (one consumer each).
 *
 * The queue is one line with a ring of frames per receive queue. Where
 * the port was configured for RSS, a UDP frame over IP goes to the ring
 * a NIC would put it on: the Toeplitz hash of its addresses and ports
 * under the port's key, looked up in the redirection table (entry i is
 * queue i modulo the receive queues, as NICs set it by default). Any
 * other frame, and every frame without RSS, goes to queue 0.
 *
 * With a rate, the queue is a virtual clock: each frame joining it is
 * given the cycle it will have left the line at (tail, advanced by a
 * compare-and-swap), so what is ahead of a frame is tail - now whenever
 * the port's lcore polls, as on a switch whose line never waits for
 * the receiver.
 */
struct fault_swport {
	struct fault_switch *sw;
	unsigned int index;		/**< in sw->ports[] */
	bool gone;			/**< closed: frames to it are dropped */
	uint64_t mac;			/**< learnt address | FAULT_MAC_KNOWN */
	double cycles_per_unit;		/**< per byte (per frame); 0: no rate */
	bool per_frame;
	uint64_t limit;			/**< in cycles of backlog */
	uint64_t kmin;
	uint64_t kmax;			/**< 0: no marking */
	uint64_t pmax;			/**< in 2^-53 */
	uint64_t tail __rte_cache_aligned;	/**< shared by the senders */
	uint64_t stats[FAULT_QSTAT_MAX];	/**< atomic; backlogs in cycles */
	/* set while the port is stopped */
	uint64_t rss_hf;		/**< RTE_ETH_RSS_*: 0, no RSS */
	uint8_t rss_key[FAULT_RSS_KEY_LEN];
	uint16_t nb_rxq;		/**< queues the table spreads over */
	struct fault_swq rxq[FAULT_SWITCH_RXQ];	/**< ring: read with acquire */
};

#define FAULT_MAC_KNOWN (UINT64_C(1) << 48)

/** A switch: ports that send to each other by destination address. */
struct fault_switch {
	char name[FAULT_SWITCH_NAMESIZE];
	unsigned int refs;			/**< ports not yet closed */
	unsigned int nb_ports;			/**< read with acquire */
	struct fault_swport *ports[FAULT_SWITCH_PORTS];
};

/** A delayed frame and, if it was duplicated, its copy. */
struct fault_delayed {
	struct rte_mbuf *m;
	struct rte_mbuf *copy;
	uint64_t due;				/**< TSC cycle it may leave at */
};

/**
 * One rx or tx queue. Only the lcore polling the queue touches it,
 * except for the control path while the port is stopped, and for an rx
 * burst of the same queue number letting out a tx queue's held frames
 * (under its lock).
 */
struct fault_queue {
	/* Fixed when the queue is set up. */
	uint16_t port_id;			/**< wrapped port */
	uint16_t queue_id;			/**< same id on both ports */
	/** the port's data: its address; rx: where its tx queue of this
	 * number is */
	const struct rte_eth_dev_data *data;
	/** a wrapped port's frames to its own address (fault_port.loop) */
	struct rte_ring *loop;
	/** tx: taken by its bursts, and tried by rx bursts that would let
	 * out what it holds */
	rte_spinlock_t lock;
	uint32_t delay_mask;			/**< delay[] size - 1, or 0 */
	struct rte_mempool *mp;			/**< rx: for copies; tx: NULL */
	uint64_t threshold[FAULT_KIND_MAX];	/**< hit if rand53 < threshold */
	uint64_t delay_cycles;
	uint64_t reorder_cycles;
	const bool *cut;			/**< the port's link is down */
	/** tx of a dma=1 port: what it may read; else NULL */
	struct fault_dma *dma;
	/** a switch's port: tx sends through the switch, rx queue 0
	 * takes from the port's switch queue; else NULL */
	struct fault_swport *swport;

	/* Fast-path state. */
	uint64_t rng;
	uint64_t held_since;
	struct rte_mbuf *held[FAULT_HELD_MAX];	/**< reordered frame (+copy) */
	unsigned int nb_held;
	uint32_t ready_head;
	uint32_t ready_tail;
	uint32_t delay_head;
	uint32_t delay_tail;
	uint64_t stats[FAULT_STAT_MAX];
	struct rte_mbuf *ready[FAULT_READY_SIZE];	/**< to hand on, in order */
	struct fault_delayed delay[];		/**< FIFO, due times ascending */
} __rte_cache_aligned;

/** Per-port state, in rte_eth_dev_data.dev_private. */
struct fault_port {
	struct fault_params params;
	uint16_t port_id;			/**< this port */
	uint16_t wrapped_port;
	uint64_t owner_id;			/**< our claim on the wrapped port */
	/** Set link down: every frame dropped both ways, as with the
	 * cable pulled, until set link up (read by the queues). */
	bool cut;
	uint64_t retired[FAULT_DIR_MAX][FAULT_STAT_MAX];	/**< freed queues */
	struct fault_swport *swport;		/**< with switch=, else NULL */
	/** Without switch=: what the port sent to its own address, for its
	 * rx queues to take (many producers and consumers) */
	struct rte_ring *loop;
	struct fault_dma dma;			/**< with dma=1 */
};

/** The state of port @p port if it is a net_fault port, else NULL. */
const struct fault_port *droce_fault_port_of(uint16_t port);

/**
 * Parse "port=NAME,drop=P,..." into @p p (defaults first).
 *
 * @return 0, or -EINVAL with the reason logged.
 */
int droce_fault_parse_args(const char *args, struct fault_params *p);

/**
 * Create the state of one queue.
 *
 * @param mp
 *   rx: the queue's mempool, used for duplicates and private copies;
 *   tx: NULL (copies go to each frame's own pool).
 * @return the queue, or NULL (rte_errno ENOMEM).
 */
struct fault_queue *droce_fault_queue_create(const struct fault_port *fp,
	enum fault_dir dir, uint16_t queue_id, struct rte_mempool *mp,
	int socket_id);

/**
 * Empty a queue of every frame it holds, in the order they would have
 * left: tx queues send them to the wrapped port (what it refuses is
 * freed), rx queues free them. Freed frames count as dropped.
 */
void droce_fault_queue_drain(struct fault_queue *q, enum fault_dir dir);

/**
 * Make @p fp a port of the switch its params name, creating the switch
 * with its first port, and the queue in front of the port.
 *
 * @return 0, or -ENOSPC (too many switches or ports), -ENOMEM.
 */
int droce_fault_switch_join(struct fault_port *fp, int socket_id);

/**
 * The port leaves its switch: frames to it are dropped from now on and
 * those in its queue freed. The last port to leave frees the switch;
 * ports leave once no port of theirs sends any more (at close).
 */
void droce_fault_switch_leave(struct fault_port *fp);

/** The switch queue's counters of @p fp, backlogs in bytes (frames). */
void droce_fault_switch_stats(const struct fault_port *fp,
			      uint64_t stats[FAULT_QSTAT_MAX]);

/** Zero them. */
void droce_fault_switch_stats_reset(struct fault_port *fp);

/**
 * Make sure the switch port of @p fp has a ring for its receive queue
 * @p queue_id (the port stopped). @return 0, or -ENOMEM, -EINVAL.
 */
int droce_fault_switch_rxq(struct fault_port *fp, uint16_t queue_id,
			   int socket_id);

/**
 * Take the RSS settings of @p conf for the switch port of @p fp, with
 * @p nb_rxq receive queues (the port stopped). @return 0, or -EINVAL
 * for hash functions it does not have.
 */
int droce_fault_switch_rss(struct fault_port *fp,
			   const struct rte_eth_rss_conf *conf, uint64_t mq,
			   uint16_t nb_rxq);

/** Free the frames waiting in the switch queue of @p p (its consumer). */
void droce_fault_swport_drain(struct fault_swport *p);

uint16_t droce_fault_rx_burst(void *rxq, struct rte_mbuf **pkts,
			      uint16_t nb_pkts);
uint16_t droce_fault_tx_burst(void *txq, struct rte_mbuf **pkts,
			      uint16_t nb_pkts);
uint16_t droce_fault_rx_pass(void *rxq, struct rte_mbuf **pkts,
			     uint16_t nb_pkts);
uint16_t droce_fault_tx_pass(void *txq, struct rte_mbuf **pkts,
			     uint16_t nb_pkts);
uint16_t droce_fault_tx_prepare(void *txq, struct rte_mbuf **pkts,
				uint16_t nb_pkts);

#endif /* DROCE_FAULT_PVT_H */
