/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The CM's counters: droce_cm_query_stats() for C programs, /droce/cm
 * for DPDK telemetry (ids, connections by state, MADs sent, received,
 * sent again and dropped, and REJs by reason).
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "droce_dpdk_compat.h"

#include "droce_cma_pvt.h"

static int cm_started;

int
droce_cm_query_stats(struct droce_cm_stats *stats)
{
	struct cm_conn *c;
	struct cm_id *id;

	if (!__atomic_load_n(&cm_started, __ATOMIC_ACQUIRE)) {
		errno = ENODEV;
		return -1;
	}
	pthread_mutex_lock(&droce_cm.lock);
	*stats = droce_cm.stats;
	memset(stats->conns_by_state, 0, sizeof(stats->conns_by_state));
	stats->ids = stats->listeners = stats->events_queued = 0;
	LIST_FOREACH(c, &droce_cm.conns, all)
		if ((unsigned int)c->state < DROCE_CM_STATES)
			stats->conns_by_state[c->state]++;
	LIST_FOREACH(id, &droce_cma.ids, all) {
		stats->ids++;
		stats->listeners += id->state == ID_LISTEN;
	}
	stats->events_queued = droce_cma.events_queued;
	pthread_mutex_unlock(&droce_cm.lock);
	return 0;
}

/* REJ counts by reason, named as droce_cm_rej_reason_name() names them
 * (in lower case); a reason it has no name for, as reason_N if counted. */
static void
rej_dict(struct rte_tel_data *d, const uint64_t *by_reason)
{
	char name[40];
	unsigned int r, i;

	rte_tel_data_start_dict(d);
	for (r = 0; r < DROCE_CM_REJ_REASONS; r++) {
		const char *n = droce_cm_rej_reason_name((uint16_t)r);

		if (strcmp(n, "?") == 0) {
			if (by_reason[r] == 0)
				continue;
			snprintf(name, sizeof(name), "reason_%u", r);
		} else {
			for (i = 0; n[i] != '\0' && i + 1 < sizeof(name); i++)
				name[i] = (char)tolower((unsigned char)n[i]);
			name[i] = '\0';
		}
		droce_tel_dict_u64(d, name, by_reason[r]);
	}
}

static int
tel_cm(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct droce_cm_stats s;
	struct rte_tel_data *states, *sent, *rcvd;
	unsigned int i;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (droce_cm_query_stats(&s) != 0)
		return 0;
	droce_tel_dict_u64(d, "ids", s.ids);
	droce_tel_dict_u64(d, "listeners", s.listeners);
	droce_tel_dict_u64(d, "events_queued", s.events_queued);
	droce_tel_dict_u64(d, "conns", s.conns);
	droce_tel_dict_u64(d, "mads_sent", s.mads_sent);
	droce_tel_dict_u64(d, "mads_received", s.mads_received);
	droce_tel_dict_u64(d, "mads_resent", s.mads_resent);
	droce_tel_dict_u64(d, "mads_dropped", s.mads_dropped);
	droce_tel_dict_u64(d, "dup_received", s.dup_received);
	droce_tel_dict_u64(d, "send_failed", s.send_failed);
	droce_tel_dict_u64(d, "listen_overflow", s.listen_overflow);
	states = rte_tel_data_alloc();
	sent = rte_tel_data_alloc();
	rcvd = rte_tel_data_alloc();
	if (states == NULL || sent == NULL || rcvd == NULL) {
		rte_tel_data_free(states);
		rte_tel_data_free(sent);
		rte_tel_data_free(rcvd);
		return -ENOMEM;
	}
	rte_tel_data_start_dict(states);
	for (i = 0; i < DROCE_CM_STATES; i++)
		droce_tel_dict_u64(states, droce_cm_conn_state_name(i),
				   s.conns_by_state[i]);
	rte_tel_data_add_dict_container(d, "conns_by_state", states, 0);
	rej_dict(sent, s.rej_sent);
	rte_tel_data_add_dict_container(d, "rej_sent", sent, 0);
	rej_dict(rcvd, s.rej_received);
	rte_tel_data_add_dict_container(d, "rej_received", rcvd, 0);
	return 0;
}

void
droce_cm_telemetry_register(void)
{
	rte_telemetry_register_cmd("/droce/cm", tel_cm,
		"The connection manager: ids, connections by state, MADs "
		"sent, received, sent again and dropped, REJs by reason. "
		"No parameters.");
	__atomic_store_n(&cm_started, 1, __ATOMIC_RELEASE);
}
