/* test_fuzz.c - seeded fuzzing and fault injection, in-process (tests/fuzz/CMakeLists.txt).
 * Claim (docs/reliability.md): whatever the configuration text or the bytes of an output or
 * checkpoint file, kdistill answers with success or with one agreed one-line error of the bad-input
 * class (exit status 1; 2 only for a memory refusal), never crashes (ASan/UBSan run this too),
 * never hangs (CTest timeout), writes nothing on failure, leaves no temporary file and never alters
 * a previous output. Three parts:
 *   1. KD_FUZZ_N mutations (default 20) of every shipped config under configs/, validated;
 *   2. byte flips and truncations of a real output file, read back with kd_job_info;
 *   3. byte flips and truncations of a real checkpoint, resumed: a resume either fails with one
 *      line and leaves the previous output intact, or (the damage missed everything that is
 *      restored) gives exactly the result of the undamaged resume.
 * Every case is keyed by (seed, part, case) with splitmix64, so a failure is reproducible. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kd_test.h"
#include "kdistill/kd_job.h"

typedef struct {
  long cases, by_status[4], crashes;
} kd_fz_counts;

static uint64_t kd_fz_mix_(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static char *kd_fz_slurp_(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *b = NULL;
  long n = 0;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
      free(b);
      b = NULL;
    }
    if (b) b[n] = '\0';
  }
  fclose(f);
  if (len) *len = (size_t)n;
  return b;
}

static int kd_fz_spit_(const char *path, const char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  const int ok = fwrite(b, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

/* The outcome of one call: status class counted; the message must be one non-empty line. */
static void kd_fz_outcome_(kd_fz_counts *c, kd_err err, const char *what) {
  const int st = kd_err_exit_status(err);
  const char *msg = kd_ctx_message(kd_test_ctx());
  c->cases++;
  c->by_status[st >= 0 && st < 4 ? st : 0]++;
  if (err == KD_OK) return;
  KD_TEST(st == 1 || err == KD_ERR_MEM, "%s: exit status %d (%s): %s", what, st, kd_err_string(err),
          msg);
  if (kd_test_rank() == 0)
    KD_TEST(msg[0] && !strchr(msg, '\n'), "%s: the message is not one line: '%s'", what, msg);
}

/* One seeded mutation of YAML text t (len n) into out (cap >= n + 256). Returns the kind. */
static int kd_fz_mutate_(const char *t, size_t n, uint64_t key, char *out) {
  static const char *const tok[] = {"1e308", "-1",   "0",  "1e-300", ".nan", "9223372036854775807",
                                    "[]",    "{}",   "\"", "*a",     "&a x", "- 1",
                                    "\t",    "\xff", ":",  "''",     "~",    "99999999999"};
  const int ntok = (int)(sizeof tok / sizeof *tok);
  const int kind = (int)(kd_fz_mix_(key) % 6);
  size_t at = n ? kd_fz_mix_(key + 1) % n : 0, o = 0;
  const char *tk = tok[kd_fz_mix_(key + 2) % (uint64_t)ntok];
  switch (kind) {
    case 0: /* truncate */
      memcpy(out, t, at);
      o = at;
      break;
    case 1: /* insert a token */
      memcpy(out, t, at);
      o = at;
      o += (size_t)sprintf(out + o, "%s", tk);
      memcpy(out + o, t + at, n - at);
      o += n - at;
      break;
    case 2: { /* replace the value of the line at `at` by a token */
      size_t ls = at, le = at;
      while (ls > 0 && t[ls - 1] != '\n') ls--;
      while (le < n && t[le] != '\n') le++;
      const char *colon = memchr(t + ls, ':', le - ls);
      size_t cut = colon ? (size_t)(colon - t) + 1 : le;
      memcpy(out, t, cut);
      o = cut;
      o += (size_t)sprintf(out + o, " %s", tk);
      memcpy(out + o, t + le, n - le);
      o += n - le;
      break;
    }
    case 3: { /* delete the line at `at` */
      size_t ls = at, le = at;
      while (ls > 0 && t[ls - 1] != '\n') ls--;
      while (le < n && t[le] != '\n') le++;
      memcpy(out, t, ls);
      o = ls;
      if (le < n) {
        memcpy(out + o, t + le + 1, n - le - 1);
        o += n - le - 1;
      }
      break;
    }
    case 4: /* flip one byte (never to NUL: the text is a C string) */
      memcpy(out, t, n);
      o = n;
      if (n) out[at] = (char)(((unsigned char)out[at] ^ (1u << (kd_fz_mix_(key + 3) % 8))) | 1u);
      break;
    default: /* an unknown key: must be refused */
      memcpy(out, t, n);
      o = n;
      o += (size_t)sprintf(out + o, "\nzz_fuzz_unknown_key: 1\n");
      break;
  }
  out[o] = '\0';
  return kind;
}

static int kd_fz_cmp_(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Part 1: mutations of every shipped config. */
static void kd_fz_configs_(const char *dir, int per, uint64_t seed, kd_fz_counts *c) {
  char *names[256], path[4096], what[4200];
  int nn = 0;
  DIR *d = opendir(dir);
  KD_TEST(d != NULL, "cannot list %s", dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) && nn < 256;) {
    const size_t l = strlen(e->d_name);
    if (l > 5 && !strcmp(e->d_name + l - 5, ".yaml")) names[nn++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)nn, sizeof *names, kd_fz_cmp_);
  KD_TEST(nn >= 10, "only %d configs under %s", nn, dir);
  for (int i = 0; i < nn; i++) {
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    char *t = kd_fz_slurp_(path, &n), *m = t ? malloc(n + 256) : NULL;
    for (int k = 0; m && k < per; k++) {
      const uint64_t key = kd_fz_mix_(seed ^ ((uint64_t)i << 32) ^ (uint64_t)k) * 8;
      const int kind = kd_fz_mutate_(t, n, key, m);
      kd_job_opts o = {.config = path, .config_text = m};
      const kd_err err = kd_job_validate(kd_test_ctx(), &o, NULL, NULL, 0);
      snprintf(what, sizeof what, "%s mutation %d (kind %d)", names[i], k, kind);
      kd_fz_outcome_(c, err, what);
      if (kind == 5) KD_TEST(err != KD_OK, "%s: an unknown key was accepted", what);
    }
    free(m);
    free(t);
    free(names[i]);
  }
}

static const char *kd_fz_herd_ =
    "task: herd\ncandidates: {type: gaussian, d: 2, n: 600}\ntarget: {type: gaussian, d: 2}\n"
    "kernel: {name: gaussian, ls: 1.0}\nalgorithm: {name: fw_eq, max_iter: 30}\nrun: {seed: 3}\n";

/* A damaged copy of (b, n): flips or a truncation, keyed. */
static size_t kd_fz_damage_(const char *b, size_t n, uint64_t key, char *out) {
  memcpy(out, b, n);
  if (kd_fz_mix_(key) % 4 == 0) return kd_fz_mix_(key + 1) % n; /* truncated */
  const int flips = 1 + (int)(kd_fz_mix_(key + 2) % 20);
  for (int f = 0; f < flips; f++) {
    size_t at = kd_fz_mix_(key + 3 + (uint64_t)f) % n;
    out[at] = (char)((unsigned char)out[at] ^ (unsigned char)(1 + kd_fz_mix_(key + 40 + f) % 255));
  }
  return n;
}

static int kd_fz_tmp_left_(const char *dir) {
  DIR *d = opendir(dir);
  int left = 0;
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d));) left |= strstr(e->d_name, ".tmp.") != NULL;
  closedir(d);
  return left;
}

/* Parts 2 and 3: damaged outputs (info) and checkpoints (resume). */
static void kd_fz_files_(const char *dir, int n_out, int n_ck, uint64_t seed, kd_fz_counts *c) {
  char out[4096], ck[4096], bad[4096], prev[4096], set1[4200], what[256];
  snprintf(out, sizeof out, "%s/out.h5", dir);
  snprintf(ck, sizeof ck, "%s/ck.h5", dir);
  snprintf(bad, sizeof bad, "%s/bad.h5", dir);
  snprintf(prev, sizeof prev, "%s/prev.h5", dir);
  snprintf(set1, sizeof set1, "run.checkpoint_path=%s", ck);
  const char *sets[] = {set1, "run.checkpoint_every=10", "run.checkpoint_keep=true"};
  kd_job_opts o = {
      .config = "fuzz.yaml", .config_text = kd_fz_herd_, .sets = sets, .n_sets = 3, .output = out};
  kd_job_summary ref, s;
  KD_TEST_OK(kd_job_run(kd_test_ctx(), &o, &ref, NULL));
  size_t n_o = 0, n_c = 0, n_p = 0;
  char *bo = kd_fz_slurp_(out, &n_o), *bc = kd_fz_slurp_(ck, &n_c);
  /* the undamaged resume: the reference for a resume the damage did not reach */
  o.resume = ck;
  o.output = prev;
  o.n_sets = 1;
  KD_TEST_OK(kd_job_run(kd_test_ctx(), &o, &ref, NULL));
  char *bp = kd_fz_slurp_(prev, &n_p);
  char *buf = malloc((n_o > n_c ? n_o : n_c) + 1);
  KD_TEST(bo && bc && bp && buf, "cannot read the files just written");
  for (int k = 0; buf && bo && k < n_out; k++) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (kd_test_rank() == 0) kd_fz_spit_(bad, buf, kd_fz_damage_(bo, n_o, seed * 977 + k, buf));
    MPI_Barrier(MPI_COMM_WORLD);
    FILE *null = fopen("/dev/null", "w");
    const kd_err err = kd_job_info(kd_test_ctx(), bad, null ? null : stdout);
    if (null) fclose(null);
    snprintf(what, sizeof what, "damaged output %d", k);
    kd_fz_outcome_(c, err, what);
  }
  for (int k = 0; buf && bc && bp && k < n_ck; k++) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (kd_test_rank() == 0) kd_fz_spit_(bad, buf, kd_fz_damage_(bc, n_c, seed * 1013 + k, buf));
    MPI_Barrier(MPI_COMM_WORLD);
    o.resume = bad;
    memset(&s, 0, sizeof s);
    const kd_err err = kd_job_run(kd_test_ctx(), &o, &s, NULL);
    snprintf(what, sizeof what, "damaged checkpoint %d", k);
    kd_fz_outcome_(c, err, what);
    if (err == KD_OK) /* nothing restored was damaged: the same rule */
      KD_TEST(s.n == ref.n && s.mmd == ref.mmd, "%s: accepted but the result changed (%g vs %g)",
              what, s.mmd, ref.mmd);
    size_t n_now = 0;
    char *now = kd_fz_slurp_(prev, &n_now);
    const int same = now && n_now == n_p && !memcmp(now, bp, n_p);
    if (err != KD_OK) KD_TEST(same, "%s: the previous output changed on a failed resume", what);
    free(now);
    if (err == KD_OK && kd_test_rank() == 0) kd_fz_spit_(prev, bp, n_p); /* the next baseline */
    KD_TEST(!kd_fz_tmp_left_(dir), "%s: a temporary file was left in %s", what, dir);
  }
  free(buf);
  free(bo);
  free(bc);
  free(bp);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  kd_fz_counts c;
  memset(&c, 0, sizeof c);
  const char *cfgdir = argc > 1 ? argv[1] : "configs";
  const int per = getenv("KD_FUZZ_N") ? atoi(getenv("KD_FUZZ_N")) : 20;
  const uint64_t seed = getenv("KD_FUZZ_SEED") ? strtoull(getenv("KD_FUZZ_SEED"), NULL, 10) : 16;
  char dir[] = "/tmp/kd_fuzz_XXXXXX";
  if (kd_test_rank() == 0 && !mkdtemp(dir)) dir[0] = '\0';
  MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  kd_fz_configs_(cfgdir, per, seed, &c);
  const long n_cfg = c.cases;
  if (dir[0]) kd_fz_files_(dir, 4 * per, 4 * per, seed, &c);
  if (kd_test_rank() == 0) {
    printf(
        "fuzz: %ld cases (%ld config mutations, %ld damaged files): exit 0 %ld, exit 1 %ld, "
        "exit 2 %ld, exit 3 %ld; crashes 0, hangs 0 (else this line is missing)\n",
        c.cases, n_cfg, c.cases - n_cfg, c.by_status[0], c.by_status[1], c.by_status[2],
        c.by_status[3]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (dir[0] && system(cmd) != 0) printf("cannot remove %s\n", dir);
  }
  return kd_test_finish();
}
