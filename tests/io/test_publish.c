/* test_publish.c - the one atomic publish (io/publish.h): a file written by rank 0 appears at its
 * path only after every rank agreed; a failure on the last rank only (or on the writer) leaves the
 * previous file intact and no temporary on any rank when the call returns; the error is agreed. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/publish.h"
#include "kd_test.h"

/* Number of entries "<name>.tmp.*" in the current directory. */
static int count_tmp(const char *name) {
  char prefix[256];
  int n = 0;
  snprintf(prefix, sizeof prefix, "%s.tmp.", name);
  DIR *d = opendir(".");
  if (!d) return 0;
  for (struct dirent *e = readdir(d); e; e = readdir(d))
    if (!strncmp(e->d_name, prefix, strlen(prefix))) n++;
  closedir(d);
  return n;
}

/* Publish "text" at path; the rank `fail_rank` reports a local error (-1: none). */
static kd_err publish(const char *path, const char *text, int fail_rank) {
  kd_publish pub;
  kd_err lerr = KD_OK;
  kd_err err = kd_publish_begin(MPI_COMM_WORLD, path, &pub);
  if (err != KD_OK) return err;
  if (pub.root) {
    FILE *f = fopen(pub.tmp, "w");
    if (!f || fputs(text, f) < 0) lerr = kd_err_set(KD_ERR_IO, __FILE__, __LINE__, "write");
    if (f) fclose(f);
  }
  if (kd_test_rank() == fail_rank)
    lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__, "planted on rank %d", fail_rank);
  return kd_publish_commit(&pub, lerr);
}

static int content_is(const char *path, const char *want) {
  char buf[64] = "";
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return !strcmp(buf, want);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  char path[64];
  snprintf(path, sizeof path, "publish_np%d.txt", kd_test_size());
  if (kd_test_rank() == 0) remove(path);
  MPI_Barrier(MPI_COMM_WORLD);
  KD_TEST_OK(publish(path, "first", -1));
  KD_TEST(content_is(path, "first") && count_tmp(path) == 0, "published, no temporary");
  /* the barriers keep rank 0 from creating its next temporary while others still look */
  MPI_Barrier(MPI_COMM_WORLD);
  /* a failure on the last rank only: agreed, the previous file intact, no temporary anywhere */
  kd_err e = publish(path, "second", kd_test_size() - 1);
  KD_TEST(e == KD_ERR_INPUT, "the planted error is agreed on every rank (%d)", e);
  KD_TEST(content_is(path, "first") && count_tmp(path) == 0,
          "after a failed publish: the previous file intact and no temporary");
  kd_err_clear();
  MPI_Barrier(MPI_COMM_WORLD);
  /* a failure of the writer itself */
  e = publish(path, "third", 0);
  KD_TEST(e == KD_ERR_INPUT && content_is(path, "first") && count_tmp(path) == 0,
          "writer failure: agreed, previous file intact, no temporary");
  kd_err_clear();
  MPI_Barrier(MPI_COMM_WORLD);
  KD_TEST_OK(publish(path, "fourth", -1));
  KD_TEST(content_is(path, "fourth"), "a later publish replaces the file");
  MPI_Barrier(MPI_COMM_WORLD);
  if (kd_test_rank() == 0) remove(path);
  return kd_test_finish();
}
