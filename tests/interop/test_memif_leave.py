#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""A droce process outlives its memif peers, one after another.

net_memif unmaps the rings it shares with its peer on DPDK's interrupt
thread as soon as the peer closes the connection, while an engine lcore
may be in a burst on them: so a droce process tells its memif peer that
it leaves, and the peer stops its bursts on the port (and says so) before
the connection goes (lib/engine/droce_memif_leave.c).

Here a memif server, Debian's ibv_rc_pingpong waiting for its TCP client
with droce0 open (its lcore polling without a pause), sees ROUNDS clients
come and go: each ibv_devinfo over droce0 as the memif client, which
opens the device (its link comes up) and exits. Checked:

  - each client ends 0 and its peer answered its leave (no "the memif peer did not
    it stopped polling" in its log);
  - the server is still running after the last, and its log has one
    "the memif peer leaves" for each client (a leave it did not take
    would find its lcore in a burst on rings that go);
  - then an ibv_rc_pingpong client, the last peer, pings the server 100
    times: the server polls its port again once a new peer is there,
    and both end 0.

Without the leave, the server faulted in net_memif's receive burst within
a hundred clients on a two-core machine.

Usage: test_memif_leave.py --lib DIR --workdir DIR [--rounds N]
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

import netns

CONFIG = """[eal]
args = --log-level=lib.droce.engine:info --no-huge -m 512 --no-pci \
--no-shconf --file-prefix=memif-leave-{pid}-{role} \
--vdev=net_memif0,role={role},socket={sock},socket-abstract=no,id=0
[engine]
cores = {core}
idle_sleep_us = 0
link_wait_s = {wait}
[device droce0]
port = net_memif0
mac = 02:d7:0c:e0:03:0{n}
ipv4 = 10.0.3.{n}/24
"""

passed = 0
failures = []


def check(ok, what):
    global passed
    print('%-5s %s' % ('ok' if ok else 'FAIL', what), flush=True)
    if ok:
        passed += 1
    else:
        failures.append(what)


def config(work, role, n, core, wait):
    path = os.path.join(work, role + '.ini')
    with open(path, 'w') as f:
        f.write(CONFIG.format(pid=os.getpid(), role=role, n=n, core=core,
                              wait=wait,
                              sock=os.path.join(work, 'memif.sock')))
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--lib', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--rounds', type=int, default=40)
    args = ap.parse_args()
    work = os.path.abspath(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.abspath(args.lib))
    ncpu = os.cpu_count() or 1
    server_cfg = config(work, 'server', 1, ncpu - 1, 0)
    client_cfg = config(work, 'client', 2, 0, 30)
    log_path = os.path.join(work, 'server.log')
    with open(log_path, 'w') as log:
        port = netns.free_port()
        server = subprocess.Popen(
            ['ibv_rc_pingpong', '-d', 'droce0', '-g', '0', '-n', '100',
             '-p', str(port)],
            env=dict(env, DROCE_CONFIG=server_cfg), stdout=log,
            stderr=subprocess.STDOUT)
    bad_rc, unanswered = [], []
    t0 = time.monotonic()
    try:
        time.sleep(1)
        for i in range(args.rounds):
            if server.poll() is not None:
                break
            p = subprocess.run(['ibv_devinfo', '-d', 'droce0'],
                               env=dict(env, DROCE_CONFIG=client_cfg),
                               capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                bad_rc.append((i, p.returncode, p.stderr[-300:]))
            if 'the memif peer did not' in p.stderr:
                unanswered.append(i)
        # (the last leave is taken on the server's interrupt thread)
        time.sleep(0.5)
        alive = server.poll() is None
        pp = None
        if alive:
            pp = subprocess.run(['ibv_rc_pingpong', '-d', 'droce0', '-g',
                                 '0', '-n', '100', '-p', str(port),
                                 '127.0.0.1'],
                                env=dict(env, DROCE_CONFIG=client_cfg),
                                capture_output=True, text=True, timeout=60)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                pass
    finally:
        server.kill()
        server.wait()
    with open(log_path) as f:
        log = f.read()
    secs = time.monotonic() - t0
    check(not bad_rc, '%d clients in turn (%.1f s): each ends 0%s' %
          (args.rounds, secs, '' if not bad_rc else ': %s' % bad_rc[:3]))
    check(not unanswered, 'the server answered each leave%s' %
          ('' if not unanswered else ': not those of clients %s' %
           unanswered[:10]))
    check(alive, 'the server outlived them%s' %
          ('' if alive else ' (exit %s): %s' % (server.returncode,
                                                log[-600:])))
    leaves = log.count('the memif peer leaves')
    # (and the pingpong client's, if it came before the server ended)
    check(args.rounds <= leaves <= args.rounds + 1,
          'the server took %d leaves of %d' % (leaves, args.rounds))
    ok = pp is not None and pp.returncode == 0 and server.returncode == 0
    check(ok, 'then a pingpong client: 100 round trips, both end 0%s' %
          ('' if ok else ' (client %s: %s; server %s: %s)' %
           (None if pp is None else pp.returncode,
            '' if pp is None else (pp.stdout + pp.stderr)[-300:],
            server.returncode, log[-300:])))
    print('%d passed, %d failed' % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
