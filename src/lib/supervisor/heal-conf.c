/* csrun — policies/heal.conf: the missing-import table of the local healer
 * (heal.h), parsed and checked (each line must be an import that binds its
 * name). */
#include "config.h"
#include "heal-internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"

bool
heal_valid_identifier (const char *s, size_t n)
{
  if (n == 0 || !(s[0] == '_' || isalpha ((unsigned char)s[0])))
    return false;
  for (size_t i = 1; i < n; i++)
    if (!(s[i] == '_' || isalnum ((unsigned char)s[i])))
      return false;
  return true;
}

/* Names an import statement binds (tokens [I, END)): calls CB for each.
 * Returns false when the statement is not an import. */
bool
heal_import_binds (const struct toks *t, size_t i, size_t end,
                   void (*cb) (const char *name, size_t len, void *data), void *data)
{
  if (pt_tok_eq (t, i, "import"))
    {
      i++;
      while (i < end && t->v[i].kind == TK_NAME)
        {
          size_t first = i;
          while (i + 2 < end && pt_tok_eq (t, i + 1, ".") && t->v[i + 2].kind == TK_NAME)
            i += 2;
          size_t bind = first;
          if (pt_tok_eq (t, i + 1, "as") && i + 2 < end && t->v[i + 2].kind == TK_NAME)
            bind = i += 2;
          cb (t->src + t->v[bind].start, t->v[bind].end - t->v[bind].start, data);
          i++;
          if (!pt_tok_eq (t, i, ","))
            break;
          i++;
        }
      return true;
    }
  if (!pt_tok_eq (t, i, "from"))
    return false;
  while (i < end && !pt_tok_eq (t, i, "import"))
    i++;
  i++;
  if (pt_tok_eq (t, i, "("))
    i++;
  while (i < end && t->v[i].kind == TK_NAME)
    {
      size_t bind = i;
      if (pt_tok_eq (t, i + 1, "as") && i + 2 < end && t->v[i + 2].kind == TK_NAME)
        bind = i += 2;
      cb (t->src + t->v[bind].start, t->v[bind].end - t->v[bind].start, data);
      i++;
      if (!pt_tok_eq (t, i, ","))
        break;
      i++;
    }
  return true;
}

struct bind_check
{
  const char *name;
  bool found;
};

static void
bind_check_cb (const char *name, size_t len, void *data)
{
  struct bind_check *bc = data;
  if (strlen (bc->name) == len && memcmp (bc->name, name, len) == 0)
    bc->found = true;
}

/* Does the import statement LINE bind NAME? */
static int
import_line_binds (const char *line, const char *name, bool *ok)
{
  struct toks t;
  if (pt_tokenize (line, strlen (line), &t) < 0)
    return -1;
  struct bind_check bc = { name, false };
  size_t end = pt_logical_end (&t, 0);
  bool is_import = t.n > 0 && heal_import_binds (&t, 0, end, bind_check_cb, &bc);
  /* One statement only. */
  *ok = is_import && bc.found && end + 1 >= t.n;
  pt_toks_release (&t);
  return 0;
}

static void
import_release (struct csr_heal_import *im)
{
  free (im->name);
  free (im->line);
  free (im->module);
  for (size_t i = 0; i < im->n_attrs; i++)
    free (im->attrs[i]);
  free (im->attrs);
  for (size_t i = 0; i < im->n_not_attrs; i++)
    free (im->not_attrs[i]);
  free (im->not_attrs);
  memset (im, 0, sizeof *im);
}

/* A comma-separated list of identifiers. */
static int
parse_list (const char *s, size_t n, char ***out, size_t *count)
{
  *out = NULL;
  *count = 0;
  size_t i = 0;
  while (i <= n)
    {
      size_t j = i;
      while (j < n && s[j] != ',')
        j++;
      if (!heal_valid_identifier (s + i, j - i))
        return -1;
      char **nv = realloc (*out, (*count + 1) * sizeof *nv);
      if (nv == NULL)
        return -1;
      *out = nv;
      if ((nv[*count] = strndup (s + i, j - i)) == NULL)
        return -1;
      (*count)++;
      i = j + 1;
    }
  return 0;
}

static int
parse_option (const char *s, size_t n, struct csr_heal_import *im, const char **why)
{
  const char *eq = memchr (s, '=', n);
  if (eq == NULL)
    {
      *why = "an option is KEY=VALUE";
      return -1;
    }
  size_t kl = (size_t)(eq - s), vl = n - kl - 1;
  const char *v = eq + 1;
  if (kl == 6 && memcmp (s, "module", 6) == 0)
    {
      if (im->module != NULL || !heal_valid_identifier (v, vl))
        {
          *why = "module= wants one top-level module name";
          return -1;
        }
      im->module = strndup (v, vl);
      return im->module ? 0 : -1;
    }
  if (kl == 3 && memcmp (s, "use", 3) == 0)
    {
      size_t i = 0;
      while (i <= vl)
        {
          size_t j = i;
          while (j < vl && v[j] != ',')
            j++;
          if (j - i == 9 && memcmp (v + i, "attribute", 9) == 0)
            im->uses |= CSR_HEAL_USE_ATTRIBUTE;
          else if (j - i == 4 && memcmp (v + i, "call", 4) == 0)
            im->uses |= CSR_HEAL_USE_CALL;
          else if (j - i == 4 && memcmp (v + i, "name", 4) == 0)
            im->uses |= CSR_HEAL_USE_NAME;
          else
            {
              *why = "use= takes attribute, call and name";
              return -1;
            }
          i = j + 1;
        }
      return 0;
    }
  bool neg = kl == 8 && memcmp (s, "not-attr", 8) == 0;
  if (neg || (kl == 4 && memcmp (s, "attr", 4) == 0))
    {
      char ***list = neg ? &im->not_attrs : &im->attrs;
      size_t *count = neg ? &im->n_not_attrs : &im->n_attrs;
      if (*list != NULL || parse_list (v, vl, list, count) < 0)
        {
          *why = "attr= and not-attr= want one comma-separated list of names";
          return -1;
        }
      return 0;
    }
  *why = "unknown option (module=, use=, attr=, not-attr=)";
  return -1;
}

/* One non-comment line: NAME IMPORT-LINE [OPTIONS]. */
static int
parse_entry (const char *s, size_t n, struct csr_heal_import *im, const char **why)
{
  memset (im, 0, sizeof *im);
  size_t i = 0;
  while (i < n && !isspace ((unsigned char)s[i]))
    i++;
  if (!heal_valid_identifier (s, i))
    {
      *why = "NAME must be a Python identifier";
      return -1;
    }
  if ((im->name = strndup (s, i)) == NULL)
    return -1;
  while (i < n && isspace ((unsigned char)s[i]))
    i++;
  size_t line_end = n;
  if (n > 0 && s[n - 1] == ']')
    {
      const char *open = memchr (s + i, '[', n - i);
      if (open == NULL)
        {
          *why = "unbalanced ']'";
          return -1;
        }
      line_end = (size_t)(open - s);
      size_t o = line_end + 1;
      while (o < n - 1)
        {
          while (o < n - 1 && isspace ((unsigned char)s[o]))
            o++;
          size_t e = o;
          while (e < n - 1 && !isspace ((unsigned char)s[e]))
            e++;
          if (e > o && parse_option (s + o, e - o, im, why) < 0)
            return -1;
          o = e;
        }
    }
  while (line_end > i && isspace ((unsigned char)s[line_end - 1]))
    line_end--;
  for (size_t k = i; k < line_end; k++)
    if ((unsigned char)s[k] < 0x20 || (unsigned char)s[k] >= 0x7f || strchr ("[];\\", s[k]))
      {
        *why = "the import line has a character an import statement does not need";
        return -1;
      }
  if (line_end == i)
    {
      *why = "missing IMPORT-LINE";
      return -1;
    }
  if ((im->line = strndup (s + i, line_end - i)) == NULL)
    return -1;
  bool ok = false;
  if (import_line_binds (im->line, im->name, &ok) < 0)
    return -1;
  if (!ok)
    {
      *why = "IMPORT-LINE must be one import statement that binds NAME";
      return -1;
    }
  return 0;
}

/* ------------------------------------------------- the KIND: tables */

static const struct
{
  const char *name;
  enum csr_heal_map_kind kind;
  int fields; /* words after the KIND */
} map_kinds[] = {
  { "py2-name:", CSR_MAP_PY2_NAME, 2 },
  { "py2-method:", CSR_MAP_PY2_METHOD, 2 },
  { "py2-attr:", CSR_MAP_PY2_ATTR, 3 },
  { "py2-module:", CSR_MAP_PY2_MODULE, 2 },
  { "method:", CSR_MAP_METHOD, 3 },
  { "submodule:", CSR_MAP_SUBMODULE, 1 },
  { "foreign-call:", CSR_MAP_FOREIGN_CALL, 2 },
  { "foreign-name:", CSR_MAP_FOREIGN_NAME, 2 },
};

/* A dotted name: identifiers joined by single dots. */
static bool
valid_dotted (const char *s, size_t n, size_t min_parts)
{
  size_t parts = 0, i = 0;
  while (i <= n)
    {
      size_t j = i;
      while (j < n && s[j] != '.')
        j++;
      if (!heal_valid_identifier (s + i, j - i))
        return false;
      parts++;
      i = j + 1;
    }
  return parts >= min_parts;
}

static void
map_release (struct csr_heal_map *m)
{
  free (m->type);
  free (m->a);
  free (m->b);
  memset (m, 0, sizeof *m);
}

/* A line "KIND: WORD...".  Returns 1 when it is one (parsed into M, or -1
 * with *WHY), 0 when the line is an import entry. */
static int
parse_map (const char *s, size_t n, struct csr_heal_map *m, const char **why)
{
  size_t k = 0;
  while (k < n && !isspace ((unsigned char)s[k]))
    k++;
  if (k == 0 || s[k - 1] != ':')
    return 0;
  memset (m, 0, sizeof *m);
  size_t which = 0;
  while (which < sizeof map_kinds / sizeof map_kinds[0]
         && !(strlen (map_kinds[which].name) == k && memcmp (map_kinds[which].name, s, k) == 0))
    which++;
  if (which == sizeof map_kinds / sizeof map_kinds[0])
    {
      *why = "unknown table (py2-name:, py2-method:, py2-attr:, py2-module:, method:, "
             "foreign-call:, foreign-name:, submodule:, package:)";
      return -1;
    }
  m->kind = map_kinds[which].kind;
  const char *w[4];
  size_t wl[4];
  int nw = 0;
  for (size_t i = k; i < n;)
    {
      while (i < n && isspace ((unsigned char)s[i]))
        i++;
      if (i == n)
        break;
      size_t e = i;
      while (e < n && !isspace ((unsigned char)s[e]))
        e++;
      if (nw == 4)
        nw++;
      if (nw > 4)
        break;
      w[nw] = s + i;
      wl[nw++] = e - i;
      i = e;
    }
  if (nw != map_kinds[which].fields)
    {
      *why = "wrong number of words for this table";
      return -1;
    }
  bool ok;
  switch (m->kind)
    {
    case CSR_MAP_METHOD:
      ok = heal_valid_identifier (w[0], wl[0]) && heal_valid_identifier (w[1], wl[1])
           && ((wl[2] > 1 && w[2][0] == '.' && heal_valid_identifier (w[2] + 1, wl[2] - 1))
               || (wl[2] == 3 && memcmp (w[2], "len", 3) == 0)
               || (wl[2] == 2 && memcmp (w[2], "in", 2) == 0)
               || (wl[2] == 4 && memcmp (w[2], "join", 4) == 0)
               || (wl[2] == 3 && memcmp (w[2], "str", 3) == 0)
               || (wl[2] == 3 && memcmp (w[2], "not", 3) == 0)
               || (wl[2] == 2 && memcmp (w[2], "==", 2) == 0)
               || (wl[2] == 3 && memcmp (w[2], "map", 3) == 0)
               || (wl[2] == 6 && memcmp (w[2], "filter", 6) == 0)
               || (wl[2] == 2 && memcmp (w[2], "[]", 2) == 0));
      if (!ok)
        *why = "method: wants TYPE ATTR and .NAME, len, in, join, str, not, ==, map, filter or []";
      break;
    case CSR_MAP_PY2_ATTR:
      ok = heal_valid_identifier (w[0], wl[0]) && heal_valid_identifier (w[1], wl[1])
           && heal_valid_identifier (w[2], wl[2]);
      if (!ok)
        *why = "py2-attr: wants MODULE OLD NEW";
      break;
    case CSR_MAP_PY2_MODULE:
      ok = heal_valid_identifier (w[0], wl[0]) && valid_dotted (w[1], wl[1], 1);
      if (!ok)
        *why = "py2-module: wants OLD and a (dotted) module name";
      break;
    case CSR_MAP_FOREIGN_CALL:
      ok = valid_dotted (w[0], wl[0], 1) && valid_dotted (w[1], wl[1], 1);
      if (!ok)
        *why = "foreign-call: wants two (dotted) names";
      break;
    case CSR_MAP_FOREIGN_NAME:
      ok = heal_valid_identifier (w[0], wl[0]) && heal_valid_identifier (w[1], wl[1]);
      if (!ok)
        *why = "foreign-name: wants two names";
      break;
    case CSR_MAP_SUBMODULE:
      ok = valid_dotted (w[0], wl[0], 2);
      if (!ok)
        *why = "submodule: wants a dotted module name (a.b)";
      break;
    default:
      ok = heal_valid_identifier (w[0], wl[0]) && heal_valid_identifier (w[1], wl[1]);
      if (!ok)
        *why = "this table wants two Python identifiers";
      break;
    }
  if (!ok)
    return -1;
  int f = 0;
  if ((m->kind == CSR_MAP_METHOD || m->kind == CSR_MAP_PY2_ATTR)
      && (m->type = strndup (w[f++], wl[0])) == NULL)
    goto oom;
  if ((m->a = strndup (w[f], wl[f])) == NULL)
    goto oom;
  f++;
  if (f < nw && (m->b = strndup (w[f], wl[f])) == NULL)
    goto oom;
  return 1;
oom:
  *why = NULL;
  return -1;
}

const struct csr_heal_map *
csr_heal_map_find (const struct csr_heal_conf *c, enum csr_heal_map_kind kind, const char *type,
                   const char *a, size_t len)
{
  for (size_t i = 0; c && i < c->n_maps; i++)
    {
      const struct csr_heal_map *m = &c->maps[i];
      if (m->kind == kind && strlen (m->a) == len && memcmp (m->a, a, len) == 0
          && (type == NULL || (m->type && strcmp (m->type, type) == 0)))
        return m;
    }
  return NULL;
}

static int
add_map (struct csr_heal_conf *c, const struct csr_heal_map *m)
{
  struct csr_heal_map *nv = realloc (c->maps, (c->n_maps + 1) * sizeof *nv);
  if (nv == NULL)
    return -1;
  c->maps = nv;
  c->maps[c->n_maps++] = *m;
  return 0;
}

int
csr_heal_conf_parse (const char *text, size_t len, struct csr_heal_conf *c, csr_error **err)
{
  memset (c, 0, sizeof *c);
  size_t cap = 0, lineno = 0;
  const char *p = text, *end = text + len;
  while (p < end)
    {
      lineno++;
      const char *nl = memchr (p, '\n', (size_t)(end - p));
      const char *le = nl ? nl : end;
      const char *hash = memchr (p, '#', (size_t)(le - p));
      const char *s = p, *e = hash ? hash : le;
      p = nl ? nl + 1 : end;
      while (s < e && isspace ((unsigned char)*s))
        s++;
      while (e > s && isspace ((unsigned char)e[-1]))
        e--;
      if (s == e)
        continue;
      {
        struct csr_heal_map m;
        const char *why = NULL;
        int mr = parse_map (s, (size_t)(e - s), &m, &why);
        if (mr != 0)
          {
            if (mr > 0 && add_map (c, &m) == 0)
              continue;
            map_release (&m);
            csr_heal_conf_release (c);
            if (why == NULL)
              return csr_error_set (err, ENOMEM, "heal.conf: out of memory");
            return csr_error_set (err, 0, "line %zu: %s", lineno, why);
          }
      }
      if (c->n_imports == cap)
        {
          cap = cap ? cap * 2 : 64;
          struct csr_heal_import *nv = realloc (c->imports, cap * sizeof *nv);
          if (nv == NULL)
            {
              csr_heal_conf_release (c);
              return csr_error_set (err, ENOMEM, "heal.conf: out of memory");
            }
          c->imports = nv;
        }
      const char *why = NULL;
      struct csr_heal_import *im = &c->imports[c->n_imports];
      if (parse_entry (s, (size_t)(e - s), im, &why) < 0)
        {
          import_release (im);
          csr_heal_conf_release (c);
          if (why == NULL)
            return csr_error_set (err, ENOMEM, "heal.conf: out of memory");
          return csr_error_set (err, 0, "line %zu: %s", lineno, why);
        }
      c->n_imports++;
    }
  return 0;
}

int
csr_heal_conf_load (const char *path, struct csr_heal_conf *c, csr_error **err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (csr_read_file (path, 1024 * 1024, &text, &len, err) < 0)
    return csr_error_wrap (err, "%s", path);
  if (csr_heal_conf_parse (text, len, c, err) < 0)
    return csr_error_wrap (err, "%s", path);
  return 0;
}

void
csr_heal_conf_release (struct csr_heal_conf *c)
{
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->n_imports; i++)
    import_release (&c->imports[i]);
  free (c->imports);
  c->imports = NULL;
  c->n_imports = 0;
  for (size_t i = 0; i < c->n_maps; i++)
    map_release (&c->maps[i]);
  free (c->maps);
  c->maps = NULL;
  c->n_maps = 0;
}
