#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Where one engine lcore's time goes, and its posting thread's: one
process over net_ring (devtools/ring_configs.sh's ring.ini, droce0 ->
droce1 on one busy-polling lcore), droce-perf's TEST run under
``perf record``, then the top symbols of each thread, each as a share of
that thread's own samples. The engine lcore is the thread whose samples
hold droce's pass (``lcore_pass``, ``run_device``); the posting thread
is the other busy one. Arguments after ``--`` go to droce-perf (``-l
32``: chains of 32 WRs a post, so that the lcore rather than the poster
sets the rate).

Usage: devtools/lcore_profile.py [TEST [SIZE [SECONDS [TOP]]]] [-- ARGS]
       (root, after quickstart.sh demo; default write_bw 64 4 15;
       needs linux-perf)
"""

import collections
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PASS_SYMBOLS = ('lcore_pass', 'run_device', 'droce_shard_rx_burst')
LINE = re.compile(r'^\s*([0-9.]+)%\s+(\d+):(\S+)\s+\[(.)\]\s+(.*?)\s*$')


def ring_ini(work):
    subprocess.run(['sh', '-c', '. "$0/devtools/ring_configs.sh" && '
                    'ring_configs "$1"', TOP, work], check=True)
    return os.path.join(work, 'ring.ini')


def record(work, test, size, secs, extra):
    data = os.path.join(work, 'perf.data')
    env = dict(os.environ, DROCE_CONFIG=ring_ini(work))
    out = subprocess.run(
        ['perf', 'record', '-q', '-o', data,
         os.path.join(TOP, 'build', 'app', 'droce-perf'), test,
         '-s', str(size), '-D', str(secs), '--no-progress'] + extra,
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, check=True).stdout
    rows = [l for l in out.splitlines() if re.match(r'^\s*\d+\s+\d+\s', l)]
    return data, rows[-1].strip() if rows else None


def samples(data):
    rep = subprocess.run(['perf', 'report', '-i', data, '--stdio',
                          '--no-children', '--sort', 'pid,sym'],
                         stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True,
                         check=True).stdout
    threads = collections.defaultdict(list)
    for line in rep.splitlines():
        m = LINE.match(line)
        if m:
            threads[int(m.group(2))].append(
                (float(m.group(1)), m.group(5), m.group(4)))
    return threads


def show(name, rows, top):
    total = sum(r[0] for r in rows)
    print('%s: %.1f%% of all samples' % (name, total))
    for share, sym, where in sorted(rows, reverse=True)[:top]:
        print('  %5.1f%%  %s%s' % (100 * share / total, sym,
                                   ' (kernel)' if where == 'k' else ''))


def main():
    argv = sys.argv[1:]
    extra = []
    if '--' in argv:
        extra = argv[argv.index('--') + 1:]
        argv = argv[:argv.index('--')]
    test = argv[0] if len(argv) > 0 else 'write_bw'
    size = int(argv[1]) if len(argv) > 1 else 64
    secs = int(argv[2]) if len(argv) > 2 else 4
    top = int(argv[3]) if len(argv) > 3 else 15
    with tempfile.TemporaryDirectory() as work:
        data, result = record(work, test, size, secs, extra)
        threads = samples(data)
    # (droce-perf's result line, as it prints it: bytes first)
    if result:
        print(' '.join([test] + extra + ['->', result]))
    engine = max(threads, key=lambda t: sum(
        s for s, sym, _ in threads[t] if sym in PASS_SYMBOLS))
    show('engine lcore (thread %d)' % engine, threads[engine], top)
    others = [t for t in threads if t != engine]
    if others:
        poster = max(others, key=lambda t: sum(s for s, _, _ in threads[t]))
        show('posting thread (%d)' % poster, threads[poster], top)


if __name__ == '__main__':
    main()
