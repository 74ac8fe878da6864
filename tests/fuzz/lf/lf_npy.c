/* lf_npy.c - libFuzzer harness of the .npy reader (src/pointset/io_npy.c): the header (magic,
 * version, dict, descr, fortran_order, shape) and, when it is accepted, the rows. */
#include "kdistill/author/kd_pointset.h"
#include "lf_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  kd_pointset *ps = NULL;
  const int fd = lf_file(data, size, path, sizeof path);
  if (fd < 0) return 0;
  kd_err_clear();
  (void)kd_pointset_read_npy(MPI_COMM_SELF, path, 0, NULL, &ps);
  kd_pointset_destroy(&ps);
  close(fd);
  return 0;
}
