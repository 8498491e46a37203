#include "config.h"

#include "scan.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"

/* A pattern file larger than this is certainly a mistake. */
#define SCAN_FILE_MAX (1024 * 1024)
/* The matching line handed back is cut to this many bytes. */
#define SCAN_LINE_MAX 500
/* Patterns are shown in error messages; keep those readable. */
#define SCAN_SHOW_MAX 200

#define RE_FLAGS (REG_EXTENDED | REG_ICASE | REG_NEWLINE)

/* glibc's regcomp already understands the GNU escapes \s \S \w \W \b \B \<
 * \> in extended syntax (outside bracket expressions).  It does not know \d
 * and \D, which it silently takes as a literal 'd' / 'D' -- a trap for
 * patterns written with Python or PCRE in mind (--silent-pattern 'error \d+').
 * So \d becomes [[:digit:]] and \D becomes [^[:digit:]]; everything else,
 * and anything inside a bracket expression, is passed through unchanged. */
static char *
translate (const char *p)
{
  size_t n = strlen (p);
  /* Each "\d" (2 bytes) grows to at most 12 bytes. */
  char *out = malloc (n * 6 + 1);
  if (out == NULL)
    return NULL;
  char *o = out;
  size_t i = 0;
  while (i < n)
    {
      if (p[i] == '\\' && i + 1 < n)
        {
          if (p[i + 1] == 'd' || p[i + 1] == 'D')
            {
              const char *cls = p[i + 1] == 'd' ? "[[:digit:]]" : "[^[:digit:]]";
              size_t l = strlen (cls);
              memcpy (o, cls, l);
              o += l;
            }
          else
            {
              *o++ = p[i];
              *o++ = p[i + 1];
            }
          i += 2;
          continue;
        }
      if (p[i] == '[')
        {
          /* Copy the bracket expression verbatim: "[", optional "^", a
             leading "]" is literal, "[:class:]", "[=x=]" and "[.x.]" may
             contain ']', the first other ']' closes. */
          size_t j = i + 1;
          if (j < n && p[j] == '^')
            j++;
          if (j < n && p[j] == ']')
            j++;
          while (j < n && p[j] != ']')
            {
              if (p[j] == '[' && j + 1 < n
                  && (p[j + 1] == ':' || p[j + 1] == '=' || p[j + 1] == '.'))
                {
                  char delim = p[j + 1];
                  const char *end = NULL;
                  for (size_t k = j + 2; k + 1 < n; k++)
                    if (p[k] == delim && p[k + 1] == ']')
                      {
                        end = p + k;
                        break;
                      }
                  if (end)
                    {
                      j = (size_t)(end - p) + 2;
                      continue;
                    }
                }
              j++;
            }
          if (j < n)
            j++; /* the closing ']' */
          memcpy (o, p + i, j - i);
          o += j - i;
          i = j;
          continue;
        }
      *o++ = p[i++];
    }
  *o = '\0';
  return out;
}

/* Compile PATTERN into *RE.  On failure fill *err with "invalid pattern
 * 'P': reason" and return -1. */
static int
compile_pattern (const char *pattern, regex_t *re, csr_error **err)
{
  int show = (int)strnlen (pattern, SCAN_SHOW_MAX);
  if (*pattern == '\0')
    return csr_error_set (err, 0, "invalid pattern '': empty pattern");
  cleanup_free char *tr = translate (pattern);
  if (tr == NULL)
    return csr_error_set (err, ENOMEM, "invalid pattern '%.*s'", show, pattern);
  int rc = regcomp (re, tr, RE_FLAGS);
  if (rc != 0)
    {
      char why[256];
      regerror (rc, re, why, sizeof why);
      return csr_error_set (err, 0, "invalid pattern '%.*s': %s", show, pattern, why);
    }
  /* A pattern that matches an empty line (".*", "^", "x?") would flag
     almost every output as a failure: refuse it. */
  if (regexec (re, "", 0, NULL, 0) == 0)
    {
      regfree (re);
      return csr_error_set (err, 0,
                            "invalid pattern '%.*s': it matches an empty line, so it would flag "
                            "almost any output",
                            show, pattern);
    }
  return 0;
}

/* Append an already compiled pattern; takes ownership of RE on success. */
static int
append (struct csr_scan *s, const char *pattern, size_t plen, regex_t *re, csr_error **err)
{
  char *src = strndup (pattern, plen);
  char **ns = src ? realloc (s->sources, (s->n + 1) * sizeof *ns) : NULL;
  if (ns)
    s->sources = ns;
  regex_t *nr = ns ? realloc (s->res, (s->n + 1) * sizeof *nr) : NULL;
  if (nr == NULL)
    {
      free (src);
      return csr_error_set (err, ENOMEM, "silent-failure patterns");
    }
  s->res = nr;
  s->sources[s->n] = src;
  s->res[s->n] = *re;
  s->n++;
  return 0;
}

int
csr_scan_add (struct csr_scan *s, const char *pattern, csr_error **err)
{
  regex_t re;
  if (compile_pattern (pattern, &re, err) < 0)
    return -1;
  if (append (s, pattern, strlen (pattern), &re, err) < 0)
    {
      regfree (&re);
      return -1;
    }
  return 0;
}

static bool
is_blank (char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Drop the patterns appended after the first KEEP (used to undo a parse
 * that failed half way, so S is left as it was). */
static void
truncate_to (struct csr_scan *s, size_t keep)
{
  while (s->n > keep)
    {
      s->n--;
      free (s->sources[s->n]);
      regfree (&s->res[s->n]);
    }
}

/* NAME (may be NULL) prefixes the errors: "NAME line N: ...". */
static int
parse_named (const char *name, const char *text, size_t len, struct csr_scan *s, csr_error **err)
{
  size_t keep = s->n;
  size_t pos = 0;
  unsigned lineno = 0;
  while (pos < len)
    {
      const char *line = text + pos;
      const char *nl = memchr (line, '\n', len - pos);
      size_t l = nl ? (size_t)(nl - line) : len - pos;
      pos += l + (nl ? 1 : 0);
      lineno++;
      /* Leading and trailing blanks (and a CR) are not part of the pattern:
         write [ ] or \s for a space at either end. */
      while (l > 0 && is_blank (*line))
        line++, l--;
      while (l > 0 && is_blank (line[l - 1]))
        l--;
      if (l == 0 || *line == '#')
        continue;
      cleanup_free char *pat = strndup (line, l);
      if (pat == NULL)
        {
          truncate_to (s, keep);
          return csr_error_set (err, ENOMEM, "silent-failure patterns");
        }
      regex_t re;
      int rc = -1;
      if (strlen (pat) != l)
        rc = csr_error_set (err, 0, "invalid pattern: it contains a NUL byte");
      else if (compile_pattern (pat, &re, err) == 0)
        {
          rc = append (s, pat, l, &re, err);
          if (rc < 0)
            regfree (&re);
        }
      if (rc < 0)
        {
          truncate_to (s, keep);
          if (err && *err)
            {
              /* "NAME line N: invalid pattern ..." */
              char *msg = NULL;
              if (asprintf (&msg, "%s%sline %u: %s", name ? name : "", name ? " " : "", lineno,
                            (*err)->msg ? (*err)->msg : "")
                  >= 0)
                {
                  free ((*err)->msg);
                  (*err)->msg = msg;
                }
            }
          return -1;
        }
    }
  return 0;
}

int
csr_scan_parse (const char *text, size_t len, struct csr_scan *s, csr_error **err)
{
  return parse_named (NULL, text, len, s, err);
}

int
csr_scan_load (const char *path, struct csr_scan *s, csr_error **err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (csr_read_file (path, SCAN_FILE_MAX, &text, &len, err) < 0)
    return csr_error_wrap (err, "silent-failure patterns");
  return parse_named (path, text, len, s, err);
}

void
csr_scan_release (struct csr_scan *s)
{
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->n; i++)
    {
      free (s->sources[i]);
      regfree (&s->res[i]);
    }
  free (s->sources);
  free (s->res);
  s->sources = NULL;
  s->res = NULL;
  s->n = 0;
}

/* Does RE match the line TEXT[START, END)? */
static bool
line_matches (const regex_t *re, const char *text, size_t start, size_t end)
{
  regmatch_t m = { .rm_so = (regoff_t)start, .rm_eo = (regoff_t)end };
  return regexec (re, text, 1, &m, REG_STARTEND) == 0;
}

/* Offset of the start of the first line of TEXT[0, LEN) that RE matches
 * (line by line), or SIZE_MAX.  *LINE_END gets the end of that line.
 *
 * Rather than one regexec per line, search the whole text once: with
 * REG_NEWLINE a match that stays inside one line is exactly a line match
 * (^, $ and \b see the newline).  Only a match that runs over a newline
 * (possible with \s or [[:space:]]) needs its first line checked alone. */
static size_t
first_matching_line (const regex_t *re, const char *text, size_t len, size_t limit,
                     size_t *line_end)
{
  size_t pos = 0;
  while (pos <= len && pos < limit)
    {
      regmatch_t m = { .rm_so = (regoff_t)pos, .rm_eo = (regoff_t)len };
      if (regexec (re, text, 1, &m, REG_STARTEND) != 0)
        return SIZE_MAX;
      size_t so = (size_t)m.rm_so, eo = (size_t)m.rm_eo;
      size_t start = so;
      while (start > pos && text[start - 1] != '\n')
        start--;
      if (start >= limit)
        return SIZE_MAX;
      const char *nl = memchr (text + so, '\n', len - so);
      size_t end = nl ? (size_t)(nl - text) : len;
      if (eo <= end || line_matches (re, text, start, end))
        {
          *line_end = end;
          return start;
        }
      if (nl == NULL)
        return SIZE_MAX;
      pos = end + 1;
    }
  return SIZE_MAX;
}

bool
csr_scan_match (const struct csr_scan *s, const char *text, size_t len, const char **pattern,
                char **line)
{
  if (pattern)
    *pattern = NULL;
  if (line)
    *line = NULL;
  if (s == NULL || text == NULL || s->n == 0)
    return false;
  /* regexec's offsets are int in glibc: look at the first 2 GiB at most. */
  if (len >= (size_t)INT_MAX)
    len = (size_t)INT_MAX - 1;
  /* regexec wants a NUL-terminated string even with REG_STARTEND (ASan's
     interceptor reads it with strlen), and TEXT need not be one. */
  cleanup_free char *copy = malloc (len + 1);
  if (copy == NULL)
    return false;
  memcpy (copy, text, len);
  copy[len] = '\0';
  text = copy;
  size_t best = SIZE_MAX, best_end = 0, best_i = 0;
  for (size_t i = 0; i < s->n; i++)
    {
      size_t end = 0;
      /* Only a line before the best one so far can win (ties go to the
         pattern listed first). */
      size_t at = first_matching_line (&s->res[i], text, len, best, &end);
      if (at < best)
        {
          best = at;
          best_end = end;
          best_i = i;
        }
    }
  if (best == SIZE_MAX)
    return false;
  if (pattern)
    *pattern = s->sources[best_i];
  if (line)
    {
      size_t l = best_end - best;
      if (l > 0 && text[best + l - 1] == '\r')
        l--;
      if (l > SCAN_LINE_MAX)
        l = SCAN_LINE_MAX;
      *line = malloc (l + 1);
      if (*line)
        {
          memcpy (*line, text + best, l);
          (*line)[l] = '\0';
        }
    }
  return true;
}
