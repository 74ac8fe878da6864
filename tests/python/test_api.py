"""Unit tests of the Python package (one process): every public function and every error class.

Claims checked: a coreset's points are exactly the input rows it names; the in-place, float32,
Fortran-order and strided inputs give the same coreset as their float64 C-order copies; the MMD a
result reports equals kdistill.mmd recomputed on it and, for one point against N(0, s^2) with a
Gaussian kernel, the closed form; herding reaches its MMD tolerance; CTT rejects a shifted sample;
errors raise the class of their C code with the command line's message and leave the process
usable; run() writes the file load() reads back to the same arrays.
"""

import json
import math
import os
import re
import tempfile
import unittest

import numpy as np

import kdistill

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def gauss_mixture(n, seed=0):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 4, size=n)
    means = np.array([[3.0, 0.0], [0.0, 3.0], [-3.0, 0.0], [0.0, -3.0]])
    return means[c] + rng.normal(size=(n, 2))


class ThinTest(unittest.TestCase):
    X = gauss_mixture(4096)

    def test_coreset_rows(self):
        cs = kdistill.thin(self.X, 64, ls=2.0, seed=3)
        self.assertEqual(len(cs), 64)
        self.assertEqual(cs.points.shape, (64, 2))
        self.assertEqual(len(set(cs.indices.tolist())), 64)
        np.testing.assert_array_equal(cs.points, self.X[cs.indices])
        np.testing.assert_allclose(cs.weights, 1.0 / 64, rtol=0, atol=1e-15)
        self.assertEqual((cs.task, cs.algorithm), ("thin", "kt_compress"))
        self.assertIn("ls=2", cs.kernel)
        self.assertIn("n_out: 64", cs.config)
        # KT-Compress++ beats iid subsampling at this size by a wide margin
        un = kdistill.thin(self.X, 64, algorithm="uniform", ls=2.0, seed=3)
        self.assertLess(cs.mmd, 0.5 * un.mmd)
        # the reported MMD is the exact one
        m = kdistill.mmd(cs.points, cs.weights, self.X, ls=2.0)
        self.assertAlmostEqual(m, cs.mmd, delta=1e-12 * max(1.0, cs.mmd) + 1e-13)

    def test_layouts_give_the_same_coreset(self):
        X32 = self.X.astype(np.float32)
        ref32 = kdistill.thin(X32.astype(np.float64), 32, seed=1)
        for v in (X32, np.asfortranarray(X32)):
            cs = kdistill.thin(v, 32, seed=1)
            np.testing.assert_array_equal(cs.indices, ref32.indices)
            np.testing.assert_array_equal(cs.points, ref32.points)
        ref = kdistill.thin(self.X, 32, seed=1)
        for v in (np.asfortranarray(self.X), np.ascontiguousarray(self.X[::-1])[::-1]):
            cs = kdistill.thin(v, 32, seed=1)
            np.testing.assert_array_equal(cs.indices, ref.indices)
        big = np.zeros((2 * len(self.X), 3))
        big[::2, :2] = self.X
        cs = kdistill.thin(big[::2, :2], 32, seed=1)  # strided view, no copy
        np.testing.assert_array_equal(cs.indices, ref.indices)
        cs = kdistill.thin(np.round(self.X * 100).astype(np.int32), 32, seed=1, ls=200.0)
        self.assertEqual(cs.points.shape, (32, 2))

    def test_seed_and_params(self):
        a = kdistill.thin(self.X, 16, algorithm="rkh", seed=5)
        b = kdistill.thin(self.X, 16, algorithm="rkh", seed=5)
        np.testing.assert_array_equal(a.indices, b.indices)
        g = kdistill.thin(self.X, 64, g=2)
        self.assertIn("g: 2", g.config)

    def test_one_dimensional_input(self):
        x = np.random.default_rng(2).normal(size=1024)
        cs = kdistill.thin(x, algorithm="kh")  # one halving round: n_out = n / 2
        self.assertEqual(cs.points.shape, (512, 1))
        np.testing.assert_array_equal(cs.points[:, 0], x[cs.indices])


class HerdQuadMmdTest(unittest.TestCase):
    def test_herd_closed_form(self):
        C = np.random.default_rng(0).normal(size=(8192, 2))
        r = kdistill.herd(C, kdistill.Gaussian([0, 0], 1), n_atoms=60, ls=1.0, tol_mmd=0.01,
                          max_iter=2000)
        self.assertLessEqual(r.mmd, 0.01)
        self.assertLessEqual(len(r), 60)
        self.assertAlmostEqual(r.weights.sum(), 1.0, places=12)
        self.assertTrue(np.all(r.weights >= 0))
        np.testing.assert_array_equal(r.points, C[r.indices])
        self.assertEqual(len(r.trace["mmd"]), len(r.trace["iteration"]))
        m = kdistill.mmd(r.points, r.weights, kdistill.Gaussian([0, 0], 1), ls=1.0)
        self.assertAlmostEqual(m, r.mmd, delta=1e-10)

    def test_herd_empirical_target(self):
        rng = np.random.default_rng(1)
        C, T = rng.normal(size=(2048, 2)), rng.normal(size=(3000, 2))
        r = kdistill.herd(C, T, n_atoms=30, algorithm="fcfw", ls=1.0)
        m = kdistill.mmd(r.points, r.weights, T, ls=1.0)
        self.assertAlmostEqual(m, r.mmd, delta=1e-9)

    def test_quad_and_closed_form_mmd(self):
        target = kdistill.Gaussian([0.0, 1.0], [1.0, 0.5])
        q = kdistill.quad(target, 32, ls=1.0, seed=2)
        mc = kdistill.quad(target, 32, algorithm="monte_carlo", ls=1.0, seed=2)
        self.assertEqual(len(q), 32)
        self.assertAlmostEqual(q.weights.sum(), 1.0, places=12)
        self.assertLess(q.mmd, 0.5 * mc.mmd)
        self.assertAlmostEqual(kdistill.mmd(q.points, q.weights, target, ls=1.0), q.mmd,
                               delta=1e-10)
        # one point at the mean of N(0, s^2), Gaussian kernel: MMD^2 =
        # 1 - 2 (l^2 / (l^2 + s^2))^(1/2) + (l^2 / (l^2 + 2 s^2))^(1/2)
        s, l = 0.7, 1.3
        exact = math.sqrt(1 - 2 * math.sqrt(l * l / (l * l + s * s))
                          + math.sqrt(l * l / (l * l + 2 * s * s)))
        got = kdistill.mmd([[0.0]], None, kdistill.Gaussian(0.0, s, d=1), ls=l)
        self.assertAlmostEqual(got, exact, delta=1e-12)
        # d is the longest list's length, also for lists of one number (was 2-D: a DataError)
        for one_d in (kdistill.Gaussian([0.0], s), kdistill.Gaussian([0.0], [s]),
                      kdistill.TruncGaussian([0.0], [s], -50.0, 50.0)):
            got = kdistill.mmd([[0.0]], None, one_d, ls=l)
            self.assertAlmostEqual(got, exact, delta=1e-12)
            self.assertEqual(one_d.section["d"], 1)
        self.assertEqual(kdistill.quad(kdistill.Box([0.0], [2.0]), 4, ls=1.0).points.shape,
                         (4, 1))
        # a point set against its own empirical measure
        X = np.random.default_rng(4).normal(size=(50, 3))
        self.assertLess(kdistill.mmd(X, None, X, ls=1.0), 1e-6)
        # above 23169 target rows too the value is exact (the CLI's default would estimate the
        # target's double sum from rows sampled by the seed): the same for every seed
        Y = np.random.default_rng(5).normal(size=(65537, 1))
        a, b = (kdistill.mmd(Y[:16], None, Y, ls=1.0, seed=s) for s in (1, 2))
        self.assertEqual(a, b)
        self.assertGreater(a, 0.0)

    def test_measures(self):
        for m, k in ((kdistill.Box([0, 0], [1, 2]), "gaussian"),
                     (kdistill.Mixture([[0, 0], [3, 3]], 1.0, [0.3, 0.7]), "gaussian"),
                     (kdistill.TruncGaussian(0, 1, -1, 1, d=2), "gaussian"),
                     (kdistill.Torus(2), "sobolev"), (kdistill.Sphere(3), "energy")):
            q = kdistill.quad(m, 16, kernel=k, ls=1.0, algorithm="monte_carlo")
            self.assertEqual(len(q), 16, repr(m))
            self.assertGreater(q.mmd, 0.0)


class CttTest(unittest.TestCase):
    def test_shift_rejected(self):
        rng = np.random.default_rng(0)
        X, Y = rng.normal(size=(4096, 2)), rng.normal(size=(4096, 2))
        shifted = kdistill.ctt(X, Y + 0.5, g=1, seed=1)
        same = kdistill.ctt(X, Y, g=1, seed=1)
        self.assertTrue(shifted.reject)
        self.assertLessEqual(shifted.p_value, 0.05)
        self.assertGreater(shifted.statistic, 5 * same.statistic)
        self.assertTrue(0.0 < same.p_value <= 1.0)
        self.assertEqual(shifted.reject, shifted.metrics["reject"] > 0.5)
        self.assertEqual(shifted.alpha, 0.05)  # the level, not NaN
        self.assertEqual(kdistill.ctt(X, Y, g=1, seed=1, alpha=0.2).alpha, 0.2)

    def test_unequal_sizes_need_no_s(self):
        # 3000 + 2000 rows: s = 16 does not split them evenly; ctt takes 12 + 8 bins of 250 rows
        rng = np.random.default_rng(3)
        X, Y = rng.normal(size=(3000, 2)), rng.normal(size=(2000, 2))
        t = kdistill.ctt(X, Y + 0.3, seed=1)
        self.assertTrue(t.reject)
        self.assertEqual((t.metrics["s"], t.metrics["rows_unused"], t.metrics["n_in"]),
                         (20, 0, 250))
        u = kdistill.ctt(X[:1000], Y[:999], seed=1)
        self.assertEqual((u.metrics["s"], u.metrics["rows_unused"]), (18, 1))
        self.assertNotIn("s", kdistill.ctt(X[:1024], X[1024:2048], seed=1).metrics)  # Alg. 3

    def test_baselines(self):
        # subsample_test, wblock (paper 003, Fig. 2) and lrctt through ctt(algorithm=...): a 0.5 shift
        # is rejected, equal samples give a p-value in (0, 1], and subsample_test with n_out = m = n
        # has the exact test's statistic
        rng = np.random.default_rng(5)
        X, Y = rng.normal(size=(1200, 2)), rng.normal(size=(1000, 2))
        for alg, kw in (("subsample_test", {"n_out": 500}), ("wblock", {"block": 50}),
                        ("lrctt", {"r": 128, "g": 1})):
            shifted = kdistill.ctt(X, Y + 0.5, algorithm=alg, seed=1, **kw)
            same = kdistill.ctt(X, Y, algorithm=alg, seed=1, **kw)
            self.assertTrue(shifted.reject, alg)
            self.assertEqual(shifted.algorithm, alg)
            self.assertTrue(0.0 < same.p_value <= 1.0, alg)
            # (wblock's block V-statistics carry a bias of about 2 (1 - E k) / block on both)
            self.assertGreater(shifted.statistic, same.statistic, alg)
            self.assertLess(shifted.p_value, same.p_value, alg)
        self.assertEqual(kdistill.ctt(X, Y, algorithm="wblock", block=50).metrics["blocks"], 20)
        full = kdistill.ctt(X[:1000], Y, algorithm="subsample_test", n_out=1000, ls=1.0)
        exact = kdistill.ctt(X[:1000], Y, algorithm="ctt_exact", ls=1.0)
        self.assertAlmostEqual(full.statistic, exact.statistic, delta=1e-12 * exact.statistic)
        with self.assertRaisesRegex(kdistill.ConfigError, "algorithm.n_out"):
            kdistill.ctt(X, Y, algorithm="subsample_test", n_out=1001)
        # lrctt's coreset size factor a: 22 bins of 100 rows (s = 22), r = 64, g = 1: a = 4 gives
        # sub-bins of 64 rows compressed to r / a = 16 (one per bin, 36 rows kept); a = 3 is
        # refused naming it
        t = kdistill.ctt(X, Y, algorithm="lrctt", r=64, g=1, a=4, s=22)
        self.assertEqual(list(t.extras["/test/coreset_sizes"]), [16 + 36] * 22)
        with self.assertRaisesRegex(kdistill.ConfigError, "algorithm.a"):
            kdistill.ctt(X, Y, algorithm="lrctt", r=64, a=3)

    def test_actt(self):
        # ls as a geometric list runs actt over exactly those length scales; a 0.5 shift is
        # rejected, the test has no p-value; any other list of distinct values runs over exactly
        # those values (ls_list), with weights= in the order of ls, normalised; equal weights
        # change nothing; duplicates and a weight list of the wrong length are refused
        rng = np.random.default_rng(6)
        X, Y = rng.normal(size=(1200, 2)), rng.normal(size=(1000, 2))
        t = kdistill.ctt(X, Y + 0.5, ls=[4.0, 0.5, 1.0, 2.0], g=1, seed=3)
        self.assertEqual(t.algorithm, "actt")
        self.assertTrue(t.reject)
        self.assertTrue(np.isnan(t.p_value))
        np.testing.assert_allclose(t.extras["/test/ls"], [0.5, 1.0, 2.0, 4.0], rtol=1e-12)
        self.assertEqual(len(t.extras["/test/statistics"]), 4)
        self.assertTrue(0.0 < t.extras["/test/u_alpha"] <= 4.0)
        self.assertIn("p=", repr(kdistill.ctt(X, Y, algorithm="lrctt", r=64)))
        self.assertNotIn("p=", repr(t))
        tl = kdistill.ctt(X, Y + 0.5, ls=[3.0, 0.5, 1.0], weights=[6, 3, 1], g=1, seed=3)
        self.assertEqual(tl.algorithm, "actt")
        self.assertTrue(tl.reject)
        self.assertEqual(list(tl.extras["/test/ls"]), [0.5, 1.0, 3.0])
        self.assertEqual(list(tl.extras["/test/weights"]), [0.3, 0.1, 0.6])
        with tempfile.TemporaryDirectory() as tmp:  # its resolved configuration runs again
            path = os.path.join(tmp, "actt.yaml")
            with open(path, "w") as f:
                f.write(tl.config)
            again = kdistill.run(path, arrays={"X": X, "Y": Y + 0.5}, write=False)
        self.assertIn("\n  n_ls: 3\n", tl.config)
        self.assertEqual(list(again.extras["/test/thresholds"]),
                         list(tl.extras["/test/thresholds"]))
        te = kdistill.ctt(X, Y + 0.5, ls=[4.0, 0.5, 1.0, 2.0], weights=[2, 2, 2, 2], g=1, seed=3)
        self.assertEqual(list(te.extras["/test/thresholds"]), list(t.extras["/test/thresholds"]))
        self.assertEqual(te.extras["/test/u_alpha"], t.extras["/test/u_alpha"])
        with self.assertRaisesRegex(ValueError, "distinct"):
            kdistill.ctt(X, Y, ls=[0.5, 1.0, 1.0])
        with self.assertRaisesRegex(ValueError, "3 weights for 2"):
            kdistill.ctt(X, Y, ls=[0.5, 1.0], weights=[1, 1, 1])
        with self.assertRaisesRegex(ValueError, "runs actt"):
            kdistill.ctt(X, Y, ls=[0.5, 1.0], algorithm="lrctt")

    def test_gaussian_sum_kernel(self):
        # kernel gaussian_sum (the mean of n_ls Gaussians at ls ratio^(j - (n_ls-1)/2)): the
        # weighted MMD equals numpy's double sums to 1e-13 on MMD^2; actt's compression="sum"
        # compresses with it (goodpoints' default) and rejects a 0.5 shift
        rng = np.random.default_rng(8)
        P, T = rng.normal(size=(30, 2)), rng.normal(size=(200, 2)) + [0.3, 0.0]
        w = rng.uniform(0.5, 1.5, size=30)
        w /= w.sum()
        kern = {"name": "gaussian_sum", "n_ls": 4, "ls_ratio": 3.0}
        got = kdistill.mmd(P, w, T, kernel=kern, ls=0.8)

        def gram(A, B):
            r2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
            return np.mean([np.exp(-r2 / (2 * (0.8 * 3.0 ** (j - 1.5)) ** 2)) for j in range(4)],
                           axis=0)
        ref = w @ gram(P, P) @ w - 2 * w @ gram(P, T).mean(1) + gram(T, T).mean()
        self.assertLessEqual(abs(got.mmd2 - ref), 1e-13, "%r vs %r" % (got.mmd2, ref))
        X, Y = rng.normal(size=(1200, 2)), rng.normal(size=(1000, 2)) + 0.5
        t = kdistill.ctt(X, Y, ls=[0.5, 1.0, 2.0, 4.0], g=1, seed=3, compression="sum")
        self.assertTrue(t.reject)

    def test_default_g_is_the_command_line_s(self):
        # ctt() without g takes the library's default, as `kdistill ctt` and a config without g
        rng = np.random.default_rng(2)
        X, Y = rng.normal(size=(1024, 2)), rng.normal(size=(1024, 2)) + 0.2
        t = kdistill.ctt(X, Y, seed=4)
        cfg = {"task": "ctt", "x": {"type": "memory", "name": "X"},
               "y": {"type": "memory", "name": "Y"}, "algorithm": {"name": "ctt"},
               "kernel": {"name": "gaussian", "ls": "median"}, "run": {"seed": 4}}
        r = kdistill.run(cfg, arrays={"X": X, "Y": Y}, write=False)
        self.assertIn("\n  g: 0\n", r.config)
        self.assertIn("\n  g: 0\n", t.config)
        self.assertEqual((t.statistic, t.p_value), (r.statistic, r.p_value))


def deep_gram(A, B, dx, ls, ls_phi, eps):
    """The deep kernel k((x, u), (y, v)) = [(1 - eps) exp(-|u - v|^2 / (2 ls_phi^2)) + eps]
    exp(-|x - y|^2 / (2 ls^2)) between the rows of A and B, by numpy."""
    sx = ((A[:, None, :dx] - B[None, :, :dx]) ** 2).sum(-1)
    su = ((A[:, None, dx:] - B[None, :, dx:]) ** 2).sum(-1)
    return ((1 - eps) * np.exp(-su / (2 * ls_phi ** 2)) + eps) * np.exp(-sx / (2 * ls ** 2))


def pdist_median(A):
    i, j = np.triu_indices(len(A), 1)
    return float(np.median(np.sqrt(((A[i] - A[j]) ** 2).sum(-1))))


class DeepKernelTest(unittest.TestCase):
    W = np.array([[0.7, -1.1, 0.4], [0.3, 0.5, -0.9]])

    def phi(self, A):
        return np.tanh(A @ self.W) + 0.1 * A[:, :1] ** 2

    def test_mmd_matches_numpy(self):
        # the weighted MMD against samples with the deep kernel equals numpy's double sums of
        # deep_gram over the rows (x, phi(x)), to 1e-13 on MMD^2
        rng = np.random.default_rng(7)
        P, T = rng.normal(size=(40, 2)), rng.normal(size=(300, 2)) + [0.4, 0.0]
        w = rng.uniform(0.5, 1.5, size=40)
        w /= w.sum()
        for eps in (0.0, 0.25, 1.0):
            k = kdistill.Deep(self.phi, eps=eps, ls_x=0.9, ls_phi=0.6)
            got = kdistill.mmd(P, w, T, kernel=k)
            Pe, Te = np.hstack([P, self.phi(P)]), np.hstack([T, self.phi(T)])
            g = lambda A, B: deep_gram(A, B, 2, 0.9, 0.6, eps)
            ref = w @ g(Pe, Pe) @ w - 2 * w @ g(Pe, Te).mean(1) + g(Te, Te).mean()
            self.assertLessEqual(abs(got.mmd2 - ref), 1e-13, "eps %g: %r vs %r" % (eps, got.mmd2,
                                                                                    ref))
            self.assertEqual(got.method, "exact")
        # eps = 1 is the Gaussian kernel on x alone, whatever phi is
        g1 = kdistill.mmd(P, w, T, kernel=kdistill.Deep(self.phi, eps=1.0, ls_x=0.9, ls_phi=0.6))
        self.assertAlmostEqual(g1.mmd2, kdistill.mmd(P, w, T, ls=0.9).mmd2, delta=1e-15)
        # the Gram matrix of random rows is PSD
        K = deep_gram(Te, Te, 2, 0.9, 0.6, 0.25)
        self.assertGreater(np.linalg.eigvalsh(K).min(), -1e-12)

    def test_median_per_block_and_tasks(self):
        # ls: median on the inputs, ls_phi: median on the embeddings (n <= median_sample: all
        # pairs); thin, herd and ctt take Deep and give points in the input space
        rng = np.random.default_rng(8)
        X = rng.normal(size=(800, 2))
        k = kdistill.Deep(self.phi, eps=0.2)
        cs = kdistill.thin(X, 32, g=1, kernel=k, seed=1)
        m = re.match(r"deep\(ls=([^,]+),ls_phi=([^,]+),eps=([^,]+),dx=2\)", cs.kernel)
        self.assertIsNotNone(m, cs.kernel)
        self.assertAlmostEqual(float(m.group(1)) / pdist_median(X), 1.0, delta=1e-14)
        self.assertAlmostEqual(float(m.group(2)) / pdist_median(self.phi(X)), 1.0, delta=1e-14)
        self.assertEqual(cs.points.shape, (32, 2))
        np.testing.assert_array_equal(cs.points, X[cs.indices])
        self.assertEqual(kdistill.mmd(cs, X, kernel=k), cs.mmd)  # the run's length scales
        self.assertIn("ls_phi:", cs.config)
        h = kdistill.herd(X[:400], X[:400], 10, kernel=k, max_iter=40)
        self.assertEqual(h.points.shape[1], 2)
        self.assertAlmostEqual(h.weights.sum(), 1.0, delta=1e-12)
        t = kdistill.ctt(X, rng.normal(size=(800, 2)) + [0.6, 0.0], kernel=k, s=8, g=1, seed=2)
        self.assertTrue(t.reject)
        with self.assertRaisesRegex(ValueError, "closed-form"):
            kdistill.herd(X, kdistill.Gaussian([0, 0], [1, 1]), 5, kernel=k)
        for alg, kw in (("actt", {}), ("lrctt", {"r": 16})):
            with self.assertRaisesRegex(kdistill.ConfigError, "kernel .*deep"):
                kdistill.ctt(X, X, kernel=k, algorithm=alg, **kw)
        with self.assertRaisesRegex(TypeError, "Deep"):
            kdistill.quad(X, 10, kernel=k)
        with self.assertRaisesRegex(kdistill.DataError, "phi"):
            kdistill.thin(X, 32, kernel=kdistill.Deep(lambda A: A[:-1]))
        with self.assertRaisesRegex(kdistill.DataError, "row 5"):
            kdistill.thin(X, 32, kernel=kdistill.Deep(
                lambda A: np.where(np.arange(len(A))[:, None] == 5, np.nan, A)))
        with self.assertRaisesRegex(ValueError, "eps"):
            kdistill.Deep(self.phi, eps=2.0)


class TypedValuesTest(unittest.TestCase):
    """The error's key and the values a run resolved come from the library as typed values
    (kd_ctx_error_key, kd_ctx_error_known, kd_job_config_value, the kernel_ls metrics), not from
    its text; the package modules do not import re."""
    X = np.random.default_rng(3).normal(size=(400, 2))

    def test_error_key(self):
        cfg = {"task": "thin", "data": {"type": "memory", "name": "X"},
               "algorithm": {"name": "kt_compress", "n_out": 16, "foo": 1}}
        with self.assertRaises(kdistill.ConfigError) as c:
            kdistill.run(cfg, arrays={"X": self.X}, write=False)
        self.assertEqual(c.exception.key, "algorithm.foo")
        self.assertIn("n_out", c.exception.known)
        self.assertIn("g", c.exception.known)
        self.assertNotIn("foo", c.exception.known)
        with self.assertRaises(kdistill.ConfigError) as c:
            kdistill.run(dict(cfg, algorithm={"name": "uniform", "n_out": 8}, bogus=3),
                         arrays={"X": self.X}, write=False)
        self.assertEqual((c.exception.key, c.exception.known), ("bogus", ()))
        with self.assertRaises(kdistill.ConfigError) as c:
            kdistill.thin(self.X, 1000)
        self.assertEqual((c.exception.key, c.exception.known), ("algorithm.n_out", ()))
        for kw, key in (({"g": 99}, "algorithm.g"), ({"delta": 2.0}, "algorithm.delta"),
                        ({"algorithm": "nope"}, "algorithm.name"), ({"seed": -1}, "run.seed"),
                        ({"ls": -1.0}, "kernel.ls")):
            with self.assertRaises(kdistill.ConfigError) as c:
                kdistill.thin(self.X, 8, **kw)
            self.assertEqual((c.exception.key, c.exception.known), (key, ()), str(c.exception))
        with self.assertRaises(kdistill.DataError) as c:
            kdistill.thin(self.X[:, :0], 8)
        self.assertEqual(c.exception.key, "")
        # the process stays usable and a later error carries its own key
        with self.assertRaises(TypeError) as c:
            kdistill.thin(self.X, 8, dleta=0.3)
        self.assertIn("did you mean 'delta'?", str(c.exception))

    def test_resolved_values(self):
        from kdistill import _lib
        cs = kdistill.thin(self.X, 16, seed=7)
        self.assertEqual(_lib.config_value(cs.config, "run.seed"), 7)
        ls = _lib.config_value(cs.config, "kernel.ls")
        self.assertIsInstance(ls, float)
        self.assertAlmostEqual(ls / pdist_median(self.X), 1.0, delta=1e-14)
        self.assertEqual(ls, cs.metrics["kernel_ls"])
        self.assertEqual(_lib.config_value(cs.config, "kernel.name"), "gaussian")
        self.assertIsNone(_lib.config_value(cs.config, "kernel.nope"))
        self.assertIsNone(_lib.config_value(cs.config, "kernel"))  # a section, not a value
        self.assertIsNone(_lib.config_value("a: [unclosed", "a"))
        self.assertEqual(_lib.config_section(cs.config, "kernel")["ls"], ls)
        self.assertEqual(_lib.config_section("k: {a: [1, 2.5], b: true, c: 'x'}", "k"),
                         {"a": [1, 2.5], "b": True, "c": "x"})
        self.assertEqual(kdistill.mmd(cs, self.X), cs.mmd)  # the run's length scale
        t = kdistill.ctt(self.X, self.X + 0.5, alpha=0.125, s=8, g=1, seed=2)
        self.assertEqual(t.alpha, 0.125)
        self.assertEqual(_lib.config_value(t.config, "algorithm.alpha"), 0.125)
        with tempfile.TemporaryDirectory() as d:  # the seed save() writes is the run's
            cs.save(os.path.join(d, "c.h5"))
            self.assertEqual(_lib.config_value(kdistill.load(os.path.join(d, "c.h5")).config,
                                               "run.seed"), 7)

    def test_deep_length_scales(self):
        from kdistill._deep import resolved
        W = np.array([[0.7, -1.1, 0.4], [0.3, 0.5, -0.9]])
        phi = lambda A: np.tanh(A @ W)  # noqa: E731
        k = kdistill.Deep(phi, eps=0.2)
        cs = kdistill.thin(self.X, 16, g=1, kernel=k, seed=1)
        self.assertAlmostEqual(cs.metrics["kernel_ls"] / pdist_median(self.X), 1.0, delta=1e-14)
        self.assertAlmostEqual(cs.metrics["kernel_ls_phi"] / pdist_median(phi(self.X)), 1.0,
                               delta=1e-14)
        r = resolved(k, cs.kernel, cs.metrics)
        self.assertEqual((r.ls_x, r.ls_phi), (cs.metrics["kernel_ls"],
                                              cs.metrics["kernel_ls_phi"]))
        self.assertEqual(kdistill.mmd(cs, self.X, kernel=k), cs.mmd)

    def test_no_regular_expressions(self):
        pkg = os.path.join(ROOT, "python", "kdistill")
        for name in sorted(os.listdir(pkg)):
            if name.endswith(".py"):
                with open(os.path.join(pkg, name)) as f:
                    lines = [ln.strip() for ln in f]
                self.assertFalse([ln for ln in lines if ln in ("import re", "from re import *")
                                  or ln.startswith(("import re ", "import re,", "from re "))],
                                 "%s imports re" % name)


class TypedSpecTest(unittest.TestCase):
    """Keyword arguments and configuration dicts reach the library as typed settings (kd_spec),
    with the same result as the configuration as text; a dict holding a value of no typed form
    (a list of texts) goes as text."""
    X = np.random.default_rng(5).normal(size=(600, 3))

    def test_typed_equals_text(self):
        from kdistill import _api, _lib
        cfg = {"task": "thin", "data": {"type": "memory", "name": "X"},
               "kernel": {"name": "gaussian", "ls": 0.1 + 0.2},
               "algorithm": {"name": "kt_compress", "n_out": 32, "delta": 0.25},
               "run": {"seed": np.int64(9)}}
        self.assertIsInstance(_api._config(cfg), _lib.Spec)
        typed = kdistill.run(cfg, arrays={"X": self.X}, write=False)
        real_config = _api._config
        try:  # the same configuration handed over as text
            _api._config = lambda c: json.dumps(c, indent=1, default=_api._json_default)
            text = kdistill.run(cfg, arrays={"X": self.X}, write=False)
        finally:
            _api._config = real_config
        self.assertTrue(np.array_equal(typed.indices, text.indices))
        self.assertEqual(typed.points.tobytes(), text.points.tobytes())
        self.assertEqual(typed.mmd, text.mmd)
        self.assertEqual(typed.metrics["kernel_ls"], 0.1 + 0.2)
        self.assertEqual(_lib.config_value(typed.config, "run.seed"), 9)
        # a mixture target's means and weights as arrays of reals
        t = {"type": "gaussian_mixture", "d": 2, "means": [[0, 0], [2.5, -1]],
             "sds": [[1, 1], [0.5, 0.75]], "weights": [0.25, 0.75]}
        items = _lib.spec_items({"target": t})
        self.assertEqual([(k, key) for k, key, _ in items],
                         [("text", "target.type"), ("int", "target.d"), ("reals", "target.means"),
                          ("reals", "target.sds"), ("reals", "target.weights")])
        self.assertEqual(items[2][2][1:], (2, 2))
        self.assertEqual(items[4][2][1:], (2, 0))
        # no typed form: texts in a list, an empty section, a key with a dot
        for bad in ({"data": {"dataset": ["a", "b"]}}, {"target": {}}, {"a.b": 1}):
            self.assertIsNone(_lib.spec_items(bad), bad)

    def test_typed_errors(self):
        with self.assertRaises(kdistill.ConfigError) as c:
            kdistill.thin(self.X, 601)
        self.assertEqual(str(c.exception),
                         "<python>: algorithm.n_out = 601 exceeds the 600 input points")
        with self.assertRaises(kdistill.ConfigError) as c:
            kdistill.thin(self.X, 8, algorithm="kt_compress", g="four")
        self.assertEqual(c.exception.key, "algorithm.g")


class RunLoadTest(unittest.TestCase):
    maxDiff = None

    def test_run_dict_writes_what_load_reads(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "sub", "o.h5")
            X = gauss_mixture(2048, 3)
            cfg = {"task": "thin", "data": {"type": "memory", "name": "A"},
                   "kernel": {"name": "gaussian", "ls": 2.0},
                   "algorithm": {"name": "kh_compress", "n_out": 32}, "output": {"path": out}}
            r = kdistill.run(cfg, arrays={"A": X})
            back = kdistill.load(out)
            np.testing.assert_array_equal(back.points, r.points)
            np.testing.assert_array_equal(back.indices, r.indices)
            self.assertEqual(back.mmd, r.mmd)
            self.assertEqual((back.task, back.algorithm), ("thin", "kh_compress"))
            self.assertIn("kh_compress", back.config)
            # the run hands back the very configuration the file stores (kd_job_run_resolved)
            self.assertEqual(r.config, back.config)
            self.assertIn("median_sample: 1000", r.config)
            # the kernel and rank count come back: mmd(load(path), X) takes the run's length
            # scale (2.0), not the median heuristic's
            self.assertEqual((back.kernel, back.n_ranks), (r.kernel, r.n_ranks))
            self.assertEqual(back.kernel, "gaussian(ls=2)")
            self.assertEqual(kdistill.mmd(back, X), kdistill.mmd(r, X))
            self.assertNotEqual(kdistill.mmd(back, X), kdistill.mmd(r.points, r.weights, X))
            # a file another tool wrote in the documented layout may lack both: still readable
            import h5py
            other = os.path.join(d, "other.h5")
            with h5py.File(out, "r") as f, h5py.File(other, "w") as g:
                for name in ("coreset", "metrics"):
                    f.copy(name, g)
                for k, v in f.attrs.items():
                    if k not in ("kernel", "n_ranks"):
                        g.attrs[k] = v
            bare = kdistill.load(other)
            self.assertEqual((bare.kernel, bare.n_ranks), ("", 1))
            np.testing.assert_array_equal(bare.points, r.points)

    def test_save_writes_what_run_writes(self):
        import h5py

        def contents(path):
            out = {}
            with h5py.File(path, "r") as f:
                def visit(name, obj):
                    if isinstance(obj, h5py.Dataset):
                        out[name] = repr(np.asarray(obj[()]).tolist())  # NaN == NaN
                    for k, v in obj.attrs.items():
                        if k != "created_utc":
                            out[name + "@" + k] = repr(np.asarray(v).tolist())
                f.visititems(visit)
                for k, v in f.attrs.items():
                    if k != "created_utc":
                        out["@" + k] = v if isinstance(v, str) else repr(np.asarray(v).tolist())
            return out

        with tempfile.TemporaryDirectory() as d:
            ran = os.path.join(d, "ran.h5")
            X = gauss_mixture(2048, 2)
            for algo in ("kt_compress", "fw_eq"):
                cfg = {"task": "thin", "data": {"type": "memory", "name": "A"},
                       "kernel": {"name": "gaussian", "ls": 1.5},
                       "algorithm": {"name": "kt_compress", "n_out": 32}, "output": {"path": ran}}
                if algo == "fw_eq":  # a herding run: a trace and a stop reason
                    cfg = {"task": "herd", "candidates": {"type": "memory", "name": "A"},
                           "target": {"type": "gaussian", "d": 2},
                           "kernel": {"name": "gaussian", "ls": 1.5},
                           "algorithm": {"name": "fw_eq", "max_atoms": 16},
                           "output": {"path": ran}}
                r = kdistill.run(cfg, arrays={"A": X})
                saved = os.path.join(d, algo, "deeper", "saved.h5")  # parents are created
                r.save(saved)
                a, b = contents(ran), contents(saved)
                self.assertEqual(sorted(a), sorted(b), algo)
                self.assertEqual(a, b, algo)
                back = kdistill.load(saved)
                np.testing.assert_array_equal(back.points, r.points)
                np.testing.assert_array_equal(back.weights, r.weights)
                self.assertEqual((back.mmd, back.config, back.algorithm),
                                 (r.mmd, r.config, r.algorithm))
                # an existing file is left alone unless asked
                with open(saved, "rb") as f:
                    before = f.read()
                with self.assertRaisesRegex(kdistill.FileError, "overwrite=True"):
                    kdistill.thin(X, 8, algorithm="uniform").save(saved)
                with open(saved, "rb") as f:
                    self.assertEqual(f.read(), before)
                kdistill.thin(X, 8, algorithm="uniform").save(saved, overwrite=True)
                self.assertEqual(len(kdistill.load(saved)), 8)
                self.assertEqual(sorted(os.listdir(os.path.dirname(saved))), ["saved.h5"])
                os.remove(ran)

    def test_run_path_and_sets(self):
        path = os.path.join(ROOT, "configs", "quad_monte_carlo.yaml")
        r = kdistill.run(path, sets=["algorithm.n=16"], write=False)
        self.assertEqual(len(r), 16)
        self.assertEqual(r.points.shape[1], 3)
        t = kdistill.run(os.path.join(ROOT, "configs", "ctt.yaml"), write=False,
                         sets=["x.n=2048", "y.n=2048"])
        self.assertIsInstance(t, kdistill.TestResult)


class ErrorTest(unittest.TestCase):
    X = np.random.default_rng(0).normal(size=(512, 2))

    def test_classes_and_codes(self):
        """Every code of the C table (the X-macro of include/kdistill/kd_err.h, read here as text)
        maps to its class, with the table's number and exit status."""
        import re
        from kdistill._errors import from_code
        with open(os.path.join(ROOT, "include", "kdistill", "kd_err.h")) as f:
            table = re.findall(r"X\((KD_\w+), (\d+), (\d+), \"[^\"]*\"\)", f.read())
        self.assertEqual(len(table), 14)
        cls_of = {"KD_ERR_CONFIG": kdistill.ConfigError, "KD_ERR_INPUT": kdistill.DataError,
                  "KD_ERR_ARG": kdistill.ArgumentError, "KD_ERR_FILE": kdistill.FileError,
                  "KD_ERR_UNSUPPORTED": kdistill.UnsupportedError,
                  "KD_ERR_NUMERIC": kdistill.NumericError,
                  "KD_ERR_INTERRUPTED": kdistill.Interrupted, "KD_ERR_MEM": kdistill.OutOfMemory,
                  "KD_ERR_IO": kdistill.IOFailure, "KD_ERR_MPI": kdistill.MPIError,
                  "KD_ERR_H5": kdistill.HDF5Error, "KD_ERR_LA": kdistill.LinAlgError,
                  "KD_ERR_INTERNAL": kdistill.InternalError}
        for name, code, status in table:
            if name == "KD_OK":
                continue
            e = from_code(int(code), "msg %s" % code)
            self.assertIs(type(e), cls_of[name])
            self.assertIsInstance(e, kdistill.Error)
            self.assertEqual((e.code, e.exit_status, str(e)), (int(code), int(status),
                                                               "msg %s" % code))

    def test_config_errors(self):
        with self.assertRaises(kdistill.ConfigError) as c:
            kdistill.thin(self.X, 8, algorithm="nope")
        self.assertIn("algorithm.name: 'nope' is not one of", str(c.exception))
        # a keyword no algorithm key matches is a TypeError, as for any Python function
        with self.assertRaises(TypeError) as c:
            kdistill.thin(self.X, 8, bogus_key=1)
        self.assertIn("thin() got an unexpected keyword argument 'bogus_key'", str(c.exception))
        self.assertNotIn("did you mean", str(c.exception))
        # misspellings and other libraries' names get a did-you-mean
        for f, kw, want in ((kdistill.thin, {"lengthscale": 1.0}, "ls"),
                            (kdistill.thin, {"gg": 2}, "g"),
                            (kdistill.thin, {"random_state": 2}, "seed"),
                            (kdistill.thin, {"dleta": 0.3}, "delta")):
            with self.assertRaises(TypeError) as c:
                f(self.X, 8, **kw)
            self.assertIn("did you mean %r?" % want, str(c.exception))
        with self.assertRaises(TypeError) as c:
            kdistill.herd(self.X, kdistill.Gaussian([0, 0], 1), 8, max_iters=5)
        self.assertIn("did you mean 'max_iter'?", str(c.exception))
        with self.assertRaises(TypeError) as c:
            kdistill.ctt(self.X, self.X, level=0.1)
        self.assertIn("did you mean 'alpha'?", str(c.exception))
        with self.assertRaises(kdistill.ConfigError):
            kdistill.thin(self.X, 0)
        with self.assertRaises(kdistill.ConfigError) as c:
            kdistill.run({"task": "thin", "data": {"type": "memory", "name": "missing"},
                          "algorithm": {"name": "uniform"}}, write=False)
        self.assertIn("no in-memory array named 'missing'", str(c.exception))

    def test_sizes_beyond_a_c_int_refused(self):
        # 2^32 + 2 columns of one stored zero (no memory): ctypes kept the low 32 bits, so the
        # library read it as 2 columns, and from memory outside the array
        from numpy.lib.stride_tricks import as_strided
        wide = as_strided(np.zeros(1), shape=(64, 2 ** 32 + 2), strides=(0, 0))
        msg = "the column count is 4294967298, outside what the library takes"
        calls = (lambda: kdistill.thin(wide, 4, ls=1.0),
                 lambda: kdistill.thin(self.X, 4, ls=1.0, target=wide),
                 lambda: kdistill.herd(wide, wide[:8], 4, ls=1.0),
                 lambda: kdistill.mmd(wide, None, wide, ls=1.0),
                 lambda: kdistill.mmd(wide[:1], None, kdistill.Gaussian(0.0, 1.0), ls=1.0),
                 lambda: kdistill.ksd(wide, None, wide, ls=1.0))
        for call in calls:
            with self.assertRaisesRegex(ValueError, msg):
                call()
        self.assertEqual(len(kdistill.thin(self.X, 4, ls=1.0)), 4)  # still usable

    def test_complex_refused(self):
        with self.assertRaises(kdistill.DataError) as c:
            kdistill.thin(self.X.astype(complex), 8)
        self.assertIn("complex values are not supported", str(c.exception))

    def test_interrupted_is_keyboard_interrupt(self):
        self.assertTrue(issubclass(kdistill.Interrupted, KeyboardInterrupt))
        self.assertTrue(issubclass(kdistill.Interrupted, kdistill.Error))

    def test_data_errors(self):
        Y = self.X.copy()
        Y[7, 1] = np.inf
        with self.assertRaises(kdistill.DataError) as c:
            kdistill.thin(Y, 8)
        self.assertEqual(str(c.exception), "data (array X): row 8 has a non-finite value "
                                           "(NaN or Inf)")
        with self.assertRaises(kdistill.DataError):
            kdistill.thin(np.zeros((4, 4, 4)), 2)
        with self.assertRaises(kdistill.DataError):
            kdistill.thin(np.zeros((0, 2)), 2)
        with self.assertRaises(kdistill.DataError):
            kdistill.ctt(self.X, np.zeros((100, 3)))
        with self.assertRaises(kdistill.DataError):  # signed weights are fine; a zero sum is not
            kdistill.mmd(self.X[:3], [1.0, -1.0, 0.0], self.X)
        # a rule with NaN or Inf has no MMD (it returned 0.0): refused naming the row
        with self.assertRaises(kdistill.DataError) as c:
            kdistill.mmd(np.array([[np.nan, 0.0]]), None, self.X)
        self.assertIn("row 1 of the rule has a non-finite point", str(c.exception))
        with self.assertRaises(kdistill.DataError) as c:
            kdistill.mmd(np.array([[0.0, 0.0], [np.inf, 1.0]]), None, self.X)
        self.assertIn("row 2", str(c.exception))

    def test_file_and_unsupported_errors(self):
        with self.assertRaises(kdistill.FileError) as c:
            kdistill.load("/nonexistent/x.h5")
        self.assertIn("/nonexistent/x.h5", str(c.exception))
        with self.assertRaises(kdistill.FileError):
            kdistill.run("/nonexistent/config.yaml")
        with self.assertRaises(kdistill.UnsupportedError):
            kdistill.herd(self.X, kdistill.Gaussian([0, 0], 1), kernel="laplace", ls=1.0)

    def test_usable_after_errors(self):
        for _ in range(3):
            with self.assertRaises(kdistill.Error):
                kdistill.thin(self.X, 8, algorithm="nope")
        cs = kdistill.thin(self.X, 8, algorithm="uniform")
        self.assertEqual(len(cs), 8)


class MmdHonestyTest(unittest.TestCase):
    def test_estimate_is_labelled_and_exact_on_demand(self):
        X = np.random.default_rng(5).normal(size=(23170, 2))
        # the target's double sum costs N (N + 1) / 2 kernel evaluations: above 2^28 (23169 rows)
        # the default for the gaussian kernel in d <= 2 is the fast Gauss transform, exact to a
        # bound it reports
        fast = kdistill.thin(X, 128, ls=1.0)
        self.assertEqual(fast.mmd_method, "bounded")
        self.assertEqual(fast.mmd_se, 0.0)
        self.assertGreater(fast.mmd_bound, 0.0)
        self.assertLess(fast.metrics["mmd2_bound"], 1e-10)
        self.assertIn("(bounded \u00b1", repr(fast))
        self.assertLessEqual(abs(kdistill.mmd(fast, X) - fast.mmd), fast.mmd_bound)
        # otherwise (or asked for) it estimates it from as many sampled rows as the coreset has
        # points (at least 256), and says so
        cs = kdistill.thin(X, 128, ls=1.0, target={"type": "data", "self": "estimate"})
        np.testing.assert_array_equal(fast.points, cs.points)
        self.assertEqual(cs.mmd_method, "estimate")
        self.assertEqual(cs.metrics["self_rows"], 256)
        self.assertGreater(cs.mmd_se, 0.0)
        self.assertIn("\u00b1", repr(cs))
        self.assertIn("(estimate)", repr(cs))
        exact = kdistill.mmd(cs, X)  # points, weights and ls of the coreset
        self.assertEqual(exact, kdistill.mmd(cs.points, cs.weights, X, ls=1.0))
        self.assertLess(abs(exact - cs.mmd), 5 * cs.mmd_se)
        ref = kdistill.thin(X, 128, ls=1.0, target={"type": "data", "self": "exact"})
        self.assertEqual(ref.mmd_method, "exact")
        self.assertEqual(ref.mmd_se, 0.0)
        self.assertIn("(exact)", repr(ref))
        self.assertAlmostEqual(ref.mmd, exact, delta=1e-12)
        np.testing.assert_array_equal(ref.points, cs.points)
        # beside the estimate, the exact relative quality MMD^2 - zz, zz = mean_ij k(x_i, x_j):
        # zz from one point's exact MMD, MMD^2(x0) = 1 - 2 mean_j k(x0, x_j) + zz
        k0 = np.exp(-0.5 * ((X - X[0]) ** 2).sum(axis=1)).mean()
        zz = kdistill.mmd(X[:1], None, X, ls=1.0) ** 2 - 1.0 + 2.0 * k0
        self.assertAlmostEqual(cs.metrics["mmd2_minus_self"], ref.mmd ** 2 - zz, delta=1e-10)
        small = kdistill.thin(X[:23169], 32, ls=1.0)
        self.assertEqual(small.mmd_method, "exact")
        imq = kdistill.thin(X, 32, kernel="imq", ls=1.0)
        self.assertEqual(imq.mmd_method, "estimate")
        with self.assertRaises(TypeError):
            kdistill.mmd(cs.points, cs.weights)


class SignedRuleTest(unittest.TestCase):
    def test_weights_normalised_safely_or_refused(self):
        rng = np.random.default_rng(6)
        P, X = rng.normal(size=(8, 2)), rng.normal(size=(200, 2))
        ref = kdistill.mmd(P, None, X, ls=1.0)
        # equal weights whose sum overflows (1e308 each) or that are subnormal: still uniform
        # (the sum of 1e308s was inf, every weight became 0 and the MMD that of no points)
        for c in (1e308, 5e-324):
            self.assertAlmostEqual(kdistill.mmd(P, np.full(8, c), X, ls=1.0), ref, delta=1e-14)
            self.assertAlmostEqual(kdistill.ksd(P, np.full(8, c), -P, ls=1.0),
                                   kdistill.ksd(P, None, -P, ls=1.0), delta=1e-14)
        for w, msg in (([np.inf] + [1.0] * 7, "weights: weight 1 is inf"),
                       ([1.0] * 7 + [np.nan], "weights: weight 8 is nan"),
                       ([0.0] * 8, "weights: must have a positive sum"),
                       ([-1.0] * 8, r"weights: must have a positive sum \(got -8\)")):
            with self.assertRaisesRegex(kdistill.DataError, msg):
                kdistill.mmd(P, w, X, ls=1.0)
            with self.assertRaisesRegex(kdistill.DataError, msg):
                kdistill.ksd(P, w, -P, ls=1.0)

    def test_signed_weights_are_evaluated(self):
        # a rule with negative weights (as sc and lsc give): the closed-form MMD of N(0, I_2)
        # under the gaussian kernel, ls = 1: z(x) = exp(-|x|^2 / 4) / 2, zz = 1 / 3
        rng = np.random.default_rng(4)
        P = rng.normal(size=(12, 2))
        w = rng.normal(size=12)
        w += (1.0 - w.sum()) / 12  # sums to 1, some negative
        self.assertTrue((w < 0).any())
        K = np.exp(-0.5 * ((P[:, None, :] - P[None, :, :]) ** 2).sum(-1))
        z = 0.5 * np.exp(-0.25 * (P ** 2).sum(1))
        want = math.sqrt(w @ K @ w - 2 * w @ z + 1.0 / 3.0)
        got = kdistill.mmd(P, w, kdistill.Gaussian([0, 0], [1, 1]), ls=1.0)
        self.assertAlmostEqual(got, want, delta=1e-12)
        # the same rule against samples: the exact double sum, and the transform within its bound
        X = rng.normal(size=(3000, 2))
        Kx = np.exp(-0.5 * ((P[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        Kxx = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        want2 = w @ K @ w - 2 * w @ Kx.mean(1) + Kxx.mean()
        ex = kdistill.mmd(P, w, X, ls=1.0)
        self.assertAlmostEqual(ex.mmd2, want2, delta=1e-12)
        fg = kdistill.mmd(P, w, X, ls=1.0, method="fgt")
        self.assertLessEqual(abs(fg.mmd2 - ex.mmd2), fg.mmd2_bound)
        with self.assertRaisesRegex(kdistill.DataError, "positive sum"):
            kdistill.mmd(P, w - w.mean(), X, ls=1.0)


class MmdMethodTest(unittest.TestCase):
    def test_methods_say_what_the_value_is(self):
        rng = np.random.default_rng(12)
        X = rng.normal(size=(24000, 2))
        P, w = X[:96] + 0.1, rng.random(96)
        ex = kdistill.mmd(P, w, X, ls=0.7)  # exact: all N^2 kernel values
        self.assertIsInstance(ex, kdistill.MMD)
        self.assertIsInstance(ex, float)
        self.assertEqual((ex.method, ex.bound, ex.se), ("exact", 0.0, 0.0))
        self.assertEqual(float(ex), math.sqrt(ex.mmd2))
        self.assertTrue(ex.text().endswith("(exact)"), ex.text())
        # the fast Gauss transform: exact to the bound it returns, which the tolerance sets
        fg = kdistill.mmd(P, w, X, ls=0.7, method="fgt")
        self.assertEqual(fg.method, "bounded")
        self.assertGreater(fg.mmd2_bound, 0.0)
        self.assertLess(fg.mmd2_bound, 1e-10)
        self.assertLessEqual(abs(fg.mmd2 - ex.mmd2), fg.mmd2_bound)
        self.assertLessEqual(abs(fg - ex), fg.bound)
        self.assertIn("(bounded \u00b1", fg.text())
        import copy
        import pickle
        for back in (pickle.loads(pickle.dumps(fg)), copy.deepcopy(fg)):
            self.assertEqual((float(back), back.method, back.bound, back.mmd2_bound),
                             (float(fg), fg.method, fg.bound, fg.mmd2_bound))
        loose = kdistill.mmd(P, w, X, ls=0.7, method="fgt", tol=1e-5)
        self.assertGreater(loose.mmd2_bound, 1e3 * fg.mmd2_bound)
        self.assertLessEqual(abs(loose.mmd2 - ex.mmd2), loose.mmd2_bound)
        # auto, as a run evaluates: bounded above 23169 rows (gaussian, d <= 2), exact below
        self.assertEqual(kdistill.mmd(P, w, X, ls=0.7, method="auto").method, "bounded")
        self.assertEqual(kdistill.mmd(P, w, X[:23169], ls=0.7, method="auto").method, "exact")
        es = kdistill.mmd(P, w, X, ls=0.7, method="estimate", seed=3)
        self.assertEqual((es.method, es.bound), ("estimate", 0.0))
        self.assertGreater(es.se, 0.0)
        self.assertLess(abs(es - ex), 5 * es.se)
        self.assertIn("(estimate)", es.text())
        # refusals: an unknown method, a method for a closed-form target, fgt off its kernel
        with self.assertRaises(ValueError):
            kdistill.mmd(P, w, X, ls=0.7, method="fast")
        with self.assertRaises(ValueError):
            kdistill.mmd(P, w, kdistill.Gaussian([0, 0], [1, 1]), ls=0.7, method="fgt")
        with self.assertRaisesRegex(kdistill.ConfigError, "gaussian kernel"):
            kdistill.mmd(P, w, X, kernel="imq", ls=0.7, method="fgt")
        with self.assertRaisesRegex(kdistill.ConfigError, "fgt_tol"):
            kdistill.mmd(P, w, X, ls=0.7, method="fgt", tol=0.5)


class SteinTest(unittest.TestCase):
    def test_score_array_callable_and_analytic_agree(self):
        X = np.random.default_rng(8).normal(size=(2048, 2)) + 0.5  # biased sample of N(0, I)
        a = kdistill.thin(X, 32, algorithm="skt", score=-X, seed=2)
        c = kdistill.thin(X, 32, algorithm="skt", score=lambda x: -x, seed=2)
        np.testing.assert_array_equal(a.points, c.points)
        self.assertEqual(a.mmd, c.mmd)
        self.assertTrue(a.kernel.startswith("stein(base=imq"), a.kernel)
        ls = float(a.kernel.split("ls=")[1].split(",")[0])
        cfg = {"task": "thin", "data": {"type": "memory", "name": "X",
                                        "score": {"type": "gaussian", "mean": [0, 0]}},
               "kernel": {"name": "stein", "base": "imq", "ls": ls}, "target": {"type": "stein"},
               "algorithm": {"name": "skt", "n_out": 32}, "run": {"seed": 2}}
        r = kdistill.run(cfg, arrays={"X": X}, write=False)
        np.testing.assert_array_equal(a.points, r.points)
        self.assertEqual(a.mmd, r.mmd)
        u = kdistill.thin(X, 32, algorithm="uniform", score=-X, seed=2)
        self.assertLess(a.mmd, u.mmd)  # the debiased coreset is closer to N(0, I) in KSD
        bad = dict(cfg, data={"type": "memory", "name": "X",
                              "score": {"type": "uniform_box", "d": 2}})
        with self.assertRaises(kdistill.ConfigError) as e:
            kdistill.run(bad, arrays={"X": X}, write=False)
        for t in ("gaussian,", "gaussian_mixture", "trunc_gaussian", "hdf5|csv|npy|npz",
                  "type: memory"):
            self.assertIn(t, str(e.exception))

    def test_ksd_is_the_reported_value_and_the_double_sum(self):
        X = np.random.default_rng(9).normal(size=(1024, 3)) + 0.4
        cs = kdistill.thin(X, 32, algorithm="skt", score=-X, ls=1.2, seed=1)
        got = kdistill.ksd(cs, score=lambda x: -x, ls=1.2)
        self.assertAlmostEqual(got, cs.mmd, delta=1e-12 * cs.mmd)
        # weighted, against the Langevin Stein kernel of IMQ (beta 1/2) written out here
        P, w, ls = cs.points, np.arange(1.0, 33.0) / 528.0, 1.2
        got = kdistill.ksd(P, w, -P, ls=1.2)
        D = P[:, None, :] - P[None, :, :]
        r2 = (D ** 2).sum(-1)
        c = 1.0 + r2 / ls ** 2
        gx = (-1.0 / ls ** 2) * c[..., None] ** -1.5 * D
        tr = (1.0 / ls ** 2) * (3 * c ** -1.5 - 3.0 / ls ** 2 * c ** -2.5 * r2)
        S = -P
        kp = tr + (gx * S[None]).sum(-1) - (gx * S[:, None]).sum(-1) + c ** -0.5 * (S @ S.T)
        self.assertAlmostEqual(got, float(np.sqrt(w @ kp @ w)), delta=1e-12 * got)
        with self.assertRaises(kdistill.DataError):
            kdistill.ksd(P, None, -P[:, :2], ls=1.0)
        with self.assertRaises(TypeError):
            kdistill.ksd(P, None)

    def test_ksd_of_a_coreset_takes_the_runs_kernel(self):
        # the default ls is the run's median heuristic over all 2048 rows of a mixture: ksd of
        # the coreset must use it (and the run's beta), not a median over the 32 coreset points
        rng = np.random.default_rng(12)
        X = np.vstack([rng.normal(size=(1024, 2)) - 3.0, rng.normal(size=(1024, 2)) + 3.0])
        for kern in ({"name": "stein", "base": "imq", "beta": 0.3},
                     {"name": "stein", "base": "gaussian"}):
            cs = kdistill.thin(X, 32, algorithm="skt", kernel=kern, score=-X, seed=1)
            got = kdistill.ksd(cs, score=lambda x: -x)
            self.assertAlmostEqual(got, cs.mmd, delta=1e-12 * cs.mmd)
            back = kdistill.load(self._saved(cs))
            self.assertAlmostEqual(kdistill.ksd(back, score=lambda x: -x), cs.mmd,
                                   delta=1e-12 * cs.mmd)
        # given arrays, ksd keeps its own default (the median over the points it is given)
        self.assertNotAlmostEqual(kdistill.ksd(cs.points, cs.weights, -cs.points), cs.mmd,
                                  delta=1e-3 * cs.mmd)
        pre = kdistill.thin(X, 32, algorithm="skt", score=-X, seed=1,
                            kernel={"name": "stein", "base": "imq", "precondition": "diag"})
        with self.assertRaisesRegex(kdistill.UnsupportedError, "precondition: diag"):
            kdistill.ksd(pre, score=-pre.points)

    def _saved(self, cs):
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        path = os.path.join(d, "cs.h5")
        cs.save(path)
        return path


class ReadPointsTest(unittest.TestCase):
    def test_library_readers_and_kdplot(self):
        import subprocess
        import sys
        X = gauss_mixture(512, 2)
        with tempfile.TemporaryDirectory() as d:
            npy, csvp = os.path.join(d, "x.npy"), os.path.join(d, "x.csv")
            np.save(npy, X)
            with open(csvp, "w") as f:  # pandas' to_csv(sep=";"): a header, an unnamed index
                f.write(";a;b\n" + "".join("%d;%r;%r\n" % (i, a, b) for i, (a, b) in enumerate(X)))
            for path in (npy, csvp):
                np.testing.assert_array_equal(kdistill.read_points(path), X)
            np.testing.assert_array_equal(kdistill.read_points(csvp, columns=["b"]), X[:, 1:])
            with self.assertRaisesRegex(kdistill.ConfigError, "data.colums"):
                kdistill.read_points(csvp, colums=["b"])
            with self.assertRaisesRegex(kdistill.FileError, "nope.npy"):
                kdistill.read_points(os.path.join(d, "nope.npy"))
            # kdplot draws a coreset over data in either file, read the same way
            out = os.path.join(d, "cs.h5")
            kdistill.thin(X, 16, ls=1.0).save(out)
            exe = os.path.join(os.path.dirname(sys.executable), "kdplot")
            cmd = ([exe] if os.path.exists(exe)
                   else [sys.executable, os.path.join(ROOT, "python", "kdistill", "_kdplot.py")])
            for path in (npy, csvp):
                png = path + ".png"
                r = subprocess.run(cmd + ["coreset", out, "--data", path, "-o", png],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertGreater(os.path.getsize(png), 1000)


THREADS_CHILD = r"""
import os, sys, tempfile, threading, numpy as np, kdistill
X = np.random.default_rng(3).normal(size=(1024, 2))
def calls(d):
    return [("thin", lambda: kdistill.thin(X, 16, ls=1.0, seed=1).indices),
            ("mmd", lambda: float(kdistill.mmd(X[:16], None, X, ls=1.0))),
            ("ctt", lambda: kdistill.ctt(X[:512], X[512:] + 0.5, g=0, B=20, seed=2,
                                         ls=1.0).statistic),
            ("quad", lambda: kdistill.quad(kdistill.Gaussian([0.0], 1.0), 8, ls=1.0).points),
            ("save+load", lambda: save_load(d)),
            ("read_points", lambda: kdistill.read_points({"type": "gaussian", "n": 64, "d": 2})),
            ("ksd", lambda: kdistill.ksd(X[:32], None, -X[:32], ls=1.0)),
            ("build_info", lambda: kdistill.build_info()["version"]),
            ("herd", lambda: kdistill.herd(X, kdistill.Gaussian([0, 0], 1), 8, ls=1.0).weights)]
names = iter(range(1000))
def save_load(d):
    path = os.path.join(d, "cs%d.h5" % next(names))
    kdistill.thin(X, 8, ls=1.0).save(path)
    return kdistill.load(path).indices
def run_all(jobs):
    out, errs = [None] * len(jobs), []
    def work(i):
        try:
            out[i] = jobs[i][1]()
        except BaseException as e:
            errs.append("%s: %r" % (jobs[i][0], e))
    ts = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(jobs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    if any(t.is_alive() for t in ts) or errs:
        print("FAIL: %d threads still running; errors: %s" % (sum(t.is_alive() for t in ts), errs))
        sys.stdout.flush()
        os._exit(1)
    return out
with tempfile.TemporaryDirectory() as d:
    jobs = calls(d)
    # nine threads make the process's first calls at once: MPI is initialised once
    first = run_all(jobs)
    # again, each call three times at once; every result is the one the call gives alone
    again = run_all([j for j in jobs for _ in range(3)])
    for i, (name, fn) in enumerate(jobs):
        alone = fn()
        for r in [first[i]] + again[3 * i: 3 * i + 3]:
            if not np.array_equal(np.asarray(r), np.asarray(alone)):
                print("FAIL: %s from a thread gave %r, alone %r" % (name, r, alone))
                sys.exit(1)
print("threads OK")
"""


class ThreadTest(unittest.TestCase):
    def test_threads_first_calls_and_concurrent_calls(self):
        # a fresh interpreter: nine threads making its first calls aborted it ("initialize MPI
        # more than once"); the calls of many threads at once crashed or mixed up their contexts
        import subprocess
        import sys
        r = subprocess.run([sys.executable, "-c", THREADS_CHILD], capture_output=True, text=True,
                           timeout=180)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-3000:])
        self.assertIn("threads OK", r.stdout)

    def test_thread_below_serialized_refused(self):
        # MPI initialised MPI_THREAD_FUNNELED by mpi4py: a call from another thread would break
        # MPI's rules; it raises UnsupportedError, and the main thread's calls still work
        import subprocess
        import sys
        child = ("import mpi4py; mpi4py.rc.thread_level = 'funneled'\n"
                 "from mpi4py import MPI\n"
                 "import threading, numpy as np, kdistill\n"
                 "X = np.random.default_rng(0).normal(size=(256, 2))\n"
                 "def work():\n"
                 "    try:\n"
                 "        kdistill.thin(X, 8, ls=1.0)\n"
                 "    except kdistill.UnsupportedError as e:\n"
                 "        print('refused:', e)\n"
                 "t = threading.Thread(target=work); t.start(); t.join(60)\n"
                 "print('main:', len(kdistill.thin(X, 8, ls=1.0)))\n")
        r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertIn("refused: kdistill was called from a thread other than the main one",
                      r.stdout)
        self.assertIn("main: 8", r.stdout)


class PackageTest(unittest.TestCase):
    def test_plot(self):
        import matplotlib
        matplotlib.use("Agg")
        X = gauss_mixture(2048)
        cs = kdistill.thin(X, 16, ls=2.0)
        with tempfile.TemporaryDirectory() as d:
            ax = kdistill.plot(cs, X, path=os.path.join(d, "c.png"))
            self.assertIn("(exact)", ax.get_title())
            self.assertGreater(os.path.getsize(os.path.join(d, "c.png")), 1000)
            offsets = ax.collections[-1].get_offsets()
            np.testing.assert_array_equal(np.asarray(offsets), cs.points[:, :2])
            t = kdistill.ctt(X, X + 1.0, seed=1)
            ax = kdistill.plot(t, path=os.path.join(d, "t.png"))
            self.assertIn("reject at alpha = 0.05", ax.get_title())
        with self.assertRaises(TypeError):
            kdistill.plot(X)

    def test_build_info(self):
        info = kdistill.build_info()
        self.assertEqual(info["version"].split()[0], kdistill.__version__)
        for key in ("compiler", "mpi", "hdf5", "blas", "scalapack", "yaml"):
            self.assertTrue(info.get(key), key)


if __name__ == "__main__":
    unittest.main()
