#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Debian's perftest over droce when each process has one core for its
application thread and its engine lcore together: the server and its
engine pinned to core 1, the client and its engine to core 0, a net_memif
link between them, the engine's defaults. perftest's threads poll
without yielding, so this is the setup where the engine has no core of
its own.

It runs ib_write_lat (2-byte WRITEs: t_typical and the 99th percentile,
half the round trip) and ib_write_bw -s 64 (the message rate) for each
build given: this tree's build, and with --rev REV that revision built in
a scratch worktree, the two in turns, the order swapped every round, the
medians printed. Only figures of one run compare: this virtual machine's
speed drifts within minutes.

Usage: devtools/shared_core.py [--rev REV] [--rounds N] [--iters N]
       (as root, after devtools/quickstart.sh demo)
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, 'tests', 'interop'))
import netns  # noqa: E402
from test_dropin import perf_result  # noqa: E402
sys.path.insert(0, os.path.join(TOP, 'devtools'))
from compare import memif_configs  # noqa: E402

# as config/memif-server.ini and memif-client.ini have them
SERVER_CORE, CLIENT_CORE = '1', '0'


def configs(work, tag):
    """Server and client configuration files of one run: droce's shipped
    memif pair."""
    return memif_configs(work, tag + '-')


def perftest(lib, work, tag, argv, port):
    """Server on core 1, client on core 0; the client's figures."""
    scfg, ccfg = configs(work, tag)
    base = dict(os.environ, LD_LIBRARY_PATH=lib)
    base.pop('DROCE_CONFIG', None)
    cmd = argv + ['-d', 'droce0', '-x', '0', '-p', str(port)]
    server = subprocess.Popen(['taskset', '-c', SERVER_CORE] + cmd,
                              env=dict(base, DROCE_CONFIG=scfg),
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    time.sleep(1.0)
    client = None
    try:
        # the server listens once its device is up, which waits for the
        # client's memif: a client that came too early is run again
        for _ in range(10):
            client = subprocess.run(['taskset', '-c', CLIENT_CORE] + cmd +
                                    ['127.0.0.1'],
                                    env=dict(base, DROCE_CONFIG=ccfg),
                                    stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True,
                                    timeout=300)
            if client.returncode == 0 or server.poll() is not None:
                break
            time.sleep(1.0)
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        sys.exit('%s: the server did not end (the client %s):\n%s' %
                 (' '.join(argv), 'ended' if client else 'did not',
                  server.communicate()[0][-1500:]))
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    res = perf_result(client.stdout)
    if client.returncode != 0 or res is None:
        sys.exit('%s failed (exit %s):\n%s' % (' '.join(argv),
                                                client.returncode,
                                                client.stdout[-1500:]))
    return res


def build_rev(rev, work, target=None):
    """The tree of @rev, checked out in a scratch worktree (work/old) and
    built (only @target, a ninja target, if given)."""
    tree = os.path.join(work, 'old')
    subprocess.run(['git', '-C', TOP, 'worktree', 'add', '-q', '--detach',
                    tree, rev], check=True)
    subprocess.run(['meson', 'setup', '-Dtests=false',
                    os.path.join(tree, 'build'), tree], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(['ninja', '-C', os.path.join(tree, 'build')] +
                   ([target] if target else []), check=True,
                   stdout=subprocess.DEVNULL)
    return tree


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--rev', help='also measure this revision')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--iters', type=int, default=5000,
                    help='ib_write_lat iterations (write_bw: 100 times)')
    args = ap.parse_args()
    if shutil.which('ib_write_lat') is None:
        subprocess.run(['apt-get', 'install', '-y', '-q', 'perftest'],
                       check=True, stdout=subprocess.DEVNULL)
    builds = [('new', os.path.join(TOP, 'build', 'lib', 'ibverbs'))]
    work = tempfile.mkdtemp(prefix='droce-sc-')
    try:
        if args.rev:
            builds.insert(0, ('old', os.path.join(
                build_rev(args.rev, work), 'build', 'lib', 'ibverbs')))
        netns.enter()
        figs = {}
        port = 18700
        for r in range(args.rounds):
            order = builds if r % 2 == 0 else builds[::-1]
            for name, lib in order:
                lat = perftest(lib, work, name + 'l',
                               ['ib_write_lat', '-n', str(args.iters)],
                               port)
                bw = perftest(lib, work, name + 'b',
                              ['ib_write_bw', '-s', '64', '-n',
                               str(args.iters * 100)], port + 1)
                port += 2
                # lat: bytes iters t_min t_max t_typical t_avg t_stdev
                # 99% 99.9%; bw: bytes iters peak avg MB/s, Mpps
                row = (lat[4], lat[7], bw[4])
                print('round %d %s: write_lat typical %.2f us, p99 %.2f '
                      'us; write_bw 64 B %.3f Mpps' % ((r + 1, name) + row),
                      flush=True)
                figs.setdefault(name, []).append(row)
        print('\nmedians of %d rounds (server and engine on core %s, '
              'client and engine on core %s):' %
              (args.rounds, SERVER_CORE, CLIENT_CORE))
        print('%-5s %18s %14s %18s' % ('build', 'write_lat typ us',
                                       'p99 us', 'write_bw 64B Mpps'))
        for name, _ in builds:
            cols = list(zip(*figs[name]))
            print('%-5s %18.2f %14.2f %18.3f' %
                  ((name,) + tuple(statistics.median(c) for c in cols)))
    finally:
        if args.rev:
            subprocess.run(['git', '-C', TOP, 'worktree', 'remove',
                            '--force', os.path.join(work, 'old')],
                           stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
