#include "config.h"
#include "prompt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char csr_prompt_system[]
    = "You repair Python 3 programs that failed in a sandbox. Reply with the whole corrected "
      "program in a single ```python fenced code block, and nothing else.\n"
      "Rules:\n"
      "- Keep what the program is meant to do and the format of its output; change only what "
      "the failure requires.\n"
      "- Do not hide errors: no bare or broad except clauses, no placeholder or made-up values "
      "or results.\n"
      "- The sandbox has no network, no subprocesses, and a read-only file system except /tmp "
      "and the working directory; use the standard library unless the program already imports "
      "something else.\n"
      "- A failure reported by the static safety gate means the code uses something the "
      "sandbox forbids: rewrite it without that construct.";

/* Append to a growing string; returns false on ENOMEM (and frees it). */
static int add (char **buf, size_t *len, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
add (char **buf, size_t *len, const char *fmt, ...)
{
  if (*buf == NULL)
    return 0;
  va_list ap;
  va_start (ap, fmt);
  char *piece = NULL;
  int n = vasprintf (&piece, fmt, ap);
  va_end (ap);
  char *grown = n < 0 ? NULL : realloc (*buf, *len + (size_t)n + 1);
  if (grown == NULL)
    {
      free (piece);
      free (*buf);
      *buf = NULL;
      return 0;
    }
  memcpy (grown + *len, piece, (size_t)n + 1);
  *len += (size_t)n;
  *buf = grown;
  free (piece);
  return 1;
}

char *
csr_prompt_user (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
                 const char *rejected)
{
  size_t len = 0;
  char *b = calloc (1, 1);
  add (&b, &len, "The program below failed.\n\n");
  if (d && d->error_type)
    {
      add (&b, &len, "Failure: %s%s%s\n", d->error_type, d->message && *d->message ? ": " : "",
           d->message ? d->message : "");
      if (d->line > 0)
        add (&b, &len, "Failing line: %d\n", d->line);
      if (d->context && *d->context)
        add (&b, &len, "Context (the failing line is marked with >):\n%s", d->context);
      add (&b, &len, "\n");
    }
  if (v && v->outcome == CSR_GATE_BLOCKED && v->n_violations > 0)
    {
      add (&b, &len, "The static safety gate blocked it:\n");
      for (size_t i = 0; i < v->n_violations && i < 20; i++)
        add (&b, &len, "- line %d: %s (rule %s)\n", v->violations[i].line,
             v->violations[i].message ? v->violations[i].message : "",
             v->violations[i].rule ? v->violations[i].rule : "?");
      add (&b, &len, "\n");
    }
  if (rejected)
    add (&b, &len, "Your previous answer was not usable: %s\n\n", rejected);
  const char *fence = strstr (code, "```") ? "~~~~" : "```";
  add (&b, &len, "Program (snippet.py):\n%spython\n%s%s%s\n", fence, code,
       *code && code[strlen (code) - 1] == '\n' ? "" : "\n", fence);
  return b;
}
