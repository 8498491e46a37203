/* csrun — options of `csrun run` and `csrun check`. */
#ifndef CSRUN_RUN_OPTS_H
#define CSRUN_RUN_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CSR_MAX_ENV 256
#define CSR_MAX_LIST 64

struct run_opts
{
  double timeout_s;
  uint64_t memory;
  uint64_t max_output;
  uint64_t tmp_size;
  uint64_t max_code;
  const char *rootfs;
  const char *cache_dir;
  bool json;
  bool quiet;
  bool raw_output;              /* the snippet's output to a terminal as it is (not neutralised) */
  const char *env[CSR_MAX_ENV]; /* "KEY=VALUE" or "KEY" (copy from the host) */
  size_t n_env;
  /* Policies. */
  const char *policy; /* gate.conf replacement */
  const char *allow[CSR_MAX_LIST];
  size_t n_allow;
  const char *silent_conf;
  const char *silent_patterns[CSR_MAX_LIST];
  size_t n_silent_patterns;
  bool no_silent_scan;
  const char *heal_conf;
  bool no_heal;
  const char *patch_cmd;
  double patch_timeout_s;
  /* LLM healing (see csrun-run(1), LLM HEALING). */
  const char *llm; /* PROVIDER[:MODEL] */
  bool no_llm;
  const char *llm_base_url;
  const char *llm_ca_file;
  const char *env_file;
  uint64_t llm_retries;   /* 0: default */
  uint64_t llm_max_calls; /* with llm_max_calls_set */
  bool llm_max_calls_set;
  double llm_timeout_s; /* 0: default */
  uint64_t max_attempts;
  /* Limits and confinement. */
  uint64_t pids;
  uint64_t cpu_millis;
  unsigned explicit_limits; /* CSR_LIMIT_* given on the command line */
  bool best_effort_limits;
  const char *seccomp; /* profile path, "unconfined", or NULL (the default profile) */
  const char *net;     /* "none" (default) or "host" */
  bool allow_host_net;
  uint64_t user_uid, user_gid; /* --user: ids inside the jail (0 = not asked) */
  /* Operand. */
  const char *file; /* FILE or "-" */
  char **args;      /* arguments after FILE: sys.argv[1:] */
  int n_args;
};

/* Parse ARGV (ARGV[0] is "csrun run" or "csrun check").  Prints --help and
 * exits 0; prints a one-line error and exits 2 on bad usage.  CHECK selects
 * the smaller option set of `csrun check`. */
void run_opts_parse (int argc, char **argv, struct run_opts *o);
void check_opts_parse (int argc, char **argv, struct run_opts *o);

#endif
