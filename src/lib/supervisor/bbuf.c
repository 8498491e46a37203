#include "config.h"
#include "bbuf.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Layout: HEAD holds the first head_cap bytes of the stream.  Every later byte
 * goes through TAIL, a ring of tail_cap bytes: tail_pos is the index of the
 * oldest kept byte and tail_len how many bytes the ring holds (<= tail_cap).
 * All copies are done with memcpy in at most two pieces, so an append costs
 * O(min (len, head_cap + tail_cap)) whatever the chunk size. */

static int
init (struct csr_bbuf *b, size_t max, bool keep_head)
{
  memset (b, 0, sizeof *b);
  b->head_cap = max / 2;
  b->tail_cap = max - b->head_cap;
  if (keep_head && b->head_cap > 0)
    {
      b->head = malloc (b->head_cap);
      if (b->head == NULL)
        goto fail;
    }
  if (b->tail_cap > 0)
    {
      b->tail = malloc (b->tail_cap);
      if (b->tail == NULL)
        goto fail;
    }
  return 0;

fail:
  csr_bbuf_release (b);
  errno = ENOMEM;
  return -1;
}

int
csr_bbuf_init (struct csr_bbuf *b, size_t max)
{
  return init (b, max, true);
}

int
csr_bbuf_init_streamed (struct csr_bbuf *b, size_t max)
{
  return init (b, max, false);
}

void
csr_bbuf_release (struct csr_bbuf *b)
{
  if (b == NULL)
    return;
  free (b->head);
  free (b->tail);
  memset (b, 0, sizeof *b);
}

/* Copy LEN bytes (LEN <= tail_cap) into the ring after its newest byte,
 * overwriting the oldest bytes once the ring is full. */
static void
ring_push (struct csr_bbuf *b, const char *data, size_t len)
{
  size_t cap = b->tail_cap;
  size_t w = b->tail_pos + b->tail_len;
  if (w >= cap)
    w -= cap;
  size_t first = cap - w;
  if (first > len)
    first = len;
  memcpy (b->tail + w, data, first);
  if (len > first)
    memcpy (b->tail, data + first, len - first);

  size_t n = b->tail_len + len;
  if (n > cap)
    {
      size_t overflow = n - cap; /* < cap: tail_len <= cap and len < cap */
      b->tail_pos += overflow;
      if (b->tail_pos >= cap)
        b->tail_pos -= cap;
      n = cap;
    }
  b->tail_len = n;
}

size_t
csr_bbuf_append (struct csr_bbuf *b, const char *data, size_t len)
{
  if (len == 0)
    return 0;
  b->total += len;

  size_t to_head = b->head_cap - b->head_len;
  if (to_head > len)
    to_head = len;
  if (to_head > 0)
    {
      if (b->head) /* streamed: the caller's */
        memcpy (b->head + b->head_len, data, to_head);
      b->head_len += to_head;
      data += to_head;
      len -= to_head;
    }
  if (len == 0 || b->tail_cap == 0)
    return to_head;

  if (len >= b->tail_cap)
    {
      /* The chunk alone fills the ring: keep only its last tail_cap bytes. */
      memcpy (b->tail, data + (len - b->tail_cap), b->tail_cap);
      b->tail_pos = 0;
      b->tail_len = b->tail_cap;
    }
  else
    ring_push (b, data, len);
  return to_head;
}

uint64_t
csr_bbuf_dropped (const struct csr_bbuf *b)
{
  return b->total - b->head_len - b->tail_len;
}

/* Copy the ring's tail_len bytes, oldest first, to OUT. */
static void
ring_copy (const struct csr_bbuf *b, char *out)
{
  size_t first = b->tail_cap - b->tail_pos;
  if (first > b->tail_len)
    first = b->tail_len;
  if (first > 0)
    memcpy (out, b->tail + b->tail_pos, first);
  if (b->tail_len > first)
    memcpy (out + first, b->tail, b->tail_len - first);
}

char *
csr_bbuf_tail (const struct csr_bbuf *b, size_t *len)
{
  char *out = malloc (b->tail_len + 1);
  if (out == NULL)
    return NULL;
  ring_copy (b, out);
  out[b->tail_len] = '\0';
  if (len)
    *len = b->tail_len;
  return out;
}

char *
csr_bbuf_contents (const struct csr_bbuf *b, size_t *len)
{
  size_t hl = b->head ? b->head_len : 0;
  size_t n = hl + b->tail_len;
  char *out = malloc (n + 1);
  if (out == NULL)
    return NULL;
  if (hl > 0)
    memcpy (out, b->head, hl);
  ring_copy (b, out + hl);
  out[n] = '\0';
  if (len)
    *len = n;
  return out;
}
