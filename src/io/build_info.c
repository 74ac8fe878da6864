/* build_info.c - the build description of kd_build.h: one table of fields, read by
 * kd_build_info (the text of `kdistill --version`) and kd_build_attrs (the root attributes of an
 * output file), so the two say the same. Configure-time facts arrive as compile definitions of
 * this file only (CMakeLists.txt): KD_BUILD_DESCRIBE, KD_BUILD_COMPILER, KD_BUILD_SCALAPACK. */
#include <dlfcn.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "io/h5_util.h"
#include "io/io_impl.h"
#include "kdistill/kd_build.h"
#include "kdistill/kd_types.h"

#ifndef KD_BUILD_DESCRIBE
#define KD_BUILD_DESCRIBE KD_VERSION_STRING
#endif
#ifndef KD_BUILD_COMPILER
#define KD_BUILD_COMPILER "unknown"
#endif
#ifndef KD_BUILD_SCALAPACK
#define KD_BUILD_SCALAPACK "unknown"
#endif

typedef void (*kd_build_field_fn)(char *buf, size_t n);

static void kd_build_version_(char *buf, size_t n) { snprintf(buf, n, "%s", KD_BUILD_DESCRIBE); }

static void kd_build_compiler_(char *buf, size_t n) { snprintf(buf, n, "%s", KD_BUILD_COMPILER); }

/* the first line of MPI_Get_library_version, without Open MPI's repository and date tail */
static void kd_build_mpi_(char *buf, size_t n) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) {
    snprintf(buf, n, "unknown (MPI_Get_library_version failed)");
    return;
  }
  v[strcspn(v, "\n")] = '\0';
  char *tail = strstr(v, ", repo rev:");
  if (tail) *tail = '\0';
  snprintf(buf, n, "%s", v);
}

static void kd_build_hdf5_(char *buf, size_t n) {
  unsigned maj = 0, min = 0, rel = 0;
  if (H5get_libversion(&maj, &min, &rel) < 0)
    snprintf(buf, n, "unknown (built against %s)", H5_VERSION);
  else
    snprintf(buf, n, "%u.%u.%u (parallel)", maj, min, rel);
}

/* OpenBLAS says what it is (version, kernel set, threading); another BLAS cannot be asked */
static void kd_build_blas_(char *buf, size_t n) {
  typedef char *(*kd_str_fn)(void);
  kd_str_fn config = NULL, core = NULL;
  void *sym = dlsym(RTLD_DEFAULT, "openblas_get_config");
  memcpy(&config, &sym, sizeof config); /* object to function pointer, as POSIX dlsym intends */
  sym = dlsym(RTLD_DEFAULT, "openblas_get_corename");
  memcpy(&core, &sym, sizeof core);
  const char *c = config ? config() : NULL;
  const char *k = core ? core() : NULL;
  if (k && c && strstr(c, k)) k = NULL; /* the configuration already names the core */
  if (c)
    snprintf(buf, n, "%s%s%s", c, k ? ", core " : "", k ? k : "");
  else
    snprintf(buf, n, "not OpenBLAS (the BLAS does not report a version)");
  char *nl = strchr(buf, '\n');
  if (nl) *nl = '\0';
}

static void kd_build_scalapack_(char *buf, size_t n) { snprintf(buf, n, "%s", KD_BUILD_SCALAPACK); }

static void kd_build_yaml_(char *buf, size_t n) {
  snprintf(buf, n, "libyaml %s", kd_config_yaml_version());
}

static const struct {
  const char *key;
  kd_build_field_fn get;
} kd_build_fields_[] = {
    {"version", kd_build_version_}, {"compiler", kd_build_compiler_},
    {"mpi", kd_build_mpi_},         {"hdf5", kd_build_hdf5_},
    {"blas", kd_build_blas_},       {"scalapack", kd_build_scalapack_},
    {"yaml", kd_build_yaml_},
};
enum { KD_BUILD_NFIELDS = (int)(sizeof kd_build_fields_ / sizeof kd_build_fields_[0]) };

size_t kd_build_info(char *buf, size_t size) {
  size_t total = 0;
  for (int i = 0; i < KD_BUILD_NFIELDS; i++) {
    char v[512];
    kd_build_fields_[i].get(v, sizeof v);
    const int k =
        snprintf(buf && total < size ? buf + total : NULL, buf && total < size ? size - total : 0,
                 "%s: %s\n", kd_build_fields_[i].key, v);
    if (k > 0) total += (size_t)k;
  }
  if (buf && size > 0 && total == 0) buf[0] = '\0';
  return total;
}

kd_err kd_build_attrs(hid_t loc) {
  kd_err err = KD_OK;
  for (int i = 0; i < KD_BUILD_NFIELDS; i++) {
    char name[64], v[512];
    snprintf(name, sizeof name, "build_%s", kd_build_fields_[i].key);
    kd_build_fields_[i].get(v, sizeof v);
    KD_TRY(kd_h5_attr_str(loc, name, v));
  }
cleanup:
  return err;
}
