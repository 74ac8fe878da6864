/* lf_csv.c - libFuzzer harness of the CSV reader (src/pointset/io_csv.c): dialect and header
 * detection, the BOM, comments, NUL bytes, numbers, the column selection by index and by name.
 * The first byte picks the options (header auto/yes/no, delimiter auto or forced, columns none,
 * [1, 0] or the names ["b", "a"]); the rest is the file. */
#include "kdistill/author/kd_pointset.h"
#include "lf_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char delims[4] = {0, ',', ';', ' '};
  static const int cols[2] = {1, 0};
  static const char *const names[2] = {"b", "a"};
  char path[64];
  kd_pointset *ps = NULL;
  if (size < 1) return 0;
  const uint8_t opt = data[0];
  kd_csv_opts o = {0};
  o.header = (int)(opt % 3) - 1;
  o.delim = delims[(opt >> 2) & 3];
  if ((opt >> 4) & 1) {
    o.ncols = 2;
    o.cols = cols;
    if ((opt >> 5) & 1) o.col_names = names;
  }
  const int fd = lf_file(data + 1, size - 1, path, sizeof path);
  if (fd < 0) return 0;
  kd_err_clear();
  (void)kd_pointset_read_csv_opts(MPI_COMM_SELF, path, &o, &ps);
  kd_pointset_destroy(&ps);
  close(fd);
  return 0;
}
