/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * DCQCN's reaction point (droce_dcqcn.h): the arithmetic alone, kept
 * free of DPDK so that its unit test runs it against sequences worked
 * out by hand.
 */

#include "droce_dcqcn.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

void
droce_dcqcn_defaults(struct droce_dcqcn_params *p, uint64_t rate_max)
{
	*p = (struct droce_dcqcn_params){
		.rate_max = rate_max,
		.rate_min = 10000,              /* 10 Mb/s */
		/* (a RoCE NIC's increases; the paper's 40 and 100 Mb/s are
		 * for 40 Gb/s links, too coarse for slower ones) */
		.rate_ai = 5000,                /* 5 Mb/s */
		.rate_hai = 50000,              /* 50 Mb/s */
		.g_shift = 8,                   /* 1/256 */
		.alpha_init = DROCE_DCQCN_ALPHA_ONE,
		.alpha_period_us = 55,
		.increase_period_us = 55,
		.byte_counter = 10u << 20,      /* 10 MB */
		.fast_recovery = 5,
	};
}

void
droce_dcqcn_init(struct droce_dcqcn *st, const struct droce_dcqcn_params *p,
		 uint64_t now)
{
	*st = (struct droce_dcqcn){
		.rate = p->rate_max,
		.target = p->rate_max,
		.alpha = p->alpha_init,
		.alpha_at = now + p->alpha_period_us,
		.increase_at = now + p->increase_period_us,
	};
}

void
droce_dcqcn_cnp(struct droce_dcqcn *st, const struct droce_dcqcn_params *p,
		uint64_t now)
{
	uint64_t cut = st->rate * st->alpha / (2 * DROCE_DCQCN_ALPHA_ONE);

	st->target = st->rate;
	st->rate = MAX(st->rate - cut, p->rate_min);
	st->timer_events = 0;
	st->byte_events = 0;
	st->bytes = 0;
	st->increase_at = now + p->increase_period_us;
	st->cnp_in_period = true;
	st->cnps++;
}

/* An increase event; T and B as they were before it. */
static void
increase(struct droce_dcqcn *st, const struct droce_dcqcn_params *p)
{
	uint32_t hi = MAX(st->timer_events, st->byte_events);
	uint32_t lo = MIN(st->timer_events, st->byte_events);

	if (lo >= p->fast_recovery)
		st->target += (uint64_t)(lo - p->fast_recovery + 1) *
			p->rate_hai;            /* hyper increase */
	else if (hi >= p->fast_recovery)
		st->target += p->rate_ai;       /* additive increase */
	/* (else fast recovery: towards the rate before the cut) */
	st->target = MIN(st->target, p->rate_max);
	/* (rounded up: the rate reaches the target) */
	st->rate = (st->rate + st->target + 1) / 2;
}

void
droce_dcqcn_sent(struct droce_dcqcn *st, const struct droce_dcqcn_params *p,
		 uint64_t bytes)
{
	st->bytes += bytes;
	while (st->bytes >= p->byte_counter) {
		st->bytes -= p->byte_counter;
		increase(st, p);
		st->byte_events++;
	}
}

void
droce_dcqcn_tick(struct droce_dcqcn *st, const struct droce_dcqcn_params *p,
		 uint64_t now)
{
	/* (long idle: alpha has decayed to 0, whatever it was) */
	if (now > st->alpha_at && now - st->alpha_at >=
	    (uint64_t)p->alpha_period_us << (p->g_shift + 6)) {
		st->alpha = 0;
		st->cnp_in_period = false;
		st->alpha_at = now + p->alpha_period_us;
	}
	while (now >= st->alpha_at) {
		/* (the decrement rounded up: alpha reaches 0) */
		uint32_t a = st->alpha - ((st->alpha + (1u << p->g_shift) - 1) >>
					  p->g_shift);

		if (st->cnp_in_period)
			a += DROCE_DCQCN_ALPHA_ONE >> p->g_shift;
		st->alpha = MIN(a, DROCE_DCQCN_ALPHA_ONE);
		st->cnp_in_period = false;
		st->alpha_at += p->alpha_period_us;
	}
	/* (a tick many periods late: the QP could not send meanwhile, its
	 * lcore held up; one period passed for it) */
	if (now > st->increase_at &&
	    now - st->increase_at >= 4ull * p->increase_period_us)
		st->increase_at = now;
	while (now >= st->increase_at) {
		if (st->rate == p->rate_max) {
			/* at the port's rate: nothing to raise until a CNP */
			st->increase_at = now + p->increase_period_us;
			break;
		}
		increase(st, p);
		st->timer_events++;
		st->increase_at += p->increase_period_us;
	}
}
