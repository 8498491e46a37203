#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/bbuf.h"

/* Check the buffer against the expected head, tail and dropped count. */
static void
expect (const struct csr_bbuf *b, const char *head, const char *tail, uint64_t dropped)
{
  size_t hl = strlen (head), tl = strlen (tail);
  cr_assert_eq (b->head_len, hl, "head_len %zu, expected %zu", b->head_len, hl);
  cr_assert (hl == 0 || memcmp (b->head, head, hl) == 0, "head differs");

  size_t got_len = 99;
  char *t = csr_bbuf_tail (b, &got_len);
  cr_assert_not_null (t);
  cr_assert_eq (got_len, tl, "tail length %zu, expected %zu", got_len, tl);
  cr_assert_eq (t[got_len], '\0');
  cr_assert (memcmp (t, tail, tl) == 0, "tail '%.*s', expected '%s'", (int)got_len, t, tail);
  free (t);

  char *c = csr_bbuf_contents (b, &got_len);
  cr_assert_not_null (c);
  cr_assert_eq (got_len, hl + tl);
  cr_assert_eq (c[got_len], '\0');
  cr_assert (memcmp (c, head, hl) == 0 && memcmp (c + hl, tail, tl) == 0, "contents '%.*s'",
             (int)got_len, c);
  free (c);

  cr_assert_eq (csr_bbuf_dropped (b), dropped, "dropped %llu, expected %llu",
                (unsigned long long)csr_bbuf_dropped (b), (unsigned long long)dropped);
  cr_assert_eq (b->total, hl + tl + dropped);
}

static size_t
append_str (struct csr_bbuf *b, const char *s)
{
  return csr_bbuf_append (b, s, strlen (s));
}

Test (bbuf, init_splits_caps)
{
  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init (&b, 8), 0);
  cr_assert_eq (b.head_cap, 4);
  cr_assert_eq (b.tail_cap, 4);
  csr_bbuf_release (&b);
  cr_assert_eq (csr_bbuf_init (&b, 7), 0);
  cr_assert_eq (b.head_cap, 3);
  cr_assert_eq (b.tail_cap, 4);
  expect (&b, "", "", 0);
  csr_bbuf_release (&b);
  cr_assert_null (b.head);
  cr_assert_null (b.tail);
}

Test (bbuf, small_exact)
{
  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init (&b, 8), 0);

  cr_assert_eq (append_str (&b, "abc"), 3);
  expect (&b, "abc", "", 0);
  cr_assert_eq (append_str (&b, "defgh"), 1); /* only 'd' completes the head */
  expect (&b, "abcd", "efgh", 0);
  cr_assert_eq (append_str (&b, "ij"), 0);
  expect (&b, "abcd", "ghij", 2);
  cr_assert_eq (append_str (&b, "k"), 0);
  expect (&b, "abcd", "hijk", 3);
  cr_assert_eq (csr_bbuf_append (&b, "zzz", 0), 0);
  expect (&b, "abcd", "hijk", 3);
  cr_assert_eq (append_str (&b, "lmn"), 0); /* wraps around the ring end */
  expect (&b, "abcd", "klmn", 6);
  cr_assert_eq (append_str (&b, "opqr"), 0); /* exactly tail_cap */
  expect (&b, "abcd", "opqr", 10);
  cr_assert_eq (append_str (&b, "0123456789"), 0); /* more than tail_cap */
  expect (&b, "abcd", "6789", 20);
  cr_assert_eq (append_str (&b, "x"), 0);
  expect (&b, "abcd", "789x", 21);
  csr_bbuf_release (&b);
}

Test (bbuf, one_append_fills_both)
{
  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init (&b, 6), 0);
  cr_assert_eq (append_str (&b, "abcdefghijklmnop"), 3);
  expect (&b, "abc", "nop", 10);
  csr_bbuf_release (&b);
}

Test (bbuf, max_zero_keeps_nothing)
{
  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init (&b, 0), 0);
  cr_assert_eq (append_str (&b, "hello"), 0);
  cr_assert_eq (append_str (&b, "world!"), 0);
  expect (&b, "", "", 11);
  csr_bbuf_release (&b);
}

Test (bbuf, max_one_keeps_last_byte)
{
  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init (&b, 1), 0);
  cr_assert_eq (b.head_cap, 0);
  cr_assert_eq (b.tail_cap, 1);
  cr_assert_eq (append_str (&b, "a"), 0);
  expect (&b, "", "a", 0);
  cr_assert_eq (append_str (&b, "bc"), 0);
  expect (&b, "", "c", 2);
  cr_assert_eq (append_str (&b, "d"), 0);
  expect (&b, "", "d", 3);
  csr_bbuf_release (&b);
}

Test (bbuf, max_two)
{
  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init (&b, 2), 0);
  cr_assert_eq (append_str (&b, "xy"), 1);
  expect (&b, "x", "y", 0);
  cr_assert_eq (append_str (&b, "z"), 0);
  expect (&b, "x", "z", 1);
  csr_bbuf_release (&b);
}

Test (bbuf, huge_single_append)
{
  const size_t n = 3u << 20;
  char *data = malloc (n);
  cr_assert_not_null (data);
  for (size_t i = 0; i < n; i++)
    data[i] = (char)('a' + (i * 7 + i / 13) % 26);

  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init (&b, 1000), 0);
  cr_assert_eq (csr_bbuf_append (&b, data, n), 500);
  cr_assert_eq (b.head_len, 500);
  cr_assert (memcmp (b.head, data, 500) == 0);
  size_t tl;
  char *t = csr_bbuf_tail (&b, &tl);
  cr_assert_eq (tl, 500);
  cr_assert (memcmp (t, data + n - 500, 500) == 0);
  free (t);
  cr_assert_eq (csr_bbuf_dropped (&b), n - 1000);
  csr_bbuf_release (&b);
  free (data);
}

/* Tiny deterministic PRNG (xorshift64*), so failures are reproducible. */
static uint64_t
rnd (uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * UINT64_C (2685821657736338717);
}

/* Feed a stream in random-size chunks and compare, after every chunk, with the
 * reference: head = first head_cap bytes, tail = last bytes after the head. */
static void
random_stream (size_t max, size_t stream_len, size_t max_chunk, uint64_t seed)
{
  char *stream = malloc (stream_len);
  cr_assert_not_null (stream);
  uint64_t s = seed;
  for (size_t i = 0; i < stream_len; i++)
    stream[i] = (char)(rnd (&s) & 0xff);

  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init (&b, max), 0);
  size_t head_cap = max / 2, tail_cap = max - head_cap;
  size_t off = 0, step = 0;
  while (off < stream_len)
    {
      size_t chunk = (size_t)(rnd (&s) % (max_chunk + 1));
      if (chunk > stream_len - off)
        chunk = stream_len - off;
      size_t expect_head = off < head_cap ? (chunk < head_cap - off ? chunk : head_cap - off) : 0;
      cr_assert_eq (csr_bbuf_append (&b, stream + off, chunk), expect_head, "max %zu step %zu", max,
                    step);
      off += chunk;
      step++;

      size_t hl = off < head_cap ? off : head_cap;
      size_t after = off - hl;
      size_t tl = after < tail_cap ? after : tail_cap;
      cr_assert_eq (b.total, off);
      cr_assert_eq (b.head_len, hl);
      cr_assert_eq (b.tail_len, tl, "max %zu step %zu", max, step);
      cr_assert_eq (csr_bbuf_dropped (&b), off - hl - tl);
      if (step % 7 == 0 || off == stream_len)
        {
          cr_assert (hl == 0 || memcmp (b.head, stream, hl) == 0);
          size_t got;
          char *t = csr_bbuf_tail (&b, &got);
          cr_assert_eq (got, tl);
          cr_assert (tl == 0 || memcmp (t, stream + off - tl, tl) == 0,
                     "tail differs: max %zu step %zu", max, step);
          free (t);
          char *c = csr_bbuf_contents (&b, &got);
          cr_assert_eq (got, hl + tl);
          cr_assert (hl == 0 || memcmp (c, stream, hl) == 0);
          cr_assert (tl == 0 || memcmp (c + hl, stream + off - tl, tl) == 0);
          free (c);
        }
    }
  csr_bbuf_release (&b);
  free (stream);
}

Test (bbuf, random_against_model)
{
  static const size_t maxes[] = { 0, 1, 2, 3, 5, 8, 31, 64, 1000, 4097, 65536 };
  for (size_t i = 0; i < sizeof maxes / sizeof maxes[0]; i++)
    {
      size_t m = maxes[i];
      /* Chunks smaller than, around, and larger than the caps. */
      random_stream (m, 1u << 20, 3 * m + 7, 0x9e3779b97f4a7c15ull + i);
      random_stream (m, 1u << 18, m / 3 + 1, 0x1234567ull * (i + 1));
      random_stream (m, 3u << 20, 70000, 0xabcdefull + i);
    }
}

/* 1 GiB through the buffer in 64 KiB chunks must be quick: memcpy, no loops
 * over bytes. */
Test (bbuf, flood_is_fast, .timeout = 30)
{
  const size_t chunk = 64 * 1024;
  char *data = malloc (chunk);
  cr_assert_not_null (data);
  memset (data, 'x', chunk);
  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init (&b, 1 << 20), 0);
  uint64_t total = 0;
  for (size_t i = 0; i < (1u << 30) / chunk; i++)
    {
      data[0] = (char)('a' + i % 26);
      csr_bbuf_append (&b, data, chunk);
      total += chunk;
    }
  cr_assert_eq (b.total, total);
  cr_assert_eq (b.head_len, 1 << 19);
  cr_assert_eq (b.tail_len, 1 << 19);
  cr_assert_eq (csr_bbuf_dropped (&b), total - (1 << 20));
  /* The last byte kept in the tail started the last chunk eight chunks ago. */
  size_t tl;
  char *t = csr_bbuf_tail (&b, &tl);
  size_t last = (1u << 30) / chunk - 1;
  cr_assert_eq (t[0], (char)('a' + (last - 7) % 26));
  cr_assert_eq (t[tl - chunk], (char)('a' + last % 26));
  free (t);
  csr_bbuf_release (&b);
  free (data);
}

/* Streamed (detached execs' output files): the head is not kept, append
 * says which leading bytes were the head's; the same tail and counts. */
Test (bbuf, streamed_head_is_the_callers)
{
  struct csr_bbuf b;
  cr_assert_eq (csr_bbuf_init_streamed (&b, 8), 0);
  cr_assert_null (b.head);
  cr_assert_eq (b.head_cap, 4);
  char streamed[64] = "";
  const char *chunks[] = { "ab", "cdef", "ghijklmn", "op" };
  for (size_t i = 0; i < 4; i++)
    {
      size_t h = append_str (&b, chunks[i]);
      strncat (streamed, chunks[i], h);
    }
  cr_assert_str_eq (streamed, "abcd");
  cr_assert_eq (b.head_len, 4);
  size_t n;
  char *t = csr_bbuf_tail (&b, &n);
  cr_assert_eq (n, 4);
  cr_assert (memcmp (t, "mnop", 4) == 0, "tail '%.*s'", (int)n, t);
  free (t);
  char *c = csr_bbuf_contents (&b, &n);
  cr_assert_eq (n, 4, "contents: the tail alone");
  free (c);
  cr_assert_eq (csr_bbuf_dropped (&b), 8);
  csr_bbuf_release (&b);
}
