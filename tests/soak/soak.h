/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_SOAK_H
#define DROCE_SOAK_H

/*
 * droce-soak: mixed traffic of every QP type through net_fault for a
 * long time, every byte checked, the frame counters of both devices and
 * both fault ports reconciled at the end, memory flat.
 *
 * droce_soak.c: options, the run, progress and the summary.
 * soak_traffic.c: the workers, each owning the QPs of one kind.
 * soak_books.c: counters, the reconciliation and memory.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/** What a worker's QPs are. */
enum soak_kind {
	SOAK_RC,        /**< an RC pair, every RC opcode, windows */
	SOAK_UC,        /**< a UC pair: SEND and WRITE, messages may be lost */
	SOAK_UD,        /**< a UD pair: datagrams up to the MTU */
	SOAK_XRC,       /**< an initiator, a target and an XRC SRQ */
	SOAK_SRQ,       /**< two RC pairs whose receivers share one SRQ */
	SOAK_KIND_MAX,
};

/** Opcode slots of a tally: every enum ibv_wr_opcode droce has. */
#define SOAK_NOPS 16

/**
 * What a worker did, written by it alone (relaxed atomic stores) and
 * read by the main thread at any time.
 */
struct soak_tally {
	uint64_t posted;             /**< messages posted (probes not) */
	uint64_t done;               /**< arrived (or completed) and checked */
	uint64_t bytes;              /**< payload of those */
	uint64_t lost;               /**< UC, UD: never arrived */
	uint64_t partial;            /**< UC WRITEs lost after their first packets */
	uint64_t dups;               /**< UD: arrived twice */
	uint64_t reordered;          /**< UD: arrived after a later one */
	uint64_t probes;             /**< UC: markers sent to settle losses */
	uint64_t ops[SOAK_NOPS];     /**< done, by opcode */
};

/** The run's settings. */
struct soak_opts {
	unsigned int seconds;
	unsigned int seed;
	unsigned int progress;       /**< seconds between progress lines */
	const char *workdir;
	const char *faults;          /**< net_fault arguments of both ports */
	unsigned int kinds;          /**< bits of enum soak_kind to run */
	unsigned int rc_workers;     /**< RC workers (QP pairs, threads) */
	unsigned int timeout;        /**< the QPs' timeout exponent */
};

struct soak_worker;

/** The RC and XRC QPs' timeout (4.096 us * 2^timeout), set before any
 * worker is made. */
extern uint8_t soak_qp_timeout;

/** The name of @p k ("rc", "uc", ...). */
const char *soak_kind_name(enum soak_kind k);

/**
 * Make a worker of kind @p k, its QPs up between droce0 (senders) and
 * droce1 (receivers), its PRNG from @p seed. @return it, or NULL.
 */
struct soak_worker *soak_worker_create(enum soak_kind k, unsigned int id,
				       unsigned int seed);

/** Run @p w on a thread of its own until soak_stop_posting(). */
int soak_worker_start(struct soak_worker *w);

/** Wait for @p w to have drained and finished. @return 0 or -1. */
int soak_worker_join(struct soak_worker *w);

/** Destroy everything of @p w. */
void soak_worker_destroy(struct soak_worker *w);

/** The tally of @p w, read now. */
void soak_worker_tally(const struct soak_worker *w, struct soak_tally *t);

/** The kind of @p w. */
enum soak_kind soak_worker_kind(const struct soak_worker *w);

/** The QPs of @p w on droce0 (@p dev 0) or droce1; @return how many. */
unsigned int soak_worker_qps(const struct soak_worker *w, int dev,
			     struct ibv_qp **qps, unsigned int max);

/** Workers stop posting, finish what is in flight and return. */
void soak_stop_posting(void);

/** Record a failure (the first few are kept) and stop the run. */
void soak_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Have failures been recorded? Print them to stderr. */
bool soak_failed(void);
void soak_print_failures(void);

/** The monotonic clock in milliseconds. */
uint64_t soak_now_ms(void);

/* ---- soak_books.c ---------------------------------------------------- */

/** Frame counters of one device and of the fault port in front of it. */
struct soak_port_books {
	/* droce's device counters */
	uint64_t tx_frames, rx_frames, tx_drop, rx_roce, rx_icrc_err;
	uint64_t rx_malformed, rx_not_ours, rx_bad_header, rx_arp, no_mbuf;
	/* net_fault's xstats, each direction */
	uint64_t tx_passed, tx_dropped, tx_dup, tx_corrupted, tx_reordered;
	uint64_t rx_passed, rx_dropped, rx_dup, rx_corrupted, rx_reordered;
	/* the wrapped net_ring port */
	uint64_t ring_opackets, ring_ipackets, ring_oerrors;
	/* the QPs' own: sums over the QPs given */
	uint64_t qp_tx_pkts, qp_rx_pkts, qp_retransmits, qp_timeouts;
	uint64_t qp_naks_sent, qp_dup_reqs, qp_rx_dropped;
	uint64_t qp_rnr_naks_sent, qp_rnr_naks_rcvd;
};

/** Open what the books need: the devices' contexts, the fault ports. */
int soak_books_open(void);

/** Read the books of droce0 and droce1 (@p qps: their QPs, for sums). */
int soak_books_read(struct soak_port_books b[2], struct ibv_qp **qps[2],
		    const unsigned int nqps[2]);

/** Wait until no frame moves for a while. @return 0, or -1 if never. */
int soak_books_quiesce(void);

/**
 * Print the books and check the identities (doc/guides/testing.rst).
 * @return the number of identities that do not hold.
 */
unsigned int soak_books_reconcile(const struct soak_port_books b[2]);

/** mbufs of droce's pool in use, once the engine has gone quiet. */
unsigned int soak_mbufs_in_use(void);

/** This process's resident set, in KiB. */
uint64_t soak_rss_kib(void);

/** DPDK heap in use (rte_malloc), in bytes. */
uint64_t soak_heap_bytes(void);

/** Close what soak_books_open() opened. */
void soak_books_close(void);

#endif /* DROCE_SOAK_H */
