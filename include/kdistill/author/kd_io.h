/* kd_io.h - (author tier) configuration (YAML via libyaml), HDF5 output, small serial HDF5 files.
 *
 * Config model: the YAML file is parsed into a tree; modules read their keys with typed getters
 * that also validate (type, range, choices) and record the resolved value. Afterwards
 * kd_config_check_unused() rejects any key nobody read (typo / unknown key), naming file, line and
 * key. Keys are dotted paths ("kernel.ls"); sequence elements use their index ("a.b.0.mean").
 * Every rank parses the same bytes (rank 0 reads, broadcasts), so config errors need no agreement.
 */
#ifndef KDISTILL_KD_IO_H
#define KDISTILL_KD_IO_H

#include "../kd_output.h"
#include "kd_algo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kd_config kd_config;

/** Read `path` on rank 0, broadcast, parse on every rank. Collective. */
kd_err kd_config_load(MPI_Comm comm, const char *path, kd_config **out);
/** Parse YAML text; `name` is used in messages in place of a file name. Local. */
kd_err kd_config_load_string(const char *yaml, const char *name, kd_config **out);
/** The scalar at key as a typed value (kd_value_kind; "1e3" is a REAL, "12" an INT, a quoted
 *  string TEXT copied into buf of len bytes, truncated); any output may be NULL. Does not mark
 *  the key read nor record an error. Local. */
kd_value_kind kd_config_value(const kd_config *cfg, const char *key, double *num, int64_t *inum,
                              char *buf, int len);
void kd_config_destroy(kd_config **cfg);
/** Apply "--set a.b=value" (value parsed as a YAML scalar or flow sequence): the user's text.
 *  Local. */
kd_err kd_config_set(kd_config *cfg, const char *assignment);
/** Typed setters: the value at the dotted key (created, or replacing what was there) without a
 *  round trip through YAML text. A string stays a string whatever its characters (a path with
 *  quotes, '#', newlines); a real must be finite and reads back as exactly itself; null makes the
 *  key absent (a section removed). Errors: KD_ERR_ARG for a malformed key or a non-finite real;
 *  KD_ERR_CONFIG when a part of the path is a value, not a section. Local. */
kd_err kd_config_set_str(kd_config *cfg, const char *key, const char *value);
kd_err kd_config_set_int(kd_config *cfg, const char *key, int64_t value);
kd_err kd_config_set_f64(kd_config *cfg, const char *key, double value);
kd_err kd_config_set_bool(kd_config *cfg, const char *key, int value);
kd_err kd_config_set_null(kd_config *cfg, const char *key);
/** A list of reals at key: `rows` values (cols 0), or `rows` lists of `cols` values (row-major
 *  v[rows * cols]), e.g. a mixture's means. Every value finite (KD_ERR_ARG naming its position).
 *  Local. */
kd_err kd_config_set_f64_array(kd_config *cfg, const char *key, const double *v, int64_t rows,
                               int cols);
/** An empty configuration named `name`, to be filled by the typed setters (the C user API's
 *  kd_spec): messages about its keys name it, not a file line or --set. Local. */
kd_err kd_config_new(const char *name, kd_config **out);
/** Name used in messages (the file path). */
const char *kd_config_name(const kd_config *cfg);

/** 1 if the key is present. Does not mark it read. */
int kd_config_has(const kd_config *cfg, const char *key);
/** Typed getters. Missing key -> default (recorded as resolved). required != 0 -> missing is an
 *  error. Wrong type / out of range / not in choices ('|'-separated) -> KD_ERR_CONFIG naming
 *  "file:line: key". Local. */
kd_err kd_config_get_f64(kd_config *cfg, const char *key, double def, double lo, double hi,
                         double *out);
kd_err kd_config_get_int(kd_config *cfg, const char *key, int64_t def, int64_t lo, int64_t hi,
                         int64_t *out);
kd_err kd_config_get_bool(kd_config *cfg, const char *key, int def, int *out);
/** *out points into the config (valid until destroy). def NULL + required = 1 -> required. */
kd_err kd_config_get_str(kd_config *cfg, const char *key, const char *def, const char *choices,
                         int required, const char **out);
/** Sequence of numbers (a YAML flow or block sequence, or a single number = length 1).
 *  *out malloc'ed (caller frees), *n its length. Missing and not required -> *n = 0, *out NULL. */
kd_err kd_config_get_f64_list(kd_config *cfg, const char *key, int required, int *n, double **out);
/** Number of elements of a sequence (0 if absent), or of entries of a mapping; key "" (or NULL)
 *  is the root mapping (the sections). Marks nothing. Local. */
int kd_config_count(const kd_config *cfg, const char *key);
/** Key name of the i-th entry of a mapping (NULL if out of range), in file order; key "" (or NULL)
 *  lists the root mapping (the sections). With kd_config_count this lists the keys of a section.
 *  The string is owned by the config. Marks nothing. Local. */
const char *kd_config_key_at(const kd_config *cfg, const char *key, int i);
/** A deep copy of src as freshly loaded: the same keys, values, file lines and origins (so
 *  messages still name the user's file and line), with nothing marked read and defaults kept as
 *  values. name (NULL: src's name) is used in messages. *out owned by the caller
 *  (kd_config_destroy). Errors: KD_ERR_MEM. Local. */
kd_err kd_config_clone(const kd_config *src, const char *name, kd_config **out);
/** Mark key and everything under it read (kd_config_check_unused will not report it), without
 *  type checks or inserting defaults: for keys another component validates (e.g. the base
 *  sections of a sweep, checked per point). An absent key is no error. Errors: KD_ERR_CONFIG if
 *  the path runs through a value. Local. */
kd_err kd_config_mark_read(kd_config *cfg, const char *key);
/** "file:line" of a key (or of the file when absent) for messages; static buffer per call site
 *  is not used: writes into buf[len]. */
const char *kd_config_where(const kd_config *cfg, const char *key, char *buf, int len);
/** Fill an algorithm's kd_params from the keys under `section` (e.g. "algorithm"), validating
 *  each; the key `name` is skipped. Local. */
kd_err kd_config_get_params(kd_config *cfg, const char *section, const kd_param_spec *spec, int n,
                            kd_params *out);
/** Error (KD_ERR_CONFIG) naming file:line: key of the first key never read. Local. */
/** 1 if kd_config_check_unused would report nothing at or under key (every entry there read; an
 *  absent key counts as read), else 0. No message is recorded. Local, pure. */
int kd_config_is_read(const kd_config *cfg, const char *key);
kd_err kd_config_check_unused(const kd_config *cfg);
/** The resolved configuration (every key read, with defaults filled in) as YAML text; caller
 *  frees *yaml. Local. */
kd_err kd_config_emit_resolved(const kd_config *cfg, char **yaml);
/** One section of the configuration, e.g. "kernel", as the YAML text of {key: value} (the key
 *  as given, dots and all). KD_ERR_CONFIG if absent. Caller frees *yaml. Local. */
kd_err kd_config_emit_section(const kd_config *cfg, const char *key, char **yaml);

/* ---------------- HDF5 output (the contract users read from Python/Julia/C) ---------------- */
typedef struct {
  const char *task, *algorithm, *kernel; /* kernel: kd_kernel_describe text */
  int n_ranks;
  uint64_t seed;
  const char *config_yaml; /* resolved config */
} kd_output_meta;

/** Write res to `path` atomically: rank 0 writes "<path>.tmp.<pid>" in the same directory, closes
 *  it, the ranks agree, then rank 0 renames it into place. On any error no file is left at path
 *  and the temporary is removed. Layout: root attributes kdistill_version, task, algorithm,
 *  kernel, n_ranks, seed, created_utc, config_yaml; /coreset/{points,weights,indices};
 *  /metrics attributes mmd, seconds, kernel_evals (+ res->metrics); /metrics/trace/{iteration,
 *  n_atoms, mmd, seconds} when a trace exists; extra datasets at their paths. Collective. */
kd_err kd_output_write(MPI_Comm comm, const char *path, const kd_output_meta *meta,
                       const kd_result *res);

/* ---------------- small serial HDF5 files (summaries and tables written by one process) ----
 * A file is written as "<path>.tmp.<pid>" and appears at path only on kd_h5_file_commit (closed,
 * then renamed), so a reader never sees a partial file. All calls are Local (one process writes;
 * agreeing on the outcome is the caller's business). Object paths are absolute ("/sweep/mmd");
 * parent groups must exist (kd_h5_file_group). Errors: KD_ERR_IO naming the file and object
 * (with HDF5's own description), KD_ERR_MEM. */
typedef struct kd_h5_file kd_h5_file;

/** Create "<path>.tmp.<pid>" (truncating), HDF5's automatic error printing off. *out owned by the
 *  caller: kd_h5_file_commit or kd_h5_file_discard. */
kd_err kd_h5_file_create(const char *path, kd_h5_file **out);
/** Close the file and rename it to its path; on failure the temporary is removed. Always frees
 *  *h and sets it to NULL. */
kd_err kd_h5_file_commit(kd_h5_file **h);
/** Close the file and remove the temporary (nothing appears at path). Accepts NULL. */
void kd_h5_file_discard(kd_h5_file **h);
/** Create the group at path (e.g. "/sweep"). */
kd_err kd_h5_file_group(kd_h5_file *h, const char *path);
/** Scalar UTF-8 string (variable length; NULL writes "") / int64 attribute `name` of the object
 *  at obj ("/" = the root group). */
kd_err kd_h5_file_attr_str(kd_h5_file *h, const char *obj, const char *name, const char *val);
kd_err kd_h5_file_attr_i64(kd_h5_file *h, const char *obj, const char *name, int64_t val);
/** 1-D datasets of n elements (data borrowed, copied into the file): float64, int64, uint64
 *  (little-endian file types) and variable-length UTF-8 strings. */
kd_err kd_h5_file_f64(kd_h5_file *h, const char *path, int64_t n, const double *v);
kd_err kd_h5_file_i64(kd_h5_file *h, const char *path, int64_t n, const int64_t *v);
kd_err kd_h5_file_u64(kd_h5_file *h, const char *path, int64_t n, const uint64_t *v);
kd_err kd_h5_file_str(kd_h5_file *h, const char *path, int64_t n, const char *const *v);
/** Read the one-element int64 dataset dset (absolute path) of the HDF5 file path into *v.
 *  Returns 1 on success, 0 if the file, the dataset or the read fails (a probe: no error is
 *  recorded). Local. */
int kd_h5_file_read_i64(const char *path, const char *dset, int64_t *v);

#ifdef __cplusplus
}
#endif
#endif
