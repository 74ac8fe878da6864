/* recombine_rows.h - Caratheodory recombination of a distributed weighted point set
 * (recombine_rows.c; the `recombine` task, task/recombine_task.c, is its config front end). */
#ifndef KDISTILL_RECOMBINE_ROWS_H
#define KDISTILL_RECOMBINE_ROWS_H

#include "algo/quadrature/recombination.h"
#include "kdistill/author/kd_pointset.h"

/** Recombine the weighted rows of data (N rows; its row weights, or 1/N each when it has none)
 *  against the test functions F (N x m, distributed like data; pass data itself to use the
 *  coordinates, m = d). The rows are split into T contiguous leaves (row g is in leaf j with
 *  N j / T <= g < N (j+1) / T; 1 <= T <= N), moved to the owners of their leaves one rank block at
 *  a time (one broadcast per rank, so the rule does not depend on the rank count) and reduced by
 *  kd_recomb_tree. Outputs, replicated on every rank: *rule (allocated here; free with
 *  kd_recomb_set_free) with at most m+1 rows, gid = global data rows, unnormalised weights; and
 *  sums[m+1] = the input's weighted test-function sums (sums[q] = sum_i w_i F_iq) and total
 *  weight (sums[m]), for checking the rule. Collective over comm. Errors: KD_ERR_MEM (agreed),
 *  those of kd_recomb_tree. */
kd_err kd_recomb_rows(MPI_Comm comm, const kd_pointset *data, const kd_pointset *F, int64_t T,
                      kd_recomb_set *rule, double *sums);

#endif
