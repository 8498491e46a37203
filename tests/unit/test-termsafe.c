/* The terminal neutraliser: what a snippet prints can't act on the caller's terminal. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/bbuf.h"
#include "supervisor/capture.h"
#include "util/termsafe.h"
#include "util/utf8.h"

/* render (IN) must give exactly OUT (string literals, may hold NULs). */
#define RENDER(in, out) check_render (in, sizeof (in) - 1, out, sizeof (out) - 1, #in)

/* Nothing a terminal acts on: valid UTF-8 (so no raw C1 byte), no C0 but \n,
 * \t and the CR of CRLF, no DEL, no C1 as UTF-8, no bidi control. */
static void
assert_inert (const char *s, size_t n, const char *what)
{
  const unsigned char *p = (const unsigned char *)s;
  cr_assert (csr_utf8_valid (s, n), "%s: the output is not UTF-8", what);
  for (size_t i = 0; i < n;)
    {
      unsigned c = p[i];
      size_t k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
      if (k == 2)
        c = (c & 0x1fu) << 6 | (p[i + 1] & 0x3fu);
      else if (k == 3)
        c = (c & 0x0fu) << 12 | (p[i + 1] & 0x3fu) << 6 | (p[i + 2] & 0x3fu);
      cr_assert (c >= 0x20 || c == '\n' || c == '\t'
                     || (c == '\r' && i + 1 < n && p[i + 1] == '\n'),
                 "%s: control 0x%02x at %zu", what, c, i);
      cr_assert (!(c >= 0x7f && c <= 0x9f), "%s: U+%04X at %zu", what, c, i);
      cr_assert (!(c == 0x61c || c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e)
                   || (c >= 0x2066 && c <= 0x2069)),
                 "%s: bidi control U+%04X at %zu", what, c, i);
      i += k;
    }
}

static void
check_render (const char *in, size_t in_len, const char *want, size_t want_len, const char *what)
{
  size_t n = 12345;
  char *got = csr_termsafe (in, in_len, &n);
  cr_assert_not_null (got);
  cr_assert_eq (n, want_len, "%s: length %zu, expected %zu: '%s'", what, n, want_len, got);
  cr_assert (memcmp (got, want, want_len) == 0, "%s: got '%s', expected '%s'", what, got, want);
  cr_assert_eq (got[n], '\0', "%s: not NUL-terminated", what);
  assert_inert (got, n, what);
  cr_assert_eq (csr_termsafe_clean (in, in_len), in_len == want_len && memcmp (in, want, n) == 0,
                "%s: csr_termsafe_clean disagrees", what);
  free (got);
}

Test (termsafe, plain_text_unchanged)
{
  RENDER ("", "");
  RENDER ("hello, world\n", "hello, world\n");
  RENDER ("tab\there\r\nCRLF\n", "tab\there\r\nCRLF\n");
  RENDER ("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad\n",
          "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad\n");
  RENDER ("carets ^[ and \\x1b stay as they are", "carets ^[ and \\x1b stay as they are");
  /* U+00A0 and U+2028 are not controls a terminal acts on. */
  RENDER ("\xc2\xa0\xe2\x80\xa8", "\xc2\xa0\xe2\x80\xa8");
}

Test (termsafe, osc52_clipboard)
{
  RENDER ("\x1b]52;c;aGVsbG8=\x07", "^[]52;c;aGVsbG8=^G");
  RENDER ("\x1b]52;c;aGVsbG8=\x1b\\", "^[]52;c;aGVsbG8=^[\\");
}

Test (termsafe, osc8_hyperlink_and_title)
{
  RENDER ("\x1b]8;;http://evil/\x1b\\text\x1b]8;;\x1b\\", "^[]8;;http://evil/^[\\text^[]8;;^[\\");
  RENDER ("\x1b]0;title\x07", "^[]0;title^G");
}

Test (termsafe, csi_clear_screen)
{
  RENDER ("\x1b[2J\x1b[H\x1b[31mred", "^[[2J^[[H^[[31mred");
}

Test (termsafe, bare_cr_backspace_del_nul)
{
  RENDER ("fake\rcsrun run: healed\n", "fake^Mcsrun run: healed\n");
  RENDER ("end\r", "end^M");
  RENDER ("\r\r\n", "^M\r\n");
  RENDER ("ab\bc\x7f", "ab^Hc^?");
  RENDER ("a\0b\x01\x1f", "a^@b^A^_");
  RENDER ("\v\f", "^K^L");
}

Test (termsafe, c1_csi)
{
  RENDER ("\x9b"
          "31m",
          "\\x9b31m"); /* raw: not UTF-8 */
  RENDER ("\xc2\x9b"
          "31m",
          "<U+009B>31m"); /* U+009B as UTF-8 */
  RENDER ("\xc2\x80\xc2\x9f\xc2\x9d", "<U+0080><U+009F><U+009D>");
}

Test (termsafe, bidi_overrides)
{
  RENDER ("\xe2\x80\xae"
          "abc\xe2\x80\xac",
          "<U+202E>abc<U+202C>");
  RENDER ("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xad", "<U+202A><U+202B><U+202D>");
  RENDER ("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", "<U+2066><U+2067><U+2068><U+2069>");
  RENDER ("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "<U+200E><U+200F><U+061C>");
}

Test (termsafe, invalid_utf8)
{
  RENDER ("\xff\xfe", "\\xff\\xfe");
  RENDER ("\xc0\xaf", "\\xc0\\xaf");          /* overlong */
  RENDER ("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* surrogate */
  RENDER ("caf\xe9!", "caf\\xe9!");           /* latin-1 */
  RENDER ("\xe2\x82", "\\xe2\\x82");          /* truncated at the end */
}

/* Output is printed as head, marker, tail, each rendered on its own: a
 * sequence cut at the boundary must not survive as raw bytes on either side. */
Test (termsafe, cut_at_the_boundary)
{
  static const char *const whole[] = { "\xc2\x9b", "\xe2\x80\xae", "\x1b]52;c;aGk=\x07", "\r\n" };
  static const char *const want_head[] = { "\\xc2", "\\xe2", "^[", "^M" };
  for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
    for (size_t cut = 1; cut < strlen (whole[i]); cut++)
      {
        size_t n1, n2;
        char *a = csr_termsafe (whole[i], cut, &n1);
        char *b = csr_termsafe (whole[i] + cut, strlen (whole[i]) - cut, &n2);
        cr_assert (a && b);
        assert_inert (a, n1, "head");
        assert_inert (b, n2, "tail");
        cr_assert (strncmp (a, want_head[i], strlen (want_head[i])) == 0, "head '%s'", a);
        free (a);
        free (b);
      }
  RENDER ("\x80\xae", "\\x80\\xae"); /* a tail starting inside a character */
}

/* Every byte value, alone and after each lead byte: never a raw control. */
Test (termsafe, exhaustive_two_bytes)
{
  for (unsigned a = 0; a < 256; a++)
    for (unsigned b = 0; b < 256; b++)
      {
        char in[2] = { (char)a, (char)b };
        size_t n;
        char *out = csr_termsafe (in, 2, &n);
        cr_assert_not_null (out);
        assert_inert (out, n, "pair");
        free (out);
      }
}

Test (termsafe, str)
{
  char *s = csr_termsafe_str ("called as `x(\"\x1b]0;t\x07\")`");
  cr_assert_str_eq (s, "called as `x(\"^[]0;t^G\")`");
  free (s);
  s = csr_termsafe_str (NULL);
  cr_assert_str_eq (s, "");
  free (s);
}

Test (termsafe, json)
{
  const char in[] = "{\"s\":\"a\\u001b\xc2\x9b\xe2\x80\xae\x7f\xd8\x9c\xc3\xa9\xe2\x82\xac\"}";
  size_t n;
  char *out = csr_termsafe_json (in, sizeof in - 1, &n);
  cr_assert_str_eq (out, "{\"s\":\"a\\u001b\\u009b\\u202e\\u007f\\u061c\xc3\xa9\xe2\x82\xac\"}");
  cr_assert_eq (n, strlen (out));
  assert_inert (out, n, "json");
  free (out);
}

/* csr_capture_print renders the kept head and tail each on its own. */
static char *
print_to_pipe (const struct csr_bbuf *b, bool safe, size_t *n)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  csr_capture_print (p[1], b, safe);
  close (p[1]);
  static char buf[4096];
  *n = 0;
  ssize_t r;
  while ((r = read (p[0], buf + *n, sizeof buf - 1 - *n)) > 0)
    *n += (size_t)r;
  close (p[0]);
  buf[*n] = '\0';
  return buf;
}

Test (termsafe, capture_print_head_and_tail)
{
  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init (&b, 8), 0); /* 4 bytes of head, 4 of tail */
  static const char data[] = "abc\xc2"
                             "DROPPED"
                             "\x9bxyz";
  csr_bbuf_append (&b, data, sizeof data - 1);
  size_t n;
  char *got = print_to_pipe (&b, true, &n);
  cr_assert_str_eq (got, "abc\\xc2\n[... csrun: 7 bytes dropped ...]\n\\x9bxyz");
  assert_inert (got, n, "capture");
  got = print_to_pipe (&b, false, &n);
  cr_assert_eq (n, 4 + strlen ("\n[... csrun: 7 bytes dropped ...]\n") + 4);
  cr_assert (memcmp (got, "abc\xc2", 4) == 0 && memcmp (got + n - 4, "\x9bxyz", 4) == 0,
             "raw: the exact bytes");
  csr_bbuf_release (&b);
}
