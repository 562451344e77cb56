/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_INJECT_H
#define DROCE_INJECT_H

/**
 * @file
 * droce-inject: a forwarder between two DPDK ports that puts events
 * into the RoCE traffic crossing it (drop, CE-mark, corrupt, duplicate,
 * delay, reorder or rewrite a chosen packet) and writes every frame both ways, with what it
 * did to it, to a pcapng trace that droce-lab analyze judges.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/** What an event does to the frames it matches. */
enum inj_action {
	INJ_DROP,      /**< never forwarded */
	INJ_CE,        /**< IP ECN set to CE (11) */
	INJ_CORRUPT,   /**< a bit of the ICRC flipped */
	INJ_DUP,       /**< forwarded twice */
	INJ_DELAY,     /**< forwarded us microseconds later */
	INJ_REORDER,   /**< forwarded after the next k frames its way */
	INJ_REWRITE,   /**< a header field set, the ICRC made anew */
	INJ_NACTIONS,
};

/** The header fields INJ_REWRITE sets. */
enum inj_field {
	INJ_F_OPCODE, INJ_F_SE, INJ_F_MIGREQ, INJ_F_PKEY, INJ_F_FECN,
	INJ_F_BECN, INJ_F_DQPN, INJ_F_ACKREQ, INJ_F_PSN, INJ_F_VA,
	INJ_F_RKEY, INJ_F_DLEN, INJ_F_SYNDROME, INJ_F_MSN, INJ_F_IMMDT,
	INJ_NFIELDS,
};

/** Their names in scripts. */
extern const char *const inj_field_name[INJ_NFIELDS];

/** The trace comments' words for them (doc/guides/lab.rst). */
extern const char *const inj_action_word[INJ_NACTIONS];

#define INJ_ANY (-1)

/** One line of a script: which frames, what to do, how often. */
struct inj_event {
	enum inj_action action;
	int line;           /**< in the script */
	int dir;            /**< 0: port 0 to 1, 1: 1 to 0, or INJ_ANY */
	int flow;           /**< a flow's number, or INJ_ANY */
	int64_t dqpn;       /**< destination QPN, or INJ_ANY */
	int64_t psn;        /**< PSN, or INJ_ANY */
	int64_t rpsn;       /**< PSN after the flow's first, or INJ_ANY */
	int opcode;         /**< BTH opcode, or INJ_ANY */
	uint32_t iter;      /**< the how-manyth pass of that PSN; 0: any */
	uint32_t count;     /**< frames to act on; 0: every one */
	uint32_t us;        /**< INJ_DELAY: how long; INJ_REORDER: the
			     *   longest wait for the k frames */
	uint32_t k;         /**< INJ_REORDER: frames let by first */
	int field;          /**< INJ_REWRITE: an enum inj_field */
	uint64_t value;     /**< what it is set to */
	int relative;       /**< 0, or +1/-1: value added or taken from
			     *   the field (psn, msn: modulo 2^24) */
	uint32_t done;      /**< frames acted on so far */
};

/**
 * Read a script: one event a line, "ACTION key=value ...", '#' starts a
 * comment (doc/guides/lab.rst).
 * @return the number of events, or -1 (the reason printed).
 */
int inj_script_read(const char *path, struct inj_event *ev, int max);

/** A flow: RoCE frames one way with one source, destination and QPN. */
struct inj_flow {
	int dir;
	uint8_t src[16], dst[16];   /**< GIDs (IPv4: ::ffff:a.b.c.d) */
	uint32_t dqpn;
	uint32_t first_psn;
	uint64_t frames;
	uint8_t passes[1 << 16];    /**< by PSN - first_psn, mod 2^16 */
};

#define INJ_MAX_FLOWS 256

/** A pcapng file being written (inject_trace.c). */
struct inj_trace {
	FILE *f;
	uint32_t snap;              /**< bytes kept of a frame; 0: all */
	uint64_t frames;
};

int inj_trace_open(struct inj_trace *t, const char *path, uint32_t snap);
/** A frame, cut to the snap length unless @p whole. */
void inj_trace_frame(struct inj_trace *t, uint64_t ts_ns, const void *data,
		     uint32_t len, const char *comment, bool whole);
int inj_trace_close(struct inj_trace *t);

#endif /* DROCE_INJECT_H */
