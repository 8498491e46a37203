#include "config.h"
#include "utf8.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Well-formed UTF-8 (Unicode, table 3-7):
 *
 *   00..7F
 *   C2..DF  80..BF
 *   E0      A0..BF  80..BF
 *   E1..EC  80..BF  80..BF
 *   ED      80..9F  80..BF
 *   EE..EF  80..BF  80..BF
 *   F0      90..BF  80..BF  80..BF
 *   F1..F3  80..BF  80..BF  80..BF
 *   F4      80..8F  80..BF  80..BF
 *
 * Only the second byte has a range that depends on the lead byte; every
 * later byte is 80..BF.  That rules out overlongs (C0, C1, E0 80..9F,
 * F0 80..8F), surrogates (ED A0..BF) and code points above U+10FFFF
 * (F4 90..BF, F5..FF). */

static const char replacement[3] = { '\xef', '\xbf', '\xbd' }; /* U+FFFD */

/* Look at the sequence starting at S[0] (LEN >= 1).  Returns its length when
 * it is well-formed; otherwise returns 0 and sets *BAD to the length of the
 * maximal subpart of an ill-formed sequence: the longest prefix that could
 * still start a well-formed sequence, and at least 1 byte. */
static size_t
scan_one (const unsigned char *s, size_t len, size_t *bad)
{
  unsigned char c = s[0];
  size_t need;
  unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */

  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    need = 2;
  else if (c >= 0xe0 && c <= 0xef)
    {
      need = 3;
      if (c == 0xe0)
        lo = 0xa0;
      else if (c == 0xed)
        hi = 0x9f;
    }
  else if (c >= 0xf0 && c <= 0xf4)
    {
      need = 4;
      if (c == 0xf0)
        lo = 0x90;
      else if (c == 0xf4)
        hi = 0x8f;
    }
  else
    {
      /* 80..C1 and F5..FF never start a well-formed sequence. */
      *bad = 1;
      return 0;
    }

  size_t i = 1;
  for (; i < need && i < len; i++)
    {
      unsigned char t = s[i];
      if (i == 1 ? (t < lo || t > hi) : (t < 0x80 || t > 0xbf))
        break;
    }
  if (i == need)
    return need;
  *bad = i; /* the lead byte plus the continuation bytes that were acceptable */
  return 0;
}

size_t
csr_utf8_next (const char *s, size_t len, size_t *bad)
{
  size_t ignored = 0;
  if (len == 0)
    return 0;
  return scan_one ((const unsigned char *)s, len, bad ? bad : &ignored);
}

bool
csr_utf8_valid (const char *s, size_t len)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len)
    {
      /* Fast path: runs of ASCII, eight bytes at a time. */
      while (len - i >= 8)
        {
          uint64_t w;
          memcpy (&w, p + i, sizeof w);
          if (w & UINT64_C (0x8080808080808080))
            break;
          i += 8;
        }
      if (i >= len)
        break;
      if (p[i] < 0x80)
        {
          i++;
          continue;
        }
      size_t bad;
      size_t n = scan_one (p + i, len - i, &bad);
      if (n == 0)
        return false;
      i += n;
    }
  return true;
}

/* One pass over S: when OUT is NULL only count the output bytes. */
static size_t
sanitize_pass (const unsigned char *p, size_t len, char *out)
{
  size_t i = 0, o = 0;
  while (i < len)
    {
      size_t bad = 0;
      size_t n = scan_one (p + i, len - i, &bad);
      if (n > 0)
        {
          /* Copy the well-formed run in one go. */
          size_t start = i;
          i += n;
          while (i < len)
            {
              n = scan_one (p + i, len - i, &bad);
              if (n == 0)
                break;
              i += n;
            }
          if (out)
            memcpy (out + o, p + start, i - start);
          o += i - start;
          continue;
        }
      if (out)
        memcpy (out + o, replacement, sizeof replacement);
      o += sizeof replacement;
      i += bad;
    }
  return o;
}

char *
csr_utf8_sanitize (const char *s, size_t len, size_t *out_len)
{
  const unsigned char *p = (const unsigned char *)s;
  bool valid = csr_utf8_valid (s, len);
  size_t n = len;
  if (!valid)
    {
      /* Each replaced subpart is at least one byte and becomes three. */
      if (len > (SIZE_MAX - 1) / 3)
        {
          errno = ENOMEM;
          return NULL;
        }
      n = sanitize_pass (p, len, NULL);
    }
  char *out = malloc (n + 1);
  if (out == NULL)
    return NULL;
  if (!valid)
    sanitize_pass (p, len, out);
  else if (len > 0)
    memcpy (out, s, len);
  out[n] = '\0';
  if (out_len)
    *out_len = n;
  return out;
}
