/* kd_mkinput.c - writes test inputs for the script tests (not a test itself):
 *   kd_mkinput h5  FILE DATASET N D [NANROW]   float64 N x D, row g = normal draws keyed by g
 *   kd_mkinput csv FILE N D [NANROW]           the same values as CSV with a header line
 * NANROW (1-based) puts a NaN into that row. */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: kd_mkinput h5 FILE DSET N D [NANROW] | csv FILE N D [NANROW]\n");
    return 2;
  }
  const int h5 = !strcmp(argv[1], "h5");
  const int a = h5 ? 4 : 3;
  if (argc < a + 2) return 2;
  long n = atol(argv[a]), d = atol(argv[a + 1]);
  long nanrow = argc > a + 2 ? atol(argv[a + 2]) : 0;
  double *x = malloc(sizeof(double) * (size_t)(n * d + 1));
  if (!x) return 2;
  for (long i = 0; i < n * d; i++) x[i] = kd_rng_normal(3, 0, (uint64_t)i);
  if (nanrow >= 1 && nanrow <= n) x[(nanrow - 1) * d + (d - 1)] = NAN;
  int rc = 0;
  if (h5) {
    hsize_t dims[2] = {(hsize_t)n, (hsize_t)d};
    hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t s = H5Screate_simple(2, dims, NULL);
    hid_t ds =
        f >= 0 ? H5Dcreate2(f, argv[3], H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
               : -1;
    if (ds < 0 || (n > 0 && H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0))
      rc = 2;
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(s);
    if (f >= 0) H5Fclose(f);
  } else {
    FILE *f = fopen(argv[2], "w");
    if (!f) return 2;
    for (long j = 0; j < d; j++) fprintf(f, "%sx%ld", j ? "," : "", j);
    fputc('\n', f);
    for (long i = 0; i < n; i++)
      for (long j = 0; j < d; j++) fprintf(f, "%.17g%c", x[i * d + j], j + 1 < d ? ',' : '\n');
    fclose(f);
  }
  free(x);
  return rc;
}
