/* io_npy.c - point sets from NumPy .npy files and from arrays inside .npz archives (the stored
 * entries np.savez writes and the deflate entries of np.savez_compressed). Rank 0 parses the
 * header (for .npz after finding the entry through the zip central directory, zip64 included),
 * checks it against the array's size and broadcasts the layout; every rank then reads only its
 * own contiguous block of rows (a Fortran-order array: one strided read per column; a compressed
 * entry is inflated from its start, io_member.c, and the rank holding the last rows checks its
 * CRC), converting float32/int32/int64 to double. Every size is checked before it is used, so a
 * crafted header cannot make a rank allocate or read out of bounds. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm/dist_impl.h"
#include "io/paths.h"
#include "pointset/pointset_impl.h"
#include "pointset/io_member.h"
#include "pointset/pointset_io.h"

/* the layout rank 0 finds: rows, columns, element type, order, offset of element 0 in the
 * array's bytes, and where those bytes are in the file */
typedef struct {
  int64_t n, d, offset;
  int64_t type; /* 0 f8, 1 f4, 2 i8, 3 i4 */
  int64_t fortran;
  int64_t flatten; /* 0: n or n x d only; L >= 1: the first L dimensions are the rows */
  kd_member_loc loc;
} kd_npy_layout_;

static const int kd_npy_size_[4] = {8, 4, 8, 4};

static uint64_t kd_le_(const unsigned char *p, int nb) {
  uint64_t v = 0;
  for (int i = nb - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* The value text of 'key' in the header dict h, or NULL. */
static const char *kd_npy_key_(const char *h, const char *key) {
  char pat[32];
  snprintf(pat, sizeof pat, "'%s'", key);
  const char *p = strstr(h, pat);
  if (!p) return NULL;
  p += strlen(pat);
  while (*p == ' ') p++;
  if (*p != ':') return NULL;
  p++;
  while (*p == ' ') p++;
  return p;
}

/* With flatten = F: rows are the first F dimensions, columns the others (both in C order). A
 * Fortran-order array keeps its rows contiguous per column only as n x d: others are refused. */
static kd_err kd_npy_flatten_(const char *path, const long long *dims, int r, kd_npy_layout_ *L) {
  kd_err err = KD_OK;
  KD_CHECK(r >= L->flatten && r <= 8, KD_ERR_INPUT,
           "%s: the array has %d dimensions; flatten = %lld takes arrays of %lld to 8 (the first "
           "%lld index the rows)",
           path, r, (long long)L->flatten, (long long)L->flatten, (long long)L->flatten);
  KD_CHECK(!L->fortran || r <= 1 || (r == 2 && L->flatten == 1), KD_ERR_INPUT,
           "%s: a Fortran-order array of %d dimensions cannot be read with flatten = %lld; save it "
           "in C order (np.ascontiguousarray)",
           path, r, (long long)L->flatten);
  int64_t n = 1, d = 1;
  for (int j = 0; j < r; j++) {
    KD_CHECK(dims[j] <= (1LL << 50), KD_ERR_INPUT, "%s: dimension %d is %lld", path, j, dims[j]);
    if (j < L->flatten)
      n *= dims[j];
    else
      d *= dims[j];
    KD_CHECK(n <= (1LL << 50) && d <= 1000000, KD_ERR_INPUT, "%s: too many %s", path,
             j < L->flatten ? "rows" : "columns");
  }
  L->n = n;
  L->d = d;
cleanup:
  return err;
}

/* Parse the .npy header at the start of the array's bytes (member m, fsize of them) into L;
 * L->offset is relative to the array's first byte. */
static kd_err kd_npy_header_(kd_member *m, const char *path, int64_t fsize, kd_npy_layout_ *L) {
  kd_err err = KD_OK;
  unsigned char pre[12];
  char *h = NULL;
  KD_CHECK(fsize >= 10, KD_ERR_INPUT, "%s: too short for a .npy array", path);
  /* 12 bytes when there are (version 2 and 3 headers): a compressed array is read forward only */
  KD_TRY(kd_member_read(m, 0, pre, fsize >= 12 ? 12 : 10));
  KD_CHECK(!memcmp(pre, "\x93NUMPY", 6), KD_ERR_INPUT, "%s: not a .npy array (bad magic)", path);
  const int major = pre[6];
  KD_CHECK(major >= 1 && major <= 3, KD_ERR_INPUT, "%s: .npy format version %d is not supported",
           path, major);
  int64_t hl = 0, hstart = 0;
  if (major == 1) {
    hl = (int64_t)kd_le_(pre + 8, 2);
    hstart = 10;
  } else {
    KD_CHECK(fsize >= 12, KD_ERR_INPUT, "%s: truncated .npy header", path);
    hl = (int64_t)kd_le_(pre + 8, 4);
    hstart = 12;
  }
  KD_CHECK(hl > 0 && hl <= (1 << 20) && hstart + hl <= fsize, KD_ERR_INPUT,
           "%s: .npy header length %lld is impossible", path, (long long)hl);
  KD_ALLOC(h, hl + 1);
  if (major == 1 && fsize >= 12) { /* two header bytes are already in pre */
    memcpy(h, pre + 10, hl < 2 ? (size_t)hl : 2);
    if (hl > 2) KD_TRY(kd_member_read(m, 12, h + 2, (size_t)hl - 2));
  } else {
    KD_TRY(kd_member_read(m, hstart, h, (size_t)hl));
  }
  h[hl] = '\0';
  const char *descr = kd_npy_key_(h, "descr"), *fo = kd_npy_key_(h, "fortran_order"),
             *shape = kd_npy_key_(h, "shape");
  KD_CHECK(descr && fo && shape, KD_ERR_INPUT, "%s: .npy header without descr/fortran_order/shape",
           path);
  static const char *const types[4] = {"f8'", "f4'", "i8'", "i4'"};
  L->type = -1;
  if (descr[0] == '\'' && (descr[1] == '<' || descr[1] == '=' || descr[1] == '|'))
    for (int t = 0; t < 4; t++)
      if (!strncmp(descr + 2, types[t], 3)) L->type = t;
  /* the type as written, without its quotes and what follows ("'>f8', 'fortran..." -> >f8) */
  const int tl = descr[0] == '\'' ? (int)strcspn(descr + 1, "'") : (int)strcspn(descr, ",}");
  KD_CHECK(L->type >= 0, KD_ERR_INPUT,
           "%s: element type '%.*s' is not supported (little-endian float64, float32, int64 or "
           "int32)",
           path, tl < 16 ? tl : 16, descr + (descr[0] == '\''));
  L->fortran = !strncmp(fo, "True", 4);
  KD_CHECK(L->fortran || !strncmp(fo, "False", 5), KD_ERR_INPUT, "%s: bad fortran_order", path);
  KD_CHECK(shape[0] == '(', KD_ERR_INPUT, "%s: bad shape in the .npy header", path);
  long long dims[9] = {0};
  int r = 0;
  const char *p = shape + 1;
  while (r < 9) {
    while (*p == ' ') p++;
    if (*p == ')') break;
    char *end = NULL;
    errno = 0;
    dims[r] = strtoll(p, &end, 10);
    KD_CHECK(end != p && errno == 0 && dims[r] >= 0, KD_ERR_INPUT, "%s: bad shape in the header",
             path);
    r++;
    p = end;
    while (*p == ' ') p++;
    if (*p == ',') p++;
  }
  if (!L->flatten) {
    KD_CHECK(r == 1 || r == 2, KD_ERR_INPUT,
             "%s: the array has %d dimensions; expected n x d (2-D) or n (1-D)", path, r);
    L->n = dims[0];
    L->d = r == 2 ? dims[1] : 1;
  } else {
    KD_TRY(kd_npy_flatten_(path, dims, r, L));
  }
  L->offset = hstart + hl;
  KD_CHECK(L->d >= 1 && L->d <= 1000000, KD_ERR_INPUT, "%s: %lld columns", path, (long long)L->d);
  KD_CHECK(kd_size_ok(L->n, (int)L->d, (size_t)kd_npy_size_[L->type], NULL) &&
               L->offset + L->n * L->d * kd_npy_size_[L->type] <= fsize,
           KD_ERR_INPUT, "%s: the header declares %lld x %lld values, more than the file holds",
           path, (long long)L->n, (long long)L->d);
cleanup:
  free(h);
  return err;
}

/* One central-directory record of a zip archive. */
typedef struct {
  char name[256];
  uint64_t method, crc, csize, usize, lho, len; /* len: the record's bytes in the directory */
} kd_npz_rec_;

/* The record at cd + pos (cds bytes of directory, fsize of file): its name, method, CRC, sizes
 * and local header offset, the zip64 extra field's 8-byte values taken in the order the format
 * gives them (uncompressed size, compressed size, offset) for those marked 0xffffffff. */
static kd_err kd_npz_record_(const unsigned char *cd, uint64_t pos, uint64_t cds, int64_t fsize,
                             const char *path, kd_npz_rec_ *e) {
  kd_err err = KD_OK;
  KD_CHECK(pos + 46 <= cds && kd_le_(cd + pos, 4) == 0x02014b50u, KD_ERR_INPUT,
           "%s: the zip directory is damaged", path);
  const unsigned char *r = cd + pos;
  const uint64_t nl = kd_le_(r + 28, 2), xl = kd_le_(r + 30, 2), cl = kd_le_(r + 32, 2);
  e->method = kd_le_(r + 10, 2);
  e->crc = kd_le_(r + 16, 4);
  e->csize = kd_le_(r + 20, 4);
  e->usize = kd_le_(r + 24, 4);
  e->lho = kd_le_(r + 42, 4);
  e->len = 46 + nl + xl + cl;
  KD_CHECK(pos + e->len <= cds, KD_ERR_INPUT, "%s: the zip directory is damaged", path);
  const size_t ncopy = nl < sizeof e->name - 1 ? nl : sizeof e->name - 1;
  memcpy(e->name, r + 46, ncopy);
  e->name[ncopy] = '\0';
  if (e->usize == 0xffffffffu || e->csize == 0xffffffffu || e->lho == 0xffffffffu)
    for (uint64_t x = 0; x + 4 <= xl;) {
      const unsigned char *xf = r + 46 + nl + x;
      const uint64_t id = kd_le_(xf, 2), sz = kd_le_(xf + 2, 2);
      /* every field lies inside its record's extra area (which lies inside the directory) */
      KD_CHECK(x + 4 + sz <= xl, KD_ERR_INPUT,
               "%s: the zip directory is damaged (an extra field of '%s' runs past its record)",
               path, e->name);
      if (id == 1) {
        uint64_t *v[3] = {&e->usize, &e->csize, &e->lho};
        uint64_t q = 0;
        for (int i = 0; i < 3; i++)
          if (*v[i] == 0xffffffffu && q + 8 <= sz) {
            *v[i] = kd_le_(xf + 4 + q, 8);
            q += 8;
          }
      }
      x += 4 + sz;
    }
  KD_CHECK(e->lho < (uint64_t)fsize, KD_ERR_INPUT,
           "%s: the zip directory is damaged (entry '%s' starts at byte %llu of %lld)", path,
           e->name, (unsigned long long)e->lho, (long long)fsize);
cleanup:
  return err;
}

/* The central directory of a zip archive into *cd (caller frees), *cds bytes, *count records. */
static kd_err kd_npz_directory_(int fd, const char *path, int64_t fsize, unsigned char **cd,
                                uint64_t *cds_out, uint64_t *count_out) {
  kd_err err = KD_OK;
  unsigned char *tail = NULL, b[64];
  KD_CHECK(fsize >= 22, KD_ERR_INPUT, "%s: not an .npz (zip) archive", path);
  const int64_t tl = fsize < 65557 ? fsize : 65557;
  KD_ALLOC(tail, tl);
  KD_TRY(kd_member_pread(fd, tail, (size_t)tl, fsize - tl, path));
  int64_t e = -1;
  for (int64_t i = tl - 22; i >= 0 && e < 0; i--)
    if (kd_le_(tail + i, 4) == 0x06054b50u) e = i;
  KD_CHECK(e >= 0, KD_ERR_INPUT, "%s: not an .npz (zip) archive (no end of central directory)",
           path);
  uint64_t count = kd_le_(tail + e + 10, 2), cds = kd_le_(tail + e + 12, 4),
           cdo = kd_le_(tail + e + 16, 4);
  if ((count == 0xffff || cds == 0xffffffffu || cdo == 0xffffffffu) && e >= 20 &&
      kd_le_(tail + e - 20, 4) == 0x07064b50u) { /* zip64 */
    const int64_t z = (int64_t)kd_le_(tail + e - 20 + 8, 8);
    KD_CHECK(z >= 0 && z + 56 <= fsize, KD_ERR_INPUT, "%s: bad zip64 directory", path);
    KD_TRY(kd_member_pread(fd, b, 56, z, path));
    KD_CHECK(kd_le_(b, 4) == 0x06064b50u, KD_ERR_INPUT, "%s: bad zip64 directory", path);
    count = kd_le_(b + 32, 8), cds = kd_le_(b + 40, 8), cdo = kd_le_(b + 48, 8);
  }
  KD_CHECK(cds <= (uint64_t)fsize && cdo <= (uint64_t)fsize - cds && cds <= (1u << 26) &&
               count <= cds / 46,
           KD_ERR_INPUT, "%s: the zip directory is damaged", path);
  KD_ALLOC(*cd, cds + 1);
  KD_TRY(kd_member_pread(fd, *cd, (size_t)cds, (int64_t)cdo, path));
  *cds_out = cds;
  *count_out = count;
cleanup:
  free(tail);
  return err;
}

/* Find the entry `name`.npy (name NULL or "": the only entry) of a zip archive, stored or
 * deflate: where its bytes are (*loc). */
static kd_err kd_npz_find_(int fd, const char *path, int64_t fsize, const char *name,
                           const char *hint, kd_member_loc *loc) {
  kd_err err = KD_OK;
  unsigned char *cd = NULL, b[30];
  char names[1024] = "", want[512];
  uint64_t cds = 0, count = 0, pos = 0;
  kd_npz_rec_ rec, hit;
  int n_hit = 0;
  KD_TRY(kd_npz_directory_(fd, path, fsize, &cd, &cds, &count));
  snprintf(want, sizeof want, "%s.npy", name ? name : "");
  for (uint64_t k = 0; k < count; k++) {
    KD_TRY(kd_npz_record_(cd, pos, cds, fsize, path, &rec));
    const size_t nl = strlen(rec.name), o = strlen(names);
    if (o + nl + 3 < sizeof names)
      snprintf(names + o, sizeof names - o, "%s%.*s", o ? ", " : "", (int)(nl > 4 ? nl - 4 : nl),
               rec.name);
    if (!(name && name[0]) || !strcmp(rec.name, want)) {
      if (n_hit++ == 0) hit = rec;
    }
    pos += rec.len;
  }
  if (!(name && name[0]))
    KD_CHECK(n_hit == 1, KD_ERR_CONFIG, "%s: the archive holds %s; %s: %s", path,
             n_hit == 0 ? "no arrays" : "several arrays",
             hint ? hint : "set data.dataset to one of", names);
  KD_CHECK(n_hit >= 1, KD_ERR_FILE, "%s: no array '%s' in the archive; it has: %s", path, name,
           names);
  KD_CHECK(hit.method == 0 || hit.method == 8, KD_ERR_INPUT,
           "%s: array '%s' is compressed with zip method %llu; only stored (np.savez) and "
           "deflate (np.savez_compressed) arrays are read",
           path, hit.name, (unsigned long long)hit.method);
  const int64_t found = (int64_t)hit.lho;
  KD_CHECK(found + 30 <= fsize, KD_ERR_INPUT, "%s: the zip directory is damaged", path);
  KD_TRY(kd_member_pread(fd, b, 30, found, path));
  KD_CHECK(kd_le_(b, 4) == 0x04034b50u, KD_ERR_INPUT, "%s: the zip directory is damaged", path);
  loc->at = found + 30 + (int64_t)kd_le_(b + 26, 2) + (int64_t)kd_le_(b + 28, 2);
  loc->method = (int64_t)hit.method;
  loc->crc = (int64_t)hit.crc;
  /* stored: the array may run to the end of the file, as before (its header is checked against
   * that); deflate: its compressed bytes lie inside the file, its size is the declared one */
  loc->size = fsize - loc->at;
  loc->csize = 0;
  if (hit.method == 8) {
    KD_CHECK(loc->at <= fsize && hit.csize <= (uint64_t)(fsize - loc->at) &&
                 hit.usize <= (uint64_t)INT64_MAX,
             KD_ERR_INPUT,
             "%s: the zip directory is damaged (array '%s' declares %llu compressed bytes past "
             "the end of the file)",
             path, hit.name, (unsigned long long)hit.csize);
    loc->size = (int64_t)hit.usize;
    loc->csize = (int64_t)hit.csize;
  }
cleanup:
  free(cd);
  return err;
}

/* The layout of the array (npz: entry `name`; hints name the config section sec). Local. */
static kd_err kd_npy_layout_of_(const char *path, int npz, const char *name, const char *hint,
                                int flatten, kd_npy_layout_ *L) {
  kd_err err = KD_OK;
  int fd = -1;
  struct stat st;
  kd_member *m = NULL;
  fd = open(path, O_RDONLY);
  KD_CHECK(fd >= 0, KD_ERR_FILE, "%s: cannot open file: %s", path, strerror(errno));
  KD_CHECK(fstat(fd, &st) == 0, KD_ERR_FILE, "%s: %s", path, strerror(errno));
  L->loc.size = (int64_t)st.st_size; /* a .npy: the whole file, stored */
  L->flatten = flatten;
  if (npz) KD_TRY(kd_npz_find_(fd, path, (int64_t)st.st_size, name, hint, &L->loc));
  KD_TRY(kd_member_open(fd, path, &L->loc, &m));
  KD_TRY(kd_npy_header_(m, path, L->loc.size, L));
cleanup:
  kd_member_close(&m);
  if (fd >= 0) close(fd);
  return err;
}

/* Rank 0: the file checked and claimed as an input, then its layout. */
static kd_err kd_npy_probe_(const char *path, int npz, const char *name, const char *hint,
                            int flatten, kd_npy_layout_ *L) {
  kd_err err = KD_OK;
  KD_TRY(kd_path_check_input(path, npz ? "npz" : "npy"));
  KD_TRY(kd_path_claim(path, npz ? "npz input" : "npy input", 0)); /* no output may replace it */
  KD_TRY(kd_npy_layout_of_(path, npz, name, hint, flatten, L));
cleanup:
  return err;
}

static const char *const kd_npy_dtype_[4] = {"<f8", "<f4", "<i8", "<i4"};

static void kd_npy_shape_(const kd_npy_layout_ *L, char *buf, size_t len) {
  snprintf(buf, len, "%lld x %lld %s%s", (long long)L->n, (long long)L->d, kd_npy_dtype_[L->type],
           L->fortran ? " (Fortran order)" : "");
}

typedef struct {
  int npz, flatten;
  const char *name, *hint;
} kd_npy_what_;

/* kd_input_describe: the array as this rank sees it. */
static void kd_npy_describe_(const char *path, const void *user, char *buf, size_t len) {
  const kd_npy_what_ *w = user;
  kd_npy_layout_ L;
  memset(&L, 0, sizeof L);
  if (kd_npy_layout_of_(path, w->npz, w->name, w->hint, w->flatten, &L) == KD_OK)
    kd_npy_shape_(&L, buf, len);
  else
    snprintf(buf, len, "an unreadable array (%s)", kd_err_message());
}

kd_err kd_npy_check(MPI_Comm comm, const char *path, int npz, const char *name, const char *hint,
                    int flatten, int64_t *n, int *d) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_npy_layout_ L;
  memset(&L, 0, sizeof L);
  if (kd_dist_rank(comm) == 0) lerr = kd_npy_probe_(path, npz, name, hint, flatten, &L);
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_bcast(comm, &L, (int64_t)sizeof L, 0));
  if (n) *n = L.n;
  if (d) *d = (int)L.d;
cleanup:
  return err;
}

/* Rows [o, o + nl) of the array into rows[nl * d] (doubles). */
static kd_err kd_npy_read_block_(const char *path, const kd_npy_layout_ *L, int64_t o, int64_t nl,
                                 double *rows) {
  kd_err err = KD_OK;
  int fd = -1;
  unsigned char *raw = NULL;
  kd_member *mb = NULL;
  const int es = kd_npy_size_[L->type];
  const int64_t d = L->d, w0 = L->fortran ? 1 : d;
  /* rows (or column elements) per read: a buffer of about 4 MiB whatever the width (a row of
   * 200 000 columns is 1.6 MB: sizing by rows would ask for 100 GB) */
  int64_t B = ((int64_t)1 << 22) / (w0 * es);
  if (B < 1) B = 1;
  if (B > nl) B = nl;
  if (nl <= 0) return KD_OK;
  fd = open(path, O_RDONLY);
  KD_CHECK(fd >= 0, KD_ERR_FILE, "%s: cannot open file: %s", path, strerror(errno));
  KD_TRY(kd_member_open(fd, path, &L->loc, &mb));
  KD_ALLOC(raw, (size_t)B * (size_t)w0 * (size_t)es);
  for (int64_t c = 0; c < (L->fortran ? d : 1); c++)
    for (int64_t i0 = 0; i0 < nl; i0 += B) {
      const int64_t m = nl - i0 < B ? nl - i0 : B, w = L->fortran ? 1 : d;
      const int64_t first = L->fortran ? c * L->n + o + i0 : (o + i0) * d;
      KD_TRY(kd_member_read(mb, L->offset + first * es, raw, (size_t)(m * w * es)));
      for (int64_t k = 0; k < m * w; k++) {
        const unsigned char *q = raw + k * es;
        double v = 0.0;
        if (L->type == 0) {
          memcpy(&v, q, 8);
        } else if (L->type == 1) {
          float f;
          memcpy(&f, q, 4);
          v = f;
        } else if (L->type == 2) {
          int64_t x;
          memcpy(&x, q, 8);
          v = (double)x;
        } else {
          int32_t x;
          memcpy(&x, q, 4);
          v = x;
        }
        if (L->fortran)
          rows[(i0 + k) * d + c] = v;
        else
          rows[(i0 + k / d) * d + k % d] = v;
      }
    }
  /* the rank holding the last rows has read to the end of the array: a compressed one must end
   * there, with its CRC-32 */
  if (o + nl == L->n) KD_TRY(kd_member_finish(mb));
cleanup:
  kd_member_close(&mb);
  if (fd >= 0) close(fd);
  free(raw);
  return err;
}

kd_err kd_pointset_read_npy(MPI_Comm comm, const char *path, int npz, const char *name,
                            kd_pointset **out) {
  return kd_pointset_read_npy_sec(comm, path, npz, name, NULL, 0, out);
}

kd_err kd_pointset_read_npy_sec(MPI_Comm comm, const char *path, int npz, const char *name,
                                const char *hint, int flatten, kd_pointset **out) {
  kd_err err = KD_OK;
  kd_pointset *ps = NULL;
  kd_npy_layout_ L;
  memset(&L, 0, sizeof L);
  *out = NULL;
  if (kd_dist_rank(comm) == 0) err = kd_npy_probe_(path, npz, name, hint, flatten, &L);
  KD_TRY(kd_dist_agreed(comm, err));
  KD_TRY(kd_dist_bcast(comm, &L, (int64_t)sizeof L, 0));
  {
    char shape0[160];
    const kd_npy_what_ w = {npz, flatten, name, hint};
    kd_npy_shape_(&L, shape0, sizeof shape0);
    KD_TRY(kd_input_agree(comm, path, shape0, kd_npy_describe_, &w));
  }
  KD_TRY(kd_pointset_create(comm, L.n, (int)L.d, &ps));
  kd_pointset_set_dtype(ps, kd_npy_dtype_[L.type]);
  KD_TRY(kd_dist_agreed(comm, kd_npy_read_block_(path, &L, kd_pointset_offset(ps),
                                                 kd_pointset_n_local(ps), ps->rows)));
  *out = ps;
  ps = NULL;
cleanup:
  kd_pointset_destroy(&ps);
  return err;
}
