/* Unit tests: csr_http_post (libcurl through dlopen) and csr_llm_complete
 * (retries, budget, scrubbing) against a real HTTP server on 127.0.0.1.
 *
 * The server is a thread of the test process.  It serves a script: for
 * each connection in turn it reads one request (headers and a
 * Content-Length body), records it, optionally waits, writes a canned raw
 * HTTP/1.1 response and closes the connection. */
#include "config.h"

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "llm/llm.h"

#define MAX_STEPS 8
#define MiB ((size_t)1024 * 1024)
#define KEY "sk-test-SECRET-1234"

/* ------------------------------------------------------------------ server */

struct step
{
  char *raw;      /* the whole response, or NULL: close without answering */
  size_t raw_len; /* bytes of raw */
  int delay_ms;   /* wait before answering (cut short when the client leaves) */
};

struct server
{
  int fd;
  int port;
  int stop[2];
  pthread_t thread;
  struct step steps[MAX_STEPS];
  int n_steps;
  char *requests[MAX_STEPS]; /* raw requests received */
  size_t request_len[MAX_STEPS];
  int n_requests;
};

static struct server srv;

static void
server_init (void)
{
  memset (&srv, 0, sizeof srv);
  srv.fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  cr_assert_geq (srv.fd, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  cr_assert_eq (bind (srv.fd, (struct sockaddr *)&a, sizeof a), 0);
  cr_assert_eq (listen (srv.fd, 16), 0);
  socklen_t alen = sizeof a;
  cr_assert_eq (getsockname (srv.fd, (struct sockaddr *)&a, &alen), 0);
  srv.port = ntohs (a.sin_port);
  cr_assert_eq (pipe2 (srv.stop, O_CLOEXEC), 0);
  /* Never through a proxy, whatever the environment says. */
  unsetenv ("http_proxy");
  unsetenv ("HTTP_PROXY");
  unsetenv ("https_proxy");
  unsetenv ("HTTPS_PROXY");
  unsetenv ("all_proxy");
  unsetenv ("ALL_PROXY");
  setenv ("CSRUN_LLM_BACKOFF_SCALE", "0.01", 1);
}

/* Add a response: STATUS ("200 OK"), extra header lines (each ending in
 * \r\n, may be ""), and BODY with a Content-Length. */
static void
add_response (const char *status, const char *headers, const char *body)
{
  cr_assert_lt (srv.n_steps, MAX_STEPS);
  struct step *s = &srv.steps[srv.n_steps++];
  int n = asprintf (&s->raw,
                    "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                    "%sConnection: close\r\n\r\n%s",
                    status, strlen (body), headers, body);
  cr_assert_geq (n, 0);
  s->raw_len = (size_t)n;
}

static void
add_raw (char *raw, size_t len, int delay_ms)
{
  cr_assert_lt (srv.n_steps, MAX_STEPS);
  struct step *s = &srv.steps[srv.n_steps++];
  s->raw = raw;
  s->raw_len = len;
  s->delay_ms = delay_ms;
}

/* A 200 reply with a body of LEN 'x' bytes, with or without Content-Length
 * (without: the body ends when the connection closes). */
static void
add_big (size_t len, bool content_length)
{
  char head[256];
  int h = content_length
              ? snprintf (head, sizeof head,
                          "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
                          "Connection: close\r\n\r\n",
                          len)
              : snprintf (head, sizeof head, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
  char *raw = malloc ((size_t)h + len);
  cr_assert_not_null (raw);
  memcpy (raw, head, (size_t)h);
  memset (raw + h, 'x', len);
  add_raw (raw, (size_t)h + len, 0);
}

static void
send_all (int fd, const char *p, size_t n)
{
  while (n > 0)
    {
      ssize_t w = send (fd, p, n, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return; /* the client went away: fine */
      p += w;
      n -= (size_t)w;
    }
}

/* Read one request: headers, then Content-Length bytes of body. */
static void
read_request (int c, char **out, size_t *out_len)
{
  size_t cap = 65536, len = 0, need = (size_t)-1;
  char *buf = malloc (cap + 1);
  for (;;)
    {
      if (len >= need)
        break;
      if (len == cap)
        {
          cap *= 2;
          buf = realloc (buf, cap + 1);
        }
      struct pollfd pf = { .fd = c, .events = POLLIN };
      if (poll (&pf, 1, 5000) <= 0)
        break;
      ssize_t r = recv (c, buf + len, cap - len, 0);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      len += (size_t)r;
      buf[len] = '\0';
      if (need == (size_t)-1)
        {
          char *end = strstr (buf, "\r\n\r\n");
          if (end)
            {
              size_t body = 0;
              for (char *l = strstr (buf, "\r\n"); l && l < end; l = strstr (l + 2, "\r\n"))
                if (strncasecmp (l + 2, "Content-Length:", 15) == 0)
                  body = strtoul (l + 17, NULL, 10);
              need = (size_t)(end + 4 - buf) + body;
            }
        }
    }
  buf[len] = '\0';
  *out = buf;
  *out_len = len;
}

static void *
server_main (void *arg)
{
  (void)arg;
  for (int i = 0; i < srv.n_steps; i++)
    {
      struct pollfd pf[2]
          = { { .fd = srv.fd, .events = POLLIN }, { .fd = srv.stop[0], .events = POLLIN } };
      if (poll (pf, 2, -1) < 0 && errno == EINTR)
        {
          i--;
          continue;
        }
      if (pf[1].revents)
        break;
      int c = accept4 (srv.fd, NULL, NULL, SOCK_CLOEXEC);
      if (c < 0)
        break;
      read_request (c, &srv.requests[srv.n_requests], &srv.request_len[srv.n_requests]);
      srv.n_requests++;
      struct step *s = &srv.steps[i];
      if (s->delay_ms > 0)
        {
          /* Wait, unless the client hangs up first (readable: EOF). */
          struct pollfd w[2]
              = { { .fd = c, .events = POLLIN }, { .fd = srv.stop[0], .events = POLLIN } };
          poll (w, 2, s->delay_ms);
        }
      if (s->raw)
        send_all (c, s->raw, s->raw_len);
      shutdown (c, SHUT_WR);
      /* Let the client read everything before the close. */
      char sink[4096];
      struct pollfd pc = { .fd = c, .events = POLLIN };
      while (poll (&pc, 1, 2000) > 0 && recv (c, sink, sizeof sink, 0) > 0)
        ;
      close (c);
    }
  return NULL;
}

static void
server_start (void)
{
  cr_assert_eq (pthread_create (&srv.thread, NULL, server_main, NULL), 0);
}

/* Stop the server and wait for it: after this, srv.requests are final. */
static void
server_stop (void)
{
  ssize_t w = write (srv.stop[1], "x", 1);
  (void)w;
  pthread_join (srv.thread, NULL);
}

static void
server_fini (void)
{
  close (srv.fd);
  close (srv.stop[0]);
  close (srv.stop[1]);
  for (int i = 0; i < MAX_STEPS; i++)
    {
      free (srv.steps[i].raw);
      free (srv.requests[i]);
    }
}

static char *
url (const char *fmt_path)
{
  char *u = NULL;
  cr_assert_geq (asprintf (&u, "http://127.0.0.1:%d%s", srv.port, fmt_path), 0);
  return u;
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A port nothing listens on. */
static int
closed_port (void)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  cr_assert_eq (bind (fd, (struct sockaddr *)&a, sizeof a), 0);
  socklen_t alen = sizeof a;
  cr_assert_eq (getsockname (fd, (struct sockaddr *)&a, &alen), 0);
  close (fd);
  return ntohs (a.sin_port);
}

static char *const test_headers[] = { "Authorization: Bearer " KEY, "X-Custom: yes please", NULL };

/* ------------------------------------------------------------------ http */

TestSuite (http, .init = server_init, .fini = server_fini);

Test (http, ok_with_body_and_headers_sent)
{
  add_response ("200 OK", "", "{\"hello\":\"world\"}");
  server_start ();
  char *u = url ("/v1/test");
  struct csr_http_response r;
  csr_error *err = NULL;
  const char *body = "{\"prompt\":\"x\"}";
  int rc = csr_http_post (u, test_headers, body, 5, 10, NULL, &r, &err);
  cr_assert_eq (rc, 0, "%s", err ? err->msg : "");
  cr_assert_eq (r.status, 200);
  cr_assert_str_eq (r.body, "{\"hello\":\"world\"}");
  cr_assert_eq (r.len, strlen ("{\"hello\":\"world\"}"));
  cr_assert_null (r.retry_after);
  csr_http_response_release (&r);
  server_stop ();

  cr_assert_eq (srv.n_requests, 1);
  const char *req = srv.requests[0];
  cr_assert (strncmp (req, "POST /v1/test HTTP/1.1\r\n", 24) == 0, "%s", req);
  cr_assert_not_null (strstr (req, "\r\nAuthorization: Bearer " KEY "\r\n"), "%s", req);
  cr_assert_not_null (strstr (req, "\r\nX-Custom: yes please\r\n"), "%s", req);
  cr_assert_not_null (strstr (req, "\r\nContent-Type: application/json\r\n"), "%s", req);
  cr_assert_null (strstr (req, "Expect:"), "%s", req);
  const char *b = strstr (req, "\r\n\r\n");
  cr_assert_not_null (b);
  cr_assert_str_eq (b + 4, body);
  free (u);
}

Test (http, caller_content_type_is_kept)
{
  add_response ("200 OK", "", "{}");
  server_start ();
  char *u = url ("/x");
  char *const h[] = { "content-type: application/json; charset=utf-8", NULL };
  struct csr_http_response r;
  csr_error *err = NULL;
  cr_assert_eq (csr_http_post (u, h, "{}", 5, 10, NULL, &r, &err), 0);
  csr_http_response_release (&r);
  server_stop ();
  cr_assert_not_null (strstr (srv.requests[0], "content-type: application/json; charset=utf-8"));
  cr_assert_null (strstr (srv.requests[0], "Content-Type: application/json\r\n"));
  free (u);
}

Test (http, error_status_passes_through)
{
  add_response ("503 Service Unavailable", "", "{\"error\":{\"message\":\"overloaded\"}}");
  server_start ();
  char *u = url ("/v1/messages");
  struct csr_http_response r;
  csr_error *err = NULL;
  cr_assert_eq (csr_http_post (u, test_headers, "{}", 5, 10, NULL, &r, &err), 0);
  cr_assert_null (err);
  cr_assert_eq (r.status, 503);
  cr_assert_str_eq (r.body, "{\"error\":{\"message\":\"overloaded\"}}");
  csr_http_response_release (&r);
  cr_assert_null (r.body);
  server_stop ();
  free (u);
}

Test (http, empty_body)
{
  add_response ("204 No Content", "", "");
  server_start ();
  char *u = url ("/");
  struct csr_http_response r;
  csr_error *err = NULL;
  cr_assert_eq (csr_http_post (u, NULL, "", 5, 10, NULL, &r, &err), 0);
  cr_assert_eq (r.status, 204);
  cr_assert_not_null (r.body);
  cr_assert_str_eq (r.body, "");
  cr_assert_eq (r.len, 0);
  csr_http_response_release (&r);
  server_stop ();
  free (u);
}

Test (http, retry_after_captured)
{
  add_response ("429 Too Many Requests", "rEtRy-AfTeR: \t 7  \r\n", "{}");
  add_response ("503 Service Unavailable", "Retry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n", "{}");
  server_start ();
  char *u = url ("/v1/chat/completions");
  struct csr_http_response r;
  csr_error *err = NULL;
  cr_assert_eq (csr_http_post (u, test_headers, "{}", 5, 10, NULL, &r, &err), 0);
  cr_assert_eq (r.status, 429);
  cr_assert_str_eq (r.retry_after, "7");
  csr_http_response_release (&r);
  cr_assert_null (r.retry_after);
  cr_assert_eq (csr_http_post (u, test_headers, "{}", 5, 10, NULL, &r, &err), 0);
  cr_assert_str_eq (r.retry_after, "Wed, 21 Oct 2015 07:28:00 GMT");
  csr_http_response_release (&r);
  server_stop ();
  free (u);
}

Test (http, no_redirects)
{
  char *loc = NULL;
  cr_assert_geq (asprintf (&loc, "Location: http://127.0.0.1:%d/elsewhere\r\n", srv.port), 0);
  add_response ("307 Temporary Redirect", loc, "moved");
  add_response ("200 OK", "", "should not be fetched");
  server_start ();
  char *u = url ("/v1/x");
  struct csr_http_response r;
  csr_error *err = NULL;
  cr_assert_eq (csr_http_post (u, NULL, "{}", 5, 10, NULL, &r, &err), 0);
  cr_assert_eq (r.status, 307);
  cr_assert_str_eq (r.body, "moved");
  csr_http_response_release (&r);
  server_stop ();
  cr_assert_eq (srv.n_requests, 1);
  free (loc);
  free (u);
}

Test (http, exactly_8_mib_is_fine)
{
  add_big (8 * MiB, true);
  server_start ();
  char *u = url ("/big");
  struct csr_http_response r;
  csr_error *err = NULL;
  cr_assert_eq (csr_http_post (u, NULL, "{}", 5, 30, NULL, &r, &err), 0, "%s", err ? err->msg : "");
  cr_assert_eq (r.len, 8 * MiB);
  cr_assert_eq (r.body[0], 'x');
  cr_assert_eq (r.body[r.len - 1], 'x');
  cr_assert_eq (r.body[r.len], '\0');
  csr_http_response_release (&r);
  server_stop ();
  free (u);
}

static void
expect_too_big (bool content_length)
{
  add_big (9 * MiB, content_length);
  server_start ();
  char *u = url ("/big?token=QUERYSECRET");
  struct csr_http_response r;
  csr_error *err = NULL;
  cr_assert_eq (csr_http_post (u, NULL, "{}", 5, 30, NULL, &r, &err), -1);
  char want[128];
  snprintf (want, sizeof want, "POST http://127.0.0.1:%d/big: reply larger than 8 MiB", srv.port);
  cr_assert_str_eq (csr_error_text (err), want);
  cr_assert_null (r.body);
  csr_error_free (err);
  server_stop ();
  free (u);
}

Test (http, oversized_reply_with_length)
{
  expect_too_big (true);
}

Test (http, oversized_reply_without_length)
{
  expect_too_big (false);
}

Test (http, timeout_names_host_not_headers)
{
  char *raw = strdup ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
  add_raw (raw, strlen (raw), 10000);
  server_start ();
  char *u = NULL;
  cr_assert_geq (
      asprintf (&u, "http://user:PASSWORD@127.0.0.1:%d/v1/messages?key=QUERYSECRET#frag", srv.port),
      0);
  struct csr_http_response r;
  csr_error *err = NULL;
  double t0 = now_s ();
  cr_assert_eq (csr_http_post (u, test_headers, "{}", 5, 0.5, NULL, &r, &err), -1);
  double took = now_s () - t0;
  cr_assert (took >= 0.4 && took < 5.0, "took %g s", took);
  const char *msg = csr_error_text (err);
  char want[128];
  snprintf (want, sizeof want, "POST http://127.0.0.1:%d/v1/messages: ", srv.port);
  cr_assert (strncmp (msg, want, strlen (want)) == 0, "%s", msg);
  cr_assert (strcasestr (msg, "time") != NULL, "%s", msg);
  cr_assert_null (strstr (msg, KEY), "%s", msg);
  cr_assert_null (strstr (msg, "yes please"), "%s", msg);
  cr_assert_null (strstr (msg, "PASSWORD"), "%s", msg);
  cr_assert_null (strstr (msg, "QUERYSECRET"), "%s", msg);
  cr_assert_null (strstr (msg, "user"), "%s", msg);
  cr_assert_null (strchr (msg, '\n'), "%s", msg);
  csr_error_free (err);
  server_stop ();
  free (u);
}

Test (http, connection_refused)
{
  int port = closed_port ();
  char *u = NULL;
  cr_assert_geq (asprintf (&u, "http://127.0.0.1:%d/v1/chat/completions?x=1", port), 0);
  struct csr_http_response r;
  csr_error *err = NULL;
  cr_assert_eq (csr_http_post (u, test_headers, "{}", 5, 10, NULL, &r, &err), -1);
  const char *msg = csr_error_text (err);
  char want[128];
  snprintf (want, sizeof want, "POST http://127.0.0.1:%d/v1/chat/completions: ", port);
  cr_assert (strncmp (msg, want, strlen (want)) == 0, "%s", msg);
  cr_assert_null (strstr (msg, "x=1"), "%s", msg);
  cr_assert_null (strstr (msg, KEY), "%s", msg);
  csr_error_free (err);
  free (u);
}

Test (http, missing_ca_file_fails_https)
{
  add_raw (NULL, 0, 0); /* accept, read what comes, hang up */
  server_start ();
  char *u = NULL;
  cr_assert_geq (asprintf (&u, "https://127.0.0.1:%d/v1/messages", srv.port), 0);
  struct csr_http_response r;
  csr_error *err = NULL;
  cr_assert_eq (csr_http_post (u, test_headers, "{}", 2, 4, "/nonexistent/csrun-ca.pem", &r, &err),
                -1);
  const char *msg = csr_error_text (err);
  char want[128];
  snprintf (want, sizeof want, "POST https://127.0.0.1:%d/v1/messages: ", srv.port);
  cr_assert (strncmp (msg, want, strlen (want)) == 0, "%s", msg);
  cr_assert_null (strstr (msg, KEY), "%s", msg);
  csr_error_free (err);
  server_stop ();
  free (u);
}

Test (http, only_http_and_https)
{
  const char *bad[]
      = { "file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/x", "dict://127.0.0.1/x" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      struct csr_http_response r;
      csr_error *err = NULL;
      cr_assert_eq (csr_http_post (bad[i], NULL, "{}", 1, 2, NULL, &r, &err), -1, "%s", bad[i]);
      cr_assert_not_null (err);
      csr_error_free (err);
    }
}

Test (http, header_line_break_refused)
{
  char *const h[] = { "X-Ok: 1", "X-Bad: a\r\nX-Injected: 1", NULL };
  struct csr_http_response r;
  csr_error *err = NULL;
  cr_assert_eq (csr_http_post ("http://127.0.0.1:1/x", h, "{}", 1, 2, NULL, &r, &err), -1);
  cr_assert_null (strstr (err->msg, "Injected"), "%s", err->msg);
  csr_error_free (err);
}

/* ------------------------------------------------------------------ complete */

static struct csr_llm_config
openai_config (int max_calls)
{
  struct csr_llm_config c = { 0 };
  c.provider = csr_llm_provider_find ("openai");
  cr_assert_not_null (c.provider);
  c.model = strdup ("gpt-test");
  cr_assert_geq (asprintf (&c.base_url, "http://127.0.0.1:%d", srv.port), 0);
  c.api_key = strdup (KEY);
  c.connect_timeout_s = 5;
  c.timeout_s = 10;
  c.retries = 3;
  c.max_calls = max_calls;
  c.max_tokens = 256;
  return c;
}

static const char ok_body[]
    = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"gpt-test\","
      "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"print(42)\"},"
      "\"finish_reason\":\"stop\"}],"
      "\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":7,\"total_tokens\":18}}";

static const char err500_body[]
    = "{\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}";

TestSuite (complete, .init = server_init, .fini = server_fini);

Test (complete, ok_first_time)
{
  add_response ("200 OK", "", ok_body);
  server_start ();
  struct csr_llm_config c = openai_config (6);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  int rc = csr_llm_complete (&c, &b, "You fix Python.", "print(x)", &r, &err);
  cr_assert_eq (rc, 1, "%s / %s", err ? err->msg : "", r.why ? r.why : "");
  cr_assert_str_eq (r.text, "print(42)");
  cr_assert_null (r.why);
  cr_assert_eq (r.requests, 1);
  cr_assert_eq (r.input_tokens, 11);
  cr_assert_eq (r.output_tokens, 7);
  cr_assert_geq (r.latency_ms, 0);
  cr_assert_eq (b.calls, 1);
  cr_assert_gt (b.spent_ms, 0);
  csr_llm_result_release (&r);
  server_stop ();
  const char *req = srv.requests[0];
  cr_assert (strncmp (req, "POST /v1/chat/completions HTTP/1.1\r\n", 36) == 0, "%s", req);
  cr_assert_not_null (strstr (req, "Authorization: Bearer " KEY "\r\n"), "%s", req);
  cr_assert_not_null (strstr (req, "gpt-test"), "%s", req);
  cr_assert_not_null (strstr (req, "You fix Python."), "%s", req);
  csr_llm_config_release (&c);
}

Test (complete, retry_after_then_ok)
{
  add_response ("429 Too Many Requests", "Retry-After: 1\r\n",
                "{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\","
                "\"code\":\"rate_limit_exceeded\"}}");
  add_response ("200 OK", "", ok_body);
  server_start ();
  struct csr_llm_config c = openai_config (6);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  double t0 = now_s ();
  int rc = csr_llm_complete (&c, &b, "sys", "user", &r, &err);
  double took = now_s () - t0;
  cr_assert_eq (rc, 1, "%s / %s", err ? err->msg : "", r.why ? r.why : "");
  cr_assert_str_eq (r.text, "print(42)");
  cr_assert_eq (r.requests, 2);
  cr_assert_eq (b.calls, 2);
  /* The hint is honoured as given: the backoff scale does not apply. */
  cr_assert (took >= 0.95, "took %g s", took);
  cr_assert (r.latency_ms >= 950, "latency %g ms", r.latency_ms);
  csr_llm_result_release (&r);
  server_stop ();
  cr_assert_eq (srv.n_requests, 2);
  csr_llm_config_release (&c);
}

Test (complete, persistent_500_gives_up_after_4)
{
  for (int i = 0; i < 5; i++)
    add_response ("500 Internal Server Error", "", err500_body);
  server_start ();
  struct csr_llm_config c = openai_config (10);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  double t0 = now_s ();
  int rc = csr_llm_complete (&c, &b, "sys", "user", &r, &err);
  double took = now_s () - t0;
  cr_assert_eq (rc, 0, "%s", err ? err->msg : "");
  cr_assert_null (err);
  cr_assert_null (r.text);
  cr_assert_not_null (r.why);
  cr_assert_not_null (strstr (r.why, "The server had an error"), "%s", r.why);
  cr_assert_not_null (strstr (r.why, "4 requests"), "%s", r.why);
  cr_assert_eq (r.requests, 4);
  cr_assert_eq (b.calls, 4);
  cr_assert (took < 2.0, "the scaled backoff took %g s", took);
  csr_llm_result_release (&r);
  server_stop ();
  cr_assert_eq (srv.n_requests, 4);
  csr_llm_config_release (&c);
}

Test (complete, quota_is_not_retried)
{
  add_response ("429 Too Many Requests", "",
                "{\"error\":{\"type\":\"insufficient_quota\",\"code\":\"insufficient_quota\","
                "\"message\":\"You exceeded your current quota\"}}");
  add_response ("200 OK", "", ok_body);
  server_start ();
  struct csr_llm_config c = openai_config (6);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  int rc = csr_llm_complete (&c, &b, "sys", "user", &r, &err);
  cr_assert_eq (rc, 0, "%s", err ? err->msg : "");
  cr_assert_null (r.text);
  cr_assert_not_null (strstr (r.why, "You exceeded your current quota"), "%s", r.why);
  cr_assert_eq (r.requests, 1);
  cr_assert_eq (b.calls, 1);
  csr_llm_result_release (&r);
  server_stop ();
  cr_assert_eq (srv.n_requests, 1);
  csr_llm_config_release (&c);
}

Test (complete, budget_is_respected)
{
  add_response ("200 OK", "", ok_body);
  add_response ("200 OK", "", ok_body);
  server_start ();
  struct csr_llm_config c = openai_config (1);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  cr_assert_eq (csr_llm_complete (&c, &b, "sys", "one", &r, &err), 1);
  cr_assert_eq (r.requests, 1);
  csr_llm_result_release (&r);
  cr_assert_eq (csr_llm_complete (&c, &b, "sys", "two", &r, &err), 0);
  cr_assert_null (err);
  cr_assert_null (r.text);
  cr_assert_eq (r.requests, 0);
  cr_assert_str_eq (r.why, "the LLM call budget (--llm-max-calls 1) is spent");
  cr_assert_eq (b.calls, 1);
  csr_llm_result_release (&r);
  server_stop ();
  cr_assert_eq (srv.n_requests, 1);
  csr_llm_config_release (&c);
}

Test (complete, budget_zero_never_calls)
{
  server_start ();
  struct csr_llm_config c = openai_config (0);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  cr_assert_eq (csr_llm_complete (&c, &b, "sys", "user", &r, &err), 0);
  cr_assert_eq (r.requests, 0);
  cr_assert_not_null (strstr (r.why, "--llm-max-calls 0"), "%s", r.why);
  csr_llm_result_release (&r);
  server_stop ();
  cr_assert_eq (srv.n_requests, 0);
  csr_llm_config_release (&c);
}

Test (complete, budget_runs_out_while_retrying)
{
  for (int i = 0; i < 4; i++)
    add_response ("500 Internal Server Error", "", err500_body);
  server_start ();
  struct csr_llm_config c = openai_config (2);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  cr_assert_eq (csr_llm_complete (&c, &b, "sys", "user", &r, &err), 0);
  cr_assert_eq (r.requests, 2);
  cr_assert_eq (b.calls, 2);
  cr_assert_not_null (strstr (r.why, "--llm-max-calls 2"), "%s", r.why);
  cr_assert_not_null (strstr (r.why, "The server had an error"), "%s", r.why);
  csr_llm_result_release (&r);
  server_stop ();
  cr_assert_eq (srv.n_requests, 2);
  csr_llm_config_release (&c);
}

Test (complete, long_retry_hint_gives_up)
{
  add_response (
      "429 Too Many Requests", "Retry-After: 120\r\n",
      "{\"error\":{\"message\":\"Rate limit reached\",\"code\":\"rate_limit_exceeded\"}}");
  add_response ("200 OK", "", ok_body);
  server_start ();
  struct csr_llm_config c = openai_config (6);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  double t0 = now_s ();
  cr_assert_eq (csr_llm_complete (&c, &b, "sys", "user", &r, &err), 0);
  cr_assert (now_s () - t0 < 5.0);
  cr_assert_eq (r.requests, 1);
  cr_assert_not_null (strstr (r.why, "120 s"), "%s", r.why);
  cr_assert_not_null (strstr (r.why, "Rate limit reached"), "%s", r.why);
  csr_llm_result_release (&r);
  server_stop ();
  csr_llm_config_release (&c);
}

Test (complete, retry_then_ok_sums_tokens)
{
  add_response ("502 Bad Gateway", "", "<html>bad gateway</html>");
  add_response ("200 OK", "", ok_body);
  server_start ();
  struct csr_llm_config c = openai_config (6);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  cr_assert_eq (csr_llm_complete (&c, &b, "sys", "user", &r, &err), 1, "%s", r.why ? r.why : "");
  cr_assert_eq (r.requests, 2);
  cr_assert_eq (r.input_tokens, 11);
  cr_assert_eq (r.output_tokens, 7);
  csr_llm_result_release (&r);
  server_stop ();
  csr_llm_config_release (&c);
}

Test (complete, key_is_scrubbed_from_why)
{
  add_response ("401 Unauthorized", "",
                "{\"error\":{\"message\":\"Incorrect API key provided: " KEY
                ". You can find your API key at https://platform.openai.com/account/api-keys.\","
                "\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}");
  server_start ();
  struct csr_llm_config c = openai_config (6);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  cr_assert_eq (csr_llm_complete (&c, &b, "sys", "user", &r, &err), 0);
  cr_assert_eq (r.requests, 1);
  cr_assert_not_null (r.why);
  cr_assert_not_null (strstr (r.why, "Incorrect API key provided"), "%s", r.why);
  cr_assert_null (strstr (r.why, KEY), "%s", r.why);
  cr_assert_null (strstr (r.why, "SECRET"), "%s", r.why);
  csr_llm_result_release (&r);
  server_stop ();
  csr_llm_config_release (&c);
}

Test (complete, transport_errors_are_retried)
{
  server_start (); /* nothing scripted: only to have a port to not use */
  struct csr_llm_config c = openai_config (10);
  free (c.base_url);
  cr_assert_geq (asprintf (&c.base_url, "http://127.0.0.1:%d", closed_port ()), 0);
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  cr_assert_eq (csr_llm_complete (&c, &b, "sys", "user", &r, &err), 0, "%s", err ? err->msg : "");
  cr_assert_eq (r.requests, 4);
  cr_assert_eq (b.calls, 4);
  cr_assert_not_null (strstr (r.why, "POST http://127.0.0.1:"), "%s", r.why);
  cr_assert_not_null (strstr (r.why, "/v1/chat/completions"), "%s", r.why);
  cr_assert_null (strstr (r.why, KEY), "%s", r.why);
  cr_assert_eq (r.input_tokens, -1);
  cr_assert_eq (r.output_tokens, -1);
  csr_llm_result_release (&r);
  server_stop ();
  csr_llm_config_release (&c);
}

Test (complete, timeout_is_retried_then_ok)
{
  char *raw = strdup ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
  add_raw (raw, strlen (raw), 10000);
  add_response ("200 OK", "", ok_body);
  server_start ();
  struct csr_llm_config c = openai_config (6);
  c.timeout_s = 0.5;
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  cr_assert_eq (csr_llm_complete (&c, &b, "sys", "user", &r, &err), 1, "%s", r.why ? r.why : "");
  cr_assert_eq (r.requests, 2);
  cr_assert_str_eq (r.text, "print(42)");
  csr_llm_result_release (&r);
  server_stop ();
  csr_llm_config_release (&c);
}

Test (complete, no_provider_is_an_error)
{
  struct csr_llm_config c = { 0 };
  struct csr_llm_budget b = { 0 };
  struct csr_llm_result r;
  csr_error *err = NULL;
  cr_assert_eq (csr_llm_complete (&c, &b, "sys", "user", &r, &err), -1);
  cr_assert_not_null (err);
  csr_error_free (err);
  csr_llm_result_release (&r);
}
