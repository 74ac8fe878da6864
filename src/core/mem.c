/* mem.c - memory available to this rank and the up-front refusal of runs that need more. */
#include "core/mem.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* "12", "512M", "2G", "16GiB", "max" -> bytes in *v; 0 for unset, unknown or "max". Returns 1 when
 * the whole text is such a size (blanks and a newline around it allowed), else 0 ("1x" gives
 * *v = 1 and 0). */
static int kd_mem_parse_(const char *s, uint64_t *v) {
  *v = 0;
  if (!s) return 0;
  char *end = NULL;
  double x = strtod(s, &end);
  if (end == s || !(x > 0)) return 0;
  while (*end && isspace((unsigned char)*end)) end++;
  static const char units[] = "KMGT";
  const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
  if (u) {
    for (const char *k = units; k <= u; k++) x *= 1024.0;
    end++;
    if (*end == 'i') end++;
  }
  if (*end == 'B' || *end == 'b') end++;
  while (*end && isspace((unsigned char)*end)) end++;
  if (x >= 1.8e19) return 0;
  *v = (uint64_t)x;
  return *end == '\0';
}

static uint64_t kd_mem_file_(const char *path) {
  char buf[64] = {0};
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  uint64_t v = 0;
  (void)kd_mem_parse_(buf, &v);
  return v >= ((uint64_t)1 << 60) ? 0 : v; /* v1 "no limit" is a huge number */
}

static uint64_t kd_mem_meminfo_(void) {
  char line[256];
  uint64_t v = 0;
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long kb = 0;
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
      v = (uint64_t)kb * 1024u;
      break;
    }
  }
  fclose(f);
  return v;
}

/* What an address-space limit (ulimit -v, RLIMIT_AS) leaves: the limit minus the process's
 * current virtual size (MPI and the libraries already map a lot); 0 when unlimited. */
static uint64_t kd_mem_rlimit_(void) {
  struct rlimit rl;
  unsigned long long pages = 0;
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%llu", &pages) != 1) pages = 0;
    fclose(f);
  }
  const long ps = sysconf(_SC_PAGESIZE);
  const uint64_t used = (uint64_t)pages * (uint64_t)(ps > 0 ? ps : 4096);
  return (uint64_t)rl.rlim_cur > used ? (uint64_t)rl.rlim_cur - used : 1;
}

uint64_t kd_mem_available(const char **what) {
  struct {
    uint64_t v;
    const char *name;
  } src[5] = {{0, "KD_MEMORY_LIMIT"},
              {kd_mem_file_("/sys/fs/cgroup/memory.max"), "the cgroup limit"},
              {kd_mem_file_("/sys/fs/cgroup/memory/memory.limit_in_bytes"), "the cgroup limit"},
              {kd_mem_rlimit_(), "the address-space limit, ulimit -v"},
              {kd_mem_meminfo_(), "MemAvailable"}};
  (void)kd_mem_parse_(getenv("KD_MEMORY_LIMIT"), &src[0].v);
  uint64_t best = 0;
  const char *name = "no limit";
  for (int i = 0; i < 5; i++)
    if (src[i].v && (!best || src[i].v < best)) best = src[i].v, name = src[i].name;
  if (what) *what = name;
  return best;
}

/* KD_MEMORY_LIMIT is the user's: a value that is not a size ("1x", "lots", "-5") is refused, not
 * ignored. */
static kd_err kd_mem_env_check_(void) {
  kd_err err = KD_OK;
  uint64_t v = 0;
  const char *s = getenv("KD_MEMORY_LIMIT");
  KD_CHECK(!s || kd_mem_parse_(s, &v), KD_ERR_CONFIG,
           "KD_MEMORY_LIMIT: '%.40s' is not a size; give bytes or a number with K, M, G or T "
           "(e.g. KD_MEMORY_LIMIT=16G)",
           s);
cleanup:
  return err;
}

/* Requests of at most this many bytes are checked against KD_MEMORY_LIMIT alone: the system's
 * limits take four files to read (~0.1 ms), which a small call (one CTT test from Python: two
 * point sets of 128 KiB) paid on every point set, and no system runs with less than this left. */
enum { KD_MEM_PROBE_MIN = 1 << 20 };

kd_err kd_mem_require(uint64_t need, const char *what, const char *size_key) {
  kd_err err = KD_OK;
  const char *src = "KD_MEMORY_LIMIT";
  uint64_t have = 0;
  KD_TRY(kd_mem_env_check_());
  if (need <= KD_MEM_PROBE_MIN)
    (void)kd_mem_parse_(getenv("KD_MEMORY_LIMIT"), &have);
  else
    have = kd_mem_available(&src);
  const double gib = 1073741824.0;
  if (need == UINT64_MAX)
    KD_FAIL(KD_ERR_MEM, "%s: needs more memory than can be addressed; use a smaller %s", what,
            size_key);
  const double unit = have < gib / 4 ? 1048576.0 : gib; /* "0.00 GiB" says nothing */
  const char *un = unit == gib ? "GiB" : "MiB";
  KD_CHECK(!have || need <= have, KD_ERR_MEM,
           "%s: needs about %.2f %s of memory per rank but %.2f %s are available (%s); use more "
           "ranks or a smaller %s",
           what, (double)need / unit, un, (double)have / unit, un, src, size_key);
cleanup:
  return err;
}
