/* paths.h - what kdistill accepts as a file to read or a place to write (docs/reliability.md).
 * Inputs must be regular files (a FIFO, device or directory is refused at once instead of blocking
 * or failing deep inside a reader); outputs only ever replace regular files, and their directory
 * must exist or be creatable and be writable - checked before any computation and by validate. */
#ifndef KDISTILL_IO_PATHS_H
#define KDISTILL_IO_PATHS_H

#include <stddef.h>

#include "core/ctx_impl.h"
#include "kdistill/author/kd_check.h"

/** The longest path kdistill accepts (PATH_MAX less the terminator): a longer one is refused,
 *  never cut. */
#define KD_PATH_MAX 4095

/** `path` is an existing regular file (symlinks to one are followed) that can be opened for
 *  reading without blocking. `role` names it in the message ("config", "data", ...). Local;
 *  KD_ERR_FILE (exit 1). */
kd_err kd_path_check_input(const char *path, const char *role);

/** `path` can be written by kdistill: if it exists it is a regular file (not a symlink, FIFO,
 *  device or directory), and its directory exists (or, with make_dirs, is created with its
 *  parents) and is writable. `role` names the key in the message. Local; KD_ERR_CONFIG (exit 1)
 *  for a path that is not a regular file, KD_ERR_IO (exit 2) for a directory that is not one,
 *  cannot be created or cannot be written. */
kd_err kd_path_check_output(const char *path, const char *role, int make_dirs);

/** Where a relative input path of a configuration is looked for: `path` itself (relative to the
 *  working directory) if it exists, else the same relative path next to the configuration file
 *  `cfg_file` (so a config and its data can be moved together and run from anywhere). Absolute
 *  paths, and paths found nowhere, are returned unchanged (the reader's error names them).
 *  out[len]. Returns 1 if the config's directory was used. Local. */
int kd_path_resolve_input(const char *path, const char *cfg_file, char *out, size_t len);
/** When the input `path` (after kd_path_resolve_input) does not exist, the absolute paths that were
 *  looked at ("/wd/x.csv" or "/wd/x.csv and /cfgdir/x.csv") into out[len] and 1; else 0. Local. */
int kd_path_input_missing(const char *path, const char *cfg_file, char *out, size_t len);

/** Record in *id which file `path` names now (stat, following symbolic links); id->set = 0 when
 *  nothing is there. Local. */
void kd_path_id(const char *path, kd_file_id *id);
/** Remove `path` only if it is still the file recorded in *id (lstat: same device, inode, size
 *  and change time), so a file someone else put there since is never deleted. Returns 1 if it
 *  was removed. Local. */
int kd_path_remove_own(const char *path, const kd_file_id *id);

/** Record that the job on the bound context reads (output = 0) or writes (output = 1) `path`,
 *  under `role` (a config key such as "output.path", or "CSV input"), and refuse it if it is the
 *  same file (device and inode, or the same resolved path when one does not exist yet) as a file
 *  claimed before in another role where one of the two is written: an output never replaces an
 *  input of its own run, and two outputs of one run never share a file. The one pair allowed is
 *  run.checkpoint_path with the checkpoint the run resumes from. Without a bound context nothing
 *  is recorded. Local (the rank that checks the paths); KD_ERR_CONFIG naming both. */
kd_err kd_path_claim(const char *path, const char *role, int output);

#endif
