/* csrun — global options and the subcommand table. */
#include "config.h"

#include <argp.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/hook.h"
#include "cmd/oci.h"
#include "util/log.h"

#define OCI_SPEC_VERSION "1.0.2"
/* +SYSTEMD_NOTIFY: the OCI commands proxy NOTIFY_SOCKET (sd_notify), as
 * crun's +SYSTEMD does (crun's tests look for "SYSTEMD"); csrun links no
 * libsystemd and has no systemd cgroup driver beyond --systemd-cgroup's
 * path form. */
#define FEATURES "+SECCOMP +CAP +NL3 +YAJL +CURL +ARCHIVE +SYSTEMD_NOTIFY"

struct command
{
  const char *name;
  int (*fn) (struct csr_global *g, int argc, char **argv);
  const char *help;
};

/* `csrun run` is the snippet runner, or the OCI run of a bundle. */
static int
cmd_run_either (struct csr_global *g, int argc, char **argv)
{
  if (oci_run_is_bundle (g, argc, argv))
    return cmd_oci_run (g, argc, argv);
  return cmd_run (g, argc, argv);
}

static const struct command commands[] = {
  { "run", cmd_run_either, "run a Python snippet in a disposable jail" },
  { "check", cmd_check, "run only the AST gate on a snippet" },
  { "batch", cmd_batch, "run many snippets in parallel: progress, report, resume, shards" },
  { "cache", cmd_cache, "verify, list (ls) and prune the cache: rootfs trees, compiled gates" },
  { "sandbox", cmd_sandbox, "long-lived jails: exec, run, sessions, files, ports, checkpoints" },
  { "mcp", cmd_mcp, "serve the Model Context Protocol on stdin/stdout (agent tools)" },
  { "tool-schema", cmd_tool_schema,
    "print the agent tools' schemas (openai, anthropic, gemini, mcp)" },
  { "create", cmd_oci_create, "OCI: create a container from a bundle" },
  { "start", cmd_oci_start, "OCI: start a created container" },
  { "state", cmd_oci_state, "OCI: print a container's state" },
  { "kill", cmd_oci_kill, "OCI: signal a container" },
  { "delete", cmd_oci_delete, "OCI: delete a container" },
  { "list", cmd_oci_list, "OCI: list containers" },
  { "ps", cmd_oci_ps, "OCI: list a container's processes" },
  { "spec", cmd_oci_spec, "OCI: write a default config.json" },
  { "features", cmd_oci_features, "OCI: what this runtime supports" },
  { "pause", cmd_oci_pause, "OCI: freeze a container" },
  { "resume", cmd_oci_resume, "OCI: thaw a container" },
  { "exec", cmd_oci_exec, "OCI: run a process in a container" },
  { "update", cmd_oci_update, "OCI: change a container's resource limits" },
  { "events", cmd_oci_events, "OCI: a container's cgroup statistics and OOM events" },
  { "hook", cmd_hook, "OCI hook: gate a container's Python, scan its log" },
  { "rootfs", cmd_rootfs, "add Debian packages to the rootfs as a cached layer" },
  { "checkpoint", cmd_oci_unsupported, "OCI: not supported (no CRIU)" },
  { "restore", cmd_oci_unsupported, "OCI: not supported (no CRIU)" },
  { NULL, NULL, NULL },
};

extern const char csr_commit[]; /* commit.c, generated at build time */

static void
print_version (FILE *f, struct argp_state *state)
{
  (void)state;
  /* runc's first three lines, which tools parse ("NAME version X", "commit:",
   * "spec:"), NAME being what csrun was started as; then the features. */
  fprintf (f, "%s version %s\ncommit: %s\nspec: %s\n%s\n", oci_prog_name (), PACKAGE_VERSION,
           csr_commit, OCI_SPEC_VERSION, FEATURES);
}

enum
{
  OPT_DEBUG = 1000,
  OPT_ROOT,
  OPT_LOG,
  OPT_LOG_FORMAT,
  OPT_SYSTEMD_CGROUP,
  OPT_CGROUP_MANAGER,
  OPT_ROOTLESS,
  OPT_USAGE,
  OPT_HELP = 'h',
  OPT_VERSION = 'v',
};

static struct argp_option global_options[] = {
  { "debug", OPT_DEBUG, NULL, 0, "Print debug messages on stderr", 0 },
  { "root", OPT_ROOT, "DIR", 0,
    "OCI: the state directory (default $XDG_RUNTIME_DIR/csrun, else /run/csrun)", 0 },
  { "log", OPT_LOG, "FILE", 0, "OCI: also write errors and warnings to FILE", 0 },
  { "log-format", OPT_LOG_FORMAT, "text|json", 0, "OCI: the format of --log (default text)", 0 },
  { "systemd-cgroup", OPT_SYSTEMD_CGROUP, NULL, 0,
    "OCI: cgroupsPath is slice:prefix:name (systemd style)", 0 },
  { "cgroup-manager", OPT_CGROUP_MANAGER, "cgroupfs|systemd|disabled", 0,
    "OCI: how container cgroups are managed", 0 },
  { "rootless", OPT_ROOTLESS, "true|false|auto", OPTION_ARG_OPTIONAL,
    "OCI: accepted (csrun "
    "detects it)",
    0 },
  { "help", OPT_HELP, NULL, 0, "Print the commands and global options", 0 },
  { "version", OPT_VERSION, NULL, 0, "Print the version (runc's format) and the features", 0 },
  /* argp's names before csrun followed runc: still accepted. */
  { NULL, 'V', NULL, OPTION_HIDDEN, NULL, 0 },
  { NULL, '?', NULL, OPTION_HIDDEN, NULL, 0 },
  { "usage", OPT_USAGE, NULL, OPTION_HIDDEN, NULL, 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static const char global_doc[]
    = "csrun: run untrusted Python in a disposable rootless jail.\v"
      "Commands:\n"
      "  run        gate, run and heal a Python snippet in a disposable jail\n"
      "  rootfs add PKG...  add Debian packages to the rootfs as a cached layer (run --with)\n"
      "  check      run only the AST gate on a snippet (in the jail)\n"
      "  batch      run many snippets in parallel jails: report, resume, shards\n"
      "  cache verify [--repair]  check the cached rootfs trees against their manifests\n"
      "  cache ls | prune [--older-than D]  list or remove the cache's trees, gates, programs\n"
      "  sandbox create|exec|run|cp|checkpoint|restore|...  long-lived jails (csrun-sandbox(1))\n"
      "  mcp        the Model Context Protocol on stdin/stdout: tools for agents (csrun-mcp(1))\n"
      "  tool-schema --format openai|anthropic|gemini|mcp  the tools' schemas for an SDK\n\n"
      "OCI runtime commands (runc/crun compatible; see csrun-oci(8)):\n"
      "  create, start, state, kill, delete, run (with a bundle), list, ps, spec,\n"
      "  features, pause, resume, exec, update, events\n"
      "  hook STAGE   OCI hook: gate a container's Python script, scan its log\n\n"
      "Run 'csrun COMMAND --help' for a command's options. See csrun(1).";

struct global_parse
{
  struct csr_global g;
  int cmd_index;
};

static error_t
parse_global (int key, char *arg, struct argp_state *state)
{
  struct global_parse *p = state->input;
  switch (key)
    {
    case OPT_DEBUG:
      p->g.debug = 1;
      csr_log_set_level (CSR_LOG_DEBUG);
      break;
    case OPT_ROOT:
      p->g.root = arg;
      p->g.oci_flags = true;
      break;
    case OPT_LOG:
      p->g.log_path = arg;
      p->g.oci_flags = true;
      break;
    case OPT_LOG_FORMAT:
      if (arg == NULL || (strcmp (arg, "json") != 0 && strcmp (arg, "text") != 0))
        argp_failure (state, 1, 0, "invalid --log-format '%s' (text or json)", arg ? arg : "");
      p->g.log_json = strcmp (arg, "json") == 0;
      p->g.oci_flags = true;
      break;
    case OPT_SYSTEMD_CGROUP:
      p->g.systemd_cgroup = true;
      p->g.oci_flags = true;
      break;
    case OPT_CGROUP_MANAGER:
      if (arg == NULL
          || (strcmp (arg, "cgroupfs") != 0 && strcmp (arg, "systemd") != 0
              && strcmp (arg, "disabled") != 0))
        argp_failure (state, 1, 0, "invalid --cgroup-manager '%s'", arg ? arg : "");
      p->g.cgroup_manager = arg;
      p->g.systemd_cgroup = strcmp (arg, "systemd") == 0;
      p->g.oci_flags = true;
      break;
    case OPT_ROOTLESS:
      p->g.rootless = arg ? arg : "true";
      p->g.oci_flags = true;
      break;
    case OPT_HELP:
    case '?':
      oci_help_global (stdout);
      exit (0);
    case OPT_USAGE:
      printf ("Usage: %s [GLOBAL-OPTIONS] COMMAND [OPTIONS...]  (try '%s --help')\n",
              oci_prog_name (), oci_prog_name ());
      exit (0);
    case 'V':
    case OPT_VERSION:
      print_version (stdout, state);
      exit (0);
    case ARGP_KEY_ARG:
      p->cmd_index = state->next - 1;
      state->next = state->argc;
      break;
    case ARGP_KEY_NO_ARGS:
      argp_failure (state, 2, 0, "missing COMMAND (try 'csrun --help')");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  (void)arg;
  return 0;
}

static struct argp global_argp
    = { global_options, parse_global, "COMMAND [OPTIONS...]", global_doc, NULL, NULL, NULL };

/* csrun help [COMMAND]: the global help, or COMMAND's (as COMMAND --help). */
static int
help_command (struct csr_global *g, int argc, char **argv)
{
  if (argc < 2)
    {
      oci_help_global (stdout);
      return 0;
    }
  const char *name = argv[1];
  if (oci_help_exists (name))
    return oci_help (name, stdout) < 0 ? 1 : 0;
  for (const struct command *c = commands; c->name; c++)
    if (strcmp (c->name, name) == 0)
      {
        char prog[64];
        snprintf (prog, sizeof prog, "csrun %s", c->name);
        char *sub[] = { prog, (char *)"--help", NULL };
        return c->fn (g, 2, sub);
      }
  fprintf (stderr, "csrun: No help topic for '%s'\n", name);
  return 2;
}

int
main (int argc, char **argv)
{
  /* Started with 0, 1 or 2 closed?  Fill them, so no pipe or file of ours
   * lands on a standard stream number. */
  for (int fd = 0; fd < 3; fd++)
    if (fcntl (fd, F_GETFD) < 0 && open ("/dev/null", O_RDWR) != fd)
      return 125;
  struct global_parse p;
  memset (&p, 0, sizeof p);
  p.cmd_index = -1;
  argp_err_exit_status = 2;
  /* -h/--help and -v/--version are runc's (argp's own --help has another
   * layout and no -h). */
  argp_parse (&global_argp, argc, argv, ARGP_IN_ORDER | ARGP_NO_HELP, NULL, &p);
  if (p.cmd_index < 0)
    return 2;
  if (oci_log_init (&p.g) != 0)
    return 1;
  const char *name = argv[p.cmd_index];
  int sub_argc = argc - p.cmd_index;
  char **sub = argv + p.cmd_index;
  if (strcmp (name, "help") == 0)
    return help_command (&p.g, sub_argc, sub);
  bool help = sub_argc > 1 && (strcmp (sub[1], "-h") == 0 || strcmp (sub[1], "--help") == 0);
  for (const struct command *c = commands; c->name; c++)
    if (strcmp (c->name, name) == 0)
      {
        /* run is the OCI run only with a bundle (or an OCI global option). */
        bool oci = oci_help_exists (c->name)
                   && (strcmp (c->name, "run") != 0 || oci_run_is_bundle (&p.g, sub_argc, sub));
        if (help && oci)
          return oci_help (c->name, stdout) < 0 ? 1 : 0;
        if (help)
          sub[1] = (char *)"--help"; /* argp's parsers know --help, not -h */
        char prog[64];
        snprintf (prog, sizeof prog, "csrun %s", c->name);
        sub[0] = prog;
        return c->fn (&p.g, sub_argc, sub);
      }
  if (help)
    fprintf (stderr, "csrun: No help topic for '%s'\n", name);
  else
    fprintf (stderr, "csrun: unknown command '%s' (try 'csrun --help')\n", name);
  return 2;
}
