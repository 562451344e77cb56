/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The raw yardstick: plain frames as long as the test's RoCE packets,
 * sent through the same port by the same engine lcore; with --raw-icrc,
 * RoCE packets that no QP takes, whose ICRCs are computed and checked:
 * the floor under any RoCE message of that size.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <droce.h>

#include "perf.h"

/* Ethernet, IPv4, UDP, BTH and ICRC around every RoCE packet. */
#define ROCE_OVERHEAD (14 + 20 + 8 + 12 + 4)

uint32_t
perf_frame_len(const struct perf_opts *o)
{
	uint32_t mtu = 128u << o->mtu;
	uint32_t payload = o->size < mtu ? o->size : mtu;
	uint32_t ext;
	uint32_t len;

	switch (o->test) {
	case PERF_ATOMIC_BW:
		ext = 28;          /* AtomicETH, no payload */
		payload = 0;
		break;
	case PERF_READ_BW:
		ext = 4;           /* responses: AETH */
		break;
	case PERF_SEND_BW:
	case PERF_SEND_LAT:
		ext = 0;
		break;
	default:
		/* a WRITE's packets: the first (or only) carries a RETH */
		ext = o->size <= mtu ? 16 : 0;
		break;
	}
	len = ROCE_OVERHEAD + ext + ((payload + 3) & ~3u);
	return len < 60 ? 60 : len;
}

/* Packets per message on the wire, one way (data direction). */
static uint64_t
packets_per_msg(const struct perf_opts *o)
{
	uint32_t mtu = 128u << o->mtu;

	if (o->test == PERF_ATOMIC_BW || o->size == 0)
		return 1;
	return (o->size + mtu - 1) / mtu;
}

int
perf_raw(const struct perf_opts *o, struct perf_side *tx, struct perf_result *r)
{
	uint32_t len = perf_frame_len(o);
	uint32_t ms = (uint32_t)(o->duration * 1000);
	uint64_t sent = 0;
	int ret;

	ret = droce_raw_send(tx->ctx, tx->peer.mac, len, ms ? ms : 1000,
			     o->raw_icrc ? DROCE_RAW_ROCE : 0, &sent);
	if (ret != 0) {
		fprintf(stderr, "droce-perf: raw: frame of %u bytes refused\n",
			len);
		return -1;
	}
	r->secs = ms ? ms / 1000.0 : 1.0;
	r->frames = sent;
	r->msgs = sent;
	r->bytes = sent * len;
	return 0;
}

/* Data packets of a bandwidth run. */
uint64_t
perf_packets(const struct perf_opts *o, const struct perf_result *r)
{
	return r->msgs * packets_per_msg(o);
}

/*
 * memcpy bandwidth on this machine, the yardstick of large messages:
 * copies of the message size cycling through an 8 MiB working set. With
 * @p crc32 (memcpy_crc: the ICRC's), each copy is then CRCed once: what
 * droce's copy path does to a packet's payload on each side, copy and
 * ICRC.
 */
int
perf_memcpy(const struct perf_opts *o, struct perf_result *r,
	    uint32_t (*crc32)(uint32_t crc, const void *buf, size_t len))
{
	const size_t ws = 8u << 20;
	size_t sz = o->size ? o->size : 1, off = 0;
	uint32_t sum = 0;
	uint8_t *src = aligned_alloc(4096, ws), *dst = aligned_alloc(4096, ws);
	double t0, end;
	unsigned int i;

	if (src == NULL || dst == NULL || sz > ws) {
		free(src);
		free(dst);
		return -1;
	}
	memset(src, 1, ws);
	memset(dst, 2, ws);
	memset(r, 0, sizeof(*r));
	t0 = perf_now();
	end = t0 + o->duration;
	while (perf_now() < end) {
		for (i = 0; i < 64; i++) {
			if (off + sz > ws)
				off = 0;
			memcpy(dst + off, src + off, sz);
			if (crc32 != NULL)
				sum = crc32(sum, dst + off, sz);
			off += sz;
			r->msgs++;
		}
	}
	r->secs = perf_now() - t0;
	r->bytes = r->msgs * sz;
	r->frames = r->msgs;
	/* (kept: the CRCs are not to be optimised away) */
	r->peak_msg_rate = sum == 0x5a5a5a5a ? 1 : 0;
	free(src);
	free(dst);
	return 0;
}
