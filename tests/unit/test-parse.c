#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "util/parse.h"

#define KiB (UINT64_C (1) << 10)
#define MiB (UINT64_C (1) << 20)
#define GiB (UINT64_C (1) << 30)
#define TiB (UINT64_C (1) << 40)

/* ------------------------------------------------------------------ sizes */

static void
size_ok (const char *s, uint64_t max, uint64_t want)
{
  csr_error *err = NULL;
  uint64_t v = 12345;
  int r = csr_parse_size (s, max, &v, &err);
  cr_assert_eq (r, 0, "'%s' should parse: %s", s, err ? err->msg : "");
  cr_assert_null (err);
  cr_assert_eq (v, want, "'%s' -> %llu, expected %llu", s, (unsigned long long)v,
                (unsigned long long)want);
}

/* Fails, leaves *out alone, and the message contains WANT_MSG. */
static void
size_bad (const char *s, uint64_t max, const char *want_msg)
{
  csr_error *err = NULL;
  uint64_t v = 777;
  int r = csr_parse_size (s, max, &v, &err);
  cr_assert_lt (r, 0, "'%s' should be rejected", s ? s : "(null)");
  cr_assert_not_null (err);
  cr_assert_eq (v, 777);
  cr_assert (strstr (err->msg, want_msg) != NULL, "'%s': message '%s' lacks '%s'", s ? s : "(null)",
             err->msg, want_msg);
  csr_error_free (err);
}

Test (parse_size, plain_and_suffixes)
{
  size_ok ("0", UINT64_MAX, 0);
  size_ok ("4096", UINT64_MAX, 4096);
  size_ok ("007", UINT64_MAX, 7);
  size_ok ("100b", UINT64_MAX, 100);
  size_ok ("100B", UINT64_MAX, 100);
  size_ok ("64k", UINT64_MAX, 64 * KiB);
  size_ok ("64K", UINT64_MAX, 64 * KiB);
  size_ok ("64KB", UINT64_MAX, 64 * KiB);
  size_ok ("64kb", UINT64_MAX, 64 * KiB);
  size_ok ("64Ki", UINT64_MAX, 64 * KiB);
  size_ok ("64KiB", UINT64_MAX, 64 * KiB);
  size_ok ("64kib", UINT64_MAX, 64 * KiB);
  size_ok ("512M", UINT64_MAX, 512 * MiB);
  size_ok ("100MB", UINT64_MAX, 100 * MiB);
  size_ok ("2GiB", UINT64_MAX, 2 * GiB);
  size_ok ("2g", UINT64_MAX, 2 * GiB);
  size_ok ("3T", UINT64_MAX, 3 * TiB);
  size_ok ("3TiB", UINT64_MAX, 3 * TiB);
}

Test (parse_size, fractions)
{
  size_ok ("1.5G", UINT64_MAX, 3 * GiB / 2);
  size_ok ("1.5K", UINT64_MAX, 1536);
  size_ok ("0.5M", UINT64_MAX, 512 * KiB);
  size_ok ("0.25KiB", UINT64_MAX, 256);
  size_ok ("1.0k", UINT64_MAX, 1024);
  size_ok ("0.1k", UINT64_MAX, 102);    /* floor (102.4) */
  size_ok ("0.999k", UINT64_MAX, 1022); /* floor (1022.976) */
  size_ok ("2.75T", UINT64_MAX, 11 * TiB / 4);
  /* Exactly one byte: 2^-40 written out in full (40 decimals). */
  size_ok ("0.0000000000009094947017729282379150390625T", UINT64_MAX, 1);
  size_ok ("0.0000000000009094947017729282379150390624T", UINT64_MAX, 0);
  size_ok ("0.00000000000090949470177292823791503906250000001T", UINT64_MAX, 1);
}

Test (parse_size, max_boundary)
{
  size_ok ("64G", 64 * GiB, 64 * GiB);
  size_ok ("68719476736", 64 * GiB, 64 * GiB);
  size_bad ("68719476737", 64 * GiB, "size '68719476737' is too large (at most 64 GiB)");
  size_bad ("99T", 64 * GiB, "size '99T' is too large (at most 64 GiB)");
  size_bad ("64.1G", 64 * GiB, "at most 64 GiB");
  size_bad ("2M", 1536 * KiB, "at most 1536 KiB");
  size_bad ("2M", 3 * MiB / 2, "at most 1536 KiB");
  size_bad ("2M", 1000, "at most 1000 bytes");
  size_bad ("2", 1, "at most 1 byte)");
  size_bad ("1", 0, "at most 0 bytes");
  size_bad ("2T", TiB, "at most 1 TiB");
  size_ok ("18446744073709551615", UINT64_MAX, UINT64_MAX);
}

Test (parse_size, overflow)
{
  size_bad ("99999999999999999999", UINT64_MAX, "is too large");
  size_bad ("18446744073709551616", UINT64_MAX, "is too large");
  size_bad ("16777216T", UINT64_MAX, "is too large"); /* 2^24 TiB = 2^64 */
  size_ok ("16777215.99999999T", UINT64_MAX, UINT64_C (18446744073709540620));
  size_ok ("16777215T", UINT64_MAX, UINT64_C (16777215) << 40);
  size_bad ("99999999999999999999999999999999G", 64 * GiB, "too large (at most 64 GiB)");
}

Test (parse_size, junk)
{
  const char *hint = "expected a number with an optional K, M, G or T suffix";
  size_bad ("abc", UINT64_MAX,
            "invalid size 'abc': expected a number with an optional K, M, G or T suffix");
  size_bad ("", UINT64_MAX, "invalid size ''");
  size_bad (NULL, UINT64_MAX, hint);
  size_bad ("-1", UINT64_MAX, hint);
  size_bad ("+1", UINT64_MAX, hint);
  size_bad (" 1", UINT64_MAX, hint);
  size_bad ("1 ", UINT64_MAX, hint);
  size_bad ("1 K", UINT64_MAX, hint);
  size_bad ("K", UINT64_MAX, hint);
  size_bad (".5K", UINT64_MAX, hint);
  size_bad ("1.K", UINT64_MAX, hint);
  size_bad ("1..5K", UINT64_MAX, hint);
  size_bad ("1KK", UINT64_MAX, hint);
  size_bad ("1KiBB", UINT64_MAX, hint);
  size_bad ("1iB", UINT64_MAX, hint);
  size_bad ("1i", UINT64_MAX, hint);
  size_bad ("1P", UINT64_MAX, hint);
  size_bad ("1e3", UINT64_MAX, hint);
  size_bad ("0x10", UINT64_MAX, hint);
  size_bad ("1,5G", UINT64_MAX, hint);
  size_bad ("1.5", UINT64_MAX, "a fraction needs a K, M, G or T suffix");
  size_bad ("1.5B", UINT64_MAX, "a fraction needs");
}

/* -------------------------------------------------------------- durations */

static void
dur_ok (const char *s, double max, double want)
{
  csr_error *err = NULL;
  double v = -1;
  int r = csr_parse_duration (s, max, &v, &err);
  cr_assert_eq (r, 0, "'%s' should parse: %s", s, err ? err->msg : "");
  cr_assert_null (err);
  cr_assert (fabs (v - want) <= 1e-12 * (want > 1 ? want : 1), "'%s' -> %.17g, expected %.17g", s,
             v, want);
}

static void
dur_bad (const char *s, double max, const char *want_msg)
{
  csr_error *err = NULL;
  double v = -7;
  int r = csr_parse_duration (s, max, &v, &err);
  cr_assert_lt (r, 0, "'%s' should be rejected", s ? s : "(null)");
  cr_assert_not_null (err);
  cr_assert_eq (v, -7);
  cr_assert (strstr (err->msg, want_msg) != NULL, "'%s': message '%s' lacks '%s'", s ? s : "(null)",
             err->msg, want_msg);
  csr_error_free (err);
}

Test (parse_duration, good)
{
  dur_ok ("30", 3600, 30);
  dur_ok ("1.5", 3600, 1.5);
  cr_assert_eq (({
                  double d = 0;
                  csr_parse_duration ("0.1", 10, &d, NULL);
                  d;
                }),
                0.1);
  dur_ok ("500ms", 3600, 0.5);
  dur_ok ("1ms", 3600, 0.001);
  dur_ok ("2s", 3600, 2);
  dur_ok ("2.5s", 3600, 2.5);
  dur_ok ("5m", 3600, 300);
  dur_ok ("1.5m", 3600, 90);
  dur_ok ("1h", 3600, 3600);
  dur_ok ("0.5h", 3600, 1800);
  dur_ok ("3600", 3600, 3600); /* == max is allowed */
  dur_ok ("60m", 3600, 3600);
  dur_ok ("0.001", 3600, 0.001);
}

Test (parse_duration, zero_and_limits)
{
  dur_bad ("0", 3600, "duration must be greater than zero");
  dur_bad ("0s", 3600, "duration must be greater than zero");
  dur_bad ("0.0", 3600, "duration must be greater than zero");
  dur_bad ("0ms", 3600, "duration must be greater than zero");
  dur_bad ("3601", 3600, "duration '3601' is too large (at most 1h)");
  dur_bad ("2h", 3600, "duration '2h' is too large (at most 1h)");
  dur_bad ("61m", 3600, "at most 1h");
  dur_bad ("100", 90, "at most 90s");
  dur_bad ("200", 120, "at most 2m");
  dur_bad ("100", 30, "at most 30s");
  dur_bad ("1", 0.5, "at most 0.5s");
  dur_bad ("86401", 86400, "at most 24h");
  /* 400 digits: not finite as a double. */
  char big[401];
  memset (big, '9', 400);
  big[400] = '\0';
  dur_bad (big, 1e308, "is too large");
}

Test (parse_duration, junk)
{
  const char *hint = "expected a number of seconds with an optional ms, s, m or h suffix";
  dur_bad ("", 3600, hint);
  dur_bad (NULL, 3600, hint);
  dur_bad ("abc", 3600, "invalid duration 'abc': expected a number of seconds");
  dur_bad ("-1", 3600, hint);
  dur_bad ("+1", 3600, hint);
  dur_bad (" 1", 3600, hint);
  dur_bad ("1 ", 3600, hint);
  dur_bad ("1 s", 3600, hint);
  dur_bad ("1.", 3600, hint);
  dur_bad (".5", 3600, hint);
  dur_bad ("1,5", 3600, hint);
  dur_bad ("1e3", 3600, hint);
  dur_bad ("inf", 3600, hint);
  dur_bad ("nan", 3600, hint);
  dur_bad ("0x10", 3600, hint);
  dur_bad ("1d", 3600, hint);
  dur_bad ("1sec", 3600, hint);
  dur_bad ("1mss", 3600, hint);
  dur_bad ("1hm", 3600, hint);
  dur_bad ("1S", 3600, hint);
}

/* --------------------------------------------------------------- integers */

static void
uint_ok (const char *s, uint64_t min, uint64_t max, uint64_t want)
{
  csr_error *err = NULL;
  uint64_t v = 424242;
  cr_assert_eq (csr_parse_uint (s, min, max, &v, &err), 0, "'%s': %s", s, err ? err->msg : "");
  cr_assert_eq (v, want);
}

static void
uint_bad (const char *s, uint64_t min, uint64_t max, const char *want_msg)
{
  csr_error *err = NULL;
  uint64_t v = 424242;
  cr_assert_lt (csr_parse_uint (s, min, max, &v, &err), 0, "'%s' should be rejected",
                s ? s : "(null)");
  cr_assert_not_null (err);
  cr_assert_eq (v, 424242);
  cr_assert (strstr (err->msg, want_msg) != NULL, "message '%s' lacks '%s'", err->msg, want_msg);
  csr_error_free (err);
}

Test (parse_uint, good_and_boundaries)
{
  uint_ok ("0", 0, 10, 0);
  uint_ok ("10", 0, 10, 10);
  uint_ok ("1", 1, 1, 1);
  uint_ok ("0042", 0, 100, 42);
  uint_ok ("18446744073709551615", 0, UINT64_MAX, UINT64_MAX);
  uint_ok ("65536", 1, 65536, 65536);
}

Test (parse_uint, range_and_overflow)
{
  uint_bad ("0", 1, 65536, "number '0' is out of range: expected an integer between 1 and 65536");
  uint_bad ("65537", 1, 65536, "number '65537' is out of range");
  uint_bad ("11", 0, 10, "between 0 and 10");
  uint_bad ("18446744073709551616", 0, UINT64_MAX, "is out of range");
  uint_bad ("99999999999999999999", 0, UINT64_MAX, "number '99999999999999999999' is out of range");
  uint_bad ("99999999999999999999", 0, 100, "between 0 and 100");
}

Test (parse_uint, junk)
{
  const char *m = "expected an integer between 1 and 9";
  uint_bad ("", 1, 9, "invalid number '': expected an integer between 1 and 9");
  uint_bad (NULL, 1, 9, m);
  uint_bad ("abc", 1, 9, "invalid number 'abc'");
  uint_bad ("-1", 1, 9, m);
  uint_bad ("+1", 1, 9, m);
  uint_bad (" 1", 1, 9, m);
  uint_bad ("1 ", 1, 9, m);
  uint_bad ("1.0", 1, 9, m);
  uint_bad ("0x5", 1, 9, m);
  uint_bad ("5k", 1, 9, m);
}

/* ------------------------------------------------------------ environment */

static void
env_ok (const char *s, size_t want_len, bool want_value)
{
  csr_error *err = NULL;
  size_t kl = 999;
  bool hv = !want_value;
  cr_assert_eq (csr_parse_env (s, &kl, &hv, &err), 0, "'%s': %s", s, err ? err->msg : "");
  cr_assert_eq (kl, want_len, "'%s': key length %zu", s, kl);
  cr_assert_eq (hv, want_value, "'%s'", s);
}

static void
env_bad (const char *s, const char *want_msg)
{
  csr_error *err = NULL;
  size_t kl = 999;
  bool hv = true;
  cr_assert_lt (csr_parse_env (s, &kl, &hv, &err), 0, "'%s' should be rejected", s ? s : "(null)");
  cr_assert_not_null (err);
  cr_assert (strstr (err->msg, want_msg) != NULL, "message '%s' lacks '%s'", err->msg, want_msg);
  csr_error_free (err);
}

Test (parse_env, good)
{
  env_ok ("KEY=VALUE", 3, true);
  env_ok ("KEY", 3, false);
  env_ok ("KEY=", 3, true);
  env_ok ("_", 1, false);
  env_ok ("_x1=a=b", 3, true);
  env_ok ("PATH=/usr/bin:/bin", 4, true);
  env_ok ("a9_Z=", 4, true);
  env_ok ("X= spaces and = signs ", 1, true);
}

Test (parse_env, bad)
{
  env_bad ("", "the name is empty");
  env_bad (NULL, "the name is empty");
  env_bad ("=VALUE", "invalid environment variable '=VALUE': the name is empty");
  env_bad ("1KEY=x", "invalid environment variable name '1KEY'");
  env_bad ("KE-Y=x", "name 'KE-Y'");
  env_bad ("KE Y", "name 'KE Y'");
  env_bad ("K\xc3\xa9=x", "letters, digits and '_'");
  env_bad (" KEY=x", "name ' KEY'");
  env_bad ("KEY.x=1", "name 'KEY.x'");
}

Test (parse_env, null_outputs)
{
  cr_assert_eq (csr_parse_env ("A=b", NULL, NULL, NULL), 0);
  cr_assert_lt (csr_parse_env ("=b", NULL, NULL, NULL), 0);
}
