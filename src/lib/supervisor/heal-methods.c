/* csrun — the foreign-method rule of the local healer: another language's
 * method name on a builtin type ("'list' object has no attribute 'push'"),
 * fixed from the method: table of policies/heal.conf, only when the
 * AttributeError names the type, and only on the failing line (the type of
 * the objects on other lines is not known: a numpy array has .size, a
 * pandas accessor has .contains) -- unless the object is a name that one
 * `name = ...` statement binds and nothing else does (no parameter, loop
 * variable, other assignment): then it is the same object on every line.  On that line every .ATTR
 * must be on the same expression (else which one failed is not known: no fix); every table entry of
 * TYPE used on that expression there is fixed too (s.toUpperCase() and s.startsWith(...) in one
 * patch).  The fixes: .NAME   x.ATTR(...) -> x.NAME(...) len     x.ATTR      -> len(x) (x.ATTR()
 * too) in      x.ATTR(y)   -> (y in x) join    x.ATTR(sep) -> sep.join(x) str     x.ATTR()    ->
 * str(x) not     x.ATTR()    -> (not x)
 *   ==      x.ATTR(y)   -> (x == y)
 *   map     x.ATTR(f)   -> list(map(f, x))    (filter too)
 *   []      x.ATTR(i)   -> x[i] */
#include "config.h"
#include "heal-internal.h"

#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"

/* Does token I (a name) bind it: after def, class, for, as, import,
 * global, nonlocal, del; a parameter (in a def's parentheses, between
 * lambda and its ':'); before := ; or a target of an assignment (a
 * top-level '=' or augmented assignment later in its statement, the name
 * not followed by '.', '[' or '(')? */
static bool
binds_here (const struct toks *t, size_t i)
{
  static const char *const before[]
      = { "def", "class", "for", "as", "import", "global", "nonlocal", "del", NULL };
  if (i > 0 && pt_tok_in (t, i - 1, before))
    return true;
  if (pt_tok_eq (t, i + 1, ":="))
    return true;
  /* the statement that holds I */
  size_t s = i;
  while (s > 0 && !t->v[s].bol)
    s--;
  size_t e = pt_logical_end (t, i);
  for (size_t j = s; j < i; j++)
    {
      if (pt_tok_eq (t, j, "def") && pt_tok_eq (t, j + 2, "(") && t->v[j + 2].match != NONE
          && j + 2 < i && i < t->v[j + 2].match)
        return true;
      if (pt_tok_eq (t, j, "lambda"))
        {
          size_t k = j + 1;
          while (k < e && !(pt_tok_eq (t, k, ":") && t->v[k].depth == t->v[j].depth))
            k++;
          if (i < k)
            return true;
        }
    }
  if (pt_tok_in (t, i + 1, (const char *const[]){ ".", "[", "(", NULL }))
    return false;
  for (size_t j = i + 1; j < e; j++)
    if (t->v[j].depth == t->v[s].depth && t->v[j].kind == TK_OP
        && (pt_tok_eq (t, j, "=")
            || (t->v[j].end - t->v[j].start >= 2 && t->src[t->v[j].end - 1] == '='
                && !pt_tok_in (t, j, (const char *const[]){ "==", "!=", "<=", ">=", NULL }))))
      return true;
  return false;
}

/* Is the name at token N bound exactly once in the snippet, by a plain
 * `N = ...` statement?  Then every use refers to that one object. */
static bool
bound_once (const struct toks *t, size_t n)
{
  const char *name = t->src + t->v[n].start;
  size_t len = t->v[n].end - t->v[n].start;
  int bindings = 0;
  bool plain = false;
  for (size_t i = 0; i < t->n; i++)
    {
      if (t->v[i].kind != TK_NAME || t->v[i].end - t->v[i].start != len
          || memcmp (t->src + t->v[i].start, name, len) != 0
          || (i > 0 && pt_tok_eq (t, i - 1, ".")))
        continue;
      if (!binds_here (t, i))
        continue;
      bindings++;
      plain = t->v[i].bol && pt_tok_eq (t, i + 1, "=");
    }
  return bindings == 1 && plain;
}

int
heal_methods (const char *code, const struct csr_diagnosis *d, const struct csr_heal_conf *c,
              char **out)
{
  *out = NULL;
  if (!d || !d->error_type || !d->message || strcmp (d->error_type, "AttributeError") != 0
      || d->line <= 0 || d->message[0] != '\'')
    return 0;
  /* 'TYPE' object has no attribute 'ATTR' */
  const char *q = strchr (d->message + 1, '\'');
  if (q == NULL || strncmp (q, "' object has no attribute '", 27) != 0)
    return 0;
  cleanup_free char *type = strndup (d->message + 1, (size_t)(q - d->message - 1));
  cleanup_free char *attr = heal_quoted_after (d->message, "has no attribute ");
  if (type == NULL || attr == NULL)
    return type == NULL ? -1 : 0;
  const struct csr_heal_map *m = csr_heal_map_find (c, CSR_MAP_METHOD, type, attr, strlen (attr));
  if (m == NULL)
    return 0;
  struct toks t;
  if (pt_tokenize (code, strlen (code), &t) < 0)
    return -1;
  struct edits ed = { 0 };
  int rc = 0;
  /* The logical line that holds line D->line. */
  size_t first = NONE, end = 0; /* none found: no loop below runs */
  for (size_t i = 0; i < t.n && first == NONE; i++)
    if (t.v[i].bol)
      {
        size_t e = pt_logical_end (&t, i);
        if (t.v[i].line <= d->line && t.v[e].line >= d->line)
          first = i, end = e;
        i = e;
      }
  /* The object: every .ATTR of the line on the same expression (else we
   * can't tell which one failed: no fix). */
  const char *obj = NULL;
  size_t obj_len = 0;
  for (size_t k = first == NONE ? t.n : first + 2; k < end; k++)
    if (pt_tok_eq (&t, k, attr) && pt_tok_eq (&t, k - 1, "."))
      {
        size_t p = heal_primary_start (&t, k - 2);
        if (p == NONE || p < first)
          continue;
        const char *o = code + t.v[p].start;
        size_t ol = t.v[k - 2].end - t.v[p].start;
        if (obj && (ol != obj_len || memcmp (o, obj, ol) != 0))
          obj = NULL, first = NONE, end = 0;
        else
          obj = o, obj_len = ol;
      }
  /* The object is a name bound once (`names = []`): it is that one object
   * everywhere, so its uses on every line are fixed. */
  if (obj != NULL && first != NONE)
    for (size_t k = first; k < end; k++)
      if (code + t.v[k].start == obj && t.v[k].end - t.v[k].start == obj_len
          && t.v[k].kind == TK_NAME && bound_once (&t, k))
        {
          first = 0;
          end = t.n;
          break;
        }
  /* Fix every table entry of TYPE used on that object in the line. */
  for (size_t k = first == NONE || obj == NULL ? t.n : first + 2; k < end && rc == 0; k++)
    {
      if (t.v[k].kind != TK_NAME || !pt_tok_eq (&t, k - 1, "."))
        continue;
      m = csr_heal_map_find (c, CSR_MAP_METHOD, type, code + t.v[k].start,
                             t.v[k].end - t.v[k].start);
      size_t p = m ? heal_primary_start (&t, k - 2) : NONE;
      if (p == NONE || p < first || t.v[k - 2].end - t.v[p].start != obj_len
          || memcmp (code + t.v[p].start, obj, obj_len) != 0)
        continue;
      const char *fix = m->b;
      bool call = pt_tok_eq (&t, k + 1, "(") && t.v[k + 1].match != NONE;
      size_t close = call ? t.v[k + 1].match : k;
      struct sb b = { 0 };
      if (fix[0] == '.')
        rc = pt_edit_add (&ed, t.v[k].start, t.v[k].end, fix + 1, strlen (fix + 1));
      else if (strcmp (fix, "len") == 0)
        {
          if (call && close != k + 2)
            continue; /* x.length(y): not a length */
          pt_sb_str (&b, "len(");
          pt_sb_add (&b, obj, obj_len);
          pt_sb_str (&b, ")");
          rc = b.oom ? -1 : pt_edit_add (&ed, t.v[p].start, t.v[close].end, b.s, b.len);
        }
      else if (strcmp (fix, "str") == 0 || strcmp (fix, "not") == 0)
        {
          if (!call || close != k + 2)
            continue; /* x.toString(16), x.isEmpty: not this */
          bool is_not = fix[0] == 'n';
          pt_sb_str (&b, is_not ? "(not " : "str(");
          pt_sb_add (&b, obj, obj_len);
          pt_sb_str (&b, ")");
          rc = b.oom ? -1 : pt_edit_add (&ed, t.v[p].start, t.v[close].end, b.s, b.len);
        }
      else if (strcmp (fix, "==") == 0)
        {
          bool one = call && close > k + 2;
          for (size_t j = k + 2; one && j < close; j++)
            one = !(pt_tok_eq (&t, j, ",") && t.v[j].depth == t.v[k + 1].depth + 1);
          if (!one)
            continue;
          pt_sb_str (&b, "(");
          pt_sb_add (&b, obj, obj_len);
          pt_sb_str (&b, " == ");
          pt_sb_add (&b, code + t.v[k + 2].start, t.v[close - 1].end - t.v[k + 2].start);
          pt_sb_str (&b, ")");
          rc = b.oom ? -1 : pt_edit_add (&ed, t.v[p].start, t.v[close].end, b.s, b.len);
        }
      else if (strcmp (fix, "map") == 0 || strcmp (fix, "filter") == 0 || strcmp (fix, "[]") == 0)
        {
          bool one = call && close > k + 2;
          for (size_t j = k + 2; one && j < close; j++)
            one = !(pt_tok_eq (&t, j, ",") && t.v[j].depth == t.v[k + 1].depth + 1);
          if (!one)
            continue;
          const char *arg = code + t.v[k + 2].start;
          size_t arg_len = t.v[close - 1].end - t.v[k + 2].start;
          if (fix[0] == '[')
            {
              pt_sb_add (&b, obj, obj_len);
              pt_sb_str (&b, "[");
              pt_sb_add (&b, arg, arg_len);
              pt_sb_str (&b, "]");
            }
          else
            {
              pt_sb_str (&b, "list(");
              pt_sb_str (&b, fix);
              pt_sb_str (&b, "(");
              pt_sb_add (&b, arg, arg_len);
              pt_sb_str (&b, ", ");
              pt_sb_add (&b, obj, obj_len);
              pt_sb_str (&b, "))");
            }
          rc = b.oom ? -1 : pt_edit_add (&ed, t.v[p].start, t.v[close].end, b.s, b.len);
        }
      else if (strcmp (fix, "join") == 0)
        {
          bool one = call && close > k + 2;
          for (size_t j = k + 2; one && j < close; j++)
            one = !(pt_tok_eq (&t, j, ",") && t.v[j].depth == t.v[k + 1].depth + 1);
          if (!one)
            continue;
          bool simple = heal_primary_start (&t, close - 1) == k + 2;
          pt_sb_str (&b, simple ? "" : "(");
          pt_sb_add (&b, code + t.v[k + 2].start, t.v[close - 1].end - t.v[k + 2].start);
          pt_sb_str (&b, simple ? ".join(" : ").join(");
          pt_sb_add (&b, obj, obj_len);
          pt_sb_str (&b, ")");
          rc = b.oom ? -1 : pt_edit_add (&ed, t.v[p].start, t.v[close].end, b.s, b.len);
        }
      else /* in */
        {
          bool one = call && close > k + 2;
          for (size_t j = k + 2; one && j < close; j++)
            one = !(pt_tok_eq (&t, j, ",") && t.v[j].depth == t.v[k + 1].depth + 1);
          if (!one)
            continue;
          pt_sb_str (&b, "(");
          pt_sb_add (&b, code + t.v[k + 2].start, t.v[close - 1].end - t.v[k + 2].start);
          pt_sb_str (&b, " in ");
          pt_sb_add (&b, obj, obj_len);
          pt_sb_str (&b, ")");
          rc = b.oom ? -1 : pt_edit_add (&ed, t.v[p].start, t.v[close].end, b.s, b.len);
        }
      free (b.s);
    }
  if (rc == 0 && ed.n > 0 && (*out = pt_apply_edits (code, strlen (code), &ed)) == NULL)
    rc = -1;
  pt_edits_release (&ed);
  pt_toks_release (&t);
  return rc;
}

/* ------------------------------------------------------- foreign-call */

/* Is NAME a global the gate found unbound (and blocked on), or the one a
 * NameError names? */
static bool
unbound (const struct csr_diagnosis *d, const struct csr_gate_verdict *v, const char *name,
         size_t n)
{
  for (size_t i = 0; v && v->outcome == CSR_GATE_BLOCKED && i < v->n_undefined; i++)
    if (v->undefined[i].name && strlen (v->undefined[i].name) == n
        && memcmp (v->undefined[i].name, name, n) == 0)
      return true;
  if (d && d->error_type && d->message && strcmp (d->error_type, "NameError") == 0)
    {
      cleanup_free char *e = heal_quoted_after (d->message, "name ");
      return e && strlen (e) == n && memcmp (e, name, n) == 0;
    }
  return false;
}

int
heal_foreign_calls (const char *code, const struct csr_diagnosis *d,
                    const struct csr_gate_verdict *v, const struct csr_heal_conf *c, char **out,
                    char ***imports, size_t *n_imports)
{
  *out = NULL;
  *imports = NULL;
  *n_imports = 0;
  struct toks t;
  if (pt_tokenize (code, strlen (code), &t) < 0)
    return -1;
  struct edits ed = { 0 };
  int rc = 0;
  for (size_t i = 0; c && i < t.n && rc == 0; i++)
    {
      if (t.v[i].kind != TK_NAME || (i > 0 && pt_tok_eq (&t, i - 1, ".")))
        continue;
      /* NAME(.NAME)* ( */
      size_t e = i;
      while (pt_tok_eq (&t, e + 1, ".") && t.v[e + 2].kind == TK_NAME)
        e += 2;
      bool called = pt_tok_eq (&t, e + 1, "(");
      const struct csr_heal_map *m
          = called ? csr_heal_map_find (c, CSR_MAP_FOREIGN_CALL, NULL, code + t.v[i].start,
                                        t.v[e].end - t.v[i].start)
                   : NULL;
      if (m == NULL && e == i && !pt_tok_eq (&t, i + 1, "=")
          && !(i > 0 && pt_tok_in (&t, i - 1, (const char *const[]){ "def", "class", NULL })))
        m = csr_heal_map_find (c, CSR_MAP_FOREIGN_NAME, NULL, code + t.v[i].start,
                               t.v[i].end - t.v[i].start);
      if (m == NULL || !unbound (d, v, code + t.v[i].start, t.v[i].end - t.v[i].start))
        continue;
      rc = pt_edit_add (&ed, t.v[i].start,
                        m->kind == CSR_MAP_FOREIGN_NAME ? t.v[i].end : t.v[e].end, m->b,
                        strlen (m->b));
      /* math.floor: math needs its import */
      size_t root = strcspn (m->b, ".");
      if (rc == 0 && m->b[root] == '.')
        {
          bool dup = false;
          for (size_t k = 0; k < *n_imports; k++)
            dup |= strlen ((*imports)[k]) == root && memcmp ((*imports)[k], m->b, root) == 0;
          char **nv = dup ? *imports : realloc (*imports, (*n_imports + 1) * sizeof *nv);
          if (nv == NULL)
            rc = -1;
          else if (!dup)
            {
              *imports = nv;
              if ((nv[*n_imports] = strndup (m->b, root)) == NULL)
                rc = -1;
              else
                (*n_imports)++;
            }
        }
    }
  if (rc == 0 && ed.n > 0 && (*out = pt_apply_edits (code, strlen (code), &ed)) == NULL)
    rc = -1;
  pt_edits_release (&ed);
  pt_toks_release (&t);
  return rc;
}
