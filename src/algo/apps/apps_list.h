/* apps_list.h - KD_ALGO(symbol) lines of the apps family. */
