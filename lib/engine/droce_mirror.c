/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Mirror of every frame the engine sends and receives into a pcap file
 * (the [engine] pcap setting, or switched on and off at run time), for
 * droce-dump and tshark. A debugging aid: it takes a lock and writes
 * through stdio.
 */

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <rte_spinlock.h>

#include <droce_pcapfile.h>

#include "droce_engine_pvt.h"
#include "droce_mirror.h"

struct droce_pcap_mirror {
	rte_spinlock_t lock;
	struct droce_pcapfile file;
	uint8_t buf[DROCE_PCAP_SNAPLEN];
};

int
droce_mirror_open(const char *path, struct droce_pcap_mirror **mirror)
{
	struct droce_pcap_mirror *mi = calloc(1, sizeof(*mi));
	int ret;

	if (mi == NULL)
		return -ENOMEM;
	rte_spinlock_init(&mi->lock);
	ret = droce_pcap_open_write(&mi->file, path);
	if (ret < 0) {
		free(mi);
		return ret;
	}
	*mirror = mi;
	return 0;
}

void
droce_mirror_frame(struct droce_pcap_mirror *mi, const struct rte_mbuf *m)
{
	uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(m),
			       (uint32_t)DROCE_PCAP_SNAPLEN);
	const void *data;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	rte_spinlock_lock(&mi->lock);
	data = rte_pktmbuf_read(m, 0, len, mi->buf);
	if (data != NULL)
		droce_pcap_write(&mi->file, (uint64_t)ts.tv_sec * 1000000000u +
				 (uint64_t)ts.tv_nsec, data, len);
	rte_spinlock_unlock(&mi->lock);
}

void
droce_mirror_close(struct droce_pcap_mirror *mi)
{
	rte_spinlock_lock(&mi->lock);
	droce_pcap_close(&mi->file);
	rte_spinlock_unlock(&mi->lock);
	free(mi);
}

/*
 * Run time switching. The data path reads sh->mirror on the engine lcore
 * only, so the pointer changes there too (droce_shard_call()) and the
 * frames need no lock to see it; the file is opened and closed by the
 * caller, away from the lcore.
 */

static int
mirror_busy(struct droce_shard *sh, void *unused)
{
	RTE_SET_USED(unused);
	return sh->mirror != NULL ? -EBUSY : 0;
}

/* Swap sh->mirror and *arg: NULL for a mirror to start, or the reverse. */
static int
mirror_swap(struct droce_shard *sh, void *arg)
{
	struct droce_pcap_mirror **mi = arg;
	struct droce_pcap_mirror *old = sh->mirror;

	if (*mi != NULL && old != NULL)
		return -EBUSY;
	if (*mi == NULL && old == NULL)
		return -ENOENT;
	sh->mirror = *mi;
	*mi = old;
	return 0;
}

/* On each shard of a device but the primary: sh->mirror becomes @p arg. */
static int
mirror_set(struct droce_shard *sh, void *arg)
{
	sh->mirror = arg;
	return 0;
}

static void
shards_mirror(struct droce_dev *dev, struct droce_pcap_mirror *mi)
{
	uint32_t i;

	for (i = 1; i < dev->nshards; i++)
		droce_shard_call(dev->shards[i], mirror_set, mi);
}

/* (the primary's mirror says the device's: its other shards follow it) */
int
droce_dev_mirror_start(struct droce_dev *dev, const char *path)
{
	struct droce_shard *sh = dev->shards[0];
	struct droce_pcap_mirror *mi, *opened;
	int ret;

	/* a busy device leaves the file alone */
	ret = droce_shard_call(sh, mirror_busy, NULL);
	if (ret < 0)
		return ret;
	ret = droce_mirror_open(path, &mi);
	if (ret < 0)
		return ret;
	opened = mi;
	ret = droce_shard_call(sh, mirror_swap, &mi);
	if (ret < 0)
		droce_mirror_close(opened);
	else
		shards_mirror(dev, opened);
	return ret;
}

int
droce_dev_mirror_stop(struct droce_dev *dev)
{
	struct droce_shard *sh = dev->shards[0];
	struct droce_pcap_mirror *mi = NULL;
	int ret;

	shards_mirror(dev, NULL);
	ret = droce_shard_call(sh, mirror_swap, &mi);
	if (ret < 0)
		return ret;
	droce_mirror_close(mi);
	return 0;
}
