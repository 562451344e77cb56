/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * RSS: a device with several engine lcores on a port that spreads frames
 * by the Toeplitz hash of their addresses and UDP ports has the port do
 * it under droce's key, entry i of its redirection table pointing at the
 * queue of shard i modulo the shards (droce_port.c,
 * droce_port_configure()).
 *
 * Where a frame lands is then the sender's choice: the destination port
 * is 4791 and the addresses are the path's, but the source port is free.
 * A connected QP picks the one, near its usual hash of the two QPNs
 * (droce_udp_sport()), whose hash lands on the shard that owns the peer
 * QP at the other end, assuming that end a droce device too with as
 * many lcores on a like port: that shard is the peer QPN's slot modulo
 * the shards. Its frames then reach the owning lcore with no hand-off
 * between lcores, and the peer's reach it alike. Any other peer chooses
 * its own ports, and its frames are handed off as without RSS.
 */

#include <rte_thash.h>

#include "droce_engine_pvt.h"

const uint8_t droce_rss_key[DROCE_RSS_KEY_LEN] = {
	/* the Toeplitz key most NICs start with */
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* Big-endian bytes @p b as a word of host order. */
static inline uint32_t
word(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

uint32_t
droce_rss_hash(const uint8_t sgid[16], const uint8_t dgid[16],
	       bool ipv4, uint16_t sport)
{
	/* rte_softrss()'s tuple: source address, destination address,
	 * source port << 16 | destination port, in words of host order */
	uint32_t t[RTE_THASH_V6_L4_LEN];
	unsigned int i, n = 0;

	if (ipv4) {
		t[n++] = word(sgid + 12);
		t[n++] = word(dgid + 12);
	} else {
		for (i = 0; i < 4; i++)
			t[n++] = word(sgid + 4 * i);
		for (i = 0; i < 4; i++)
			t[n++] = word(dgid + 4 * i);
	}
	t[n++] = (uint32_t)sport << 16 | DROCE_UDP_PORT;
	return rte_softrss(t, n, droce_rss_key);
}

uint16_t
droce_rss_sport(const struct droce_dev *dev, const struct droce_path *path,
		uint32_t src_qpn, uint32_t dst_qpn)
{
	uint16_t base = droce_udp_sport(src_qpn, dst_qpn);
	uint32_t shard, h, i;

	if (!dev->rss || dev->nshards < 2 || dst_qpn == DROCE_GSI_QPN)
		return base;
	shard = DROCE_QPN_SLOT(dst_qpn) % dev->nshards;
	/* about one in nshards ports does: the first few tries find one */
	for (i = 0; i < 0x4000; i++) {
		uint16_t sport = (uint16_t)(0xc000 | ((base + i) & 0x3fff));

		h = droce_rss_hash(path->sgid, path->dgid,
				   path->ip_version == 4, sport);
		if (h % dev->rss_reta_size % dev->nshards == shard)
			return sport;
	}
	return base;
}
