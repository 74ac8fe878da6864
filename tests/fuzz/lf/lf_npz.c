/* lf_npz.c - libFuzzer harness of the .npz reader (src/pointset/io_npy.c): the zip end record,
 * zip64 records and extra fields, the central directory, the local header, then the entry's .npy
 * header and rows. The first byte picks the entry asked for: the only one, or "X". */
#include "kdistill/author/kd_pointset.h"
#include "lf_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  kd_pointset *ps = NULL;
  if (size < 1) return 0;
  const int fd = lf_file(data + 1, size - 1, path, sizeof path);
  if (fd < 0) return 0;
  kd_err_clear();
  (void)kd_pointset_read_npy(MPI_COMM_SELF, path, 1, (data[0] & 1) ? "X" : NULL, &ps);
  kd_pointset_destroy(&ps);
  close(fd);
  return 0;
}
