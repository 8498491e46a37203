#include "config.h"

#include "classify.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"

/* How CPython (3.11+) prints an uncaught exception, as far as the parser
 * cares:
 *
 *   Traceback (most recent call last):                     header
 *     File "snippet.py", line 4, in <module>               frame (indent 2)
 *       total += math.sqrt(v)                              source (indent 4)
 *                ^^^^                                      carets (indent 4+)
 *     [Previous line repeated 996 more times]              (indent 2)
 *   NameError: name 'math' is not defined                  exception line
 *   more message lines, notes                              continuation
 *
 *   During handling of the above exception, ...:           chain marker
 *   (or: The above exception was the direct cause ...:)    (then the next one)
 *
 * A SyntaxError raised while compiling the snippet has no header: just the
 * "  File "snippet.py", line 3" line, source, caret, and the exception line.
 *
 * Exception groups prefix every line with a margin: the group's own report
 * at depth 1 is "  + Exception Group Traceback ..." then "  | " lines; its
 * sub-exceptions open with "  +-+---- 1 ----", their lines have the margin
 * "    | ", the next ones start at "    +---- 2 ----", the list ends with
 * "    +--------"; a nested group goes one level (two columns) deeper.
 * "    +---- ... ----" / "    | and 3 more exceptions" stands for sub-
 * exceptions that were not printed.
 *
 * csrun's output bounding may cut the text anywhere and put a line
 * "[... csrun: N bytes dropped ...]" in between; the parser drops that line
 * and the two partial lines around it, and carries on (the tail, with the
 * final exception line, is kept). */

/* Only the last part of a huge stderr is parsed (the last report is what
 * counts, and a traceback is rarely more than a few kilobytes). */
#define CLASSIFY_WINDOW (1024 * 1024)
/* Caps on what goes into the diagnosis. */
#define MESSAGE_MAX 4096
#define TYPE_MAX 256
#define CONTEXT_LINE_MAX 500
/* Exception groups nest at most 10 deep in CPython's output. */
#define GROUP_DEPTH_MAX 16

#define HEADER "Traceback (most recent call last):"
#define GROUP_HEADER "Exception Group Traceback (most recent call last):"
#define CHAIN_CONTEXT "During handling of the above exception, another exception occurred:"
#define CHAIN_CAUSE "The above exception was the direct cause of the following exception:"

struct slice
{
  const char *p;
  size_t len;
};

/* One exception report, or the summary of a group. */
struct exc
{
  char *type; /* NULL until the exception line was seen */
  char *msg;
  size_t msg_len;
  int line;      /* innermost snippet.py frame, 0 if none */
  size_t leaves; /* exceptions it stands for: 1, or a group's leaf count */
};

static void
exc_clear (struct exc *e)
{
  free (e->type);
  free (e->msg);
  memset (e, 0, sizeof *e);
}

static void
exc_move (struct exc *dst, struct exc *src)
{
  exc_clear (dst);
  *dst = *src;
  memset (src, 0, sizeof *src);
}

/* ------------------------------------------------------------ line helpers */

static size_t
leading_spaces (struct slice l)
{
  size_t s = 0;
  while (s < l.len && l.p[s] == ' ')
    s++;
  return s;
}

static bool
is_space (char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static struct slice
trim (struct slice l)
{
  while (l.len > 0 && is_space (*l.p))
    l.p++, l.len--;
  while (l.len > 0 && is_space (l.p[l.len - 1]))
    l.len--;
  return l;
}

static bool
is_blank (struct slice l)
{
  return trim (l).len == 0;
}

static bool
starts_with (struct slice l, const char *prefix)
{
  size_t n = strlen (prefix);
  return l.len >= n && memcmp (l.p, prefix, n) == 0;
}

/* L, without trailing blanks, is exactly S. */
static bool
is_exactly (struct slice l, const char *s)
{
  while (l.len > 0 && is_space (l.p[l.len - 1]))
    l.len--;
  size_t n = strlen (s);
  return l.len == n && memcmp (l.p, s, n) == 0;
}

static bool
is_header (struct slice l)
{
  return is_exactly (l, HEADER) || is_exactly (l, GROUP_HEADER);
}

static bool
is_chain_marker (struct slice l)
{
  return is_exactly (l, CHAIN_CONTEXT) || is_exactly (l, CHAIN_CAUSE);
}

/* "[... csrun: 123 bytes dropped ...]" */
static bool
is_csrun_marker (struct slice l)
{
  static const char pre[] = "[... csrun: ", post[] = " bytes dropped ...]";
  l = trim (l);
  size_t np = sizeof pre - 1, nq = sizeof post - 1;
  if (l.len <= np + nq || memcmp (l.p, pre, np) != 0 || memcmp (l.p + l.len - nq, post, nq) != 0)
    return false;
  for (size_t i = np; i < l.len - nq; i++)
    if (l.p[i] < '0' || l.p[i] > '9')
      return false;
  return true;
}

/* '  File "NAME", line N' (optionally ", in FUNC"), indented by exactly two
 * spaces.  Sets *snippet when NAME is the snippet ("snippet.py", or a path
 * ending in "/snippet.py" when run by hand) and *line to N (0 if absurd). */
static bool
parse_frame (struct slice l, bool *snippet, int *line)
{
  static const char pre[] = "  File \"", mid[] = "\", line ";
  size_t np = sizeof pre - 1, nm = sizeof mid - 1;
  if (!starts_with (l, pre))
    return false;
  const char *name = l.p + np;
  size_t rest = l.len - np;
  const char *m = memmem (name, rest, mid, nm);
  if (m == NULL)
    return false;
  size_t name_len = (size_t)(m - name);
  const char *d = m + nm, *end = l.p + l.len;
  if (d >= end || *d < '0' || *d > '9')
    return false;
  long n = 0;
  while (d < end && *d >= '0' && *d <= '9')
    {
      if (n <= INT_MAX)
        n = n * 10 + (*d - '0');
      d++;
    }
  static const char base[] = "snippet.py";
  size_t nb = sizeof base - 1;
  *snippet = (name_len == nb && memcmp (name, base, nb) == 0)
             || (name_len > nb && memcmp (name + name_len - nb - 1, "/snippet.py", nb + 1) == 0);
  *line = n > 0 && n <= INT_MAX ? (int)n : 0;
  return true;
}

static bool
is_type_char (unsigned char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
         || c == '.' || c >= 0x80;
}

/* "Type: message", "Type:" or "Type" at column 0, where Type is a dotted
 * name ("json.decoder.JSONDecodeError"; non-ASCII identifiers allowed).
 * *type_len is the name's length, *msg the rest (after ": "). */
static bool
parse_exception_line (struct slice l, size_t *type_len, struct slice *msg)
{
  size_t i = 0;
  while (i < l.len && is_type_char ((unsigned char)l.p[i]))
    i++;
  if (i == 0 || i > TYPE_MAX || (l.p[0] >= '0' && l.p[0] <= '9') || l.p[0] == '.'
      || l.p[i - 1] == '.' || memmem (l.p, i, "..", 2) != NULL)
    return false;
  struct slice rest = { l.p + i, l.len - i };
  if (trim (rest).len == 0)
    {
      *msg = (struct slice){ rest.p, 0 };
      *type_len = i;
      return true;
    }
  if (rest.p[0] != ':')
    return false;
  rest.p++, rest.len--;
  if (rest.len > 0 && rest.p[0] == ' ')
    rest.p++, rest.len--;
  while (rest.len > 0 && is_space (rest.p[rest.len - 1]))
    rest.len--;
  *msg = rest;
  *type_len = i;
  return true;
}

/* Append "\n" (unless FIRST) and L to E->msg, up to MESSAGE_MAX bytes. */
static void
msg_append (struct exc *e, struct slice l, bool first)
{
  if (e->msg && e->msg_len >= MESSAGE_MAX)
    return;
  size_t room = MESSAGE_MAX - e->msg_len;
  size_t add = (first ? 0 : 1) + l.len;
  if (add > room)
    add = room;
  char *m = realloc (e->msg, e->msg_len + add + 1);
  if (m == NULL)
    return;
  e->msg = m;
  if (add > 0)
    {
      size_t k = 0;
      if (!first)
        m[e->msg_len + k++] = '\n';
      memcpy (m + e->msg_len + k, l.p, add - k);
      e->msg_len += add;
    }
  m[e->msg_len] = '\0';
}

static void
msg_trim (struct exc *e)
{
  while (e->msg && e->msg_len > 0 && is_space (e->msg[e->msg_len - 1]))
    e->msg[--e->msg_len] = '\0';
}

/* ------------------------------------------------------------- the parser */

static void parse_lines (const struct slice *L, size_t n, int depth, struct exc *out);

/* Is L a line of an exception-group block: two or more spaces, then '|' or
 * '+'? */
static bool
is_group_line (struct slice l)
{
  size_t s = leading_spaces (l);
  return s >= 2 && s < l.len && (l.p[s] == '|' || l.p[s] == '+');
}

/* Does L, after its MARGIN spaces, start with PREFIX? */
static bool
at_margin (struct slice l, size_t margin, const char *prefix)
{
  return leading_spaces (l) == margin
         && starts_with ((struct slice){ l.p + margin, l.len - margin }, prefix);
}

/* The text of a content line "<MARGIN spaces>| text" (or "...|"). */
static struct slice
content_of (struct slice l, size_t margin)
{
  size_t k = margin + (l.len >= margin + 2 && l.p[margin + 1] == ' ' ? 2 : 1);
  return (struct slice){ l.p + k, l.len - k };
}

/* N in "| and N more exceptions" (0 if absent). */
static size_t
more_count (const struct slice *S, size_t ns)
{
  for (size_t q = 0; q < ns; q++)
    {
      const char *a = memmem (S[q].p, S[q].len, "and ", 4);
      if (a == NULL)
        continue;
      size_t k = 0;
      for (a += 4; a < S[q].p + S[q].len && *a >= '0' && *a <= '9' && k < ((size_t)1 << 40); a++)
        k = k * 10 + (size_t)(*a - '0');
      return k;
    }
  return 0;
}

static void parse_group (const struct slice *L, size_t n, int g, int depth, struct exc *out);

/* One sub-exception of a group at margin level G: S[0, NS), its lines at
 * the margin 2(G+1).  Returns how many leaf exceptions it stands for. */
static size_t
parse_sub (const struct slice *S, size_t ns, int g, int depth, struct exc *sub)
{
  size_t margin = 2 * (size_t)g + 2;
  for (size_t q = 0; q < ns; q++)
    if (at_margin (S[q], margin, "+-+"))
      {
        /* It has sub-exceptions of its own: a nested group. */
        parse_group (S, ns, g + 1, depth + 1, sub);
        return sub->leaves;
      }
  struct slice *content = calloc (ns + 1, sizeof *content);
  size_t nc = 0;
  for (size_t q = 0; content && q < ns; q++)
    if (at_margin (S[q], margin, "|"))
      content[nc++] = content_of (S[q], margin);
  parse_lines (content, nc, depth + 1, sub);
  free (content);
  return 1;
}

/* The lines L[0, N) of a group printed with the margin 2G ("  | " for G
 * 1); DEPTH counts the nesting, to bound the recursion on hostile input.
 *
 * The diagnosis of a group is its own type and message ("ExceptionGroup",
 * "bad input (2 sub-exceptions)") and the innermost snippet.py line of its
 * own traceback, else of the first sub-exception that has one.  A group
 * that stands for a single exception (asyncio.TaskGroup wraps a task's
 * failure this way) is unwrapped: that exception is the diagnosis. */
static void
parse_group (const struct slice *L, size_t n, int g, int depth, struct exc *out)
{
  size_t margin = 2 * (size_t)g;
  exc_clear (out);
  if (depth > GROUP_DEPTH_MAX)
    return;
  struct slice *own = calloc (n + 1, sizeof *own);
  if (own == NULL)
    return;

  /* The group's own report: "+ Exception Group Traceback", its "| " lines
     (deeper lines before the sub-exceptions belong to chained contexts). */
  size_t nown = 0, i = 0;
  for (; i < n && !at_margin (L[i], margin, "+-+"); i++)
    {
      if (at_margin (L[i], margin, "+ "))
        own[nown++] = content_of (L[i], margin);
      else if (at_margin (L[i], margin, "|"))
        own[nown++] = content_of (L[i], margin);
    }
  struct exc self = { 0 };
  parse_lines (own, nown, depth, &self);
  free (own);

  /* The sub-exceptions, after the "+-+---- 1 ----" line: each ends at a
     "+---- N ----" or the final "+--------" line of the next margin; a
     "+---- ... ----" one is followed by "and N more exceptions". */
  size_t sub_margin = margin + 2, leaves = 0, nsubs = 0;
  struct exc first = { 0 }; /* the first sub-exception */
  int first_line = 0;       /* the first sub-exception line found */
  bool more = false;        /* the current one is "and N more exceptions" */
  for (size_t start = i + 1, j = i + 1; i < n && j <= n; j++)
    {
      bool next_more = false;
      if (j < n)
        {
          if (at_margin (L[j], sub_margin, "+") && !at_margin (L[j], sub_margin, "+-+"))
            next_more = memmem (L[j].p, L[j].len, "...", 3) != NULL;
          else if (is_group_line (L[j]))
            continue;
        }
      if (j > start && more)
        {
          size_t k = more_count (L + start, j - start);
          leaves += k > 0 ? k : 1;
        }
      else if (j > start)
        {
          struct exc sub = { 0 };
          leaves += parse_sub (L + start, j - start, g, depth, &sub);
          if (first_line == 0)
            first_line = sub.line;
          if (nsubs++ == 0)
            exc_move (&first, &sub);
          exc_clear (&sub);
        }
      start = j + 1;
      more = next_more;
    }

  if (leaves == 1 && nsubs == 1 && first.type)
    {
      if (first.line == 0)
        first.line = self.line;
      exc_move (out, &first);
      out->leaves = 1;
    }
  else
    {
      exc_move (out, &self);
      if (out->line == 0)
        out->line = first_line;
      out->leaves = leaves > 0 ? leaves : 1;
    }
  exc_clear (&first);
  exc_clear (&self);
}

enum state
{
  ST_NONE,    /* between reports */
  ST_FRAMES,  /* after a header or a frame: frames, sources, carets */
  ST_MESSAGE, /* after the exception line: its continuation */
  ST_DONE     /* the report ended (blank line) */
};

/* Parse L[0, N) (whole lines, no newline) and leave the LAST exception
 * report in *OUT (OUT->type NULL when the last report has no exception
 * line).  DEPTH is the exception-group depth of these lines. */
static void
parse_lines (const struct slice *L, size_t n, int depth, struct exc *out)
{
  enum state st = ST_NONE;
  exc_clear (out);
  for (size_t i = 0; i < n; i++)
    {
      struct slice l = L[i];
      bool snippet;
      int line;

      if (is_header (l))
        {
          exc_clear (out);
          st = ST_FRAMES;
          continue;
        }
      if (is_chain_marker (l))
        {
          st = ST_NONE;
          continue;
        }
      if (leading_spaces (l) == 2 && starts_with (l, "  + ")
          && is_header ((struct slice){ l.p + 4, l.len - 4 }))
        {
          /* An exception group: its block is every following line with a
             "|" or "+" margin. */
          size_t j = i + 1;
          while (j < n && is_group_line (L[j]))
            j++;
          parse_group (L + i, j - i, 1, depth + 1, out);
          i = j - 1;
          st = ST_DONE;
          continue;
        }
      if (parse_frame (l, &snippet, &line))
        {
          if (st != ST_FRAMES)
            {
              /* A report without header (a SyntaxError of the snippet
                 itself), or frames after a cut. */
              exc_clear (out);
              st = ST_FRAMES;
            }
          if (snippet && line > 0)
            out->line = line;
          continue;
        }

      switch (st)
        {
        case ST_FRAMES:
          {
            size_t type_len;
            struct slice msg;
            if (l.len == 0 || is_space (l.p[0]) || !parse_exception_line (l, &type_len, &msg))
              break; /* source lines, carets, "[Previous line repeated]" */
            out->type = strndup (l.p, type_len);
            msg_append (out, msg, true);
            out->leaves = 1;
            st = ST_MESSAGE;
            break;
          }
        case ST_MESSAGE:
          if (is_blank (l))
            st = ST_DONE;
          else
            msg_append (out, l, false);
          break;
        case ST_NONE:
        case ST_DONE:
          break;
        }
    }
  msg_trim (out);
}

/* Split TEXT into lines, dropping csrun's truncation marker with the partial
 * lines on either side of it. */
static struct slice *
split_lines (const char *text, size_t len, size_t *nout)
{
  size_t cap = 64, n = 0;
  struct slice *L = malloc (cap * sizeof *L);
  if (L == NULL)
    return NULL;
  size_t pos = 0;
  bool skip_next = false;
  while (pos < len)
    {
      const char *p = text + pos;
      const char *nl = memchr (p, '\n', len - pos);
      size_t l = nl ? (size_t)(nl - p) : len - pos;
      pos += l + (nl ? 1 : 0);
      if (l > 0 && p[l - 1] == '\r')
        l--;
      struct slice s = { p, l };
      if (is_csrun_marker (s))
        {
          if (n > 0)
            n--; /* the head's partial last line (or the marker's own newline) */
          skip_next = true;
          continue;
        }
      if (skip_next)
        {
          skip_next = false; /* the tail's partial first line */
          continue;
        }
      if (n == cap)
        {
          struct slice *nl2 = realloc (L, 2 * cap * sizeof *L);
          if (nl2 == NULL)
            {
              free (L);
              return NULL;
            }
          L = nl2;
          cap *= 2;
        }
      L[n++] = s;
    }
  *nout = n;
  return L;
}

/* ------------------------------------------------------------- context */

/* CODE's lines LINE-2 .. LINE+2, one per line as "  N: text", the failing
 * line marked with '>' instead of the first space ("> N: text"), numbers
 * right-aligned to the widest:
 *
 *     2: total = 0
 *     3: for v in values:
 *   > 4:     total += math.sqrt(v)
 *     5: print(total)
 *
 * An empty line is just "  N:" (no trailing blank).  Lines longer than
 * CONTEXT_LINE_MAX bytes are cut and end in " ...".
 * NULL when LINE is 0 or CODE has no such line. */
static char *
make_context (const char *code, int line)
{
  if (code == NULL || line <= 0)
    return NULL;
  long first = line > 2 ? (long)line - 2 : 1, last = (long)line + 2;
  struct slice lines[5];
  int have = 0;
  long lineno = 1;
  const char *p = code;
  while (lineno <= last && *p)
    {
      const char *nl = strchr (p, '\n');
      size_t l = nl ? (size_t)(nl - p) : strlen (p);
      if (lineno >= first)
        {
          size_t k = l;
          if (k > 0 && p[k - 1] == '\r')
            k--;
          lines[have++] = (struct slice){ p, k };
        }
      lineno++;
      if (nl == NULL)
        break;
      p = nl + 1;
    }
  long top = first + have - 1; /* the last line shown */
  if (have == 0 || top < line)
    return NULL;
  int width = 1;
  for (long t = top; t >= 10; t /= 10)
    width++;
  size_t size = 1;
  for (int k = 0; k < have; k++)
    size += 2 + (size_t)width + 2 + CONTEXT_LINE_MAX + 4 + 1;
  char *out = malloc (size), *o = out;
  if (out == NULL)
    return NULL;
  for (int k = 0; k < have; k++)
    {
      long no = first + k;
      bool cut = lines[k].len > CONTEXT_LINE_MAX;
      int w
          = snprintf (o, size - (size_t)(o - out), "%s%*ld:%s%.*s%s\n", no == line ? "> " : "  ",
                      width, no, lines[k].len > 0 ? " " : "",
                      (int)(cut ? CONTEXT_LINE_MAX : lines[k].len), lines[k].p, cut ? " ..." : "");
      if (w < 0)
        {
          free (out);
          return NULL;
        }
      o += w;
    }
  return out;
}

/* ------------------------------------------------------------- public */

static char *
dup_or_empty (const char *s)
{
  return strdup (s ? s : "");
}

void
csr_diagnosis_set (struct csr_diagnosis *d, const char *type, const char *message, int line,
                   const char *code)
{
  d->error_type = dup_or_empty (type ? type : "UnknownError");
  d->message = dup_or_empty (message);
  d->line = line > 0 ? line : 0;
  d->context = make_context (code, d->line);
}

void
csr_diagnosis_release (struct csr_diagnosis *d)
{
  if (d == NULL)
    return;
  free (d->error_type);
  free (d->message);
  free (d->context);
  memset (d, 0, sizeof *d);
}

/* The last non-empty line of TEXT, trimmed, at most MESSAGE_MAX bytes. */
static char *
last_line (const char *text, size_t len)
{
  size_t end = len;
  while (end > 0)
    {
      size_t start = end;
      while (start > 0 && text[start - 1] != '\n')
        start--;
      struct slice l = trim ((struct slice){ text + start, end - start });
      if (l.len > 0 && !is_csrun_marker (l))
        return strndup (l.p, l.len > MESSAGE_MAX ? MESSAGE_MAX : l.len);
      end = start > 0 ? start - 1 : 0;
    }
  return strdup ("");
}

int
csr_classify_traceback (const char *stderr_text, size_t len, const char *code,
                        struct csr_diagnosis *d)
{
  memset (d, 0, sizeof *d);
  if (stderr_text == NULL)
    len = 0;
  const char *text = stderr_text;
  size_t tlen = len;
  if (tlen > CLASSIFY_WINDOW)
    {
      /* Start at the first whole line of the window. */
      const char *w = text + tlen - CLASSIFY_WINDOW;
      const char *nl = memchr (w, '\n', CLASSIFY_WINDOW);
      w = nl ? nl + 1 : w;
      tlen -= (size_t)(w - text);
      text = w;
    }
  size_t n = 0;
  cleanup_free struct slice *L = tlen > 0 ? split_lines (text, tlen, &n) : NULL;
  struct exc e = { 0 };
  if (L)
    parse_lines (L, n, 0, &e);
  if (e.type && *e.type)
    {
      csr_diagnosis_set (d, e.type, e.msg, e.line, code);
      exc_clear (&e);
      return 1;
    }
  exc_clear (&e);
  cleanup_free char *msg = len > 0 ? last_line (stderr_text, len) : NULL;
  csr_diagnosis_set (d, "UnknownError", msg, 0, NULL);
  return 0;
}
