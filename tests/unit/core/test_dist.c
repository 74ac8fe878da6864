/* test_dist.c - reductions with ties, error agreement, ring shift, gathers (counts exchanged,
 * known, equal: one collective for the last two) at 1/2/4 ranks. */
#include <string.h>

#include "comm/dist_impl.h"
#include "kd_test.h"

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  int rank = kd_test_rank(), size = kd_test_size();
  double v;
  kd_gidx i;
  /* every rank offers value 1.0: ties go to the smallest global index */
  KD_TEST_OK(kd_dist_argmin(c, 1.0, 100 + 10 * (size - rank), KD_OK, &v, &i));
  KD_TEST(i == 110 && v == 1.0, "argmin tie -> smallest index, got %lld", (long long)i);
  KD_TEST_OK(kd_dist_argmax(c, (double)rank, rank, KD_OK, &v, &i));
  KD_TEST(i == size - 1 && v == size - 1, "argmax");
  /* ranks with no candidate */
  KD_TEST_OK(kd_dist_argmin(c, -5.0, rank == size - 1 ? 7 : -1, KD_OK, &v, &i));
  KD_TEST(i == 7 && v == -5.0, "argmin with empty ranks");
  /* an error on the last rank is folded into the reduction and seen everywhere */
  kd_err e = KD_OK;
  if (rank == size - 1)
    e = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__, "planted on rank %d", rank);
  kd_err r = kd_dist_argmin(c, 0.0, rank, e, &v, &i);
  KD_TEST(r == KD_ERR_INPUT, "error folded into argmin: %d", (int)r);
  KD_TEST(strstr(kd_err_message(), "planted") != NULL, "message travels: '%s'", kd_err_message());
  kd_err_clear();
  /* with a payload: the winner's travels with it (value ties: the smallest index's) */
  double pay[3] = {(double)rank, 10.0 * rank + 1, -rank - 0.5}, got_pay[3] = {0, 0, 0};
  const int win = size > 1 ? 1 : 0; /* ranks 1.. tie at 1.0, rank 0 offers 2.0 */
  KD_TEST_OK(kd_dist_argmin_pay(c, rank == 0 && size > 1 ? 2.0 : 1.0, 100 + rank, KD_OK, pay, 3, &v,
                                &i, got_pay));
  KD_TEST(i == 100 + win && v == 1.0 && got_pay[0] == win && got_pay[1] == 10.0 * win + 1 &&
              got_pay[2] == -win - 0.5,
          "argmin payload: index %lld, payload %g %g %g", (long long)i, got_pay[0], got_pay[1],
          got_pay[2]);
  e = rank == size - 1 ? kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__, "payload planted") : KD_OK;
  KD_TEST(kd_dist_argmin_pay(c, 0.0, rank, e, pay, 3, &v, &i, got_pay) == KD_ERR_INPUT,
          "error folded into the payload reduction");
  kd_err_clear();
  KD_TEST(kd_dist_argmin_pay(c, 0.0, rank, KD_OK, pay, 66, &v, &i, got_pay) == KD_ERR_INTERNAL,
          "a payload above 65 values is refused on every rank");
  kd_err_clear();
  /* agreement */
  e = (rank == size - 1) ? kd_err_set(KD_ERR_FILE, __FILE__, __LINE__, "missing file x") : KD_OK;
  KD_TEST_OK(kd_dist_agree(c, &e));
  KD_TEST(e == KD_ERR_FILE, "agreed code");
  KD_TEST(strcmp(kd_err_message(), "missing file x") == 0, "agreed message");
  kd_err_clear();
  e = KD_OK;
  KD_TEST_OK(kd_dist_agree(c, &e));
  KD_TEST(e == KD_OK, "no error stays no error");
  /* sums */
  double s[2] = {1.0, (double)rank};
  KD_TEST_OK(kd_dist_sum(c, s, 2));
  KD_TEST(s[0] == size && s[1] == size * (size - 1) / 2.0, "sum");
  /* ring: each rank sends rank+1 copies of its rank */
  double send[8], recv[8];
  int64_t nr = 0;
  for (int k = 0; k <= rank; k++) send[k] = rank;
  KD_TEST_OK(kd_dist_ring_shift(c, send, rank + 1, recv, 8, &nr));
  int left = (rank - 1 + size) % size;
  KD_TEST(nr == left + 1 && recv[0] == left, "ring from left");
  /* allgatherv */
  double mine[4], all[16];
  for (int k = 0; k <= rank; k++) mine[k] = 10 * rank + k;
  KD_TEST_OK(kd_dist_allgatherv(c, mine, rank + 1, all));
  int pos = 0, ok = 1;
  for (int q = 0; q < size; q++)
    for (int k = 0; k <= q; k++) ok &= all[pos++] == 10 * q + k;
  KD_TEST(ok, "allgatherv order");
  /* the same with every rank's count known (one collective, not two), and equal counts */
  int cnt[16], dsp[16];
  for (int q = 0, at = 0; q < size; at += q + 1, q++) {
    cnt[q] = q + 1;
    dsp[q] = at;
  }
  double all2[16], all3[16];
  kd_dist_comm_seconds_reset();
  KD_TEST_OK(kd_dist_allgatherv_known(c, mine, cnt, dsp, all2));
  const int64_t ops_known = kd_dist_comm_ops();
  KD_TEST_OK(kd_dist_allgather(c, mine, 1, all3));
  const int64_t ops_equal = kd_dist_comm_ops() - ops_known;
  KD_TEST_OK(kd_dist_allgatherv(c, mine, rank + 1, all));
  const int64_t ops_v = kd_dist_comm_ops() - ops_known - ops_equal;
  ok = !memcmp(all, all2, sizeof(double) * (size_t)(size * (size + 1) / 2));
  for (int q = 0; q < size; q++) ok &= all3[q] == 10 * q;
  KD_TEST(ok, "allgatherv_known and allgather order");
  KD_TEST(ops_known == (size > 1) && ops_equal == (size > 1) && ops_v == 2 * (size > 1),
          "operations: known counts %lld, equal counts %lld, counts exchanged %lld",
          (long long)ops_known, (long long)ops_equal, (long long)ops_v);
  /* communication-time accounting behind --verbose timings */
  kd_dist_comm_seconds_reset();
  KD_TEST(kd_dist_comm_seconds() == 0.0, "reset clears the accumulator");
  double before = kd_dist_comm_seconds();
  for (int k = 0; k < 10; k++) KD_TEST_OK(kd_dist_barrier(c));
  KD_TEST(kd_dist_comm_seconds() >= before && kd_dist_comm_seconds() < 60.0,
          "accumulates barrier time: %g", kd_dist_comm_seconds());
  /* communication volume: payload bytes in plus out of this rank, one count per operation */
  kd_dist_comm_seconds_reset();
  KD_TEST(kd_dist_comm_bytes() == 0 && kd_dist_comm_ops() == 0, "reset clears the volume");
  double ten[10] = {0};
  char blob[100] = {0};
  KD_TEST_OK(kd_dist_sum(c, ten, 10));
  KD_TEST_OK(kd_dist_bcast(c, blob, 100, 0));
  const int many = kd_dist_size(c) > 1; /* on one rank nothing moves: 0 bytes, 0 operations */
  KD_TEST(kd_dist_comm_bytes() == (many ? 2 * 80 + 100 : 0) && kd_dist_comm_ops() == 2 * many,
          "volume of a 10-value sum and a 100-byte broadcast: %lld bytes, %lld operations",
          (long long)kd_dist_comm_bytes(), (long long)kd_dist_comm_ops());
  kd_result rep = KD_RESULT_INIT;
  double got = -1;
  KD_TEST_OK(kd_dist_timing_report(c, kd_dist_comm_seconds() + 1.0, &rep));
  KD_TEST(kd_result_get_metric(&rep, "comm_bytes_max", &got) && got == (many ? 260.0 : 0.0),
          "comm_bytes_max = %g (260 on every rank of several)", got);
  KD_TEST(kd_result_get_metric(&rep, "comm_ops_max", &got) && got == 2.0 * many,
          "comm_ops_max = %g", got);
  kd_result_free(&rep);
  return kd_test_finish();
}
