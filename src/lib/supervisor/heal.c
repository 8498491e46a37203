/* csrun — local healing: fixes that are certain, no network.
 *
 * The rules work on a small Python tokenizer (names, numbers, strings,
 * operators with matched brackets, logical lines), never on raw text, so a
 * '+' or a "print" inside a string literal is never touched.
 *
 * This file is the dispatcher: the rules are one family a file
 * (heal-imports.c, heal-concat.c, heal-py2.c), heal.conf is heal-conf.c's. */
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
