/* dist.c - reductions, broadcasts, ring shifts and error agreement: the only raw MPI in kdistill
 * besides cli/main.c. */
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "core/ctx_impl.h"
#include "comm/dist_impl.h"

/* Seconds spent inside the communication helpers (for --verbose timings) are added to the bound
 * context's timer. */
void kd_dist_comm_add(double t0) {
  kd_ctx *c = kd_ctx_current();
  if (c) c->comm_seconds += MPI_Wtime() - t0;
}

double kd_dist_comm_seconds(void) { return kd_ctx_comm_seconds(kd_ctx_current()); }

void kd_dist_comm_seconds_reset(void) {
  kd_ctx *c = kd_ctx_current();
  if (c) {
    c->comm_seconds = 0.0;
    c->comm_bytes = c->comm_ops = 0;
  }
}

int64_t kd_dist_comm_bytes(void) {
  const kd_ctx *c = kd_ctx_current();
  return c ? c->comm_bytes : 0;
}

int64_t kd_dist_comm_ops(void) {
  const kd_ctx *c = kd_ctx_current();
  return c ? c->comm_ops : 0;
}

void kd_dist_comm_count(MPI_Comm comm, int64_t bytes) {
  kd_ctx *c = kd_ctx_current();
  if (c && kd_dist_size(comm) > 1) { /* on one rank nothing moves */
    c->comm_bytes += bytes;
    c->comm_ops++;
  }
}

int kd_dist_rank(MPI_Comm comm) {
  int r = 0;
  if (MPI_Comm_rank(comm, &r) != MPI_SUCCESS) r = 0;
  return r;
}

int kd_dist_size(MPI_Comm comm) {
  int s = 1;
  if (MPI_Comm_size(comm, &s) != MPI_SUCCESS) s = 1;
  return s;
}

double kd_dist_wtime(void) { return MPI_Wtime(); }

/* Error agreement: lowest failing rank becomes the root of a broadcast of (code, message). */
kd_err kd_dist_agree(MPI_Comm comm, kd_err *e) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  int size = kd_dist_size(comm), rank = kd_dist_rank(comm);
  int mine = (*e != KD_OK) ? rank : size, root = size;
  KD_MPI(MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, comm));
  kd_dist_comm_count(comm, 2 * (int64_t)sizeof mine);
  if (root == size) goto cleanup;
  struct {
    int code;
    char msg[1024];
    char key[128];
    char known[400];
  } pkt;
  memset(&pkt, 0, sizeof pkt);
  if (rank == root) {
    pkt.code = (int)*e;
    strncpy(pkt.msg, kd_err_message(), sizeof pkt.msg - 1);
    strncpy(pkt.key, kd_err_key(), sizeof pkt.key - 1);
    strncpy(pkt.known, kd_err_known(), sizeof pkt.known - 1);
  }
  KD_MPI(MPI_Bcast(&pkt, (int)sizeof pkt, MPI_BYTE, root, comm));
  kd_dist_comm_count(comm, (int64_t)sizeof pkt);
  *e = (kd_err)pkt.code;
  kd_err_set_message(pkt.msg);
  kd_err_put_key(pkt.key);
  kd_err_set_known(pkt.key, pkt.known);
cleanup:
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_agreed(MPI_Comm comm, kd_err e) {
  kd_err a = kd_dist_agree(comm, &e);
  return a != KD_OK ? a : e;
}

/* (value, index, error) triple reduced in one Allreduce with a user-defined operation, followed
 * by up to KD_ARG_PAY_MAX doubles of payload that travel with the winning (value, index). */
enum { KD_ARG_PAY_MAX = 65 };
typedef struct {
  double v;
  int64_t idx;
  int64_t err_rank; /* lowest failing rank, or INT64_MAX */
  int64_t code;
  double pay[KD_ARG_PAY_MAX];
} kd_arg_pkt;

/* the payload length of a packet of the datatype dt (its size less the header) */
static int kd_arg_npay_(MPI_Datatype *dt) {
  int sz = 0;
  if (MPI_Type_size(*dt, &sz) != MPI_SUCCESS) sz = (int)offsetof(kd_arg_pkt, pay);
  return (sz - (int)offsetof(kd_arg_pkt, pay)) / (int)sizeof(double);
}

static void kd_arg_merge_(kd_arg_pkt *acc, const kd_arg_pkt *x, int want_max, int npay) {
  if (x->err_rank < acc->err_rank) {
    acc->err_rank = x->err_rank;
    acc->code = x->code;
  }
  if (x->idx < 0) return;
  int take = acc->idx < 0;
  if (!take) {
    int better = want_max ? (x->v > acc->v) : (x->v < acc->v);
    take = better || (x->v == acc->v && x->idx < acc->idx);
  }
  if (take) {
    acc->v = x->v;
    acc->idx = x->idx;
    if (npay > 0) memcpy(acc->pay, x->pay, sizeof(double) * (size_t)npay);
  }
}

/* the packets are contiguous bytes of the datatype's size (header and payload), len of them */
static void kd_arg_op_(void *in, void *inout, int *len, MPI_Datatype *dt, int want_max) {
  const int npay = kd_arg_npay_(dt);
  const size_t st = offsetof(kd_arg_pkt, pay) + sizeof(double) * (size_t)npay;
  char *a = in, *b = inout;
  for (int i = 0; i < *len; i++) {
    kd_arg_pkt x, acc;
    memcpy(&x, a + st * (size_t)i, st);
    memcpy(&acc, b + st * (size_t)i, st);
    kd_arg_merge_(&acc, &x, want_max, npay);
    memcpy(b + st * (size_t)i, &acc, st);
  }
}

static void kd_argmin_op_(void *in, void *inout, int *len, MPI_Datatype *dt) {
  kd_arg_op_(in, inout, len, dt, 0);
}

static void kd_argmax_op_(void *in, void *inout, int *len, MPI_Datatype *dt) {
  kd_arg_op_(in, inout, len, dt, 1);
}

static kd_err kd_dist_arg_(MPI_Comm comm, double v, kd_gidx idx, kd_err e, const double *pay,
                           int npay, double *vout, kd_gidx *iout, double *pout, int want_max) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  MPI_Op op = MPI_OP_NULL;
  MPI_Datatype dt = MPI_DATATYPE_NULL;
  kd_arg_pkt in, out;
  int rank = kd_dist_rank(comm);
  KD_CHECK(npay >= 0 && npay <= KD_ARG_PAY_MAX, KD_ERR_INTERNAL,
           "arg-min payload of %d values (at most %d)", npay, (int)KD_ARG_PAY_MAX);
  const int st = (int)(offsetof(kd_arg_pkt, pay) + sizeof(double) * (size_t)npay);
  memset(&in, 0, sizeof in);
  in.v = v;
  in.idx = idx;
  in.err_rank = (e != KD_OK) ? rank : INT64_MAX;
  in.code = (int64_t)e;
  if (npay > 0 && pay) memcpy(in.pay, pay, sizeof(double) * (size_t)npay);
  KD_MPI(MPI_Type_contiguous(st, MPI_BYTE, &dt));
  KD_MPI(MPI_Type_commit(&dt));
  KD_MPI(MPI_Op_create(want_max ? kd_argmax_op_ : kd_argmin_op_, 1, &op));
  KD_MPI(MPI_Allreduce(&in, &out, 1, dt, op, comm));
  kd_dist_comm_count(comm, 2 * (int64_t)st);
  if (out.err_rank != INT64_MAX) {
    /* fetch the message of the failing rank so rank 0 can print it */
    kd_err agreed = (kd_err)out.code;
    kd_err local = e;
    KD_TRY(kd_dist_agree(comm, &local));
    err = agreed;
    goto cleanup;
  }
  *vout = out.v;
  *iout = out.idx;
  if (npay > 0 && pout) memcpy(pout, out.pay, sizeof(double) * (size_t)npay);
cleanup:
  if (op != MPI_OP_NULL) MPI_Op_free(&op);
  if (dt != MPI_DATATYPE_NULL) MPI_Type_free(&dt);
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_argmin_pay(MPI_Comm comm, double v, kd_gidx idx, kd_err e, const double *pay,
                          int npay, double *vout, kd_gidx *iout, double *pout) {
  return kd_dist_arg_(comm, v, idx, e, pay, npay, vout, iout, pout, 0);
}

kd_err kd_dist_argmin(MPI_Comm comm, double v, kd_gidx idx, kd_err e, double *vout, kd_gidx *iout) {
  return kd_dist_arg_(comm, v, idx, e, NULL, 0, vout, iout, NULL, 0);
}

kd_err kd_dist_argmax(MPI_Comm comm, double v, kd_gidx idx, kd_err e, double *vout, kd_gidx *iout) {
  return kd_dist_arg_(comm, v, idx, e, NULL, 0, vout, iout, NULL, 1);
}

static kd_err kd_dist_reduce_(MPI_Comm comm, void *buf, int n, MPI_Datatype t, MPI_Op op) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  if (n > 0) KD_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, n, t, op, comm));
  if (n > 0)
    kd_dist_comm_count(comm, 2 * 8 * (int64_t)n); /* 8-byte types only: sent and received */
cleanup:
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_sum(MPI_Comm comm, double *buf, int n) {
  return kd_dist_reduce_(comm, buf, n, MPI_DOUBLE, MPI_SUM);
}
kd_err kd_dist_sum_i64(MPI_Comm comm, int64_t *buf, int n) {
  return kd_dist_reduce_(comm, buf, n, MPI_INT64_T, MPI_SUM);
}
kd_err kd_dist_sum_u64(MPI_Comm comm, uint64_t *buf, int n) {
  return kd_dist_reduce_(comm, buf, n, MPI_UINT64_T, MPI_SUM);
}
kd_err kd_dist_max(MPI_Comm comm, double *buf, int n) {
  return kd_dist_reduce_(comm, buf, n, MPI_DOUBLE, MPI_MAX);
}
kd_err kd_dist_min(MPI_Comm comm, double *buf, int n) {
  return kd_dist_reduce_(comm, buf, n, MPI_DOUBLE, MPI_MIN);
}
kd_err kd_dist_max_i64(MPI_Comm comm, int64_t *buf, int n) {
  return kd_dist_reduce_(comm, buf, n, MPI_INT64_T, MPI_MAX);
}

#define KD_CHUNK_ ((int64_t)1 << 30)

kd_err kd_dist_bcast(MPI_Comm comm, void *buf, int64_t nbytes, int root) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  char *p = buf;
  for (int64_t off = 0; off < nbytes; off += KD_CHUNK_) {
    int64_t len = nbytes - off < KD_CHUNK_ ? nbytes - off : KD_CHUNK_;
    KD_MPI(MPI_Bcast(p + off, (int)len, MPI_BYTE, root, comm));
  }
  kd_dist_comm_count(comm, nbytes);
cleanup:
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_ring_shift(MPI_Comm comm, const double *send, int64_t ns, double *recv, int64_t cap,
                          int64_t *nr) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  int size = kd_dist_size(comm), rank = kd_dist_rank(comm);
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  int64_t sn = ns, rn = 0;
  MPI_Status st;
  KD_CHECK(ns < KD_CHUNK_ && cap < KD_CHUNK_ * 2, KD_ERR_INTERNAL, "ring shift block too large");
  KD_MPI(MPI_Sendrecv(&sn, 1, MPI_INT64_T, right, 901, &rn, 1, MPI_INT64_T, left, 901, comm, &st));
  KD_CHECK(rn <= cap, KD_ERR_INTERNAL, "ring shift: %lld values do not fit %lld", (long long)rn,
           (long long)cap);
  KD_MPI(MPI_Sendrecv(send, (int)ns, MPI_DOUBLE, right, 902, recv, (int)rn, MPI_DOUBLE, left, 902,
                      comm, &st));
  kd_dist_comm_count(comm, 8 * (ns + rn + 2));
  *nr = rn;
cleanup:
  kd_dist_comm_add(kd_t0_);
  return err;
}

/* The sum of the per-rank counts of a v-collective. */
static int64_t kd_dist_total_(MPI_Comm comm, const int *counts) {
  int64_t t = 0;
  for (int r = 0; r < kd_dist_size(comm); r++) t += counts[r];
  return t;
}

static kd_err kd_dist_counts_(MPI_Comm comm, int64_t n_local, int **counts, int **displs) {
  kd_err err = KD_OK;
  int size = kd_dist_size(comm);
  int64_t *all = NULL;
  KD_ALLOC(all, size);
  KD_ALLOC(*counts, size);
  KD_ALLOC(*displs, size);
  KD_MPI(MPI_Allgather(&n_local, 1, MPI_INT64_T, all, 1, MPI_INT64_T, comm));
  kd_dist_comm_count(comm, 8 * (int64_t)(size + 1));
  int64_t off = 0;
  for (int r = 0; r < size; r++) {
    KD_CHECK(off + all[r] < ((int64_t)1 << 31), KD_ERR_INTERNAL, "gather of %lld values too large",
             (long long)(off + all[r]));
    (*counts)[r] = (int)all[r];
    (*displs)[r] = (int)off;
    off += all[r];
  }
cleanup:
  free(all);
  return err;
}

kd_err kd_dist_allgather(MPI_Comm comm, const double *in, int64_t n, double *out) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  const int64_t size = kd_dist_size(comm);
  KD_CHECK(n >= 0 && n * size < ((int64_t)1 << 31), KD_ERR_INTERNAL,
           "gather of %lld values too large", (long long)(n * size));
  KD_MPI(MPI_Allgather(in, (int)n, MPI_DOUBLE, out, (int)n, MPI_DOUBLE, comm));
  kd_dist_comm_count(comm, 8 * (n + n * size));
cleanup:
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_allgatherv_known(MPI_Comm comm, const double *in, const int *counts,
                                const int *displs, double *out) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  const int rank = kd_dist_rank(comm);
  KD_MPI(MPI_Allgatherv(in, counts[rank], MPI_DOUBLE, out, counts, displs, MPI_DOUBLE, comm));
  kd_dist_comm_count(comm, 8 * (counts[rank] + kd_dist_total_(comm, counts)));
cleanup:
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_allgatherv(MPI_Comm comm, const double *in, int64_t n_local, double *out) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  int *counts = NULL, *displs = NULL;
  KD_TRY(kd_dist_counts_(comm, n_local, &counts, &displs));
  KD_MPI(MPI_Allgatherv(in, (int)n_local, MPI_DOUBLE, out, counts, displs, MPI_DOUBLE, comm));
  kd_dist_comm_count(comm, 8 * (n_local + kd_dist_total_(comm, counts)));
cleanup:
  free(counts);
  free(displs);
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_allgatherv_i64(MPI_Comm comm, const int64_t *in, int64_t n_local, int64_t *out) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  int *counts = NULL, *displs = NULL;
  KD_TRY(kd_dist_counts_(comm, n_local, &counts, &displs));
  KD_MPI(MPI_Allgatherv(in, (int)n_local, MPI_INT64_T, out, counts, displs, MPI_INT64_T, comm));
  kd_dist_comm_count(comm, 8 * (n_local + kd_dist_total_(comm, counts)));
cleanup:
  free(counts);
  free(displs);
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_gatherv(MPI_Comm comm, const double *in, int64_t n_local, double *out, int root) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  int *counts = NULL, *displs = NULL;
  KD_TRY(kd_dist_counts_(comm, n_local, &counts, &displs));
  KD_MPI(MPI_Gatherv(in, (int)n_local, MPI_DOUBLE, out, counts, displs, MPI_DOUBLE, root, comm));
  kd_dist_comm_count(comm,
                     8 * (kd_dist_rank(comm) == root ? kd_dist_total_(comm, counts) : n_local));
cleanup:
  free(counts);
  free(displs);
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_barrier(MPI_Comm comm) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  KD_MPI(MPI_Barrier(comm));
  kd_dist_comm_count(comm, 0);
cleanup:
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_split(MPI_Comm comm, int color, MPI_Comm *out) {
  kd_err err = KD_OK;
  *out = MPI_COMM_NULL;
  KD_MPI(MPI_Comm_split(comm, color, kd_dist_rank(comm), out));
  KD_MPI(MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN));
cleanup:
  return err;
}

kd_err kd_dist_dup(MPI_Comm comm, MPI_Comm *out) {
  kd_err err = KD_OK;
  *out = MPI_COMM_NULL;
  KD_MPI(MPI_Comm_dup(comm, out));
  KD_MPI(MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN));
cleanup:
  return err;
}

void kd_dist_comm_free(MPI_Comm *c) {
  if (c && *c != MPI_COMM_NULL && *c != MPI_COMM_WORLD && *c != MPI_COMM_SELF) MPI_Comm_free(c);
  if (c) *c = MPI_COMM_NULL;
}

kd_err kd_dist_send(MPI_Comm comm, const double *buf, int64_t n, int dest, int tag) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  KD_CHECK(n < KD_CHUNK_, KD_ERR_INTERNAL, "send of %lld values too large", (long long)n);
  KD_MPI(MPI_Send(&n, 1, MPI_INT64_T, dest, tag, comm));
  KD_MPI(MPI_Send(buf, (int)n, MPI_DOUBLE, dest, tag, comm));
  kd_dist_comm_count(comm, 8 * (n + 1));
cleanup:
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_recv(MPI_Comm comm, double *buf, int64_t cap, int64_t *nr, int src, int tag) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  int64_t n = 0;
  KD_MPI(MPI_Recv(&n, 1, MPI_INT64_T, src, tag, comm, MPI_STATUS_IGNORE));
  KD_CHECK(n <= cap, KD_ERR_INTERNAL, "recv: %lld values do not fit %lld", (long long)n,
           (long long)cap);
  KD_MPI(MPI_Recv(buf, (int)n, MPI_DOUBLE, src, tag, comm, MPI_STATUS_IGNORE));
  kd_dist_comm_count(comm, 8 * (n + 1));
  *nr = n;
cleanup:
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_timing_report(MPI_Comm comm, double total_seconds, kd_result *res) {
  kd_err err = KD_OK;
  const int size = kd_dist_size(comm);
  const kd_ctx *c = kd_ctx_current();
  const double comm_s = kd_dist_comm_seconds(), comp_s = total_seconds - comm_s;
  const double bytes = c ? (double)c->comm_bytes : 0.0, ops = c ? (double)c->comm_ops : 0.0;
  double mx[4] = {comp_s, comm_s, bytes, ops}, mn[4] = {comp_s, comm_s, bytes, ops},
         sum[4] = {comp_s, comm_s, bytes, ops};
  KD_MPI(MPI_Allreduce(MPI_IN_PLACE, mx, 4, MPI_DOUBLE, MPI_MAX, comm));
  KD_MPI(MPI_Allreduce(MPI_IN_PLACE, mn, 4, MPI_DOUBLE, MPI_MIN, comm));
  KD_MPI(MPI_Allreduce(MPI_IN_PLACE, sum, 4, MPI_DOUBLE, MPI_SUM, comm));
  kd_log_verbose(
      "timings over %d ranks (s): compute min %.3f mean %.3f max %.3f | "
      "communication min %.3f mean %.3f max %.3f",
      size, mn[0], sum[0] / size, mx[0], mn[1], sum[1] / size, mx[1]);
  kd_log_verbose(
      "communication per rank: %.4g / %.4g / %.4g MB (min / mean / max), %.0f / %.0f "
      "operations (mean / max)",
      mn[2] / 1e6, sum[2] / size / 1e6, mx[2] / 1e6, sum[3] / size, mx[3]);
  if (res) { /* every rank sets the same values: the output stays rank-replicated */
    kd_err lerr = kd_result_set_count(res, "comm_bytes_max", (int64_t)mx[2]);
    if (!lerr) lerr = kd_result_set_count(res, "comm_bytes_mean", (int64_t)(sum[2] / size));
    if (!lerr) lerr = kd_result_set_count(res, "comm_ops_max", (int64_t)mx[3]);
    if (!lerr) lerr = kd_result_set_metric(res, "comm_seconds_max", mx[1]);
    KD_TRY(kd_dist_agreed(comm, lerr)); /* a failed allocation must not leave the others waiting */
  }
cleanup:
  return err;
}
