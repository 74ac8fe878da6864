/* twosample_list.h - KD_ALGO(symbol) lines of the two-sample tests (CTT and its baselines). */
KD_ALGO(kd_algo_ctt)
KD_ALGO(kd_algo_ctt_exact)
KD_ALGO(kd_algo_subsample_test)
KD_ALGO(kd_algo_wblock)
KD_ALGO(kd_algo_lrctt)
KD_ALGO(kd_algo_actt)
