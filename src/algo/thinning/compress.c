/* compress.c - the Compress recursion (Low-Rank Thinning Alg. B.4 with KH, Alg. B.8 with GS-Halve,
 * App. H with KH-Refine on the last round) on one rank, the remainder rule for bins whose size is
 * not a power of 4, and the Local entry points of compress_impl.h used by CTT and Thinformer.
 *
 * Compress of a node of height h (4^h rows): if h <= g return the node; else compress the four
 * children (4^(h-1) rows each), concatenate their 2^(g+h-1)-point outputs and halve the 2^(g+h+1)
 * points to 2^(g+h) with delta_node = delta * l^2 / (n_in 4^(g+1) (log4 n_in - g)), l = input
 * size of the halving (Alg. B.4). Randomness: stream KD_THIN_STREAM(node id, h). The same
 * recursion also runs over rows supplied on demand (kd_thin_compress_node_src: generated data),
 * holding only the children's outputs above a base height. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/thinning/compress_impl.h"
#include "algo/thinning/thin_impl.h"

/* The halving at a node of height h over the l concatenated child outputs Y (Alg. B.4's delta). */
static kd_err kd_compress_halve_(kd_kernel *k, kd_halve_kind kind, const double *Y, kd_lidx l,
                                 int d, double delta, double delta_den, uint64_t seed,
                                 uint64_t node, int h, kd_lidx *keep) {
  double dl = delta * (double)l * (double)l / delta_den; /* < 0: tight threshold, kept < 0 */
  if (dl >= 1.0) dl = 0.999999;
  return kd_thin_halve(k, kind, Y, l, d, dl, seed, KD_THIN_STREAM(node, h), keep);
}

/* The halving at node `node` of height h over its children's l outputs Y (their row indices map),
 * then the kept rows' indices and coordinates into out, outx (l / 2 of them). Local. */
static kd_err kd_compress_keep_(kd_kernel *k, kd_halve_kind kind, const double *Y,
                                const kd_lidx *map, kd_lidx l, int d, double delta,
                                double delta_den, uint64_t seed, uint64_t node, int h,
                                kd_lidx *keep, kd_lidx *out, double *outx, kd_lidx *n_out) {
  kd_err err = KD_OK;
  KD_TRY(kd_compress_halve_(k, kind, Y, l, d, delta, delta_den, seed, node, h, keep));
  for (kd_lidx i = 0; i < l / 2; i++) {
    out[i] = map[keep[i]];
    memcpy(outx + i * d, Y + keep[i] * d, sizeof(double) * (size_t)d);
  }
  *n_out = l / 2;
cleanup:
  return err;
}

kd_err kd_thin_compress_node(kd_kernel *k, kd_halve_kind kind, const double *X, int d, int h, int g,
                             double delta, double delta_den, uint64_t seed, uint64_t node,
                             int refine_top, kd_lidx *out, kd_lidx *n_out) {
  kd_err err = KD_OK;
  double *Y = NULL, *z = NULL;
  kd_lidx *map = NULL, *keep = NULL;
  const kd_lidx size = (kd_lidx)1 << (2 * h);
  if (h <= g) {
    for (kd_lidx i = 0; i < size; i++) out[i] = i;
    *n_out = size;
    goto cleanup;
  }
  const kd_lidx cs = size / 4;
  const kd_lidx co = (kd_lidx)1 << (g + h - 1); /* child output size */
  const kd_lidx l = 4 * co;
  KD_ALLOC(Y, l * d);
  KD_ALLOC(map, l);
  KD_ALLOC(keep, l / 2);
  for (int c = 0; c < 4; c++) {
    kd_lidx nc = 0;
    KD_TRY(kd_thin_compress_node(k, kind, X + c * cs * d, d, h - 1, g, delta, delta_den, seed,
                                 4 * node + (uint64_t)c, 0, map + c * co, &nc));
    KD_CHECK(nc == co, KD_ERR_INTERNAL, "compress: child output %lld != %lld", (long long)nc,
             (long long)co);
    for (kd_lidx i = 0; i < co; i++) {
      map[c * co + i] += c * cs;
      memcpy(Y + (c * co + i) * d, X + map[c * co + i] * d, sizeof(double) * d);
    }
  }
  KD_TRY(kd_compress_halve_(k, kind, Y, l, d, delta, delta_den, seed, node, h, keep));
  if (refine_top) {
    KD_ALLOC(z, l);
    KD_TRY(kd_kernel_matvec(k, Y, l, X, size, NULL, 0.0, z));
    for (kd_lidx i = 0; i < l; i++) z[i] /= (double)size;
    KD_TRY(kd_thin_refine(k, Y, l, d, z, keep, l / 2, 3, NULL));
  }
  for (kd_lidx i = 0; i < l / 2; i++) out[i] = map[keep[i]];
  *n_out = l / 2;
cleanup:
  free(Y);
  free(z);
  free(map);
  free(keep);
  return err;
}

kd_err kd_thin_compress_node_src(kd_kernel *k, kd_halve_kind kind, const kd_thin_rows *src,
                                 kd_lidx r0, int d, int h, int hb, int g, double delta,
                                 double delta_den, uint64_t seed, uint64_t node, kd_lidx *out,
                                 double *outx, kd_lidx *n_out) {
  kd_err err = KD_OK;
  double *X = NULL, *Y = NULL;
  kd_lidx *map = NULL, *keep = NULL;
  const kd_lidx size = (kd_lidx)1 << (2 * h);
  if (h <= hb || h <= g) { /* the rows of this node at once, then the resident recursion */
    KD_ALLOC(X, size * d);
    KD_TRY(src->get(src->ctx, r0, size, X));
    KD_TRY(kd_thin_compress_node(k, kind, X, d, h, g, delta, delta_den, seed, node, 0, out, n_out));
    for (kd_lidx i = 0; i < *n_out; i++)
      memcpy(outx + i * d, X + out[i] * d, sizeof(double) * (size_t)d);
    goto cleanup;
  }
  const kd_lidx cs = size / 4, co = (kd_lidx)1 << (g + h - 1), l = 4 * co;
  KD_ALLOC(Y, l * d);
  KD_ALLOC(map, l);
  KD_ALLOC(keep, l / 2);
  for (int c = 0; c < 4; c++) {
    kd_lidx nc = 0;
    KD_TRY(kd_thin_compress_node_src(k, kind, src, r0 + c * cs, d, h - 1, hb, g, delta, delta_den,
                                     seed, 4 * node + (uint64_t)c, map + c * co, Y + c * co * d,
                                     &nc));
    KD_CHECK(nc == co, KD_ERR_INTERNAL, "compress: child output %lld != %lld", (long long)nc,
             (long long)co);
    for (kd_lidx i = 0; i < co; i++) map[c * co + i] += c * cs;
  }
  KD_TRY(kd_compress_keep_(k, kind, Y, map, l, d, delta, delta_den, seed, node, h, keep, out, outx,
                           n_out));
cleanup:
  free(X);
  free(Y);
  free(map);
  free(keep);
  return err;
}

kd_lidx kd_thin_node_out(int h, int g) {
  return h > g ? (kd_lidx)1 << (g + h) : (kd_lidx)1 << (2 * h);
}

kd_err kd_thin_compress_join(kd_kernel *k, kd_halve_kind kind, int d, int h, int hs, int g,
                             double delta, double delta_den, uint64_t seed, uint64_t node,
                             const kd_lidx *sidx, const double *sx, kd_lidx *out, double *outx,
                             kd_lidx *n_out) {
  kd_err err = KD_OK;
  double *Y = NULL;
  kd_lidx *map = NULL, *keep = NULL;
  if (h == hs) { /* one descendant: this node itself */
    const kd_lidx so = kd_thin_node_out(h, g);
    memcpy(out, sidx, sizeof(kd_lidx) * (size_t)so);
    memcpy(outx, sx, sizeof(double) * (size_t)(so * d));
    *n_out = so;
    goto cleanup;
  }
  /* the children's outputs (co rows each), from 4^(h-1-hs) descendants each */
  const kd_lidx co = kd_thin_node_out(h - 1, g), so = kd_thin_node_out(hs, g);
  const kd_lidx per = ((kd_lidx)1 << (2 * (h - 1 - hs))) * so, l = 4 * co;
  KD_ALLOC(Y, l * d);
  KD_ALLOC(map, l);
  KD_ALLOC(keep, l / 2);
  for (int c = 0; c < 4; c++) {
    kd_lidx nc = 0;
    KD_TRY(kd_thin_compress_join(k, kind, d, h - 1, hs, g, delta, delta_den, seed,
                                 4 * node + (uint64_t)c, sidx + c * per, sx + c * per * d,
                                 map + c * co, Y + c * co * d, &nc));
    KD_CHECK(nc == co, KD_ERR_INTERNAL, "compress: child output %lld != %lld", (long long)nc,
             (long long)co);
  }
  if (h <= g) { /* no halving below the oversampling height: every row */
    memcpy(out, map, sizeof(kd_lidx) * (size_t)l);
    memcpy(outx, Y, sizeof(double) * (size_t)(l * d));
    *n_out = l;
    goto cleanup;
  }
  KD_TRY(kd_compress_keep_(k, kind, Y, map, l, d, delta, delta_den, seed, node, h, keep, out, outx,
                           n_out));
cleanup:
  free(Y);
  free(map);
  free(keep);
  return err;
}

kd_err kd_thin_remainder_halve(kd_kernel *k, kd_halve_kind kind, const double *T, kd_lidx e, int d,
                               double delta, uint64_t seed, uint64_t bin, kd_lidx *kk) {
  return kd_thin_halve(k, kind, T, 2 * e, d, delta, seed,
                       KD_THIN_STREAM(bin, KD_THIN_LEVEL_REMAINDER), kk);
}

kd_err kd_thin_absorb_remainder(kd_kernel *k, kd_halve_kind kind, const double *X, kd_lidx s,
                                kd_lidx B, int d, double delta, uint64_t seed, uint64_t bin,
                                kd_lidx *keep) {
  kd_err err = KD_OK;
  kd_lidx *kk = NULL;
  const kd_lidx e = s - B;
  KD_CHECK(e >= 0 && 2 * e <= s, KD_ERR_INTERNAL, "remainder: bin of %lld rows for %lld slots",
           (long long)s, (long long)B);
  for (kd_lidx i = 0; i < s - 2 * e; i++) keep[i] = i;
  if (e == 0) goto cleanup;
  KD_ALLOC(kk, e);
  KD_TRY(kd_thin_remainder_halve(k, kind, X + (s - 2 * e) * d, e, d, delta, seed, bin, kk));
  for (kd_lidx i = 0; i < e; i++) keep[s - 2 * e + i] = s - 2 * e + kk[i];
cleanup:
  free(kk);
  return err;
}

/* Shared body of the two Local entry points. Size rule: K = floor(log4 n), F = floor(n / 4^K)
 * roots of 4^K slots; root j takes rows [floor(j n / F), floor((j+1) n / F)) (between 4^K and
 * 2*4^K - 1 rows), absorbs its remainder by halving its last rows (kd_thin_absorb_remainder) and is
 * compressed to 2^(g+K) points: n_out = F * 2^(g+K) (= 2^g sqrt(n) when n is a power of 4). */
static kd_err kd_compress_local_(kd_kernel *k, const double *X, kd_lidx n, int d, int g,
                                 double delta, uint64_t seed, uint64_t stream, int refine,
                                 kd_lidx *idx, kd_lidx *n_out) {
  kd_err err = KD_OK;
  double *R = NULL;
  kd_lidx *keep = NULL, *o = NULL;
  *n_out = 0;
  KD_CHECK(n >= 4 && d >= 1, KD_ERR_ARG, "compress: need at least 4 rows (got %lld)", (long long)n);
  KD_CHECK(g >= 0 && g < 30, KD_ERR_ARG, "compress: g = %d out of range", g);
  KD_CHECK(delta > 0 && delta < 1, KD_ERR_ARG, "compress: delta must be in (0,1) (got %g)", delta);
  int K = 0;
  while (((kd_lidx)1 << (2 * (K + 1))) <= n) K++;
  KD_CHECK(K > g, KD_ERR_ARG,
           "compress: g = %d too large for %lld rows (need 4^(g+1) <= n, i.e. g <= %d)", g,
           (long long)n, K - 1);
  for (kd_lidx i = 0; i < n * d; i++)
    KD_CHECK(isfinite(X[i]), KD_ERR_INPUT, "compress: non-finite value in row %lld",
             (long long)(i / d + 1));
  const kd_lidx B = (kd_lidx)1 << (2 * K);
  const kd_lidx F = n / B;
  const uint64_t s2 = kd_rng_u64(seed, stream, 0x636f6d70ULL); /* per-call key */
  const double den = (double)n * pow(4.0, g + 1) * ((double)K - g);
  KD_ALLOC(R, 2 * B * d);
  KD_ALLOC(keep, 2 * B);
  KD_ALLOC(o, B);
  for (kd_lidx j = 0; j < F; j++) {
    kd_lidx r0 = j * n / F, r1 = (j + 1) * n / F;
    KD_TRY(kd_thin_absorb_remainder(k, KD_HALVE_KH, X + r0 * d, r1 - r0, B, d, delta, s2,
                                    (uint64_t)j, keep));
    for (kd_lidx i = 0; i < B; i++) memcpy(R + i * d, X + (r0 + keep[i]) * d, sizeof(double) * d);
    kd_lidx no = 0;
    KD_TRY(kd_thin_compress_node(k, KD_HALVE_KH, R, d, K, g, delta, den, s2, (uint64_t)j, refine, o,
                                 &no));
    for (kd_lidx i = 0; i < no; i++) idx[*n_out + i] = r0 + keep[o[i]];
    *n_out += no;
  }
cleanup:
  free(R);
  free(keep);
  free(o);
  return err;
}

kd_err kd_thin_kt_compress_local(kd_kernel *k, const double *X, kd_lidx n, int d, int g,
                                 double delta, uint64_t seed, uint64_t stream, kd_lidx *idx,
                                 kd_lidx *n_out) {
  return kd_compress_local_(k, X, n, d, g, delta, seed, stream, 1, idx, n_out);
}

kd_err kd_thin_kh_compress_local(kd_kernel *k, const double *X, kd_lidx n, int d, int g,
                                 double delta, uint64_t seed, uint64_t stream, kd_lidx *idx,
                                 kd_lidx *n_out) {
  return kd_compress_local_(k, X, n, d, g, delta, seed, stream, 0, idx, n_out);
}
