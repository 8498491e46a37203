#include "config.h"
#include "run-opts.h"

#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "supervisor/heal.h"
#include "supervisor/limits.h"
#include "util/parse.h"
#include "util/utf8.h"

enum
{
  OPT_TIMEOUT = 't',
  OPT_MEMORY = 'm',
  OPT_ENV = 'e',
  OPT_JSON = 'j',
  OPT_QUIET = 'q',
  OPT_MAX_OUTPUT = 1000,
  OPT_ROOTFS,
  OPT_TMP_SIZE,
  OPT_CACHE_DIR,
  OPT_WITH, /* --with (package layers) */
  OPT_MAX_CODE,
  OPT_POLICY,
  OPT_ALLOW,
  OPT_SILENT_CONF,
  OPT_SILENT_PATTERN,
  OPT_NO_SILENT_SCAN,
  OPT_HEAL_CONF,
  OPT_NO_HEAL,
  OPT_PATCH_CMD,
  OPT_PATCH_TIMEOUT,
  OPT_MAX_ATTEMPTS,
  OPT_PIDS,
  OPT_CPUS,
  OPT_CPU,
  OPT_BEST_EFFORT,
  OPT_SECCOMP,
  OPT_NET,
  OPT_ALLOW_HOST_NET,
  OPT_USER,
  OPT_LLM,
  OPT_NO_LLM,
  OPT_LLM_BASE_URL,
  OPT_LLM_CA_FILE,
  OPT_ENV_FILE,
  OPT_LLM_RETRIES,
  OPT_LLM_MAX_CALLS,
  OPT_LLM_TIMEOUT,
  OPT_RAW_OUTPUT,
  OPT_LABEL,
  /* issue 14 */
  OPT_STDIN,
  OPT_INTERACTIVE = 'i',
  OPT_STDIN_MAX = 1100,
  OPT_LIVE,
  OPT_NO_LIVE,
};

/* Options shared by run and check. */
static struct argp_option common_options[] = {
  { "timeout", OPT_TIMEOUT, "DURATION", 0,
    "Kill the whole jail after DURATION, per attempt (30, 1.5s, 500ms, 2m; default 60s, at most "
    "24h)",
    0 },
  { "rootfs", OPT_ROOTFS, "PATH", 0,
    "Python rootfs: a tarball (unpacked once into the cache) or a directory", 0 },
  { "cache-dir", OPT_CACHE_DIR, "DIR", 0,
    "The cache: unpacked rootfs trees, compiled seccomp programs and gate (must be yours)", 0 },
  /* --with (package layers, csrun-rootfs(1)) */
  { "with", OPT_WITH, "PKG", 0,
    "Run on the rootfs plus a layer of this Debian package and its dependencies (python3-numpy; "
    "built once with apt, without root, then cached: csrun rootfs add); repeatable",
    0 },
  { "policy", OPT_POLICY, "FILE", 0, "Gate policy to use instead of the default gate.conf", 0 },
  { "allow", OPT_ALLOW, "RULE", 0,
    "Switch a gate rule off (broad-except, undefined-name, ...), or allow one call with "
    "call:NAME (call:os.system); repeatable",
    0 },
  { "max-code-size", OPT_MAX_CODE, "SIZE", 0, "Refuse snippets larger than SIZE (default 1M)", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

/* issue 17: what only `csrun run` and `csrun check` take (csrun batch has
 * its own output and labels); parsed by parse_common too. */
static struct argp_option output_options[] = {
  { "json", OPT_JSON, NULL, 0,
    "Print the result as one JSON object, with one write (runs appending to one file never "
    "interleave)",
    0 },
  { "label", OPT_LABEL, "TEXT", 0,
    "Copy TEXT into the JSON result as \"label\" (at most 256 bytes, no control characters)", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static struct argp_option run_options[] = {
  { "memory", OPT_MEMORY, "SIZE", 0,
    "Memory limit of the whole jail (512M, 1G; default 512M): a cgroup, else RLIMIT_DATA per "
    "process",
    0 },
  { "pids", OPT_PIDS, "N", 0,
    "At most N processes and threads in the jail (at least 2; default 128): a cgroup, else "
    "RLIMIT_NPROC",
    0 },
  { "cpus", OPT_CPUS, "FRACTION", 0, "CPU share of the jail (0.5, 2; default 1): a cgroup only",
    0 },
  { "cpu", OPT_CPU, "MILLICORES", 0, "The same in millicores (500m)", 0 },
  { "best-effort-limits", OPT_BEST_EFFORT, NULL, 0,
    "Run even when an explicit limit can't be enforced here (the result says which)", 0 },
  { "seccomp", OPT_SECCOMP, "FILE|unconfined", 0,
    "OCI seccomp profile to load instead of the default allowlist, or none at all", 0 },
  { "net", OPT_NET, "none|host", 0,
    "none (default): an empty network namespace with lo up; host needs --allow-host-net", 0 },
  { "user", OPT_USER, "UID[:GID]", 0,
    "Run the snippet as UID (and GID, default UID) inside, mapped to the invoking user's "
    "subordinate ids (/etc/subuid, /etc/subgid) rather than to the user itself",
    0 },
  { "allow-host-net", OPT_ALLOW_HOST_NET, NULL, 0,
    "Permit --net host (the snippet shares the host's network: no isolation)", 0 },
  { "max-output", OPT_MAX_OUTPUT, "SIZE", 0,
    "Keep at most SIZE bytes of stdout and of stderr: the first and the last SIZE/2 "
    "(default 1M)",
    0 },
  { "env", OPT_ENV, "KEY[=VALUE]", 0,
    "Add KEY=VALUE to the jail's environment (KEY alone copies the host's value); repeatable", 0 },
  { "tmp-size", OPT_TMP_SIZE, "SIZE", 0, "Size of the /tmp and /work tmpfs, each (default 64M)",
    0 },
  { "max-attempts", OPT_MAX_ATTEMPTS, "N", 0,
    "Run at most N attempts: the first and N-1 healed ones (1-10, default 3)", 0 },
  { "no-heal", OPT_NO_HEAL, NULL, 0, "No local healing (heal.conf rules)", 0 },
  { "heal-conf", OPT_HEAL_CONF, "FILE", 0, "Import table to use instead of heal.conf", 0 },
  { "patch-cmd", OPT_PATCH_CMD, "PROGRAM", 0,
    "Ask PROGRAM (run by /bin/sh, outside the jail) for a patch when local healing can't: it "
    "reads {\"code\",\"diagnosis\",\"attempt\",\"violations\",\"stdout_tail\",\"stderr_tail\"} "
    "JSON and prints the whole fixed program; its first word must exist (a path, or on PATH)",
    0 },
  { "patch-timeout", OPT_PATCH_TIMEOUT, "DURATION", 0,
    "Time allowed to --patch-cmd per call (default 60s)", 0 },
  { "llm", OPT_LLM, "PROVIDER[:MODEL]", 0,
    "Heal with a model when local rules can't: openai, anthropic, gemini, ollama or deepseek "
    "(default: CSRUN_LLM, else the first provider whose API key is in the environment, else none)",
    0 },
  { "no-llm", OPT_NO_LLM, NULL, 0, "Never call a model (local healing and --patch-cmd only)", 0 },
  { "llm-base-url", OPT_LLM_BASE_URL, "URL", 0,
    "The provider's base URL (an OpenAI-compatible server: vLLM, LiteLLM, llama.cpp, ...); "
    "the API key is then optional, and without --llm it means the openai format",
    0 },
  { "llm-ca-file", OPT_LLM_CA_FILE, "FILE", 0,
    "Trust the CA certificates in FILE (PEM) instead of the system's", 0 },
  { "env-file", OPT_ENV_FILE, "FILE", 0,
    "Read API keys and CSRUN_LLM* settings from FILE (KEY=VALUE lines, as .env); the "
    "environment wins",
    0 },
  { "llm-retries", OPT_LLM_RETRIES, "N", 0,
    "Replies to ask for per healing step when one is unusable (1-10, default 3)", 0 },
  { "llm-max-calls", OPT_LLM_MAX_CALLS, "N", 0,
    "At most N requests to the provider in this run (0-1000, default 6)", 0 },
  { "llm-timeout", OPT_LLM_TIMEOUT, "DURATION", 0, "Time allowed to one request (default 120s)",
    0 },
  { "silent-pattern", OPT_SILENT_PATTERN, "REGEX", 0,
    "Also treat output matching REGEX (extended, case-insensitive) as a failure; repeatable", 0 },
  { "silent-conf", OPT_SILENT_CONF, "FILE", 0,
    "Silent-failure patterns to use instead of silent-failure.conf", 0 },
  { "no-silent-scan", OPT_NO_SILENT_SCAN, NULL, 0, "Trust exit status 0 (no silent-failure scan)",
    0 },
  { "quiet", OPT_QUIET, NULL, 0, "Print only the snippet's output (no csrun diagnosis lines)", 0 },
  { "raw-output", OPT_RAW_OUTPUT, NULL, 0,
    "Print the snippet's output to a terminal byte for byte (by default escape sequences and "
    "other controls are shown as text there; pipes and files always get the exact bytes)",
    0 },
  /* issue 14: standard input, live output */
  { "stdin", OPT_STDIN, "FILE|-", 0,
    "The snippet's standard input: FILE, or - for csrun's own even when it is a terminal "
    "(default: csrun's stdin, unless it is a terminal or carries the code; then /dev/null)",
    0 },
  { "interactive", OPT_INTERACTIVE, NULL, 0, "The same as --stdin -", 0 },
  { "stdin-max", OPT_STDIN_MAX, "SIZE", 0,
    "Keep at most SIZE bytes of standard input (the snippet sees end-of-file there; default "
    "256M)",
    0 },
  { "live", OPT_LIVE, NULL, 0,
    "Stream each attempt's output as it comes (the default when stdout is a terminal); with "
    "--json both streams go to stderr",
    0 },
  { "no-live", OPT_NO_LIVE, NULL, 0, "Print only the final attempt's output, at the end", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static const char run_doc[]
    = "Run a Python snippet in a disposable jail; gate it, and heal it when it fails.\v"
      "FILE is a Python source file, or - for standard input; ARGS become sys.argv[1:] (FILE "
      "is a snippet even next to a config.json: the OCI run of a bundle is `csrun run -b "
      "BUNDLE ID`, see csrun-oci(8)).\n\n"
      "Exit status: 0 the snippet succeeded (possibly after healing), 1 it still fails, 2 usage "
      "or input error, 3 blocked by the gate, 124 timed out, 125 csrun itself failed, 129/130/143 "
      "interrupted by SIGHUP/SIGINT/SIGTERM. See csrun-run(1).";

static const char check_doc[]
    = "Run only the AST gate on a snippet (inside the jail) and print its verdict.\v"
      "Exit status: 0 pass, 1 syntax error, 2 usage or input error, 3 blocked, 125 csrun itself "
      "failed. See csrun-check(1).";

/* Why TEXT can't be a --label (NULL: it can): longer than 256 bytes, not
 * UTF-8, or a control character (C0, DEL, C1) in it. */
const char *
csr_label_problem (const char *text)
{
  size_t n = strlen (text);
  if (n > CSR_LABEL_MAX)
    return "longer than 256 bytes";
  if (!csr_utf8_valid (text, n))
    return "not valid UTF-8";
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char)text[i];
      if (c < 0x20 || c == 0x7f
          || (c == 0xc2 && i + 1 < n && (unsigned char)text[i + 1] >= 0x80
              && (unsigned char)text[i + 1] <= 0x9f))
        return "it contains a control character";
    }
  return NULL;
}

void
run_opts_bad_value (struct argp_state *state, const char *opt, csr_error *e)
{
  argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --%s: %s", opt, e->msg);
  csr_error_free (e);
}

static void
push (struct argp_state *state, const char **list, size_t *n, const char *opt, char *arg)
{
  if (*n >= CSR_MAX_LIST)
    argp_failure (state, CSR_EXIT_USAGE, 0, "too many --%s options (at most %d)", opt,
                  CSR_MAX_LIST);
  else
    list[(*n)++] = arg;
}

static error_t
parse_common (int key, char *arg, struct argp_state *state)
{
  struct run_opts *o = state->input;
  csr_error *e = NULL;
  switch (key)
    {
    case OPT_TIMEOUT:
      if (csr_parse_duration (arg, 86400, &o->req.timeout_s, &e) < 0)
        run_opts_bad_value (state, "timeout", e);
      break;
    case OPT_ROOTFS:
      o->req.rootfs = arg;
      break;
    case OPT_CACHE_DIR:
      o->req.cache_dir = arg;
      break;
    case OPT_WITH: /* package layers */
      push (state, o->with, &o->req.n_with, "with", arg);
      break;
    case OPT_POLICY:
      o->req.gate_conf = arg;
      break;
    case OPT_ALLOW:
      push (state, o->allow, &o->req.n_allow, "allow", arg);
      break;
    case OPT_MAX_CODE:
      if (csr_parse_size (arg, 64ULL << 20, &o->req.max_code, &e) < 0)
        run_opts_bad_value (state, "max-code-size", e);
      else if (o->req.max_code == 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --max-code-size: must be positive");
      break;
    case OPT_JSON:
      o->json = true;
      break;
    case OPT_LABEL:
      {
        const char *why = csr_label_problem (arg);
        if (why)
          argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --label: %s", why);
        o->label = arg;
        break;
      }
    case ARGP_KEY_ARG:
      /* FILE, then everything else belongs to the snippet. */
      o->file = arg;
      o->req.args = &state->argv[state->next];
      o->req.n_args = state->argc - state->next;
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

/* issue 17: the jail options without FILE, --json and --label (for csrun batch). */
static error_t
parse_common_jail (int key, char *arg, struct argp_state *state)
{
  if (key == ARGP_KEY_ARG || key == ARGP_KEY_NO_ARGS || key == OPT_JSON || key == OPT_LABEL)
    return ARGP_ERR_UNKNOWN;
  return parse_common (key, arg, state);
}

static error_t
parse_run (int key, char *arg, struct argp_state *state)
{
  struct run_opts *o = state->input;
  csr_error *e = NULL;
  uint64_t u = 0;
  switch (key)
    {
    case ARGP_KEY_INIT:
      state->child_inputs[0] = o;
      state->child_inputs[1] = o; /* --json, --label, FILE */
      state->child_inputs[2] = o; /* files in and out */
      break;
    case OPT_MEMORY:
      if (csr_parse_size (arg, 1ULL << 40, &o->req.limits.memory, &e) < 0)
        run_opts_bad_value (state, "memory", e);
      else if (o->req.limits.memory < (16ULL << 20))
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --memory: %s is below 16 MiB", arg);
      o->req.limits.explicit_mask |= CSR_LIMIT_MEMORY;
      break;
    case OPT_MAX_OUTPUT:
      if (csr_parse_size (arg, 1ULL << 30, &o->req.max_output, &e) < 0)
        run_opts_bad_value (state, "max-output", e);
      break;
    case OPT_TMP_SIZE:
      if (csr_parse_size (arg, 64ULL << 30, &o->req.tmp_size, &e) < 0)
        run_opts_bad_value (state, "tmp-size", e);
      else if (o->req.tmp_size < (64ULL << 10))
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --tmp-size: %s is below 64 KiB", arg);
      break;
    case OPT_ENV:
      {
        size_t klen;
        bool has_value;
        if (csr_parse_env (arg, &klen, &has_value, &e) < 0)
          run_opts_bad_value (state, "env", e);
        else if (has_value && strchr (arg + klen + 1, '\n'))
          argp_failure (state, CSR_EXIT_USAGE, 0,
                        "invalid --env: the value of %.*s contains a newline", (int)klen, arg);
        else if (!has_value && getenv (arg) && strchr (getenv (arg), '\n'))
          argp_failure (state, CSR_EXIT_USAGE, 0,
                        "invalid --env: the value of %s in csrun's environment contains a "
                        "newline",
                        arg);
        else if (o->req.n_env >= CSR_MAX_ENV)
          argp_failure (state, CSR_EXIT_USAGE, 0, "too many --env options (at most %d)",
                        CSR_MAX_ENV);
        else
          o->env[o->req.n_env++] = arg;
        break;
      }
    case OPT_MAX_ATTEMPTS:
      if (csr_parse_uint (arg, 1, 10, &u, &e) < 0)
        run_opts_bad_value (state, "max-attempts", e);
      else
        o->req.max_attempts = (int)u;
      break;
    case OPT_PIDS:
      if (csr_parse_uint (arg, 1, 1000000, &o->req.limits.pids, &e) < 0)
        run_opts_bad_value (state, "pids", e);
      else if (o->req.limits.pids < CSR_LIMITS_MIN_PIDS)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--pids: at least %d processes are needed to start the jail (its init and "
                      "Python)",
                      CSR_LIMITS_MIN_PIDS);
      o->req.limits.explicit_mask |= CSR_LIMIT_PIDS;
      break;
    case OPT_CPUS:
      {
        double d = 0;
        char *end = NULL;
        d = strtod (arg, &end);
        if (end == arg || *end != '\0' || !(d >= 0.01) || d > 1024)
          argp_failure (state, CSR_EXIT_USAGE, 0,
                        "invalid --cpus: '%s' (a number of CPUs from 0.01 to 1024, e.g. 0.5)", arg);
        o->req.limits.cpu_millis = (uint64_t)(d * 1000 + 0.5);
        o->req.limits.explicit_mask |= CSR_LIMIT_CPU;
        break;
      }
    case OPT_CPU:
      {
        size_t n = strlen (arg);
        char num[32];
        if (n < 2 || n > sizeof num || arg[n - 1] != 'm')
          argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --cpu: '%s' (millicores, e.g. 500m)",
                        arg);
        else
          {
            memcpy (num, arg, n - 1);
            num[n - 1] = '\0';
            if (csr_parse_uint (num, 10, 1024000, &o->req.limits.cpu_millis, &e) < 0)
              run_opts_bad_value (state, "cpu", e);
          }
        o->req.limits.explicit_mask |= CSR_LIMIT_CPU;
        break;
      }
    case OPT_BEST_EFFORT:
      o->req.limits.best_effort = true;
      break;
    case OPT_SECCOMP:
      o->req.seccomp = arg;
      break;
    case OPT_NET:
      /* argp gives the required argument; the check keeps GCC's format
       * analysis (which can't know that) quiet under the sanitizers. */
      if (arg == NULL || (strcmp (arg, "none") != 0 && strcmp (arg, "host") != 0))
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "invalid --net: '%s' (none or host; bridged networking is not built yet)",
                      arg ? arg : "");
      else
        {
          o->net = arg;
          o->req.host_net = strcmp (arg, "host") == 0;
        }
      break;
    case OPT_USER:
      {
        char buf[32];
        snprintf (buf, sizeof buf, "%s", arg);
        char *colon = strchr (buf, ':');
        if (colon)
          *colon = '\0';
        uint64_t gid = 0;
        if (csr_parse_uint (buf, 1, 65535, &u, &e) < 0)
          run_opts_bad_value (state, "user", e);
        else if (colon && csr_parse_uint (colon + 1, 1, 65535, &gid, &e) < 0)
          run_opts_bad_value (state, "user", e);
        o->req.user_uid = (uint32_t)u;
        o->req.user_gid = colon ? (uint32_t)gid : o->req.user_uid;
        break;
      }
    case OPT_ALLOW_HOST_NET:
      o->allow_host_net = true;
      break;
    case OPT_NO_HEAL:
      o->req.no_heal = true;
      break;
    case OPT_HEAL_CONF:
      o->req.heal_conf = arg;
      break;
    case OPT_PATCH_CMD:
      if (arg[0] == '\0')
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --patch-cmd: empty");
      /* A program that is not there is a usage error now, not a failure
       * found when a snippet first needs healing. */
      if (csr_patchcmd_check (arg, &e) < 0)
        run_opts_bad_value (state, "patch-cmd", e);
      o->req.patch_cmd = arg;
      break;
    case OPT_PATCH_TIMEOUT:
      if (csr_parse_duration (arg, 3600, &o->req.patch_timeout_s, &e) < 0)
        run_opts_bad_value (state, "patch-timeout", e);
      break;
    case OPT_LLM:
      if (arg[0] == '\0')
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --llm: empty");
      o->llm.llm = arg;
      break;
    case OPT_NO_LLM:
      o->llm.no_llm = true;
      break;
    case OPT_LLM_BASE_URL:
      o->llm.base_url = arg;
      break;
    case OPT_LLM_CA_FILE:
      o->llm.ca_file = arg;
      break;
    case OPT_ENV_FILE:
      o->llm.env_file = arg;
      break;
    case OPT_LLM_RETRIES:
      if (csr_parse_uint (arg, 1, 10, &u, &e) < 0)
        run_opts_bad_value (state, "llm-retries", e);
      else
        o->llm.retries = (int)u;
      break;
    case OPT_LLM_MAX_CALLS:
      if (csr_parse_uint (arg, 0, 1000, &u, &e) < 0)
        run_opts_bad_value (state, "llm-max-calls", e);
      else
        o->llm.max_calls = (int)u;
      break;
    case OPT_LLM_TIMEOUT:
      if (csr_parse_duration (arg, 3600, &o->llm.timeout_s, &e) < 0)
        run_opts_bad_value (state, "llm-timeout", e);
      break;
    case OPT_SILENT_PATTERN:
      push (state, o->silent_patterns, &o->req.n_silent_patterns, "silent-pattern", arg);
      break;
    case OPT_SILENT_CONF:
      o->req.silent_conf = arg;
      break;
    case OPT_NO_SILENT_SCAN:
      o->req.no_silent_scan = true;
      break;
    case OPT_QUIET:
      o->quiet = true;
      break;
    case OPT_RAW_OUTPUT:
      o->raw_output = true;
      break;
    /* issue 14 */
    case OPT_STDIN:
      o->stdin_file = arg;
      break;
    case OPT_INTERACTIVE:
      o->stdin_file = "-";
      break;
    case OPT_STDIN_MAX:
      if (csr_parse_size (arg, 1ULL << 40, &o->req.stdin_max, &e) < 0)
        run_opts_bad_value (state, "stdin-max", e);
      break;
    case OPT_LIVE:
      o->live = true;
      o->no_live = false;
      break;
    case OPT_NO_LIVE:
      o->no_live = true;
      o->live = false;
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

static error_t
parse_check (int key, char *arg, struct argp_state *state)
{
  (void)arg;
  if (key == ARGP_KEY_INIT)
    {
      state->child_inputs[0] = state->input;
      state->child_inputs[1] = state->input;
      return 0;
    }
  return ARGP_ERR_UNKNOWN;
}

/* ---------------------------------------------------------------- files in and out */
/* --in, --in-max, --mount, --out, --out-path, --out-max (csrun-run(1), FILES IN AND OUT):
 * parsed and checked here, done by the library (supervisor/files.h). */
enum
{
  OPT_IN = 1100,
  OPT_IN_MAX,
  OPT_MOUNT,
  OPT_OUT,
  OPT_OUT_PATH,
  OPT_OUT_MAX,
};

/* The parsed --in and --mount (their strings are allocated: kept for the
 * process's life, as the command line is) and the --out-path globs. */
static struct
{
  struct csr_in_arg inputs[CSR_MAX_LIST];
  struct csr_mount_arg mounts[16];
  const char *out_globs[CSR_MAX_LIST];
} files_args;

static struct argp_option files_options[] = {
  { "in", OPT_IN, "PATH[:DEST]", 0,
    "Copy the host file or directory PATH into the jail at DEST (default /work/NAME; below /work "
    "or /tmp), a fresh copy for every attempt; repeatable",
    0 },
  { "in-max", OPT_IN_MAX, "SIZE", 0, "At most SIZE bytes of --in files in all (default 256M)", 0 },
  { "mount", OPT_MOUNT, "SRC:DST[:ro|rw]", 0,
    "Bind the host directory SRC at DST (below /work, or /data, /mnt), read-only unless rw; "
    "repeatable",
    0 },
  { "out", OPT_OUT, "DIR", 0,
    "After the final attempt, copy the files the snippet wrote below /work to DIR (made if "
    "missing; regular files and directories only)",
    0 },
  { "out-path", OPT_OUT_PATH, "GLOB", 0,
    "Copy out only what matches GLOB (relative to /work, as fnmatch; a directory brings its "
    "contents); repeatable",
    0 },
  { "out-max", OPT_OUT_MAX, "SIZE", 0,
    "At most SIZE bytes copied out (default 256M); the rest is listed as skipped", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_files (int key, char *arg, struct argp_state *state)
{
  struct run_opts *o = state->input;
  csr_error *e = NULL;
  switch (key)
    {
    case OPT_IN:
      if (o->req.n_inputs >= CSR_MAX_LIST)
        argp_failure (state, CSR_EXIT_USAGE, 0, "too many --in options (at most %d)", CSR_MAX_LIST);
      else if (csr_in_arg_parse (arg, &files_args.inputs[o->req.n_inputs], &e) < 0)
        {
          argp_failure (state, CSR_EXIT_USAGE, 0, "%s", e->msg);
          csr_error_free (e);
        }
      else
        o->req.n_inputs++;
      break;
    case OPT_MOUNT:
      if (o->req.n_mounts >= sizeof files_args.mounts / sizeof files_args.mounts[0])
        argp_failure (state, CSR_EXIT_USAGE, 0, "too many --mount options (at most %zu)",
                      sizeof files_args.mounts / sizeof files_args.mounts[0]);
      else if (csr_mount_arg_parse (arg, &files_args.mounts[o->req.n_mounts], &e) < 0)
        {
          argp_failure (state, CSR_EXIT_USAGE, 0, "%s", e->msg);
          csr_error_free (e);
        }
      else
        o->req.n_mounts++;
      break;
    case OPT_IN_MAX:
      if (csr_parse_size (arg, 64ULL << 30, &o->req.in_max, &e) < 0)
        run_opts_bad_value (state, "in-max", e);
      break;
    case OPT_OUT_MAX:
      if (csr_parse_size (arg, 64ULL << 30, &o->req.out_max, &e) < 0)
        run_opts_bad_value (state, "out-max", e);
      break;
    case OPT_OUT:
      if (arg[0] == '\0')
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --out: empty");
      o->req.out_dir = arg;
      break;
    case OPT_OUT_PATH:
      push (state, files_args.out_globs, &o->req.n_out_globs, "out-path", arg);
      break;
    case ARGP_KEY_INIT:
      /* A second parse in one process (the unit tests) starts afresh. */
      for (size_t i = 0; i < CSR_MAX_LIST; i++)
        csr_in_arg_release (&files_args.inputs[i]);
      for (size_t i = 0; i < sizeof files_args.mounts / sizeof files_args.mounts[0]; i++)
        csr_mount_arg_release (&files_args.mounts[i]);
      o->req.inputs = files_args.inputs;
      o->req.mounts = files_args.mounts;
      o->req.out_globs = files_args.out_globs;
      break;
    case ARGP_KEY_END:
      if (o->req.n_out_globs > 0 && o->req.out_dir == NULL)
        argp_failure (state, CSR_EXIT_USAGE, 0, "--out-path needs --out DIR");
      if (csr_files_args_check (files_args.inputs, o->req.n_inputs, files_args.mounts,
                                o->req.n_mounts, &e)
          < 0)
        {
          argp_failure (state, CSR_EXIT_USAGE, 0, "%s", e->msg);
          csr_error_free (e);
        }
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

static struct argp files_argp = { files_options, parse_files, NULL, NULL, NULL, NULL, NULL };
/* ---------------------------------------------------------------- end of files in and out */

static struct argp common_argp
    = { common_options, parse_common_jail, NULL, NULL, NULL, NULL, NULL };
static struct argp output_argp = { output_options, parse_common, NULL, NULL, NULL, NULL, NULL };
static struct argp_child children[]
    = { { &common_argp, 0, NULL, 0 }, { &output_argp, 0, NULL, 0 }, { NULL, 0, NULL, 0 } };
static struct argp_child run_children[] = { { &common_argp, 0, NULL, 0 },
                                            { &output_argp, 0, NULL, 0 },
                                            { &files_argp, 0, "Files in and out:", 0 },
                                            { NULL, 0, NULL, 0 } };
static struct argp run_argp
    = { run_options, parse_run, "FILE|- [ARGS...]", run_doc, run_children, NULL, NULL };
static struct argp check_argp = { NULL, parse_check, "FILE|-", check_doc, children, NULL, NULL };

/* ---------------------------------------------------------------- issue 18: noted options */
/* Keep the option KEY of TABLE (ARG its value) in O's NOTED. */
static void
note_option (struct argp_state *state, const struct argp_option *table, int key, const char *arg)
{
  struct run_opts *o = state->input;
  const struct argp_option *x = table;
  while ((x->name || x->key) && x->key != key)
    x++;
  if (!o->note || x->name == NULL)
    return;
  char **nv = realloc (o->noted, (o->n_noted + 1) * sizeof *nv);
  if (nv == NULL)
    argp_failure (state, CSR_EXIT_INTERNAL, ENOMEM, "--%s", x->name);
  o->noted = nv;
  if ((arg ? asprintf (&nv[o->n_noted], "--%s=%s", x->name, arg)
           : asprintf (&nv[o->n_noted], "--%s", x->name))
      < 0)
    argp_failure (state, CSR_EXIT_INTERNAL, ENOMEM, "--%s", x->name);
  o->n_noted++;
}

/* The option named by S ("--name=value" or "--name") is NAME. */
static bool
noted_is (const char *s, const char *name)
{
  size_t n = strlen (name);
  return strncmp (s + 2, name, n) == 0 && (s[2 + n] == '\0' || s[2 + n] == '=');
}

const char **
run_opts_sandbox_args (const struct run_opts *o, const char *const *skip)
{
  const char **v = calloc (o->n_noted + 1, sizeof *v);
  if (v == NULL)
    return NULL;
  const struct argp *sa = run_opts_sandbox_argp ();
  size_t n = 0;
  for (size_t i = 0; i < o->n_noted; i++)
    {
      bool take = false;
      for (const struct argp_option *x = sa->options; x->name || x->key; x++)
        take = take || (x->name && noted_is (o->noted[i], x->name));
      for (const char *const *k = skip; k && *k && take; k++)
        take = !noted_is (o->noted[i], *k);
      if (take)
        v[n++] = o->noted[i];
    }
  return v;
}

void
run_opts_release_noted (struct run_opts *o)
{
  for (size_t i = 0; i < o->n_noted; i++)
    free (o->noted[i]);
  free (o->noted);
  o->noted = NULL;
  o->n_noted = 0;
}
/* ---------------------------------------------------------------- end of noted options */

/* ---------------------------------------------------------------- issue 17: csrun batch */
/* The options of `csrun run` but FILE, --json and --label, as an argp child
 * (its input: the struct run_opts). */
static error_t
parse_run_batch (int key, char *arg, struct argp_state *state)
{
  if (key == ARGP_KEY_INIT)
    {
      state->child_inputs[0] = state->input;
      state->child_inputs[1] = state->input; /* files in and out */
      return 0;
    }
  error_t r = parse_run (key, arg, state);
  if (r == 0)
    note_option (state, run_options, key, arg);
  return r;
}

/* The options shared with check, noted too (issue 18). */
static error_t
parse_common_batch (int key, char *arg, struct argp_state *state)
{
  error_t r = parse_common_jail (key, arg, state);
  if (r == 0)
    note_option (state, common_options, key, arg);
  return r;
}

static struct argp common_batch_argp
    = { common_options, parse_common_batch, NULL, NULL, NULL, NULL, NULL };
static struct argp_child batch_run_children[] = { { &common_batch_argp, 0, NULL, 0 },
                                                  { &files_argp, 0, "Files in and out:", 0 },
                                                  { NULL, 0, NULL, 0 } };
const struct argp run_opts_batch_argp
    = { run_options, parse_run_batch, NULL, NULL, batch_run_children, NULL, NULL };
/* ---------------------------------------------------------------- end of csrun batch */

/* ---------------------------------------------------------------- issue 15: csrun sandbox run */
/* What a sandbox brings itself: its rootfs, its limits, its seccomp filter,
 * its network, its ids, its files. */
static const int sandbox_dropped[]
    = { OPT_ROOTFS,         OPT_CACHE_DIR, OPT_WITH,        OPT_MEMORY,  OPT_PIDS,
        OPT_CPUS,           OPT_CPU,       OPT_BEST_EFFORT, OPT_SECCOMP, OPT_NET,
        OPT_ALLOW_HOST_NET, OPT_USER,      OPT_TMP_SIZE };

static error_t
parse_sandbox_run (int key, char *arg, struct argp_state *state)
{
  if (key == ARGP_KEY_INIT || key == ARGP_KEY_ARG || key == ARGP_KEY_ARGS || key == ARGP_KEY_NO_ARGS
      || key == ARGP_KEY_END)
    return ARGP_ERR_UNKNOWN; /* the parent's: ID, FILE, ARGS */
  error_t r = parse_run (key, arg, state);
  return r == ARGP_ERR_UNKNOWN ? parse_common (key, arg, state) : r;
}

const struct argp *
run_opts_sandbox_argp (void)
{
  static struct argp_option opts[sizeof common_options / sizeof common_options[0]
                                 + sizeof output_options / sizeof output_options[0]
                                 + sizeof run_options / sizeof run_options[0]];
  static struct argp argp = { opts, parse_sandbox_run, NULL, NULL, NULL, NULL, NULL };
  if (opts[0].name != NULL)
    return &argp;
  const struct argp_option *tables[] = { common_options, output_options, run_options };
  size_t n = 0;
  for (size_t t = 0; t < 3; t++)
    for (const struct argp_option *x = tables[t]; x->name || x->key; x++)
      {
        bool drop = false;
        for (size_t d = 0; d < sizeof sandbox_dropped / sizeof sandbox_dropped[0]; d++)
          drop = drop || x->key == sandbox_dropped[d];
        if (!drop)
          opts[n++] = *x;
      }
  return &argp;
}
/* ---------------------------------------------------------------- end of csrun sandbox run */

static const char *
lookup_env (const char *name, void *data)
{
  (void)data;
  return getenv (name);
}

/* The library's defaults; the lists and the LLM selection live here. */
void
run_opts_defaults (struct run_opts *o)
{
  memset (o, 0, sizeof *o);
  csr_snippet_request_init (&o->req);
  o->req.env = o->env;
  o->req.allow = o->allow;
  o->req.with = o->with; /* package layers */
  o->req.silent_patterns = o->silent_patterns;
  o->llm.max_calls = -1;
  o->llm.getenv_fn = lookup_env;
  o->req.llm = &o->llm;
  o->net = "none";
  argp_err_exit_status = CSR_EXIT_USAGE;
}

void
run_opts_parse (int argc, char **argv, struct run_opts *o)
{
  run_opts_defaults (o);
  argp_parse (&run_argp, argc, argv, ARGP_IN_ORDER, NULL, o);
}

void
check_opts_parse (int argc, char **argv, struct run_opts *o)
{
  run_opts_defaults (o);
  o->req.check_only = true;
  argp_parse (&check_argp, argc, argv, ARGP_IN_ORDER, NULL, o);
  if (o->req.n_args > 0)
    {
      fprintf (stderr, "%s: unexpected argument '%s' after FILE\n", argv[0], o->req.args[0]);
      exit (CSR_EXIT_USAGE);
    }
}
