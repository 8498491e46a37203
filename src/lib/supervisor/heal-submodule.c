/* csrun — the submodule-import rule of the local healer: `import xml` does
 * not import xml.etree.  On "module 'A' has no attribute 'B'", every use
 * A.B... in the snippet whose A is bound by a top-level `import A` gets
 * `import A.B...` for the longest submodule: entry of policies/heal.conf
 * that prefixes it, inserted after that `import A` line (each once). */
#include "config.h"
#include "heal-internal.h"

#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"

/* The dotted name of tokens I, I+2, ... (NAME . NAME ...) as far as it goes. */
static size_t
dotted_end (const struct toks *t, size_t i)
{
  while (pt_tok_eq (t, i + 1, ".") && t->v[i + 2].kind == TK_NAME)
    i += 2;
  return i;
}

/* Is `import DOTTED` (exactly, no alias) a top-level statement of T?  Its
 * NEWLINE token in *NL. */
static bool
imported (const struct toks *t, const char *dotted, size_t len, size_t *nl)
{
  for (size_t i = 0; i < t->n; i++)
    {
      if (!t->v[i].bol)
        continue;
      size_t end = pt_logical_end (t, i);
      if (pt_tok_eq (t, i, "import")
          && (i == 0 || t->v[i].start == 0 || t->src[t->v[i].start - 1] == '\n'))
        for (size_t j = i + 1; j < end; j++)
          {
            if (t->v[j].kind != TK_NAME || (j > i + 1 && !pt_tok_eq (t, j - 1, ",")))
              continue;
            size_t e = dotted_end (t, j);
            if (t->v[e].end - t->v[j].start == len
                && memcmp (t->src + t->v[j].start, dotted, len) == 0 && !pt_tok_eq (t, e + 1, "as"))
              {
                *nl = end;
                return true;
              }
            j = e;
          }
      i = end;
    }
  return false;
}

int
heal_submodule (const char *code, const struct csr_diagnosis *d, const struct csr_heal_conf *c,
                char **out)
{
  *out = NULL;
  if (!d || !d->error_type || !d->message || strcmp (d->error_type, "AttributeError") != 0
      || strncmp (d->message, "module '", 8) != 0)
    return 0;
  struct toks t;
  if (pt_tokenize (code, strlen (code), &t) < 0)
    return -1;
  struct edits ed = { 0 };
  int rc = 0;
  const char *added[32];
  size_t n_added = 0;
  for (size_t i = 0; i < t.n && rc == 0 && n_added < 32; i++)
    {
      if (t.v[i].kind != TK_NAME || (i > 0 && pt_tok_eq (&t, i - 1, "."))
          || (i > 0 && pt_tok_in (&t, i - 1, (const char *const[]){ "import", ",", NULL })))
        continue;
      size_t e = dotted_end (&t, i);
      if (e == i)
        continue;
      /* The longest submodule entry that prefixes the use. */
      const char *best = NULL;
      size_t best_len = 0;
      for (size_t k = 0; c && k < c->n_maps; k++)
        {
          const struct csr_heal_map *m = &c->maps[k];
          size_t ml = strlen (m->a);
          if (m->kind != CSR_MAP_SUBMODULE || ml <= best_len)
            continue;
          for (size_t j = i + 2; j <= e; j += 2)
            if (t.v[j].end - t.v[i].start == ml && memcmp (code + t.v[i].start, m->a, ml) == 0)
              {
                best = m->a;
                best_len = ml;
              }
        }
      size_t nl = 0, dummy = 0;
      bool dup = false;
      for (size_t k = 0; best && k < n_added; k++)
        dup |= strcmp (added[k], best) == 0;
      if (best == NULL || dup || imported (&t, best, best_len, &dummy)
          || !imported (&t, code + t.v[i].start, t.v[i].end - t.v[i].start, &nl))
        {
          i = e;
          continue;
        }
      added[n_added++] = best;
      struct sb b = { 0 };
      pt_sb_str (&b, "import ");
      pt_sb_str (&b, best);
      pt_sb_str (&b, "\n");
      size_t at = t.v[nl].end;
      bool eof = t.v[nl].start == t.len;
      if (eof)
        {
          struct sb c2 = { 0 };
          pt_sb_str (&c2, "\n");
          pt_sb_add (&c2, b.s ? b.s : "", b.len);
          free (b.s);
          b = c2;
        }
      rc = b.oom ? -1 : pt_edit_add (&ed, at, at, b.s, b.len);
      free (b.s);
      i = e;
    }
  if (rc == 0 && ed.n > 0 && (*out = pt_apply_edits (code, strlen (code), &ed)) == NULL)
    rc = -1;
  pt_edits_release (&ed);
  pt_toks_release (&t);
  return rc;
}
