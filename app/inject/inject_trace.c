/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The trace: pcapng, one Ethernet interface with nanosecond times, each
 * frame an Enhanced Packet Block whose opt_comment says what the
 * injector did to it ("droce-lab: dropped"), which Wireshark shows and
 * droce-lab reads.
 */

#include <errno.h>
#include <string.h>

#include "inject.h"

static int
put(struct inj_trace *t, const void *p, size_t n)
{
	static const uint8_t zero[4];

	if (fwrite(p, 1, n, t->f) != n)
		return -1;
	/* blocks and options are padded to 32 bits */
	if (n % 4 != 0 && fwrite(zero, 1, 4 - n % 4, t->f) != 4 - n % 4)
		return -1;
	return 0;
}

static void
block(struct inj_trace *t, uint32_t type, const void *body, uint32_t len)
{
	uint32_t total = 12 + (len + 3) / 4 * 4;

	if (fwrite(&type, 4, 1, t->f) != 1 || fwrite(&total, 4, 1, t->f) != 1 ||
	    put(t, body, len) < 0 || fwrite(&total, 4, 1, t->f) != 1)
		fprintf(stderr, "droce-inject: trace: %s\n", strerror(errno));
}

int
inj_trace_open(struct inj_trace *t, const char *path, uint32_t snap)
{
	/* section header: byte-order magic, version 1.0, length unknown */
	const uint8_t shb[16] = { 0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0,
				  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				  0xff };
	/* interface: Ethernet, no snap length; if_tsresol 9 (ns);
	 * opt_endofopt */
	const uint8_t idb[20] = { 1, 0, 0, 0, 0, 0, 0, 0,
				  9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0 };

	t->f = fopen(path, "wb");
	if (t->f == NULL)
		return -errno;
	/* a frame is a write of some 200 bytes: buffered by the MiB */
	setvbuf(t->f, NULL, _IOFBF, 1 << 20);
	t->snap = snap;
	t->frames = 0;
	block(t, 0x0a0d0d0a, shb, sizeof(shb));
	block(t, 1, idb, sizeof(idb));
	return 0;
}

void
inj_trace_frame(struct inj_trace *t, uint64_t ts_ns, const void *data,
		uint32_t len, const char *comment, bool whole)
{
	uint32_t cap = !whole && t->snap != 0 && len > t->snap ? t->snap : len;
	uint32_t clen = comment != NULL ? (uint32_t)strlen(comment) : 0;
	uint32_t opts = clen != 0 ? 4 + (clen + 3) / 4 * 4 + 4 : 0;
	uint32_t total = 12 + 20 + (cap + 3) / 4 * 4 + opts;
	uint8_t blk[12 + 20 + 9216 + 4 + 256 + 4];
	uint32_t w[7] = { 6, total, 0, (uint32_t)(ts_ns >> 32),
			  (uint32_t)ts_ns, cap, len };
	uint16_t o[2] = { 1, (uint16_t)clen };
	uint8_t *p = blk;

	if (t->f == NULL)
		return;
	if (total > sizeof(blk) || clen > 255) {
		fprintf(stderr, "droce-inject: trace: a frame of %u bytes "
			"left out\n", len);
		return;
	}
	/* the Enhanced Packet Block whole, then one write */
	memset(blk, 0, total);
	memcpy(p, w, sizeof(w));
	p += sizeof(w);
	memcpy(p, data, cap);
	p += (cap + 3) / 4 * 4;
	if (clen != 0) {
		memcpy(p, o, sizeof(o));
		memcpy(p + sizeof(o), comment, clen);
		p += 4 + (clen + 3) / 4 * 4 + 4;   /* and opt_endofopt */
	}
	memcpy(p, &total, 4);
	if (fwrite(blk, total, 1, t->f) != 1)
		fprintf(stderr, "droce-inject: trace: %s\n", strerror(errno));
	t->frames++;
}

int
inj_trace_close(struct inj_trace *t)
{
	int ret = 0;

	if (t->f != NULL && fclose(t->f) != 0)
		ret = -errno;
	t->f = NULL;
	return ret;
}
