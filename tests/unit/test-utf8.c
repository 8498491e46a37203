#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

#define VALID(lit) cr_assert (csr_utf8_valid (lit, sizeof (lit) - 1), "should be valid: %s", #lit)
#define INVALID(lit)                                                                               \
  cr_assert (!csr_utf8_valid (lit, sizeof (lit) - 1), "should be invalid: %s", #lit)

/* sanitize (IN) must give exactly OUT (both string literals, may hold NULs). */
#define SANITIZE(in, out) check_sanitize (in, sizeof (in) - 1, out, sizeof (out) - 1, #in)

#define FFFD "\xef\xbf\xbd"

static void
check_sanitize (const char *in, size_t in_len, const char *want, size_t want_len, const char *what)
{
  size_t n = 12345;
  char *got = csr_utf8_sanitize (in, in_len, &n);
  cr_assert_not_null (got);
  cr_assert_eq (n, want_len, "%s: length %zu, expected %zu", what, n, want_len);
  cr_assert (memcmp (got, want, want_len) == 0, "%s: output differs", what);
  cr_assert_eq (got[n], '\0', "%s: not NUL-terminated", what);
  cr_assert (csr_utf8_valid (got, n), "%s: sanitized output is not valid", what);
  free (got);
}

Test (utf8, valid_ascii_and_empty)
{
  cr_assert (csr_utf8_valid ("", 0));
  cr_assert (csr_utf8_valid (NULL, 0));
  VALID ("hello, world");
  VALID ("a\0b"); /* NUL is a valid character */
  VALID ("\x7f");
  VALID ("0123456789abcdefghijklmnopqrstuvwxyz 0123456789");
}

Test (utf8, valid_multibyte)
{
  VALID ("\xc2\x80");             /* U+0080, smallest 2-byte */
  VALID ("\xc3\xa9t\xc3\xa9");    /* "été" */
  VALID ("\xdf\xbf");             /* U+07FF */
  VALID ("\xe0\xa0\x80");         /* U+0800, smallest 3-byte */
  VALID ("\xe2\x82\xac");         /* € */
  VALID ("\xed\x9f\xbf");         /* U+D7FF, just below the surrogates */
  VALID ("\xee\x80\x80");         /* U+E000, just above */
  VALID ("\xef\xbf\xbd");         /* U+FFFD */
  VALID ("\xef\xbf\xbf");         /* U+FFFF */
  VALID ("\xf0\x90\x80\x80");     /* U+10000, smallest 4-byte */
  VALID ("\xf0\x9f\x98\x80");     /* 😀 */
  VALID ("\xf3\xbf\xbf\xbf");     /* U+FFFFF */
  VALID ("\xf4\x8f\xbf\xbf");     /* U+10FFFF, the largest */
  VALID ("abcdefgh\xe2\x82\xac"); /* after the 8-byte ASCII fast path */
  VALID ("abcdefghijklmno\xf0\x9f\x98\x80xyz");
}

Test (utf8, invalid_lead_bytes)
{
  INVALID ("\x80");
  INVALID ("\xbf");
  INVALID ("abcdefgh\x80");
  INVALID ("\xc0\x80"); /* overlong NUL */
  INVALID ("\xc1\xbf"); /* overlong */
  INVALID ("\xf5\x80\x80\x80");
  INVALID ("\xf8\x88\x80\x80\x80");
  INVALID ("\xfe");
  INVALID ("\xff");
}

Test (utf8, invalid_overlong)
{
  INVALID ("\xe0\x80\x80"); /* overlong U+0000 */
  INVALID ("\xe0\x9f\xbf"); /* overlong U+07FF */
  INVALID ("\xf0\x80\x80\x80");
  INVALID ("\xf0\x8f\xbf\xbf"); /* overlong U+FFFF */
}

Test (utf8, invalid_surrogates)
{
  INVALID ("\xed\xa0\x80");             /* U+D800 */
  INVALID ("\xed\xaf\xbf");             /* U+DBFF */
  INVALID ("\xed\xb0\x80");             /* U+DC00 */
  INVALID ("\xed\xbf\xbf");             /* U+DFFF */
  INVALID ("\xed\xa0\xbd\xed\xb8\x80"); /* CESU-8 pair */
}

Test (utf8, invalid_above_max)
{
  INVALID ("\xf4\x90\x80\x80"); /* U+110000 */
  INVALID ("\xf4\xbf\xbf\xbf");
}

Test (utf8, invalid_truncated_and_bad_continuation)
{
  INVALID ("\xc3");
  INVALID ("\xe2\x82");
  INVALID ("\xe2");
  INVALID ("\xf0\x9f\x98");
  INVALID ("\xf0\x9f");
  INVALID ("abc\xf0");
  INVALID ("\xc3\x41"); /* continuation expected */
  INVALID ("\xe2\x82\x41");
  INVALID ("\xf0\x9f\x98\xc0");
  INVALID ("\xc3\xa9\xa9"); /* stray continuation after a good character */
}

Test (utf8, sanitize_valid_is_a_copy)
{
  SANITIZE ("", "");
  SANITIZE ("plain", "plain");
  SANITIZE ("a\0b", "a\0b");
  SANITIZE ("\xf0\x9f\x98\x80 \xe2\x82\xac", "\xf0\x9f\x98\x80 \xe2\x82\xac");
}

Test (utf8, sanitize_single_bytes)
{
  SANITIZE ("\x80", FFFD);
  SANITIZE ("a\xff"
            "b",
            "a" FFFD "b");
  SANITIZE ("\xc0\x80", FFFD FFFD); /* C0 never starts a sequence: two subparts */
  SANITIZE ("\xc1\xbf", FFFD FFFD);
  SANITIZE ("\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD);
  SANITIZE ("\x80\x80\x80", FFFD FFFD FFFD);
}

Test (utf8, sanitize_maximal_subparts)
{
  /* Truncated sequences: the whole valid prefix is one subpart. */
  SANITIZE ("\xe2\x82", FFFD);
  SANITIZE ("\xe2\x82x", FFFD "x");
  SANITIZE ("\xf0\x9f\x98", FFFD);
  SANITIZE ("\xf0\x9f\x98x", FFFD "x");
  SANITIZE ("\xf0\x9f" FFFD, FFFD FFFD);
  SANITIZE ("\xc3", FFFD);
  SANITIZE ("\xc3\xc3\xa9", FFFD "\xc3\xa9");
  /* The second byte is out of range for the lead: the lead alone is the
   * subpart, the next byte is looked at again. */
  SANITIZE ("\xe0\x80\x80", FFFD FFFD FFFD); /* overlong */
  SANITIZE ("\xed\xa0\x80", FFFD FFFD FFFD); /* surrogate */
  SANITIZE ("\xf0\x80\x80\x80", FFFD FFFD FFFD FFFD);
  SANITIZE ("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* > U+10FFFF */
  /* Unicode 15, table 3-8 example: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 */
  SANITIZE ("\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64",
            "a" FFFD FFFD FFFD "b" FFFD "c" FFFD FFFD "d");
  /* A bad byte in the middle of a long ASCII run. */
  SANITIZE ("abcdefghij\xffklmnopqrstuvwxyz", "abcdefghij" FFFD "klmnopqrstuvwxyz");
  /* Same length in and out (a 3-byte subpart) must still be repaired. */
  SANITIZE ("\xf1\x80\x80"
            "A",
            FFFD "A");
}

Test (utf8, sanitize_null_out_len)
{
  char *s = csr_utf8_sanitize ("\xffok", 3, NULL);
  cr_assert_not_null (s);
  cr_assert_str_eq (s, FFFD "ok");
  free (s);
}

/* Every 1- and 2-byte input: sanitize output is valid, and valid input comes
 * back unchanged. */
Test (utf8, exhaustive_two_bytes)
{
  for (unsigned a = 0; a < 256; a++)
    for (unsigned b = 0; b < 256; b++)
      {
        char in[2] = { (char)a, (char)b };
        bool v = csr_utf8_valid (in, 2);
        bool expect_v
            = (a < 0x80 && b < 0x80) || (a >= 0xc2 && a <= 0xdf && b >= 0x80 && b <= 0xbf);
        cr_assert_eq (v, expect_v, "%02x %02x", a, b);
        size_t n;
        char *out = csr_utf8_sanitize (in, 2, &n);
        cr_assert (csr_utf8_valid (out, n));
        if (v)
          cr_assert (n == 2 && memcmp (out, in, 2) == 0);
        free (out);
      }
}
