/* kd_sim.c - run one job from a configuration file in memory (no output file) and print, on rank
 * 0, one line with a fingerprint of its result: a 64-bit FNV-1a hash over the output points,
 * weights, indices, the MMD and every extra dataset (the test's statistic, p-value, coresets ...),
 * in the result's order, and the seconds of the algorithm, of the whole job, and of the context's
 * set-up before it (kd_ctx_create: an MPI_Comm_dup, which SimGrid charges about 0.6 s at 256
 * ranks), and with KD_SIM_VERBOSE=1 the busiest rank's communication seconds and operations over
 * the job (-1 without). Built with the library for real MPI and, with -DKD_SMPI=ON, for
 * SimGrid's SMPI (bench/sim/README.md): the same fingerprint at every rank count is the rank
 * invariance the `sim` tests check. Timings are printed beside it, never hashed.
 *   kd_sim CONFIG.yaml [key.path=value ...]
 * KD_SIM_VERBOSE=1 in the environment: the library's progress and timing lines (verbose level, rank
 * 0, on stderr; simulated seconds under SMPI). KD_SIM_SAMPLE_LEAVES=N (SMPI build): a timing-only
 * run, thin's leaf bins sampled (src/algo/thinning/leaf_sample_smpi.c); its fingerprint is not the
 * job's. Exit status 0 on success, 1 on a failed job (its message on stderr), 2 on bad usage. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdistill/kdistill.h"

static uint64_t kd_sim_hash_(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

static uint64_t kd_sim_fingerprint_(const kd_result *r) {
  uint64_t h = 0xcbf29ce484222325ULL;
  const int64_t n = (int64_t)r->n, d = r->d;
  h = kd_sim_hash_(h, &n, sizeof n);
  h = kd_sim_hash_(h, &d, sizeof d);
  if (r->points) h = kd_sim_hash_(h, r->points, sizeof(double) * (size_t)(n * d));
  if (r->weights) h = kd_sim_hash_(h, r->weights, sizeof(double) * (size_t)n);
  if (r->indices) h = kd_sim_hash_(h, r->indices, sizeof(int64_t) * (size_t)n);
  h = kd_sim_hash_(h, &r->mmd, sizeof r->mmd);
  for (int i = 0; i < r->n_datasets; i++) {
    const kd_result_dataset *ds = &r->datasets[i];
    size_t cnt = 1;
    for (int k = 0; k < ds->rank; k++) cnt *= (size_t)ds->dims[k];
    h = kd_sim_hash_(h, ds->path, strlen(ds->path));
    if (ds->is_int && ds->i64) h = kd_sim_hash_(h, ds->i64, sizeof(int64_t) * cnt);
    if (!ds->is_int && ds->f64) h = kd_sim_hash_(h, ds->f64, sizeof(double) * cnt);
  }
  return h;
}

int main(int argc, char **argv) {
  int rank = 0, size = 1, status = 0;
  kd_ctx *ctx = NULL;
  kd_result res = KD_RESULT_INIT;
  kd_job_summary sum;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
      MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS) {
    fprintf(stderr, "kd_sim: cannot query MPI_COMM_WORLD\n");
    MPI_Abort(MPI_COMM_WORLD, 1); /* the world itself is broken: nothing to agree on */
  }
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: kd_sim CONFIG.yaml [key.path=value ...]\n");
    MPI_Finalize();
    return 2;
  }
  kd_job_opts o;
  memset(&o, 0, sizeof o);
  o.config = argv[1];
  o.sets = (const char *const *)(argv + 2);
  o.n_sets = argc - 2;
  o.no_output = 1;
  const double t0 = MPI_Wtime();
  kd_err err = kd_ctx_create(MPI_COMM_WORLD, &ctx);
  const double tc = MPI_Wtime(); /* the context's set-up (an MPI_Comm_dup) apart from the job */
  if (err == KD_OK) {
    const char *v = getenv("KD_SIM_VERBOSE");
    kd_ctx_set_log_level(ctx, v && v[0] == '1' ? KD_LOG_VERBOSE : KD_LOG_QUIET);
    err = kd_job_run(ctx, &o, &sum, &res);
  }
  const double t1 = MPI_Wtime();
  if (err != KD_OK) {
    if (rank == 0)
      fprintf(stderr, "kd_sim: %s: %s\n", argv[1], ctx ? kd_ctx_message(ctx) : "no context");
    status = 1;
  } else if (rank == 0) {
    /* with KD_SIM_VERBOSE=1 the job reports its communication (the busiest rank's seconds and
     * operations over the whole job): printed after the timings */
    double cs = -1.0, ops = -1.0;
    kd_result_get_metric(&res, "comm_seconds_max", &cs);
    kd_result_get_metric(&res, "comm_ops_max", &ops);
    printf(
        "kd_sim task %s algorithm %s ranks %d n %lld fingerprint %016llx mmd %.17g "
        "algorithm_seconds %.6f job_seconds %.6f context_seconds %.6f comm_seconds_max %.6f "
        "comm_ops_max %.0f\n",
        sum.task, sum.algorithm, size, (long long)sum.n,
        (unsigned long long)kd_sim_fingerprint_(&res), res.mmd, sum.seconds, t1 - tc, tc - t0, cs,
        ops);
  }
  kd_result_free(&res);
  kd_ctx_destroy(&ctx);
  MPI_Finalize();
  return status;
}
