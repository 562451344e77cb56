/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Memory region keys. A key's low DROCE_MR_BITS bits index the device's MR
 * table; the rest are random for every registration, so keys are unique
 * on the device and cannot be guessed from one another. The table is the
 * engine lcore's: registration goes through a control call.
 */

#include <errno.h>

#include <rte_random.h>

#include "droce_engine_pvt.h"

static uint32_t
fresh_key(uint32_t slot)
{
	uint32_t r;

	do {
		r = (uint32_t)rte_rand() << DROCE_MR_BITS;
	} while (r == 0);
	return r | slot;
}

static int
mr_insert(struct droce_dev *dev, void *arg)
{
	struct droce_mr_eng *mr = arg;
	uint32_t i, slot;

	/* start where the last search ended: slots are not reused at once */
	for (i = 0; i < DROCE_MAX_MR; i++) {
		slot = (uint32_t)(dev->key_rand + i) & (DROCE_MAX_MR - 1);
		if (dev->mrs[slot] == NULL)
			break;
	}
	if (i == DROCE_MAX_MR)
		return -ENOMEM;
	dev->key_rand = slot + 1;
	mr->lkey = fresh_key(slot);
	do {
		mr->rkey = fresh_key(slot);
	} while (mr->rkey == mr->lkey);
	dev->mrs[slot] = mr;
	return 0;
}

int
droce_mr_register(struct droce_dev *dev, struct droce_mr_eng *mr)
{
	return droce_dev_call(dev, mr_insert, mr);
}

static int
mr_remove(struct droce_dev *dev, void *arg)
{
	struct droce_mr_eng *mr = arg;
	uint32_t slot = mr->lkey & (DROCE_MAX_MR - 1);

	if (dev->mrs[slot] == mr)
		dev->mrs[slot] = NULL;
	return 0;
}

void
droce_mr_unregister(struct droce_dev *dev, struct droce_mr_eng *mr)
{
	droce_dev_call(dev, mr_remove, mr);
}
