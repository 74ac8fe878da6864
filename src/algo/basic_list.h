/* basic_list.h - baseline algorithms. */
KD_ALGO(kd_algo_uniform)
KD_ALGO(kd_algo_monte_carlo)
