/* algo_list.h - the algorithm registry: KD_ALGO(symbol) lines, where symbol is the kd_algo_desc
 * exported by one algorithm file. A family of three or more keeps its own list file, included
 * here; smaller ones are listed here directly. The order is the order of `kdistill algorithms`. */
/* baselines (uniform.c, monte_carlo.c) */
KD_ALGO(kd_algo_uniform)
KD_ALGO(kd_algo_monte_carlo)
#include "algo/herding/herding_list.h"
#include "algo/thinning/thinning_list.h"
/* quadrature (algo/quadrature/) */
KD_ALGO(kd_algo_nystrom_recombination)
KD_ALGO(kd_algo_mercer_recombination)
#include "algo/twosample/twosample_list.h"
#include "algo/stein/stein_list.h"
