/* test_pointset_io.c - point sets from HDF5 (parallel hyperslab read, any numeric type, 1-D as
 * d = 1) and CSV (rank 0 parses and scatters, header auto-detected): every rank's block equals the
 * formula for its global rows at 1, 2, 4 ranks; errors name file and dataset / line; a NaN in the
 * block of the last rank is reported with its 1-based row by every rank. */
#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_impl.h"
#include "kd_test.h"

#define N 103
#define D 3

static double val(int64_t g, int j) { return (double)g * 10.0 + j + 0.25; }

static void write_ds(hid_t f, const char *name, hid_t ftype, hid_t mtype, int rank,
                     const hsize_t *dims, const void *buf) {
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t s = H5Screate_simple(rank, dims, NULL);
  hid_t d = H5Dcreate2(f, name, ftype, s, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  if (buf) H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  H5Dclose(d);
  H5Sclose(s);
  H5Pclose(lcpl);
}

static void make_files(const char *dir) {
  char p[512];
  double *f64 = malloc(sizeof(double) * N * D);
  float *f32 = malloc(sizeof(float) * N * D);
  int32_t *i32 = malloc(sizeof(int32_t) * N * D);
  for (int64_t g = 0; g < N; g++)
    for (int j = 0; j < D; j++) {
      f64[g * D + j] = val(g, j);
      f32[g * D + j] = (float)val(g, j);
      i32[g * D + j] = (int32_t)(g * 3 + j);
    }
  snprintf(p, sizeof p, "%s/in.h5", dir);
  hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[3] = {N, D, 1};
  write_ds(f, "f64", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, dims, f64);
  write_ds(f, "/grp/f32", H5T_IEEE_F32BE, H5T_NATIVE_FLOAT, 2, dims, f32);
  write_ds(f, "i32", H5T_STD_I32LE, H5T_NATIVE_INT32, 2, dims, i32);
  write_ds(f, "vec", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, dims, f64); /* first N values */
  write_ds(f, "cube", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, (hsize_t[]){N, 1, 3}, f64);
  f64[(N - 2) * D + 1] = NAN; /* row N-1 (1-based): owned by the last rank */
  write_ds(f, "nan", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, dims, f64);
  write_ds(f, "empty", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, (hsize_t[]){0, 2}, NULL);
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, 4);
  write_ds(f, "text", st, st, 1, (hsize_t[]){2}, "abcdefgh");
  H5Tclose(st);
  H5Fclose(f);
  f64[(N - 2) * D + 1] = val(N - 2, 1);
  /* CSV: with header, without, with a NaN near the end, ragged */
  static const char *const names[4] = {"h.csv", "noh.csv", "nan.csv", "ragged.csv"};
  for (int k = 0; k < 4; k++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[k]);
    FILE *c = fopen(p, "w");
    if (!c) continue;
    if (k != 1) fprintf(c, "# generated\nx, y ,z\n");
    for (int64_t g = 0; g < N; g++) {
      if (k == 2 && g == N - 2)
        fprintf(c, "%.17g,nan,%.17g\n", val(g, 0), val(g, 2));
      else if (k == 3 && g == 50)
        fprintf(c, "%.17g,%.17g\n", val(g, 0), val(g, 1));
      else
        fprintf(c, "%.17g, %.17g,%.17g\r\n", val(g, 0), val(g, 1), val(g, 2));
      if (g == 10) fprintf(c, "\n");
    }
    fclose(c);
  }
  snprintf(p, sizeof p, "%s/notes.txt", dir);
  FILE *t = fopen(p, "w");
  if (t) fputs("not hdf5\n", t), fclose(t);
  free(f64);
  free(f32);
  free(i32);
}

static void check_rows(kd_pointset *ps, int d, double (*fn)(int64_t, int), const char *what) {
  if (!ps) return;
  KD_TEST(kd_pointset_n_global(ps) == N && kd_pointset_dim(ps) == d, "%s: shape %lld x %d", what,
          (long long)kd_pointset_n_global(ps), kd_pointset_dim(ps));
  const double *r = kd_pointset_rows_const(ps);
  int bad = 0;
  for (kd_lidx i = 0; i < kd_pointset_n_local(ps); i++)
    for (int j = 0; j < d; j++)
      if (r[i * d + j] != fn(kd_pointset_offset(ps) + i, j)) bad++;
  KD_TEST(bad == 0, "%s: %d wrong values on rank %d", what, bad, kd_test_rank());
  int64_t nl = kd_pointset_n_local(ps);
  MPI_Allreduce(MPI_IN_PLACE, &nl, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  KD_TEST(nl == N, "%s: rows over ranks %lld", what, (long long)nl);
}

static double val_i32(int64_t g, int j) { return (double)(g * 3 + j); }

static void expect_err(kd_err e, kd_err code, const char *a, const char *b) {
  KD_TEST(e == code, "error code %d, expected %d (%s)", e, code, kd_err_message());
  KD_TEST(strstr(kd_err_message(), a) && (!b || strstr(kd_err_message(), b)),
          "message '%s' should name '%s' and '%s'", kd_err_message(), a, b ? b : "");
  kd_err_clear();
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
  char dir[256] = "", p[600], q[600];
  if (kd_test_rank() == 0) {
    snprintf(dir, sizeof dir, "kd_test_psio_%ld_%d", (long)getpid(), kd_test_size());
    mkdir(dir, 0777);
    make_files(dir);
  }
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  snprintf(p, sizeof p, "%s/in.h5", dir);
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_pointset_read_h5(MPI_COMM_WORLD, p, "f64", &ps));
  check_rows(ps, D, val, "h5 f64");
  kd_pointset_destroy(&ps);
  KD_TEST_OK(kd_pointset_read_h5(MPI_COMM_WORLD, p, "/grp/f32", &ps));
  check_rows(ps, D, val, "h5 big-endian f32 in a group");
  kd_pointset_destroy(&ps);
  KD_TEST_OK(kd_pointset_read_h5(MPI_COMM_WORLD, p, "i32", &ps));
  check_rows(ps, D, val_i32, "h5 i32");
  kd_pointset_destroy(&ps);
  KD_TEST_OK(kd_pointset_read_h5(MPI_COMM_WORLD, p, "vec", &ps));
  if (ps) {
    KD_TEST(kd_pointset_dim(ps) == 1 && kd_pointset_n_global(ps) == N, "1-D read as d = 1");
    const double *r = kd_pointset_rows_const(ps);
    int bad = 0;
    for (kd_lidx i = 0; i < kd_pointset_n_local(ps); i++) {
      int64_t g = kd_pointset_offset(ps) + i;
      if (r[i] != val(g / D, (int)(g % D))) bad++;
    }
    KD_TEST(bad == 0, "1-D values");
  }
  kd_pointset_destroy(&ps);
  /* NaN in the last rank's block: validation names row N-1 on every rank */
  KD_TEST_OK(kd_pointset_read_h5(MPI_COMM_WORLD, p, "nan", &ps));
  if (ps) {
    snprintf(q, sizeof q, "%d", N - 1);
    expect_err(kd_pointset_validate(ps, "data (in.h5)"), KD_ERR_INPUT, "row ", q);
  }
  kd_pointset_destroy(&ps);
  KD_TEST_OK(kd_pointset_read_h5(MPI_COMM_WORLD, p, "empty", &ps));
  if (ps) expect_err(kd_pointset_validate(ps, "data"), KD_ERR_INPUT, "empty", NULL);
  kd_pointset_destroy(&ps);
  /* errors */
  expect_err(kd_pointset_read_h5(MPI_COMM_WORLD, p, "nope", &ps), KD_ERR_FILE, "in.h5",
             "'nope' not found");
  expect_err(kd_pointset_read_h5(MPI_COMM_WORLD, p, "cube", &ps), KD_ERR_INPUT, "in.h5", "rank 3");
  expect_err(kd_pointset_read_h5(MPI_COMM_WORLD, p, "text", &ps), KD_ERR_INPUT, "in.h5",
             "'text' must hold numbers");
  snprintf(q, sizeof q, "%s/missing.h5", dir);
  expect_err(kd_pointset_read_h5(MPI_COMM_WORLD, q, "f64", &ps), KD_ERR_FILE, "missing.h5",
             "cannot open");
  snprintf(q, sizeof q, "%s/notes.txt", dir);
  expect_err(kd_pointset_read_h5(MPI_COMM_WORLD, q, "f64", &ps), KD_ERR_FILE, "notes.txt",
             "not an HDF5 file");
  KD_TEST(ps == NULL, "no point set after errors");
  /* CSV */
  snprintf(q, sizeof q, "%s/h.csv", dir);
  KD_TEST_OK(kd_pointset_read_csv(MPI_COMM_WORLD, q, -1, &ps));
  check_rows(ps, D, val, "csv header auto");
  kd_pointset_destroy(&ps);
  KD_TEST_OK(kd_pointset_read_csv(MPI_COMM_WORLD, q, 1, &ps));
  check_rows(ps, D, val, "csv header forced");
  kd_pointset_destroy(&ps);
  expect_err(kd_pointset_read_csv(MPI_COMM_WORLD, q, 0, &ps), KD_ERR_INPUT,
             "h.csv:2:", "column 1 is not a number");
  snprintf(q, sizeof q, "%s/noh.csv", dir);
  KD_TEST_OK(kd_pointset_read_csv(MPI_COMM_WORLD, q, -1, &ps));
  check_rows(ps, D, val, "csv no header");
  kd_pointset_destroy(&ps);
  snprintf(q, sizeof q, "%s/nan.csv", dir);
  KD_TEST_OK(kd_pointset_read_csv(MPI_COMM_WORLD, q, -1, &ps));
  if (ps) {
    snprintf(p, sizeof p, "row %d has a non-finite", N - 1);
    expect_err(kd_pointset_validate(ps, "nan.csv"), KD_ERR_INPUT, "nan.csv", p);
  }
  kd_pointset_destroy(&ps);
  snprintf(q, sizeof q, "%s/ragged.csv", dir);
  /* line: 2 comment/header lines + 50 rows + 1 blank line after row 10, then row 50 */
  expect_err(kd_pointset_read_csv(MPI_COMM_WORLD, q, -1, &ps), KD_ERR_INPUT,
             "ragged.csv:54:", "expected 3 values");
  snprintf(q, sizeof q, "%s/missing.csv", dir);
  expect_err(kd_pointset_read_csv(MPI_COMM_WORLD, q, -1, &ps), KD_ERR_FILE, "missing.csv",
             "cannot open");
  MPI_Barrier(MPI_COMM_WORLD);
  if (kd_test_rank() == 0) {
    rm_tree(dir);
  }
  return kd_test_finish();
}
