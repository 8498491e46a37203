#include "config.h"
#include "pytok.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"

/* ------------------------------------------------------ string builder */

void
pt_sb_add (struct sb *b, const char *s, size_t len)
{
  if (b->oom)
    return;
  if (csr_buf_reserve (&b->s, &b->cap, b->len + len + 1, 128) < 0)
    {
      b->oom = true;
      return;
    }
  memcpy (b->s + b->len, s, len);
  b->len += len;
  b->s[b->len] = '\0';
}

void
pt_sb_str (struct sb *b, const char *s)
{
  pt_sb_add (b, s, strlen (s));
}

/* The string, or NULL (and nothing leaked) when out of memory. */
char *
pt_sb_take (struct sb *b)
{
  if (b->oom)
    {
      free (b->s);
      b->s = NULL;
      return NULL;
    }
  if (b->s == NULL)
    return strdup ("");
  char *s = b->s;
  b->s = NULL;
  return s;
}

/* ------------------------------------------------------------ tokenizer */

bool
pt_is_id_start (unsigned char c)
{
  return c == '_' || isalpha (c) || c >= 0x80;
}

bool
pt_is_id_char (unsigned char c)
{
  return c == '_' || isalnum (c) || c >= 0x80;
}

static int
pt_push_tok (struct toks *t, struct tok k)
{
  if (t->n == t->cap)
    {
      size_t cap = t->cap ? t->cap * 2 : 256;
      struct tok *nv = realloc (t->v, cap * sizeof *nv);
      if (nv == NULL)
        return -1;
      t->v = nv;
      t->cap = cap;
    }
  t->v[t->n++] = k;
  return 0;
}

/* The length of a string literal (with its prefix) at P, 0 if none. */
static size_t
pt_scan_string (const char *p, size_t avail, unsigned *flags, int *lines)
{
  size_t j = 0;
  *flags = 0;
  while (j < avail && j < 3 && strchr ("rRbBuUfF", p[j]) != NULL && p[j] != '\0')
    {
      if (p[j] == 'f' || p[j] == 'F')
        *flags |= STR_F;
      if (p[j] == 'b' || p[j] == 'B')
        *flags |= STR_B;
      j++;
    }
  if (j >= avail || (p[j] != '\'' && p[j] != '"'))
    return 0;
  char q = p[j];
  bool triple = j + 2 < avail && p[j + 1] == q && p[j + 2] == q;
  size_t k = j + (triple ? 3 : 1);
  while (k < avail)
    {
      char c = p[k];
      if (c == '\\')
        {
          if (k + 1 < avail && p[k + 1] == '\n')
            (*lines)++;
          k += 2;
          continue;
        }
      if (c == '\n')
        {
          if (!triple)
            return k; /* unterminated: ends at the newline */
          (*lines)++;
        }
      if (c == q)
        {
          if (!triple)
            return k + 1;
          if (k + 2 < avail && p[k + 1] == q && p[k + 2] == q)
            return k + 3;
        }
      k++;
    }
  return avail;
}

static const char *const ops3[] = { "**=", "//=", ">>=", "<<=", "...", NULL };
static const char *const ops2[] = { "**", "//", ">>", "<<", "->", ":=", "==", "!=", "<=", ">=",
                                    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", NULL };

static size_t
pt_scan_op (const char *p, size_t avail)
{
  for (size_t i = 0; ops3[i]; i++)
    if (avail >= 3 && memcmp (p, ops3[i], 3) == 0)
      return 3;
  for (size_t i = 0; ops2[i]; i++)
    if (avail >= 2 && memcmp (p, ops2[i], 2) == 0)
      return 2;
  return 1;
}

int
pt_tokenize (const char *src, size_t len, struct toks *t)
{
  memset (t, 0, sizeof *t);
  t->src = src;
  t->len = len;
  size_t stack[200];
  size_t sp = 0;
  int line = 1, depth = 0;
  bool in_logical = false;
  size_t i = 0;
  while (i < len)
    {
      unsigned char c = (unsigned char)src[i];
      if (c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\v')
        {
          i++;
          continue;
        }
      if (c == '\\' && i + 1 < len && (src[i + 1] == '\n' || src[i + 1] == '\r'))
        {
          i++;
          if (src[i] == '\r' && i + 1 < len && src[i + 1] == '\n')
            i++;
          i++;
          line++;
          continue;
        }
      if (c == '\n')
        {
          if (depth == 0 && in_logical)
            {
              struct tok k
                  = { .kind = TK_NEWLINE, .start = i, .end = i + 1, .line = line, .match = NONE };
              if (pt_push_tok (t, k) < 0)
                return -1;
              in_logical = false;
            }
          line++;
          i++;
          continue;
        }
      if (c == '#')
        {
          while (i < len && src[i] != '\n')
            i++;
          continue;
        }
      struct tok k
          = { .start = i, .line = line, .depth = depth, .bol = !in_logical, .match = NONE };
      unsigned flags = 0;
      int lines = 0;
      size_t n;
      if ((n = pt_scan_string (src + i, len - i, &flags, &lines)) > 0)
        {
          k.kind = TK_STRING;
          k.str = flags;
          line += lines;
        }
      else if (pt_is_id_start (c))
        {
          k.kind = TK_NAME;
          n = 1;
          while (i + n < len && pt_is_id_char ((unsigned char)src[i + n]))
            n++;
        }
      else if (isdigit (c) || (c == '.' && i + 1 < len && isdigit ((unsigned char)src[i + 1])))
        {
          k.kind = TK_NUMBER;
          bool hex = c == '0' && i + 1 < len && (src[i + 1] == 'x' || src[i + 1] == 'X');
          n = 1;
          while (i + n < len)
            {
              char d = src[i + n];
              if (isalnum ((unsigned char)d) || d == '_' || d == '.')
                n++;
              else if ((d == '+' || d == '-') && !hex
                       && (src[i + n - 1] == 'e' || src[i + n - 1] == 'E'))
                n++;
              else
                break;
            }
        }
      else
        {
          k.kind = TK_OP;
          n = pt_scan_op (src + i, len - i);
          if (n == 1 && strchr ("([{", c))
            {
              if (sp < sizeof stack / sizeof stack[0])
                stack[sp++] = t->n;
              depth++;
            }
          else if (n == 1 && strchr (")]}", c))
            {
              if (depth > 0)
                depth--;
              k.depth = depth;
              if (sp > 0)
                {
                  size_t o = stack[--sp];
                  k.match = o;
                  t->v[o].match = t->n;
                }
            }
        }
      k.end = i + n;
      if (pt_push_tok (t, k) < 0)
        return -1;
      in_logical = true;
      i += n;
    }
  struct tok k = { .kind = TK_NEWLINE, .start = len, .end = len, .line = line, .match = NONE };
  if (in_logical && pt_push_tok (t, k) < 0)
    return -1;
  /* A sentinel so that t->v[i + 1] is always readable. */
  k.bol = true;
  if (pt_push_tok (t, k) < 0)
    return -1;
  t->n--;
  return 0;
}

void
pt_toks_release (struct toks *t)
{
  free (t->v);
  t->v = NULL;
  t->n = 0;
}

bool
pt_tok_eq (const struct toks *t, size_t i, const char *s)
{
  if (i >= t->n)
    return false;
  const struct tok *k = &t->v[i];
  if (k->kind != TK_NAME && k->kind != TK_OP)
    return false;
  size_t n = strlen (s);
  return k->end - k->start == n && memcmp (t->src + k->start, s, n) == 0;
}

bool
pt_tok_in (const struct toks *t, size_t i, const char *const *set)
{
  for (size_t j = 0; set[j]; j++)
    if (pt_tok_eq (t, i, set[j]))
      return true;
  return false;
}

static const char *const keywords[] = {
  "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
  "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
  "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
  "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",    NULL,
};

bool
pt_is_keyword (const struct toks *t, size_t i)
{
  return t->v[i].kind == TK_NAME && pt_tok_in (t, i, keywords);
}

/* The NEWLINE that ends the logical line containing token I. */
size_t
pt_logical_end (const struct toks *t, size_t i)
{
  while (i < t->n && t->v[i].kind != TK_NEWLINE)
    i++;
  return i;
}

/* ------------------------------------------------------------- edits */

int
pt_edit_add (struct edits *e, size_t start, size_t end, const char *text, size_t len)
{
  if (e->n == e->cap)
    {
      size_t cap = e->cap ? e->cap * 2 : 16;
      struct edit *nv = realloc (e->v, cap * sizeof *nv);
      if (nv == NULL)
        return -1;
      e->v = nv;
      e->cap = cap;
    }
  char *s = strndup (text, len);
  if (s == NULL)
    return -1;
  e->v[e->n++] = (struct edit){ start, end, s };
  return 0;
}

void
pt_edits_release (struct edits *e)
{
  for (size_t i = 0; i < e->n; i++)
    free (e->v[i].text);
  free (e->v);
  memset (e, 0, sizeof *e);
}

static int
edit_cmp (const void *a, const void *b)
{
  const struct edit *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  /* At one place: a closing ")" before an opening "str(". */
  bool xc = x->text[0] == ')', yc = y->text[0] == ')';
  return xc == yc ? 0 : xc ? -1 : 1;
}

/* SRC with the (non-overlapping) edits applied. */
char *
pt_apply_edits (const char *src, size_t len, struct edits *e)
{
  qsort (e->v, e->n, sizeof *e->v, edit_cmp);
  struct sb b = { 0 };
  size_t pos = 0;
  for (size_t i = 0; i < e->n; i++)
    {
      if (e->v[i].start < pos)
        continue; /* overlaps an earlier one: keep the first */
      pt_sb_add (&b, src + pos, e->v[i].start - pos);
      pt_sb_str (&b, e->v[i].text);
      pos = e->v[i].end;
    }
  pt_sb_add (&b, src + pos, len - pos);
  return pt_sb_take (&b);
}
