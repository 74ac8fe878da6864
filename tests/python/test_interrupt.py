"""Ctrl-C during a long call: SIGINT reaches the Python process while kdistill.herd runs; the call
returns at the library's next safe point with kdistill.Interrupted, the interpreter survives, and
the next call works. The child runs in a temporary working directory:
  - without checkpoint=, nothing is left there and the message says how to keep a checkpoint;
  - with checkpoint="ck.h5", the checkpoint is there and the message names resume='ck.h5' (a
    Python keyword, not the command line's --resume); the same call with resume="ck.h5" (and a
    checkpoint of its own) continues from it: interrupted again, it stops at a later iteration."""

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

CHILD = r"""
import logging, sys, numpy as np, kdistill
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
C = np.random.default_rng(0).normal(size=(200000, 2))
calls = [{"checkpoint": a} for a in sys.argv[1:2]] or [{}]
if len(sys.argv) > 2:  # then continue from the first checkpoint, writing a second one
    calls.append({"resume": sys.argv[1], "checkpoint": sys.argv[2]})
for kw in calls:
    print("started", flush=True)
    try:
        kdistill.herd(C, kdistill.Gaussian([0, 0], 1), n_atoms=100000, algorithm="fw_eq",
                      ls=1.0, max_iter=10000000, tol_mmd=0.0, **kw)
        print("finished", flush=True)
    except kdistill.Interrupted as e:
        print("interrupted:", e, flush=True)
cs = kdistill.thin(C[:1024], 16, ls=1.0)
print("after", len(cs), flush=True)
"""

# a program with a SIGINT handler of its own: the handler runs during the call (which then runs on
# the worker thread) and raising KeyboardInterrupt from it interrupts the call
CUSTOM = r"""
import signal, sys, numpy as np, kdistill
seen = []
def handler(sig, frame):
    seen.append(sig)
    raise KeyboardInterrupt
signal.signal(signal.SIGINT, handler)
C = np.random.default_rng(0).normal(size=(200000, 2))
print("started", flush=True)
try:
    kdistill.herd(C, kdistill.Gaussian([0, 0], 1), n_atoms=100000, algorithm="fw_eq",
                  ls=1.0, max_iter=10000000, tol_mmd=0.0)
except kdistill.Interrupted as e:
    print("interrupted:", e, flush=True)
print("handler ran", len(seen), "still ours", signal.getsignal(signal.SIGINT) is handler,
      flush=True)
"""


class InterruptTest(unittest.TestCase):
    def interrupt(self, *args):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.Popen([sys.executable, "-c", CHILD] + list(args), cwd=d,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # stderr drained aside; stdout read through the same buffer as readline() to the end
            # (communicate() reads the pipe itself and misses lines readline() already buffered)
            errs = []
            drain = threading.Thread(target=lambda: errs.append(p.stderr.read()))
            drain.start()
            msgs = []
            for _ in range(max(len(args), 1)):
                self.assertEqual(p.stdout.readline().strip(), "started")
                time.sleep(1.5)
                p.send_signal(signal.SIGINT)
                msgs.append(p.stdout.readline().strip())
                self.assertTrue(msgs[-1].startswith("interrupted:"), msgs[-1])
            out = p.stdout.read()
            p.wait(timeout=60)
            drain.join(60)
            err = errs[0] if errs else ""
            self.assertEqual(p.returncode, 0, err)
            self.assertEqual(out.splitlines()[-1], "after 16")
            self.err = err
            self.out = out
            return (msgs if len(args) > 1 else msgs[0]), sorted(os.listdir(d))

    def test_sigint_leaves_nothing_without_checkpoint(self):
        msg, files = self.interrupt()
        self.assertEqual(files, [], "an interrupted call left files in the working directory")
        self.assertIn("no checkpoint written (pass checkpoint=", msg)

    def test_sigint_writes_the_checkpoint_asked_for(self):
        msg, files = self.interrupt("ck.h5")
        self.assertEqual(files, ["ck.h5"])
        self.assertIn("checkpoint written to ck.h5 (resume with resume='ck.h5')", msg)
        self.assertNotIn("--resume", msg)

    def test_resume_continues(self):
        (first, second), files = self.interrupt("ck.h5", "ck2.h5")
        self.assertEqual(files, ["ck.h5", "ck2.h5"])
        it = [int(re.search(r"interrupted at iteration (\d+)", m).group(1)) for m in (first, second)]
        # the second call started where the first stopped (its log says so) and went on
        self.assertIn("herd: resumed at iteration %d " % it[0], self.err)
        self.assertGreater(it[1], it[0], (first, second))


    def test_custom_handler_runs_during_the_call(self):
        p = subprocess.Popen([sys.executable, "-c", CUSTOM], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.stdout.readline().strip(), "started")
        time.sleep(1.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("interrupted:"), out)
        self.assertEqual(lines[-1], "handler ran 1 still ours True")


class SigintBracketTest(unittest.TestCase):
    """kd_ctx_catch_sigint, in this process: the bracket that lets a call run in the main thread."""

    def setUp(self):
        import kdistill  # noqa: F401 (loads the library)
        from kdistill import _lib
        self.lib = _lib.lib
        self.ctx = _lib.process().context("self")
        self.call = _lib.call

    def test_bracket_catches_and_restores(self):
        lib, ctx = self.lib, self.ctx
        lib.kd_ctx_clear_interrupt(ctx)
        self.assertEqual(lib.kd_ctx_catch_sigint(ctx, 1), 0)
        self.assertEqual(lib.kd_ctx_catch_sigint(ctx, 1), 3, "a second bracket must be refused")
        os.kill(os.getpid(), signal.SIGINT)  # caught by the library, not by Python
        self.assertEqual(lib.kd_ctx_interrupted(ctx), 1)
        self.assertEqual(lib.kd_ctx_catch_sigint(ctx, 0), 0)
        self.assertEqual(lib.kd_ctx_catch_sigint(ctx, 0), 3, "no bracket is open")
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)
        lib.kd_ctx_clear_interrupt(ctx)
        with self.assertRaises(KeyboardInterrupt):  # Python's handler is back
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)

    def test_sigint_during_a_call_that_ends_raises_after_it(self):
        ran = []

        def fn():
            os.kill(os.getpid(), signal.SIGINT)
            ran.append(True)
            return 0

        with self.assertRaises(KeyboardInterrupt):
            self.call(self.ctx, fn)
        self.assertEqual(ran, [True], "the call ran to its end")
        self.call(self.ctx, lambda: 0)  # the next call is not interrupted
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)


if __name__ == "__main__":
    unittest.main()
