/* io_member.c - reading one member of an array file (io_member.h): stored bytes by pread, a
 * deflate member through zlib's inflate, forward only, with at most a 1 MiB window in memory
 * whatever the member's size. A crafted member cannot make it read outside [at, at + csize) of
 * the file or produce more than the declared size. */
#include "pointset/io_member.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

enum { KD_MEMBER_CHUNK = 1 << 20 };

struct kd_member {
  int fd;
  const char *path;
  kd_member_loc loc;
  z_stream z;
  int z_on;
  int ended;    /* inflate reached the end of the deflate stream */
  int64_t pos;  /* uncompressed bytes produced so far */
  int64_t cpos; /* compressed bytes read from the file so far */
  uLong crc;    /* CRC-32 of the bytes produced so far */
  unsigned char *in, *skip;
};

kd_err kd_member_pread(int fd, void *buf, size_t len, int64_t off, const char *path) {
  kd_err err = KD_OK;
  size_t got = 0;
  while (got < len) {
    ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + (int64_t)got));
    if (r < 0 && errno == EINTR) continue;
    KD_CHECK(r > 0, KD_ERR_FILE, "%s: %s at byte %lld", path,
             r == 0 ? "file ends early (truncated?)" : strerror(errno), (long long)(off + got));
    got += (size_t)r;
  }
cleanup:
  return err;
}

kd_err kd_member_open(int fd, const char *path, const kd_member_loc *loc, kd_member **out) {
  kd_err err = KD_OK;
  kd_member *m = NULL;
  *out = NULL;
  KD_CHECK(loc->method == 0 || loc->method == 8, KD_ERR_INPUT,
           "%s: the array is compressed with zip method %lld; only stored (np.savez) and deflate "
           "(np.savez_compressed) members are read",
           path, (long long)loc->method);
  m = calloc(1, sizeof *m);
  KD_CHECK(m, KD_ERR_MEM, "out of memory");
  m->fd = fd;
  m->path = path;
  m->loc = *loc;
  if (loc->method == 8) {
    KD_ALLOC(m->in, KD_MEMBER_CHUNK);
    KD_CHECK(inflateInit2(&m->z, -MAX_WBITS) == Z_OK, KD_ERR_MEM, "%s: cannot start inflate", path);
    m->z_on = 1;
    m->crc = crc32(0L, Z_NULL, 0);
  }
  *out = m;
  m = NULL;
cleanup:
  kd_member_close(&m);
  return err;
}

/* Inflate the next len bytes of the member into buf. */
static kd_err kd_member_inflate_(kd_member *m, unsigned char *buf, size_t len) {
  kd_err err = KD_OK;
  m->z.next_out = buf;
  m->z.avail_out = (uInt)len;
  while (m->z.avail_out > 0) {
    KD_CHECK(!m->ended, KD_ERR_INPUT,
             "%s: the compressed array ends after %lld bytes; its header declares more (damaged "
             "archive)",
             m->path, (long long)(m->pos + (int64_t)(len - m->z.avail_out)));
    if (m->z.avail_in == 0) {
      const int64_t left = m->loc.csize - m->cpos;
      KD_CHECK(left > 0, KD_ERR_INPUT,
               "%s: the compressed array needs more than its %lld bytes (damaged archive)", m->path,
               (long long)m->loc.csize);
      const size_t take = left < KD_MEMBER_CHUNK ? (size_t)left : (size_t)KD_MEMBER_CHUNK;
      KD_TRY(kd_member_pread(m->fd, m->in, take, m->loc.at + m->cpos, m->path));
      m->cpos += (int64_t)take;
      m->z.next_in = m->in;
      m->z.avail_in = (uInt)take;
    }
    const int r = inflate(&m->z, Z_NO_FLUSH);
    KD_CHECK(r == Z_OK || r == Z_STREAM_END || r == Z_BUF_ERROR, KD_ERR_INPUT,
             "%s: the compressed array is damaged (inflate: %s)", m->path,
             m->z.msg ? m->z.msg : "error");
    if (r == Z_STREAM_END) m->ended = 1;
  }
  m->crc = crc32(m->crc, buf, (uInt)len);
  m->pos += (int64_t)len;
cleanup:
  return err;
}

kd_err kd_member_read(kd_member *m, int64_t off, void *buf, size_t len) {
  kd_err err = KD_OK;
  KD_CHECK(off >= 0 && (int64_t)len <= m->loc.size && off <= m->loc.size - (int64_t)len,
           KD_ERR_INTERNAL, "%s: read of %zu bytes at %lld past the array's %lld", m->path, len,
           (long long)off, (long long)m->loc.size);
  if (!m->z_on) return kd_member_pread(m->fd, buf, len, m->loc.at + off, m->path);
  KD_CHECK(off >= m->pos, KD_ERR_INPUT, "%s: the compressed array's header overlaps its data",
           m->path);
  while (m->pos < off) {
    if (!m->skip) KD_ALLOC(m->skip, KD_MEMBER_CHUNK);
    const int64_t gap = off - m->pos;
    KD_TRY(kd_member_inflate_(m, m->skip,
                              gap < KD_MEMBER_CHUNK ? (size_t)gap : (size_t)KD_MEMBER_CHUNK));
  }
  for (size_t done = 0; done < len;) {
    const size_t step = len - done < KD_MEMBER_CHUNK ? len - done : (size_t)KD_MEMBER_CHUNK;
    KD_TRY(kd_member_inflate_(m, (unsigned char *)buf + done, step));
    done += step;
  }
cleanup:
  return err;
}

kd_err kd_member_finish(kd_member *m) {
  kd_err err = KD_OK;
  unsigned char probe;
  if (!m->z_on) return KD_OK;
  if (m->pos < m->loc.size) KD_TRY(kd_member_read(m, m->loc.size - 1, &probe, 1));
  if (!m->ended) { /* the stream must end exactly at the declared size */
    m->z.next_out = &probe;
    m->z.avail_out = 1;
    int r = Z_OK;
    while (r == Z_OK && m->z.avail_out == 1) {
      if (m->z.avail_in == 0 && m->cpos < m->loc.csize) {
        const int64_t left = m->loc.csize - m->cpos;
        const size_t take = left < KD_MEMBER_CHUNK ? (size_t)left : (size_t)KD_MEMBER_CHUNK;
        KD_TRY(kd_member_pread(m->fd, m->in, take, m->loc.at + m->cpos, m->path));
        m->cpos += (int64_t)take;
        m->z.next_in = m->in;
        m->z.avail_in = (uInt)take;
      }
      r = inflate(&m->z, Z_NO_FLUSH);
      if (m->z.avail_in == 0 && m->cpos >= m->loc.csize && r == Z_BUF_ERROR) break;
    }
    KD_CHECK(r == Z_STREAM_END && m->z.avail_out == 1, KD_ERR_INPUT,
             "%s: the compressed array does not end at the %lld bytes its directory declares "
             "(damaged archive)",
             m->path, (long long)m->loc.size);
  }
  KD_CHECK(m->crc == (uLong)(uint32_t)m->loc.crc, KD_ERR_INPUT,
           "%s: the compressed array's CRC-32 does not match (damaged archive)", m->path);
cleanup:
  return err;
}

void kd_member_close(kd_member **m) {
  if (!m || !*m) return;
  if ((*m)->z_on) inflateEnd(&(*m)->z);
  free((*m)->in);
  free((*m)->skip);
  free(*m);
  *m = NULL;
}
