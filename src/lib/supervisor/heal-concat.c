/* csrun — the str-concat rule of the local healer: "can only concatenate
 * str (not \"int\") to str" and its reverse on line L; the non-str operands
 * of the failing '+' chain are wrapped in str(). */
#include "config.h"
#include "heal-internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"

enum term_kind
{
  TERM_OTHER,
  TERM_STR,
  TERM_BYTES,
  TERM_NUMBER,
};

/* A primary (atom and trailers) at I; returns the index after it, or NONE. */
static size_t
parse_primary (const struct toks *t, size_t i, size_t lim)
{
  if (i >= lim)
    return NONE;
  const struct tok *k = &t->v[i];
  if (k->kind == TK_NAME)
    {
      if (pt_is_keyword (t, i)
          && !pt_tok_in (t, i, (const char *const[]){ "True", "False", "None", NULL }))
        return NONE;
      i++;
    }
  else if (k->kind == TK_NUMBER)
    i++;
  else if (k->kind == TK_STRING)
    while (i < lim && t->v[i].kind == TK_STRING)
      i++;
  else if (pt_tok_in (t, i, (const char *const[]){ "(", "[", "{", NULL }))
    {
      if (k->match == NONE || k->match >= lim)
        return NONE;
      i = k->match + 1;
    }
  else if (pt_tok_eq (t, i, "..."))
    i++;
  else
    return NONE;
  for (;;)
    {
      if (i + 1 < lim && pt_tok_eq (t, i, ".") && t->v[i + 1].kind == TK_NAME)
        i += 2;
      else if (i < lim && (pt_tok_eq (t, i, "(") || pt_tok_eq (t, i, "[")))
        {
          if (t->v[i].match == NONE || t->v[i].match >= lim)
            return NONE;
          i = t->v[i].match + 1;
        }
      else
        return i;
    }
}

/* Unary operators, a primary, and "** factor" (iteratively: a long power
 * chain must not exhaust the stack). */
static size_t
parse_factor (const struct toks *t, size_t i, size_t lim)
{
  for (;;)
    {
      while (i < lim
             && (pt_tok_eq (t, i, "-") || pt_tok_eq (t, i, "+") || pt_tok_eq (t, i, "~")
                 || pt_tok_eq (t, i, "await")))
        i++;
      i = parse_primary (t, i, lim);
      if (i == NONE || i >= lim || !pt_tok_eq (t, i, "**"))
        return i;
      i++;
    }
}

static const char *const mul_ops[] = { "*", "/", "//", "%", "@", NULL };

static size_t
parse_term (const struct toks *t, size_t i, size_t lim)
{
  i = parse_factor (t, i, lim);
  while (i != NONE && i < lim && pt_tok_in (t, i, mul_ops))
    i = parse_factor (t, i + 1, lim);
  return i;
}

static const char *const str_funcs[]
    = { "str", "repr", "format", "chr", "ascii", "hex", "oct", "bin", "input", NULL };
static const char *const str_methods[]
    = { "format", "join",    "upper",    "lower",      "strip",  "lstrip",
        "rstrip", "replace", "title",    "capitalize", "center", "ljust",
        "rjust",  "zfill",   "casefold", "swapcase",   NULL };

static enum term_kind
classify_term (const struct toks *t, size_t s, size_t e)
{
  const struct tok *k = &t->v[s];
  if (k->kind == TK_STRING)
    {
      if (k->str & STR_B)
        return TERM_BYTES;
      size_t i = s;
      while (i < e && t->v[i].kind == TK_STRING)
        i++;
      if (i == e)
        return TERM_STR;
      /* "...".format(...), "..." % x, "-" * 20 */
      if (pt_tok_eq (t, i, ".") && pt_tok_in (t, i + 1, str_methods) && pt_tok_eq (t, i + 2, "(")
          && t->v[i + 2].match + 1 == e)
        return TERM_STR;
      if (pt_tok_eq (t, i, "%") || pt_tok_eq (t, i, "*"))
        return TERM_STR;
      if (pt_tok_eq (t, i, "[") && t->v[i].match + 1 == e) /* "abc"[1:] */
        return TERM_STR;
      return TERM_OTHER;
    }
  if (k->kind == TK_NAME && pt_tok_in (t, s, str_funcs) && pt_tok_eq (t, s + 1, "(")
      && t->v[s + 1].match + 1 == e)
    return TERM_STR;
  size_t i = s;
  while (i < e && (pt_tok_eq (t, i, "-") || pt_tok_eq (t, i, "+")))
    i++;
  if (i + 1 == e && t->v[i].kind == TK_NUMBER)
    return TERM_NUMBER;
  /* 3 * "-" */
  if (e - s == 3 && t->v[s].kind == TK_NUMBER && pt_tok_eq (t, s + 1, "*")
      && t->v[s + 2].kind == TK_STRING && !(t->v[s + 2].str & STR_B))
    return TERM_STR;
  return TERM_OTHER;
}

#define MAX_TERMS 64

struct chain
{
  size_t ts[MAX_TERMS], te[MAX_TERMS]; /* token ranges of the terms */
  bool minus[MAX_TERMS];               /* minus[k]: the operator before term k is '-' */
  enum term_kind kind[MAX_TERMS];
  size_t n;
};

/* A chain of terms joined by + and - at I; false unless there are two
 * terms or more. */
static bool
parse_chain (const struct toks *t, size_t i, size_t lim, struct chain *c)
{
  c->n = 0;
  size_t e = parse_term (t, i, lim);
  if (e == NONE)
    return false;
  c->ts[0] = i;
  c->te[0] = e;
  c->minus[0] = false;
  c->n = 1;
  while (e < lim && (pt_tok_eq (t, e, "+") || pt_tok_eq (t, e, "-")))
    {
      if (c->n == MAX_TERMS)
        return false;
      size_t s = e + 1;
      size_t ne = parse_term (t, s, lim);
      if (ne == NONE)
        return false;
      c->minus[c->n] = pt_tok_eq (t, e, "-");
      c->ts[c->n] = s;
      c->te[c->n] = ne;
      c->n++;
      e = ne;
    }
  for (size_t k = 0; k < c->n; k++)
    c->kind[k] = classify_term (t, c->ts[k], c->te[k]);
  return c->n >= 2;
}

static const char *const expr_start_ops[]
    = { "(",   "[",   "{",   ",",   "=",   ":",    ";",      ":=",    "+=", "-=",   "*=",
        "/=",  "//=", "%=",  "**=", ">>=", "<<=",  "&=",     "^=",    "|=", "@=",   "==",
        "!=",  "<",   ">",   "<=",  ">=",  "->",   "return", "yield", "if", "elif", "while",
        "and", "or",  "not", "in",  "is",  "else", "assert", NULL };

static int
wrap (struct edits *ed, const struct toks *t, size_t s, size_t e)
{
  if (pt_edit_add (ed, t->v[s].start, t->v[s].start, "str(", 4) < 0
      || pt_edit_add (ed, t->v[e - 1].end, t->v[e - 1].end, ")", 1) < 0)
    return -1;
  return 0;
}

/* Is MSG one of the str + non-str messages?  *LEFT_STR: the str is on the
 * left ("can only concatenate str (not "int") to str", also for +=). */
static bool
concat_message (const char *msg, bool *left_str)
{
  if (msg == NULL)
    return false;
  if (strncmp (msg, "can only concatenate str (not \"", 31) == 0)
    {
      *left_str = true;
      return true;
    }
  static const char pre[] = "unsupported operand type(s) for +: '";
  size_t pl = sizeof pre - 1, ml = strlen (msg);
  static const char suf[] = "' and 'str'";
  size_t sl = sizeof suf - 1;
  if (strncmp (msg, pre, pl) == 0 && ml > pl + sl && strcmp (msg + ml - sl, suf) == 0
      && strncmp (msg + pl, "str'", 4) != 0)
    {
      *left_str = false;
      return true;
    }
  return false;
}

/* Wrap the non-str operands of the failing '+' on line D->line. */
int
heal_str_concat (const char *code, const struct csr_diagnosis *d, char **out)
{
  *out = NULL;
  bool left_str = false;
  if (d == NULL || d->line <= 0 || d->error_type == NULL || strcmp (d->error_type, "TypeError")
      || !concat_message (d->message, &left_str))
    return 0;
  struct toks t;
  if (pt_tokenize (code, strlen (code), &t) < 0)
    return -1;
  int rc = 0;
  struct edits ed = { 0 };
  /* The logical line that holds physical line D->line. */
  size_t ls = NONE, le = NONE;
  for (size_t i = 0; i < t.n; i++)
    {
      size_t e = pt_logical_end (&t, i);
      int last = e < t.n ? t.v[e].line : t.v[i].line;
      if (t.v[i].line <= d->line && d->line <= last)
        {
          ls = i;
          le = e;
          break;
        }
      i = e;
    }
  struct chain *c = malloc (sizeof *c);
  if (c == NULL)
    rc = -1;
  for (size_t i = ls; c != NULL && ls != NONE && i < le; i++)
    {
      if (i != ls && !pt_tok_in (&t, i - 1, expr_start_ops))
        continue;
      if (i != ls && pt_tok_eq (&t, i - 1, "+="))
        {
          /* s += n: with a str on the left, the whole right side is the
           * operand (a chain with a str in it is handled below). */
          size_t e = i;
          while (e < le && !(pt_tok_eq (&t, e, ";") && t.v[e].depth == 0))
            e++;
          bool chain = parse_chain (&t, i, e, c);
          bool whole = chain ? c->te[c->n - 1] == e : parse_term (&t, i, e) == e;
          bool has_str = false;
          for (size_t k = 0; chain && k < c->n; k++)
            has_str |= c->kind[k] == TERM_STR || c->kind[k] == TERM_BYTES;
          enum term_kind kind = chain ? TERM_OTHER : classify_term (&t, i, e);
          if (left_str && whole && !has_str && (kind == TERM_OTHER || kind == TERM_NUMBER))
            {
              if (wrap (&ed, &t, i, e) < 0)
                rc = -1;
              continue;
            }
        }
      if (!parse_chain (&t, i, le, c))
        continue;
      size_t first_str = NONE;
      bool bytes = false;
      for (size_t k = 0; k < c->n; k++)
        {
          bytes |= c->kind[k] == TERM_BYTES;
          if (first_str == NONE && c->kind[k] == TERM_STR)
            first_str = k;
        }
      if (bytes || first_str == NONE)
        continue;
      if (left_str)
        {
          bool minus = false;
          for (size_t k = first_str + 1; k < c->n; k++)
            minus |= c->minus[k];
          if (minus)
            continue;
          for (size_t k = first_str + 1; k < c->n; k++)
            if (c->kind[k] != TERM_STR && wrap (&ed, &t, c->ts[k], c->te[k]) < 0)
              rc = -1;
        }
      else if (first_str >= 1 && !c->minus[first_str])
        {
          /* int + "s": the sum left of the first str becomes str(...); with
           * more than one term there, only numbers may follow the first
           * (else which '+' failed is a guess). */
          bool ok = true;
          for (size_t k = 1; k < first_str; k++)
            ok &= c->kind[k] == TERM_NUMBER;
          if (ok && wrap (&ed, &t, c->ts[0], c->te[first_str - 1]) < 0)
            rc = -1;
        }
    }
  free (c);
  if (rc == 0 && ed.n > 0 && (*out = pt_apply_edits (code, strlen (code), &ed)) == NULL)
    rc = -1;
  pt_edits_release (&ed);
  pt_toks_release (&t);
  return rc;
}
