/* blacs.c - BLACS process grids built from an explicit communicator (no MPI_COMM_WORLD). */
#include <math.h>
#include <stdlib.h>

#include "comm/dist_impl.h"
#include "la/la_dist_impl.h"

/* C interface of BLACS (Debian's libscalapack-openmpi). */
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);

kd_err kd_la_grid_create(MPI_Comm comm, kd_la_grid **out) {
  kd_err err = KD_OK;
  kd_la_grid *g = NULL;
  *out = NULL;
  KD_ALLOC(g, 1);
  const int size = kd_dist_size(comm);
  int pr = (int)floor(sqrt((double)size));
  while (pr > 1 && size % pr) pr--;
  g->sys_handle = Csys2blacs_handle(comm);
  g->ctxt = g->sys_handle;
  Cblacs_gridinit(&g->ctxt, "Row", pr, size / pr);
  Cblacs_gridinfo(g->ctxt, &g->nprow, &g->npcol, &g->myrow, &g->mycol);
  KD_CHECK(g->myrow >= 0 && g->mycol >= 0 && g->nprow * g->npcol == size, KD_ERR_LA,
           "BLACS grid %d x %d over %d ranks did not place this rank", pr, size / pr, size);
  *out = g;
  g = NULL;
cleanup:
  if (g) {
    if (g->myrow >= 0) Cblacs_gridexit(g->ctxt);
    Cfree_blacs_system_handle(g->sys_handle);
    free(g);
  }
  return err;
}

void kd_la_grid_destroy(kd_la_grid **g) {
  if (!g || !*g) return;
  Cblacs_gridexit((*g)->ctxt);
  Cfree_blacs_system_handle((*g)->sys_handle);
  free(*g);
  *g = NULL;
}
