/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Address handles: a path, resolved when the handle is made, that UD
 * WRs name. The handle is the application's; the engine lcore of its
 * device fills it in and reads it.
 */

#include <errno.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "droce_engine_pvt.h"

/* How long the making of a handle waits for its MAC, as rdma-core's
 * neighbour lookup does. */
#define AH_RESOLVE_MS 3000

struct ah_args {
	struct droce_ah_eng *ah;
	const struct ibv_ah_attr *attr;
};

static int
ah_set(struct droce_dev *dev, void *arg)
{
	struct ah_args *a = arg;

	return -droce_path_set(dev, &a->ah->path, a->attr,
			       rte_get_tsc_cycles());
}

static int
ah_ready(struct droce_dev *dev, void *arg)
{
	struct ah_args *a = arg;

	return droce_path_ready(dev, &a->ah->path, rte_get_tsc_cycles()) ?
		0 : -EAGAIN;
}

struct droce_ah_eng *
droce_ah_create(struct droce_dev *dev, const struct ibv_ah_attr *attr)
{
	struct droce_ah_eng *ah;
	struct ah_args a;
	uint64_t end;
	int ret;

	ah = rte_zmalloc("droce_ah", sizeof(*ah), RTE_CACHE_LINE_SIZE);
	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ah->dev = dev;
	a.ah = ah;
	a.attr = attr;
	ret = droce_dev_call(dev, ah_set, &a);
	end = rte_get_tsc_cycles() + droce_clock_hz() * AH_RESOLVE_MS / 1000;
	while (ret == 0 && droce_dev_call(dev, ah_ready, &a) != 0) {
		if (rte_get_tsc_cycles() > end) {
			ret = -EHOSTUNREACH;
			break;
		}
		rte_delay_us_sleep(1000);
	}
	if (ret != 0) {
		rte_free(ah);
		errno = -ret;
		return NULL;
	}
	return ah;
}

void
droce_ah_mac(const struct droce_ah_eng *ah, uint8_t mac[6])
{
	memcpy(mac, &ah->path.dmac, 6);
}

void
droce_ah_destroy(struct droce_ah_eng *ah)
{
	rte_free(ah);
}
