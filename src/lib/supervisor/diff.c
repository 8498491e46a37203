/* csrun — unified diff of two texts (Myers' O(ND) algorithm in linear space,
 * with a work budget: past it, the diff replaces the whole file). */
#include "config.h"
#include "heal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"

#define CONTEXT 3

struct line
{
  const char *s;
  size_t len; /* including the '\n' when there is one */
};

/* Split TEXT into lines; the last one may lack its newline. */
static struct line *
split_lines (const char *text, size_t *n)
{
  size_t count = 0, cap = 16;
  struct line *v = malloc (cap * sizeof *v);
  if (v == NULL)
    return NULL;
  const char *p = text;
  while (*p)
    {
      const char *nl = strchr (p, '\n');
      size_t len = nl ? (size_t)(nl - p) + 1 : strlen (p);
      if (count == cap)
        {
          cap *= 2;
          struct line *nv = realloc (v, cap * sizeof *v);
          if (nv == NULL)
            {
              free (v);
              return NULL;
            }
          v = nv;
        }
      v[count].s = p;
      v[count].len = len;
      count++;
      p += len;
    }
  *n = count;
  return v;
}

/* ------------------------------------------------------------ line ids */

static uint64_t
hash_line (const struct line *l)
{
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (size_t i = 0; i < l->len; i++)
    {
      h ^= (unsigned char)l->s[i];
      h *= 1099511628211ULL;
    }
  return h;
}

/* Give every distinct line of A and B a small integer, so that the diff
 * compares integers. */
static int
intern_lines (const struct line *a, size_t na, const struct line *b, size_t nb, int *ia, int *ib)
{
  size_t total = na + nb, cap = 16;
  while (cap < total * 2)
    cap *= 2;
  struct slot
  {
    const struct line *l;
    uint64_t h;
    int id;
  } *tab = calloc (cap, sizeof *tab);
  if (tab == NULL)
    return -1;
  int next = 0;
  for (size_t k = 0; k < total; k++)
    {
      const struct line *l = k < na ? &a[k] : &b[k - na];
      uint64_t h = hash_line (l);
      size_t i = (size_t)h & (cap - 1);
      while (
          tab[i].l != NULL
          && !(tab[i].h == h && tab[i].l->len == l->len && memcmp (tab[i].l->s, l->s, l->len) == 0))
        i = (i + 1) & (cap - 1);
      if (tab[i].l == NULL)
        {
          tab[i].l = l;
          tab[i].h = h;
          tab[i].id = next++;
        }
      if (k < na)
        ia[k] = tab[i].id;
      else
        ib[k - na] = tab[i].id;
    }
  free (tab);
  return 0;
}

/* ----------------------------------------------------------- the diff */

struct differ
{
  const int *a, *b;
  bool *del; /* del[i]: line i of A is deleted */
  bool *ins; /* ins[j]: line j of B is inserted */
  long *vf, *vb;
  long voff;       /* index of diagonal 0 in vf/vb */
  uint64_t work;   /* diagonals visited + snake steps taken, over all middle snakes */
  uint64_t budget; /* past it (or past CSR_DIFF_MAX_D in one snake): give up */
  bool gave_up;
};

/* Find the middle snake of A[a0,a1) x B[b0,b1): the forward snake
 * (x,y)->(u,v) in absolute coordinates.  Returns false if none found (can't
 * happen for non-trivial input, but the caller copes), and false with
 * df->gave_up set when the budget ran out or D passed CSR_DIFF_MAX_D (Myers
 * costs O((N+M) D): without a bound, a 300,000-line reply against a short
 * snippet takes minutes). */
static bool
middle_snake (struct differ *df, long a0, long a1, long b0, long b1, long *px, long *py, long *pu,
              long *pv)
{
  const int *a = df->a, *b = df->b;
  long n = a1 - a0, m = b1 - b0, delta = n - m;
  bool odd = (delta & 1) != 0;
  long dmax = (n + m + 1) / 2;
  if (dmax > CSR_DIFF_MAX_D / 2)
    dmax = CSR_DIFF_MAX_D / 2;
  long *vf = df->vf + df->voff, *vb = df->vb + df->voff;
  vf[1] = 0;
  vb[1] = 0;
  for (long d = 0; d <= dmax; d++)
    {
      df->work += 2 * (uint64_t)d + 2;
      if (df->work > df->budget)
        break;
      for (long k = -d; k <= d; k += 2)
        {
          long x = (k == -d || (k != d && vf[k - 1] < vf[k + 1])) ? vf[k + 1] : vf[k - 1] + 1;
          long y = x - k, x0 = x, y0 = y;
          while (x < n && y < m && a[a0 + x] == b[b0 + y])
            x++, y++;
          df->work += (uint64_t)(x - x0);
          vf[k] = x;
          long c = delta - k;
          if (odd && c >= -(d - 1) && c <= d - 1 && vf[k] + vb[c] >= n)
            {
              *px = a0 + x0, *py = b0 + y0, *pu = a0 + x, *pv = b0 + y;
              return true;
            }
        }
      for (long c = -d; c <= d; c += 2)
        {
          long x = (c == -d || (c != d && vb[c - 1] < vb[c + 1])) ? vb[c + 1] : vb[c - 1] + 1;
          long y = x - c, x0 = x, y0 = y;
          while (x < n && y < m && a[a1 - 1 - x] == b[b1 - 1 - y])
            x++, y++;
          df->work += (uint64_t)(x - x0);
          vb[c] = x;
          long k = delta - c;
          if (!odd && k >= -d && k <= d && vf[k] + vb[c] >= n)
            {
              *px = a1 - x, *py = b1 - y, *pu = a1 - x0, *pv = b1 - y0;
              return true;
            }
        }
    }
  df->gave_up = true; /* a path of at most 2 * dmax edits always exists: only the bound ends here */
  return false;
}

static void
diff_range (struct differ *df, long a0, long a1, long b0, long b1)
{
  if (df->gave_up)
    return; /* the caller replaces everything */
  /* Common prefix and suffix. */
  while (a0 < a1 && b0 < b1 && df->a[a0] == df->b[b0])
    a0++, b0++;
  while (a0 < a1 && b0 < b1 && df->a[a1 - 1] == df->b[b1 - 1])
    a1--, b1--;
  if (a0 == a1 || b0 == b1)
    {
      for (long i = a0; i < a1; i++)
        df->del[i] = true;
      for (long j = b0; j < b1; j++)
        df->ins[j] = true;
      return;
    }
  long x, y, u, v;
  bool found = middle_snake (df, a0, a1, b0, b1, &x, &y, &u, &v);
  if (df->gave_up)
    return;
  /* Both halves must be strictly smaller, or the recursion would not end. */
  if (!found || (x == a0 && y == b0 && u == a1 && v == b1) || (x == a1 && y == b1)
      || (u == a0 && v == b0))
    {
      for (long i = a0; i < a1; i++)
        df->del[i] = true;
      for (long j = b0; j < b1; j++)
        df->ins[j] = true;
      return;
    }
  diff_range (df, a0, x, b0, y);
  diff_range (df, u, a1, v, b1);
}

/* ------------------------------------------------------------- output */

struct out
{
  char *s;
  size_t len, cap;
  bool oom;
};

static void
out_add (struct out *o, const char *s, size_t len)
{
  if (o->oom)
    return;
  if (csr_buf_reserve (&o->s, &o->cap, o->len + len + 1, 256) < 0)
    {
      o->oom = true;
      return;
    }
  memcpy (o->s + o->len, s, len);
  o->len += len;
  o->s[o->len] = '\0';
}

static void
out_str (struct out *o, const char *s)
{
  out_add (o, s, strlen (s));
}

static void
out_line (struct out *o, char tag, const struct line *l)
{
  out_add (o, &tag, 1);
  out_add (o, l->s, l->len);
  if (l->len == 0 || l->s[l->len - 1] != '\n')
    out_str (o, "\n\\ No newline at end of file\n");
}

/* "start,count", or "start" when count is 1; an empty range names the line
 * before it. */
static void
out_range (struct out *o, size_t start, size_t count)
{
  char buf[64];
  if (count == 1)
    snprintf (buf, sizeof buf, "%zu", start + 1);
  else
    snprintf (buf, sizeof buf, "%zu,%zu", count == 0 ? start : start + 1, count);
  out_str (o, buf);
}

enum op_kind
{
  OP_EQ,
  OP_DEL,
  OP_INS,
};

struct op
{
  enum op_kind kind;
  size_t ai, bi; /* line in A (EQ, DEL) and in B (EQ, INS); else the position */
};

static void
emit_hunks (struct out *o, const struct op *ops, size_t nops, const struct line *la,
            const struct line *lb)
{
  size_t i = 0;
  while (i < nops)
    {
      while (i < nops && ops[i].kind == OP_EQ)
        i++;
      if (i == nops)
        break;
      size_t first = i, last = i;
      /* Extend over changes separated by at most 2 * CONTEXT equal lines. */
      for (size_t j = i + 1; j < nops; j++)
        {
          if (ops[j].kind == OP_EQ)
            continue;
          if (j - last - 1 > 2 * CONTEXT)
            break;
          last = j;
        }
      size_t start = first >= CONTEXT ? first - CONTEXT : 0;
      size_t end = last + 1 + CONTEXT <= nops ? last + 1 + CONTEXT : nops;
      for (size_t j = start; j < first; j++)
        if (ops[j].kind != OP_EQ) /* can't happen: FIRST is the first change */
          start = j + 1;
      size_t na = 0, nb = 0;
      for (size_t j = start; j < end; j++)
        {
          if (ops[j].kind != OP_INS)
            na++;
          if (ops[j].kind != OP_DEL)
            nb++;
        }
      out_str (o, "@@ -");
      out_range (o, ops[start].ai, na);
      out_str (o, " +");
      out_range (o, ops[start].bi, nb);
      out_str (o, " @@\n");
      for (size_t j = start; j < end; j++)
        switch (ops[j].kind)
          {
          case OP_EQ:
            out_line (o, ' ', &la[ops[j].ai]);
            break;
          case OP_DEL:
            out_line (o, '-', &la[ops[j].ai]);
            break;
          case OP_INS:
            out_line (o, '+', &lb[ops[j].bi]);
            break;
          }
      i = end;
    }
}

char *
csr_unified_diff (const char *a, const char *b, const char *name)
{
  return csr_unified_diff_ex (a, b, name, CSR_DIFF_BUDGET, NULL);
}

char *
csr_unified_diff_ex (const char *a, const char *b, const char *name, uint64_t budget,
                     struct csr_diff_stats *stats)
{
  if (stats)
    *stats = (struct csr_diff_stats){ 0, false };
  if (a == NULL)
    a = "";
  if (b == NULL)
    b = "";
  if (name == NULL)
    name = "snippet.py";
  if (strcmp (a, b) == 0)
    return strdup ("");

  char *result = NULL;
  size_t na = 0, nb = 0;
  struct line *la = split_lines (a, &na);
  struct line *lb = split_lines (b, &nb);
  int *ia = malloc ((na + 1) * sizeof *ia);
  int *ib = malloc ((nb + 1) * sizeof *ib);
  bool *del = calloc (na + 1, sizeof *del);
  bool *ins = calloc (nb + 1, sizeof *ins);
  size_t vsize = 2 * (na + nb) + 5;
  long *vf = malloc (vsize * sizeof *vf);
  long *vb = malloc (vsize * sizeof *vb);
  struct op *ops = malloc ((na + nb + 1) * sizeof *ops);
  struct out o = { 0 };
  if (la == NULL || lb == NULL || ia == NULL || ib == NULL || del == NULL || ins == NULL
      || vf == NULL || vb == NULL || ops == NULL || intern_lines (la, na, lb, nb, ia, ib) < 0)
    goto out;

  struct differ df = { .a = ia,
                       .b = ib,
                       .del = del,
                       .ins = ins,
                       .vf = vf,
                       .vb = vb,
                       .voff = (long)(na + nb) + 2,
                       .budget = budget };
  diff_range (&df, 0, (long)na, 0, (long)nb);
  if (df.gave_up)
    {
      /* Too different to diff within the budget: one hunk that replaces
       * every line of A by every line of B. */
      for (size_t k = 0; k < na; k++)
        del[k] = true;
      for (size_t k = 0; k < nb; k++)
        ins[k] = true;
    }
  if (stats)
    *stats = (struct csr_diff_stats){ df.work, df.gave_up };

  /* The edit script, deletions before insertions within a change. */
  size_t nops = 0, i = 0, j = 0;
  while (i < na || j < nb)
    {
      if (i < na && del[i])
        ops[nops++] = (struct op){ OP_DEL, i++, j };
      else if (j < nb && ins[j])
        ops[nops++] = (struct op){ OP_INS, i, j++ };
      else if (i < na && j < nb)
        ops[nops++] = (struct op){ OP_EQ, i++, j++ };
      else /* unbalanced script: can't happen */
        goto out;
    }

  out_str (&o, "--- a/");
  out_str (&o, name);
  out_str (&o, "\n+++ b/");
  out_str (&o, name);
  out_str (&o, "\n");
  emit_hunks (&o, ops, nops, la, lb);
  if (!o.oom)
    {
      result = o.s;
      o.s = NULL;
    }

out:
  free (o.s);
  free (ops);
  free (vb);
  free (vf);
  free (ins);
  free (del);
  free (ib);
  free (ia);
  free (lb);
  free (la);
  return result;
}
