/* csrun — take the code out of a model's or a program's reply. */
#include "config.h"
#include "heal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/utf8.h"

struct span
{
  const char *s;
  size_t len;
};

/* The line starting at P (not past END): its length without the newline, and
 * where the next line starts. */
static size_t
line_len (const char *p, const char *end, const char **next)
{
  const char *nl = memchr (p, '\n', (size_t)(end - p));
  if (nl == NULL)
    {
      *next = end;
      return (size_t)(end - p);
    }
  *next = nl + 1;
  return (size_t)(nl - p);
}

static bool
is_blank (const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\f' && s[i] != '\v' && s[i] != '\r')
      return false;
  return true;
}

/* A fence line: up to 3 spaces, at least 3 backticks.  Returns the number of
 * backticks (0 if not a fence), the indentation and the info string. */
static size_t
fence (const char *s, size_t len, size_t *indent, struct span *info)
{
  size_t i = 0;
  while (i < len && i < 3 && s[i] == ' ')
    i++;
  *indent = i;
  size_t n = 0;
  while (i + n < len && s[i + n] == '`')
    n++;
  if (n < 3)
    return 0;
  i += n;
  while (i < len && (s[i] == ' ' || s[i] == '\t'))
    i++;
  size_t e = len;
  while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r'))
    e--;
  if (memchr (s + i, '`', e - i) != NULL) /* an inline code span, not a fence */
    return 0;
  info->s = s + i;
  info->len = e - i;
  return n;
}

static bool
is_python_info (const struct span *info)
{
  size_t w = 0;
  while (w < info->len && info->s[w] != ' ' && info->s[w] != '\t' && info->s[w] != '{')
    w++;
  static const char *const names[] = { "python", "py", "python3", "py3" };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (w == strlen (names[i]) && strncasecmp (info->s, names[i], w) == 0)
      return true;
  return false;
}

/* Find a fenced block in [P, END): the first one whose info string says
 * Python when WANT_PYTHON, else the first one.  Sets *body to the lines
 * between the fences (to END if it is never closed) and *indent to the
 * opening fence's indentation. */
static bool
find_block (const char *p, const char *end, bool want_python, struct span *body, size_t *indent)
{
  while (p < end)
    {
      const char *next;
      size_t len = line_len (p, end, &next);
      struct span info;
      size_t ind;
      size_t ticks = fence (p, len, &ind, &info);
      if (ticks == 0)
        {
          p = next;
          continue;
        }
      /* Find the closing fence: at least as many backticks, nothing else. */
      const char *q = next, *close = end;
      while (q < end)
        {
          const char *qnext;
          size_t qlen = line_len (q, end, &qnext);
          struct span qinfo;
          size_t qind;
          size_t qticks = fence (q, qlen, &qind, &qinfo);
          if (qticks >= ticks && qinfo.len == 0)
            {
              close = q;
              break;
            }
          q = qnext;
        }
      if (!want_python || is_python_info (&info))
        {
          body->s = next;
          body->len = (size_t)(close - next);
          *indent = ind;
          return true;
        }
      if (close == end)
        break;
      line_len (close, end, &p); /* go on after the closing fence */
    }
  return false;
}

char *
csr_extract_code (const char *reply, size_t len)
{
  return csr_extract_code_ex (reply, len, NULL);
}

char *
csr_extract_code_ex (const char *reply, size_t len, bool *fenced)
{
  if (fenced)
    *fenced = true;
  if (reply == NULL)
    len = 0;
  /* CRLF -> LF first. */
  char *text = malloc (len + 1);
  if (text == NULL)
    return NULL;
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    {
      if (reply[i] == '\r' && i + 1 < len && reply[i + 1] == '\n')
        continue;
      text[n++] = reply[i];
    }
  text[n] = '\0';

  struct span body = { text, n };
  size_t indent = 0;
  if (!find_block (text, text + n, true, &body, &indent)
      && !find_block (text, text + n, false, &body, &indent))
    {
      body.s = text;
      body.len = n;
      indent = 0;
      if (fenced)
        *fenced = false;
    }

  /* Copy the lines, without the fence's indentation, and without leading
   * and trailing blank lines; every line ends with a newline. */
  char *out = malloc (body.len + 2);
  if (out == NULL)
    {
      free (text);
      return NULL;
    }
  size_t o = 0, keep = 0; /* KEEP: length up to the last non-blank line */
  const char *p = body.s, *end = body.s + body.len;
  while (p < end)
    {
      const char *next;
      size_t l = line_len (p, end, &next);
      bool blank = is_blank (p, l);
      if (blank && o == 0)
        {
          p = next;
          continue;
        }
      size_t skip = 0;
      while (skip < indent && skip < l && p[skip] == ' ')
        skip++;
      memcpy (out + o, p + skip, l - skip);
      o += l - skip;
      out[o++] = '\n';
      if (!blank)
        keep = o;
      p = next;
    }
  out[keep] = '\0';
  free (text);
  return out;
}

size_t
csr_patch_max_size (size_t code_len, size_t max_code)
{
  size_t cap
      = code_len > (SIZE_MAX - CSR_PATCH_SLACK) / 4 ? SIZE_MAX : 4 * code_len + CSR_PATCH_SLACK;
  if (cap < CSR_PATCH_MIN_CAP)
    cap = CSR_PATCH_MIN_CAP;
  if (max_code > 0 && cap > max_code)
    cap = max_code;
  return cap;
}

const char *
csr_patch_problem (const char *code, const char *patch, size_t max_code)
{
  static __thread char buf[200];
  size_t len = strlen (patch), cap = csr_patch_max_size (strlen (code), max_code);
  if (len > cap)
    {
      snprintf (buf, sizeof buf,
                "unusable reply: the patch is %zu bytes, over the limit of %zu bytes for this "
                "snippet",
                len, cap);
      return buf;
    }
  /* The check the snippet itself gets (csr_snippet_check_code): one call, so both
   * follow the same rule. */
  if (!csr_utf8_valid (patch, len))
    return "unusable reply: not valid UTF-8";
  return NULL;
}
