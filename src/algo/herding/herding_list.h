/* herding_list.h - KD_ALGO(symbol) lines of the herding family. */
