/* The small util/ helpers that several parts of csrun share. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "util/json.h"

/* ------------------------------------------------------------------ json getters */

static yajl_val
parse (const char *s)
{
  char ebuf[128];
  yajl_val t = yajl_tree_parse (s, ebuf, sizeof ebuf);
  cr_assert_not_null (t, "%s: %s", s, ebuf);
  return t;
}

Test (json, int_member_or_default)
{
  cleanup_yajl_val yajl_val t
      = parse ("{\"a\":5,\"neg\":-3,\"f\":1.5,\"s\":\"7\",\"n\":null,\"big\":9000000000}");
  cr_assert_eq (csr_json_int (t, "a", 0), 5);
  cr_assert_eq (csr_json_int (t, "neg", 0), -3);
  cr_assert_eq (csr_json_int (t, "big", 0), 9000000000LL);
  /* Not an integer, missing, or not an object: the default. */
  cr_assert_eq (csr_json_int (t, "f", -1), -1);
  cr_assert_eq (csr_json_int (t, "s", -1), -1);
  cr_assert_eq (csr_json_int (t, "n", 42), 42);
  cr_assert_eq (csr_json_int (t, "missing", 7), 7);
  cr_assert_eq (csr_json_int (NULL, "a", 9), 9);
  cr_assert_eq (csr_json_int (csr_json_get (t, "a"), "a", 9), 9);
}

Test (json, u64_member_is_a_count)
{
  cleanup_yajl_val yajl_val t = parse ("{\"a\":5,\"zero\":0,\"neg\":-3,\"s\":\"7\"}");
  cr_assert_eq (csr_json_u64 (t, "a"), 5);
  cr_assert_eq (csr_json_u64 (t, "zero"), 0);
  cr_assert_eq (csr_json_u64 (t, "neg"), 0);
  cr_assert_eq (csr_json_u64 (t, "s"), 0);
  cr_assert_eq (csr_json_u64 (t, "missing"), 0);
  cr_assert_eq (csr_json_u64 (NULL, "a"), 0);
}
