/* csrun — global options and the subcommand table. */
#include "config.h"

#include <argp.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "util/log.h"

#define OCI_SPEC_VERSION "1.0.2"
#define FEATURES "+SECCOMP +CAP +NL3 +YAJL +CURL +ARCHIVE"

struct command
{
  const char *name;
  int (*fn) (struct csr_global *g, int argc, char **argv);
  const char *help;
};

static const struct command commands[] = {
  { "run", cmd_run, "run a Python snippet in a disposable jail" },
  { "check", cmd_check, "run only the AST gate on a snippet" },
  { NULL, NULL, NULL },
};

extern const char csr_commit[]; /* commit.c, generated at build time */

static void
print_version (FILE *f, struct argp_state *state)
{
  (void)state;
  fprintf (f, "csrun version %s\ncommit: %s\nspec: %s\n%s\n", PACKAGE_VERSION, csr_commit,
           OCI_SPEC_VERSION, FEATURES);
}
void (*argp_program_version_hook) (FILE *, struct argp_state *) = print_version;

enum
{
  OPT_DEBUG = 1000,
};

static struct argp_option global_options[] = {
  { "debug", OPT_DEBUG, NULL, 0, "Print debug messages on stderr", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static const char global_doc[]
    = "csrun: run untrusted Python in a disposable rootless jail.\v"
      "Commands:\n"
      "  run        gate, run and heal a Python snippet in a disposable jail\n"
      "  check      run only the AST gate on a snippet (in the jail)\n\n"
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
  argp_parse (&global_argp, argc, argv, ARGP_IN_ORDER, NULL, &p);
  if (p.cmd_index < 0)
    return 2;
  const char *name = argv[p.cmd_index];
  for (const struct command *c = commands; c->name; c++)
    if (strcmp (c->name, name) == 0)
      {
        char prog[64];
        snprintf (prog, sizeof prog, "csrun %s", c->name);
        char **sub = argv + p.cmd_index;
        sub[0] = prog;
        return c->fn (&p.g, argc - p.cmd_index, sub);
      }
  fprintf (stderr, "csrun: unknown command '%s' (try 'csrun --help')\n", name);
  return 2;
}
