"""The `kdistill` command of a pip-installed package: runs the command-line program bundled in
the wheel (kdistill/_native/kdistill) with the same arguments, in this process (exec), so that
`mpirun -np 4 kdistill run job.yaml` works from a venv's bin/ as from an installed prefix."""

import os
import sys


def main() -> None:
    prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native", "kdistill")
    if not os.access(prog, os.X_OK):
        sys.stderr.write("kdistill: error: the command-line program %s is missing (this package "
                         "was not installed from a wheel; use the kdistill of your CMake build "
                         "or install prefix)\n" % prog)
        raise SystemExit(2)
    os.execv(prog, [prog] + sys.argv[1:])
