/* thinning_list.h - KD_ALGO(symbol) lines of the thinning family. */
