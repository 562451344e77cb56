#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""How long an idle engine's sleep takes on this machine: a thread on
core 0 asks for sleeps of 1, 2, 5, 10 and 20 us (with the engine's
timer slack of 1 us) and prints what each took, p50, p90 and p99; then
again with a thread spinning on the same core, as an application that
waits on its memory for a WRITE does (``write_lat``, ``ib_write_lat``).
A sleeping engine wakes at most that often, so the wait of a thread
spinning on its memory is about half of it.

Usage: devtools/sleep_cost.py [SLEEPS]   (default 2000 of each)
"""

import ctypes
import os
import subprocess
import sys
import time

PR_SET_TIMERSLACK = 29
SIZES_US = (1, 2, 5, 10, 20)


def measure(us, n):
    took = []
    for _ in range(n):
        t = time.perf_counter_ns()
        time.sleep(us / 1e6)
        took.append((time.perf_counter_ns() - t) / 1e3)
    took.sort()
    return took[n // 2], took[n * 9 // 10], took[n * 99 // 100]


def run(n, what):
    print(what)
    for us in SIZES_US:
        p50, p90, p99 = measure(us, n)
        print('  asked %2d us: took p50 %7.1f  p90 %7.1f  p99 %7.1f us' %
              (us, p50, p90, p99))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    os.sched_setaffinity(0, {0})
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(1000), 0, 0, 0)
    # (what a read of the clock costs: the measurement's own share)
    t = time.perf_counter_ns()
    for _ in range(n):
        time.perf_counter_ns()
    print('clock read: %.2f us' % ((time.perf_counter_ns() - t) / 1e3 / n))
    run(n, 'core 0 otherwise idle:')
    spin = subprocess.Popen(['taskset', '-c', '0', 'sh', '-c',
                             'while :; do :; done'])
    try:
        time.sleep(0.2)
        run(n, 'a thread spinning on core 0:')
    finally:
        spin.kill()
        spin.wait()
    return 0


if __name__ == '__main__':
    sys.exit(main())
