/* main.c - the kdistill command line: the only file that calls MPI_Init / MPI_Finalize, parses
 * argv and chooses the exit status (0 ok, 1 bad input or config, 2 environment, 3 interrupted).
 *
 *   kdistill run CONFIG [--set key.path=value]... [--output FILE] [--resume CKPT]
 * [--quiet|--verbose] kdistill validate CONFIG [--set ...]... [--print-defaults] kdistill info
 * FILE.h5 kdistill mmd FILE.h5 CONFIG [--set ...]... kdistill --help | --version
 *
 * Errors: every rank unwinds to here, the error is agreed (kd_dist_agree), rank 0 prints exactly
 * one line "kdistill: error: <message>", every rank calls MPI_Finalize and exits non-zero. */
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_registry.h"
#include "dist/dist_impl.h"
#include "io/io_impl.h"
#include "kdistill/kdistill.h"
#include "la/la_impl.h"
#include "task/task_impl.h"

#define KD_MAX_SETS 256

typedef struct {
  const char *cmd;
  const char *config;
  const char *file;
  const char *output;
  const char *resume;
  const char *sets[KD_MAX_SETS];
  int n_sets;
  int print_defaults;
  kd_log_level level;
  int help, version;
} kd_cli_opts;

static void kd_cli_usage_(FILE *out) {
  char tasks[1024];
  kd_cli_task_choices(tasks, sizeof tasks);
  fprintf(out,
          "kdistill %s - compress distributions into coresets / quadrature rules with small MMD\n"
          "\n"
          "usage (run under mpirun / srun for more than one rank):\n"
          "  kdistill run CONFIG [--set key.path=value]... [--output FILE] [--resume CKPT]\n"
          "               [--quiet|--verbose]\n"
          "  kdistill validate CONFIG [--set key.path=value]... [--print-defaults]\n"
          "  kdistill info FILE.h5\n"
          "  kdistill mmd FILE.h5 CONFIG [--set key.path=value]...\n"
          "  kdistill --help | --version\n"
          "\n"
          "tasks: %s\nalgorithms:\n",
          KD_VERSION_STRING, tasks);
  for (int i = 0; kd_algo_at(i); i++)
    fprintf(out, "  %-5s %-22s %s\n", kd_algo_at(i)->task, kd_algo_at(i)->name,
            kd_algo_at(i)->summary);
  fprintf(out,
          "\nexit status: 0 success, 1 bad input or configuration, 2 environment (MPI, HDF5, I/O,"
          "\nmemory), 3 interrupted (SIGTERM/SIGUSR1). See README.md for the config reference.\n");
}

static kd_err kd_cli_parse_(int argc, char **argv, kd_cli_opts *o) {
  kd_err err = KD_OK;
  const char *pos[3] = {NULL, NULL, NULL};
  int npos = 0;
  memset(o, 0, sizeof *o);
  o->level = KD_LOG_NORMAL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      o->help = 1;
    } else if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
      o->version = 1;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
      o->level = KD_LOG_QUIET;
    } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
      o->level = KD_LOG_VERBOSE;
    } else if (!strcmp(a, "--print-defaults")) {
      o->print_defaults = 1;
    } else if (!strcmp(a, "--set") || !strncmp(a, "--set=", 6)) {
      const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
      KD_CHECK(v, KD_ERR_ARG, "--set needs key.path=value");
      KD_CHECK(o->n_sets < KD_MAX_SETS, KD_ERR_ARG, "too many --set options (max %d)", KD_MAX_SETS);
      o->sets[o->n_sets++] = v;
    } else if (!strcmp(a, "--output") || !strcmp(a, "-o") || !strncmp(a, "--output=", 9)) {
      const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
      KD_CHECK(v && v[0], KD_ERR_ARG, "--output needs a file name");
      o->output = v;
    } else if (!strcmp(a, "--resume") || !strncmp(a, "--resume=", 9)) {
      const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
      KD_CHECK(v && v[0], KD_ERR_ARG, "--resume needs a checkpoint file");
      o->resume = v;
    } else if (a[0] == '-' && a[1] != '\0') {
      KD_FAIL(KD_ERR_ARG, "unknown option '%s' (see kdistill --help)", a);
    } else {
      KD_CHECK(npos < 3, KD_ERR_ARG, "unexpected argument '%s' (see kdistill --help)", a);
      pos[npos++] = a;
    }
  }
  if (o->help || o->version) goto cleanup;
  KD_CHECK(npos >= 1, KD_ERR_ARG, "no command given (run, validate, info, mmd; see --help)");
  o->cmd = pos[0];
  if (!strcmp(o->cmd, "run") || !strcmp(o->cmd, "validate")) {
    KD_CHECK(npos == 2, KD_ERR_ARG, "usage: kdistill %s CONFIG", o->cmd);
    o->config = pos[1];
  } else if (!strcmp(o->cmd, "info")) {
    KD_CHECK(npos == 2, KD_ERR_ARG, "usage: kdistill info FILE.h5");
    o->file = pos[1];
  } else if (!strcmp(o->cmd, "mmd")) {
    KD_CHECK(npos == 3, KD_ERR_ARG, "usage: kdistill mmd FILE.h5 CONFIG");
    o->file = pos[1];
    o->config = pos[2];
  } else {
    KD_FAIL(KD_ERR_ARG, "unknown command '%s' (run, validate, info, mmd; see --help)", o->cmd);
  }
  KD_CHECK(!o->output || !strcmp(o->cmd, "run"), KD_ERR_ARG, "--output applies to 'run' only");
  KD_CHECK(!o->resume || !strcmp(o->cmd, "run"), KD_ERR_ARG, "--resume applies to 'run' only");
  KD_CHECK(!o->print_defaults || !strcmp(o->cmd, "validate"), KD_ERR_ARG,
           "--print-defaults applies to 'validate' only");
  KD_CHECK(!o->n_sets || o->config, KD_ERR_ARG, "--set needs a command with a CONFIG");
cleanup:
  return err;
}

/* "output.path=<yaml double-quoted path>" so any file name survives the YAML parse. */
static kd_err kd_cli_set_output_(kd_config *cfg, const char *path) {
  kd_err err = KD_OK;
  size_t n = strlen(path);
  char *a = NULL;
  KD_ALLOC(a, 2 * n + 32);
  static const char head[] = "output.path=\"";
  memcpy(a, head, sizeof head - 1);
  char *p = a + sizeof head - 1;
  for (size_t i = 0; i < n; i++) {
    if (path[i] == '"' || path[i] == '\\') *p++ = '\\';
    *p++ = path[i];
  }
  *p++ = '"';
  *p = '\0';
  KD_TRY(kd_config_set(cfg, a));
cleanup:
  free(a);
  return err;
}

typedef struct {
  kd_config *cfg;
  const kd_task_desc *task;
  kd_task_ctx ctx;
  const char *output;
} kd_cli_job;

/* Load the config and read the job-level keys (task, run.*, output.*). Collective. */
static kd_err kd_cli_job_load_(const kd_cli_opts *o, int validate_only, kd_cli_job *job) {
  kd_err err = KD_OK;
  char choices[1024];
  const char *task = NULL;
  int64_t seed = 0;
  double interval = 1.0;
  memset(job, 0, sizeof *job);
  KD_TRY(kd_config_load(MPI_COMM_WORLD, o->config, &job->cfg));
  for (int i = 0; i < o->n_sets; i++) KD_TRY(kd_config_set(job->cfg, o->sets[i]));
  if (o->output) KD_TRY(kd_cli_set_output_(job->cfg, o->output));
  kd_cli_task_choices(choices, sizeof choices);
  KD_TRY(kd_config_get_str(job->cfg, "task", NULL, choices, 1, &task));
  job->task = kd_cli_task_find(task);
  KD_CHECK(job->task, KD_ERR_INTERNAL, "task %s not registered", task);
  KD_TRY(kd_config_get_int(job->cfg, "run.seed", 0, 0, INT64_MAX, &seed));
  KD_TRY(kd_config_get_f64(job->cfg, "run.log_interval", 1.0, 0.0, 1e9, &interval));
  KD_TRY(kd_config_get_str(job->cfg, "output.path", "kdistill_out.h5", NULL, 0, &job->output));
  KD_CHECK(job->output[0], KD_ERR_CONFIG, "output.path: must not be empty");
  kd_log_set_interval(interval);
  job->ctx.comm = MPI_COMM_WORLD;
  job->ctx.cfg = job->cfg;
  job->ctx.seed = (uint64_t)seed;
  job->ctx.validate_only = validate_only;
cleanup:
  return err;
}

static kd_err kd_cli_run_(const kd_cli_opts *o, int rank, int size) {
  kd_err err = KD_OK;
  kd_cli_job job;
  void *state = NULL;
  kd_result res = KD_RESULT_INIT, resume = KD_RESULT_INIT;
  kd_task_info info;
  char *yaml = NULL;
  kd_checkpoint_session *ss = kd_checkpoint_session_get();
  memset(&info, 0, sizeof info);
  kd_dist_comm_seconds_reset();
  const double t_start = kd_dist_wtime();
  KD_TRY(kd_cli_job_load_(o, 0, &job));
  KD_TRY(job.task->setup(&job.ctx, &state));
  KD_TRY(kd_config_check_unused(job.cfg));
  KD_TRY(kd_config_emit_resolved(job.cfg, &yaml));
  ss->config_yaml = yaml;
  ss->cfg = job.cfg;
  if (o->resume) {
    /* checkpoint / restart (docs/checkpoint.md): the herd, thin, quad and ctt_study tasks */
    const char *algo = "ctt_study"; /* the study has no algorithm section */
    const char *tn = job.task->name;
    const int basic = !strcmp(tn, "herd") || !strcmp(tn, "thin") || !strcmp(tn, "quad");
    KD_CHECK(basic || !strcmp(tn, "ctt_study"), KD_ERR_UNSUPPORTED,
             "--resume: task %s does not checkpoint (the herd, thin, quad and ctt_study tasks do)",
             tn);
    if (basic) KD_TRY(kd_config_get_str(job.cfg, "algorithm.name", NULL, NULL, 1, &algo));
    KD_TRY(kd_checkpoint_read(MPI_COMM_WORLD, o->resume, job.task->name, algo, yaml, &resume,
                              &ss->resume_iteration));
    ss->resume = &resume;
    ss->resume_path = o->resume;
  }
  /* agreed: a signal that reached only some ranks must not leave the others in a collective */
  KD_TRY(kd_dist_agreed(MPI_COMM_WORLD, kd_interrupt_pending()
                                            ? kd_err_set(KD_ERR_INTERRUPTED, __FILE__, __LINE__,
                                                         "interrupted before the run started")
                                            : KD_OK));
  KD_TRY(job.task->run(&job.ctx, state, &res, &info));
  /* --verbose: compute vs communication seconds, min / mean / max over ranks */
  if (o->level == KD_LOG_VERBOSE)
    KD_TRY(kd_dist_timing_report(MPI_COMM_WORLD, kd_dist_wtime() - t_start));
  kd_output_meta meta = {job.task->name, info.algorithm, info.kernel, size, job.ctx.seed, yaml};
  KD_TRY(kd_output_write(MPI_COMM_WORLD, job.output, &meta, &res));
  /* the output is in place: the checkpoint of this run is no longer needed */
  if (rank == 0 && ss->path[0]) remove(ss->path);
  if (rank == 0 && o->level != KD_LOG_QUIET) {
    char nin[32] = "-";
    if (info.n_in > 0) snprintf(nin, sizeof nin, "%lld", (long long)info.n_in);
    printf("task:       %s\n", job.task->name);
    printf("algorithm:  %s\n", info.algorithm);
    printf("kernel:     %s\n", info.kernel);
    printf("points:     %s -> %lld (d = %d)\n", nin, (long long)res.n, res.d);
    printf("mmd:        %.6e\n", res.mmd);
    printf("seconds:    %.3f (%llu kernel evaluations, %d rank%s)\n", res.seconds,
           (unsigned long long)res.kernel_evals, size, size == 1 ? "" : "s");
    printf("output:     %s\n", job.output);
    fflush(stdout);
  }
cleanup:
  if (job.task && state) job.task->destroy(&state);
  kd_result_free(&res);
  kd_result_free(&resume);
  memset(ss, 0, sizeof *ss);
  ss->last_iteration = -1;
  free(yaml);
  kd_config_destroy(&job.cfg);
  return err;
}

static kd_err kd_cli_validate_(const kd_cli_opts *o, int rank) {
  kd_err err = KD_OK;
  kd_cli_job job;
  void *state = NULL;
  char *yaml = NULL;
  KD_TRY(kd_cli_job_load_(o, 1, &job));
  KD_TRY(job.task->setup(&job.ctx, &state));
  KD_TRY(kd_config_check_unused(job.cfg));
  KD_TRY(kd_config_emit_resolved(job.cfg, &yaml));
  if (rank == 0) {
    if (o->print_defaults)
      fputs(yaml, stdout);
    else if (o->level != KD_LOG_QUIET)
      printf("%s: valid (task %s)\n", o->config, job.task->name);
    fflush(stdout);
  }
cleanup:
  if (job.task && state) job.task->destroy(&state);
  free(yaml);
  kd_config_destroy(&job.cfg);
  return err;
}

static kd_err kd_cli_info_(const kd_cli_opts *o, int rank) {
  kd_err lerr = KD_OK;
  if (rank == 0) {
    lerr = kd_output_info(o->file, stdout);
    fflush(stdout);
  }
  return kd_dist_agreed(MPI_COMM_WORLD, lerr);
}

static kd_err kd_cli_mmd_(const kd_cli_opts *o, int rank) {
  kd_err err = KD_OK;
  kd_cli_job job;
  void *state = NULL;
  kd_result rule = KD_RESULT_INIT;
  kd_target *t = NULL;
  double mmd = NAN, mmd2 = NAN;
  memset(&job, 0, sizeof job);
  KD_TRY(kd_dist_agreed(MPI_COMM_WORLD, kd_output_read(o->file, &rule, NULL, NULL, NULL)));
  KD_TRY(kd_cli_job_load_(o, 0, &job));
  KD_TRY(job.task->setup(&job.ctx, &state));
  KD_TRY(kd_task_basic_target(job.task, state, &t));
  KD_CHECK(kd_target_dim(t) == rule.d, KD_ERR_INPUT,
           "%s: the rule has dimension %d but the config's target has %d", o->file, rule.d,
           kd_target_dim(t));
  KD_TRY(kd_mmd(t, rule.points, rule.weights, (kd_lidx)rule.n, &mmd, &mmd2));
  if (rank == 0) {
    printf("mmd:        %.17g\n", mmd);
    printf("mmd2:       %.17g\n", mmd2);
    printf("stored:     %.17g\n", rule.mmd);
    if (isfinite(mmd) && isfinite(rule.mmd))
      printf("rel_diff:   %.3e\n", fabs(mmd - rule.mmd) / fmax(fabs(rule.mmd), 1e-300));
    fflush(stdout);
  }
cleanup:
  if (job.task && state) job.task->destroy(&state);
  kd_result_free(&rule);
  kd_config_destroy(&job.cfg);
  return err;
}

int main(int argc, char **argv) {
  kd_err err = KD_OK;
  kd_cli_opts o;
  int rank = 0, size = 1;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    fprintf(stderr, "kdistill: error: MPI_Init failed\n");
    return 2;
  }
  if (MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
      MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
      MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS) {
    fprintf(stderr, "kdistill: error: cannot set up MPI_COMM_WORLD\n");
    MPI_Finalize();
    return 2;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  kd_la_single_thread();
  kd_interrupt_install();
  kd_err_clear();
  err = kd_cli_parse_(argc, argv, &o);
  kd_log_init(MPI_COMM_WORLD, err ? KD_LOG_NORMAL : o.level);
  if (!err && o.help) {
    if (rank == 0) kd_cli_usage_(stdout);
  } else if (!err && o.version) {
    if (rank == 0) printf("kdistill %s\n", KD_VERSION_STRING);
  } else if (!err && !strcmp(o.cmd, "run")) {
    err = kd_cli_run_(&o, rank, size);
  } else if (!err && !strcmp(o.cmd, "validate")) {
    err = kd_cli_validate_(&o, rank);
  } else if (!err && !strcmp(o.cmd, "info")) {
    err = kd_cli_info_(&o, rank);
  } else if (!err && !strcmp(o.cmd, "mmd")) {
    err = kd_cli_mmd_(&o, rank);
  }
  /* one agreed error, one line on rank 0 */
  if (kd_dist_agree(MPI_COMM_WORLD, &err) != KD_OK && err == KD_OK) err = KD_ERR_MPI;
  if (err != KD_OK && rank == 0) {
    const char *msg = kd_err_message();
    if (err == KD_ERR_INTERRUPTED) /* not an error: a checkpoint to resume from (exit 3) */
      fprintf(stderr, "kdistill: %s\n", msg[0] ? msg : kd_err_string(err));
    else
      fprintf(stderr, "kdistill: error: %s\n", msg[0] ? msg : kd_err_string(err));
    fflush(stderr);
  }
  int status = kd_err_exit_status(err);
  MPI_Finalize();
  return status;
}
