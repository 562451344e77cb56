#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Judge a change by the two-process figures: droce-perf of another
revision (built in a scratch worktree) and of this tree's build, each
run as devtools/compare.py runs it (two processes over net_memif, the
server pinned to core 1 and the client to core 0, each with its engine
on its core, the shipped memif configurations), in turns, the order
swapped every round, and raw_lat's ping-pong of raw frames beside them
in each round: the floor of any latency over the pair. Then each one's
median: the typical (p50) and 99% latency of a _lat test in us, the
message rate of a _bw test in M/s. Run as root (compare.py's network
namespace).

Usage: devtools/ab_pair.py REV [ROUNDS] [TEST:BYTES ...]
       (after quickstart.sh demo; default 5 rounds of send_lat:64)
e.g.   devtools/ab_pair.py HEAD~1 5 send_lat:64 send_bw:64
"""

import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, 'devtools'))
import compare  # noqa: E402
from shared_core import build_rev  # noqa: E402


def run(perf, work, test, size, secs):
    """One run's figures: (p50, p99) of a _lat test, (M/s,) of a _bw."""
    compare.PERF = perf
    got = compare.droce_perf(work, test, size, secs)
    return got if test.endswith('_lat') else (got[0] / 1e6,)


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] +
                                              v[len(v) // 2]) / 2


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rev = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rows = [(t, int(s)) for t, s in
            (r.split(':') for r in sys.argv[3:] or ['send_lat:64'])]
    new = os.path.join(TOP, 'build', 'app', 'droce-perf')
    if not os.access(new, os.X_OK):
        sys.exit('no %s: run devtools/quickstart.sh demo' % new)
    work = tempfile.mkdtemp()
    tree = None
    try:
        tree = build_rev(rev, work, 'app/droce-perf')
        old = os.path.join(tree, 'build', 'app', 'droce-perf')
        res = {}
        for r in range(rounds):
            order = [('old', old), ('new', new)]
            if r % 2:
                order.reverse()
            for test, size in rows:
                for which, perf in order:
                    got = run(perf, work, test, size, 3)
                    res.setdefault((which, test, size), []).append(got)
                    print('round %d %s %s %d: %s' % (r + 1, which, test, size,
                          ' '.join('%.3f' % x for x in got)), flush=True)
            got = run(new, work, 'raw_lat', 64, 3)
            res.setdefault(('raw', 'raw_lat', 64), []).append(got)
            print('round %d raw_lat 64: %.3f %.3f' % ((r + 1,) + got),
                  flush=True)
        raw = median([x[0] for x in res['raw', 'raw_lat', 64]])
        print('medians of %d rounds (raw_lat p50 %.3f us):' % (rounds, raw))
        for test, size in rows:
            o = [median([x[i] for x in res['old', test, size]])
                 for i in range(len(res['old', test, size][0]))]
            n = [median([x[i] for x in res['new', test, size]])
                 for i in range(len(res['new', test, size][0]))]
            unit = 'us p50/p99' if test.endswith('_lat') else 'M/s'
            print('%-10s %6d  old %s  new %s  (%s) new/old %.2f%s' % (
                test, size, '/'.join('%.3f' % x for x in o),
                '/'.join('%.3f' % x for x in n), unit, n[0] / o[0],
                ', new/raw %.2f' % (n[0] / raw)
                if test.endswith('_lat') else ''))
    finally:
        if tree is not None:
            subprocess.run(['git', '-C', TOP, 'worktree', 'remove', '--force',
                            tree], stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    if os.geteuid() != 0:
        sys.exit('ab_pair.py: needs root (a network namespace)')
    compare.netns.enter()
    main()
