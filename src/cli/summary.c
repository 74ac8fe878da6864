/* summary.c - the summary `kdistill run` prints when a run ends (stdout, rank 0; docs/cli.md). */
#include <math.h>
#include <string.h>

#include "cli/cli.h"
#include "io/mmd_text.h"

static double kd_cli_metric_(const kd_result *res, const char *name) {
  double v = NAN;
  if (res) kd_result_get_metric(res, name, &v);
  return v;
}

/* The MMD line of a rule: exact, exact to a bound, estimated with its error, or skipped (the
 * wording `kdistill info` uses too). */
static void kd_cli_mmd_line_(const kd_job_summary *s, FILE *out) {
  char text[256];
  if (s->mmd_method == 0 && isnan(s->mmd)) return;
  kd_output_mmd_text(text, sizeof text, s->mmd_method, s->mmd, s->mmd_se);
  fprintf(out, "mmd:        %s\n", text);
}

/* ctt_study: one row per configuration of /study: CTT's g or the exact test, and with
 * /study/method (a study with baselines, lrctt or actt) the test's name and size (g, n_out,
 * block or r). */
static void kd_cli_study_table_(const kd_result *res, FILE *out) {
  static const char *const names[] = {"ctt", "exact", "subsample_test", "wblock", "lrctt", "actt"};
  const kd_result_dataset *g = kd_result_find(res, "/study/g"),
                          *r = kd_result_find(res, "/study/rejection_rate"),
                          *se = kd_result_find(res, "/study/se"),
                          *t = kd_result_find(res, "/study/mean_seconds"),
                          *rep = kd_result_find(res, "/study/reject"),
                          *me = kd_result_find(res, "/study/method"),
                          *sz = kd_result_find(res, "/study/size");
  if (!g || !r || !se || !t || !g->i64 || !r->f64 || !se->f64 || !t->f64) return;
  if (me && (!me->i64 || !sz || !sz->i64)) me = NULL;
  const double alpha = kd_cli_metric_(res, "alpha");
  fprintf(out, "replicates: %lld", rep && rep->rank == 2 ? (long long)rep->dims[0] : -1LL);
  if (!isnan(alpha)) fprintf(out, " (level alpha = %g)", alpha);
  fprintf(out, me ? "\n  test             size   rejection rate      s per test\n"
                  : "\n  test      g   rejection rate      s per test\n");
  for (int64_t c = 0; c < g->dims[0]; c++) {
    char gs[24] = "-";
    if (me) {
      const int64_t m = me->i64[c] >= 0 && me->i64[c] < 6 ? me->i64[c] : 1;
      if (m != 1) snprintf(gs, sizeof gs, "%lld", (long long)sz->i64[c]);
      fprintf(out, "  %-14s %6s   %.4f +- %.4f   %.5f\n", names[m], gs, r->f64[c], se->f64[c],
              t->f64[c]);
      continue;
    }
    if (g->i64[c] >= 0) snprintf(gs, sizeof gs, "%lld", (long long)g->i64[c]);
    fprintf(out, "  %-5s %4s   %.4f +- %.4f   %.5f\n", g->i64[c] < 0 ? "exact" : "ctt", gs,
            r->f64[c], se->f64[c], t->f64[c]);
  }
}

void kd_cli_print_summary(const kd_job_summary *s, const kd_result *res, FILE *out) {
  const int ctt = !strcmp(s->task, "ctt");
  fprintf(out, "task:       %s\n", s->task);
  fprintf(out, "algorithm:  %s\n", s->algorithm);
  fprintf(out, "kernel:     %s\n", s->kernel);
  if (ctt) {
    const double p = kd_cli_metric_(res, "p_value"), rej = kd_cli_metric_(res, "reject");
    fprintf(out, "statistic:  %.6e (MMD between the two samples' coresets%s)\n",
            kd_cli_metric_(res, "statistic"), isnan(p) ? " at the middle length scale" : "");
    if (isnan(p)) { /* actt: a decision at level alpha over its length scales, no p-value */
      fprintf(out, "p_value:    none (an aggregated test decides at level alpha)\n");
      fprintf(out, "decision:   %s\n",
              rej == 1.0 ? "reject: the samples differ (at some length scale)"
                         : "no rejection: no evidence that the samples differ");
    } else {
      fprintf(out, "p_value:    %.6g\n", p);
      fprintf(out, "decision:   %s\n",
              rej == 1.0 ? "reject: the samples differ (p <= alpha)"
                         : "no rejection: no evidence that the samples differ (p > alpha)");
    }
  } else if (s->n > 0) {
    char nin[32] = "-";
    const double dropped = kd_cli_metric_(res, "zero_weight_nodes_dropped");
    if (s->n_in > 0) snprintf(nin, sizeof nin, "%lld", (long long)s->n_in);
    fprintf(out, "points:     %s -> %lld (d = %d)", nin, (long long)s->n, s->d);
    if (dropped > 0) fprintf(out, "; %.0f nodes of weight 0 left out", dropped);
    fprintf(out, "\n");
    kd_cli_mmd_line_(s, out);
  } else if (!strcmp(s->task, "ctt_study")) {
    kd_cli_study_table_(res, out);
  }
  if (s->kernel_evals > 0)
    fprintf(out, "seconds:    %.3f (%llu kernel evaluations, %d rank%s)\n", s->seconds,
            (unsigned long long)s->kernel_evals, s->n_ranks, s->n_ranks == 1 ? "" : "s");
  else /* e.g. ctt_study, which does not count them */
    fprintf(out, "seconds:    %.3f (%d rank%s)\n", s->seconds, s->n_ranks,
            s->n_ranks == 1 ? "" : "s");
  if (s->stop_reason == KD_STOP_COMPLETE)
    fprintf(out, "stopped:    complete (the output size is fixed by the algorithm)\n");
  else if (s->stop_reason > 0)
    fprintf(out, "stopped:    %s (after %lld iterations)\n", kd_stop_reason_name(s->stop_reason),
            (long long)s->iterations);
  /* after a resume, s->seconds also counts the runs before it: the line shows this run's part,
   * which the total contains, and the sum beside it */
  const double before = kd_cli_metric_(res, "seconds_resumed");
  char algo[96];
  if (before >= 0.0)
    snprintf(algo, sizeof algo, "%.3f s (%.3f s with the run before the resume)",
             s->seconds - before, s->seconds);
  else
    snprintf(algo, sizeof algo, "%.3f s", s->seconds);
  fprintf(out,
          "time:       load %.3f s, algorithm %s, evaluation %.3f s, write %.3f s; total %.3f s\n",
          s->seconds_load, algo, s->seconds_evaluation, s->seconds_write, s->seconds_total);
  fprintf(out, "output:     %s\n", s->output);
  fflush(out);
}
