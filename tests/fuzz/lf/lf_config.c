/* lf_config.c - libFuzzer harness of the YAML config layer (src/io/config.c): parsing to the
 * tree (anchors, aliases, merge keys, tags, flow and block forms, duplicates), a --set override,
 * every key read with a typed getter as a task would, the unknown-key check, the resolved and
 * per-section emission and a clone. The input is the YAML text; a line "#set KEY=VALUE" in it
 * is also applied as --set. */
#include <string.h>

#include "kdistill/author/kd_io.h"
#include "lf_common.h"

/* Read every key of every section, each with the getter its first letter picks. */
static void lf_read_all(kd_config *cfg) {
  const int ns = kd_config_count(cfg, "");
  for (int s = 0; s < ns && s < 64; s++) {
    const char *sec = kd_config_key_at(cfg, "", s);
    if (!sec) continue;
    const int nk = kd_config_count(cfg, sec);
    for (int k = 0; k < nk && k < 64; k++) {
      const char *key = kd_config_key_at(cfg, sec, k);
      char full[512];
      if (!key) continue;
      snprintf(full, sizeof full, "%s.%s", sec, key);
      double x = 0.0;
      int64_t i = 0;
      int b = 0, n = 0;
      double *list = NULL;
      const char *str = NULL;
      switch (key[0] % 5) {
        case 0:
          (void)kd_config_get_f64(cfg, full, 0.0, -1e300, 1e300, &x);
          break;
        case 1:
          (void)kd_config_get_int(cfg, full, 0, INT64_MIN, INT64_MAX, &i);
          break;
        case 2:
          (void)kd_config_get_bool(cfg, full, 0, &b);
          break;
        case 3:
          (void)kd_config_get_f64_list(cfg, full, 0, &n, &list);
          free(list);
          break;
        default:
          (void)kd_config_get_str(cfg, full, "", NULL, 0, &str);
      }
      kd_err_clear();
    }
    if (nk == 0) { /* a top-level scalar such as task: */
      const char *str = NULL;
      (void)kd_config_get_str(cfg, sec, NULL, NULL, 0, &str);
      kd_err_clear();
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1), *yaml = NULL, set[256] = "";
  kd_config *cfg = NULL, *copy = NULL;
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  const char *s = strstr(text, "#set ");
  if (s) {
    size_t n = strcspn(s + 5, "\n");
    snprintf(set, sizeof set, "%.*s", (int)(n < sizeof set - 1 ? n : sizeof set - 1), s + 5);
  }
  kd_err_clear();
  if (kd_config_load_string(text, "fuzz.yaml", &cfg) == KD_OK) {
    if (set[0]) (void)kd_config_set(cfg, set);
    kd_err_clear();
    if (kd_config_clone(cfg, NULL, &copy) == KD_OK) kd_config_destroy(&copy);
    lf_read_all(cfg);
    (void)kd_config_check_unused(cfg);
    kd_err_clear();
    if (kd_config_emit_resolved(cfg, &yaml) == KD_OK) {
      /* what is emitted parses again */
      kd_config *again = NULL;
      if (kd_config_load_string(yaml, "resolved", &again) != KD_OK) abort();
      kd_config_destroy(&again);
    }
    free(yaml);
    yaml = NULL;
    if (kd_config_emit_section(cfg, "kernel", &yaml) == KD_OK) free(yaml);
  }
  kd_config_destroy(&cfg);
  free(text);
  return 0;
}
