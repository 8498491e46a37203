/* csrun — what several rules of the local healer need about names: every
 * occurrence of a name in the code (f-string expressions included, never
 * inside other strings or comments), the names of a snippet, and the edit
 * distance between two names. */
#include "config.h"
#include "heal-internal.h"

#include <stdlib.h>
#include <string.h>

static int
push_use (struct heal_uses *u, const struct heal_use *x)
{
  if (u->n == u->cap)
    {
      size_t cap = u->cap ? u->cap * 2 : 16;
      struct heal_use *nv = realloc (u->v, cap * sizeof *nv);
      if (nv == NULL)
        return -1;
      u->v = nv;
      u->cap = cap;
    }
  u->v[u->n++] = *x;
  return 0;
}

static int scan (const char *src, size_t base, size_t len, const char *name, size_t nl, bool in_f,
                 struct heal_uses *u);

/* The {expressions} of the f-string token K. */
static int
scan_fstring (const struct toks *t, const struct tok *k, size_t base, const char *name, size_t nl,
              struct heal_uses *u)
{
  const char *s = t->src + k->start;
  size_t n = k->end - k->start;
  for (size_t j = 0; j < n; j++)
    {
      if (s[j] != '{')
        continue;
      if (j + 1 < n && s[j + 1] == '{')
        {
          j++;
          continue;
        }
      size_t e = j + 1;
      int depth = 0;
      while (
          e < n
          && !(depth == 0
               && (s[e] == '}' || s[e] == ':' || (s[e] == '!' && (e + 1 >= n || s[e + 1] != '=')))))
        {
          if (strchr ("([{", s[e]))
            depth++;
          else if (strchr (")]}", s[e]) && depth > 0)
            depth--;
          e++;
        }
      if (scan (s + j + 1, base + k->start + j + 1, e - j - 1, name, nl, true, u) < 0)
        return -1;
      j = e;
    }
  return 0;
}

static int
scan (const char *src, size_t base, size_t len, const char *name, size_t nl, bool in_f,
      struct heal_uses *u)
{
  struct toks t;
  if (pt_tokenize (src, len, &t) < 0)
    return -1;
  int rc = 0;
  for (size_t i = 0; i < t.n && rc == 0; i++)
    {
      const struct tok *k = &t.v[i];
      if (k->kind == TK_STRING && (k->str & STR_F))
        {
          rc = scan_fstring (&t, k, base, name, nl, u);
          continue;
        }
      if (k->kind != TK_NAME || k->end - k->start != nl || memcmp (src + k->start, name, nl) != 0)
        continue;
      struct heal_use x = { .start = base + k->start, .end = base + k->end, .in_fstring = in_f };
      x.attribute = i > 0 && pt_tok_eq (&t, i - 1, ".");
      x.assigned = pt_tok_eq (&t, i + 1, "=")
                   || (t.v[i + 1].kind == TK_OP && t.v[i + 1].end - t.v[i + 1].start == 2
                       && src[t.v[i + 1].start + 1] == '=' && !pt_tok_eq (&t, i + 1, "==")
                       && !pt_tok_eq (&t, i + 1, "!=") && !pt_tok_eq (&t, i + 1, "<=")
                       && !pt_tok_eq (&t, i + 1, ">="))
                   || (t.v[i + 1].kind == TK_OP && t.v[i + 1].end - t.v[i + 1].start == 3
                       && src[t.v[i + 1].start + 2] == '=');
      x.binding = i > 0
                  && pt_tok_in (&t, i - 1,
                                (const char *const[]){ "def", "class", "import", "as", "global",
                                                       "nonlocal", "for", NULL });
      x.called = pt_tok_eq (&t, i + 1, "(");
      x.line = k->line;
      if (push_use (u, &x) < 0)
        rc = -1;
    }
  pt_toks_release (&t);
  return rc;
}

int
heal_find_uses (const char *code, const char *name, size_t nl, struct heal_uses *u)
{
  memset (u, 0, sizeof *u);
  if (scan (code, 0, strlen (code), name, nl, false, u) < 0)
    {
      heal_uses_release (u);
      return -1;
    }
  return 0;
}

void
heal_uses_release (struct heal_uses *u)
{
  free (u->v);
  memset (u, 0, sizeof *u);
}

/* Optimal string alignment distance: insert, delete, replace, swap two
 * neighbours.  Names longer than 63 bytes: SIZE_MAX. */
size_t
heal_edit_distance (const char *a, size_t la, const char *b, size_t lb)
{
  if (la > 63 || lb > 63)
    return SIZE_MAX;
  size_t d[64][64];
  for (size_t i = 0; i <= la; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++)
      {
        size_t cost = a[i - 1] != b[j - 1];
        size_t v = d[i - 1][j] + 1;
        if (d[i][j - 1] + 1 < v)
          v = d[i][j - 1] + 1;
        if (d[i - 1][j - 1] + cost < v)
          v = d[i - 1][j - 1] + cost;
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]
            && d[i - 2][j - 2] + 1 < v)
          v = d[i - 2][j - 2] + 1;
        d[i][j] = v;
      }
  return d[la][lb];
}

/* Python's builtins (3.11's, without the _private ones): rivals too. */
static const char *const builtin_names[] = {
  "ArithmeticError",
  "AssertionError",
  "AttributeError",
  "BaseException",
  "BaseExceptionGroup",
  "BlockingIOError",
  "BrokenPipeError",
  "BufferError",
  "BytesWarning",
  "ChildProcessError",
  "ConnectionAbortedError",
  "ConnectionError",
  "ConnectionRefusedError",
  "ConnectionResetError",
  "DeprecationWarning",
  "EOFError",
  "Ellipsis",
  "EncodingWarning",
  "EnvironmentError",
  "Exception",
  "ExceptionGroup",
  "False",
  "FileExistsError",
  "FileNotFoundError",
  "FloatingPointError",
  "FutureWarning",
  "GeneratorExit",
  "IOError",
  "ImportError",
  "ImportWarning",
  "IndentationError",
  "IndexError",
  "InterruptedError",
  "IsADirectoryError",
  "KeyError",
  "KeyboardInterrupt",
  "LookupError",
  "MemoryError",
  "ModuleNotFoundError",
  "NameError",
  "None",
  "NotADirectoryError",
  "NotImplemented",
  "NotImplementedError",
  "OSError",
  "OverflowError",
  "PendingDeprecationWarning",
  "PermissionError",
  "ProcessLookupError",
  "RecursionError",
  "ReferenceError",
  "ResourceWarning",
  "RuntimeError",
  "RuntimeWarning",
  "StopAsyncIteration",
  "StopIteration",
  "SyntaxError",
  "SyntaxWarning",
  "SystemError",
  "SystemExit",
  "TabError",
  "TimeoutError",
  "True",
  "TypeError",
  "UnboundLocalError",
  "UnicodeDecodeError",
  "UnicodeEncodeError",
  "UnicodeError",
  "UnicodeTranslateError",
  "UnicodeWarning",
  "UserWarning",
  "ValueError",
  "Warning",
  "ZeroDivisionError",
  "abs",
  "aiter",
  "all",
  "anext",
  "any",
  "ascii",
  "bin",
  "bool",
  "breakpoint",
  "bytearray",
  "bytes",
  "callable",
  "chr",
  "classmethod",
  "compile",
  "complex",
  "copyright",
  "credits",
  "delattr",
  "dict",
  "dir",
  "divmod",
  "enumerate",
  "eval",
  "exec",
  "exit",
  "filter",
  "float",
  "format",
  "frozenset",
  "getattr",
  "globals",
  "hasattr",
  "hash",
  "help",
  "hex",
  "id",
  "input",
  "int",
  "isinstance",
  "issubclass",
  "iter",
  "len",
  "license",
  "list",
  "locals",
  "map",
  "max",
  "memoryview",
  "min",
  "next",
  "object",
  "oct",
  "open",
  "ord",
  "pow",
  "print",
  "property",
  "quit",
  "range",
  "repr",
  "reversed",
  "round",
  "set",
  "setattr",
  "slice",
  "sorted",
  "staticmethod",
  "str",
  "sum",
  "super",
  "tuple",
  "type",
  "vars",
  "zip",
  NULL,
};

/* Is there a rival of CHOSEN at most DIST edits from NAME (not NAME, not
 * CHOSEN)?  GLOBAL: for a global name, a builtin or any name of CODE; else,
 * for an attribute, a name of CODE after '.' or 'def'.  -1 on ENOMEM. */
int
heal_has_rival (const char *code, const char *name, const char *chosen, size_t dist, bool global)
{
  bool builtins = global;
  size_t nl = strlen (name), cl = strlen (chosen);
  for (size_t i = 0; builtins && builtin_names[i]; i++)
    if (strcmp (builtin_names[i], name) != 0 && strcmp (builtin_names[i], chosen) != 0
        && heal_edit_distance (name, nl, builtin_names[i], strlen (builtin_names[i])) <= dist)
      return 1;
  struct toks t;
  if (pt_tokenize (code, strlen (code), &t) < 0)
    return -1;
  int found = 0;
  for (size_t i = 0; i < t.n && !found; i++)
    {
      const struct tok *k = &t.v[i];
      size_t kl = k->end - k->start;
      const char *ks = code + k->start;
      if (k->kind != TK_NAME || pt_is_keyword (&t, i) || (kl == nl && memcmp (ks, name, nl) == 0)
          || (kl == cl && memcmp (ks, chosen, cl) == 0))
        continue;
      if (!global && !(i > 0 && (pt_tok_eq (&t, i - 1, ".") || pt_tok_eq (&t, i - 1, "def"))))
        continue;
      if (heal_edit_distance (name, nl, ks, kl) <= dist)
        found = 1;
    }
  pt_toks_release (&t);
  return found;
}

/* The quoted word after PREFIX in MSG ("... PREFIX'X'..."), malloc'ed, or NULL. */
char *
heal_quoted_after (const char *msg, const char *prefix)
{
  if (msg == NULL)
    return NULL;
  const char *p = strstr (msg, prefix);
  if (p == NULL)
    return NULL;
  p += strlen (prefix);
  if (*p != '\'')
    return NULL;
  p++;
  const char *q = strchr (p, '\'');
  if (q == NULL || q == p)
    return NULL;
  return strndup (p, (size_t)(q - p));
}

/* Add the edits renaming NAME to TO in CODE.  Returns 1 when at least one
 * edit was added, 0 when the rename would not be certain (or nothing to
 * rename), -1 on ENOMEM. */
int
heal_rename_uses (const char *code, const char *name, const char *to, enum heal_rename w,
                  struct edits *ed)
{
  if (!heal_valid_identifier (to, strlen (to)) || strcmp (name, to) == 0)
    return 0;
  struct heal_uses u;
  if (heal_find_uses (code, name, strlen (name), &u) < 0)
    return -1;
  int rc = 0;
  size_t first = ed->n;
  for (size_t i = 0; i < u.n; i++)
    {
      const struct heal_use *x = &u.v[i];
      if (w != HEAL_RENAME_ATTRIBUTE && x->attribute)
        continue; /* obj.NAME is another name */
      bool bad = x->assigned || (w != HEAL_RENAME_IMPORTED && x->binding)
                 || (w == HEAL_RENAME_ATTRIBUTE && !x->attribute);
      if (bad)
        {
          rc = 0; /* drop what this rename added */
          goto done;
        }
      if (w == HEAL_RENAME_ATTRIBUTE ? !x->attribute : x->attribute)
        continue;
      if (pt_edit_add (ed, x->start, x->end, to, strlen (to)) < 0)
        {
          rc = -1;
          goto done;
        }
      rc = 1;
    }
done:
  for (size_t i = first; i < ed->n && rc <= 0; i++)
    free (ed->v[i].text);
  if (rc <= 0)
    ed->n = first;
  heal_uses_release (&u);
  return rc;
}

/* The first token of the primary expression that ends at token I (a name,
 * a literal, a bracketed group, with .attr, calls and subscripts), or NONE. */
size_t
heal_primary_start (const struct toks *t, size_t i)
{
  for (;;)
    {
      const struct tok *k = &t->v[i];
      if (k->kind == TK_OP && strchr (")]}", t->src[k->start]) && k->end - k->start == 1)
        {
          if (k->match == NONE)
            return NONE;
          i = k->match;
          /* f(x), a[i]: the callee / subscripted object goes with it */
          if (t->src[k->start] != '}' && i > 0 && !t->v[i].bol
              && (t->v[i - 1].kind == TK_NAME || t->v[i - 1].kind == TK_STRING
                  || pt_tok_eq (t, i - 1, ")") || pt_tok_eq (t, i - 1, "]"))
              && !pt_is_keyword (t, i - 1))
            {
              i--;
              continue;
            }
        }
      else if ((k->kind != TK_NAME || pt_is_keyword (t, i)) && k->kind != TK_NUMBER
               && k->kind != TK_STRING)
        return NONE;
      if (i >= 2 && !t->v[i].bol && pt_tok_eq (t, i - 1, "."))
        {
          i -= 2;
          continue;
        }
      return i;
    }
}
