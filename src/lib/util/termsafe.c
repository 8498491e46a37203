/* csrun — untrusted bytes made safe to show on a terminal (see termsafe.h). */
#include "config.h"
#include "termsafe.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* The longest rendering of one input byte or sequence: "<U+XXXX>" (8 bytes
 * for a sequence of 2 or 3), "\xNN" (4 for 1), "^X" (2 for 1). */
#define MAX_PER_BYTE 4

/* The code point of the well-formed sequence P[0..N) (N = 2 or 3 here). */
static uint32_t
decode (const unsigned char *p, size_t n)
{
  if (n == 2)
    return (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
  if (n == 3)
    return (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
  return 0; /* 4-byte sequences (U+10000 and up) hold no control */
}

static bool
is_bidi_control (uint32_t c)
{
  return c == 0x061c || c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e)
         || (c >= 0x2066 && c <= 0x2069);
}

/* How S[I..) is rendered: 0 when it is copied as it is (*N bytes of it), else
 * the number of bytes written to BUF (its rendering; *N is what it stands for). */
static size_t
render_one (const unsigned char *s, size_t len, size_t i, size_t *n, char buf[16])
{
  unsigned char c = s[i];
  *n = 1;
  if (c < 0x80)
    {
      if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f))
        return 0;
      if (c == '\r' && i + 1 < len && s[i + 1] == '\n')
        return 0;
      buf[0] = '^';
      buf[1] = c == 0x7f ? '?' : (char)(c + 0x40);
      return 2;
    }
  size_t bad = 1;
  size_t k = csr_utf8_next ((const char *)s + i, len - i, &bad);
  if (k == 0)
    return (size_t)snprintf (buf, 16, "\\x%02x", c); /* one byte at a time */
  *n = k;
  uint32_t cp = decode (s + i, k);
  if ((k == 2 && cp <= 0x9f) || (k <= 3 && is_bidi_control (cp)))
    return (size_t)snprintf (buf, 16, "<U+%04X>", (unsigned)cp);
  return 0;
}

bool
csr_termsafe_clean (const char *s, size_t len)
{
  const unsigned char *p = (const unsigned char *)s;
  char buf[16];
  for (size_t i = 0; i < len;)
    {
      size_t n;
      if (render_one (p, len, i, &n, buf) != 0)
        return false;
      i += n;
    }
  return true;
}

char *
csr_termsafe (const char *s, size_t len, size_t *out_len)
{
  const unsigned char *p = (const unsigned char *)s;
  if (len > (SIZE_MAX - 1) / MAX_PER_BYTE)
    {
      errno = ENOMEM;
      return NULL;
    }
  char *out = malloc (len * MAX_PER_BYTE + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len;)
    {
      char buf[16];
      size_t n;
      size_t r = render_one (p, len, i, &n, buf);
      if (r == 0)
        memcpy (out + o, p + i, n), o += n;
      else
        memcpy (out + o, buf, r), o += r;
      i += n;
    }
  out[o] = '\0';
  char *shrunk = realloc (out, o + 1);
  if (out_len)
    *out_len = o;
  return shrunk ? shrunk : out;
}

char *
csr_termsafe_json (const char *s, size_t len, size_t *out_len)
{
  const unsigned char *p = (const unsigned char *)s;
  /* "\u00XX" is 6 bytes for 1 (DEL), 2 (C1) or 3 (bidi) input bytes. */
  if (len > (SIZE_MAX - 1) / 6)
    {
      errno = ENOMEM;
      return NULL;
    }
  char *out = malloc (len * 6 + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len;)
    {
      size_t k = p[i] < 0x80 ? 1 : csr_utf8_next (s + i, len - i, NULL);
      if (k == 0)
        k = 1; /* not UTF-8: copied (yajl validates what it writes) */
      uint32_t cp = k == 1 ? p[i] : decode (p + i, k);
      if ((k == 1 && cp == 0x7f) || (k == 2 && cp <= 0x9f)
          || (k >= 2 && k <= 3 && is_bidi_control (cp)))
        o += (size_t)snprintf (out + o, 7, "\\u%04x", (unsigned)cp);
      else
        memcpy (out + o, p + i, k), o += k;
      i += k;
    }
  out[o] = '\0';
  char *shrunk = realloc (out, o + 1);
  if (out_len)
    *out_len = o;
  return shrunk ? shrunk : out;
}

char *
csr_termsafe_str (const char *s)
{
  return csr_termsafe (s ? s : "", s ? strlen (s) : 0, NULL);
}
