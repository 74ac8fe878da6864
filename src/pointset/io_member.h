/* io_member.h - the bytes of one array file: a whole .npy, or one member of an .npz (zip)
 * archive, stored or deflate-compressed (np.savez_compressed). Reads are by offset into the
 * member's uncompressed bytes; a compressed member is inflated as it is read, so its offsets must
 * not go backwards (the .npy reader reads front to back). Local (src/pointset/io_npy.c). */
#ifndef KDISTILL_POINTSET_IO_MEMBER_H
#define KDISTILL_POINTSET_IO_MEMBER_H

#include <stddef.h>
#include <stdint.h>

#include "kdistill/author/kd_check.h"

/** Where a member lies in its file (what the zip directory says; for a .npy: all of it). */
typedef struct {
  int64_t at;     /* file offset of the member's first (stored or compressed) byte */
  int64_t size;   /* its uncompressed bytes */
  int64_t csize;  /* its compressed bytes (deflate) */
  int64_t method; /* 0 stored, 8 deflate */
  int64_t crc;    /* CRC-32 of the uncompressed bytes (deflate: checked once read to the end) */
} kd_member_loc;

typedef struct kd_member kd_member;

/** Read exactly len bytes at file offset off (EINTR retried; a short file is an error naming
 *  the byte). Local. */
kd_err kd_member_pread(int fd, void *buf, size_t len, int64_t off, const char *path);
/** Open the member at loc of the open file fd (borrowed; path for messages). Local. */
kd_err kd_member_open(int fd, const char *path, const kd_member_loc *loc, kd_member **out);
/** len bytes at offset off of the member's uncompressed bytes; off + len <= loc.size. A deflate
 *  member: off at or after the end of the previous read. Errors name the file and say the
 *  member is damaged. Local. */
kd_err kd_member_read(kd_member *m, int64_t off, void *buf, size_t len);
/** A deflate member: inflate the rest, and check that it ends where the directory says and that
 *  its CRC-32 matches (a stored member: nothing to check). Local. */
kd_err kd_member_finish(kd_member *m);
/** Release (accepts NULL). Local. */
void kd_member_close(kd_member **m);

#endif
