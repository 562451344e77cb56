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
- /droce/dev_stats has the addresses and link, its engine lcores (and
  rx_spread, zero_copy), every counter, traffic, and the same counters
  droce-pmd printed (nothing moves during the sleep), one port's tx
  equal to the other's rx;
- /droce/qps lists the QPN of the QP droce-pmd made on each device;
- /droce/qp_stats has the state, the peer and every counter, equal to
  `show qp`'s;
- bad parameters are refused (a null answer);
- DPDK's own client, dpdk-telemetry.py, reads the same through -f/-i.

Then a second droce-pmd, on the prompt through a pipe, for /droce/cm:

- before any cm command the CM has not started, and /droce/cm is not
  registered yet (it is when the CM starts, at the first rdma_cm call):
  it is not in the list of commands and gets a null answer, as an
  unknown command does; `show cm` says "not started";
- once droce1 listens and droce0 has connected to it: 3 ids, 1 listening,
  2 connections, both ESTABLISHED, as many MADs received as sent; every
  counter of struct droce_cm_stats, and every connection state, by the
  names of lib/cm/droce_cm.h; the same values `show cm` prints just
  before and just after (nothing moves in between);
- a connect to a port nobody listens on: one REJ sent and one received,
  under invalid_service_id (reason 8), no other, and no id or
  connection left of it;
- `cm disconnect`: no connection left and the listener's id alone once
  TimeWait is over (4 s at most; polled until 2 s after that).

The counters are those of lib/engine/droce_counters.h's lists and of
struct droce_cm_stats.

Usage: test_telemetry.py --pmd DROCE_PMD --counters DROCE_COUNTERS_H
                         [--cm-header DROCE_CM_H] --workdir DIR
"""

import argparse
import collections
import glob
import json
import os
import re
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
CM_PORT = 7471
CM_NOBODY_PORT = 9999           # nobody listens there
CM_TIMEWAIT_S = 4               # the longest a connection's TimeWait lasts
# the whole of `show cm`'s output, up to the prompt that follows it
RE_SHOW_CM = r'listen_overflow\s+\d+\n(?:  \w+\s+\d+\n)*' + \
    re.escape(pmd_out.PROMPT)
failures = pmd_out.failures
check = pmd_out.check


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
        # one engine lcore, the default: its list is it
        check(s.get('lcores') == str(s.get('lcore')),
              '%s: its engine lcores (%s)' % (name, s.get('lcores')))
        # one lcore: no spreading; a ring pair reads any memory
        check(s.get('rx_spread') == 'none' and s.get('zero_copy') == 'va',
              '%s: rx_spread none, zero_copy va (%s, %s)' %
              (name, s.get('rx_spread'), s.get('zero_copy')))
        missing = [c for c in counters if c not in s]
        check(not missing, '%s: every counter (missing %s)' % (name,
                                                              missing))
        check(s.get('rx_frames', 0) > 0 and s.get('tx_frames', 0) > 0 and
              s.get('rx_roce', 0) > 0, '%s: traffic counted' % name)
        # (app_passes aside: waiting for its answer, the asking thread
        # may run the engine's passes itself, run_to_completion)
        same = all(s.get(c) == shown[name].get(c) for c in counters
                   if c != 'app_passes')
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


CmStats = collections.namedtuple('CmStats', 'counters arrays states')


def read_cm_stats(header):
    """CmStats: the counters (uint64_t) and the arrays of struct
    droce_cm_stats, and the states of enum droce_cm_conn_state
    ("ESTABLISHED", ...), in order."""
    with open(header) as f:
        text = re.sub(r'/\*.*?\*/', '', f.read(), flags=re.S)
    st = re.search(r'struct droce_cm_stats\s*\{(.*?)\};', text, re.S)
    en = re.search(r'enum droce_cm_conn_state\s*\{(.*?)\};', text, re.S)
    if not st or not en:
        raise ValueError('%s: no struct droce_cm_stats or states' % header)
    fields = re.findall(r'uint64_t\s+(\w+)\s*(\[[^\]]*\])?\s*;',
                        st.group(1))
    return CmStats([n for n, a in fields if not a],
                   [n for n, a in fields if a],
                   re.findall(r'DROCE_CM_STATE_(\w+)', en.group(1)))


def cm_as_shown(s, cm):
    """/droce/cm's answer under the names `show cm` prints: conns_<state>
    for each state, <array>_<reason> for each REJ counted."""
    flat = {c: s[c] for c in cm.counters}
    for a in cm.arrays:
        for k, v in s[a].items():
            if a == 'conns_by_state':
                flat['conns_' + k.lower()] = v
            elif v:
                flat[a + '_' + k] = v
    return flat


def check_cm_read(t, show_cm, cm, when):
    """/droce/cm between two `show cm`s: every counter, equal to both.
    The answer, or None."""
    before = show_cm()
    s = t.query('/droce/cm')
    after = show_cm()
    if not check(isinstance(s, dict), '%s: /droce/cm answers' % when):
        return None
    want = cm.counters + cm.arrays
    check(sorted(s) == sorted(want),
          '%s: every counter of struct droce_cm_stats, by its name, no '
          'other (missing %s, unknown %s)' %
          (when, [c for c in want if c not in s],
           [c for c in s if c not in want]))
    if any(c not in s for c in want) or \
            not all(isinstance(s[a], dict) for a in cm.arrays):
        return None
    check(list(s['conns_by_state']) == cm.states,
          '%s: conns_by_state has every state, in order (%s)' %
          (when, list(s['conns_by_state'])))
    check(s['conns'] == sum(s['conns_by_state'].values()),
          '%s: conns is the sum over the states (%s)' % (when, s['conns']))
    flat = cm_as_shown(s, cm)
    differ = {k: (flat.get(k), before.get(k), after.get(k))
              for k in set(flat) | set(before) | set(after)
              if not flat.get(k) == before.get(k) == after.get(k)}
    check(before and not differ, '%s: /droce/cm is what show cm printed '
          'before and after it (differ: %s)' % (when, differ))
    return s


def check_cm(args, cm):
    """/droce/cm before the CM starts, connected, after a REJ, after a
    disconnect; droce-pmd on the prompt through a pipe."""
    env = dict(os.environ)
    env.pop('DROCE_CONFIG', None)
    p = subprocess.Popen([args.pmd], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = []

    def cmd(line, regex):
        p.stdin.write((line + '\n').encode())
        p.stdin.flush()
        m = pmd_out.read_until(p, regex)
        out.append(m.string if m else '(%s: no %s)\n' % (line, regex))
        return m

    def show_cm():
        m = cmd('show cm', RE_SHOW_CM)
        return pmd_out.counters(m.string[:m.end()].splitlines()) if m \
            else {}

    t = None
    try:
        m = cmd('show cm', r'cm: not started')
        check(m is not None, 'cm: show cm before any cm command: not '
              'started')
        t = find_socket(p.pid)
        if not check(t is not None, 'cm: a telemetry socket of pid %d' %
                     p.pid):
            return
        r = t.query('/droce/cm')
        check(r is None and '/droce/cm' not in t.query('/'),
              'cm: before the CM starts /droce/cm is not registered: not '
              'listed, a null answer (%s)' % r)

        m = cmd('cm listen droce1 %d' % CM_PORT,
                r'cm: droce1 listening on 10\.0\.0\.2 port %d' % CM_PORT)
        m = m and cmd('cm connect droce0 10.0.0.2 %d' % CM_PORT,
                      r'cm: qp 1 established with')
        if not check(m is not None, 'cm: droce1 listens, droce0 connects'):
            return
        check('/droce/cm' in t.query('/'), 'cm: the CM started, /droce/cm '
              'is registered')
        s = check_cm_read(t, show_cm, cm, 'connected')
        if s is None:
            return
        check(s['ids'] == 3 and s['listeners'] == 1 and s['conns'] == 2 and
              s['conns_by_state']['ESTABLISHED'] == 2,
              'connected: 3 ids, 1 listening, 2 connections ESTABLISHED '
              '(%s)' % s)
        check(s['mads_sent'] == s['mads_received'] > 0,
              'connected: every MAD sent was received (%s/%s)' %
              (s['mads_sent'], s['mads_received']))

        m = cmd('cm connect droce0 10.0.0.2 %d' % CM_NOBODY_PORT,
                r'RDMA_CM_EVENT_REJECTED, status (\d+)')
        check(m is not None and m.group(1) == '8',
              'cm: a connect to nobody REJECTED, reason 8')
        s = check_cm_read(t, show_cm, cm, 'rejected')
        if s is None:
            return
        rej = {(a, k): v for a in ('rej_sent', 'rej_received')
               for k, v in s[a].items() if v}
        check(rej == {('rej_sent', 'invalid_service_id'): 1,
                      ('rej_received', 'invalid_service_id'): 1},
              'rejected: 1 REJ sent and 1 received, invalid_service_id, '
              'no other (%s)' % rej)
        check(s['ids'] == 3 and s['conns'] == 2,
              'rejected: no id or connection left of it (%s ids, %s '
              'conns)' % (s['ids'], s['conns']))

        start = time.time()
        m = cmd('cm disconnect 0', r'cm: qp 0 disconnected, destroyed')
        check(m is not None, 'cm: cm disconnect 0')
        # TimeWait, then the peer's id when droce-pmd hears the DREQ
        end = start + CM_TIMEWAIT_S + 2
        while True:
            s = t.query('/droce/cm') or {}
            if (s.get('conns'), s.get('ids')) == (0, 1) or \
                    time.time() > end:
                break
            time.sleep(0.1)
        check((s.get('conns'), s.get('ids'), s.get('listeners')) ==
              (0, 1, 1), 'disconnected: no connection, the listener\'s id '
              'alone, after %.1f s (%s conns, %s ids)' %
              (time.time() - start, s.get('conns'), s.get('ids')))
        s = check_cm_read(t, show_cm, cm, 'disconnected')
        if s is not None:
            check(s['mads_sent'] == s['mads_received'],
                  'disconnected: every MAD sent was received, DREQ and '
                  'DREP too (%s/%s)' % (s['mads_sent'], s['mads_received']))
        p.stdin.write(b'quit\n')
        p.stdin.flush()
        rc = p.wait(timeout=60)
        check(rc == 0, 'cm: quit exits with 0 (%d)' % rc)
    finally:
        if t is not None:
            t.close()
        if p.poll() is None:
            p.kill()
            p.wait()
        with open(os.path.join(args.workdir, 'telemetry_cm.out'), 'w') as f:
            f.write(''.join(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pmd', required=True)
    ap.add_argument('--counters', required=True,
                    help='droce_counters.h, whose lists telemetry gives')
    ap.add_argument('--cm-header',
                    help='droce_cm.h, whose struct droce_cm_stats /droce/cm '
                    'gives (by default lib/cm/ beside lib/engine/ of '
                    '--counters)')
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    counters = pmd_out.read_counters(args.counters)
    cm = read_cm_stats(args.cm_header or os.path.join(
        os.path.dirname(args.counters), os.pardir, 'cm', 'droce_cm.h'))
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
    check_cm(args, cm)
    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
