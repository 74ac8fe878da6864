/* failwrite.c - LD_PRELOAD shim for tests/hostile/run_hostile.sh: a full disk. Writes to regular
 * files whose path contains $KD_FAILWRITE_MATCH (default: every regular file) succeed until
 * $KD_FAILWRITE_AFTER bytes have been written in this process, then fail with ENOSPC; fsync of
 * such files fails too. Used where no small tmpfs can be mounted. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long long kd_fw_written_ = 0; /* bytes written so far by this process (test shim only) */

static int kd_fw_match_(int fd) {
  struct stat st;
  char link[64], path[PATH_MAX];
  if (fd < 3 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  const char *m = getenv("KD_FAILWRITE_MATCH");
  if (!m || !*m) return 1;
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  return strstr(path, m) != NULL;
}

static int kd_fw_full_(int fd, size_t n) {
  const char *a = getenv("KD_FAILWRITE_AFTER");
  if (!a || !kd_fw_match_(fd)) return 0;
  if (kd_fw_written_ + (long long)n > atoll(a)) {
    errno = ENOSPC;
    return 1;
  }
  kd_fw_written_ += (long long)n;
  return 0;
}

ssize_t write(int fd, const void *buf, size_t n) {
  static ssize_t (*real)(int, const void *, size_t);
  if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  if (kd_fw_full_(fd, n)) return -1;
  return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
  static ssize_t (*real)(int, const void *, size_t, off_t);
  if (!real) real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  if (kd_fw_full_(fd, n)) return -1;
  return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
  static ssize_t (*real)(int, const void *, size_t, off_t);
  if (!real) real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
  if (kd_fw_full_(fd, n)) return -1;
  return real(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
  static ssize_t (*real)(int, const struct iovec *, int);
  size_t n = 0;
  if (!real) real = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
  for (int i = 0; i < cnt; i++) n += iov[i].iov_len;
  if (kd_fw_full_(fd, n)) return -1;
  return real(fd, iov, cnt);
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  if (getenv("KD_FAILWRITE_AFTER") && kd_fw_match_(fd) &&
      kd_fw_written_ >= atoll(getenv("KD_FAILWRITE_AFTER"))) {
    errno = ENOSPC;
    return -1;
  }
  return real(fd);
}
