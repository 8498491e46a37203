/* PEP 263 coding declarations, as CPython's tokenizer finds them. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "util/pycoding.h"

static const char *
find (const char *src)
{
  static char name[64];
  size_t n = csr_pycoding_find (src, strlen (src), name, sizeof name);
  return n ? name : NULL;
}

#define FOUND(src, want) cr_assert_str_eq (find (src) ? find (src) : "(none)", want, "%s", #src)
#define NONE(src) cr_assert_null (find (src), "%s: found %s", #src, find (src))

Test (pycoding, emacs_vim_and_plain_forms)
{
  FOUND ("# -*- coding: latin-1 -*-\nx = 1\n", "latin-1");
  FOUND ("# vim: set fileencoding=iso-8859-15 :\n", "iso-8859-15");
  FOUND ("#coding=cp1252\n", "cp1252");
  FOUND ("  \t# coding:   utf_8\n", "utf_8");
  FOUND ("# This Python file uses the following encoding: koi8-r\n", "koi8-r");
  FOUND ("\xef\xbb\xbf# coding: utf-8\n", "utf-8");
  FOUND ("# coding: latin-1", "latin-1"); /* no newline at the end */
}

Test (pycoding, line_two_only_after_a_comment_or_blank_line)
{
  FOUND ("#!/usr/bin/env python3\n# -*- coding: latin-1 -*-\n", "latin-1");
  FOUND ("\n# coding: latin-1\n", "latin-1");
  FOUND ("   \r\n# coding: latin-1\n", "latin-1");
  NONE ("x = 1\n# coding: latin-1\n");
  NONE ("\n\n# coding: latin-1\n");
}

Test (pycoding, not_declarations)
{
  NONE ("x = 1  # coding: latin-1\n"); /* a comment after code */
  NONE ("s = '# coding: latin-1'\n");
  NONE ("# coding latin-1\n"); /* no ':' or '=' */
  NONE ("# coding: \n");       /* no name */
  NONE ("# encoding\n");
  NONE ("");
  /* The first "coding[:=]" with a name counts, later ones are not looked at. */
  FOUND ("# coding: ascii coding: latin-1\n", "ascii");
  FOUND ("# coding and coding=latin-1\n", "latin-1");
}

Test (pycoding, utf8_spellings)
{
  cr_assert (csr_pycoding_is_utf8 ("utf-8"));
  cr_assert (csr_pycoding_is_utf8 ("UTF-8"));
  cr_assert (csr_pycoding_is_utf8 ("utf_8"));
  cr_assert (csr_pycoding_is_utf8 ("utf8"));
  cr_assert (csr_pycoding_is_utf8 ("utf-8-unix"));
  cr_assert (!csr_pycoding_is_utf8 ("utf-7"));
  cr_assert (!csr_pycoding_is_utf8 ("latin-1"));
  cr_assert (!csr_pycoding_is_utf8 ("utf-16"));
  cr_assert (!csr_pycoding_is_utf8 ("utf8-but-a-long-name"));
}

static int
check (const char *src, char *enc, const char **msg)
{
  static char buf[256];
  csr_error *e = NULL;
  int rc = csr_pycoding_check (src, strlen (src), enc, 64, &e);
  *msg = "";
  if (rc < 0)
    {
      snprintf (buf, sizeof buf, "%s", csr_error_text (e));
      *msg = buf;
      csr_error_free (e);
    }
  return rc;
}

Test (pycoding, check)
{
  char enc[64];
  const char *msg;
  cr_assert_eq (check ("print('caf\xc3\xa9')\n", enc, &msg), 0);
  cr_assert_str_eq (enc, "");
  cr_assert_eq (check ("# -*- coding: latin-1 -*-\nprint('caf\xe9')\n", enc, &msg), 0);
  cr_assert_str_eq (enc, "latin-1");
  /* UTF-8 bytes that declare another encoding: accepted, the name is reported. */
  cr_assert_eq (check ("# coding: utf-7\nprint(1)\n", enc, &msg), 0);
  cr_assert_str_eq (enc, "utf-7");
  cr_assert_eq (check ("# coding: utf-8\nprint(1)\n", enc, &msg), 0);
  cr_assert_str_eq (enc, "");

  cr_assert_eq (check ("print('caf\xe9')\n", enc, &msg), -1);
  cr_assert (strstr (msg, "not valid UTF-8 and declares no encoding"), "%s", msg);
  cr_assert_eq (check ("# coding: utf-8\nprint('caf\xe9')\n", enc, &msg), -1);
  cr_assert (strstr (msg, "declares coding: utf-8"), "%s", msg);
  cr_assert_eq (check ("\xef\xbb\xbf# coding: latin-1\nprint('caf\xe9')\n", enc, &msg), -1);
  cr_assert (strstr (msg, "byte order mark"), "%s", msg);
  cr_assert_eq (check ("x = 1\n# coding: latin-1\nprint('caf\xe9')\n", enc, &msg), -1);
}
