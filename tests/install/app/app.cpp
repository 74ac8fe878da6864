// app.cpp - the same from C++: the public headers are usable from a C++ translation unit.
#include <kdistill/kdistill.h>
#include <mpi.h>

#include <cstdio>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  kd_ctx *ctx = nullptr;
  kd_err err = kd_ctx_create(MPI_COMM_WORLD, &ctx);
  std::printf("%s %s\n", kd_err_name(err), kd_err_string(KD_ERR_CONFIG));
  kd_ctx_destroy(&ctx);
  MPI_Finalize();
  return err == KD_OK ? 0 : 1;
}
