/* quadrature_list.h - KD_ALGO(symbol) lines of the quadrature family. */
