#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-perf -R --turns: the test and the raw frames in turns.

In one process over net_ring, write_bw and send_bw (whose receives
must last through every turn) with --raw-icrc and --turns 4 each report
their rate, the floor's and the ratio of the two, all of them above
zero and the ratio theirs; the message count covers all four turns of
the test (more than one turn's worth at the rate reported). --turns
with two QPs, with a host, or with -n is refused (exit 2).

Usage: test_perf_turns.py --perf DROCE_PERF --workdir DIR
"""

import argparse
import os
import re
import subprocess
import sys

CONFIG = """[engine]
idle_sleep_us = 0
[device droce0]
port = ring:turns:0
ipv4 = 10.0.0.1/24
[device droce1]
port = ring:turns:1
ipv4 = 10.0.0.2/24
"""

SECS = 2.0
TURNS = 4


def run(perf, env, *args):
    return subprocess.run([perf] + list(args), env=env, text=True,
                          capture_output=True, timeout=120)


def check_turns(perf, env, test):
    p = run(perf, env, test, '-s', '64', '-D', str(SECS), '--turns',
            str(TURNS), '-R', '--raw-icrc', '--no-progress')
    out = p.stdout
    if p.returncode != 0:
        return ['%s: exit %d: %s' % (test, p.returncode, p.stderr[-500:])]
    bad = []
    floor = re.search(r'^   raw\+icrc\s+([\d.]+) Mpps', out, re.M)
    roce = re.search(r'^   RoCE \S+\s+([\d.]+) Mpps\s+\(([\d.]+) Mmsg/s\)',
                     out, re.M)
    ratio = re.search(r'^   ratio\s+([\d.]+)', out, re.M)
    res = re.search(r'^ 64\s+(\d+)\s+[\d.]+\s+[\d.]+\s+([\d.]+)', out, re.M)
    if not (floor and roce and ratio and res):
        return ['%s: report incomplete:\n%s' % (test, out)]
    f, r, q = float(floor.group(1)), float(roce.group(1)), \
        float(ratio.group(1))
    msgs, rate = int(res.group(1)), float(res.group(2)) * 1e6
    if not (f > 0 and r > 0 and q > 0):
        bad.append('%s: floor %.3f, RoCE %.3f, ratio %.2f' % (test, f, r, q))
    elif abs(q - r / f) > 0.011:
        bad.append('%s: ratio %.2f is not %.3f / %.3f' % (test, q, r, f))
    # the count is of every turn: about SECS of messages at the rate
    if not msgs > rate * SECS / TURNS * 2:
        bad.append('%s: %d messages at %.0f/s: one turn\'s' %
                   (test, msgs, rate))
    print('%s: %.3f Mpps against %.3f, %.2f; %d messages' %
          (test, r, f, q, msgs))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--perf', required=True)
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    ini = os.path.join(args.workdir, 'ring.ini')
    with open(ini, 'w') as f:
        f.write(CONFIG)
    env = dict(os.environ, DROCE_CONFIG=ini)
    bad = []
    for test in ('write_bw', 'send_bw'):
        bad += check_turns(args.perf, env, test)
    for extra in (['-q', '2'], ['-n', '1000'], ['127.0.0.1']):
        p = run(args.perf, env, 'write_bw', '-R', '--turns', '2', *extra)
        if p.returncode != 2 or '--turns' not in p.stderr:
            bad.append('--turns 2 %s: exit %d, %r' %
                       (' '.join(extra), p.returncode, p.stderr[-300:]))
    for b in bad:
        print('FAIL:', b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
