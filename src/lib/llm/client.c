/* csrun — one completion: build the request, post it, parse the reply, and
 * retry transient failures with backoff, within the run's call budget. */
#include "config.h"
#include "llm.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/cleanup.h"

/* At most this many HTTP requests for one completion (the first one and
 * three retries). */
#define MAX_REQUESTS 4
/* A provider asking us to wait longer than this is not worth waiting for. */
#define MAX_HINT_S 60.0
#define BACKOFF_BASE_S 0.5
#define BACKOFF_CAP_S 8.0
/* Cap on the length of a why. */
#define WHY_MAX 480

void
csr_llm_result_release (struct csr_llm_result *r)
{
  if (r == NULL)
    return;
  free (r->text);
  free (r->why);
  free (r->model);
  r->text = NULL;
  r->why = NULL;
  r->model = NULL;
}

/* 0.5 s * 2^K, capped at 8 s, then scaled by a jitter factor in [0.5, 1]:
 * retry 0 waits 0.25-0.5 s, retry 1 0.5-1 s, retry 2 1-2 s, ... never more
 * than 8 s. */
double
csr_llm_backoff_s (int k, double random)
{
  if (k < 0)
    k = 0;
  if (!(random >= 0.0)) /* also NaN */
    random = 0.0;
  if (random > 1.0)
    random = 1.0;
  double base = k >= 5 ? BACKOFF_CAP_S : BACKOFF_BASE_S * (double)(1u << k);
  if (base > BACKOFF_CAP_S)
    base = BACKOFF_CAP_S;
  return base * (0.5 + 0.5 * random);
}

/* CSRUN_LLM_BACKOFF_SCALE (a non-negative float, default 1) multiplies the
 * exponential backoff computed above, and nothing else: a provider's own
 * Retry-After / retryDelay hint is always honoured as given.  It exists so
 * that tests can exercise the retry path quickly (0.01 turns 0.25-8 s waits
 * into milliseconds); users have no reason to set it. */
static double
backoff_scale (void)
{
  const char *s = getenv ("CSRUN_LLM_BACKOFF_SCALE");
  if (s == NULL || *s == '\0')
    return 1.0;
  char *end = NULL;
  errno = 0;
  double v = strtod (s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v >= 0.0) || v > 1000.0)
    return 1.0;
  return v;
}

/* Jitter only: xorshift64*, seeded from the clock and the pid.  Nothing here
 * needs to be unpredictable; it only keeps parallel runs from retrying in
 * lockstep. */
static __thread uint64_t prng_state;

static double
prng_uniform (void)
{
  if (prng_state == 0)
    {
      struct timespec ts;
      clock_gettime (CLOCK_REALTIME, &ts);
      prng_state = ((uint64_t)ts.tv_sec * 1000000007ULL) ^ (uint64_t)ts.tv_nsec
                   ^ ((uint64_t)getpid () << 32) ^ (uint64_t)(uintptr_t)&prng_state;
      if (prng_state == 0)
        prng_state = 0x9e3779b97f4a7c15ULL;
    }
  prng_state ^= prng_state >> 12;
  prng_state ^= prng_state << 25;
  prng_state ^= prng_state >> 27;
  uint64_t x = prng_state * 0x2545f4914f6cdd1dULL;
  return (double)(x >> 11) / (double)(1ULL << 53);
}

static void
sleep_s (double s)
{
  if (!(s > 0))
    return;
  struct timespec ts;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L)
    ts.tv_nsec = 999999999L;
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* Set R->why (replacing any) from a format; scrub KEY and keep it to one
 * line.  Returns 0 (the "no text" return of csr_llm_complete) or -1 when
 * out of memory. */
static int __attribute__ ((format (printf, 3, 4)))
set_why (struct csr_llm_result *r, const char *key, const char *fmt, ...)
{
  char *s = NULL;
  va_list ap;
  va_start (ap, fmt);
  int n = vasprintf (&s, fmt, ap);
  va_end (ap);
  if (n < 0)
    return -1;
  csr_llm_scrub (s, key);
  for (char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = ' ';
  if (strlen (s) > WHY_MAX)
    {
      /* Cut on a UTF-8 character boundary. */
      size_t cut = WHY_MAX;
      while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
        cut--;
      s[cut] = '\0';
    }
  free (r->why);
  r->why = s;
  return 0;
}

/* A refusal of a request sent without a key (a base URL of the user's own
 * and no key set): say which variable would carry one. */
static const char *
no_key_hint (const struct csr_llm_config *c, const char *msg)
{
  static __thread char buf[128];
  if (c->api_key != NULL || c->provider->key_env == NULL
      || (strstr (msg, "HTTP 401") == NULL && strstr (msg, "HTTP 403") == NULL))
    return "";
  snprintf (buf, sizeof buf, " (no API key was sent: %s is not set)", c->provider->key_env);
  return buf;
}

static bool
budget_spent (const struct csr_llm_config *c, const struct csr_llm_budget *b)
{
  return b != NULL && b->calls >= c->max_calls;
}

static void
add_tokens (long *sum, long n)
{
  if (n < 0)
    return;
  if (*sum < 0)
    *sum = 0;
  *sum += n;
}

int
csr_llm_complete (const struct csr_llm_config *c, struct csr_llm_budget *b, const char *system,
                  const char *user, struct csr_llm_result *r, csr_error **err)
{
  memset (r, 0, sizeof *r);
  r->input_tokens = -1;
  r->output_tokens = -1;
  if (c == NULL || c->provider == NULL)
    return csr_error_set (err, 0, "no LLM provider is configured");
  const char *key = c->api_key;
  const char *name = c->provider->name;
  double start = (double)csr_mono_ns () / 1e6;

  if (budget_spent (c, b))
    {
      r->latency_ms = (double)csr_mono_ns () / 1e6 - start;
      if (set_why (r, key, "the LLM call budget (--llm-max-calls %d) is spent", c->max_calls) < 0)
        return csr_error_set (err, 0, "%s: cannot allocate", name);
      return 0;
    }

  struct csr_llm_request req = { 0 };
  if (csr_llm_build (c, system ? system : "", user ? user : "", &req, err) < 0)
    {
      csr_llm_request_release (&req);
      return csr_error_wrap (err, "%s", name);
    }

  int ret = -1;
  double scale = backoff_scale ();
  cleanup_free char *last = NULL; /* the latest transient failure, scrubbed */
  for (int attempt = 0;; attempt++)
    {
      double t0 = (double)csr_mono_ns () / 1e6;
      struct csr_http_response resp = { 0 };
      csr_error *herr = NULL;
      int hrc = csr_http_post (req.url, req.headers, req.body, c->connect_timeout_s, c->timeout_s,
                               c->ca_file, &resp, &herr);
      double took = (double)csr_mono_ns () / 1e6 - t0;
      r->requests++;
      if (b)
        {
          b->calls++;
          b->spent_ms += took;
        }

      double hint = -1;
      free (last);
      last = NULL;
      if (hrc < 0)
        {
          /* A transport failure: transient unless resp.permanent. */
          if (asprintf (&last, "%s: %s", name, csr_error_text (herr)) < 0)
            last = NULL;
          csr_error_free (herr);
          if (last == NULL)
            {
              csr_error_set (err, 0, "%s: cannot allocate", name);
              goto out;
            }
          if (resp.permanent)
            {
              csr_llm_scrub (last, key);
              r->why = last;
              last = NULL;
              ret = 0;
              goto out;
            }
        }
      else
        {
          struct csr_llm_reply reply = { 0 };
          csr_llm_parse (c->provider->wire, resp.status, resp.retry_after, resp.body, resp.len, key,
                         &reply);
          csr_http_response_release (&resp);
          add_tokens (&r->input_tokens, reply.input_tokens);
          add_tokens (&r->output_tokens, reply.output_tokens);
          const char *msg = reply.message ? reply.message : "no message";
          switch (reply.outcome)
            {
            case CSR_LLM_OK:
              r->text = reply.text ? reply.text : strdup ("");
              reply.text = NULL;
              free (r->model);
              r->model = steal_pointer (&reply.model);
              csr_llm_reply_release (&reply);
              if (r->text == NULL)
                {
                  csr_error_set (err, 0, "%s: cannot allocate", name);
                  goto out;
                }
              free (r->why);
              r->why = NULL;
              ret = 1;
              goto out;
            case CSR_LLM_RETRY:
              hint = reply.retry_after_s;
              last = strdup (msg);
              csr_llm_reply_release (&reply);
              if (last == NULL)
                {
                  csr_error_set (err, 0, "%s: cannot allocate", name);
                  goto out;
                }
              csr_llm_scrub (last, key);
              break;
            case CSR_LLM_QUOTA:
            case CSR_LLM_BLOCKED:
            case CSR_LLM_FAIL:
            default:
              ret = set_why (r, key, "%s%s", msg, no_key_hint (c, msg));
              csr_llm_reply_release (&reply);
              if (ret < 0)
                csr_error_set (err, 0, "%s: cannot allocate", name);
              goto out;
            }
        }

      /* Transient: wait and try again, if we may. */
      if (attempt + 1 >= MAX_REQUESTS)
        {
          ret = set_why (r, key, "%s (gave up after %d requests)", last, r->requests);
          break;
        }
      if (hint > MAX_HINT_S)
        {
          ret = set_why (r, key, "%s (the provider asks to wait %ld s, more than %.0f s)", last,
                         hint < 1e9 ? (long)hint + (hint > (double)(long)hint) : 999999999L,
                         MAX_HINT_S);
          break;
        }
      if (budget_spent (c, b))
        {
          ret = set_why (r, key,
                         "the LLM call budget (--llm-max-calls %d) is spent; last error: %s",
                         c->max_calls, last);
          break;
        }
      double wait = hint >= 0 ? hint : scale * csr_llm_backoff_s (attempt, prng_uniform ());
      sleep_s (wait);
    }
  if (ret < 0)
    csr_error_set (err, 0, "%s: cannot allocate", name);

out:
  csr_llm_request_release (&req);
  r->latency_ms = (double)csr_mono_ns () / 1e6 - start;
  if (ret < 0)
    {
      free (r->text);
      r->text = NULL;
    }
  return ret;
}
