/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * libFuzzer target for droce_wire_parse(): any input is refused with an
 * error or decoded within its bounds, and whatever parses (checks off, so
 * the fuzzer reaches the deep paths) builds back into a frame that parses
 * with every check on, to the same view.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "droce_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[65536 + 64];
	struct droce_wire_pkt pkt, again;
	const uint32_t checks_off = DROCE_WIRE_NO_ICRC | DROCE_WIRE_NO_IPCSUM;
	int ret, len;

	if (size > 65535)
		return 0;
	ret = droce_wire_parse(data, (uint32_t)size, 0, &pkt);
	CHECK(ret <= 0 && ret >= -DROCE_WIRE_EICRC);
	if (ret == 0) {
		CHECK(pkt.icrc_ok);
		CHECK(pkt.frame_len <= size);
	}

	if (droce_wire_parse(data, (uint32_t)size, checks_off, &pkt) != 0)
		return 0;
	CHECK(pkt.frame_len <= size);
	CHECK(pkt.payload >= data + pkt.bth_off + pkt.op->hdr_len);
	CHECK(pkt.payload + pkt.payload_len + pkt.bth.padcnt + DROCE_ICRC_LEN ==
	      data + pkt.frame_len);

	len = droce_wire_build(out, sizeof(out), &pkt);
	CHECK(len > 0);
	CHECK(droce_wire_parse(out, (uint32_t)len, 0, &again) == 0);
	CHECK(again.bth.opcode == pkt.bth.opcode);
	CHECK(again.bth.psn == pkt.bth.psn);
	CHECK(again.bth.dqpn == pkt.bth.dqpn);
	CHECK(again.payload_len == pkt.payload_len);
	CHECK(memcmp(again.payload, pkt.payload, pkt.payload_len) == 0);
	CHECK(again.bth.padcnt == pkt.bth.padcnt);
	CHECK(memcmp(out + again.bth_off, data + pkt.bth_off,
		     pkt.op->hdr_len) == 0);
	return 0;
}
