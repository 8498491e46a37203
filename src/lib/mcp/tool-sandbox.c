/* csrun — the sandbox tools' rules and texts (tool-impl.h): what the
 * server adds to their command lines and what the model reads of the
 * documents `csrun sandbox ... --json` prints. */
#include "config.h"
#include "tool-impl.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "server.h"

char *
csr_mcp_command_failure_text (const char *what, const struct csr_mcp_output *o)
{
  int status = o->status;
  const char *err = o->err;
  char how[64];
  if (WIFSIGNALED (status))
    snprintf (how, sizeof how, "killed by signal %d", WTERMSIG (status));
  else
    snprintf (how, sizeof how, "exit status %d", WEXITSTATUS (status));
  /* Its last line says why (csrun's errors are one line). */
  size_t n = err ? strlen (err) : 0;
  while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' '))
    n--;
  size_t start = n;
  while (start > 0 && err[start - 1] != '\n')
    start--;
  char *s = NULL;
  if (asprintf (&s, "%s failed (%s)%s%.*s", what, how, n ? ": " : "", (int)(n - start),
                n ? err + start : "")
      < 0)
    return NULL;
  return s;
}

/* ------------------------------------------------------------ sandbox_create */

int
csr_mcp_sandbox_create_check (yajl_val args, const struct csr_mcp_limits *lim, struct csr_jpath *x)
{
  yajl_val pub = csr_json_get (args, "publish");
  for (size_t i = 0; pub && YAJL_IS_ARRAY (pub) && i < pub->u.array.len; i++)
    for (size_t k = 0; k < lim->n_upstream_ports; k++)
      if (strtoul (YAJL_GET_NUMBER (pub->u.array.values[i]), NULL, 10) == lim->upstream_ports[k])
        {
          csr_jpath_push_key (x, "publish");
          csr_jpath_push_index (x, i);
          return csr_jpath_fail (x,
                                 "port %u of the sandbox leads to the host already (the "
                                 "server's --sandbox-upstream): publish another",
                                 lim->upstream_ports[k]);
        }
  return 0;
}

void
csr_mcp_sandbox_create_args (yajl_val args, const struct csr_mcp_limits *lim,
                             struct csr_mcp_argv *av)
{
  if (lim->rootfs)
    csr_mcp_argv_addf (av, "--rootfs=%s", lim->rootfs);
  /* The server's --sandbox-upstream: what the sandboxes may reach is the
   * operator's choice, not the model's. */
  for (const char *const *a = lim->sandbox_args; a && *a; a++)
    csr_mcp_argv_add (av, *a);
  /* A published port is on the host's loopback, on a port the kernel
   * picks: the model chooses no host address and takes no port another
   * program wants. */
  yajl_val pub = csr_json_get (args, "publish");
  for (size_t i = 0; pub && YAJL_IS_ARRAY (pub) && i < pub->u.array.len; i++)
    csr_mcp_argv_addf (av, "--publish=127.0.0.1:0:%s", YAJL_GET_NUMBER (pub->u.array.values[i]));
}

/* The lines that say where the sandbox's ports are. */
static void
port_lines (FILE *f, yajl_val ports)
{
  for (size_t i = 0; ports && YAJL_IS_ARRAY (ports) && i < ports->u.array.len; i++)
    {
      yajl_val p = ports->u.array.values[i];
      const char *type = csr_json_str (csr_json_get (p, "type"));
      const char *host = csr_json_str (csr_json_get (p, "host_url"));
      const char *inside = csr_json_str (csr_json_get (p, "sandbox_url"));
      if (type == NULL || host == NULL || inside == NULL)
        continue;
      if (strcmp (type, "publish") == 0)
        fprintf (f,
                 "\nPort %s of the sandbox (a server there listens on it) is reached from the "
                 "host at %s.",
                 inside, host);
      else
        fprintf (f, "\nIn the sandbox, %s leads to %s on the host (and nothing else does).", inside,
                 host);
    }
}

char *
csr_mcp_sandbox_create_text (struct csr_mcp_output *o, bool *is_error)
{
  yajl_val out = o->doc;
  const char *id = csr_json_str (csr_json_get (out, "id"));
  const char *name = csr_json_str (csr_json_get (out, "name"));
  *is_error = id == NULL;
  if (id == NULL)
    return csr_mcp_command_failure_text ("csrun sandbox create", o);
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&s, &len);
  if (f == NULL)
    return NULL;
  fprintf (f,
           "Created sandbox %s%s%s%s. Run Python in it with sandbox_run and commands with "
           "sandbox_exec (sandbox: \"%s\"), move files with sandbox_write_file, "
           "sandbox_read_file and sandbox_list_files, save it with sandbox_checkpoint; remove "
           "it with sandbox_terminate.",
           id, name ? " (name " : "", name ? name : "", name ? ")" : "", name ? name : id);
  port_lines (f, csr_json_get (out, "ports"));
  bool bad = ferror (f) != 0;
  if (fclose (f) != 0 || bad)
    {
      free (s);
      return NULL;
    }
  return s;
}

void
csr_mcp_sandbox_created (yajl_val out, struct csr_mcp_session *s)
{
  const char *id = csr_json_str (csr_json_get (out, "id"));
  if (id)
    csr_mcp_session_sandbox (s, id, true);
}

/* ------------------------------------------------------------ sandbox_exec */

int
csr_mcp_sandbox_exec_check (yajl_val args, const struct csr_mcp_limits *lim, struct csr_jpath *x)
{
  (void)lim;
  bool cmd = csr_json_get (args, "command") && !YAJL_IS_NULL (csr_json_get (args, "command"));
  yajl_val argv = csr_json_get (args, "argv");
  bool has_argv = argv && !YAJL_IS_NULL (argv);
  if (cmd == has_argv)
    return csr_jpath_fail (x,
                           "give either command (a shell command line) or argv (a "
                           "program and its arguments), not %s",
                           cmd ? "both" : "neither");
  if (has_argv && argv->u.array.len == 0)
    {
      csr_jpath_push_key (x, "argv");
      return csr_jpath_fail (x, "empty: the first item is the program");
    }
  return 0;
}

void
csr_mcp_sandbox_exec_args (yajl_val args, const struct csr_mcp_limits *lim, struct csr_mcp_argv *av)
{
  /* A call always ends: the server's --timeout unless it asks for less. */
  yajl_val t = csr_json_get (args, "timeout");
  double s = t && !YAJL_IS_NULL (t) ? csr_mcp_number (t) : lim->max_timeout_s;
  csr_mcp_argv_addf (av, "--timeout=%.3fs", s);
  csr_mcp_argv_addf (av, "--max-output=%llu", (unsigned long long)lim->max_output);
}

char *
csr_mcp_sandbox_exec_text (struct csr_mcp_output *o, bool *is_error)
{
  yajl_val out = o->doc;
  yajl_val rc = csr_json_get (out, "returncode");
  if (out == NULL || rc == NULL || !YAJL_IS_INTEGER (rc))
    {
      *is_error = true;
      return csr_mcp_command_failure_text ("csrun sandbox exec", o);
    }
  const char *so = csr_json_str (csr_json_get (out, "stdout"));
  const char *se = csr_json_str (csr_json_get (out, "stderr"));
  long long code = YAJL_GET_INTEGER (rc);
  *is_error = code != 0;
  if (code == 0)
    return strdup (so ? so : "");
  char why[128];
  const char *msg = csr_json_str (csr_json_get (out, "error"));
  yajl_val sig = csr_json_get (out, "signal");
  if (msg)
    snprintf (why, sizeof why, "%s", msg);
  else if (YAJL_IS_TRUE (csr_json_get (out, "not_found")))
    snprintf (why, sizeof why, "no such program in the sandbox (exit status 127)");
  else if (sig && YAJL_IS_INTEGER (sig) && YAJL_GET_INTEGER (sig) > 0)
    snprintf (why, sizeof why, "killed by signal %lld", YAJL_GET_INTEGER (sig));
  else
    snprintf (why, sizeof why, "exit status %lld", code);
  char *s = NULL;
  if (asprintf (&s, "The command failed: %s.\nstderr: %s%sstdout: %s", why, se ? se : "",
                se && *se && se[strlen (se) - 1] != '\n' ? "\n" : "", so ? so : "")
      < 0)
    return NULL;
  return s;
}

/* ------------------------------------------------------------ sandbox_terminate */

char *
csr_mcp_sandbox_terminate_text (struct csr_mcp_output *o, bool *is_error)
{
  yajl_val out = o->doc;
  const char *id = csr_json_str (csr_json_get (out, "id"));
  *is_error = id == NULL;
  if (id == NULL)
    return csr_mcp_command_failure_text ("csrun sandbox rm", o);
  char *s = NULL;
  if (asprintf (&s, "Removed sandbox %s.", id) < 0)
    return NULL;
  return s;
}

void
csr_mcp_sandbox_removed (yajl_val out, struct csr_mcp_session *s)
{
  const char *id = csr_json_str (csr_json_get (out, "id"));
  if (id)
    csr_mcp_session_sandbox (s, id, false);
}
