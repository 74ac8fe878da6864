/* stein_list.h - KD_ALGO(symbol) lines of the score-based family (docs/stein.md). */
KD_ALGO(kd_algo_stein_thin)
KD_ALGO(kd_algo_rpcholesky)
KD_ALGO(kd_algo_skt)
KD_ALGO(kd_algo_lskt)
KD_ALGO(kd_algo_sr)
KD_ALGO(kd_algo_lsr)
KD_ALGO(kd_algo_sc)
KD_ALGO(kd_algo_lsc)
