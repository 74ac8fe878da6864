/* main.c - the kdistill command line: the only file that calls MPI_Init / MPI_Finalize, parses
 * argv and chooses the exit status (0 ok, 1 bad input or config, 2 environment, 3 interrupted).
 *
 *   kdistill run CONFIG [--set key.path=value]... [--output FILE] [--resume CKPT]
 *   kdistill validate CONFIG [--set ...]... [--print-defaults]
 *   kdistill info FILE.h5
 *   kdistill mmd FILE.h5 CONFIG [--set ...]...  |  kdistill mmd FILE.h5 DATA [--dataset NAME]
 *   kdistill thin DATA ... | ctt X Y ... | algorithms [TASK] | --help | --version
 *
 * Each command is one library entry point (kd_job.h) on the context main creates over
 * MPI_COMM_WORLD. Errors: every rank unwinds to here with the agreed error, rank 0 prints exactly
 * one line "kdistill: error: <message>", every rank calls MPI_Finalize and exits non-zero. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "job/job_registry.h"
#include "io/mmd_text.h"
#include "la/la_impl.h"
#include "task/task_impl.h"
#include "kdistill/author.h"

static void kd_cli_usage_(FILE *out) {
  char tasks[1024];
  kd_job_task_choices(tasks, sizeof tasks);
  fprintf(out,
          "kdistill %s - compress distributions into coresets / quadrature rules with small MMD\n"
          "\n"
          "usage (run under mpirun / srun for more than one rank):\n"
          "  kdistill run CONFIG [--set key.path=value]... [--output FILE] [--resume CKPT]\n"
          "               [--quiet|--verbose]\n"
          "  kdistill validate CONFIG [--set key.path=value]... [--print-defaults]\n"
          "  kdistill info FILE.h5\n"
          "  kdistill mmd FILE.h5 CONFIG [--set key.path=value]...\n"
          "  kdistill mmd FILE.h5 DATA [--dataset NAME]   the rule against a data file, with the\n"
          "               kernel the run used\n"
          "  kdistill thin DATA [--n-out N] [--dataset NAME] [-o OUT.h5] [--set ...]\n"
          "  kdistill ctt X Y [--dataset NAME] [-o OUT.h5] [--set ...]\n"
          "  kdistill algorithms [TASK]    what each algorithm is for (docs/guide.md)\n"
          "  kdistill --help | --version\n"
          "\n"
          "tasks: %s\nalgorithms:\n",
          KD_VERSION_STRING, tasks);
  for (int i = 0; kd_algo_at(i); i++)
    fprintf(out, "  %-5s %-22s %s\n", kd_algo_at(i)->task, kd_algo_at(i)->name,
            kd_algo_at(i)->summary);
  fprintf(out,
          "\nexit status: 0 success, 1 bad input or configuration, 2 environment (MPI, HDF5, I/O,"
          "\nmemory), 3 interrupted (SIGTERM/SIGUSR1). See docs/config.md for every key.\n");
}

/* Edit distance (insertions, deletions, substitutions) between a and the first 31 characters of
 * b, for "did you mean"; strings past 31 characters count as far. */
static int kd_cli_distance_(const char *a, const char *b) {
  int row[32], la = (int)strlen(a), lb = (int)strlen(b);
  if (la > 31 || lb > 31) return 99;
  for (int j = 0; j <= lb; j++) row[j] = j;
  for (int i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = i;
    for (int j = 1; j <= lb; j++) {
      const int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

/* An unknown option, with the nearest known one when it is at most two edits away ("--nout"). */
static kd_err kd_cli_unknown_option_(const char *a) {
  static const char *const known[] = {"--help",           "--version", "--quiet",  "--verbose",
                                      "--print-defaults", "--set",     "--output", "--n-out",
                                      "--dataset",        "--resume"};
  char name[64];
  const char *best = NULL;
  int d = 3;
  snprintf(name, sizeof name, "%s", a);
  char *eq = strchr(name, '=');
  if (eq) *eq = '\0';
  for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
    const int e = kd_cli_distance_(name, known[k]);
    if (e < d) d = e, best = known[k];
  }
  if (best)
    return kd_err_set(KD_ERR_ARG, __FILE__, __LINE__,
                      "unknown option '%s'; did you mean '%s'? (see kdistill --help)", a, best);
  return kd_err_set(KD_ERR_ARG, __FILE__, __LINE__, "unknown option '%s' (see kdistill --help)", a);
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
    } else if (!strcmp(a, "--n-out") || !strncmp(a, "--n-out=", 8)) {
      const char *v = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);
      char *end = NULL;
      o->n_out = v ? strtoll(v, &end, 10) : 0;
      KD_CHECK(v && end && !*end && o->n_out >= 1, KD_ERR_ARG,
               "--n-out needs a positive number of points");
    } else if (!strcmp(a, "--dataset") || !strncmp(a, "--dataset=", 10)) {
      const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
      KD_CHECK(v && v[0], KD_ERR_ARG, "--dataset needs a dataset (HDF5) or array (npz) name");
      o->dataset = v;
    } else if (!strcmp(a, "--resume") || !strncmp(a, "--resume=", 9)) {
      const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
      KD_CHECK(v && v[0], KD_ERR_ARG, "--resume needs a checkpoint file");
      o->resume = v;
    } else if (a[0] == '-' && a[1] != '\0') {
      KD_TRY(kd_cli_unknown_option_(a));
    } else {
      KD_CHECK(npos < 3, KD_ERR_ARG, "unexpected argument '%s' (see kdistill --help)", a);
      pos[npos++] = a;
    }
  }
  if (o->help || o->version) goto cleanup;
  KD_CHECK(npos >= 1, KD_ERR_ARG,
           "no command given (run, validate, info, mmd, thin, ctt, algorithms; see --help)");
  o->cmd = pos[0];
  if (!strcmp(o->cmd, "algorithms")) {
    KD_CHECK(npos <= 2, KD_ERR_ARG, "usage: kdistill algorithms [TASK]");
    o->task = pos[1];
  } else if (!strcmp(o->cmd, "thin")) {
    KD_CHECK(npos == 2, KD_ERR_ARG, "usage: kdistill thin DATA [--n-out N] [-o OUT.h5]");
    o->file = pos[1];
  } else if (!strcmp(o->cmd, "ctt")) {
    KD_CHECK(npos == 3, KD_ERR_ARG, "usage: kdistill ctt X Y [-o OUT.h5]");
    o->file = pos[1];
    o->file2 = pos[2];
  } else if (!strcmp(o->cmd, "run") || !strcmp(o->cmd, "validate")) {
    KD_CHECK(npos == 2, KD_ERR_ARG, "usage: kdistill %s CONFIG", o->cmd);
    o->config = pos[1];
  } else if (!strcmp(o->cmd, "info")) {
    KD_CHECK(npos == 2, KD_ERR_ARG, "usage: kdistill info FILE.h5");
    o->file = pos[1];
  } else if (!strcmp(o->cmd, "mmd")) {
    KD_CHECK(npos == 3, KD_ERR_ARG, "usage: kdistill mmd FILE.h5 CONFIG|DATA");
    o->file = pos[1];
    o->config = pos[2];
  } else {
    KD_FAIL(KD_ERR_ARG,
            "unknown command '%s' (run, validate, info, mmd, thin, ctt, algorithms; see --help)",
            o->cmd);
  }
  const int quick = !strcmp(o->cmd, "thin") || !strcmp(o->cmd, "ctt");
  KD_CHECK(!o->output || !strcmp(o->cmd, "run") || quick, KD_ERR_ARG,
           "--output applies to run, thin and ctt only");
  KD_CHECK(!o->n_out || !strcmp(o->cmd, "thin"), KD_ERR_ARG, "--n-out applies to 'thin' only");
  const int mmd_data = !strcmp(o->cmd, "mmd") && kd_cli_is_data_file(o->config);
  KD_CHECK(!o->dataset || quick || mmd_data, KD_ERR_ARG,
           "--dataset applies to thin, ctt and mmd with a data file only");
  KD_CHECK(!o->n_sets || !mmd_data, KD_ERR_ARG,
           "--set needs a CONFIG (mmd with a data file uses the output's own kernel)");
  KD_CHECK(!o->resume || !strcmp(o->cmd, "run"), KD_ERR_ARG, "--resume applies to 'run' only");
  KD_CHECK(!o->print_defaults || !strcmp(o->cmd, "validate"), KD_ERR_ARG,
           "--print-defaults applies to 'validate' only");
  KD_CHECK(!o->n_sets || o->config || quick, KD_ERR_ARG, "--set needs a command with a CONFIG");
cleanup:
  return err;
}

static void kd_cli_job_opts_(const kd_cli_opts *o, kd_job_opts *jo) {
  memset(jo, 0, sizeof *jo);
  jo->config = o->config;
  jo->sets = o->sets;
  jo->n_sets = o->n_sets;
  jo->output = o->output;
  jo->resume = o->resume;
}

static kd_err kd_cli_run_(kd_ctx *ctx, const kd_cli_opts *o) {
  kd_job_opts jo;
  kd_job_summary s;
  kd_result res = KD_RESULT_INIT;
  char *yaml = NULL;
  kd_cli_job_opts_(o, &jo);
  kd_err err = KD_OK;
  if (!o->config) { /* a one-line command: the config it stands for */
    err = kd_cli_quick_config(o, &yaml);
    jo.config = KD_JOB_COMMAND_LINE;
    jo.config_text = yaml;
    if (!err && o->level == KD_LOG_VERBOSE && kd_ctx_rank(ctx) == 0)
      fprintf(stderr, "kdistill: the config of this command:\n%s", yaml);
  }
  if (!err) err = kd_job_run(ctx, &jo, &s, &res);
  if (err == KD_OK && kd_ctx_rank(ctx) == 0 && o->level != KD_LOG_QUIET)
    kd_cli_print_summary(&s, &res, stdout);
  kd_result_free(&res);
  free(yaml);
  return err;
}

static kd_err kd_cli_validate_(kd_ctx *ctx, const kd_cli_opts *o) {
  kd_job_opts jo;
  char *yaml = NULL, task[64] = "";
  kd_cli_job_opts_(o, &jo);
  kd_err err = kd_job_validate(ctx, &jo, &yaml, task, sizeof task);
  if (err == KD_OK && kd_ctx_rank(ctx) == 0) {
    if (o->print_defaults)
      fputs(yaml, stdout);
    else if (o->level != KD_LOG_QUIET)
      printf("%s: valid (task %s)\n", o->config, task);
    fflush(stdout);
  }
  free(yaml);
  return err;
}

static kd_err kd_cli_mmd_(kd_ctx *ctx, const kd_cli_opts *o) {
  kd_job_opts jo;
  double mmd = NAN, mmd2 = NAN, stored = NAN, mmd_err = 0.0;
  int method = 0;
  char how[256];
  kd_cli_job_opts_(o, &jo);
  kd_err err = KD_OK;
  if (kd_cli_is_data_file(o->config)) { /* against a data file, with the output's own kernel */
    char sec[5000];
    err = kd_cli_data_section(o->config, o->dataset, sec, sizeof sec);
    if (!err)
      err = kd_job_mmd_file(ctx, o->file, NULL, sec, &mmd, &mmd2, &stored, &method, &mmd_err);
  } else {
    err = kd_job_mmd_file(ctx, o->file, &jo, NULL, &mmd, &mmd2, &stored, &method, &mmd_err);
  }
  if (err == KD_OK && kd_ctx_rank(ctx) == 0) {
    /* the value in full precision (scripts compare it), then what it is, as every view says */
    kd_output_mmd_text(how, sizeof how, method, mmd, mmd_err);
    const char *tail = strchr(how, ' ');
    printf("mmd:        %.17g%s\n", mmd, tail ? tail : "");
    printf("mmd2:       %.17g\n", mmd2);
    printf("stored:     %.17g\n", stored);
    if (isfinite(mmd) && isfinite(stored))
      printf("rel_diff:   %.3e\n", fabs(mmd - stored) / fmax(fabs(stored), 1e-300));
    fflush(stdout);
  }
  return err;
}

/* `kdistill --version`: the version on the first line (what scripts parse), then the build
 * description a site ticket asks for (kd_build_info). */
static void kd_cli_version_(FILE *out) {
  char info[4096];
  kd_build_info(info, sizeof info);
  fprintf(out, "kdistill %s\n%s", KD_VERSION_STRING, info);
}

/* The bound from a signal to the end of the process (kd_ctx_stop_guard): KDISTILL_SIGNAL_GRACE
 * seconds, default 1; 0 turns it off (a run then stops only at its next safe point or poll). */
static kd_err kd_cli_stop_guard_(kd_ctx *ctx) {
  kd_err err = KD_OK;
  const char *env = getenv("KDISTILL_SIGNAL_GRACE");
  double grace = 1.0;
  if (env && env[0]) {
    char *end = NULL;
    grace = strtod(env, &end);
    KD_CHECK(end && !*end && grace >= 0.0 && grace <= 86400.0, KD_ERR_CONFIG,
             "KDISTILL_SIGNAL_GRACE = '%s' is not a number of seconds in [0, 86400]", env);
  }
  KD_TRY(kd_ctx_stop_guard(ctx, grace));
cleanup:
  return err;
}

/* One BLAS thread, set before OpenBLAS starts any. OpenBLAS starts its worker threads while the
 * program is loaded, before main runs, and reads OPENBLAS_NUM_THREADS only then; setting one thread
 * later (kd_lib_quiet) stops the workers from being used but not from existing. Under a small
 * `ulimit -v` a worker then retries its buffer's mmap forever and exit waits for it, so every
 * command hung, SIGTERM included. So when the user has not chosen, main sets the variable and
 * executes itself once more, before MPI_Init (the same process id, so a launcher's bookkeeping
 * holds). The computation is the same one BLAS thread either way. Should the exec fail, the
 * variable is taken back and the run goes on as before. */
static void kd_cli_one_blas_thread_(char **argv) {
  if (getenv("OPENBLAS_NUM_THREADS")) return;
  if (setenv("OPENBLAS_NUM_THREADS", "1", 1) != 0) return;
  execv("/proc/self/exe", argv);
  (void)unsetenv("OPENBLAS_NUM_THREADS");
}

/* A command that computes refuses, on every rank, an address-space limit that leaves no room for
 * the BLAS library's buffer (kd_la_blas_room) instead of hanging at its first BLAS call. */
static kd_err kd_cli_blas_room_(kd_ctx *ctx, const kd_cli_opts *o) {
  char msg[320];
  if (o->help || o->version || !o->cmd ||
      !(!strcmp(o->cmd, "run") || !strcmp(o->cmd, "thin") || !strcmp(o->cmd, "ctt") ||
        !strcmp(o->cmd, "mmd")))
    return KD_OK;
  kd_err err = kd_la_blas_room(msg, sizeof msg);
  return kd_ctx_agree(ctx, err, msg);
}

/* Process setup around one context on MPI_COMM_WORLD: the command's error comes back agreed from
 * the library entry point (argv errors are the same on every rank), rank 0 prints one line. */
int main(int argc, char **argv) {
  kd_err err = KD_OK;
  kd_cli_opts o;
  kd_ctx *ctx = NULL;
  int rank = 0;
  /* whole lines on stderr: each line reaches it in one write, so under mpirun the ranks' stdout
   * cannot land inside a log or error line (an unbuffered stderr writes a line in pieces) */
  setvbuf(stderr, NULL, _IOLBF, BUFSIZ);
  kd_cli_one_blas_thread_(argv);
  /* Started without a launcher, Open MPI 4.1 forks a helper daemon for the process; it removes
   * the session directory only after this process has exited, so an mpirun started right after
   * (`kdistill validate c.yaml && mpirun ... kdistill run c.yaml`) can find that directory gone
   * and fail in MPI_Init (rarely: the removal must fall between that mpirun's own steps).
   * kdistill never spawns processes and needs no such daemon; without it a single-process
   * command also starts about 0.1 s sooner. Only a process started without a launcher reads the
   * setting; a value the user set is kept. Should setenv fail (no memory), the daemon is simply
   * forked as before, so its result is not needed. */
  (void)setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    fprintf(stderr, "kdistill: error: MPI_Init failed\n");
    return 2;
  }
  if (MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
      MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
      kd_ctx_create(MPI_COMM_WORLD, &ctx) != KD_OK) {
    fprintf(stderr, "kdistill: error: cannot set up MPI_COMM_WORLD\n");
    MPI_Finalize();
    return 2;
  }
  kd_lib_quiet(); /* HDF5 prints no errors of its own, OpenBLAS runs one thread */
  kd_ctx_listen_signals(ctx, 1);
  kd_ctx *prev = kd_ctx_bind(ctx); /* parse errors are recorded on it */
  err = kd_cli_parse_(argc, argv, &o);
  if (!err) err = kd_cli_stop_guard_(ctx);
  if (!err) err = kd_cli_blas_room_(ctx, &o);
  kd_ctx_set_log_level(ctx, err ? KD_LOG_NORMAL : o.level);
  if (!err && o.help) {
    if (rank == 0) kd_cli_usage_(stdout);
  } else if (!err && o.version) {
    if (rank == 0) kd_cli_version_(stdout);
  } else if (!err && (!strcmp(o.cmd, "run") || !strcmp(o.cmd, "thin") || !strcmp(o.cmd, "ctt"))) {
    err = kd_cli_run_(ctx, &o);
  } else if (!err && !strcmp(o.cmd, "algorithms")) {
    int e = rank == 0 ? (int)kd_cli_algorithms(o.task, stdout) : 0;
    err = MPI_Bcast(&e, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? (kd_err)e : KD_ERR_MPI;
  } else if (!err && !strcmp(o.cmd, "validate")) {
    err = kd_cli_validate_(ctx, &o);
  } else if (!err && !strcmp(o.cmd, "info")) {
    err = kd_job_info(ctx, o.file, stdout);
  } else if (!err && !strcmp(o.cmd, "mmd")) {
    err = kd_cli_mmd_(ctx, &o);
  }
  if (err != KD_OK && rank == 0) {
    const char *msg = kd_ctx_message(ctx);
    if (err == KD_ERR_INTERRUPTED) /* not an error: a checkpoint to resume from (exit 3) */
      fprintf(stderr, "kdistill: %s\n", msg[0] ? msg : kd_err_string(err));
    else
      fprintf(stderr, "kdistill: error: %s\n", msg[0] ? msg : kd_err_string(err));
    fflush(stderr);
  }
  int status = kd_err_exit_status(err);
  kd_ctx_unbind(prev);
  kd_ctx_destroy(&ctx);
  MPI_Finalize();
  return status;
}
