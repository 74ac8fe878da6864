/* test_publish.c - the one atomic publish (io/publish.h): a file written by rank 0 appears at its
 * path only after every rank agreed; a failure on the last rank only (or on the writer) leaves the
 * previous file intact and no temporary on any rank when the call returns; the error is agreed.
 * The temporary is created exclusively with mode 0600 (a symbolic link planted at its name is
 * neither written through nor removed) and published with 0666 less the umask; a file is removed
 * by kd_path_remove_own only while it is the one recorded (issue 34, F6 and F11); no_replace
 * (Coreset.save) leaves a file that appeared at the path meanwhile alone. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/paths.h"
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
    FILE *f = kd_publish_fopen(&pub);
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

/* F6: a symbolic link planted at the temporary's name (rank 0's pid) makes the publish fail; the
 * link, its target and the target path are left as they were. Rank 0 alone (MPI_COMM_SELF). */
static void test_planted_link(void) {
  char tmp[128], path[64], victim[64];
  struct stat st;
  snprintf(path, sizeof path, "planted_np%d.txt", kd_test_size());
  snprintf(victim, sizeof victim, "victim_np%d.txt", kd_test_size());
  remove(path);
  remove(victim);
  FILE *v = fopen(victim, "w");
  KD_TEST(v && fputs("keep", v) >= 0 && fclose(v) == 0, "victim written");
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  remove(tmp);
  KD_TEST(symlink(victim, tmp) == 0, "symlink planted at %s", tmp);
  kd_publish pub;
  const kd_err e = kd_publish_begin(MPI_COMM_SELF, path, &pub);
  KD_TEST(e == KD_ERR_IO, "a planted temporary is refused (%d)", e);
  if (e == KD_OK) kd_publish_abort(&pub);
  KD_TEST(lstat(tmp, &st) == 0 && S_ISLNK(st.st_mode), "the planted link is still there");
  KD_TEST(content_is(victim, "keep"), "its target is unchanged");
  KD_TEST(lstat(path, &st) != 0, "nothing was published");
  remove(tmp);
  remove(victim);
}

/* F6: mode 0600 while written, 0666 less the umask once published. Rank 0 alone. */
static void test_modes(void) {
  struct stat st;
  char path[64];
  snprintf(path, sizeof path, "modes_np%d.txt", kd_test_size());
  const mode_t old = umask(022);
  remove(path);
  kd_publish pub;
  KD_TEST_OK(kd_publish_begin(MPI_COMM_SELF, path, &pub));
  KD_TEST(lstat(pub.tmp, &st) == 0 && (st.st_mode & 0777) == 0600, "temporary mode %o",
          (unsigned)(st.st_mode & 0777));
  FILE *f = kd_publish_fopen(&pub);
  KD_TEST(f && fputs("x", f) >= 0 && fclose(f) == 0, "written through kd_publish_fopen");
  KD_TEST_OK(kd_publish_commit(&pub, KD_OK));
  KD_TEST(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644, "published mode %o",
          (unsigned)(st.st_mode & 0777));
  umask(old);
  remove(path);
}

/* F11: kd_path_remove_own removes only the file it recorded, not one put at the path since. */
static void test_remove_own(void) {
  kd_file_id id;
  char path[64], other[64];
  snprintf(path, sizeof path, "own_np%d.txt", kd_test_size());
  snprintf(other, sizeof other, "foreign_np%d.txt", kd_test_size());
  FILE *f = fopen(path, "w");
  KD_TEST(f && fputs("mine", f) >= 0 && fclose(f) == 0, "own file written");
  kd_path_id(path, &id);
  KD_TEST(id.set, "its identity is recorded");
  f = fopen(other, "w");
  KD_TEST(f && fputs("foreign", f) >= 0 && fclose(f) == 0, "foreign file written");
  KD_TEST(rename(other, path) == 0, "the foreign file replaces it");
  KD_TEST(kd_path_remove_own(path, &id) == 0 && content_is(path, "foreign"),
          "a file put at the path since is not removed");
  kd_path_id(path, &id);
  KD_TEST(kd_path_remove_own(path, &id) == 1 && access(path, F_OK) != 0,
          "the recorded file itself is removed");
  kd_file_id none = {0};
  KD_TEST(kd_path_remove_own("nothing_np.txt", &none) == 0, "nothing recorded, nothing removed");
}

/* no_replace (Coreset.save without overwrite): placed where nothing is; a file that appears at the
 * path between the begin and the commit is left alone, the error agreed, no temporary left.
 * Collective. */
static void test_no_replace(void) {
  char path[64];
  snprintf(path, sizeof path, "new_np%d.txt", kd_test_size());
  if (kd_test_rank() == 0) remove(path);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int plant = 0; plant < 2; plant++) {
    kd_publish pub;
    kd_err lerr = KD_OK;
    KD_TEST_OK(kd_publish_begin(MPI_COMM_WORLD, path, &pub));
    pub.no_replace = 1;
    if (pub.root) {
      FILE *f = kd_publish_fopen(&pub);
      if (!f || fputs("new", f) < 0) lerr = kd_err_set(KD_ERR_IO, __FILE__, __LINE__, "write");
      if (f) fclose(f);
      if (plant) { /* another process creates the file meanwhile */
        f = fopen(path, "w");
        KD_TEST(f && fputs("theirs", f) >= 0 && fclose(f) == 0, "planted");
      }
    }
    kd_err e = kd_publish_commit(&pub, lerr);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!plant) {
      KD_TEST(e == KD_OK && content_is(path, "new") && count_tmp(path) == 0,
              "no_replace: placed where nothing was, no temporary (%d)", e);
      MPI_Barrier(MPI_COMM_WORLD); /* every rank has looked before rank 0 removes it */
      if (kd_test_rank() == 0) remove(path);
    } else {
      KD_TEST(e == KD_ERR_FILE && content_is(path, "theirs") && count_tmp(path) == 0,
              "no_replace: the file that appeared is left alone, the error agreed, no temporary "
              "(%d)",
              e);
      KD_TEST(kd_test_rank() != 0 || strstr(kd_err_message(), "left alone") != NULL,
              "the message says so: %s", kd_err_message());
      kd_err_clear();
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (kd_test_rank() == 0) remove(path);
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
  test_no_replace();
  if (kd_test_rank() == 0) {
    test_planted_link();
    test_modes();
    test_remove_own();
  }
  return kd_test_finish();
}
