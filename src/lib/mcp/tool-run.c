/* csrun — sandbox_run's rules and text (tool-impl.h): the code through
 * `csrun sandbox run ID - --json` (the pipeline, every attempt in the
 * sandbox, or a cell of a session), its text execute_python_code's. */
#include "config.h"
#include "tool-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "mcp-internal.h"

void
csr_mcp_sandbox_run_args (yajl_val args, const struct csr_mcp_limits *lim, struct csr_mcp_argv *av)
{
  /* As sandbox_exec: the server's --timeout unless the call asks for less,
   * and its --max-output. */
  csr_mcp_sandbox_exec_args (args, lim, av);
  /* The operator's gate policy, healing and LLM apply here as they do to
   * execute_python_code: the model can't step around them by running its
   * code in a sandbox. */
  for (const char *const *a = lim->run_args; a && *a; a++)
    csr_mcp_argv_add (av, *a);
}

char *
csr_mcp_sandbox_run_text (struct csr_mcp_output *o, bool *is_error)
{
  yajl_val doc = o->doc;
  if (o->out_cut)
    {
      *is_error = true;
      return strdup ("error_type: CsrunError\nmessage: the run's result is larger than the server "
                     "reads (64 MiB): start csrun mcp with a smaller --max-output");
    }
  if (doc == NULL || csr_json_str (csr_json_get (doc, "status")) == NULL)
    {
      *is_error = true;
      return csr_mcp_command_failure_text ("csrun sandbox run", o);
    }
  char *text = mcp_python_text (doc, is_error);
  yajl_val session = csr_json_get (doc, "session");
  if (text == NULL || !YAJL_IS_TRUE (csr_json_get (session, "lost")))
    return text;
  /* The cell did not stop when it was interrupted: its interpreter was
   * killed, and the session's globals with it. */
  char *s = NULL;
  if (asprintf (&s,
                "%s\nsession_lost: true (the session '%s' was ended: its variables are gone, the "
                "next call with it starts a new interpreter)",
                text, csr_json_str (csr_json_get (session, "name")) ?: "?")
      < 0)
    s = NULL;
  free (text);
  return s;
}
