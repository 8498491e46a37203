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
 *     raise E, "msg"     -> raise E("msg")
 *     0777, 10L          -> 0o777, 10
 *     import urlparse    -> import urllib.parse as urlparse  (py2-module:)
 *     a <> b             -> a != b
 *     `x`                -> repr(x)
 *   names (policies/heal.conf py2-name:), used but never bound -- the gate
 *   reports them before anything runs -- or a NameError:
 *     xrange, raw_input, unicode, basestring, long, unichr -> range, input, str, ...
 *   methods, on the AttributeError that names them, or when the snippet is
 *   Python 2 (one of the above was fixed):
 *     d.iteritems() ...  -> d.items() ...            (py2-method:)
 *     d.has_key(k)       -> (k in d)
 *     string.letters ... -> string.ascii_letters     (py2-attr:, also sys.maxint...)
 *     string.join(s, p)  -> p.join(s)   (string.join(s) -> " ".join(s))
 *     string.upper(s)... -> s.upper()   (the str methods that were functions)
 *     d.keys()[i]        -> list(d.keys())[i]  (also values/items; or on
 *                           "'dict_keys' object is not subscriptable")
 *     map(f, x)[i]       -> list(map(f, x))[i]  (filter, zip; or on "'map'
 *                           object is not subscriptable") */
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
      /* raise E, "message" (not the three-argument form) */
      if (pt_tok_eq (t, i, "raise"))
        {
          size_t e = i + 1, comma = NONE;
          int n = 0;
          while (e < t->n && t->v[e].kind != TK_NEWLINE
                 && !(pt_tok_eq (t, e, ";") && t->v[e].depth == k->depth))
            {
              if (pt_tok_eq (t, e, ",") && t->v[e].depth == k->depth)
                {
                  comma = e;
                  n++;
                }
              e++;
            }
          if (n == 1 && comma > i + 1 && comma + 1 < e)
            {
              struct sb b = { 0 };
              add_range (&b, t, i + 1, comma - 1);
              pt_sb_str (&b, "(");
              add_range (&b, t, comma + 1, e - 1);
              pt_sb_str (&b, ")");
              if (add_edit_sb (ed, t->v[i + 1].start, t->v[e - 1].end, &b) < 0)
                return -1;
              (*found)++;
            }
          continue;
        }
      /* 0777, 10L, 0777L, 0xffL */
      if (k->kind == TK_NUMBER)
        {
          const char *n = src + k->start;
          size_t len = tok_len (t, i);
          bool suffix = len >= 2 && (n[len - 1] == 'L' || n[len - 1] == 'l');
          size_t digits = len - suffix;
          bool hex = digits > 2 && n[0] == '0' && (n[1] == 'x' || n[1] == 'X');
          bool ok = digits > 0;
          for (size_t j = hex ? 2 : 0; j < digits; j++)
            ok &= hex ? isxdigit ((unsigned char)n[j]) != 0 : isdigit ((unsigned char)n[j]) != 0;
          bool octal = ok && !hex && digits >= 2 && n[0] == '0';
          bool nonzero = false;
          for (size_t j = 1; octal && j < digits; j++)
            {
              octal &= n[j] <= '7';
              nonzero |= n[j] != '0';
            }
          octal &= nonzero;
          if (!ok || (!suffix && !octal) || (!hex && !octal && digits > 1 && n[0] == '0'))
            continue;
          struct sb b = { 0 };
          if (octal)
            {
              pt_sb_str (&b, "0o");
              pt_sb_add (&b, n + 1, digits - 1);
            }
          else
            pt_sb_add (&b, n, digits);
          if (add_edit_sb (ed, k->start, k->end, &b) < 0)
            return -1;
          (*found)++;
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

/* The str methods that were functions of the string module. */
static bool
string_function (const char *s, size_t n)
{
  static const char *const f[]
      = { "upper",    "lower", "strip", "lstrip", "rstrip", "split",      "rsplit",
          "replace",  "find",  "rfind", "index",  "rindex", "count",      "capitalize",
          "swapcase", "zfill", "ljust", "rjust",  "center", "expandtabs", NULL };
  for (size_t i = 0; f[i]; i++)
    if (strlen (f[i]) == n && memcmp (f[i], s, n) == 0)
      return true;
  return false;
}

/* Which of fix_calls' rewrites to make. */
struct calls
{
  bool has_key, string, keys, iterators;
};

/* Tokens [A, B] as the object of a method call: as they are when they are
 * one primary expression, else in parentheses. */
static void
add_object (struct sb *b, const struct toks *t, size_t a, size_t z)
{
  bool one = heal_primary_start (t, z) == a;
  if (!one)
    pt_sb_str (b, "(");
  add_range (b, t, a, z);
  if (!one)
    pt_sb_str (b, ")");
}

/* The top-level commas of the call whose '(' is token OPEN: how many, and
 * the first two in C[0], C[1]. */
static int
call_commas (const struct toks *t, size_t open, size_t close, size_t c[2])
{
  int n = 0;
  for (size_t j = open + 1; j < close; j++)
    if (pt_tok_eq (t, j, ",") && t->v[j].depth == t->v[open].depth + 1)
      {
        if (n < 2)
          c[n] = j;
        n++;
      }
  /* a trailing comma: f(a,) */
  if (n > 0 && c[n > 2 ? 1 : n - 1] + 1 == close)
    return -1;
  return n;
}

/* X.has_key(K) -> (K in X); string.join(S[, P]) -> P.join(S) and
 * string.upper(S, ...) -> S.upper(...); X.keys()[ -> list(X.keys())[ and
 * map(...)[ -> list(map(...))[. */
static int
fix_calls (const struct toks *t, const struct calls *w, struct edits *ed, int *found)
{
  for (size_t i = 0; i < t->n; i++)
    {
      if (t->v[i].kind != TK_NAME || !pt_tok_eq (t, i + 1, "(") || t->v[i + 1].match == NONE)
        continue;
      size_t open = i + 1, close = t->v[open].match;
      if (w->iterators && !(i > 0 && pt_tok_eq (t, i - 1, "."))
          && pt_tok_in (t, i, (const char *const[]){ "map", "filter", "zip", NULL })
          && pt_tok_eq (t, close + 1, "["))
        {
          if (pt_edit_add (ed, t->v[i].start, t->v[i].start, "list(", 5) < 0
              || pt_edit_add (ed, t->v[close].end, t->v[close].end, ")", 1) < 0)
            return -1;
          (*found)++;
          continue;
        }
      if (i < 2 || !pt_tok_eq (t, i - 1, "."))
        continue;
      size_t p = heal_primary_start (t, i - 2);
      if (p == NONE)
        continue;
      size_t cm[2] = { NONE, NONE };
      int commas = call_commas (t, open, close, cm);
      bool is_string
          = p == i - 2 && pt_tok_eq (t, p, "string") && !(p > 0 && pt_tok_eq (t, p - 1, "."));
      struct sb b = { 0 };
      if (w->has_key && pt_tok_eq (t, i, "has_key"))
        {
          if (commas != 0 || close == open + 1)
            continue;
          pt_sb_str (&b, "(");
          add_range (&b, t, open + 1, close - 1);
          pt_sb_str (&b, " in ");
          add_range (&b, t, p, i - 2);
          pt_sb_str (&b, ")");
        }
      else if (w->string && is_string && pt_tok_eq (t, i, "join"))
        {
          if (close == open + 1 || commas < 0 || commas > 1)
            continue;
          if (commas == 0)
            pt_sb_str (&b, "\" \"");
          else
            add_object (&b, t, cm[0] + 1, close - 1);
          pt_sb_str (&b, ".join(");
          add_range (&b, t, open + 1, commas == 0 ? close - 1 : cm[0] - 1);
          pt_sb_str (&b, ")");
        }
      else if (w->string && is_string
               && string_function (t->src + t->v[i].start, t->v[i].end - t->v[i].start))
        {
          if (close == open + 1 || commas < 0)
            continue;
          size_t last = commas == 0 ? close - 1 : cm[0] - 1;
          add_object (&b, t, open + 1, last);
          pt_sb_str (&b, ".");
          add_range (&b, t, i, i);
          pt_sb_str (&b, "(");
          if (commas > 0)
            add_range (&b, t, cm[0] + 1, close - 1);
          pt_sb_str (&b, ")");
        }
      else if (w->keys && pt_tok_in (t, i, (const char *const[]){ "keys", "values", "items", NULL })
               && close == open + 1 && pt_tok_eq (t, close + 1, "["))
        {
          if (pt_edit_add (ed, t->v[p].start, t->v[p].start, "list(", 5) < 0
              || pt_edit_add (ed, t->v[close].end, t->v[close].end, ")", 1) < 0)
            return -1;
          (*found)++;
          continue;
        }
      else
        continue;
      if (add_edit_sb (ed, t->v[p].start, t->v[close].end, &b) < 0)
        return -1;
      (*found)++;
    }
  return 0;
}

/* Python 2 module names in import statements (py2-module: table):
 * import OLD -> import NEW as OLD; import OLD as Y -> import NEW as Y;
 * from OLD import x -> from NEW import x. */
static int
fix_modules (const struct toks *t, const struct csr_heal_conf *c, struct edits *ed, int *found)
{
  for (size_t i = 0; c && i < t->n; i++)
    {
      bool from = pt_tok_eq (t, i, "from");
      if (!t->v[i].bol || !(from || pt_tok_eq (t, i, "import")))
        continue;
      size_t end = pt_logical_end (t, i);
      for (size_t j = i + 1; j < end; j++)
        {
          if (t->v[j].kind != TK_NAME || pt_is_keyword (t, j)
              || !(pt_tok_eq (t, j - 1, "import") || pt_tok_eq (t, j - 1, ",")
                   || (from && j == i + 1))
              || pt_tok_eq (t, j + 1, "."))
            continue;
          if (from && j != i + 1)
            break; /* the names imported from a module are not modules */
          const char *name = t->src + t->v[j].start;
          size_t nl = t->v[j].end - t->v[j].start;
          const struct csr_heal_map *m = csr_heal_map_find (c, CSR_MAP_PY2_MODULE, NULL, name, nl);
          if (m == NULL)
            continue;
          struct sb b = { 0 };
          pt_sb_str (&b, m->b);
          if (!from && !pt_tok_eq (t, j + 1, "as"))
            {
              pt_sb_str (&b, " as ");
              pt_sb_add (&b, name, nl);
            }
          if (add_edit_sb (ed, t->v[j].start, t->v[j].end, &b) < 0)
            return -1;
          (*found)++;
        }
      i = end;
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
      /* the gate's names only when it blocked on them (not after an
       * unrelated failure: the name may sit in a branch that never runs) */
      for (size_t j = 0; v && v->outcome == CSR_GATE_BLOCKED && j < v->n_undefined && !hit; j++)
        hit = v->undefined[j].name && strcmp (v->undefined[j].name, m->a) == 0;
      if (!hit)
        continue;
      int r = heal_rename_uses (code, m->a, m->b, HEAL_RENAME_PLAIN, &ed);
      if (r < 0)
        rc = -1;
      found += r > 0;
    }
  /* The methods: in a Python 2 snippet -- one of the above was fixed, or
   * the AttributeError names a Python 2 method or module attribute. */
  bool py2 = found > 0 || py2_known;
  cleanup_free char *attr
      = diag_is (d, "AttributeError") ? heal_quoted_after (d->message, "has no attribute ") : NULL;
  cleanup_free char *mod = attr && strncmp (d->message, "module '", 8) == 0
                               ? heal_quoted_after (d->message, "module ")
                               : NULL;
  bool on_string = mod && strcmp (mod, "string") == 0;
  if (attr && strncmp (d->message, "'dict' object", 13) == 0
      && (strcmp (attr, "has_key") == 0
          || csr_heal_map_find (c, CSR_MAP_PY2_METHOD, NULL, attr, strlen (attr))))
    py2 = true;
  if (mod && csr_heal_map_find (c, CSR_MAP_PY2_ATTR, mod, attr, strlen (attr)))
    py2 = true;
  /* A Python 2 module that Python 3 renamed. */
  cleanup_free char *nomod = diag_is (d, "ModuleNotFoundError")
                                 ? heal_quoted_after (d->message, "No module named ")
                                 : NULL;
  if (nomod && csr_heal_map_find (c, CSR_MAP_PY2_MODULE, NULL, nomod, strlen (nomod)))
    py2 = true;
  if (on_string && (strcmp (attr, "join") == 0 || string_function (attr, strlen (attr))))
    py2 = true;
  for (size_t i = 0; c && i < c->n_maps && rc >= 0; i++)
    {
      const struct csr_heal_map *m = &c->maps[i];
      if (m->kind != CSR_MAP_PY2_METHOD && m->kind != CSR_MAP_PY2_ATTR)
        continue;
      if (!py2)
        continue;
      if (m->kind == CSR_MAP_PY2_METHOD)
        {
          int def = defines (code, m->a);
          if (def != 0)
            {
              rc = def < 0 ? -1 : rc;
              continue;
            }
          int r = heal_rename_uses (code, m->a, m->b, HEAL_RENAME_ATTRIBUTE, &ed);
          rc = r < 0 ? -1 : rc;
          found += r > 0;
          continue;
        }
      /* MODULE.OLD only (not x.MODULE.OLD) */
      for (size_t k = 2; k < t.n && rc >= 0; k++)
        if (pt_tok_eq (&t, k, m->a) && pt_tok_eq (&t, k - 1, ".") && pt_tok_eq (&t, k - 2, m->type)
            && (k < 3 || !pt_tok_eq (&t, k - 3, ".")))
          {
            if (pt_edit_add (&ed, t.v[k].start, t.v[k].end, m->b, strlen (m->b)) < 0)
              rc = -1;
            found++;
          }
    }
  if (rc >= 0)
    {
      /* Modules: every one in Python 2. */
      if (py2)
        rc = fix_modules (&t, c, &ed, &found);
    }
  if (rc >= 0)
    {
      struct calls w = { 0 };
      w.has_key = py2 || (attr && strcmp (attr, "has_key") == 0);
      w.string = py2;
      w.keys = py2
               || (diag_is (d, "TypeError")
                   && (strstr (d->message, "'dict_keys' object is not subscriptable")
                       || strstr (d->message, "'dict_values' object is not subscriptable")
                       || strstr (d->message, "'dict_items' object is not subscriptable")));
      w.iterators = py2
                    || (diag_is (d, "TypeError")
                        && (strstr (d->message, "'map' object is not subscriptable")
                            || strstr (d->message, "'filter' object is not subscriptable")
                            || strstr (d->message, "'zip' object is not subscriptable")));
      if (w.has_key && defines (code, "has_key") != 0)
        w.has_key = false;
      rc = fix_calls (&t, &w, &ed, &found);
    }
  if (rc >= 0 && found > 0 && ed.n > 0
      && (*out = pt_apply_edits (code, strlen (code), &ed)) == NULL)
    rc = -1;
  pt_edits_release (&ed);
  pt_toks_release (&t);
  return rc < 0 ? -1 : 0;
}
