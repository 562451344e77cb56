/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * libdroce_devnode.so: droce-run preloads it into the programs it runs.
 *
 * Some verbs users look for a device's node before they use it: UCX
 * lists a verbs device only if /dev/infiniband/<dev_name> (uverbs0, ...)
 * is a character device it may read and write, as the kernel's uverbs
 * driver makes them. droce's devices live in the process and have no
 * kernel driver, so a machine without RDMA hardware has no such node.
 * Under droce-run every verbs device a program sees is droce's (its
 * libibverbs.so.1 is droce's), so a look at /dev/infiniband/uverbs<N>
 * through stat() or access() is answered as for the uverbs node of a
 * device: a character device (major 231, minor 192 + N, as uverbs
 * numbers them), readable and writable. Nothing is made on the system,
 * and every other path goes to the C library as it came. The node is
 * never opened: droce's libibverbs does not use it.
 */

/* stat and stat64 as the two symbols they are (not one renamed) */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#define DEVNODE_DIR "/dev/infiniband/uverbs"
#define UVERBS_MAJOR 231
#define UVERBS_MINOR_BASE 192
#define DEVNODE_MAX 64

/* The uverbs number of @p path if it names a uverbs node, else -1. */
static int
devnode_index(const char *path)
{
	const char *n;
	char *end;
	long v;

	if (path == NULL ||
	    strncmp(path, DEVNODE_DIR, sizeof(DEVNODE_DIR) - 1) != 0)
		return -1;
	n = path + sizeof(DEVNODE_DIR) - 1;
	if (*n < '0' || *n > '9')
		return -1;
	v = strtol(n, &end, 10);
	if (*end != '\0' || v >= DEVNODE_MAX)
		return -1;
	return (int)v;
}

static void
devnode_stat(int index, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = makedev(UVERBS_MAJOR, UVERBS_MINOR_BASE + index);
	st->st_nlink = 1;
	st->st_blksize = 4096;
}

/* The C library's @p name (the next definition after this one). */
static void *
next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

int
stat(const char *path, struct stat *st)
{
	static int (*real)(const char *, struct stat *);
	int i = devnode_index(path);

	if (i >= 0) {
		devnode_stat(i, st);
		return 0;
	}
	if (real == NULL)
		real = (int (*)(const char *, struct stat *))next("stat");
	if (real == NULL)
		return fstatat(AT_FDCWD, path, st, 0);
	return real(path, st);
}

int
stat64(const char *path, struct stat64 *st)
{
	static int (*real)(const char *, struct stat64 *);
	int i = devnode_index(path);

	if (i >= 0) {
		struct stat s;

		devnode_stat(i, &s);
		memset(st, 0, sizeof(*st));
		st->st_mode = s.st_mode;
		st->st_rdev = s.st_rdev;
		st->st_nlink = s.st_nlink;
		st->st_blksize = s.st_blksize;
		return 0;
	}
	if (real == NULL)
		real = (int (*)(const char *, struct stat64 *))next("stat64");
	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	return real(path, st);
}

int
access(const char *path, int mode)
{
	static int (*real)(const char *, int);

	/* readable and writable; never executable, as a device node */
	if (devnode_index(path) >= 0) {
		if (mode & X_OK) {
			errno = EACCES;
			return -1;
		}
		return 0;
	}
	if (real == NULL)
		real = (int (*)(const char *, int))next("access");
	if (real == NULL)
		return faccessat(AT_FDCWD, path, mode, 0);
	return real(path, mode);
}
