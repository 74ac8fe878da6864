"""Ctrl-C during a long call: SIGINT reaches the Python process while kdistill.herd runs; the call
returns at the library's next safe point with kdistill.Interrupted (its message names the
checkpoint written), the interpreter survives, and the next call works. The child runs in a
temporary working directory (the checkpoint lands there)."""

import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

CHILD = r"""
import sys, numpy as np, kdistill
C = np.random.default_rng(0).normal(size=(200000, 2))
print("started", flush=True)
try:
    kdistill.herd(C, kdistill.Gaussian([0, 0], 1), n_atoms=100000, algorithm="fw_eq",
                  ls=1.0, max_iter=10000000, tol_mmd=0.0)
    print("finished", flush=True)
except kdistill.Interrupted as e:
    print("interrupted:", e, flush=True)
cs = kdistill.thin(C[:1024], 16, ls=1.0)
print("after", len(cs), flush=True)
"""


class InterruptTest(unittest.TestCase):
    def test_sigint_raises_interrupted(self):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.Popen([sys.executable, "-c", CHILD], cwd=d, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            self.assertEqual(p.stdout.readline().strip(), "started")
            time.sleep(1.5)
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, err)
            lines = out.splitlines()
            self.assertTrue(lines[0].startswith("interrupted:"), out + err)
            self.assertEqual(lines[-1], "after 16")
            self.assertTrue(os.listdir(d), "a checkpoint file was written")


if __name__ == "__main__":
    unittest.main()
