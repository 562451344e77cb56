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

uint32_t
droce_icrc_calc_inplace(void *l3, uint32_t len)
{
	uint8_t *ip = l3;
	uint8_t *lrh = ip - DROCE_ICRC_LRH_LEN;
	bool v6 = (ip[0] >> 4) == 6;
	uint8_t *udp = ip + (v6 ? 40 : (ip[0] & 0xf) * 4);
	uint8_t save_lrh[DROCE_ICRC_LRH_LEN], save_ip[5], save_udp[2];
	uint8_t save_bth;
	uint32_t crc;

	/* the LRH's ones go in front, the variant fields become ones, one
	 * pass covers it all, then every byte is put back */
	memcpy(save_lrh, lrh, sizeof(save_lrh));
	memset(lrh, 0xff, DROCE_ICRC_LRH_LEN);
	if (v6) {
		memcpy(save_ip, ip, 4);
		save_ip[4] = ip[7];
		ip[0] |= 0x0f;          /* traffic class, flow label */
		ip[1] = 0xff;
		ip[2] = 0xff;
		ip[3] = 0xff;
		ip[7] = 0xff;           /* hop limit */
	} else {
		save_ip[0] = ip[1];
		save_ip[1] = ip[8];
		save_ip[2] = ip[10];
		save_ip[3] = ip[11];
		ip[1] = 0xff;           /* TOS */
		ip[8] = 0xff;           /* TTL */
		ip[10] = 0xff;          /* header checksum */
		ip[11] = 0xff;
	}
	memcpy(save_udp, udp + 6, 2);
	udp[6] = 0xff;                  /* UDP checksum */
	udp[7] = 0xff;
	save_bth = udp[8 + 4];
	udp[8 + 4] = 0xff;              /* BTH FECN, BECN, reserved */

	crc = droce_crc32(0, lrh, DROCE_ICRC_LRH_LEN + len);

	udp[8 + 4] = save_bth;
	memcpy(udp + 6, save_udp, 2);
	if (v6) {
		memcpy(ip, save_ip, 4);
		ip[7] = save_ip[4];
	} else {
		ip[1] = save_ip[0];
		ip[8] = save_ip[1];
		ip[10] = save_ip[2];
		ip[11] = save_ip[3];
	}
	memcpy(lrh, save_lrh, sizeof(save_lrh));
	return crc;
}

uint32_t
droce_icrc_calc_mbuf(const struct rte_mbuf *m, uint32_t l3_off, uint32_t len)
{
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off);
	uint32_t off = l3_off + droce_icrc_hdr_len(l3);
	uint32_t left = len - (off - l3_off);
	uint32_t crc = droce_icrc_start(l3);

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
