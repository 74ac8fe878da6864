/* quick.c - the one-line commands of the command line (docs/guide.md):
 *   kdistill algorithms [TASK]                  what each algorithm is for, the default marked
 *   kdistill thin DATA [--n-out N] [-o OUT]     thin a data file (csv, npy, npz, hdf5)
 *   kdistill ctt X Y [-o OUT]                   two-sample test of two data files
 * Each writes the config it stands for (printed with --verbose, stored in the output's
 * config_yaml) and runs it through the same library entry points as `kdistill run`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* what to use each algorithm for, in plain words (the defaults first within a task) */
static const char *const kd_cli_advice_[][2] = {
    {"kt_compress", "equal-weight coreset of a large sample, the lowest MMD per point (default)"},
    {"kh_compress", "as kt_compress without the refine pass: faster, somewhat higher MMD"},
    {"gs_compress", "Gram-Schmidt halving inside Compress: low MMD, cubic per bin (small bins)"},
    {"rkh", "repeated kernel halving of the whole input: simple, O(n^2) kernel evaluations"},
    {"kh", "one halving: exactly half of the rows"},
    {"lkh", "linear-kernel halving: matches means in O(n d) (e.g. gradients, reordering)"},
    {"kh_refine", "repeated halving plus the refine pass"},
    {"gs_thin", "Gram-Schmidt thinning of a small input (cubic time)"},
    {"uniform", "a seeded random subsample: the baseline to compare against"},
    {"stein_thin", "score-based: greedy Stein thinning of an MCMC chain (kernel: stein)"},
    {"skt", "score-based: debias a biased chain, then thin (kernel: stein)"},
    {"sr", "score-based: debias, then recombination to weighted rows (kernel: stein)"},
    {"rpcholesky", "weighted rows by randomly pivoted Cholesky; any kernel"},
    {"bpcg", "sparse weighted rule from candidates, fast and accurate (default)"},
    {"bpcg_lazy", "BPCG with lazy oracle calls: cheaper iterations on big candidate sets"},
    {"fcfw", "weights re-optimised every step: lowest MMD per atom, slower"},
    {"fw_eq", "classic kernel herding: equal weights"},
    {"fw_linesearch", "kernel herding with line-search weights"},
    {"afw", "away-step Frank-Wolfe (drops atoms)"},
    {"pfw", "pairwise Frank-Wolfe (swaps weight between atoms)"},
    {"pmp", "accelerated herding (positive matching pursuit): fast early MMD decay"},
    {"gcos", "accelerated herding (greedy cos): fast early MMD decay"},
    {"fc_pmp", "accelerated herding with fully corrective weights"},
    {"fc_gcos", "accelerated herding with fully corrective weights"},
    {"nystrom_recombination", "convex quadrature rule with n nodes for any kernel (default)"},
    {"mercer_recombination", "convex quadrature on the torus with the Sobolev kernel"},
    {"monte_carlo", "iid sample of the target: the baseline"},
    {"ctt", "two-sample test on compressed samples: near-exact power, much faster (default)"},
    {"ctt_exact", "the exact quadratic-time permutation test (reference)"},
};

static const char *kd_cli_advice_for_(const char *name) {
  for (size_t i = 0; i < sizeof kd_cli_advice_ / sizeof kd_cli_advice_[0]; i++)
    if (!strcmp(kd_cli_advice_[i][0], name)) return kd_cli_advice_[i][1];
  return NULL;
}

/* The capabilities of an algorithm (kd_algo_desc.flags) as " [lazy data, resumable, ...]". */
static const char *kd_cli_caps_(const kd_algo_desc *a, char *buf, size_t len) {
  static const struct {
    unsigned flag;
    const char *text;
  } caps[] = {{KD_ALGO_LAZY_INPUT, "lazy data"},
              {KD_ALGO_RESUMABLE, "resumable"},
              {KD_ALGO_WEIGHTED, "weighted"},
              {KD_ALGO_SCORE, "Stein kernel"}};
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
    if ((a->flags & caps[i].flag) && used + 2 < len) {
      int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : " [", caps[i].text);
      used = w > 0 && (size_t)w < len - used ? used + (size_t)w : len - 1;
    }
  if (used && used + 2 < len) snprintf(buf + used, len - used, "]");
  return buf;
}

kd_err kd_cli_algorithms(const char *task, FILE *out) {
  kd_err err = KD_OK;
  static const char *const tasks[] = {"thin", "herd", "quad", "ctt"};
  int shown = 0;
  for (size_t t = 0; t < sizeof tasks / sizeof tasks[0]; t++) {
    if (task && strcmp(task, tasks[t])) continue;
    shown = 1;
    fprintf(out, "%s%s:\n", t && !task ? "\n" : "", tasks[t]);
    for (int i = 0; kd_algo_at(i); i++) {
      const kd_algo_desc *a = kd_algo_at(i);
      if (strcmp(a->task, tasks[t])) continue;
      const char *why = kd_cli_advice_for_(a->name);
      char caps[96];
      fprintf(out, "  %-22s %s%s\n", a->name, why ? why : a->summary,
              kd_cli_caps_(a, caps, sizeof caps));
    }
  }
  KD_CHECK(shown, KD_ERR_ARG, "algorithms: unknown task '%s' (thin, herd, quad, ctt)", task);
cleanup:
  return err;
}

/* The point-set type of a data file from its extension, or NULL. */
static const char *kd_cli_type_of_(const char *path) {
  static const char *const map[][2] = {{".csv", "csv"}, {".txt", "csv"},   {".tsv", "csv"},
                                       {".dat", "csv"}, {".npy", "npy"},   {".npz", "npz"},
                                       {".h5", "hdf5"}, {".hdf5", "hdf5"}, {".hdf", "hdf5"}};
  const char *dot = strrchr(path, '.');
  for (size_t i = 0; dot && i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(dot, map[i][0])) return map[i][1];
  return NULL;
}

int kd_cli_is_data_file(const char *path) { return kd_cli_type_of_(path) != NULL; }

/* The point-set type of a data file from its extension (csv, txt, tsv, npy, npz, h5, hdf5). */
static kd_err kd_cli_file_type_(const char *path, const char **type) {
  kd_err err = KD_OK;
  *type = kd_cli_type_of_(path);
  KD_CHECK(*type, KD_ERR_ARG,
           "%s: cannot tell the format from the file name (.csv, .txt, .tsv, .npy, .npz, .h5); "
           "write a config with data.type instead",
           path);
cleanup:
  return err;
}

/* "{type: T, path: 'P'[, dataset: 'D']}" for a data file (single quotes doubled for YAML). */
kd_err kd_cli_data_section(const char *path, const char *dataset, char *buf, size_t len) {
  kd_err err = KD_OK;
  const char *type = NULL;
  char q[4096], dq[600] = "";
  KD_TRY(kd_cli_file_type_(path, &type));
  size_t o = 0;
  for (const char *p = path; *p && o + 3 < sizeof q; p++) {
    if (*p == '\'') q[o++] = '\'';
    q[o++] = *p;
  }
  q[o] = '\0';
  KD_CHECK(o + 3 < sizeof q, KD_ERR_ARG, "%s: path too long", path);
  if (dataset && (!strcmp(type, "hdf5") || !strcmp(type, "npz")))
    snprintf(dq, sizeof dq, ", dataset: '%s'", dataset);
  snprintf(buf, len, "{type: %s, path: '%s'%s}", type, q, dq);
cleanup:
  return err;
}

kd_err kd_cli_quick_config(const kd_cli_opts *o, char **yaml) {
  kd_err err = KD_OK;
  char a[5000], b[5000];
  const char *outp = ""; /* -o is set as one value by the job (kd_job_opts.output), never as text */
  const size_t len = 16384;
  *yaml = NULL;
  KD_ALLOC(*yaml, len);
  if (!strcmp(o->cmd, "thin")) {
    KD_TRY(kd_cli_data_section(o->file, o->dataset, a, sizeof a));
    char nout[64] = "";
    if (o->n_out > 0)
      snprintf(nout, sizeof nout, "algorithm: {n_out: %lld}\n", (long long)o->n_out);
    snprintf(*yaml, len, "task: thin\ndata: %s\n%s%s", a, nout, outp);
  } else {
    KD_TRY(kd_cli_data_section(o->file, o->dataset, a, sizeof a));
    KD_TRY(kd_cli_data_section(o->file2, o->dataset, b, sizeof b));
    snprintf(*yaml, len, "task: ctt\nx: %s\ny: %s\n%s", a, b, outp);
  }
cleanup:
  if (err) {
    free(*yaml);
    *yaml = NULL;
  }
  return err;
}
