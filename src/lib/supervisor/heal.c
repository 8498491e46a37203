/* csrun — local healing: fixes that are certain, no network.
 *
 * The rules work on a small Python tokenizer (names, numbers, strings,
 * operators with matched brackets, logical lines), never on raw text, so a
 * '+' or a "print" inside a string literal is never touched.
 *
 * This file is the dispatcher: the rules are one family a file
 * (heal-imports.c, heal-concat.c, heal-py2.c, heal-py2-idioms.c,
 * heal-methods.c, heal-suggest.c, heal-paste.c, heal-submodule.c; shared
 * name helpers in heal-names.c), heal.conf is heal-conf.c's. */
#include "config.h"
#include "heal-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"

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
  free (p->model_used);
  memset (p, 0, sizeof *p);
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
  /* Pasted code first, alone (the diagnosis is about the wrapping: the
   * next attempt's gate sees the code itself); then the line-based rules
   * (D->line is a line of CODE; no rule before them adds or removes a
   * line), the renames, and the rules that insert imports last. */
  enum
  {
    PASTE,
    CONCAT,
    METHOD,
    CALL,
    PY2,
    PRINT,
    SUGGEST,
    SUBMODULE,
    IMPORTS,
    N_RULES
  };
  static const char *const ids_of[N_RULES] = {
    [PASTE] = "pasted-code",      [CONCAT] = "str-concat",
    [METHOD] = "foreign-method",  [CALL] = "foreign-call",
    [PY2] = "py2-idioms",         [PRINT] = "py2-print",
    [SUGGEST] = "did-you-mean",   [SUBMODULE] = "submodule-import",
    [IMPORTS] = "missing-import",
  };
  bool applied[N_RULES] = { false };
  char **more_names = NULL; /* modules foreign-call needs imported */
  size_t n_more = 0;
  for (int r = 0; r < N_RULES; r++)
    {
      char *next = NULL;
      int rc;
      switch (r)
        {
        case PASTE:
          rc = heal_paste (cur, d, v, &next);
          break;
        case CONCAT:
          rc = heal_str_concat (cur, d, &next);
          break;
        case METHOD:
          rc = heal_methods (cur, d, c, &next);
          break;
        case CALL:
          rc = heal_foreign_calls (cur, d, v, c, &next, &more_names, &n_more);
          break;
        case PY2:
          rc = heal_py2_idioms (cur, d, v, c, false, &next);
          break;
        case PRINT:
          rc = heal_print (cur, d, v, applied[PY2], &next);
          /* print statements: the rest of the snippet is Python 2 too */
          if (rc == 0 && next != NULL && !applied[PY2])
            {
              char *more = NULL;
              rc = heal_py2_idioms (next, d, v, c, true, &more);
              if (more != NULL)
                {
                  free (next);
                  next = more;
                  applied[PY2] = true;
                }
            }
          break;
        case SUGGEST:
          rc = heal_suggest (cur, d, v, &next);
          break;
        case SUBMODULE:
          rc = heal_submodule (cur, d, c, &next);
          break;
        default:
          if (n_more > 0)
            {
              /* the modules foreign-call's replacements use, as undefined
               * names the gate would have reported */
              size_t n = (v ? v->n_undefined : 0) + n_more;
              struct csr_undefined_name *u = calloc (n, sizeof *u);
              if (u == NULL)
                {
                  rc = -1;
                  break;
                }
              for (size_t k = 0; v && k < v->n_undefined; k++)
                u[k] = v->undefined[k];
              for (size_t k = 0; k < n_more; k++)
                u[n - n_more + k]
                    = (struct csr_undefined_name){ more_names[k], 0, (char *)"attribute", NULL };
              struct csr_gate_verdict w = { .outcome = CSR_GATE_BLOCKED };
              w.undefined = u;
              w.n_undefined = n;
              rc = heal_imports (cur, d, &w, c, rootfs_dir, &next);
              free (u);
            }
          else
            rc = heal_imports (cur, d, v, c, rootfs_dir, &next);
          break;
        }
      if (rc < 0)
        {
          for (size_t k = 0; k < n_more; k++)
            free (more_names[k]);
          free (more_names);
          return csr_error_set (err, ENOMEM, "heal: %s: out of memory", ids_of[r]);
        }
      if (next != NULL && strcmp (next, cur) != 0)
        {
          free (cur);
          cur = next;
          applied[r] = true;
          if (r == PASTE)
            break;
        }
      else
        free (next);
    }
  for (size_t k = 0; k < n_more; k++)
    free (more_names[k]);
  free (more_names);
  if (strcmp (cur, code) == 0)
    return 0;
  struct sb ids = { 0 };
  /* missing-import first (the order the rules were listed in before). */
  if (applied[IMPORTS])
    pt_sb_str (&ids, ids_of[IMPORTS]);
  for (int r = 0; r < IMPORTS; r++)
    if (applied[r])
      {
        if (ids.len)
          pt_sb_str (&ids, ",");
        pt_sb_str (&ids, ids_of[r]);
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
