#include "config.h"
#include "llm.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_parse.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/utf8.h"
#include "wire-internal.h"

/* Deeper documents are refused before a tree is built: yajl_tree_free
 * recurses, and no provider nests anywhere near this. */
#define WJSON_MAX_DEPTH 128

/* The most of a non-JSON error body quoted in a message (before the cut
 * to CSR_LLM_MESSAGE_MAX, which happens after cleaning). */
#define RAW_QUOTE_MAX 4096

/* ------------------------------------------------------------ generating JSON */

char *
csr_wire_finish (struct csr_jgen *w, csr_error **err)
{
  return csr_jgen_finish (w, "the request body", NULL, err);
}

void
csr_wire_chat_message (struct csr_jgen *w, const char *role, const char *content)
{
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "role", role);
  csr_jgen_kv_str (w, "content", content);
  csr_jgen_map_close (w);
}

/* ------------------------------------------------------------ reading JSON */

struct wjson_scan
{
  int depth;
  bool nul; /* a string holds U+0000 (the tree's C strings would cut it there) */
};

static int
depth_open (void *ctx)
{
  struct wjson_scan *s = ctx;
  return ++s->depth <= WJSON_MAX_DEPTH;
}

static int
depth_close (void *ctx)
{
  struct wjson_scan *s = ctx;
  --s->depth;
  return 1;
}

static int
string_scan (void *ctx, const unsigned char *str, size_t len)
{
  struct wjson_scan *s = ctx;
  s->nul = memchr (str, '\0', len) != NULL;
  return !s->nul;
}

static const yajl_callbacks depth_callbacks = {
  .yajl_string = string_scan,
  .yajl_start_map = depth_open,
  .yajl_map_key = string_scan,
  .yajl_end_map = depth_close,
  .yajl_start_array = depth_open,
  .yajl_end_array = depth_close,
};

/* Whether BODY[0..LEN) is one complete JSON value (strict: no comments, no
 * NUL bytes, raw or as \u0000 in a string, valid UTF-8, nesting within
 * WJSON_MAX_DEPTH); if not, a reason
 * in WHYBUF. */
static bool
wjson_valid (const char *body, size_t len, char *whybuf, size_t whybuf_len)
{
  struct wjson_scan scan = { 0, false };
  yajl_handle h = yajl_alloc (&depth_callbacks, NULL, &scan);
  if (h == NULL)
    {
      snprintf (whybuf, whybuf_len, "out of memory");
      return false;
    }
  yajl_status st = yajl_parse (h, (const unsigned char *)body, len);
  if (st == yajl_status_ok)
    st = yajl_complete_parse (h);
  if (st == yajl_status_client_canceled && scan.nul)
    snprintf (whybuf, whybuf_len, "a string holds a NUL character (\\u0000)");
  else if (st == yajl_status_client_canceled)
    snprintf (whybuf, whybuf_len, "nested deeper than %d levels", WJSON_MAX_DEPTH);
  else if (st != yajl_status_ok)
    {
      unsigned char *e = yajl_get_error (h, 0, NULL, 0);
      const char *text = e ? (const char *)e : "unknown error";
      snprintf (whybuf, whybuf_len, "not JSON (%.*s)", (int)strcspn (text, "\n"), text);
      if (e)
        yajl_free_error (h, e);
    }
  yajl_free (h);
  return st == yajl_status_ok;
}

yajl_val
csr_wjson_parse (const char *body, size_t len, char *whybuf, size_t whybuf_len, const char **why)
{
  *why = whybuf;
  whybuf[0] = '\0';
  if (body == NULL || len == 0)
    {
      *why = "empty body";
      return NULL;
    }
  if (!wjson_valid (body, len, whybuf, whybuf_len))
    return NULL;
  /* yajl_tree_parse wants a NUL-terminated string; the check above
   * guarantees BODY holds no NUL byte. */
  cleanup_free char *copy = strndup (body, len);
  if (copy == NULL)
    {
      *why = "out of memory";
      return NULL;
    }
  yajl_val v = yajl_tree_parse (copy, whybuf, whybuf_len);
  if (v == NULL)
    whybuf[strcspn (whybuf, "\n")] = '\0';
  return v;
}

const char *
csr_wjson_get_str (yajl_val obj, const char *key)
{
  return csr_json_str (csr_json_get (obj, key));
}

long
csr_wjson_get_count (yajl_val obj, const char *key)
{
  yajl_val v = csr_json_get (obj, key);
  if (!YAJL_IS_INTEGER (v) || v->u.number.i < 0 || v->u.number.i > LONG_MAX)
    return -1;
  return (long)v->u.number.i;
}

bool
csr_wjson_str_has (yajl_val obj, const char *key, const char *needle)
{
  const char *s = csr_wjson_get_str (obj, key);
  return s != NULL && strcasestr (s, needle) != NULL;
}

int
csr_wjson_text_blocks (yajl_val arr, struct csr_wbuf *b)
{
  for (size_t i = 0; YAJL_IS_ARRAY (arr) && i < arr->u.array.len; i++)
    {
      yajl_val block = arr->u.array.values[i];
      const char *type = csr_wjson_get_str (block, "type");
      if (type == NULL || strcmp (type, "text") != 0)
        continue;
      const char *text = csr_wjson_get_str (block, "text");
      if (text == NULL)
        return -1;
      csr_wbuf_add (b, text);
    }
  return 0;
}

/* ------------------------------------------------------------ requests */

char *
csr_wreq_url (const char *base, const char *version, const char *path, csr_error **err)
{
  size_t n = strlen (base);
  while (n > 0 && base[n - 1] == '/')
    n--;
  size_t vlen = version ? strlen (version) : 0;
  if (vlen > 0 && n >= vlen && memcmp (base + n - vlen, version, vlen) == 0)
    vlen = 0;
  char *url = NULL;
  if (asprintf (&url, "%.*s%.*s%s", (int)n, base, (int)vlen, vlen ? version : "", path) < 0)
    {
      csr_error_set (err, ENOMEM, "out of memory building the request URL");
      return NULL;
    }
  return url;
}

int
csr_wreq_header (struct csr_llm_request *r, csr_error **err, const char *fmt, ...)
{
  size_t n = 0;
  while (r->headers && r->headers[n])
    n++;
  char **grown = realloc (r->headers, (n + 2) * sizeof *grown);
  if (grown == NULL)
    return csr_error_set (err, ENOMEM, "out of memory building the request headers");
  r->headers = grown;
  r->headers[n] = NULL;

  va_list ap;
  va_start (ap, fmt);
  int rc = vasprintf (&r->headers[n], fmt, ap);
  va_end (ap);
  if (rc < 0)
    {
      r->headers[n] = NULL;
      return csr_error_set (err, ENOMEM, "out of memory building the request headers");
    }
  r->headers[n + 1] = NULL;
  return 0;
}

int
csr_wreq_max_tokens (const struct csr_llm_config *c)
{
  return c->max_tokens > 0 ? c->max_tokens : CSR_LLM_DEFAULT_MAX_TOKENS;
}

bool
csr_wreq_has_key (const struct csr_llm_config *c)
{
  return c->api_key != NULL && c->api_key[0] != '\0';
}

/* ------------------------------------------------------------ messages */

/* Overwrite control characters (C0, DEL, C1, U+2028, U+2029) of S with
 * one space each, in place; S is valid UTF-8. */
static void
one_line (char *s)
{
  unsigned char *in = (unsigned char *)s, *out = (unsigned char *)s;
  while (*in)
    {
      if (*in < 0x20 || *in == 0x7f)
        in++;
      else if (in[0] == 0xc2 && in[1] >= 0x80 && in[1] <= 0x9f)
        in += 2;
      else if (in[0] == 0xe2 && in[1] == 0x80 && (in[2] == 0xa8 || in[2] == 0xa9))
        in += 3;
      else
        {
          *out++ = *in++;
          continue;
        }
      *out++ = ' ';
    }
  *out = '\0';
}

/* Cut S to at most MAX bytes without splitting a UTF-8 character, then
 * drop trailing spaces. */
static void
cut (char *s, size_t max)
{
  size_t n = strlen (s);
  if (n > max)
    {
      n = max;
      while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    }
  while (n > 0 && s[n - 1] == ' ')
    n--;
  s[n] = '\0';
}

/* RAW as a one-line, valid UTF-8, scrubbed, cut message; NULL on ENOMEM. */
static char *
clean_message (char *raw, const char *key)
{
  csr_llm_scrub (raw, key);
  size_t len = strlen (raw);
  char *s = NULL;
  if (csr_utf8_valid (raw, len))
    s = strdup (raw);
  else
    s = csr_utf8_sanitize (raw, len, &len);
  if (s == NULL)
    return NULL;
  one_line (s);
  csr_llm_scrub (s, key);
  cut (s, CSR_LLM_MESSAGE_MAX);
  return s;
}

void
csr_wreply_set (struct csr_llm_reply *r, enum csr_llm_outcome o, const char *key, const char *fmt,
                ...)
{
  cleanup_free char *raw = NULL;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&raw, fmt, ap) < 0)
    raw = NULL;
  va_end (ap);

  r->outcome = o;
  free (r->text);
  r->text = NULL;
  free (r->message);
  /* Out of memory: no message; the outcome still says what happened. */
  r->message = raw ? clean_message (raw, key) : NULL;
}

void
csr_wreply_malformed (struct csr_llm_reply *r, enum csr_llm_wire w, const char *key,
                      const char *what)
{
  csr_wreply_set (r, CSR_LLM_FAIL, key, "%s: malformed reply: %s", csr_llm_wire_name (w), what);
}

void
csr_wreply_text (struct csr_llm_reply *r, enum csr_llm_wire w, const char *text, size_t len)
{
  char *copy = strndup (text ? text : "", text ? len : 0);
  if (copy == NULL)
    {
      csr_wreply_set (r, CSR_LLM_FAIL, NULL, "%s: out of memory reading the reply",
                      csr_llm_wire_name (w));
      return;
    }
  free (r->message);
  r->message = NULL;
  free (r->text);
  r->text = copy;
  r->outcome = CSR_LLM_OK;
}

void
csr_wbuf_add (struct csr_wbuf *b, const char *s)
{
  size_t n = strlen (s);
  if (b->oom)
    return;
  if (csr_buf_reserve (&b->s, &b->cap, b->len + n + 1, 256) < 0)
    {
      b->oom = true;
      return;
    }
  memcpy (b->s + b->len, s, n + 1);
  b->len += n;
}

void
csr_wbuf_release (struct csr_wbuf *b)
{
  free (b->s);
  memset (b, 0, sizeof *b);
}

void
csr_wreply_wbuf (struct csr_llm_reply *r, enum csr_llm_wire w, const struct csr_wbuf *b)
{
  if (b->oom)
    csr_wreply_set (r, CSR_LLM_FAIL, NULL, "%s: out of memory reading the reply",
                    csr_llm_wire_name (w));
  else
    csr_wreply_text (r, w, b->s, b->len);
}

/* ------------------------------------------------------------ durations and dates */

/* Digits with an optional fraction at *P (locale-free), advancing *P; -1
 * when there are no digits or the value is not finite. */
static double
decimal (const char **p)
{
  const char *s = *p;
  double v = 0, scale = 1;
  if (*s < '0' || *s > '9')
    return -1;
  for (; *s >= '0' && *s <= '9'; s++)
    v = v * 10 + (*s - '0');
  if (*s == '.')
    for (s++; *s >= '0' && *s <= '9'; s++)
      v += (*s - '0') * (scale /= 10);
  *p = s;
  return isfinite (v) ? v : -1;
}

double
csr_wparse_duration (const char *s)
{
  if (s == NULL)
    return -1;
  double v = decimal (&s);
  if (v < 0 || strcmp (s, "s") != 0)
    return -1;
  return v;
}

static int
month_index (const char *m)
{
  static const char months[12][4]
      = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
  for (int i = 0; i < 12; i++)
    if (strcasecmp (m, months[i]) == 0)
      return i;
  return -1;
}

/* Whether S[END..] is only spaces (END from a %n that ran). */
static bool
rest_blank (const char *s, int end)
{
  if (end <= 0)
    return false;
  return s[end + strspn (s + end, " \t")] == '\0';
}

/* "Sun, 06 Nov 1994 08:49:37 GMT" */
static bool
imf_fixdate (const char *s, struct tm *tm, char mon[4])
{
  int end = -1;
  return sscanf (s, "%*3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", &tm->tm_mday, mon,
                 &tm->tm_year, &tm->tm_hour, &tm->tm_min, &tm->tm_sec, &end)
             == 6
         && rest_blank (s, end);
}

/* "Sunday, 06-Nov-94 08:49:37 GMT" (RFC 850, obsolete) */
static bool
rfc850_date (const char *s, struct tm *tm, char mon[4])
{
  int end = -1;
  if (sscanf (s, "%*[A-Za-z], %2d-%3[A-Za-z]-%2d %2d:%2d:%2d GMT%n", &tm->tm_mday, mon,
              &tm->tm_year, &tm->tm_hour, &tm->tm_min, &tm->tm_sec, &end)
          != 6
      || !rest_blank (s, end) || tm->tm_year < 0)
    return false;
  tm->tm_year += tm->tm_year < 70 ? 2000 : 1900;
  return true;
}

/* "Sun Nov  6 08:49:37 1994" (asctime, obsolete) */
static bool
asctime_date (const char *s, struct tm *tm, char mon[4])
{
  int end = -1;
  return sscanf (s, "%*3[A-Za-z] %3[A-Za-z] %2d %2d:%2d:%2d %4d%n", mon, &tm->tm_mday, &tm->tm_hour,
                 &tm->tm_min, &tm->tm_sec, &tm->tm_year, &end)
             == 6
         && rest_blank (s, end);
}

/* An HTTP-date (any of the three forms of RFC 9110) as a time_t, or -1. */
static time_t
http_date (const char *s)
{
  struct tm tm = { 0 };
  char mon[4] = "";
  if (!imf_fixdate (s, &tm, mon) && !rfc850_date (s, &tm, mon) && !asctime_date (s, &tm, mon))
    return -1;
  tm.tm_mon = month_index (mon);
  if (tm.tm_mon < 0 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_year < 1970 || tm.tm_hour < 0
      || tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 60)
    return -1;
  tm.tm_year -= 1900;
  return timegm (&tm);
}

/* A Retry-After value in seconds from now, or -1 when absent or unreadable. */
static double
retry_after_seconds (const char *v)
{
  if (v == NULL)
    return -1;
  v += strspn (v, " \t");
  if (*v >= '0' && *v <= '9')
    {
      double s = decimal (&v);
      return v[strspn (v, " \t")] == '\0' ? s : -1;
    }
  time_t t = http_date (v);
  if (t == (time_t)-1)
    return -1;
  double d = difftime (t, time (NULL));
  return d > 0 ? d : 0;
}

/* ------------------------------------------------------------ the public part */

static const struct csr_llm_wire_ops *
wire_ops (enum csr_llm_wire w)
{
  switch (w)
    {
    case CSR_LLM_WIRE_OPENAI:
      return &csr_llm_openai_ops;
    case CSR_LLM_WIRE_ANTHROPIC:
      return &csr_llm_anthropic_ops;
    case CSR_LLM_WIRE_GEMINI:
      return &csr_llm_gemini_ops;
    case CSR_LLM_WIRE_OLLAMA:
      return &csr_llm_ollama_ops;
    case CSR_LLM_WIRE_NONE:
      break;
    }
  return NULL;
}

static bool
has_control (const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return true;
  return false;
}

/* What csr_llm_build needs from C before a wire can use it. */
static int
check_config (const struct csr_llm_config *c, const char *user, csr_error **err)
{
  if (c == NULL || c->provider == NULL)
    return csr_error_set (err, EINVAL, "no LLM provider is configured");
  const char *name = c->provider->name;
  if (c->model == NULL || c->model[0] == '\0')
    return csr_error_set (err, EINVAL, "%s: no model", name);
  if (c->base_url == NULL || c->base_url[0] == '\0' || has_control (c->base_url)
      || strchr (c->base_url, ' '))
    return csr_error_set (err, EINVAL, "%s: no usable base URL", name);
  if (c->api_key && has_control (c->api_key))
    return csr_error_set (err, EINVAL, "%s: the API key contains a control character", name);
  if (user == NULL)
    return csr_error_set (err, EINVAL, "%s: no prompt", name);
  return 0;
}

int
csr_llm_build (const struct csr_llm_config *c, const char *system, const char *user,
               struct csr_llm_request *r, csr_error **err)
{
  if (r == NULL)
    return csr_error_set (err, EINVAL, "no request to fill");
  memset (r, 0, sizeof *r);
  if (check_config (c, user, err) < 0)
    return -1;
  const struct csr_llm_wire_ops *ops = wire_ops (c->provider->wire);
  if (ops == NULL)
    return csr_error_set (err, EINVAL, "%s: unknown wire format %d", c->provider->name,
                          (int)c->provider->wire);
  if (ops->build (c, system, user, r, err) < 0)
    {
      csr_llm_request_release (r);
      return -1;
    }
  return 0;
}

void
csr_llm_request_release (struct csr_llm_request *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; r->headers && r->headers[i]; i++)
    {
      /* A header may hold the key. */
      explicit_bzero (r->headers[i], strlen (r->headers[i]));
      free (r->headers[i]);
    }
  free (r->headers);
  free (r->url);
  free (r->body);
  memset (r, 0, sizeof *r);
}

static void
reply_init (struct csr_llm_reply *r)
{
  memset (r, 0, sizeof *r);
  r->outcome = CSR_LLM_FAIL;
  r->input_tokens = -1;
  r->output_tokens = -1;
  r->retry_after_s = -1;
}

void
csr_llm_reply_release (struct csr_llm_reply *r)
{
  if (r == NULL)
    return;
  free (r->text);
  free (r->message);
  free (r->model);
  reply_init (r);
}

void
csr_llm_scrub (char *s, const char *key)
{
  if (s == NULL || key == NULL)
    return;
  size_t klen = strlen (key);
  if (klen < 4)
    return;
  for (char *p = strstr (s, key); p != NULL; p = strstr (p + klen, key))
    memset (p, '*', klen);
}

/* The transient statuses, and 402 (Payment Required: a spend limit). */
static enum csr_llm_outcome
status_outcome (long status)
{
  switch (status)
    {
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
    case 529:
      return CSR_LLM_RETRY;
    case 402:
      return CSR_LLM_QUOTA;
    default:
      return CSR_LLM_FAIL;
    }
}

/* Whether DOC is an error document whatever the status: {"error": ...}
 * (every wire), {"type": "error"} (Anthropic), {"object": "error"} (vLLM). */
static bool
is_error_doc (yajl_val doc)
{
  yajl_val e = csr_json_get (doc, "error");
  if (e != NULL && !YAJL_IS_NULL (e))
    return true;
  const char *type = csr_wjson_get_str (doc, "type");
  const char *object = csr_wjson_get_str (doc, "object");
  return (type && strcmp (type, "error") == 0) || (object && strcmp (object, "error") == 0);
}

/* The provider's own words in an error document, or NULL. */
static const char *
error_text (yajl_val doc)
{
  yajl_val e = csr_json_get (doc, "error");
  const char *s = csr_json_str (e);
  if (s == NULL)
    s = csr_wjson_get_str (e, "message");
  if (s == NULL)
    s = csr_wjson_get_str (doc, "message");
  if (s == NULL)
    s = csr_wjson_get_str (doc, "detail");
  return s;
}

/* "WIRE: HTTP STATUS: what the provider said" (or its non-JSON body, unless
 * that is an HTML page). */
static void
error_message (struct csr_llm_reply *r, enum csr_llm_outcome o, enum csr_llm_wire w, long status,
               yajl_val doc, const char *body, size_t len, const char *key)
{
  const char *name = csr_llm_wire_name (w);
  const char *said = error_text (doc);
  if (said == NULL && doc == NULL && body != NULL && len > 0)
    {
      size_t skip = 0;
      while (
          skip < len
          && (body[skip] == ' ' || body[skip] == '\t' || body[skip] == '\r' || body[skip] == '\n'))
        skip++;
      if (skip < len && body[skip] != '<')
        {
          size_t n = len - skip < RAW_QUOTE_MAX ? len - skip : RAW_QUOTE_MAX;
          csr_wreply_set (r, o, key, "%s: HTTP %ld: %.*s", name, status, (int)n, body + skip);
          return;
        }
    }
  if (said != NULL && said[0] != '\0')
    csr_wreply_set (r, o, key, "%s: HTTP %ld: %s", name, status, said);
  else
    csr_wreply_set (r, o, key, "%s: HTTP %ld", name, status);
}

static void
parse_error (const struct csr_llm_wire_ops *ops, long status, const char *retry_after, yajl_val doc,
             const char *body, size_t len, const char *key, struct csr_llm_reply *r)
{
  double hint = -1;
  enum csr_llm_outcome o = ops->classify ? ops->classify (doc, status, &hint) : CSR_LLM_OK;
  if (o == CSR_LLM_OK)
    o = status_outcome (status);
  error_message (r, o, ops->wire, status, doc, body, len, key);
  double header = retry_after_seconds (retry_after);
  r->retry_after_s = header >= 0 ? header : hint;
}

/* The longest model name kept from a reply. */
#define REPLY_MODEL_MAX 200

/* The model a reply says made it: "model" (openai, deepseek, anthropic,
 * ollama) or "modelVersion" (gemini); NULL when absent, not a string, empty,
 * too long, not UTF-8 or holding a control character (it goes into the
 * result as reported, so it must be one clean line). */
static char *
reply_model (yajl_val doc, enum csr_llm_wire w)
{
  const char *m = csr_wjson_get_str (doc, w == CSR_LLM_WIRE_GEMINI ? "modelVersion" : "model");
  if (m == NULL || *m == '\0')
    return NULL;
  size_t n = strlen (m);
  if (n > REPLY_MODEL_MAX || !csr_utf8_valid (m, n))
    return NULL;
  for (const char *c = m; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      return NULL;
  return strdup (m);
}

void
csr_llm_parse (enum csr_llm_wire w, long http_status, const char *retry_after, const char *body,
               size_t len, const char *key, struct csr_llm_reply *r)
{
  if (r == NULL)
    return;
  reply_init (r);
  const struct csr_llm_wire_ops *ops = wire_ops (w);
  if (ops == NULL)
    {
      csr_wreply_set (r, CSR_LLM_FAIL, key, "llm: unknown wire format %d", (int)w);
      return;
    }
  if (body == NULL)
    len = 0;

  char whybuf[160];
  const char *why = NULL;
  cleanup_yajl_val yajl_val doc = csr_wjson_parse (body, len, whybuf, sizeof whybuf, &why);
  bool success = http_status >= 200 && http_status <= 299;
  if (!success || is_error_doc (doc))
    parse_error (ops, http_status, retry_after, doc, body, len, key, r);
  else if (doc == NULL)
    csr_wreply_malformed (r, w, key, why);
  else if (!YAJL_IS_OBJECT (doc))
    csr_wreply_malformed (r, w, key, "not a JSON object");
  else
    {
      ops->parse_ok (doc, key, r);
      if (r->outcome == CSR_LLM_OK)
        r->model = reply_model (doc, w);
    }
}
