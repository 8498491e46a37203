/* csrun — the pasted-code rule of the local healer: code that does not
 * parse because it was pasted with its wrapping, on a syntax error (found
 * by the gate, so nothing ran):
 *   - a Markdown fence: exactly one ```...``` block -> its code (the fence
 *     lines and any prose outside them go; two or more blocks: no fix);
 *   - a REPL transcript: every statement line starts with ">>> " or
 *     "... " -> the code without the prompts (the echoed output lines go);
 *   - a uniform indentation of every non-blank line -> removed;
 *   - inconsistent tabs and spaces (TabError) -> each leading tab becomes
 *     the snippet's own indentation unit (the smallest indentation of its
 *     space-indented lines), when that gives a consistent block. */
#include "config.h"
#include "heal-internal.h"

#include <stdlib.h>
#include <string.h>

struct line
{
  const char *s;
  size_t n; /* without the newline */
};

/* Split CODE into lines (the last one may lack a newline). */
static struct line *
split_lines (const char *code, size_t *count)
{
  size_t len = strlen (code), n = 1;
  for (size_t i = 0; i < len; i++)
    n += code[i] == '\n';
  struct line *v = calloc (n, sizeof *v);
  if (v == NULL)
    return NULL;
  size_t k = 0;
  const char *p = code, *end = code + len;
  while (p < end)
    {
      const char *nl = memchr (p, '\n', (size_t)(end - p));
      size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
      v[k].s = p;
      v[k++].n = l;
      p += l + (nl != NULL);
    }
  *count = k;
  return v;
}

static bool
blank (const struct line *l)
{
  for (size_t i = 0; i < l->n; i++)
    if (l->s[i] != ' ' && l->s[i] != '\t' && l->s[i] != '\r')
      return false;
  return true;
}

static bool
is_fence (const struct line *l)
{
  size_t i = 0;
  while (i < l->n && (l->s[i] == ' ' || l->s[i] == '\t'))
    i++;
  return l->n - i >= 3 && memcmp (l->s + i, "```", 3) == 0;
}

static bool
prefixed (const struct line *l, const char *p)
{
  size_t n = strlen (p);
  return l->n >= n && memcmp (l->s, p, n) == 0;
}

/* Lines (1-based) inside a multi-line string of CODE: IN[line] set. */
static int
string_lines (const char *code, size_t n, bool *in)
{
  struct toks t;
  if (pt_tokenize (code, strlen (code), &t) < 0)
    return -1;
  for (size_t i = 0; i < t.n; i++)
    if (t.v[i].kind == TK_STRING)
      {
        int last = t.v[i].line;
        for (size_t k = t.v[i].start; k < t.v[i].end; k++)
          last += code[k] == '\n';
        for (int l = t.v[i].line + 1; l <= last && (size_t)l <= n; l++)
          in[l - 1] = true;
      }
  pt_toks_release (&t);
  return 0;
}

/* Exactly one fenced block: its lines [*A, *B).  A fence inside a string
 * (a Markdown text the snippet holds) is not one. */
static bool
fenced (const struct line *v, size_t n, const bool *in_string, size_t *a, size_t *b)
{
  size_t f[3], nf = 0;
  for (size_t i = 0; i < n && nf < 3; i++)
    if (is_fence (&v[i]) && !in_string[i])
      f[nf++] = i;
  for (size_t i = 0; i < n; i++)
    if (is_fence (&v[i]) && in_string[i])
      return false;
  if (nf != 2)
    return false;
  /* The closing fence is ``` alone. */
  const struct line *c = &v[f[1]];
  size_t k = 0;
  while (k < c->n && (c->s[k] == ' ' || c->s[k] == '\t'))
    k++;
  for (size_t j = k + 3; j < c->n; j++)
    if (c->s[j] != ' ' && c->s[j] != '\t' && c->s[j] != '\r')
      return false;
  *a = f[0] + 1;
  *b = f[1];
  return *b > *a;
}

/* A transcript: the first non-blank line starts with ">>> ". */
static bool
transcript (const struct line *v, size_t a, size_t b)
{
  for (size_t i = a; i < b; i++)
    if (!blank (&v[i]))
      return prefixed (&v[i], ">>> ") || (v[i].n == 3 && memcmp (v[i].s, ">>>", 3) == 0);
  return false;
}

/* The leading whitespace every non-blank line of [A, B) shares. */
static size_t
common_indent (const struct line *v, size_t a, size_t b)
{
  const struct line *ref = NULL;
  size_t common = 0;
  for (size_t i = a; i < b; i++)
    {
      if (blank (&v[i]))
        continue;
      size_t k = 0;
      while (k < v[i].n && (v[i].s[k] == ' ' || v[i].s[k] == '\t'))
        k++;
      if (ref == NULL)
        {
          ref = &v[i];
          common = k;
          continue;
        }
      size_t j = 0;
      while (j < common && j < k && v[i].s[j] == ref->s[j])
        j++;
      common = j;
    }
  return common;
}

/* Re-indent tabs by the unit of the space-indented lines.  False when there
 * is no unit or the result is not a consistent block structure. */
static bool
retab (const struct line *v, size_t a, size_t b, struct sb *o)
{
  size_t unit = 0;
  bool tabs = false;
  for (size_t i = a; i < b; i++)
    {
      size_t k = 0;
      while (k < v[i].n && v[i].s[k] == ' ')
        k++;
      if (k < v[i].n && v[i].s[k] == '\t')
        tabs = true;
      else if (k > 0 && !blank (&v[i]) && (unit == 0 || k < unit))
        unit = k;
    }
  if (!tabs || unit == 0 || unit > 8)
    return false;
  size_t prev = 0;
  for (size_t i = a; i < b; i++)
    {
      size_t k = 0, width = 0;
      while (k < v[i].n && (v[i].s[k] == ' ' || v[i].s[k] == '\t'))
        width += v[i].s[k++] == '\t' ? unit : 1;
      if (!blank (&v[i]))
        {
          if (width % unit != 0 || width > prev + unit)
            return false;
          prev = width;
        }
      for (size_t s = 0; s < (blank (&v[i]) ? 0 : width); s++)
        pt_sb_str (o, " ");
      pt_sb_add (o, v[i].s + (blank (&v[i]) ? v[i].n : k), blank (&v[i]) ? 0 : v[i].n - k);
      pt_sb_str (o, "\n");
    }
  return true;
}

static bool
syntax_failure (const struct csr_diagnosis *d, const struct csr_gate_verdict *v)
{
  if (v && v->outcome == CSR_GATE_SYNTAX_ERROR)
    return true;
  return d && d->error_type
         && (strcmp (d->error_type, "SyntaxError") == 0
             || strcmp (d->error_type, "IndentationError") == 0
             || strcmp (d->error_type, "TabError") == 0);
}

static bool
says (const struct csr_diagnosis *d, const struct csr_gate_verdict *v, const char *what)
{
  return (d && d->message && strstr (d->message, what))
         || (v && v->message && strstr (v->message, what));
}

int
heal_paste (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
            char **out)
{
  *out = NULL;
  if (!syntax_failure (d, v))
    return 0;
  size_t n = 0;
  struct line *lines = split_lines (code, &n);
  if (lines == NULL)
    return -1;
  bool *in_string = calloc (n + 1, sizeof *in_string);
  if (in_string == NULL || string_lines (code, n, in_string) < 0)
    {
      free (in_string);
      free (lines);
      return -1;
    }
  size_t a = 0, b = n;
  bool changed = fenced (lines, n, in_string, &a, &b);
  free (in_string);
  struct sb o = { 0 };
  if (transcript (lines, a, b))
    {
      changed = true;
      for (size_t i = a; i < b; i++)
        {
          const struct line *l = &lines[i];
          if (prefixed (l, ">>> ") || prefixed (l, "... "))
            pt_sb_add (&o, l->s + 4, l->n - 4);
          else if (!((l->n == 3 && (prefixed (l, ">>>") || prefixed (l, "..."))) || blank (l)))
            continue; /* output */
          pt_sb_str (&o, "\n");
        }
    }
  else
    {
      size_t ind = common_indent (lines, a, b);
      changed |= ind > 0;
      struct sb r = { 0 };
      bool tabbed = says (d, v, "inconsistent use of tabs and spaces") && ind == 0
                    && retab (lines, a, b, &r);
      if (tabbed)
        {
          changed = true;
          o = r;
        }
      else
        {
          free (r.s);
          for (size_t i = a; i < b; i++)
            {
              const struct line *l = &lines[i];
              if (!blank (l))
                pt_sb_add (&o, l->s + ind, l->n - ind);
              pt_sb_str (&o, "\n");
            }
        }
    }
  free (lines);
  if (!changed)
    {
      free (o.s);
      return 0;
    }
  if ((*out = pt_sb_take (&o)) == NULL)
    return -1;
  return 0;
}
