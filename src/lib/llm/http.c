/* csrun — one HTTP POST with libcurl, for the LLM providers.
 *
 * libcurl is loaded with dlopen() on first use: it pulls in some thirty
 * shared libraries (TLS, HTTP/2, IDN, Kerberos, ...), and only healing with
 * an LLM needs it, so linking it would slow down every csrun start.  The
 * header is used for types and constants only; every function goes through
 * the table below. */
#include "config.h"
#include "llm.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "../util/cleanup.h"

#ifndef CSR_LIBCURL_SONAME
#define CSR_LIBCURL_SONAME "libcurl.so.4"
#endif

/* Replies larger than this are refused: no provider sends that much for one
 * completion, and it bounds what a hostile endpoint can make us allocate. */
#define HTTP_MAX_REPLY ((size_t)8 * 1024 * 1024)

/* By number, so that this builds with the headers of any libcurl >= 7.60
 * (CURLOPT_PROTOCOLS_STR came with 7.85) and without the deprecation warning
 * newer headers attach to CURLOPT_PROTOCOLS. */
#define OPT_PROTOCOLS_STR ((CURLoption)(CURLOPTTYPE_OBJECTPOINT + 318))
#define OPT_PROTOCOLS ((CURLoption)(CURLOPTTYPE_LONG + 181))

/* Fields are named without the "curl_" prefix: curl.h may define
 * curl_easy_setopt and curl_easy_getinfo as type-checking macros. */
#define CURL_FUNCS(X)                                                                              \
  X (global_init)                                                                                  \
  X (easy_init)                                                                                    \
  X (easy_cleanup)                                                                                 \
  X (easy_setopt)                                                                                  \
  X (easy_perform)                                                                                 \
  X (easy_getinfo)                                                                                 \
  X (easy_strerror)                                                                                \
  X (slist_append)                                                                                 \
  X (slist_free_all)

#define CU_FIELD(f) __typeof__ (curl_##f) *f;
static struct
{
  CURL_FUNCS (CU_FIELD)
} cu;
#undef CU_FIELD

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static char cu_load_error[256]; /* empty: loaded */

static void
cu_load_once (void)
{
  void *h = dlopen (CSR_LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    {
      const char *e = dlerror ();
      snprintf (cu_load_error, sizeof cu_load_error, "cannot load libcurl: %s",
                e ? e : CSR_LIBCURL_SONAME);
      return;
    }
#define CU_LOAD(f)                                                                                 \
  if ((*(void **)&cu.f = dlsym (h, "curl_" #f)) == NULL)                                           \
    {                                                                                              \
      snprintf (cu_load_error, sizeof cu_load_error, "libcurl: no symbol curl_%s", #f);            \
      return;                                                                                      \
    }
  CURL_FUNCS (CU_LOAD)
#undef CU_LOAD
  /* curl_global_init is not thread-safe before 7.84: pthread_once makes
   * this the only call, whichever thread comes first. */
  CURLcode rc = cu.global_init (CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK)
    snprintf (cu_load_error, sizeof cu_load_error, "libcurl: initialisation failed: %s",
              cu.easy_strerror (rc));
}

static int
cu_load (csr_error **err)
{
  pthread_once (&cu_once, cu_load_once);
  if (cu_load_error[0] != '\0')
    return csr_error_set (err, 0, "%s", cu_load_error);
  return 0;
}

/* ---------------------------------------------------------------- helpers */

/* URL as it may appear in a message: scheme://host[:port]/path, without
 * userinfo, query string or fragment (either could hold a secret). */
static char *
url_for_message (const char *url)
{
  const char *sep = strstr (url, "://");
  const char *auth = sep ? sep + 3 : url;
  const char *auth_end = auth + strcspn (auth, "/?#");
  const char *host = auth;
  for (const char *q = auth; q < auth_end; q++)
    if (*q == '@')
      host = q + 1;
  const char *path_end = auth_end + strcspn (auth_end, "?#");
  char *s = NULL;
  if (asprintf (&s, "%.*s%s%.*s%.*s", sep ? (int)(sep - url) : 0, url, sep ? "://" : "",
                (int)(auth_end - host), host, (int)(path_end - auth_end), auth_end)
      < 0)
    return NULL;
  /* Never let a control character from the URL into a one-line message. */
  for (char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = '?';
  return s;
}

struct sink
{
  char *buf;
  size_t len;
  size_t cap;
  bool too_big;
  bool no_memory;
  char *retry_after;
};

static size_t
write_cb (char *data, size_t size, size_t n, void *userdata)
{
  struct sink *s = userdata;
  size_t len = size * n;
  if (len > HTTP_MAX_REPLY - s->len)
    {
      s->too_big = true;
      return 0; /* CURLE_WRITE_ERROR */
    }
  if (s->len + len + 1 > s->cap)
    {
      size_t cap = s->cap ? s->cap : 16384;
      while (cap < s->len + len + 1)
        cap *= 2;
      if (cap > HTTP_MAX_REPLY + 1)
        cap = HTTP_MAX_REPLY + 1;
      char *nbuf = realloc (s->buf, cap);
      if (nbuf == NULL)
        {
          s->no_memory = true;
          return 0;
        }
      s->buf = nbuf;
      s->cap = cap;
    }
  memcpy (s->buf + s->len, data, len);
  s->len += len;
  s->buf[s->len] = '\0';
  return len;
}

static size_t
header_cb (char *data, size_t size, size_t n, void *userdata)
{
  struct sink *s = userdata;
  size_t len = size * n;
  static const char name[] = "retry-after:";
  if (len >= 5 && memcmp (data, "HTTP/", 5) == 0)
    {
      /* A new response (after a 100 Continue, or a proxy's CONNECT reply):
       * only the final one's headers count. */
      free (s->retry_after);
      s->retry_after = NULL;
    }
  else if (len >= sizeof name - 1 && strncasecmp (data, name, sizeof name - 1) == 0)
    {
      const char *v = data + sizeof name - 1, *end = data + len;
      while (v < end && (*v == ' ' || *v == '\t'))
        v++;
      while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
      char *copy = strndup (v, (size_t)(end - v));
      if (copy == NULL)
        {
          s->no_memory = true;
          return 0;
        }
      free (s->retry_after);
      s->retry_after = copy;
    }
  return len;
}

static long
to_ms (double s)
{
  if (!(s > 0))
    return 0; /* libcurl's default */
  if (s > 86400.0)
    s = 86400.0;
  long ms = (long)(s * 1000.0 + 0.5);
  return ms > 0 ? ms : 1;
}

static void
slist_freep (struct curl_slist **l)
{
  if (*l)
    cu.slist_free_all (*l);
}

static void
easy_cleanupp (CURL **h)
{
  if (*h)
    cu.easy_cleanup (*h);
}

static bool
has_header (char *const *headers, const char *name)
{
  size_t n = strlen (name);
  for (size_t i = 0; headers && headers[i]; i++)
    if (strncasecmp (headers[i], name, n) == 0 && headers[i][n] == ':')
      return true;
  return false;
}

/* ---------------------------------------------------------------- POST */

void
csr_http_response_release (struct csr_http_response *r)
{
  if (r == NULL)
    return;
  free (r->body);
  free (r->retry_after);
  r->body = NULL;
  r->retry_after = NULL;
  r->len = 0;
  r->status = 0;
}

int
csr_http_post (const char *url, char *const *headers, const char *body, double connect_timeout_s,
               double timeout_s, const char *ca_file, struct csr_http_response *r, csr_error **err)
{
  memset (r, 0, sizeof *r);
  if (url == NULL || body == NULL)
    return csr_error_set (err, 0, "POST: no URL or body");
  cleanup_free char *where = url_for_message (url);
  if (where == NULL)
    return csr_error_errno (err, "POST: cannot allocate");
  if (cu_load (err) < 0)
    return csr_error_wrap (err, "POST %s", where);

  /* Declared first, so released after the handle that points to it. */
  __attribute__ ((cleanup (slist_freep))) struct curl_slist *list = NULL;
  __attribute__ ((cleanup (easy_cleanupp))) CURL *h = cu.easy_init ();
  if (h == NULL)
    return csr_error_set (err, 0, "POST %s: cannot create a libcurl handle", where);

  for (size_t i = 0; headers && headers[i]; i++)
    {
      /* A line break would let a value smuggle in more headers. */
      if (strpbrk (headers[i], "\r\n") != NULL)
        return csr_error_set (err, 0, "POST %s: request header %zu contains a line break", where,
                              i + 1);
      struct curl_slist *l = cu.slist_append (list, headers[i]);
      if (l == NULL)
        return csr_error_set (err, 0, "POST %s: cannot allocate", where);
      list = l;
    }
  const char *extra[3];
  size_t n_extra = 0;
  if (!has_header (headers, "Content-Type"))
    extra[n_extra++] = "Content-Type: application/json";
  /* No "Expect: 100-continue" round trip for large prompts. */
  if (!has_header (headers, "Expect"))
    extra[n_extra++] = "Expect:";
  for (size_t i = 0; i < n_extra; i++)
    {
      struct curl_slist *l = cu.slist_append (list, extra[i]);
      if (l == NULL)
        return csr_error_set (err, 0, "POST %s: cannot allocate", where);
      list = l;
    }

  struct sink sink = { 0 };
  char errbuf[CURL_ERROR_SIZE];
  errbuf[0] = '\0';

  CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                                              \
  if (rc == CURLE_OK)                                                                              \
  rc = cu.easy_setopt (h, opt, val)
  SET (CURLOPT_ERRORBUFFER, errbuf);
  SET (CURLOPT_URL, url);
  SET (CURLOPT_NOSIGNAL, 1L);
  SET (CURLOPT_NOPROGRESS, 1L);
  SET (CURLOPT_POST, 1L);
  SET (CURLOPT_POSTFIELDS, body);
  SET (CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen (body));
  SET (CURLOPT_HTTPHEADER, list);
  SET (CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
  SET (CURLOPT_FOLLOWLOCATION, 0L);
  SET (CURLOPT_SSL_VERIFYPEER, 1L);
  SET (CURLOPT_SSL_VERIFYHOST, 2L);
  SET (CURLOPT_CONNECTTIMEOUT_MS, to_ms (connect_timeout_s));
  SET (CURLOPT_TIMEOUT_MS, to_ms (timeout_s));
  SET (CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)HTTP_MAX_REPLY);
  SET (CURLOPT_WRITEFUNCTION, write_cb);
  SET (CURLOPT_WRITEDATA, &sink);
  SET (CURLOPT_HEADERFUNCTION, header_cb);
  SET (CURLOPT_HEADERDATA, &sink);
  if (ca_file)
    SET (CURLOPT_CAINFO, ca_file);
  if (rc == CURLE_OK)
    {
      rc = cu.easy_setopt (h, OPT_PROTOCOLS_STR, "http,https");
      if (rc == CURLE_UNKNOWN_OPTION) /* libcurl < 7.85 */
        rc = cu.easy_setopt (h, OPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    }
#undef SET
  if (rc != CURLE_OK)
    return csr_error_set (err, 0, "POST %s: cannot set up the request: %s", where,
                          cu.easy_strerror (rc));

  rc = cu.easy_perform (h);
  if (sink.too_big || rc == CURLE_FILESIZE_EXCEEDED)
    rc = CURLE_FILESIZE_EXCEEDED;
  if (rc != CURLE_OK)
    {
      free (sink.buf);
      free (sink.retry_after);
      r->permanent = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE
                     || rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_ISSUER_ERROR
                     || rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL
                     || rc == CURLE_FILESIZE_EXCEEDED || rc == CURLE_TOO_MANY_REDIRECTS;
      if (rc == CURLE_FILESIZE_EXCEEDED)
        return csr_error_set (err, 0, "POST %s: reply larger than 8 MiB", where);
      if (sink.no_memory)
        return csr_error_set (err, 0, "POST %s: cannot allocate", where);
      /* The error buffer says more ("Failed to connect to 127.0.0.1 port
       * 1: Connection refused"); drop its trailing newline, if any. */
      size_t el = strnlen (errbuf, sizeof errbuf - 1);
      errbuf[el] = '\0';
      while (el > 0 && (errbuf[el - 1] == '\n' || errbuf[el - 1] == '\r'))
        errbuf[--el] = '\0';
      for (char *p = errbuf; *p; p++)
        if ((unsigned char)*p < 0x20)
          *p = ' ';
      return csr_error_set (err, 0, "POST %s: %s", where, el > 0 ? errbuf : cu.easy_strerror (rc));
    }

  long status = 0;
  cu.easy_getinfo (h, CURLINFO_RESPONSE_CODE, &status);
  if (sink.buf == NULL)
    {
      sink.buf = strdup ("");
      if (sink.buf == NULL)
        {
          free (sink.retry_after);
          return csr_error_set (err, 0, "POST %s: cannot allocate", where);
        }
    }
  r->status = status;
  r->body = sink.buf;
  r->len = sink.len;
  r->retry_after = sink.retry_after;
  return 0;
}
