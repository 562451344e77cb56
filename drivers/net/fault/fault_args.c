/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * net_fault devargs: every key is known, given at most once and in
 * range, or the probe fails with -EINVAL.
 *
 *   port=NAME      the port to wrap (required)
 *   drop=P, dup=P, reorder=P, delay=P, corrupt=P
 *                  probability of each fault per frame, 0 to 1 (0)
 *   delay_us=N     how long a delayed frame is held (needed by delay=)
 *   reorder_us=N   how long a reordered frame waits for the next one
 *                  before it leaves alone (100)
 *   seed=N         of the per-queue PRNGs, 64-bit (1)
 *   dir=rx|tx|both where the faults apply (both)
 *
 *   switch=NAME    the port is one of switch NAME's (fault_switch.c):
 *                  it sends to the switch's other ports and receives
 *                  from them, not through the wrapped port
 *   rate_mbps=N, rate_pps=N
 *                  the speed of the line out of its switch queue, in
 *                  Mb/s or frames/s (none: frames leave at once)
 *   queue=N        what the queue holds before it drops at its tail:
 *                  bytes, frames with rate_pps= (1 MiB, 1024 frames)
 *   kmin=N,kmax=N,pmax=P
 *                  RED: ECN-capable frames that find more than kmin
 *                  ahead of them are marked CE with a chance rising to
 *                  pmax at kmax, every one beyond (no marking)
 *
 *   dma=0|1        the port sends only from memory mapped for its DMA,
 *                  as a NIC behind an IOMMU does: DPDK's own memory and
 *                  what rte_dev_dma_map() mapped for it (fault_dma.c);
 *                  a frame with bytes anywhere else is dropped (0)
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_kvargs.h>
#include <rte_string_fns.h>

#include "fault_pvt.h"

typedef int (*fault_arg_parse_t)(const char *key, const char *value,
				 struct fault_params *p, int index);

struct fault_arg {
	const char *key;
	fault_arg_parse_t parse;
	int index;		/**< which probability, for fault_arg_prob
				 *   (FAULT_KIND_MAX: pmax), rate or size */
};

static int
fault_arg_port(const char *key, const char *value, struct fault_params *p,
	       int index __rte_unused)
{
	if (value[0] == '\0' || strlen(value) >= sizeof(p->port)) {
		FAULT_LOG(ERR, "%s='%s': not a port name", key, value);
		return -EINVAL;
	}
	rte_strlcpy(p->port, value, sizeof(p->port));
	return 0;
}

static int
fault_arg_prob(const char *key, const char *value, struct fault_params *p,
	       int index)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	/* written this way round, NaN fails the range test too */
	if (value[0] == '\0' || isspace((unsigned char)value[0]) ||
	    *end != '\0' || errno != 0 || !(v >= 0.0 && v <= 1.0)) {
		FAULT_LOG(ERR, "%s='%s': want a probability in [0, 1]",
			  key, value);
		return -EINVAL;
	}
	/* (pmax= is a probability too, of RED's) */
	if (index == FAULT_KIND_MAX)
		p->pmax = v;
	else
		p->prob[index] = v;
	return 0;
}

static int
fault_arg_u64(const char *value, uint64_t max, int base, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)value[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(value, &end, base);
	if (*end != '\0' || errno != 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int
fault_arg_us(const char *key, const char *value, uint64_t *us)
{
	if (fault_arg_u64(value, FAULT_US_MAX, 10, us) != 0) {
		FAULT_LOG(ERR, "%s='%s': want microseconds, 0 to %u",
			  key, value, FAULT_US_MAX);
		return -EINVAL;
	}
	return 0;
}

static int
fault_arg_delay_us(const char *key, const char *value, struct fault_params *p,
		   int index __rte_unused)
{
	return fault_arg_us(key, value, &p->delay_us);
}

static int
fault_arg_reorder_us(const char *key, const char *value,
		     struct fault_params *p, int index __rte_unused)
{
	return fault_arg_us(key, value, &p->reorder_us);
}

static int
fault_arg_seed(const char *key, const char *value, struct fault_params *p,
	       int index __rte_unused)
{
	if (fault_arg_u64(value, UINT64_MAX, 0, &p->seed) != 0) {
		FAULT_LOG(ERR, "%s='%s': want an unsigned 64-bit integer",
			  key, value);
		return -EINVAL;
	}
	return 0;
}

static int
fault_arg_dir(const char *key, const char *value, struct fault_params *p,
	      int index __rte_unused)
{
	if (strcmp(value, "rx") == 0)
		p->dir = FAULT_DIR_BIT(FAULT_RX);
	else if (strcmp(value, "tx") == 0)
		p->dir = FAULT_DIR_BIT(FAULT_TX);
	else if (strcmp(value, "both") == 0)
		p->dir = FAULT_DIR_BIT(FAULT_RX) | FAULT_DIR_BIT(FAULT_TX);
	else {
		FAULT_LOG(ERR, "%s='%s': want rx, tx or both", key, value);
		return -EINVAL;
	}
	return 0;
}

static int
fault_arg_switch(const char *key, const char *value, struct fault_params *p,
		 int index __rte_unused)
{
	if (value[0] == '\0' || strlen(value) >= sizeof(p->sw)) {
		FAULT_LOG(ERR, "%s='%s': want a name of 1 to %zu characters",
			  key, value, sizeof(p->sw) - 1);
		return -EINVAL;
	}
	rte_strlcpy(p->sw, value, sizeof(p->sw));
	return 0;
}

static int
fault_arg_rate(const char *key, const char *value, struct fault_params *p,
	       int index)
{
	uint64_t max = index ? FAULT_RATE_PPS_MAX : FAULT_RATE_MBPS_MAX;

	if (p->rate != 0) {
		FAULT_LOG(ERR, "%s: rate_mbps= or rate_pps=, not both", key);
		return -EINVAL;
	}
	if (fault_arg_u64(value, max, 10, &p->rate) != 0 || p->rate == 0) {
		FAULT_LOG(ERR, "%s='%s': want 1 to %" PRIu64, key, value, max);
		return -EINVAL;
	}
	p->rate_pps = index != 0;
	return 0;
}

/* queue=, kmin=, kmax=: in the unit of the rate, checked once it is known */
static int
fault_arg_size(const char *key, const char *value, struct fault_params *p,
	       int index)
{
	uint64_t *v = index == 0 ? &p->queue : index == 1 ? &p->kmin :
		&p->kmax;

	if (fault_arg_u64(value, FAULT_QUEUE_MAX, 10, v) != 0) {
		FAULT_LOG(ERR, "%s='%s': want 0 to %u (bytes, or frames with "
			  "rate_pps=)", key, value, FAULT_QUEUE_MAX);
		return -EINVAL;
	}
	return 0;
}

/* What switch=, rate and RED settings need of each other. */
static int
fault_check_switch(struct fault_params *p)
{
	bool shaped = p->queue != 0 || p->kmin != 0 || p->kmax != 0 ||
		p->pmax != 0.0;

	if (p->sw[0] == '\0' && (p->rate != 0 || shaped)) {
		FAULT_LOG(ERR, "rate_mbps=, rate_pps=, queue=, kmin=, kmax= "
			  "and pmax= shape a switch's port: they need switch=");
		return -EINVAL;
	}
	if (p->rate == 0 && shaped) {
		FAULT_LOG(ERR, "queue=, kmin=, kmax= and pmax= need a rate "
			  "(rate_mbps= or rate_pps=)");
		return -EINVAL;
	}
	if (p->rate == 0)
		return 0;
	if (p->queue == 0)
		p->queue = p->rate_pps ? FAULT_QUEUE_FRAMES_DEFAULT :
			FAULT_QUEUE_BYTES_DEFAULT;
	if (p->kmax != 0 && (p->kmin > p->kmax || p->kmax > p->queue)) {
		FAULT_LOG(ERR, "want kmin <= kmax <= queue (%" PRIu64 ", %"
			  PRIu64 ", %" PRIu64 ")", p->kmin, p->kmax, p->queue);
		return -EINVAL;
	}
	if (p->kmax == 0 && (p->kmin != 0 || p->pmax != 0.0)) {
		FAULT_LOG(ERR, "kmin= and pmax= need kmax=");
		return -EINVAL;
	}
	return 0;
}

static int
fault_arg_dma(const char *key, const char *value, struct fault_params *p,
	      int index __rte_unused)
{
	if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
		FAULT_LOG(ERR, "%s='%s': want 0 or 1", key, value);
		return -EINVAL;
	}
	p->dma = value[0] == '1';
	return 0;
}

static const struct fault_arg fault_args[] = {
	{ "port", fault_arg_port, 0 },
	{ "drop", fault_arg_prob, FAULT_DROP },
	{ "dup", fault_arg_prob, FAULT_DUP },
	{ "reorder", fault_arg_prob, FAULT_REORDER },
	{ "delay", fault_arg_prob, FAULT_DELAY },
	{ "delay_us", fault_arg_delay_us, 0 },
	{ "reorder_us", fault_arg_reorder_us, 0 },
	{ "corrupt", fault_arg_prob, FAULT_CORRUPT },
	{ "ce", fault_arg_prob, FAULT_CE },
	{ "seed", fault_arg_seed, 0 },
	{ "dir", fault_arg_dir, 0 },
	{ "switch", fault_arg_switch, 0 },
	{ "rate_mbps", fault_arg_rate, 0 },
	{ "rate_pps", fault_arg_rate, 1 },
	{ "queue", fault_arg_size, 0 },
	{ "kmin", fault_arg_size, 1 },
	{ "kmax", fault_arg_size, 2 },
	{ "pmax", fault_arg_prob, FAULT_KIND_MAX },
	{ "dma", fault_arg_dma, 0 },
};

static const struct fault_arg *
fault_arg_find(const char *key)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(fault_args); i++)
		if (strcmp(fault_args[i].key, key) == 0)
			return &fault_args[i];
	return NULL;
}

int
droce_fault_parse_args(const char *args, struct fault_params *p)
{
	struct rte_kvargs *kvlist;
	const struct fault_arg *arg;
	unsigned int i;
	int ret = 0;

	memset(p, 0, sizeof(*p));
	p->seed = 1;
	p->reorder_us = FAULT_REORDER_US_DEFAULT;
	p->dir = FAULT_DIR_BIT(FAULT_RX) | FAULT_DIR_BIT(FAULT_TX);

	if (args == NULL)
		args = "";
	kvlist = rte_kvargs_parse(args, NULL);
	if (kvlist == NULL) {
		FAULT_LOG(ERR, "cannot parse '%s' as key=value,...", args);
		return -EINVAL;
	}
	for (i = 0; i < kvlist->count && ret == 0; i++) {
		const struct rte_kvargs_pair *kv = &kvlist->pairs[i];

		arg = fault_arg_find(kv->key);
		if (arg == NULL) {
			FAULT_LOG(ERR, "unknown key '%s'", kv->key);
			ret = -EINVAL;
		} else if (kv->value == NULL) {
			FAULT_LOG(ERR, "%s: no value", kv->key);
			ret = -EINVAL;
		} else if (rte_kvargs_count(kvlist, kv->key) > 1) {
			FAULT_LOG(ERR, "%s given more than once", kv->key);
			ret = -EINVAL;
		} else {
			ret = arg->parse(kv->key, kv->value, p, arg->index);
		}
	}
	rte_kvargs_free(kvlist);
	if (ret != 0)
		return ret;

	if (p->port[0] == '\0') {
		FAULT_LOG(ERR, "port= is required: the name of the port to wrap");
		return -EINVAL;
	}
	if (p->prob[FAULT_DELAY] > 0.0 && p->delay_us == 0) {
		FAULT_LOG(ERR, "delay= needs delay_us= greater than 0");
		return -EINVAL;
	}
	return fault_check_switch(p);
}
