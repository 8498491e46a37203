/* csrun sandbox port ls, and create's --publish, --upstream and
 * --allow-all-interfaces (src/lib/sandbox/ports.h). */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "cmd.h"
#include "sandbox.h"
#include "sandbox/ports.h"
#include "sandbox/sandbox.h"
#include "util/cleanup.h"
#include "util/json-gen.h"
#include "util/json.h"

/* ------------------------------------------------------------ create's options */

void
sbx_parse_port (struct argp_state *state, const char *arg, bool upstream,
                struct csr_sandbox_spec *s)
{
  struct csr_sandbox_port p;
  csr_error *e = NULL;
  if ((upstream ? csr_sandbox_port_parse_upstream (arg, &p, &e)
                : csr_sandbox_port_parse_publish (arg, &p, &e))
          < 0
      || csr_sandbox_port_add (s, &p, &e) < 0)
    {
      argp_failure (state, CSR_EXIT_USAGE, 0, "%s", csr_error_text (e));
      csr_error_free (e);
    }
}

void
sbx_check_ports (struct argp_state *state, const struct csr_sandbox_spec *s,
                 bool allow_all_interfaces)
{
  if (s->n_ports && s->host_net)
    argp_failure (state, CSR_EXIT_USAGE, 0,
                  "--publish and --upstream need --net none: with --net host the sandbox "
                  "listens on the host's ports and reaches every address itself");
  for (size_t i = 0; i < s->n_ports; i++)
    if (csr_sandbox_port_wildcard (&s->ports[i]) && !allow_all_interfaces)
      argp_failure (state, CSR_EXIT_USAGE, 0,
                    "--publish on %s listens on every interface of the host (reachable from "
                    "other machines): add --allow-all-interfaces to confirm",
                    s->ports[i].host);
}

/* ------------------------------------------------------------ port ls */

struct port_opts
{
  const char *id;
  bool json;
};

enum
{
  OPT_JSON = 1000,
};

static struct argp_option port_options[] = {
  { "json", OPT_JSON, NULL, 0,
    "Print {\"id\", \"live\", \"ports\":[{type, host_url, sandbox_url, ...}]}", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_port (int key, char *arg, struct argp_state *state)
{
  struct port_opts *o = state->input;
  switch (key)
    {
    case OPT_JSON:
      o->json = true;
      break;
    case ARGP_KEY_ARG:
      sbx_arg_id (state, arg, &o->id, true);
      break;
    case ARGP_KEY_END:
      sbx_need_id (state, o->id);
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

/* The keeper's count of connections of port I (-1: unknown). */
static long long
connections (yajl_val info, size_t i)
{
  return csr_json_int (csr_json_at (csr_json_get (info, "ports"), i), "connections", -1);
}

static int
port_ls (struct port_opts *o)
{
  int code;
  char id[CSR_SANDBOX_ID_LEN + 1];
  cleanup_close int d = sbx_enter ("port ls", o->id, id, &code);
  if (d < 0)
    return code;
  struct csr_sandbox_spec s;
  csr_error *e = NULL;
  if (csr_sandbox_spec_read (d, &s, &e) < 0)
    return sbx_fail ("port ls", e, CSR_EXIT_INTERNAL);
  /* The keeper's live view (connections); the ports themselves are in
   * spec.json. */
  yajl_val info = csr_sandbox_call_json (d, "{\"op\":\"ports\"}", 5000, NULL);
  yajl_val live = csr_json_get (info, "live");
  int rc = 0;
  if (o->json)
    {
      struct csr_jgen w;
      if (csr_jgen_init (&w, false, &e) < 0)
        rc = sbx_fail ("port ls", e, CSR_EXIT_INTERNAL);
      else
        {
          csr_jgen_map_open (&w);
          csr_jgen_kv_str (&w, "id", id);
          csr_jgen_str (&w, "live");
          csr_jgen_bool (&w, live && YAJL_IS_TRUE (live));
          const char *fault = csr_json_str (csr_json_get (info, "fault"));
          if (fault)
            csr_jgen_kv_str (&w, "fault", fault);
          csr_jgen_str (&w, "ports");
          csr_jgen_array_open (&w);
          for (size_t i = 0; i < s.n_ports; i++)
            {
              csr_jgen_map_open (&w);
              csr_sandbox_port_gen (&w, &s.ports[i], true);
              long long n = connections (info, i);
              if (n >= 0)
                csr_jgen_kv_int (&w, "connections", n);
              csr_jgen_map_close (&w);
            }
          csr_jgen_array_close (&w);
          csr_jgen_map_close (&w);
          rc = sbx_print_json (&w, "port ls", "the listing");
        }
    }
  else
    {
      printf ("%-9s  %-30s  %-22s  %s\n", "TYPE", "HOST", "SANDBOX", "CONNECTIONS");
      for (size_t i = 0; i < s.n_ports; i++)
        {
          char h[300], sb[64], n[24] = "-";
          csr_sandbox_port_urls (&s.ports[i], h, sizeof h, sb, sizeof sb);
          if (connections (info, i) >= 0)
            snprintf (n, sizeof n, "%lld", connections (info, i));
          printf ("%-9s  %-30s  %-22s  %s\n", s.ports[i].upstream ? "upstream" : "publish", h, sb,
                  n);
        }
    }
  yajl_tree_free (info);
  csr_sandbox_spec_release (&s);
  if (rc == 0 && fflush (stdout) != 0)
    rc = CSR_EXIT_INTERNAL;
  return rc;
}

static const char port_usage[] = "usage: csrun sandbox port ls ID [--json]\n"
                                 "See csrun-sandbox(1).\n";

int
cmd_sandbox_port (int argc, char **argv)
{
  if (argc < 2)
    {
      fputs (port_usage, stderr);
      return CSR_EXIT_USAGE;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      fputs (port_usage, stdout);
      return 0;
    }
  if (strcmp (argv[1], "ls") != 0)
    {
      fprintf (stderr, "csrun sandbox port: unknown command '%s'\n%s", argv[1], port_usage);
      return CSR_EXIT_USAGE;
    }
  struct port_opts o = { 0 };
  static const char doc[] = "List a sandbox's ports: each --publish and --upstream with the URL "
                            "of its host side and of its sandbox side.\vSee csrun-sandbox(1).";
  struct argp argp = { port_options, parse_port, "ID", doc, NULL, NULL, NULL };
  char prog[64];
  snprintf (prog, sizeof prog, "csrun sandbox port ls");
  argv[1] = prog;
  if (argp_parse (&argp, argc - 1, argv + 1, 0, NULL, &o) != 0)
    return CSR_EXIT_USAGE;
  return port_ls (&o);
}
