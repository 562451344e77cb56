#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""libfabric's verbs provider, unmodified (Debian's libfabric1 and
libfabric-bin), over droce's libibverbs.so.1 and librdmacm.so.1.

fi_pingpong between two processes, one droce device each, with
libfabric's defaults (no FI_* variable set):

  - -p verbs -e msg: MSG endpoints, RC QPs connected through rdma_cm
    (the server binds "localhost" to find its device and address, the
    client's endpoint is made from rdma_getaddrinfo's answer to hints
    that hold the addresses alone);
  - -p "verbs;ofi_rxm" -e rdm: reliable datagram endpoints of ofi_rxm
    over verbs MSG endpoints;
  - -p verbs -e dgram: UD QPs (libfabric's name server gives the
    addresses).

Each runs both ways (either process the server), 10 iterations of each
of fi_pingpong's default sizes; both sides must exit 0 and print a
result for every size, every message sent and acknowledged, with a
bandwidth and a latency above zero.

fi_pingpong's client touches the fabric only once the server has
given it its address over TCP, and libfabric's verbs provider takes
only devices whose port is active when it starts. Over net_memif, whose
link comes up only when both processes run droce, the server would
wait for a client that waits for it; so the two devices are
net_af_packet over the two ends of a veth pair, whose links are up on
their own (as a NIC's is), in a network namespace of the test's own
(netns.py): the server's device 10.0.5.1, the client's 10.0.5.2. The
TCP connection fi_pingpong makes for its own exchange goes to 127.0.0.1
there.

Usage: test_libfabric.py --lib-verbs DIR --lib-rdmacm DIR --workdir DIR
                         [--only SUBSTR]
(as root: the network namespace, the veth pair)
"""

import argparse
import os
import re
import subprocess
import sys
import time

import netns
from test_rdmacm_dropin import communicate, tail, tcp_listening, veth_up

# ofi_rxm connects at the first message, so fi_pingpong's first row
# holds the connection's making: 10 messages of 64 bytes in 0.3 to 0.7 s
# print as 0.00 MB/s. The time is ofi_rxm's own: DROCE_CM_DEBUG=1 shows
# each CM event taken by the application within a few milliseconds of
# its posting, then 0.25 to 0.6 s before the application's next CM call
# (rdma_resolve_route, rdma_accept), and perf record of that interval
# puts 85% of its samples in memset called from libfabric and in the
# kernel's page faults: each side first-touches two new buffer pools of
# 16 MiB, and a page fault costs this virtual machine some 14 us (34 MiB
# of fresh memory take 100 to 125 ms to memset here). The client's REQ
# is sent again meanwhile (droce's CM waits 0.34 s) and draws an MRA.
# "tcp;ofi_rxm", without droce, takes 0.14 s for the same first row. The
# first row's counts and latency are checked; its bandwidth may round to
# nothing (test_pingpong).

# fi_pingpong's own TCP exchange: its default port
CTRL_PORT = 47592
ITERATIONS = 10

AF_PACKET = """[eal]
args = --no-huge -m 512 --no-pci --no-shconf \
--file-prefix=libfabric-{pid}-{name}-{role} \
--vdev=net_af_packet0,iface={iface},qpairs=1
[engine]
cores = {core}
idle_sleep_us = 20
link_wait_s = 10
[device droce0]
port = net_af_packet0
mac = 02:d7:0c:e0:05:0{n}
ipv4 = 10.0.5.{n}/24
"""

# (name, fi_pingpong's arguments for both sides)
CASES = [
    ('msg', ['-p', 'verbs', '-e', 'msg']),
    ('rdm', ['-p', 'verbs;ofi_rxm', '-e', 'rdm']),
    ('dgram', ['-p', 'verbs', '-e', 'dgram']),
]

failures = []
passed = 0
started = time.monotonic()


def check(cond, what):
    global passed
    print(('ok    ' if cond else 'FAIL  ') + what, flush=True)
    if cond:
        passed += 1
    else:
        failures.append(what)


def results(out):
    """fi_pingpong's rows: [(bytes, sent, acked, MB/s, usec/xfer)]."""
    rows = []
    for m in re.finditer(r'^(\S+)\s+(\d+)\s+=(\d+)\s+\S+\s+\S+s\s+'
                         r'([\d.]+)\s+([\d.]+)\s+[\d.]+$', out, re.M):
        rows.append((m.group(1), int(m.group(2)), int(m.group(3)),
                     float(m.group(4)), float(m.group(5))))
    return rows


def run_pair(args, env, name, opts, server_n):
    """fi_pingpong's server on device 10.0.5.server_n, its client on the
    other: (client, server), each (rc, out, err)."""
    envs = {}
    for n, iface, core in ((1, 'veth1', 1), (2, 'veth2', 0)):
        role = 'server' if n == server_n else 'client'
        ini = os.path.join(args.workdir, '%s-%s.ini' % (name, role))
        with open(ini, 'w') as f:
            f.write(AF_PACKET.format(pid=os.getpid(), name=name, role=role,
                                     iface=iface, core=core, n=n))
        envs[role] = dict(env, DROCE_CONFIG=ini)
    argv = ['fi_pingpong'] + opts + ['-I', str(ITERATIONS)]
    server = subprocess.Popen(argv, env=envs['server'],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if tcp_listening(CTRL_PORT) or server.poll() is not None:
                break
            time.sleep(0.1)
        client = subprocess.Popen(argv + ['127.0.0.1'], env=envs['client'],
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        c = communicate(client, 60)
        s = communicate(server, 30 if c[0] == 0 else 10)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    return c, s


def test_pingpong(args, env, name, opts, server_n):
    what = 'fi_pingpong %s (server 10.0.5.%d)' % (
        ' '.join("'%s'" % o if ';' in o else o for o in opts), server_n)
    t0 = time.monotonic()
    client, server = run_pair(args, env, '%s-%d' % (name, server_n), opts,
                              server_n)
    print('run   %-44s %5.1f s' % (what, time.monotonic() - t0), flush=True)
    for side, (rc, o, e) in (('client', client), ('server', server)):
        check(rc == 0, '%s %s exits 0%s' %
              (what, side, '' if rc == 0 else ' (%s: %s)' % (
                  'no exit' if rc is None else 'exit %d' % rc, tail(o, e))))
        rows = results(o)
        # (the first row's bandwidth may print as 0.00: above CTRL_PORT)
        bad = [r for r in rows if r[1] != ITERATIONS or r[2] != ITERATIONS
               or r[4] <= 0 or (r[3] <= 0 and r is not rows[0])]
        good = rc == 0 and rows and not bad
        check(good, '%s %s: %s' % (
            what, side,
            '%d sizes, %s' % (len(rows), '; '.join(
                '%s B %.2f MB/s %.2f us' % (r[0], r[3], r[4])
                for r in rows))
            if good else 'rows %s: %s' % (bad or 'none', tail(o, e))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--lib-verbs', required=True)
    ap.add_argument('--lib-rdmacm', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--only', default='',
                    help='run only the cases whose name has this in it')
    args = ap.parse_args()
    netns.enter()
    args.workdir = os.path.abspath(args.workdir)
    os.makedirs(args.workdir, exist_ok=True)
    # libfabric's defaults: none of the user's FI_* variables
    env = {k: v for k, v in os.environ.items() if not k.startswith('FI_')}
    env['LD_LIBRARY_PATH'] = '%s:%s' % (os.path.abspath(args.lib_verbs),
                                        os.path.abspath(args.lib_rdmacm))
    env.pop('DROCE_CONFIG', None)

    err = veth_up()
    cases = [(n, o) for n, o in CASES if args.only in n]
    for name, opts in cases:
        for server_n in (1, 2):
            if err:
                check(False, 'fi_pingpong %s: no veth pair: %s' % (name, err))
                continue
            test_pingpong(args, env, name, opts, server_n)

    print('%d passed, %d failed (%.0f s)' %
          (passed, len(failures), time.monotonic() - started))
    if failures:
        print('failed:')
        for f in failures:
            print('  ' + f.splitlines()[0][:200])
    return 1 if failures or not passed else 0


if __name__ == '__main__':
    sys.exit(main())
