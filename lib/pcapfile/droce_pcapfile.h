/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_PCAPFILE_H
#define DROCE_PCAPFILE_H

/**
 * @file
 * Classic libpcap files, read and written without libpcap: enough for
 * droce's tools and tests to exchange Ethernet captures with tshark,
 * scapy and Wireshark. Both byte orders and both timestamp resolutions
 * are read; files are written little-endian with microseconds.
 */

#include <stdint.h>
#include <stdio.h>

/** Link type of Ethernet captures. */
#define DROCE_PCAP_LINKTYPE_ETHERNET 1

/** Largest frame kept in a record. */
#define DROCE_PCAP_SNAPLEN 65535

/** An open capture file. */
struct droce_pcapfile {
	FILE *fp;
	int swapped;            /**< file byte order differs from ours */
	int nsec;               /**< timestamps in nanoseconds */
	uint32_t linktype;
};

/** One record. */
struct droce_pcap_rec {
	uint64_t ts_ns;         /**< capture time, ns since the epoch */
	uint32_t caplen;        /**< bytes stored */
	uint32_t origlen;       /**< bytes on the wire */
};

/**
 * Open @p path for reading and check its header.
 * @return 0, or -errno (-EINVAL: not a pcap file).
 */
int droce_pcap_open_read(struct droce_pcapfile *pf, const char *path);

/**
 * Read the next record into @p buf.
 * @return 1 with a record, 0 at the end, or -errno (-EINVAL: corrupt,
 * -ENOSPC: record larger than @p cap).
 */
int droce_pcap_read(struct droce_pcapfile *pf, struct droce_pcap_rec *rec,
		    uint8_t *buf, uint32_t cap);

/**
 * Create @p path and write a header for Ethernet frames.
 * @return 0 or -errno.
 */
int droce_pcap_open_write(struct droce_pcapfile *pf, const char *path);

/**
 * Append one frame.
 * @return 0 or -errno.
 */
int droce_pcap_write(struct droce_pcapfile *pf, uint64_t ts_ns,
		     const void *frame, uint32_t len);

/** Close @p pf. @return 0 or -errno (a write that failed late). */
int droce_pcap_close(struct droce_pcapfile *pf);

#endif /* DROCE_PCAPFILE_H */
