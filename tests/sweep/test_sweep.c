/* test_sweep.c - task `sweep`: spec parsing (product order, zip, points, errors), rank groups,
 * per-point configs, and an end-to-end sweep whose every point must equal a direct run of the base
 * task with the same overrides (same coreset indices, MMD to round-off) at any rank count and group
 * split; summary CSV/HDF5 contents; failed points with and without sweep.allow_failures; a typo in
 * a point rejected before anything runs. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kd_test.h"
#include "sweep/sweep_impl.h"
#include "task/task_impl.h"

static const char *kd_base_ =
    "data: {type: gaussian, n: 300, d: 2, mean: [0, 0], sd: [1, 2]}\n"
    "kernel: {name: gaussian, ls: 1.5}\n"
    "algorithm: {name: uniform, n_out: 4}\n"
    "run: {seed: 5}\n";

static kd_config *kd_load_(const char *sweep_yaml) {
  char buf[4096];
  kd_config *cfg = NULL;
  snprintf(buf, sizeof buf, "%s%s", kd_base_, sweep_yaml);
  if (kd_config_load_string(buf, "test.yaml", &cfg) != KD_OK) return NULL;
  return cfg;
}

static const char *kd_val_(const kd_sweep_spec *sp, int p, int k) {
  const char *v = sp->vals[(size_t)p * sp->n_keys + k];
  return v ? v : "(null)";
}

static void kd_test_spec_(void) {
  kd_sweep_spec sp;
  kd_config *cfg = kd_load_(
      "task: sweep\n"
      "sweep:\n"
      "  task: thin\n"
      "  product:\n"
      "    - {key: algorithm.n_out, values: [8, 16, 32]}\n"
      "    - {key: run.seed, values: [1, 2]}\n"
      "    - {key: kernel.ls, values: 0.5}\n");
  KD_TEST(cfg != NULL, "load product");
  KD_TEST_OK(kd_sweep_spec_read(cfg, &sp));
  KD_TEST(sp.n_points == 6 && sp.n_keys == 3, "product: %d points, %d keys", sp.n_points,
          sp.n_keys);
  KD_TEST(!strcmp(sp.mode, "product") && !strcmp(sp.task, "thin") && !strcmp(sp.dir, "sweep_out"),
          "mode/task/dir");
  /* last axis fastest: point 3 = (16, 2, 0.5) */
  KD_TEST(!strcmp(kd_val_(&sp, 3, 0), "16") && !strcmp(kd_val_(&sp, 3, 1), "2") &&
              !strcmp(kd_val_(&sp, 3, 2), "0.5"),
          "point 3 = %s %s %s", kd_val_(&sp, 3, 0), kd_val_(&sp, 3, 1), kd_val_(&sp, 3, 2));
  KD_TEST(!strcmp(kd_val_(&sp, 5, 0), "32") && !strcmp(kd_val_(&sp, 0, 1), "1"), "corners");
  char label[256];
  kd_sweep_point_label(&sp, 3, label, sizeof label);
  KD_TEST(!strcmp(label, "algorithm.n_out=16, run.seed=2, kernel.ls=0.5"), "label '%s'", label);
  kd_sweep_spec_free(&sp);
  kd_config_destroy(&cfg);

  cfg = kd_load_(
      "task: sweep\n"
      "sweep:\n"
      "  task: thin\n"
      "  zip:\n"
      "    - {key: algorithm.n_out, values: [8, 16]}\n"
      "    - {key: target.mean, values: [[0, 1], [2, 3]]}\n"
      "  groups: 3\n"
      "  dir: out/dir\n");
  KD_TEST_OK(kd_sweep_spec_read(cfg, &sp));
  KD_TEST(sp.n_points == 2 && !strcmp(kd_val_(&sp, 1, 0), "16") &&
              !strcmp(kd_val_(&sp, 1, 1), "[2, 3]") && sp.groups == 3,
          "zip: %d points, %s, %s", sp.n_points, kd_val_(&sp, 1, 0), kd_val_(&sp, 1, 1));
  char path[256];
  KD_TEST(!strcmp(kd_sweep_point_path(&sp, 1, path, sizeof path), "out/dir/point_0001.h5"),
          "path %s", path);
  kd_sweep_spec_free(&sp);
  kd_config_destroy(&cfg);

  cfg = kd_load_(
      "task: sweep\n"
      "sweep:\n"
      "  task: thin\n"
      "  points:\n"
      "    - [algorithm.n_out=8]\n"
      "    - [run.seed=3, algorithm.name=uniform]\n");
  KD_TEST_OK(kd_sweep_spec_read(cfg, &sp));
  KD_TEST(sp.n_points == 2 && sp.n_keys == 3 && !strcmp(sp.keys[2], "algorithm.name") &&
              sp.vals[1] == NULL && !strcmp(kd_val_(&sp, 1, 1), "3"),
          "points: %d points %d keys", sp.n_points, sp.n_keys);
  kd_sweep_spec_free(&sp);
  kd_config_destroy(&cfg);

  /* errors, each with a message naming the key */
  static const struct {
    const char *yaml, *needle;
  } bad[] = {
      {"task: sweep\nsweep: {task: thin, product: [{key: a.b, values: [1]}], "
       "points: [[a.b=1]]}\n",
       "exactly one"},
      {"task: sweep\nsweep: {task: sweep, points: [[a.b=1]]}\n", "nested"},
      {"task: sweep\nsweep: {task: thin, product: [{key: a.b, values: [1]}, "
       "{key: a.b, values: [2]}]}\n",
       "appears twice"},
      {"task: sweep\nsweep: {task: thin, product: [{key: output.path, values: [x]}]}\n",
       "cannot be swept"},
      {"task: sweep\nsweep: {task: thin, zip: [{key: a.b, values: [1, 2]}, "
       "{key: c.d, values: [1]}]}\n",
       "equal lengths"},
      {"task: sweep\nsweep: {task: thin, points: [[a.b]]}\n", "key=value"},
      {"task: sweep\nsweep: {task: thin, product: [{key: a.b}]}\n", "values"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cfg = kd_load_(bad[i].yaml);
    kd_err_clear();
    kd_err e = cfg ? kd_sweep_spec_read(cfg, &sp) : KD_ERR_CONFIG;
    KD_TEST(e == KD_ERR_CONFIG && strstr(kd_err_message(), bad[i].needle),
            "bad spec %zu: code %d, message '%s' (want '%s')", i, (int)e, kd_err_message(),
            bad[i].needle);
    kd_config_destroy(&cfg);
  }
  kd_err_clear();
}

static void kd_test_groups_(void) {
  for (int size = 1; size <= 9; size++)
    for (int n = 1; n <= 12; n++)
      for (int req = 0; req <= size + 1; req++) {
        int G = kd_sweep_n_groups(size, n, req);
        int want = req > 0 ? (req < size ? req : size) : size;
        if (want > n) want = n;
        KD_TEST(G == want, "n_groups(%d,%d,%d) = %d", size, n, req, G);
        int prev = 0, count = 0;
        for (int r = 0; r < size; r++) {
          int g = kd_sweep_group_of(r, size, G);
          if (r == 0 || g != prev) {
            if (!KD_TEST(g == (r == 0 ? 0 : prev + 1) && kd_sweep_group_leader(g, size, G) == r,
                         "group %d leader %d at rank %d", g, kd_sweep_group_leader(g, size, G), r))
              return;
            count++;
          }
          prev = g;
        }
        KD_TEST(count == G && kd_sweep_group_leader(G, size, G) == size, "every group non-empty");
      }
}

/* Make a fresh directory on rank 0; every rank gets its name. */
static void kd_tmpdir_(char *dir, int len) {
  if (kd_test_rank() == 0) {
    snprintf(dir, (size_t)len, "/tmp/kd_test_sweep_XXXXXX");
    if (!mkdtemp(dir)) dir[0] = '\0';
  }
  MPI_Bcast(dir, len, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* Run the task in cfg on comm as the CLI would (setup, unknown keys, run). */
static kd_err kd_run_task_(kd_config *cfg, kd_result *res, kd_task_info *info) {
  kd_err err = KD_OK;
  void *state = NULL;
  const char *task = NULL;
  const kd_task_desc *desc = NULL;
  int64_t seed = 0;
  kd_task_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  KD_TRY(kd_config_get_str(cfg, "task", NULL, NULL, 1, &task));
  desc = strcmp(task, "sweep") == 0 ? &kd_task_sweep : kd_task_find(task);
  KD_CHECK(desc, KD_ERR_CONFIG, "no task %s", task);
  KD_TRY(kd_config_get_int(cfg, "run.seed", 0, 0, INT64_MAX, &seed));
  ctx.comm = MPI_COMM_WORLD;
  ctx.cfg = cfg;
  ctx.seed = (uint64_t)seed;
  KD_TRY(desc->setup(&ctx, &state));
  KD_TRY(kd_config_check_unused(cfg));
  KD_TRY(desc->run(&ctx, state, res, info));
cleanup:
  if (desc && state) desc->destroy(&state);
  return err;
}

static int kd_count_lines_(const char *path) {
  FILE *f = fopen(path, "r");
  int n = 0, c;
  if (!f) return -1;
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

static void kd_test_end_to_end_(int groups) {
  char dir[64], yaml[2048], path[512];
  kd_tmpdir_(dir, sizeof dir);
  if (!KD_TEST(dir[0], "mkdtemp")) return;
  snprintf(yaml, sizeof yaml,
           "task: sweep\n"
           "sweep:\n"
           "  task: thin\n"
           "  groups: %d\n"
           "  dir: %s\n"
           "  product:\n"
           "    - {key: algorithm.n_out, values: [6, 24, 96]}\n"
           "    - {key: run.seed, values: [1, 7]}\n",
           groups, dir);
  kd_config *cfg = kd_load_(yaml);
  kd_result res = KD_RESULT_INIT;
  kd_task_info info;
  memset(&info, 0, sizeof info);
  kd_err_clear();
  KD_TEST(cfg && kd_run_task_(cfg, &res, &info) == KD_OK, "sweep run (groups %d): %s", groups,
          kd_err_message());
  kd_config_destroy(&cfg);
  /* every point equals a direct run of thin with the same overrides */
  static const int n_out[3] = {6, 24, 96}, seeds[2] = {1, 7};
  double best = 1e300;
  int best_p = -1;
  for (int p = 0; p < 6; p++) {
    char set[64];
    kd_config *c2 = kd_load_("task: thin\n");
    snprintf(set, sizeof set, "algorithm.n_out=%d", n_out[p / 2]);
    kd_config_set(c2, set);
    snprintf(set, sizeof set, "run.seed=%d", seeds[p % 2]);
    kd_config_set(c2, set);
    kd_result direct = KD_RESULT_INIT, stored = KD_RESULT_INIT;
    kd_task_info i2;
    memset(&i2, 0, sizeof i2);
    KD_TEST_OK(kd_run_task_(c2, &direct, &i2));
    snprintf(path, sizeof path, "%s/point_%04d.h5", dir, p);
    char *task = NULL, *algo = NULL;
    if (KD_TEST_OK(kd_output_read(path, &stored, NULL, &task, &algo))) {
      KD_TEST(stored.n == n_out[p / 2] && direct.n == stored.n, "point %d: %lld atoms", p,
              (long long)stored.n);
      int same = direct.n == stored.n;
      for (int64_t i = 0; same && i < stored.n; i++) same = direct.indices[i] == stored.indices[i];
      KD_TEST(same, "point %d: same coreset as the direct run", p);
      KD_TEST_REL(stored.mmd, direct.mmd, 1e-12, "point mmd vs direct run");
      KD_TEST(task && !strcmp(task, "thin") && algo && !strcmp(algo, "uniform"), "point attrs");
      if (stored.mmd < best) {
        best = stored.mmd;
        best_p = p;
      }
    }
    free(task);
    free(algo);
    kd_result_free(&direct);
    kd_result_free(&stored);
    kd_config_destroy(&c2);
  }
  /* the task's result is the best point, with the summary columns as extras */
  double bp = -1;
  KD_TEST(kd_result_get_metric(&res, "sweep_best_point", &bp) && (int)bp == best_p,
          "best point %g, expected %d", bp, best_p);
  KD_TEST_REL(res.mmd, best, 1e-15, "best mmd");
  /* the result is replicated: same shape, metrics and extras on every rank; the point's own
   * extras (/sweep_point/...) stay in its file */
  {
    long v[4] = {(long)res.n, (long)res.n_metrics, (long)res.n_datasets, (long)res.n_trace};
    long lo[4], hi[4];
    MPI_Allreduce(v, lo, 4, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(v, hi, 4, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    KD_TEST(!memcmp(lo, hi, sizeof lo), "best result identical in shape on every rank");
    KD_TEST(kd_result_find(&res, "/sweep_point/hash") == NULL, "no point extras in the result");
  }
  const kd_result_dataset *m = kd_result_find(&res, "/sweep/mmd");
  const kd_result_dataset *st = kd_result_find(&res, "/sweep/status");
  const kd_result_dataset *pn = kd_result_find(&res, "/sweep/params/algorithm.n_out");
  KD_TEST(m && m->dims[0] == 6 && st && pn && pn->f64[5] == 96.0, "extras");
  for (int p = 0; m && st && p < 6; p++) KD_TEST(st->i64[p] == 0, "status of point %d", p);
  /* summary files */
  snprintf(path, sizeof path, "%s/summary.csv", dir);
  KD_TEST(kd_count_lines_(path) == 7, "summary.csv: %d lines, expected 7", kd_count_lines_(path));
  snprintf(path, sizeof path, "%s/summary.h5", dir);
  if (kd_test_rank() == 0) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    double mm[6] = {0};
    if (KD_TEST(f >= 0, "open %s", path)) {
      hid_t d = H5Dopen2(f, "/sweep/mmd", H5P_DEFAULT);
      KD_TEST(d >= 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, mm) >= 0,
              "read /sweep/mmd");
      if (d >= 0) H5Dclose(d);
      KD_TEST(H5Lexists(f, "/sweep/params/run.seed", H5P_DEFAULT) > 0, "/sweep/params/run.seed");
      H5Fclose(f);
      KD_TEST_REL(mm[best_p], best, 1e-15, "summary.h5 mmd");
    }
  }
  kd_result_free(&res);
  /* clean up the directory */
  MPI_Barrier(MPI_COMM_WORLD);
  if (kd_test_rank() == 0) {
    for (int p = 0; p < 6; p++) {
      snprintf(path, sizeof path, "%s/point_%04d.h5", dir, p);
      remove(path);
    }
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/summary.h5", dir);
    remove(path);
    rmdir(dir);
  }
}

/* A point that fails at run time (rkh of lazy data to n_out = 290 of 300 rows: above 4^4 = 256 rows
 * every row would go to one rank, which generated rows do not allow; a g too large for the
 * input or n_out > n is refused by setup already): reported in the summary; the sweep fails unless
 * allow_failures; a typo in a point is rejected by setup before anything runs. */
static void kd_test_failures_(void) {
  char dir[64], yaml[2048], path[512];
  kd_tmpdir_(dir, sizeof dir);
  for (int allow = 0; allow <= 1; allow++) {
    snprintf(yaml, sizeof yaml,
             "task: sweep\n"
             "sweep:\n"
             "  task: thin\n"
             "  dir: %s\n"
             "  allow_failures: %s\n"
             "  points: [[algorithm.name=rkh, data.lazy=true, algorithm.n_out=5],\n"
             "           [algorithm.name=rkh, data.lazy=true, algorithm.n_out=290],\n"
             "           [algorithm.name=rkh, data.lazy=true, algorithm.n_out=7]]\n",
             dir, allow ? "true" : "false");
    kd_config *cfg = kd_load_(yaml);
    kd_result res = KD_RESULT_INIT;
    kd_task_info info;
    memset(&info, 0, sizeof info);
    kd_err_clear();
    kd_err e = cfg ? kd_run_task_(cfg, &res, &info) : KD_ERR_INTERNAL;
    if (allow) {
      KD_TEST(e == KD_OK && res.n == 7, "allow_failures: ok, best has %lld atoms",
              (long long)res.n);
      const kd_result_dataset *st = kd_result_find(&res, "/sweep/status");
      KD_TEST(st && st->i64[0] == 0 && st->i64[1] == KD_ERR_CONFIG && st->i64[2] == 0, "statuses");
    } else {
      KD_TEST(e == KD_ERR_CONFIG && strstr(kd_err_message(), "sweep point 1") &&
                  strstr(kd_err_message(), "summary.csv"),
              "failure: code %d, '%s'", (int)e, kd_err_message());
    }
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    FILE *f = fopen(path, "r");
    char line[2048] = "";
    int found = 0;
    while (f && fgets(line, sizeof line, f))
      if (!strncmp(line, "1,", 2)) found = strstr(line, ",290,") && strstr(line, ",1,nan,");
    if (f) fclose(f);
    KD_TEST(found, "summary.csv row 1 shows status 1 and no mmd");
    kd_result_free(&res);
    kd_config_destroy(&cfg);
  }
  snprintf(yaml, sizeof yaml,
           "task: sweep\nsweep: {task: thin, dir: %s, points: [[algorithm.n_out=5], "
           "[algorithm.n_outt=6]]}\n",
           dir);
  kd_config *cfg = kd_load_(yaml);
  kd_result res = KD_RESULT_INIT;
  kd_task_info info;
  kd_err_clear();
  MPI_Barrier(MPI_COMM_WORLD);
  if (kd_test_rank() == 0) {
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    remove(path);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  kd_err e = kd_run_task_(cfg, &res, &info);
  KD_TEST(e == KD_ERR_CONFIG && strstr(kd_err_message(), "n_outt") &&
              strstr(kd_err_message(), "sweep point 1"),
          "typo: code %d '%s'", (int)e, kd_err_message());
  KD_TEST(access(path, F_OK) != 0, "typo: nothing ran (no summary)");
  kd_result_free(&res);
  kd_config_destroy(&cfg);
  MPI_Barrier(MPI_COMM_WORLD);
  if (kd_test_rank() == 0) {
    for (int p = 0; p < 3; p++) {
      snprintf(path, sizeof path, "%s/point_%04d.h5", dir, p);
      remove(path);
    }
    snprintf(path, sizeof path, "%s/summary.h5", dir);
    remove(path);
    rmdir(dir);
  }
  kd_err_clear();
}

/* SIGUSR1/SIGTERM before the sweep starts: no point runs, all are marked interrupted (status 7)
 * in the summary, and the sweep returns KD_ERR_INTERRUPTED (exit status 3). */
static void kd_test_interrupt_(void) {
  char dir[64], yaml[1024], path[512];
  kd_tmpdir_(dir, sizeof dir);
  snprintf(yaml, sizeof yaml,
           "task: sweep\nsweep: {task: thin, dir: %s, points: [[algorithm.n_out=5], "
           "[algorithm.n_out=6], [algorithm.n_out=7]]}\n",
           dir);
  kd_config *cfg = kd_load_(yaml);
  kd_result res = KD_RESULT_INIT;
  kd_task_info info;
  memset(&info, 0, sizeof info);
  kd_err_clear();
  kd_interrupt_set(1);
  kd_err e = kd_run_task_(cfg, &res, &info);
  kd_interrupt_set(0);
  KD_TEST(e == KD_ERR_INTERRUPTED && kd_err_exit_status(e) == 3 &&
              strstr(kd_err_message(), "interrupted"),
          "interrupt: code %d '%s'", (int)e, kd_err_message());
  snprintf(path, sizeof path, "%s/summary.csv", dir);
  FILE *f = fopen(path, "r");
  char line[1024];
  int n7 = 0;
  while (f && fgets(line, sizeof line, f)) n7 += strstr(line, ",7,nan,") != NULL;
  if (f) fclose(f);
  KD_TEST(n7 == 3, "interrupt: %d rows with status 7, expected 3", n7);
  snprintf(path, sizeof path, "%s/point_0000.h5", dir);
  KD_TEST(access(path, F_OK) != 0, "interrupt: no point ran");
  kd_result_free(&res);
  kd_config_destroy(&cfg);
  MPI_Barrier(MPI_COMM_WORLD);
  if (kd_test_rank() == 0) {
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/summary.h5", dir);
    remove(path);
    rmdir(dir);
  }
  kd_err_clear();
}

/* sweep.resume: points whose file holds the same point hash are kept (same inode: not rewritten),
 * a missing one is recomputed, and a changed base configuration recomputes everything; the
 * summary is the same as the first run's. */
static ino_t kd_inode_(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? sb.st_ino : 0;
}

static void kd_test_resume_(void) {
  char dir[64], yaml[1024], path[512];
  ino_t ino[4];
  double mmd1[4];
  kd_tmpdir_(dir, sizeof dir);
  for (int round = 0; round < 3; round++) {
    snprintf(yaml, sizeof yaml,
             "task: sweep\nsweep: {task: thin, dir: %s, resume: %s, groups: %d, zip: [{key: "
             "algorithm.n_out, values: [5, 6, 7, 8]}]}\n",
             dir, round ? "true" : "false", round == 1 ? 1 : 0);
    kd_config *cfg = kd_load_(yaml);
    if (round == 2) kd_config_set(cfg, "kernel.ls=2.5");
    kd_result res = KD_RESULT_INIT;
    kd_task_info info;
    kd_err_clear();
    KD_TEST(kd_run_task_(cfg, &res, &info) == KD_OK, "resume round %d: %s", round,
            kd_err_message());
    const kd_result_dataset *m = kd_result_find(&res, "/sweep/mmd");
    for (int p = 0; p < 4; p++) {
      snprintf(path, sizeof path, "%s/point_%04d.h5", dir, p);
      ino_t now = kd_inode_(path);
      if (round == 0) {
        ino[p] = now;
        mmd1[p] = m ? m->f64[p] : -1;
      } else if (round == 1) {
        /* point 2 was deleted: it must exist again (its inode number may be reused) */
        KD_TEST(p == 2 ? now != 0 : now == ino[p], "round 1 point %d: %s", p,
                p == 2 ? "must be recomputed" : "must be kept");
        /* kept: bitwise; recomputed on another group size: to round-off */
        if (p == 2)
          KD_TEST_REL(m ? m->f64[p] : -1.0, mmd1[p], 1e-12, "round 1: recomputed point mmd");
        else
          KD_TEST(m && m->f64[p] == mmd1[p], "round 1 point %d: same mmd", p);
        ino[p] = now;
      } else {
        KD_TEST(now != ino[p], "round 2 point %d: changed base must recompute", p);
      }
    }
    kd_result_free(&res);
    kd_config_destroy(&cfg);
    MPI_Barrier(MPI_COMM_WORLD);
    if (round == 0 && kd_test_rank() == 0) {
      snprintf(path, sizeof path, "%s/point_0002.h5", dir);
      remove(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (kd_test_rank() == 0) {
    for (int p = 0; p < 4; p++) {
      snprintf(path, sizeof path, "%s/point_%04d.h5", dir, p);
      remove(path);
    }
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/summary.h5", dir);
    remove(path);
    rmdir(dir);
  }
  kd_err_clear();
}

/* The io/ config API the sweep builds on: root key listing, clone (fresh: nothing read, lines
 * kept), mark-read of a whole section. */
static void kd_test_config_api_(void) {
  kd_config *cfg = kd_load_("task: sweep\nsweep: {task: thin, points: [[run.seed=1]]}\n");
  kd_config *c2 = NULL;
  char *a = NULL, *b = NULL, where[256];
  if (!KD_TEST(cfg != NULL, "load")) return;
  const int n = kd_config_count(cfg, "");
  KD_TEST(n == 6 && !strcmp(kd_config_key_at(cfg, "", 0), "data") &&
              !strcmp(kd_config_key_at(cfg, "", 5), "sweep") &&
              kd_config_key_at(cfg, "", 6) == NULL,
          "root keys: %d", n);
  int64_t seed = 0;
  KD_TEST_OK(kd_config_get_int(cfg, "run.seed", 0, 0, 100, &seed));
  KD_TEST_OK(kd_config_get_int(cfg, "run.log_every", 7, 0, 100, &seed)); /* inserts a default */
  KD_TEST_OK(kd_config_clone(cfg, "copy", &c2));
  KD_TEST_OK(kd_config_emit_resolved(cfg, &a));
  KD_TEST_OK(kd_config_emit_resolved(c2, &b));
  KD_TEST(a && b && !strcmp(a, b), "clone emits the same YAML");
  KD_TEST(!strcmp(kd_config_where(c2, "kernel.ls", where, sizeof where), "copy:2"),
          "clone keeps lines: %s", where);
  /* the clone starts unread: everything but what is read now is unknown */
  KD_TEST(kd_config_check_unused(c2) == KD_ERR_CONFIG, "clone: nothing read");
  kd_err_clear();
  for (int i = 0; i < kd_config_count(c2, ""); i++)
    KD_TEST_OK(kd_config_mark_read(c2, kd_config_key_at(c2, "", i)));
  KD_TEST_OK(kd_config_check_unused(c2));
  KD_TEST_OK(kd_config_mark_read(c2, "no.such.key"));
  /* the original is untouched by the clone's changes */
  KD_TEST_OK(kd_config_set(c2, "kernel.ls=9"));
  double ls = 0;
  KD_TEST_OK(kd_config_get_f64(cfg, "kernel.ls", 1, 0, 100, &ls));
  KD_TEST(ls == 1.5, "original kernel.ls = %g", ls);
  free(a);
  free(b);
  kd_config_destroy(&c2);
  kd_config_destroy(&cfg);
}

/* io/'s small-file writer the summary uses: nothing at the path before commit, a discarded file
 * leaves nothing, the probe reads a one-element int64 dataset and refuses anything else. */
static void kd_test_h5_file_(void) {
  char dir[64], path[128], tmpl[160];
  kd_tmpdir_(dir, sizeof dir);
  if (!KD_TEST(dir[0], "mkdtemp") || kd_test_rank() != 0) return;
  snprintf(path, sizeof path, "%s/t.h5", dir);
  kd_h5_file *h = NULL;
  const int64_t one = 42, two[2] = {1, 2};
  const char *strs[2] = {"a", ""};
  KD_TEST_OK(kd_h5_file_create(path, &h));
  KD_TEST_OK(kd_h5_file_group(h, "/g"));
  KD_TEST_OK(kd_h5_file_attr_str(h, "/g", "s", "text"));
  KD_TEST_OK(kd_h5_file_attr_i64(h, "/", "n", 7));
  KD_TEST_OK(kd_h5_file_i64(h, "/g/one", 1, &one));
  KD_TEST_OK(kd_h5_file_i64(h, "/g/two", 2, two));
  KD_TEST_OK(kd_h5_file_str(h, "/g/strs", 2, strs));
  KD_TEST(access(path, F_OK) != 0, "no file at the path before commit");
  KD_TEST(kd_h5_file_i64(h, "/missing/x", 1, &one) != KD_OK, "dataset under a missing group");
  kd_err_clear();
  KD_TEST_OK(kd_h5_file_commit(&h));
  KD_TEST(h == NULL && access(path, F_OK) == 0, "committed");
  int64_t v = 0;
  KD_TEST(kd_h5_file_read_i64(path, "/g/one", &v) == 1 && v == 42, "probe reads %lld",
          (long long)v);
  KD_TEST(kd_h5_file_read_i64(path, "/g/two", &v) == 0, "probe refuses two elements");
  KD_TEST(kd_h5_file_read_i64(path, "/nope/one", &v) == 0, "probe: missing group");
  KD_TEST(kd_h5_file_read_i64("/nonexistent/x.h5", "/g/one", &v) == 0, "probe: missing file");
  snprintf(tmpl, sizeof tmpl, "%s/d.h5", dir);
  KD_TEST_OK(kd_h5_file_create(tmpl, &h));
  kd_h5_file_discard(&h);
  KD_TEST(h == NULL && access(tmpl, F_OK) != 0, "discarded: no file");
  remove(path);
  rmdir(dir);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  kd_test_spec_();
  kd_test_config_api_();
  kd_test_h5_file_();
  kd_test_groups_();
  kd_test_end_to_end_(0);
  kd_test_end_to_end_(1);
  if (kd_test_size() > 2) kd_test_end_to_end_(3);
  kd_test_failures_();
  kd_test_interrupt_();
  kd_test_resume_();
  return kd_test_finish();
}
