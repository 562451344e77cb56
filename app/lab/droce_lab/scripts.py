# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""The lab's scripts: the common questions, each a perftest run with one
event put into its traffic, and the checks the IBTA's answer to that
event makes PASS.

Every script fixes the path MTU at 1024 (perftest's -m), so that a PSN
counted from a flow's first names the same packet of the same message on
every pair of endpoints: 8 KiB messages are 8 packets, 300 of them 2400.
"""

import collections

Script = collections.namedtuple(
    'Script', 'name tool args event expect about')

MTU = 1024
# perftest's default local ACK timeout exponent (its -u): 67.1 ms; the
# QPs' unless the setup's [judge] timeout says otherwise
TIMEOUT_EXP = 14

_WRITE = ['-s', '8192', '-n', '300']

# "{req}" is the requester's direction through the injector (ab or ba),
# "{resp}" the responder's, "{qps}" the number of QPs: an event without
# a flow acts once on each (the first pass of its PSN in each flow).
SCRIPTS = [
    Script('gbn-write', 'ib_write_bw', _WRITE,
           'drop dir={req} rpsn=200 iter=1 count={qps}',
           ('responder.nak-single', 'responder.nak-psn',
            'requester.gbn-resend', 'requester.complete'),
           "a WRITE's packet lost on its first pass: the responder NAKs "
           "the first PSN it missed, once; the requester goes back to it"),
    Script('gbn-send', 'ib_send_bw', _WRITE,
           'drop dir={req} rpsn=200 iter=1 count={qps}',
           ('responder.nak-single', 'responder.nak-psn',
            'requester.gbn-resend', 'requester.complete'),
           "the same with SENDs"),
    Script('gbn-read', 'ib_read_bw', _WRITE,
           'drop dir={resp} rpsn=100 iter=1 count={qps}',
           ('requester.read-resend', 'requester.complete'),
           "a READ response's packet lost: the requester asks again from "
           "that packet's PSN and offset"),
    Script('timeout', 'ib_write_bw', _WRITE,
           'drop dir={req} rpsn=2399 iter=1 count={qps}',
           ('requester.timeout', 'requester.complete'),
           "the last packet lost, so nothing is NAKed: the requester "
           "resends after its QP's timeout (perftest's -u), not before"),
    Script('corrupt', 'ib_write_bw', _WRITE,
           'corrupt dir={req} rpsn=300 iter=1 count={qps}',
           ('responder.corrupt', 'responder.nak-psn',
            'requester.complete'),
           "a packet's ICRC broken: the responder drops it silently and "
           "NAKs the gap it leaves"),
    Script('dup', 'ib_write_bw', _WRITE,
           'dup dir={req} rpsn=500 iter=1 count={qps}',
           ('responder.dup-ack', 'requester.complete'),
           "a request sent on twice: the responder acknowledges the "
           "duplicate and NAKs nothing"),
    Script('psn-ahead', 'ib_write_bw', _WRITE,
           'rewrite dir={req} rpsn=200 iter=1 count={qps} field=psn '
           'value=+100',
           ('responder.nak-single', 'responder.nak-psn',
            'requester.gbn-resend', 'requester.complete'),
           "a request's PSN set 100 ahead (its ICRC made anew): the "
           "responder takes it for a gap and NAKs the PSN it expects; the "
           "requester goes back to it"),
    Script('psn-behind', 'ib_write_bw', _WRITE,
           'rewrite dir={req} rpsn=200 iter=1 count={qps} field=psn '
           'value=-100',
           ('responder.dup-ack', 'responder.nak-psn',
            'requester.gbn-resend', 'requester.complete'),
           "a request's PSN set 100 behind: the responder takes it for a "
           "duplicate and acknowledges it, then NAKs the gap its "
           "absence leaves"),
    Script('psn-far-ahead', 'ib_write_bw', _WRITE,
           'rewrite dir={req} rpsn=200 iter=1 count={qps} field=psn '
           'value=+4000000',
           ('responder.nak-single', 'responder.nak-psn',
            'requester.gbn-resend', 'requester.complete'),
           "a request's PSN set 4,000,000 ahead, far out of any window "
           "yet short of 2^23: still a gap to the responder, NAKed once "
           "with the PSN it expects"),
    Script('psn-far-behind', 'ib_write_bw', _WRITE,
           'rewrite dir={req} rpsn=200 iter=1 count={qps} field=psn '
           'value=-4000000',
           ('responder.dup-ack', 'responder.nak-psn',
            'requester.gbn-resend', 'requester.complete'),
           "a request's PSN set 4,000,000 behind, far older than anything "
           "in flight yet within 2^23: a duplicate to the responder, "
           "acknowledged, nothing written; then the gap NAKed"),
    Script('bad-rkey', 'ib_write_bw', _WRITE,
           'rewrite dir={req} rpsn=200 iter=1 count={qps} field=rkey '
           'value=0xdead0000',
           ('responder.access-nak', 'requester.complete'),
           "a WRITE FIRST's rkey replaced by one the responder never "
           "gave: a Remote Access Error NAK of its PSN, which ends the "
           "connection (perftest fails, as it must)"),
    Script('cnp', 'ib_write_bw', _WRITE,
           'ce dir={req} rpsn=400 count={qps}',
           ('responder.cnp', 'responder.cnp-qp', 'requester.complete'),
           "a request marked Congestion Experienced: the responder's "
           "notification point sends a CNP to the requester's QP"),
    Script('rnr', 'ib_send_bw', ['-s', '1024', '-n', '300', '-r', '1'],
           None,
           ('requester.rnr', 'requester.complete'),
           "SENDs to a receive queue of one WQE, which the server posts "
           "again as each completes: the responder runs out and sends "
           "RNR NAKs, and the requester waits the timer each names"),
]

TOOLS = sorted(set(s.tool for s in SCRIPTS))
BY_NAME = {s.name: s for s in SCRIPTS}
# what `droce-lab run` runs unless told: every script on one QP, and
# go-back-N on 16 QPs at once
DEFAULT = [(s.name, 1) for s in SCRIPTS] + [('gbn-write', 16)]


def parse(spec):
    """"NAME" or "NAME@QPS" as (name, qps); raises ValueError."""
    name, _, qps = spec.partition('@')
    if name not in BY_NAME:
        raise ValueError('no script %r (there are %s)' % (
            name, ', '.join(BY_NAME)))
    n = int(qps) if qps else 1
    if not 1 <= n <= 16:
        raise ValueError('%s: 1 to 16 QPs' % spec)
    return name, n


def events(script, req, qps):
    """The injector's script for @p script with the requester's
    direction @p req ('ab' or 'ba') and @p qps QPs."""
    if script.event is None:
        return '# no event: %s\n' % script.name
    resp = 'ba' if req == 'ab' else 'ab'
    return script.event.format(req=req, resp=resp, qps=qps) + '\n'


def acts(script, qps):
    """How many frames the script's event must act on."""
    return 0 if script.event is None else qps


def perftest_args(script, qps, timeout_exp=TIMEOUT_EXP):
    return script.args + ['-m', str(MTU), '-u', str(timeout_exp)] + \
        (['-q', str(qps)] if qps > 1 else [])
