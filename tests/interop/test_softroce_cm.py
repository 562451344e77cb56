#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce's RDMA CM against Linux's rdma_cm over soft-RoCE, both ways.

The guest of test_softroce.py (rdma_rxe on eth0, now with rdma_ucm and
rdmacm-utils, perftest and qperf) on one side of a tap; droce0 on the
other through net_af_packet, with Debian's unmodified rdma_cm programs
running over droce's libibverbs.so.1 and librdmacm.so.1. Each step runs
one program as server on one side and as client on the other, then the
other way round:

  - rping -V (RC SENDs, READs and WRITEs, every ping's data checked by
    the tool);
  - ucmatose (RC: connect, SENDs both ways, disconnect), one connection
    and four;
  - udaddy (UD: SIDR_REQ/SIDR_REP, then datagrams both ways);
  - mckey (UD multicast: a receiver joins, a sender sends to the group);
  - rdma_server/rdma_client (the synchronous endpoint calls);
  - perftest's ib_write_bw, ib_read_bw and ib_send_lat with -R (see
    REQ_DELAY_MS for the guest serving);
  - qperf's rc_bw, rc_lat and rc_rdma_write_bw with -cm1, droce as the
    client only (qperf's control connection must reach the server's
    RDMA address over TCP, which only the guest's kernel can answer).

Each step must end with both sides reporting success; every frame droce
sent or received, CM MADs included, is mirrored to pcap and must decode
in tshark and agree with droce-dump.

Usage: test_softroce_cm.py --lib-verbs DIR --lib-rdmacm DIR
        --dump DROCE_DUMP --tshark TSHARK_ROCE --workdir DIR
        [--only SUBSTRINGS]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

import netns
import test_softroce as sr
from test_softroce import check, failures

GUEST_DEV = 'rxe0'
PORT0 = 18700
MCAST = '239.1.2.3'

# (name, server argv, client argv, what both sides print on success);
# {me} is the side's own address, {peer} the other's, {port} the step's
# port, {dev} and {gid} its device and GID index
RUNS = [
    ('rping',
     ['rping', '-s', '-a', '{me}', '-p', '{port}', '-C', '10', '-S', '64',
      '-v', '-V'],
     ['rping', '-c', '-a', '{peer}', '-p', '{port}', '-C', '10', '-S', '64',
      '-v', '-V'],
     r'ping data: rdma-ping-9:'),
    ('ucmatose',
     ['ucmatose', '-b', '{me}', '-p', '{port}', '-C', '10'],
     ['ucmatose', '-s', '{peer}', '-b', '{me}', '-p', '{port}', '-C', '10'],
     r'^return status 0$'),
    ('ucmatose-c4',
     ['ucmatose', '-b', '{me}', '-p', '{port}', '-c', '4', '-C', '10'],
     ['ucmatose', '-s', '{peer}', '-b', '{me}', '-p', '{port}', '-c', '4',
      '-C', '10'],
     r'^return status 0$'),
    # (udaddy's and mckey's -p is a port space: they use their own port)
    ('udaddy',
     ['udaddy', '-b', '{me}', '-C', '4', '-S', '64'],
     ['udaddy', '-s', '{peer}', '-b', '{me}', '-C', '4', '-S', '64'],
     r'^return status 0$'),
    ('mckey',
     ['mckey', '-m', MCAST, '-b', '{me}', '-C', '10'],
     ['mckey', '-m', MCAST, '-b', '{me}', '-s', '-C', '10'],
     r'^return status 0$'),
    ('rdma_server',
     ['rdma_server', '-s', '{me}', '-p', '{port}'],
     ['rdma_client', '-s', '{peer}', '-p', '{port}'],
     r'^rdma_(server|client): end 0$'),
    ('ib_write_bw-R',
     ['ib_write_bw', '-R', '-d', '{dev}', '-x', '{gid}', '-p', '{port}',
      '-s', '8192', '-n', '300'],
     ['ib_write_bw', '-R', '-d', '{dev}', '-x', '{gid}', '-p', '{port}',
      '-s', '8192', '-n', '300', '{peer}'],
     None),
    ('ib_read_bw-R',
     ['ib_read_bw', '-R', '-d', '{dev}', '-x', '{gid}', '-p', '{port}',
      '-s', '8192', '-n', '300'],
     ['ib_read_bw', '-R', '-d', '{dev}', '-x', '{gid}', '-p', '{port}',
      '-s', '8192', '-n', '300', '{peer}'],
     None),
    ('ib_send_lat-R',
     ['ib_send_lat', '-R', '-d', '{dev}', '-x', '{gid}', '-p', '{port}',
      '-n', '300'],
     ['ib_send_lat', '-R', '-d', '{dev}', '-x', '{gid}', '-p', '{port}',
      '-n', '300', '{peer}'],
     None),
]
# qperf: the guest serves, droce is the client, one test a run (qperf's
# server listens for a test's connection only after it answered the
# client over TCP, and its client connects at once: the REQ of a second
# test in one run can come first, with Linux's client as with droce's)
QPERFS = [('qperf-' + t, ['qperf', '-lp', '{port}'],
           ['qperf', '-lp', '{port}', '{peer}', '-cm1', '-t', '2', t], None)
          for t in ('rc_bw', 'rc_lat', 'rc_rdma_write_bw')]

# What a client prints when it came before its server listened: the
# CM's REJ of an unknown service, or perftest's or qperf's complaint.
NOT_YET = (r'RDMA_CM_EVENT_REJECTED|Unexpected CM event bl blka 8|'
           r'Connection refused|Unable to init')
# perftest's client is started again only when its first connection
# found no server: once the server is past its first connection, a new
# client would take the server's second listen for its first.
PERFTEST_NOT_YET = r'Unable to init the socket connection'


def not_yet(run):
    return PERFTEST_NOT_YET if run[0].startswith('ib_') else NOT_YET


# REQ_DELAY_MS: every REQ droce sends reaches the guest's CM that much
# later (netem on eth0's ingress, through ifb0), and every REQ the guest
# sends leaves that much later (netem on a band of eth0's root). perftest's
# -R tools connect twice, the second time once their parameter exchange
# on the first connection is over; the server listens for the second only
# when its last SEND of the exchange has been acknowledged, the client
# asks as soon as it has that SEND. That race is perftest's, on any pair
# of hosts: a server slower to listen than its client to ask meets the
# REQ with the REJ of a service no one listens on (reason 8), as Linux's
# CM does, and the tool does not recover (the client ends, the server
# waits for a connection no one makes). A native client (droce's here,
# Linux's on a host as fast) asks some 1 ms after its ACK, while the TCG
# guest's server needs a few ms to listen; the other way, the guest
# asks within milliseconds and droce's server, on a host whose cores the
# guest shares, can lose them for as long. 100 ms gives either server
# the time it would not need on hosts of its own; nothing else is held,
# so the data path and the other MADs keep their timing.
REQ_DELAY_MS = 100
# UDP to 4791, BTH destination QP 1, MAD attribute 0x0010 (REQ)
REQ_MATCH = ('u32 match ip protocol 17 0xff match ip dport 4791 0xffff '
             'match u32 0x00000001 0x00ffffff at 32 '
             'match u16 0x0010 0xffff at 64')
REQ_DELAY = [
    'ip link set ifb0 up',
    '/usr/bin/tc qdisc add dev eth0 handle ffff: ingress',
    '/usr/bin/tc filter add dev eth0 parent ffff: protocol ip prio 1 %s '
    'action mirred egress redirect dev ifb0' % REQ_MATCH,
    '/usr/bin/tc qdisc add dev ifb0 root netem delay %dms' % REQ_DELAY_MS,
    # the guest's own REQs: a prio qdisc's third band, held there
    '/usr/bin/tc qdisc add dev eth0 root handle 1: prio',
    '/usr/bin/tc qdisc add dev eth0 parent 1:3 handle 30: netem delay %dms'
    % REQ_DELAY_MS,
    '/usr/bin/tc filter add dev eth0 parent 1: protocol ip prio 1 %s '
    'flowid 1:3' % REQ_MATCH,
]
GUEST_MODULES = ('ifb', 'sch_ingress', 'sch_prio', 'cls_u32', 'act_mirred',
                 'sch_netem')

# A server in the guest is announced ("guest: serving STEP") once its
# listener is in the guest's CM (rdma res show cm_id), so droce's client
# starts then, once, for the programs that listen on the step's port;
# the others (udaddy, mckey, qperf: their own port, no listener, or TCP
# first) get a few seconds and are started again while they find the
# server not there yet (NOT_YET).
SERVER_WAIT = 120


def listens(run):
    return run not in QPERFS and '{port}' in run[1]


def steps(only):
    out = []
    i = 0
    for run in RUNS + QPERFS:
        for server in ('guest', 'droce'):
            if run in QPERFS and server == 'droce':
                continue
            name = '%s-%s-server' % (run[0], server)
            if only and not any(o in name for o in only.split(',')):
                continue
            out.append((name, run, server, PORT0 + i))
            i += 1
    return out


def argv(template, side, port):
    me, peer = (sr.GUEST_IP, sr.DROCE_IP) if side == 'guest' else \
        (sr.DROCE_IP, sr.GUEST_IP)
    dev, gid = (GUEST_DEV, '1') if side == 'guest' else ('droce0', '0')
    return [a.format(me=me, peer=peer, port=port, dev=dev, gid=gid)
            for a in template]


def guest_script(plan, first=0):
    lines = ['#!/bin/sh', 'cd /tmp']
    lines += ['%s || echo "guest: REQ delay failed"' % c for c in REQ_DELAY]
    lines.append('echo "guest: REQs held %d ms"' % REQ_DELAY_MS)
    for name, run, server, port in plan[first:]:
        lines.append('echo "guest: begin %s"' % name)
        if server == 'guest':
            cmd = ' '.join(argv(run[1], 'guest', port))
            # qperf's server serves until it is stopped
            if run in QPERFS:
                lines.append('echo "guest: serving %s"' % name)
                lines.append('timeout 20 %s >out 2>&1; rc=$?' % cmd)
            elif listens(run):
                lines.append('timeout %d %s >out 2>&1 & pid=$!' %
                             (SERVER_WAIT, cmd))
                lines.append('n=0; while [ $n -lt 300 ] && ! rdma res show '
                             'cm_id | grep -q "state LISTEN .*:%d "; do '
                             'n=$((n+1)); sleep 0.1; done' % port)
                lines.append('echo "guest: serving %s"' % name)
                lines.append('wait $pid; rc=$?')
            else:
                lines.append('echo "guest: serving %s"' % name)
                lines.append('timeout %d %s >out 2>&1; rc=$?' %
                             (SERVER_WAIT, cmd))
        else:
            cmd = ' '.join(argv(run[2], 'guest', port))
            if run[0] == 'mckey':
                lines.append('sleep 5')
            lines.append('n=0; while :; do timeout 120 %s >out 2>&1; '
                         'rc=$?; grep -Eq "%s" out || break; n=$((n+1)); '
                         '[ $n -ge 60 ] && break; sleep 1; done' %
                         (cmd, not_yet(run).replace('\\b', '')))
        lines.append('sed "s/^/guest[%s]> /" out' % name)
        lines.append('kfault-check')
        lines.append('echo "guest: end %s rc=$rc"' % name)
    return '\n'.join(lines) + '\n'


def host_env(args, name):
    env = sr.host_env(argparse.Namespace(workdir=args.workdir,
                                         lib=args.lib_verbs), name, False)
    env['LD_LIBRARY_PATH'] = '%s:%s' % (os.path.abspath(args.lib_verbs),
                                        os.path.abspath(args.lib_rdmacm))
    # the CM's log of its MADs and events, in each run's log
    env['DROCE_CM_DEBUG'] = '1'
    return env


def reported(run, out):
    if run[3] is not None:
        return re.search(run[3], out, re.M) is not None
    if run in QPERFS:
        return re.search(r'^%s:\n\s+\S+\s+=\s+[\d.]+ ' % run[0][6:],
                         out, re.M) is not None
    return sr.reported(run[1][0], out)


def run_client(args, env, name, run, port):
    """droce's client, against the guest's server: once if the guest saw
    it listen, else again while it finds the server not yet there.
    (rc, output)."""
    if not listens(run):
        # the guest's server a moment to listen (a TCG guest starts a
        # program slowly), and mckey's receiver to join: a datagram sent
        # before is lost, while it waits for every one
        time.sleep(5)
    for attempt in range(60 if not listens(run) else 1):
        try:
            p = subprocess.run(argv(run[2], 'droce', port), env=env,
                               capture_output=True, text=True, timeout=120)
            rc, out = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired:
            return -1, 'timed out after 120 s'
        if rc == 0 or not re.search(NOT_YET, out) or listens(run):
            return rc, out
        tag = '%d' % attempt
        with open(os.path.join(args.workdir, '%s.host.%s.log' %
                               (name, tag)), 'w') as f:
            f.write(out)
        pcap = os.path.join(args.workdir, name + '-droce0.pcap')
        if os.path.exists(pcap):
            os.rename(pcap, pcap + '.' + tag)
        time.sleep(1)
    return rc, out


def run_step(args, guest, step):
    name, run, server, port = step
    env = host_env(args, name)
    if not guest.wait_for(r'^guest: begin %s$' % re.escape(name), 600):
        check(False, '%s: the guest never started it' % name)
        return
    t0 = time.time()
    if server == 'droce':
        p = subprocess.Popen(argv(run[1], 'droce', port), env=env,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        guest.wait_for(r'^guest: end %s rc=' % re.escape(name), 600)
        try:
            out, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        rc = p.returncode
    else:
        rc, out = -1, 'the guest never served'
        m = guest.wait_for(r'^guest: (serving|end) %s( rc=|$)' %
                           re.escape(name), 200)
        if m is not None and m.group(1) == 'serving':
            rc, out = run_client(args, env, name, run, port)
            # mckey's sender sends its datagrams once: if the guest's
            # receiver (slow to start under TCG) joined after them, it
            # waits for more; send again until it has had them all
            if run[0] == 'mckey':
                while rc == 0 and guest.wait_for(
                        r'^guest: end %s rc=' % re.escape(name), 3) is None:
                    rc, out = run_client(args, env, name, run, port)
    m = guest.wait_for(r'^guest: end %s rc=(\d+)' % re.escape(name), 600)
    grc = int(m.group(1)) if m else -1
    gout = '\n'.join(l.split('> ', 1)[1] for l in guest.text().splitlines()
                     if l.startswith('guest[%s]> ' % name))
    with open(os.path.join(args.workdir, name + '.host.log'), 'w') as f:
        f.write(out)
    ok_host = rc == 0 and reported(run, out)
    if run in QPERFS:
        # the guest's qperf server, stopped by its timeout (TERM)
        ok_guest = grc == 143
    else:
        ok_guest = grc == 0 and reported(run, gout)
    check(ok_host and ok_guest,
          '%s (%.1f s): droce %s, Linux %s' %
          (name, time.time() - t0,
           'ok' if ok_host else 'exit %d: %s' % (rc, out.strip()[-300:]),
           'ok' if ok_guest else 'exit %d: %s' % (grc, gout.strip()[-300:])))
    if not (ok_host and ok_guest):
        explain(args, name, out)


def explain(args, name, out):
    """What a failed step's log and capture say, for a run whose work
    directory is gone: droce's CM lines and the frames, in short."""
    cm = [l for l in out.splitlines() if l.startswith('droce cm ')]
    lines = ['droce\'s CM:'] + cm[:40] + (['...'] + cm[-20:]
                                          if len(cm) > 60 else cm[40:])
    pcap = os.path.join(args.workdir, name + '-droce0.pcap')
    if os.path.exists(pcap):
        p = subprocess.run([args.tshark, '-r', pcap], capture_output=True,
                           text=True, timeout=60)
        frames = [l for l in p.stdout.splitlines() if 'RRoCE' in l]
        lines += ['frames:'] + frames[:60] + (['...'] + frames[-30:]
                                              if len(frames) > 90
                                              else frames[60:])
    print('\n'.join('      ' + l for l in lines))


def main():
    ap = argparse.ArgumentParser()
    for opt in ('lib-verbs', 'lib-rdmacm', 'dump', 'tshark', 'lab',
                'workdir'):
        ap.add_argument('--' + opt, required=True)
    ap.add_argument('--only', default='',
                    help='run only the steps whose names hold one of these '
                    '(comma-separated)')
    args = ap.parse_args()
    netns.enter()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)

    plan = steps(args.only)

    def boot(first):
        guest = sr.boot_guest(args.workdir, guest_script(plan, first),
                              ['/sbin/tc'], GUEST_MODULES)
        if guest is not None:
            check(guest.wait_for(r'^guest: REQs held', 120) is not None and
                  'REQ delay failed' not in guest.text(),
                  "the guest holds droce's REQs %d ms" % REQ_DELAY_MS)
        return guest

    if not sr.run_plan(plan, boot,
                       lambda guest, i, step: run_step(args, guest, step)):
        return 1
    sr.check_captures(args, [(s[0],) for s in plan])
    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
