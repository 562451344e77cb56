# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Shared pieces of the interop tests.

Reading pcap files, running droce-dump and tshark, comparing what they
decode field by field, and an ICRC written here from the RoCEv2 rules,
independent of droce's C code.
"""

import ipaddress
import json
import struct
import subprocess
import zlib

ROCE_PORT = 4791

# Opcodes tshark 4.0 names but whose headers after the BTH it does not
# dissect (XRC), or does not know at all (CNP, RC FLUSH, RC ATOMIC WRITE).
def tshark_dissects_ext(opcode):
    """True if tshark 4.0 decodes the extension headers of this opcode."""
    return opcode < 0xa0 and opcode not in (0x1c, 0x1d, 0x81)


def read_pcap(path):
    """Frames of a classic pcap file, as bytes, in order."""
    data = open(path, 'rb').read()
    magic = struct.unpack_from('<I', data, 0)[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        endian = '<'
    elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
        endian = '>'
    else:
        raise ValueError('%s: not a pcap file' % path)
    frames = []
    off = 24
    while off + 16 <= len(data):
        caplen = struct.unpack_from(endian + 'I', data, off + 8)[0]
        frames.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return frames


def droce_dump(dump, pcap):
    """droce-dump --json of a capture: one dict per frame."""
    out = subprocess.run([dump, '--json', pcap], check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    return [json.loads(line) for line in out.splitlines()]


TSHARK_FIELDS = [
    'frame.number', 'ip.src', 'ip.dst', 'ipv6.src', 'ipv6.dst',
    'ip.dsfield.dscp', 'ip.dsfield.ecn', 'ipv6.tclass.dscp',
    'ipv6.tclass.ecn',
    'udp.srcport', 'udp.dstport',
    'infiniband.bth.opcode', 'infiniband.bth.se', 'infiniband.bth.m',
    'infiniband.bth.padcnt', 'infiniband.bth.tver', 'infiniband.bth.p_key',
    'infiniband.reserved', 'infiniband.bth.destqp', 'infiniband.bth.a',
    'infiniband.bth.reserved7', 'infiniband.bth.psn',
    'infiniband.reth.va', 'infiniband.reth.r_key', 'infiniband.reth.dmalen',
    'infiniband.aeth.syndrome', 'infiniband.aeth.msn',
    'infiniband.atomiceth.swapdt', 'infiniband.atomiceth.cmpdt',
    'infiniband.atomicacketh.origremdt', 'infiniband.immdt',
    'infiniband.ieth', 'infiniband.deth.q_key', 'infiniband.deth.srcqp',
    'infiniband.vendor', 'infiniband.invariant.crc', 'data.len',
    '_ws.malformed', '_ws.expert.message', '_ws.expert.severity',
] + [
    # MADs to QP1: the common header, the attribute bytes, and what
    # tshark's CM dissector makes of REQ, REP, RTU, REJ, DREQ and DREP
    'infiniband.mad.mgmtclass', 'infiniband.mad.method',
    'infiniband.mad.transactionid', 'infiniband.mad.attributeid',
    'infiniband.mad.data',
    'infiniband.cm.req', 'infiniband.cm.req.serviceid',
    'infiniband.cm.req.serviceid.protocol',
    'infiniband.cm.req.serviceid.dport', 'infiniband.cm.req.localqpn',
    'infiniband.cm.req.startpsn', 'infiniband.cm.req.ip_cm.ipv',
    'infiniband.cm.req.ip_cm.sport', 'infiniband.cm.req.ip_cm.sip4',
    'infiniband.cm.req.ip_cm.dip4', 'infiniband.cm.req.ip_cm.sip6',
    'infiniband.cm.req.ip_cm.dip6',
    'infiniband.cm.rep', 'infiniband.cm.rep.remotecommid',
    'infiniband.cm.rep.localqpn', 'infiniband.cm.rep.startpsn',
    'infiniband.cm.rtu.localcommid', 'infiniband.cm.rtu.remotecommid',
    'infiniband.cm.rej.localcommid', 'infiniband.cm.rej.remotecommid',
    'infiniband.cm.rej.reason',
    'infiniband.cm.dreq.localcommid', 'infiniband.cm.dreq.remotecommid',
    'infiniband.cm.req.remoteqpneecn',
    'infiniband.cm.drsp.localcommid', 'infiniband.cm.drsp.remotecommid',
]

# tshark's expert severities: chat and note are remarks (a TCP handshake
# is "chat"), warning and error are problems
EXPERT_WARN = 0x00600000


def tshark(tshark_roce, pcap):
    """tshark's decode of a capture: one dict per frame.

    A field that occurs several times in a frame gives its first value,
    except infiniband.vendor: its last value is the whole run of bytes
    tshark could not dissect after the BTH.
    """
    cmd = [tshark_roce, '-r', pcap, '-T', 'fields', '-E', 'separator=/t',
           '-E', 'occurrence=a', '-E', 'aggregator=,', '-E', 'quote=n']
    for f in TSHARK_FIELDS:
        cmd += ['-e', f]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout
    rows = []
    for line in out.decode().split('\n'):
        if line == '':
            continue
        values = line.split('\t')
        if len(values) != len(TSHARK_FIELDS):
            raise ValueError('tshark row has %d fields: %r' %
                             (len(values), line[:200]))
        row = {}
        for name, value in zip(TSHARK_FIELDS, values):
            parts = value.split(',')
            if name == 'infiniband.vendor':
                row[name] = parts[-1]
            elif name == '_ws.expert.severity':
                row[name] = max((int(p, 0) for p in parts if p), default=0)
            else:
                row[name] = parts[0]
        rows.append(row)
    return rows


def _int(text):
    """A tshark number, decimal or 0x-hex."""
    return int(text, 0)


def _bool(text):
    """A tshark boolean, shown as 1/0 (or True/False)."""
    return 1 if text in ('1', 'True', 'true') else 0


def compare(d, t, frame=None):
    """Mismatches between droce-dump's object d and tshark's row t.

    Every field both decoders produce is compared; the result is a list of
    'frame N: field: droce X, tshark Y' strings (empty when they agree).
    frame, if given, is the raw frame, used to check tshark's view of the
    bytes after the BTH for opcodes it does not dissect.
    """
    bad = []
    n = d['frame']

    def check(name, mine, theirs):
        if mine != theirs:
            bad.append('frame %d: %s: droce %r, tshark %r' %
                       (n, name, mine, theirs))

    check('frame', n, _int(t['frame.number']))
    if d['status'] != 'ok':
        bad.append('frame %d: droce status %s %s' %
                   (n, d['status'], d.get('error', '')))
        return bad
    if not d['icrc_ok']:
        bad.append('frame %d: droce says the ICRC is wrong' % n)
    if d['ip_version'] == 4:
        check('src', d['src'], t['ip.src'])
        check('dst', d['dst'], t['ip.dst'])
        check('dscp', d['dscp'], _int(t['ip.dsfield.dscp']))
        check('ecn', d['ecn'], _int(t['ip.dsfield.ecn']))
    else:
        check('src', d['src'], t['ipv6.src'])
        check('dst', d['dst'], t['ipv6.dst'])
        check('dscp', d['dscp'], _int(t['ipv6.tclass.dscp']))
        check('ecn', d['ecn'], _int(t['ipv6.tclass.ecn']))
    check('sport', d['sport'], _int(t['udp.srcport']))
    check('dport', d['dport'], _int(t['udp.dstport']))

    op = d['opcode']
    check('opcode', op, _int(t['infiniband.bth.opcode']))
    check('se', d['se'], _bool(t['infiniband.bth.se']))
    check('m', d['m'], _bool(t['infiniband.bth.m']))
    check('padcnt', d['padcnt'], _int(t['infiniband.bth.padcnt']))
    check('tver', d['tver'], _int(t['infiniband.bth.tver']))
    check('pkey', d['pkey'], _int(t['infiniband.bth.p_key']))
    # tshark shows BTH byte 4 (FECN, BECN, 6 reserved bits) as hex
    check('fecn/becn', d['fecn'] << 7 | d['becn'] << 6,
          int(t['infiniband.reserved'], 16) & 0xc0)
    check('dqpn', d['dqpn'], _int(t['infiniband.bth.destqp']))
    check('ackreq', d['ackreq'], _bool(t['infiniband.bth.a']))
    check('psn', d['psn'], _int(t['infiniband.bth.psn']))
    # tshark shows the wire bytes of the ICRC as a big-endian number; for
    # opcodes it does not know, they end its opaque "vendor" bytes
    wire = struct.unpack('>I', struct.pack('<I', d['icrc']))[0]
    if t['infiniband.invariant.crc']:
        check('icrc', wire, _int(t['infiniband.invariant.crc']))
    else:
        check('icrc', '%08x' % wire, t['infiniband.vendor'][-8:])
    if t['_ws.malformed'] or t['_ws.expert.message']:
        bad.append('frame %d: tshark reports %r %r' %
                   (n, t['_ws.malformed'], t['_ws.expert.message']))

    if not tshark_dissects_ext(op):
        # everything between the BTH and the ICRC is opaque to tshark
        if frame is not None:
            after_bth = len(frame) - bth_offset(frame) - 12 - 4
            if t['infiniband.invariant.crc'] == '':
                after_bth += 4
            check('bytes after BTH', after_bth,
                  len(t['infiniband.vendor']) // 2)
        return bad

    if 'reth' in d:
        check('reth.va', d['reth']['va'], _int(t['infiniband.reth.va']))
        check('reth.rkey', d['reth']['rkey'], _int(t['infiniband.reth.r_key']))
        check('reth.dlen', d['reth']['dlen'], _int(t['infiniband.reth.dmalen']))
    if 'aeth' in d:
        check('aeth.syndrome', d['aeth']['syndrome'],
              _int(t['infiniband.aeth.syndrome']))
        check('aeth.msn', d['aeth']['msn'], _int(t['infiniband.aeth.msn']))
    if 'atomiceth' in d:
        a = d['atomiceth']
        # tshark reports the AtomicETH's VA and R_Key as RETH fields
        check('atomiceth.va', a['va'], _int(t['infiniband.reth.va']))
        check('atomiceth.rkey', a['rkey'], _int(t['infiniband.reth.r_key']))
        check('atomiceth.swap_add', a['swap_add'],
              _int(t['infiniband.atomiceth.swapdt']))
        check('atomiceth.compare', a['compare'],
              _int(t['infiniband.atomiceth.cmpdt']))
    if 'atomicacketh' in d:
        check('atomicacketh.orig', d['atomicacketh']['orig'],
              _int(t['infiniband.atomicacketh.origremdt']))
    if 'immdt' in d:
        check('immdt', d['immdt'], int(t['infiniband.immdt'], 16))
    if 'ieth' in d:
        check('ieth.rkey', d['ieth']['rkey'], int(t['infiniband.ieth'], 16))
    if 'deth' in d:
        check('deth.qkey', d['deth']['qkey'], _int(t['infiniband.deth.q_key']))
        check('deth.srcqp', d['deth']['srcqp'],
              _int(t['infiniband.deth.srcqp']))

    bad += compare_cm(d, t)

    # tshark's data.len is payload and pad; absent when there is none, or
    # when another dissector took the payload (CM MADs to QP1)
    if t['data.len']:
        check('payload+pad', d['payload_len'] + d['padcnt'],
              _int(t['data.len']))
    elif d['dqpn'] != 1:
        check('payload+pad', d['payload_len'] + d['padcnt'], 0)
    return bad


# CM attribute IDs (InfiniBand vol. 1 ch. 12)
CM_REQ, CM_MRA, CM_REJ, CM_REP, CM_RTU, CM_DREQ, CM_DREP = range(0x10, 0x17)
CM_SIDR_REQ, CM_SIDR_REP, CM_LAP, CM_APR = range(0x17, 0x1b)

# rdma_cm's port spaces by the byte they put in an RDMA IP CM service ID
# (0x00000000_01_pp_port): TCP, UDP, IB, IPoIB
CMA_PORT_SPACES = {0x06: 0x0106, 0x11: 0x0111, 0x3f: 0x013f, 0x02: 0x0002}


def _be(data, off, n):
    """The big-endian number of n bytes at off."""
    return int.from_bytes(data[off:off + n], 'big')


def _ip_text(addr16, version):
    """An address of rdma_cm's header as text (IPv4: its last 4 bytes)."""
    if version == 4:
        return str(ipaddress.IPv4Address(addr16[12:16]))
    return str(ipaddress.IPv6Address(addr16))


def _cma_service(sid):
    """Port space and port of an RDMA IP CM service ID ({} if it is not
    one)."""
    if sid >> 24 != 1 or (sid >> 16) & 0xff not in CMA_PORT_SPACES:
        return {}
    return {'port_space': CMA_PORT_SPACES[(sid >> 16) & 0xff],
            'port': sid & 0xffff}


def _cma_hdr(priv):
    """rdma_cm's IP header at the start of private data ({} if none)."""
    version = priv[1] >> 4
    if priv[0] != 0 or version not in (4, 6):
        return {}
    return {'cma_ip_version': version, 'cma_src_port': _be(priv, 2, 2),
            'cma_src': _ip_text(priv[4:20], version),
            'cma_dst': _ip_text(priv[20:36], version)}


def _cm_from_bytes(attr, data):
    """The fields droce-dump prints of an attribute tshark 4.0 does not
    dissect (MRA, SIDR_REQ, SIDR_REP, LAP, APR), read here from the 232
    attribute bytes tshark shows, at the offsets of vol. 1 ch. 12."""
    cm = {}
    if attr in (CM_MRA, CM_LAP, CM_APR):
        cm['local_comm_id'] = _be(data, 0, 4)
        cm['remote_comm_id'] = _be(data, 4, 4)
    if attr == CM_LAP:
        cm['qpn'] = _be(data, 12, 3)
    elif attr == CM_APR:
        cm['status'] = data[9]
    elif attr == CM_SIDR_REQ:
        cm['request_id'] = _be(data, 0, 4)
        cm['service_id'] = _be(data, 8, 8)
        cm.update(_cma_service(cm['service_id']))
        if cm.get('port') is not None:
            cm.update(_cma_hdr(data[16:52]))
    elif attr == CM_SIDR_REP:
        cm['request_id'] = _be(data, 0, 4)
        cm['status'] = data[4]
        cm['qpn'] = _be(data, 8, 3)
        cm['service_id'] = _be(data, 12, 8)
        cm['qkey'] = _be(data, 20, 4)
        cm.update(_cma_service(cm['service_id']))
    return cm


def tshark_cm(t):
    """The CM fields droce-dump prints, as tshark decodes them.

    None unless tshark shows a MAD of the CM class. REQ, REP, RTU, REJ,
    DREQ and DREP come from tshark's CM dissector; the attributes it does
    not dissect from the MAD data bytes it shows (_cm_from_bytes).
    """
    if not t['infiniband.mad.mgmtclass'] or \
            _int(t['infiniband.mad.mgmtclass']) != 0x07:
        return None
    attr = _int(t['infiniband.mad.attributeid'])
    cm = {'attr_id': attr, 'method': _int(t['infiniband.mad.method']),
          'tid': _int(t['infiniband.mad.transactionid'])}

    def take(key, field):
        if t[field]:
            cm[key] = _int(t[field])

    if attr == CM_REQ:
        take('local_comm_id', 'infiniband.cm.req')
        take('service_id', 'infiniband.cm.req.serviceid')
        take('qpn', 'infiniband.cm.req.localqpn')
        take('starting_psn', 'infiniband.cm.req.startpsn')
        proto = t['infiniband.cm.req.serviceid.protocol']
        if proto and _int(proto) in CMA_PORT_SPACES:
            cm['port_space'] = CMA_PORT_SPACES[_int(proto)]
            take('port', 'infiniband.cm.req.serviceid.dport')
        if t['infiniband.cm.req.ip_cm.ipv']:
            v = _int(t['infiniband.cm.req.ip_cm.ipv'])
            cm['cma_ip_version'] = v
            take('cma_src_port', 'infiniband.cm.req.ip_cm.sport')
            ip = 'sip4' if v == 4 else 'sip6'
            cm['cma_src'] = t['infiniband.cm.req.ip_cm.' + ip]
            cm['cma_dst'] = t['infiniband.cm.req.ip_cm.d' + ip[1:]]
    elif attr == CM_REP:
        take('local_comm_id', 'infiniband.cm.rep')
        take('remote_comm_id', 'infiniband.cm.rep.remotecommid')
        take('qpn', 'infiniband.cm.rep.localqpn')
        take('starting_psn', 'infiniband.cm.rep.startpsn')
    elif attr == CM_RTU:
        take('local_comm_id', 'infiniband.cm.rtu.localcommid')
        take('remote_comm_id', 'infiniband.cm.rtu.remotecommid')
    elif attr == CM_REJ:
        take('local_comm_id', 'infiniband.cm.rej.localcommid')
        take('remote_comm_id', 'infiniband.cm.rej.remotecommid')
        take('reason', 'infiniband.cm.rej.reason')
    elif attr == CM_DREQ:
        take('local_comm_id', 'infiniband.cm.dreq.localcommid')
        take('remote_comm_id', 'infiniband.cm.dreq.remotecommid')
        take('qpn', 'infiniband.cm.req.remoteqpneecn')
    elif attr == CM_DREP:
        take('local_comm_id', 'infiniband.cm.drsp.localcommid')
        take('remote_comm_id', 'infiniband.cm.drsp.remotecommid')
    else:
        cm.update(_cm_from_bytes(attr,
                                 bytes.fromhex(t['infiniband.mad.data'])))
    return cm


def compare_cm(d, t):
    """Mismatches between the CM MAD droce-dump decodes in d (its 'cm'
    object) and tshark's decode of it; every field droce-dump prints must
    have a value from tshark, and the same one."""
    n = d['frame']
    mine = d.get('cm')
    theirs = tshark_cm(t)
    if mine is None and theirs is None:
        return []
    if mine is None:
        return ['frame %d: tshark decodes a CM MAD, droce-dump does not '
                '(%s)' % (n, d.get('mad_error', 'not a MAD'))]
    if theirs is None:
        return ['frame %d: droce-dump decodes a CM %s, tshark no CM MAD' %
                (n, mine.get('attr'))]
    bad = []
    # names are droce's own words; the numbers they stand for are compared
    mine = {k: v for k, v in mine.items() if k not in ('attr', 'reason_name')}
    for key in sorted(set(mine) | set(theirs)):
        if mine.get(key) != theirs.get(key):
            bad.append('frame %d: cm %s: %s: droce %r, tshark %r' %
                       (n, d['cm'].get('attr'), key, mine.get(key),
                        theirs.get(key)))
    return bad


def l3_offset(frame):
    """Offset of the IP header (one optional 802.1Q tag)."""
    return 18 if frame[12:14] == b'\x81\x00' else 14


def bth_offset(frame):
    """Offset of the BTH in a RoCEv2 frame without IP options."""
    l3 = l3_offset(frame)
    version = frame[l3] >> 4
    return l3 + (40 if version == 6 else (frame[l3] & 0xf) * 4) + 8


def reference_icrc(frame):
    """ICRC of a RoCEv2 frame from the RoCEv2 rules, as a number.

    CRC-32 (zlib's) over eight 0xff bytes, then the IP header with IPv4
    TOS, TTL and checksum (or IPv6 traffic class, flow label and hop
    limit) set to ones, the UDP header with its checksum set to ones, the
    BTH with byte 4 set to ones, and the rest up to the ICRC.
    """
    l3 = l3_offset(frame)
    pkt = bytearray(frame[l3:])
    if pkt[0] >> 4 == 6:
        ip_len = 40
        total = ip_len + struct.unpack_from('>H', pkt, 4)[0]
        pkt[0] |= 0x0f
        pkt[1:4] = b'\xff\xff\xff'
        pkt[7] = 0xff
    else:
        ip_len = (pkt[0] & 0xf) * 4
        total = struct.unpack_from('>H', pkt, 2)[0]
        pkt[1] = 0xff
        pkt[8] = 0xff
        pkt[10:12] = b'\xff\xff'
    pkt[ip_len + 6:ip_len + 8] = b'\xff\xff'
    pkt[ip_len + 8 + 4] = 0xff
    return zlib.crc32(b'\xff' * 8 + bytes(pkt[:total - 4])) & 0xffffffff


def stored_icrc(frame):
    """The ICRC at the end of the IP packet (least significant byte first)."""
    l3 = l3_offset(frame)
    if frame[l3] >> 4 == 6:
        end = l3 + 40 + struct.unpack_from('>H', frame, l3 + 4)[0]
    else:
        end = l3 + struct.unpack_from('>H', frame, l3 + 2)[0]
    return struct.unpack_from('<I', frame, end - 4)[0]
