#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-pmd does what its commands say, and says when they fail.

On the embedded default (droce0 and droce1 over a net_ring pair):

- the example script app/pmd/examples/loopback.txt: QPs created and
  connected, WRITE, READ and SEND runs with their data checked, the
  counters consistent with the runs and with each other (what one port
  sent the other received; per-QP packets match the sizes and the MTU;
  nothing retransmitted or dropped), each CQ polled once per completion,
  and the pcap taken at run time holding every frame droce0 sent and
  received meanwhile, all valid RoCEv2 (droce-dump and an ICRC computed
  here);
- the interactive prompt on a pipe, connecting with the explicit
  GID/QPN/PSN/RKEY/ADDR form from what `create qp` printed;
- scripts that must fail do, with exit status 1, and stop there.

Usage: test_pmd.py --pmd DROCE_PMD --dump DROCE_DUMP --script LOOPBACK
                   --counters DROCE_COUNTERS_H --workdir DIR
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'interop'))
import roce_check  # noqa: E402
import pmd_out  # noqa: E402

TIMEOUT = 300
failures = pmd_out.failures
check = pmd_out.check


def run_script(args, name, text):
    """Run droce-pmd -f on text; (exit status, stdout, stderr)."""
    return pmd_out.run_script(args.pmd, args.workdir, name, text, TIMEOUT)


def expected(script, mtu):
    """Per QP: completions its CQ gets, request packets it sends at least,
    and response packets it sends at least, from the script's runs."""
    peers = {}
    runs = []
    for line in script.splitlines():
        m = re.match(r'connect qp (\d+) qp (\d+)$', line.strip())
        if m:
            peers[int(m.group(1))] = int(m.group(2))
        m = re.match(r'run (\d+) (\w+) (\d+) (\d+)$', line.strip())
        if m:
            runs.append((int(m.group(1)), m.group(2), int(m.group(3)),
                         int(m.group(4))))
    cq = {}
    pkts = {}
    for qp, mode, size, count in runs:
        peer = peers[qp]
        segs = (size + mtu - 1) // mtu
        cq[qp] = cq.get(qp, 0) + count
        if mode == 'send':
            cq[peer] = cq.get(peer, 0) + count
        if mode == 'read':
            pkts[qp] = pkts.get(qp, 0) + count
            pkts[peer] = pkts.get(peer, 0) + count * segs
        else:
            pkts[qp] = pkts.get(qp, 0) + count * segs
            # at least one ACK per run
            pkts[peer] = pkts.get(peer, 0) + 1
    return runs, cq, pkts


def check_counters(what, shown, want):
    """what showed the counters of want, and no others."""
    missing = [c for c in want if c not in shown]
    extra = [c for c in shown if c not in want]
    check(not missing and not extra,
          '%s shows every counter (missing %s, unknown %s)' %
          (what, missing, extra))


def check_loopback(args, counters):
    script = open(args.script).read()
    pcap = os.path.join(args.workdir, 'droce-pmd-droce0.pcap')
    script = script.replace('/tmp/droce-pmd-droce0.pcap', pcap)
    if os.path.exists(pcap):
        os.unlink(pcap)
    rc, out, err = run_script(args, 'loopback', script)
    if not check(rc == 0, 'loopback script exits with 0 (%d): %s' %
                 (rc, err.strip()[-300:])):
        return
    secs = pmd_out.sections(out)
    cmds = [c for c, _ in secs]
    script_cmds = [l.strip() for l in script.splitlines()
                   if l.strip() and not l.strip().startswith('#')]
    check(cmds[1:] == script_cmds, 'every command echoed, in order')

    created = {}
    for line in out.splitlines():
        m = pmd_out.RE_CREATE.search(line)
        if m:
            created[int(m.group(1))] = m
    check(sorted(created) == [0, 1] and created[0].group(2) == 'droce0' and
          created[1].group(2) == 'droce1', 'qp 0 on droce0, qp 1 on droce1')

    dev_shows = [pmd_out.devices(lines) for c, lines in secs
                 if c.startswith('show device')]
    final = dev_shows[-1]
    mtu = final['droce0']['mtu']
    check(mtu == 1024 and final['droce0']['link'] == 'up' and
          final['droce1']['link'] == 'up', 'links up, active MTU 1024')
    runs, want_cq, want_pkts = expected(script, mtu)

    got_runs = [pmd_out.RE_RUN.match(l) for c, lines in secs
                if c.startswith('run ') for l in lines]
    got_runs = [m for m in got_runs if m]
    check(len(got_runs) == len(runs), '%d runs reported' % len(runs))
    for (qp, mode, size, count), m in zip(runs, got_runs):
        check(m.group(1) == str(qp) and m.group(2) == mode and
              int(m.group(3)) == size and int(m.group(4)) == count and
              int(m.group(5)) == size * count and int(m.group(9)) > 0 and
              float(m.group(7)) > 0,
              'run %d %s %d x %d: moved, timed and checked' %
              (qp, mode, size, count))

    for name, d in sorted(final.items()):
        check_counters(name, [c for c in d if c not in ('mtu', 'link')],
                       counters.dev)
    d0, d1 = final['droce0'], final['droce1']
    check(d0['tx_frames'] == d1['rx_frames'] > 0 and
          d1['tx_frames'] == d0['rx_frames'] > 0,
          'what one port sent the other received (%d/%d, %d/%d)' %
          (d0['tx_frames'], d1['rx_frames'], d1['tx_frames'],
           d0['rx_frames']))
    check(d0['tx_bytes'] == d1['rx_bytes'] and
          d1['tx_bytes'] == d0['rx_bytes'], 'bytes likewise')
    for name, d in final.items():
        for c in ('rx_icrc_err', 'rx_malformed', 'rx_not_ours', 'tx_drop',
                  'no_mbuf'):
            check(d[c] == 0, '%s %s is 0 (%d)' % (name, c, d[c]))

    qp_lines = [lines for c, lines in secs if c == 'show qp'][-1]
    qps = pmd_out.qps(qp_lines)
    check(sorted(qps) == [0, 1], 'show qp lists qp 0 and qp 1')
    if sorted(qps) != [0, 1]:
        return
    for q, (m, shown) in qps.items():
        check(m.group(4) == 'RTS', 'qp %d in RTS' % q)
        check_counters('qp %d' % q, shown, counters.qp)
        # no loss: nothing but packets each way
        for c in counters.qp:
            if c not in ('tx_pkts', 'rx_pkts'):
                check(shown.get(c) == 0, 'qp %d %s is 0 (%s)' %
                      (q, c, shown.get(c)))
        check(shown.get('tx_pkts', 0) >= want_pkts[q],
              'qp %d sent %s packets, the runs need %d at least' %
              (q, shown.get('tx_pkts'), want_pkts[q]))
    q0, q1 = qps[0][1], qps[1][1]
    check(q0['tx_pkts'] == q1['rx_pkts'] and q1['tx_pkts'] == q0['rx_pkts'],
          'what one QP sent the other received')
    check(d1['rx_roce'] == q1['rx_pkts'] and d0['rx_roce'] == q0['rx_pkts'],
          'every RoCE frame a port received went to its QP')

    cq_lines = [lines for c, lines in secs if c == 'show cq'][-1]
    cqs = {}
    for line in cq_lines:
        m = pmd_out.RE_CQ.match(line)
        if m:
            cqs[int(m.group(1))] = (int(m.group(3)), int(m.group(4)))
    for q in (0, 1):
        depth = int(qps[q][0].group(6))
        check(q in cqs and cqs[q][0] >= 2 * depth and
              cqs[q][1] == want_cq[q],
              'cq of qp %d: depth >= %d, polled %d (%s)' %
              (q, 2 * depth, want_cq[q], cqs.get(q)))

    # the capture: every frame droce0 had meanwhile, all valid RoCEv2
    before = dev_shows[0]['droce0']
    mirrored = (d0['rx_frames'] + d0['tx_frames'] - before['rx_frames'] -
                before['tx_frames'])
    if not check(os.path.exists(pcap), 'pcap file written'):
        return
    frames = roce_check.read_pcap(pcap)
    check(len(frames) == mirrored,
          '%d frames in the pcap, droce0 counted %d' % (len(frames),
                                                         mirrored))
    dump = roce_check.droce_dump(args.dump, pcap)
    bad = [d['frame'] for d in dump
           if d['status'] != 'ok' or not d['icrc_ok']]
    check(not bad, 'every captured frame decodes, ICRC ok %s' % bad[:5])
    icrc_bad = [i for i, f in enumerate(frames)
                if roce_check.reference_icrc(f) != roce_check.stored_icrc(f)]
    check(not icrc_bad, 'ICRCs match the reference %s' % icrc_bad[:5])
    qpn0 = int(created[0].group(4), 16)
    qpn1 = int(created[1].group(4), 16)
    reqs = [d for d in dump if d.get('opcode_name') == 'RC_RDMA_READ_REQUEST']
    resps = [d for d in dump
             if d.get('opcode_name', '').startswith('RC_RDMA_READ_RESPONSE')]
    read = [r for r in runs if r[1] == 'read'][0]
    check(len(reqs) == read[3] and all(d['dqpn'] == qpn1 for d in reqs),
          '%d READ requests to qp 1 captured (%d)' % (read[3], len(reqs)))
    segs = (read[2] + mtu - 1) // mtu
    check(len(resps) == read[3] * segs and
          all(d['dqpn'] == qpn0 for d in resps),
          '%d READ responses to qp 0 captured (%d)' % (read[3] * segs,
                                                       len(resps)))


def check_interactive(args):
    """The prompt on a pipe; connect with explicit peer parameters."""
    p, cmd = pmd_out.start_prompt(args.pmd)
    try:
        a = cmd('create qp droce0', pmd_out.RE_CREATE)
        b = cmd('create qp droce1', pmd_out.RE_CREATE)
        if not check(a and b, 'interactive: two QPs created'):
            return
        # qp 0 with the peer's GID, QPN, PSN, rkey and address; qp 1
        # with an IPv4 address for the GID and no buffer
        ok = cmd('connect qp 0 %s 0x%s 0x%s 0x%s 0x%s' %
                 (b.group(3), b.group(4), b.group(5), b.group(6),
                  b.group(7)), r'qp 0: RTS .*\(qp 1 of this process\)')
        ok = ok and cmd('connect qp 1 10.0.0.1 0x%s 0x%s' %
                        (a.group(4), a.group(5)),
                        r'qp 1: RTS .*\(qp 0 of this process\)')
        check(ok, 'interactive: explicit connect, the peers found local')
        for line in ('run 0 write 4096 300', 'run 0 read 3000 300',
                     'run 1 send 777 300'):
            q, mode, size, count = line.split()[1:]
            m = cmd(line, r'run qp %s %s %s x %s: .*data checked' %
                    (q, mode, size, count))
            check(m is not None, 'interactive: %s, data checked' % line)
        rc = pmd_out.quit_prompt(p)
        check(rc == 0, 'interactive: quit exits with 0 (%s)' % rc)
    finally:
        pmd_out.stop_prompt(p)


FAILING = [
    ('unknown', 'create qp droce0\nbogus command\ncreate qp droce1\n'),
    ('bad_args', 'create qp droce0 notanumber\ncreate qp droce1\n'),
    ('no_such_qp', 'create qp droce0\nconnect qp 0 qp 7\ncreate qp droce1\n'),
    ('not_connected', 'create qp droce0\nrun 0 write 64 1\ncreate qp droce1\n'),
    ('no_device', 'create qp droce7\ncreate qp droce1\n'),
    ('send_remote', 'create qp droce0\nconnect qp 0 10.0.0.9 0x11 0\n'
     'run 0 send 64 1\ncreate qp droce1\n'),
    ('pcap_not_on', 'pcap stop droce0\ncreate qp droce1\n'),
    ('port_stopped', 'port stop droce0\ncreate qp droce0\ncreate qp droce1\n'),
    ('too_big', 'create qp droce0\ncreate qp droce1\nconnect qp 0 qp 1\n'
     'connect qp 1 qp 0\nrun 0 write 99999999 1\nshow qp\n'),
]


def check_failures(args):
    for name, text in FAILING:
        rc, out, err = run_script(args, 'fail_' + name, text)
        last = text.strip().splitlines()[-1]
        check(rc == 1 and pmd_out.PROMPT + last not in out and
              'stopping' in err,
              'script %s: exit status 1 (%d), stops at the failure' %
              (name, rc))
    rc, out, err = run_script(args, 'quit',
                              'create qp droce0\nquit\ncreate qp droce1\n')
    check(rc == 0 and 'qp 0 on droce0' in out and 'qp 1 on' not in out,
          'quit in a script: exit status 0 (%d), nothing after it' % rc)
    p = subprocess.run([args.pmd, '-f', os.path.join(args.workdir, 'none')],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=TIMEOUT)
    check(p.returncode == 1, 'a missing script: exit status 1 (%d)' %
          p.returncode)
    p = subprocess.run([args.pmd, '--bogus'], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    check(p.returncode == 2, 'a bad option: exit status 2 (%d)' %
          p.returncode)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pmd', required=True)
    ap.add_argument('--dump', required=True)
    ap.add_argument('--script', required=True)
    ap.add_argument('--counters', required=True,
                    help='droce_counters.h, whose lists droce-pmd shows')
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    check_loopback(args, pmd_out.read_counters(args.counters))
    check_interactive(args)
    check_failures(args)
    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
