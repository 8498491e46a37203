/* csrun — base64 decoding (base64.h). */
#include "config.h"
#include "base64.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* The value of C in the alphabet, -1 when it is not in it. */
static int
value (unsigned char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

int
csr_base64_decode (const char *in, size_t len, char **out, size_t *out_len, size_t *bad)
{
  unsigned char *o = malloc (len / 4 * 3 + 4);
  if (o == NULL)
    {
      errno = ENOMEM;
      return -1;
    }
  size_t n = 0, pad = 0;
  uint32_t acc = 0;
  unsigned bits = 0;
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char)in[i];
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
        continue;
      int v = c == '=' ? -2 : value (c);
      /* Padding ends the data: only more padding (or blanks) may follow. */
      if (v == -1 || (pad > 0 && v != -2) || (v == -2 && pad == 2))
        {
          free (o);
          *bad = i;
          errno = EINVAL;
          return -1;
        }
      if (v == -2)
        {
          pad++;
          continue;
        }
      acc = acc << 6 | (uint32_t)v;
      bits += 6;
      if (bits >= 8)
        {
          bits -= 8;
          o[n++] = (unsigned char)(acc >> bits);
        }
    }
  /* A lone sixth of a byte is no data: "A" alone is not base64. */
  if (bits >= 6)
    {
      free (o);
      *bad = len;
      errno = EINVAL;
      return -1;
    }
  o[n] = '\0';
  *out = (char *)o;
  *out_len = n;
  return 0;
}
