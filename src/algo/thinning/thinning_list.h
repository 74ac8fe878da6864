/* thinning_list.h - KD_ALGO(symbol) lines of the thinning family. */
KD_ALGO(kd_algo_kh)
KD_ALGO(kd_algo_lkh)
KD_ALGO(kd_algo_rkh)
KD_ALGO(kd_algo_kh_compress)
KD_ALGO(kd_algo_kt_compress)
KD_ALGO(kd_algo_kh_refine)
KD_ALGO(kd_algo_gs_thin)
KD_ALGO(kd_algo_gs_compress)
