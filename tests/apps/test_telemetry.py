#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""The engine's /droce/ telemetry endpoints answer, with the right values.

droce-pmd on the embedded default (its EAL arguments as they are) moves
data between a QP on droce0 and one on droce1, prints `show device` and
`show qp`, then sleeps. Meanwhile this test finds the process's
telemetry socket (the one whose greeting names its pid: several DPDK
processes may share the runtime directory), and checks:

- /droce/devices lists droce0 and droce1;
- /droce/dev_stats has the addresses and link, every counter, traffic,
  and the same counters droce-pmd printed (nothing moves during the
  sleep), one port's tx equal to the other's rx;
- /droce/qps lists the QPN of the QP droce-pmd made on each device;
- /droce/qp_stats has the state, the peer and every counter, equal to
  `show qp`'s;
- bad parameters are refused (a null answer);
- DPDK's own client, dpdk-telemetry.py, reads the same through -f/-i.

The counters are those of lib/engine/droce_counters.h's lists.

Usage: test_telemetry.py --pmd DROCE_PMD --counters DROCE_COUNTERS_H
                         --workdir DIR
"""

import argparse
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pmd_out

SCRIPT = """create qp droce0
create qp droce1
connect qp 0 qp 1
connect qp 1 qp 0
run 0 write 8192 500
run 1 read 3000 200
sleep 200
show device
show qp
sleep {sleep_ms}
"""
SLEEP_MS = 8000
TELEMETRY_PY = '/usr/bin/dpdk-telemetry.py'
failures = []


def check(ok, what):
    print('%s: %s' % ('ok' if ok else 'FAILED', what))
    if not ok:
        failures.append(what)
    return ok


def runtime_dir(prefix='rte'):
    """DPDK's runtime directory for a file prefix, as the EAL makes it."""
    base = os.environ.get('RUNTIME_DIRECTORY')
    if not base:
        base = '/var/run' if os.getuid() == 0 else \
            os.environ.get('XDG_RUNTIME_DIR', '/tmp')
    return os.path.join(base, 'dpdk', prefix)


class Telemetry:
    """A connection to one process's telemetry socket."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.greeting = json.loads(self.sock.recv(1024).decode())
        self.max_len = self.greeting['max_output_len']

    def query(self, cmd):
        self.sock.send(cmd.encode())
        reply = json.loads(self.sock.recv(self.max_len).decode())
        return reply.get(cmd.split(',')[0])

    def close(self):
        self.sock.close()


def find_socket(pid, timeout=30):
    """The telemetry connection of process pid, or None."""
    end = time.time() + timeout
    while time.time() < end:
        for path in sorted(glob.glob(os.path.join(
                runtime_dir(), 'dpdk_telemetry.v2*'))):
            try:
                t = Telemetry(path)
            except (OSError, ValueError, KeyError):
                continue
            if t.greeting.get('pid') == pid:
                return t
            t.close()
        time.sleep(0.2)
    return None


def read_until_sleep(p, out):
    """Collect droce-pmd's output up to the echo of the long sleep."""
    marker = pmd_out.PROMPT + 'sleep %d' % SLEEP_MS
    while True:
        line = p.stdout.readline().decode()
        if not line:
            return False
        out.append(line.rstrip('\n'))
        if line.startswith(marker):
            return True


def check_devices(t, shown, counters):
    devs = t.query('/droce/devices')
    check(devs == ['droce0', 'droce1'], '/droce/devices: %s' % devs)
    stats = {}
    for name, mac, ip in (('droce0', '02:D7:0C:E0:00:01', '10.0.0.1'),
                          ('droce1', '02:D7:0C:E0:00:02', '10.0.0.2')):
        s = t.query('/droce/dev_stats,' + name)
        if not check(isinstance(s, dict), '/droce/dev_stats,%s answers' %
                     name):
            continue
        stats[name] = s
        check(s['name'] == name and s['mac'] == mac and s['ipv4'] == ip and
              s['gid0'] == '::ffff:' + ip and s['link'] == 'up' and
              s['active_mtu'] == 1024,
              '%s: name, MAC, IPv4, GID, link, MTU (%s)' % (name, s))
        missing = [c for c in counters if c not in s]
        check(not missing, '%s: every counter (missing %s)' % (name,
                                                              missing))
        check(s.get('rx_frames', 0) > 0 and s.get('tx_frames', 0) > 0 and
              s.get('rx_roce', 0) > 0, '%s: traffic counted' % name)
        same = all(s.get(c) == shown[name].get(c) for c in counters)
        check(same, '%s: the counters show device printed' % name)
    if len(stats) == 2:
        check(stats['droce0']['tx_frames'] == stats['droce1']['rx_frames']
              and stats['droce1']['tx_frames'] ==
              stats['droce0']['rx_frames'],
              'one port sent what the other received')


def check_qps(t, qps, counters):
    for q, dev in ((0, 'droce0'), (1, 'droce1')):
        m, shown = qps[q]
        qpn = int(m.group(3), 16)
        listed = t.query('/droce/qps,' + dev)
        check(listed == [qpn], '/droce/qps,%s: %s (want [%d])' %
              (dev, listed, qpn))
        s = t.query('/droce/qp_stats,%s,%d' % (dev, qpn))
        if not check(isinstance(s, dict), '/droce/qp_stats,%s,%d answers' %
                     (dev, qpn)):
            continue
        peer = qps[1 - q][0]
        check(s['qpn'] == qpn and s['state'] == 'RTS' and
              s['type'] == 'RC' and
              s['dest_qpn'] == int(peer.group(3), 16) and
              s['dgid'] == '::ffff:10.0.0.%d' % (2 - q) and
              s['path_mtu'] == 1024,
              '%s QP %d: state, peer, MTU (%s)' % (dev, qpn, s))
        missing = [c for c in counters if c not in s]
        check(not missing, 'QP %d: every counter (missing %s)' % (qpn,
                                                                 missing))
        check(all(s.get(c) == shown.get(c) for c in counters),
              'QP %d: the counters show qp printed' % qpn)
        check(s.get('tx_pkts', 0) > 0 and s.get('rx_pkts', 0) > 0,
              'QP %d: packets counted' % qpn)
        # sq_psn: where the requester is, from the PSN it started at
        psn0 = int(m.group(5), 16)
        check((s['sq_psn'] - psn0) % (1 << 24) > 0,
              'QP %d: the requester moved its PSN' % qpn)


def check_resources(t, names):
    """What each device holds: every entry, each within its table."""
    for dev in ('droce0', 'droce1'):
        r = t.query('/droce/resources,' + dev)
        if not check(isinstance(r, dict), '/droce/resources,%s answers' %
                     dev):
            continue
        missing = [n for n in names if n not in r]
        check(not missing, '%s: every resource (missing %s)' % (dev, missing))
        if missing:
            continue
        check(r['qps'] == 1 and r['mrs'] >= 1 and r['mbufs'] > 0,
              '%s: its QP, MR and mbuf pool counted (%s)' % (dev, r))
        over = [n for n in names if n + '_max' in r and r[n] > r[n + '_max']]
        check(not over and r['mbufs_in_use'] <= r['mbufs'] and
              r['neigh_pending'] <= r['neigh'],
              '%s: within its tables (%s)' % (dev, r))


def check_refusals(t, qpn):
    for cmd in ('/droce/dev_stats', '/droce/dev_stats,nope',
                '/droce/resources', '/droce/resources,nope',
                '/droce/qps,nope', '/droce/qp_stats,droce0',
                '/droce/qp_stats,droce0,x', '/droce/qp_stats,droce0,99999',
                '/droce/qp_stats,nope,%d' % qpn,
                '/droce/qp_stats,droce0,%d,1' % qpn):
        r = t.query(cmd)
        check(r is None, '%s refused (%s)' % (cmd, r))


def check_dpdk_telemetry_py(t):
    """DPDK's client, with -f and -i as the socket's name says."""
    base = os.path.basename(t.path)
    instance = base.split(':')[1] if ':' in base else '0'
    cmd = [sys.executable, TELEMETRY_PY, '-f', 'rte', '-i', instance]
    p = subprocess.run(cmd, input=b'/droce/devices\n/droce/dev_stats,droce1\n',
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    replies = []
    for line in p.stdout.decode().splitlines():
        try:
            replies.append(json.loads(line))
        except ValueError:
            pass
    ok = (p.returncode == 0 and len(replies) == 2 and
          replies[0].get('/droce/devices') == ['droce0', 'droce1'] and
          replies[1].get('/droce/dev_stats', {}).get('rx_frames', 0) > 0)
    check(ok, '%s: %s' % (' '.join(cmd), p.stdout.decode()[:200]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pmd', required=True)
    ap.add_argument('--counters', required=True,
                    help='droce_counters.h, whose lists telemetry gives')
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    counters = pmd_out.read_counters(args.counters)
    resources = pmd_out.read_resources(args.counters)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    script = os.path.join(args.workdir, 'telemetry.txt')
    with open(script, 'w') as f:
        f.write(SCRIPT.format(sleep_ms=SLEEP_MS))
    env = dict(os.environ)
    env.pop('DROCE_CONFIG', None)
    p = subprocess.Popen([args.pmd, '-f', script], env=env,
                         stdout=subprocess.PIPE)
    out = []
    try:
        if not check(read_until_sleep(p, out), 'droce-pmd reached the sleep'):
            return 1
        secs = pmd_out.sections('\n'.join(out))
        shown = pmd_out.devices([l for c, lines in secs
                                 if c == 'show device' for l in lines])
        qps = pmd_out.qps([l for c, lines in secs if c == 'show qp'
                           for l in lines])
        t = find_socket(p.pid)
        if not check(t is not None, 'a telemetry socket of pid %d in %s' %
                     (p.pid, runtime_dir())):
            return 1
        print('socket %s' % t.path)
        check(t.greeting.get('version', '').startswith('DPDK'),
              'greeting %s' % t.greeting)
        cmds = t.query('/')
        check(all(c in cmds for c in ('/droce/devices', '/droce/dev_stats',
                                      '/droce/qps', '/droce/qp_stats',
                                      '/droce/resources')),
              'the /droce/ commands are registered')
        check_devices(t, shown, counters.dev)
        if check(sorted(qps) == [0, 1], 'droce-pmd showed two QPs'):
            check_qps(t, qps, counters.qp)
            check_resources(t, resources)
            check_refusals(t, int(qps[0][0].group(3), 16))
        check_dpdk_telemetry_py(t)
        t.close()
        rest, _ = p.communicate(timeout=120)
        with open(os.path.join(args.workdir, 'telemetry.out'), 'w') as f:
            f.write('\n'.join(out) + '\n' + rest.decode())
        check(p.returncode == 0, 'droce-pmd exits with 0 (%d)' %
              p.returncode)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
