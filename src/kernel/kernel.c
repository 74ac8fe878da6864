/* kernel.c - kernel objects: names, defaults, parameter checks, creation, descriptions, and the
 * textbook reference formula (kd_kernel_ref_) the tests compare the fast paths with. The formulas
 * of each family live in their own file (kernel_list.h); the block routines in kernel_block.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel_impl.h"
#include "kdistill/kd_job.h" /* kd_kernel_has_ls (user tier) */

static const char *const kd_kernel_names_[] = {
#define KD_KERNEL_NAME_(e, n, s) n,
    KD_KERNEL_LIST(KD_KERNEL_NAME_)
#undef KD_KERNEL_NAME_
};

const char *kd_kernel_name(kd_kernel_type t) {
  return (t >= 0 && t < KD_KERNEL_COUNT_) ? kd_kernel_names_[t] : "?";
}

kd_kernel_type kd_kernel_from_name(const char *name) {
  for (int i = 0; name && i < KD_KERNEL_COUNT_; i++)
    if (strcmp(kd_kernel_names_[i], name) == 0) return (kd_kernel_type)i;
  return KD_KERNEL_COUNT_;
}

static const kd_kernel_family *const kd_kernel_families_[] = {
#define KD_KFAM(sym) &sym,
#include "kernel/kernel_list.h"
#undef KD_KFAM
};

static const kd_kernel_family *kd_kernel_family_(kd_kernel_type t) {
  for (size_t i = 0; i < sizeof kd_kernel_families_ / sizeof kd_kernel_families_[0]; i++)
    if (kd_kernel_families_[i]->type == t) return kd_kernel_families_[i];
  return NULL;
}

const kd_kernel_family *kd_kernel_family_of_(kd_kernel_type t) { return kd_kernel_family_(t); }

kd_kernel_params kd_kernel_params_default(kd_kernel_type t) {
  kd_kernel_params p;
  memset(&p, 0, sizeof p);
  p.type = t;
  p.ls = 1.0;
  p.beta = 0.5;
  p.c = 1.0;
  p.degree = 2;
  p.order = 1;
  p.dk = 0;
  p.median_sample = 1000;
  p.base = KD_KERNEL_IMQ;
  p.eps = 0.1;
  p.ls_phi = 1.0;
  p.n_ls = 3;
  p.ls_ratio = 2.0;
  return p;
}

/* Bernoulli polynomials B_2, B_4, B_6 on [0,1]. */
static double kd_bernoulli_(int r, double x) {
  switch (r) {
    case 1:
      return x * x - x + 1.0 / 6.0;
    case 2:
      return x * x * x * x - 2 * x * x * x + x * x - 1.0 / 30.0;
    default:
      return x * x * x * x * x * x - 3 * x * x * x * x * x + 2.5 * x * x * x * x - 0.5 * x * x +
             1.0 / 42.0;
  }
}

double kd_kernel_ref_(const kd_kernel *k, const double *x, const double *y) {
  const kd_kernel_params *p = &k->p;
  const int d = k->d;
  double s2 = 0.0, dot = 0.0;
  switch (p->type) {
    case KD_KERNEL_LINEAR:
    case KD_KERNEL_POLYNOMIAL:
      for (int j = 0; j < d; j++) dot += x[j] * y[j];
      if (p->type == KD_KERNEL_LINEAR) return dot + p->c;
      return pow(dot / (p->ls * p->ls) + p->c, p->degree);
    case KD_KERNEL_SOBOLEV: {
      double prod = 1.0;
      for (int j = 0; j < d; j++) {
        double t = x[j] - y[j];
        t -= floor(t);
        prod *= 1.0 + k->sob_coef * kd_bernoulli_(p->order, t);
      }
      return prod;
    }
    case KD_KERNEL_STEIN:
      return kd_stein_ref_(k, x, y);
    case KD_KERNEL_DEEP: {
      double u2 = 0.0;
      for (int j = 0; j < p->dx; j++) s2 += (x[j] - y[j]) * (x[j] - y[j]);
      for (int j = p->dx; j < d; j++) u2 += (x[j] - y[j]) * (x[j] - y[j]);
      return ((1.0 - p->eps) * exp(-u2 / (2 * p->ls_phi * p->ls_phi)) + p->eps) *
             exp(-s2 / (2 * p->ls * p->ls));
    }
    case KD_KERNEL_GAUSSIAN_SUM: {
      for (int j = 0; j < d; j++) s2 += (x[j] - y[j]) * (x[j] - y[j]);
      double sum = 0.0;
      for (int j = 0; j < p->n_ls; j++) {
        const double l = p->ls * pow(p->ls_ratio, j - 0.5 * (p->n_ls - 1));
        sum += exp(-s2 / (2 * l * l));
      }
      return sum / p->n_ls;
    }
    case KD_KERNEL_ATTENTION: {
      double v = 0.0;
      for (int j = 0; j < p->dk; j++) dot += x[j] * y[j];
      for (int j = p->dk; j < d; j++) v += x[j] * y[j];
      return exp(dot / (p->ls * p->ls)) * v;
    }
    default:
      break;
  }
  for (int j = 0; j < d; j++) {
    double t = x[j] - y[j];
    s2 += t * t;
  }
  double r = sqrt(s2), l = p->ls;
  switch (p->type) {
    case KD_KERNEL_GAUSSIAN:
      return exp(-s2 / (2 * l * l));
    case KD_KERNEL_LAPLACE:
    case KD_KERNEL_MATERN12:
      return exp(-r / l);
    case KD_KERNEL_IMQ:
      return pow(1.0 + s2 / (l * l), -p->beta);
    case KD_KERNEL_MATERN32: {
      double a = sqrt(3.0) * r / l;
      return (1 + a) * exp(-a);
    }
    case KD_KERNEL_MATERN52: {
      double a = sqrt(5.0) * r / l;
      return (1 + a + a * a / 3.0) * exp(-a);
    }
    case KD_KERNEL_ENERGY:
      return 8.0 / 3.0 - r;
    default:
      return NAN;
  }
}

static int kd_kernel_has_ls_(kd_kernel_type t) {
  const kd_kernel_family *f = kd_kernel_family_(t);
  return f && f->ls_default;
}

kd_kernel_keys kd_kernel_keys_of(kd_kernel_type t) {
  const kd_kernel_family *f = kd_kernel_family_(t);
  kd_kernel_keys k = {NULL, NULL, 0};
  if (f) {
    k.ls_default = f->ls_default;
    k.keys = f->keys;
    k.n_keys = f->n_keys;
  }
  return k;
}

int kd_kernel_type_has(kd_kernel_type t, unsigned caps) {
  const kd_kernel_family *f = kd_kernel_family_(t);
  return f && (f->caps & caps) == caps;
}

int kd_kernel_has(const kd_kernel *k, unsigned caps) { return k && (k->fam->caps & caps) == caps; }

int kd_kernel_has_ls(const char *name) {
  const kd_kernel_type t = kd_kernel_from_name(name);
  return t == KD_KERNEL_COUNT_ ? -1 : kd_kernel_has_ls_(t);
}

static kd_err kd_kernel_check_(const kd_kernel_params *p, int d) {
  kd_err err = KD_OK;
  KD_CHECK(p->type >= 0 && p->type < KD_KERNEL_COUNT_, KD_ERR_CONFIG,
           "kernel.type: unknown kernel");
  KD_CHECK(d >= 1, KD_ERR_CONFIG, "kernel: dimension must be >= 1");
  KD_CHECK(p->ls_median || (p->ls > 0 && isfinite(p->ls)), KD_ERR_CONFIG,
           "kernel.ls: must be > 0 or 'median' (got %g)", p->ls);
  /* ls^2 and 1/ls^2 must be finite normal numbers, or k(x, x) = exp(-0 * inf) is NaN */
  KD_CHECK(p->ls_median || p->ls >= 1e-150, KD_ERR_CONFIG,
           "kernel.ls: %g is too small (the kernels square it; use ls >= 1e-150 or rescale the "
           "data)",
           p->ls);
  if (p->type == KD_KERNEL_IMQ)
    KD_CHECK(p->beta > 0 && isfinite(p->beta), KD_ERR_CONFIG, "kernel.beta: must be > 0 (got %g)",
             p->beta);
  if (p->type == KD_KERNEL_POLYNOMIAL) {
    KD_CHECK(p->degree >= 1, KD_ERR_CONFIG, "kernel.degree: must be >= 1 (got %d)", p->degree);
    KD_CHECK(p->c >= 0 && isfinite(p->c), KD_ERR_CONFIG,
             "kernel.c: must be >= 0 for a PSD kernel (got %g)", p->c);
  }
  if (p->type == KD_KERNEL_LINEAR)
    KD_CHECK(p->c >= 0 && isfinite(p->c), KD_ERR_CONFIG,
             "kernel.c: must be >= 0 for a PSD kernel (got %g)", p->c);
  if (p->type == KD_KERNEL_SOBOLEV)
    KD_CHECK(p->order >= 1 && p->order <= 3, KD_ERR_CONFIG,
             "kernel.order: must be 1, 2 or 3 (got %d)", p->order);
  if (p->type == KD_KERNEL_STEIN) {
    KD_CHECK(
        p->base == KD_KERNEL_GAUSSIAN || p->base == KD_KERNEL_IMQ || p->base == KD_KERNEL_MATERN52,
        KD_ERR_CONFIG, "kernel.base: the Stein kernel supports gaussian, imq and matern52");
    KD_CHECK(d % 2 == 0, KD_ERR_CONFIG,
             "kernel: the Stein kernel needs rows (x, score) of even width (got %d); give the "
             "point set a score (data.score)",
             d);
    KD_CHECK(p->beta > 0 && isfinite(p->beta), KD_ERR_CONFIG, "kernel.beta: must be > 0 (got %g)",
             p->beta);
  }
  if (p->type == KD_KERNEL_ATTENTION)
    KD_CHECK(p->dk >= 1 && p->dk < d, KD_ERR_CONFIG,
             "kernel.dk: key dimension must be in [1, d-1] = [1, %d] (got %d)", d - 1, p->dk);
  if (p->type == KD_KERNEL_GAUSSIAN_SUM) {
    KD_CHECK(p->n_ls >= 1 && p->n_ls <= KD_KERNEL_MAX_LS, KD_ERR_CONFIG,
             "kernel.n_ls: must be in [1, %d] (got %d)", KD_KERNEL_MAX_LS, p->n_ls);
    KD_CHECK(isfinite(p->ls_ratio) && (p->ls_ratio > 1.0 || (p->n_ls == 1 && p->ls_ratio >= 1.0)) &&
                 p->ls_ratio <= 1e3,
             KD_ERR_CONFIG,
             "kernel.ls_ratio: the length scales must differ (ratio in (1, 1000]; 1 only with "
             "n_ls = 1; got %g with n_ls = %d)",
             p->ls_ratio, p->n_ls);
  }
  if (p->type == KD_KERNEL_DEEP) {
    KD_CHECK(p->dx >= 1 && p->dx < d, KD_ERR_CONFIG,
             "kernel.dx: the deep kernel's input columns must be in [1, d-1] = [1, %d] (got %d; "
             "a row is the input x followed by its embedding phi(x))",
             d - 1, p->dx);
    KD_CHECK(p->eps >= 0 && p->eps <= 1, KD_ERR_CONFIG, "kernel.eps: must be in [0, 1] (got %g)",
             p->eps);
    KD_CHECK(p->ls_phi_median || (p->ls_phi >= 1e-150 && isfinite(p->ls_phi)), KD_ERR_CONFIG,
             "kernel.ls_phi: must be a number in [1e-150, inf) or 'median' (got %g)", p->ls_phi);
  }
cleanup:
  return err;
}

kd_err kd_kernel_create(const kd_kernel_params *p, int d, kd_kernel **out) {
  kd_err err = KD_OK;
  kd_kernel *k = NULL;
  *out = NULL;
  KD_TRY(kd_kernel_check_(p, d));
  KD_ALLOC(k, 1);
  k->p = *p;
  k->d = d;
  k->ls_pending = p->ls_median && kd_kernel_has_ls_(p->type);
  k->ls_phi_pending = p->type == KD_KERNEL_DEEP && p->ls_phi_median;
  k->isa = kd_kernel_isa_();
  k->fam = kd_kernel_family_(p->type);
  KD_CHECK(k->fam != NULL, KD_ERR_INTERNAL, "kernel %s: no family registered",
           kd_kernel_name(p->type));
  kd_kernel_refresh_(k);
  kd_kernel_update_desc_(k);
  *out = k;
  k = NULL;
cleanup:
  free(k);
  return err;
}

void kd_kernel_refresh_(kd_kernel *k) {
  memset(k->c, 0, sizeof k->c);
  /* ls = median not yet computed: keep 1 so the constants stay finite until it is set */
  if (!(k->p.ls > 0 && isfinite(k->p.ls))) k->p.ls = 1.0;
  k->fam->setup(k);
}

void kd_kernel_update_desc_(kd_kernel *k) {
  const kd_kernel_params *p = &k->p;
  const char *nm = kd_kernel_name(p->type);
  char ls[32];
  if (k->ls_pending)
    snprintf(ls, sizeof ls, "%s", p->ls_median == 2 ? "auto" : "median");
  else
    snprintf(ls, sizeof ls, "%.17g", p->ls);
  switch (p->type) {
    case KD_KERNEL_SOBOLEV:
      snprintf(k->desc, sizeof k->desc, "%s(order=%d)", nm, p->order);
      break;
    case KD_KERNEL_ENERGY:
      snprintf(k->desc, sizeof k->desc, "%s", nm);
      break;
    case KD_KERNEL_LINEAR:
      snprintf(k->desc, sizeof k->desc, "%s(c=%.17g)", nm, p->c);
      break;
    case KD_KERNEL_POLYNOMIAL:
      snprintf(k->desc, sizeof k->desc, "%s(ls=%s,c=%.17g,degree=%d)", nm, ls, p->c, p->degree);
      break;
    case KD_KERNEL_IMQ:
      snprintf(k->desc, sizeof k->desc, "%s(ls=%s,beta=%.17g)", nm, ls, p->beta);
      break;
    case KD_KERNEL_ATTENTION:
      snprintf(k->desc, sizeof k->desc, "%s(ls=%s,dk=%d)", nm, ls, p->dk);
      break;
    case KD_KERNEL_GAUSSIAN_SUM:
      snprintf(k->desc, sizeof k->desc, "%s(ls=%s,n_ls=%d,ls_ratio=%.17g)", nm, ls, p->n_ls,
               p->ls_ratio);
      break;
    case KD_KERNEL_DEEP: {
      char lp[32];
      if (k->ls_phi_pending)
        snprintf(lp, sizeof lp, "median");
      else
        snprintf(lp, sizeof lp, "%.17g", p->ls_phi);
      snprintf(k->desc, sizeof k->desc, "%s(ls=%s,ls_phi=%s,eps=%.17g,dx=%d)", nm, ls, lp, p->eps,
               p->dx);
      break;
    }
    case KD_KERNEL_STEIN:
      if (p->base == KD_KERNEL_IMQ)
        snprintf(k->desc, sizeof k->desc, "%s(base=imq,ls=%s,beta=%.17g%s)", nm, ls, p->beta,
                 !k->pre       ? ""
                 : k->pre_diag ? ",precondition=diag"
                               : ",precondition=matrix");
      else
        snprintf(k->desc, sizeof k->desc, "%s(base=%s,ls=%s%s)", nm, kd_kernel_name(p->base), ls,
                 !k->pre       ? ""
                 : k->pre_diag ? ",precondition=diag"
                               : ",precondition=matrix");
      break;
    default:
      snprintf(k->desc, sizeof k->desc, "%s(ls=%s)", nm, ls);
  }
}

void kd_kernel_destroy(kd_kernel **k) {
  if (!k || !*k) return;
  free((*k)->pre);
  free((*k)->ws);
  free(*k);
  *k = NULL;
}

const kd_kernel_params *kd_kernel_get_params(const kd_kernel *k) { return &k->p; }
int kd_kernel_dim(const kd_kernel *k) { return k->d; }
const char *kd_kernel_describe(const kd_kernel *k) { return k->desc; }
double kd_kernel_length_scale(const kd_kernel *k) {
  return k && kd_kernel_has_ls_(k->p.type) && !k->ls_pending ? k->p.ls : 0.0;
}
double kd_kernel_length_scale_phi(const kd_kernel *k) {
  return k && k->p.type == KD_KERNEL_DEEP && !k->ls_phi_pending ? k->p.ls_phi : 0.0;
}
uint64_t kd_kernel_evals(const kd_kernel *k) { return k->evals; }
uint64_t kd_kernel_screened_evals(const kd_kernel *k) { return k->evals_screened; }
void kd_kernel_reset_evals(kd_kernel *k) {
  k->evals = 0;
  k->evals_screened = 0;
}
