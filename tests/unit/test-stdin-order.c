/* issue 14: the kept standard input (stdin.c) and the order of the output
 * (outseq.c). */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "supervisor/outseq.h"
#include "supervisor/result.h"
#include "supervisor/stdin.h"

/* ---- the stdin store ---- */

/* An unlinked file holding DATA, at offset 0: the source. */
static int
source_of (const char *data, size_t len)
{
  char path[] = "/tmp/csrun-test-stdin-XXXXXX";
  int fd = mkstemp (path);
  cr_assert (fd >= 0);
  unlink (path);
  cr_assert_eq (write (fd, data, len), (ssize_t)len);
  lseek (fd, 0, SEEK_SET);
  return fd;
}

static void
fill_all (struct csr_stdin *s)
{
  csr_error *e = NULL;
  while (s->src >= 0)
    cr_assert (csr_stdin_fill (s, &e) >= 0, "%s", e ? e->msg : "");
}

static void
expect_stored (const struct csr_stdin *s, const char *data, size_t len)
{
  cr_assert_eq (s->len, len);
  char *buf = malloc (len + 1);
  size_t got = 0;
  csr_error *e = NULL;
  while (got < len)
    {
      ssize_t n = csr_stdin_get (s, got, buf + got, len - got, &e);
      cr_assert (n > 0);
      got += (size_t)n;
    }
  cr_assert (memcmp (buf, data, len) == 0, "stored bytes differ");
  free (buf);
}

Test (stdin, in_memory)
{
  static const char data[] = "a\0b\nc";
  int fd = source_of (data, sizeof data - 1);
  struct csr_stdin s;
  csr_stdin_init (&s, fd, 1000);
  fill_all (&s);
  expect_stored (&s, data, sizeof data - 1);
  cr_assert_not (s.truncated);
  cr_assert_eq (s.spill, -1);
  csr_stdin_release (&s);
  close (fd);
}

Test (stdin, spills_past_the_threshold)
{
  char data[5000];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (char)(i * 7);
  int fd = source_of (data, sizeof data);
  struct csr_stdin s;
  csr_stdin_init (&s, fd, 1 << 20);
  s.mem_limit = 1000;
  fill_all (&s);
  cr_assert (s.spill >= 0);
  cr_assert_eq (s.mem_len, 1000);
  expect_stored (&s, data, sizeof data);
  csr_stdin_release (&s);
  close (fd);
}

Test (stdin, cut_at_the_cap)
{
  char data[300];
  memset (data, 'x', sizeof data);
  int fd = source_of (data, sizeof data);
  struct csr_stdin s;
  csr_stdin_init (&s, fd, 100);
  fill_all (&s);
  cr_assert (s.truncated);
  expect_stored (&s, data, 100);
  csr_stdin_release (&s);
  close (fd);
}

Test (stdin, exactly_at_the_cap_is_not_truncated)
{
  char data[100];
  memset (data, 'y', sizeof data);
  int fd = source_of (data, sizeof data);
  struct csr_stdin s;
  csr_stdin_init (&s, fd, 100);
  fill_all (&s);
  cr_assert_not (s.truncated);
  expect_stored (&s, data, 100);
  csr_stdin_release (&s);
  close (fd);
}

/* Feed the pipe until the feed closes it; the bytes read back must be the
 * source's, twice (a second feed replays the store). */
static void
feed_once (struct csr_stdin *s, const char *data, size_t len)
{
  int p[2];
  cr_assert_eq (pipe2 (p, O_CLOEXEC), 0);
  fcntl (p[1], F_SETFL, O_NONBLOCK);
  int rd = dup (p[0]);
  struct csr_stdin_feed f = { .store = s, .fd = p[1], .peek = p[0] };
  char *got = malloc (len + 1);
  size_t n = 0;
  csr_error *e = NULL;
  for (int guard = 0; guard < 100000; guard++)
    {
      short ev = 0;
      int fd = csr_stdin_feed_poll_fd (&f, &ev);
      if (fd < 0)
        break;
      struct pollfd pfd = { .fd = fd, .events = ev };
      cr_assert_eq (poll (&pfd, 1, 1000), 1);
      cr_assert_eq (csr_stdin_feed_step (&f, pfd.revents, &e), 0);
      /* The reader takes what is there. */
      struct pollfd rp = { .fd = rd, .events = POLLIN };
      while (poll (&rp, 1, 0) == 1 && (rp.revents & POLLIN))
        {
          ssize_t r = read (rd, got + n, len + 1 - n);
          if (r <= 0)
            break;
          n += (size_t)r;
        }
    }
  ssize_t r;
  while ((r = read (rd, got + n, len + 1 - n)) > 0)
    n += (size_t)r;
  cr_assert_eq (n, len);
  cr_assert (memcmp (got, data, len) == 0);
  csr_stdin_feed_close (&f);
  cr_assert_eq (f.consumed, len);
  close (rd);
  free (got);
}

Test (stdin, feed_replays)
{
  char data[200000];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (char)(i * 13 + 1);
  int fd = source_of (data, sizeof data);
  struct csr_stdin s;
  csr_stdin_init (&s, fd, 1 << 20);
  s.mem_limit = 50000;
  feed_once (&s, data, sizeof data);
  feed_once (&s, data, sizeof data);
  csr_stdin_release (&s);
  close (fd);
}

Test (stdin, consumed_counts_what_was_left_unread)
{
  static const char data[] = "0123456789";
  int fd = source_of (data, 10);
  struct csr_stdin s;
  csr_stdin_init (&s, fd, 100);
  int p[2];
  cr_assert_eq (pipe2 (p, O_CLOEXEC), 0);
  fcntl (p[1], F_SETFL, O_NONBLOCK);
  int rd = dup (p[0]);
  struct csr_stdin_feed f = { .store = &s, .fd = p[1], .peek = p[0] };
  csr_error *e = NULL;
  /* pipe writable: read the source, then write it all */
  for (int i = 0; i < 4 && f.fd >= 0; i++)
    {
      short ev;
      int pfd = csr_stdin_feed_poll_fd (&f, &ev);
      cr_assert_eq (csr_stdin_feed_step (&f, ev, &e), 0, "%d", pfd);
    }
  char buf[4];
  cr_assert_eq (read (rd, buf, 4), 4);
  csr_stdin_feed_close (&f);
  cr_assert_eq (f.consumed, 4, "consumed %llu", (unsigned long long)f.consumed);
  close (rd);
  csr_stdin_release (&s);
  close (fd);
}

/* ---- the order of the output ---- */

struct collect
{
  char text[4096];
};

static void
collect_cb (void *data, enum csr_stream s, const char *bytes, uint64_t len)
{
  struct collect *c = data;
  size_t n = strlen (c->text);
  if (bytes)
    snprintf (c->text + n, sizeof c->text - n, "%s[%.*s]", s == CSR_STREAM_OUT ? "O" : "E",
              (int)len, bytes);
  else
    snprintf (c->text + n, sizeof c->text - n, "%s<%llu>", s == CSR_STREAM_OUT ? "O" : "E",
              (unsigned long long)len);
}

static void
add (struct csr_outseq *q, struct csr_bbuf *b, enum csr_stream s, const char *text)
{
  csr_outseq_add (q, s, b->total, strlen (text));
  csr_bbuf_append (b, text, strlen (text));
}

Test (outseq, interleaved_and_merged)
{
  struct csr_outseq q;
  struct csr_bbuf out, err;
  cr_assert_eq (csr_outseq_init (&q), 0);
  csr_bbuf_init (&out, 1000);
  csr_bbuf_init (&err, 1000);
  add (&q, &out, CSR_STREAM_OUT, "a");
  add (&q, &out, CSR_STREAM_OUT, "b");
  add (&q, &err, CSR_STREAM_ERR, "E1");
  add (&q, &out, CSR_STREAM_OUT, "c");
  add (&q, &err, CSR_STREAM_ERR, "E2");
  cr_assert_eq (q.n_head, 4); /* "a" and "b" merged */
  struct collect c = { "" };
  cr_assert_eq (csr_outseq_walk (&q, &out, &err, collect_cb, &c), 0);
  cr_assert_str_eq (c.text, "O[ab]E[E1]O[c]E[E2]");
  csr_outseq_release (&q);
  csr_bbuf_release (&out);
  csr_bbuf_release (&err);
}

Test (outseq, dropped_middle_marked_once)
{
  struct csr_outseq q;
  struct csr_bbuf out, err;
  cr_assert_eq (csr_outseq_init (&q), 0);
  csr_bbuf_init (&out, 4); /* head 2, tail 2 */
  csr_bbuf_init (&err, 100);
  add (&q, &out, CSR_STREAM_OUT, "0123");
  add (&q, &err, CSR_STREAM_ERR, "e");
  add (&q, &out, CSR_STREAM_OUT, "4567");
  add (&q, &err, CSR_STREAM_ERR, "f");
  add (&q, &out, CSR_STREAM_OUT, "89");
  struct collect c = { "" };
  cr_assert_eq (csr_outseq_walk (&q, &out, &err, collect_cb, &c), 0);
  cr_assert_str_eq (c.text, "O[01]O<6>E[e]E[f]O[89]");
  csr_outseq_release (&q);
  csr_bbuf_release (&out);
  csr_bbuf_release (&err);
}

static void
count_cb (void *data, enum csr_stream s, const char *bytes, uint64_t len)
{
  uint64_t *n = data;
  (void)s;
  if (bytes)
    n[s] += len;
}

Test (outseq, bounded_chunk_count)
{
  struct csr_outseq q;
  struct csr_bbuf out, err;
  cr_assert_eq (csr_outseq_init (&q), 0);
  csr_bbuf_init (&out, 1 << 20);
  csr_bbuf_init (&err, 1 << 20);
  int n = CSR_OUTSEQ_HEAD + CSR_OUTSEQ_TAIL + 500;
  for (int i = 0; i < n; i++)
    add (&q, i % 2 ? &err : &out, i % 2 ? CSR_STREAM_ERR : CSR_STREAM_OUT, "x");
  cr_assert_eq (q.n_head, CSR_OUTSEQ_HEAD);
  cr_assert_eq (q.ring_len, CSR_OUTSEQ_TAIL);
  cr_assert_eq (q.dropped, 500);
  /* Every kept byte is still shown, once. */
  uint64_t shown[2] = { 0, 0 };
  cr_assert_eq (csr_outseq_walk (&q, &out, &err, count_cb, shown), 0);
  cr_assert_eq (shown[0], out.total);
  cr_assert_eq (shown[1], err.total);
  csr_outseq_release (&q);
  csr_bbuf_release (&out);
  csr_bbuf_release (&err);
}

/* ---- the JSON fields ---- */

Test (result, stdin_output_and_interruption)
{
  struct csr_attempt a;
  memset (&a, 0, sizeof a);
  a.number = 1;
  cr_assert_eq (csr_outseq_init (&a.seq), 0);
  csr_bbuf_init (&a.out, 100);
  csr_bbuf_init (&a.err, 100);
  add (&a.seq, &a.out, CSR_STREAM_OUT, "one\n");
  add (&a.seq, &a.err, CSR_STREAM_ERR, "two\n");
  add (&a.seq, &a.out, CSR_STREAM_OUT, "three\n");
  a.stdin_given = true;
  a.stdin_consumed = 5;
  a.interrupted = 2;
  struct csr_stdin st;
  csr_stdin_init (&st, -1, 1000);
  st.len = 7;
  struct csr_run_result r;
  memset (&r, 0, sizeof r);
  r.status = CSR_STATUS_INTERRUPTED;
  r.interrupt_signal = 15;
  r.attempts = &a;
  r.n_attempts = 1;
  r.stdin_store = &st;
  char *json = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  cr_assert_eq (csr_result_to_json (&r, &json, &len, &e), 0);
  char ebuf[256];
  yajl_val t = yajl_tree_parse (json, ebuf, sizeof ebuf);
  cr_assert_not_null (t, "%s", ebuf);
  const char *status[] = { "status", NULL };
  cr_assert_str_eq (YAJL_GET_STRING (yajl_tree_get (t, status, yajl_t_string)), "interrupted");
  const char *by[] = { "interrupted_by", NULL };
  cr_assert_str_eq (YAJL_GET_STRING (yajl_tree_get (t, by, yajl_t_string)), "SIGTERM");
  const char *bytes[] = { "stdin", "bytes", NULL };
  cr_assert_eq (YAJL_GET_INTEGER (yajl_tree_get (t, bytes, yajl_t_number)), 7);
  const char *trunc[] = { "stdin", "truncated", NULL };
  cr_assert (YAJL_IS_FALSE (yajl_tree_get (t, trunc, yajl_t_any)));
  const char *att[] = { "attempts", NULL };
  yajl_val a0 = YAJL_GET_ARRAY (yajl_tree_get (t, att, yajl_t_array))->values[0];
  const char *cons[] = { "stdin_consumed_bytes", NULL };
  cr_assert_eq (YAJL_GET_INTEGER (yajl_tree_get (a0, cons, yajl_t_number)), 5);
  const char *aby[] = { "interrupted_by", NULL };
  cr_assert_str_eq (YAJL_GET_STRING (yajl_tree_get (a0, aby, yajl_t_string)), "SIGINT");
  const char *outp[] = { "output", NULL };
  yajl_val o = yajl_tree_get (a0, outp, yajl_t_array);
  cr_assert_not_null (o);
  cr_assert_eq (YAJL_GET_ARRAY (o)->len, 3);
  const char *want[][2] = { { "stdout", "one\n" }, { "stderr", "two\n" }, { "stdout", "three\n" } };
  for (size_t i = 0; i < 3; i++)
    {
      yajl_val p = YAJL_GET_ARRAY (o)->values[i];
      const char *sk[] = { "stream", NULL }, *tk[] = { "text", NULL };
      cr_assert_str_eq (YAJL_GET_STRING (yajl_tree_get (p, sk, yajl_t_string)), want[i][0]);
      cr_assert_str_eq (YAJL_GET_STRING (yajl_tree_get (p, tk, yajl_t_string)), want[i][1]);
    }
  yajl_tree_free (t);
  free (json);
  csr_outseq_release (&a.seq);
  csr_bbuf_release (&a.out);
  csr_bbuf_release (&a.err);
}
