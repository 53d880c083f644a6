#!/usr/bin/python3
"""Exit 0 when a PNG (8-bit RGB/RGBA, as Chromium writes) is not blank: more than 1% of its pixels
differ from the most common colour. Pure Python (zlib): no imaging library needed.
  png_nonblank.py FILE.png"""
import collections
import struct
import sys
import zlib

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        bpp = {2: 3, 6: 4}[ctype]
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
counts = collections.Counter()
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):  # undo the PNG row filter
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    for x in range(0, stride, bpp * 4):  # every fourth pixel is plenty
        counts[bytes(line[x:x + 3])] += 1
total = sum(counts.values())
common = counts.most_common(1)[0][1]
share = 1 - common / total
print("%dx%d, %d colours, %.1f%% of sampled pixels differ from the background" % (w, h, len(counts), 100 * share))
sys.exit(0 if share > 0.01 else 1)
