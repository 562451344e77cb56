/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Scripts: one event a line,
 *
 *   ACTION [dir=ab|ba] [flow=N] [dqpn=N] [psn=N] [rpsn=N] [op=NAME|N]
 *          [iter=N] [count=N|all] [us=N]
 *
 * ACTION one of drop, ce, corrupt, dup, delay; numbers decimal or 0x
 * hex; op an opcode's name as droce-dump prints it (RC_RDMA_WRITE_ONLY)
 * or its number. An event matches the frames that have every field it
 * names, and acts on count of them (1 unless said).
 */

#include <errno.h>
#include <inttypes.h>
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
};

static const char *const action_name[INJ_NACTIONS] = {
	[INJ_DROP] = "drop",
	[INJ_CE] = "ce",
	[INJ_CORRUPT] = "corrupt",
	[INJ_DUP] = "dup",
	[INJ_DELAY] = "delay",
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

static int
field(struct inj_event *e, const char *key, const char *val)
{
	int64_t v;

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
	else
		return -1;
	return 0;
}

static int
parse_line(char *s, int line, struct inj_event *e)
{
	char *tok, *save = NULL;
	int a;

	tok = strtok_r(s, " \t\r\n", &save);
	for (a = 0; a < INJ_NACTIONS; a++)
		if (strcmp(tok, action_name[a]) == 0)
			break;
	if (a == INJ_NACTIONS) {
		fprintf(stderr, "droce-inject: line %d: no action '%s' (drop, "
			"ce, corrupt, dup, delay)\n", line, tok);
		return -1;
	}
	*e = (struct inj_event){
		.action = a, .line = line, .dir = INJ_ANY, .flow = INJ_ANY,
		.dqpn = INJ_ANY, .psn = INJ_ANY, .rpsn = INJ_ANY,
		.opcode = INJ_ANY, .count = 1,
	};
	while ((tok = strtok_r(NULL, " \t\r\n", &save)) != NULL) {
		char *eq = strchr(tok, '=');

		if (eq == NULL) {
			fprintf(stderr, "droce-inject: line %d: '%s' is no "
				"key=value\n", line, tok);
			return -1;
		}
		*eq = '\0';
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
