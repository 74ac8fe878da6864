"""kdplot - turn kdistill output files into PNG pictures.

  kdplot coreset OUT.h5 [--data DATA.h5|.npy|.npz|.csv] [--dataset /points] [--dims I,J[,K...]]
                [-o coreset.png]
  kdplot trace A.h5 [B.h5 ...] [--label NAME ...] [-o trace.png]
  kdplot sweep summary.csv|summary.h5 [--x KEY] [--mean-over KEY] [-o sweep.png]
  kdplot ctt study.h5|study.csv [--alpha A] [-o ctt.png]

coreset: one panel of two coordinates (--dims I,J; default 0,1), or a pair grid (histograms on the
diagonal) for d > 2 or when --dims names three or more. On a `ctt` output the X and Y coresets
are drawn apart and the title gives the test statistic, p-value and decision. trace: runs whose
MMD is NaN (e.g. evaluation skipped) are named in the legend and in a note under the panels.
ctt: a dashed line at the level alpha (the rejection rate a calibrated test keeps under H0).

Needs Python 3 with numpy, h5py and matplotlib (Debian 12: apt-get install python3-h5py
python3-matplotlib). The file layouts it reads are the ones kdistill writes (docs/hpc.md,
include/kdistill/author/kd_io.h). Exit status: 0 ok, 1 bad input (missing file, wrong layout), 2 missing
Python modules.

The `kdplot` command runs main() of this module: pip installs it as an entry point, and
`cmake --install` as a small wrapper (tools/kdplot.in) that runs this file. Run as a file (the
wrapper, the tests), it needs no kdistill package; where one is importable it reads data with it.
"""

import argparse
import csv
import os
import sys

_DEBIAN_PY = "/usr/bin/python3"


def _import_or_reexec():
    """Import numpy/h5py/matplotlib; if this interpreter lacks them but Debian's has them
    (a pyenv/conda python3 earlier on PATH), run this script again under /usr/bin/python3."""
    try:
        import h5py  # noqa: F401
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
        return
    except ImportError as e:
        missing = e.name or str(e)
    if (os.path.exists(_DEBIAN_PY) and os.path.realpath(sys.executable) != os.path.realpath(_DEBIAN_PY)
            and not os.environ.get("KDPLOT_NO_REEXEC")):
        os.environ["KDPLOT_NO_REEXEC"] = "1"
        os.execv(_DEBIAN_PY, [_DEBIAN_PY, os.path.abspath(__file__)] + sys.argv[1:])
    sys.stderr.write("kdplot: missing Python module '%s' (Debian 12: apt-get install python3-h5py "
                     "python3-matplotlib)\n" % missing)
    sys.exit(2)


_import_or_reexec()

import h5py  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402,F401
import numpy as np  # noqa: E402


class InputError(Exception):
    """A user-facing problem with an input file (exit status 1)."""


def _attr_str(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray) and v.shape == ():
        return _attr_str(v[()])
    return str(v)


def _open_h5(path):
    if not os.path.exists(path):
        raise InputError("%s: no such file" % path)
    try:
        return h5py.File(path, "r")
    except OSError as e:
        raise InputError("%s: not an HDF5 file (%s)" % (path, e))


def read_output(path):
    """Read one kdistill output file into a dict (coreset, metrics, trace, root attributes)."""
    with _open_h5(path) as f:
        if "coreset" not in f or "points" not in f["coreset"]:
            raise InputError("%s: no /coreset/points (not a kdistill output file)" % path)
        out = {"path": path}
        out["points"] = np.atleast_2d(np.asarray(f["coreset/points"][()], dtype=float))
        w = f["coreset"].get("weights")
        out["weights"] = (np.asarray(w[()], dtype=float) if w is not None
                          else np.full(out["points"].shape[0], 1.0 / max(1, out["points"].shape[0])))
        for k in ("task", "algorithm", "kernel"):
            out[k] = _attr_str(f.attrs[k]) if k in f.attrs else ""
        m = f.get("metrics")
        out["mmd"] = float(m.attrs["mmd"]) if m is not None and "mmd" in m.attrs else float("nan")
        out["metrics"] = {k: m.attrs[k] for k in m.attrs} if m is not None else {}
        out["config_yaml"] = _attr_str(f.attrs["config_yaml"]) if "config_yaml" in f.attrs else ""
        # CTT: which rows are X and which Y (bins < s_m are X bins), the test's numbers
        if "test/coreset_bin" in f and "test/bins" in f:
            out["ctt_is_x"] = np.asarray(f["test/coreset_bin"][()]) < int(f["test/bins"][()][0])
        for k in ("statistic", "p_value", "reject"):
            if "test/" + k in f:
                out["test_" + k] = float(np.asarray(f["test/" + k][()]))
        tr = f.get("metrics/trace")
        if tr is not None and "mmd" in tr:
            out["trace"] = {k: np.asarray(tr[k][()]) for k in ("iteration", "n_atoms", "mmd", "seconds")
                            if k in tr}
        else:
            out["trace"] = None
    return out


def _kdistill():
    """The kdistill package when this Python has it (a pip install puts kdplot beside it)."""
    try:
        import kdistill
        return kdistill
    except ImportError:
        return None


def read_points_file(path, dataset=None):
    """Data points read by kdistill's own readers (kdistill.read_points: HDF5, .npy/.npz, CSV of
    any dialect kdistill reads, with headers and pandas index columns) when the kdistill package
    is importable, exactly as `kdistill run` reads `data:`; an HDF5 file without --dataset gives
    its first 2-D float dataset. Without the package: HDF5, or a comma-separated CSV."""
    kd = _kdistill()
    if kd is not None:
        ext = os.path.splitext(path)[1].lower()
        if not dataset and ext in (".h5", ".hdf5", ".he5"):
            dataset = _first_2d_dataset(path)
        try:
            return kd.read_points(path, **({"dataset": dataset} if dataset else {}))
        except (kd.Error, ValueError) as e:
            raise InputError(str(e))
    if path.endswith(".csv") or path.endswith(".txt"):
        if not os.path.exists(path):
            raise InputError("%s: no such file" % path)
        with open(path) as fh:
            first = fh.readline()
        skip = 0
        try:
            [float(x) for x in first.replace(",", " ").split()]
        except ValueError:
            skip = 1
        a = np.loadtxt(path, delimiter=",", skiprows=skip, ndmin=2)
        return a
    if not dataset:
        dataset = _first_2d_dataset(path)
    with _open_h5(path) as f:
        if dataset not in f:
            raise InputError("%s: no dataset %s" % (path, dataset))
        return np.atleast_2d(np.asarray(f[dataset][()], dtype=float))


def _first_2d_dataset(path):
    """The path of the first 2-D float dataset of an HDF5 file."""
    with _open_h5(path) as f:
        found = []

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.ndim == 2 and obj.dtype.kind == "f":
                found.append("/" + name)

        f.visititems(visit)
        if not found:
            raise InputError("%s: no 2-D float dataset (use --dataset)" % path)
        return found[0]


def _finish(fig, path):
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise InputError("%s: output directory does not exist" % d)
    fig.tight_layout(rect=getattr(fig, "_kd_rect", None))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("kdplot: wrote %s" % path)


def _label(o):
    lab = o["algorithm"] or os.path.basename(o["path"])
    return lab


# ---------------------------------------------------------------- coreset
def _metric_name(o):
    """What /metrics/mmd holds: the test statistic for ctt, the KSD for a Stein kernel."""
    if o["task"] == "ctt":
        return "statistic"
    if o["kernel"].startswith("stein"):
        return "KSD"
    return "MMD"


def _parse_dims(text, d, path):
    try:
        dims = [int(v) for v in text.split(",") if v.strip() != ""]
    except ValueError:
        raise InputError("--dims %s: expected comma-separated coordinate numbers, e.g. 0,2" % text)
    if len(dims) < 2 or len(set(dims)) != len(dims):
        raise InputError("--dims %s: give at least two different coordinates" % text)
    bad = [i for i in dims if i < 0 or i >= d]
    if bad:
        raise InputError("--dims %s: coordinate %d out of range (%s has d = %d: 0..%d)" %
                         (text, bad[0], path, d, d - 1))
    return dims


PAIR_GRID_MAX = 5  # coordinates in the default pair grid when d > 2 and no --dims
# --data rows drawn at most: a scatter of millions of rows takes minutes and shows no more than a
# uniform sample of this size; the plot says how many of how many rows it draws
DATA_DRAW_MAX = 50000


def _mmd_text(o):
    """The reported MMD as the run's summary and `kdistill info` word it (/metrics mmd_method):
    the value alone and "exact", or +- the standard error ("estimated"), or +- the bound ("exact
    to this bound"); never a bare number that could be an estimate."""
    m = o.get("metrics", {})
    method = int(m.get("mmd_method", 0))
    if method == 1:
        return "%.3e +- %.1e (estimated)" % (o["mmd"], float(m.get("mmd_se", float("nan"))))
    if method == 3:
        return "%.3e +- %.1e (exact to this bound)" % (o["mmd"], float(m.get("mmd_bound", float("nan"))))
    return "%.3e (exact)" % o["mmd"]


def _coreset_title(o):
    pts = o["points"]
    if o["task"] == "ctt":
        t = "CTT: %d coreset points" % pts.shape[0]
        if "test_statistic" in o:
            t += "  statistic %.3e" % o["test_statistic"]
        if "test_p_value" in o:
            t += "  p-value %.3g" % o["test_p_value"]
        if "test_reject" in o:
            t += "  (%s)" % ("reject H0" if o["test_reject"] else "do not reject H0")
        return t
    t = "coreset: %s" % _label(o)
    if np.isfinite(o["mmd"]):
        t += "  %s %s" % (_metric_name(o), _mmd_text(o))
    else:
        t += "  (%s not evaluated)" % _metric_name(o)
    return t


def _coreset_groups(o):
    """(label, rows mask, colour, marker) per group of coreset rows: X and Y for ctt outputs."""
    n = o["points"].shape[0]
    if o["task"] == "ctt" and "ctt_is_x" in o and o["ctt_is_x"].size == n:
        x = o["ctt_is_x"]
        return [("X coreset (%d)" % x.sum(), x, "tab:blue", "o"),
                ("Y coreset (%d)" % (~x).sum(), ~x, "tab:orange", "^")]
    return [("%s (%d atoms)" % (_label(o), n), np.ones(n, dtype=bool), "tab:red", "o")]


def _data_sample(data):
    """At most DATA_DRAW_MAX rows of data, drawn uniformly without replacement (seed 0, in row
    order), and the legend label that says so."""
    n = data.shape[0]
    if n <= DATA_DRAW_MAX:
        return data, "data (%d)" % n
    keep = np.sort(np.random.default_rng(0).choice(n, size=DATA_DRAW_MAX, replace=False))
    return data[keep], "data (%d of %d rows, drawn at random)" % (DATA_DRAW_MAX, n)


def _draw_pair(ax, o, data, i, j, data_label=None):
    w = o["weights"]
    pts = o["points"]
    if data is not None:
        ax.scatter(data[:, i], data[:, j], s=4, c="0.7", alpha=0.6, linewidths=0,
                   label=data_label or "data (%d)" % data.shape[0])
    wmax = w.max() if w.size and w.max() > 0 else 1.0
    for lab, rows, col, mk in _coreset_groups(o):
        size = 12.0 + 400.0 * (w[rows] / wmax) / max(1.0, np.sqrt(w.size))
        ax.scatter(pts[rows, i], pts[rows, j], s=size, c=col, marker=mk, edgecolors="k",
                   linewidths=0.4, label=lab)


def _draw_hist(ax, o, data, i):
    if data is not None:
        ax.hist(data[:, i], bins=40, density=True, color="0.75", label="data")
    w = o["weights"]
    for lab, rows, col, _ in _coreset_groups(o):
        if rows.any():
            ww = w[rows] if w[rows].sum() > 0 else None
            ax.hist(o["points"][rows, i], bins=20, density=True, weights=ww, histtype="step",
                    color=col, lw=1.5, label=lab)


def make_coreset(args):
    o = read_output(args.file)
    if o["task"] == "ctt_study":
        raise InputError("%s: a ctt_study output has no coreset; plot it with: kdplot ctt %s" %
                         (args.file, args.file))
    pts = o["points"]
    if pts.shape[0] == 0:
        what = ("the exact test keeps no coreset" if o["task"] == "ctt" else "no points")
        raise InputError("%s: /coreset/points is empty (%s)" % (args.file, what))
    d = pts.shape[1]
    data = None
    if args.data:
        data = read_points_file(args.data, args.dataset)
        if data.shape[1] != d:
            raise InputError("%s: data has %d columns, the coreset %d" % (args.data, data.shape[1], d))
        data_all = data  # the histograms take every row: they cost little
        data, data_label = _data_sample(data)
        if data is not data_all:
            sys.stderr.write("kdplot: %s: %s\n" % (args.data, data_label[6:-1]))
    else:
        data_all, data_label = None, None
    if args.dims:
        dims = _parse_dims(args.dims, d, args.file)
    elif d > 2:
        dims = list(range(min(d, PAIR_GRID_MAX)))
        if d > PAIR_GRID_MAX:
            sys.stderr.write("kdplot: d = %d: pair grid of coordinates 0..%d (choose others with "
                             "--dims)\n" % (d, PAIR_GRID_MAX - 1))
    else:
        dims = [0, 1] if d > 1 else [0]
    if len(dims) <= 2:
        fig, ax = plt.subplots(figsize=(6, 5.5))
        if len(dims) == 1:  # d = 1: points on a line at height 0
            pts2 = np.column_stack([pts[:, 0], np.zeros(pts.shape[0])])
            o = dict(o, points=pts2)
            data = None if data is None else np.column_stack([data[:, 0], np.zeros(data.shape[0])])
            dims = [0, 1]
            ylab = ""
        else:
            ylab = "x[%d]" % dims[1]
        _draw_pair(ax, o, data, dims[0], dims[1], data_label)
        ax.set_xlabel("x[%d]" % (dims[0] if len(dims) else 0))
        ax.set_ylabel(ylab)
        ax.set_title(_coreset_title(o), fontsize=10)
        ax.legend(loc="best", fontsize=8)
        return fig
    k = len(dims)
    fig, axes = plt.subplots(k, k, figsize=(2.4 * k + 1, 2.4 * k + 0.6), squeeze=False)
    for a in range(k):
        for b in range(k):
            ax = axes[a][b]
            if a == b:
                _draw_hist(ax, o, data_all, dims[a])
            else:
                _draw_pair(ax, o, data, dims[b], dims[a], data_label)
            if a == k - 1:
                ax.set_xlabel("x[%d]" % dims[b], fontsize=8)
            if b == 0:
                ax.set_ylabel("x[%d]" % dims[a], fontsize=8)
            ax.tick_params(labelsize=6)
    handles, labels = axes[0][1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", fontsize=8)
    fig.suptitle(_coreset_title(o) + "  (d = %d)" % d, fontsize=10)
    fig._kd_rect = (0, 0, 0.86, 0.95)  # room for the title and the legend on the right
    return fig


def plot_coreset(args):
    _finish(make_coreset(args), args.output)


# ---------------------------------------------------------------- trace
def make_trace(args):
    runs = [read_output(p) for p in args.files]
    if args.label and len(args.label) != len(runs):
        raise InputError("--label given %d times for %d files" % (len(args.label), len(runs)))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.8))
    drawn = 0
    notes = []  # runs (or parts of runs) without a finite MMD: said on the figure, not dropped
    for i, o in enumerate(runs):
        lab = args.label[i] if args.label else _label(o)
        tr = o["trace"]
        if tr is None or len(tr.get("mmd", [])) == 0:
            sys.stderr.write("kdplot: %s has no /metrics/trace; drawn as one point\n" % o["path"])
            if not np.isfinite(o["mmd"]) or o["mmd"] <= 0:
                a1.plot([], [], "x", color="0.4", label="%s: MMD %s (not drawn)" % (lab, o["mmd"]))
                notes.append("%s: final MMD is %s" % (lab, o["mmd"]))
                continue
            n = o["points"].shape[0]
            a1.plot([n], [o["mmd"]], "o", label=lab)  # no iterations: left panel only
            drawn += 1
            continue
        mmd = np.asarray(tr["mmd"], dtype=float)
        atoms = np.asarray(tr.get("n_atoms", np.arange(1, mmd.size + 1)), dtype=float)
        it = np.asarray(tr.get("iteration", np.arange(1, mmd.size + 1)), dtype=float)
        ok = np.isfinite(mmd) & (mmd > 0)
        nan = int(np.sum(~np.isfinite(mmd)))
        if not ok.any():
            a1.plot([], [], "x", color="0.4", label="%s: every MMD is NaN (not drawn)" % lab)
            notes.append("%s: all %d trace MMDs are NaN" % (lab, mmd.size))
            continue
        if nan:
            lab = "%s (%d of %d MMDs NaN)" % (lab, nan, mmd.size)
            notes.append("%s: %d of %d trace MMDs are NaN (gaps)" % (_label(o), nan, mmd.size))
        # log axes: drop non-positive abscissae (iteration 0); NaNs leave gaps in the line
        ok1 = np.isfinite(mmd) & (atoms > 0)
        ok2 = np.isfinite(mmd) & (it > 0)
        y = np.where(mmd > 0, mmd, np.nan)
        (line,) = a1.plot(atoms[ok1 | ~np.isfinite(mmd)], np.where(ok1, y, np.nan)[ok1 | ~np.isfinite(mmd)],
                          "-", marker="." if ok1.sum() < 60 else None, label=lab)
        a2.plot(it[ok2 | ~np.isfinite(mmd)], np.where(ok2, y, np.nan)[ok2 | ~np.isfinite(mmd)], "-",
                marker="." if ok2.sum() < 60 else None, label=lab, color=line.get_color())
        drawn += 1
    for ax, xl in ((a1, "atoms"), (a2, "iteration")):
        if drawn:
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlabel(xl)
        ax.set_ylabel("MMD")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    a1.set_title("MMD vs atoms", fontsize=10)
    a2.set_title("MMD vs iterations", fontsize=10)
    if notes:
        for n_ in notes:
            sys.stderr.write("kdplot: note: %s\n" % n_)
        fig.text(0.01, 0.01, "note: " + "; ".join(notes), fontsize=7, color="tab:red", ha="left",
                 va="bottom", wrap=True)
        fig._kd_rect = (0, 0.07, 1, 1)  # room for the note under the panels
    return fig


def plot_trace(args):
    _finish(make_trace(args), args.output)


# ---------------------------------------------------------------- tables (sweep, ctt)
def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def read_table(path, group=None):
    """A table as {column: list}. CSV with a header row, or an HDF5 group of equal-length 1-D
    datasets (group given, else /sweep, /study, /ctt or the root, the first that has any)."""
    if path.endswith(".csv"):
        if not os.path.exists(path):
            raise InputError("%s: no such file" % path)
        with open(path, newline="") as fh:
            rows = [r for r in csv.reader(fh) if r and not r[0].startswith("#")]
        if len(rows) < 2:
            raise InputError("%s: no data rows" % path)
        head = [h.strip() for h in rows[0]]
        cols = {h: [] for h in head}
        for r in rows[1:]:
            if len(r) != len(head):
                raise InputError("%s: row with %d fields, header has %d" % (path, len(r), len(head)))
            for h, v in zip(head, r):
                cols[h].append(v.strip())
        return cols, head
    with _open_h5(path) as f:
        cands = [group] if group else ["sweep", "study", "ctt", "ctt/study", "/"]
        for g in cands:
            if g not in f and g != "/":
                continue
            grp = f[g]
            cols, head = {}, []

            def collect(prefix, gg):
                for k in gg:
                    obj = gg[k]
                    if isinstance(obj, h5py.Dataset) and obj.ndim == 1:
                        vals = obj[()]
                        if obj.dtype.kind in "SO":
                            vals = [_attr_str(v) for v in vals]
                        else:
                            vals = list(vals)
                        cols[prefix + k] = vals
                        head.append(prefix + k)
                    elif isinstance(obj, h5py.Group) and k == "params":
                        collect("", obj)

            collect("", grp)
            if cols:
                n = {len(v) for v in cols.values()}
                if len(n) != 1:
                    raise InputError("%s:%s: columns of different lengths" % (path, g))
                return cols, head
        raise InputError("%s: no table found (looked in %s)" % (path, ", ".join(cands)))


def _numeric_column(cols, key):
    vals = [_num(v) for v in cols[key]]
    return None if any(v is None for v in vals) else np.asarray(vals, dtype=float)


SWEEP_FIXED = ("point", "status", "mmd", "n_atoms", "seconds", "kernel_evals", "file", "message")


def _fmt(v):
    f = _num(v)
    if f is not None and np.isfinite(f) and f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return str(v)


def plot_sweep(args):
    _finish(make_sweep(args), args.output)


def make_sweep(args):
    cols, head = read_table(args.file)
    if "mmd" not in cols:
        raise InputError("%s: no 'mmd' column (not a sweep summary)" % args.file)
    mmd = np.asarray([_num(v) if _num(v) is not None else np.nan for v in cols["mmd"]], dtype=float)
    if "status" in cols:  # failed points have no MMD
        st = [_num(v) for v in cols["status"]]
        mmd = np.where([s_ == 0 for s_ in st], mmd, np.nan)
    params = [h for h in head if h not in SWEEP_FIXED]
    for k in (args.mean_over or []) + ([args.x] if args.x else []):
        if k not in params:
            raise InputError("%s: no parameter column %s (parameters: %s)" %
                             (args.file, k, ", ".join(params) or "none"))
    varying = [p for p in params if len({_fmt(v) for v in cols[p]}) > 1]
    averaged = [p for p in varying if p in (args.mean_over or [])]
    varying = [p for p in varying if p not in averaged]
    numeric = [p for p in varying if _numeric_column(cols, p) is not None]
    xkey = args.x or (numeric[0] if numeric else None)
    fig, ax = plt.subplots(figsize=(7, 5))
    title = "sweep: %d points" % len(mmd)
    if averaged:
        title += " (mean over %s; bars: min-max)" % ", ".join(averaged)
    if xkey is not None and _numeric_column(cols, xkey) is not None:
        x = _numeric_column(cols, xkey)
        others = [p for p in varying if p != xkey]
        series = {}
        for i in range(len(x)):
            key = ", ".join("%s=%s" % (p, _fmt(cols[p][i])) for p in others) or "all"
            series.setdefault(key, {}).setdefault(x[i], []).append(mmd[i])
        for key, byx in series.items():
            xs = np.asarray(sorted(byx))
            vals = [np.asarray(byx[v]) for v in xs]
            ys = np.asarray([np.nanmean(v) if np.any(np.isfinite(v)) else np.nan for v in vals])
            ok = np.isfinite(ys) & (ys > 0)
            if averaged:
                lo = np.asarray([np.nanmin(v) if np.any(np.isfinite(v)) else np.nan for v in vals])
                hi = np.asarray([np.nanmax(v) if np.any(np.isfinite(v)) else np.nan for v in vals])
                ax.errorbar(xs[ok], ys[ok], yerr=[ys[ok] - lo[ok], hi[ok] - ys[ok]], fmt="-o",
                            ms=4, capsize=3, label=key)
            else:
                ax.plot(xs[ok], ys[ok], "-o", ms=4, label=key)
        if np.all(x > 0) and x.max() / x.min() >= 8:
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.set_xticks(sorted(set(x.tolist())))
        ax.set_xlabel(xkey)
        if len(series) <= 12:
            ax.legend(fontsize=7)
    else:
        labels = []
        for i in range(len(mmd)):
            labels.append(", ".join(_fmt(cols[p][i]) for p in varying) or str(i))
        ok = np.where(np.isfinite(mmd) & (mmd > 0), mmd, np.nan)
        ax.bar(np.arange(len(mmd)), ok, color="tab:blue")
        ax.set_xticks(np.arange(len(mmd)))
        ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=7)
        ax.set_xlabel("sweep point")
    ax.set_yscale("log")
    ax.set_ylabel("MMD")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(title, fontsize=10)
    return fig


# CTT study: time-power curves. The ctt_study task writes a CSV (study.csv: method, g, s, m, n, d,
# B, alpha, replicates, rejections, rejection_rate, se, mean_seconds) and /study/{g, rejections,
# rejection_rate, se, mean_seconds} in its output (g = -1: the exact test); docs/ctt.md. Other
# column names accepted (first match wins):
CTT_TIME = ("mean_seconds", "seconds", "time", "runtime", "wall_seconds")
CTT_POWER = ("power", "rejection_rate", "reject_rate")
CTT_GROUP = ("method", "test", "label", "algorithm", "name")
CTT_PARAM = ("g", "oversampling", "bins", "s", "n_bins", "level")


def _ctt_alpha(args, cols):
    """The test level: --alpha, else the table's alpha column (one value), else study.alpha in
    the HDF5 output's config_yaml; None if none is known."""
    if args.alpha is not None:
        return args.alpha
    if "alpha" in cols:
        vals = {_num(v) for v in cols["alpha"]}
        if len(vals) == 1 and None not in vals:
            return vals.pop()
        if len(vals) > 1:
            sys.stderr.write("kdplot: several alpha values in %s; no level line (use --alpha)\n" %
                             args.file)
            return None
    if not args.file.endswith(".csv"):
        with _open_h5(args.file) as f:
            y = _attr_str(f.attrs["config_yaml"]) if "config_yaml" in f.attrs else ""
        for line in y.splitlines():  # the library writes one key per line
            key, sep, text = line.strip().partition(":")
            if sep and key == "alpha" and _num(text.strip()) is not None:
                return _num(text.strip())
        if y:  # the documented default (docs/ctt.md) when the config leaves it out
            return 0.05
    return None


def plot_ctt(args):
    _finish(make_ctt(args), args.output)


def make_ctt(args):
    cols, head = read_table(args.file, args.group)
    tkey = next((k for k in CTT_TIME if k in cols), None)
    pkey = next((k for k in CTT_POWER if k in cols), None)
    if tkey is None or pkey is None:
        raise InputError("%s: need a time column (%s) and a power column (%s); columns: %s" %
                         (args.file, "|".join(CTT_TIME), "|".join(CTT_POWER), ", ".join(head)))
    t = _numeric_column(cols, tkey)
    pw = _numeric_column(cols, pkey)
    if t is None or pw is None:
        raise InputError("%s: non-numeric %s or %s column" % (args.file, tkey, pkey))
    gkeys = [k for k in CTT_GROUP if k in cols]
    if not gkeys and "g" in cols and _numeric_column(cols, "g") is not None:
        # HDF5 /study has no method column: g < 0 marks the exact test
        cols["method"] = ["exact" if v < 0 else "ctt" for v in _numeric_column(cols, "g")]
        gkeys = ["method"]
    se = _numeric_column(cols, "se") if "se" in cols else None
    groups = {}
    for i in range(len(t)):
        key = " ".join(str(cols[k][i]) for k in gkeys) or "study"
        groups.setdefault(key, []).append(i)
    pcol = next((k for k in CTT_PARAM if k in cols and _numeric_column(cols, k) is not None), None)
    fig, ax = plt.subplots(figsize=(7, 5))
    for key, idx in groups.items():
        idx = sorted(idx, key=lambda i: t[i])
        if se is not None:
            ax.errorbar(t[idx], pw[idx], yerr=se[idx], fmt="-o", ms=4, capsize=3, label=key)
        else:
            ax.plot(t[idx], pw[idx], "-o", ms=4, label=key)
        if pcol is not None and len(idx) <= 20:
            for i in idx:
                if float(cols[pcol][i]) < 0:
                    continue
                ax.annotate("%s=%g" % (pcol, float(cols[pcol][i])), (t[i], pw[i]), fontsize=6,
                            textcoords="offset points", xytext=(3, 3))
    if np.all(t > 0) and t.max() / t.min() >= 8:
        ax.set_xscale("log")
    ax.set_xlabel("time per test (s)" if tkey != "runtime" else tkey)
    ax.set_ylabel("power (rejection rate)")
    ax.set_ylim(-0.02, 1.02)
    alpha = _ctt_alpha(args, cols)
    if alpha is not None:
        ax.axhline(alpha, color="k", ls="--", lw=1, label="level alpha = %g" % alpha)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("time-power trade-off (rejection rate at level alpha)", fontsize=10)
    return fig


def make_parser():
    ap = argparse.ArgumentParser(prog="kdplot", description="Plot kdistill output files (PNG).")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("coreset", help="coreset points over the data; pair grid when d > 2")
    p.add_argument("file")
    p.add_argument("--dims", metavar="I,J[,K...]",
                   help="coordinates to draw: two give one panel, more a pair grid (default: 0,1; "
                        "a pair grid of the first %d when d > 2)" % PAIR_GRID_MAX)
    p.add_argument("--data", help="data points: HDF5 (first 2-D dataset or --dataset), .npy, .npz "
                   "or CSV, read as kdistill reads data (when the kdistill package is importable)")
    p.add_argument("--dataset", help="dataset path inside --data")
    p.add_argument("-o", "--output", default="coreset.png")
    p.set_defaults(fn=plot_coreset)
    p = sub.add_parser("trace", help="MMD vs atoms and vs iterations (log axes), one line per run")
    p.add_argument("files", nargs="+")
    p.add_argument("--label", action="append", help="legend label per file (default: algorithm)")
    p.add_argument("-o", "--output", default="trace.png")
    p.set_defaults(fn=plot_trace)
    p = sub.add_parser("sweep", help="sweep summary: MMD vs a parameter")
    p.add_argument("file", help="summary.csv or summary.h5 written by task: sweep")
    p.add_argument("--x", help="parameter on the x axis (default: first varying numeric one)")
    p.add_argument("--mean-over", action="append", metavar="KEY",
                   help="average the MMD over this parameter (e.g. run.seed); repeatable")
    p.add_argument("-o", "--output", default="sweep.png")
    p.set_defaults(fn=plot_sweep)
    p = sub.add_parser("ctt", help="CTT study: power vs time, one curve per method")
    p.add_argument("file", help="study table (CSV or HDF5)")
    p.add_argument("--group", help="HDF5 group holding the table columns")
    p.add_argument("--alpha", type=float,
                   help="test level for the dashed line (default: the table's alpha column or "
                        "study.alpha of the output)")
    p.add_argument("-o", "--output", default="ctt.png")
    p.set_defaults(fn=plot_ctt)
    return ap


def main(argv=None):
    ap = make_parser()
    args = ap.parse_args(argv)
    try:
        args.fn(args)
    except InputError as e:
        sys.stderr.write("kdplot: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
