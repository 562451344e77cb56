/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * net_fault switches: fault ports given the same switch=NAME in one
 * process send to each other as through an Ethernet switch, by
 * destination address (learnt from what each port sends; broadcast,
 * multicast and unknown destinations go to every other port), each
 * port's frames waiting in a queue of its own in front of it.
 *
 * A port's queue may be a bottleneck: rate_mbps= (or rate_pps=) is the
 * speed of its line, queue= how much it holds before it drops at its
 * tail, and kmin=, kmax=, pmax= mark ECN-capable frames CE the way RED
 * does on a switch with ECN (DCQCN's switch settings). Several devices
 * sending to one port meet there: that is incast. The fast path is in
 * fault_rxtx.c; this is setting switches up and taking them down.
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_spinlock.h>
#include <rte_string_fns.h>

#include "fault_pvt.h"

/* Slots of a queue without a rate: it is never a bottleneck. */
#define FAULT_SWITCH_SLOTS 4096
/* Most slots a queue has: a byte limit allows this many small frames. */
#define FAULT_SWITCH_SLOTS_MAX 65536
/* The smallest frame, for counting the slots a byte limit needs. */
#define FAULT_SWITCH_FRAME_MIN 64

static rte_spinlock_t fault_switch_lock = RTE_SPINLOCK_INITIALIZER;
static struct fault_switch *fault_switches[FAULT_SWITCHES];

static struct fault_switch *
fault_switch_get(const char *name)
{
	struct fault_switch **free_slot = NULL;
	unsigned int i;

	for (i = 0; i < FAULT_SWITCHES; i++) {
		if (fault_switches[i] == NULL) {
			if (free_slot == NULL)
				free_slot = &fault_switches[i];
		} else if (strcmp(fault_switches[i]->name, name) == 0) {
			return fault_switches[i];
		}
	}
	if (free_slot == NULL)
		return NULL;
	*free_slot = rte_zmalloc("net_fault_switch", sizeof(**free_slot), 0);
	if (*free_slot != NULL)
		rte_strlcpy((*free_slot)->name, name, sizeof((*free_slot)->name));
	return *free_slot;
}

/* The slots a queue of these settings needs (a power of two). */
static unsigned int
fault_swport_slots(const struct fault_params *p)
{
	uint64_t n;

	if (p->rate == 0)
		return FAULT_SWITCH_SLOTS;
	n = p->rate_pps ? p->queue : p->queue / FAULT_SWITCH_FRAME_MIN;
	n = RTE_MIN(n + 64, (uint64_t)FAULT_SWITCH_SLOTS_MAX);
	return rte_align32pow2((uint32_t)n);
}

/* The line and RED settings of @p p, in TSC cycles of backlog. */
static void
fault_swport_line(struct fault_swport *sp, const struct fault_params *p)
{
	double hz = (double)rte_get_tsc_hz();

	if (p->rate == 0)
		return;
	sp->per_frame = p->rate_pps;
	sp->cycles_per_unit = p->rate_pps ? hz / (double)p->rate :
		hz * 8.0 / ((double)p->rate * 1e6);
	sp->limit = (uint64_t)((double)p->queue * sp->cycles_per_unit);
	sp->kmin = (uint64_t)((double)p->kmin * sp->cycles_per_unit);
	sp->kmax = (uint64_t)((double)p->kmax * sp->cycles_per_unit);
	sp->pmax = (uint64_t)(p->pmax * 0x1p53);
}

/* The ring of receive queue @p q of switch port @p sp. */
static struct rte_ring *
fault_swq_ring(const struct fault_swport *sp, const struct fault_params *p,
	       unsigned int q, int socket_id)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "fsw_%s_%u_%u", sp->sw->name, sp->index,
		 q);
	return rte_ring_create_elem(name, sizeof(struct fault_slot),
				    fault_swport_slots(p), socket_id,
				    RING_F_SC_DEQ);
}

static struct fault_swport *
fault_swport_create(struct fault_switch *sw, const struct fault_params *p,
		    int socket_id)
{
	struct fault_swport *sp;

	sp = rte_zmalloc_socket("net_fault_swport", sizeof(*sp),
				RTE_CACHE_LINE_SIZE, socket_id);
	if (sp == NULL)
		return NULL;
	sp->sw = sw;
	sp->index = sw->nb_ports;
	sp->nb_rxq = 1;
	sp->rxq[0].ring = fault_swq_ring(sp, p, 0, socket_id);
	if (sp->rxq[0].ring == NULL) {
		rte_free(sp);
		return NULL;
	}
	fault_swport_line(sp, p);
	return sp;
}

int
droce_fault_switch_rxq(struct fault_port *fp, uint16_t queue_id,
		       int socket_id)
{
	struct fault_swport *sp = fp->swport;
	struct rte_ring *r;

	if (queue_id >= FAULT_SWITCH_RXQ)
		return -EINVAL;
	if (sp->rxq[queue_id].ring != NULL)
		return 0;
	r = fault_swq_ring(sp, &fp->params, queue_id, socket_id);
	if (r == NULL)
		return -ENOMEM;
	/* the other ports' tx reads it from now on */
	__atomic_store_n(&sp->rxq[queue_id].ring, r, __ATOMIC_RELEASE);
	return 0;
}

int
droce_fault_switch_rss(struct fault_port *fp,
		       const struct rte_eth_rss_conf *conf, uint64_t mq,
		       uint16_t nb_rxq)
{
	/* what NICs have as their default key: any other is as good */
	static const uint8_t default_key[FAULT_RSS_KEY_LEN] = {
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
		0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
		0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
		0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
		0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	};
	struct fault_swport *sp = fp->swport;
	uint64_t hf = (mq & RTE_ETH_MQ_RX_RSS_FLAG) ? conf->rss_hf : 0;

	if (hf & ~(uint64_t)FAULT_RSS_OFFLOADS)
		return -EINVAL;
	if (conf->rss_key != NULL && conf->rss_key_len != FAULT_RSS_KEY_LEN)
		return -EINVAL;
	memcpy(sp->rss_key, conf->rss_key != NULL ? conf->rss_key :
	       default_key, FAULT_RSS_KEY_LEN);
	if (nb_rxq == 0)
		nb_rxq = 1;
	__atomic_store_n(&sp->nb_rxq, RTE_MIN(nb_rxq, FAULT_SWITCH_RXQ),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&sp->rss_hf, hf, __ATOMIC_RELEASE);
	return 0;
}

static void
fault_switch_free(struct fault_switch *sw)
{
	unsigned int i, q;

	for (i = 0; i < sw->nb_ports; i++) {
		droce_fault_swport_drain(sw->ports[i]);
		for (q = 0; q < FAULT_SWITCH_RXQ; q++)
			rte_ring_free(sw->ports[i]->rxq[q].ring);
		rte_free(sw->ports[i]);
	}
	for (i = 0; i < FAULT_SWITCHES; i++)
		if (fault_switches[i] == sw)
			fault_switches[i] = NULL;
	rte_free(sw);
}

int
droce_fault_switch_join(struct fault_port *fp, int socket_id)
{
	struct fault_switch *sw;
	struct fault_swport *sp;
	int ret = 0;

	rte_spinlock_lock(&fault_switch_lock);
	sw = fault_switch_get(fp->params.sw);
	if (sw == NULL) {
		ret = -ENOSPC;
		goto out;
	}
	if (sw->nb_ports == FAULT_SWITCH_PORTS) {
		ret = -ENOSPC;
		goto out;
	}
	sp = fault_swport_create(sw, &fp->params, socket_id);
	if (sp == NULL) {
		ret = -ENOMEM;
		if (sw->refs == 0)
			fault_switch_free(sw);
		goto out;
	}
	sw->ports[sw->nb_ports] = sp;
	/* the fast path of the other ports reads ports[] up to nb_ports */
	__atomic_store_n(&sw->nb_ports, sw->nb_ports + 1, __ATOMIC_RELEASE);
	sw->refs++;
	fp->swport = sp;
out:
	rte_spinlock_unlock(&fault_switch_lock);
	if (ret != 0)
		FAULT_LOG(ERR, "switch %s: no room for another port: %s",
			  fp->params.sw, rte_strerror(-ret));
	return ret;
}

void
droce_fault_switch_leave(struct fault_port *fp)
{
	struct fault_swport *sp = fp->swport;
	struct fault_switch *sw;

	if (sp == NULL)
		return;
	sw = sp->sw;
	rte_spinlock_lock(&fault_switch_lock);
	__atomic_store_n(&sp->gone, true, __ATOMIC_RELAXED);
	droce_fault_swport_drain(sp);
	fp->swport = NULL;
	if (--sw->refs == 0)
		fault_switch_free(sw);
	rte_spinlock_unlock(&fault_switch_lock);
}

void
droce_fault_switch_stats(const struct fault_port *fp,
			 uint64_t stats[FAULT_QSTAT_MAX])
{
	const struct fault_swport *sp = fp->swport;
	double unit;
	unsigned int s;

	memset(stats, 0, sizeof(stats[0]) * FAULT_QSTAT_MAX);
	if (sp == NULL)
		return;
	for (s = 0; s < FAULT_QSTAT_MAX; s++)
		stats[s] = __atomic_load_n(&sp->stats[s], __ATOMIC_RELAXED);
	/* backlogs were summed in cycles: in bytes (frames) they mean more */
	unit = sp->cycles_per_unit != 0 ? sp->cycles_per_unit : 1.0;
	/* to the nearest: a frame's cost was rounded down to whole cycles */
	stats[FAULT_QSTAT_BACKLOG_MAX] = (uint64_t)
		((double)stats[FAULT_QSTAT_BACKLOG_MAX] / unit + 0.5);
	stats[FAULT_QSTAT_BACKLOG_MEAN] = stats[FAULT_QSTAT_QUEUED] == 0 ? 0 :
		(uint64_t)((double)stats[FAULT_QSTAT_BACKLOG_MEAN] / unit /
			   (double)stats[FAULT_QSTAT_QUEUED] + 0.5);
}

void
droce_fault_switch_stats_reset(struct fault_port *fp)
{
	unsigned int s;

	if (fp->swport == NULL)
		return;
	for (s = 0; s < FAULT_QSTAT_MAX; s++)
		__atomic_store_n(&fp->swport->stats[s], 0, __ATOMIC_RELAXED);
}
