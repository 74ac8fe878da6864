#!/usr/bin/env python3
"""mkman.py KDISTILL CONFIGS_DIR OUT - write the manual page kdistill(1) at build time.

Everything in the page that can drift is asked of the built program itself: the usage and the
exit statuses (`kdistill --help`), the tasks and algorithms (`kdistill algorithms`), the version
and build (`kdistill --version`) and every configuration key with its default (`kdistill
validate CONFIG --print-defaults` over every shipped config in CONFIGS_DIR). Only the prose
around them is written here. Standard library only (Debian's python3)."""
import os
import re
import subprocess
import sys

# what the environment changes (the variables the code reads; docs/reliability.md, docs/hpc.md)
ENVIRONMENT = [
    ("KDISTILL_SIGNAL_GRACE",
     "Seconds from a SIGTERM/SIGUSR1 to a forced stop of a run that has reached no safe point "
     "(default 1; 0 turns the guard off)."),
    ("KD_MEMORY_LIMIT",
     "The memory one rank may use (bytes, or with a K/M/G/T suffix); runs that would need more "
     "are refused before they start."),
    ("OPENBLAS_NUM_THREADS",
     "Threads of OpenBLAS per rank (kdistill uses one per rank unless this is set)."),
    ("KDISTILL_LIB",
     "The Python package: the libkdistill.so to load instead of the installed one."),
]


def run(argv, cwd=None):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ASAN_OPTIONS="detect_leaks=0")
    p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, check=False)
    if p.returncode != 0:
        sys.exit("mkman.py: %s failed (status %d): %s" % (" ".join(argv), p.returncode,
                                                          p.stderr.strip()))
    return p.stdout


def esc(text):
    """roff-escape one line of text (backslash, hyphen, leading dot or quote)."""
    t = text.replace("\\", "\\e").replace("-", "\\-")
    if t.startswith((".", "'")):
        t = "\\&" + t
    return t


def keys_of(yaml_text):
    """(key path, value) for every scalar key of a --print-defaults text: block mappings with
    inline values; the keys of list items (`- key: ...`) get their list's path with []."""
    out = []
    stack = []  # (indent, full path)
    for line in yaml_text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        body = line.strip()
        item = body.startswith("- ")
        if item:
            body = body[2:]
            indent += 2
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*):\s*(.*)$", body)
        if not m:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        if item:
            parent += "[]"
        path = parent + "." + m.group(1) if parent else m.group(1)
        if m.group(2) == "":
            stack.append((indent, path))
        else:
            out.append((path, m.group(2)))
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    exe, configs, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
    root = os.path.dirname(os.path.abspath(configs))
    help_text = run([exe, "--help"])
    version_text = run([exe, "--version"])
    algos = run([exe, "algorithms"])
    version = version_text.split()[1]

    usage, exit_lines, in_usage, in_exit = [], [], False, False
    for line in help_text.splitlines():
        if line.startswith("usage"):
            in_usage = True
            continue
        if line.startswith("exit status"):
            in_exit = True
        if in_exit:
            exit_lines.append(line)
        elif in_usage and line.startswith("  kdistill"):
            usage.append(line.strip())
        elif in_usage and usage and line.startswith("      "):
            usage[-1] += " " + line.strip()
        elif in_usage and not line.strip():
            in_usage = False

    # every key of every shipped config, with the default it resolves to, grouped by section
    sections = {}
    seen_configs = []
    for name in sorted(os.listdir(configs)):
        if not name.endswith(".yaml"):
            continue
        text = run([exe, "validate", os.path.join("configs", name), "--print-defaults"], cwd=root)
        seen_configs.append(name)
        task = "?"
        for path, value in keys_of(text):
            if path == "task":
                task = value
                continue
            sec = path.split(".")[0].split("[")[0]
            key = path
            if path.startswith("algorithm."):
                algo = re.search(r"^\s*name:\s*(\S+)", text.split("\nalgorithm:\n", 1)[-1], re.M)
                sec = "algorithm %s (task %s)" % (algo.group(1) if algo else "?", task)
            sections.setdefault(sec, {}).setdefault(key, set()).add(value)

    o = []
    o.append('.TH KDISTILL 1 "" "kdistill %s" "User Commands"' % esc(version))
    o.append(".SH NAME")
    o.append("kdistill \\- compress distributions into coresets and quadrature rules with small MMD")
    o.append(".SH SYNOPSIS")
    for u in usage:
        o.append(".nf")
        o.append(esc(u))
        o.append(".fi")
    o.append(".SH DESCRIPTION")
    o.append(esc("kdistill turns a large sample or a known measure into a small coreset or a convex "
                 "quadrature rule whose kernel MMD (worst-case integration error) is small: kernel "
                 "herding as Frank-Wolfe, kernel thinning and Compress++, compress then test, "
                 "Nystrom/Mercer recombination and score-based (Stein) compression. It runs on one "
                 "or many MPI ranks (mpirun, srun) and writes HDF5 outputs; a run is described by a "
                 "YAML configuration."))
    o.append(".SH TASKS AND ALGORITHMS")
    o.append(esc("As printed by kdistill algorithms TASK, task by task:"))
    for line in algos.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            o.append(".SS %s" % esc(line.rstrip(":")))
            continue
        parts = line.strip().split(None, 1)
        o.append(".TP")
        o.append(".B %s" % esc(parts[0]))
        o.append(esc(parts[1] if len(parts) > 1 else ""))
    o.append(".SH CONFIGURATION")
    o.append(esc("Every key of the shipped configurations (%d files under "
                 "share/kdistill/configs) with the value it resolves to, as kdistill validate "
                 "CONFIG --print-defaults prints it; keys are written section.key in a "
                 "configuration file and on --set. Section by section:" % len(seen_configs)))
    order = ["data", "candidates", "target", "x", "y", "queries", "keys", "values", "kernel"]
    names = sorted(sections, key=lambda s: (order.index(s) if s in order else len(order), s))
    for sec in names:
        o.append(".SS %s" % esc(sec))
        for key in sorted(sections[sec]):
            vals = sorted(sections[sec][key])
            shown = ", ".join(vals[:4]) + (", ..." if len(vals) > 4 else "")
            o.append(".TP")
            o.append(".B %s" % esc(key))
            o.append(esc("as shipped: " + shown))
    o.append(".SH ENVIRONMENT")
    for var, text in ENVIRONMENT:
        o.append(".TP")
        o.append(".B %s" % var)
        o.append(esc(text))
    o.append(".SH EXIT STATUS")
    o.append(esc(" ".join(line.strip() for line in exit_lines)))
    o.append(".SH BUILD")
    o.append(esc("This page was generated from the build it describes; kdistill --version prints:"))
    o.append(".nf")
    for line in version_text.splitlines():
        o.append(esc(line))
    o.append(".fi")
    o.append(".SH FILES")
    o.append(".TP")
    o.append(".I share/kdistill/configs")
    o.append(esc("the shipped configurations (the configuration keys above come from them)"))
    o.append(".TP")
    o.append(".I share/kdistill/jobs")
    o.append(esc("SLURM job scripts"))
    o.append(".TP")
    o.append(".I share/kdistill/modulefiles")
    o.append(esc("environment modules for this installation"))
    o.append(".SH SEE ALSO")
    o.append(esc("mpirun(1), srun(1); the Python package: python3 -c \"import kdistill; "
                 "help(kdistill)\"; C and C++: find_package(kdistill) or pkg-config kdistill."))
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main()
