#!/usr/bin/env python3
"""Generates crates/canyon-sql/data/ducet-primary.bin from the Unicode DUCET.

The input is allkeys.txt of the Unicode Collation Algorithm (Debian ships
version 13.0.0 with Perl, in perl-modules: /usr/share/perl/5.*/Unicode/
Collate/allkeys.txt). Canyon's accent- and case-insensitive collations compare
primary weights only, so only those are kept: for every single-code-point
entry, the primary weights of its collation elements, skipping zero (ignorable
at the primary level). Variable elements (`*`, spaces and punctuation) keep
their weights: MySQL's utf8mb4_0900_ai_ci treats them as non-ignorable.
Contractions (entries of more than one code point) are left out; see
`canyon_sql::collation`.

Output format, little-endian, records sorted by code point:
    u32 code point | u8 n | n x u16 primary weight
A record with n = 0 is a character ignorable at the primary level; a code
point without a record takes the UCA's implicit weights.

Usage: scripts/gen_ducet.py [ALLKEYS] [OUT]
"""
import glob
import re
import struct
import sys

def main():
    src = sys.argv[1] if len(sys.argv) > 1 else sorted(
        glob.glob("/usr/share/perl/5.*/Unicode/Collate/allkeys.txt"))[-1]
    out = sys.argv[2] if len(sys.argv) > 2 else "crates/canyon-sql/data/ducet-primary.bin"
    line_re = re.compile(r"^([0-9A-F]+)\s*;\s*((?:\[[.*][0-9A-F.]+\])+)")
    elem_re = re.compile(r"\[[.*]([0-9A-F]{4})\.")
    records = {}
    version = None
    with open(src, encoding="utf-8") as f:
        for line in f:
            if line.startswith("@version"):
                version = line.split()[1]
            m = line_re.match(line)
            if not m:
                continue
            cp = int(m.group(1), 16)
            prims = [int(w, 16) for w in elem_re.findall(m.group(2))]
            records[cp] = [w for w in prims if w != 0]
    assert version, "no @version line"
    buf = bytearray()
    for cp in sorted(records):
        ws = records[cp]
        assert len(ws) < 256
        buf += struct.pack("<IB", cp, len(ws))
        for w in ws:
            buf += struct.pack("<H", w)
    with open(out, "wb") as f:
        f.write(buf)
    print(f"DUCET {version}: {len(records)} code points, {len(buf)} bytes -> {out}")

if __name__ == "__main__":
    main()
