#include "config.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_tree.h>

#include "llm/llm.h"
#include "util/utf8.h"

/* ------------------------------------------------------------- helpers */

#define KEY "sk-test-SECRET-0123456789"

/* A configuration over borrowed strings: never released. */
static struct csr_llm_config
config (const char *provider, const char *base, const char *key)
{
  const struct csr_llm_provider *p = csr_llm_provider_find (provider);
  cr_assert_not_null (p, "no provider %s", provider);
  struct csr_llm_config c = {
    .provider = p,
    .model = (char *)p->model,
    .base_url = (char *)(base ? base : p->base_url),
    .api_key = (char *)key,
    .connect_timeout_s = 10,
    .timeout_s = 120,
    .retries = 3,
    .max_calls = 6,
    .max_tokens = 1234,
  };
  return c;
}

static void
build_ok (const struct csr_llm_config *c, const char *system, const char *user,
          struct csr_llm_request *r)
{
  csr_error *err = NULL;
  int rc = csr_llm_build (c, system, user, r, &err);
  cr_assert_eq (rc, 0, "build: %s", err ? err->msg : "");
  cr_assert_null (err);
  cr_assert_not_null (r->url);
  cr_assert_not_null (r->headers);
  cr_assert_not_null (r->body);
}

static yajl_val
tree (const char *body)
{
  char errbuf[256] = "";
  yajl_val v = yajl_tree_parse (body, errbuf, sizeof errbuf);
  cr_assert_not_null (v, "body is not JSON (%s): %s", errbuf, body);
  cr_assert (YAJL_IS_OBJECT (v), "body is not an object: %s", body);
  return v;
}

/* V at PATH: keys and array indexes separated by dots ("messages.1.role"). */
static yajl_val
jget (yajl_val v, const char *path)
{
  char buf[256];
  snprintf (buf, sizeof buf, "%s", path);
  char *save = NULL;
  for (char *seg = strtok_r (buf, ".", &save); seg && v; seg = strtok_r (NULL, ".", &save))
    if (isdigit ((unsigned char)seg[0]))
      {
        size_t i = strtoul (seg, NULL, 10);
        v = YAJL_IS_ARRAY (v) && i < v->u.array.len ? v->u.array.values[i] : NULL;
      }
    else
      {
        const char *p[] = { seg, NULL };
        v = yajl_tree_get (v, p, yajl_t_any);
      }
  return v;
}

static void
assert_str_at (yajl_val doc, const char *path, const char *want)
{
  yajl_val v = jget (doc, path);
  cr_assert (YAJL_IS_STRING (v), "%s is not a string", path);
  cr_assert_str_eq (v->u.string, want, "%s", path);
}

static void
assert_int_at (yajl_val doc, const char *path, long long want)
{
  yajl_val v = jget (doc, path);
  cr_assert (YAJL_IS_INTEGER (v), "%s is not an integer", path);
  cr_assert_eq (v->u.number.i, want, "%s: %lld, expected %lld", path, v->u.number.i, want);
}

static size_t
array_len (yajl_val doc, const char *path)
{
  yajl_val v = jget (doc, path);
  cr_assert (YAJL_IS_ARRAY (v), "%s is not an array", path);
  return v->u.array.len;
}

static size_t
n_headers (const struct csr_llm_request *r)
{
  size_t n = 0;
  while (r->headers[n])
    n++;
  return n;
}

/* The value of header NAME (case-insensitive), or NULL. */
static const char *
header (const struct csr_llm_request *r, const char *name)
{
  size_t n = strlen (name);
  for (size_t i = 0; r->headers[i]; i++)
    if (strncasecmp (r->headers[i], name, n) == 0 && r->headers[i][n] == ':')
      return r->headers[i] + n + 1 + strspn (r->headers[i] + n + 1, " ");
  return NULL;
}

/* Parse BODY (NUL-terminated) as a reply of W. */
static void
parse (enum csr_llm_wire w, long status, const char *retry_after, const char *body,
       struct csr_llm_reply *r)
{
  csr_llm_parse (w, status, retry_after, body, body ? strlen (body) : 0, KEY, r);
}

static void
assert_ok (const struct csr_llm_reply *r, const char *text)
{
  cr_assert_eq (r->outcome, CSR_LLM_OK, "outcome %d, message %s", r->outcome,
                r->message ? r->message : "(null)");
  cr_assert_not_null (r->text);
  cr_assert_str_eq (r->text, text);
  cr_assert_null (r->message);
}

/* R is OUTCOME with exactly the message MSG. */
static void
assert_outcome (const struct csr_llm_reply *r, enum csr_llm_outcome outcome, const char *msg)
{
  cr_assert_eq (r->outcome, outcome, "outcome %d, expected %d (message %s)", r->outcome, outcome,
                r->message ? r->message : "(null)");
  cr_assert_null (r->text);
  cr_assert_not_null (r->message);
  if (msg)
    cr_assert_str_eq (r->message, msg);
}

/* Every message obeys the rules: one line, valid UTF-8, short, no key. */
static void
assert_clean_message (const char *m)
{
  cr_assert_not_null (m);
  size_t n = strlen (m);
  cr_assert_leq (n, 300, "message is %zu bytes", n);
  cr_assert (csr_utf8_valid (m, n), "message is not valid UTF-8");
  for (size_t i = 0; i < n; i++)
    cr_assert (!((unsigned char)m[i] < 0x20 || m[i] == 0x7f), "control character at %zu", i);
  cr_assert_null (strstr (m, KEY), "the key leaked: %s", m);
  cr_assert_null (strstr (m, "SECRET"), "part of the key leaked: %s", m);
}

/* "Malformed reply" of wire NAME mentioning WHAT. */
static void
assert_malformed (enum csr_llm_wire w, const char *body, const char *what)
{
  struct csr_llm_reply r;
  parse (w, 200, NULL, body, &r);
  cr_assert_eq (r.outcome, CSR_LLM_FAIL, "%s: outcome %d for %s", csr_llm_wire_name (w), r.outcome,
                body);
  cr_assert_null (r.text);
  assert_clean_message (r.message);
  char prefix[64];
  snprintf (prefix, sizeof prefix, "%s: malformed reply: ", csr_llm_wire_name (w));
  cr_assert (strncmp (r.message, prefix, strlen (prefix)) == 0, "message: %s", r.message);
  cr_assert_not_null (strstr (r.message, what), "message \"%s\" lacks \"%s\"", r.message, what);
  csr_llm_reply_release (&r);
}

/* Now + DELTA seconds as an HTTP-date of FORM: 0 IMF-fixdate, 1 RFC 850,
 * 2 asctime (literal formats for -Wformat-nonliteral). */
static void
http_date_in (char *buf, size_t n, long delta, int form)
{
  time_t t = time (NULL) + delta;
  struct tm tm;
  gmtime_r (&t, &tm);
  size_t len = 0;
  if (form == 0)
    len = strftime (buf, n, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  else if (form == 1) /* two-digit year, spelt out for -Wformat-y2k */
    {
      char head[32], tail[32];
      strftime (head, sizeof head, "%A, %d-%b-", &tm);
      strftime (tail, sizeof tail, " %H:%M:%S GMT", &tm);
      len = (size_t)snprintf (buf, n, "%s%02d%s", head, tm.tm_year % 100, tail);
    }
  else
    len = strftime (buf, n, "%a %b %e %H:%M:%S %Y", &tm);
  cr_assert_gt (len, 0);
}

/* ------------------------------------------------------------- providers */

Test (provider, order_and_defaults)
{
  size_t n = 0;
  const struct csr_llm_provider *p = csr_llm_providers (&n);
  cr_assert_eq (n, 5);
  const struct
  {
    const char *name;
    enum csr_llm_wire wire;
    const char *base, *model, *key_env;
  } want[] = {
    { "openai", CSR_LLM_WIRE_OPENAI, "https://api.openai.com", "gpt-4.1-mini", "OPENAI_API_KEY" },
    { "anthropic", CSR_LLM_WIRE_ANTHROPIC, "https://api.anthropic.com", "claude-sonnet-4-5",
      "ANTHROPIC_API_KEY" },
    { "gemini", CSR_LLM_WIRE_GEMINI, "https://generativelanguage.googleapis.com",
      "gemini-2.5-flash", "GEMINI_API_KEY" },
    { "deepseek", CSR_LLM_WIRE_OPENAI, "https://api.deepseek.com", "deepseek-chat",
      "DEEPSEEK_API_KEY" },
    { "ollama", CSR_LLM_WIRE_OLLAMA, "http://localhost:11434", "qwen2.5-coder:7b", NULL },
  };
  for (size_t i = 0; i < n; i++)
    {
      cr_assert_str_eq (p[i].name, want[i].name);
      cr_assert_eq (p[i].wire, want[i].wire, "%s", p[i].name);
      cr_assert_str_eq (p[i].base_url, want[i].base);
      cr_assert_str_eq (p[i].model, want[i].model);
      if (want[i].key_env)
        cr_assert_str_eq (p[i].key_env, want[i].key_env);
      else
        cr_assert_null (p[i].key_env);
      cr_assert_eq (csr_llm_provider_find (want[i].name), &p[i]);
    }
  cr_assert_eq (csr_llm_providers (NULL), p);
}

Test (provider, find_is_exact)
{
  cr_assert_null (csr_llm_provider_find ("OpenAI"));
  cr_assert_null (csr_llm_provider_find ("open"));
  cr_assert_null (csr_llm_provider_find ("openai "));
  cr_assert_null (csr_llm_provider_find (""));
  cr_assert_null (csr_llm_provider_find (NULL));
  cr_assert_null (csr_llm_provider_find ("mistral"));
}

Test (provider, wire_names)
{
  cr_assert_str_eq (csr_llm_wire_name (CSR_LLM_WIRE_OPENAI), "openai");
  cr_assert_str_eq (csr_llm_wire_name (CSR_LLM_WIRE_ANTHROPIC), "anthropic");
  cr_assert_str_eq (csr_llm_wire_name (CSR_LLM_WIRE_GEMINI), "gemini");
  cr_assert_str_eq (csr_llm_wire_name (CSR_LLM_WIRE_OLLAMA), "ollama");
  cr_assert_str_eq (csr_llm_wire_name (CSR_LLM_WIRE_NONE), "none");
  cr_assert_not_null (csr_llm_wire_name ((enum csr_llm_wire)42));
}

Test (provider, config_release)
{
  struct csr_llm_config c = {
    .provider = csr_llm_provider_find ("gemini"),
    .model = strdup ("m"),
    .base_url = strdup ("http://x"),
    .api_key = strdup (KEY),
    .ca_file = strdup ("/ca.pem"),
    .retries = 3,
  };
  csr_llm_config_release (&c);
  cr_assert_null (c.provider);
  cr_assert_null (c.model);
  cr_assert_null (c.base_url);
  cr_assert_null (c.api_key);
  cr_assert_null (c.ca_file);
  cr_assert_eq (c.retries, 0);
  csr_llm_config_release (&c); /* twice is fine */
  csr_llm_config_release (NULL);
}

/* ------------------------------------------------------------- requests */

Test (request, openai_shape)
{
  struct csr_llm_config c = config ("openai", NULL, KEY);
  struct csr_llm_request r;
  build_ok (&c, "You fix code.", "print(1", &r);
  cr_assert_str_eq (r.url, "https://api.openai.com/v1/chat/completions");
  cr_assert_eq (n_headers (&r), 2);
  cr_assert_str_eq (header (&r, "Authorization"), "Bearer " KEY);
  cr_assert_str_eq (header (&r, "Content-Type"), "application/json");
  cr_assert_null (strstr (r.body, KEY));

  yajl_val doc = tree (r.body);
  assert_str_at (doc, "model", "gpt-4.1-mini");
  cr_assert_eq (array_len (doc, "messages"), 2);
  assert_str_at (doc, "messages.0.role", "system");
  assert_str_at (doc, "messages.0.content", "You fix code.");
  assert_str_at (doc, "messages.1.role", "user");
  assert_str_at (doc, "messages.1.content", "print(1");
  assert_int_at (doc, "temperature", 0);
  assert_int_at (doc, "max_tokens", 1234);
  cr_assert_null (jget (doc, "stream"));
  yajl_tree_free (doc);
  csr_llm_request_release (&r);
  cr_assert_null (r.url);
  cr_assert_null (r.headers);
  cr_assert_null (r.body);
  csr_llm_request_release (&r);
}

Test (request, openai_reasoning_models_get_max_completion_tokens)
{
  const char *models[]
      = { "o1", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-4.1-mini", "o1x", "gpt-50" };
  const bool reasoning[] = { true, true, true, true, true, false, false, false };
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
    {
      struct csr_llm_config c = config ("openai", NULL, KEY);
      c.model = (char *)models[i];
      struct csr_llm_request r;
      build_ok (&c, "s", "u", &r);
      yajl_val doc = tree (r.body);
      if (reasoning[i])
        {
          assert_int_at (doc, "max_completion_tokens", 1234);
          cr_assert_null (jget (doc, "max_tokens"), "%s", models[i]);
          cr_assert_null (jget (doc, "temperature"), "%s", models[i]);
        }
      else
        {
          assert_int_at (doc, "max_tokens", 1234);
          assert_int_at (doc, "temperature", 0);
          cr_assert_null (jget (doc, "max_completion_tokens"), "%s", models[i]);
        }
      yajl_tree_free (doc);
      csr_llm_request_release (&r);
    }
}

Test (request, openai_v1_not_doubled)
{
  const char *cases[][2] = {
    { "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions" },
    { "http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/chat/completions" },
    { "http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1/chat/completions" },
    { "http://h/proxy/openai/v1", "http://h/proxy/openai/v1/chat/completions" },
    { "http://h/v1x", "http://h/v1x/v1/chat/completions" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      struct csr_llm_config c = config ("openai", cases[i][0], KEY);
      struct csr_llm_request r;
      build_ok (&c, "s", "u", &r);
      cr_assert_str_eq (r.url, cases[i][1], "base %s", cases[i][0]);
      csr_llm_request_release (&r);
    }
}

Test (request, openai_without_key)
{
  const char *keys[] = { NULL, "" };
  for (size_t i = 0; i < 2; i++)
    {
      struct csr_llm_config c = config ("openai", "http://localhost:8080", keys[i]);
      struct csr_llm_request r;
      build_ok (&c, "s", "u", &r);
      cr_assert_null (header (&r, "Authorization"));
      cr_assert_eq (n_headers (&r), 1);
      cr_assert_str_eq (header (&r, "Content-Type"), "application/json");
      csr_llm_request_release (&r);
    }
}

Test (request, deepseek_is_openai_wire)
{
  struct csr_llm_config c = config ("deepseek", NULL, KEY);
  struct csr_llm_request r;
  build_ok (&c, "s", "u", &r);
  cr_assert_str_eq (r.url, "https://api.deepseek.com/v1/chat/completions");
  cr_assert_str_eq (header (&r, "Authorization"), "Bearer " KEY);
  yajl_val doc = tree (r.body);
  assert_str_at (doc, "model", "deepseek-chat");
  assert_int_at (doc, "max_tokens", 1234);
  yajl_tree_free (doc);
  csr_llm_request_release (&r);
}

Test (request, anthropic_shape)
{
  struct csr_llm_config c = config ("anthropic", NULL, KEY);
  struct csr_llm_request r;
  build_ok (&c, "You fix code.", "print(1", &r);
  cr_assert_str_eq (r.url, "https://api.anthropic.com/v1/messages");
  cr_assert_eq (n_headers (&r), 3);
  cr_assert_str_eq (header (&r, "x-api-key"), KEY);
  cr_assert_str_eq (header (&r, "anthropic-version"), "2023-06-01");
  cr_assert_str_eq (header (&r, "content-type"), "application/json");
  cr_assert_null (header (&r, "Authorization"));
  cr_assert_null (strstr (r.body, KEY));

  yajl_val doc = tree (r.body);
  assert_str_at (doc, "model", "claude-sonnet-4-5");
  assert_int_at (doc, "max_tokens", 1234);
  assert_str_at (doc, "system", "You fix code.");
  cr_assert_eq (array_len (doc, "messages"), 1);
  assert_str_at (doc, "messages.0.role", "user");
  assert_str_at (doc, "messages.0.content", "print(1");
  assert_int_at (doc, "temperature", 0);
  yajl_tree_free (doc);
  csr_llm_request_release (&r);
}

Test (request, anthropic_base_with_v1)
{
  struct csr_llm_config c = config ("anthropic", "http://127.0.0.1:4711/v1/", KEY);
  struct csr_llm_request r;
  build_ok (&c, "s", "u", &r);
  cr_assert_str_eq (r.url, "http://127.0.0.1:4711/v1/messages");
  csr_llm_request_release (&r);
}

Test (request, gemini_shape)
{
  struct csr_llm_config c = config ("gemini", NULL, KEY);
  struct csr_llm_request r;
  build_ok (&c, "You fix code.", "print(1", &r);
  cr_assert_str_eq (r.url, "https://generativelanguage.googleapis.com/v1beta/models/"
                           "gemini-2.5-flash:generateContent");
  cr_assert_null (strstr (r.url, KEY), "the key is in the URL");
  cr_assert_null (strstr (r.url, "key="), "a key parameter is in the URL");
  cr_assert_null (strchr (r.url, '?'));
  cr_assert_eq (n_headers (&r), 2);
  cr_assert_str_eq (header (&r, "x-goog-api-key"), KEY);
  cr_assert_str_eq (header (&r, "Content-Type"), "application/json");
  cr_assert_null (strstr (r.body, KEY));

  yajl_val doc = tree (r.body);
  cr_assert_eq (array_len (doc, "systemInstruction.parts"), 1);
  assert_str_at (doc, "systemInstruction.parts.0.text", "You fix code.");
  cr_assert_eq (array_len (doc, "contents"), 1);
  assert_str_at (doc, "contents.0.role", "user");
  cr_assert_eq (array_len (doc, "contents.0.parts"), 1);
  assert_str_at (doc, "contents.0.parts.0.text", "print(1");
  assert_int_at (doc, "generationConfig.temperature", 0);
  assert_int_at (doc, "generationConfig.maxOutputTokens", 1234);
  cr_assert_null (jget (doc, "model"));
  yajl_tree_free (doc);
  csr_llm_request_release (&r);
}

Test (request, gemini_model_in_path)
{
  struct csr_llm_config c = config ("gemini", "http://127.0.0.1:9/v1beta/", KEY);
  struct csr_llm_request r;

  c.model = (char *)"models/gemini-2.0-flash";
  build_ok (&c, "s", "u", &r);
  cr_assert_str_eq (r.url, "http://127.0.0.1:9/v1beta/models/gemini-2.0-flash:generateContent");
  csr_llm_request_release (&r);

  c.model = (char *)"odd model/x?y";
  build_ok (&c, "s", "u", &r);
  cr_assert_str_eq (r.url, "http://127.0.0.1:9/v1beta/models/odd%20model%2Fx%3Fy:generateContent");
  csr_llm_request_release (&r);
}

Test (request, ollama_shape)
{
  /* Even with a key at hand, the ollama wire sends no authentication. */
  struct csr_llm_config c = config ("ollama", NULL, KEY);
  struct csr_llm_request r;
  build_ok (&c, "You fix code.", "print(1", &r);
  cr_assert_str_eq (r.url, "http://localhost:11434/api/chat");
  cr_assert_eq (n_headers (&r), 1);
  cr_assert_str_eq (header (&r, "Content-Type"), "application/json");
  cr_assert_null (header (&r, "Authorization"));
  cr_assert_null (strstr (r.body, KEY));

  yajl_val doc = tree (r.body);
  assert_str_at (doc, "model", "qwen2.5-coder:7b");
  cr_assert_eq (array_len (doc, "messages"), 2);
  assert_str_at (doc, "messages.0.role", "system");
  assert_str_at (doc, "messages.0.content", "You fix code.");
  assert_str_at (doc, "messages.1.role", "user");
  assert_str_at (doc, "messages.1.content", "print(1");
  cr_assert (YAJL_IS_FALSE (jget (doc, "stream")));
  assert_int_at (doc, "options.temperature", 0);
  assert_int_at (doc, "options.num_predict", 1234);
  yajl_tree_free (doc);
  csr_llm_request_release (&r);
}

Test (request, text_round_trips)
{
  const char *user = "def f():\n\treturn \"a\\b\" / 'c' # \xc3\xa9\xe2\x82\xac\x01\x1f </script>";
  const char *providers[] = { "openai", "anthropic", "gemini", "ollama" };
  const char *paths[] = { "messages.1.content", "messages.0.content", "contents.0.parts.0.text",
                          "messages.1.content" };
  for (size_t i = 0; i < 4; i++)
    {
      struct csr_llm_config c = config (providers[i], NULL, KEY);
      struct csr_llm_request r;
      build_ok (&c, "sys", user, &r);
      yajl_val doc = tree (r.body);
      assert_str_at (doc, paths[i], user);
      yajl_tree_free (doc);
      csr_llm_request_release (&r);
    }
}

Test (request, invalid_utf8_repaired)
{
  struct csr_llm_config c = config ("openai", NULL, KEY);
  struct csr_llm_request r;
  build_ok (&c, "s",
            "a\xff"
            "b\xc3",
            &r);
  cr_assert (csr_utf8_valid (r.body, strlen (r.body)));
  yajl_val doc = tree (r.body);
  assert_str_at (doc, "messages.1.content",
                 "a\xef\xbf\xbd"
                 "b\xef\xbf\xbd");
  yajl_tree_free (doc);
  csr_llm_request_release (&r);
}

Test (request, default_max_tokens)
{
  struct csr_llm_config c = config ("anthropic", NULL, KEY);
  c.max_tokens = 0;
  struct csr_llm_request r;
  build_ok (&c, "s", "u", &r);
  yajl_val doc = tree (r.body);
  assert_int_at (doc, "max_tokens", 4096);
  yajl_tree_free (doc);
  csr_llm_request_release (&r);
}

Test (request, no_system)
{
  struct csr_llm_config c = config ("openai", NULL, KEY);
  struct csr_llm_request r;
  build_ok (&c, NULL, "u", &r);
  yajl_val doc = tree (r.body);
  cr_assert_eq (array_len (doc, "messages"), 1);
  assert_str_at (doc, "messages.0.role", "user");
  yajl_tree_free (doc);
  csr_llm_request_release (&r);

  c = config ("anthropic", NULL, KEY);
  build_ok (&c, NULL, "u", &r);
  doc = tree (r.body);
  cr_assert_null (jget (doc, "system"));
  yajl_tree_free (doc);
  csr_llm_request_release (&r);

  c = config ("gemini", NULL, KEY);
  build_ok (&c, NULL, "u", &r);
  doc = tree (r.body);
  cr_assert_null (jget (doc, "systemInstruction"));
  assert_str_at (doc, "contents.0.parts.0.text", "u");
  yajl_tree_free (doc);
  csr_llm_request_release (&r);
}

static void
assert_build_fails (const struct csr_llm_config *c, const char *user, const char *what)
{
  struct csr_llm_request r = { .url = (char *)"garbage" };
  csr_error *err = NULL;
  cr_assert_eq (csr_llm_build (c, "s", user, &r, &err), -1, "%s: build succeeded", what);
  cr_assert_not_null (err, "%s: no error", what);
  cr_assert_not_null (err->msg);
  cr_assert_null (strstr (err->msg, KEY), "%s: the key is in \"%s\"", what, err->msg);
  cr_assert_null (r.url, "%s: the request is not left empty", what);
  cr_assert_null (r.headers);
  cr_assert_null (r.body);
  csr_error_free (err);
}

Test (request, refused)
{
  struct csr_llm_config c = config ("openai", NULL, KEY);
  assert_build_fails (NULL, "u", "no config");
  assert_build_fails (&c, NULL, "no user text");

  struct csr_llm_config bad = c;
  bad.provider = NULL;
  assert_build_fails (&bad, "u", "no provider");
  bad = c;
  bad.model = NULL;
  assert_build_fails (&bad, "u", "no model");
  bad.model = (char *)"";
  assert_build_fails (&bad, "u", "empty model");
  bad = c;
  bad.base_url = NULL;
  assert_build_fails (&bad, "u", "no base URL");
  bad.base_url = (char *)"http://x\r\nHost: evil";
  assert_build_fails (&bad, "u", "base URL with CRLF");
  bad = c;
  bad.api_key = (char *)KEY "\r\nX-Evil: 1";
  assert_build_fails (&bad, "u", "key with CRLF");

  static const struct csr_llm_provider none
      = { "none", CSR_LLM_WIRE_NONE, "http://x", "m", NULL, NULL };
  bad = c;
  bad.provider = &none;
  assert_build_fails (&bad, "u", "no wire");

  cr_assert_eq (csr_llm_build (&c, "s", "u", NULL, NULL), -1);
}

/* ------------------------------------------------------------- openai replies */

Test (openai, good_reply)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 200, "5",
         "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
         "\"message\":{\"role\":\"assistant\",\"content\":\"print(1)\\n\",\"refusal\":null},"
         "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":57,\"completion_tokens\":"
         "9,\"total_tokens\":66}}",
         &r);
  assert_ok (&r, "print(1)\n");
  cr_assert_eq (r.input_tokens, 57);
  cr_assert_eq (r.output_tokens, 9);
  cr_assert_eq (r.retry_after_s, -1, "a hint on a good reply");
  csr_llm_reply_release (&r);
  cr_assert_null (r.text);
  cr_assert_null (r.message);
  csr_llm_reply_release (&r);
}

/* The model the reply names: "model", or Gemini's "modelVersion"; one clean
 * line or nothing. */
Test (reply, model_used)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 200, NULL,
         "{\"model\":\"gpt-4.1-mini-2025-04-14\",\"choices\":[{\"message\":{\"content\":"
         "\"x\"}}]}",
         &r);
  assert_ok (&r, "x");
  cr_assert_str_eq (r.model, "gpt-4.1-mini-2025-04-14");
  csr_llm_reply_release (&r);
  cr_assert_null (r.model);

  parse (CSR_LLM_WIRE_GEMINI, 200, NULL,
         "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}],"
         "\"modelVersion\":\"gemini-2.5-flash-001\",\"model\":\"not-this\"}",
         &r);
  cr_assert_str_eq (r.model, "gemini-2.5-flash-001");
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_ANTHROPIC, 200, NULL,
         "{\"model\":\"claude-x\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}", &r);
  cr_assert_str_eq (r.model, "claude-x");
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_OLLAMA, 200, NULL,
         "{\"model\":\"qwen\",\"message\":{\"role\":\"assistant\",\"content\":\"x\"},"
         "\"done\":true}",
         &r);
  cr_assert_str_eq (r.model, "qwen");
  csr_llm_reply_release (&r);

  /* Absent, not a string, with a line break: not reported. */
  const char *bad[] = { "{\"choices\":[{\"message\":{\"content\":\"x\"}}]}",
                        "{\"model\":7,\"choices\":[{\"message\":{\"content\":\"x\"}}]}",
                        "{\"model\":\"a\\nb\",\"choices\":[{\"message\":{\"content\":\"x\"}}]}" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      parse (CSR_LLM_WIRE_OPENAI, 200, NULL, bad[i], &r);
      assert_ok (&r, "x");
      cr_assert_null (r.model, "%s", bad[i]);
      csr_llm_reply_release (&r);
    }
  /* An error reply has no model. */
  parse (CSR_LLM_WIRE_OPENAI, 401, NULL, "{\"model\":\"m\",\"error\":{\"message\":\"no\"}}", &r);
  cr_assert_null (r.model);
  csr_llm_reply_release (&r);
}

Test (openai, null_content_is_empty_text)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 200, NULL,
         "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null}}]}", &r);
  assert_ok (&r, "");
  cr_assert_eq (r.input_tokens, -1);
  cr_assert_eq (r.output_tokens, -1);
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_OPENAI, 200, NULL, "{\"choices\":[{\"message\":{\"content\":\"\"}}]}", &r);
  assert_ok (&r, "");
  csr_llm_reply_release (&r);
}

Test (openai, content_parts)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 201, NULL,
         "{\"choices\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
         "{\"type\":\"image_url\"},{\"type\":\"text\",\"text\":\"b\"}]}}],"
         "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":-3}}",
         &r);
  assert_ok (&r, "ab");
  cr_assert_eq (r.input_tokens, 1);
  cr_assert_eq (r.output_tokens, -1, "a negative count is not a count");
  csr_llm_reply_release (&r);
}

Test (openai, insufficient_quota)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 429, "20",
         "{\"error\":{\"message\":\"You exceeded your current quota, please check your plan "
         "and billing details.\",\"type\":\"insufficient_quota\",\"param\":null,"
         "\"code\":\"insufficient_quota\"}}",
         &r);
  assert_outcome (&r, CSR_LLM_QUOTA,
                  "openai: HTTP 429: You exceeded your current quota, please check your plan "
                  "and billing details.");
  csr_llm_reply_release (&r);

  /* In type only (code null), and in code only. */
  parse (CSR_LLM_WIRE_OPENAI, 429, NULL,
         "{\"error\":{\"message\":\"q\",\"type\":\"insufficient_quota\",\"code\":null}}", &r);
  assert_outcome (&r, CSR_LLM_QUOTA, "openai: HTTP 429: q");
  csr_llm_reply_release (&r);
  parse (CSR_LLM_WIRE_OPENAI, 429, NULL,
         "{\"error\":{\"message\":\"q\",\"type\":\"requests\",\"code\":\"insufficient_quota\"}}",
         &r);
  assert_outcome (&r, CSR_LLM_QUOTA, NULL);
  csr_llm_reply_release (&r);
}

Test (openai, rate_limit_retries)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 429, "20",
         "{\"error\":{\"message\":\"Rate limit reached for gpt-4.1-mini\",\"type\":\"requests\","
         "\"param\":null,\"code\":\"rate_limit_exceeded\"}}",
         &r);
  assert_outcome (&r, CSR_LLM_RETRY, "openai: HTTP 429: Rate limit reached for gpt-4.1-mini");
  cr_assert_eq (r.retry_after_s, 20);
  cr_assert_eq (r.input_tokens, -1);
  csr_llm_reply_release (&r);
}

Test (openai, bad_key_fails)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 401, NULL,
         "{\"error\":{\"message\":\"Incorrect API key provided: " KEY
         ". You can find your API key at https://platform.openai.com/account/api-keys.\","
         "\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"invalid_api_key\"}}",
         &r);
  cr_assert_eq (r.outcome, CSR_LLM_FAIL);
  assert_clean_message (r.message);
  cr_assert_str_eq (r.message, "openai: HTTP 401: Incorrect API key provided: "
                               "*************************. You can find your API key at "
                               "https://platform.openai.com/account/api-keys.");
  cr_assert_eq (r.retry_after_s, -1);
  csr_llm_reply_release (&r);
}

Test (openai, status_mapping)
{
  const struct
  {
    long status;
    enum csr_llm_outcome outcome;
  } cases[] = {
    { 429, CSR_LLM_RETRY }, { 500, CSR_LLM_RETRY }, { 502, CSR_LLM_RETRY }, { 503, CSR_LLM_RETRY },
    { 504, CSR_LLM_RETRY }, { 529, CSR_LLM_RETRY }, { 400, CSR_LLM_FAIL },  { 401, CSR_LLM_FAIL },
    { 403, CSR_LLM_FAIL },  { 404, CSR_LLM_FAIL },  { 413, CSR_LLM_FAIL },  { 501, CSR_LLM_FAIL },
    { 302, CSR_LLM_FAIL },  { 0, CSR_LLM_FAIL },    { 402, CSR_LLM_QUOTA },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      struct csr_llm_reply r;
      parse (CSR_LLM_WIRE_OPENAI, cases[i].status, NULL,
             "{\"error\":{\"message\":\"boom\",\"type\":\"server_error\",\"code\":null}}", &r);
      cr_assert_eq (r.outcome, cases[i].outcome, "HTTP %ld: outcome %d", cases[i].status,
                    r.outcome);
      char want[64];
      snprintf (want, sizeof want, "openai: HTTP %ld: boom", cases[i].status);
      cr_assert_str_eq (r.message, want);
      csr_llm_reply_release (&r);
    }
}

Test (openai, deepseek_insufficient_balance)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 402, NULL,
         "{\"error\":{\"message\":\"Insufficient Balance\",\"type\":\"unknown_error\","
         "\"param\":null,\"code\":\"invalid_request_error\"}}",
         &r);
  assert_outcome (&r, CSR_LLM_QUOTA, "openai: HTTP 402: Insufficient Balance");
  csr_llm_reply_release (&r);
}

Test (openai, error_document_with_200)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 200, NULL,
         "{\"error\":{\"message\":\"upstream failed\",\"code\":502}}", &r);
  assert_outcome (&r, CSR_LLM_FAIL, "openai: HTTP 200: upstream failed");
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_OPENAI, 200, NULL,
         "{\"error\":{\"message\":\"no money\",\"code\":\"insufficient_quota\"}}", &r);
  assert_outcome (&r, CSR_LLM_QUOTA, "openai: HTTP 200: no money");
  csr_llm_reply_release (&r);

  /* "error": null in a good reply is not an error. */
  parse (CSR_LLM_WIRE_OPENAI, 200, NULL,
         "{\"error\":null,\"choices\":[{\"message\":{\"content\":\"ok\"}}]}", &r);
  assert_ok (&r, "ok");
  csr_llm_reply_release (&r);
}

Test (openai, compatible_server_errors)
{
  struct csr_llm_reply r;
  /* vLLM */
  parse (CSR_LLM_WIRE_OPENAI, 400, NULL,
         "{\"object\":\"error\",\"message\":\"model x does not exist\",\"type\":"
         "\"NotFoundError\",\"code\":404}",
         &r);
  assert_outcome (&r, CSR_LLM_FAIL, "openai: HTTP 400: model x does not exist");
  csr_llm_reply_release (&r);
  /* FastAPI-style */
  parse (CSR_LLM_WIRE_OPENAI, 404, NULL, "{\"detail\":\"Not Found\"}", &r);
  assert_outcome (&r, CSR_LLM_FAIL, "openai: HTTP 404: Not Found");
  csr_llm_reply_release (&r);
  /* A plain string error */
  parse (CSR_LLM_WIRE_OPENAI, 400, NULL, "{\"error\":\"bad request\"}", &r);
  assert_outcome (&r, CSR_LLM_FAIL, "openai: HTTP 400: bad request");
  csr_llm_reply_release (&r);
}

Test (openai, malformed)
{
  const enum csr_llm_wire w = CSR_LLM_WIRE_OPENAI;
  assert_malformed (w, "", "empty body");
  assert_malformed (w, "Hello, world", "not JSON");
  assert_malformed (w, "{\"choices\":[{\"message\":{\"content\":\"abc", "not JSON");
  assert_malformed (w, "{\"choices\":[]}}", "not JSON");
  assert_malformed (w, "{\"choices\":[]} {}", "not JSON");
  assert_malformed (w, "{\"choices\":[] /* comment */}", "not JSON");
  assert_malformed (w, "[1, 2]", "not a JSON object");
  assert_malformed (w, "\"text\"", "not a JSON object");
  assert_malformed (w, "null", "not a JSON object");
  assert_malformed (w, "{}", "no choices");
  assert_malformed (w, "{\"choices\":{\"message\":{\"content\":\"x\"}}}",
                    "choices is not an array");
  assert_malformed (w, "{\"choices\":\"x\"}", "choices is not an array");
  assert_malformed (w, "{\"choices\":[]}", "choices is empty");
  assert_malformed (w, "{\"choices\":[{}]}", "no message");
  assert_malformed (w, "{\"choices\":[7]}", "no message");
  assert_malformed (w, "{\"choices\":[{\"message\":\"x\"}]}", "no message");
  assert_malformed (w, "{\"choices\":[{\"message\":{}}]}", "no message content");
  assert_malformed (w, "{\"choices\":[{\"message\":{\"content\":42}}]}", "not a string");
  assert_malformed (w, "{\"choices\":[{\"message\":{\"content\":true}}]}", "not a string");
  assert_malformed (w, "{\"choices\":[{\"message\":{\"content\":{\"text\":\"x\"}}}]}",
                    "not a string");
  assert_malformed (w, "{\"choices\":[{\"message\":{\"content\":[{\"type\":\"text\"}]}}]}",
                    "no text");
  assert_malformed (w, "{\"choices\":[{\"message\":{\"content\":\"\xff\xfe\"}}]}", "not JSON");
  /* A \u0000 would cut the code at it, silently: the reply is refused whole. */
  assert_malformed (w, "{\"choices\":[{\"message\":{\"content\":\"x = 1\\u0000import os\"}}]}",
                    "a string holds a NUL character");
}

Test (openai, malformed_messages_exact)
{
  const struct
  {
    const char *body, *message;
  } cases[] = {
    { "{\"choices\":[", "openai: malformed reply: not JSON (parse error: premature EOF)" },
    { "{} x", "openai: malformed reply: not JSON (parse error: trailing garbage)" },
    { "xyz", "openai: malformed reply: not JSON (lexical error: invalid char in json text.)" },
    { "{\"choices\":[{\"message\":{\"content\":7}}]}",
      "openai: malformed reply: message content is not a string" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      struct csr_llm_reply r;
      parse (CSR_LLM_WIRE_OPENAI, 200, NULL, cases[i].body, &r);
      assert_outcome (&r, CSR_LLM_FAIL, cases[i].message);
      cr_assert_eq (r.retry_after_s, -1);
      csr_llm_reply_release (&r);
    }
}

Test (openai, malformed_binary)
{
  /* A NUL inside the body, and a body that is not NUL-terminated. */
  static const char with_nul[] = "{\"choices\":[{\"message\":{\"content\":\"a\0b\"}}]}";
  struct csr_llm_reply r;
  csr_llm_parse (CSR_LLM_WIRE_OPENAI, 200, NULL, with_nul, sizeof with_nul - 1, KEY, &r);
  cr_assert_eq (r.outcome, CSR_LLM_FAIL);
  cr_assert_not_null (strstr (r.message, "malformed reply: not JSON"), "%s", r.message);
  csr_llm_reply_release (&r);

  const char good[] = "{\"choices\":[{\"message\":{\"content\":\"hi\"}}]}XXXX";
  char *buf = malloc (sizeof good - 5);
  memcpy (buf, good, sizeof good - 5);
  csr_llm_parse (CSR_LLM_WIRE_OPENAI, 200, NULL, buf, sizeof good - 5, KEY, &r);
  assert_ok (&r, "hi");
  csr_llm_reply_release (&r);
  free (buf);

  csr_llm_parse (CSR_LLM_WIRE_OPENAI, 200, NULL, NULL, 100, KEY, &r);
  cr_assert_eq (r.outcome, CSR_LLM_FAIL);
  cr_assert_str_eq (r.message, "openai: malformed reply: empty body");
  csr_llm_reply_release (&r);
}

Test (openai, deep_nesting_refused)
{
  size_t depth = 100000;
  char *body = malloc (2 * depth + 1);
  memset (body, '[', depth);
  memset (body + depth, ']', depth);
  body[2 * depth] = '\0';
  assert_malformed (CSR_LLM_WIRE_OPENAI, body, "nested");
  free (body);

  /* Ordinary depth is fine. */
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 200, NULL,
         "{\"x\":[[[[[[[[[[1]]]]]]]]]],\"choices\":[{\"message\":{\"content\":\"d\"}}]}", &r);
  assert_ok (&r, "d");
  csr_llm_reply_release (&r);
}

/* ------------------------------------------------------------- anthropic replies */

Test (anthropic, good_reply)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_ANTHROPIC, 200, NULL,
         "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\","
         "\"content\":[{\"type\":\"thinking\",\"thinking\":\"hmm\",\"signature\":\"s\"},"
         "{\"type\":\"text\",\"text\":\"first \"},{\"type\":\"tool_use\",\"id\":\"t\","
         "\"name\":\"n\",\"input\":{}},{\"type\":\"text\",\"text\":\"second\"}],"
         "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":120,\"output_tokens\":33}}",
         &r);
  assert_ok (&r, "first second");
  cr_assert_eq (r.input_tokens, 120);
  cr_assert_eq (r.output_tokens, 33);
  csr_llm_reply_release (&r);
}

Test (anthropic, empty_content)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_ANTHROPIC, 200, NULL,
         "{\"type\":\"message\",\"content\":[],\"usage\":{\"input_tokens\":5}}", &r);
  assert_ok (&r, "");
  cr_assert_eq (r.input_tokens, 5);
  cr_assert_eq (r.output_tokens, -1);
  csr_llm_reply_release (&r);
}

Test (anthropic, overloaded_retries)
{
  const char *body = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":"
                     "\"Overloaded\"},\"request_id\":\"req_1\"}";
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_ANTHROPIC, 529, NULL, body, &r);
  assert_outcome (&r, CSR_LLM_RETRY, "anthropic: HTTP 529: Overloaded");
  cr_assert_eq (r.retry_after_s, -1);
  csr_llm_reply_release (&r);
  /* overloaded_error decides, whatever the status. */
  parse (CSR_LLM_WIRE_ANTHROPIC, 400, NULL, body, &r);
  assert_outcome (&r, CSR_LLM_RETRY, "anthropic: HTTP 400: Overloaded");
  csr_llm_reply_release (&r);
  parse (CSR_LLM_WIRE_ANTHROPIC, 200, NULL, body, &r);
  assert_outcome (&r, CSR_LLM_RETRY, "anthropic: HTTP 200: Overloaded");
  csr_llm_reply_release (&r);
  /* 529 with no body at all */
  parse (CSR_LLM_WIRE_ANTHROPIC, 529, NULL, "", &r);
  assert_outcome (&r, CSR_LLM_RETRY, "anthropic: HTTP 529");
  csr_llm_reply_release (&r);
}

Test (anthropic, spend_limits_are_quota)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_ANTHROPIC, 400, NULL,
         "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":"
         "\"Your credit balance is too low to access the Anthropic API. Please go to Plans & "
         "Billing to upgrade or purchase credits.\"}}",
         &r);
  assert_outcome (&r, CSR_LLM_QUOTA, NULL);
  cr_assert (strncmp (r.message, "anthropic: HTTP 400: Your credit balance is too low", 51) == 0,
             "%s", r.message);
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_ANTHROPIC, 429, "30",
         "{\"type\":\"error\",\"error\":{\"type\":\"enforced_spend_limit_reached\",\"message\":"
         "\"limit\"}}",
         &r);
  assert_outcome (&r, CSR_LLM_QUOTA, "anthropic: HTTP 429: limit");
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_ANTHROPIC, 400, NULL,
         "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":"
         "\"Request failed: enforced_spend_limit_reached for this workspace\"}}",
         &r);
  assert_outcome (&r, CSR_LLM_QUOTA, NULL);
  csr_llm_reply_release (&r);
}

Test (anthropic, rate_limit_and_server_errors)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_ANTHROPIC, 429, "3",
         "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":"
         "\"Number of request tokens has exceeded your per-minute rate limit\"}}",
         &r);
  assert_outcome (&r, CSR_LLM_RETRY, NULL);
  cr_assert_eq (r.retry_after_s, 3);
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_ANTHROPIC, 500, NULL,
         "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal\"}}", &r);
  assert_outcome (&r, CSR_LLM_RETRY, "anthropic: HTTP 500: Internal");
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_ANTHROPIC, 401, NULL,
         "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":"
         "\"invalid x-api-key\"}}",
         &r);
  assert_outcome (&r, CSR_LLM_FAIL, "anthropic: HTTP 401: invalid x-api-key");
  csr_llm_reply_release (&r);
}

Test (anthropic, malformed)
{
  const enum csr_llm_wire w = CSR_LLM_WIRE_ANTHROPIC;
  assert_malformed (w, "<html>ok</html>", "not JSON");
  assert_malformed (w, "{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}",
                    "not JSON");
  assert_malformed (w, "{\"type\":\"message\"}", "no content");
  assert_malformed (w, "{\"content\":\"hello\"}", "content is not an array");
  assert_malformed (w, "{\"content\":{\"type\":\"text\",\"text\":\"x\"}}",
                    "content is not an array");
  assert_malformed (w, "{\"content\":[{\"type\":\"text\",\"text\":5}]}", "text block");
  assert_malformed (w, "{\"content\":[{\"type\":\"text\"}]}", "text block");
  assert_malformed (w, "{\"content\":[{\"type\":\"text\",\"text\":null}]}", "text block");
}

/* ------------------------------------------------------------- gemini replies */

Test (gemini, good_reply)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_GEMINI, 200, NULL,
         "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"thinking\","
         "\"thought\":true},{\"text\":\"print(\"},{\"text\":\"1)\"}]},\"finishReason\":\"STOP\","
         "\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":40,\"candidatesTokenCount\":7,"
         "\"thoughtsTokenCount\":100,\"totalTokenCount\":147},\"modelVersion\":\"g\"}",
         &r);
  assert_ok (&r, "print(1)");
  cr_assert_eq (r.input_tokens, 40);
  cr_assert_eq (r.output_tokens, 107);
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_GEMINI, 200, NULL,
         "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}],"
         "\"usageMetadata\":{\"promptTokenCount\":4,\"candidatesTokenCount\":1}}",
         &r);
  assert_ok (&r, "x");
  cr_assert_eq (r.input_tokens, 4);
  cr_assert_eq (r.output_tokens, 1);
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_GEMINI, 200, NULL,
         "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}]}", &r);
  assert_ok (&r, "x");
  cr_assert_eq (r.input_tokens, -1);
  cr_assert_eq (r.output_tokens, -1);
  csr_llm_reply_release (&r);
}

Test (gemini, empty_parts_text)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_GEMINI, 200, NULL,
         "{\"candidates\":[{\"content\":{\"parts\":[]},\"finishReason\":\"STOP\"}]}", &r);
  assert_ok (&r, "");
  csr_llm_reply_release (&r);
}

Test (gemini, prompt_blocked)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_GEMINI, 200, NULL,
         "{\"promptFeedback\":{\"blockReason\":\"SAFETY\",\"safetyRatings\":[]},"
         "\"usageMetadata\":{\"promptTokenCount\":12,\"totalTokenCount\":12}}",
         &r);
  assert_outcome (&r, CSR_LLM_BLOCKED, "gemini: prompt blocked: SAFETY");
  cr_assert_eq (r.input_tokens, 12);
  cr_assert_eq (r.output_tokens, 0);
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_GEMINI, 200, NULL,
         "{\"candidates\":[],\"promptFeedback\":{\"blockReason\":\"PROHIBITED_CONTENT\"}}", &r);
  assert_outcome (&r, CSR_LLM_BLOCKED, "gemini: prompt blocked: PROHIBITED_CONTENT");
  csr_llm_reply_release (&r);
}

Test (gemini, finish_blocked)
{
  const char *reasons[] = { "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII" };
  for (size_t i = 0; i < 5; i++)
    {
      char body[512], want[128];
      snprintf (body, sizeof body,
                "{\"candidates\":[{\"finishReason\":\"%s\",\"index\":0,\"safetyRatings\":[]}]}",
                reasons[i]);
      snprintf (want, sizeof want, "gemini: reply blocked: %s", reasons[i]);
      struct csr_llm_reply r;
      parse (CSR_LLM_WIRE_GEMINI, 200, NULL, body, &r);
      assert_outcome (&r, CSR_LLM_BLOCKED, want);
      csr_llm_reply_release (&r);

      /* Empty parts: still no text. */
      snprintf (body, sizeof body,
                "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}]},"
                "\"finishReason\":\"%s\"}]}",
                reasons[i]);
      parse (CSR_LLM_WIRE_GEMINI, 200, NULL, body, &r);
      assert_outcome (&r, CSR_LLM_BLOCKED, want);
      csr_llm_reply_release (&r);
    }
}

Test (gemini, finish_safety_with_text_is_ok)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_GEMINI, 200, NULL,
         "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"partial\"}]},"
         "\"finishReason\":\"SAFETY\"}]}",
         &r);
  assert_ok (&r, "partial");
  csr_llm_reply_release (&r);
}

Test (gemini, no_parts)
{
  assert_malformed (CSR_LLM_WIRE_GEMINI,
                    "{\"candidates\":[{\"content\":{\"role\":\"model\"},\"finishReason\":"
                    "\"MAX_TOKENS\"}]}",
                    "no content parts (finish MAX_TOKENS)");
  assert_malformed (CSR_LLM_WIRE_GEMINI, "{\"candidates\":[{\"finishReason\":\"STOP\"}]}",
                    "no content parts");
  assert_malformed (CSR_LLM_WIRE_GEMINI, "{\"candidates\":[{}]}", "no content parts");
  assert_malformed (CSR_LLM_WIRE_GEMINI, "{\"candidates\":[{\"content\":{}}]}", "no content parts");
}

Test (gemini, per_day_quota)
{
  const char *body
      = "{\"error\":{\"code\":429,\"message\":\"You exceeded your current quota, please check "
        "your plan and billing details.\",\"status\":\"RESOURCE_EXHAUSTED\",\"details\":["
        "{\"@type\":\"type.googleapis.com/google.rpc.QuotaFailure\",\"violations\":["
        "{\"quotaMetric\":\"generativelanguage.googleapis.com/"
        "generate_content_free_tier_requests\",\"quotaId\":"
        "\"GenerateRequestsPerDayPerProjectPerModel-FreeTier\",\"quotaDimensions\":{\"model\":"
        "\"gemini-2.5-flash\"},\"quotaValue\":\"250\"}]},"
        "{\"@type\":\"type.googleapis.com/google.rpc.Help\",\"links\":[{\"description\":\"d\","
        "\"url\":\"https://ai.google.dev/gemini-api/docs/rate-limits\"}]},"
        "{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"41s\"}]}}";
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_GEMINI, 429, NULL, body, &r);
  assert_outcome (&r, CSR_LLM_QUOTA,
                  "gemini: HTTP 429: You exceeded your current quota, please check your plan "
                  "and billing details.");
  csr_llm_reply_release (&r);

  /* per_day in the metric, in another case */
  parse (CSR_LLM_WIRE_GEMINI, 429, NULL,
         "{\"error\":{\"code\":429,\"message\":\"q\",\"status\":\"RESOURCE_EXHAUSTED\","
         "\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.QuotaFailure\","
         "\"violations\":[{\"quotaMetric\":\"x/requests_PER_DAY\"}]}]}}",
         &r);
  assert_outcome (&r, CSR_LLM_QUOTA, "gemini: HTTP 429: q");
  csr_llm_reply_release (&r);
}

Test (gemini, per_minute_retries_after_delay)
{
  const char *body
      = "{\"error\":{\"code\":429,\"message\":\"Resource exhausted\",\"status\":"
        "\"RESOURCE_EXHAUSTED\",\"details\":[{\"@type\":\"type.googleapis.com/"
        "google.rpc.QuotaFailure\",\"violations\":[{\"quotaMetric\":\"generativelanguage."
        "googleapis.com/generate_content_free_tier_requests\",\"quotaId\":"
        "\"GenerateRequestsPerMinutePerProjectPerModel-FreeTier\"}]},{\"@type\":"
        "\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"13s\"}]}}";
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_GEMINI, 429, NULL, body, &r);
  assert_outcome (&r, CSR_LLM_RETRY, "gemini: HTTP 429: Resource exhausted");
  cr_assert_eq (r.retry_after_s, 13);
  csr_llm_reply_release (&r);

  /* The Retry-After header wins over retryDelay. */
  parse (CSR_LLM_WIRE_GEMINI, 429, "2", body, &r);
  cr_assert_eq (r.outcome, CSR_LLM_RETRY);
  cr_assert_eq (r.retry_after_s, 2);
  csr_llm_reply_release (&r);

  /* An unreadable header leaves retryDelay. */
  parse (CSR_LLM_WIRE_GEMINI, 429, "soon", body, &r);
  cr_assert_eq (r.retry_after_s, 13);
  csr_llm_reply_release (&r);
}

Test (gemini, retry_delay_forms)
{
  const struct
  {
    const char *delay;
    double want;
  } cases[] = {
    { "1.5s", 1.5 }, { "0s", 0 },   { "0.25s", 0.25 }, { "120s", 120 }, { "13", -1 },
    { "s", -1 },     { "-3s", -1 }, { "1.5 s", -1 },   { "abc", -1 },   { "0x10s", -1 },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      char body[512];
      snprintf (body, sizeof body,
                "{\"error\":{\"code\":429,\"message\":\"m\",\"status\":\"RESOURCE_EXHAUSTED\","
                "\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\","
                "\"retryDelay\":\"%s\"}]}}",
                cases[i].delay);
      struct csr_llm_reply r;
      parse (CSR_LLM_WIRE_GEMINI, 429, NULL, body, &r);
      cr_assert_eq (r.outcome, CSR_LLM_RETRY);
      cr_assert_float_eq (r.retry_after_s, cases[i].want, 1e-9, "%s: %g", cases[i].delay,
                          r.retry_after_s);
      csr_llm_reply_release (&r);
    }

  /* retryDelay not a string; no RetryInfo; RetryInfo of another type prefix. */
  const char *others[] = {
    "{\"error\":{\"code\":429,\"details\":[{\"@type\":\"type.googleapis.com/"
    "google.rpc.RetryInfo\",\"retryDelay\":13}]}}",
    "{\"error\":{\"code\":429,\"details\":[]}}",
    "{\"error\":{\"code\":429,\"details\":\"x\"}}",
    "{\"error\":{\"code\":429,\"details\":[{\"@type\":\"google.rpc.RetryInfo\","
    "\"retryDelay\":\"13s\"}]}}",
  };
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    {
      struct csr_llm_reply r;
      parse (CSR_LLM_WIRE_GEMINI, 429, NULL, others[i], &r);
      cr_assert_eq (r.outcome, CSR_LLM_RETRY);
      cr_assert_eq (r.retry_after_s, -1, "%s", others[i]);
      csr_llm_reply_release (&r);
    }
}

Test (gemini, other_errors)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_GEMINI, 400, NULL,
         "{\"error\":{\"code\":400,\"message\":\"API key not valid. Please pass a valid API "
         "key.\",\"status\":\"INVALID_ARGUMENT\",\"details\":[{\"@type\":\"type.googleapis.com/"
         "google.rpc.ErrorInfo\",\"reason\":\"API_KEY_INVALID\"}]}}",
         &r);
  assert_outcome (&r, CSR_LLM_FAIL,
                  "gemini: HTTP 400: API key not valid. Please pass a valid API key.");
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_GEMINI, 503, NULL,
         "{\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again "
         "later.\",\"status\":\"UNAVAILABLE\"}}",
         &r);
  assert_outcome (&r, CSR_LLM_RETRY, NULL);
  csr_llm_reply_release (&r);

  /* RESOURCE_EXHAUSTED decides even without a 429. */
  parse (CSR_LLM_WIRE_GEMINI, 400, NULL,
         "{\"error\":{\"code\":429,\"message\":\"x\",\"status\":\"RESOURCE_EXHAUSTED\"}}", &r);
  assert_outcome (&r, CSR_LLM_RETRY, "gemini: HTTP 400: x");
  csr_llm_reply_release (&r);
}

Test (gemini, malformed)
{
  const enum csr_llm_wire w = CSR_LLM_WIRE_GEMINI;
  assert_malformed (w, "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]",
                    "not JSON");
  assert_malformed (w, "{}", "no candidates");
  assert_malformed (w, "{\"candidates\":[]}", "no candidates");
  assert_malformed (w, "{\"candidates\":{}}", "candidates is not an array");
  assert_malformed (w, "{\"candidates\":[\"x\"]}", "candidates[0] is not an object");
  assert_malformed (w, "{\"candidates\":[{\"content\":{\"parts\":{\"text\":\"a\"}}}]}",
                    "parts is not an array");
  assert_malformed (w, "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":1}]}}]}",
                    "not a string");
  assert_malformed (w, "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":[\"a\"]}]}}]}",
                    "not a string");
  assert_malformed (w, "{\"promptFeedback\":{\"blockReason\":7}}", "no candidates");
}

/* ------------------------------------------------------------- ollama replies */

Test (ollama, good_reply)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OLLAMA, 200, NULL,
         "{\"model\":\"qwen2.5-coder:7b\",\"created_at\":\"2025-01-01T00:00:00Z\",\"message\":"
         "{\"role\":\"assistant\",\"content\":\"import os\\n\"},\"done_reason\":\"stop\","
         "\"done\":true,\"total_duration\":1,\"prompt_eval_count\":26,\"eval_count\":290}",
         &r);
  assert_ok (&r, "import os\n");
  cr_assert_eq (r.input_tokens, 26);
  cr_assert_eq (r.output_tokens, 290);
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_OLLAMA, 200, NULL, "{\"message\":{\"content\":\"\"},\"done\":true}", &r);
  assert_ok (&r, "");
  cr_assert_eq (r.input_tokens, -1);
  cr_assert_eq (r.output_tokens, -1);
  csr_llm_reply_release (&r);
}

Test (ollama, errors)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OLLAMA, 404, NULL,
         "{\"error\":\"model \\\"qwen9\\\" not found, try pulling it first\"}", &r);
  assert_outcome (&r, CSR_LLM_FAIL,
                  "ollama: HTTP 404: model \"qwen9\" not found, try pulling it first");
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_OLLAMA, 500, NULL,
         "{\"error\":\"llama runner process has terminated: signal: killed\"}", &r);
  assert_outcome (&r, CSR_LLM_RETRY,
                  "ollama: HTTP 500: llama runner process has terminated: signal: killed");
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_OLLAMA, 200, NULL, "{\"error\":\"out of memory\"}", &r);
  assert_outcome (&r, CSR_LLM_FAIL, "ollama: HTTP 200: out of memory");
  csr_llm_reply_release (&r);

  parse (CSR_LLM_WIRE_OLLAMA, 429, NULL, "{\"error\":\"busy\"}", &r);
  assert_outcome (&r, CSR_LLM_RETRY, "ollama: HTTP 429: busy");
  csr_llm_reply_release (&r);
}

Test (ollama, malformed)
{
  const enum csr_llm_wire w = CSR_LLM_WIRE_OLLAMA;
  assert_malformed (w, "{\"message\":{\"content\":\"x\"},", "not JSON");
  assert_malformed (w, "{\"done\":true}", "no message");
  assert_malformed (w, "{\"message\":\"hello\"}", "no message");
  assert_malformed (w, "{\"message\":{\"role\":\"assistant\"}}", "no message content");
  assert_malformed (w, "{\"message\":{\"content\":3.5}}", "not a string");
  assert_malformed (w, "{\"message\":{\"content\":null}}", "not a string");
  /* Streaming output (one object per line) is not one JSON value. */
  assert_malformed (w,
                    "{\"message\":{\"content\":\"a\"},\"done\":false}\n"
                    "{\"message\":{\"content\":\"b\"},\"done\":true}\n",
                    "not JSON");
}

/* ------------------------------------------------------------- messages */

Test (message, cut_to_300_bytes)
{
  size_t n = 10000;
  char *body = malloc (n + 64);
  strcpy (body, "{\"error\":\"");
  memset (body + strlen (body), 'x', n);
  strcpy (body + 10 + n, "\"}");
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OLLAMA, 400, NULL, body, &r);
  cr_assert_eq (r.outcome, CSR_LLM_FAIL);
  assert_clean_message (r.message);
  cr_assert_eq (strlen (r.message), 300);
  cr_assert (strncmp (r.message, "ollama: HTTP 400: xxx", 21) == 0);
  csr_llm_reply_release (&r);
  free (body);
}

Test (message, cut_on_a_character_boundary)
{
  /* "openai: HTTP 400: " is 18 bytes; then 3-byte characters: the 300th
   * byte falls inside one, at every offset. */
  for (int pad = 0; pad < 3; pad++)
    {
      char body[2048];
      int len = snprintf (body, sizeof body, "{\"error\":{\"message\":\"%.*s", pad, "ab");
      for (int i = 0; i < 200; i++)
        len += snprintf (body + len, sizeof body - len, "\xe2\x82\xac");
      snprintf (body + len, sizeof body - len, "\"}}");
      struct csr_llm_reply r;
      parse (CSR_LLM_WIRE_OPENAI, 400, NULL, body, &r);
      assert_clean_message (r.message);
      size_t want = 18 + pad + (300 - 18 - pad) / 3 * 3;
      cr_assert_eq (strlen (r.message), want, "pad %d: %zu bytes", pad, strlen (r.message));
      csr_llm_reply_release (&r);
    }
}

Test (message, control_characters_become_spaces)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 400, NULL,
         "{\"error\":{\"message\":\"line one\\nline\\ttwo\\r\\u0007\\u001b[31mred\\u007f"
         "\\u0085c1\\u2028ls\\n\\n\"}}",
         &r);
  assert_clean_message (r.message);
  cr_assert_str_eq (r.message, "openai: HTTP 400: line one line two   [31mred  c1 ls");
  csr_llm_reply_release (&r);
}

Test (message, key_scrubbed)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_ANTHROPIC, 401, NULL,
         "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":"
         "\"bad key " KEY " (twice: " KEY ")\"}}",
         &r);
  assert_clean_message (r.message);
  cr_assert_str_eq (r.message, "anthropic: HTTP 401: bad key ************************* "
                               "(twice: *************************)");
  csr_llm_reply_release (&r);

  /* In a Gemini block reason, and in a malformed-reply message. */
  parse (CSR_LLM_WIRE_GEMINI, 200, NULL, "{\"promptFeedback\":{\"blockReason\":\"" KEY "\"}}", &r);
  cr_assert_eq (r.outcome, CSR_LLM_BLOCKED);
  assert_clean_message (r.message);
  csr_llm_reply_release (&r);
  parse (CSR_LLM_WIRE_GEMINI, 200, NULL, "{\"candidates\":[{\"finishReason\":\"" KEY "\"}]}", &r);
  cr_assert_eq (r.outcome, CSR_LLM_FAIL);
  assert_clean_message (r.message);
  csr_llm_reply_release (&r);
}

Test (message, key_scrubbed_across_the_cut)
{
  /* The key straddles byte 300: no piece of it may survive the cut. */
  for (int at = 270; at < 300; at += 3)
    {
      char body[1024];
      int pad = at - 18;
      snprintf (body, sizeof body, "{\"error\":{\"message\":\"%.*s%s tail\"}}", pad,
                "..................................................................."
                "..................................................................."
                "..................................................................."
                "...................................................................",
                KEY);
      struct csr_llm_reply r;
      parse (CSR_LLM_WIRE_OPENAI, 400, NULL, body, &r);
      assert_clean_message (r.message);
      for (size_t k = 4; k <= strlen (KEY); k++)
        {
          char piece[64];
          snprintf (piece, sizeof piece, "%.*s", (int)k, KEY);
          cr_assert_null (strstr (r.message, piece), "at %d: \"%s\" survived", at, piece);
        }
      csr_llm_reply_release (&r);
    }
}

Test (message, key_escaped_in_json_is_scrubbed)
{
  /* The provider escaped characters of the key: the decoded text still
   * holds it. */
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 401, NULL,
         "{\"error\":{\"message\":\"key sk\\u002dtest\\u002dSECRET-0123456789 is wrong\"}}", &r);
  assert_clean_message (r.message);
  cr_assert_str_eq (r.message, "openai: HTTP 401: key ************************* is wrong");
  csr_llm_reply_release (&r);
}

Test (message, raw_bodies)
{
  struct csr_llm_reply r;
  /* A proxy's plain text is quoted, key scrubbed, on one line. */
  parse (CSR_LLM_WIRE_OPENAI, 503, NULL, "upstream connect error\r\nfor key " KEY "\r\n", &r);
  assert_outcome (&r, CSR_LLM_RETRY,
                  "openai: HTTP 503: upstream connect error  for key *************************");
  csr_llm_reply_release (&r);

  /* An HTML page is not. */
  parse (CSR_LLM_WIRE_GEMINI, 502, NULL,
         "\n<html><head><title>502 Bad Gateway</title></head><body></body></html>", &r);
  assert_outcome (&r, CSR_LLM_RETRY, "gemini: HTTP 502");
  csr_llm_reply_release (&r);

  /* JSON without a message: just the status. */
  parse (CSR_LLM_WIRE_ANTHROPIC, 500, NULL, "{\"status\":\"bad\"}", &r);
  assert_outcome (&r, CSR_LLM_RETRY, "anthropic: HTTP 500");
  csr_llm_reply_release (&r);

  /* Invalid UTF-8 in a raw body is repaired. */
  parse (CSR_LLM_WIRE_OLLAMA, 400, NULL, "bad \xff\xfe bytes", &r);
  assert_outcome (&r, CSR_LLM_FAIL, "ollama: HTTP 400: bad \xef\xbf\xbd\xef\xbf\xbd bytes");
  csr_llm_reply_release (&r);

  /* A huge raw body is cut like any message. */
  char *big = malloc (100001);
  memset (big, 'y', 100000);
  big[100000] = '\0';
  parse (CSR_LLM_WIRE_OLLAMA, 500, NULL, big, &r);
  assert_clean_message (r.message);
  cr_assert_eq (strlen (r.message), 300);
  csr_llm_reply_release (&r);
  free (big);
}

Test (message, unknown_wire)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_NONE, 200, NULL, "{}", &r);
  cr_assert_eq (r.outcome, CSR_LLM_FAIL);
  cr_assert_null (r.text);
  cr_assert_not_null (r.message);
  csr_llm_reply_release (&r);
  csr_llm_reply_release (NULL);
  csr_llm_parse (CSR_LLM_WIRE_OPENAI, 200, NULL, "{}", 2, NULL, NULL); /* no crash */
}

/* ------------------------------------------------------------- scrub */

Test (scrub, replaces_every_occurrence)
{
  char s[] = "a KEYKEY b KEY c";
  csr_llm_scrub (s, "KEY!");
  cr_assert_str_eq (s, "a KEYKEY b KEY c");
  csr_llm_scrub (s, "KEYK");
  cr_assert_str_eq (s, "a ****EY b KEY c");

  char t[] = "xx-secret-xx-secret--secret";
  csr_llm_scrub (t, "-secret");
  cr_assert_str_eq (t, "xx*******-xx*******-*******");

  char u[] = "aaaaaaa";
  csr_llm_scrub (u, "aaaa");
  cr_assert_null (strstr (u, "aaaa"));
  cr_assert_eq (strlen (u), 7);
}

Test (scrub, short_or_missing_keys)
{
  char s[] = "abc abc";
  csr_llm_scrub (s, "abc");
  cr_assert_str_eq (s, "abc abc");
  csr_llm_scrub (s, "");
  cr_assert_str_eq (s, "abc abc");
  csr_llm_scrub (s, NULL);
  cr_assert_str_eq (s, "abc abc");
  csr_llm_scrub (NULL, "abcd");
  csr_llm_scrub (s, "abc abc");
  cr_assert_str_eq (s, "*******");
}

/* ------------------------------------------------------------- Retry-After */

static double
retry_after (const char *header)
{
  struct csr_llm_reply r;
  parse (CSR_LLM_WIRE_OPENAI, 503, header, "{\"error\":{\"message\":\"later\"}}", &r);
  cr_assert_eq (r.outcome, CSR_LLM_RETRY);
  double v = r.retry_after_s;
  csr_llm_reply_release (&r);
  return v;
}

Test (retry_after, seconds)
{
  cr_assert_eq (retry_after (NULL), -1);
  cr_assert_eq (retry_after ("7"), 7);
  cr_assert_eq (retry_after ("  7 "), 7);
  cr_assert_eq (retry_after ("0"), 0);
  cr_assert_eq (retry_after ("86400"), 86400);
  cr_assert_float_eq (retry_after ("1.5"), 1.5, 1e-9);
  cr_assert_eq (retry_after (""), -1);
  cr_assert_eq (retry_after ("-5"), -1);
  cr_assert_eq (retry_after ("7s"), -1);
  cr_assert_eq (retry_after ("7 8"), -1);
  cr_assert_eq (retry_after ("soon"), -1);
  cr_assert_eq (retry_after ("0x10"), -1);
}

Test (retry_after, http_dates)
{
  for (int form = 0; form < 3; form++)
    {
      char date[64];
      http_date_in (date, sizeof date, 30, form);
      double v = retry_after (date);
      cr_assert (v >= 27 && v <= 30, "%s: %g", date, v);

      http_date_in (date, sizeof date, -3600, form);
      cr_assert_eq (retry_after (date), 0, "%s is past", date);
    }
  cr_assert_eq (retry_after ("Sun, 06 Nov 1994 08:49:37 GMT"), 0);
  cr_assert_eq (retry_after ("Sunday, 06-Nov-94 08:49:37 GMT"), 0);
  cr_assert_eq (retry_after ("Sun Nov  6 08:49:37 1994"), 0);
}

Test (retry_after, bad_dates)
{
  const char *bad[] = {
    "Sun, 06 Foo 2094 08:49:37 GMT",
    "Sun, 32 Nov 2094 08:49:37 GMT",
    "Sun, 06 Nov 2094 25:49:37 GMT",
    "Sun, 06 Nov 2094 08:61:37 GMT",
    "Sun, 06 Nov 2094 08:49:37 CET",
    "Sun, 06 Nov 2094 08:49:37 GMT x",
    "Sun, 06 Nov 2094",
    "Sun, 06 Nov 1969 08:49:37 GMT",
    "Sun Nov  6 08:49:37",
    "2094-11-06T08:49:37Z",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq (retry_after (bad[i]), -1, "%s", bad[i]);
}

Test (retry_after, future_date_in_seconds)
{
  /* A fixed date far ahead: the difference is large and positive. */
  double v = retry_after ("Fri, 01 Jan 2100 00:00:00 GMT");
  double want = difftime (4102444800, time (NULL));
  cr_assert_float_eq (v, want, 2.0, "%g vs %g", v, want);
}
