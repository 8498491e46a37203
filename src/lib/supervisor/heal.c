/* csrun — local healing: fixes that are certain, no network.
 *
 * The rules work on a small Python tokenizer (names, numbers, strings,
 * operators with matched brackets, logical lines), never on raw text, so a
 * '+' or a "print" inside a string literal is never touched. */
#include "config.h"
#include "heal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "pytok.h"

/* ---------------------------------------------------------- heal.conf */

static bool
valid_identifier (const char *s, size_t n)
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
static bool
import_binds (const struct toks *t, size_t i, size_t end,
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
  bool is_import = t.n > 0 && import_binds (&t, 0, end, bind_check_cb, &bc);
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
      if (!valid_identifier (s + i, j - i))
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
      if (im->module != NULL || !valid_identifier (v, vl))
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
  if (!valid_identifier (s, i))
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
}

void
csr_patch_release (struct csr_patch *p)
{
  if (p == NULL)
    return;
  free (p->code);
  free (p->rules);
  free (p->source);
  free (p->diff);
  free (p->provider);
  free (p->model);
  memset (p, 0, sizeof *p);
}

/* ------------------------------------------------- third-party modules */

/* Is there a top-level module MOD in directory DIR (a package directory,
 * MOD.py, or an extension MOD.*.so / MOD.so)? */
static bool
module_in_dir (const char *dir, const char *mod)
{
  char path[4096];
  struct stat st;
  /* lstat: a symbolic link in the rootfs must not be resolved on the host. */
  if (snprintf (path, sizeof path, "%s/%s", dir, mod) >= (int)sizeof path)
    return false;
  if (lstat (path, &st) == 0 && (S_ISDIR (st.st_mode) || S_ISLNK (st.st_mode)))
    return true;
  if (snprintf (path, sizeof path, "%s/%s.py", dir, mod) >= (int)sizeof path)
    return false;
  if (lstat (path, &st) == 0 && (S_ISREG (st.st_mode) || S_ISLNK (st.st_mode)))
    return true;
  cleanup_dir DIR *d = opendir (dir);
  if (d == NULL)
    return false;
  size_t ml = strlen (mod);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      size_t l = strlen (de->d_name);
      if (l > ml + 3 && strncmp (de->d_name, mod, ml) == 0 && de->d_name[ml] == '.'
          && strcmp (de->d_name + l - 3, ".so") == 0)
        return true;
    }
  return false;
}

/* MOD exists in the rootfs: usr/lib/python3/dist-packages, and
 * usr/lib/python3.X and usr/local/lib/python3.X with their dist-packages and
 * site-packages. */
static bool
module_exists (const char *rootfs, const char *mod)
{
  if (rootfs == NULL || mod == NULL || !valid_identifier (mod, strlen (mod)))
    return false;
  char dir[4096];
  if (snprintf (dir, sizeof dir, "%s/usr/lib/python3/dist-packages", rootfs) < (int)sizeof dir
      && module_in_dir (dir, mod))
    return true;
  static const char *const bases[] = { "usr/lib", "usr/local/lib" };
  static const char *const subs[] = { "", "/dist-packages", "/site-packages" };
  for (size_t b = 0; b < 2; b++)
    {
      char base[4096];
      if (snprintf (base, sizeof base, "%s/%s", rootfs, bases[b]) >= (int)sizeof base)
        continue;
      cleanup_dir DIR *d = opendir (base);
      if (d == NULL)
        continue;
      struct dirent *de;
      while ((de = readdir (d)) != NULL)
        {
          if (strncmp (de->d_name, "python3.", 8) != 0)
            continue;
          for (size_t s = 0; s < 3; s++)
            {
              if (snprintf (dir, sizeof dir, "%s/%s%s", base, de->d_name, subs[s]) < (int)sizeof dir
                  && module_in_dir (dir, mod))
                return true;
            }
        }
    }
  return false;
}

/* ------------------------------------------------------- missing-import */

/* How the snippet uses NAME: kinds of use and the attributes it reads. */
struct usage
{
  unsigned kinds;
  size_t n_uses;
  const char *attr[64]; /* pointers into the source; lengths below */
  size_t attr_len[64];
  size_t n_attr;
  bool attr_overflow;
};

static int scan_usage (const char *src, size_t len, const char *name, struct usage *u);

/* Add the uses found in the token list T. */
static void
scan_usage_toks (const struct toks *t, const char *name, struct usage *u, int *rc)
{
  size_t nl = strlen (name);
  for (size_t i = 0; i < t->n; i++)
    {
      const struct tok *k = &t->v[i];
      if (k->kind == TK_STRING && (k->str & STR_F))
        {
          /* The {expressions} of an f-string. */
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
              while (e < n
                     && !(depth == 0
                          && (s[e] == '}' || s[e] == ':'
                              || (s[e] == '!' && (e + 1 >= n || s[e + 1] != '=')))))
                {
                  if (strchr ("([{", s[e]))
                    depth++;
                  else if (strchr (")]}", s[e]) && depth > 0)
                    depth--;
                  e++;
                }
              if (scan_usage (s + j + 1, e - j - 1, name, u) < 0)
                *rc = -1;
              j = e;
            }
          continue;
        }
      if (k->kind != TK_NAME || k->end - k->start != nl || memcmp (t->src + k->start, name, nl))
        continue;
      if (i > 0 && pt_tok_eq (t, i - 1, "."))
        continue; /* obj.NAME */
      if (pt_tok_eq (t, i + 1, "=") && !(i > 0 && pt_tok_eq (t, i - 1, ":")))
        continue; /* a binding or a keyword argument (not x: NAME = ...) */
      if (i > 0
          && pt_tok_in (t, i - 1, (const char *const[]){ "def", "class", "import", "as", NULL }))
        continue;
      u->n_uses++;
      if (pt_tok_eq (t, i + 1, ".") && t->v[i + 2].kind == TK_NAME)
        {
          u->kinds |= CSR_HEAL_USE_ATTRIBUTE;
          if (u->n_attr < 64)
            {
              u->attr[u->n_attr] = t->src + t->v[i + 2].start;
              u->attr_len[u->n_attr++] = t->v[i + 2].end - t->v[i + 2].start;
            }
          else
            u->attr_overflow = true;
        }
      else if (pt_tok_eq (t, i + 1, "("))
        u->kinds |= CSR_HEAL_USE_CALL;
      else
        u->kinds |= CSR_HEAL_USE_NAME;
    }
}

static int
scan_usage (const char *src, size_t len, const char *name, struct usage *u)
{
  struct toks t;
  if (pt_tokenize (src, len, &t) < 0)
    return -1;
  int rc = 0;
  scan_usage_toks (&t, name, u, &rc);
  pt_toks_release (&t);
  return rc;
}

static bool
in_list (char *const *list, size_t n, const char *s, size_t len)
{
  for (size_t i = 0; i < n; i++)
    if (strlen (list[i]) == len && memcmp (list[i], s, len) == 0)
      return true;
  return false;
}

/* Do the entry's conditions hold for usage U? */
static bool
entry_applies (const struct csr_heal_import *im, const struct usage *u, const char *rootfs)
{
  if (im->module != NULL && !module_exists (rootfs, im->module))
    return false;
  if (im->uses == 0 && im->n_attrs == 0 && im->n_not_attrs == 0)
    return true;
  if (u->n_uses == 0)
    return false; /* conditions, and nothing known about the uses */
  if (im->uses != 0 && (u->kinds & ~im->uses) != 0)
    return false;
  if (im->n_attrs > 0 || im->n_not_attrs > 0)
    {
      if (u->attr_overflow)
        return false;
      if (im->n_attrs > 0 && u->n_attr == 0)
        return false;
      for (size_t i = 0; i < u->n_attr; i++)
        {
          if (u->attr[i] == NULL) /* an attribute use we could not see */
            return false;
          if (im->n_attrs > 0 && !in_list (im->attrs, im->n_attrs, u->attr[i], u->attr_len[i]))
            return false;
          if (in_list (im->not_attrs, im->n_not_attrs, u->attr[i], u->attr_len[i]))
            return false;
        }
    }
  return true;
}

/* Names bound by the snippet's top-level import statements. */
struct bound
{
  char **names;
  size_t n;
  bool oom;
};

static void
bound_cb (const char *name, size_t len, void *data)
{
  struct bound *b = data;
  char **nv = realloc (b->names, (b->n + 1) * sizeof *nv);
  if (nv == NULL)
    {
      b->oom = true;
      return;
    }
  b->names = nv;
  if ((nv[b->n] = strndup (name, len)) == NULL)
    b->oom = true;
  else
    b->n++;
}

static size_t
line_start_of (const char *src, size_t pos)
{
  while (pos > 0 && src[pos - 1] != '\n')
    pos--;
  return pos;
}

static void
top_level_imports (const struct toks *t, struct bound *b)
{
  for (size_t i = 0; i < t->n; i++)
    {
      if (!t->v[i].bol || t->v[i].start != line_start_of (t->src, t->v[i].start))
        continue;
      size_t end = pt_logical_end (t, i);
      /* Every statement of the line: import os; import sys */
      size_t s = i;
      while (s < end)
        {
          size_t e = s;
          while (e < end && !(pt_tok_eq (t, e, ";") && t->v[e].depth == 0))
            e++;
          import_binds (t, s, e, bound_cb, b);
          s = e + 1;
        }
      i = end;
    }
}

static bool
is_bound (const struct bound *b, const char *name)
{
  for (size_t i = 0; i < b->n; i++)
    if (strcmp (b->names[i], name) == 0)
      return true;
  return false;
}

/* Does the comment line P[0..N) declare an encoding ("coding:" or "coding=")? */
static bool
has_coding (const char *p, size_t n)
{
  for (size_t i = 0; i + 7 <= n; i++)
    if (memcmp (p + i, "coding", 6) == 0 && (p[i + 6] == ':' || p[i + 6] == '='))
      return true;
  return false;
}

/* Where the imports go: after a shebang / encoding line, a header comment
 * block that ends with a blank line, the module docstring and any
 * `from __future__` imports. */
static size_t
import_position (const struct toks *t)
{
  const char *src = t->src;
  size_t len = t->len, pos = 0;
  if (src == NULL)
    return 0;
  for (int l = 0; l < 2 && pos < len; l++)
    {
      const char *nl = memchr (src + pos, '\n', len - pos);
      size_t e = nl ? (size_t)(nl - src) + 1 : len;
      bool shebang = l == 0 && len - pos >= 2 && src[pos] == '#' && src[pos + 1] == '!';
      size_t k = pos;
      while (k < e && (src[k] == ' ' || src[k] == '\t' || src[k] == '\f'))
        k++;
      bool coding = k < e && src[k] == '#' && has_coding (src + k, e - k);
      if (!shebang && !coding)
        break;
      pos = e;
    }
  if (t->n == 0)
    return pos;
  /* Leading comments: a block separated from the first statement by a blank
   * line is a header; comments right above the statement stay with it. */
  size_t first = t->v[0].start;
  size_t s = line_start_of (src, first);
  size_t after_blank = pos;
  for (size_t p = pos; p < s;)
    {
      const char *nl = memchr (src + p, '\n', s - p);
      size_t e = nl ? (size_t)(nl - src) + 1 : s;
      size_t k = p;
      while (k < e && isspace ((unsigned char)src[k]))
        k++;
      if (k == e)
        after_blank = e;
      p = e;
    }
  pos = after_blank;

  size_t i = 0;
  /* The docstring: a logical line of string literals only. */
  if (t->v[0].kind == TK_STRING)
    {
      size_t e = pt_logical_end (t, 0);
      bool doc = true;
      for (size_t j = 0; j < e; j++)
        if (t->v[j].kind != TK_STRING || (t->v[j].str & (STR_F | STR_B)))
          doc = false;
      if (doc)
        {
          pos = t->v[e].end;
          i = e + 1;
        }
    }
  while (i < t->n && pt_tok_eq (t, i, "from") && pt_tok_eq (t, i + 1, "__future__"))
    {
      size_t e = pt_logical_end (t, i);
      pos = t->v[e].end;
      i = e + 1;
    }
  return pos;
}

/* The name in "name 'X' is not defined" (also with ". Did you mean: 'Y'?"). */
static char *
nameerror_name (const char *msg)
{
  if (msg == NULL)
    return NULL;
  const char *p = strstr (msg, "name '");
  if (p == NULL)
    return NULL;
  p += 6;
  const char *q = strchr (p, '\'');
  if (q == NULL || strncmp (q, "' is not defined", 16) != 0
      || !valid_identifier (p, (size_t)(q - p)))
    return NULL;
  return strndup (p, (size_t)(q - p));
}

static bool
usage_from_verdict (const struct csr_gate_verdict *v, const char *name, struct usage *u)
{
  bool any = false;
  for (size_t i = 0; v && i < v->n_undefined; i++)
    {
      const struct csr_undefined_name *un = &v->undefined[i];
      if (un->name == NULL || strcmp (un->name, name) != 0 || un->usage == NULL)
        continue;
      any = true;
      u->n_uses++;
      if (strcmp (un->usage, "attribute") == 0)
        {
          u->kinds |= CSR_HEAL_USE_ATTRIBUTE;
          if (u->n_attr < 64)
            {
              u->attr[u->n_attr] = NULL; /* which attribute is not known */
              u->attr_len[u->n_attr++] = 0;
            }
        }
      else if (strcmp (un->usage, "call") == 0)
        u->kinds |= CSR_HEAL_USE_CALL;
      else
        u->kinds |= CSR_HEAL_USE_NAME;
    }
  return any;
}

/* Insert the imports CODE lacks.  *OUT is NULL when none applies. */
static int
heal_imports (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
              const struct csr_heal_conf *c, const char *rootfs, char **out)
{
  *out = NULL;
  if (c == NULL || c->n_imports == 0)
    return 0;
  size_t len = strlen (code);
  /* The names to bind. */
  size_t n_names = 0;
  const char **names = calloc ((v ? v->n_undefined : 0) + 1, sizeof *names);
  cleanup_free char *nerr = NULL;
  if (names == NULL)
    return -1;
  for (size_t i = 0; v && i < v->n_undefined; i++)
    if (v->undefined[i].name)
      names[n_names++] = v->undefined[i].name;
  if (d && d->error_type && strcmp (d->error_type, "NameError") == 0
      && (nerr = nameerror_name (d->message)) != NULL)
    names[n_names++] = nerr;
  if (n_names == 0)
    {
      free (names);
      return 0;
    }

  int rc = -1;
  struct toks t = { 0 };
  struct bound b = { 0 };
  bool *chosen = calloc (c->n_imports, sizeof *chosen);
  if (chosen == NULL || pt_tokenize (code, len, &t) < 0)
    goto done;
  top_level_imports (&t, &b);
  if (b.oom)
    goto done;
  bool any = false;
  for (size_t i = 0; i < n_names; i++)
    {
      bool dup = false;
      for (size_t j = 0; j < i; j++)
        dup |= strcmp (names[j], names[i]) == 0;
      if (dup || is_bound (&b, names[i]))
        continue;
      struct usage u;
      memset (&u, 0, sizeof u);
      if (scan_usage (code, len, names[i], &u) < 0)
        goto done;
      if (u.n_uses == 0)
        usage_from_verdict (v, names[i], &u);
      for (size_t k = 0; k < c->n_imports; k++)
        if (strcmp (c->imports[k].name, names[i]) == 0
            && entry_applies (&c->imports[k], &u, rootfs))
          {
            chosen[k] = any = true;
            break;
          }
    }
  rc = 0;
  if (!any)
    goto done;

  /* The lines, in the order of the table, each once. */
  struct sb ins = { 0 };
  size_t pos = import_position (&t);
  if (pos > 0 && code[pos - 1] != '\n')
    pt_sb_str (&ins, "\n");
  for (size_t k = 0; k < c->n_imports; k++)
    {
      if (!chosen[k])
        continue;
      bool dup = false;
      for (size_t j = 0; j < k; j++)
        dup |= chosen[j] && strcmp (c->imports[j].line, c->imports[k].line) == 0;
      if (dup)
        continue;
      pt_sb_str (&ins, c->imports[k].line);
      pt_sb_str (&ins, "\n");
    }
  struct sb res = { 0 };
  pt_sb_add (&res, code, pos);
  pt_sb_add (&res, ins.s ? ins.s : "", ins.len);
  pt_sb_add (&res, code + pos, len - pos);
  free (ins.s);
  if ((*out = pt_sb_take (&res)) == NULL)
    rc = -1;

done:
  for (size_t i = 0; i < b.n; i++)
    free (b.names[i]);
  free (b.names);
  pt_toks_release (&t);
  free (chosen);
  free (names);
  return rc;
}

/* ----------------------------------------------------------- str-concat */

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
static int
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

/* ------------------------------------------------------------ py2-print */

static bool
print_trigger (const struct csr_diagnosis *d, const struct csr_gate_verdict *v)
{
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

static int
heal_print (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
            char **out)
{
  *out = NULL;
  if (!print_trigger (d, v))
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

/* ------------------------------------------------------------ the healer */

int
csr_heal_local (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
                const struct csr_heal_conf *c, const char *rootfs_dir, struct csr_patch *out,
                csr_error **err)
{
  memset (out, 0, sizeof *out);
  if (code == NULL)
    return 0;
  cleanup_free char *cur = strdup (code);
  if (cur == NULL)
    return csr_error_set (err, ENOMEM, "heal: out of memory");
  /* Line-based rules first (D->line is a line of CODE), imports last. */
  struct
  {
    const char *id;
    int which;
  } rules[] = { { "str-concat", 0 }, { "py2-print", 1 }, { "missing-import", 2 } };
  bool applied[3] = { false, false, false };
  for (size_t r = 0; r < 3; r++)
    {
      char *next = NULL;
      int rc = rules[r].which == 0   ? heal_str_concat (cur, d, &next)
               : rules[r].which == 1 ? heal_print (cur, d, v, &next)
                                     : heal_imports (cur, d, v, c, rootfs_dir, &next);
      if (rc < 0)
        return csr_error_set (err, ENOMEM, "heal: %s: out of memory", rules[r].id);
      if (next != NULL && strcmp (next, cur) != 0)
        {
          free (cur);
          cur = next;
          applied[r] = true;
        }
      else
        free (next);
    }
  if (strcmp (cur, code) == 0)
    return 0;
  struct sb ids = { 0 };
  static const size_t order[] = { 2, 0, 1 }; /* missing-import,str-concat,py2-print */
  for (size_t k = 0; k < 3; k++)
    if (applied[order[k]])
      {
        if (ids.len)
          pt_sb_str (&ids, ",");
        pt_sb_str (&ids, rules[order[k]].id);
      }
  out->rules = pt_sb_take (&ids);
  out->source = strdup ("local");
  out->diff = csr_unified_diff (code, cur, "snippet.py");
  out->code = steal_pointer (&cur);
  if (out->rules == NULL || out->source == NULL || out->diff == NULL)
    {
      csr_patch_release (out);
      return csr_error_set (err, ENOMEM, "heal: out of memory");
    }
  return 1;
}
