/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The forwarding loop: a burst from each port goes to the other, each
 * RoCE frame first matched against the script's events (the first that
 * matches and still has frames to act on acts), every frame written to
 * the trace as it leaves, with what was done to it. Frames delayed or
 * held to be reordered wait in one list, in the order they came.
 */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <droce_wire.h>

#include "inject_fwd.h"

#define BURST 32
/* empty turns before an idle sleep (--idle-us) */
#define IDLE_TURNS 256
/* a burst's frames out: each may bring a duplicate and frames that were
 * held to go after it */
#define OUT_MAX (4 * BURST)

static uint64_t
now_ns(const struct inj_fwd *fw)
{
	return fw->ns0 + (uint64_t)((double)(rte_get_tsc_cycles() - fw->tsc0)
				    * 1e9 / (double)fw->hz);
}

static void
trace(struct inj_fwd *fw, const struct rte_mbuf *m, const char *what)
{
	char comment[64];

	if (fw->trace.f == NULL)
		return;
	if (what != NULL)
		snprintf(comment, sizeof(comment), "droce-lab: %s", what);
	/* a frame built anew is kept whole: its new ICRC can be checked */
	inj_trace_frame(&fw->trace, now_ns(fw), rte_pktmbuf_mtod(m, void *),
			m->data_len, what != NULL ? comment : NULL,
			what != NULL && strncmp(what, "rewritten", 9) == 0);
}

static struct inj_flow *
flow_of(struct inj_fwd *fw, int dir, const struct droce_wire_pkt *p,
	int *index)
{
	struct inj_flow *fl;
	int i;

	for (i = 0; i < fw->nflows; i++) {
		fl = fw->flows[i];
		if (fl->dir == dir && fl->dqpn == p->bth.dqpn &&
		    memcmp(fl->src, p->src_gid, 16) == 0 &&
		    memcmp(fl->dst, p->dst_gid, 16) == 0) {
			*index = i;
			return fl;
		}
	}
	if (fw->nflows == INJ_MAX_FLOWS)
		return NULL;
	fl = calloc(1, sizeof(*fl));
	if (fl == NULL)
		return NULL;
	fl->dir = dir;
	fl->dqpn = p->bth.dqpn;
	fl->first_psn = p->bth.psn;
	memcpy(fl->src, p->src_gid, 16);
	memcpy(fl->dst, p->dst_gid, 16);
	*index = fw->nflows;
	fw->flows[fw->nflows++] = fl;
	return fl;
}

static bool
matches(const struct inj_event *e, int dir, int flow, uint32_t rpsn,
	uint32_t pass, const struct droce_wire_pkt *p)
{
	return (e->count == 0 || e->done < e->count) &&
		(e->dir == INJ_ANY || e->dir == dir) &&
		(e->flow == INJ_ANY || e->flow == flow) &&
		(e->dqpn == INJ_ANY || e->dqpn == p->bth.dqpn) &&
		(e->psn == INJ_ANY || e->psn == p->bth.psn) &&
		(e->rpsn == INJ_ANY || e->rpsn == rpsn) &&
		(e->opcode == INJ_ANY || e->opcode == p->bth.opcode) &&
		(e->iter == 0 || e->iter == pass);
}

/* IP ECN to CE (11): not covered by the ICRC, the IPv4 checksum is */
static void
mark_ce(struct rte_mbuf *m, const struct droce_wire_pkt *p)
{
	uint8_t *l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, p->l3_off);

	if (p->ip_version == 4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

		ip->type_of_service |= 3;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	} else {
		l3[1] |= 0x30;
	}
}

/*
 * Frame @p m from port @p dir's side out to the other, written to the
 * trace as @p what (NULL: not RoCE); if it is RoCE, the frames held to
 * be reordered behind RoCE frames its way have one less to wait for,
 * and those that waited for this one go right after it.
 */
static void
forward(struct inj_fwd *fw, int dir, struct rte_mbuf *m, const char *what,
	struct rte_mbuf **out, uint16_t *nout)
{
	unsigned int i, keep = 0;

	trace(fw, m, what);
	out[(*nout)++] = m;
	if (fw->nreordered == 0 || what == NULL)  /* not RoCE */
		return;
	for (i = 0; i < fw->ndelayed; i++) {
		struct inj_delayed *d = &fw->delayed[i];
		char word[48];

		if (d->k == 0 || d->dir != dir || d->left > 1 ||
		    *nout == OUT_MAX) {
			if (d->k != 0 && d->dir == dir && d->left > 1)
				d->left--;
			fw->delayed[keep++] = *d;
			continue;
		}
		snprintf(word, sizeof(word), "reordered after %u", d->k);
		trace(fw, d->m, word);
		out[(*nout)++] = d->m;
		fw->nreordered--;
	}
	fw->ndelayed = keep;
}

/* Hold frame @p m from @p dir's side: @p us later, or (@p k not 0)
 * after k frames more its way, us at most. */
static bool
hold(struct inj_fwd *fw, int dir, struct rte_mbuf *m, uint32_t us,
     uint32_t k)
{
	struct inj_delayed *d;

	if (fw->ndelayed == INJ_MAX_DELAYED)
		return false;
	d = &fw->delayed[fw->ndelayed++];
	*d = (struct inj_delayed){
		.m = m, .dir = dir, .us = us, .k = k, .left = k,
		.due = rte_get_tsc_cycles() + fw->hz / 1000000 * us,
	};
	fw->nreordered += k != 0;
	return true;
}

/*
 * Set event @p e's field in the frame @p m, decoded as @p p, built anew
 * (lengths, checksums and the ICRC made again). @return what was done,
 * in @p word, or NULL if the frame could not be built (it goes as it
 * came).
 */
static const char *
rewrite(struct inj_fwd *fw, struct rte_mbuf *m, struct droce_wire_pkt *p,
	const struct inj_event *e, char *word, size_t len)
{
	uint32_t *f24 = NULL;
	uint64_t v = e->value;
	int n;

	switch (e->field) {
	case INJ_F_OPCODE:
		p->bth.opcode = (uint8_t)v;
		p->op = NULL;
		break;
	case INJ_F_SE: p->bth.se = (uint8_t)v; break;
	case INJ_F_MIGREQ: p->bth.m = (uint8_t)v; break;
	case INJ_F_PKEY: p->bth.pkey = (uint16_t)v; break;
	case INJ_F_FECN: p->bth.fecn = (uint8_t)v; break;
	case INJ_F_BECN: p->bth.becn = (uint8_t)v; break;
	case INJ_F_DQPN: p->bth.dqpn = (uint32_t)v; break;
	case INJ_F_ACKREQ: p->bth.ackreq = (uint8_t)v; break;
	case INJ_F_PSN: f24 = &p->bth.psn; break;
	case INJ_F_VA: p->reth.va = v; break;
	case INJ_F_RKEY: p->reth.rkey = (uint32_t)v; break;
	case INJ_F_DLEN: p->reth.dlen = (uint32_t)v; break;
	case INJ_F_SYNDROME: p->aeth.syndrome = (uint8_t)v; break;
	case INJ_F_MSN: f24 = &p->aeth.msn; break;
	case INJ_F_IMMDT: p->immdt = (uint32_t)v; break;
	default: return NULL;
	}
	if (f24 != NULL) {
		*f24 = (e->relative == 0 ? (uint32_t)v : e->relative > 0 ?
			*f24 + (uint32_t)v : *f24 - (uint32_t)v) & 0xffffff;
		v = *f24;
	}
	n = droce_wire_build(fw->scratch, sizeof(fw->scratch), p);
	if (n < 0 || (uint32_t)n > (uint32_t)m->data_len +
	    rte_pktmbuf_tailroom(m))
		return NULL;
	memcpy(rte_pktmbuf_mtod(m, void *), fw->scratch, (size_t)n);
	m->data_len = (uint16_t)n;
	m->pkt_len = (uint32_t)n;
	snprintf(word, len, "rewritten %s=%" PRIu64,
		 inj_field_name[e->field], v);
	return word;
}

/* One frame from port @p dir's side: where it goes, if anywhere. */
static void
handle(struct inj_fwd *fw, int dir, struct rte_mbuf *m,
       struct rte_mbuf **out, uint16_t *nout)
{
	struct droce_wire_pkt p;
	struct inj_event *e = NULL;
	struct inj_flow *fl;
	uint32_t rpsn, pass;
	int flow, i;

	fw->frames[dir]++;
	if (m->nb_segs != 1 ||
	    droce_wire_parse(rte_pktmbuf_mtod(m, void *), m->data_len,
			     DROCE_WIRE_NO_ICRC | DROCE_WIRE_NO_IPCSUM,
			     &p) < 0) {
		forward(fw, dir, m, NULL, out, nout);
		return;
	}
	fw->roce[dir]++;
	fl = flow_of(fw, dir, &p, &flow);
	if (fl == NULL) {
		forward(fw, dir, m, "delivered", out, nout);
		return;
	}
	fl->frames++;
	rpsn = (p.bth.psn - fl->first_psn) & 0xffffff;
	pass = fl->passes[rpsn & 0xffff];
	if (pass < 255)
		fl->passes[rpsn & 0xffff] = (uint8_t)++pass;
	for (i = 0; i < fw->nev; i++)
		if (matches(&fw->ev[i], dir, flow, rpsn, pass, &p)) {
			e = &fw->ev[i];
			e->done++;
			break;
		}
	switch (e == NULL ? INJ_NACTIONS : e->action) {
	case INJ_DROP:
		trace(fw, m, "dropped");
		rte_pktmbuf_free(m);
		return;
	case INJ_CE:
		mark_ce(m, &p);
		forward(fw, dir, m, "ce", out, nout);
		return;
	case INJ_CORRUPT:
		rte_pktmbuf_mtod(m, uint8_t *)[p.frame_len - 1] ^= 1;
		forward(fw, dir, m, "corrupted", out, nout);
		return;
	case INJ_DUP: {
		struct rte_mbuf *copy = rte_pktmbuf_copy(m, fw->pool, 0,
							 UINT32_MAX);

		forward(fw, dir, m, "delivered", out, nout);
		if (copy != NULL)
			forward(fw, dir, copy, "duplicated", out, nout);
		return;
	}
	case INJ_DELAY:
	case INJ_REORDER:
		if (!hold(fw, dir, m, e->us,
			  e->action == INJ_REORDER ? e->k : 0))
			break;
		return;
	case INJ_REWRITE: {
		char word[64];
		const char *what = rewrite(fw, m, &p, e, word, sizeof(word));

		forward(fw, dir, m, what != NULL ? what : "delivered", out,
			nout);
		return;
	}
	default:
		break;
	}
	forward(fw, dir, m, "delivered", out, nout);
}

/*
 * Frames for port @p to: queued behind those it refused before, then as
 * many sent as it takes. What it refuses waits for the next turn, and
 * while some wait nothing more is read from the other side: the
 * sender's own port fills and holds it back, as a link would (no loss
 * of the injector's own making, and no wait that would keep the other
 * direction's ACKs from moving).
 */
static void
fwd_send(struct inj_fwd *fw, int to, struct rte_mbuf **out, uint16_t n)
{
	struct inj_backlog *q = &fw->backlog[to];
	uint16_t sent;

	if (n > INJ_BACKLOG - q->n) {
		fw->tx_drop += n;
		rte_pktmbuf_free_bulk(out, n);
		n = 0;
	}
	memcpy(q->m + q->n, out, n * sizeof(out[0]));
	q->n += n;
	if (q->n == 0)
		return;
	sent = rte_eth_tx_burst(fw->port[to], 0, q->m, q->n);
	q->n -= sent;
	memmove(q->m, q->m + sent, q->n * sizeof(q->m[0]));
}

/* Delayed frames whose time has come, in the order they were held. */
static void
release(struct inj_fwd *fw, bool all)
{
	uint64_t now = rte_get_tsc_cycles();
	unsigned int i, keep = 0;

	for (i = 0; i < fw->ndelayed; i++) {
		struct inj_delayed *d = &fw->delayed[i];
		char what[32];

		if (!all && now < d->due) {
			fw->delayed[keep++] = *d;
			continue;
		}
		if (d->k == 0) {
			snprintf(what, sizeof(what), "delayed %u us", d->us);
		} else {
			snprintf(what, sizeof(what), "reordered after %u",
				 d->k - d->left);
			fw->nreordered--;
		}
		trace(fw, d->m, what);
		fwd_send(fw, !d->dir, &d->m, 1);
	}
	fw->ndelayed = keep;
}

void
inj_fwd_run(struct inj_fwd *fw, volatile bool *stop)
{
	struct rte_mbuf *in[BURST], *out[OUT_MAX];
	uint64_t end = fw->duration_s != 0 ? rte_get_tsc_cycles() +
		fw->hz * fw->duration_s : UINT64_MAX;
	unsigned int idle = 0;
	int dir;

	while (!*stop && rte_get_tsc_cycles() < end) {
		/* (a sleep with frames held would hold them longer) */
		if (fw->idle_us != 0 && ++idle > IDLE_TURNS &&
		    fw->ndelayed == 0) {
			struct timespec ts = {
				.tv_nsec = (long)fw->idle_us * 1000,
			};

			nanosleep(&ts, NULL);
		}
		for (dir = 0; dir < 2; dir++) {
			uint16_t n, nout = 0, i;

			/* the other side's port first takes what it refused */
			fwd_send(fw, !dir, out, 0);
			if (fw->backlog[!dir].n != 0) {
				idle = 0;
				continue;
			}
			n = rte_eth_rx_burst(fw->port[dir], 0, in, BURST);
			if (n != 0)
				idle = 0;
			for (i = 0; i < n; i++)
				handle(fw, dir, in[i], out, &nout);
			if (nout != 0)
				fwd_send(fw, !dir, out, nout);
		}
		if (fw->ndelayed != 0)
			release(fw, false);
	}
	release(fw, true);
	/* what the ports still refuse after a last millisecond is lost */
	end = rte_get_tsc_cycles() + fw->hz / 1000;
	while ((fw->backlog[0].n != 0 || fw->backlog[1].n != 0) &&
	       rte_get_tsc_cycles() < end)
		for (dir = 0; dir < 2; dir++)
			fwd_send(fw, dir, out, 0);
	for (dir = 0; dir < 2; dir++) {
		fw->tx_drop += fw->backlog[dir].n;
		rte_pktmbuf_free_bulk(fw->backlog[dir].m, fw->backlog[dir].n);
		fw->backlog[dir].n = 0;
	}
}

static void
gid_text(const uint8_t *gid, char *buf, size_t len)
{
	static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					0xff, 0xff };

	if (memcmp(gid, v4, 12) == 0)
		snprintf(buf, len, "%u.%u.%u.%u", gid[12], gid[13], gid[14],
			 gid[15]);
	else
		snprintf(buf, len, "%02x%02x:%02x%02x:...:%02x%02x", gid[0],
			 gid[1], gid[2], gid[3], gid[14], gid[15]);
}

void
inj_fwd_report(const struct inj_fwd *fw, FILE *f)
{
	int i;

	for (i = 0; i < 2; i++)
		fprintf(f, "port %u -> %u: %" PRIu64 " frames, %" PRIu64
			" RoCE\n", fw->port[i], fw->port[!i], fw->frames[i],
			fw->roce[i]);
	for (i = 0; i < fw->nflows; i++) {
		const struct inj_flow *fl = fw->flows[i];
		char s[48], d[48];

		gid_text(fl->src, s, sizeof(s));
		gid_text(fl->dst, d, sizeof(d));
		fprintf(f, "flow %d: %s %s > %s dqpn 0x%06x first psn %u, %"
			PRIu64 " frames\n", i, fl->dir == 0 ? "ab" : "ba", s,
			d, fl->dqpn, fl->first_psn, fl->frames);
	}
	for (i = 0; i < fw->nev; i++)
		fprintf(f, "event %d (line %d, %s): %u frames\n", i + 1,
			fw->ev[i].line, inj_action_word[fw->ev[i].action],
			fw->ev[i].done);
	if (fw->tx_drop != 0)
		fprintf(f, "%" PRIu64 " frames the ports refused\n",
			fw->tx_drop);
	fprintf(f, "trace: %" PRIu64 " frames\n", fw->trace.frames);
}
