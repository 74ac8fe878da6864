/* algo_list.h - the algorithm registry. Each family keeps its own list file of
 * KD_ALGO(symbol) lines, where symbol is the kd_algo_desc exported by one algorithm file. */
#include "algo/basic_list.h"
#include "algo/herding/herding_list.h"
#include "algo/thinning/thinning_list.h"
#include "algo/quadrature/quadrature_list.h"
#include "algo/twosample/twosample_list.h"
#include "algo/apps/apps_list.h"
#include "algo/stein/stein_list.h"
