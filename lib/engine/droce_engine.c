/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Engine start-up and stop: the configuration, DPDK's EAL (initialised in
 * a thread of the engine's own, which becomes the main lcore, so the
 * application's threads keep their affinity), the devices
 * (droce_shard.c, on ports of droce_port.c) and the engine lcores.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_string_fns.h>

#include "droce_engine_pvt.h"
#include "droce_memif.h"
#include "droce_mirror.h"
#include "droce_telemetry.h"
#include "droce_start.h"

RTE_LOG_REGISTER(droce_engine_logtype, lib.droce.engine, NOTICE);

struct droce_engine droce_eng;

/* how long an exiting process waits for its ports to close */
#define CLOSE_WAIT_MS 2000
#define MAX_EAL_ARGS 64

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
static int start_state;   /* 0 not started, 1 starting, 2 done */
static int start_result;
static bool stop_registered;
/* why the start failed, in words (droce_engine_start_error()) */
static char start_why[256];
/* set by ports_close() once every port is closed */
static uint32_t ports_closed;

/*
 * Why the engine does not start: logged, and the first reason given kept
 * for droce_engine_start_error(), which the verbs layer passes on.
 */
void
droce_start_error(const char *fmt, ...)
{
	char why[sizeof(start_why)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	DROCE_LOG(ERR, "%s", why);
	if (start_why[0] == '\0')
		strlcpy(start_why, why, sizeof(start_why));
}

const char *
droce_engine_start_error(void)
{
	return start_why;
}

/* The engine's CPUs: as configured, or the last CPU this process may use. */
static void
pick_cores(struct droce_cfg *cfg)
{
	cpu_set_t set;
	int cpu, last = 0;

	if (cfg->cores[0] >= 0)
		return;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &set))
				last = cpu;
	cfg->cores[0] = last;
}

static int
eal_init(struct droce_cfg *cfg)
{
	static char args[sizeof(cfg->eal_args)];
	static char lcores[DROCE_MAX_LCORES * 16];
	char *argv[MAX_EAL_ARGS];
	char *save = NULL, *tok;
	int argc = 0;
	unsigned int i;
	size_t off = 0;

	argv[argc++] = (char *)(uintptr_t)"droce";
	strlcpy(args, cfg->eal_args, sizeof(args));
	for (tok = strtok_r(args, " \t", &save); tok != NULL &&
	     argc < MAX_EAL_ARGS - 4; tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	if (strstr(cfg->eal_args, "--log-level") == NULL) {
		argv[argc++] = (char *)(uintptr_t)"--log-level=lib.eal:warning";
		argv[argc++] = (char *)(uintptr_t)
			"--log-level=lib.telemetry:error";
	}
	/* engine lcore i runs on CPU cores[i]; lcore 0 is the main one */
	for (i = 0; i < cfg->ncores; i++)
		off += (size_t)snprintf(lcores + off, sizeof(lcores) - off,
					"%s%u@%d", i ? "," : "", i,
					cfg->cores[i]);
	argv[argc++] = (char *)(uintptr_t)"--lcores";
	argv[argc++] = lcores;
	if (rte_eal_init(argc, argv) < 0)
		return -rte_errno ? -rte_errno : -EINVAL;
	return 0;
}

/*
 * Wait up to link_wait_s for every port's link, so that a verbs program
 * that checks its port at once (perftest does) finds it active when the
 * peer comes within that time. Looked at every LINK_WAIT_POLL_US: a
 * memif peer whose program gives up at once (its tool finds no one on
 * TCP yet) is connected for a few milliseconds only, and a link up for
 * so short a time is up all the same.
 */
#define LINK_WAIT_POLL_US 200

static void
links_wait(const struct droce_cfg *cfg)
{
	uint64_t end = rte_get_timer_cycles() +
		(uint64_t)cfg->link_wait_s * rte_get_timer_hz();
	unsigned int i;

	for (i = 0; i < droce_eng.ndevs; i++) {
		struct droce_dev *dev = droce_eng.devs[i];
		struct rte_eth_link link;

		for (;;) {
			if (rte_eth_link_get_nowait(dev->port_id, &link) == 0 &&
			    link.link_status == RTE_ETH_LINK_UP)
				break;
			if (rte_get_timer_cycles() >= end) {
				DROCE_LOG(WARNING, "%s: link still down after "
					  "%u s", dev->name, cfg->link_wait_s);
				return;
			}
			rte_delay_us_sleep(LINK_WAIT_POLL_US);
		}
	}
}

/*
 * Before DPDK probes them: each device's memif server socket left by a
 * process that is gone is replaced; one another process serves ends the
 * start here (DPDK would only say that its address is in use).
 */
static int
ports_claim(const struct droce_cfg *cfg)
{
	char why[256];
	unsigned int i;
	int ret;

	for (i = 0; i < cfg->ndevs; i++) {
		const struct droce_dev_cfg *c = &cfg->dev[i];

		ret = droce_memif_claim(c->name, cfg->eal_args, c->port, why,
					sizeof(why));
		if (ret < 0) {
			droce_start_error("%s: port %s cannot start: %s",
					  c->name, c->port, why);
			return ret;
		}
	}
	return 0;
}

static int
engine_init(void)
{
	struct droce_cfg *cfg = &droce_eng.cfg;
	struct rte_mempool *pool;
	unsigned int i, lcore;
	uint16_t max_mtu = 0;
	int ret;

	ret = droce_config_load(cfg);
	if (ret < 0)
		return ret;
	ret = ports_claim(cfg);
	if (ret < 0)
		return ret;
	pick_cores(cfg);
	ret = eal_init(cfg);
	if (ret < 0) {
		droce_start_error("EAL initialisation failed: %s",
				  strerror(-ret));
		return ret;
	}
	droce_eng.hz = rte_get_tsc_hz();
	droce_eng.us_cycles = RTE_MAX(droce_eng.hz / 1000000, (uint64_t)1);

	i = 0;
	RTE_LCORE_FOREACH(lcore) {
		struct droce_lcore *lc = &droce_eng.lcores[i];
		char name[RTE_RING_NAMESIZE];

		if (i == DROCE_MAX_LCORES)
			break;
		lc->lcore_id = lcore;
		lc->idx = i;
		lc->cpu = cfg->cores[i];
		lc->pass_lock = 0;
		snprintf(name, sizeof(name), "droce_ctl_%u", i);
		lc->ctl = rte_ring_create(name, 256, SOCKET_ID_ANY,
					  RING_F_MP_HTS_ENQ | RING_F_SC_DEQ);
		if (lc->ctl == NULL)
			return -rte_errno;
		i++;
	}
	droce_eng.nlcores = i;

	for (i = 0; i < cfg->ndevs; i++)
		max_mtu = RTE_MAX(max_mtu, cfg->dev[i].mtu);
	/* DPDK's default size at least: some PMDs (af_packet) want their
	 * whole frame slot to fit in one mbuf */
	pool = rte_pktmbuf_pool_create("droce_mbufs", cfg->mbufs,
				       cfg->mbuf_cache, 0,
				       RTE_MAX(RTE_MBUF_DEFAULT_BUF_SIZE,
					       RTE_PKTMBUF_HEADROOM + max_mtu +
					       14 + 4),
				       rte_socket_id());
	if (pool == NULL) {
		droce_start_error("cannot create the mbuf pool: %s",
				  rte_strerror(rte_errno));
		return -rte_errno;
	}
	for (i = 0; i < cfg->ndevs; i++) {
		ret = droce_dev_create(&cfg->dev[i], i, pool);
		if (ret < 0) {
			/* (the reason, if the step that failed gave none) */
			if (start_why[0] == '\0')
				droce_start_error("%s: not started: %s",
						  cfg->dev[i].name,
						  strerror(-ret));
			return ret;
		}
	}
	if (cfg->link_wait_s != 0)
		links_wait(cfg);
	/* port events are the changes from here on */
	for (i = 0; i < droce_eng.ndevs; i++) {
		struct droce_dev *dev = droce_eng.devs[i];
		struct rte_eth_link link;

		dev->link_up = rte_eth_link_get_nowait(dev->port_id,
						       &link) == 0 &&
			link.link_status == RTE_ETH_LINK_UP;
	}
	return 0;
}

/*
 * Stop and close every device's port: what a port holds outside the
 * process goes with it (a memif server's socket file, which the next
 * server on it could not bind; a tap interface; an af_xdp socket). Run
 * on DPDK's interrupt thread, where net_memif tears a connection down
 * when its peer leaves: its stop, run from another thread at that
 * moment, would free the same memory twice ("Invalid memory").
 */
static void
ports_close(void *unused)
{
	unsigned int i;

	RTE_SET_USED(unused);
	for (i = 0; i < droce_eng.ndevs; i++) {
		const struct droce_dev *dev = droce_eng.devs[i];

		/* (a port whose memif peer left is started, not polled) */
		if (!dev->shards[0]->port_stopped ||
		    dev->memif_peer != DROCE_MEMIF_PEER_HERE)
			rte_eth_dev_stop(dev->port_id);
		rte_eth_dev_close(dev->port_id);
	}
	__atomic_store_n(&ports_closed, 1, __ATOMIC_RELEASE);
}

bool
droce_intr_run_wait(void (*fn)(void *), const uint32_t *done,
		    unsigned int wait_ms, const char *what)
{
	uint64_t end;
	int ret;

	ret = rte_eal_alarm_set(1, fn, NULL);
	if (ret < 0) {
		DROCE_LOG(WARNING, "%s: %s", what, strerror(-ret));
		return false;
	}
	end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000 * wait_ms;
	while (!__atomic_load_n(done, __ATOMIC_ACQUIRE) &&
	       rte_get_timer_cycles() < end)
		rte_delay_us_sleep(1000);
	if (__atomic_load_n(done, __ATOMIC_ACQUIRE))
		return true;
	rte_eal_alarm_cancel(fn, NULL);
	DROCE_LOG(WARNING, "%s: DPDK's interrupt thread did not come in %u "
		  "ms", what, wait_ms);
	return false;
}

/*
 * ports_close() on DPDK's interrupt thread, waited for a while: a
 * process that exits on that thread runs it at once, and one whose
 * interrupt thread does not come leaves its ports as they are (a memif
 * server's socket file, then, is replaced at the next start).
 */
static void
ports_close_at_exit(void)
{
	if (rte_thread_is_intr())
		ports_close(NULL);
	else
		droce_intr_run_wait(ports_close, &ports_closed, CLOSE_WAIT_MS,
				    "ports not closed at exit");
}

/*
 * Stop the engine lcores for good: each told to stop and waited for,
 * then its pass taken, so that no application thread runs one either
 * (its ports closed, its mirrors closed under it). An exit() on an
 * engine lcore's own thread (from a signal handler that interrupted
 * it) neither waits for that lcore nor takes its pass: the thread never
 * comes back to its loop, nor to a pass it was in.
 */
static void
lcores_stop(void)
{
	unsigned int self = rte_lcore_id();
	unsigned int i;

	for (i = 0; i < droce_eng.nlcores; i++)
		__atomic_store_n(&droce_eng.lcores[i].stop, 1, __ATOMIC_RELEASE);
	/* the main lcore runs the engine in its own thread: let it notice */
	for (i = 0; i < droce_eng.nlcores; i++)
		while (droce_eng.lcores[i].lcore_id != self &&
		       __atomic_load_n(&droce_eng.lcores[i].stop,
				       __ATOMIC_ACQUIRE) != 2)
			sched_yield();
	for (i = 0; i < droce_eng.nlcores; i++)
		if (droce_eng.lcores[i].lcore_id != self)
			droce_pass_lock(&droce_eng.lcores[i].pass_lock);
}

static void
engine_stop(void)
{
	unsigned int i;

	/* telemetry's control calls would wait for lcores that are gone */
	droce_telemetry_close();
	lcores_stop();
	for (i = 0; i < droce_eng.nlcores; i++)
		droce_lcore_clock_report(&droce_eng.lcores[i]);
	droce_memif_leave_all();
	ports_close_at_exit();
	for (i = 0; i < droce_eng.ndevs; i++) {
		const struct droce_shard *p = droce_eng.devs[i]->shards[0];

		if (p->mirror != NULL)
			droce_mirror_close(p->mirror);
	}
}

/* The engine's own thread: initialise, report, then be the main lcore. */
static void *
engine_thread(void *unused)
{
	unsigned int i;
	int ret;

	RTE_SET_USED(unused);
	ret = engine_init();
	if (ret == 0)
		droce_telemetry_init();
	if (ret == 0)
		for (i = 1; i < droce_eng.nlcores; i++)
			rte_eal_remote_launch(droce_lcore_main,
					      &droce_eng.lcores[i],
					      droce_eng.lcores[i].lcore_id);

	pthread_mutex_lock(&start_lock);
	start_result = ret;
	start_state = 2;
	pthread_cond_broadcast(&start_cond);
	pthread_mutex_unlock(&start_lock);

	if (ret == 0)
		droce_lcore_main(&droce_eng.lcores[0]);
	return NULL;
}

int
droce_engine_start(void)
{
	pthread_t tid;
	int ret;

	pthread_mutex_lock(&start_lock);
	if (start_state == 0) {
		start_state = 1;
		ret = pthread_create(&tid, NULL, engine_thread, NULL);
		if (ret != 0) {
			start_state = 2;
			start_result = -ret;
		} else {
			pthread_detach(tid);
		}
	}
	while (start_state != 2)
		pthread_cond_wait(&start_cond, &start_lock);
	ret = start_result;
	if (ret == 0 && !stop_registered) {
		stop_registered = true;
		atexit(engine_stop);
	}
	pthread_mutex_unlock(&start_lock);
	return ret;
}
