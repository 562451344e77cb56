/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-pmd: a testpmd-style interactive tool over droce's verbs API.
 * It starts the engine, opens every device, and takes commands from a
 * prompt (DPDK's cmdline library) or from a script: make QPs, connect
 * them (by hand or through the RDMA CM), move data, look at the
 * counters, capture a device's frames.
 * In a script every command is echoed, and the first one that fails
 * stops it: droce-pmd then exits with status 1.
 */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_socket.h>

#include "pmd.h"

#define PROMPT "droce-pmd> "

static bool failed;

void
pmd_fail(const char *fmt, ...)
{
	va_list ap;

	failed = true;
	fflush(stdout);
	fprintf(stderr, "droce-pmd: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

bool
pmd_failed(void)
{
	return failed;
}

void
pmd_failed_reset(void)
{
	failed = false;
}

double
pmd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
usage(FILE *out)
{
	fprintf(out,
		"Usage: droce-pmd [options]\n"
		"  -f, --script FILE    run the commands in FILE, then exit\n"
		"  -i, --interactive    with -f: take commands from the prompt\n"
		"                       after the script\n"
		"  -h, --help\n"
		"Without -f: commands from the prompt; `help` lists them.\n"
		"The devices are droce's: DROCE_CONFIG or the embedded default.\n");
}

static const char *
parse_error(int ret)
{
	switch (ret) {
	case CMDLINE_PARSE_AMBIGUOUS:
		return "ambiguous command";
	case CMDLINE_PARSE_BAD_ARGS:
		return "bad arguments";
	default:
		return "command not found (try help)";
	}
}

/* @return 0, or -1 once a command failed (the rest is not run). */
static int
run_script(const char *path)
{
	struct cmdline *cl;
	char line[1024];
	unsigned int lineno = 0;
	FILE *f;
	int ret = 0;

	f = fopen(path, "r");
	if (f == NULL) {
		pmd_fail("cannot read %s", path);
		return -1;
	}
	/* no prompt: the script's commands are echoed instead */
	cl = cmdline_new(pmd_cmd_ctx, "", STDIN_FILENO, STDOUT_FILENO);
	if (cl == NULL) {
		fclose(f);
		pmd_fail("cannot make a command line");
		return -1;
	}
	while (!pmd_quit_asked() && fgets(line, sizeof(line) - 1, f) != NULL) {
		size_t len = strlen(line);
		char *cmd = line;
		int r;

		lineno++;
		while (len > 0 && (line[len - 1] == '\n' ||
				   line[len - 1] == '\r' ||
				   line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = '\0';
		while (*cmd == ' ' || *cmd == '\t')
			cmd++;
		if (*cmd == '\0' || *cmd == '#')
			continue;
		printf(PROMPT "%s\n", cmd);
		fflush(stdout);
		pmd_failed_reset();
		/* what the CM brought meanwhile (a peer's request, ...) */
		pmd_cm_poll(0);
		/* cmdline_parse() takes a line only with its end */
		line[len] = '\n';
		line[len + 1] = '\0';
		r = cmdline_parse(cl, cmd);
		line[len] = '\0';
		/* the length parsed, or a CMDLINE_PARSE_* error */
		if (r < 0)
			pmd_fail("%s:%u: %s: %s", path, lineno, parse_error(r),
				 cmd);
		fflush(stdout);
		if (pmd_failed()) {
			fprintf(stderr, "droce-pmd: %s:%u failed, stopping\n",
				path, lineno);
			ret = -1;
			break;
		}
	}
	cmdline_free(cl);
	fclose(f);
	return ret;
}

/*
 * The prompt, as cmdline_interact() runs it, but waiting on the CM's
 * events as well as on the input: a listener accepts while the prompt
 * is idle.
 */
static void
interact(void)
{
	struct cmdline *cl = cmdline_stdin_new(pmd_cmd_ctx, PROMPT);
	char buf[256];

	if (cl == NULL) {
		pmd_fail("cannot make a command line");
		return;
	}
	while (!pmd_quit_asked()) {
		struct pollfd pfd[2] = {
			{ .fd = STDIN_FILENO, .events = POLLIN },
			{ .fd = pmd_cm_fd(), .events = POLLIN },
		};
		ssize_t n;

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents & POLLIN)
			pmd_cm_poll(0);
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n <= 0 || cmdline_in(cl, buf, (int)n) < 0)
			break;
	}
	cmdline_stdin_exit(cl);
	printf("\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "script", required_argument, NULL, 'f' },
		{ "interactive", no_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *script = NULL;
	bool interactive = false;
	unsigned int i;
	int opt, ret = 0;

	while ((opt = getopt_long(argc, argv, "f:ih", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			script = optarg;
			break;
		case 'i':
			interactive = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	/* in the order the prompt, which cmdline writes itself, comes */
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand48((long)time(NULL) ^ (long)getpid());
	if (pmd_ports_init() < 0)
		return 1;
	for (i = 0; i < pmd_nports; i++)
		if (pmd_port_start(&pmd_ports[i]) < 0)
			ret = -1;
	if (ret == 0 && script != NULL)
		ret = run_script(script);
	if (ret == 0 && (script == NULL || interactive) && !pmd_quit_asked())
		interact();
	/* quit, the end of a script or of the input: tear everything down */
	pmd_failed_reset();
	pmd_ports_fini();
	pmd_cm_fini();
	if (pmd_failed())
		ret = -1;
	fflush(stdout);
	return ret == 0 ? 0 : 1;
}
