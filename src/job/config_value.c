/* config_value.c - typed values of a resolved configuration for the user tier (kd_job.h): a
 * binding reads the seed, a level or a length scale a run resolved as a number, and a section's
 * keys by name, from the library's own parser, instead of reading the YAML text itself. */
#include <stdio.h>
#include <string.h>

#include "io/io_impl.h"
#include "job/job_registry.h"

/* Parse config_yaml without leaving a message on the bound context (these calls never report;
 * an error of the caller's recorded before stays as it was). NULL when it does not parse. */
static kd_config *kd_job_config_parse_(const char *config_yaml) {
  char msg[1024], key[128], known[400];
  kd_config *cfg = NULL;
  if (!config_yaml) return NULL;
  snprintf(msg, sizeof msg, "%s", kd_err_message());
  snprintf(key, sizeof key, "%s", kd_err_key());
  snprintf(known, sizeof known, "%s", kd_err_known());
  if (kd_config_load_string(config_yaml, "<config>", &cfg) != KD_OK) kd_config_destroy(&cfg);
  kd_err_set_message(msg);
  kd_err_put_key(key);
  kd_err_set_known(key, known);
  return cfg;
}

kd_value_kind kd_job_config_value(const char *config_yaml, const char *key, double *num,
                                  int64_t *inum, char *buf, int len) {
  if (buf && len > 0) buf[0] = '\0';
  kd_config *cfg = kd_job_config_parse_(config_yaml);
  kd_value_kind kind = cfg && key ? kd_config_value(cfg, key, num, inum, buf, len) : KD_VALUE_NONE;
  kd_config_destroy(&cfg);
  return kind;
}

int kd_job_config_key_at(const char *config_yaml, const char *section, int i, char *buf, int len) {
  if (buf && len > 0) buf[0] = '\0';
  kd_config *cfg = kd_job_config_parse_(config_yaml);
  const char *name = cfg && section ? kd_config_key_at(cfg, section, i) : NULL;
  if (name && buf && len > 0) snprintf(buf, (size_t)len, "%s", name);
  kd_config_destroy(&cfg);
  return name != NULL;
}
