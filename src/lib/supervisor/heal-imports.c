/* csrun — the missing-import rule of the local healer: a NameError or the
 * gate's undefined names with a heal.conf entry whose conditions hold (and,
 * for a third-party module, that exists in the rootfs) get their import
 * line, after the docstring and any __future__ imports. */
#include "config.h"
#include "heal-internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/cleanup.h"

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
  if (rootfs == NULL || mod == NULL || !heal_valid_identifier (mod, strlen (mod)))
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
          heal_import_binds (t, s, e, bound_cb, b);
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
      || !heal_valid_identifier (p, (size_t)(q - p)))
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
int
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
