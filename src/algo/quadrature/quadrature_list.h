/* quadrature_list.h - KD_ALGO(symbol) lines of the quadrature family. */
KD_ALGO(kd_algo_nystrom_recombination)
KD_ALGO(kd_algo_mercer_recombination)
