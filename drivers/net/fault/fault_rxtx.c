/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * net_fault fast path.
 *
 * A queue runs each frame through the same steps: drop, corrupt,
 * duplicate, then hold back (delay, else reorder) or hand on. It draws
 * one number per enabled fault from its own PRNG before acting, so a
 * seed and a sequence of frames give one sequence of decisions.
 *
 * Frames that may leave gather, in order, in the queue's ready ring: rx
 * hands them to the caller, tx to the wrapped port (whatever it refuses
 * stays for the next call). A burst takes in only as many new frames as
 * the ring and the delay FIFO can absorb, so nothing is lost for want of
 * room: rx leaves the rest in the wrapped port, tx returns a short count.
 *
 * Held frames leave on a later burst: rx ones on an rx burst, tx ones
 * on a tx burst or on an rx burst of the same queue number, so that an
 * application that polls for frames sees its delayed and reordered
 * ones go out without sending more (droce_eth_fault.h).
 *
 * A frame to the port's own address turns back, after the tx faults, to
 * its receive side, where the rx faults see it as any frame (a NIC's
 * loopback): a wrapped port's queues take such frames from the port's
 * loop ring before the wrapped port's own, a switch's port's go to its
 * own switch queue.
 *
 * Duplicates are deep copies (rte_pktmbuf_copy), not a second reference:
 * a software port such as net_ring hands a transmitted mbuf straight to
 * a receiver in the same process, which may write to it, and would then
 * change both copies.
 */

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_thash.h>

#include "fault_pvt.h"

#define FAULT_READY_MASK (FAULT_READY_SIZE - 1)

_Static_assert(RTE_IS_POWER_OF_2(FAULT_READY_SIZE), "ready ring size");
_Static_assert(RTE_IS_POWER_OF_2(FAULT_DELAY_SIZE), "delay FIFO size");
_Static_assert(FAULT_BURST_MAX * 2 + FAULT_HELD_MAX <= FAULT_READY_SIZE,
	      "a full burst must fit the ready ring");

/* The output function of splitmix64. */
static inline uint64_t
fault_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* splitmix64: one word of state, one add and one mix per number. */
static inline uint64_t
fault_rand(struct fault_queue *q)
{
	q->rng += UINT64_C(0x9e3779b97f4a7c15);
	return fault_mix64(q->rng);
}

/* Draw for one fault; a disabled fault draws nothing. */
static inline int
fault_hit(struct fault_queue *q, enum fault_kind k)
{
	return q->threshold[k] != 0 && (fault_rand(q) >> 11) < q->threshold[k];
}

static inline uint32_t
fault_ready_count(const struct fault_queue *q)
{
	return q->ready_tail - q->ready_head;
}

static inline uint32_t
fault_ready_room(const struct fault_queue *q)
{
	return FAULT_READY_SIZE - fault_ready_count(q);
}

/* A frame may leave; with dma=1 a tx frame is read now, as a NIC's DMA
 * reads it when it sends, and one it may not read is dropped. */
static inline void
fault_ready_push(struct fault_queue *q, struct rte_mbuf *m)
{
	if (unlikely(q->dma != NULL) && !droce_fault_dma_ok(q->dma, m)) {
		rte_pktmbuf_free(m);
		q->stats[FAULT_STAT_UNMAPPED]++;
		return;
	}
	q->ready[q->ready_tail++ & FAULT_READY_MASK] = m;
}

/* A frame (and its copy) leaves; a reordered frame waiting for it follows. */
static inline void
fault_emit(struct fault_queue *q, struct rte_mbuf *m, struct rte_mbuf *copy)
{
	unsigned int i;

	fault_ready_push(q, m);
	if (copy != NULL)
		fault_ready_push(q, copy);
	for (i = 0; i < q->nb_held; i++)
		fault_ready_push(q, q->held[i]);
	q->nb_held = 0;
}

/*
 * How many new frames the queue can take: each leaves at most itself and
 * a copy, and the first may also release the frames held for reordering.
 */
static inline unsigned int
fault_intake(const struct fault_queue *q, unsigned int want)
{
	uint32_t room = fault_ready_room(q);
	unsigned int n;

	if (room < 2 + FAULT_HELD_MAX)
		return 0;
	n = RTE_MIN(want, (room - FAULT_HELD_MAX) / 2);
	if (q->threshold[FAULT_DELAY] != 0)
		n = RTE_MIN(n, q->delay_mask + 1 -
			    (q->delay_tail - q->delay_head));
	return n;
}

/* Let out the delayed frames whose time has come, and a stale held one. */
static inline void
fault_release(struct fault_queue *q, uint64_t now)
{
	unsigned int i;

	while (q->delay_head != q->delay_tail) {
		struct fault_delayed *d =
			&q->delay[q->delay_head & q->delay_mask];

		if (now < d->due || fault_ready_room(q) < 2 + FAULT_HELD_MAX)
			break;
		q->delay_head++;
		fault_emit(q, d->m, d->copy);
	}
	if (unlikely(q->nb_held != 0) &&
	    now - q->held_since >= q->reorder_cycles &&
	    fault_ready_room(q) >= q->nb_held) {
		for (i = 0; i < q->nb_held; i++)
			fault_ready_push(q, q->held[i]);
		q->nb_held = 0;
	}
}

static inline struct rte_mempool *
fault_copy_pool(const struct fault_queue *q, const struct rte_mbuf *m)
{
	return q->mp != NULL ? q->mp : m->pool;
}

/* Whether every byte of the frame belongs to this mbuf chain alone. */
static inline int
fault_writable(const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
			return 0;
	return 1;
}

/*
 * Make *m a frame whose bytes are its own to change: a private copy if
 * its data is shared (a clone, an external buffer such as droce's zero
 * copy of an application's memory). @return false if no copy could be
 * made (*m unchanged).
 */
static bool
fault_own(struct fault_queue *q, struct rte_mbuf **m)
{
	struct rte_mbuf *c;

	if (fault_writable(*m))
		return true;
	c = rte_pktmbuf_copy(*m, fault_copy_pool(q, *m), 0, UINT32_MAX);
	if (c == NULL)
		return false;
	rte_pktmbuf_free(*m);
	*m = c;
	return true;
}

/* Flip one bit of the frame, on a private copy if its data is shared. */
static struct rte_mbuf *
fault_corrupt(struct fault_queue *q, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	struct rte_mbuf *seg;
	uint64_t bit;
	uint32_t off;

	if (len == 0)
		return m;
	bit = fault_rand(q) % ((uint64_t)len * 8);
	if (!fault_own(q, &m))
		return m;
	off = (uint32_t)(bit >> 3);
	for (seg = m; seg != NULL && off >= seg->data_len; seg = seg->next)
		off -= seg->data_len;
	if (seg == NULL)
		return m;	/* pkt_len larger than its segments */
	*rte_pktmbuf_mtod_offset(seg, uint8_t *, off) ^=
		(uint8_t)(1u << (bit & 7));
	q->stats[FAULT_STAT_CORRUPTED]++;
	return m;
}

/*
 * Mark Congestion Experienced on an ECN-capable IPv4 or IPv6 frame (on a
 * private copy if its data is shared), the IPv4 header checksum kept
 * right. Other frames pass as they are. @return whether it was marked.
 */
static bool
fault_mark_ce(struct fault_queue *q, struct rte_mbuf **mp)
{
	struct rte_mbuf *m = *mp;
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t l3 = RTE_ETHER_HDR_LEN;
	uint16_t type;
	uint8_t *ip;

	/* (the IP header in the first segment: a sender's zero-copy chain
	 * has its headers alone there) */
	if (m->data_len < RTE_ETHER_HDR_LEN + 4 + sizeof(struct rte_ipv4_hdr))
		return false;
	type = rte_be_to_cpu_16(*(const uint16_t *)(f + 12));
	if (type == RTE_ETHER_TYPE_VLAN) {
		type = rte_be_to_cpu_16(*(const uint16_t *)(f + 16));
		l3 += 4;
	}
	ip = f + l3;
	if (type == RTE_ETHER_TYPE_IPV4 && (ip[1] & 3) != 0 &&
	    (ip[1] & 3) != 3 && (ip[0] & 0xf) * 4u <= m->data_len - l3) {
		struct rte_ipv4_hdr *h;

		if (!fault_own(q, mp))
			return false;
		ip = rte_pktmbuf_mtod_offset(*mp, uint8_t *, l3);
		h = (struct rte_ipv4_hdr *)ip;
		ip[1] |= 3;
		h->hdr_checksum = 0;
		h->hdr_checksum = rte_ipv4_cksum(h);
	} else if (type == RTE_ETHER_TYPE_IPV6 && (ip[1] & 0x30) != 0 &&
		   (ip[1] & 0x30) != 0x30) {
		if (!fault_own(q, mp))
			return false;
		ip = rte_pktmbuf_mtod_offset(*mp, uint8_t *, l3);
		ip[1] |= 0x30;          /* the class's low two bits */
	} else {
		return false;
	}
	return true;
}

static inline struct rte_mbuf *
fault_dup(struct fault_queue *q, struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_copy(m, fault_copy_pool(q, m),
					      0, UINT32_MAX);

	if (c != NULL)
		q->stats[FAULT_STAT_DUPLICATED]++;
	return c;
}

/* One frame through every fault. */
static inline void
fault_frame(struct fault_queue *q, struct rte_mbuf *m, uint64_t now)
{
	struct rte_mbuf *copy = NULL;
	int hit[FAULT_KIND_MAX];
	unsigned int k;

	for (k = 0; k < FAULT_KIND_MAX; k++)
		hit[k] = fault_hit(q, (enum fault_kind)k);

	if (hit[FAULT_DROP]) {
		rte_pktmbuf_free(m);
		q->stats[FAULT_STAT_DROPPED]++;
		return;
	}
	if (hit[FAULT_CORRUPT])
		m = fault_corrupt(q, m);
	if (hit[FAULT_CE] && fault_mark_ce(q, &m))
		q->stats[FAULT_STAT_CE_MARKED]++;
	if (hit[FAULT_DUP])
		copy = fault_dup(q, m);

	if (hit[FAULT_DELAY]) {
		struct fault_delayed *d =
			&q->delay[q->delay_tail++ & q->delay_mask];

		d->m = m;
		d->copy = copy;
		d->due = now + q->delay_cycles;
		q->stats[FAULT_STAT_DELAYED]++;
	} else if (hit[FAULT_REORDER] && q->nb_held == 0) {
		q->held[0] = m;
		q->held[1] = copy;
		q->nb_held = copy != NULL ? 2 : 1;
		q->held_since = now;
		q->stats[FAULT_STAT_REORDERED]++;
	} else {
		fault_emit(q, m, copy);
	}
}

/* ---- switch ------------------------------------------------------------ */

static inline void
fault_qstat_add(struct fault_swport *p, enum fault_qstat s, uint64_t n)
{
	__atomic_fetch_add(&p->stats[s], n, __ATOMIC_RELAXED);
}

/* RED: the chance of a CE mark grows from 0 at kmin to pmax at kmax,
 * and is 1 beyond. */
static inline bool
fault_red_hit(struct fault_queue *q, const struct fault_swport *p,
	      uint64_t backlog)
{
	uint64_t threshold;

	if (p->kmax == 0 || backlog < p->kmin)
		return false;
	if (backlog >= p->kmax)
		return true;
	threshold = (uint64_t)((double)p->pmax *
			       (double)(backlog - p->kmin) /
			       (double)(p->kmax - p->kmin));
	return (fault_rand(q) >> 11) < threshold;
}

bool
droce_fault_rss_hash(const uint8_t *eth, uint32_t len,
		     const uint8_t key[FAULT_RSS_KEY_LEN], uint64_t hf,
		     uint32_t *hash)
{
	/* the tuple in 32-bit words of host order, as rte_softrss() has
	 * it: source address, destination address, source port << 16 |
	 * destination port */
	uint32_t t[RTE_THASH_V6_L4_LEN];
	const uint8_t *ip = eth + RTE_ETHER_HDR_LEN, *udp;
	uint16_t type;
	unsigned int i, n;

	if (len < RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + 8)
		return false;
	type = (uint16_t)(eth[12] << 8 | eth[13]);
	if (type == RTE_ETHER_TYPE_IPV4 &&
	    (hf & RTE_ETH_RSS_NONFRAG_IPV4_UDP)) {
		const struct rte_ipv4_hdr *h = (const void *)ip;

		if (h->next_proto_id != IPPROTO_UDP ||
		    (rte_be_to_cpu_16(h->fragment_offset) &
		     (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) ||
		    len < RTE_ETHER_HDR_LEN + rte_ipv4_hdr_len(h) + 8u)
			return false;
		udp = ip + rte_ipv4_hdr_len(h);
		t[0] = rte_be_to_cpu_32(h->src_addr);
		t[1] = rte_be_to_cpu_32(h->dst_addr);
		n = RTE_THASH_V4_L4_LEN;
	} else if (type == RTE_ETHER_TYPE_IPV6 &&
		   (hf & RTE_ETH_RSS_NONFRAG_IPV6_UDP)) {
		if (ip[6] != IPPROTO_UDP ||
		    len < RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv6_hdr) + 8)
			return false;
		udp = ip + sizeof(struct rte_ipv6_hdr);
		for (i = 0; i < 8; i++)
			t[i] = (uint32_t)ip[8 + 4 * i] << 24 |
			       (uint32_t)ip[9 + 4 * i] << 16 |
			       (uint32_t)ip[10 + 4 * i] << 8 | ip[11 + 4 * i];
		n = RTE_THASH_V6_L4_LEN;
	} else {
		return false;
	}
	t[n - 1] = (uint32_t)udp[0] << 24 | (uint32_t)udp[1] << 16 |
		   (uint32_t)udp[2] << 8 | udp[3];
	*hash = rte_softrss(t, n, key);
	return true;
}

/* The ring of @p p a frame @p m goes to: by RSS, else queue 0's. */
static inline struct rte_ring *
fault_swq_pick(const struct fault_swport *p, const struct rte_mbuf *m)
{
	uint64_t hf = __atomic_load_n(&p->rss_hf, __ATOMIC_ACQUIRE);
	struct rte_ring *r;
	uint32_t h;

	if (hf == 0 ||
	    !droce_fault_rss_hash(rte_pktmbuf_mtod(m, const uint8_t *),
				  m->data_len, p->rss_key, hf, &h))
		return p->rxq[0].ring;
	/* the redirection table NICs start with: entry i, queue i % n */
	r = __atomic_load_n(&p->rxq[(h % FAULT_RETA_SIZE) % p->nb_rxq].ring,
			    __ATOMIC_ACQUIRE);
	return r != NULL ? r : p->rxq[0].ring;
}

/*
 * Frame @p m joins the queue in front of port @p p, unless it is full
 * (then it is freed), marked CE by RED on the way. @p q is the sending
 * queue: its PRNG draws, its pool makes private copies.
 */
static void
fault_switch_enqueue(struct fault_queue *q, struct fault_swport *p,
		     struct rte_mbuf *m, uint64_t now)
{
	struct fault_slot slot = { .m = m, .due = 0 };
	uint64_t backlog = 0, max;

	if (unlikely(__atomic_load_n(&p->gone, __ATOMIC_RELAXED)))
		goto drop;
	if (p->cycles_per_unit != 0) {
		uint64_t units = p->per_frame ? 1 :
			rte_pktmbuf_pkt_len(m) + FAULT_WIRE_OVERHEAD;
		uint64_t cost = (uint64_t)(units * p->cycles_per_unit);
		uint64_t tail = __atomic_load_n(&p->tail, __ATOMIC_RELAXED);
		uint64_t start;

		do {
			start = RTE_MAX(tail, now);
			backlog = start - now;
			if (backlog + cost > p->limit)
				goto drop;
		} while (!__atomic_compare_exchange_n(&p->tail, &tail,
				start + cost, true, __ATOMIC_RELAXED,
				__ATOMIC_RELAXED));
		slot.due = start + cost;
		if (fault_red_hit(q, p, backlog) && fault_mark_ce(q, &m)) {
			slot.m = m;
			fault_qstat_add(p, FAULT_QSTAT_MARKED, 1);
		}
	}
	if (rte_ring_mp_enqueue_elem(fault_swq_pick(p, m), &slot,
				     sizeof(slot)) != 0)
		goto drop;
	fault_qstat_add(p, FAULT_QSTAT_QUEUED, 1);
	fault_qstat_add(p, FAULT_QSTAT_BACKLOG_MEAN, backlog);
	max = __atomic_load_n(&p->stats[FAULT_QSTAT_BACKLOG_MAX],
			      __ATOMIC_RELAXED);
	while (backlog > max &&
	       !__atomic_compare_exchange_n(&p->stats[FAULT_QSTAT_BACKLOG_MAX],
			&max, backlog, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return;
drop:
	rte_pktmbuf_free(slot.m);
	fault_qstat_add(p, FAULT_QSTAT_DROPPED, 1);
}

static inline uint64_t
fault_mac64(const uint8_t *a)
{
	return (uint64_t)a[0] << 40 | (uint64_t)a[1] << 32 |
	       (uint64_t)a[2] << 24 | (uint64_t)a[3] << 16 |
	       (uint64_t)a[4] << 8 | a[5];
}

/*
 * Send a frame from port @p from through its switch: to the port whose
 * address is its destination, else (broadcast, multicast, an address
 * not learnt yet) a copy to every other port. The sender's address is
 * learnt on the way.
 */
static void
fault_switch_send(struct fault_queue *q, struct rte_mbuf *m, uint64_t now)
{
	struct fault_swport *from = q->swport, *to = NULL, *p;
	struct fault_switch *sw = from->sw;
	const uint8_t *eth = rte_pktmbuf_mtod(m, const uint8_t *);
	unsigned int i, n = __atomic_load_n(&sw->nb_ports, __ATOMIC_ACQUIRE);
	uint64_t dst, src;

	if (unlikely(m->data_len < RTE_ETHER_HDR_LEN)) {
		rte_pktmbuf_free(m);
		fault_qstat_add(from, FAULT_QSTAT_DROPPED, 1);
		return;
	}
	dst = fault_mac64(eth) | FAULT_MAC_KNOWN;
	src = fault_mac64(eth + RTE_ETHER_ADDR_LEN) | FAULT_MAC_KNOWN;
	if (unlikely(__atomic_load_n(&from->mac, __ATOMIC_RELAXED) != src))
		__atomic_store_n(&from->mac, src, __ATOMIC_RELAXED);
	if ((eth[0] & 1) == 0 && dst == src) {
		to = from;		/* turned back, as by a NIC */
	} else if ((eth[0] & 1) == 0) {
		for (i = 0; i < n && to == NULL; i++) {
			p = sw->ports[i];
			if (p != from && __atomic_load_n(&p->mac,
					__ATOMIC_RELAXED) == dst)
				to = p;
		}
	}
	if (to != NULL) {
		fault_switch_enqueue(q, to, m, now);
		return;
	}
	for (i = 0; i < n; i++) {
		struct rte_mbuf *c;

		p = sw->ports[i];
		if (p == from || __atomic_load_n(&p->gone, __ATOMIC_RELAXED))
			continue;
		c = rte_pktmbuf_copy(m, fault_copy_pool(q, m), 0, UINT32_MAX);
		if (c == NULL)
			continue;
		fault_qstat_add(from, FAULT_QSTAT_FLOODED, 1);
		fault_switch_enqueue(q, p, c, now);
	}
	rte_pktmbuf_free(m);
}

/* Frames whose time on the line is over leave the port's switch queue
 * for its receive queue @p qid. */
static uint16_t
fault_switch_take(struct fault_swport *p, uint16_t qid,
		  struct rte_mbuf **pkts, uint16_t nb_pkts, uint64_t now)
{
	struct fault_swq *q = &p->rxq[qid];
	uint64_t bytes = 0;
	uint16_t n = 0;

	if (q->ring == NULL)
		return 0;
	while (n < nb_pkts) {
		if (!q->has_head) {
			if (rte_ring_sc_dequeue_elem(q->ring, &q->head,
						     sizeof(q->head)) != 0)
				break;
			q->has_head = true;
		}
		if (q->head.due > now)
			break;
		bytes += rte_pktmbuf_pkt_len(q->head.m);
		pkts[n++] = q->head.m;
		q->has_head = false;
	}
	if (n != 0) {
		fault_qstat_add(p, FAULT_QSTAT_SENT, n);
		fault_qstat_add(p, FAULT_QSTAT_SENT_BYTES, bytes);
	}
	return n;
}

void
droce_fault_swport_drain(struct fault_swport *p)
{
	struct rte_mbuf *m;
	uint16_t q;

	for (q = 0; q < FAULT_SWITCH_RXQ; q++) {
		if (p->rxq[q].has_head) {
			rte_pktmbuf_free(p->rxq[q].head.m);
			p->rxq[q].has_head = false;
		}
		while (fault_switch_take(p, q, &m, 1, UINT64_MAX) == 1)
			rte_pktmbuf_free(m);
	}
}

/* Is @p m to the port's own address? */
static inline bool
fault_to_self(const struct fault_queue *q, const struct rte_mbuf *m)
{
	return m->data_len >= RTE_ETHER_HDR_LEN &&
		rte_is_same_ether_addr(rte_pktmbuf_mtod(m,
					const struct rte_ether_addr *),
				       &q->data->mac_addrs[0]);
}

/*
 * Send @p pkts to the wrapped port, those to the port's own address to
 * its loop ring (lost if it is full). @return how many were taken: what
 * the wrapped port refuses and what comes after it are not.
 */
static uint16_t
fault_wrapped_tx(struct fault_queue *q, struct rte_mbuf **pkts,
		 uint16_t nb_pkts)
{
	uint16_t done = 0, run, sent;

	while (done < nb_pkts) {
		if (fault_to_self(q, pkts[done])) {
			if (rte_ring_mp_enqueue(q->loop, pkts[done]) != 0) {
				rte_pktmbuf_free(pkts[done]);
				q->stats[FAULT_STAT_DROPPED]++;
			}
			done++;
			continue;
		}
		for (run = 1; done + run < nb_pkts &&
		     !fault_to_self(q, pkts[done + run]); run++)
			;
		sent = rte_eth_tx_burst(q->port_id, q->queue_id, pkts + done,
					run);
		done += sent;
		if (sent < run)
			break;
	}
	return done;
}

/* Receive from the wrapped port, after what its loop ring holds. */
static inline uint16_t
fault_wrapped_rx(struct fault_queue *q, struct rte_mbuf **pkts,
		 uint16_t nb_pkts)
{
	uint16_t n = 0;

	if (unlikely(!rte_ring_empty(q->loop)))
		n = (uint16_t)rte_ring_mc_dequeue_burst(q->loop, (void **)pkts,
							nb_pkts, NULL);
	return n + rte_eth_rx_burst(q->port_id, q->queue_id, pkts + n,
				    (uint16_t)(nb_pkts - n));
}

/* What the rx faults work on: the wrapped port's frames, or the switch's. */
static inline uint16_t
fault_rx_source(struct fault_queue *q, struct rte_mbuf **pkts,
		uint16_t nb_pkts, uint64_t now)
{
	if (q->swport != NULL)
		return fault_switch_take(q->swport, q->queue_id, pkts,
					 nb_pkts, now);
	return fault_wrapped_rx(q, pkts, nb_pkts);
}

/* Is the link down? Then the frames go nowhere. */
static inline bool
fault_cut(const struct fault_queue *q)
{
	return __atomic_load_n(q->cut, __ATOMIC_RELAXED);
}

/* Link down: what arrives is taken from the wrapped port and dropped. */
static uint16_t
fault_rx_cut(struct fault_queue *q)
{
	struct rte_mbuf *in[FAULT_BURST_MAX];
	uint16_t nb = fault_rx_source(q, in, FAULT_BURST_MAX, rte_rdtsc());

	rte_pktmbuf_free_bulk(in, nb);
	q->stats[FAULT_STAT_DROPPED] += nb;
	return 0;
}

/* Link down: what is sent is dropped. */
static uint16_t
fault_tx_cut(struct fault_queue *q, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	rte_pktmbuf_free_bulk(pkts, nb_pkts);
	q->stats[FAULT_STAT_DROPPED] += nb_pkts;
	return nb_pkts;
}

/* Hand the ready frames to the wrapped port, as many as it takes, or
 * all of them to the switch. */
static inline void
fault_tx_flush(struct fault_queue *q, uint64_t now)
{
	if (q->swport != NULL) {
		q->stats[FAULT_STAT_PASSED] += fault_ready_count(q);
		while (q->ready_head != q->ready_tail)
			fault_switch_send(q, q->ready[q->ready_head++ &
						      FAULT_READY_MASK], now);
		return;
	}
	while (q->ready_head != q->ready_tail) {
		uint32_t at = q->ready_head & FAULT_READY_MASK;
		uint32_t n = RTE_MIN(fault_ready_count(q),
				     FAULT_READY_SIZE - at);
		uint16_t sent = fault_wrapped_tx(q, &q->ready[at],
						 (uint16_t)n);

		q->ready_head += sent;
		q->stats[FAULT_STAT_PASSED] += sent;
		if (sent < n)
			break;
	}
}

/*
 * What the tx queue of rx queue @p q's number holds and may leave by
 * now goes out, unless its own lcore is sending (it lets it out then).
 */
static inline void
fault_tx_release(const struct fault_queue *q, uint64_t now)
{
	struct fault_queue *tq;

	if (q->queue_id >= q->data->nb_tx_queues)
		return;
	tq = q->data->tx_queues[q->queue_id];
	if (tq == NULL || !rte_spinlock_trylock(&tq->lock))
		return;
	if (tq->ready_head != tq->ready_tail ||
	    tq->delay_head != tq->delay_tail || tq->nb_held != 0) {
		fault_release(tq, now);
		fault_tx_flush(tq, now);
	}
	rte_spinlock_unlock(&tq->lock);
}

uint16_t
droce_fault_rx_burst(void *rxq, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct fault_queue *q = rxq;
	struct rte_mbuf *in[FAULT_BURST_MAX];
	uint64_t now = rte_rdtsc();
	uint32_t ready, n, i;
	uint16_t nb;

	if (unlikely(fault_cut(q)))
		return fault_rx_cut(q);
	fault_tx_release(q, now);
	fault_release(q, now);
	ready = fault_ready_count(q);
	if (ready < nb_pkts) {
		n = fault_intake(q, RTE_MIN(nb_pkts - ready,
					    (uint32_t)FAULT_BURST_MAX));
		nb = n != 0 ? fault_rx_source(q, in, (uint16_t)n, now) : 0;
		for (i = 0; i < nb; i++)
			fault_frame(q, in[i], now);
	}

	n = RTE_MIN((uint32_t)nb_pkts, fault_ready_count(q));
	for (i = 0; i < n; i++)
		pkts[i] = q->ready[(q->ready_head + i) & FAULT_READY_MASK];
	q->ready_head += n;
	q->stats[FAULT_STAT_PASSED] += n;
	return (uint16_t)n;
}

uint16_t
droce_fault_tx_burst(void *txq, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct fault_queue *q = txq;
	uint64_t now = rte_rdtsc();
	unsigned int nb, i;

	if (unlikely(fault_cut(q)))
		return fault_tx_cut(q, pkts, nb_pkts);
	rte_spinlock_lock(&q->lock);
	fault_release(q, now);
	nb = fault_intake(q, nb_pkts);
	for (i = 0; i < nb; i++)
		fault_frame(q, pkts[i], now);
	fault_tx_flush(q, now);
	rte_spinlock_unlock(&q->lock);
	return (uint16_t)nb;
}

uint16_t
droce_fault_rx_pass(void *rxq, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct fault_queue *q = rxq;
	uint16_t nb;

	if (unlikely(fault_cut(q)))
		return fault_rx_cut(q);
	fault_tx_release(q, rte_rdtsc());
	nb = fault_wrapped_rx(q, pkts, nb_pkts);
	q->stats[FAULT_STAT_PASSED] += nb;
	return nb;
}

uint16_t
droce_fault_tx_pass(void *txq, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct fault_queue *q = txq;
	uint16_t nb;

	if (unlikely(fault_cut(q)))
		return fault_tx_cut(q, pkts, nb_pkts);
	nb = fault_wrapped_tx(q, pkts, nb_pkts);
	q->stats[FAULT_STAT_PASSED] += nb;
	return nb;
}

uint16_t
droce_fault_tx_prepare(void *txq, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct fault_queue *q = txq;

	return rte_eth_tx_prepare(q->port_id, q->queue_id, pkts, nb_pkts);
}

/* ---- control path ------------------------------------------------------ */

struct fault_queue *
droce_fault_queue_create(const struct fault_port *fp, enum fault_dir dir,
			 uint16_t queue_id, struct rte_mempool *mp,
			 int socket_id)
{
	const struct fault_params *p = &fp->params;
	int faulty = (p->dir & FAULT_DIR_BIT(dir)) != 0;
	uint32_t nb_delay = faulty && p->prob[FAULT_DELAY] > 0.0 ?
		FAULT_DELAY_SIZE : 0;
	uint64_t hz = rte_get_tsc_hz();
	struct fault_queue *q;
	unsigned int k;

	q = rte_zmalloc_socket("net_fault_queue",
			       sizeof(*q) + nb_delay * sizeof(q->delay[0]),
			       RTE_CACHE_LINE_SIZE, socket_id);
	if (q == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	q->port_id = fp->wrapped_port;
	q->data = rte_eth_devices[fp->port_id].data;
	q->loop = fp->loop;
	rte_spinlock_init(&q->lock);
	q->cut = &fp->cut;
	if (dir == FAULT_TX && p->dma)
		q->dma = (struct fault_dma *)(uintptr_t)&fp->dma;
	/* each rx queue of a switch's port takes its own ring's frames */
	q->swport = fp->swport;
	q->queue_id = queue_id;
	q->mp = mp;
	q->delay_mask = nb_delay != 0 ? nb_delay - 1 : 0;
	/* p is a multiple of 2^-53 away from what was asked, at most */
	for (k = 0; k < FAULT_KIND_MAX && faulty; k++)
		q->threshold[k] = (uint64_t)(p->prob[k] * 0x1p53);
	q->delay_cycles = p->delay_us * hz / US_PER_S;
	q->reorder_cycles = p->reorder_us * hz / US_PER_S;
	/* distinct streams per direction and queue, all from one seed */
	q->rng = fault_mix64(p->seed ^
		fault_mix64(((uint64_t)dir << 32 | queue_id) + 1));
	return q;
}

static void
fault_drain_one(struct fault_queue *q, struct rte_mbuf *m,
		enum fault_dir dir)
{
	if (m == NULL)
		return;
	if (dir == FAULT_TX && q->swport == NULL &&
	    fault_wrapped_tx(q, &m, 1) == 1) {
		q->stats[FAULT_STAT_PASSED]++;
		return;
	}
	rte_pktmbuf_free(m);
	q->stats[FAULT_STAT_DROPPED]++;
}

void
droce_fault_queue_drain(struct fault_queue *q, enum fault_dir dir)
{
	unsigned int i;

	while (q->ready_head != q->ready_tail)
		fault_drain_one(q, q->ready[q->ready_head++ & FAULT_READY_MASK],
				dir);
	while (q->delay_head != q->delay_tail) {
		struct fault_delayed *d =
			&q->delay[q->delay_head++ & q->delay_mask];

		fault_drain_one(q, d->m, dir);
		fault_drain_one(q, d->copy, dir);
	}
	for (i = 0; i < q->nb_held; i++)
		fault_drain_one(q, q->held[i], dir);
	q->nb_held = 0;
}
