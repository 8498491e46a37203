/* csrun run: gate, run, scan, diagnose, heal, retry; one result. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "supervisor/capture.h"

/* One line on stderr about how the run ended (not for a first-try success). */
static void
print_outcome (const struct csr_run_result *r)
{
  size_t n = r->n_attempts;
  if (r->status == CSR_STATUS_OK || n == 0)
    return;
  const struct csr_attempt *last = &r->attempts[n - 1];
  if (r->status == CSR_STATUS_HEALED)
    {
      char rules[256] = "";
      for (size_t i = 0; i + 1 < n; i++)
        if (r->attempts[i].patch && r->attempts[i].patch->rules)
          snprintf (rules + strlen (rules), sizeof rules - strlen (rules), "%s%s",
                    rules[0] ? ", " : "", r->attempts[i].patch->rules);
      csr_say ("csrun run", "healed after %zu attempts (%s); --json shows the patch", n, rules);
      return;
    }
  if (r->status == CSR_STATUS_ERROR)
    {
      csr_say ("csrun run", "error: %s", r->error ? r->error : "unknown");
      return;
    }
  const struct csr_diagnosis *d = r->diagnosis;
  char where[32] = "";
  if (d && d->line > 0)
    snprintf (where, sizeof where, " (snippet.py line %d)", d->line);
  /* Only the message's first line: this is one line. */
  const char *msg = d && d->message ? d->message : "";
  int mlen = (int)strcspn (msg, "\n");
  const char *hint = d && d->hint ? d->hint : NULL;
  csr_say ("csrun run", "%s after %zu attempt%s: %s%s%.*s%s%s%s%s%s", csr_status_name (r->status),
           n, n == 1 ? "" : "s", d ? d->error_type : "UnknownError", mlen ? ": " : "", mlen, msg,
           where, hint ? "; " : "", hint ? hint : "", last->patch_none ? "; " : "",
           last->patch_none ? last->patch_none : "");
}

/* Limits that were asked for (by default or explicitly) but are weaker than a
 * cgroup, or not enforced at all: say so once. */
static void
warn_limits (const struct csr_limits *l)
{
  bool rl = l->mechanism && strstr (l->mechanism, "rlimit") != NULL;
  bool nocpu = l->cpu_millis && !l->cpu_enforced;
  bool nomem = l->memory_bytes && !l->memory_enforced;
  bool nopids = l->pids && !l->pids_enforced;
  if (!rl && !nocpu && !nomem && !nopids)
    return;
  csr_say ("csrun run", "warning: limits %s%s%s%s%s",
           rl ? "enforced by rlimits, not a cgroup (no writable cgroup here)" : "incomplete",
           nomem ? "; memory not limited" : "", nopids ? "; pids not limited" : "",
           nocpu ? "; cpu not limited" : "",
           rl && l->memory_by_rlimit ? "; memory is an address-space limit" : "");
}

int
cmd_run (struct csr_global *g, int argc, char **argv)
{
  (void)g;
  struct run_opts o;
  run_opts_parse (argc, argv, &o);
  struct csr_snippet_result s;
  memset (&s, 0, sizeof s);
  csr_error *e = NULL;
  int rc = csr_run_snippet_file ("csrun run", &o, &s, &e);
  if (rc != 0)
    {
      rc = csr_report_failure ("csrun run", &o, &s.loop.result, e, rc);
      csr_error_free (e);
      csr_snippet_result_release (&s);
      return rc;
    }
  const struct csr_run_result *r = &s.loop.result;
  if (o.json)
    csr_print_json (r);
  else
    {
      if (r->n_attempts > 0)
        {
          const struct csr_attempt *last = &r->attempts[r->n_attempts - 1];
          /* On a terminal the snippet's bytes are shown neutralised (it could
           * otherwise set the title, write the clipboard, fake our lines...);
           * pipes and files get them exactly. */
          bool raw = o.raw_output;
          int out_last = csr_capture_print (STDOUT_FILENO, &last->out,
                                            !raw && csr_stream_is_terminal (STDOUT_FILENO));
          int err_last = csr_capture_print (STDERR_FILENO, &last->err,
                                            !raw && csr_stream_is_terminal (STDERR_FILENO));
          csr_say_after (out_last, err_last);
        }
      if (!o.quiet)
        warn_limits (&r->limits);
      if (!o.quiet || r->status == CSR_STATUS_ERROR)
        print_outcome (r);
    }
  rc = csr_exit_code_for (r);
  csr_snippet_result_release (&s);
  return rc;
}
