/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_INJECT_FWD_H
#define DROCE_INJECT_FWD_H

#include "inject.h"

struct rte_mempool;

#define INJ_MAX_DELAYED 4096

struct inj_delayed {
	struct rte_mbuf *m;
	uint64_t due;           /**< TSC */
	uint32_t us;
	int dir;                /**< the side it came from */
	uint32_t k, left;       /**< reordered: behind k frames, left to
				 *   come; k 0: delayed */
};

/** Frames a port refused, sent first at its next turn. */
#define INJ_BACKLOG 1024
struct inj_backlog {
	uint16_t n;
	struct rte_mbuf *m[INJ_BACKLOG];
};

/** The forwarder's state: ports, script, flows learnt, trace. */
struct inj_fwd {
	uint16_t port[2];
	struct rte_mempool *pool;
	struct inj_event *ev;
	int nev;
	struct inj_flow *flows[INJ_MAX_FLOWS];
	int nflows;
	struct inj_trace trace;
	uint64_t hz, tsc0, ns0; /**< the trace's clock */
	uint64_t duration_s;    /**< 0: until stopped */
	uint32_t idle_us;       /**< sleep when idle this long; 0: poll */
	uint64_t frames[2], roce[2], tx_drop;
	struct inj_backlog backlog[2]; /**< by the port they go to */
	unsigned int ndelayed;
	unsigned int nreordered;        /**< of them held to be reordered */
	struct inj_delayed delayed[INJ_MAX_DELAYED];
	uint8_t scratch[16384];         /**< a rewritten frame, built */
};

/** Forward both ways until *stop or the duration ends. */
void inj_fwd_run(struct inj_fwd *fw, volatile bool *stop);

/** What passed, the flows learnt and each event's count, on @p f. */
void inj_fwd_report(const struct inj_fwd *fw, FILE *f);

#endif /* DROCE_INJECT_FWD_H */
