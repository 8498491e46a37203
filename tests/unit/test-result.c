#include "config.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "supervisor/result.h"

#define FFFD "\xef\xbf\xbd"

/* ------------------------------------------------------------- helpers */

static void
feed (struct csr_bbuf *b, size_t max, const char *data, size_t len)
{
  cr_assert_eq (csr_bbuf_init (b, max), 0);
  csr_bbuf_append (b, data, len);
}

static char *
to_json (const struct csr_run_result *r, size_t *len)
{
  char *doc = NULL;
  csr_error *err = NULL;
  size_t n = 0;
  int rc = csr_result_to_json (r, &doc, &n, &err);
  cr_assert_eq (rc, 0, "csr_result_to_json failed: %s", err ? err->msg : "");
  cr_assert_null (err);
  cr_assert_not_null (doc);
  /* One line, newline-terminated, no NUL inside. */
  cr_assert_gt (n, 2);
  cr_assert_eq (strlen (doc), n);
  cr_assert_eq (doc[n - 1], '\n');
  cr_assert_eq (strchr (doc, '\n'), doc + n - 1, "more than one line: %s", doc);
  cr_assert_eq (doc[0], '{');
  cr_assert_eq (doc[n - 2], '}');
  if (len)
    *len = n;
  return doc;
}

static yajl_val
parse_tree (const char *doc)
{
  char errbuf[256] = "";
  yajl_val t = yajl_tree_parse (doc, errbuf, sizeof errbuf);
  cr_assert_not_null (t, "not valid JSON (%s): %s", errbuf, doc);
  cr_assert (YAJL_IS_OBJECT (t));
  return t;
}

static yajl_val
get (yajl_val v, const char *key)
{
  cr_assert (YAJL_IS_OBJECT (v), "not an object when looking for '%s'", key);
  for (size_t i = 0; i < v->u.object.len; i++)
    if (strcmp (v->u.object.keys[i], key) == 0)
      return v->u.object.values[i];
  return NULL;
}

static long long
get_int (yajl_val v, const char *key)
{
  yajl_val x = get (v, key);
  cr_assert_not_null (x, "missing '%s'", key);
  cr_assert (YAJL_IS_INTEGER (x), "'%s' is not an integer", key);
  return YAJL_GET_INTEGER (x);
}

static const char *
get_str (yajl_val v, const char *key)
{
  yajl_val x = get (v, key);
  cr_assert_not_null (x, "missing '%s'", key);
  cr_assert (YAJL_IS_STRING (x), "'%s' is not a string", key);
  return YAJL_GET_STRING (x);
}

static bool
get_bool (yajl_val v, const char *key)
{
  yajl_val x = get (v, key);
  cr_assert_not_null (x, "missing '%s'", key);
  cr_assert (YAJL_IS_TRUE (x) || YAJL_IS_FALSE (x), "'%s' is not a boolean", key);
  return YAJL_IS_TRUE (x);
}

static void
expect_null (yajl_val v, const char *key)
{
  yajl_val x = get (v, key);
  cr_assert_not_null (x, "missing '%s'", key);
  cr_assert (YAJL_IS_NULL (x), "'%s' is not null", key);
}

/* The object's keys are exactly KEYS (NULL-terminated), in this order. */
static void
expect_keys (yajl_val v, const char *const *keys)
{
  size_t n = 0;
  while (keys[n])
    n++;
  cr_assert_eq (v->u.object.len, n, "object has %zu keys, expected %zu", v->u.object.len, n);
  for (size_t i = 0; i < n; i++)
    cr_assert_str_eq (v->u.object.keys[i], keys[i]);
}

/* yajl_tree strings stop at a NUL; collect the exact bytes of every string
 * value, with the key it belongs to, through the callback parser. */
struct strings
{
  size_t n;
  char key[16][32];
  char *val[16];
  size_t len[16];
  char cur[32];
};

static int
cb_key (void *ctx, const unsigned char *k, size_t len)
{
  struct strings *s = ctx;
  snprintf (s->cur, sizeof s->cur, "%.*s", (int)len, (const char *)k);
  return 1;
}

static int
cb_string (void *ctx, const unsigned char *v, size_t len)
{
  struct strings *s = ctx;
  if (s->n < 16)
    {
      snprintf (s->key[s->n], sizeof s->key[s->n], "%s", s->cur);
      s->val[s->n] = malloc (len + 1);
      memcpy (s->val[s->n], v, len);
      s->val[s->n][len] = '\0';
      s->len[s->n] = len;
      s->n++;
    }
  return 1;
}

static void
collect_strings (const char *doc, size_t len, struct strings *s)
{
  static const yajl_callbacks cbs = { .yajl_string = cb_string, .yajl_map_key = cb_key };
  memset (s, 0, sizeof *s);
  yajl_handle h = yajl_alloc (&cbs, NULL, s);
  cr_assert_not_null (h);
  cr_assert_eq (yajl_parse (h, (const unsigned char *)doc, len), yajl_status_ok);
  cr_assert_eq (yajl_complete_parse (h), yajl_status_ok);
  yajl_free (h);
}

/* The I-th string value stored under KEY is exactly WANT[0..WANT_LEN). */
static void
expect_string_n (const struct strings *s, const char *key, int nth, const char *want,
                 size_t want_len)
{
  int seen = 0;
  for (size_t i = 0; i < s->n; i++)
    if (strcmp (s->key[i], key) == 0 && seen++ == nth)
      {
        cr_assert_eq (s->len[i], want_len, "%s #%d: length %zu, expected %zu", key, nth, s->len[i],
                      want_len);
        cr_assert (memcmp (s->val[i], want, want_len) == 0, "%s #%d differs: '%s'", key, nth,
                   s->val[i]);
        return;
      }
  cr_assert_fail ("no string #%d for '%s'", nth, key);
}

static void
free_strings (struct strings *s)
{
  for (size_t i = 0; i < s->n; i++)
    free (s->val[i]);
}

static void
release_attempts (struct csr_attempt *a, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      csr_bbuf_release (&a[i].out);
      csr_bbuf_release (&a[i].err);
    }
}

/* --------------------------------------------------------------- tests */

Test (result, status_names)
{
  cr_assert_str_eq (csr_status_name (CSR_STATUS_OK), "ok");
  cr_assert_str_eq (csr_status_name (CSR_STATUS_HEALED), "healed");
  cr_assert_str_eq (csr_status_name (CSR_STATUS_FAILED), "failed");
  cr_assert_str_eq (csr_status_name (CSR_STATUS_BLOCKED), "blocked");
  cr_assert_str_eq (csr_status_name (CSR_STATUS_TIMEOUT), "timeout");
  cr_assert_str_eq (csr_status_name (CSR_STATUS_ERROR), "error");
}

static const char nasty_out[] = "q\"b\\s/\t\n\r\b\f\x01\x1f\x7f nul:\0:end \xff\xc3 "
                                "\xed\xa0\x80 ok \xc3\xa9";
/* The same after UTF-8 repair (what the JSON string must decode to). */
static const char nasty_fixed[]
    = "q\"b\\s/\t\n\r\b\f\x01\x1f\x7f nul:\0:end " FFFD FFFD " " FFFD FFFD FFFD " ok \xc3\xa9";
/* ... and exactly how it must be escaped in the document. */
static const char nasty_json[]
    = "\"stdout\":\"q\\\"b\\\\s/\\t\\n\\r\\b\\f\\u0001\\u001F\x7f nul:\\u0000:end " FFFD FFFD
      " " FFFD FFFD FFFD " ok \xc3\xa9\"";

Test (result, two_attempts_full_document)
{
  char sha1[65], sha2[65];
  memset (sha1, 'a', 64);
  sha1[64] = '\0';
  memset (sha2, 'b', 64);
  sha2[64] = '\0';

  struct csr_attempt at[2];
  memset (at, 0, sizeof at);

  /* Attempt 1: killed by SIGKILL after a timeout, with a flood on stdout
   * that overflows a 16-byte buffer (8 head + 8 tail). */
  at[0].number = 1;
  memcpy (at[0].code_sha256, sha1, sizeof sha1);
  at[0].exited = false;
  at[0].exit_code = 0;
  at[0].signal = SIGKILL;
  at[0].timed_out = true;
  feed (&at[0].out, 16, "HEAD1234middle-that-is-lostTAIL5678", 35);
  feed (&at[0].err, 1024, "Traceback\n", 10);
  at[0].duration_ms = 1500;
  at[0].cpu_ms = 1490;
  at[0].peak_memory_kib = 20480;

  /* Attempt 2: exits 3 with hostile bytes on stdout. */
  at[1].number = 2;
  memcpy (at[1].code_sha256, sha2, sizeof sha2);
  at[1].exited = true;
  at[1].exit_code = 3;
  at[1].signal = 0;
  at[1].timed_out = false;
  feed (&at[1].out, 4096, nasty_out, sizeof nasty_out - 1);
  feed (&at[1].err, 0, "all dropped", 11);
  at[1].duration_ms = 12;
  at[1].cpu_ms = 9;
  at[1].peak_memory_kib = 9876;

  struct csr_run_result r = {
    .status = CSR_STATUS_HEALED,
    .attempts = at,
    .n_attempts = 2,
    .limits = { .mechanism = "cgroup-v1",
                .memory_bytes = 512u << 20,
                .memory_enforced = true,
                .timeout_s = 1.5,
                .max_output = 1u << 20,
                .tmp_size = 64u << 20,
                .nofile = 256 },
    .duration_ms = 1600,
    .rootfs_sha256 = "0123abcd",
    .rootfs_dir = "/var/cache/csrun/rootfs/0123abcd",
    .rootfs_unpacked = true,
    .error = NULL,
  };

  size_t len;
  char *doc = to_json (&r, &len);
  yajl_val t = parse_tree (doc);

  static const char *const top_keys[]
      = { "version", "status", "duration_ms", "rootfs", "limits", "attempts", NULL };
  expect_keys (t, top_keys);
  cr_assert_eq (get_int (t, "version"), 1);
  cr_assert_str_eq (get_str (t, "status"), "healed");
  cr_assert_null (get (t, "error"));
  cr_assert_eq (get_int (t, "duration_ms"), 1600);

  yajl_val rootfs = get (t, "rootfs");
  static const char *const rootfs_keys[] = { "dir", "sha256", "unpacked", NULL };
  expect_keys (rootfs, rootfs_keys);
  cr_assert_str_eq (get_str (rootfs, "dir"), "/var/cache/csrun/rootfs/0123abcd");
  cr_assert_str_eq (get_str (rootfs, "sha256"), "0123abcd");
  cr_assert (get_bool (rootfs, "unpacked"));

  yajl_val limits = get (t, "limits");
  static const char *const limit_keys[]
      = { "mechanism",      "memory_bytes", "memory_enforced",   "timeout_s", "max_output_bytes",
          "tmp_size_bytes", "nofile",       "memory_limit_kind", "pids",      "pids_enforced",
          "cpus",           "cpu_enforced", "warning",           NULL };
  expect_keys (limits, limit_keys);
  cr_assert_str_eq (get_str (limits, "mechanism"), "cgroup-v1");
  cr_assert_eq (get_int (limits, "memory_bytes"), 512ll << 20);
  cr_assert (get_bool (limits, "memory_enforced"));
  yajl_val to = get (limits, "timeout_s");
  cr_assert (YAJL_IS_DOUBLE (to));
  cr_assert_eq (YAJL_GET_DOUBLE (to), 1.5);
  cr_assert_not_null (strstr (doc, "\"timeout_s\":1.5,"));
  cr_assert_eq (get_int (limits, "max_output_bytes"), 1 << 20);
  cr_assert_eq (get_int (limits, "tmp_size_bytes"), 64 << 20);
  cr_assert_eq (get_int (limits, "nofile"), 256);

  yajl_val attempts = get (t, "attempts");
  cr_assert (YAJL_IS_ARRAY (attempts));
  cr_assert_eq (attempts->u.array.len, 2);
  static const char *const attempt_keys[]
      = { "attempt",          "code_sha256", "exit_code",    "signal",
          "timed_out",        "duration_ms", "cpu_ms",       "peak_memory_kib",
          "oom_killed",       "stdout",      "stdout_bytes", "stdout_dropped_bytes",
          "stdout_truncated", "stderr",      "stderr_bytes", "stderr_dropped_bytes",
          "stderr_truncated", NULL };

  yajl_val a1 = attempts->u.array.values[0];
  expect_keys (a1, attempt_keys);
  cr_assert_eq (get_int (a1, "attempt"), 1);
  cr_assert_str_eq (get_str (a1, "code_sha256"), sha1);
  expect_null (a1, "exit_code");
  cr_assert_str_eq (get_str (a1, "signal"), "SIGKILL");
  cr_assert (get_bool (a1, "timed_out"));
  cr_assert_eq (get_int (a1, "duration_ms"), 1500);
  cr_assert_eq (get_int (a1, "cpu_ms"), 1490);
  cr_assert_eq (get_int (a1, "peak_memory_kib"), 20480);
  cr_assert_str_eq (get_str (a1, "stdout"),
                    "HEAD1234\n[... csrun: 19 bytes dropped ...]\nTAIL5678");
  cr_assert_eq (get_int (a1, "stdout_bytes"), 35);
  cr_assert_eq (get_int (a1, "stdout_dropped_bytes"), 19);
  cr_assert_str_eq (get_str (a1, "stderr"), "Traceback\n");
  cr_assert_eq (get_int (a1, "stderr_bytes"), 10);
  cr_assert_eq (get_int (a1, "stderr_dropped_bytes"), 0);

  yajl_val a2 = attempts->u.array.values[1];
  expect_keys (a2, attempt_keys);
  cr_assert_eq (get_int (a2, "attempt"), 2);
  cr_assert_str_eq (get_str (a2, "code_sha256"), sha2);
  cr_assert_eq (get_int (a2, "exit_code"), 3);
  expect_null (a2, "signal");
  cr_assert_not (get_bool (a2, "timed_out"));
  cr_assert_eq (get_int (a2, "duration_ms"), 12);
  cr_assert_eq (get_int (a2, "cpu_ms"), 9);
  cr_assert_eq (get_int (a2, "peak_memory_kib"), 9876);
  cr_assert_eq (get_int (a2, "stdout_bytes"), (long long)sizeof nasty_out - 1);
  cr_assert_eq (get_int (a2, "stdout_dropped_bytes"), 0);
  /* max 0: everything dropped, and the string is just the marker. */
  cr_assert_str_eq (get_str (a2, "stderr"), "\n[... csrun: 11 bytes dropped ...]\n");
  cr_assert_eq (get_int (a2, "stderr_bytes"), 11);
  cr_assert_eq (get_int (a2, "stderr_dropped_bytes"), 11);

  /* Exact bytes of the hostile string (NUL included) and its escaping. */
  struct strings s;
  collect_strings (doc, len, &s);
  expect_string_n (&s, "stdout", 1, nasty_fixed, sizeof nasty_fixed - 1);
  cr_assert_not_null (strstr (doc, nasty_json), "escaping differs: %s", doc);
  free_strings (&s);

  yajl_tree_free (t);
  free (doc);
  release_attempts (at, 2);
}

Test (result, error_and_no_rootfs)
{
  struct csr_run_result r = {
    .status = CSR_STATUS_ERROR,
    .error = "cannot unpack \xff rootfs: \"quoted\"",
    .limits = { .mechanism = NULL, .timeout_s = 30 },
    .duration_ms = 3,
  };
  size_t len;
  char *doc = to_json (&r, &len);
  yajl_val t = parse_tree (doc);
  static const char *const keys[]
      = { "version", "status", "error", "duration_ms", "limits", "attempts", NULL };
  expect_keys (t, keys);
  cr_assert_str_eq (get_str (t, "status"), "error");
  cr_assert_str_eq (get_str (t, "error"), "cannot unpack " FFFD " rootfs: \"quoted\"");
  yajl_val limits = get (t, "limits");
  cr_assert_str_eq (get_str (limits, "mechanism"), "none");
  cr_assert_not (get_bool (limits, "memory_enforced"));
  cr_assert_eq (get_int (limits, "memory_bytes"), 0);
  cr_assert_not_null (strstr (doc, "\"timeout_s\":30.0,"), "%s", doc);
  yajl_val attempts = get (t, "attempts");
  cr_assert (YAJL_IS_ARRAY (attempts));
  cr_assert_eq (attempts->u.array.len, 0);
  cr_assert_null (get (t, "rootfs"));
  yajl_tree_free (t);
  free (doc);
}

Test (result, rootfs_without_digest_and_bad_bytes)
{
  struct csr_run_result r = {
    .status = CSR_STATUS_OK,
    .rootfs_dir = "/srv/py\xc3(root",
    .rootfs_sha256 = NULL,
    .rootfs_unpacked = false,
    .limits = { .mechanism = "rlimit", .timeout_s = 0.1 },
  };
  char *doc = to_json (&r, NULL);
  yajl_val t = parse_tree (doc);
  yajl_val rootfs = get (t, "rootfs");
  cr_assert_not_null (rootfs);
  cr_assert_str_eq (get_str (rootfs, "dir"), "/srv/py" FFFD "(root");
  expect_null (rootfs, "sha256");
  cr_assert_not (get_bool (rootfs, "unpacked"));
  cr_assert_str_eq (get_str (get (t, "limits"), "mechanism"), "rlimit");
  /* The shortest form that reads back, not 0.10000000000000000555. */
  cr_assert_not_null (strstr (doc, "\"timeout_s\":0.1,"), "%s", doc);
  yajl_tree_free (t);
  free (doc);
}

Test (result, numbers_signals_and_edge_cases)
{
  struct csr_attempt at[3];
  memset (at, 0, sizeof at);
  for (int i = 0; i < 3; i++)
    {
      at[i].number = i + 1;
      cr_assert_eq (csr_bbuf_init (&at[i].out, 8), 0);
      cr_assert_eq (csr_bbuf_init (&at[i].err, 8), 0);
    }
  at[0].signal = SIGTERM;
  at[0].duration_ms = UINT64_MAX; /* clamped to LLONG_MAX */
  at[0].code_sha256[0] = '\0';    /* unknown digest -> null */
  at[1].signal = 100;             /* no name */
  at[1].exited = true;
  at[1].exit_code = -1;
  at[2].exited = true;
  at[2].exit_code = 0;
  /* A 2-byte character split between head (4) and tail (4) stays whole
   * when nothing was dropped. */
  csr_bbuf_append (&at[2].out, "abc\xc3\xa9xyz", 8);

  struct csr_run_result r = {
    .status = CSR_STATUS_TIMEOUT,
    .attempts = at,
    .n_attempts = 3,
    .limits = { .mechanism = "cgroup-v2",
                .memory_bytes = UINT64_MAX,
                .timeout_s = INFINITY,
                .nofile = (uint64_t)LLONG_MAX + 1 },
    .duration_ms = (uint64_t)LLONG_MAX,
  };
  char *doc = to_json (&r, NULL);
  yajl_val t = parse_tree (doc);
  cr_assert_str_eq (get_str (t, "status"), "timeout");
  cr_assert_eq (get_int (t, "duration_ms"), LLONG_MAX);
  yajl_val limits = get (t, "limits");
  cr_assert_eq (get_int (limits, "memory_bytes"), LLONG_MAX);
  cr_assert_eq (get_int (limits, "nofile"), LLONG_MAX);
  expect_null (limits, "timeout_s");

  yajl_val attempts = get (t, "attempts");
  cr_assert_eq (attempts->u.array.len, 3);
  yajl_val a1 = attempts->u.array.values[0];
  cr_assert_str_eq (get_str (a1, "signal"), "SIGTERM");
  cr_assert_eq (get_int (a1, "duration_ms"), LLONG_MAX);
  expect_null (a1, "code_sha256");
  expect_null (a1, "exit_code");
  cr_assert_str_eq (get_str (a1, "stdout"), "");
  cr_assert_eq (get_int (a1, "stdout_bytes"), 0);
  yajl_val a2 = attempts->u.array.values[1];
  cr_assert_str_eq (get_str (a2, "signal"), "SIG100");
  cr_assert_eq (get_int (a2, "exit_code"), -1);
  yajl_val a3 = attempts->u.array.values[2];
  expect_null (a3, "signal");
  cr_assert_eq (get_int (a3, "exit_code"), 0);
  cr_assert_str_eq (get_str (a3, "stdout"), "abc\xc3\xa9xyz");
  cr_assert_eq (get_int (a3, "stdout_dropped_bytes"), 0);

  yajl_tree_free (t);
  free (doc);
  release_attempts (at, 3);
}

Test (result, dropped_marker_counts_large_streams)
{
  struct csr_attempt a;
  memset (&a, 0, sizeof a);
  a.number = 1;
  a.exited = true;
  cr_assert_eq (csr_bbuf_init (&a.out, 10), 0);
  cr_assert_eq (csr_bbuf_init (&a.err, 10), 0);
  char chunk[4096];
  memset (chunk, '.', sizeof chunk);
  memcpy (chunk, "start", 5);
  csr_bbuf_append (&a.out, chunk, sizeof chunk);
  for (int i = 0; i < 255; i++)
    csr_bbuf_append (&a.out, chunk + 5, sizeof chunk - 5);
  csr_bbuf_append (&a.out, "the-end", 7);
  /* A tail that starts inside a multi-byte character is repaired. */
  csr_bbuf_append (&a.err, "0123456789\xe2\x82\xac\xe2\x82\xac", 16);

  struct csr_run_result r = { .status = CSR_STATUS_FAILED, .attempts = &a, .n_attempts = 1 };
  char *doc = to_json (&r, NULL);
  yajl_val t = parse_tree (doc);
  yajl_val a1 = get (t, "attempts")->u.array.values[0];
  uint64_t total = 4096 + 255 * 4091 + 7;
  cr_assert_eq (get_int (a1, "stdout_bytes"), (long long)total);
  cr_assert_eq (get_int (a1, "stdout_dropped_bytes"), (long long)total - 10);
  char want[128];
  snprintf (want, sizeof want, "start\n[... csrun: %llu bytes dropped ...]\ne-end",
            (unsigned long long)(total - 10));
  cr_assert_str_eq (get_str (a1, "stdout"), want);
  /* err: head "01234", tail "\x82\xac\xe2\x82\xac" -> FFFD FFFD then the euro sign. */
  cr_assert_str_eq (get_str (a1, "stderr"),
                    "01234\n[... csrun: 6 bytes dropped ...]\n" FFFD FFFD "\xe2\x82\xac");
  cr_assert_eq (get_int (a1, "stderr_dropped_bytes"), 6);
  cr_assert (get_bool (a1, "stdout_truncated"));
  cr_assert (get_bool (a1, "stderr_truncated"));
  yajl_tree_free (t);
  free (doc);
  release_attempts (&a, 1);
}

Test (result, every_status_round_trips)
{
  for (int s = CSR_STATUS_OK; s <= CSR_STATUS_ERROR; s++)
    {
      struct csr_run_result r = { .status = (enum csr_status)s };
      char *doc = to_json (&r, NULL);
      yajl_val t = parse_tree (doc);
      cr_assert_str_eq (get_str (t, "status"), csr_status_name ((enum csr_status)s));
      yajl_tree_free (t);
      free (doc);
    }
}

/* What was run (file, args, label) and the diagnosis hint (issue 14). */
Test (result, file_args_label_hint)
{
  struct csr_attempt a;
  memset (&a, 0, sizeof a);
  a.number = 1;
  a.exited = true;
  a.exit_code = 1;
  cr_assert_eq (csr_bbuf_init (&a.out, 64), 0);
  cr_assert_eq (csr_bbuf_init (&a.err, 64), 0);
  struct csr_diagnosis d
      = { "socket.gaierror", "[Errno -2] Name or service not known", 2, NULL, CSR_HINT_NO_NETWORK };
  a.diagnosis = &d;
  char *args[] = { "x", "y z" };
  struct csr_run_result r = { .status = CSR_STATUS_FAILED,
                              .attempts = &a,
                              .n_attempts = 1,
                              .diagnosis = &d,
                              .file = "dir/a.py",
                              .args = args,
                              .n_args = 2,
                              .label = "job 7" };
  char *doc = to_json (&r, NULL);
  yajl_val t = parse_tree (doc);
  cr_assert_str_eq (get_str (t, "file"), "dir/a.py");
  yajl_val av = get (t, "args");
  cr_assert (YAJL_IS_ARRAY (av));
  cr_assert_eq (av->u.array.len, 2);
  cr_assert_str_eq (YAJL_GET_STRING (av->u.array.values[1]), "y z");
  cr_assert_str_eq (get_str (t, "label"), "job 7");
  cr_assert_str_eq (get_str (get (t, "diagnosis"), "hint"), CSR_HINT_NO_NETWORK);
  yajl_val a1 = get (t, "attempts")->u.array.values[0];
  cr_assert_not (get_bool (a1, "stdout_truncated"));
  cr_assert_eq (get_int (a1, "exit_code"), 1);
  yajl_tree_free (t);
  free (doc);

  /* No label: no key; no file: none of the three. */
  r.label = NULL;
  doc = to_json (&r, NULL);
  t = parse_tree (doc);
  cr_assert_null (get (t, "label"));
  cr_assert_not_null (get (t, "args"));
  yajl_tree_free (t);
  free (doc);
  r.file = NULL;
  d.hint = NULL;
  doc = to_json (&r, NULL);
  t = parse_tree (doc);
  cr_assert_null (get (t, "file"));
  cr_assert_null (get (t, "args"));
  cr_assert_null (get (get (t, "diagnosis"), "hint"));
  yajl_tree_free (t);
  free (doc);
  release_attempts (&a, 1);
}
