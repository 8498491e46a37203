/* csrun check: only the AST gate (still inside the jail), and its verdict. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "util/termsafe.h"

/* One verdict line on stdout.  Messages quote the snippet's source: on a
 * terminal the line is rendered by csr_termsafe. */
static void __attribute__ ((format (printf, 2, 3))) verdict_line (bool safe, const char *fmt, ...)
{
  char *line = NULL;
  va_list ap;
  va_start (ap, fmt);
  int n = vasprintf (&line, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  char *shown = safe ? csr_termsafe_str (line) : NULL;
  fputs (shown ? shown : safe ? "(out of memory)" : line, stdout);
  fputc ('\n', stdout);
  free (shown);
  free (line);
}

int
cmd_check (struct csr_global *g, int argc, char **argv)
{
  (void)g;
  struct run_opts o;
  check_opts_parse (argc, argv, &o);
  struct csr_snippet_result s;
  memset (&s, 0, sizeof s);
  csr_error *e = NULL;
  int rc = csr_run_snippet_file ("csrun check", &o, &s, &e);
  if (rc != 0)
    {
      rc = csr_report_failure ("csrun check", &o, &s.loop.result, e, rc);
      csr_error_free (e);
      csr_snippet_result_release (&s);
      return rc;
    }
  const struct csr_run_result *r = &s.loop.result;
  const struct csr_gate_verdict *v = r->n_attempts ? r->attempts[0].gate : NULL;
  bool json_failed = false;
  if (o.json)
    json_failed = csr_print_json (r) < 0;
  else if (r->status == CSR_STATUS_TIMEOUT)
    csr_say ("csrun check", "the gate timed out after %g s", o.req.timeout_s);
  else if (r->status == CSR_STATUS_ERROR || v == NULL)
    csr_say ("csrun check", "error: %s", r->error ? r->error : "no verdict");
  else
    {
      const char *name = strcmp (o.file, "-") == 0 ? "<stdin>" : o.file;
      bool safe = csr_stream_is_terminal (STDOUT_FILENO);
      if (v->outcome == CSR_GATE_PASS)
        verdict_line (safe, "%s: pass", name);
      else if (v->outcome == CSR_GATE_SYNTAX_ERROR)
        verdict_line (safe, "%s:%d:%d: syntax: %s", name, v->line, v->col,
                      v->message ? v->message : "");
      for (size_t i = 0; i < v->n_violations; i++)
        verdict_line (safe, "%s:%d:%d: %s: %s", name, v->violations[i].line, v->violations[i].col,
                      v->violations[i].rule,
                      v->violations[i].message ? v->violations[i].message : "");
      /* Not violations (they may be in dead code), but worth knowing. */
      for (size_t i = 0; i < v->n_undefined; i++)
        verdict_line (safe, "%s:%d: note: '%s' is used but never defined or imported", name,
                      v->undefined[i].line, v->undefined[i].name);
    }
  /* 0 pass, 3 blocked, 1 syntax error (the run exit codes fit: failed = 1). */
  rc = json_failed ? CSR_EXIT_INTERNAL : csr_exit_code_for (r);
  csr_snippet_result_release (&s);
  return rc;
}
