#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-pmd's cm commands listen, connect and disconnect through the CM.

On the embedded default (droce0 and droce1 over a net_ring pair, in one
process):

- the example script app/pmd/examples/cm_loopback.txt: droce1 listens,
  droce0 connects; each side's QP is a QP of droce-pmd (qp 0 on droce0,
  qp 1 on droce1) in RTS to the other, both established; `show cm`
  counts the two connections ESTABLISHED and the MADs that made them;
  WRITE, READ and SEND runs both ways with their data checked (WRITE and
  READ with the buffers the private data carried); `cm disconnect` ends
  the connection and both QPs go; once TimeWait is over no connection is
  left, every MAD sent was received, none resent or dropped;
- `port stop` of the listening side: its QP goes with a DREQ, and the
  other side's with it;
- the prompt on a pipe: a connect REJECTED does not stop it, and `show
  cm` counts the REJ sent and received by reason;
- scripts that must fail do, with exit status 1, an error line naming
  what failed, and stop there: a connect to a port nobody listens on
  (REJECTED, reason 8, invalid service ID), a disconnect of a QP that
  does not exist or that the CM did not make, a second listener on a
  port, a stop of a listener that is not, a `connect qp` of a QP the CM
  connected.

Usage: test_pmd_cm.py --pmd DROCE_PMD --script CM_LOOPBACK --workdir DIR
"""

import argparse
import os
import re
import shutil
import sys

import pmd_out

TIMEOUT = 300
failures = pmd_out.failures
check = pmd_out.check


def run_script(args, name, text):
    """Run droce-pmd -f on text; (exit status, stdout, stderr)."""
    return pmd_out.run_script(args.pmd, args.workdir, name, text, TIMEOUT)


def section(secs, cmd, nth=0):
    """The lines the nth echo of cmd printed."""
    found = [lines for c, lines in secs if c == cmd]
    return found[nth] if len(found) > nth else []


def match_all(regex, lines):
    return [m for m in map(regex.match, lines) if m]


def check_loopback(args):
    script = open(args.script).read()
    rc, out, err = run_script(args, 'cm_loopback', script)
    if not check(rc == 0, 'cm_loopback script exits with 0 (%d): %s' %
                 (rc, err.strip()[-300:])):
        return
    secs = pmd_out.sections(out)
    script_cmds = [l.strip() for l in script.splitlines()
                   if l.strip() and not l.strip().startswith('#')]
    check([c for c, _ in secs][1:] == script_cmds,
          'every command echoed, in order')

    listen = match_all(pmd_out.RE_CM_LISTEN,
                       section(secs, 'cm listen droce1 7471'))
    check(len(listen) == 1 and listen[0].group(1) == 'droce1' and
          listen[0].group(2) == '10.0.0.2' and
          listen[0].group(3) == '7471',
          'droce1 listens on 10.0.0.2 port 7471')

    # the connect: both sides' QPs made, in RTS to each other, accepted
    # and established
    lines = section(secs, 'cm connect droce0 10.0.0.2 7471')
    created = {int(m.group(1)): m for m in
               map(pmd_out.RE_CREATE.search, lines) if m}
    rts = {int(m.group(1)): m for m in match_all(pmd_out.RE_RTS, lines)}
    if not check(sorted(created) == [0, 1] and
                 created[0].group(2) == 'droce0' and
                 created[1].group(2) == 'droce1',
                 'the connect made qp 0 on droce0, qp 1 on droce1'):
        return
    c0, c1 = created[0], created[1]
    check(c0.group(3) == '::ffff:10.0.0.1' and
          c1.group(3) == '::ffff:10.0.0.2', 'their GIDs are the addresses')
    check(sorted(rts) == [0, 1] and rts[0].group(5) == '1' and
          rts[1].group(5) == '0', 'each in RTS to the other')
    if sorted(rts) == [0, 1]:
        check(rts[0].group(2) == c1.group(3) and
              rts[0].group(3) == c1.group(4) and
              rts[1].group(2) == c0.group(3) and
              rts[1].group(3) == c0.group(4),
              'each with the other\'s GID and QPN')
        # a side's first PSN is the one the other expects
        check(rts[0].group(4) == c1.group(5) and
              rts[1].group(4) == c0.group(5),
              'each side\'s PSN is the one the other expects')
    acc = match_all(pmd_out.RE_CM_ACCEPT, lines)
    check(len(acc) == 1 and acc[0].group(1) == '1' and
          acc[0].group(2) == 'droce1' and acc[0].group(3) == '10.0.0.1' and
          acc[0].group(5) == '10.0.0.2' and acc[0].group(6) == '7471',
          'droce1\'s listener accepted 10.0.0.1 as qp 1')
    est = {int(m.group(1)): m for m in match_all(pmd_out.RE_CM_EST, lines)}
    check(sorted(est) == [0, 1] and est[0].group(2) == '10.0.0.2' and
          est[0].group(3) == '7471' and est[1].group(2) == '10.0.0.1',
          'both sides established before the connect returns')
    if acc and 1 in est:
        check(acc[0].group(4) == est[1].group(3),
              'the listener\'s side has the connecting port')

    # the CM's view: two connections ESTABLISHED
    lines = section(secs, 'show cm')
    cm = pmd_out.counters(lines)
    cmqps = {int(m.group(1)): m for m in match_all(pmd_out.RE_CM_QP, lines)}
    check(cm.get('conns_established') == 2 and cm.get('conns') == 2,
          'show cm: 2 connections, both ESTABLISHED (%s, %s)' %
          (cm.get('conns_established'), cm.get('conns')))
    others = [k for k, v in cm.items()
              if k.startswith('conns_') and k != 'conns_established' and v]
    check(not others, 'no connection in another state %s' % others)
    check(cm.get('ids') == 3 and cm.get('listeners') == 1,
          'show cm: 3 ids, 1 listening (%s, %s)' % (cm.get('ids'),
                                                   cm.get('listeners')))
    check(cm.get('mads_sent', 0) >= 3 and cm.get('mads_received', 0) >= 3,
          'show cm: REQ, REP and RTU sent and received (%s, %s)' %
          (cm.get('mads_sent'), cm.get('mads_received')))
    check(sorted(cmqps) == [0, 1] and
          cmqps[0].group(5) == 'to' and cmqps[1].group(5) == 'from' and
          all(m.group(8) == 'established' for m in cmqps.values()),
          'show cm lists qp 0 to and qp 1 from the peer, established')

    # the runs: data checked both ways
    runs = [l.split()[1:] for l in script_cmds if l.startswith('run ')]
    got = [m for c, lines in secs if c.startswith('run ')
           for m in map(pmd_out.RE_RUN.match, lines) if m]
    check(len(got) == len(runs), '%d runs reported' % len(runs))
    for (q, mode, size, count), m in zip(runs, got):
        check(m.group(1) == q and m.group(2) == mode and
              m.group(3) == size and m.group(4) == count and
              int(m.group(5)) == int(size) * int(count) and
              int(m.group(9)) > 0,
              'run %s %s %s x %s: moved and checked' % (q, mode, size,
                                                       count))

    qps = pmd_out.qps(section(secs, 'show qp'))
    if check(sorted(qps) == [0, 1], 'show qp lists qp 0 and qp 1'):
        for q, (m, shown) in qps.items():
            check(m.group(4) == 'RTS', 'qp %d in RTS' % q)
            # no loss: nothing but packets each way
            odd = {c: v for c, v in shown.items()
                   if c not in ('tx_pkts', 'rx_pkts') and v}
            check(not odd, 'qp %d: no retransmit, NAK or drop %s' %
                  (q, odd))
        q0, q1 = qps[0][1], qps[1][1]
        check(q0.get('tx_pkts', 0) > 0 and
              q0.get('tx_pkts') == q1.get('rx_pkts') and
              q1.get('tx_pkts') == q0.get('rx_pkts'),
              'what one QP sent the other received')

    # the disconnect: both QPs go
    lines = section(secs, 'cm disconnect 0')
    check('cm: qp 0 disconnected, destroyed' in lines and
          'cm: qp 1 disconnected by its peer, destroyed' in lines,
          'cm disconnect 0: qp 0 and its peer qp 1 destroyed')
    check(section(secs, 'show qp', 1) == ['no QP'],
          'show qp: no QP left')

    # TimeWait over: nothing left but the listener
    cm = pmd_out.counters(section(secs, 'show cm', 1))
    busy = {k: v for k, v in cm.items() if k.startswith('conns') and v}
    check(cm and not busy, 'show cm: no connection left %s' % busy)
    check(cm.get('ids') == 1 and cm.get('listeners') == 1,
          'show cm: the listener\'s id alone (%s ids)' % cm.get('ids'))
    check(cm.get('mads_sent', 0) >= 5 and
          cm.get('mads_sent') == cm.get('mads_received'),
          'every MAD sent was received, DREQ and DREP too (%s/%s)' %
          (cm.get('mads_sent'), cm.get('mads_received')))
    for c in ('mads_resent', 'mads_dropped', 'send_failed',
              'listen_overflow', 'events_queued'):
        check(cm.get(c) == 0, 'show cm: %s is 0 (%s)' % (c, cm.get(c)))
    rej = [k for k in cm if k.startswith('rej_')]
    check(not rej, 'no REJ %s' % rej)

    lines = section(secs, 'cm stop droce1')
    check('cm: droce1 no longer listening on 10.0.0.2 port 7471' in lines,
          'cm stop droce1: the listener goes')
    cm = pmd_out.counters(section(secs, 'show cm', 2))
    check(cm.get('ids') == 0 and cm.get('listeners') == 0,
          'show cm: no id left (%s)' % cm.get('ids'))


def check_port_stop(args):
    """The listening side's port stops: its QP goes, and its peer."""
    rc, out, err = run_script(args, 'cm_port_stop',
                              'cm listen droce1 7471\n'
                              'cm connect droce0 10.0.0.2 7471\n'
                              'port stop droce1\n'
                              'sleep 1000\n'
                              'show qp\n'
                              'show cm\n')
    if not check(rc == 0, 'port stop script exits with 0 (%d): %s' %
                 (rc, err.strip()[-300:])):
        return
    secs = pmd_out.sections(out)
    check('cm: droce1 no longer listening on 10.0.0.2 port 7471' in
          section(secs, 'port stop droce1'),
          'port stop droce1: its listener goes')
    check('cm: qp 0 disconnected by its peer, destroyed' in
          section(secs, 'sleep 1000'),
          'qp 0 hears the DREQ and goes')
    check(section(secs, 'show qp') == ['no QP'], 'no QP left')
    cm = pmd_out.counters(section(secs, 'show cm'))
    check(cm.get('ids') == 0 and cm.get('listeners') == 0 and
          cm.get('conns_established') == 0,
          'show cm: no id, no connection established')


def check_interactive(args):
    """On the prompt a REJECTED connect is a line; the REJs counted."""
    p, cmd = pmd_out.start_prompt(args.pmd)
    try:
        m = cmd('cm connect droce0 10.0.0.2 9999',
                r'RDMA_CM_EVENT_REJECTED, status (\d+) \((\w+)\)')
        check(m is not None and m.group(1) == '8' and
              m.group(2) == 'INVALID_SERVICE_ID',
              'interactive: connect to nobody REJECTED, reason 8 '
              'INVALID_SERVICE_ID')
        m = cmd('cm listen droce1 9999',
                r'cm: droce1 listening on 10\.0\.0\.2 port 9999')
        m = m and cmd('cm connect droce0 10.0.0.2 9999',
                      r'cm: qp 1 established with')
        check(m is not None, 'interactive: then a listener, connected')
        # the REJ counters come last: all of show cm is read then
        m = cmd('show cm', r'rej_received_invalid_service_id\s+\d+\n')
        cm = pmd_out.counters(m.string.splitlines()) if m else {}
        check(cm.get('rej_sent_invalid_service_id') == 1 and
              cm.get('rej_received_invalid_service_id') == 1,
              'interactive: show cm counts the REJ sent and received '
              '(%s, %s)' % (cm.get('rej_sent_invalid_service_id'),
                            cm.get('rej_received_invalid_service_id')))
        m = cmd('run 1 send 512 100', r'run qp 1 send 512 x 100: .*'
                r'data checked')
        check(m is not None, 'interactive: the listener\'s QP sends')
        # destroy qp: a DREQ, and the peer goes when its DISCONNECTED
        # comes, the prompt idle meanwhile
        m = cmd('destroy qp 1', r'qp 1 destroyed(.|\n)*'
                r'cm: qp 0 disconnected by its peer, destroyed')
        check(m is not None, 'interactive: destroy qp ends the connection, '
              'the peer goes while the prompt waits')
        rc = pmd_out.quit_prompt(p)
        check(rc == 0, 'interactive: quit exits with 0 (%s)' % rc)
    finally:
        pmd_out.stop_prompt(p)


# (name, script, what stderr says); each fails at its last line
FAILING = [
    ('nobody_listens', 'cm connect droce0 10.0.0.2 9999\n',
     r'cm connect droce0 10\.0\.0\.2 port 9999: RDMA_CM_EVENT_REJECTED, '
     r'status 8 \(INVALID_SERVICE_ID\)'),
    ('unknown_qp', 'cm listen droce1 7471\ncm disconnect 7\n',
     r'no qp 7'),
    ('not_cm_qp', 'create qp droce0\ncm disconnect 0\n',
     r'qp 0 was not made by the CM'),
    ('connect_cm_qp', 'cm listen droce1 7471\n'
     'cm connect droce0 10.0.0.2 7471\nconnect qp 0 qp 1\n',
     r'qp 0 is connected through the CM'),
    ('listen_twice', 'cm listen droce1 7471\ncm listen droce1 7471\n',
     r'cm listen droce1 7471: Address already in use'),
    ('stop_none', 'cm listen droce1 7471\ncm stop droce1 7472\n',
     r'droce1 is not listening on port 7472'),
    ('no_device', 'cm listen droce7 7471\n', r'no device droce7'),
    ('bad_ip', 'cm connect droce0 10.0.0 7471\n',
     r'10\.0\.0: not an IPv4 or IPv6 address'),
]


def check_failures(args):
    for name, text, says in FAILING:
        # a command after the failing one, which must not run
        rc, out, err = run_script(args, 'fail_' + name, text + 'show cm\n')
        check(rc == 1 and pmd_out.PROMPT + 'show cm' not in out and
              'stopping' in err and re.search(says, err),
              'script %s: exit status 1 (%d), "%s", stops there' %
              (name, rc, says))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pmd', required=True)
    ap.add_argument('--script', required=True)
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    check_loopback(args)
    check_port_stop(args)
    check_interactive(args)
    check_failures(args)
    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
