#!/usr/bin/env python3
"""Rewrite a Darshan log's DXT data in the current log format (3.41) with
Darshan's own library, as `darshan-convert` does.

Usage: darshan-convert-dxt.py IN.darshan OUT.darshan [RANKS]

It calls the darshan-util library that ships inside the `darshan` Python
package (pip install darshan==3.5.0): darshan_log_open / darshan_log_create
(zlib), then job, exe, mounts and name records, then every DXT_POSIX and
DXT_MPIIO record through the library's own dxt_*_logutils get/put
functions. Other modules are left out (storlab reads only DXT). This is how
tests/fixtures/darshan/*-3.41.darshan were made from the logs beside them.

With RANKS, every DXT record is written once per rank 0..RANKS-1 (its
base record's rank field changed) and the job's nprocs set to RANKS: a
multi-rank log for tests of replay under MPI (dxt-4ranks-3.41.darshan is
dxt-3.41.darshan so copied to 4 ranks).
"""
import ctypes
import glob
import os
import sys

import darshan


def lib():
    libs = glob.glob(os.path.join(os.path.dirname(darshan.__file__), "..",
                                  "darshan.libs", "libdarshan-util*.so*"))
    if not libs:
        sys.exit("cannot find libdarshan-util in the darshan package")
    return ctypes.CDLL(libs[0])


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, dst = sys.argv[1].encode(), sys.argv[2].encode()
    ranks = int(sys.argv[3]) if len(sys.argv) == 4 else None
    L = lib()
    vp, c_int = ctypes.c_void_p, ctypes.c_int
    L.darshan_log_open.restype = vp
    L.darshan_log_open.argtypes = [ctypes.c_char_p]
    L.darshan_log_create.restype = vp
    L.darshan_log_create.argtypes = [ctypes.c_char_p, c_int, c_int]
    for name in ["darshan_log_get_job", "darshan_log_put_job",
                 "darshan_log_get_exe", "darshan_log_put_exe",
                 "darshan_log_get_namehash", "darshan_log_put_namehash"]:
        getattr(L, name).argtypes = [vp, vp]
        getattr(L, name).restype = c_int
    L.darshan_log_get_mounts.argtypes = [vp, vp, vp]
    L.darshan_log_get_mounts.restype = c_int
    L.darshan_log_put_mounts.argtypes = [vp, vp, c_int]
    L.darshan_log_put_mounts.restype = c_int
    L.darshan_log_close.argtypes = [vp]

    infile = L.darshan_log_open(src)
    if not infile:
        sys.exit(f"cannot open {src!r}")
    outfile = L.darshan_log_create(dst, 0, 0)  # DARSHAN_ZLIB_COMP, not partial
    if not outfile:
        sys.exit(f"cannot create {dst!r}")

    def check(ret, what):
        if ret < 0:
            sys.exit(f"{what} failed")

    job = ctypes.create_string_buffer(7 * 8 + 1024)  # struct darshan_job (3.41)
    check(L.darshan_log_get_job(infile, job), "get_job")
    if ranks is not None:  # int64 uid, start s/ns, end s/ns, nprocs, ...
        ctypes.cast(job, ctypes.POINTER(ctypes.c_int64))[5] = ranks
    check(L.darshan_log_put_job(outfile, job), "put_job")
    exe = ctypes.create_string_buffer(4096)
    check(L.darshan_log_get_exe(infile, exe), "get_exe")
    check(L.darshan_log_put_exe(outfile, exe), "put_exe")
    mnts, count = vp(), c_int()
    check(L.darshan_log_get_mounts(infile, ctypes.byref(mnts), ctypes.byref(count)), "get_mounts")
    check(L.darshan_log_put_mounts(outfile, mnts, count.value), "put_mounts")
    names = vp()
    check(L.darshan_log_get_namehash(infile, ctypes.byref(names)), "get_namehash")
    check(L.darshan_log_put_namehash(outfile, names), "put_namehash")

    GET = ctypes.CFUNCTYPE(c_int, vp, ctypes.POINTER(vp))
    PUT = ctypes.CFUNCTYPE(c_int, vp, vp)

    class Funcs(ctypes.Structure):  # struct darshan_mod_logutil_funcs (first two)
        _fields_ = [("get", GET), ("put", PUT)]

    libc = ctypes.CDLL(None)
    libc.free.argtypes = [vp]
    for module in ["dxt_posix_logutils", "dxt_mpiio_logutils"]:
        funcs = Funcs.in_dll(L, module)
        n = 0
        while True:
            buf = vp(None)
            ret = funcs.get(infile, ctypes.byref(buf))
            if ret != 1:
                check(ret, f"{module} get_record")
                break
            # struct darshan_base_record: int64 id, int64 rank
            for r in range(ranks) if ranks is not None else [None]:
                if r is not None:
                    ctypes.cast(buf, ctypes.POINTER(ctypes.c_int64))[1] = r
                check(funcs.put(outfile, buf), f"{module} put_record")
            libc.free(buf)
            n += 1
        print(f"{module}: {n} records", file=sys.stderr)
    L.darshan_log_close(infile)
    L.darshan_log_close(outfile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
