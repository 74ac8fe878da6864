#!/usr/bin/env python3
"""check_config_output.py - sanity of one example config's output (tests/configs/run_configs.sh).

usage: check_config_output.py OUT.h5 WORKDIR
Checks: /coreset/points, /coreset/weights, /coreset/indices present with matching lengths; every
/coreset dataset finite; weights >= 0 and summing to 1 within 1e-9 (when there are any); the
/metrics mmd finite and >= 0 for the tasks that compute one (thin, herd, quad, ctt, sweep);
task tables: ctt_study /study/rejection_rate in [0, 1], sweep a summary.csv with every point ok,
attention /attention/T_hat finite, reorder /reorder/permutation a permutation, recombine weights
reproducing nothing worse than 1e-8 of the mean of the first test function (the constant).
Prints one line (a short description on success, the first problem otherwise); exit 0 if sane.
"""
import csv
import glob
import os
import sys

import h5py
import numpy as np


def fail(msg):
    print(msg)
    sys.exit(1)


def main():
    path, work = sys.argv[1], sys.argv[2]
    if not os.path.exists(path):
        fail("no output file %s" % path)
    with h5py.File(path, "r") as f:
        task = f.attrs["task"]
        task = task.decode() if isinstance(task, bytes) else str(task)
        for k in ("points", "weights", "indices"):
            if "coreset/" + k not in f:
                fail("%s: no /coreset/%s" % (task, k))
        pts = f["coreset/points"][()]
        w = f["coreset/weights"][()]
        idx = f["coreset/indices"][()]
        if not (pts.shape[0] == w.shape[0] == idx.shape[0]):
            fail("%s: /coreset lengths %d, %d, %d differ" % (task, pts.shape[0], w.shape[0], idx.shape[0]))
        for k in f["coreset"]:
            a = f["coreset"][k][()]
            if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
                fail("%s: /coreset/%s has non-finite values" % (task, k))
        if w.size:
            if w.min() < 0:
                fail("%s: negative weight %g" % (task, w.min()))
            if abs(w.sum() - 1.0) > 1e-9:
                fail("%s: weights sum to %.17g" % (task, w.sum()))
        mmd = float(f["metrics"].attrs["mmd"])
        if task in ("thin", "herd", "quad", "ctt", "sweep") and not (np.isfinite(mmd) and mmd >= 0):
            fail("%s: mmd %r" % (task, mmd))
        extra = ""
        if task == "ctt_study":
            r = f["study/rejection_rate"][()]
            if r.size == 0 or np.any((r < 0) | (r > 1)):
                fail("ctt_study: rejection rates %s" % r)
            extra = ", rejection rates %s" % np.round(r, 2).tolist()
        if task == "attention":
            t = f["attention/T_hat"][()]
            if not np.all(np.isfinite(t)):
                fail("attention: T_hat not finite")
        if task == "reorder":
            p = np.sort(f["reorder/permutation"][()])
            if not np.array_equal(p, np.arange(p.size)):
                fail("reorder: /reorder/permutation is not a permutation")
        if task == "sweep":
            sums = glob.glob(os.path.join(work, "**", "summary.csv"), recursive=True)
            if not sums:
                fail("sweep: no summary.csv under the working directory")
            rows = list(csv.DictReader(open(sums[0])))
            bad = [r["point"] for r in rows if r["status"] != "0"]
            if not rows or bad:
                fail("sweep: %d rows, failed points %s" % (len(rows), bad))
            extra = ", %d sweep points ok" % len(rows)
    print("%s: %d points, d = %d, mmd %.3e%s" % (task, pts.shape[0], pts.shape[1] if pts.ndim == 2 else 0,
                                                 mmd, extra))


if __name__ == "__main__":
    main()
