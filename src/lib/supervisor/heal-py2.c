/* csrun — the py2-print rule of the local healer: "Missing parentheses in
 * call to 'print'" (or the gate's syntax error on a print statement)
 * rewrites Python 2 print statements as print() calls. */
#include "config.h"
#include "heal-internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"

static bool
print_trigger (const struct csr_diagnosis *d, const struct csr_gate_verdict *v, bool py2)
{
  /* The snippet is Python 2 (py2-idioms fixed a syntax error): its print
   * statements are too, whichever error the parser reported first. */
  if (py2
      && ((d && d->error_type && strcmp (d->error_type, "SyntaxError") == 0)
          || (v && v->outcome == CSR_GATE_SYNTAX_ERROR)))
    return true;
  static const char missing[] = "Missing parentheses in call to 'print'";
  if (d && d->error_type && d->message)
    {
      if (strcmp (d->error_type, "SyntaxError") == 0
          && strncmp (d->message, missing, sizeof missing - 1) == 0)
        return true;
      /* print >>sys.stderr, x  is valid Python 3 that fails at run time. */
      if (strcmp (d->error_type, "TypeError") == 0
          && strstr (d->message, "Did you mean \"print(<message>, file=<output_stream>)\"") != NULL)
        return true;
    }
  return v && v->outcome == CSR_GATE_SYNTAX_ERROR && v->message
         && strncmp (v->message, missing, sizeof missing - 1) == 0;
}

/* Is token I (the name "print") a Python 2 print statement? */
static bool
is_print_stmt (const struct toks *t, size_t i)
{
  if (!pt_tok_eq (t, i, "print"))
    return false;
  const struct tok *n = &t->v[i + 1];
  if (n->kind == TK_NEWLINE || pt_tok_eq (t, i + 1, ";"))
    return true;
  bool space = n->start > t->v[i].end;
  if (n->kind == TK_STRING)
    return true;
  if (!space)
    return false;
  if (n->kind == TK_NUMBER)
    return true;
  if (n->kind == TK_NAME)
    return !pt_is_keyword (t, i + 1)
           || pt_tok_in (t, i + 1,
                         (const char *const[]){ "not", "lambda", "None", "True", "False", NULL });
  return pt_tok_in (t, i + 1, (const char *const[]){ ">>", "-", "+", "~", "[", "{", "`", NULL });
}

/* Rewrite the print statement at token P. */
static int
rewrite_print (const struct toks *t, size_t p, struct edits *ed)
{
  const char *src = t->src;
  int depth = t->v[p].depth;
  size_t end = p + 1;
  while (end < t->n && t->v[end].kind != TK_NEWLINE
         && !(pt_tok_eq (t, end, ";") && t->v[end].depth == depth))
    end++;
  size_t first = p + 1, last = end; /* args: tokens [first, last) */
  struct sb b = { 0 };
  if (first == last)
    {
      pt_sb_str (&b, "print()");
      goto emit;
    }
  const char *file = NULL;
  size_t file_len = 0;
  if (pt_tok_eq (t, first, ">>"))
    {
      size_t comma = first + 1;
      while (comma < last && !(pt_tok_eq (t, comma, ",") && t->v[comma].depth == depth))
        comma++;
      if (comma == first + 1)
        return 0; /* print >>, x: leave it */
      file = src + t->v[first + 1].start;
      file_len = t->v[comma - 1].end - t->v[first + 1].start;
      first = comma < last ? comma + 1 : last;
    }
  bool trailing = last > first && pt_tok_eq (t, last - 1, ",") && t->v[last - 1].depth == depth;
  if (trailing)
    last--;
  pt_sb_str (&b, "print(");
  if (last > first)
    pt_sb_add (&b, src + t->v[first].start, t->v[last - 1].end - t->v[first].start);
  if (trailing)
    pt_sb_str (&b, last > first ? ", end=\" \"" : "end=\" \"");
  if (file)
    {
      if (last > first || trailing)
        pt_sb_str (&b, ", ");
      pt_sb_str (&b, "file=");
      pt_sb_add (&b, file, file_len);
    }
  pt_sb_str (&b, ")");
emit:
  if (b.oom)
    {
      free (b.s);
      return -1;
    }
  size_t stop = t->v[end - 1].end;
  int rc = pt_edit_add (ed, t->v[p].start, stop, b.s, b.len);
  free (b.s);
  return rc;
}

static const char *const compound[] = { "if",     "elif",    "else", "for", "while", "try",
                                        "except", "finally", "with", "def", "class", NULL };

int
heal_print (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
            bool py2, char **out)
{
  *out = NULL;
  if (!print_trigger (d, v, py2))
    return 0;
  struct toks t;
  if (pt_tokenize (code, strlen (code), &t) < 0)
    return -1;
  struct edits ed = { 0 };
  int rc = 0;
  for (size_t i = 0; i < t.n && rc == 0; i++)
    {
      if (!t.v[i].bol)
        continue;
      size_t end = pt_logical_end (&t, i);
      /* Statement starts: the line's start, after ';', after the ':' of a
       * compound statement's header. */
      bool header = pt_tok_in (&t, i, compound);
      for (size_t j = i; j < end && rc == 0; j++)
        {
          bool start = j == i || (pt_tok_eq (&t, j - 1, ";") && t.v[j - 1].depth == 0);
          if (!start && header && pt_tok_eq (&t, j - 1, ":") && t.v[j - 1].depth == 0)
            {
              start = true;
              header = false;
            }
          if (start && is_print_stmt (&t, j))
            rc = rewrite_print (&t, j, &ed);
        }
      i = end;
    }
  if (rc == 0 && ed.n > 0 && (*out = pt_apply_edits (code, strlen (code), &ed)) == NULL)
    rc = -1;
  pt_edits_release (&ed);
  pt_toks_release (&t);
  return rc;
}
