# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""What each side of each RC connection of a trace did, judged by the IBTA.

A connection is a requester's QP sending requests to a responder's QP and
the answers coming back: request frames one way, ACKs, NAKs, READ
responses and CNPs the other. Each check looks at one side's behaviour
and gives PASS, FAIL or N/A with its reason; the figures are the
latencies of what answered an event and the goodput around it.

A trace whose frames carry an injector's marks (trace.ACTIONS) says
which frames never reached their receiver, so the responder's expected
PSN is known at each frame. Without marks (a capture made before the
loss, as the golden captures are), the checks that need it judge what
the frames alone show, and say so.
"""

import statistics

from . import trace as T
from .trace import psn_add, psn_diff


class Connection:
    def __init__(self, index, a, b, resp_qpn):
        self.index = index
        self.a, self.b = a, b            # requester's and responder's IP
        self.resp_qpn = resp_qpn         # the responder's QPN
        self.req_qpn = None              # the requester's, from answers
        self.frames = []                 # both ways, trace order

    def label(self):
        req = '?' if self.req_qpn is None else '0x%06x' % self.req_qpn
        return 'c%d:%s/%s>%s/0x%06x' % (self.index, self.a, req, self.b,
                                        self.resp_qpn)

    def requests(self):
        return [f for f in self.frames if f.bits & T.REQ]

    def answers(self):
        return [f for f in self.frames if f.bits & T.RESP]

    def cnps(self):
        return [f for f in self.frames if f.bits & T.CNP]


# frames an injector sent on other than as the requester sent them: a
# copy, one held back, one with a field set anew
MOVED = ('duplicated', 'delayed', 'reordered', 'rewritten')


def _rc(f, bits):
    return f.tr == 'RC' and f.bits & bits


def connections(frames):
    """The RC connections of @p frames, and the CNPs no connection owns."""
    conns, by_key = [], {}
    for f in frames:
        if _rc(f, T.REQ):
            key = (f.src, f.dst, f.dqpn)
            if key not in by_key:
                by_key[key] = Connection(len(conns), f.src, f.dst, f.dqpn)
                conns.append(by_key[key])
            by_key[key].frames.append(f)
    # answers: to the requester whose PSNs they answer
    flows = {}
    for f in frames:
        if _rc(f, T.RESP):
            flows.setdefault((f.src, f.dst, f.dqpn), []).append(f)
    for (src, dst, qpn), ans in flows.items():
        best, score = None, 0
        for c in conns:
            if c.a != dst or c.b != src or c.req_qpn is not None:
                continue
            psns = [r.psn for r in c.requests()]
            lo = min(psns, key=lambda p: psn_diff(p, psns[0]))
            hi = max(psns, key=lambda p: psn_diff(p, psns[0]))
            s = sum(1 for r in ans if psn_diff(r.psn, lo) >= -1 and
                    psn_diff(r.psn, hi) <= 1 << 16)
            if s > score:
                best, score = c, s
        if best is not None:
            best.req_qpn = qpn
            best.frames.extend(ans)
    stray = []
    for f in frames:
        if f.bits & T.CNP:
            owner = [c for c in conns if c.b == f.src and c.a == f.dst and
                     c.req_qpn == f.dqpn]
            if owner:
                owner[0].frames.append(f)
            else:
                stray.append(f)
    for c in conns:
        c.frames.sort(key=lambda f: f.no)
    return conns, stray


def path_mtu(frames, given):
    """The path MTU: given, or the payload of a FIRST or MIDDLE packet."""
    if given:
        return given, 'given'
    sizes = [f.payload for f in frames if f.bits & (T.FIRST | T.MIDDLE)]
    if sizes:
        return max(sizes), 'from the frames'
    return 1024, 'assumed (no multi-packet message: give --mtu)'


def _span(f, mtu):
    """PSNs a request takes: a READ one per response packet."""
    if f.bits & T.READ:
        return max(1, -(-(f.dma_len or 0) // mtu))
    return 1


def _is_nak(f, code=None):
    return f.bits & T.ACK and f.aeth_kind() == T.AETH_NAK and \
        (code is None or f.syndrome & 0x1f == code)


def _is_rnr(f):
    return f.bits & T.ACK and f.aeth_kind() == T.AETH_RNR


def _acked(f):
    """The PSN an answer acknowledges up to (inclusive), or None."""
    if f.aeth_kind() == T.AETH_ACK and f.bits & (T.ACK | T.ATOMIC):
        return f.psn
    if f.bits & T.READ and f.bits & (T.LAST | T.ONLY):
        return f.psn
    if _is_nak(f, T.NAK_PSN_SEQ):
        return psn_add(f.psn, -1)
    return None


class Result:
    def __init__(self):
        self.lines = []      # (verdict, check, label, reason)
        self.figures = []    # (label, name, values, unit)
        self.replays = {}    # connection index -> its _Replay

    def add(self, verdict, check, conn, reason):
        self.lines.append((verdict, check, conn.label(), reason))

    def figure(self, conn, name, values, unit):
        if values:
            self.figures.append((conn.label(), name, values, unit))

    def failed(self):
        return any(v == 'FAIL' for v, _, _, _ in self.lines)


class _Replay:
    """One pass over a connection's frames: what each side saw and did."""

    def __init__(self, c, marked, mtu):
        self.marked, self.mtu = marked, mtu
        self.events = []          # (time, kind) of NAKs, RNR NAKs,
                                  # resends, timeouts, CNPs
        self.outstanding = []     # NAKs and RNR NAKs not yet answered
        self.last_req_t = None    # when the last request frame went
        self.resolved = []        # (time, NAK) an ACK answered since
        self.ack_log = []         # (time, PSN) of the last ACKs that moved
        self.crossing = 0.0       # how long a frame may cross an answer
        reqs = c.requests()
        self.epsn = reqs[0].psn if reqs else 0
        self.first_psn = self.epsn
        self.epsn_known = False   # whether an ACK has said where it is
        self.high = None          # the PSN after the highest sent
        self.sent_at = {}         # PSN -> last time sent
        self.first_send = {}      # PSN -> its first frame
        self.acked = None         # highest PSN acknowledged
        self.progress_t = None    # when the last ACK with progress came
        self.resent = 0           # request frames sent again
        self.last_ack = None      # PSN of the responder's last ACK
        self.answered = set()     # READs and atomics whose data came
        self.run_prev = None      # the last frame of a go-back-N run
        self.run_gap = None       # a READ or atomic asked again: what
                                  # follows it may go on from it
        self.answer_high = None   # the highest PSN answered
        self.dups = []            # duplicates not acknowledged yet
        self.problems = {}        # check -> [reasons]
        self.counts = {}          # check -> number of cases judged
        self.figs = {}            # figure -> [values]

    def bad(self, check, reason):
        self.problems.setdefault(check, []).append(reason)

    def case(self, check):
        self.counts[check] = self.counts.get(check, 0) + 1

    def fig(self, name, v):
        self.figs.setdefault(name, []).append(v)


def _replay(c, marked, mtu, opts, crossing):
    r = _Replay(c, marked, mtu)
    r.crossing = crossing
    nak_out = None            # responder: the PSN its NAK waits for
    # A responder answers a burst of requests after the burst: what it
    # sends reflects its state at any point since its last answers (the
    # PSNs that reached it and the PSNs it expected since then). A trace
    # taken between the two ends sees the answers late, after both
    # crossings of the link: an answer made before a request reached the
    # responder can come after it, and after another answer. So the
    # window before the last answer counts too.
    win_psns, win_epsns, answered_last = set(), {r.epsn}, False
    last_psns, last_epsns = set(), set()
    read_resp = {}            # READ PSN -> {response PSN: when delivered}
    reads = []                # original READ requests
    corrupted = []            # bad-ICRC requests, no good copy since
    last_ce = None            # responder: time of the last CE mark
    ce_wait = []              # CE-marked requests waiting for a CNP
    reqs = []                 # request frames so far
    last_send = {}            # PSN -> index in reqs of its last send
    for f in c.frames:
        if f.bits & T.REQ and f.action in MOVED:
            # where the injector put it, not when the requester sent it:
            # the responder's input alone
            end = psn_add(f.psn, _span(f, mtu))
            if f.action == 'rewritten' and ' psn=' in f.note and \
               r.high is not None:
                # (but the requester did send the next PSN, in place of
                # which this one came: a later frame of that PSN is a
                # resend)
                r.high = psn_add(r.high, _span(f, mtu))
        elif f.bits & T.REQ:
            end = psn_add(f.psn, _span(f, mtu))
            if r.high is None or psn_diff(f.psn, r.high) >= 0:
                r.first_send[f.psn] = f
                if f.bits & T.READ:
                    reads.append(f)
                r.high = end
                r.run_prev = r.run_gap = None
            else:
                r.resent += 1
                _judge_resend(r, f, reads, read_resp, opts)
            r.sent_at[f.psn] = f.t
            r.last_req_t = f.t
            last_send[f.psn] = len(reqs)
            reqs.append(f)
        if f.bits & T.REQ:
            # what reached the responder
            if f.action != 'dropped' and f.icrc_ok is False:
                r.case('corrupt')
                corrupted.append(f)
            if not f.delivered:
                continue
            if answered_last:
                last_psns, last_epsns = win_psns, win_epsns
                win_psns, win_epsns, answered_last = set(), {r.epsn}, False
            win_psns.add(f.psn)
            corrupted = [q for q in corrupted if q.psn != f.psn]
            if f.ce:
                last_ce = f.t
                ce_wait.append(f)
            if nak_out is not None and f.psn == nak_out:
                nak_out = None
            d = psn_diff(f.psn, r.epsn)
            if d == 0:
                r.epsn = end
                win_epsns.add(end)
            # (without marks, what the requester got is not known: a
            # READ asked again is no duplicate)
            if marked and d < 0:
                r.case('dup-ack')
                r.dups.append(f)
            continue
        if f.bits & T.CNP:
            r.case('cnp-spurious')
            if last_ce is None or f.t - last_ce > opts.cnp_window:
                r.bad('cnp-spurious', 'CNP in frame %d: no CE-marked '
                      'request in the %d us before it' %
                      (f.no, opts.cnp_window * 1e6))
            for q in ce_wait:
                r.fig('cnp-latency', f.t - q.t)
            ce_wait = []
            r.events.append((f.t, 'CNP'))
            continue
        # an answer: what the responder did
        answered_last = True
        ack = _acked(f)
        if f.bits & T.ACK and f.aeth_kind() == T.AETH_ACK:
            r.case('ack-monotonic')
            if r.last_ack is not None and psn_diff(f.psn, r.last_ack) < 0:
                r.bad('ack-monotonic', 'ACK of PSN %d in frame %d after '
                      'one of PSN %d' % (f.psn, f.no, r.last_ack))
            r.last_ack = f.psn
        if ack is not None and not _is_nak(f):
            r.dups = [q for q in r.dups if psn_diff(f.psn, q.psn) < 0]
        if _is_nak(f, T.NAK_PSN_SEQ) and not r.epsn_known and \
           psn_diff(f.psn, r.first_psn) < 0:
            # the first requests the trace holds were not the
            # connection's first (lost before a trace taken at the
            # responder): it expected the PSN its first NAK names
            r.epsn = f.psn
            win_epsns.add(f.psn)
        if ack is not None and not _is_nak(f):
            r.epsn_known = True
        if _is_nak(f, T.NAK_PSN_SEQ):
            r.events.append((f.t, 'NAK'))
            r.case('nak-single')
            r.case('nak-psn')
            psns, epsns = win_psns | last_psns, win_epsns | last_epsns
            if nak_out in psns:
                nak_out = None
            if nak_out is not None:
                r.bad('nak-single', 'NAK in frame %d while the one for '
                      'PSN %d waits for its resend' % (f.no, nak_out))
            nak_out = f.psn if f.psn not in psns else None
            if marked and f.psn not in epsns:
                r.bad('nak-psn', 'NAK in frame %d names PSN %d, the '
                      'responder expected %s' % (
                          f.no, f.psn, _alternatives(epsns)))
            elif not marked and (
                    f.psn not in last_send or
                    (r.acked is not None and psn_diff(f.psn, r.acked) <= 0)):
                r.bad('nak-psn', 'NAK in frame %d names PSN %d: not one '
                      'sent and unacknowledged' % (f.no, f.psn))
            # from the first request after the one it names
            i = last_send.get(f.psn)
            if i is not None and i + 1 < len(reqs):
                r.fig('nak-latency', f.t - reqs[i + 1].t)
        elif _is_nak(f):
            # (a NAK for an invalid request, an access or operation
            # error: whether the request deserved it is not judged)
            r.fig('naks-other', 1)
            for q in corrupted:
                r.bad('corrupt', 'frame %d (bad ICRC) drew a NAK, frame %d'
                      % (q.no, f.no))
        if _is_rnr(f) and psn_diff(f.psn, r.epsn) < 0:
            # the request it names was not taken: it is expected again
            r.epsn = f.psn
            win_epsns.add(f.psn)
        if ack is not None:
            for q in corrupted:
                if psn_diff(ack, q.psn) >= 0:
                    r.bad('corrupt', 'frame %d (bad ICRC, PSN %d) '
                          'acknowledged by frame %d' % (q.no, q.psn, f.no))
            corrupted = [q for q in corrupted if psn_diff(ack, q.psn) < 0]
        if not f.delivered:
            continue
        # what reached the requester
        if ack is not None and (r.acked is None or
                                psn_diff(ack, r.acked) > 0):
            r.acked = ack
            r.progress_t = f.t
            r.ack_log = r.ack_log[-63:] + [(f.t, ack)]
            # NAKs of PSNs now acknowledged ask for nothing more (but a
            # resend that crossed this ACK may still answer one)
            done = [n for n in r.outstanding if psn_diff(n.psn, ack) <= 0]
            r.outstanding = [n for n in r.outstanding if n not in done]
            r.resolved = r.resolved[-15:] + [(f.t, n) for n in done]
        if r.answer_high is None or psn_diff(f.psn, r.answer_high) > 0:
            r.answer_high = f.psn
        if _is_nak(f, T.NAK_PSN_SEQ) or _is_rnr(f):
            r.outstanding.append(f)
        if _is_rnr(f):
            r.events.append((f.t, 'RNR'))
        if f.bits & T.READ:
            for o in reads:
                if 0 <= psn_diff(f.psn, o.psn) < _span(o, mtu):
                    read_resp.setdefault(o.psn, {}).setdefault(f.psn, f.t)
                    if len(read_resp[o.psn]) == _span(o, mtu):
                        r.answered.add(o.psn)
        if f.bits & T.ATOMIC:
            r.answered.add(f.psn)
    return r


def _alternatives(psns):
    """PSNs a responder may have expected, as words: a few named, many
    as the first and last."""
    ps = sorted(psns)
    if len(ps) <= 4:
        return ' or '.join(str(p) for p in ps)
    return 'one of %d PSNs from %d to %d' % (len(ps), ps[0], ps[-1])


def _reasked(r, f):
    """Whether READ or atomic @p f is asked again because a later
    answer came and its own data did not."""
    return bool(f.bits & (T.READ | T.ATOMIC)) and \
        r.answer_high is not None and \
        psn_diff(r.answer_high, f.psn) >= 0 and \
        (f.psn not in r.answered or not r.marked) and \
        (not r.outstanding or psn_diff(f.psn, r.outstanding[-1].psn) < 0)


def _judge_resend(r, f, reads, read_resp, opts):
    """A request frame with a PSN sent before: why, and whether right.
    The NAKs and RNR NAKs the requester got and has not answered are
    r.outstanding; a resend of a PSN answers one of those of that PSN (a
    PSN-sequence NAK first, at once; an RNR NAK once its timer ran)."""
    o = r.first_send.get(f.psn)
    if o is not None and not o.bits & T.READ:
        r.case('resend-same')
        if o.opcode != f.opcode:
            r.bad('resend-same', 'frame %d resends PSN %d as %s; frame %d '
                  'sent it as %s' % (f.no, f.psn, f.name, o.no, o.name))
    if f.bits & T.READ:
        # (whatever asked for it: a READ again carries the address and
        # length of the rest; RNR NAKs answer SENDs alone)
        _judge_read(r, f, reads, read_resp)
    asked = [n for n in r.outstanding if n.psn == f.psn]
    if r.run_gap is not None and not asked and _reasked(r, f) and \
       not (r.run_prev is not None and _follows(r, r.run_prev, f)):
        # another READ asked again beside the run: the run keeps its
        # place
        r.run_gap = f
        return
    if any(p is not None and _follows(r, p, f)
           for p in (r.run_prev, r.run_gap)) and not asked:
        # go-back-N goes on (and what a NAK seen here finds in flight)
        r.run_prev, r.run_gap = f, None
        return
    if not asked and _seeks(r, f, opts):
        # go-back-N moves on to what an ACK since says the responder
        # still lacks (it has everything before)
        r.run_prev, r.run_gap = f, None
        return
    run_prev, r.run_prev = r.run_prev, f
    if _reasked(r, f):
        # a later answer came, this one's data did not: asked again (a
        # NAK's resend may follow; a go-back-N run goes on after it)
        r.run_prev, r.run_gap = run_prev, f
        return
    if asked:
        naks = [n for n in asked if not _is_rnr(n)]
        waited = [n for n in asked if _is_rnr(n) and _answers(r, f, n)]
        if naks:
            _judge_nak(r, f, naks[0])
        elif waited:
            _judge_rnr(r, f, waited[-1])
        else:
            _judge_rnr(r, f, asked[-1])
        return
    # a NAK an ACK resolved as this resend crossed it on the wire
    for t, n in r.resolved:
        if n.psn == f.psn and f.t - t < r.crossing and \
           (not _is_rnr(n) or _answers(r, f, n)):
            r.resolved.remove((t, n))
            r.outstanding.append(n)
            (_judge_rnr if _is_rnr(n) else _judge_nak)(r, f, n)
            return
    if r.outstanding:
        # a resend of another PSN than the newest NAK's asks for
        n = r.outstanding[-1]
        (_judge_rnr if _is_rnr(n) else _judge_nak)(r, f, n)
        return
    # nothing answered it: the requester's timer, which runs from the
    # last send of the PSN or the last ACK that moved on, whichever is
    # later (an ACK that passed less than the crossing time before f may
    # not have reached the requester when it sent f)
    moved = [t for t, _ in r.ack_log if f.t - t >= r.crossing]
    starts = [t for t in (r.sent_at.get(f.psn),
                          moved[-1] if moved else None) if t is not None]
    wait = f.t - max(starts) if starts else 0.0
    r.case('timeout')
    r.fig('resend-after-timeout', wait)
    r.events.append((f.t, 'timeout'))
    # (the resent PSN's last send may itself have been that long on
    # its way to the trace's point)
    if opts.timeout is not None and \
       wait < opts.timeout - max(opts.timeout * 0.02, r.crossing):
        r.bad('timeout', 'frame %d resends PSN %d %.1f ms after it was '
              'last sent or acknowledged, before the QP\'s timeout of '
              '%.1f ms' % (f.no, f.psn, wait * 1e3, opts.timeout * 1e3))


def _judge_nak(r, f, nak):
    """Resend @p f after PSN-sequence NAK @p nak: from its PSN."""
    r.outstanding.remove(nak)
    r.case('gbn-resend')
    r.fig('resend-after-nak', f.t - nak.t)
    r.events.append((f.t, 'resend'))
    if f.psn != nak.psn:
        r.bad('gbn-resend', 'frame %d resends from PSN %d; the NAK in '
              'frame %d named %d' % (f.no, f.psn, nak.no, nak.psn))


def _seeks(r, f, opts):
    """Whether resend @p f skips to right after a PSN an ACK acknowledged:
    the requester moves on to what the responder still lacks (it has
    everything before), after whichever ACK it had taken when it sent f
    (one that came a while before, if it was slow to take them). Within
    a resend run, forward only, or past where a NAK took it back; with
    none (the requester held, by an RNR NAK say), after the ACK that moved
    last, come since its last request and not long before f (a tenth of
    the timeout, or 10 ms)."""
    if not any(f.psn == psn_add(a, 1) for _, a in r.ack_log):
        return False
    if r.run_prev is not None:
        # forward in the run, or past a PSN a NAK or RNR NAK took the
        # requester back to (one it has, or one an ACK answered lately)
        # (or one an ACK answered since the requester's last request:
        # the run it asked for goes on past what is acknowledged)
        back = [n.psn for n in r.outstanding] + \
            [n.psn for t, n in r.resolved
             if f.t - t < r.crossing or t >= r.last_req_t]
        return psn_diff(f.psn, r.run_prev.psn) > 0 or \
            any(psn_diff(f.psn, p) > 0 for p in back)
    soon = opts.timeout / 10 if opts.timeout else 10e-3
    return r.acked is not None and f.psn == psn_add(r.acked, 1) and \
        r.progress_t is not None and r.progress_t >= r.last_req_t and \
        f.t - r.progress_t < soon


def _answers(r, f, nak):
    """Whether resend @p f is what NAK or RNR NAK @p nak asks for."""
    return f.psn == nak.psn and (
        not _is_rnr(nak) or
        f.t - nak.t >= T.RNR_DELAY_US[nak.syndrome & 0x1f] / 1e6 * 0.98)


def _judge_rnr(r, f, nak):
    """Resend @p f after RNR NAK @p nak: of its PSN, after its timer."""
    want = T.RNR_DELAY_US[nak.syndrome & 0x1f] / 1e6
    wait = f.t - nak.t
    r.outstanding.remove(nak)
    r.case('rnr')
    r.fig('rnr-wait', wait)
    if f.psn != nak.psn:
        r.bad('rnr', 'frame %d resends PSN %d after an RNR NAK of PSN '
              '%d' % (f.no, f.psn, nak.psn))
    elif wait < want * 0.98:
        r.bad('rnr', 'frame %d resends %.0f us after the RNR NAK in '
              'frame %d, whose timer asks for %.0f us' %
              (f.no, wait * 1e6, nak.no, want * 1e6))


def _follows(r, prev, f):
    """Whether @p f goes on from @p prev: the next PSN, or the next
    past READs and atomics whose data all came already."""
    p = psn_add(prev.psn, _span(prev, r.mtu))
    for _ in range(1024):
        if p == f.psn:
            return True
        o = r.first_send.get(p)
        if o is None or not o.bits & (T.READ | T.ATOMIC) or \
           p not in r.answered:
            return False
        p = psn_add(p, _span(o, r.mtu))
    return False


def _judge_read(r, f, reads, read_resp):
    """A READ asked again: from the first response missing, for the rest."""
    for o in reversed(reads):
        off = psn_diff(f.psn, o.psn)
        if 0 <= off < _span(o, r.mtu) and o is not f:
            break
    else:
        return
    r.case('read-resend')
    want_va = o.va + off * r.mtu
    want_len = o.dma_len - off * r.mtu
    if (f.va, f.dma_len) != (want_va, want_len):
        r.bad('read-resend', 'frame %d asks again from PSN %d for VA %#x, '
              '%d bytes; READ frame %d at that offset is VA %#x, %d bytes'
              % (f.no, f.psn, f.va, f.dma_len, o.no, want_va, want_len))
    if r.marked:
        # the first response missing when the READ was asked again: the
        # requester may not have had those delivered less than the
        # crossing time before (on their way to it), so any PSN from the
        # first missing of those older to the first missing of all
        got = read_resp.get(o.psn, {})
        span = [psn_add(o.psn, i) for i in range(_span(o, r.mtu))]
        first = next((p for p in span if p not in got), None)
        sure = next((p for p in span if p not in got or
                     got[p] > f.t - r.crossing), None)
        if first is not None and not (
                psn_diff(sure, f.psn) <= 0 <= psn_diff(first, f.psn)):
            r.bad('read-resend', 'frame %d asks again from PSN %d; the '
                  'first response missing was PSN %d' %
                  (f.no, f.psn, first) if sure == first else
                  'frame %d asks again from PSN %d; the first response '
                  'missing was PSN %d, or PSN %d if the last of those '
                  'delivered had not reached the requester' %
                  (f.no, f.psn, first, sure))


# the checks, in the order they print: side, name, what it proves
CHECKS = (
    ('responder', 'nak-single', 'one PSN-sequence NAK outstanding at most'),
    ('responder', 'nak-psn', 'a NAK names the PSN the responder expects'),
    ('responder', 'ack-monotonic', 'ACKs never go back'),
    ('responder', 'dup-ack', 'a duplicate request is acknowledged'),
    ('responder', 'corrupt', 'a bad-ICRC request is dropped silently'),
    ('responder', 'access-nak', 'a request with an rkey the injector '
     'broke draws a Remote Access Error NAK'),
    ('responder', 'cnp', 'a CE-marked request draws a CNP'),
    ('responder', 'cnp-spurious', 'no CNP without a CE mark'),
    ('responder', 'cnp-qp', 'CNPs go to the requester\'s QP'),
    ('requester', 'gbn-resend', 'after a NAK, the resend starts at its PSN'),
    ('requester', 'read-resend', 'a READ asked again from the right PSN '
     'and offset'),
    ('requester', 'timeout', 'a resend nothing asked for waits the QP\'s '
     'timeout'),
    ('requester', 'rnr', 'a resend after an RNR NAK waits its timer'),
    ('requester', 'resend-same', 'a resent PSN carries what it first '
     'did'),
    ('requester', 'complete', 'every message is acknowledged'),
)


# the checks that need to know what reached a side: not judged from a
# trace taken at the other end (--at)
ARRIVAL = {'nak-single', 'nak-psn', 'dup-ack', 'corrupt', 'access-nak',
           'cnp',
           'cnp-spurious', 'gbn-resend', 'read-resend', 'timeout', 'rnr'}
# (resend-same is judged at either end: a requester's own frames)


def analyze(frames, marked, opts):
    """Judge every connection of @p frames. @return a Result."""
    res = Result()
    conns, stray = connections(frames)
    mtu, mtu_how = path_mtu(frames, opts.mtu)
    res.mtu = (mtu, mtu_how)
    at = getattr(opts, 'at', None)
    for c in conns:
        answered = c.req_qpn is not None
        # a trace taken at the responder holds what reached it: as exact
        # as the injector's marks
        exact = marked or at == c.b
        # (a trace taken at the requester shows what reached it before
        # it sent: nothing crosses there)
        r = _replay(c, exact, mtu, opts,
                    0.0 if at == c.a else
                    getattr(opts, 'crossing_us', 100) / 1e6)
        res.replays[c.index] = r
        _figures(res, c, r)
        for side, check, what in CHECKS:
            name = side + '.' + check
            if not answered and check != 'cnp-qp':
                res.add('N/A', name, c, 'no answers from the responder in '
                        'the trace')
                continue
            if at is not None and at != (c.b if side == 'responder'
                                         else c.a) and check in ARRIVAL:
                res.add('N/A', name, c, 'a trace taken at %s: what '
                        'reached the %s is not in it' % (at, side))
                continue
            verdict, reason = _verdict(c, r, check, exact, opts, stray)
            res.add(verdict, name, c, reason)
    res.conns = conns
    return res


def _verdict(c, r, check, marked, opts, stray):
    bad = r.problems.get(check, [])
    n = r.counts.get(check, 0)
    if check == 'complete':
        return _complete(c, r)
    if check == 'cnp':
        ce = [f for f in c.requests() if f.delivered and f.ce]
        if not ce:
            return 'N/A', 'no CE-marked request'
        cnps = c.cnps()
        miss = [q for q in ce if not any(abs(p.t - q.t) <= opts.cnp_window
                                         for p in cnps)]
        if miss:
            return 'FAIL', '%d of %d CE-marked requests drew no CNP ' \
                'within %d us (first: frame %d)' % (
                    len(miss), len(ce), opts.cnp_window * 1e6, miss[0].no)
        return 'PASS', '%d CE-marked requests, each with a CNP within ' \
            '%d us' % (len(ce), opts.cnp_window * 1e6)
    if check == 'access-nak':
        return _access_nak(c)
    if check == 'cnp-qp':
        mine = [f for f in stray if f.src == c.b and f.dst == c.a]
        if mine:
            return 'FAIL', '%d CNPs to QPN %s, not the requester\'s %s' % (
                len(mine), ', '.join(sorted({'0x%06x' % f.dqpn
                                             for f in mine})),
                '?' if c.req_qpn is None else '0x%06x' % c.req_qpn)
        if not c.cnps():
            return 'N/A', 'no CNP'
        return 'PASS', '%d CNPs, each to QPN 0x%06x' % (len(c.cnps()),
                                                        c.req_qpn)
    if check == 'dup-ack':
        # (those after the responder's last frame: the trace ended)
        last = max((f.no for f in c.answers()), default=0)
        unanswered = [q for q in r.dups if q.no < last]
        if unanswered:
            return 'FAIL', '%d duplicate requests never acknowledged ' \
                '(first: frame %d)' % (len(unanswered), unanswered[0].no)
        if n == 0:
            return 'N/A', 'no duplicate request'
        return 'PASS', '%d duplicate requests, each acknowledged' % n
    if check == 'timeout' and n and not bad and opts.timeout is None:
        w = r.figs['resend-after-timeout']
        return 'N/A', '%d resends after a timeout, waits %.1f..%.1f ms: ' \
            'give --timeout to judge them' % (n, min(w) * 1e3, max(w) * 1e3)
    if bad:
        more = ' (and %d more)' % (len(bad) - 1) if len(bad) > 1 else ''
        return 'FAIL', bad[0] + more
    if n == 0:
        return 'N/A', {
            'nak-single': 'no PSN-sequence NAK',
            'nak-psn': 'no PSN-sequence NAK',
            'ack-monotonic': 'no ACK',
            'corrupt': 'no request with a bad ICRC',
            'cnp-spurious': 'no CNP',
            'gbn-resend': 'no NAK the requester received',
            'read-resend': 'no READ asked again',
            'timeout': 'no resend after a timeout',
            'rnr': 'no RNR NAK the requester received',
            'resend-same': 'no resend',
        }[check]
    how = {
        'nak-single': '%d NAKs, each alone',
        'nak-psn': '%d NAKs, each naming the expected PSN' if marked else
        '%d NAKs, each naming a PSN sent and unacknowledged (no drop marks '
        'in the trace: the expected PSN is not known)',
        'ack-monotonic': '%d ACKs, none going back',
        'corrupt': '%d bad-ICRC requests judged, none acknowledged or '
        'NAKed',
        'cnp-spurious': '%d CNPs, each after a CE mark',
        'gbn-resend': '%d NAKs, each answered from its PSN',
        'read-resend': '%d READs asked again, each from the right offset' +
        ('' if marked else ' (no drop marks: which response was first '
         'missing is not known)'),
        'timeout': '%d resends, each after the QP\'s timeout',
        'rnr': '%d RNR NAKs, each waited out',
        'resend-same': '%d resent packets, each as first sent',
    }[check]
    return 'PASS', how % n


def _bad_rkey(f):
    """Did the injector give request @p f an rkey of its own?"""
    return f.action == 'rewritten' and ' rkey=' in f.note


def _access_nak(c):
    """Each request whose rkey the injector rewrote (a key the responder
    never gave) draws a Remote Access Error NAK naming its PSN, and is
    not acknowledged before it."""
    bad = [f for f in c.requests() if f.delivered and _bad_rkey(f)]
    if not bad:
        return 'N/A', 'no request with an rkey the injector rewrote'
    answers = c.answers()
    for q in bad:
        for a in answers:
            if a.no < q.no:
                continue
            if _is_nak(a, T.NAK_REM_ACCESS) and a.psn == q.psn:
                break
            if _acked(a) is not None and not _is_nak(a) and \
               psn_diff(a.psn, q.psn) >= 0:
                return 'FAIL', 'frame %d (%s) was acknowledged by frame ' \
                    '%d' % (q.no, q.note.split(':', 1)[-1].strip(), a.no)
        else:
            what = next(('%s in frame %d' % (
                'a NAK of code %d' % (a.syndrome & 0x1f) if _is_nak(a) else
                a.name, a.no) for a in answers if a.no > q.no and
                a.psn == q.psn), 'nothing naming its PSN')
            return 'FAIL', 'frame %d (%s) drew no Remote Access Error ' \
                'NAK: %s' % (q.no, q.note.split(':', 1)[-1].strip(), what)
    return 'PASS', '%d requests with a broken rkey, each NAKed Remote ' \
        'Access Error' % len(bad)


def _fatal_nak(c):
    """The first NAK that ends the connection (invalid request, remote
    access or operation error), or None."""
    return next((a for a in c.answers() if _is_nak(a) and
                 not _is_nak(a, T.NAK_PSN_SEQ) and not _is_rnr(a)), None)


def _complete(c, r):
    ends = []
    for f in c.requests():
        if r.first_send.get(f.psn) is f and f.bits & (T.LAST | T.ONLY):
            ends.append((psn_add(f.psn, _span(f, r.mtu) - 1), f))
    if not ends:
        return 'N/A', 'no message ends in the trace'
    open_ = [f for end, f in ends if r.acked is None or
             psn_diff(end, r.acked) > 0]
    # sent as the trace ends: nothing from the responder came after
    last = max((f.no for f in c.answers()), default=0)
    tail = [f for f in open_ if f.no > last]
    open_ = [f for f in open_ if f.no < last]
    # a NAK that ends the connection acknowledges what came before its
    # PSN, and ends its messages from its PSN on
    fatal = _fatal_nak(c)
    cut = [] if fatal is None else \
        [f for f in open_ if psn_diff(
            psn_add(f.psn, _span(f, r.mtu) - 1), fatal.psn) >= 0]
    open_ = [f for f in open_ if f not in cut and
             (fatal is None or f.no > fatal.no)]
    if open_:
        return 'FAIL', '%d of %d messages never acknowledged (first: ' \
            'frame %d, PSN %d)' % (len(open_), len(ends), open_[0].no,
                                   open_[0].psn)
    if cut:
        return 'PASS', '%d of %d messages acknowledged, the rest ended ' \
            'by the NAK of PSN %d in frame %d' % (
                len(ends) - len(cut) - len(tail), len(ends), fatal.psn,
                fatal.no)
    if tail:
        return 'PASS', '%d messages, all acknowledged but the last %d, ' \
            'sent as the trace ends' % (len(ends), len(tail))
    return 'PASS', '%d messages, all acknowledged' % len(ends)


def _figures(res, c, r):
    for name in ('nak-latency', 'resend-after-nak', 'resend-after-timeout',
                 'rnr-wait', 'cnp-latency'):
        res.figure(c, name, r.figs.get(name, []), 's')
    if r.figs.get('naks-other'):
        res.figure(c, 'naks-other', [len(r.figs['naks-other'])], 'NAKs')
    reqs = c.requests()
    if not reqs:
        return
    res.figure(c, 'resends', [r.resent], 'frames')
    events = sorted(r.events)
    if not events:
        return
    te = events[0][0]
    t0, t1 = c.frames[0].t, c.frames[-1].t
    new = [f for f in reqs if r.first_send.get(f.psn) is f]
    reads = [f for f in c.answers() if f.bits & T.READ and f.delivered]
    before = sum(f.payload for f in new + reads if f.t < te)
    after = sum(f.payload for f in new + reads if f.t >= te)
    if te > t0:
        res.figure(c, 'goodput-before', [before * 8 / (te - t0)], 'b/s')
    if t1 > te:
        res.figure(c, 'goodput-after', [after * 8 / (t1 - te)], 'b/s')


def _scaled(v, unit):
    if unit == 's':
        return ('%.1f us' % (v * 1e6)) if v < 1e-3 else '%.2f ms' % (v * 1e3)
    if unit == 'b/s':
        return '%.3f Mb/s' % (v / 1e6)
    return '%d %s' % (v, unit)


def report(res, out):
    """The verdict lines, then the figures (doc/guides/lab.rst)."""
    for verdict, check, label, reason in res.lines:
        out.write('%-4s %-24s %s %s\n' % (verdict, check, label, reason))
    out.write('\nfigures (path MTU %d, %s):\n' % res.mtu)
    report_figures(res, out.write)


def report_figures(res, write):
    """The figures, a line each, to @p write."""
    for label, name, vals, unit in res.figures:
        if len(vals) == 1:
            write('  %s %s %s\n' % (label, name, _scaled(vals[0], unit)))
        else:
            write('  %s %s n=%d min %s median %s max %s\n' % (
                label, name, len(vals), _scaled(min(vals), unit),
                _scaled(statistics.median(vals), unit),
                _scaled(max(vals), unit)))
