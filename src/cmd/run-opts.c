#include "config.h"
#include "run-opts.h"

#include <argp.h>
#include <string.h>

#include "cmd.h"
#include "util/parse.h"

enum
{
  OPT_TIMEOUT = 't',
  OPT_MEMORY = 'm',
  OPT_ENV = 'e',
  OPT_JSON = 'j',
  OPT_MAX_OUTPUT = 1000,
  OPT_ROOTFS,
  OPT_TMP_SIZE,
  OPT_CACHE_DIR,
  OPT_MAX_CODE,
};

static struct argp_option run_options[] = {
  { "timeout", OPT_TIMEOUT, "DURATION", 0,
    "Kill the whole jail after DURATION (30, 1.5s, 500ms, 2m; default 60s, at most 24h)", 0 },
  { "memory", OPT_MEMORY, "SIZE", 0,
    "Memory limit (512M, 1G; default 512M). Recorded in the result; not yet enforced", 0 },
  { "max-output", OPT_MAX_OUTPUT, "SIZE", 0,
    "Keep at most SIZE bytes of stdout and of stderr: the first and the last SIZE/2 "
    "(default 1M)",
    0 },
  { "env", OPT_ENV, "KEY[=VALUE]", 0,
    "Add KEY=VALUE to the jail's environment (KEY alone copies the host's value); repeatable", 0 },
  { "rootfs", OPT_ROOTFS, "PATH", 0,
    "Python rootfs: a tarball (unpacked once into the cache) or a directory", 0 },
  { "cache-dir", OPT_CACHE_DIR, "DIR", 0, "Where unpacked rootfs trees live", 0 },
  { "tmp-size", OPT_TMP_SIZE, "SIZE", 0, "Size of the /tmp and /work tmpfs, each (default 64M)",
    0 },
  { "max-code-size", OPT_MAX_CODE, "SIZE", 0, "Refuse snippets larger than SIZE (default 1M)", 0 },
  { "json", OPT_JSON, NULL, 0, "Print the result as one JSON object instead of the output", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static const char run_doc[]
    = "Run a Python snippet in a disposable jail.\v"
      "FILE is a Python source file, or - for standard input; ARGS become sys.argv[1:].\n\n"
      "Exit status: 0 the snippet succeeded, 1 it failed, 2 usage or input error, "
      "124 timed out, 125 csrun itself failed. See csrun-run(1).";

static void
bad_value (struct argp_state *state, const char *opt, csr_error *e)
{
  argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --%s: %s", opt, e->msg);
  csr_error_free (e);
}

static error_t
parse_opt (int key, char *arg, struct argp_state *state)
{
  struct run_opts *o = state->input;
  csr_error *e = NULL;
  switch (key)
    {
    case OPT_TIMEOUT:
      if (csr_parse_duration (arg, 86400, &o->timeout_s, &e) < 0)
        bad_value (state, "timeout", e);
      break;
    case OPT_MEMORY:
      if (csr_parse_size (arg, 1ULL << 40, &o->memory, &e) < 0)
        bad_value (state, "memory", e);
      else if (o->memory < (16ULL << 20))
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --memory: %s is below 16 MiB", arg);
      break;
    case OPT_MAX_OUTPUT:
      if (csr_parse_size (arg, 1ULL << 30, &o->max_output, &e) < 0)
        bad_value (state, "max-output", e);
      break;
    case OPT_TMP_SIZE:
      if (csr_parse_size (arg, 64ULL << 30, &o->tmp_size, &e) < 0)
        bad_value (state, "tmp-size", e);
      else if (o->tmp_size < (64ULL << 10))
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --tmp-size: %s is below 64 KiB", arg);
      break;
    case OPT_MAX_CODE:
      if (csr_parse_size (arg, 64ULL << 20, &o->max_code, &e) < 0)
        bad_value (state, "max-code-size", e);
      else if (o->max_code == 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --max-code-size: must be positive");
      break;
    case OPT_ENV:
      {
        size_t klen;
        bool has_value;
        if (csr_parse_env (arg, &klen, &has_value, &e) < 0)
          bad_value (state, "env", e);
        else if (o->n_env >= CSR_MAX_ENV)
          argp_failure (state, CSR_EXIT_USAGE, 0, "too many --env options (at most %d)",
                        CSR_MAX_ENV);
        else
          o->env[o->n_env++] = arg;
        break;
      }
    case OPT_ROOTFS:
      o->rootfs = arg;
      break;
    case OPT_CACHE_DIR:
      o->cache_dir = arg;
      break;
    case OPT_JSON:
      o->json = true;
      break;
    case ARGP_KEY_ARG:
      /* FILE, then everything else belongs to the snippet. */
      o->file = arg;
      o->args = &state->argv[state->next];
      o->n_args = state->argc - state->next;
      state->next = state->argc;
      break;
    case ARGP_KEY_NO_ARGS:
      argp_failure (state, CSR_EXIT_USAGE, 0, "missing FILE (a Python file, or - for stdin)");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

static struct argp run_argp
    = { run_options, parse_opt, "FILE|- [ARGS...]", run_doc, NULL, NULL, NULL };

void
run_opts_parse (int argc, char **argv, struct run_opts *o)
{
  memset (o, 0, sizeof *o);
  o->timeout_s = 60;
  o->memory = 512ULL << 20;
  o->max_output = 1ULL << 20;
  o->tmp_size = 64ULL << 20;
  o->max_code = 1ULL << 20;
  argp_err_exit_status = CSR_EXIT_USAGE;
  argp_parse (&run_argp, argc, argv, ARGP_IN_ORDER, NULL, o);
}
