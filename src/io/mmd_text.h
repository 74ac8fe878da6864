/* mmd_text.h - the wording of a reported MMD and its provenance, shared by every view. */
#ifndef KDISTILL_IO_MMD_TEXT_H
#define KDISTILL_IO_MMD_TEXT_H

#include <stddef.h>

/** The reported MMD with its provenance into buf[cap]: method (/metrics mmd_method) 0 exact
 *  "v (exact)", 1 estimated "v +- se (estimated ...)", 3 exact to a bound "v +- bound (exact to
 *  this bound ...)", 2 skipped "nan (...)"; err is mmd_se (1) or mmd_bound (3). Local. */
void kd_output_mmd_text(char *buf, size_t cap, int method, double mmd, double err);

#endif
