/* io_csv.c - point sets from CSV files. Rank 0 checks every line in a first pass and counts rows
 * and columns (errors name file and line), noting the byte offset of every KD_CSV_STRIDE-th row;
 * then every rank seeks to the mark before its contiguous block and parses only its own rows, so
 * the parse runs in parallel and no rank holds more than one block. Numbers separated by commas,
 * semicolons, tabs or whitespace runs (kd_csv_opts.delim; auto: from the first content line);
 * blank lines and lines starting with '#' are skipped; a first line none of whose fields starts
 * like a number is a header (auto), so a line of numbers with another separator is an error, not
 * a header. A column selection (indices or header names) keeps some columns; a header whose
 * first name is empty (a pandas index column) drops that column unless columns are chosen. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "io/paths.h"
#include "pointset/pointset_io.h"
#include "pointset/pointset_impl.h"

enum { KD_CSV_MAX_COLS = 1000000, KD_CSV_STRIDE = 4096 };

typedef struct {
  FILE *f;
  char *line;
  size_t cap;
  long lineno;
  const char *path;
  kd_csv_opts o;
  int first;  /* no content line seen yet */
  char delim; /* resolved: ',', ';', '\t' or ' ' (runs of blanks) */
  int nf_all; /* fields per line (from the first content line) */
  int *sel;   /* the columns kept (nsel), NULL: all */
  int nsel;
  double *tmp; /* one parsed line when columns are selected */
  int quiet;   /* 1: the pass that does not log */
  int data_seen;
  int64_t pos, line_off; /* bytes read so far; offset of the last line read */
} kd_csv_;

/* Where data row k * KD_CSV_STRIDE starts: byte offset and the number of the line before it. */
typedef struct {
  int64_t n_marks;
  int64_t *off, *line;
} kd_csv_marks_;

/* The end of a plain decimal number at p ([+-] digits [. digits] [e [+-] digits]) when a
 * separator, blank or the end of the line follows it, else NULL. Such a token is exactly what
 * strtod would consume; everything else (hex, inf, nan, a trailing letter) is left to strtod.
 * The counting pass uses it to skip strtod's conversion: ~5x faster on long files. */
static char *kd_csv_plain_(char *p, char delim) {
  char *q = p;
  int digits = 0;
  if (*q == '+' || *q == '-') q++;
  for (; *q >= '0' && *q <= '9'; q++) digits++;
  if (*q == '.')
    for (q++; *q >= '0' && *q <= '9'; q++) digits++;
  if (!digits) return NULL;
  if (*q == 'e' || *q == 'E') {
    char *e = q + 1;
    if (*e == '+' || *e == '-') e++;
    if (*e >= '0' && *e <= '9') {
      while (*e >= '0' && *e <= '9') e++;
      q = e;
    }
  }
  return (*q == '\0' || *q == ' ' || *q == '\t' || *q == delim) ? q : NULL;
}

/* Parse the fields of line s (separator delim) into vals (up to cap, NULL = count only). *nf =
 * number of fields. Returns 0 on success, otherwise the 1-based column of the first bad field. */
static int kd_csv_fields_(char *s, char delim, double *vals, int cap, int *nf) {
  int k = 0;
  char *p = s;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    char *end = vals ? NULL : kd_csv_plain_(p, delim);
    double v = 0.0;
    if (!end) v = strtod(p, &end);
    if (end == p) return k + 1;
    while (*end == ' ' || (*end == '\t' && delim != '\t')) end++;
    if (delim == ' ') {
      if (vals && k < cap) vals[k] = v;
      k++;
      if (*end == '\0') break;
      if (end == p || !(end[-1] == ' ' || end[-1] == '\t')) return k + 1;
      p = end;
      continue;
    }
    if (*end != delim && *end != '\0') return k + 1;
    if (vals && k < cap) vals[k] = v;
    k++;
    if (*end == '\0') break;
    p = end + 1;
  }
  *nf = k;
  return 0;
}

/* The separator of a first content line: comma, else semicolon, else tab, else blanks. */
static char kd_csv_guess_delim_(const char *s) {
  if (strchr(s, ',')) return ',';
  if (strchr(s, ';')) return ';';
  if (strchr(s, '\t')) return '\t';
  return ' ';
}

/* The next header name of a line (trimmed, quotes removed) into buf (NULL: skip it); *pp moves
 * past it and becomes NULL after the last one. Returns 0 when no name is left. Walking a line
 * name by name is linear in its length (looking up the i-th name from the start each time made
 * header detection quadratic in the column count). */
static int kd_csv_next_name_(const char **pp, char delim, char *buf, size_t len) {
  const char *p = *pp;
  if (!p) return 0;
  while (*p == ' ' || (*p == '\t' && delim != '\t')) p++;
  const char *e = p;
  if (delim == ' ')
    while (*e && *e != ' ' && *e != '\t') e++;
  else
    while (*e && *e != delim) e++;
  const char *t = e;
  while (t > p && (t[-1] == ' ' || t[-1] == '\t')) t--;
  if (buf) {
    size_t n = (size_t)(t - p) < len - 1 ? (size_t)(t - p) : len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    if (n >= 2 && (buf[0] == '"' || buf[0] == '\'') && buf[n - 1] == buf[0]) {
      memmove(buf, buf + 1, n - 2);
      buf[n - 2] = '\0';
    }
  }
  p = *e ? e + 1 : NULL;
  if (p && delim == ' ') {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) p = NULL;
  }
  *pp = p;
  return 1;
}

/* The first header name of s into buf; returns the number of names. */
static int kd_csv_name_(const char *s, char delim, char *buf, size_t len) {
  int k = 0;
  const char *p = s;
  buf[0] = '\0';
  while (kd_csv_next_name_(&p, delim, k ? NULL : buf, len)) k++;
  return k;
}

/* The config section whose keys (header, delimiter, columns) the messages name. */
static const char *kd_csv_sec_(const kd_csv_ *c) { return c->o.section ? c->o.section : "data"; }

/* The kept columns from the options, given the first line (header or not). */
static kd_err kd_csv_select_(kd_csv_ *c, const char *hdr) {
  kd_err err = KD_OK;
  char name[256];
  const kd_csv_opts *o = &c->o;
  if (o->ncols > 0) {
    KD_ALLOC(c->sel, o->ncols);
    for (int i = 0; i < o->ncols; i++) {
      int col = -1;
      if (o->col_names && o->col_names[i]) {
        KD_CHECK(hdr, KD_ERR_CONFIG,
                 "%s: %s.columns names a column ('%s') but the file has no header line", c->path,
                 kd_csv_sec_(c), o->col_names[i]);
        const char *p = hdr;
        for (int j = 0; j < c->nf_all && col < 0; j++)
          if (kd_csv_next_name_(&p, c->delim, name, sizeof name) && !strcmp(name, o->col_names[i]))
            col = j;
        KD_CHECK(col >= 0, KD_ERR_CONFIG, "%s: %s.columns: no column named '%s' in the header",
                 c->path, kd_csv_sec_(c), o->col_names[i]);
      } else {
        col = o->cols[i];
        KD_CHECK(col >= 0 && col < c->nf_all, KD_ERR_CONFIG,
                 "%s: %s.columns: column %d does not exist (the file has %d columns, counted "
                 "from 0)",
                 c->path, kd_csv_sec_(c), col, c->nf_all);
      }
      c->sel[i] = col;
    }
    c->nsel = o->ncols;
  } else if (hdr && c->nf_all > 1) { /* pandas' unnamed index column */
    kd_csv_name_(hdr, c->delim, name, sizeof name);
    if (name[0] == '\0') {
      KD_ALLOC(c->sel, c->nf_all - 1);
      for (int j = 1; j < c->nf_all; j++) c->sel[j - 1] = j;
      c->nsel = c->nf_all - 1;
      if (!c->quiet)
        kd_log_info(
            "%s: the first column has no name in the header (a pandas index): left out "
            "(set %s.columns to keep it)",
            c->path, kd_csv_sec_(c));
    }
  }
  if (c->sel) KD_ALLOC(c->tmp, c->nf_all);
cleanup:
  return err;
}

/* Next content line (trimmed), or NULL at EOF. Sets *err on read errors. */
static char *kd_csv_next_(kd_csv_ *c, kd_err *err) {
  for (;;) {
    errno = 0;
    c->line_off = c->pos;
    ssize_t len = getline(&c->line, &c->cap, c->f);
    if (len < 0) {
      if (ferror(c->f))
        *err = kd_err_set(KD_ERR_FILE, __FILE__, __LINE__, "%s:%ld: read error: %s", c->path,
                          c->lineno + 1, strerror(errno));
      return NULL;
    }
    c->lineno++;
    c->pos += len;
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

/* The first content line s: resolve the separator, the field count, the header and the column
 * selection. Returns 1 if s is a header (skip it). */
static int kd_csv_first_(kd_csv_ *c, char *s, kd_err *err) {
  int nf = 0, is_header = c->o.header == 1;
  c->delim = c->o.delim ? c->o.delim : kd_csv_guess_delim_(s);
  char name[64];
  c->nf_all = kd_csv_name_(s, c->delim, name, sizeof name);
  if (c->o.header == -1) { /* a header if no field starts like a number */
    is_header = 1;
    const char *p = s;
    while (is_header && kd_csv_next_name_(&p, c->delim, name, sizeof name)) {
      char *end = NULL;
      (void)strtod(name, &end);
      if (end != name) is_header = 0;
    }
  }
  (void)nf;
  if (c->o.header == -1 && !c->quiet) {
    const char *sep = c->delim == ','    ? "comma"
                      : c->delim == ';'  ? "semicolon"
                      : c->delim == '\t' ? "tab"
                                         : "whitespace";
    kd_log_info(
        "%s: %d %s-separated columns; line %ld is %s (%s.header: auto; set true or "
        "false to decide)",
        c->path, c->nf_all, sep, c->lineno,
        is_header ? "a header (no field starts like a number)" : "data, not a header",
        kd_csv_sec_(c));
  }
  if (c->nf_all > KD_CSV_MAX_COLS) {
    *err = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__, "%s:%ld: %d columns, more than %d", c->path,
                      c->lineno, c->nf_all, KD_CSV_MAX_COLS);
    return 0;
  }
  if (!c->sel) *err = kd_csv_select_(c, is_header ? s : NULL);
  return is_header;
}

/* Next data row: skips the header if any. On a content line returns it with *nf values (the kept
 * columns) parsed into vals (NULL to count only). */
static char *kd_csv_row_(kd_csv_ *c, double *vals, int cap, int *nf, kd_err *err) {
  for (;;) {
    char *s = kd_csv_next_(c, err);
    if (!s) return NULL;
    if (c->first) {
      c->first = 0;
      const int skip = kd_csv_first_(c, s, err);
      if (*err) return NULL;
      if (skip) continue;
    }
    int all = 0,
        bad = kd_csv_fields_(s, c->delim, c->sel ? c->tmp : vals, c->sel ? c->nf_all : cap, &all);
    if (bad) {
      *err = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                        "%s:%ld: column %d is not a number (separator '%s'; set %s.delimiter "
                        "if the file uses another)",
                        c->path, c->lineno, bad,
                        c->delim == ' '    ? "blanks"
                        : c->delim == '\t' ? "tab"
                        : c->delim == ';'  ? ";"
                                           : ",",
                        kd_csv_sec_(c));
      return NULL;
    }
    if (!c->data_seen++ && !c->sel) c->nf_all = all; /* without a selection: the first row's */
    *nf = all;                                       /* the caller checks all == nf_all */
    for (int k = 0; c->sel && all == c->nf_all && k < c->nsel; k++)
      if (vals && k < cap) vals[k] = c->tmp[c->sel[k]];
    return s;
  }
}

static void kd_csv_close_(kd_csv_ *c) {
  if (c->f) fclose(c->f);
  free(c->line);
  free(c->sel);
  free(c->tmp);
}

/* Pass 1 on rank 0: shape of the file, and the marks (mk may be NULL). probe 0: only the shape,
 * quietly, of the file as another rank sees it (kd_csv_describe_). */
static kd_err kd_csv_scan_(const char *path, const kd_csv_opts *o, int64_t *n, int *d,
                           kd_csv_marks_ *mk, int probe) {
  kd_err err = KD_OK;
  kd_csv_ c;
  int nf = 0;
  int64_t cap = 0;
  memset(&c, 0, sizeof c);
  c.path = path;
  c.o = *o;
  c.first = 1;
  c.quiet = !probe;
  *n = 0;
  *d = 0;
  if (probe) {
    KD_TRY(kd_path_check_input(path, "CSV"));    /* a FIFO or directory is refused, not read */
    KD_TRY(kd_path_claim(path, "CSV input", 0)); /* no output of the run may replace it */
  }
  c.f = fopen(path, "r");
  KD_CHECK(c.f, KD_ERR_FILE, "%s: cannot open file: %s", path, strerror(errno));
  while (kd_csv_row_(&c, NULL, 0, &nf, &err)) {
    KD_CHECK(nf == c.nf_all, KD_ERR_INPUT,
             "%s:%ld: expected %d values (as on the first row), got %d", path, c.lineno, c.nf_all,
             nf);
    *d = c.sel ? c.nsel : c.nf_all;
    if (mk && *n % KD_CSV_STRIDE == 0) {
      if (mk->n_marks == cap) {
        cap = cap ? 2 * cap : 64;
        int64_t *a = realloc(mk->off, sizeof(int64_t) * (size_t)cap),
                *b = a ? realloc(mk->line, sizeof(int64_t) * (size_t)cap) : NULL;
        if (a) mk->off = a;
        if (b) mk->line = b;
        KD_CHECK(a && b, KD_ERR_MEM, "%s: out of memory indexing the rows", path);
      }
      mk->off[mk->n_marks] = c.line_off;
      mk->line[mk->n_marks++] = c.lineno - 1;
    }
    (*n)++;
  }
  KD_TRY(err);
cleanup:
  kd_csv_close_(&c);
  return err;
}

/* Pass 1 with the result agreed and broadcast (shape, and the marks when mk is not NULL). */
static kd_err kd_csv_check_(MPI_Comm comm, const char *path, const kd_csv_opts *o, int64_t *n,
                            int *d, kd_csv_marks_ *mk) {
  kd_err err = KD_OK, lerr = KD_OK;
  int64_t shape[3] = {0, 0, 0};
  if (kd_dist_rank(comm) == 0) {
    int dd = 0;
    lerr = kd_csv_scan_(path, o, &shape[0], &dd, mk, 1);
    shape[1] = dd;
    shape[2] = mk ? mk->n_marks : 0;
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_bcast(comm, shape, (int64_t)sizeof shape, 0));
  if (mk && kd_dist_rank(comm) != 0) {
    mk->n_marks = shape[2];
    mk->off = malloc(sizeof(int64_t) * (size_t)(shape[2] + 1));
    mk->line = malloc(sizeof(int64_t) * (size_t)(shape[2] + 1));
    lerr = mk->off && mk->line ? KD_OK
                               : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                            "%s: out of memory for the row index", path);
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  if (mk && shape[2] > 0) {
    KD_TRY(kd_dist_bcast(comm, mk->off, (int64_t)sizeof(int64_t) * shape[2], 0));
    KD_TRY(kd_dist_bcast(comm, mk->line, (int64_t)sizeof(int64_t) * shape[2], 0));
  }
  if (n) *n = shape[0];
  if (d) *d = (int)shape[1];
cleanup:
  return err;
}

/* kd_input_describe: the CSV file as this rank sees it. */
static void kd_csv_describe_(const char *path, const void *user, char *buf, size_t len) {
  int64_t n = 0;
  int d = 0;
  if (kd_csv_scan_(path, user, &n, &d, NULL, 0) == KD_OK)
    snprintf(buf, len, "%lld rows of %d columns", (long long)n, d);
  else
    snprintf(buf, len, "an unreadable CSV file (%s)", kd_err_message());
}

kd_err kd_csv_check(MPI_Comm comm, const char *path, const kd_csv_opts *o, int64_t *n, int *d) {
  return kd_csv_check_(comm, path, o, n, d, NULL);
}

kd_err kd_pointset_read_csv(MPI_Comm comm, const char *path, int header, kd_pointset **out) {
  kd_csv_opts o;
  memset(&o, 0, sizeof o);
  o.header = header;
  return kd_pointset_read_csv_opts(comm, path, &o, out);
}

/* This rank's rows [o0, o0 + nr) into rows: the first content line (header, separator and
 * columns, as rank 0 resolved them), then a seek to the mark at or before row o0. Local. */
static kd_err kd_csv_read_block_(kd_csv_ *c, const kd_csv_marks_ *mk, int64_t o0, int64_t nr, int d,
                                 double *rows) {
  kd_err err = KD_OK;
  int nf = 0;
  int64_t at = 0; /* the next data row to be read */
  c->f = fopen(c->path, "r");
  KD_CHECK(c->f, KD_ERR_FILE, "%s: cannot open file: %s", c->path, strerror(errno));
  KD_CHECK(kd_csv_row_(c, o0 == 0 ? rows : NULL, d, &nf, &err), KD_ERR_FILE,
           "%s: the file changed while it was being read", c->path);
  at = 1;
  const int64_t k = o0 / KD_CSV_STRIDE;
  if (o0 > 0 && k > 0 && k < mk->n_marks) {
    KD_CHECK(fseeko(c->f, (off_t)mk->off[k], SEEK_SET) == 0, KD_ERR_FILE, "%s: cannot seek: %s",
             c->path, strerror(errno));
    c->pos = mk->off[k];
    c->lineno = (long)mk->line[k];
    at = k * KD_CSV_STRIDE;
  }
  for (; at < o0 + nr; at++) {
    double *dst = at >= o0 ? rows + (at - o0) * d : NULL;
    if (!kd_csv_row_(c, dst, d, &nf, &err) || nf != c->nf_all) {
      KD_TRY(err);
      KD_FAIL(KD_ERR_FILE, "%s:%ld: the file changed while it was being read", c->path, c->lineno);
    }
  }
cleanup:
  return err;
}

kd_err kd_pointset_read_csv_opts(MPI_Comm comm, const char *path, const kd_csv_opts *o,
                                 kd_pointset **out) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_pointset *ps = NULL;
  kd_csv_marks_ mk = {0, NULL, NULL};
  kd_csv_ c;
  int64_t n = 0;
  int d = 0;
  memset(&c, 0, sizeof c);
  c.path = path;
  c.o = *o;
  c.first = 1;
  c.quiet = 1;
  *out = NULL;
  KD_TRY(kd_csv_check_(comm, path, o, &n, &d, &mk));
  KD_CHECK(d >= 1 || n == 0, KD_ERR_INPUT, "%s: no columns", path);
  {
    char shape0[64];
    snprintf(shape0, sizeof shape0, "%lld rows of %d columns", (long long)n, d);
    KD_TRY(kd_input_agree(comm, path, shape0, kd_csv_describe_, o));
  }
  KD_TRY(kd_pointset_create(comm, n, d > 0 ? d : 1, &ps));
  kd_pointset_set_dtype(ps, "text");
  if (ps->n_local > 0)
    lerr = kd_csv_read_block_(&c, &mk, kd_pointset_offset(ps), ps->n_local, d, ps->rows);
  KD_TRY(kd_dist_agreed(comm, lerr));
  *out = ps;
  ps = NULL;
cleanup:
  kd_csv_close_(&c);
  free(mk.off);
  free(mk.line);
  kd_pointset_destroy(&ps);
  return err;
}
