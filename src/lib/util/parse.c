#include "config.h"
#include "parse.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Locale-independent character classes: option values are ASCII syntax. */
static inline bool
is_digit (char c)
{
  return c >= '0' && c <= '9';
}

static inline bool
is_alpha (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline char
to_lower (char c)
{
  return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* ------------------------------------------------------------------ sizes */

static const char size_hint[] = "expected a number with an optional K, M, G or T suffix";

/* "64 GiB", "1536 MiB", "1000 bytes": the largest binary unit that divides V. */
static void
format_size (uint64_t v, char *buf, size_t size)
{
  static const char *const units[] = { "TiB", "GiB", "MiB", "KiB" };
  static const unsigned shifts[] = { 40, 30, 20, 10 };
  for (size_t i = 0; v > 0 && i < sizeof units / sizeof units[0]; i++)
    {
      uint64_t unit = UINT64_C (1) << shifts[i];
      if (v % unit == 0)
        {
          snprintf (buf, size, "%" PRIu64 " %s", v / unit, units[i]);
          return;
        }
    }
  snprintf (buf, size, "%" PRIu64 " %s", v, v == 1 ? "byte" : "bytes");
}

static int
size_too_large (const char *s, uint64_t max, csr_error **err)
{
  char maxbuf[64];
  format_size (max, maxbuf, sizeof maxbuf);
  return csr_error_set (err, ERANGE, "size '%s' is too large (at most %s)", s, maxbuf);
}

/* floor (0.DIGITS * 2^SHIFT), exactly.  DIGITS beyond the 40th can't change
 * the result: every multiple of 2^-40 has at most 40 decimal places. */
static uint64_t
fraction_bytes (const char *digits, size_t n, unsigned shift)
{
  unsigned char d[40];
  if (n > sizeof d)
    n = sizeof d;
  for (size_t i = 0; i < n; i++)
    d[i] = (unsigned char)(digits[i] - '0');
  uint64_t whole = 0;
  for (unsigned k = 0; k < shift; k++)
    {
      /* Double the decimal fraction; the carry out is the next binary digit. */
      unsigned carry = 0;
      for (size_t i = n; i-- > 0;)
        {
          unsigned x = d[i] * 2u + carry;
          d[i] = (unsigned char)(x % 10);
          carry = x / 10;
        }
      whole = whole * 2 + carry;
    }
  return whole;
}

int
csr_parse_size (const char *s, uint64_t max, uint64_t *out, csr_error **err)
{
  if (s == NULL)
    s = "";
  const char *p = s;
  if (!is_digit (*p))
    return csr_error_set (err, EINVAL, "invalid size '%s': %s", s, size_hint);

  uint64_t whole = 0;
  bool overflow = false;
  for (; is_digit (*p); p++)
    {
      unsigned d = (unsigned)(*p - '0');
      if (whole > (UINT64_MAX - d) / 10)
        overflow = true;
      else
        whole = whole * 10 + d;
    }

  const char *frac = NULL;
  size_t nfrac = 0;
  if (*p == '.')
    {
      frac = ++p;
      while (is_digit (*p))
        p++;
      nfrac = (size_t)(p - frac);
      if (nfrac == 0)
        return csr_error_set (err, EINVAL, "invalid size '%s': %s", s, size_hint);
    }

  unsigned shift = 0;
  switch (to_lower (*p))
    {
    case 'k':
      shift = 10;
      break;
    case 'm':
      shift = 20;
      break;
    case 'g':
      shift = 30;
      break;
    case 't':
      shift = 40;
      break;
    default:
      break;
    }
  if (shift > 0)
    {
      p++;
      if (to_lower (*p) == 'i')
        p++;
    }
  if (to_lower (*p) == 'b')
    p++;
  if (*p != '\0')
    return csr_error_set (err, EINVAL, "invalid size '%s': %s", s, size_hint);
  if (frac != NULL && shift == 0)
    return csr_error_set (err, EINVAL, "invalid size '%s': a fraction needs a K, M, G or T suffix",
                          s);

  if (overflow || whole > (UINT64_MAX >> shift))
    return size_too_large (s, max, err);
  uint64_t v = whole << shift;
  if (frac != NULL)
    {
      uint64_t extra = fraction_bytes (frac, nfrac, shift);
      if (v > UINT64_MAX - extra)
        return size_too_large (s, max, err);
      v += extra;
    }
  if (v > max)
    return size_too_large (s, max, err);
  *out = v;
  return 0;
}

/* -------------------------------------------------------------- durations */

static const char duration_hint[]
    = "expected a number of seconds with an optional ms, s, m or h suffix";

/* MAX_S written the way a user would type it: "24h", "90m", "30s", "0.5s". */
static void
format_duration (double v, char *buf, size_t size)
{
  /* Whole numbers of seconds (exact in a double below 2^53). */
  uint64_t n = (v >= 1 && v < 9007199254740992.0) ? (uint64_t)v : 0;
  if (n > 0 && (double)n == v && n % 3600 == 0)
    snprintf (buf, size, "%" PRIu64 "h", n / 3600);
  else if (n > 0 && (double)n == v && n % 60 == 0)
    snprintf (buf, size, "%" PRIu64 "m", n / 60);
  else
    snprintf (buf, size, "%.15gs", v);
}

int
csr_parse_duration (const char *s, double max_s, double *out, csr_error **err)
{
  if (s == NULL)
    s = "";
  const char *p = s;
  if (!is_digit (*p))
    return csr_error_set (err, EINVAL, "invalid duration '%s': %s", s, duration_hint);

  /* Parsed by hand, not with strtod: no locale decimal comma, no sign, no
   * exponent, no hex, no "inf" or "nan". */
  double v = 0;
  for (; is_digit (*p); p++)
    v = v * 10 + (*p - '0');
  if (*p == '.')
    {
      p++;
      if (!is_digit (*p))
        return csr_error_set (err, EINVAL, "invalid duration '%s': %s", s, duration_hint);
      uint64_t num = 0, den = 1;
      for (; is_digit (*p); p++)
        if (den < UINT64_C (1000000000000000000)) /* 18 digits: beyond is noise */
          {
            num = num * 10 + (uint64_t)(*p - '0');
            den *= 10;
          }
      v += (double)num / (double)den;
    }

  if (strcmp (p, "ms") == 0)
    v /= 1000;
  else if (strcmp (p, "m") == 0)
    v *= 60;
  else if (strcmp (p, "h") == 0)
    v *= 3600;
  else if (strcmp (p, "s") != 0 && *p != '\0')
    return csr_error_set (err, EINVAL, "invalid duration '%s': %s", s, duration_hint);

  if (!(v > 0))
    return csr_error_set (err, EINVAL, "duration must be greater than zero");
  if (!isfinite (v) || v > max_s)
    {
      char maxbuf[64];
      format_duration (max_s, maxbuf, sizeof maxbuf);
      return csr_error_set (err, ERANGE, "duration '%s' is too large (at most %s)", s, maxbuf);
    }
  *out = v;
  return 0;
}

/* --------------------------------------------------------------- integers */

int
csr_parse_uint (const char *s, uint64_t min, uint64_t max, uint64_t *out, csr_error **err)
{
  if (s == NULL)
    s = "";
  if (!is_digit (*s))
    return csr_error_set (
        err, EINVAL, "invalid number '%s': expected an integer between %" PRIu64 " and %" PRIu64, s,
        min, max);
  uint64_t v = 0;
  bool overflow = false;
  const char *p = s;
  for (; is_digit (*p); p++)
    {
      unsigned d = (unsigned)(*p - '0');
      if (v > (UINT64_MAX - d) / 10)
        overflow = true;
      else
        v = v * 10 + d;
    }
  if (*p != '\0')
    return csr_error_set (
        err, EINVAL, "invalid number '%s': expected an integer between %" PRIu64 " and %" PRIu64, s,
        min, max);
  if (overflow || v < min || v > max)
    return csr_error_set (err, ERANGE,
                          "number '%s' is out of range: expected an integer between %" PRIu64
                          " and %" PRIu64,
                          s, min, max);
  *out = v;
  return 0;
}

/* ------------------------------------------------------------ environment */

int
csr_parse_env (const char *s, size_t *key_len, bool *has_value, csr_error **err)
{
  if (s == NULL)
    s = "";
  size_t n = strcspn (s, "=");
  if (n == 0)
    return csr_error_set (err, EINVAL, "invalid environment variable '%s': the name is empty", s);
  for (size_t i = 0; i < n; i++)
    {
      char c = s[i];
      if (!(is_alpha (c) || c == '_' || (i > 0 && is_digit (c))))
        return csr_error_set (err, EINVAL,
                              "invalid environment variable name '%.*s': use letters, digits "
                              "and '_', not starting with a digit",
                              (int)n, s);
    }
  if (key_len)
    *key_len = n;
  if (has_value)
    *has_value = s[n] == '=';
  return 0;
}
