/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The soak's books: every frame between the two devices accounted for.
 *
 * A frame from droce X to droce Y passes five counters, each of which
 * must agree with the next once nothing moves (the soak waits for that):
 *
 *   X tx_frames                 frames the fault port took from droce X
 *   fault X tx: + duplicated - dropped = passed    (to the ring port)
 *   ring X opackets = ring Y ipackets              (the rings are empty)
 *   fault Y rx: + duplicated - dropped = passed    (to droce Y)
 *   Y rx_frames
 *
 * so that, end to end,
 *
 *   X.tx_frames + dup(X tx) + dup(Y rx) = Y.rx_frames + drop(X tx) + drop(Y rx)
 *
 * Corrupted frames are passed on, one bit flipped: Y must have refused
 * some of them (bad ICRC, malformed, not ours, refused headers) and can
 * have refused no more than were corrupted, counting the copies a
 * duplication made of a corrupted frame. Each device's QPs account for
 * what it sent: the packets its QPs sent, less those the transmit
 * buffer dropped, plus the few ARP frames the device sent itself.
 */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include <droce.h>

#include "harness.h"
#include "soak.h"

/* ARP frames a device may send of its own over a run (a few per peer) */
#define ARP_MAX 64
#define QUIET_MS 500
#define QUIESCE_MS 20000

static struct ibv_context *ctx[2];
static uint16_t fault_port[2];

int
soak_books_open(void)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	int i;

	for (i = 0; i < 2; i++) {
		ctx[i] = ep_open_device(i);
		snprintf(name, sizeof(name), "net_fault_droce%d", i);
		if (ctx[i] == NULL ||
		    rte_eth_dev_get_port_by_name(name, &fault_port[i]) != 0) {
			fprintf(stderr, "droce-soak: no %s: is droce%d behind "
				"net_fault?\n", name, i);
			return -1;
		}
	}
	return 0;
}

void
soak_books_close(void)
{
	int i;

	for (i = 0; i < 2; i++)
		if (ctx[i] != NULL)
			ibv_close_device(ctx[i]);
}

static int
xstat(uint16_t port, const char *name, uint64_t *v)
{
	uint64_t id;

	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0 ||
	    rte_eth_xstats_get_by_id(port, &id, v, 1) != 1) {
		fprintf(stderr, "droce-soak: no xstat %s\n", name);
		return -1;
	}
	return 0;
}

int
soak_books_read(struct soak_port_books b[2], struct ibv_qp **qps[2],
		const unsigned int nqps[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		struct soak_port_books *p = &b[i];
		struct droce_counters c;
		struct rte_eth_stats st;
		uint16_t port = fault_port[i];
		unsigned int q;

		memset(p, 0, sizeof(*p));
		if (droce_query_counters(ctx[i], &c) != 0)
			return -1;
		p->tx_frames = c.tx_frames;
		p->rx_frames = c.rx_frames;
		p->tx_drop = c.tx_drop;
		p->rx_roce = c.rx_roce;
		p->rx_icrc_err = c.rx_icrc_err;
		p->rx_malformed = c.rx_malformed;
		p->rx_not_ours = c.rx_not_ours;
		p->rx_bad_header = c.rx_bad_header;
		p->rx_arp = c.rx_arp;
		p->no_mbuf = c.no_mbuf;
		if (xstat(port, "tx_fault_passed", &p->tx_passed) != 0 ||
		    xstat(port, "tx_fault_dropped", &p->tx_dropped) != 0 ||
		    xstat(port, "tx_fault_duplicated", &p->tx_dup) != 0 ||
		    xstat(port, "tx_fault_corrupted", &p->tx_corrupted) != 0 ||
		    xstat(port, "tx_fault_reordered", &p->tx_reordered) != 0 ||
		    xstat(port, "rx_fault_passed", &p->rx_passed) != 0 ||
		    xstat(port, "rx_fault_dropped", &p->rx_dropped) != 0 ||
		    xstat(port, "rx_fault_duplicated", &p->rx_dup) != 0 ||
		    xstat(port, "rx_fault_corrupted", &p->rx_corrupted) != 0 ||
		    xstat(port, "rx_fault_reordered", &p->rx_reordered) != 0)
			return -1;
		/* net_fault's basic stats are the wrapped ring port's */
		if (rte_eth_stats_get(port, &st) != 0)
			return -1;
		p->ring_opackets = st.opackets;
		p->ring_ipackets = st.ipackets;
		p->ring_oerrors = st.oerrors;
		for (q = 0; q < nqps[i]; q++) {
			struct droce_qp_counters qc;

			if (droce_query_qp_counters(qps[i][q], &qc) != 0)
				return -1;
			p->qp_tx_pkts += qc.tx_pkts;
			p->qp_rx_pkts += qc.rx_pkts;
			p->qp_retransmits += qc.retransmits;
			p->qp_timeouts += qc.timeouts;
			p->qp_naks_sent += qc.naks_sent;
			p->qp_rnr_naks_sent += qc.rnr_naks_sent;
			p->qp_rnr_naks_rcvd += qc.rnr_naks_rcvd;
			p->qp_dup_reqs += qc.dup_reqs;
			p->qp_rx_dropped += qc.rx_dropped;
		}
	}
	return 0;
}

int
soak_books_quiesce(void)
{
	struct soak_port_books b[2], last[2];
	const unsigned int none[2] = { 0, 0 };
	struct ibv_qp **qps[2] = { NULL, NULL };
	uint64_t end = soak_now_ms() + QUIESCE_MS, still = soak_now_ms();

	if (soak_books_read(last, qps, none) != 0)
		return -1;
	while (soak_now_ms() < end) {
		usleep(50 * 1000);
		if (soak_books_read(b, qps, none) != 0)
			return -1;
		if (memcmp(b, last, sizeof(b)) != 0) {
			memcpy(last, b, sizeof(b));
			still = soak_now_ms();
		} else if (soak_now_ms() - still >= QUIET_MS) {
			return 0;
		}
	}
	return -1;
}

static uint64_t
sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* One identity: print it, and whether it holds. @return 1 if not. */
static unsigned int
identity(const char *what, uint64_t left, uint64_t right)
{
	bool ok = left == right;

	printf("  %-58s %12llu %s %-12llu %s\n", what,
	       (unsigned long long)left, ok ? "==" : "!=",
	       (unsigned long long)right, ok ? "ok" : "MISMATCH");
	return ok ? 0 : 1;
}

/* A bound: lo <= v <= hi. @return 1 if not. */
static unsigned int
bound(const char *what, uint64_t lo, uint64_t v, uint64_t hi)
{
	bool ok = lo <= v && v <= hi;

	printf("  %-58s %llu <= %llu <= %llu %s\n", what,
	       (unsigned long long)lo, (unsigned long long)v,
	       (unsigned long long)hi, ok ? "ok" : "MISMATCH");
	return ok ? 0 : 1;
}

unsigned int
soak_books_reconcile(const struct soak_port_books b[2])
{
	unsigned int bad = 0, x;

	printf("\n%-10s %14s %14s\n", "counter", "droce0", "droce1");
#define ROW(f) printf("%-14s %14llu %14llu\n", #f, \
		      (unsigned long long)b[0].f, (unsigned long long)b[1].f)
	ROW(tx_frames); ROW(rx_frames); ROW(tx_drop); ROW(no_mbuf);
	ROW(rx_roce); ROW(rx_icrc_err); ROW(rx_malformed); ROW(rx_not_ours);
	ROW(rx_bad_header); ROW(rx_arp);
	ROW(tx_passed); ROW(tx_dropped); ROW(tx_dup); ROW(tx_corrupted);
	ROW(tx_reordered);
	ROW(rx_passed); ROW(rx_dropped); ROW(rx_dup); ROW(rx_corrupted);
	ROW(rx_reordered);
	ROW(ring_opackets); ROW(ring_ipackets); ROW(ring_oerrors);
	ROW(qp_tx_pkts); ROW(qp_rx_pkts); ROW(qp_retransmits);
	ROW(qp_timeouts); ROW(qp_naks_sent); ROW(qp_dup_reqs);
	ROW(qp_rnr_naks_sent); ROW(qp_rnr_naks_rcvd);
	ROW(qp_rx_dropped);
#undef ROW

	for (x = 0; x < 2; x++) {
		const struct soak_port_books *s = &b[x], *r = &b[1 - x];
		uint64_t refused = r->rx_icrc_err + r->rx_malformed +
			r->rx_not_ours + r->rx_bad_header;
		uint64_t corrupted = s->tx_corrupted + r->rx_corrupted;

		printf("\ndroce%u -> droce%u:\n", x, 1 - x);
		bad += identity("tx_frames + tx dup = tx dropped + tx passed",
				s->tx_frames + s->tx_dup,
				s->tx_dropped + s->tx_passed);
		bad += identity("tx passed = ring opackets", s->tx_passed,
				s->ring_opackets);
		bad += identity("ring opackets = peer ring ipackets",
				s->ring_opackets, r->ring_ipackets);
		bad += identity("ring ipackets + rx dup = rx dropped + rx passed",
				r->ring_ipackets + r->rx_dup,
				r->rx_dropped + r->rx_passed);
		bad += identity("rx passed = peer rx_frames", r->rx_passed,
				r->rx_frames);
		bad += identity("tx_frames + dups = peer rx_frames + drops",
				s->tx_frames + s->tx_dup + r->rx_dup,
				r->rx_frames + s->tx_dropped + r->rx_dropped);
		/* each corrupted frame may have been copied by both dups */
		bad += bound("refused by the peer (corrupted: some, no more)",
			     corrupted >= 10 ? 1 : 0, refused,
			     2 * (2 * s->tx_corrupted + r->rx_corrupted));
		if (s->tx_frames + s->tx_drop < s->qp_tx_pkts) {
			printf("  sent + tx_drop < QPs' packets: MISMATCH\n");
			bad++;
		} else {
			bad += bound("sent + tx_drop - QPs' packets (ARP)", 0,
				     s->tx_frames + s->tx_drop -
				     s->qp_tx_pkts, ARP_MAX);
		}
		bad += bound("peer QPs' packets (rx_roce less refusals)",
			     sat_sub(r->rx_roce, r->rx_bad_header +
				     r->rx_not_ours),
			     r->qp_rx_pkts, r->rx_roce - r->rx_bad_header);
	}
	return bad;
}

unsigned int
soak_mbufs_in_use(void)
{
	struct rte_mempool *mp = rte_mempool_lookup("droce_mbufs");

	return mp != NULL ? rte_mempool_in_use_count(mp) : 0;
}

uint64_t
soak_rss_kib(void)
{
	unsigned long size, rss;
	FILE *f = fopen("/proc/self/statm", "r");
	int n;

	if (f == NULL)
		return 0;
	n = fscanf(f, "%lu %lu", &size, &rss);
	fclose(f);
	return n == 2 ? (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE) / 1024
		: 0;
}

uint64_t
soak_heap_bytes(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t total = 0;
	int s;

	for (s = 0; s < RTE_MAX_NUMA_NODES; s++)
		if (rte_malloc_get_socket_stats(s, &st) == 0)
			total += st.heap_allocsz_bytes;
	return total;
}
