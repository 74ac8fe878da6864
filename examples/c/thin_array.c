/* thin_array.c - thin rows a C program holds in memory, without a configuration file or YAML
 * text: the job's settings are typed values (kdistill/kd_spec.h), the rows a kd_data_array
 * (kdistill/kd_data.h). Build it against an installed kdistill with the CMakeLists.txt beside it,
 * run it under mpirun with any number of ranks: each rank passes its own block of the rows, and
 * the coreset is the same at every rank count.
 *
 *   cmake -S examples/c -B build-example -DCMAKE_PREFIX_PATH=PREFIX && cmake --build build-example
 *   mpirun -n 2 build-example/thin_array [ROWS.csv]
 *
 * It prints the coreset's size, its MMD to the rows (exact), and the first rows it kept. With a
 * file name, rank 0 also writes the rows there (17 significant digits, so they read back as the
 * same doubles): `kdistill run` on that file with the same settings gives the same coreset. */
#include <kdistill/kdistill.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 4096, D = 3, N_OUT = 64 };

/* Row i of a deterministic sample on a twisted ring (the same whatever the rank count). */
static void row(int64_t i, double *x) {
  const double pi = 3.14159265358979323846;
  const double t = 2.0 * pi * (double)((i * 2654435761u) % N) / N;
  const double r = 1.0 + 0.25 * sin(5.0 * t);
  x[0] = r * cos(t);
  x[1] = r * sin(t);
  x[2] = 0.3 * cos(3.0 * t);
}

/* The settings of the run, each a typed value; the first failure is also kept in the spec. */
static kd_err settings(kd_spec *s) {
  kd_err err = KD_OK;
  if (!err) err = kd_spec_set_text(s, "data.type", "memory");
  if (!err) err = kd_spec_set_text(s, "data.name", "rows");
  if (!err) err = kd_spec_set_text(s, "kernel.name", "gaussian");
  if (!err) err = kd_spec_set_real(s, "kernel.ls", 0.5);
  if (!err) err = kd_spec_set_text(s, "algorithm.name", "kt_compress");
  if (!err) err = kd_spec_set_int(s, "algorithm.n_out", N_OUT);
  if (!err) err = kd_spec_set_int(s, "run.seed", 7);
  return err;
}

/* All N rows as CSV, for the command line to thin the same rows. */
static int write_rows(const char *path) {
  FILE *f = fopen(path, "w");
  double x[D];
  if (!f) return 0;
  for (int64_t i = 0; i < N; i++) {
    row(i, x);
    fprintf(f, "%.17g,%.17g,%.17g\n", x[0], x[1], x[2]);
  }
  return fclose(f) == 0;
}

int main(int argc, char **argv) {
  int rank = 0, size = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && rank == 0 && !write_rows(argv[1])) fprintf(stderr, "cannot write %s\n", argv[1]);
  /* this rank's block of the N rows: rows [lo, hi) */
  const int64_t lo = (int64_t)N * rank / size, hi = (int64_t)N * (rank + 1) / size;
  double *x = malloc((size_t)((hi - lo) > 0 ? hi - lo : 1) * D * sizeof *x);
  for (int64_t i = lo; x && i < hi; i++) row(i, x + (i - lo) * D);
  kd_data_array rows = {"rows", x, hi - lo, D, KD_DTYPE_F64, D, 1};

  kd_ctx *ctx = NULL;
  kd_spec *spec = NULL;
  kd_job_summary sum;
  kd_result res = KD_RESULT_INIT;
  kd_err err = x ? kd_ctx_create(MPI_COMM_WORLD, &ctx) : KD_ERR_MEM;
  if (!err) err = kd_spec_create("thin", &spec);
  if (!err) (void)settings(spec); /* a failed setting makes the run below fail with its message */
  kd_job_opts o = {.spec = spec, .arrays = &rows, .n_arrays = 1, .no_output = 1};
  if (!err) err = kd_job_run(ctx, &o, &sum, &res);
  if (rank == 0) {
    if (err) {
      printf("error: %s\n", ctx ? kd_ctx_message(ctx) : kd_err_string(err));
    } else {
      printf("n %lld mmd %.17g (%s) rows", (long long)sum.n, sum.mmd,
             sum.mmd_method == 0 ? "exact" : "not exact");
      for (int i = 0; i < 4 && i < res.n; i++) printf(" %lld", (long long)res.indices[i]);
      printf("\n");
    }
  }
  kd_result_free(&res);
  kd_spec_destroy(&spec);
  kd_ctx_destroy(&ctx);
  free(x);
  MPI_Finalize();
  return err ? 1 : 0;
}
