# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""A network namespace of the test's own.

A test that makes a tap, puts addresses on it or listens on TCP ports
calls enter() first: from then on the process and everything it starts
(droce's processes, the tools, qemu) see only a loopback of their own
and what the test creates. Two runs of the suite at once, or a droce
process of the user's, cannot take each other's interface names,
subnets or ports. Needs root (CAP_SYS_ADMIN), as these tests do anyway.
"""

import ctypes
import os
import socket
import subprocess

CLONE_NEWNET = 0x40000000


def enter():
    """Move this process into a new network namespace, loopback up."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, 'unshare(CLONE_NEWNET): ' + os.strerror(err))
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)


def free_port(addr='127.0.0.1'):
    """A TCP port free on @addr (this namespace's loopback) now."""
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]
