# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Shared pieces of the interop tests.

Reading pcap files, running droce-dump and tshark, comparing what they
decode field by field, and an ICRC written here from the RoCEv2 rules,
independent of droce's C code.
"""

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
    else:
        check('src', d['src'], t['ipv6.src'])
        check('dst', d['dst'], t['ipv6.dst'])
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

    # tshark's data.len is payload and pad; absent when there is none, or
    # when another dissector took the payload (CM MADs to QP1)
    if t['data.len']:
        check('payload+pad', d['payload_len'] + d['padcnt'],
              _int(t['data.len']))
    elif d['dqpn'] != 1:
        check('payload+pad', d['payload_len'] + d['padcnt'], 0)
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
