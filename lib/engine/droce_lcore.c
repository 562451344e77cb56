/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The engine lcore loop. Each pass: control calls, then for every device
 * (shard of a device) of this lcore a receive burst from its queues of
 * the port and from its hand-off ring (dispatched to responder and
 * completer),
 * the responder's and requester's sending for every live QP within a
 * budget, timers, and one transmit burst. The clock is read once a pass.
 */

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "droce_engine_pvt.h"
#include "droce_comp.h"
#include "droce_idle.h"
#include "droce_memif.h"
#include "droce_neigh.h"
#include "droce_req.h"
#include "droce_resp.h"
#include "droce_sched.h"
#include "droce_tx.h"

static unsigned int
run_control(struct droce_lcore *lc)
{
	void *reqs[8];
	unsigned int i, n;

	n = rte_ring_dequeue_burst(lc->ctl, reqs, RTE_DIM(reqs), NULL);
	for (i = 0; i < n; i++) {
		struct droce_ctl_req *req = reqs[i];

		req->ret = req->fn(req->sh, req->arg);
		__atomic_store_n(&req->done, 1, __ATOMIC_RELEASE);
	}
	return n;
}

void
droce_dev_link_event(struct droce_dev *dev, bool up)
{
	void (*fn)(struct droce_dev *, enum ibv_event_type);

	if (up == dev->link_up)
		return;
	dev->link_up = up;
	fn = __atomic_load_n(&droce_eng.port_event, __ATOMIC_ACQUIRE);
	if (fn != NULL)
		fn(dev, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR);
}

/* Has the port's link changed since the last look? Tell the verbs layer. */
static void
link_check(struct droce_dev *dev, uint64_t now)
{
	struct rte_eth_link link;

	dev->link_check_at = now + droce_eng.hz * DROCE_LINK_CHECK_MS / 1000;
	if (rte_eth_link_get_nowait(dev->port_id, &link) != 0)
		return;
	/* (a port whose memif peer left is looked at on every pass: the
	 * next one may come and go at once) */
	if (unlikely(__atomic_load_n(&dev->memif_peer, __ATOMIC_ACQUIRE) !=
		     DROCE_MEMIF_PEER_HERE)) {
		droce_memif_link(dev, link.link_status == RTE_ETH_LINK_UP);
		dev->link_check_at = now;
	}
	droce_dev_link_event(dev, link.link_status == RTE_ETH_LINK_UP);
}

/* One pass over a device. @return work done (frames in and out). */
static unsigned int
run_device(struct droce_shard *sh, uint64_t now)
{
	struct rte_mbuf *pkts[DROCE_BURST];
	uint64_t tx_before = sh->stats.tx_frames;
	uint64_t t = droce_clock_now();
	unsigned int i, n = 0, h = 0, left;
	bool few;

	droce_qp_kicks(sh);
	droce_qp_timers(sh, now);
	/* new WQEs on their way here while the receive burst is handled;
	 * among many QPs, each takes its own as it is run (a pass may stop
	 * before it, and a look at each is a cache miss) */
	few = sh->nactive <= DROCE_QP_FEW;
	for (i = 0; few && i < sh->nactive; i++)
		droce_req_fetch(sh->active[i]);
	droce_clock_mark(sh->lc, &t, DROCE_STAGE_FETCH);
	/* a stopped port is not polled (its link is down: the event was
	 * raised as it stopped); its QPs' timers run on, as a NIC's do */
	for (i = 0; likely(!sh->port_stopped) && i < sh->nrxq &&
	     n < DROCE_BURST; i++)
		n += rte_eth_rx_burst(sh->port_id, sh->rxq[i], pkts + n,
				      (uint16_t)(DROCE_BURST - n));
	droce_clock_mark(sh->lc, &t, DROCE_STAGE_POLL);
	if (n != 0)
		droce_shard_rx_burst(sh, pkts, n, now, DROCE_RX_PORT);
	/* what the device's other shards received for this one */
	if (unlikely(sh->handoff != NULL)) {
		h = rte_ring_sc_dequeue_burst(sh->handoff, (void **)pkts,
					      DROCE_BURST, NULL);
		if (h != 0)
			droce_shard_rx_burst(sh, pkts, h, now,
					   DROCE_RX_HANDED);
	}
	/* what it sent to its own address */
	if (unlikely(sh->loop_head != sh->loop_tail))
		h += droce_shard_loop_rx(sh, now);
	/* (the receive burst timed its own stages) */
	t = droce_clock_now();
	/* round the active QPs from where the last pass stopped, until each
	 * was run or the port takes no more frames: the rest wait for the
	 * next pass, first in turn (a QP that goes to sleep takes the last
	 * one's place) */
	i = sh->pass_next;
	for (left = sh->nactive; left > 0 && sh->nactive > 0; left--) {
		struct droce_qp_eng *qp;

		if (i >= sh->nactive)
			i = 0;
		qp = sh->active[i];
		if (qp->state == IBV_QPS_ERR) {
			droce_qp_flush(qp);
		} else {
			droce_resp_run(qp, now);
			droce_comp_timer(qp, now);
			if (!few)
				droce_req_fetch(qp);
			droce_req_run(qp, now);
		}
		if (!droce_qp_try_sleep(qp, now))
			i++;
		if (unlikely(!droce_shard_tx_room(sh)))
			break;
	}
	sh->pass_next = i;
	droce_clock_mark(sh->lc, &t, DROCE_STAGE_QPS);
	droce_neigh_timer(sh, now);
	/* (a port whose memif peer left is looked at, for the next one) */
	if (sh->index == 0 && unlikely(now >= sh->dev->link_check_at) &&
	    (!sh->port_stopped ||
	     sh->dev->memif_peer != DROCE_MEMIF_PEER_HERE))
		link_check(sh->dev, now);
	droce_shard_tx_flush(sh);
	droce_clock_mark(sh->lc, &t, DROCE_STAGE_SEND);
	if (DROCE_PASS_CLOCK) {
		sh->lc->clock.frames_in += n + h;
		sh->lc->clock.frames_out += sh->stats.tx_frames - tx_before;
	}
	return n + h + (unsigned int)(sh->stats.tx_frames - tx_before) +
		sh->ntx;
}

/* The lcore whose pass this thread is running (NULL: none); read on
 * every post and empty poll, so reached without a call (a library loaded
 * later takes it from the C library's reserve of static TLS). */
static __thread const struct droce_lcore *running
	__attribute__((tls_model("initial-exec")));

/* Whether this thread's pass woke a thread that reads an event fd. */
static __thread bool woke __attribute__((tls_model("initial-exec")));

void
droce_engine_woke(void)
{
	woke = true;
}

/* Whether this application thread asked DPDK for an lcore id yet. */
static __thread bool app_thread_tried
	__attribute__((tls_model("initial-exec")));

static pthread_once_t app_thread_once = PTHREAD_ONCE_INIT;
static pthread_key_t app_thread_key;

/*
 * A registered application thread ends: what its mbuf cache holds goes
 * back to the pool, and its lcore id to DPDK for the next thread.
 */
static void
app_thread_exit(void *unused)
{
	/* (the engine's one pool, which every device takes from) */
	struct rte_mempool *mp = droce_eng.devs[0]->pool;

	RTE_SET_USED(unused);
	rte_mempool_cache_flush(rte_mempool_default_cache(mp, rte_lcore_id()),
				mp);
	rte_thread_unregister();
}

static void
app_thread_key_make(void)
{
	if (pthread_key_create(&app_thread_key, app_thread_exit) != 0)
		DROCE_LOG(WARNING, "application threads that run the engine's "
			  "passes keep their lcore ids to the end");
}

/*
 * An application thread about to run a pass becomes a registered
 * non-EAL thread of DPDK's, once: an lcore id of its own, and with it
 * what DPDK keeps per lcore (the mbuf pool's cache, above all: without
 * one every mbuf is taken from and given back to the shared ring). It
 * gives the id back as it exits. A thread with an id already (an EAL
 * thread, or one the application registered) is left as it is; one
 * DPDK has no id left for runs its passes without a cache.
 */
static void
app_thread_register(void)
{
	app_thread_tried = true;
	if (rte_lcore_id() != LCORE_ID_ANY)
		return;
	if (rte_thread_register() != 0) {
		DROCE_LOG(NOTICE, "an application thread runs the engine's "
			  "passes without an lcore id of its own: %s",
			  rte_strerror(rte_errno));
		return;
	}
	pthread_once(&app_thread_once, app_thread_key_make);
	pthread_setspecific(app_thread_key, &app_thread_tried);
}

/*
 * One pass of @p lc, if no other thread is running one.
 * @return work done, or -1 if another thread has the pass.
 */
static int
lcore_pass(struct droce_lcore *lc, bool app)
{
	unsigned int work, d;
	uint64_t now, t;

	if (unlikely(app && !app_thread_tried))
		app_thread_register();
	now = rte_get_tsc_cycles();
	if (app)
		__atomic_store_n(&lc->app_at, now, __ATOMIC_RELAXED);
	if (!droce_pass_trylock(&lc->pass_lock))
		return -1;
	running = lc;
	lc->mcache = lc->nshards == 0 ? NULL :
		rte_mempool_default_cache(lc->shards[0]->dev->pool,
					  rte_lcore_id());
	lc->app_pass = app;
	lc->pass_no++;
	__atomic_store_n(&lc->pass_since, now, __ATOMIC_RELAXED);
	work = run_control(lc);
	t = now;
	droce_clock_mark(lc, &t, DROCE_STAGE_PASS);
	for (d = 0; d < lc->nshards; d++) {
		work += run_device(lc->shards[d], now);
		lc->shards[d]->stats.app_passes += app;
	}
	running = NULL;
	lc->mcache = NULL;
	if (app)
		__atomic_store_n(&lc->app_at, rte_get_tsc_cycles(), __ATOMIC_RELAXED);
	if (DROCE_PASS_CLOCK) {
		/* (from the end of the last device's pass) */
		t = lc->clock.last;
		droce_clock_mark(lc, &t, DROCE_STAGE_PASS);
		lc->clock.passes++;
	}
	droce_pass_unlock(&lc->pass_lock);
	return (int)work;
}

/*
 * An application thread that posts, polls an empty CQ or waits for a
 * control call on the CPU of the device's engine lcore would otherwise
 * wait for that lcore to get the CPU back (the scheduler's tick, or the
 * engine's idle sleep): it runs the pass itself (run_to_completion).
 */
void
droce_dev_drive(struct droce_dev *dev)
{
	int cpu = -1;
	uint32_t i;

	switch (droce_eng.cfg.run_to_completion) {
	case DROCE_RTC_AUTO:
		cpu = sched_getcpu();
		break;
	case DROCE_RTC_ALWAYS:
		break;
	default:
		return;
	}
	/* not from inside a pass (a callback it makes) */
	if (running != NULL)
		return;
	/* each engine lcore of the device (those on this CPU, in auto) */
	for (i = 0; i < dev->nshards; i++) {
		struct droce_lcore *lc = dev->shards[i]->lc;

		if (cpu < 0 || lc->cpu == cpu)
			lcore_pass(lc, true);
	}
}

void
droce_lcore_clock_report(const struct droce_lcore *lc)
{
	static const char *const name[DROCE_STAGES] = {
		[DROCE_STAGE_PASS] = "pass",
		[DROCE_STAGE_FETCH] = "fetch",
		[DROCE_STAGE_POLL] = "poll",
		[DROCE_STAGE_PARSE] = "parse",
		[DROCE_STAGE_ICRC] = "icrc",
		[DROCE_STAGE_RECEIVE] = "receive",
		[DROCE_STAGE_QPS] = "qps",
		[DROCE_STAGE_SEND] = "send",
	};
	const struct droce_pass_clock *c = &lc->clock;
	char line[256];
	uint64_t all = 0;
	unsigned int s;
	int at = 0;

	if (!DROCE_PASS_CLOCK || c->frames_in == 0)
		return;
	for (s = 0; s < DROCE_STAGES; s++) {
		all += c->cycles[s];
		at += snprintf(line + at, sizeof(line) - (size_t)at, " %s %.1f",
			       name[s], (double)c->cycles[s] / c->frames_in);
	}
	DROCE_LOG(NOTICE, "pass clock of lcore %u: %" PRIu64 " frames in, %"
		  PRIu64 " out, %.2f in a pass; TSC cycles a frame in:%s; "
		  "all %.1f (%.1f ns); a pass %.1f", lc->lcore_id,
		  c->frames_in, c->frames_out,
		  (double)c->frames_in / (double)c->passes, line,
		  (double)all / c->frames_in,
		  (double)all / c->frames_in * 1e9 / (double)droce_eng.hz,
		  (double)all / (double)c->passes);
}

/*
 * The engine lcore's loop: a pass, then what droce_idle_next() says
 * (lib/engine/droce_idle.c: the idle policy).
 */
int
droce_lcore_main(void *arg)
{
	struct droce_lcore *lc = arg;
	const struct droce_idle_params p = {
		.cycles_us = droce_eng.hz / 1000000,
		.sleep_us = droce_eng.cfg.idle_sleep_us,
		.yield_us = droce_eng.cfg.idle_yield_us,
		.spin_us = droce_eng.cfg.idle_spin_us,
	};
	struct droce_idle st = { 0 };

	/* an idle sleep of idle_sleep_us, not of the kernel's default 50 us
	 * slack on top of it: a sleeping engine is a peer waiting for ACKs */
	if (p.sleep_us != 0)
		prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	while (__atomic_load_n(&lc->stop, __ATOMIC_ACQUIRE) == 0) {
		uint32_t requests = __atomic_load_n(&lc->requests,
						    __ATOMIC_RELAXED);
		struct droce_idle_pass pass = { .work = lcore_pass(lc, false) };
		unsigned int us = 0;
		struct timespec ts;

		if (p.sleep_us == 0)
			continue;
		pass.requests = __atomic_load_n(&lc->requests,
						__ATOMIC_RELAXED) != requests;
		pass.now = rte_get_tsc_cycles();
		pass.app_at = __atomic_load_n(&lc->app_at, __ATOMIC_RELAXED);
		pass.pass_since = __atomic_load_n(&lc->pass_since,
						  __ATOMIC_RELAXED);
		pass.woke = woke;
		woke = false;
		switch (droce_idle_next(&st, &p, &pass, &us)) {
		case DROCE_IDLE_GO:
			break;
		case DROCE_IDLE_POLL:
			rte_pause();
			break;
		case DROCE_IDLE_YIELD:
			sched_yield();
			break;
		case DROCE_IDLE_SLEEP:
			ts.tv_sec = us / 1000000;
			ts.tv_nsec = (long)(us % 1000000) * 1000;
			lc->idle_loops++;
			nanosleep(&ts, NULL);
			break;
		}
	}
	/* a last pass: an ACK that waited for one goes (droce_resp_tx.c) */
	lcore_pass(lc, false);
	__atomic_store_n(&lc->stop, 2, __ATOMIC_RELEASE);
	return 0;
}
