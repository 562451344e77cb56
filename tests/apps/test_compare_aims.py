#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""devtools/compare.py's aims: each droce row's ratio to its yardstick
in the same run, and whether it meets its bound.

Rows as compare.py measures them (rates, bandwidths, (p50, p99)
latencies or an average): a run that meets every aim, one that misses
each (a ratio just past its bound, on both sides: at least and at
most), and one with rows that failed (no ratio, not met).

Usage: test_compare_aims.py
"""

import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, 'devtools'))
import compare  # noqa: E402

RAW = ('raw DPDK frames', 10e6, 40e9, (0.5, 30.0))
UDP = ('kernel UDP', 0.3e6, None, (20.0, 40.0))


def results(rows):
    return {(a[0], a[1], a[2]): (a[3], a[6]) for a in compare.aims(rows)}


def check(cond, what, fails):
    print('%s: %s' % ('ok' if cond else 'FAIL', what))
    if not cond:
        fails.append(what)


def main():
    fails = []
    good = results([('droce, droce-perf', 5e6, 20e9, (1.0, 9.0)),
                    ('droce, SEND', 4e6, 30e9, 0.9), RAW, UDP])
    check(all(met for _, met in good.values()) and len(good) == 6,
          'every aim met', fails)
    r, met = good[('droce, droce-perf', '64 B messages', 'raw DPDK frames')]
    check(abs(r - 0.5) < 1e-9 and met, '0.5 of raw is met (at least)',
          fails)
    r, met = good[('droce, SEND', 'ping-pong p50', 'raw DPDK frames')]
    check(abs(r - 1.8) < 1e-9 and met, "an average's ratio", fails)
    bad = results([('droce, droce-perf', 4.99e6, 19.9e9, (1.01, 9.0)),
                   ('droce, SEND', 4e6, 30e9, 1.005), RAW,
                   ('kernel UDP', 0.3e6, None, (1.0, 2.0))])
    check(not any(met for _, met in bad.values()),
          'every aim missed just past its bound', fails)
    r, met = bad[('droce, SEND', 'ping-pong p50', 'kernel UDP')]
    check(abs(r - 1.005) < 1e-9 and not met, 'above the kernel UDP', fails)
    gone = results([('droce, droce-perf', None, None, None),
                    ('droce, SEND', 4e6, 30e9, (1.0, 9.0)),
                    ('raw DPDK frames', None, None, None), UDP])
    check(all(r is None and not met for (n, c, b), (r, met) in gone.items()
              if b == 'raw DPDK frames' or n == 'droce, droce-perf'),
          'a failed row: no ratio, not met', fails)
    r, met = gone[('droce, SEND', 'ping-pong p50', 'kernel UDP')]
    check(abs(r - 0.05) < 1e-9 and met, 'the rows that ran still judged',
          fails)
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
