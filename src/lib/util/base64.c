/* csrun — base64 decoding and encoding (base64.h). */
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

char *
csr_base64_encode (const void *in, size_t len, size_t *out_len)
{
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const unsigned char *p = in;
  if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
    {
      errno = ENOMEM;
      return NULL;
    }
  size_t n = (len + 2) / 3 * 4;
  char *o = malloc (n + 1);
  if (o == NULL)
    return NULL;
  size_t j = 0;
  for (size_t i = 0; i < len; i += 3)
    {
      uint32_t v = (uint32_t)p[i] << 16;
      if (i + 1 < len)
        v |= (uint32_t)p[i + 1] << 8;
      if (i + 2 < len)
        v |= p[i + 2];
      o[j++] = alphabet[v >> 18 & 63];
      o[j++] = alphabet[v >> 12 & 63];
      o[j++] = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
      o[j++] = i + 2 < len ? alphabet[v & 63] : '=';
    }
  o[j] = '\0';
  if (out_len)
    *out_len = j;
  return o;
}
