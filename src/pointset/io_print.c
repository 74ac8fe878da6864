/* io_print.c - what an input file is, as a fingerprint (a checkpoint records it, a resume compares
 * it) and as a signature every rank computes of the file it opens (the ranks agree on it before
 * reading, pointset_io.h).
 *
 * The fingerprint's content hash is a sum over rows of a 64-bit hash of (global row index, the
 * row's values as read): a sum, so the order in which ranks or row blocks add their parts does not
 * matter (rank-count invariant, and a streaming reader can add block after block); keyed by the
 * global index, so moved rows change it. The signature is the file's size and a hash of its first
 * and last KD_PRINT_EDGE bytes: the header (shape and type of an .npy, an HDF5 superblock, a CSV
 * header and first rows) and the last rows, read once per rank. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm/dist_impl.h"
#include "pointset/io_member.h"
#include "pointset/pointset_impl.h"
#include "pointset/pointset_io.h"

#define KD_PRINT_EDGE 4096

static uint64_t kd_print_mix_(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

static uint64_t kd_print_bytes_(uint64_t h, const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

uint64_t kd_print_rows(uint64_t acc, kd_gidx g0, const double *rows, kd_lidx nr, int d) {
  for (kd_lidx r = 0; r < nr; r++) {
    const double *x = rows + (size_t)r * (size_t)d;
    uint64_t h = kd_print_mix_((uint64_t)(g0 + r) + 0x9e3779b97f4a7c15ULL);
    for (int j = 0; j < d; j++) {
      uint64_t w;
      memcpy(&w, x + j, sizeof w);
      h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
      h ^= h >> 29;
    }
    acc += kd_print_mix_(h);
  }
  return acc;
}

kd_err kd_pointset_print(const kd_pointset *ps, kd_input_print *out) {
  kd_err err = KD_OK;
  memset(out, 0, sizeof *out);
  out->n = ps->n;
  out->d = ps->d;
  snprintf(out->dtype, sizeof out->dtype, "%s", ps->dtype[0] ? ps->dtype : "float64");
  uint64_t h = ps->lazy ? 0 : kd_print_rows(0, ps->offset, ps->rows, ps->n_local, ps->d);
  KD_TRY(kd_dist_sum_u64(ps->comm, &h, 1));
  out->hash = h;
cleanup:
  return err;
}

void kd_pointset_set_dtype(kd_pointset *ps, const char *dtype) {
  if (ps) snprintf(ps->dtype, sizeof ps->dtype, "%s", dtype ? dtype : "");
}

/* This rank's signature of path: size and the hash of its first and last bytes. Local. */
static kd_err kd_print_sig_(const char *path, int64_t sig[2]) {
  kd_err err = KD_OK;
  unsigned char buf[KD_PRINT_EDGE];
  struct stat st;
  int fd = open(path, O_RDONLY);
  KD_CHECK(fd >= 0, KD_ERR_FILE, "%s: cannot open file: %s", path, strerror(errno));
  KD_CHECK(fstat(fd, &st) == 0, KD_ERR_FILE, "%s: %s", path, strerror(errno));
  const int64_t size = (int64_t)st.st_size, edge = size < KD_PRINT_EDGE ? size : KD_PRINT_EDGE;
  uint64_t h = 0xcbf29ce484222325ULL;
  KD_TRY(kd_member_pread(fd, buf, (size_t)edge, 0, path));
  h = kd_print_bytes_(h, buf, (size_t)edge);
  KD_TRY(kd_member_pread(fd, buf, (size_t)edge, size - edge, path));
  h = kd_print_bytes_(h, buf, (size_t)edge);
  sig[0] = size;
  sig[1] = (int64_t)h;
cleanup:
  if (fd >= 0) close(fd);
  return err;
}

kd_err kd_input_agree(MPI_Comm comm, const char *path, const char *shape0, kd_input_describe fn,
                      const void *user) {
  kd_err err = KD_OK, lerr = KD_OK;
  int64_t mine[2] = {-1, 0}, root[2] = {-1, 0};
  const int rank = kd_dist_rank(comm);
  if (kd_dist_size(comm) == 1) return KD_OK;
  lerr = kd_print_sig_(path, mine);
  if (rank == 0) {
    root[0] = mine[0];
    root[1] = mine[1];
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_bcast(comm, root, (int64_t)sizeof root, 0));
  if (rank != 0 && (mine[0] != root[0] || mine[1] != root[1])) {
    char shape[160] = "";
    if (fn) fn(path, user, shape, sizeof shape);
    kd_err_clear();
    lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                      "%s: the ranks see different files: rank %d sees %s%s%lld bytes, rank 0 "
                      "sees %s%s%lld bytes; every rank must read the same file",
                      path, rank, shape, shape[0] ? ", " : "", (long long)mine[0], shape0,
                      shape0[0] ? ", " : "", (long long)root[0]);
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
cleanup:
  return err;
}
