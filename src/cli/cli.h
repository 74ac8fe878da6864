/* cli.h - what the files of the command line (src/cli/) share: the parsed options, the summary
 * printer (summary.c) and the one-line commands (quick.c). */
#ifndef KDISTILL_CLI_H
#define KDISTILL_CLI_H

#include <stdio.h>

#include "kdistill/author.h"

#define KD_MAX_SETS 256

typedef struct {
  const char *cmd;
  const char *config;
  const char *file, *file2; /* info/mmd: the output; thin/ctt: data files */
  const char *output;
  const char *resume;
  const char *dataset; /* thin/ctt: the HDF5 dataset or npz array */
  const char *task;    /* algorithms: the task to list (NULL: all) */
  int64_t n_out;       /* thin: --n-out (0: 256) */
  const char *sets[KD_MAX_SETS];
  int n_sets;
  int print_defaults;
  kd_log_level level;
  int help, version;
} kd_cli_opts;

/** The end-of-run summary on out (rank 0), shaped by the task: the MMD and its provenance for
 *  rules, statistic / p-value / decision for ctt, the nodes kept for quad. */
void kd_cli_print_summary(const kd_job_summary *s, const kd_result *res, FILE *out);

/** kdistill algorithms [TASK]: each algorithm of the task (all four main tasks if NULL) with
 *  what it is for. KD_ERR_ARG for an unknown task. Local. */
kd_err kd_cli_algorithms(const char *task, FILE *out);

/** 1 if path names a data file (by extension: .csv .txt .tsv .dat .npy .npz .h5 .hdf5 .hdf). */
int kd_cli_is_data_file(const char *path);

/** The point-set section "{type: T, path: 'P'[, dataset: 'D']}" of a data file; KD_ERR_ARG when
 *  the format cannot be told from the name. */
kd_err kd_cli_data_section(const char *path, const char *dataset, char *buf, size_t len);

/** The config text a one-line command (thin DATA, ctt X Y) stands for; *yaml malloc'ed. */
kd_err kd_cli_quick_config(const kd_cli_opts *o, char **yaml);

#endif
