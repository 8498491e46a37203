/* csrun — the did-you-mean rule of the local healer.  Three sources, one
 * fix (rename every use of the misspelt name):
 *   - the gate's suggestions (undefined_names[].suggest): a global name that
 *     is never bound, one edit from exactly one defined name or builtin that
 *     is visible at every use (policies/gate.py, _suggest) -- found before
 *     anything runs, so the fix costs no attempt;
 *   - CPython's "NameError: name 'N' is not defined. Did you mean: 'S'?",
 *     when the gate says N is bound nowhere in the snippet (so every use of
 *     N is the same slip), N has 4 characters or more, and no other name of
 *     the snippet is as close;
 *   - "AttributeError: ... has no attribute 'N'. Did you mean: 'S'?" when N
 *     appears only as .N loads, and "ImportError: cannot import name 'N'
 *     from 'M' ... Did you mean: 'S'?" (CPython 3.12+).
 * An ambiguous suggestion (another name of the snippet at the same
 * distance or closer) is never applied. */
#include "config.h"
#include "heal-internal.h"

#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"

static bool
never_bound (const struct csr_gate_verdict *v, const char *name)
{
  for (size_t i = 0; v && i < v->n_undefined; i++)
    if (v->undefined[i].name && strcmp (v->undefined[i].name, name) == 0)
      return true;
  return false;
}

/* Is CHOSEN the one closest name to NAME among the snippet's names?  1 yes,
 * 0 no, -1 ENOMEM. */
static int
unique_choice (const char *code, const char *name, const char *chosen, bool builtins)
{
  size_t dist = heal_edit_distance (name, strlen (name), chosen, strlen (chosen));
  if (dist == SIZE_MAX || dist == 0 || dist > 3)
    return 0;
  int r = heal_has_rival (code, name, chosen, dist, builtins);
  return r < 0 ? -1 : !r;
}

/* 1 when TO is a name of CODE (not after '.'), or every use of NAME is a
 * call; 0 when not; -1 on ENOMEM. */
static int
only_called_or_defined (const char *code, const char *name, const char *to)
{
  if (strcmp (to, "True") == 0 || strcmp (to, "False") == 0 || strcmp (to, "None") == 0)
    return 1; /* true -> True: a constant, not a function used as a value */
  struct heal_uses u;
  if (heal_find_uses (code, to, strlen (to), &u) < 0)
    return -1;
  bool defined = false;
  for (size_t i = 0; i < u.n; i++)
    defined |= !u.v[i].attribute;
  heal_uses_release (&u);
  if (defined)
    return 1;
  if (heal_find_uses (code, name, strlen (name), &u) < 0)
    return -1;
  bool called = true;
  for (size_t i = 0; i < u.n; i++)
    if (!u.v[i].attribute && !u.v[i].called)
      called = false;
  heal_uses_release (&u);
  return called;
}

static bool
is_type (const struct csr_diagnosis *d, const char *type)
{
  return d && d->error_type && d->message && strcmp (d->error_type, type) == 0;
}

int
heal_suggest (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
              char **out)
{
  *out = NULL;
  struct edits ed = { 0 };
  int rc = 0;
  /* The gate's suggestions: every one in this patch. */
  for (size_t i = 0; v && i < v->n_undefined && rc >= 0; i++)
    {
      const struct csr_undefined_name *u = &v->undefined[i];
      bool dup = false;
      for (size_t j = 0; j < i; j++)
        dup |= v->undefined[j].name && u->name && strcmp (v->undefined[j].name, u->name) == 0;
      if (u->name && u->suggest && !dup)
        rc = heal_rename_uses (code, u->name, u->suggest, HEAL_RENAME_PLAIN, &ed);
    }
  /* Python's own suggestion for the failure. */
  const char *msg = d ? d->message : NULL;
  cleanup_free char *to = heal_quoted_after (msg, "Did you mean: ");
  cleanup_free char *name = NULL;
  enum heal_rename w = HEAL_RENAME_PLAIN;
  if (rc >= 0 && to != NULL)
    {
      if (is_type (d, "NameError"))
        {
          name = heal_quoted_after (msg, "name ");
          /* under 4 characters: too many names are one edit apart (as in the gate) */
          if (name && (!never_bound (v, name) || strlen (name) < 4))
            {
              free (name);
              name = NULL;
            }
          for (size_t i = 0; name && v && i < v->n_undefined; i++)
            if (v->undefined[i].suggest && strcmp (v->undefined[i].name, name) == 0)
              {
                free (name); /* done above */
                name = NULL;
              }
        }
      else if (is_type (d, "AttributeError"))
        {
          name = heal_quoted_after (msg, "has no attribute ");
          w = HEAL_RENAME_ATTRIBUTE;
        }
      else if (is_type (d, "ImportError"))
        {
          name = heal_quoted_after (msg, "cannot import name ");
          w = HEAL_RENAME_IMPORTED;
        }
      /* A builtin (not a name of the snippet) for a name used as a value:
       * `sums` is no slip for the function sum (as in the gate). */
      if (name && w == HEAL_RENAME_PLAIN)
        {
          int c = only_called_or_defined (code, name, to);
          if (c < 0)
            rc = -1;
          if (c <= 0)
            {
              free (name);
              name = NULL;
            }
        }
      if (name && heal_valid_identifier (name, strlen (name)))
        {
          /* a builtin rivals a global name, not an attribute */
          int u = unique_choice (code, name, to, w == HEAL_RENAME_PLAIN);
          rc = u <= 0 ? u : heal_rename_uses (code, name, to, w, &ed);
        }
    }
  if (rc >= 0 && ed.n > 0)
    {
      *out = pt_apply_edits (code, strlen (code), &ed);
      if (*out == NULL)
        rc = -1;
    }
  pt_edits_release (&ed);
  return rc < 0 ? -1 : 0;
}
