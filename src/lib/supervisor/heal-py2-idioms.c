/* csrun — the py2-idioms rule of the local healer: Python 2 code beyond
 * the print statement (heal-py2.c), rewritten on the tokens (never inside
 * strings or comments), in C rather than with lib2to3: lib2to3 is gone from
 * Python 3.13 (so a newer rootfs could not heal), importing it and its
 * grammar costs the jail a run of its own, and its fixers are not exact
 * (fix_dict wraps every .keys() in list(), fix_unicode renames whatever is
 * called unicode).  Each rewrite here has one meaning in Python 2:
 *
 *   syntax, on any SyntaxError (the code can't run as it is):
 *     except E, e:       -> except E as e:
 *     0777               -> 0o777
 *     a <> b             -> a != b
 *     `x`                -> repr(x)
 *   names (policies/heal.conf py2-name:), used but never bound -- the gate
 *   reports them before anything runs -- or a NameError:
 *     xrange, raw_input, unicode, basestring, long, unichr -> range, input, str, ...
 *   methods, on the AttributeError that names them, or when the snippet is
 *   Python 2 (one of the above was fixed):
 *     d.iteritems() ...  -> d.items() ...            (py2-method:)
 *     d.has_key(k)       -> (k in d)
 *     string.letters ... -> string.ascii_letters     (py2-string:)
 *     string.join(s, p)  -> p.join(s)   (string.join(s) -> " ".join(s))
 *     d.keys()[i]        -> list(d.keys())[i]  (also values/items; or on
 *                           "'dict_keys' object is not subscriptable") */
#include "config.h"
#include "heal-internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"

static bool
diag_is (const struct csr_diagnosis *d, const char *type)
{
  return d && d->error_type && d->message && strcmp (d->error_type, type) == 0;
}

static size_t
tok_len (const struct toks *t, size_t i)
{
  return t->v[i].end - t->v[i].start;
}

/* Source of tokens [A, B]. */
static void
add_range (struct sb *b, const struct toks *t, size_t a, size_t z)
{
  pt_sb_add (b, t->src + t->v[a].start, t->v[z].end - t->v[a].start);
}

static int
add_edit_sb (struct edits *ed, size_t start, size_t end, struct sb *b)
{
  if (b->oom)
    {
      free (b->s);
      return -1;
    }
  int rc = pt_edit_add (ed, start, end, b->s ? b->s : "", b->len);
  free (b->s);
  return rc;
}

/* The syntax rewrites.  *FOUND: how many. */
static int
fix_syntax (const struct toks *t, struct edits *ed, int *found)
{
  const char *src = t->src;
  for (size_t i = 0; i < t->n; i++)
    {
      const struct tok *k = &t->v[i];
      /* except E, e: */
      if (pt_tok_eq (t, i, "except"))
        {
          size_t e = i + 1, comma = NONE;
          while (e < t->n && t->v[e].kind != TK_NEWLINE
                 && !(pt_tok_eq (t, e, ":") && t->v[e].depth == k->depth))
            {
              if (pt_tok_eq (t, e, ",") && t->v[e].depth == k->depth)
                comma = e;
              e++;
            }
          if (comma != NONE && pt_tok_eq (t, e, ":") && comma + 2 == e
              && t->v[comma + 1].kind == TK_NAME && !pt_is_keyword (t, comma + 1))
            {
              if (pt_edit_add (ed, t->v[comma].start, t->v[comma].end, " as", 3) < 0)
                return -1;
              (*found)++;
            }
          continue;
        }
      /* 0777 */
      if (k->kind == TK_NUMBER && tok_len (t, i) >= 2 && src[k->start] == '0')
        {
          bool octal = true;
          for (size_t j = k->start + 1; j < k->end; j++)
            octal &= src[j] >= '0' && src[j] <= '7';
          bool nonzero = false;
          for (size_t j = k->start + 1; j < k->end; j++)
            nonzero |= src[j] != '0';
          if (octal && nonzero)
            {
              if (pt_edit_add (ed, k->start, k->start + 1, "0o", 2) < 0)
                return -1;
              (*found)++;
            }
          /* 0777L, 10L: the long suffix */
          continue;
        }
      /* a <> b */
      if (pt_tok_eq (t, i, "<") && pt_tok_eq (t, i + 1, ">") && t->v[i + 1].start == k->end)
        {
          if (pt_edit_add (ed, k->start, t->v[i + 1].end, "!=", 2) < 0)
            return -1;
          (*found)++;
          i++;
          continue;
        }
      /* `x` */
      if (pt_tok_eq (t, i, "`"))
        {
          size_t j = i + 1;
          while (j < t->n && t->v[j].kind != TK_NEWLINE && !pt_tok_eq (t, j, "`"))
            j++;
          if (!pt_tok_eq (t, j, "`") || j == i + 1)
            continue;
          if (pt_edit_add (ed, k->start, k->end, "repr(", 5) < 0
              || pt_edit_add (ed, t->v[j].start, t->v[j].end, ")", 1) < 0)
            return -1;
          (*found)++;
          i = j;
        }
    }
  return 0;
}

/* Is there a `def NAME` / `NAME =` anywhere (the snippet defines it)? */
static int
defines (const char *code, const char *name)
{
  struct heal_uses u;
  if (heal_find_uses (code, name, strlen (name), &u) < 0)
    return -1;
  int r = 0;
  for (size_t i = 0; i < u.n; i++)
    if (u.v[i].binding || u.v[i].assigned)
      r = 1;
  heal_uses_release (&u);
  return r;
}

/* X.has_key(K) -> (K in X); string.join(S[, P]) -> P.join(S);
 * X.keys()[ -> list(X.keys())[.  Which ones: the WANT_* flags. */
static int
fix_calls (const struct toks *t, bool has_key, bool join, bool keys, struct edits *ed, int *found)
{
  for (size_t i = 2; i < t->n; i++)
    {
      if (!pt_tok_eq (t, i - 1, ".") || t->v[i].kind != TK_NAME || !pt_tok_eq (t, i + 1, "("))
        continue;
      size_t open = i + 1, close = t->v[open].match;
      if (close == NONE)
        continue;
      size_t p = heal_primary_start (t, i - 2);
      if (p == NONE)
        continue;
      if (has_key && pt_tok_eq (t, i, "has_key"))
        {
          /* one argument, no top-level comma */
          bool one = close > open + 1;
          for (size_t j = open + 1; j < close; j++)
            one &= !(pt_tok_eq (t, j, ",") && t->v[j].depth == t->v[open].depth + 1);
          if (!one)
            continue;
          struct sb b = { 0 };
          pt_sb_str (&b, "(");
          add_range (&b, t, open + 1, close - 1);
          pt_sb_str (&b, " in ");
          add_range (&b, t, p, i - 2);
          pt_sb_str (&b, ")");
          if (add_edit_sb ((struct edits *)ed, t->v[p].start, t->v[close].end, &b) < 0)
            return -1;
          (*found)++;
        }
      else if (join && pt_tok_eq (t, i, "join") && p == i - 2 && pt_tok_eq (t, p, "string"))
        {
          size_t comma = NONE;
          int n_commas = 0;
          for (size_t j = open + 1; j < close; j++)
            if (pt_tok_eq (t, j, ",") && t->v[j].depth == t->v[open].depth + 1)
              {
                comma = j;
                n_commas++;
              }
          if (close == open + 1 || n_commas > 1 || (comma != NONE && comma + 1 == close))
            continue;
          struct sb b = { 0 };
          if (comma == NONE)
            pt_sb_str (&b, "\" \"");
          else
            {
              pt_sb_str (&b, "(");
              add_range (&b, t, comma + 1, close - 1);
              pt_sb_str (&b, ")");
            }
          pt_sb_str (&b, ".join(");
          add_range (&b, t, open + 1, comma == NONE ? close - 1 : comma - 1);
          pt_sb_str (&b, ")");
          if (add_edit_sb (ed, t->v[p].start, t->v[close].end, &b) < 0)
            return -1;
          (*found)++;
        }
      else if (keys && pt_tok_in (t, i, (const char *const[]){ "keys", "values", "items", NULL })
               && close == open + 1 && pt_tok_eq (t, close + 1, "["))
        {
          if (pt_edit_add (ed, t->v[p].start, t->v[p].start, "list(", 5) < 0
              || pt_edit_add (ed, t->v[close].end, t->v[close].end, ")", 1) < 0)
            return -1;
          (*found)++;
        }
    }
  return 0;
}

int
heal_py2_idioms (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
                 const struct csr_heal_conf *c, bool py2_known, char **out)
{
  *out = NULL;
  struct toks t;
  if (pt_tokenize (code, strlen (code), &t) < 0)
    return -1;
  struct edits ed = { 0 };
  int rc = 0, found = 0;
  bool syntax
      = py2_known || diag_is (d, "SyntaxError") || (v && v->outcome == CSR_GATE_SYNTAX_ERROR);
  if (syntax)
    rc = fix_syntax (&t, &ed, &found);
  /* Python 2 builtins: never bound, and either reported by the gate or the
   * NameError of this attempt. */
  /* Python 2 syntax: the snippet is Python 2, and so are its builtins. */
  bool py2_syntax = found > 0;
  cleanup_free char *nerr
      = diag_is (d, "NameError") ? heal_quoted_after (d->message, "name ") : NULL;
  for (size_t i = 0; c && i < c->n_maps && rc >= 0; i++)
    {
      const struct csr_heal_map *m = &c->maps[i];
      if (m->kind != CSR_MAP_PY2_NAME)
        continue;
      bool hit = py2_known || py2_syntax || (nerr && strcmp (nerr, m->a) == 0);
      for (size_t j = 0; v && j < v->n_undefined && !hit; j++)
        hit = v->undefined[j].name && strcmp (v->undefined[j].name, m->a) == 0;
      if (!hit)
        continue;
      int r = heal_rename_uses (code, m->a, m->b, HEAL_RENAME_PLAIN, &ed);
      if (r < 0)
        rc = -1;
      found += r > 0;
    }
  /* The methods: in a Python 2 snippet -- one of the above was fixed, or
   * the AttributeError names a Python 2 method. */
  bool py2 = found > 0 || py2_known;
  cleanup_free char *attr
      = diag_is (d, "AttributeError") ? heal_quoted_after (d->message, "has no attribute ") : NULL;
  bool on_string = attr && strncmp (d->message, "module 'string' ", 16) == 0;
  if (attr && strncmp (d->message, "'dict' object", 13) == 0
      && (strcmp (attr, "has_key") == 0
          || csr_heal_map_find (c, CSR_MAP_PY2_METHOD, NULL, attr, strlen (attr))))
    py2 = true;
  if (on_string
      && (strcmp (attr, "join") == 0
          || csr_heal_map_find (c, CSR_MAP_PY2_STRING, NULL, attr, strlen (attr))))
    py2 = true;
  for (size_t i = 0; c && i < c->n_maps && rc >= 0; i++)
    {
      const struct csr_heal_map *m = &c->maps[i];
      if (m->kind != CSR_MAP_PY2_METHOD && m->kind != CSR_MAP_PY2_STRING)
        continue;
      bool named = attr && strcmp (attr, m->a) == 0;
      if (m->kind == CSR_MAP_PY2_STRING && named && !on_string)
        named = false;
      if (!named && !py2)
        continue;
      int def = defines (code, m->a);
      if (def != 0)
        {
          rc = def < 0 ? -1 : rc;
          continue;
        }
      if (m->kind == CSR_MAP_PY2_METHOD)
        {
          int r = heal_rename_uses (code, m->a, m->b, HEAL_RENAME_ATTRIBUTE, &ed);
          rc = r < 0 ? -1 : rc;
          found += r > 0;
          continue;
        }
      /* string.OLD only */
      for (size_t k = 2; k < t.n; k++)
        if (pt_tok_eq (&t, k, m->a) && pt_tok_eq (&t, k - 1, ".") && pt_tok_eq (&t, k - 2, "string")
            && (k < 3 || !pt_tok_eq (&t, k - 3, ".")))
          {
            if (pt_edit_add (&ed, t.v[k].start, t.v[k].end, m->b, strlen (m->b)) < 0)
              rc = -1;
            found++;
          }
    }
  if (rc >= 0)
    {
      bool has_key = py2 || (attr && strcmp (attr, "has_key") == 0);
      bool join = (py2 || (on_string && strcmp (attr, "join") == 0)) && defines (code, "join") == 0;
      bool keys = py2
                  || (diag_is (d, "TypeError")
                      && (strstr (d->message, "'dict_keys' object is not subscriptable")
                          || strstr (d->message, "'dict_values' object is not subscriptable")
                          || strstr (d->message, "'dict_items' object is not subscriptable")));
      if (has_key && defines (code, "has_key") != 0)
        has_key = false;
      rc = fix_calls (&t, has_key, join, keys, &ed, &found);
    }
  if (rc >= 0 && found > 0 && ed.n > 0
      && (*out = pt_apply_edits (code, strlen (code), &ed)) == NULL)
    rc = -1;
  pt_edits_release (&ed);
  pt_toks_release (&t);
  return rc < 0 ? -1 : 0;
}
