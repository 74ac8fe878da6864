/* io_csv.c - point sets from CSV files. Rank 0 parses the file twice: a first pass checks every
 * line and counts rows and columns (errors name file and line), a second pass sends each rank its
 * contiguous block, so no rank holds more than one block. Comma-separated numbers; blank lines and
 * lines starting with '#' are skipped; a first line that is not all numbers is a header (auto). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist_impl.h"
#include "io/paths.h"
#include "pointset/pointset_io.h"
#include "pointset/pointset_impl.h"

#define KD_CSV_TAG 7301

typedef struct {
  FILE *f;
  char *line;
  size_t cap;
  long lineno;
  const char *path;
  int header; /* 1 / 0 / -1 auto */
  int first;  /* no content line seen yet */
} kd_csv_;

/* Parse the fields of line s into vals (up to cap, NULL = count only). *nf = number of fields.
 * Returns 0 on success, otherwise 1-based column of the first bad field. */
static int kd_csv_fields_(char *s, double *vals, int cap, int *nf) {
  int k = 0;
  char *p = s;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    char *end = NULL;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p) return k + 1;
    while (*end == ' ' || *end == '\t') end++;
    if (*end != ',' && *end != '\0') return k + 1;
    if (vals && k < cap) vals[k] = v;
    k++;
    if (*end == '\0') break;
    p = end + 1;
  }
  *nf = k;
  return 0;
}

/* Next content line (trimmed), or NULL at EOF. Sets *err on read errors. */
static char *kd_csv_next_(kd_csv_ *c, kd_err *err) {
  for (;;) {
    errno = 0;
    ssize_t len = getline(&c->line, &c->cap, c->f);
    if (len < 0) {
      if (ferror(c->f))
        *err = kd_err_set(KD_ERR_FILE, __FILE__, __LINE__, "%s:%ld: read error: %s", c->path,
                          c->lineno + 1, strerror(errno));
      return NULL;
    }
    c->lineno++;
    /* a NUL inside the line would silently cut it short ("1,2\0junk,9" read as 1,2) */
    if (memchr(c->line, '\0', (size_t)len)) {
      *err = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                        "%s:%ld: contains a NUL byte (not a text file?)", c->path, c->lineno);
      return NULL;
    }
    while (len > 0 && (c->line[len - 1] == '\n' || c->line[len - 1] == '\r')) c->line[--len] = 0;
    char *s = c->line;
    /* a UTF-8 byte order mark (spreadsheet exports) is not part of the first field */
    if (c->lineno == 1 && !memcmp(s, "\xef\xbb\xbf", len >= 3 ? 3 : (size_t)len + 1)) s += 3;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '\0' || *s == '#') continue;
    return s;
  }
}

/* Next data row: skips the header if any. On a content line returns it with *nf fields parsed
 * into vals (NULL to count only). */
static char *kd_csv_row_(kd_csv_ *c, double *vals, int cap, int *nf, kd_err *err) {
  for (;;) {
    char *s = kd_csv_next_(c, err);
    if (!s) return NULL;
    char *copy = NULL;
    if (c->first) {
      c->first = 0;
      if (c->header == 1) continue;
      if (c->header == -1) {
        /* header if any field is not a number */
        size_t n = strlen(s) + 1;
        copy = malloc(n);
        if (!copy) {
          *err = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "out of memory");
          return NULL;
        }
        memcpy(copy, s, n);
        int dummy = 0, bad = kd_csv_fields_(copy, NULL, 0, &dummy);
        free(copy);
        if (bad) continue;
      }
    }
    int bad = kd_csv_fields_(s, vals, cap, nf);
    if (bad) {
      *err = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__, "%s:%ld: column %d is not a number",
                        c->path, c->lineno, bad);
      return NULL;
    }
    return s;
  }
}

/* Pass 1 on rank 0: shape of the file. */
static kd_err kd_csv_scan_(const char *path, int header, int64_t *n, int *d) {
  kd_err err = KD_OK;
  kd_csv_ c = {NULL, NULL, 0, 0, path, header, 1};
  int nf = 0;
  *n = 0;
  *d = 0;
  KD_TRY(kd_path_check_input(path, "CSV")); /* a FIFO or directory is refused, not read */
  c.f = fopen(path, "r");
  KD_CHECK(c.f, KD_ERR_FILE, "%s: cannot open file: %s", path, strerror(errno));
  while (kd_csv_row_(&c, NULL, 0, &nf, &err)) {
    if (*n == 0) *d = nf;
    KD_CHECK(nf == *d, KD_ERR_INPUT, "%s:%ld: expected %d values (as on the first row), got %d",
             path, c.lineno, *d, nf);
    (*n)++;
  }
  KD_TRY(err);
cleanup:
  if (c.f) fclose(c.f);
  free(c.line);
  return err;
}

kd_err kd_csv_check(MPI_Comm comm, const char *path, int header, int64_t *n, int *d) {
  kd_err err = KD_OK, lerr = KD_OK;
  int64_t shape[2] = {0, 0};
  if (kd_dist_rank(comm) == 0) {
    int dd = 0;
    lerr = kd_csv_scan_(path, header, &shape[0], &dd);
    shape[1] = dd;
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_bcast(comm, shape, (int64_t)sizeof shape, 0));
  if (n) *n = shape[0];
  if (d) *d = (int)shape[1];
cleanup:
  return err;
}

kd_err kd_pointset_read_csv(MPI_Comm comm, const char *path, int header, kd_pointset **out) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_pointset *ps = NULL;
  double *blk = NULL;
  kd_csv_ c = {NULL, NULL, 0, 0, path, header, 1};
  int64_t n = 0;
  int d = 0;
  *out = NULL;
  KD_TRY(kd_csv_check(comm, path, header, &n, &d));
  KD_CHECK(d >= 1 || n == 0, KD_ERR_INPUT, "%s: no columns", path);
  KD_TRY(kd_pointset_create(comm, n, d > 0 ? d : 1, &ps));
  const int rank = ps->rank, size = ps->size;
  if (rank == 0) {
    /* pass 2: parse block by block; on a late error keep sending (zeros) so nobody waits */
    int64_t maxrows = 0;
    for (int r = 0; r < size; r++) {
      int64_t nr = kd_pointset_rank_offset(ps, r + 1) - kd_pointset_rank_offset(ps, r);
      if (nr > maxrows) maxrows = nr;
    }
    blk = calloc((size_t)(maxrows > 0 ? maxrows : 1) * (size_t)d + 1, sizeof *blk);
    if (!blk) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "out of memory reading %s", path);
    c.f = fopen(path, "r");
    if (!c.f && !lerr)
      lerr = kd_err_set(KD_ERR_FILE, __FILE__, __LINE__, "%s: cannot open file: %s", path,
                        strerror(errno));
    for (int r = 0; r < size; r++) {
      int64_t nr = kd_pointset_rank_offset(ps, r + 1) - kd_pointset_rank_offset(ps, r);
      double *dst = r == 0 ? ps->rows : blk;
      for (int64_t i = 0; i < nr && !lerr && dst; i++) {
        int nf = 0;
        if (!kd_csv_row_(&c, dst + i * d, d, &nf, &lerr) || nf != d) {
          if (!lerr)
            lerr = kd_err_set(KD_ERR_FILE, __FILE__, __LINE__,
                              "%s:%ld: the file changed while it was being read", path, c.lineno);
        }
      }
      if (r > 0) {
        kd_err se = kd_dist_send(comm, blk ? blk : ps->rows, blk ? nr * d : 0, r, KD_CSV_TAG);
        if (se && !lerr) lerr = se;
      }
    }
  } else {
    int64_t got = 0;
    lerr = kd_dist_recv(comm, ps->rows, ps->n_local * d, &got, 0, KD_CSV_TAG);
    (void)got;
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  *out = ps;
  ps = NULL;
cleanup:
  if (c.f) fclose(c.f);
  free(c.line);
  free(blk);
  kd_pointset_destroy(&ps);
  return err;
}
