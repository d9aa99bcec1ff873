#!/usr/bin/env python3
"""Rewrites an uncompressed trace-cmd v7 file as a zlib-compressed v7 file.

    bench/dat-recompress.py IN.dat OUT.dat

IN must be a version 7 file with compression "none" (make one from any .dat
with `trace-cmd convert -i X.dat -o IN.dat --file-version 7 --compression none`).
OUT holds the same sections and CPU data, every section and the CPU data
compressed with zlib the way trace-cmd compresses (the CPU data in chunks of
10 ring-buffer pages). Debian's trace-cmd is built without zlib, so this is how
the benchmarks get zlib files to decode; `latlab dump` of IN and OUT must print
the same bytes (bench/dump-speed.sh checks it).
"""
import struct
import sys
import zlib

PTR_OPTIONS = {16, 17, 18, 19, 20, 21}  # header info, ftrace/event formats, kallsyms, printk, cmdlines
OPT_DONE, OPT_BUFFER = 0, 3
CHUNK_PAGES = 10


def cstr(d, p):
    e = d.index(b"\0", p)
    return d[p:e], e + 1


def main(src, dst):
    d = open(src, "rb").read()
    if d[:10] != b"\x17\x08\x44tracing":
        sys.exit(f"{src}: not a trace-cmd .dat file")
    p = 10
    version, p = cstr(d, p)
    if version != b"7":
        sys.exit(f"{src}: version {version.decode()} (want 7; trace-cmd convert --file-version 7)")
    if d[p] != 0:
        sys.exit(f"{src}: big-endian files are not handled")
    long_size, page_size = d[p + 1], struct.unpack_from("<I", d, p + 2)[0]
    p += 6
    comp, p = cstr(d, p)
    _, p = cstr(d, p)
    if comp not in (b"none", b""):
        sys.exit(f"{src}: compression {comp.decode()} (want none; trace-cmd convert --compression none)")
    first = struct.unpack_from("<Q", d, p)[0]

    def section(off):
        sid, flags, _desc, size = struct.unpack_from("<HHIQ", d, off)
        if flags & 1:
            sys.exit(f"{src}: section {sid} at {off} is compressed")
        return sid, d[off + 16 : off + 16 + size]

    # Collect the options of every options section, in order.
    options = []
    nxt = first
    while nxt:
        _, body = section(nxt)
        q, nxt = 0, 0
        while q < len(body):
            oid, n = struct.unpack_from("<HI", body, q)
            od = body[q + 6 : q + 6 + n]
            q += 6 + n
            if oid == OPT_DONE:
                nxt = struct.unpack_from("<Q", od)[0] if n >= 8 else 0
                break
            options.append((oid, od))

    out = bytearray(b"\x17\x08\x44tracing7\0")
    out += bytes([0, long_size]) + struct.pack("<I", page_size)
    out += b"zlib\0" + zlib.ZLIB_VERSION.encode() + b"\0"
    first_at = len(out)
    out += struct.pack("<Q", 0)

    def put_section(sid, body):
        at = len(out)
        z = zlib.compress(body)
        out.extend(struct.pack("<HHIQ", sid, 1, 0, 8 + len(z)))
        out.extend(struct.pack("<II", len(z), len(body)))
        out.extend(z)
        return at

    new_options = []
    for oid, od in options:
        if oid in PTR_OPTIONS:
            sid, body = section(struct.unpack_from("<Q", od)[0])
            new_options.append((oid, struct.pack("<Q", put_section(sid, body))))
        elif oid == OPT_BUFFER:
            r = 8
            name, r = cstr(od, r)
            clock, r = cstr(od, r)
            pgs, count = struct.unpack_from("<II", od, r)
            r += 8
            cpus = []
            for _ in range(count):
                cpus.append(struct.unpack_from("<IQQ", od, r))
                r += 20
            fly_at = len(out)
            out.extend(struct.pack("<HHIQ", 3, 1, 0, 0))
            new_cpus = []
            for cpu, off, size in cpus:
                data = d[off : off + size]
                at = (len(out) + page_size - 1) // page_size * page_size
                out.extend(b"\0" * (at - len(out)))
                step = CHUNK_PAGES * pgs
                chunks = [data[i : i + step] for i in range(0, len(data), step)]
                out.extend(struct.pack("<I", len(chunks)))
                for c in chunks:
                    z = zlib.compress(c)
                    out.extend(struct.pack("<II", len(z), len(c)))
                    out.extend(z)
                # trace-cmd's size leaves out the 4-byte chunk count.
                new_cpus.append((cpu, at, len(out) - at - 4))
            struct.pack_into("<Q", out, fly_at + 8, len(out) - fly_at - 16)
            b = struct.pack("<Q", fly_at) + name + b"\0" + clock + b"\0"
            b += struct.pack("<II", pgs, len(new_cpus))
            for cpu, at, size in new_cpus:
                b += struct.pack("<IQQ", cpu, at, size)
            new_options.append((oid, b))
        else:
            new_options.append((oid, od))
    body = bytearray()
    for oid, od in new_options:
        body += struct.pack("<HI", oid, len(od)) + od
    body += struct.pack("<HIQ", OPT_DONE, 8, 0)
    opt_at = len(out)
    out += struct.pack("<HHIQ", 0, 0, 0, len(body)) + body
    struct.pack_into("<Q", out, first_at, opt_at)
    open(dst, "wb").write(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
