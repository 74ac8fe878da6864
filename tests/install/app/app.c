/* app.c - a C program a site user would write: one kdistill job from a configuration text, run
 * on MPI_COMM_WORLD, built against an installed kdistill with find_package (tests/install). */
#include <kdistill/kdistill.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  kd_ctx *ctx = NULL;
  kd_job_summary sum;
  const char *cfg =
      "task: thin\n"
      "data: {type: gaussian, n: 1024, d: 2, seed: 1}\n"
      "kernel: {name: gaussian, ls: 1.0}\n"
      "algorithm: {name: kt_compress, n_out: 32}\n"
      "run: {seed: 7}\n";
  kd_job_opts o = {.config = "app.yaml", .config_text = cfg, .no_output = 1};
  MPI_Init(&argc, &argv);
  kd_err err = kd_ctx_create(MPI_COMM_WORLD, &ctx);
  if (!err) err = kd_job_run(ctx, &o, &sum, NULL);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    if (err)
      printf("error: %s\n", ctx ? kd_ctx_message(ctx) : kd_err_string(err));
    else
      printf("n %lld mmd %.17g\n", (long long)sum.n, sum.mmd);
  }
  kd_ctx_destroy(&ctx);
  MPI_Finalize();
  return err ? 1 : 0;
}
