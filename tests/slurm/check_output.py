#!/usr/bin/env python3
"""check_output.py - check a kdistill output file against the documented layout (kd_io.h).

usage: check_output.py FILE TASK N_RANKS [N_OUT] [D]
Checks: root attributes (kdistill_version, task == TASK, algorithm, kernel, n_ranks == N_RANKS,
seed, created_utc, config_yaml), /coreset/points (N_OUT x D when given), weights (>= 0, sum 1),
indices (int, -1 or a row), /metrics attributes mmd (finite, >= 0), seconds (>= 0),
kernel_evals. Prints one line per failure and "N passed, N failed"; exit 0 only if all pass.
"""
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    print("SKIP: check_output.py needs h5py and numpy (%s)" % e)
    sys.exit(77)


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    path, task, n_ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    n_out = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] != "-" else None
    d = int(sys.argv[5]) if len(sys.argv) > 5 else None
    ok = [0, 0]

    def check(cond, what):
        ok[0 if cond else 1] += 1
        if not cond:
            print("FAIL: %s: %s" % (path, what))
        return cond

    def s(v):
        return v.decode() if isinstance(v, bytes) else str(v)

    with h5py.File(path, "r") as f:
        for a in ("kdistill_version", "task", "algorithm", "kernel", "n_ranks", "seed",
                  "created_utc", "config_yaml"):
            check(a in f.attrs, "root attribute %s missing" % a)
        check(s(f.attrs.get("task", b"")) == task, "task is %r, expected %r" %
              (s(f.attrs.get("task", b"")), task))
        check(int(f.attrs.get("n_ranks", -1)) == n_ranks, "n_ranks is %s, expected %d" %
              (f.attrs.get("n_ranks"), n_ranks))
        check(len(s(f.attrs.get("config_yaml", b""))) > 0, "config_yaml is empty")
        if check("coreset/points" in f, "/coreset/points missing"):
            pts = f["coreset/points"][()]
            w = f["coreset/weights"][()]
            idx = f["coreset/indices"][()]
            check(pts.ndim == 2 and pts.shape[0] >= 1, "points shape %s" % (pts.shape,))
            # herd / quad leave nodes of weight 0 out and count them (docs/cli.md, quadrature.md)
            dropped = int(f["metrics"].attrs.get("zero_weight_nodes_dropped", 0)) \
                if "metrics" in f else 0
            if n_out is not None:
                check(pts.shape[0] + dropped == n_out, "%d points (+ %d of weight 0 left out), "
                      "expected %d" % (pts.shape[0], dropped, n_out))
            if task in ("herd", "quad"):
                check(np.all(w > 0), "a node of weight 0 in a %s output" % task)
            if d is not None:
                check(pts.shape[1] == d, "dimension %d, expected %d" % (pts.shape[1], d))
            check(np.all(np.isfinite(pts)), "non-finite points")
            check(w.shape == (pts.shape[0],), "weights shape %s" % (w.shape,))
            check(np.all(w >= 0) and abs(w.sum() - 1) < 1e-9, "weights >= 0 summing to 1 (sum %r)"
                  % float(w.sum()))
            check(idx.dtype.kind == "i" and np.all(idx >= -1), "indices are ints >= -1")
        if check("metrics" in f, "/metrics missing"):
            m = f["metrics"].attrs
            for a in ("mmd", "seconds", "kernel_evals"):
                check(a in m, "/metrics attribute %s missing" % a)
            mmd = float(m.get("mmd", np.nan))
            check(np.isfinite(mmd) and mmd >= 0, "mmd %r not finite >= 0" % mmd)
            check(float(m.get("seconds", -1)) >= 0, "seconds < 0")
    print("%d passed, %d failed" % tuple(ok))
    return 0 if ok[1] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
