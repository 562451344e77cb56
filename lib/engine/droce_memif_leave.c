/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * A memif peer that leaves, told first: net_memif tears a connection down
 * on DPDK's interrupt thread as soon as its peer closes it, and unmaps the
 * shared rings there while an engine lcore may be in a burst on them
 * (which then faults). So a droce process that exits tells each memif
 * peer it leaves, with a frame of its own on the link, and closes its
 * ports once the peer answered that none of its bursts touch the link any
 * more, or closed it (or after LEAVE_WAIT_MS, for a peer that is not
 * droce). Its own frames and bursts for that go on its interrupt thread
 * too: the peer closes once it has its answer, maybe before this side
 * read it.
 *
 * The peer stops its shards' bursts on the port from its interrupt
 * thread, where net_memif's teardown runs too, answers, and starts them
 * again once it saw the link go down and come up (a new peer). Two that
 * leave at once both poll for an answer: the memif server answers, polls
 * no more and closes once the client closed; the client closes once
 * answered.
 *
 * The frames: broadcast, Ethernet type 0x88b6 (IEEE 802's local
 * experimental type 2), "droce-memif" and a kind: LEAVING from the one
 * that goes, STOPPED from the one that polls no more.
 */

#include <sched.h>
#include <string.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "droce_engine_pvt.h"
#include "droce_memif.h"
#include "droce_wire.h"

#define LEAVE_MAGIC "droce-memif"
#define LEAVE_KIND_OFF (14 + sizeof(LEAVE_MAGIC))
#define LEAVE_LEN 60
#define KIND_LEAVING 1
#define KIND_STOPPED 2
/* how long an exiting process waits for its peers' answers */
#define LEAVE_WAIT_MS 250
/* how often it looks for them */
#define LEAVE_POLL_US 100
/* how much longer it waits for DPDK's interrupt thread, which looks */
#define LEAVE_LATE_MS 1000
/* how long a peer's leave waits for an lcore the engine stops */
#define STOP_WAIT_MS 100

/* The kind of a leave frame @p m (KIND_LEAVING, KIND_STOPPED), or 0. */
static unsigned int
leave_kind(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);

	if (rte_pktmbuf_data_len(m) < LEAVE_KIND_OFF + 1 ||
	    droce_get_be16(f + 12) != DROCE_MEMIF_LEAVE_TYPE ||
	    memcmp(f + 14, LEAVE_MAGIC, sizeof(LEAVE_MAGIC)) != 0)
		return 0;
	return f[LEAVE_KIND_OFF];
}

/* Send a leave frame of @p kind on the primary shard's queue of @p dev,
 * which no pass sends on meanwhile. */
static void
leave_send(struct droce_dev *dev, unsigned int kind)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(dev->pool);
	unsigned int tries;
	uint8_t *f;

	if (m == NULL)
		return;
	f = (uint8_t *)rte_pktmbuf_append(m, LEAVE_LEN);
	if (f == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memset(f, 0, LEAVE_LEN);
	memset(f, 0xff, 6);
	memcpy(f + 6, &dev->mac, 6);
	droce_put_be16(f + 12, DROCE_MEMIF_LEAVE_TYPE);
	memcpy(f + 14, LEAVE_MAGIC, sizeof(LEAVE_MAGIC));
	f[LEAVE_KIND_OFF] = (uint8_t)kind;
	for (tries = 0; tries < 100; tries++) {
		if (rte_eth_tx_burst(dev->port_id, dev->shards[0]->txq,
				     &m, 1) == 1)
			return;
		rte_delay_us_sleep(100);
	}
	rte_pktmbuf_free(m);
}

/*
 * droce_shard_bursts() on each shard of @p dev. The lcore of one that the
 * engine stops (the process exits) runs no call: once it stopped, its
 * flag is set from here (an exit on that lcore's own thread is not waited
 * for past STOP_WAIT_MS).
 */
static void
shards_bursts(struct droce_dev *dev, void *arg)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000 *
		STOP_WAIT_MS;
	uint32_t i;

	for (i = 0; i < dev->nshards; i++) {
		struct droce_shard *sh = dev->shards[i];
		struct droce_lcore *lc = sh->lc;

		if (__atomic_load_n(&lc->stop, __ATOMIC_ACQUIRE) == 0) {
			droce_shard_call(sh, droce_shard_bursts, arg);
			continue;
		}
		while (__atomic_load_n(&lc->stop, __ATOMIC_ACQUIRE) != 2 &&
		       rte_get_timer_cycles() < end)
			sched_yield();
		__atomic_store_n(&sh->port_stopped, arg != NULL,
				 __ATOMIC_RELAXED);
	}
}

/* On DPDK's interrupt thread: the peer leaves; no shard bursts on the
 * port once each ran the call, and the peer is told so. */
static void
peer_leaving(void *arg)
{
	struct droce_dev *dev = arg;

	shards_bursts(dev, dev);
	leave_send(dev, KIND_STOPPED);
	DROCE_LOG(INFO, "%s: the memif peer leaves: port %u not polled until "
		  "its link comes back", dev->name, dev->port_id);
	__atomic_store_n(&dev->memif_peer, DROCE_MEMIF_PEER_LEFT,
			 __ATOMIC_RELEASE);
}

/* On DPDK's interrupt thread: a new peer came, after the link was down. */
static void
peer_back(void *arg)
{
	struct droce_dev *dev = arg;

	/* (before the first burst: the new peer may be leaving already) */
	__atomic_store_n(&dev->memif_peer, DROCE_MEMIF_PEER_HERE,
			 __ATOMIC_RELEASE);
	shards_bursts(dev, NULL);
	DROCE_LOG(INFO, "%s: a memif peer again: port %u polled", dev->name,
		  dev->port_id);
}

/* Hand @p fn to DPDK's interrupt thread for @p dev. */
static void
on_intr_thread(void (*fn)(void *), struct droce_dev *dev)
{
	int ret = rte_eal_alarm_set(1, fn, dev);

	if (ret < 0)
		DROCE_LOG(WARNING, "%s: memif peer: %s", dev->name,
			  strerror(-ret));
}

bool
droce_memif_leave_rx(struct droce_shard *sh, struct rte_mbuf *m)
{
	struct droce_dev *dev = sh->dev;
	unsigned int kind = leave_kind(m);

	if (kind == 0)
		return false;
	if (kind == KIND_LEAVING &&
	    __atomic_load_n(&dev->memif_peer, __ATOMIC_ACQUIRE) ==
	    DROCE_MEMIF_PEER_HERE) {
		__atomic_store_n(&dev->memif_peer, DROCE_MEMIF_PEER_LEAVING,
				 __ATOMIC_RELEASE);
		on_intr_thread(peer_leaving, dev);
	}
	rte_pktmbuf_free(m);
	return true;
}

void
droce_memif_link(struct droce_dev *dev, bool up)
{
	switch (__atomic_load_n(&dev->memif_peer, __ATOMIC_ACQUIRE)) {
	case DROCE_MEMIF_PEER_LEFT:
		if (!up)
			__atomic_store_n(&dev->memif_peer,
					 DROCE_MEMIF_PEER_GONE,
					 __ATOMIC_RELEASE);
		break;
	case DROCE_MEMIF_PEER_GONE:
		if (up) {
			__atomic_store_n(&dev->memif_peer,
					 DROCE_MEMIF_PEER_COMING,
					 __ATOMIC_RELEASE);
			on_intr_thread(peer_back, dev);
		}
		break;
	default:
		break;
	}
}

/* Where an exiting process is with the peer of one of its memif ports. */
enum leave_wait {
	WAIT_NONE,                    /**< nothing to wait for */
	WAIT_ANSWER,                  /**< its answer, polling for it */
	WAIT_CLOSE,                   /**< its close, polling no more */
};

/*
 * An exiting process's leave, run on DPDK's interrupt thread: net_memif
 * tears a connection down there when its peer closes it, unmapping the
 * rings a burst from any other thread may be reading (the peer closes as
 * soon as it has its answer, which may be before this side read it).
 */
static struct {
	enum leave_wait wait[DROCE_MAX_DEVS];
	uint64_t end;                 /**< TSC: no answer waited for after */
	uint32_t done;                /**< set once nothing is waited for */
} leave;

/*
 * Poll the queues of @p dev for its peer's answer; @return what to wait
 * for next. STOPPED: nothing (the peer polls no more). A peer that leaves
 * too polls until it has an answer: the memif server answers a client's
 * LEAVING with STOPPED, then polls no more and waits for the client to
 * close (the client polls until that answer comes, then closes).
 */
static enum leave_wait
leave_poll(struct droce_dev *dev)
{
	enum leave_wait next = WAIT_ANSWER;
	struct rte_mbuf *pkts[DROCE_BURST];
	uint32_t s;
	uint16_t q, n, i;

	for (s = 0; s < dev->nshards && next == WAIT_ANSWER; s++) {
		const struct droce_shard *sh = dev->shards[s];

		for (q = 0; q < sh->nrxq && next == WAIT_ANSWER; q++) {
			n = rte_eth_rx_burst(dev->port_id, sh->rxq[q], pkts,
					     DROCE_BURST);
			for (i = 0; i < n; i++) {
				unsigned int kind = leave_kind(pkts[i]);

				rte_pktmbuf_free(pkts[i]);
				if (next != WAIT_ANSWER)
					continue;
				if (kind == KIND_STOPPED) {
					next = WAIT_NONE;
				} else if (kind == KIND_LEAVING &&
					   dev->memif_server) {
					leave_send(dev, KIND_STOPPED);
					next = WAIT_CLOSE;
				}
			}
		}
	}
	return next;
}

/* Whether the link of @p dev is down (its peer closed it). */
static bool
link_down(const struct droce_dev *dev)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(dev->port_id, &link) != 0 ||
		link.link_status != RTE_ETH_LINK_UP;
}

/* One look at each peer's answer. @return whether one is still waited
 * for (and may be). */
static bool
leave_look(void)
{
	unsigned int i;
	bool left = false;

	for (i = 0; i < droce_eng.ndevs; i++) {
		struct droce_dev *dev = droce_eng.devs[i];

		if (leave.wait[i] == WAIT_ANSWER)
			leave.wait[i] = leave_poll(dev);
		/* (a peer that closed the link polls it no more) */
		if (leave.wait[i] != WAIT_NONE && link_down(dev))
			leave.wait[i] = WAIT_NONE;
		left |= leave.wait[i] != WAIT_NONE;
	}
	return left && rte_get_timer_cycles() < leave.end;
}

/* On DPDK's interrupt thread: leave_look(), and again in LEAVE_POLL_US
 * until nothing is waited for. */
static void
leave_step(void *unused)
{
	RTE_SET_USED(unused);
	if (leave_look() && rte_eal_alarm_set(LEAVE_POLL_US, leave_step,
					      NULL) == 0)
		return;
	__atomic_store_n(&leave.done, 1, __ATOMIC_RELEASE);
}

/* Tell each memif peer whose link is up that this process leaves.
 * @return whether one was told. */
static bool
leave_tell(void)
{
	unsigned int i;
	bool told = false;

	for (i = 0; i < droce_eng.ndevs; i++) {
		struct droce_dev *dev = droce_eng.devs[i];

		leave.wait[i] = WAIT_NONE;
		/* (a peer that is leaving already answers on its own) */
		if (!dev->memif || dev->shards[0]->port_stopped ||
		    __atomic_load_n(&dev->memif_peer, __ATOMIC_ACQUIRE) !=
		    DROCE_MEMIF_PEER_HERE || link_down(dev))
			continue;
		leave_send(dev, KIND_LEAVING);
		leave.wait[i] = WAIT_ANSWER;
		told = true;
	}
	leave.end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000 *
		LEAVE_WAIT_MS;
	return told;
}

/* On DPDK's interrupt thread: the leave begins. */
static void
leave_begin(void *unused)
{
	if (leave_tell()) {
		leave_step(unused);
		return;
	}
	__atomic_store_n(&leave.done, 1, __ATOMIC_RELEASE);
}

void
droce_memif_leave_all(void)
{
	unsigned int i;

	leave.done = 0;
	if (rte_thread_is_intr()) {
		/* (an exit on that thread: nothing tears down meanwhile) */
		if (leave_tell())
			while (leave_look())
				rte_delay_us_sleep(LEAVE_POLL_US);
	} else if (!droce_intr_run_wait(leave_begin, &leave.done,
					LEAVE_WAIT_MS + LEAVE_LATE_MS,
					"memif peers not waited for at exit")) {
		/* (the thread did not come, or left a look pending) */
		rte_eal_alarm_cancel(leave_step, NULL);
	}
	for (i = 0; i < droce_eng.ndevs; i++)
		if (leave.wait[i] != WAIT_NONE)
			DROCE_LOG(INFO, "%s: the memif peer did not %s in %d "
				  "ms: closing port %u anyway",
				  droce_eng.devs[i]->name,
				  leave.wait[i] == WAIT_ANSWER ?
				  "say it stopped polling" : "close the link",
				  LEAVE_WAIT_MS, droce_eng.devs[i]->port_id);
}
