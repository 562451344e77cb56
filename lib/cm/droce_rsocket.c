/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rsockets' entry points (<rdma/rsocket.h>), which rdma-core's
 * librdmacm.so.1 exports and its example programs import: rping,
 * ucmatose, udaddy, mckey and cmtime wait on their event channel's fd
 * with rpoll(). droce has no rsockets: rsocket() fails with ENOSYS, so
 * no descriptor is ever an rsocket, and the calls on one fail with
 * EBADF. rpoll() and rselect() work on ordinary descriptors, as
 * rdma-core's do: they are poll() and select().
 */

#include <errno.h>
#include <rdma/rsocket.h>

int
rsocket(int domain, int type, int protocol)
{
	(void)domain;
	(void)type;
	(void)protocol;
	errno = ENOSYS;
	return -1;
}

int
rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

int
rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

static int
not_an_rsocket(void)
{
	errno = EBADF;
	return -1;
}

int
rbind(int s, const struct sockaddr *addr, socklen_t len)
{
	(void)s; (void)addr; (void)len;
	return not_an_rsocket();
}

int
rlisten(int s, int backlog)
{
	(void)s; (void)backlog;
	return not_an_rsocket();
}

int
raccept(int s, struct sockaddr *addr, socklen_t *len)
{
	(void)s; (void)addr; (void)len;
	return not_an_rsocket();
}

int
rconnect(int s, const struct sockaddr *addr, socklen_t len)
{
	(void)s; (void)addr; (void)len;
	return not_an_rsocket();
}

int
rshutdown(int s, int how)
{
	(void)s; (void)how;
	return not_an_rsocket();
}

int
rclose(int s)
{
	(void)s;
	return not_an_rsocket();
}

ssize_t
rrecv(int s, void *buf, size_t len, int flags)
{
	(void)s; (void)buf; (void)len; (void)flags;
	return not_an_rsocket();
}

ssize_t
rrecvfrom(int s, void *buf, size_t len, int flags, struct sockaddr *src,
	  socklen_t *srclen)
{
	(void)s; (void)buf; (void)len; (void)flags; (void)src; (void)srclen;
	return not_an_rsocket();
}

ssize_t
rrecvmsg(int s, struct msghdr *msg, int flags)
{
	(void)s; (void)msg; (void)flags;
	return not_an_rsocket();
}

ssize_t
rsend(int s, const void *buf, size_t len, int flags)
{
	(void)s; (void)buf; (void)len; (void)flags;
	return not_an_rsocket();
}

ssize_t
rsendto(int s, const void *buf, size_t len, int flags,
	const struct sockaddr *dst, socklen_t dstlen)
{
	(void)s; (void)buf; (void)len; (void)flags; (void)dst; (void)dstlen;
	return not_an_rsocket();
}

ssize_t
rsendmsg(int s, const struct msghdr *msg, int flags)
{
	(void)s; (void)msg; (void)flags;
	return not_an_rsocket();
}

ssize_t
rread(int s, void *buf, size_t count)
{
	(void)s; (void)buf; (void)count;
	return not_an_rsocket();
}

ssize_t
rreadv(int s, const struct iovec *iov, int iovcnt)
{
	(void)s; (void)iov; (void)iovcnt;
	return not_an_rsocket();
}

ssize_t
rwrite(int s, const void *buf, size_t count)
{
	(void)s; (void)buf; (void)count;
	return not_an_rsocket();
}

ssize_t
rwritev(int s, const struct iovec *iov, int iovcnt)
{
	(void)s; (void)iov; (void)iovcnt;
	return not_an_rsocket();
}

int
rgetpeername(int s, struct sockaddr *addr, socklen_t *len)
{
	(void)s; (void)addr; (void)len;
	return not_an_rsocket();
}

int
rgetsockname(int s, struct sockaddr *addr, socklen_t *len)
{
	(void)s; (void)addr; (void)len;
	return not_an_rsocket();
}

int
rsetsockopt(int s, int level, int optname, const void *optval,
	    socklen_t optlen)
{
	(void)s; (void)level; (void)optname; (void)optval; (void)optlen;
	return not_an_rsocket();
}

int
rgetsockopt(int s, int level, int optname, void *optval, socklen_t *optlen)
{
	(void)s; (void)level; (void)optname; (void)optval; (void)optlen;
	return not_an_rsocket();
}

int
rfcntl(int s, int cmd, ...)
{
	(void)s; (void)cmd;
	return not_an_rsocket();
}

off_t
riomap(int s, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)s; (void)buf; (void)len; (void)prot; (void)flags; (void)offset;
	return not_an_rsocket();
}

int
riounmap(int s, void *buf, size_t len)
{
	(void)s; (void)buf; (void)len;
	return not_an_rsocket();
}

size_t
riowrite(int s, const void *buf, size_t count, off_t offset, int flags)
{
	(void)s; (void)buf; (void)count; (void)offset; (void)flags;
	errno = EBADF;
	return 0;
}
