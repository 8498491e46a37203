/* csrun — options of `csrun run`. */
#ifndef CSRUN_RUN_OPTS_H
#define CSRUN_RUN_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CSR_MAX_ENV 256

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
  const char *env[CSR_MAX_ENV]; /* "KEY=VALUE" or "KEY" (copy from the host) */
  size_t n_env;
  const char *file; /* FILE or "-" */
  char **args;      /* arguments after FILE: sys.argv[1:] */
  int n_args;
};

/* Parse ARGV (ARGV[0] is "run").  Prints --help and exits 0; prints a
 * one-line error and exits 2 on bad usage. */
void run_opts_parse (int argc, char **argv, struct run_opts *o);

#endif
