#!/usr/bin/python3
# mknpz.py KIND PATH - craft a damaged .npz (zip) archive for tests/hostile/run_files.sh: one
# stored entry X.npy whose central-directory record is altered (Debian's python3 with numpy).
#   extra_overrun  the record's zip64 extra field declares more bytes than the record holds
#   huge_offset    the zip64 extra field gives a local-header offset >= 2^63
#   good           the same archive, undamaged (it must read)
import io
import struct
import sys
import zlib

import numpy as np

kind, path = sys.argv[1], sys.argv[2]
buf = io.BytesIO()
np.save(buf, np.arange(64, dtype="f8").reshape(32, 2))
data = buf.getvalue()
name = b"X.npy"
crc = zlib.crc32(data)
local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, crc, len(data), len(data), len(name), 0)
lho = 0
extra = b""
if kind == "extra_overrun":
    lho = 0xFFFFFFFF
    extra = struct.pack("<HH", 1, 0xFFF0) + struct.pack("<Q", 0)  # says 65520 bytes, holds 8
elif kind == "huge_offset":
    lho = 0xFFFFFFFF
    extra = struct.pack("<HHQ", 1, 8, (1 << 63) + 5)
elif kind != "good":
    sys.exit("unknown kind " + kind)
central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 20, 0, 0, 0, 0, crc, len(data), len(data),
                      len(name), len(extra), 0, 0, 0, 0, lho) + name + extra
cdo = len(local) + len(name) + len(data)
eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), cdo, 0)
with open(path, "wb") as f:
    f.write(local + name + data + central + eocd)
