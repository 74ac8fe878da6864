#!/usr/bin/env python3
"""check_defaults.py KDISTILL ROOT - the defaults the docs state agree with the program's.

Every Markdown table of docs/{kernels,thinning,herding,quadrature,ctt,checkpoint}.md with a
"default" column is read: each row names a key and its default. The program's defaults come from
`kdistill validate --print-defaults` on minimal configs (only the keys a task requires), one per
algorithm and kernel family of that document. A documented default is checked when at least one
of those configs prints the key; it must then equal the printed value of at least one of them
(defaults that differ by algorithm are written "X for A, else Y" and only X is read). The test
fails on a disagreement, and when fewer than MIN_CHECKED rows of a document could be checked (a
table the parser no longer reads is a failure, not a silent pass). It also fails when the generated
tables of docs/config.md are stale (config_doc.py --check: run config_doc.py to rewrite them)."""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import config_doc  # noqa: E402  (the minimal configs and the --print-defaults reader)

KD, ROOT = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="kd_defaults_")
THIN, HERD, QUAD, CTT, STUDY = (config_doc.THIN, config_doc.HERD, config_doc.QUAD, config_doc.CTT,
                                config_doc.STUDY)


def algorithms(task):
    return config_doc.algorithms(KD, task)


def printed(config_text, name):
    """The flattened key -> value text of `validate --print-defaults`."""
    out = "output: {path: %s}\n" % os.path.join(TMP, name + ".h5")
    return dict(config_doc.printed(KD, TMP, config_text + out, name))


def stein_ok(algo):
    # the score-based family is documented in stein.md
    return algo not in ("stein_thin", "skt", "sr", "lskt", "lsr", "sc", "lsc")


def sources(doc):
    """(section prefix for bare keys, [flattened print-defaults]) of a document."""
    if doc == "kernels.md":
        fams = ["gaussian", "imq", "polynomial", "linear", "sobolev", "laplace"]
        outs = []
        for fam in fams:
            k = "kernel: {name: %s}\n" % fam if fam != "sobolev" else \
                "kernel: {name: sobolev}\n"
            base = THIN if fam != "sobolev" else \
                "task: thin\ndata: {type: uniform_box, n: 4096, d: 2, lo: [0, 0], hi: [1, 1]}\n"
            outs.append(printed(base + k, "kernel_" + fam))
        outs.append(printed(THIN + "kernel: {name: deep, dx: 1}\n", "kernel_deep"))
        outs.append(printed(THIN + "kernel: {name: gaussian_sum}\n", "kernel_gaussian_sum"))
        outs.append(printed(THIN, "kernel_none"))
        return "kernel", outs
    if doc == "thinning.md":
        return "algorithm", [printed(THIN + "algorithm: {name: %s}\n" % a, "thin_" + a)
                             for a in algorithms("thin") if stein_ok(a) and a != "rpcholesky"]
    if doc == "herding.md":
        return "algorithm", [printed(HERD + "algorithm: {name: %s}\n" % a, "herd_" + a)
                             for a in algorithms("herd")]
    if doc == "quadrature.md":
        outs = [printed(QUAD + "algorithm: {name: %s}\n" % a, "quad_" + a)
                for a in algorithms("quad") if a not in ("mercer_recombination",)]
        return "algorithm", outs
    if doc == "ctt.md":
        # study.actt_* are read only with study.actt (set here, so its own row is not checked)
        study_actt = printed(STUDY + "study: {actt: [0]}\n", "study_actt")
        del study_actt["study.actt"]
        return "algorithm", [printed(CTT + "algorithm: {name: %s}\n" % a, "ctt_" + a)
                             for a in algorithms("ctt")] + [printed(STUDY, "study"),
                             study_actt]
    if doc == "checkpoint.md":
        return "run", [printed(HERD, "ckpt_herd")]
    raise KeyError(doc)


def literal(cell):
    """The leading literal of a default cell: a number, list, word or quoted string (or None)."""
    c = cell.replace("\u2212", "-").replace("`", "").strip()
    m = re.match(r'^(\[[^\]]*\]|""|-?[0-9][0-9.e+\-]*|[A-Za-z_][A-Za-z_0-9]*)', c)
    if not m or m.group(1) in ("required", "automatic"):
        return None
    return m.group(1)


def same(doc_value, prog_value):
    def norm(v):
        v = v.strip().strip('"').strip("'")
        if v.startswith("["):
            return tuple(norm(x) for x in v.strip("[]").split(",") if x.strip())
        try:
            return float(v)
        except ValueError:
            return v.lower()
    return norm(doc_value) == norm(prog_value)


def rows(path):
    """(key, default cell) of every table with a default column."""
    out, cols = [], None
    for line in open(path, encoding="utf-8"):
        if not line.startswith("|"):
            cols = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cols is None:
            cols = cells
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        idx = [i for i, c in enumerate(cols) if "default" in c]
        if not idx or not cols[0].startswith("key") or len(cells) <= idx[0]:
            continue
        keys = re.findall(r"`([A-Za-z_][A-Za-z_0-9.]*)`", cells[0])
        cell = cells[idx[0]]
        if cols[idx[0]].startswith("type,"):  # "int, 64"
            m = re.match(r"^(int|float|bool|str|string|number), *(.*)$", cell)
            cell = m.group(2) if m else cell
        vals = [cell] if len(keys) == 1 else [v for v in re.split(r",\s*(?![^\[]*\])", cell)]
        if len(keys) > 1 and len(vals) != len(keys):
            continue
        out += list(zip(keys, vals))
    return out


MIN_CHECKED = {"kernels.md": 5, "thinning.md": 8, "herding.md": 8, "quadrature.md": 8,
               "ctt.md": 10, "checkpoint.md": 2}
failures = 0
for doc, need in MIN_CHECKED.items():
    prefix, outs = sources(doc)
    checked = 0
    for key, cell in rows(os.path.join(ROOT, "docs", doc)):
        lit = literal(cell)
        full = key if "." in key else prefix + "." + key
        vals = [o[full] for o in outs if full in o]
        if lit is None or not vals:
            continue
        if re.match(r"^[A-Za-z_]+$", lit) and all(re.match(r"^-?[0-9.]", v) for v in vals):
            continue  # a reference to another key ("m": the same as study.m)
        checked += 1
        if os.environ.get("KD_DEFAULTS_VERBOSE"):
            print("  %s %s: %s vs %s" % (doc, full, lit, sorted(set(vals))))
        if not any(same(lit, v) for v in vals):
            failures += 1
            print("FAIL %s: %s documented default %s, the program prints %s" %
                  (doc, full, lit, sorted(set(vals))))
    status = "ok" if checked >= need else "FAIL"
    if checked < need:
        failures += 1
    print("%s %s: %d documented defaults checked (at least %d expected)" % (status, doc, checked,
                                                                          need))
stale = config_doc.check(KD, ROOT)
if stale:
    failures += 1
    print("FAIL docs/config.md: its generated tables are stale; run\n  python3 "
          "tests/docs/config_doc.py %s %s\n%s" % (KD, ROOT, stale))
else:
    print("ok docs/config.md: the generated tables are current")
sys.exit(1 if failures else 0)
