/* pairing.c - the `pairing: local` order of the halving rules: every halving rule of App. B keeps
 * one point of each consecutive pair of its input sequence, and its sub-Gaussian constant (Prop.
 * B.2: b_max = max_i ||k(x_2i-1,.) - k(x_2i,.)||) holds for any sequence fixed before the coins are
 * drawn. Ordering the sequence so that the two points of a pair are close makes every b_i small:
 * a k-d split (median of the widest coordinate, halves of even size, ties by position) down to
 * cells of two points. Deterministic, no kernel evaluations; the median by selection, so
 * O(n log n) (expected) in all. */
#include <stdlib.h>

#include "algo/thinning/thin_impl.h"

typedef struct {
  double key;
  kd_lidx id;
} kd_pair_key_;

/* total order: key, then row (so the split is deterministic with ties) */
static int kd_pair_less_(const kd_pair_key_ *x, const kd_pair_key_ *y) {
  return x->key < y->key || (x->key == y->key && x->id < y->id);
}

static void kd_pair_swap_(kd_pair_key_ *a, kd_pair_key_ *b) {
  kd_pair_key_ t = *a;
  *a = *b;
  *b = t;
}

/* Rearrange a[0..s) so that a[0..m) precede a[m..s) in the total order (selection of the m-th
 * element; Lomuto partitions around the median of three). 0 < m < s. */
static void kd_pair_select_(kd_pair_key_ *a, kd_lidx s, kd_lidx m) {
  kd_lidx lo = 0, hi = s - 1;
  while (hi > lo) {
    kd_lidx mid = lo + (hi - lo) / 2;
    if (kd_pair_less_(&a[mid], &a[lo])) kd_pair_swap_(&a[mid], &a[lo]);
    if (kd_pair_less_(&a[hi], &a[lo])) kd_pair_swap_(&a[hi], &a[lo]);
    if (kd_pair_less_(&a[mid], &a[hi])) kd_pair_swap_(&a[mid], &a[hi]);
    /* a[hi] is now the median of the three: the pivot */
    kd_lidx st = lo;
    for (kd_lidx i = lo; i < hi; i++)
      if (kd_pair_less_(&a[i], &a[hi])) kd_pair_swap_(&a[i], &a[st++]);
    kd_pair_swap_(&a[st], &a[hi]);
    if (st == m) return;
    if (st < m)
      lo = st + 1;
    else
      hi = st - 1;
  }
}

/* the widest coordinate of the rows idx[0..s) (the first on ties); lo, hi: d scratch each. Row by
 * row, so that each row is read once and contiguously. */
static int kd_pair_widest_(const double *X, int d, const kd_lidx *idx, kd_lidx s, double *lo,
                           double *hi) {
  for (int j = 0; j < d; j++) lo[j] = hi[j] = X[idx[0] * d + j];
  for (kd_lidx i = 1; i < s; i++) {
    const double *x = X + idx[i] * d;
    for (int j = 0; j < d; j++) {
      lo[j] = x[j] < lo[j] ? x[j] : lo[j];
      hi[j] = x[j] > hi[j] ? x[j] : hi[j];
    }
  }
  int jw = 0;
  double wmax = -1.0;
  for (int j = 0; j < d; j++)
    if (hi[j] - lo[j] > wmax) {
      wmax = hi[j] - lo[j];
      jw = j;
    }
  return jw;
}

/* order idx[0..s) (s even) so that (idx[2i], idx[2i+1]) share a k-d cell; tmp: s entries, lo, hi:
 * d each */
static void kd_pair_split_(const double *X, int d, kd_lidx *idx, kd_lidx s, kd_pair_key_ *tmp,
                           double *lo, double *hi) {
  if (s <= 2) return;
  const int jw = kd_pair_widest_(X, d, idx, s, lo, hi);
  for (kd_lidx i = 0; i < s; i++) {
    tmp[i].key = X[idx[i] * d + jw];
    tmp[i].id = idx[i];
  }
  const kd_lidx left = 2 * ((s + 2) / 4); /* both halves even */
  kd_pair_select_(tmp, s, left);
  for (kd_lidx i = 0; i < s; i++) idx[i] = tmp[i].id;
  kd_pair_split_(X, d, idx, left, tmp, lo, hi);
  kd_pair_split_(X, d, idx + left, s - left, tmp, lo, hi);
}

kd_err kd_thin_pair_local(const double *X, kd_lidx n, int d, kd_lidx *perm) {
  kd_err err = KD_OK;
  kd_pair_key_ *tmp = NULL;
  double *box = NULL;
  KD_CHECK(n % 2 == 0, KD_ERR_INTERNAL, "pairing needs an even count (got %lld)", (long long)n);
  for (kd_lidx i = 0; i < n; i++) perm[i] = i;
  KD_ALLOC(tmp, n > 0 ? n : 1);
  KD_ALLOC(box, 2 * d);
  kd_pair_split_(X, d, perm, n, tmp, box, box + d);
cleanup:
  free(tmp);
  free(box);
  return err;
}
