/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_DUMP_H
#define DROCE_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <droce_wire.h>

/* One frame of a capture, after droce_wire_parse(). */
struct dump_frame {
	uint64_t number;        /* 1-based, as tshark counts */
	uint64_t ts_ns;
	uint32_t caplen;
	int err;                /* droce_wire_parse() result */
	const struct droce_wire_pkt *pkt;
};

/* true when the parse went far enough for the headers to be shown. */
static inline int
dump_decoded(int err)
{
	return err == 0 || err == -DROCE_WIRE_EICRC ||
		err == -DROCE_WIRE_EIPCSUM;
}

void dump_text(FILE *out, const struct dump_frame *fr);
void dump_json(FILE *out, const struct dump_frame *fr);

/* true for a UD SEND Only to QP1: a MAD (print_cm.c decodes CM MADs). */
bool dump_is_mad(const struct droce_wire_pkt *pkt);
/* Append the decode of the MAD in @p pkt's payload to a text line ... */
void dump_cm_text(FILE *out, const struct droce_wire_pkt *pkt);
/* ... or to a JSON object: "cm":{...}, or "mad_error" if it is none. */
void dump_cm_json(FILE *out, const struct droce_wire_pkt *pkt);

#endif /* DROCE_DUMP_H */
