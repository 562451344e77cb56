#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Where a two-process run's CPU goes, thread by thread: droce-perf's
server pinned to core 1 and its client to core 0 over net_memif (as
devtools/compare.py runs them, each application thread and its engine
lcore on one core, the shipped configuration and the engine's defaults),
and over the middle second of the run, for each thread of each process
that ran: its share of a core, and its voluntary and involuntary context
switches a second and (write_bw, send_bw) a message; and the client's
result (the message rate, or write_lat's p50 and p99).

The application thread is the process's first; the engine lcore, the
busiest other. Extra [engine] settings may be given (KEY=VALUE, to both
processes), e.g. idle_yield_us=50, to see what a setting does.

Usage: devtools/threads.py [TEST [SIZE [SECONDS]]] [KEY=VALUE ...]
       (after devtools/quickstart.sh demo; TEST write_bw, SIZE 64, 6 s)
"""

import os
import re
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, 'devtools'))
import compare  # noqa: E402

HZ = os.sysconf('SC_CLK_TCK')


def sample(pid):
    """{tid: (cpu ticks, voluntary, involuntary)} of @pid's threads."""
    out = {}
    base = '/proc/%d/task' % pid
    for tid in os.listdir(base):
        try:
            with open('%s/%s/stat' % (base, tid)) as f:
                stat = f.read()
            with open('%s/%s/status' % (base, tid)) as f:
                status = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(')') + 2:].split()
        ticks = int(fields[11]) + int(fields[12])
        vol = int(re.search(r'^voluntary_ctxt_switches:\s+(\d+)', status,
                            re.M).group(1))
        inv = int(re.search(r'^nonvoluntary_ctxt_switches:\s+(\d+)',
                            status, re.M).group(1))
        out[int(tid)] = (ticks, vol, inv)
    return out


def with_settings(path, settings):
    with open(path) as f:
        text = f.read()
    for key, _ in settings:
        text = re.sub(r'^%s\s*=.*\n' % re.escape(key), '', text, flags=re.M)
    extra = ''.join('%s = %s\n' % kv for kv in settings)
    text = re.sub(r'^\[engine\]\n', '[engine]\n' + extra, text,
                  flags=re.M)
    with open(path, 'w') as f:
        f.write(text)


def main():
    args = [a for a in sys.argv[1:] if '=' not in a]
    settings = [tuple(a.split('=', 1)) for a in sys.argv[1:] if '=' in a]
    test = args[0] if args else 'write_bw'
    size = int(args[1]) if len(args) > 1 else 64
    secs = int(args[2]) if len(args) > 2 else 6
    with tempfile.TemporaryDirectory() as work:
        sini, cini = compare.memif_configs(work)
        for path in (sini, cini):
            with_settings(path, settings)
        port = str(compare.free_port())
        base = [compare.PERF, test, '-s', str(size), '-p', port,
                '--no-progress', '-D', str(secs)]
        env = dict(os.environ)
        srv = subprocess.Popen(['taskset', '-c', compare.SERVER_CORE] +
                               base + ['--server'],
                               env=dict(env, DROCE_CONFIG=sini),
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        time.sleep(1)
        cli = subprocess.Popen(['taskset', '-c', compare.CLIENT_CORE] +
                               base + ['127.0.0.1'],
                               env=dict(env, DROCE_CONFIG=cini),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        time.sleep(2 + secs / 2)
        t0 = time.monotonic()
        before = {p.pid: sample(p.pid) for p in (srv, cli)}
        time.sleep(1)
        after = {p.pid: sample(p.pid) for p in (srv, cli)}
        dt = time.monotonic() - t0
        out = cli.communicate(timeout=120)[0]
        srv.wait(timeout=30)
    rate, result = None, 'no result'
    for line in out.splitlines():
        f = line.split()
        if not line.startswith(' ') or not f or not f[0].isdigit():
            continue
        if test.endswith('_bw'):
            rate = float(f[4]) * 1e6
            result = '%.3f Mmsg/s' % (rate / 1e6)
        elif test.endswith('_lat'):
            # typical (p50) and 99th percentile, as compare.py reads them
            result = 'p50 %s us, p99 %s us' % (f[4], f[7])
    print('%s -s %d%s: %s' % (test, size,
                              ''.join(' %s=%s' % kv for kv in settings),
                              result))
    print('%-7s %-12s %6s %10s %10s %9s %9s' %
          ('process', 'thread', 'core', 'vol/s', 'invol/s', 'vol/msg',
           'invol/msg'))
    for name, p in (('server', srv), ('client', cli)):
        rows = []
        for tid, (t1, v1, i1) in after[p.pid].items():
            t0_, v0, i0 = before[p.pid].get(tid, (t1, v1, i1))
            rows.append((tid, (t1 - t0_) / HZ / dt, (v1 - v0) / dt,
                         (i1 - i0) / dt))
        busiest = max((r for r in rows if r[0] != p.pid),
                      key=lambda r: r[1], default=None)
        for tid, core, vol, inv in rows:
            if tid == p.pid:
                who = 'application'
            elif busiest is not None and tid == busiest[0]:
                who = 'engine'
            elif core < 0.005 and vol + inv < 1:
                continue
            else:
                who = 'other %d' % tid
            per = (lambda x: '%9.3f' % (x / rate)) if rate else \
                (lambda x: '%9s' % '-')
            print('%-7s %-12s %5.0f%% %10.0f %10.0f %s %s' %
                  (name, who, core * 100, vol, inv, per(vol), per(inv)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
