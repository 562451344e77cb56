/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_MIRROR_H
#define DROCE_MIRROR_H

#include "droce_engine_pvt.h"

/*
 * Packet capture mirror (lib/engine/droce_mirror.c).
 */

int droce_mirror_open(const char *path, struct droce_pcap_mirror **mirror);
void droce_mirror_frame(struct droce_pcap_mirror *mirror,
			const struct rte_mbuf *m);
void droce_mirror_close(struct droce_pcap_mirror *mirror);

#endif /* DROCE_MIRROR_H */
