#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce's CM MADs field by field against Linux's, from the golden captures.

Debian's rping, ib_send_bw -R and udaddy run droce to droce (two
processes joined by net_memif, LD_LIBRARY_PATH pointing at droce's
libibverbs.so.1 and librdmacm.so.1: test_rdmacm_dropin.py's Pair), each
device mirroring every frame it sends to pcap, with the arguments the
golden captures were made with (tests/data/pcaps/README.md):

  rping -C 3 -S 64 -v           rdma_cm_rping.pcap    REQ REP RTU DREQ DREP
  ib_send_bw -R -n 20 -s 64 ... rdma_cm_send_bw.pcap  the same, twice
  udaddy -C 4 -S 64             rdma_cm_udaddy.pcap   SIDR_REQ SIDR_REP

tshark (tshark-roce) decodes droce's capture and the golden one alike
(-T pdml: every field with its name, offset and value). tshark 4.0 does
not dissect SIDR_REQ and SIDR_REP, and reads the REQ's flow label word
from the wrong bytes; those fields are read here from the MAD data bytes
tshark shows, at the offsets of the InfiniBand spec (vol. 1, ch. 12),
and named mad.data:... .

Each field of each message type has a rule in FIELDS (below, with the
reason for each):

  SAME   the protocol (or rdma_cm's conventions, or what the tool asks
         for, the same on both sides) fixes it: droce's value equals
         golden's (and golden's messages of the type agree among
         themselves, or the rule is wrong);
  RANGE  the implementation's choice within limits: both captures'
         values are within them (a difference is printed as a note);
  REL    per connection: checked by a rule of RULES, which relates it to
         other messages and to the data frames of the same capture, and
         which is run on golden's capture too, so that each rule is
         proven on Linux's bytes;
  FREE   per run or the implementation's own (transaction IDs, UDP
         source port, IP ID, ...): present, not compared.

Also: every message type of the golden capture is in droce's; the fields
tshark decodes of each of droce's messages are exactly those it decodes
of golden's (none missing, none extra); every field has a rule; and
every relational rule checks at least one instance in each capture.

Usage: test_cm_golden.py --lib-verbs DIR --lib-rdmacm DIR
        --tshark TSHARK_ROCE --pcaps DIR --workdir DIR [--only SUBSTR]
"""

import argparse
import ipaddress
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import roce_check
import test_rdmacm_dropin as dropin
from test_rdmacm_dropin import check

# CM attribute IDs (InfiniBand vol. 1, 12.6)
REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP = range(0x10, 0x19)
NAMES = {REQ: 'REQ', MRA: 'MRA', REJ: 'REJ', REP: 'REP', RTU: 'RTU',
         DREQ: 'DREQ', DREP: 'DREP', SIDR_REQ: 'SIDR_REQ',
         SIDR_REP: 'SIDR_REP'}

# RC opcodes a requester sends with its own PSNs (not ACKs or read
# responses, which carry the PSNs of the requests they answer)
RC_REQUESTS = set(range(0, 13)) | {19, 20, 22, 23}
UD_OPCODES = {100, 101}

# (name, golden capture, server argv, client argv, kind for dropin's
# Pair): the golden runs' arguments, each tool on its default port, so
# that the service IDs are the same too
RUNS = [
    ('rping', 'rdma_cm_rping.pcap',
     ['rping', '-s', '-a', dropin.SERVER, '-C', '3', '-S', '64', '-v'],
     ['rping', '-c', '-a', dropin.SERVER, '-C', '3', '-S', '64', '-v'],
     'rping'),
    ('ib_send_bw', 'rdma_cm_send_bw.pcap',
     ['ib_send_bw', '-d', 'droce0', '-F', '-m', '1024', '-n', '20', '-s',
      '64', '-R'],
     ['ib_send_bw', '-d', 'droce0', '-F', '-m', '1024', '-n', '20', '-s',
      '64', '-R', dropin.SERVER],
     'perftest'),
    ('udaddy', 'rdma_cm_udaddy.pcap',
     ['udaddy', '-b', dropin.SERVER, '-C', '4', '-S', '64'],
     ['udaddy', '-s', dropin.SERVER, '-b', dropin.CLIENT, '-C', '4', '-S',
      '64'],
     'udaddy'),
]

# ------------------------------------------------------------------------
# What is compared, and why.

SAME = 'same'
FREE = 'free'
REL = 'rel'


def RANGE(lo, hi, why):
    return ('range', lo, hi, why)


# 4.096 us x 2^n: from about 1 ms to about 69 s. Linux's rdma_cm asks
# 20 (4.3 s) for both CM response timeouts and 19 (2.1 s) for the ACK
# timeout (the packet lifetime 18 plus one); droce 16 and 14.
TIMEOUT = RANGE(8, 24, 'the implementation\'s, 4.096 us x 2^n: Linux 20 '
                '(19 for the ACK timeout), droce 16 (14)')

BYTES = (FREE, 'the bytes of a header whose fields are compared one '
         'by one')

# Every CM MAD: the IPv4, UDP, BTH, DETH and MAD headers
COMMON = {
    'ip.version': (SAME, 'IPv4 addresses on both sides'),
    'ip.hdr_len': (SAME, 'no IP options'),
    'ip.dsfield': (SAME, 'rdma_cm\'s ToS: 0 unless the tool sets one'),
    'ip.dsfield.dscp': (SAME, 'as ip.dsfield'),
    'ip.dsfield.ecn': (SAME, 'as ip.dsfield'),
    'ip.len': (SAME, 'a MAD is 256 bytes'),
    'ip.id': (FREE, 'DF is set: RFC 6864 lets an atomic datagram\'s ID be '
              'anything (Linux counts, droce sends 0)'),
    'ip.flags': (SAME, 'DF: RoCEv2 is not fragmented'),
    'ip.flags.rb': (SAME, 'as ip.flags'),
    'ip.flags.df': (SAME, 'as ip.flags'),
    'ip.flags.mf': (SAME, 'as ip.flags'),
    'ip.frag_offset': (SAME, 'as ip.flags'),
    'ip.ttl': (SAME, 'the path\'s hop limit, 64'),
    'ip.proto': (SAME, 'UDP'),
    'ip.checksum': (FREE, 'follows from the IP ID and the addresses'),
    'ip.src': (FREE, 'the hosts\' own addresses (the GIDs and rdma_cm\'s '
               'IP header are checked against them: addresses)'),
    'ip.dst': (FREE, 'as ip.src'),
    'udp.srcport': (FREE, 'RoCEv2 leaves the source port to the sender '
                    '(rxe hashes the QPN)'),
    'udp.dstport': (SAME, 'RoCEv2\'s port, 4791'),
    'udp.length': (SAME, 'a MAD is 256 bytes'),
    'udp.checksum': (SAME, 'RoCEv2 senders may send 0, and both do'),
    'udp.checksum.status': (SAME, 'as udp.checksum'),
    'udp.payload': BYTES,
    'infiniband.bth': BYTES,
    'infiniband.bth.opcode': (SAME, 'MADs go as UD SEND Only (100)'),
    'infiniband.bth.se': (SAME, 'no solicited event'),
    'infiniband.bth.m': (SAME, 'no migration'),
    'infiniband.bth.padcnt': (SAME, '256 bytes need no pad'),
    'infiniband.bth.tver': (SAME, 'transport header version 0'),
    'infiniband.bth.p_key': (SAME, 'the default partition, 0xffff'),
    'infiniband.reserved': (SAME, 'reserved: zero'),
    'infiniband.bth.destqp': (SAME, 'QP1, the GSI'),
    'infiniband.bth.a': (FREE, 'AckReq means nothing on UD; rxe sets it on '
                         'its GSI QP\'s packets only (not on its UD QPs\': '
                         'rdma_cm_udaddy.pcap frames 3-10), droce does not'),
    'infiniband.bth.reserved7': (SAME, 'reserved: zero'),
    'infiniband.bth.psn': (REL, 'mad_psn'),
    'infiniband.deth': BYTES,
    'infiniband.deth.q_key': (SAME, 'the GSI\'s well-known Q_Key '
                              '0x80010000'),
    'infiniband.deth.srcqp': (SAME, 'sent from QP1'),
    'infiniband.mad': BYTES,
    'infiniband.mad.baseversion': (SAME, 'MAD base version 1'),
    'infiniband.mad.mgmtclass': (SAME, 'the CM class, 0x07'),
    'infiniband.mad.classversion': (SAME, 'CM class version 2'),
    'infiniband.mad.method': (SAME, 'Send(), 0x03'),
    'infiniband.mad.status': (SAME, 'zero in a Send()'),
    'infiniband.mad.classspecific': (SAME, 'zero in the CM class'),
    'infiniband.mad.transactionid': (REL, 'rep_answers_req/'
                                     'drep_answers_dreq/'
                                     'sidr_rep_answers_req (an answer '
                                     'carries the TID of what it answers; '
                                     'the values are the sender\'s own)'),
    'infiniband.mad.attributeid': (SAME, 'the message type'),
    'infiniband.mad.attributemodifier': (SAME, 'zero in the CM class'),
    'infiniband.mad.data': BYTES,
    'infiniband.smplid.smpdata': BYTES,
    'infiniband.invariant.crc': (REL, 'icrc'),
}

TOOL = 'what the tool asks for (rdma_conn_param), the same on both sides'
NO_ALT = (SAME, 'no alternate path: all zero')
NO_PRIV = (SAME, 'the tool\'s private data: none, zero-filled')

FIELDS = {
    REQ: {
        'infiniband.cm.req': (REL, 'rep_answers_req (local comm ID, '
                              'nonzero)'),
        'infiniband.cm.req.serviceid': (SAME, 'rdma_cm\'s: 0x0000000001, '
                                        'port space, port; the tool\'s '
                                        'default port (also service_id)'),
        'infiniband.cm.req.serviceid.prefix': (SAME, 'rdma_cm\'s IP '
                                               'service ID prefix'),
        'infiniband.cm.req.serviceid.protocol': (SAME, 'RDMA_PS_TCP, '
                                                 '0x06'),
        'infiniband.cm.req.serviceid.dport': (SAME, 'the tool\'s default '
                                              'port'),
        'infiniband.cm.req.localcaguid': (REL, 'guid_from_mac'),
        'infiniband.cm.req.localqkey': (SAME, 'zero for RC'),
        'infiniband.cm.req.localqpn': (REL, 'qpns_carry_data'),
        'infiniband.cm.req.responderres': (SAME, TOOL),
        'infiniband.cm.req.localeecn': (SAME, 'no RD: zero'),
        'infiniband.cm.req.initdepth': (SAME, TOOL),
        'infiniband.cm.req.remoteeecn': (SAME, 'no RD: zero'),
        'infiniband.cm.req.remoteresptout': TIMEOUT,
        'infiniband.cm.req.transpsvctype': (SAME, 'RC, 0'),
        'infiniband.cm.req.e2eflowctrl': (SAME, 'as Linux\'s rdma_cm: 0'),
        'infiniband.cm.req.startpsn': (REL, 'req_start_psn'),
        'infiniband.cm.req.localresptout': TIMEOUT,
        'infiniband.cm.req.retrcount': (SAME, TOOL),
        'infiniband.cm.req.pkey': (SAME, 'the default partition, 0xffff'),
        'infiniband.cm.req.pppmtu': (SAME, 'the path MTU: 1024 (3) on a '
                                     '1500-byte Ethernet MTU, -m 1024'),
        'infiniband.cm.req.rdcexist': (SAME, 'no RD: zero'),
        'infiniband.cm.req.rnrretrcount': (SAME, TOOL),
        'infiniband.cm.req.maxcmretr': RANGE(1, 15, 'the implementation\'s: '
                                             'Linux 15, droce 15'),
        'infiniband.cm.req.srq': (SAME, 'the tool\'s QP has no SRQ'),
        'infiniband.cm.req.ext_transport': (SAME, 'none: zero'),
        'infiniband.cm.req.prim_locallid': (SAME, 'RoCE has no LIDs: the '
                                            'permissive LID 0xffff'),
        'infiniband.cm.req.prim_remotelid': (SAME, 'as prim_locallid'),
        'infiniband.cm.req.prim_localgid_ipv4': (REL, 'addresses'),
        'infiniband.cm.req.prim_remotegid_ipv4': (REL, 'addresses'),
        'infiniband.cm.req.prim_flowlabel': (FREE, 'tshark 4.0 reads this '
                                             'word from the wrong bytes: '
                                             'see mad.data:req.*'),
        'infiniband.cm.req.prim_reserved0': (FREE, 'as prim_flowlabel'),
        'infiniband.cm.req.prim_pktrate': (FREE, 'as prim_flowlabel'),
        'infiniband.cm.req.prim_tfcclass': (SAME, 'rdma_cm\'s ToS: 0'),
        'infiniband.cm.req.prim_hoplim': (SAME, 'the path\'s hop limit, '
                                          '64'),
        'infiniband.cm.req.prim_sl': (SAME, 'service level 0'),
        'infiniband.cm.req.prim_subnetlocal': (SAME, 'routed (RoCEv2, hop '
                                               'limit above 1): 0'),
        'infiniband.cm.req.prim_reserved1': (SAME, 'reserved: zero'),
        'infiniband.cm.req.prim_localacktout': TIMEOUT,
        'infiniband.cm.req.prim_reserved2': (SAME, 'reserved: zero'),
        'infiniband.cm.req.alt_locallid': NO_ALT,
        'infiniband.cm.req.alt_remotelid': NO_ALT,
        'infiniband.cm.req.alt_localgid': NO_ALT,
        'infiniband.cm.req.alt_remotegid': NO_ALT,
        'infiniband.cm.req.alt_flowlabel': NO_ALT,
        'infiniband.cm.req.alt_reserved0': NO_ALT,
        'infiniband.cm.req.alt_pktrate': NO_ALT,
        'infiniband.cm.req.alt_tfcclass': NO_ALT,
        'infiniband.cm.req.alt_hoplim': NO_ALT,
        'infiniband.cm.req.alt_sl': NO_ALT,
        'infiniband.cm.req.alt_subnetlocal': NO_ALT,
        'infiniband.cm.req.alt_reserved1': NO_ALT,
        'infiniband.cm.req.alt_localacktout': NO_ALT,
        'infiniband.cm.req.ip_cm': BYTES,
        'infiniband.cm.req.ip_cm.majv': (SAME, 'rdma_cm\'s IP header, '
                                         'version 0.0'),
        'infiniband.cm.req.ip_cm.minv': (SAME, 'as ip_cm.majv'),
        'infiniband.cm.req.ip_cm.ipv': (SAME, 'IPv4: 4'),
        'infiniband.cm.req.ip_cm.reserved': (SAME, 'reserved: zero'),
        'infiniband.cm.req.ip_cm.sport': (REL, 'addresses (the active '
                                          'side\'s rdma_cm port, nonzero)'),
        'infiniband.cm.req.ip_cm.sip4': (REL, 'addresses'),
        'infiniband.cm.req.ip_cm.dip4': (REL, 'addresses'),
        'infiniband.cm.req.ip_cm.private': NO_PRIV,
        'mad.data:req.prim_flowlabel': (FREE, 'RoCEv2: the sender\'s; Linux '
                                        'hashes rdma_cm\'s two ports into '
                                        'it, droce sends 0 (unspecified)'),
        'mad.data:req.prim_reserved0': (SAME, 'reserved: zero'),
        'mad.data:req.prim_pktrate': (FREE, 'the port\'s rate (0: its '
                                      'current rate); Linux takes it from '
                                      'the link speed'),
    },
    REP: {
        'infiniband.cm.rep': (REL, 'rep_answers_req (local comm ID, '
                              'nonzero)'),
        'infiniband.cm.rep.remotecommid': (REL, 'rep_answers_req'),
        'infiniband.cm.rep.localqkey': (SAME, 'zero for RC'),
        'infiniband.cm.rep.localqpn': (REL, 'qpns_carry_data'),
        'infiniband.cm.rep.localeecn': (SAME, 'no RD: zero'),
        'infiniband.cm.rep.startpsn': (REL, 'rep_start_psn'),
        'infiniband.cm.rep.respres': (SAME, TOOL),
        'infiniband.cm.rep.initdepth': (SAME, TOOL),
        'infiniband.cm.rep.tgtackdelay': (FREE, 'the device\'s ACK delay '
                                          '(rxe 15, droce 0)'),
        'infiniband.cm.rep.failoveracc': (SAME, 'no alternate path: 0'),
        'infiniband.cm.rep.e2eflowctrl': (SAME, 'as Linux\'s rdma_cm: 0'),
        'infiniband.cm.rep.rnrretrcount': (SAME, TOOL),
        'infiniband.cm.rep.srq': (SAME, 'the tool\'s QP has no SRQ'),
        'infiniband.cm.rep.reserved': (SAME, 'reserved: zero'),
        'infiniband.cm.rep.localcaguid': (REL, 'guid_from_mac'),
        'infiniband.cm.rep.private': NO_PRIV,
    },
    RTU: {
        'infiniband.cm.rtu.localcommid': (REL, 'rtu_names_connection'),
        'infiniband.cm.rtu.remotecommid': (REL, 'rtu_names_connection'),
        'infiniband.cm.rtu.private': NO_PRIV,
    },
    DREQ: {
        'infiniband.cm.dreq.localcommid': (REL, 'dreq_names_connection'),
        'infiniband.cm.dreq.remotecommid': (REL, 'dreq_names_connection'),
        # (tshark names the DREQ's remote QPN with a REQ field's name)
        'infiniband.cm.req.remoteqpneecn': (REL, 'dreq_names_connection'),
        'infiniband.cm.dreq.private': NO_PRIV,
    },
    DREP: {
        'infiniband.cm.drsp.localcommid': (REL, 'drep_answers_dreq'),
        'infiniband.cm.drsp.remotecommid': (REL, 'drep_answers_dreq'),
        'infiniband.cm.drsp.private': NO_PRIV,
    },
    SIDR_REQ: {
        'mad.data:sidr_req.requestid': (REL, 'sidr_rep_answers_req'),
        'mad.data:sidr_req.pkey': (SAME, 'the default partition, 0xffff'),
        'mad.data:sidr_req.reserved': (SAME, 'reserved: zero'),
        'mad.data:sidr_req.serviceid': (SAME, 'rdma_cm\'s: 0x0000000001, '
                                        'RDMA_PS_UDP 0x11, the tool\'s '
                                        'default port (also service_id)'),
        'mad.data:sidr_req.ip_cm.majv': (SAME, 'rdma_cm\'s IP header, '
                                         'version 0.0'),
        'mad.data:sidr_req.ip_cm.minv': (SAME, 'as ip_cm.majv'),
        'mad.data:sidr_req.ip_cm.ipv': (SAME, 'IPv4: 4'),
        'mad.data:sidr_req.ip_cm.reserved': (SAME, 'reserved: zero'),
        'mad.data:sidr_req.ip_cm.sport': (REL, 'addresses (nonzero)'),
        'mad.data:sidr_req.ip_cm.sip4': (REL, 'addresses'),
        'mad.data:sidr_req.ip_cm.dip4': (REL, 'addresses'),
        'mad.data:sidr_req.ip_cm.private': NO_PRIV,
    },
    SIDR_REP: {
        'mad.data:sidr_rep.requestid': (REL, 'sidr_rep_answers_req'),
        'mad.data:sidr_rep.status': (SAME, 'valid: 0'),
        'mad.data:sidr_rep.addinfolen': (SAME, 'no additional information'),
        'mad.data:sidr_rep.reserved': (SAME, 'reserved: zero'),
        'mad.data:sidr_rep.qpn': (REL, 'sidr_qp_carries_data'),
        'mad.data:sidr_rep.reserved2': (SAME, 'reserved: zero'),
        'mad.data:sidr_rep.serviceid': (SAME, 'the SIDR_REQ\'s (also '
                                        'sidr_rep_answers_req)'),
        'mad.data:sidr_rep.qkey': (SAME, 'rdma_cm\'s UDP Q_Key 0x01234567 '
                                   '(also sidr_qp_carries_data)'),
        'mad.data:sidr_rep.classportinfo': (SAME, 'none: zero'),
        'mad.data:sidr_rep.private': NO_PRIV,
    },
}

# Fields read from the MAD data bytes (offsets in the 232 bytes after the
# MAD header; vol. 1, 12.6 and 12.11): (name, offset, length, how)
# how: 'x' a number shown in hex, 'hi'/'lo' a byte's nibble, 'ip4' the
# last 4 of 16 bytes (rdma_cm's IP header), 'b' bytes
MAD_DATA = {
    REQ: [
        # the word of flow label (20 bits), reserved (6), packet rate (6)
        ('req.prim_flowlabel', 88, 4, lambda v: v >> 12),
        ('req.prim_reserved0', 88, 4, lambda v: (v >> 6) & 0x3f),
        ('req.prim_pktrate', 88, 4, lambda v: v & 0x3f),
    ],
    SIDR_REQ: [
        ('sidr_req.requestid', 0, 4, 'x'),
        ('sidr_req.pkey', 4, 2, 'x'),
        ('sidr_req.reserved', 6, 2, 'x'),
        ('sidr_req.serviceid', 8, 8, 'x'),
        ('sidr_req.ip_cm.majv', 16, 1, 'hi'),
        ('sidr_req.ip_cm.minv', 16, 1, 'lo'),
        ('sidr_req.ip_cm.ipv', 17, 1, 'hi'),
        ('sidr_req.ip_cm.reserved', 17, 1, 'lo'),
        ('sidr_req.ip_cm.sport', 18, 2, 'x'),
        ('sidr_req.ip_cm.sip4', 20, 16, 'ip4'),
        ('sidr_req.ip_cm.dip4', 36, 16, 'ip4'),
        ('sidr_req.ip_cm.private', 52, 180, 'b'),
    ],
    SIDR_REP: [
        ('sidr_rep.requestid', 0, 4, 'x'),
        ('sidr_rep.status', 4, 1, 'x'),
        ('sidr_rep.addinfolen', 5, 1, 'x'),
        ('sidr_rep.reserved', 6, 2, 'x'),
        ('sidr_rep.qpn', 8, 3, 'x'),
        ('sidr_rep.reserved2', 11, 1, 'x'),
        ('sidr_rep.serviceid', 12, 8, 'x'),
        ('sidr_rep.qkey', 20, 4, 'x'),
        ('sidr_rep.classportinfo', 24, 72, 'b'),
        ('sidr_rep.private', 96, 136, 'b'),
    ],
}


def rule_of(attr, key):
    """The rule of a field (key: its name, '+offset' for a reserved one
    or one that occurs twice), or None."""
    name = key.split('+')[0]
    return FIELDS.get(attr, {}).get(name) or COMMON.get(name)


# ------------------------------------------------------------------------
# Reading a capture: tshark's PDML.

class Frame:
    def __init__(self):
        self.fields = {}
        self.complaints = []
        self.attr = None
        # whose capture it is from, in droce's run
        self.side = ''

    def int(self, key):
        return int(self.fields[key], 0)

    def __str__(self):
        return '%sframe %d' % (self.side, self.num)


def decode_mad_data(attr, data, fields):
    for name, off, n, how in MAD_DATA.get(attr, []):
        raw = data[off:off + n]
        v = int.from_bytes(raw, 'big')
        if callable(how):
            text = '0x%x' % how(v)
        elif how == 'x':
            text = '0x%0*x' % (2 * n, v)
        elif how == 'hi':
            text = '0x%x' % (v >> 4)
        elif how == 'lo':
            text = '0x%x' % (v & 0xf)
        elif how == 'ip4':
            text = str(ipaddress.IPv4Address(raw[12:16]))
        else:
            text = raw.hex()
        fields['mad.data:' + name] = text


def read_capture(tshark, pcap):
    """The frames of a capture, as tshark decodes them."""
    out = subprocess.run([tshark, '-r', pcap, '-T', 'pdml'], check=True,
                         stdout=subprocess.PIPE).stdout
    raw = roce_check.read_pcap(pcap)
    frames = []
    for pkt in ET.fromstring(out).iter('packet'):
        f = Frame()
        for proto in pkt.findall('proto'):
            pname = proto.get('name')
            if pname == 'frame':
                for el in proto.iter('field'):
                    if el.get('name') == 'frame.number':
                        f.num = int(el.get('show'))
                    elif el.get('name') == 'frame.time_epoch':
                        f.time = float(el.get('show'))
            elif pname == 'eth':
                for el in proto.iter('field'):
                    if el.get('name') == 'eth.src':
                        f.mac = el.get('show')
            elif pname in ('ip', 'udp', 'infiniband'):
                base = int(proto.get('pos'))
                for el in proto.iter('field'):
                    name = el.get('name')
                    if name and name.startswith('_ws.'):
                        f.complaints.append(el.get('showname') or name)
                        continue
                    # (tshark's own fields, not the frame's bytes, have
                    # no size)
                    if not name or el.get('hide') == 'yes' or \
                            el.get('size') == '0':
                        continue
                    key = name
                    if 'reserved' in name or key in f.fields:
                        key = '%s+%d' % (name, int(el.get('pos')) - base)
                    f.fields[key] = el.get('show')
                    if name == 'infiniband.mad.data':
                        f.mad_data = bytes.fromhex(el.get('value'))
            elif pname.startswith('_ws.'):
                f.complaints.append(proto.get('showname') or pname)
        f.raw = raw[f.num - 1]
        if 'ip.src' not in f.fields or \
                'infiniband.bth.opcode' not in f.fields:
            frames.append(f)
            continue
        f.src = f.fields['ip.src']
        f.dst = f.fields['ip.dst']
        f.opcode = f.int('infiniband.bth.opcode')
        f.destqp = f.int('infiniband.bth.destqp')
        f.psn = f.int('infiniband.bth.psn')
        if 'infiniband.deth.q_key' in f.fields:
            f.qkey = f.int('infiniband.deth.q_key')
        if f.destqp == 1 and 'infiniband.mad.attributeid' in f.fields and \
                f.int('infiniband.mad.mgmtclass') == 0x07:
            f.attr = f.int('infiniband.mad.attributeid')
            f.tid = f.int('infiniband.mad.transactionid')
            decode_mad_data(f.attr, f.mad_data, f.fields)
        frames.append(f)
    return frames


class Capture:
    """The RoCE frames of one run, in the order they were sent."""

    def __init__(self, name, frames):
        self.name = name
        self.frames = [f for f in frames if hasattr(f, 'opcode')]
        self.mads = [f for f in self.frames if f.attr is not None]

    def of(self, attr):
        return [f for f in self.mads if f.attr == attr]


def droce_capture(tshark, name, server_pcap, client_pcap):
    """droce's run: what each side sent, from its own mirror (a side's
    capture ends when its process does, and a client started again
    after a REJ starts its file afresh), merged in time order."""
    frames = []
    for pcap, me, side in ((server_pcap, dropin.SERVER, 'server\'s '),
                           (client_pcap, dropin.CLIENT, 'client\'s ')):
        for f in read_capture(tshark, pcap):
            if f.fields.get('ip.src') == me:
                f.side = side
                frames.append(f)
    frames.sort(key=lambda f: f.time)
    return Capture(name, frames)


# ------------------------------------------------------------------------
# The relational rules: each takes a capture and gives (instances
# checked, failures); each is run on golden's capture and droce's.

def hexs(v):
    return '0x%x' % v


def connections(cap):
    """(REQ, REP) of each REP that answers a REQ of the capture."""
    out = []
    for rep in cap.of(REP):
        for req in cap.of(REQ):
            if req.int('infiniband.cm.req') == \
                    rep.int('infiniband.cm.rep.remotecommid') and \
                    req.src == rep.dst:
                out.append((req, rep))
                break
    return out


def rule_rep_answers_req(cap):
    """Each REQ's and REP's local comm ID is nonzero; each REP names
    the local comm ID of a REQ its receiver sent, in its remote comm ID,
    and carries that REQ's transaction ID."""
    bad, n = [], 0
    for req in cap.of(REQ):
        n += 1
        if req.int('infiniband.cm.req') == 0:
            bad.append('REQ %s: local comm ID 0' % req)
    pairs = dict((rep.num, req) for req, rep in connections(cap))
    for rep in cap.of(REP):
        n += 1
        if rep.int('infiniband.cm.rep') == 0:
            bad.append('REP %s: local comm ID 0' % rep)
        req = pairs.get(rep.num)
        if req is None:
            bad.append('REP %s: remote comm ID %s is no REQ\'s' %
                       (rep, rep.fields['infiniband.cm.rep.remotecommid']))
        elif rep.tid != req.tid:
            bad.append('REP %s: TID %s, its REQ\'s (%s) %s' %
                       (rep, hexs(rep.tid), req, hexs(req.tid)))
    return n, bad


def rule_rtu_names_connection(cap):
    """Each RTU comes from the REQ's sender and names the REQ's local
    comm ID as its local one and the REP's as its remote one."""
    bad, n = [], 0
    conns = connections(cap)
    for rtu in cap.of(RTU):
        n += 1
        ids = (rtu.int('infiniband.cm.rtu.localcommid'),
               rtu.int('infiniband.cm.rtu.remotecommid'))
        if not any(ids == (req.int('infiniband.cm.req'),
                           rep.int('infiniband.cm.rep')) and
                   rtu.src == req.src for req, rep in conns):
            bad.append('RTU %s: comm IDs %s/%s name no connection '
                       'from its sender' % (rtu, hexs(ids[0]),
                                            hexs(ids[1])))
    return n, bad


def rule_dreq_names_connection(cap):
    """Each DREQ names its sender's comm ID as local and the peer's as
    remote, and the peer's QPN as the remote QPN; each connection has a
    DREQ. (ib_send_bw's client leaves the connection of its parameter
    exchange up, ends, and Linux sends the DREQ then: the kernel
    destroys the ids of a process that closed its rdma_cm file, and an
    established connection's destruction sends a DREQ.)"""
    bad, n = [], 0
    conns = connections(cap)
    named = set()
    for d in cap.of(DREQ):
        n += 1
        ids = (d.int('infiniband.cm.dreq.localcommid'),
               d.int('infiniband.cm.dreq.remotecommid'))
        qpn = d.int('infiniband.cm.req.remoteqpneecn')
        want = None
        for req, rep in conns:
            a = (req.int('infiniband.cm.req'), req.src,
                 rep.int('infiniband.cm.rep.localqpn'))
            p = (rep.int('infiniband.cm.rep'), rep.src,
                 req.int('infiniband.cm.req.localqpn'))
            for me, peer in ((a, p), (p, a)):
                if ids == (me[0], peer[0]) and d.src == me[1]:
                    want = me[2]
                    named.add(rep.num)
        if want is None:
            bad.append('DREQ %s: comm IDs %s/%s name no connection '
                       'of its sender' % (d, hexs(ids[0]),
                                          hexs(ids[1])))
        elif qpn != want:
            bad.append('DREQ %s: remote QPN %s, the peer\'s is %s' %
                       (d, hexs(qpn), hexs(want)))
    for req, rep in conns:
        if rep.num not in named:
            bad.append('the connection of REQ %s and REP %s: '
                       'no DREQ from either side' % (req, rep))
    return n, bad


def rule_drep_answers_dreq(cap):
    """Each DREQ is answered by a DREP from its receiver that names the
    DREQ's comm IDs the other way round and carries its TID; each DREP
    answers a DREQ."""
    bad, n = [], 0
    asked = set()
    for d in cap.of(DREQ):
        ids = (d.int('infiniband.cm.dreq.remotecommid'),
               d.int('infiniband.cm.dreq.localcommid'))
        if ids in asked:
            # the same DREQ sent again: its DREP is the first one's
            continue
        asked.add(ids)
        n += 1
        reps = [e for e in cap.of(DREP)
                if (e.int('infiniband.cm.drsp.localcommid'),
                    e.int('infiniband.cm.drsp.remotecommid')) == ids and
                e.src == d.dst]
        if not reps:
            sent = len([x for x in cap.of(DREQ) if x.src == d.src and
                        (x.int('infiniband.cm.dreq.remotecommid'),
                         x.int('infiniband.cm.dreq.localcommid')) == ids])
            bad.append('DREQ %s (comm IDs %s/%s, from %s, sent %d '
                       'time%s): no DREP' %
                       (d, hexs(ids[1]), hexs(ids[0]), d.src, sent,
                        '' if sent == 1 else 's'))
        elif not any(e.tid == d.tid for e in reps):
            bad.append('DREQ %s: TID %s, its DREP\'s (%s) %s' %
                       (d, hexs(d.tid), reps[0], hexs(reps[0].tid)))
    for e in cap.of(DREP):
        n += 1
        ids = (e.int('infiniband.cm.drsp.localcommid'),
               e.int('infiniband.cm.drsp.remotecommid'))
        if ids not in asked:
            bad.append('DREP %s: comm IDs %s/%s answer no DREQ' %
                       (e, hexs(ids[0]), hexs(ids[1])))
    return n, bad


def first_request(cap, src, dst, qpn):
    for f in cap.frames:
        if f.src == src and f.dst == dst and f.destqp == qpn and \
                f.opcode in RC_REQUESTS:
            return f
    return None


def start_psn_rule(cap, which):
    bad, n = [], 0
    for req, rep in connections(cap):
        if which == REQ:
            # the passive side sends to the QPN the REQ names
            msg, sender, qpn = req, rep.src, req.int(
                'infiniband.cm.req.localqpn')
            psn = req.int('infiniband.cm.req.startpsn')
        else:
            msg, sender, qpn = rep, req.src, rep.int(
                'infiniband.cm.rep.localqpn')
            psn = rep.int('infiniband.cm.rep.startpsn')
        f = first_request(cap, sender, msg.src, qpn)
        if f is None:
            # (ib_send_bw's server sends no request on its test
            # connection, only ACKs)
            continue
        n += 1
        if f.psn != psn:
            bad.append('%s %s: starting PSN %s, but the first request '
                       'to QPN %s (%s) has PSN %s' %
                       (NAMES[which], msg, hexs(psn), hexs(qpn), f,
                        hexs(f.psn)))
    return n, bad


def rule_req_start_psn(cap):
    """The REQ's starting PSN is the PSN of the first request the
    passive side sends on the connection (the PSN the REQ's sender
    expects to receive)."""
    return start_psn_rule(cap, REQ)


def rule_rep_start_psn(cap):
    """The REP's starting PSN is the PSN of the first request the active
    side sends on the connection (the PSN the REP's sender expects)."""
    return start_psn_rule(cap, REP)


def rule_qpns_carry_data(cap):
    """The connection's RC frames go to the QPNs the REQ and the REP
    name: at least one each way, and none between the two sides to
    another QPN but QP1's and other connections'."""
    bad, n = [], 0
    conns = connections(cap)
    qpns = set()
    for req, rep in conns:
        qpns.add((req.src, rep.int('infiniband.cm.rep.localqpn')))
        qpns.add((rep.src, req.int('infiniband.cm.req.localqpn')))
    for req, rep in conns:
        n += 1
        for src, dst, qpn in (
                (req.src, rep.src, rep.int('infiniband.cm.rep.localqpn')),
                (rep.src, req.src, req.int('infiniband.cm.req.localqpn'))):
            if not any(f.src == src and f.dst == dst and f.destqp == qpn
                       for f in cap.frames):
                bad.append('%s %s: no frame from %s to QPN %s' %
                           ('REP' if src == req.src else 'REQ',
                            rep if src == req.src else req, src,
                            hexs(qpn)))
    for f in cap.frames:
        if f.destqp != 1 and f.opcode not in UD_OPCODES and \
                (f.src, f.destqp) not in qpns:
            bad.append('%s: RC frame from %s to QPN %s, which no REQ '
                       'or REP named' % (f, f.src, hexs(f.destqp)))
    return n, bad


def rule_addresses(cap):
    """The REQ's GIDs are the IPv4-mapped addresses of its frame; the IP
    CM header of REQ and SIDR_REQ holds the frame's addresses and a
    nonzero source port."""
    bad, n = [], 0
    for f in cap.of(REQ) + cap.of(SIDR_REQ):
        n += 1
        if f.attr == REQ:
            pre = 'infiniband.cm.req.'
            got = [f.fields[pre + 'prim_localgid_ipv4'],
                   f.fields[pre + 'prim_remotegid_ipv4'],
                   f.fields[pre + 'ip_cm.sip4'], f.fields[pre + 'ip_cm.dip4']]
            want = [f.src, f.dst] * 2
        else:
            pre = 'mad.data:sidr_req.'
            got = [f.fields[pre + 'ip_cm.sip4'], f.fields[pre + 'ip_cm.dip4']]
            want = [f.src, f.dst]
        if got != want:
            bad.append('%s %s: %s, the frame\'s addresses %s' %
                       (NAMES[f.attr], f, got, want))
        if int(f.fields[pre + 'ip_cm.sport'], 0) == 0:
            bad.append('%s %s: IP CM source port 0' %
                       (NAMES[f.attr], f))
    return n, bad


def eui64(mac):
    b = bytes.fromhex(mac.replace(':', ''))
    return int.from_bytes(bytes([b[0] ^ 2]) + b[1:3] + b'\xff\xfe' + b[3:],
                          'big')


def rule_guid_from_mac(cap):
    """The local CA GUID of REQ and REP is the EUI-64 of the sender's
    MAC address (rxe's node GUID, and droce's)."""
    bad, n = [], 0
    for f in cap.of(REQ) + cap.of(REP):
        n += 1
        key = 'infiniband.cm.%s.localcaguid' % NAMES[f.attr].lower()
        if f.int(key) != eui64(f.mac):
            bad.append('%s %s: local CA GUID %s, the EUI-64 of %s is '
                       '%s' % (NAMES[f.attr], f, f.fields[key], f.mac,
                               hexs(eui64(f.mac))))
    return n, bad


def rule_service_id(cap):
    """The service ID is rdma_cm's: 0x0000000001, the port space's low
    byte (TCP 0x06 for REQ, UDP 0x11 for SIDR_REQ), the port."""
    bad, n = [], 0
    for f in cap.of(REQ) + cap.of(SIDR_REQ):
        n += 1
        if f.attr == REQ:
            sid = f.int('infiniband.cm.req.serviceid')
            parts = (f.int('infiniband.cm.req.serviceid.protocol'),
                     f.int('infiniband.cm.req.serviceid.dport'))
            ps = 0x06
        else:
            sid = f.int('mad.data:sidr_req.serviceid')
            parts = ((sid >> 16) & 0xff, sid & 0xffff)
            ps = 0x11
        if sid >> 24 != 1 or (sid >> 16) & 0xff != ps or \
                parts != ((sid >> 16) & 0xff, sid & 0xffff):
            bad.append('%s %s: service ID %s is not port space %s, '
                       'port %s' % (NAMES[f.attr], f, hexs(sid),
                                    hexs(ps), hexs(parts[1])))
    return n, bad


def rule_mad_psn(cap):
    """A UD requester's PSN goes up by one a packet: each side's MADs
    have consecutive PSNs."""
    bad, n = [], 0
    last = {}
    for f in cap.mads:
        n += 1
        if f.src in last and f.psn != (last[f.src].psn + 1) & 0xffffff:
            bad.append('%s: PSN %s after %s (%s)' %
                       (f, hexs(f.psn), hexs(last[f.src].psn),
                        last[f.src].num))
        last[f.src] = f
    return n, bad


def rule_icrc(cap):
    """Each MAD's ICRC is the one computed from the RoCEv2 rules
    (roce_check.reference_icrc)."""
    bad, n = [], 0
    for f in cap.mads:
        n += 1
        want = roce_check.reference_icrc(f.raw)
        if roce_check.stored_icrc(f.raw) != want:
            bad.append('%s: ICRC %08x, the RoCEv2 rules give %08x' %
                       (f, roce_check.stored_icrc(f.raw), want))
    return n, bad


def rule_no_complaint(cap):
    """tshark decodes each MAD without a warning or a malformed mark."""
    bad, n = [], 0
    for f in cap.mads:
        n += 1
        if f.complaints:
            bad.append('%s: tshark says %s' % (f, f.complaints[:3]))
    return n, bad


def rule_sidr_rep_answers_req(cap):
    """Each SIDR_REP comes from a SIDR_REQ's receiver with the
    SIDR_REQ's request ID, transaction ID and service ID."""
    bad, n = [], 0
    reqs = cap.of(SIDR_REQ)
    for rep in cap.of(SIDR_REP):
        n += 1
        rid = rep.int('mad.data:sidr_rep.requestid')
        req = [q for q in reqs
               if q.int('mad.data:sidr_req.requestid') == rid and
               q.src == rep.dst]
        if not req:
            bad.append('SIDR_REP %s: request ID %s is no SIDR_REQ\'s' %
                       (rep, hexs(rid)))
            continue
        q = req[0]
        if rep.tid != q.tid:
            bad.append('SIDR_REP %s: TID %s, its SIDR_REQ\'s %s' %
                       (rep, hexs(rep.tid), hexs(q.tid)))
        if rep.int('mad.data:sidr_rep.serviceid') != \
                q.int('mad.data:sidr_req.serviceid'):
            bad.append('SIDR_REP %s: service ID %s, its SIDR_REQ\'s %s'
                       % (rep, rep.fields['mad.data:sidr_rep.serviceid'],
                          q.fields['mad.data:sidr_req.serviceid']))
    return n, bad


def rule_sidr_qp_carries_data(cap):
    """The SIDR_REQ's sender sends its datagrams to the QPN and with the
    Q_Key the SIDR_REP gives (at least one, and none elsewhere)."""
    bad, n = [], 0
    for rep in cap.of(SIDR_REP):
        if rep.int('mad.data:sidr_rep.status') != 0:
            continue
        n += 1
        qpn = rep.int('mad.data:sidr_rep.qpn')
        qkey = rep.int('mad.data:sidr_rep.qkey')
        data = [f for f in cap.frames
                if f.src == rep.dst and f.dst == rep.src and
                f.opcode in UD_OPCODES and f.destqp != 1]
        if not data:
            bad.append('SIDR_REP %s: no datagram follows from %s' %
                       (rep, rep.dst))
        for f in data:
            if (f.destqp, f.qkey) != (qpn, qkey):
                bad.append('%s: to QPN %s with Q_Key %s, the SIDR_REP '
                           '(%s) gave %s and %s' %
                           (f, hexs(f.destqp), hexs(f.qkey), rep,
                            hexs(qpn), hexs(qkey)))
    return n, bad


# (name, the message types it is about: it applies when golden has one)
RULES = [
    ('rep_answers_req', rule_rep_answers_req, {REQ, REP}),
    ('rtu_names_connection', rule_rtu_names_connection, {RTU}),
    ('dreq_names_connection', rule_dreq_names_connection, {DREQ}),
    ('drep_answers_dreq', rule_drep_answers_dreq, {DREQ, DREP}),
    ('req_start_psn', rule_req_start_psn, {REQ}),
    ('rep_start_psn', rule_rep_start_psn, {REP}),
    ('qpns_carry_data', rule_qpns_carry_data, {REQ, REP}),
    ('addresses', rule_addresses, {REQ, SIDR_REQ}),
    ('guid_from_mac', rule_guid_from_mac, {REQ, REP}),
    ('service_id', rule_service_id, {REQ, SIDR_REQ}),
    ('sidr_rep_answers_req', rule_sidr_rep_answers_req, {SIDR_REP}),
    ('sidr_qp_carries_data', rule_sidr_qp_carries_data, {SIDR_REP}),
    ('mad_psn', rule_mad_psn, set(NAMES)),
    ('icrc', rule_icrc, set(NAMES)),
    ('no_complaint', rule_no_complaint, set(NAMES)),
]
RULE_NAMES = set(r[0] for r in RULES)


# ------------------------------------------------------------------------
# The comparison.

# free fields whose differences are worth a line in the log (once a run)
noted = set()
NOTE_FIELDS = {'infiniband.bth.a', 'infiniband.cm.rep.tgtackdelay',
               'mad.data:req.prim_flowlabel', 'mad.data:req.prim_pktrate'}


def in_range(text, rule):
    return rule[1] <= int(text, 0) <= rule[2]


def compare_type(run, attr, golden, droce):
    """Field list and fixed fields of droce's messages of one type
    against golden's."""
    what = '%s %s' % (run, NAMES[attr])
    gs, ds = golden.of(attr), droce.of(attr)
    check(bool(ds), '%s: droce sent %d (golden %d)' % (what, len(ds),
                                                        len(gs)))
    if not ds:
        return
    keys = list(gs[0].fields)
    # every field of golden's messages agrees on its key list, and has
    # a rule
    for g in gs[1:]:
        check(list(g.fields) == keys, '%s: golden\'s %s and %s '
              'decode to the same fields' % (what, gs[0], g))
    unruled = [k for k in keys if rule_of(attr, k) is None]
    check(not unruled, '%s: every field has a rule%s' %
          (what, ' (none for %s)' % unruled if unruled else ''))
    missing, extra = set(), set()
    for d in ds:
        missing |= set(keys) - set(d.fields)
        extra |= set(d.fields) - set(keys)
    check(not missing and not extra,
          '%s: tshark decodes the same %d fields of droce\'s as of '
          'golden\'s%s%s' % (what, len(keys),
                            ' (missing: %s)' % sorted(missing)
                            if missing else '',
                            ' (extra: %s)' % sorted(extra) if extra else ''))
    counts = {SAME: 0, 'range': 0, REL: 0, FREE: 0}
    for k in keys:
        rule = rule_of(attr, k)
        if rule is None:
            continue
        kind = rule[0]
        counts[kind] += 1
        gv = [g.fields[k] for g in gs]
        dv = [d.fields[k] for d in ds if k in d.fields]
        if kind == SAME:
            if len(set(gv)) != 1:
                check(False, '%s %s: golden\'s values differ (%s): the rule '
                      'is wrong' % (what, k, sorted(set(gv))))
                continue
            bad = sorted(set(v for v in dv if v != gv[0]))
            check(not bad, '%s %s = %s%s (%s)' %
                  (what, k, short(gv[0]),
                   ', droce %s' % [short(v) for v in bad] if bad else '',
                   rule[1]))
        elif kind == 'range':
            bad = sorted(set(v for v in gv + dv if not in_range(v, rule)))
            check(not bad, '%s %s in [%d, %d]: golden %s, droce %s (%s)' %
                  (what, k, rule[1], rule[2], sorted(set(gv)),
                   sorted(set(dv)), rule[3]))
        elif kind == FREE and k in NOTE_FIELDS and set(gv) != set(dv) and \
                (run, k) not in noted:
            noted.add((run, k))
            print('note  %s %s: golden %s, droce %s (%s)' %
                  (what, k, sorted(set(gv))[:3], sorted(set(dv))[:3],
                   rule[1]), flush=True)
    print('      %s: %d fields: %d same, %d in range, %d per connection, '
          '%d free' % (what, len(keys), counts[SAME], counts['range'],
                       counts[REL], counts[FREE]), flush=True)


def short(v):
    return v if len(v) <= 24 else v[:24] + '...'


def run_rules(run, golden, droce):
    types = set(f.attr for f in golden.mads)
    for name, fn, about in RULES:
        if not about & types:
            continue
        for cap in (golden, droce):
            n, bad = fn(cap)
            check(n > 0 and not bad, '%s %s (%s): %d checked%s' %
                  (run, name, cap.name, n,
                   ''.join('; ' + b for b in bad[:4]) +
                   (' ...' if len(bad) > 4 else '')))


def check_table():
    """Every REL field names a rule of RULES."""
    for attr, table in [(None, COMMON)] + list(FIELDS.items()):
        for k, rule in table.items():
            if rule[0] != REL:
                continue
            names = rule[1].split(' ')[0].split('/')
            if not set(names) <= RULE_NAMES:
                check(False, 'FIELDS: %s names no rule (%s)' % (k, rule[1]))


def run_one(args, env, name, golden_pcap, server_argv, client_argv, kind):
    golden = Capture('golden', read_capture(
        args.tshark, os.path.join(args.pcaps, golden_pcap)))
    paths = [dropin.pcap_path(args, name, role)
             for role in ('server', 'client')]
    for p in paths:
        if os.path.exists(p):
            os.unlink(p)
    client, server = dropin.run_pair(args, env, name, server_argv,
                                     client_argv, kind, pcap=True)
    for side, (rc, o, e) in (('client', client), ('server', server)):
        check(rc == 0, '%s %s exits 0%s' %
              (name, side, '' if rc == 0 else ': %s' % dropin.tail(o, e)))
    if not all(os.path.exists(p) for p in paths):
        check(False, '%s: droce\'s captures %s' % (name, paths))
        return
    droce = droce_capture(args.tshark, 'droce', *paths)
    others = sorted(set(NAMES.get(f.attr, hexs(f.attr)) for f in droce.mads
                        if f.attr not in set(g.attr for g in golden.mads)))
    if others:
        print('note  %s: droce also sent %s (not in golden\'s capture)' %
              (name, ', '.join(others)), flush=True)
    for attr in sorted(set(f.attr for f in golden.mads)):
        compare_type(name, attr, golden, droce)
    run_rules(name, golden, droce)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--lib-verbs', required=True)
    ap.add_argument('--lib-rdmacm', required=True)
    ap.add_argument('--tshark', required=True, help='tshark-roce script')
    ap.add_argument('--pcaps', required=True, help='the golden captures')
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--only', default='',
                    help='run only the tools whose name has this in it')
    args = ap.parse_args()
    args.workdir = os.path.abspath(args.workdir)
    os.makedirs(args.workdir, exist_ok=True)
    env = dict(os.environ, LD_LIBRARY_PATH='%s:%s' % (
        os.path.abspath(args.lib_verbs), os.path.abspath(args.lib_rdmacm)))
    env.pop('DROCE_CONFIG', None)
    t0 = time.monotonic()

    check_table()
    for name, pcap, server_argv, client_argv, kind in RUNS:
        if args.only in name:
            run_one(args, env, name, pcap, server_argv, client_argv, kind)

    print('%d passed, %d failed (%.0f s)' %
          (dropin.passed, len(dropin.failures), time.monotonic() - t0))
    if dropin.failures:
        print('failed:')
        for f in dropin.failures:
            print('  ' + f.splitlines()[0][:200])
    return 1 if dropin.failures or not dropin.passed else 0


if __name__ == '__main__':
    sys.exit(main())
