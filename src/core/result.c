/* result.c - the replicated result of an algorithm: coreset, trace, metrics, extra datasets. */
#include <stdlib.h>
#include <string.h>

#include "kdistill/author/kd_algo.h"

kd_err kd_result_alloc(kd_result *r, kd_gidx n, int d) {
  kd_err err = KD_OK;
  KD_CHECK(n >= 0 && d >= 1, KD_ERR_INTERNAL, "kd_result_alloc: bad size %lld x %d", (long long)n,
           d);
  free(r->points);
  free(r->weights);
  free(r->indices);
  r->points = NULL;
  r->weights = NULL;
  r->indices = NULL;
  r->n = n;
  r->d = d;
  KD_ALLOC(r->points, (size_t)n * (size_t)d);
  KD_ALLOC(r->weights, n);
  KD_ALLOC(r->indices, n);
  for (kd_gidx i = 0; i < n; i++) {
    r->weights[i] = 1.0 / (double)n;
    r->indices[i] = -1;
  }
cleanup:
  return err;
}

kd_err kd_result_trace_push(kd_result *r, int64_t iter, int64_t atoms, double mmd, double seconds) {
  kd_err err = KD_OK;
  if (r->n_trace == r->cap_trace) {
    int64_t cap = r->cap_trace ? 2 * r->cap_trace : 64;
    int64_t *a = realloc(r->trace_iter, (size_t)cap * sizeof *a);
    if (a) r->trace_iter = a;
    int64_t *b = realloc(r->trace_atoms, (size_t)cap * sizeof *b);
    if (b) r->trace_atoms = b;
    double *c = realloc(r->trace_mmd, (size_t)cap * sizeof *c);
    if (c) r->trace_mmd = c;
    double *e = realloc(r->trace_seconds, (size_t)cap * sizeof *e);
    if (e) r->trace_seconds = e;
    KD_CHECK(a && b && c && e, KD_ERR_MEM, "cannot grow the trace to %lld rows", (long long)cap);
    r->cap_trace = cap;
  }
  r->trace_iter[r->n_trace] = iter;
  r->trace_atoms[r->n_trace] = atoms;
  r->trace_mmd[r->n_trace] = mmd;
  r->trace_seconds[r->n_trace] = seconds;
  r->n_trace++;
cleanup:
  return err;
}

static kd_err kd_result_put_metric_(kd_result *r, const char *name, double value, int is_count) {
  kd_err err = KD_OK;
  for (int i = 0; i < r->n_metrics; i++)
    if (strcmp(r->metrics[i].name, name) == 0) {
      r->metrics[i].value = value;
      r->metrics[i].is_count = is_count;
      return KD_OK;
    }
  kd_result_metric *m = realloc(r->metrics, (size_t)(r->n_metrics + 1) * sizeof *m);
  KD_CHECK(m, KD_ERR_MEM, "out of memory");
  r->metrics = m;
  size_t len = strlen(name) + 1;
  char *copy = malloc(len);
  KD_CHECK(copy, KD_ERR_MEM, "out of memory");
  memcpy(copy, name, len);
  m[r->n_metrics].name = copy;
  m[r->n_metrics].value = value;
  m[r->n_metrics].is_count = is_count;
  r->n_metrics++;
cleanup:
  return err;
}

kd_err kd_result_set_metric(kd_result *r, const char *name, double value) {
  return kd_result_put_metric_(r, name, value, 0);
}

kd_err kd_result_set_count(kd_result *r, const char *name, int64_t v) {
  return kd_result_put_metric_(r, name, (double)v, 1);
}

int kd_result_get_metric(const kd_result *r, const char *name, double *value) {
  for (int i = 0; i < r->n_metrics; i++)
    if (strcmp(r->metrics[i].name, name) == 0) {
      if (value) *value = r->metrics[i].value;
      return 1;
    }
  return 0;
}

static kd_err kd_result_add_(kd_result *r, const char *path, int is_int, int rank,
                             const int64_t *dims, const void *data) {
  kd_err err = KD_OK;
  KD_CHECK(rank >= 0 && rank <= 2, KD_ERR_INTERNAL, "dataset %s: rank %d unsupported", path, rank);
  int64_t count = 1;
  for (int i = 0; i < rank; i++) count *= dims[i];
  kd_result_dataset *ds = realloc(r->datasets, (size_t)(r->n_datasets + 1) * sizeof *ds);
  KD_CHECK(ds, KD_ERR_MEM, "out of memory");
  r->datasets = ds;
  kd_result_dataset *x = &ds[r->n_datasets];
  memset(x, 0, sizeof *x);
  size_t len = strlen(path) + 1;
  x->path = malloc(len);
  KD_CHECK(x->path, KD_ERR_MEM, "out of memory");
  memcpy(x->path, path, len);
  x->is_int = is_int;
  x->rank = rank;
  for (int i = 0; i < rank; i++) x->dims[i] = dims[i];
  size_t bytes = (size_t)(count ? count : 1) * 8;
  void *copy = malloc(bytes);
  if (!copy) {
    free(x->path);
    KD_FAIL(KD_ERR_MEM, "cannot allocate dataset %s", path);
  }
  if (count) memcpy(copy, data, (size_t)count * 8);
  if (is_int)
    x->i64 = copy;
  else
    x->f64 = copy;
  r->n_datasets++;
cleanup:
  return err;
}

kd_err kd_result_add_f64(kd_result *r, const char *path, int rank, const int64_t *dims,
                         const double *data) {
  return kd_result_add_(r, path, 0, rank, dims, data);
}

kd_err kd_result_add_i64(kd_result *r, const char *path, int rank, const int64_t *dims,
                         const int64_t *data) {
  return kd_result_add_(r, path, 1, rank, dims, data);
}

const kd_result_dataset *kd_result_find(const kd_result *r, const char *path) {
  for (int i = 0; i < r->n_datasets; i++)
    if (strcmp(r->datasets[i].path, path) == 0) return &r->datasets[i];
  return NULL;
}

void kd_result_free(kd_result *r) {
  if (!r) return;
  free(r->points);
  free(r->weights);
  free(r->indices);
  free(r->trace_iter);
  free(r->trace_atoms);
  free(r->trace_mmd);
  free(r->trace_seconds);
  for (int i = 0; i < r->n_metrics; i++) free(r->metrics[i].name);
  free(r->metrics);
  for (int i = 0; i < r->n_datasets; i++) {
    free(r->datasets[i].path);
    free(r->datasets[i].f64);
    free(r->datasets[i].i64);
  }
  free(r->datasets);
  memset(r, 0, sizeof *r);
}

const char *kd_stop_reason_name(int reason) {
  static const char *const names[] = {"none",    "max_iter",   "max_atoms", "tol_mmd",
                                      "tol_gap", "no_descent", "complete"};
  return reason >= 0 && reason < (int)(sizeof names / sizeof names[0]) ? names[reason] : "none";
}

kd_err kd_result_drop_zero_weights(kd_result *r, kd_gidx *dropped) {
  kd_err err = KD_OK;
  const kd_gidx n = r->n;
  const int d = r->d;
  kd_gidx m = 0;
  *dropped = 0;
  for (kd_gidx i = 0; i < n; i++) m += r->weights[i] != 0.0;
  if (m == n || m == 0) return KD_OK; /* nothing to drop, or nothing would be left */
  /* per-point datasets under /coreset/ move with their points */
  for (int q = 0; q < r->n_datasets; q++) {
    kd_result_dataset *x = &r->datasets[q];
    if (strncmp(x->path, "/coreset/", 9) || x->rank < 1 || x->dims[0] != n) continue;
    const int64_t w = x->rank == 2 ? x->dims[1] : 1;
    for (kd_gidx i = 0, j = 0; i < n; i++) {
      if (r->weights[i] == 0.0) continue;
      if (x->is_int)
        memmove(x->i64 + j * w, x->i64 + i * w, sizeof(int64_t) * (size_t)w);
      else
        memmove(x->f64 + j * w, x->f64 + i * w, sizeof(double) * (size_t)w);
      j++;
    }
    x->dims[0] = m;
  }
  kd_gidx j = 0;
  for (kd_gidx i = 0; i < n; i++) {
    if (r->weights[i] == 0.0) continue;
    memmove(r->points + j * d, r->points + i * d, sizeof(double) * (size_t)d);
    r->indices[j] = r->indices[i];
    r->weights[j] = r->weights[i];
    j++;
  }
  r->n = m;
  *dropped = n - m;
  return err;
}
