/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Scripts: one event a line,
 *
 *   ACTION [dir=ab|ba] [flow=N] [dqpn=N] [psn=N] [rpsn=N] [op=NAME|N]
 *          [iter=N] [count=N|all] [us=N] [k=N] [field=NAME value=V]
 *
 * ACTION one of drop, ce, corrupt, dup, delay, reorder, rewrite; numbers
 * decimal or 0x hex; op an opcode's name as droce-dump prints it
 * (RC_RDMA_WRITE_ONLY) or its number. An event matches the frames that
 * have every field it names, and acts on count of them (1 unless said).
 * delay needs us; reorder lets k frames (1 unless said) its way go
 * first, waiting us at most (10000 unless said); rewrite sets field to
 * value (a number; for opcode a name too; for psn and msn +N or -N too).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <droce_wire.h>

#include "inject.h"

const char *const inj_action_word[INJ_NACTIONS] = {
	[INJ_DROP] = "dropped",
	[INJ_CE] = "ce",
	[INJ_CORRUPT] = "corrupted",
	[INJ_DUP] = "duplicated",
	[INJ_DELAY] = "delayed",
	[INJ_REORDER] = "reordered",
	[INJ_REWRITE] = "rewritten",
};

const char *const inj_field_name[INJ_NFIELDS] = {
	[INJ_F_OPCODE] = "opcode", [INJ_F_SE] = "se",
	[INJ_F_MIGREQ] = "migreq", [INJ_F_PKEY] = "pkey",
	[INJ_F_FECN] = "fecn", [INJ_F_BECN] = "becn", [INJ_F_DQPN] = "dqpn",
	[INJ_F_ACKREQ] = "ackreq", [INJ_F_PSN] = "psn", [INJ_F_VA] = "va",
	[INJ_F_RKEY] = "rkey", [INJ_F_DLEN] = "dlen",
	[INJ_F_SYNDROME] = "syndrome", [INJ_F_MSN] = "msn",
	[INJ_F_IMMDT] = "immdt",
};

/* the largest value of each field */
static const uint64_t field_max[INJ_NFIELDS] = {
	[INJ_F_OPCODE] = 0xff, [INJ_F_SE] = 1, [INJ_F_MIGREQ] = 1,
	[INJ_F_PKEY] = 0xffff, [INJ_F_FECN] = 1, [INJ_F_BECN] = 1,
	[INJ_F_DQPN] = 0xffffff, [INJ_F_ACKREQ] = 1, [INJ_F_PSN] = 0xffffff,
	[INJ_F_VA] = UINT64_MAX, [INJ_F_RKEY] = UINT32_MAX,
	[INJ_F_DLEN] = UINT32_MAX, [INJ_F_SYNDROME] = 0xff,
	[INJ_F_MSN] = 0xffffff, [INJ_F_IMMDT] = UINT32_MAX,
};

static const char *const action_name[INJ_NACTIONS] = {
	[INJ_DROP] = "drop",
	[INJ_CE] = "ce",
	[INJ_CORRUPT] = "corrupt",
	[INJ_DUP] = "dup",
	[INJ_DELAY] = "delay",
	[INJ_REORDER] = "reorder",
	[INJ_REWRITE] = "rewrite",
};

static int
number(const char *s, int64_t max, int64_t *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || n > (uint64_t)max)
		return -1;
	*v = (int64_t)n;
	return 0;
}

static int
opcode(const char *s)
{
	int64_t v;
	int i;

	if (number(s, 255, &v) == 0)
		return droce_opcode_get((uint8_t)v) != NULL ? (int)v : -1;
	for (i = 0; i < 256; i++)
		if (droce_opcode_get((uint8_t)i) != NULL &&
		    strcasecmp(droce_opcode_name((uint8_t)i), s) == 0)
			return i;
	return -1;
}

/* rewrite's value=, once field= is known */
static int
value(struct inj_event *e, const char *val)
{
	char *end;
	int op;

	if (e->field < 0)
		return -1;
	e->relative = 0;
	if ((val[0] == '+' || val[0] == '-') &&
	    (e->field == INJ_F_PSN || e->field == INJ_F_MSN)) {
		e->relative = val[0] == '+' ? 1 : -1;
		val++;
	}
	if (e->field == INJ_F_OPCODE && (op = opcode(val)) >= 0) {
		e->value = (uint64_t)op;
		return 0;
	}
	if (val[0] < '0' || val[0] > '9')
		return -1;
	errno = 0;
	e->value = strtoull(val, &end, 0);
	return errno != 0 || *end != '\0' ||
		e->value > field_max[e->field] ? -1 : 0;
}

static int
field(struct inj_event *e, const char *key, const char *val)
{
	int64_t v;
	int f;

	if (strcmp(key, "dir") == 0) {
		if (strcmp(val, "ab") == 0)
			e->dir = 0;
		else if (strcmp(val, "ba") == 0)
			e->dir = 1;
		else
			return -1;
		return 0;
	}
	if (strcmp(key, "op") == 0)
		return (e->opcode = opcode(val)) < 0 ? -1 : 0;
	if (strcmp(key, "field") == 0) {
		for (f = 0; f < INJ_NFIELDS; f++)
			if (strcmp(val, inj_field_name[f]) == 0)
				break;
		if (f == INJ_NFIELDS || e->field >= 0)
			return -1;
		e->field = f;
		return 0;
	}
	if (strcmp(key, "value") == 0)
		return value(e, val);
	if (strcmp(key, "count") == 0 && strcmp(val, "all") == 0) {
		e->count = 0;
		return 0;
	}
	if (strcmp(key, "flow") == 0 && number(val, INJ_MAX_FLOWS - 1, &v) == 0)
		e->flow = (int)v;
	else if (strcmp(key, "dqpn") == 0 && number(val, 0xffffff, &v) == 0)
		e->dqpn = v;
	else if (strcmp(key, "psn") == 0 && number(val, 0xffffff, &v) == 0)
		e->psn = v;
	else if (strcmp(key, "rpsn") == 0 && number(val, 0xffff, &v) == 0)
		e->rpsn = v;
	else if (strcmp(key, "iter") == 0 && number(val, 255, &v) == 0 &&
		 v > 0)
		e->iter = (uint32_t)v;
	else if (strcmp(key, "count") == 0 &&
		 number(val, UINT32_MAX, &v) == 0 && v > 0)
		e->count = (uint32_t)v;
	else if (strcmp(key, "us") == 0 && number(val, 10000000, &v) == 0)
		e->us = (uint32_t)v;
	else if (strcmp(key, "k") == 0 && number(val, 1000000, &v) == 0 &&
		 v > 0)
		e->k = (uint32_t)v;
	else
		return -1;
	return 0;
}

static int
parse_line(char *s, int line, struct inj_event *e)
{
	char *tok, *save = NULL;
	bool valued = false;
	int a;

	tok = strtok_r(s, " \t\r\n", &save);
	for (a = 0; a < INJ_NACTIONS; a++)
		if (strcmp(tok, action_name[a]) == 0)
			break;
	if (a == INJ_NACTIONS) {
		fprintf(stderr, "droce-inject: line %d: no action '%s' (drop, "
			"ce, corrupt, dup, delay, reorder, rewrite)\n", line,
			tok);
		return -1;
	}
	*e = (struct inj_event){
		.action = a, .line = line, .dir = INJ_ANY, .flow = INJ_ANY,
		.dqpn = INJ_ANY, .psn = INJ_ANY, .rpsn = INJ_ANY,
		.opcode = INJ_ANY, .count = 1, .k = 1, .field = -1,
	};
	while ((tok = strtok_r(NULL, " \t\r\n", &save)) != NULL) {
		char *eq = strchr(tok, '=');

		if (eq == NULL) {
			fprintf(stderr, "droce-inject: line %d: '%s' is no "
				"key=value\n", line, tok);
			return -1;
		}
		*eq = '\0';
		valued |= strcmp(tok, "value") == 0;
		if (field(e, tok, eq + 1) < 0) {
			fprintf(stderr, "droce-inject: line %d: bad %s '%s'\n",
				line, tok, eq + 1);
			return -1;
		}
	}
	if (e->action == INJ_DELAY && e->us == 0) {
		fprintf(stderr, "droce-inject: line %d: delay needs us=N\n",
			line);
		return -1;
	}
	if (e->action == INJ_REORDER && e->us == 0)
		e->us = 10000;
	if (e->action == INJ_REWRITE && (e->field < 0 || !valued)) {
		fprintf(stderr, "droce-inject: line %d: rewrite needs field=NAME "
			"value=V\n", line);
		return -1;
	}
	return 0;
}

int
inj_script_read(const char *path, struct inj_event *ev, int max)
{
	FILE *f = fopen(path, "r");
	char buf[512];
	int n = 0, line = 0;

	if (f == NULL) {
		fprintf(stderr, "droce-inject: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (fgets(buf, sizeof(buf), f) != NULL) {
		char *hash = strchr(buf, '#');

		line++;
		if (hash != NULL)
			*hash = '\0';
		if (strspn(buf, " \t\r\n") == strlen(buf))
			continue;
		if (n == max) {
			fprintf(stderr, "droce-inject: more than %d events\n",
				max);
			n = -1;
			break;
		}
		if (parse_line(buf, line, &ev[n]) < 0) {
			n = -1;
			break;
		}
		n++;
	}
	fclose(f);
	return n;
}
