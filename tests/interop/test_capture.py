#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Every frame droce puts on the wire is valid RoCEv2 to independent eyes.

Runs droce's demo (SEND, SEND with immediate, RDMA WRITE and READ of
1 MiB, both atomics), short droce-perf runs of every bandwidth test, a
mixed stream through net_fault (loss, duplicates and reordering, so
retransmissions and NAKs), and the integration tests of the other QP
types and operations (opcodes: every cell of the opcode table; mw: SEND
with invalidate; uc: UC messages; ud: UD datagrams and multicast; xrc:
XRC requests and their responses) with the engine mirroring every frame to pcap files,
then checks each
captured frame: tshark decodes it with no malformed or expert warning,
and, for RoCEv2 frames, droce-dump agrees with tshark field by field and
the ICRC matches one computed here from the RoCEv2 rules.

Usage: test_capture.py --demo DROCE_DEMO --perf DROCE_PERF --loss TEST_LOSS
                       --tests DIR --dump DROCE_DUMP --tshark TSHARK_ROCE
                       --workdir DIR

(--tests: where test_opcodes, test_mw, test_uc, test_ud and test_xrc
are.)
"""

import argparse
import collections
import os
import subprocess
import sys

import roce_check

CONFIG = """[engine]
pcap = {pcap}
[device droce0]
port = ring:cap:0
mac = 02:d7:0c:e0:00:01
ipv4 = 10.0.0.1/24
[device droce1]
port = ring:cap:1
mac = 02:d7:0c:e0:00:02
ipv4 = 10.0.0.2/24
"""

RUNS = [
    ('demo', ['{demo}', '0']),
    ('write', ['{perf}', 'write_bw', '-s', '3000', '-n', '200',
               '--no-progress']),
    ('write-small', ['{perf}', 'write_bw', '-s', '60', '-n', '200',
                     '--no-progress']),
    ('read', ['{perf}', 'read_bw', '-s', '3000', '-n', '200',
              '--no-progress']),
    ('send', ['{perf}', 'send_bw', '-s', '100', '-n', '200',
              '--no-progress']),
    ('atomic', ['{perf}', 'atomic_bw', '-n', '200', '--no-progress']),
    ('opcodes', ['{tests}/test_opcodes']),
    ('mw', ['{tests}/test_mw']),
    ('uc', ['{tests}/test_uc']),
    ('ud', ['{tests}/test_ud']),
    ('xrc', ['{tests}/test_xrc']),
]


def run_captured(args, name, cmd):
    """Run cmd with the engine mirroring to WORKDIR/NAME-droce{0,1}.pcap."""
    pcap = os.path.join(args.workdir, name + '.pcap')
    ini = os.path.join(args.workdir, name + '.ini')
    with open(ini, 'w') as f:
        f.write(CONFIG.format(pcap=pcap))
    env = dict(os.environ, DROCE_CONFIG=ini)
    argv = [c.format(demo=args.demo, perf=args.perf, tests=args.tests)
            for c in cmd]
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
    return [os.path.join(args.workdir, '%s-droce%d.pcap' % (name, d))
            for d in (0, 1)]


def run_loss(args):
    """The loss test's mixed stream, mirrored to WORKDIR/loss/."""
    workdir = os.path.join(args.workdir, 'loss')
    env = dict(os.environ, LOSS_PCAP='1', LOSS_ONLY='test_mixed_stream')
    subprocess.run([args.loss, workdir, 'drop=0.02,dup=0.02,reorder=0.02'],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    return [os.path.join(workdir, 'loss-droce%d.pcap' % d) for d in (0, 1)]


def check_capture(args, pcap, opcodes, others=True):
    """Mismatches of one capture; counts the opcodes seen.

    others=False: frames that are not RoCEv2 are not droce's to answer
    for (a port shared with the kernel mirrors its TCP too).
    """
    frames = roce_check.read_pcap(pcap)
    mine = roce_check.droce_dump(args.dump, pcap)
    theirs = roce_check.tshark(args.tshark, pcap)
    bad = []
    if not len(frames) == len(mine) == len(theirs):
        return ['%s: frames %d, droce-dump %d, tshark %d' %
                (pcap, len(frames), len(mine), len(theirs))]
    for frame, d, t in zip(frames, mine, theirs):
        if d['status'] == 'not_roce':
            # ARP and the like: tshark must find nothing wrong with them
            if others and (t['_ws.malformed'] or
                           t['_ws.expert.severity'] >=
                           roce_check.EXPERT_WARN):
                bad.append('frame %d: tshark: %s' %
                           (d['frame'], t['_ws.expert.message']))
            continue
        opcodes[d.get('opcode_name', '?')] += 1
        bad += roce_check.compare(d, t, frame)
        if roce_check.reference_icrc(frame) != roce_check.stored_icrc(frame):
            bad.append('frame %d: ICRC differs from the reference' %
                       d['frame'])
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    for opt in ('demo', 'perf', 'loss', 'tests', 'dump', 'tshark',
                'workdir'):
        ap.add_argument('--' + opt, required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)

    opcodes = collections.Counter()
    bad = []
    total = 0
    pcaps = [p for name, cmd in RUNS for p in run_captured(args, name, cmd)]
    pcaps += run_loss(args)
    for pcap in pcaps:
        n = len(roce_check.read_pcap(pcap))
        total += n
        errs = check_capture(args, pcap, opcodes)
        print('%s: %d frames%s' % (os.path.basename(pcap), n,
                                   ', %d problems' % len(errs)
                                   if errs else ''))
        bad += ['%s %s' % (os.path.basename(pcap), e) for e in errs]
    print('opcodes seen: ' + ', '.join('%s %d' % kv
                                       for kv in sorted(opcodes.items())))
    # the runs above must have produced every opcode droce's RC sends
    wanted = ['RC_SEND_FIRST', 'RC_SEND_MIDDLE', 'RC_SEND_LAST',
              'RC_SEND_ONLY', 'RC_SEND_ONLY_WITH_IMMEDIATE',
              'RC_RDMA_WRITE_FIRST', 'RC_RDMA_WRITE_MIDDLE',
              'RC_RDMA_WRITE_LAST', 'RC_RDMA_WRITE_ONLY',
              'RC_RDMA_READ_REQUEST', 'RC_RDMA_READ_RESPONSE_FIRST',
              'RC_RDMA_READ_RESPONSE_MIDDLE', 'RC_RDMA_READ_RESPONSE_LAST',
              'RC_ACKNOWLEDGE', 'RC_ATOMIC_ACKNOWLEDGE', 'RC_COMPARE_SWAP',
              'RC_FETCH_ADD', 'RC_RDMA_WRITE_LAST_WITH_IMMEDIATE',
              'RC_SEND_ONLY_WITH_INVALIDATE', 'RC_ATOMIC_WRITE',
              'UC_SEND_ONLY', 'UC_SEND_ONLY_WITH_IMMEDIATE',
              'UC_RDMA_WRITE_ONLY', 'UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE',
              'UD_SEND_ONLY', 'UD_SEND_ONLY_WITH_IMMEDIATE',
              'XRC_SEND_FIRST', 'XRC_SEND_MIDDLE', 'XRC_SEND_LAST',
              'XRC_SEND_ONLY', 'XRC_RDMA_WRITE_ONLY',
              'XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE', 'XRC_RDMA_READ_REQUEST',
              'XRC_RDMA_READ_RESPONSE_FIRST', 'XRC_RDMA_READ_RESPONSE_LAST',
              'XRC_COMPARE_SWAP', 'XRC_FETCH_ADD', 'XRC_ACKNOWLEDGE',
              'XRC_ATOMIC_ACKNOWLEDGE']
    missing = [op for op in wanted if opcodes[op] == 0]
    if missing:
        bad.append('opcodes never seen: ' + ', '.join(missing))
    for line in bad[:100]:
        print('  ' + line)
    print('%d frames: %s' % (total, 'PROBLEMS (%d)' % len(bad) if bad
                             else 'all valid RoCEv2, tshark and droce agree'))
    return 1 if bad or total == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
