/* csrun — the order of an attempt's stdout and stderr (outseq.h). */
#include "config.h"
#include "outseq.h"

#include <stdlib.h>
#include <string.h>

int
csr_outseq_init (struct csr_outseq *q)
{
  memset (q, 0, sizeof *q);
  q->head = calloc (CSR_OUTSEQ_HEAD, sizeof *q->head);
  q->ring = calloc (CSR_OUTSEQ_TAIL, sizeof *q->ring);
  if (q->head == NULL || q->ring == NULL)
    {
      csr_outseq_release (q);
      return -1;
    }
  return 0;
}

void
csr_outseq_release (struct csr_outseq *q)
{
  free (q->head);
  free (q->ring);
  memset (q, 0, sizeof *q);
}

static struct csr_chunk *
last_chunk (struct csr_outseq *q)
{
  if (q->ring_len > 0)
    return &q->ring[(q->ring_pos + CSR_OUTSEQ_TAIL - 1) % CSR_OUTSEQ_TAIL];
  return q->n_head > 0 ? &q->head[q->n_head - 1] : NULL;
}

void
csr_outseq_add (struct csr_outseq *q, enum csr_stream stream, uint64_t off, uint64_t len)
{
  if (q->head == NULL || len == 0)
    return;
  struct csr_chunk *l = last_chunk (q);
  if (l && l->stream == stream && l->off + l->len == off)
    {
      l->len += len;
      return;
    }
  struct csr_chunk c = { off, len, stream };
  if (q->n_head < CSR_OUTSEQ_HEAD)
    {
      q->head[q->n_head++] = c;
      return;
    }
  if (q->ring_len == CSR_OUTSEQ_TAIL)
    q->dropped++;
  else
    q->ring_len++;
  q->ring[q->ring_pos] = c;
  q->ring_pos = (q->ring_pos + 1) % CSR_OUTSEQ_TAIL;
}

/* What one stream kept, and how far the walk got in it. */
struct kept
{
  const struct csr_bbuf *b;
  char *tail;
  size_t tail_len;
  uint64_t tail_start; /* the stream's offset of tail[0] */
  uint64_t cursor;     /* bytes before this were shown (or counted as dropped) */
  bool marked;         /* the dropped bytes were reported */
};

/* Show bytes [cursor, to) of stream S: the parts kept, once the dropped count. */
static void
show_upto (struct kept *k, enum csr_stream s, uint64_t to, csr_outseq_cb cb, void *data)
{
  const struct csr_bbuf *b = k->b;
  uint64_t from = k->cursor;
  if (to <= from)
    return;
  k->cursor = to;
  if (from < b->head_len)
    {
      uint64_t e = to < b->head_len ? to : b->head_len;
      cb (data, s, b->head + from, e - from);
      from = e;
    }
  if (from < to && from < k->tail_start)
    {
      if (!k->marked && csr_bbuf_dropped (b) > 0)
        cb (data, s, NULL, csr_bbuf_dropped (b));
      k->marked = true;
      from = to < k->tail_start ? to : k->tail_start;
    }
  if (from < to)
    cb (data, s, k->tail + (from - k->tail_start), to - from);
}

static void
show_chunk (struct kept *k, const struct csr_chunk *c, csr_outseq_cb cb, void *data)
{
  struct kept *ks = &k[c->stream];
  /* Bytes of this stream whose chunks were not kept come first. */
  show_upto (ks, c->stream, c->off + c->len, cb, data);
}

int
csr_outseq_walk (const struct csr_outseq *q, const struct csr_bbuf *out, const struct csr_bbuf *err,
                 csr_outseq_cb cb, void *data)
{
  struct kept k[2] = { { .b = out }, { .b = err } };
  int rc = 0;
  for (int s = 0; s < 2; s++)
    {
      k[s].tail = csr_bbuf_tail (k[s].b, &k[s].tail_len);
      if (k[s].tail == NULL)
        {
          rc = -1;
          goto out;
        }
      k[s].tail_start = k[s].b->total - k[s].tail_len;
    }
  for (size_t i = 0; i < q->n_head; i++)
    show_chunk (k, &q->head[i], cb, data);
  for (size_t i = 0; i < q->ring_len; i++)
    show_chunk (k, &q->ring[(q->ring_pos + CSR_OUTSEQ_TAIL - q->ring_len + i) % CSR_OUTSEQ_TAIL],
                cb, data);
  for (int s = 0; s < 2; s++)
    if (k[s].tail)
      show_upto (&k[s], (enum csr_stream)s, k[s].b->total, cb, data);
out:
  free (k[0].tail);
  free (k[1].tail);
  return rc;
}
