/* csrun — LLM providers for healing: wire formats (yajl), HTTP (libcurl),
 * retries, configuration from options, the environment and a .env file.
 *
 * Four wire formats serve every provider:
 *   openai     POST {base}/v1/chat/completions   Authorization: Bearer KEY
 *              (also DeepSeek, vLLM, LiteLLM, llama.cpp server, Ollama's /v1)
 *   anthropic  POST {base}/v1/messages           x-api-key: KEY, anthropic-version: 2023-06-01
 *   gemini     POST {base}/v1beta/models/{model}:generateContent   x-goog-api-key: KEY
 *   ollama     POST {base}/api/chat  {"stream": false}
 *
 * Secrets: the API key is only ever copied into a request header.  It never
 * appears in an error message, a csr_llm_reply, or anything csrun prints;
 * provider messages are scrubbed of it (csr_llm_scrub) before they leave
 * this library. */
#ifndef CSRUN_LLM_H
#define CSRUN_LLM_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

enum csr_llm_wire
{
  CSR_LLM_WIRE_NONE = 0,
  CSR_LLM_WIRE_OPENAI,
  CSR_LLM_WIRE_ANTHROPIC,
  CSR_LLM_WIRE_GEMINI,
  CSR_LLM_WIRE_OLLAMA,
};

/* A named provider: its wire format and defaults.  "deepseek" is the openai
 * wire with DeepSeek's URL, key variable and model. */
struct csr_llm_provider
{
  const char *name; /* "openai", "anthropic", "gemini", "ollama", "deepseek" */
  enum csr_llm_wire wire;
  const char *base_url;  /* default base URL (no trailing slash) */
  const char *model;     /* default model */
  const char *key_env;   /* environment variable holding the key, NULL: none needed */
  const char *model_env; /* the variable CodeShield users set for its model: OPENAI_MODEL... */
};

/* The provider called NAME (case-sensitive), or NULL. */
const struct csr_llm_provider *csr_llm_provider_find (const char *name);
/* All of them, in the order of automatic selection from the environment:
 * openai, anthropic, gemini, deepseek, ollama.  *N gets the count. */
const struct csr_llm_provider *csr_llm_providers (size_t *n);
const char *csr_llm_wire_name (enum csr_llm_wire w);

struct csr_llm_config
{
  const struct csr_llm_provider *provider; /* NULL: no LLM */
  char *model;                             /* never NULL once resolved */
  char *base_url;                          /* never NULL once resolved; no trailing slash */
  char *api_key;                           /* secret; NULL when the provider needs none */
  char *ca_file;                           /* --llm-ca-file, or NULL: the system's CAs */
  double connect_timeout_s;                /* default 10 */
  double timeout_s;                        /* per request, default 120 */
  int retries;    /* requests per healing step (--llm-retries, default 3) */
  int max_calls;  /* HTTP requests per csrun run (--llm-max-calls, default 6) */
  int max_tokens; /* the reply's token cap sent to the provider (default 4096) */
};
void csr_llm_config_release (struct csr_llm_config *c);

/* ------------------------------------------------------------ selection */

/* Where the configuration comes from.  Strings are borrowed. */
struct csr_llm_select
{
  bool no_llm;          /* --no-llm: nothing else matters */
  const char *llm;      /* --llm PROVIDER[:MODEL], or NULL */
  const char *base_url; /* --llm-base-url, or NULL */
  const char *ca_file;  /* --llm-ca-file, or NULL */
  const char *env_file; /* --env-file, or NULL */
  int retries;          /* <= 0: default */
  int max_calls;        /* < 0: default; 0 is allowed and means "never call" */
  double timeout_s;     /* <= 0: default */
  /* Looks a variable up in the process environment (getenv in csrun; tests
   * pass their own).  NULL: no environment. */
  const char *(*getenv_fn) (const char *name, void *data);
  void *getenv_data;
};

/* Resolve SEL into C.  Variables: CSRUN_LLM (PROVIDER[:MODEL]),
 * CSRUN_LLM_MODEL, CSRUN_LLM_BASE_URL, OPENAI_API_KEY, ANTHROPIC_API_KEY,
 * GEMINI_API_KEY, DEEPSEEK_API_KEY, OLLAMA_HOST (host[:port] or a URL).  The
 * process environment wins over the --env-file, which fills in what it lacks.
 * Order: --no-llm; --llm; CSRUN_LLM; else the first provider (csr_llm_providers
 * order) whose key variable is set (ollama: OLLAMA_HOST is set); else, when a
 * base URL is given (--llm-base-url or CSRUN_LLM_BASE_URL), openai (the
 * format every local server speaks); else no LLM (C->provider NULL, returns
 * 0).  A model after ':' wins over CSRUN_LLM_MODEL, which wins over the
 * provider's own variable (OPENAI_MODEL, ANTHROPIC_MODEL, GEMINI_MODEL,
 * DEEPSEEK_MODEL, OLLAMA_MODEL), which wins over the provider's default.
 * With a base URL given, the key is optional: none set means no key header
 * (local servers; a remote one then answers 401, which the reply reports).
 * Errors (-1, one line): unknown provider, empty model, a provider that
 * needs a key and has none and no base URL ("--llm anthropic needs
 * ANTHROPIC_API_KEY in the environment or the --env-file"), an unreadable or
 * malformed env file, a base URL that is not http(s)://. */
int csr_llm_config_resolve (const struct csr_llm_select *sel, struct csr_llm_config *c,
                            csr_error **err);

/* .env files: KEY=VALUE lines; blank lines and '#' comments; an optional
 * "export " prefix; values in '...' (literal) or "..." (\n \t \\ \" escapes)
 * or bare (trailing whitespace and a " #comment" dropped).  Errors name the
 * line: "line 3: expected KEY=VALUE". */
struct csr_envfile
{
  char **keys;
  char **values;
  size_t n;
};
int csr_envfile_parse (const char *text, size_t len, struct csr_envfile *e, csr_error **err);
int csr_envfile_load (const char *path, struct csr_envfile *e, csr_error **err);
/* The last value of KEY, or NULL. */
const char *csr_envfile_get (const struct csr_envfile *e, const char *key);
void csr_envfile_release (struct csr_envfile *e);

/* ------------------------------------------------------------ wire formats (pure) */

struct csr_llm_request
{
  char *url;
  char **headers; /* "Name: value" lines, NULL-terminated */
  char *body;     /* JSON */
};
void csr_llm_request_release (struct csr_llm_request *r);

/* Build the request for one completion: SYSTEM (instructions) and USER (the
 * code and diagnosis) with C's model, key, and max_tokens.  Temperature 0
 * where the provider takes one. */
int csr_llm_build (const struct csr_llm_config *c, const char *system, const char *user,
                   struct csr_llm_request *r, csr_error **err);

enum csr_llm_outcome
{
  CSR_LLM_OK,      /* text holds the model's reply (may be empty) */
  CSR_LLM_RETRY,   /* transient: 429 (not quota), 500, 502, 503, 504, 529, overloaded */
  CSR_LLM_QUOTA,   /* quota or spend limit: do not retry (insufficient_quota,
                      enforced_spend_limit_reached, a Gemini per-day quota) */
  CSR_LLM_BLOCKED, /* Gemini: the prompt was blocked (promptFeedback.blockReason), or
                      the candidate finished with SAFETY/RECITATION/... and no text */
  CSR_LLM_FAIL,    /* anything else: 4xx, a malformed body; do not retry */
};

struct csr_llm_reply
{
  enum csr_llm_outcome outcome;
  char *text;           /* CSR_LLM_OK: the reply text; else NULL */
  char *message;        /* not OK: one line for the user, e.g. "openai: HTTP 401:
                           Incorrect API key provided" or "gemini: prompt blocked: SAFETY";
                           at most 300 bytes, no control characters, key scrubbed */
  long input_tokens;    /* -1: not reported */
  long output_tokens;   /* -1: not reported */
  char *model;          /* CSR_LLM_OK: the model the reply says made it ("model";
                           Gemini: "modelVersion"), one line, at most 200 bytes; NULL:
                           not reported */
  double retry_after_s; /* the provider's hint (Retry-After header or Gemini
                           RetryInfo.retryDelay "13s"), -1: none */
};
void csr_llm_reply_release (struct csr_llm_reply *r);

/* Parse one HTTP response of wire W.  RETRY_AFTER is the Retry-After header
 * value or NULL (seconds or an HTTP date).  KEY (may be NULL) is scrubbed
 * from every message.  Never fails: malformed input gives CSR_LLM_FAIL with a
 * message naming the problem ("anthropic: malformed reply: no content"). */
void csr_llm_parse (enum csr_llm_wire w, long http_status, const char *retry_after,
                    const char *body, size_t len, const char *key, struct csr_llm_reply *r);

/* Replace every occurrence of KEY in S (in place, same length) with '*'.
 * KEY NULL or shorter than 4 bytes: nothing. */
void csr_llm_scrub (char *s, const char *key);

/* ------------------------------------------------------------ HTTP (libcurl) */

struct csr_http_response
{
  long status;
  char *body; /* NUL-terminated; at most 8 MiB kept (larger: an error) */
  size_t len;
  char *retry_after; /* the Retry-After header, or NULL */
  bool permanent;    /* csr_http_post failed in a way a retry can't mend: TLS
                        verification, a bad CA file, a bad URL, an oversized reply */
};
void csr_http_response_release (struct csr_http_response *r);

/* POST BODY to URL with HEADERS (NULL-terminated "Name: value" lines).  TLS
 * peer and host verification are always on; CA_FILE (may be NULL) replaces
 * the system's CA bundle.  Returns 0 with R filled for any HTTP status, -1 on
 * a transport failure (connect, TLS, timeout, oversized reply): the error
 * names the host, never the headers ("POST http://127.0.0.1:4711/v1/messages:
 * Timeout was reached").  Query strings are left out of messages. */
int csr_http_post (const char *url, char *const *headers, const char *body,
                   double connect_timeout_s, double timeout_s, const char *ca_file,
                   struct csr_http_response *r, csr_error **err);

/* ------------------------------------------------------------ completions */

/* Counts for the run: csr_llm_complete() refuses once calls == max_calls. */
struct csr_llm_budget
{
  int calls;       /* HTTP requests sent so far in this run */
  double spent_ms; /* their total latency */
};

struct csr_llm_result
{
  char *text;        /* the reply text (CSR_LLM_OK) */
  char *model;       /* with TEXT: the model the provider says it used, or NULL */
  long input_tokens; /* summed over the requests of this completion, -1 if never reported */
  long output_tokens;
  double latency_ms; /* wall time of this completion, backoff waits included */
  int requests;      /* HTTP requests this completion made */
  char *why;         /* no text: one line saying why (quota, blocked, budget, timeout, ...) */
};
void csr_llm_result_release (struct csr_llm_result *r);

/* One completion with transient retries: on CSR_LLM_RETRY or a transport
 * error, wait (Retry-After / retryDelay when given and <= 60 s, else
 * exponential backoff 0.5 s * 2^k with jitter in [50%, 100%], capped at
 * 8 s) and try again, at most 4 requests.  Every request counts against
 * B->calls.  Returns 1 with R->text, 0 with R->why (quota, blocked, fail,
 * budget exhausted, transient errors persisted), -1 on an internal error. */
int csr_llm_complete (const struct csr_llm_config *c, struct csr_llm_budget *b, const char *system,
                      const char *user, struct csr_llm_result *r, csr_error **err);

/* The exponential backoff for retry K (0-based) with jitter drawn from
 * RANDOM in [0, 1]: exposed for tests. */
double csr_llm_backoff_s (int k, double random);

#endif
