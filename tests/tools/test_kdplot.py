#!/usr/bin/env python3
"""test_kdplot.py - render every kdplot picture from small output files written here with h5py in
the documented layout (include/kdistill/author/kd_io.h, docs/hpc.md) and check each PNG: exists, valid
PNG signature and IHDR, at least 8 KiB, and more than one colour with real spread. Also checks
that bad input fails with exit status 1 and one message. The figures' content is checked through
kdplot's make_* functions (the module loaded from its file): the pair grid's axes count and
labels, --dims, X and Y told apart on a ctt output with the statistic (not "MMD") in the title,
the level line at alpha in CTT-study plots (table column, config_yaml, --alpha), NaN-MMD runs
named in the trace legend and in a note; integer-typed metrics are read like float ones.

usage: test_kdplot.py PATH/TO/_kdplot.py      (exit 77 = skipped: numpy/h5py/matplotlib missing)
"""

import os
import struct
import subprocess
import sys
import tempfile

SKIP = 77
try:
    import h5py
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image as mpimg
    import numpy as np
except ImportError as e:
    print("SKIP: kdplot test needs numpy, h5py and matplotlib (%s); Debian 12: apt-get install "
          "python3-h5py python3-matplotlib" % e)
    sys.exit(SKIP)

KDPLOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..",
                                                            "python", "kdistill", "_kdplot.py")
passed = 0
failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s" % what)
    return cond


def write_output(path, algorithm, pts, w, trace=None, mmd=0.01):
    """An output file in the kdistill layout (kd_io.h)."""
    with h5py.File(path, "w") as f:
        f.attrs["kdistill_version"] = "0.1.0"
        f.attrs["task"] = "herd"
        f.attrs["algorithm"] = algorithm
        f.attrs["kernel"] = "gauss(ls=1)"
        f.attrs["n_ranks"] = np.int64(2)
        f.attrs["seed"] = np.uint64(7)
        f.attrs["created_utc"] = "2026-11-22T12:00:00Z"
        f.attrs["config_yaml"] = "task: herd\n"
        g = f.create_group("coreset")
        g["points"] = pts
        g["weights"] = w
        g["indices"] = np.arange(pts.shape[0], dtype=np.int64)
        m = f.create_group("metrics")
        m.attrs["mmd"] = mmd
        m.attrs["seconds"] = 0.5
        m.attrs["kernel_evals"] = np.uint64(1000)
        if trace is not None:
            t = m.create_group("trace")
            it, atoms, mm, sec = trace
            t["iteration"] = np.asarray(it, dtype=np.int64)
            t["n_atoms"] = np.asarray(atoms, dtype=np.int64)
            t["mmd"] = np.asarray(mm, dtype=float)
            t["seconds"] = np.asarray(sec, dtype=float)


def png_ok(path, what):
    if not check(os.path.exists(path), "%s: %s was not written" % (what, path)):
        return
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(33)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", "%s: PNG signature" % what)
    check(head[12:16] == b"IHDR", "%s: IHDR chunk first" % what)
    wpx, hpx = struct.unpack(">II", head[16:24])
    check(wpx >= 300 and hpx >= 300, "%s: image %dx%d too small" % (what, wpx, hpx))
    check(size >= 8192, "%s: only %d bytes" % (what, size))
    img = mpimg.imread(path)
    rgb = img[..., :3].reshape(-1, 3)
    colours = np.unique((rgb * 255).astype(np.uint8), axis=0).shape[0]
    check(colours >= 16, "%s: only %d distinct colours" % (what, colours))
    # the plot must ink a real fraction of the canvas, not just a frame
    nonwhite = np.mean(np.any(rgb < 0.95, axis=1))
    check(nonwhite > 0.01, "%s: only %.4f of the pixels are not white" % (what, nonwhite))


def run(args, expect=0, what=""):
    r = subprocess.run([sys.executable, KDPLOT] + args, capture_output=True, text=True, timeout=120)
    ok = check(r.returncode == expect, "%s: exit %d, expected %d; stderr: %s" %
               (what, r.returncode, expect, r.stderr.strip()))
    return r, ok


def load_kdplot():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("kdplot_mod", KDPLOT)
    spec = importlib.util.spec_from_loader("kdplot_mod", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def legend_texts(fig):
    out = []
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is not None:
            out += [t.get_text() for t in leg.get_texts()]
    for leg in fig.legends:
        out += [t.get_text() for t in leg.get_texts()]
    return out


def content_tests(tmp, rng):
    """Figure content through the make_* functions."""
    import matplotlib.pyplot as plt
    kd = load_kdplot()
    p = lambda name: os.path.join(tmp, name)  # noqa: E731
    parse = lambda argv: kd.make_parser().parse_args(argv)  # noqa: E731

    # pair grid: d = 3 gives 3 x 3 axes, labelled x[0..2]; d = 6 the first 5 (25 axes)
    pts3 = rng.normal(size=(12, 3))
    write_output(p("c3.h5"), "kernel_herding", pts3, np.full(12, 1 / 12), None)
    fig = kd.make_coreset(parse(["coreset", p("c3.h5")]))
    check(len(fig.axes) == 9, "pair grid d=3: %d axes, expected 9" % len(fig.axes))
    xl = sorted({ax.get_xlabel() for ax in fig.axes if ax.get_xlabel()})
    check(xl == ["x[0]", "x[1]", "x[2]"], "pair grid d=3: x labels %s" % xl)
    # the off-diagonal panel (row 1, column 0) shows x[0] against x[1] of the coreset
    off = fig.axes[3].collections[-1].get_offsets()
    check(np.allclose(np.asarray(off), pts3[:, [0, 1]]), "pair grid: panel (1,0) is x[0] vs x[1]")
    plt.close(fig)
    write_output(p("c6.h5"), "kernel_herding", rng.normal(size=(10, 6)), np.full(10, 0.1), None)
    fig = kd.make_coreset(parse(["coreset", p("c6.h5")]))
    check(len(fig.axes) == 25, "pair grid d=6: %d axes, expected 25 (first 5 coordinates)" %
          len(fig.axes))
    plt.close(fig)
    fig = kd.make_coreset(parse(["coreset", p("c6.h5"), "--dims", "1,3,5"]))
    xl = sorted({ax.get_xlabel() for ax in fig.axes if ax.get_xlabel()})
    check(len(fig.axes) == 9 and xl == ["x[1]", "x[3]", "x[5]"], "--dims 1,3,5: %d axes, %s" %
          (len(fig.axes), xl))
    plt.close(fig)
    fig = kd.make_coreset(parse(["coreset", p("c3.h5"), "--dims", "2,0"]))
    ax = fig.axes[0]
    off = np.asarray(ax.collections[-1].get_offsets())
    check(len(fig.axes) == 1 and ax.get_xlabel() == "x[2]" and ax.get_ylabel() == "x[0]" and
          np.allclose(off, pts3[:, [2, 0]]), "--dims 2,0: one panel of x[2] vs x[0]")
    plt.close(fig)
    r, _ = run(["coreset", p("c3.h5"), "--dims", "0,3", "-o", p("bad_dims.png")], 1, "--dims 0,3")
    check("out of range" in r.stderr and not os.path.exists(p("bad_dims.png")), "--dims: message")

    # the title words the MMD as the run's summary does: an estimate (0 here: MMD^2 < 0 clamped)
    # with its standard error, a bounded one with its bound, an exact one as exact (it printed
    # "MMD 0.000e+00" for the estimate)
    for method, extra, want in ((1, {"mmd_se": 1.1e-3}, "MMD 0.000e+00 +- 1.1e-03 (estimated)"),
                                (3, {"mmd_bound": 2.8e-10}, "MMD 4.027e-03 +- 2.8e-10 (exact to this bound)"),
                                (0, {}, "MMD 4.027e-03 (exact)")):
        write_output(p("m%d.h5" % method), "uniform", rng.normal(size=(8, 2)), np.full(8, 1 / 8),
                     None, mmd=0.0 if method == 1 else 4.027096e-3)
        with h5py.File(p("m%d.h5" % method), "a") as f:
            f["metrics"].attrs["mmd_method"] = np.int64(method)
            for k, v in extra.items():
                f["metrics"].attrs[k] = v
        fig = kd.make_coreset(parse(["coreset", p("m%d.h5" % method)]))
        title = fig.axes[0].get_title()
        check(title.endswith(want), "coreset title, mmd_method %d: '%s', expected '... %s'" %
              (method, title, want))
        plt.close(fig)

    # ctt output: X and Y apart, the statistic (not MMD) in the title; integer-typed metrics
    pts = rng.normal(size=(24, 2))
    write_output(p("ctt_out.h5"), "ctt", pts, np.full(24, 1 / 24), None, mmd=0.0123)
    with h5py.File(p("ctt_out.h5"), "a") as f:
        f.attrs["task"] = "ctt"
        t = f.create_group("test")
        t["bins"] = np.array([4, 4], dtype=np.int64)
        t["coreset_bin"] = np.repeat(np.arange(8), 3).astype(np.int64)  # rows 0..11 in X bins
        t["statistic"] = 0.0123
        t["p_value"] = 0.0099
        t["reject"] = np.int64(1)
        f["metrics"].attrs["reject"] = np.int64(1)
        f["metrics"].attrs["kernel_evals"] = np.int64(4096)
    fig = kd.make_coreset(parse(["coreset", p("ctt_out.h5")]))
    labels = legend_texts(fig)
    # --data beyond DATA_DRAW_MAX rows: a uniform sample is drawn and the legend says so
    big = rng.normal(size=(kd.DATA_DRAW_MAX + 5000, 2))
    np.save(p("big.npy"), big)
    write_output(p("c2.h5"), "kernel_herding", big[:12], np.full(12, 1 / 12), None)
    figb = kd.make_coreset(parse(["coreset", p("c2.h5"), "--data", p("big.npy")]))
    drawn = max(len(c.get_offsets()) for c in figb.axes[0].collections)
    want = "data (%d of %d rows, drawn at random)" % (kd.DATA_DRAW_MAX, big.shape[0])
    check(drawn == kd.DATA_DRAW_MAX and want in legend_texts(figb),
          "coreset --data: %d rows drawn, legend %s" % (drawn, legend_texts(figb)))
    plt.close(figb)
    check("X coreset (12)" in labels and "Y coreset (12)" in labels,
          "ctt coreset: legend %s lacks X/Y" % labels)
    title = fig.axes[0].get_title()
    check("statistic" in title and "p-value" in title and "MMD" not in title and "reject" in title,
          "ctt coreset: title '%s'" % title)
    xs = [np.asarray(c.get_offsets()) for c in fig.axes[0].collections]
    check(len(xs) == 2 and np.allclose(xs[0], pts[:12]) and np.allclose(xs[1], pts[12:]),
          "ctt coreset: X rows and Y rows drawn as separate groups")
    plt.close(fig)
    run(["coreset", p("ctt_out.h5"), "-o", p("ctt_coreset.png")], 0, "ctt coreset png")
    png_ok(p("ctt_coreset.png"), "ctt coreset")

    # CTT study: the level line at alpha (CSV column, config_yaml, --alpha)
    def level_lines(fig):
        return [ln for ln in fig.axes[0].get_lines()
                if len(set(np.asarray(ln.get_ydata(), dtype=float))) == 1 and
                ln.get_label().startswith("level alpha")]
    fig = kd.make_ctt(parse(["ctt", p("study.csv")]))
    ll = level_lines(fig)
    check(len(ll) == 1 and float(ll[0].get_ydata()[0]) == 0.05 and
          "level alpha = 0.05" in legend_texts(fig), "ctt study csv: a line at alpha 0.05")
    plt.close(fig)
    with h5py.File(p("study.h5"), "a") as f:
        f.attrs["config_yaml"] = "task: ctt_study\nstudy:\n  m: 256\n  alpha: 0.01\n"
    fig = kd.make_ctt(parse(["ctt", p("study.h5")]))
    ll = level_lines(fig)
    check(len(ll) == 1 and float(ll[0].get_ydata()[0]) == 0.01, "ctt study h5: line at alpha 0.01 "
          "from config_yaml")
    plt.close(fig)
    fig = kd.make_ctt(parse(["ctt", p("study.h5"), "--alpha", "0.1"]))
    ll = level_lines(fig)
    check(len(ll) == 1 and float(ll[0].get_ydata()[0]) == 0.1, "ctt study: --alpha 0.1")
    plt.close(fig)
    r, _ = run(["coreset", p("study.h5"), "-o", p("bad_study.png")], 1, "coreset of a ctt_study")
    check("kdplot ctt" in r.stderr, "coreset of a ctt_study: points to kdplot ctt")

    # trace: NaN-MMD runs are named, not dropped
    n = np.arange(1, 17)
    write_output(p("ok.h5"), "kernel_herding", pts[:4], np.full(4, 0.25), (n, n, 1.0 / n, 0.01 * n))
    write_output(p("allnan.h5"), "bpcg", pts[:4], np.full(4, 0.25),
                 (n, n, np.full(16, np.nan), 0.01 * n), mmd=float("nan"))
    half = 1.0 / n
    half[8:] = np.nan
    write_output(p("halfnan.h5"), "fcfw", pts[:4], np.full(4, 0.25), (n, n, half, 0.01 * n))
    write_output(p("nantail.h5"), "uniform", pts[:4], np.full(4, 0.25), None, mmd=float("nan"))
    fig = kd.make_trace(parse(["trace", p("ok.h5"), p("allnan.h5"), p("halfnan.h5"),
                               p("nantail.h5")]))
    labels = legend_texts(fig)
    check(any(t.startswith("bpcg") and "NaN" in t for t in labels), "trace: all-NaN run in legend %s"
          % labels)
    check(any(t.startswith("fcfw") and "8 of 16" in t for t in labels), "trace: partly NaN run")
    check(any(t.startswith("uniform") and "nan" in t for t in labels), "trace: NaN final MMD run")
    notes = " ".join(t.get_text() for t in fig.texts)
    check("bpcg" in notes and "uniform" in notes and "fcfw" in notes, "trace: note '%s'" % notes)
    plt.close(fig)
    r, _ = run(["trace", p("allnan.h5"), "-o", p("trace_nan.png")], 0, "trace of an all-NaN run")
    png_ok(p("trace_nan.png"), "trace all-NaN")
    check("note: bpcg" in r.stderr, "trace all-NaN: stderr note")


def main():
    rng = np.random.default_rng(3)
    keep = os.environ.get("KDPLOT_TEST_KEEP")
    with tempfile.TemporaryDirectory(prefix="kdplot_test_") as tmp0:
        tmp = keep or tmp0
        os.makedirs(tmp, exist_ok=True)
        p = lambda name: os.path.join(tmp, name)  # noqa: E731
        data = rng.normal(size=(2000, 3))
        with h5py.File(p("data.h5"), "w") as f:
            f["points"] = data
        # coreset: 32 rows of the data, uneven weights
        idx = rng.choice(2000, size=32, replace=False)
        w = rng.uniform(0.5, 1.5, size=32)
        w /= w.sum()
        n = np.arange(1, 33)
        tr_h = (n, n, 1.0 / n, 0.01 * n)
        tr_k = (np.arange(0, 6), 2 ** np.arange(0, 6), 0.5 ** np.arange(1, 7), 0.1 * np.arange(6))
        write_output(p("herd.h5"), "kernel_herding", data[idx], w, tr_h)
        write_output(p("kt.h5"), "kt_compress", data[idx[:16]], np.full(16, 1 / 16), tr_k)
        write_output(p("notrace.h5"), "uniform", data[idx[:8]], np.full(8, 1 / 8), None, mmd=0.2)

        run(["coreset", p("herd.h5"), "--data", p("data.h5"), "-o", p("coreset.png")], 0, "coreset")
        png_ok(p("coreset.png"), "coreset")
        # CSV data and --dataset
        np.savetxt(p("data.csv"), data, delimiter=",", header="x0,x1,x2", comments="")
        run(["coreset", p("kt.h5"), "--data", p("data.csv"), "-o", p("coreset_csv.png")], 0,
            "coreset csv")
        png_ok(p("coreset_csv.png"), "coreset csv")
        run(["coreset", p("kt.h5"), "--data", p("data.h5"), "--dataset", "/points", "-o",
             p("coreset_ds.png")], 0, "coreset --dataset")
        png_ok(p("coreset_ds.png"), "coreset --dataset")

        r, _ = run(["trace", p("herd.h5"), p("kt.h5"), p("notrace.h5"), "-o", p("trace.png")], 0,
                   "trace")
        png_ok(p("trace.png"), "trace")
        check("no /metrics/trace" in r.stderr, "trace: note for a run without trace")

        # sweep summary, as task: sweep writes it (docs/hpc.md)
        with open(p("summary.csv"), "w") as fh:
            fh.write("point,algorithm.name,algorithm.n_out,status,mmd,n_atoms,seconds,"
                     "kernel_evals,file\n")
            i = 0
            for a in ("kernel_herding", "uniform"):
                for nout in (8, 16, 32, 64):
                    mm = (1.0 if a == "uniform" else 0.3) / (nout ** (0.5 if a == "uniform" else 1))
                    fh.write("%d,%s,%d,0,%.6e,%d,%.3f,%d,point_%04d.h5\n" %
                             (i, a, nout, mm, nout, 0.01 * nout, 100 * nout, i))
                    i += 1
        run(["sweep", p("summary.csv"), "-o", p("sweep.png")], 0, "sweep csv")
        png_ok(p("sweep.png"), "sweep csv")
        with h5py.File(p("summary.h5"), "w") as f:
            g = f.create_group("sweep")
            g["point"] = np.arange(6, dtype=np.int64)
            g["mmd"] = np.array([0.3, 0.2, 0.1, 0.05, 0.04, 0.02])
            g["n_atoms"] = np.array([4, 8, 16, 32, 64, 128], dtype=np.int64)
            g["seconds"] = np.linspace(0.1, 1, 6)
            g["status"] = np.zeros(6, dtype=np.int64)
            pp = g.create_group("params")
            pp["kernel.ls"] = np.array([0.5, 1, 2, 0.5, 1, 2])
            pp.create_dataset("run.seed", data=np.array(["1", "1", "1", "2", "2", "2"], dtype="S"))
        run(["sweep", p("summary.h5"), "-o", p("sweep_h5.png")], 0, "sweep h5")
        png_ok(p("sweep_h5.png"), "sweep h5")
        run(["sweep", p("summary.h5"), "--mean-over", "run.seed", "-o", p("sweep_mean.png")], 0,
            "sweep --mean-over")
        png_ok(p("sweep_mean.png"), "sweep --mean-over")
        r, _ = run(["sweep", p("summary.csv"), "--x", "kernel.nope", "-o", p("bad.png")], 1,
                   "sweep --x unknown")
        check("kernel.nope" in r.stderr and not os.path.exists(p("bad.png")), "sweep --x: message")

        # CTT study (task ctt_study, docs/ctt.md): study.csv and /study/* in the output
        gs = [0, 1, 2, 3, -1]
        rate = [0.35, 0.6, 0.8, 0.9, 0.95]
        se_ = [0.05, 0.05, 0.04, 0.03, 0.02]
        secs = [0.01, 0.03, 0.1, 0.4, 2.5]
        with open(p("study.csv"), "w") as fh:
            fh.write("method,g,s,m,n,d,B,alpha,replicates,rejections,rejection_rate,se,"
                     "mean_seconds\n")
            for g_, r_, e_, t_ in zip(gs, rate, se_, secs):
                fh.write("%s,%d,16,4096,4096,2,100,0.05,100,%d,%g,%g,%g\n" %
                         ("exact" if g_ < 0 else "ctt", g_, int(100 * r_), r_, e_, t_))
        run(["ctt", p("study.csv"), "-o", p("ctt.png")], 0, "ctt csv")
        png_ok(p("ctt.png"), "ctt csv")
        write_output(p("study.h5"), "ctt_study", np.zeros((0, 2)), np.zeros(0), None,
                     mmd=float("nan"))
        with h5py.File(p("study.h5"), "a") as f:
            f.attrs["task"] = "ctt_study"
            g = f.create_group("study")
            g["g"] = np.array(gs, dtype=np.int64)
            g["rejections"] = np.array([int(100 * r_) for r_ in rate], dtype=np.int64)
            g["rejection_rate"] = np.array(rate)
            g["se"] = np.array(se_)
            g["mean_seconds"] = np.array(secs)
            g["reject"] = np.zeros((5, 100), dtype=np.int64)  # 2-D: ignored by the table reader
        run(["ctt", p("study.h5"), "-o", p("ctt_h5.png")], 0, "ctt h5")
        png_ok(p("ctt_h5.png"), "ctt h5")

        content_tests(tmp, rng)

        # bad input: exit 1, one clear line, no PNG
        r, _ = run(["coreset", p("missing.h5"), "-o", p("bad.png")], 1, "missing file")
        check("no such file" in r.stderr and not os.path.exists(p("bad.png")), "missing: message")
        r, _ = run(["coreset", p("data.h5"), "-o", p("bad.png")], 1, "not an output file")
        check("/coreset/points" in r.stderr, "not output: message names /coreset/points")
        r, _ = run(["ctt", p("summary.csv"), "-o", p("bad.png")], 1, "ctt on a sweep table")
        check("power" in r.stderr and not os.path.exists(p("bad.png")), "ctt: message")
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
