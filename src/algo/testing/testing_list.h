/* testing_list.h - KD_ALGO(symbol) lines of the testing family. */
