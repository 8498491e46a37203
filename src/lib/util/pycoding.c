/* csrun — the encoding of Python source (PEP 263); see pycoding.h. */
#include "config.h"
#include "pycoding.h"

#include <stdio.h>
#include <string.h>

#include "utf8.h"

#define BOM "\xef\xbb\xbf"

static bool
is_blank (char c)
{
  return c == ' ' || c == '\t' || c == '\f';
}

static bool
is_name_char (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
         || c == '_' || c == '.';
}

/* The declaration in the line S[0..N) (without its '\n'), as CPython's
 * get_coding_spec finds it: blanks, '#', then the first "coding" followed by
 * ':' or '=' and a non-empty name.  Returns the name's length (*AT its start),
 * 0 when there is none; *COMMENT_OR_BLANK says whether the line holds nothing
 * else than blanks and a comment (only then is line 2 looked at). */
static size_t
line_coding (const char *s, size_t n, const char **at, bool *comment_or_blank)
{
  size_t i = 0;
  while (i < n && is_blank (s[i]))
    i++;
  *comment_or_blank = i == n || s[i] == '#' || s[i] == '\r';
  if (i == n || s[i] != '#')
    return 0;
  for (; i + 6 < n; i++)
    {
      if (memcmp (s + i, "coding", 6) != 0 || (s[i + 6] != ':' && s[i + 6] != '='))
        continue;
      size_t j = i + 7;
      while (j < n && (s[j] == ' ' || s[j] == '\t'))
        j++;
      size_t k = j;
      while (k < n && is_name_char (s[k]))
        k++;
      if (k > j)
        {
          *at = s + j;
          return k - j;
        }
    }
  return 0;
}

size_t
csr_pycoding_find (const char *code, size_t len, char *name, size_t cap)
{
  if (cap > 0)
    name[0] = '\0';
  if (len >= 3 && memcmp (code, BOM, 3) == 0)
    code += 3, len -= 3;
  size_t start = 0;
  for (int line = 0; line < 2 && start < len; line++)
    {
      const char *nl = memchr (code + start, '\n', len - start);
      size_t n = nl ? (size_t)(nl - (code + start)) : len - start;
      const char *at = NULL;
      bool comment_or_blank = false;
      size_t k = line_coding (code + start, n, &at, &comment_or_blank);
      if (k > 0)
        {
          if (cap > 0)
            {
              size_t c = k < cap - 1 ? k : cap - 1;
              memcpy (name, at, c);
              name[c] = '\0';
            }
          return k;
        }
      if (!comment_or_blank || nl == NULL)
        break;
      start += n + 1;
    }
  return 0;
}

bool
csr_pycoding_is_utf8 (const char *name)
{
  char n[16];
  size_t i = 0;
  for (; name[i] && i < sizeof n - 1; i++)
    {
      char c = name[i];
      n[i] = c == '_' ? '-' : (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
  n[i] = '\0';
  if (name[i] != '\0' && strncmp (n, "utf-8-", 6) != 0)
    return false; /* longer than any spelling of UTF-8, unless utf-8-... */
  return strcmp (n, "utf-8") == 0 || strcmp (n, "utf8") == 0 || strncmp (n, "utf-8-", 6) == 0;
}

int
csr_pycoding_check (const char *code, size_t len, char *enc, size_t cap, csr_error **err)
{
  char name[128];
  size_t k = csr_pycoding_find (code, len, name, sizeof name);
  if (cap > 0)
    enc[0] = '\0';
  if (csr_utf8_valid (code, len))
    {
      if (k > 0 && !csr_pycoding_is_utf8 (name) && cap > 0)
        snprintf (enc, cap, "%s", name);
      return 0;
    }
  if (len >= 3 && memcmp (code, BOM, 3) == 0)
    return csr_error_set (err, 0, "is not valid UTF-8 (it starts with a UTF-8 byte order mark)");
  if (k == 0)
    return csr_error_set (err, 0,
                          "is not valid UTF-8 and declares no encoding (PEP 263: a comment "
                          "such as '# -*- coding: latin-1 -*-' on line 1 or 2)");
  if (k >= sizeof name)
    return csr_error_set (err, 0, "is not valid UTF-8 and its encoding name is too long");
  if (csr_pycoding_is_utf8 (name))
    return csr_error_set (err, 0, "is not valid UTF-8 (it declares coding: %s)", name);
  if (cap > 0)
    snprintf (enc, cap, "%s", name);
  return 0;
}
