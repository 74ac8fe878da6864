/* test_h5_output.c - the HDF5 output contract: kd_output_write then kd_output_read gives back the
 * coreset, metrics and trace bit for bit; the root attributes and extra datasets are where
 * kd_io.h says; no temporary file is left; a failed write leaves nothing at the path. */
#include <dirent.h>
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_impl.h"
#include "kd_test.h"

static int exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

/* Number of temporaries "<base>.tmp.*" next to base (readdir: no fork under MPI). */
static int count_tmp(const char *base) {
  char dir[512], prefix[512];
  const char *slash = strrchr(base, '/');
  if (slash) {
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - base), base);
    snprintf(prefix, sizeof prefix, "%s.tmp.", slash + 1);
  } else {
    snprintf(dir, sizeof dir, ".");
    snprintf(prefix, sizeof prefix, "%s.tmp.", base);
  }
  DIR *d = opendir(dir);
  if (!d) return 0; /* no directory: no temporaries */
  int n = 0;
  for (struct dirent *e = readdir(d); e; e = readdir(d))
    if (!strncmp(e->d_name, prefix, strlen(prefix))) n++;
  closedir(d);
  return n;
}

static void make_result(kd_result *r) {
  const int n = 37, d = 3;
  KD_TEST_OK(kd_result_alloc(r, n, d));
  for (int i = 0; i < n * d; i++) r->points[i] = kd_rng_normal(5, 1, (uint64_t)i) * 1e3;
  double s = 0;
  for (int i = 0; i < n; i++) s += r->weights[i] = kd_rng_uniform(5, 2, (uint64_t)i);
  for (int i = 0; i < n; i++) r->weights[i] /= s;
  for (int i = 0; i < n; i++) r->indices[i] = i % 5 == 0 ? -1 : 1000 + 7 * i;
  r->mmd = 0.012345678901234567;
  r->seconds = 1.5;
  r->kernel_evals = 123456789012345ULL;
  for (int t = 0; t < 5; t++) KD_TEST_OK(kd_result_trace_push(r, t, t + 1, 1.0 / (t + 1), 0.1 * t));
  KD_TEST_OK(kd_result_set_metric(r, "lmo_calls", 42));
  KD_TEST_OK(kd_result_set_metric(r, "mmd_before_reweight", 0.5));
  int64_t dims[2] = {2, 2};
  double x[4] = {1, 2, 3, 4};
  int64_t iv[3] = {-1, 0, 1};
  KD_TEST_OK(kd_result_add_f64(r, "/test/deep/matrix", 2, dims, x));
  KD_TEST_OK(kd_result_add_i64(r, "/test/ints", 1, (int64_t[]){3}, iv));
  double pv = 0.03;
  KD_TEST_OK(kd_result_add_f64(r, "/test/p_value", 0, NULL, &pv));
}

static int attr_exists(hid_t loc, const char *name) { return H5Aexists(loc, name) > 0; }

static void test_roundtrip(const char *path) {
  kd_result r = KD_RESULT_INIT, b = KD_RESULT_INIT;
  kd_output_meta meta = {"thin",         "uniform", "gaussian(ls=1)",
                         kd_test_size(), 99,        "task: thin\nrun:\n  seed: 99\n"};
  char *yaml = NULL, *task = NULL, *algo = NULL;
  make_result(&r);
  KD_TEST_OK(kd_output_write(MPI_COMM_WORLD, path, &meta, &r));
  KD_TEST(exists(path), "output exists");
  KD_TEST(count_tmp(path) == 0, "no temporary left (%d)", count_tmp(path));
  KD_TEST_OK(kd_output_read(path, &b, &yaml, &task, &algo));
  KD_TEST(b.n == r.n && b.d == r.d, "shape %lld x %d", (long long)b.n, b.d);
  if (b.n == r.n && b.d == r.d) {
    KD_TEST(!memcmp(b.points, r.points, sizeof(double) * (size_t)(r.n * r.d)), "points bitwise");
    KD_TEST(!memcmp(b.weights, r.weights, sizeof(double) * (size_t)r.n), "weights bitwise");
    KD_TEST(!memcmp(b.indices, r.indices, sizeof(int64_t) * (size_t)r.n), "indices bitwise");
  }
  KD_TEST(b.mmd == r.mmd && b.seconds == r.seconds && b.kernel_evals == r.kernel_evals,
          "metrics: %.17g %.17g %llu", b.mmd, b.seconds, (unsigned long long)b.kernel_evals);
  KD_TEST(b.n_trace == 5, "trace rows %lld", (long long)b.n_trace);
  if (b.n_trace == 5)
    for (int t = 0; t < 5; t++)
      KD_TEST(b.trace_iter[t] == t && b.trace_atoms[t] == t + 1 &&
                  b.trace_mmd[t] == 1.0 / (t + 1) && b.trace_seconds[t] == 0.1 * t,
              "trace row %d", t);
  double v = 0;
  KD_TEST(kd_result_get_metric(&b, "lmo_calls", &v) && v == 42, "metric lmo_calls");
  KD_TEST(kd_result_get_metric(&b, "mmd_before_reweight", &v) && v == 0.5, "metric 2");
  KD_TEST(yaml && !strcmp(yaml, meta.config_yaml), "config_yaml");
  KD_TEST(task && !strcmp(task, "thin") && algo && !strcmp(algo, "uniform"), "task/algorithm");
  /* raw layout: names users rely on */
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  KD_TEST(f >= 0, "H5Fopen");
  if (f >= 0) {
    static const char *const roots[] = {"kdistill_version", "task", "algorithm",   "kernel",
                                        "n_ranks",          "seed", "created_utc", "config_yaml"};
    for (int i = 0; i < 8; i++) KD_TEST(attr_exists(f, roots[i]), "root attribute %s", roots[i]);
    int32_t nr = 0;
    uint64_t seed = 0;
    hid_t a = H5Aopen(f, "n_ranks", H5P_DEFAULT);
    if (a >= 0) H5Aread(a, H5T_NATIVE_INT32, &nr), H5Aclose(a);
    a = H5Aopen(f, "seed", H5P_DEFAULT);
    if (a >= 0) H5Aread(a, H5T_NATIVE_UINT64, &seed), H5Aclose(a);
    KD_TEST(nr == kd_test_size() && seed == 99, "n_ranks %d seed %llu", nr,
            (unsigned long long)seed);
    hid_t m = H5Gopen2(f, "/metrics", H5P_DEFAULT);
    KD_TEST(m >= 0 && attr_exists(m, "mmd") && attr_exists(m, "seconds") &&
                attr_exists(m, "kernel_evals") && attr_exists(m, "lmo_calls"),
            "/metrics attributes");
    if (m >= 0) H5Gclose(m);
    static const char *const ds[] = {"/coreset/points",
                                     "/coreset/weights",
                                     "/coreset/indices",
                                     "/metrics/trace/iteration",
                                     "/metrics/trace/n_atoms",
                                     "/metrics/trace/mmd",
                                     "/metrics/trace/seconds",
                                     "/test/deep/matrix",
                                     "/test/ints",
                                     "/test/p_value"};
    for (int i = 0; i < 10; i++) {
      hid_t d = H5Dopen2(f, ds[i], H5P_DEFAULT);
      KD_TEST(d >= 0, "dataset %s", ds[i]);
      if (d >= 0) H5Dclose(d);
    }
    double mat[4] = {0, 0, 0, 0}, p = 0;
    hid_t d = H5Dopen2(f, "/test/deep/matrix", H5P_DEFAULT);
    if (d >= 0) H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, mat), H5Dclose(d);
    d = H5Dopen2(f, "/test/p_value", H5P_DEFAULT);
    if (d >= 0) H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p), H5Dclose(d);
    KD_TEST(mat[3] == 4 && p == 0.03, "extra datasets content");
    H5Fclose(f);
  }
  free(yaml);
  free(task);
  free(algo);
  kd_result_free(&b);
  /* a second write replaces the file atomically (the barrier keeps rank 0 from creating its
   * temporary while other ranks still look for leftovers of the first write) */
  MPI_Barrier(MPI_COMM_WORLD);
  r.mmd = 0.5;
  KD_TEST_OK(kd_output_write(MPI_COMM_WORLD, path, &meta, &r));
  KD_TEST_OK(kd_output_read(path, &b, NULL, NULL, NULL));
  KD_TEST(b.mmd == 0.5, "rewritten mmd %g", b.mmd);
  kd_result_free(&b);
  kd_result_free(&r);
}

/* A write that fails (reserved metric name -> error inside the file write; an unwritable
 * directory) must leave neither the output nor a temporary. */
static void test_failures(const char *dir) {
  kd_result r = KD_RESULT_INIT;
  kd_output_meta meta = {"thin", "uniform", "k", kd_test_size(), 1, ""};
  char path[512];
  make_result(&r);
  KD_TEST_OK(kd_result_set_metric(&r, "seconds", 1.0)); /* reserved: fails mid-write */
  snprintf(path, sizeof path, "%s/fail.h5", dir);
  kd_err_clear();
  kd_err e = kd_output_write(MPI_COMM_WORLD, path, &meta, &r);
  KD_TEST(e != KD_OK, "reserved metric fails on every rank (%d)", e);
  KD_TEST(!exists(path), "nothing at the path after a failed write");
  KD_TEST(count_tmp(path) == 0, "temporary removed after a failed write");
  kd_err_clear();
  kd_result_free(&r);
  make_result(&r);
  /* parent "directory" is a regular file */
  snprintf(path, sizeof path, "%s/plainfile/out.h5", dir);
  if (kd_test_rank() == 0) {
    char pf[512];
    snprintf(pf, sizeof pf, "%s/plainfile", dir);
    FILE *f = fopen(pf, "w");
    if (f) fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  e = kd_output_write(MPI_COMM_WORLD, path, &meta, &r);
  KD_TEST(e == KD_ERR_IO, "unwritable directory -> KD_ERR_IO (%d: %s)", e, kd_err_message());
  KD_TEST(strstr(kd_err_message(), "out.h5") != NULL, "message names the file: %s",
          kd_err_message());
  KD_TEST(!exists(path), "nothing written");
  kd_err_clear();
  /* intermediate directories are created */
  snprintf(path, sizeof path, "%s/sub/dir/ok.h5", dir);
  KD_TEST_OK(kd_output_write(MPI_COMM_WORLD, path, &meta, &r));
  KD_TEST(exists(path), "created in new subdirectories");
  kd_result_free(&r);
}

/* rm -rf without fork (fork under MPI is unsafe). */
static void rm_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (d) {
      for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        rm_tree(sub);
      }
      closedir(d);
    }
  }
  remove(path);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  kd_h5_quiet();
  char dir[256] = "";
  if (kd_test_rank() == 0) {
    snprintf(dir, sizeof dir, "kd_test_h5_%ld_%d", (long)getpid(), kd_test_size());
    mkdir(dir, 0777);
  }
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  char path[512];
  snprintf(path, sizeof path, "%s/out.h5", dir);
  test_roundtrip(path);
  test_failures(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  if (kd_test_rank() == 0) {
    rm_tree(dir);
  }
  return kd_test_finish();
}
