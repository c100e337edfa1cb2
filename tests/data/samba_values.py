"""Samba xattr values made by Samba's own NDR code (python3-samba), for tests/xattr_decoders.rs.

Writes OUT/NNN.val (the value) and OUT/cases.json: one case per value with the xattr name and
what Samba's ndr_unpack (and descriptor.as_sddl, no domain SID) reads back from it.
Usage: /usr/bin/python3 samba_values.py OUT
"""
import json
import os
import sys

from samba.dcerpc import security, xattr
from samba.ndr import ndr_pack, ndr_unpack

OUT = sys.argv[1]
DOM = security.dom_sid("S-1-5-21-1004336348-1177238915-682003330")
cases = []


def emit(name, blob, expect):
    path = os.path.join(OUT, "%03d.val" % len(cases))
    with open(path, "wb") as f:
        f.write(blob)
    cases.append({"file": "f%03d" % len(cases), "name": name, "value": path, "expect": expect})


def nttime_expect(t):
    return t


# user.DOSATTRIB v1, v3, v4, v5 (v2 is read-only legacy; Samba packs it too).
TIMES = [0, 1, 132000000000000000, 116444736000000000, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF]
ATTRS = [0x0, 0x1, 0x20, 0x21, 0x22, 0x26, 0x10, 0x80, 0x2000, 0x800, 0xFFFFFFFF]
for version in (1, 2, 3, 4, 5):
    for i, attrib in enumerate(ATTRS):
        t = TIMES[i % len(TIMES)]
        d = xattr.DOSATTRIB()
        d.attrib_hex = "0x%x" % attrib
        d.version = version
        info = d.info
        info.attrib = attrib
        if version in (3, 4, 5):
            info.valid_flags = [0x11, 0x51, 0x1, 0x7F, 0x10][i % 5]
        if version == 2:
            info.name = "legacy-%d" % i
            info.write_time = t
        if version == 4:
            info.itime = TIMES[(i + 2) % len(TIMES)]
        info.create_time = t
        d.info = info
        blob = ndr_pack(d)
        back = ndr_unpack(xattr.DOSATTRIB, blob)
        exp = {"version": back.version, "attrib": back.info.attrib,
               "create_time": back.info.create_time}
        if version in (3, 4, 5):
            exp["valid_flags"] = back.info.valid_flags
        if version == 4:
            exp["itime"] = back.info.itime
        emit("user.DOSATTRIB", blob, exp)

# The old Samba 3 form: the hex string alone.
for s in (b"0x20\0", b"0x1\0", b"  3f\0"):
    back = ndr_unpack(xattr.DOSATTRIB, s)
    emit("user.DOSATTRIB", s, {"version": back.version, "attrib": back.info.attrib})

SDDLS = [
    "O:BAG:SYD:(A;;FA;;;WD)",
    "O:S-1-5-21-1004336348-1177238915-682003330-1000G:DUD:(A;OICI;0x001f01ff;;;BA)(A;OICI;0x001200a9;;;BU)",
    "O:LAG:DAD:PAI(A;OICIID;FA;;;SY)(A;OICIIOID;GA;;;CO)(A;OICI;0x1301bf;;;AU)(D;OICI;WD;;;AN)",
    "D:P(A;;GA;;;WD)",
    "D:AR(A;CI;GR;;;S-1-5-32-545)(A;OI;GX;;;S-1-1-0)(A;NP;GW;;;S-1-3-0)",
    "O:SYG:SYD:(OA;CIIO;RPWP;bf967aba-0de6-11d0-a285-00aa003049e2;bf967a86-0de6-11d0-a285-00aa003049e2;PS)(OA;;CR;ab721a53-1e2f-11d0-9819-00aa0040529b;;WD)(OD;;CR;;bf967aba-0de6-11d0-a285-00aa003049e2;AU)",
    "O:BAG:BAD:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)S:AI(AU;SAFA;WP;;;WD)(AU;SA;CR;;;BA)",
    "O:BAG:BAS:PARAI(AU;FA;GA;;;WD)",
    "O:S-1-5-21-1-2-3-4-5-6-7-8-9-10-11-12-13-14G:S-1-0-0D:(A;;0x00000001;;;S-1-5-80-0)(A;;0x80000000;;;S-1-16-12288)",
    "O:ACG:UDD:(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;AC)(A;;0x00100000;;;LW)(A;;0x000f0000;;;ME)(A;;0xf0000000;;;SI)",
    "D:",
    "O:WD",
    "G:BG",
    "O:CGG:OWD:(A;;FR;;;ED)(A;;FW;;;PS)(A;;FX;;;RC)(A;;GA;;;LS)(A;;GR;;;NS)",
    "O:BUG:BUD:(A;ID;0x00120089;;;BU)(A;CIIOID;0x10000000;;;CO)(A;OICIID;0x001301bf;;;S-1-5-21-1004336348-1177238915-682003330-513)",
]
for i, s in enumerate(SDDLS):
    sd = security.descriptor.from_sddl(s, DOM)
    for version in (1, 2, 3, 4):
        n = xattr.NTACL()
        n.version = version
        if version == 1:
            n.info = sd
        elif version == 2:
            h = xattr.security_descriptor_hash_v2()
            h.sd = sd
            h.hash = [(i * 7 + k) % 256 for k in range(16)]
            n.info = h
        elif version == 3:
            h = xattr.security_descriptor_hash_v3()
            h.sd = sd
            h.hash_type = i % 2
            h.hash = [(i * 3 + k) % 256 for k in range(64)]
            n.info = h
        else:
            h = xattr.security_descriptor_hash_v4()
            h.sd = sd
            h.hash_type = 1
            h.hash = [(i + k) % 256 for k in range(64)]
            h.description = ["posix_acl", "", "smbd-%d" % i][i % 3]
            h.time = TIMES[i % len(TIMES)]
            h.sys_acl_hash = [(255 - k) % 256 for k in range(64)]
            n.info = h
        blob = ndr_pack(n)
        back = ndr_unpack(xattr.NTACL, blob)
        bsd = back.info if version == 1 else back.info.sd
        exp = {"version": back.version, "sddl": bsd.as_sddl()}
        if version >= 3:
            exp["hash_type"] = back.info.hash_type
        emit("security.NTACL", blob, exp)

# Unusual ACEs Samba's SDDL parser cannot write but its NDR code packs: callback, compound and
# other numbered types (sddl_encode spells them bit by bit, as "ALOL" for 9), odd flag and mask
# bits, SIDs with large authorities.
def unusual(types, flags=0, mask=0x1F01FF, sid="S-1-1-0", sacl=False):
    sd = security.descriptor()
    sd.type = 0x8004 | (0x10 if sacl else 0)
    acl = security.acl()
    acl.revision = 4
    aces = []
    for t in types:
        a = security.ace()
        a.type = t
        a.flags = flags
        a.access_mask = mask
        a.trustee = security.dom_sid(sid)
        aces.append(a)
    acl.aces = aces
    acl.num_aces = len(aces)
    sd.dacl = acl
    if sacl:
        sd.sacl = acl
    sd.owner_sid = security.dom_sid(sid)
    return sd


for sd in [unusual([9, 10, 11, 12, 13, 14, 15]), unusual([4, 0, 1, 2, 3], flags=0xDF),
           unusual([0], mask=0), unusual([1], sid="S-1-281474976710655-1"),
           unusual([0], sid="S-1-4294967295-7-8"), unusual([0], sid="S-1-4294967294"),
           unusual([2, 3], flags=0xC0, sacl=True), unusual([0], sid="S-255-5-32-544")]:
    n = xattr.NTACL()
    n.version = 1
    n.info = sd
    blob = ndr_pack(n)
    back = ndr_unpack(xattr.NTACL, blob)
    emit("security.NTACL", blob, {"version": 1, "sddl": back.info.as_sddl()})

with open(os.path.join(OUT, "cases.json"), "w") as f:
    json.dump(cases, f, indent=1)
print(len(cases))
