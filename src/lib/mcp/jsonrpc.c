/* csrun — JSON-RPC 2.0 lines (jsonrpc.h). */
#include "config.h"
#include "jsonrpc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/json-gen.h"
#include "../util/json.h"

/* ------------------------------------------------------------ lines in */

void
csr_rpc_reader_init (struct csr_rpc_reader *r, size_t max)
{
  memset (r, 0, sizeof *r);
  r->max = max;
}

void
csr_rpc_reader_release (struct csr_rpc_reader *r)
{
  free (r->buf);
  free (r->line);
  memset (r, 0, sizeof *r);
}

int
csr_rpc_reader_feed (struct csr_rpc_reader *r, const char *data, size_t len)
{
  if (r->skipping)
    {
      /* Drop the rest of a line that is too long, keep what follows it. */
      const char *nl = memchr (data, '\n', len);
      if (nl == NULL)
        return 0;
      r->skipping = false;
      len -= (size_t)(nl + 1 - data);
      data = nl + 1;
    }
  if (csr_buf_reserve (&r->buf, &r->cap, r->len + len + 1, 65536) < 0)
    return -1;
  memcpy (r->buf + r->len, data, len);
  r->len += len;
  return 0;
}

/* Remove the first N bytes of the buffer. */
static void
consume (struct csr_rpc_reader *r, size_t n)
{
  memmove (r->buf, r->buf + n, r->len - n);
  r->len -= n;
  r->scan = 0;
}

static int
emit (struct csr_rpc_reader *r, size_t end, char **line, size_t *len)
{
  size_t n = end;
  if (n > 0 && r->buf[n - 1] == '\r')
    n--;
  /* The line moves to a buffer of its own: the caller keeps it until the
   * next call, while the rest stays buffered. */
  if (n + 1 > r->line_cap)
    {
      char *nb = realloc (r->line, n + 1);
      if (nb == NULL)
        {
          consume (r, end + 1 <= r->len ? end + 1 : end);
          return 0;
        }
      r->line = nb;
      r->line_cap = n + 1;
    }
  memcpy (r->line, r->buf, n);
  r->line[n] = '\0';
  consume (r, end + 1 <= r->len ? end + 1 : end);
  *line = r->line;
  *len = n;
  return 1;
}

int
csr_rpc_reader_next (struct csr_rpc_reader *r, char **line, size_t *len)
{
  char *nl = r->len > r->scan ? memchr (r->buf + r->scan, '\n', r->len - r->scan) : NULL;
  if (nl == NULL)
    {
      r->scan = r->len;
      if (r->len > r->max)
        {
          /* Too long: drop it (and what follows up to its newline). */
          r->len = 0;
          r->scan = 0;
          r->skipping = true;
          return 2;
        }
      return 0;
    }
  size_t end = (size_t)(nl - r->buf);
  if (end > r->max)
    {
      consume (r, end + 1);
      return 2;
    }
  return emit (r, end, line, len);
}

int
csr_rpc_reader_last (struct csr_rpc_reader *r, char **line, size_t *len)
{
  int rc = csr_rpc_reader_next (r, line, len);
  if (rc != 0 || r->len == 0)
    return rc;
  return emit (r, r->len, line, len);
}

/* ------------------------------------------------------------ one message */

static int invalid (struct csr_rpc_msg *m, int code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
invalid (struct csr_rpc_msg *m, int code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (m->error_message, sizeof m->error_message, fmt, ap);
  va_end (ap);
  m->kind = CSR_RPC_INVALID;
  m->error_code = code;
  return -1;
}

/* The id as JSON text: a string or an integer (null, fractions, booleans,
 * objects are refused). */
static int
read_id (yajl_val id, char **out)
{
  struct csr_jgen w;
  if (id == NULL)
    return 0;
  bool integer = YAJL_IS_NUMBER (id) && strpbrk (id->u.number.r, ".eE") == NULL;
  if (!YAJL_IS_STRING (id) && !integer)
    return -1;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return -1;
  csr_jgen_tree (&w, id);
  *out = csr_jgen_finish (&w, "an id", NULL, NULL);
  return *out ? 0 : -1;
}

static int envelope (struct csr_rpc_msg *m);

void
csr_rpc_parse (const char *line, size_t len, struct csr_rpc_msg *m)
{
  memset (m, 0, sizeof *m);
  csr_error *e = NULL;
  if (csr_json_prescan (line, len, &e) < 0)
    {
      invalid (m, CSR_RPC_PARSE_ERROR, "Parse error: %s", csr_error_text (e));
      csr_error_free (e);
      return;
    }
  char yerr[256] = "";
  m->tree = yajl_tree_parse (line, yerr, sizeof yerr);
  if (m->tree == NULL)
    {
      /* yajl's message spans lines (it quotes the text): its first line. */
      yerr[strcspn (yerr, "\n")] = '\0';
      invalid (m, CSR_RPC_PARSE_ERROR, "Parse error: not JSON (%s)",
               yerr[0] ? yerr : "invalid text");
      return;
    }
  envelope (m);
}

/* The members of a parsed message: -1 (and M invalid) when they are wrong. */
static int
envelope (struct csr_rpc_msg *m)
{
  yajl_val t = m->tree;
  csr_error *e = NULL;
  if (YAJL_IS_ARRAY (t))
    return invalid (m, CSR_RPC_INVALID_REQUEST,
                    "Invalid Request: batches (JSON arrays) are not supported; send one "
                    "message per line");
  if (!YAJL_IS_OBJECT (t))
    return invalid (m, CSR_RPC_INVALID_REQUEST, "Invalid Request: expected a JSON object, got %s",
                    csr_json_type_name (t));
  yajl_val id = csr_json_get (t, "id");
  bool has_id = false;
  for (size_t i = 0; i < t->u.object.len; i++)
    has_id = has_id || strcmp (t->u.object.keys[i], "id") == 0;
  if (read_id (id, &m->id) < 0)
    return invalid (m, CSR_RPC_INVALID_REQUEST,
                    "Invalid Request: id: expected a string or an integer, got %s",
                    csr_json_type_name (id));
  struct csr_jpath x = { .err = &e, .what = "the message" };
  if (csr_jpath_check_duplicates (&x, t) < 0)
    {
      invalid (m, CSR_RPC_INVALID_REQUEST, "Invalid Request: %s", csr_error_text (e));
      csr_error_free (e);
      return -1;
    }
  const char *v = csr_json_str (csr_json_get (t, "jsonrpc"));
  if (v == NULL || strcmp (v, "2.0") != 0)
    return invalid (m, CSR_RPC_INVALID_REQUEST, "Invalid Request: jsonrpc: expected \"2.0\"%s",
                    csr_json_get (t, "jsonrpc") ? "" : " (the member is missing)");
  yajl_val method = csr_json_get (t, "method");
  if (method == NULL)
    {
      if (csr_json_get (t, "result") || csr_json_get (t, "error"))
        {
          m->kind = CSR_RPC_RESPONSE;
          return 0;
        }
      return invalid (m, CSR_RPC_INVALID_REQUEST,
                      "Invalid Request: method: required field is missing");
    }
  if (!YAJL_IS_STRING (method))
    return invalid (m, CSR_RPC_INVALID_REQUEST,
                    "Invalid Request: method: expected a string, got %s",
                    csr_json_type_name (method));
  m->method = method->u.string;
  yajl_val params = csr_json_get (t, "params");
  if (params && !YAJL_IS_OBJECT (params))
    return invalid (m, CSR_RPC_INVALID_REQUEST,
                    "Invalid Request: params: expected an object, got %s",
                    csr_json_type_name (params));
  m->params = params;
  if (has_id && id == NULL)
    return invalid (m, CSR_RPC_INVALID_REQUEST,
                    "Invalid Request: id: expected a string or an integer, got null");
  m->kind = m->id ? CSR_RPC_REQUEST : CSR_RPC_NOTIFICATION;
  return 0;
}

void
csr_rpc_msg_release (struct csr_rpc_msg *m)
{
  if (m->tree)
    yajl_tree_free (m->tree);
  free (m->id);
  memset (m, 0, sizeof *m);
}

/* ------------------------------------------------------------ lines out */

/* PREFIX + BODY + "}\n" as one malloc'ed line. */
static char *
join (const char *prefix, const char *body, size_t *len)
{
  char *s = NULL;
  int n = asprintf (&s, "%s%s}\n", prefix, body);
  if (n < 0)
    return NULL;
  if (len)
    *len = (size_t)n;
  return s;
}

char *
csr_rpc_result_line (const char *id, const char *result, size_t *len)
{
  cleanup_free char *prefix = NULL;
  if (asprintf (&prefix, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":", id) < 0)
    return NULL;
  return join (prefix, result, len);
}

char *
csr_rpc_error_line (const char *id, int code, const char *message, size_t *len)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_int (&w, "code", code);
  csr_jgen_kv_str (&w, "message", message);
  csr_jgen_map_close (&w);
  cleanup_free char *err = csr_jgen_finish (&w, "an error", NULL, NULL);
  cleanup_free char *prefix = NULL;
  if (err == NULL
      || asprintf (&prefix, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":", id ? id : "null") < 0)
    return NULL;
  return join (prefix, err, len);
}

char *
csr_rpc_notification_line (const char *method, const char *params, size_t *len)
{
  cleanup_free char *prefix = NULL;
  /* METHOD is one of ours: a plain name. */
  if (asprintf (&prefix, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\",\"params\":", method) < 0)
    return NULL;
  return join (prefix, params, len);
}

struct csr_rpc_chunk
{
  struct csr_rpc_chunk *next;
  char *data;
  size_t len, off;
};

int
csr_rpc_outq_push (struct csr_rpc_outq *q, char *line, size_t len)
{
  struct csr_rpc_chunk *c = calloc (1, sizeof *c);
  if (c == NULL)
    {
      free (line);
      errno = ENOMEM;
      return -1;
    }
  c->data = line;
  c->len = len;
  if (q->last)
    q->last->next = c;
  else
    q->first = c;
  q->last = c;
  q->pending += len;
  return 0;
}

int
csr_rpc_outq_write (struct csr_rpc_outq *q, int fd)
{
  struct csr_rpc_chunk *c = q->first;
  if (c == NULL)
    return 0;
  size_t n = c->len - c->off;
  if (n > 4096)
    n = 4096;
  ssize_t w = write (fd, c->data + c->off, n);
  if (w < 0)
    return errno == EINTR || errno == EAGAIN ? 0 : -1;
  c->off += (size_t)w;
  q->pending -= (size_t)w;
  if (c->off == c->len)
    {
      q->first = c->next;
      if (q->first == NULL)
        q->last = NULL;
      free (c->data);
      free (c);
    }
  return 0;
}

void
csr_rpc_outq_release (struct csr_rpc_outq *q)
{
  while (q->first)
    {
      struct csr_rpc_chunk *c = q->first;
      q->first = c->next;
      free (c->data);
      free (c);
    }
  q->last = NULL;
  q->pending = 0;
}
