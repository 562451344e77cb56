/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#include <errno.h>
#include <string.h>

#include "droce_pcapfile.h"

#define MAGIC_USEC 0xa1b2c3d4u
#define MAGIC_NSEC 0xa1b23c4du

struct file_hdr {
	uint32_t magic;
	uint16_t version_major;
	uint16_t version_minor;
	int32_t thiszone;
	uint32_t sigfigs;
	uint32_t snaplen;
	uint32_t linktype;
};

struct rec_hdr {
	uint32_t ts_sec;
	uint32_t ts_frac;
	uint32_t caplen;
	uint32_t origlen;
};

static uint32_t
fix32(const struct droce_pcapfile *pf, uint32_t v)
{
	return pf->swapped ? __builtin_bswap32(v) : v;
}

int
droce_pcap_open_read(struct droce_pcapfile *pf, const char *path)
{
	struct file_hdr h;

	memset(pf, 0, sizeof(*pf));
	pf->fp = fopen(path, "rb");
	if (pf->fp == NULL)
		return -errno;
	if (fread(&h, sizeof(h), 1, pf->fp) != 1)
		goto bad;
	if (h.magic == MAGIC_USEC || h.magic == MAGIC_NSEC) {
		pf->swapped = 0;
	} else if (h.magic == __builtin_bswap32(MAGIC_USEC) ||
		   h.magic == __builtin_bswap32(MAGIC_NSEC)) {
		pf->swapped = 1;
	} else {
		goto bad;
	}
	pf->nsec = fix32(pf, h.magic) == MAGIC_NSEC;
	pf->linktype = fix32(pf, h.linktype) & 0xffff;
	return 0;
bad:
	fclose(pf->fp);
	pf->fp = NULL;
	return -EINVAL;
}

int
droce_pcap_read(struct droce_pcapfile *pf, struct droce_pcap_rec *rec,
		uint8_t *buf, uint32_t cap)
{
	struct rec_hdr h;
	size_t n = fread(&h, 1, sizeof(h), pf->fp);

	if (n == 0 && feof(pf->fp))
		return 0;
	if (n != sizeof(h))
		return ferror(pf->fp) ? -EIO : -EINVAL;
	rec->caplen = fix32(pf, h.caplen);
	rec->origlen = fix32(pf, h.origlen);
	rec->ts_ns = (uint64_t)fix32(pf, h.ts_sec) * 1000000000u +
		(uint64_t)fix32(pf, h.ts_frac) * (pf->nsec ? 1 : 1000);
	if (rec->caplen > DROCE_PCAP_SNAPLEN * 4u)
		return -EINVAL;
	if (rec->caplen > cap)
		return -ENOSPC;
	if (fread(buf, 1, rec->caplen, pf->fp) != rec->caplen)
		return ferror(pf->fp) ? -EIO : -EINVAL;
	return 1;
}

int
droce_pcap_open_write(struct droce_pcapfile *pf, const char *path)
{
	const struct file_hdr h = {
		.magic = MAGIC_USEC,
		.version_major = 2,
		.version_minor = 4,
		.snaplen = DROCE_PCAP_SNAPLEN,
		.linktype = DROCE_PCAP_LINKTYPE_ETHERNET,
	};

	memset(pf, 0, sizeof(*pf));
	pf->fp = fopen(path, "wb");
	if (pf->fp == NULL)
		return -errno;
	pf->linktype = DROCE_PCAP_LINKTYPE_ETHERNET;
	if (fwrite(&h, sizeof(h), 1, pf->fp) != 1) {
		int ret = -errno;

		fclose(pf->fp);
		pf->fp = NULL;
		return ret;
	}
	return 0;
}

int
droce_pcap_write(struct droce_pcapfile *pf, uint64_t ts_ns, const void *frame,
		 uint32_t len)
{
	struct rec_hdr h = {
		.ts_sec = (uint32_t)(ts_ns / 1000000000u),
		.ts_frac = (uint32_t)(ts_ns % 1000000000u / 1000),
		.caplen = len,
		.origlen = len,
	};

	if (len > DROCE_PCAP_SNAPLEN)
		return -EINVAL;
	if (fwrite(&h, sizeof(h), 1, pf->fp) != 1 ||
	    fwrite(frame, 1, len, pf->fp) != len)
		return -EIO;
	return 0;
}

int
droce_pcap_close(struct droce_pcapfile *pf)
{
	int ret = 0;

	if (pf->fp != NULL && fclose(pf->fp) != 0)
		ret = -errno;
	pf->fp = NULL;
	return ret;
}
