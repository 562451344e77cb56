/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The RoCEv2 invariant CRC: CRC-32 over eight bytes of ones (standing for
 * the InfiniBand LRH), the IP header, the UDP header, the BTH and the rest
 * of the packet up to the ICRC, with every field a router may rewrite
 * replaced by ones.
 */

#include <rte_mbuf.h>

#include "droce_wire.h"

uint32_t
droce_icrc_start(const void *l3)
{
	/* eight bytes of ones standing for the LRH, then the largest masked
	 * block: IPv4 with options, UDP, BTH */
	uint8_t buf[DROCE_ICRC_LRH_LEN + 60 + 8 + DROCE_BTH_LEN];
	uint8_t *hdr = buf + DROCE_ICRC_LRH_LEN;
	uint32_t len = droce_icrc_hdr_len(l3);
	uint8_t *udp;

	memset(buf, 0xff, DROCE_ICRC_LRH_LEN);
	/* fixed-size copies for the usual headers: no library call */
	if (len == 20 + 8 + DROCE_BTH_LEN)
		memcpy(hdr, l3, 20 + 8 + DROCE_BTH_LEN);
	else if (len == 40 + 8 + DROCE_BTH_LEN)
		memcpy(hdr, l3, 40 + 8 + DROCE_BTH_LEN);
	else
		memcpy(hdr, l3, len);
	if ((hdr[0] >> 4) == 6) {
		/* traffic class and flow label (version stays) */
		hdr[0] |= 0x0f;
		hdr[1] = 0xff;
		hdr[2] = 0xff;
		hdr[3] = 0xff;
		hdr[7] = 0xff;          /* hop limit */
		udp = hdr + 40;
	} else {
		hdr[1] = 0xff;          /* TOS */
		hdr[8] = 0xff;          /* TTL */
		hdr[10] = 0xff;         /* header checksum */
		hdr[11] = 0xff;
		udp = hdr + (hdr[0] & 0xf) * 4;
	}
	udp[6] = 0xff;                  /* UDP checksum */
	udp[7] = 0xff;
	udp[8 + 4] = 0xff;              /* BTH FECN, BECN, reserved */

	return droce_crc32(0, buf, DROCE_ICRC_LRH_LEN + len);
}

uint32_t
droce_icrc_calc(const void *l3, uint32_t len)
{
	uint32_t hlen = droce_icrc_hdr_len(l3);

	return droce_crc32(droce_icrc_start(l3), (const uint8_t *)l3 + hlen,
			   len - hlen);
}

/*
 * The bits of the first 64 bytes of an ICRC's input (the LRH's eight
 * bytes, then IP, UDP and BTH) that count as ones: the LRH, the variant
 * fields. IPv4 without options: TOS, TTL, header checksum, the UDP
 * checksum, BTH byte 4.
 */
static const uint8_t icrc_set_v4[64] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	[DROCE_ICRC_LRH_LEN + 1] = 0xff,
	[DROCE_ICRC_LRH_LEN + 8] = 0xff,
	[DROCE_ICRC_LRH_LEN + 10] = 0xff, 0xff,
	[DROCE_ICRC_LRH_LEN + 20 + 6] = 0xff, 0xff,
	[DROCE_ICRC_LRH_LEN + 20 + 8 + 4] = 0xff,
};

/* IPv6: traffic class and flow label, hop limit, UDP checksum, BTH 4. */
static const uint8_t icrc_set_v6[64] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	[DROCE_ICRC_LRH_LEN] = 0x0f, 0xff, 0xff, 0xff,
	[DROCE_ICRC_LRH_LEN + 7] = 0xff,
	[DROCE_ICRC_LRH_LEN + 40 + 6] = 0xff, 0xff,
	[DROCE_ICRC_LRH_LEN + 40 + 8 + 4] = 0xff,
};

uint32_t
droce_icrc_calc_frame(const void *l3, uint32_t len)
{
	const uint8_t *ip = l3;

	if (ip[0] == 0x45)
		return droce_crc32_masked64(0, ip - DROCE_ICRC_LRH_LEN,
					    len + DROCE_ICRC_LRH_LEN,
					    icrc_set_v4);
	if ((ip[0] >> 4) == 6)
		return droce_crc32_masked64(0, ip - DROCE_ICRC_LRH_LEN,
					    len + DROCE_ICRC_LRH_LEN,
					    icrc_set_v6);
	return droce_icrc_calc(l3, len);
}

uint32_t
droce_icrc_calc_mbuf(const struct rte_mbuf *m, uint32_t l3_off, uint32_t len)
{
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off);
	uint32_t hlen = droce_icrc_hdr_len(l3);
	const uint8_t *set = l3[0] == 0x45 ? icrc_set_v4 :
		(l3[0] >> 4) == 6 ? icrc_set_v6 : NULL;
	uint32_t off, left, crc;

	if (set != NULL && l3_off >= DROCE_ICRC_LRH_LEN &&
	    m->data_len - l3_off >= hlen) {
		/* the first segment read in place, as droce_icrc_calc_frame()
		 * reads a frame: the eight bytes before l3 stand for the LRH */
		uint32_t n = RTE_MIN(len, (uint32_t)m->data_len - l3_off);

		crc = droce_crc32_masked64(0, l3 - DROCE_ICRC_LRH_LEN,
					   n + DROCE_ICRC_LRH_LEN, set);
		off = l3_off + n;
	} else {
		crc = droce_icrc_start(l3);
		off = l3_off + hlen;
	}
	left = len - (off - l3_off);
	for (; m != NULL && left > 0; m = m->next) {
		uint32_t n;

		if (off >= m->data_len) {
			off -= m->data_len;
			continue;
		}
		n = RTE_MIN(left, (uint32_t)m->data_len - off);
		crc = droce_crc32(crc, rte_pktmbuf_mtod_offset(m, const uint8_t *,
							       off), n);
		left -= n;
		off = 0;
	}
	return left == 0 ? crc : 0;
}
