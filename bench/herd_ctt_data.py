"""bench/herd_ctt_data.py NEW_KDISTILL OLD_KDISTILL GP_SRC - called by bench/herd_ctt.sh (which
describes the runs). The rows are bench/dimension_data.py's patch8 (seed 7, standardised per
column), imported, not copied: the first 2^16 for herding, rows [0, 2^14) and [2^14, 2^15) as
ctt's two samples; the length scale is its median heuristic over the 2^16 rows."""
import os
import statistics
import subprocess
import sys

import h5py
import numpy as np

NEW, OLD = sys.argv[1], sys.argv[2]
sys.argv = [sys.argv[0], NEW, sys.argv[3]]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dimension_data as dd  # noqa: E402

RUNS = int(os.environ.get("HC_RUNS", "3"))
ITERS = int(os.environ.get("HC_ITERS", "300"))
WORK = os.environ.get("HC_WORK", "/tmp/kd_hc")


def files():
    os.makedirs(WORK, exist_ok=True)
    X = np.ascontiguousarray(dd.make("patch8", 2 ** 16))
    paths = [os.path.join(WORK, f) for f in ("p8_16.npy", "p8_x.npy", "p8_y.npy")]
    for p, rows in zip(paths, (X, X[:2 ** 14], X[2 ** 14:2 ** 15])):
        np.save(p, np.ascontiguousarray(rows))
    return paths, dd.median_ls(X)


def configs(paths, ls):
    herd = ("task: herd\ncandidates: {type: npy, path: %s}\ntarget: {type: data}\n"
            "kernel: {name: gaussian, ls: %.17g}\nalgorithm: {name: bpcg, max_iter: %d}\n"
            "run: {seed: 1}\n" % (paths[0], ls, ITERS))
    ctt = ("task: ctt\nx: {type: npy, path: %s}\ny: {type: npy, path: %s}\n"
           "kernel: {name: gaussian, ls: %.17g}\nalgorithm: {name: ctt}\nrun: {seed: 1}\n"
           % (paths[1], paths[2], ls))
    return {"herd": herd, "ctt": ctt}


def run(binary, task, text, tag):
    cfg, out = os.path.join(WORK, "%s_%s.yaml" % (task, tag)), os.path.join(WORK, "%s_%s.h5"
                                                                           % (task, tag))
    with open(cfg, "w") as f:
        f.write(text + "output: {path: %s}\n" % out)
    subprocess.run([binary, "run", cfg], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with h5py.File(out, "r") as f:
        m = f["metrics"].attrs
        if task == "herd":
            key = [f["coreset/points"][()], f["coreset/weights"][()], f["metrics/trace/mmd"][()]]
        else:
            key = [np.array([m["statistic"], m["p_value"]])]
        return float(m["seconds"]), int(m["kernel_evals"]), key


def main():
    paths, ls = files()
    print("patch8: 8 x 8 grey patches, d = 64, ls = %.4f (median heuristic)" % ls)
    print("| task | rows | old s (median) | new s (median) | old/new | kernel evaluations old / "
          "new | same output | runs old; new |")
    print("|---|---|---|---|---|---|---|---|")
    for task, text in configs(paths, ls).items():
        t_old, t_new, same = [], [], True
        for r in range(RUNS):
            order = [("old", OLD), ("new", NEW)] if r % 2 == 0 else [("new", NEW), ("old", OLD)]
            res = {tag: run(b, task, text, tag) for tag, b in order}
            t_old.append(res["old"][0])
            t_new.append(res["new"][0])
            same &= all(np.array_equal(a, b, equal_nan=True)
                        for a, b in zip(res["old"][2], res["new"][2]))
        mo, mn = statistics.median(t_old), statistics.median(t_new)
        rows = "2^16 x 64" if task == "herd" else "2 x 2^14 x 64"
        print("| %s | %s | %.3f | %.3f | %.2fx | %d / %d | %s | %s; %s |" % (
            task + (" (bpcg, %d iterations)" % ITERS if task == "herd" else ""), rows, mo, mn,
            mo / mn, res["old"][1], res["new"][1], "yes" if same else "NO",
            " ".join("%.3f" % t for t in t_old), " ".join("%.3f" % t for t in t_new)), flush=True)


main()
