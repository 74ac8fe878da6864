#!/usr/bin/python3
# mkhostile.py KIND PATH - craft a hostile HDF5 file for tests/hostile/run_hostile.sh (Debian's
# python3 with h5py). Chunked datasets declare huge shapes while storing (almost) nothing.
import sys
import h5py
import numpy as np

kind, path = sys.argv[1], sys.argv[2]
with h5py.File(path, "w") as f:
    if kind == "huge_points":  # finding 1: n*d wraps
        f.create_dataset("X", shape=(2**45, 2**19), chunks=(1, 1024), dtype="f8")
    elif kind == "huge_points2":
        f.create_dataset("X", shape=(2**46, 2**19), chunks=(1, 1024), dtype="f8")
    elif kind == "big_points":  # plausible but more than any memory
        f.create_dataset("X", shape=(2**36, 4), chunks=(1024, 4), dtype="f8")
    elif kind == "wide_output":  # finding 2: (1, 2^32+1) /coreset/points
        f.create_dataset("/coreset/points", shape=(1, 2**32 + 1), chunks=(1, 4096), dtype="f8")
        f.create_dataset("/coreset/weights", data=np.ones(1))
        f.create_dataset("/coreset/indices", data=np.zeros(1, dtype="i8"))
        g = f.create_group("metrics")
        for k in ("mmd", "seconds"):
            g.attrs[k] = 0.0
        g.attrs["kernel_evals"] = np.uint64(0)
        f.attrs["task"] = "herd"
    # wrong types and links (inputs read as dataset X, outputs as /coreset/points)
    elif kind == "str_points":
        f.create_dataset("X", data=np.array([[b"1.0", b"2.0"]] * 64))
    elif kind == "compound_points":
        f.create_dataset("X", data=np.zeros((64, 2), dtype=[("a", "f8"), ("b", "i4")]))
    elif kind == "vlen_points":
        f.create_dataset("X", shape=(64, 2), dtype=h5py.vlen_dtype(np.float64))
    elif kind == "int_points":  # a legitimate integer input: read as float64
        f.create_dataset("X", data=np.arange(128, dtype="u2").reshape(64, 2))
    elif kind == "loop_link":
        f["X"] = h5py.SoftLink("/Y")
        f["Y"] = h5py.SoftLink("/X")
    elif kind == "dangling_link":
        f["X"] = h5py.SoftLink("/nothing/here")
    elif kind == "external_link":  # to a file that does not exist
        f["X"] = h5py.ExternalLink("missing_elsewhere.h5", "/X")
    elif kind == "group_points":  # X is a group, not a dataset
        f.create_group("X")
    elif kind == "str_output" or kind == "link_output":
        if kind == "str_output":
            f.create_dataset("/coreset/points", data=np.array([[b"x", b"y"]]))
        else:
            f.create_group("coreset")
            f["/coreset/points"] = h5py.SoftLink("/coreset/points")
        f.create_dataset("/coreset/weights", data=np.ones(1))
        f.create_dataset("/coreset/indices", data=np.zeros(1, dtype="i8"))
        g = f.create_group("metrics")
        for k in ("mmd", "seconds"):
            g.attrs[k] = 0.0
        g.attrs["kernel_evals"] = np.uint64(0)
        f.attrs["task"] = "herd"
    else:
        sys.exit("unknown kind " + kind)
