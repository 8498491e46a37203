/* csrun — choose the LLM provider, model, URL and key from the options, the
 * environment and the --env-file. */
#include "config.h"
#include "llm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/cleanup.h"

#define DEFAULT_CONNECT_TIMEOUT_S 10.0
#define DEFAULT_TIMEOUT_S 120.0
#define DEFAULT_RETRIES 3
#define DEFAULT_MAX_CALLS 6
#define DEFAULT_MAX_TOKENS 4096
#define OLLAMA_DEFAULT_PORT "11434"

struct lookup
{
  const struct csr_llm_select *sel;
  const struct csr_envfile *file;
};

/* A variable from the process environment, else from the env file.  An
 * empty value counts as unset (so "OPENAI_API_KEY= csrun ..." does not pick
 * openai, and the env file can still fill it in). */
static const char *
lookup (const struct lookup *l, const char *name)
{
  const char *v = NULL;
  if (l->sel->getenv_fn)
    v = l->sel->getenv_fn (name, l->sel->getenv_data);
  if (v == NULL || *v == '\0')
    v = csr_envfile_get (l->file, name);
  if (v == NULL || *v == '\0')
    return NULL;
  return v;
}

static void
envfile_releasep (struct csr_envfile *e)
{
  csr_envfile_release (e);
}

static bool
has_control (const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return true;
  return false;
}

/* Check that S is an http:// or https:// URL with a host, and return a copy
 * without trailing slashes.  WHAT names the option or variable.  The value
 * itself is left out of errors: it may carry credentials. */
static char *
base_url_dup (const char *what, const char *s, csr_error **err)
{
  size_t skip = 0;
  if (strncasecmp (s, "http://", 7) == 0)
    skip = 7;
  else if (strncasecmp (s, "https://", 8) == 0)
    skip = 8;
  if (skip == 0 || s[skip] == '\0' || s[skip] == '/' || s[skip] == '?' || s[skip] == '#'
      || has_control (s) || strpbrk (s, " ") != NULL)
    {
      csr_error_set (err, 0, "%s: expected an http:// or https:// URL", what);
      return NULL;
    }
  size_t n = strlen (s);
  while (n > skip && s[n - 1] == '/')
    n--;
  char *r = strndup (s, n);
  if (r == NULL)
    csr_error_errno (err, "%s: cannot allocate", what);
  return r;
}

/* OLLAMA_HOST as Ollama reads it: a URL, or host[:port] (port 11434 when
 * left out; an IPv6 address in brackets, or bare without a port). */
static char *
ollama_host_url (const char *v, csr_error **err)
{
  if (strstr (v, "://") != NULL)
    return base_url_dup ("OLLAMA_HOST", v, err);
  char *s = NULL;
  int n;
  size_t len = strlen (v);
  while (len > 0 && v[len - 1] == '/')
    len--;
  const char *colon = memchr (v, ':', len);
  const char *rcolon = NULL;
  for (size_t i = 0; i < len; i++)
    if (v[i] == ':')
      rcolon = v + i;
  bool bad = len == 0;
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)v[i] <= 0x20 || v[i] == 0x7f || strchr ("/?#@", v[i]) != NULL)
      bad = true;
  if (bad)
    {
      csr_error_set (err, 0, "OLLAMA_HOST: expected host[:port] or an http(s):// URL");
      return NULL;
    }
  if (v[0] == '[')
    {
      const char *close = memchr (v, ']', len);
      if (close == NULL || (close + 1 < v + len && close[1] != ':'))
        {
          csr_error_set (err, 0, "OLLAMA_HOST: expected host[:port] or an http(s):// URL");
          return NULL;
        }
      if (close + 1 == v + len)
        n = asprintf (&s, "http://%.*s:" OLLAMA_DEFAULT_PORT, (int)len, v);
      else
        n = asprintf (&s, "http://%.*s", (int)len, v);
    }
  else if (colon == NULL)
    n = asprintf (&s, "http://%.*s:" OLLAMA_DEFAULT_PORT, (int)len, v);
  else if (colon != rcolon) /* a bare IPv6 address */
    n = asprintf (&s, "http://[%.*s]:" OLLAMA_DEFAULT_PORT, (int)len, v);
  else if (colon == v) /* ":11434": the local host */
    n = asprintf (&s, "http://127.0.0.1%.*s", (int)len, v);
  else
    n = asprintf (&s, "http://%.*s", (int)len, v);
  if (n < 0)
    {
      csr_error_errno (err, "OLLAMA_HOST: cannot allocate");
      return NULL;
    }
  return s;
}

int
csr_llm_config_resolve (const struct csr_llm_select *sel, struct csr_llm_config *c, csr_error **err)
{
  memset (c, 0, sizeof *c);
  c->connect_timeout_s = DEFAULT_CONNECT_TIMEOUT_S;
  c->timeout_s = sel->timeout_s > 0 ? sel->timeout_s : DEFAULT_TIMEOUT_S;
  c->retries = sel->retries > 0 ? sel->retries : DEFAULT_RETRIES;
  c->max_calls = sel->max_calls >= 0 ? sel->max_calls : DEFAULT_MAX_CALLS;
  c->max_tokens = DEFAULT_MAX_TOKENS;
  if (sel->no_llm)
    return 0;

  __attribute__ ((cleanup (envfile_releasep))) struct csr_envfile file = { 0 };
  if (sel->env_file && csr_envfile_load (sel->env_file, &file, err) < 0)
    return csr_error_wrap (err, "--env-file");
  struct lookup l = { sel, &file };

  /* The provider, and where its name came from (for messages). */
  const char *spec = NULL, *origin = NULL;
  char origin_sep = ' ';
  if (sel->llm)
    {
      spec = sel->llm;
      origin = "--llm";
    }
  else if ((spec = lookup (&l, "CSRUN_LLM")) != NULL)
    {
      origin = "CSRUN_LLM";
      origin_sep = '=';
    }

  /* A base URL named by the user: a server of their own, which may take no
   * key (llama.cpp, vLLM, LiteLLM without auth...). */
  const char *env_base = lookup (&l, "CSRUN_LLM_BASE_URL");
  bool explicit_base = sel->base_url != NULL || env_base != NULL;

  const struct csr_llm_provider *p = NULL;
  const char *spec_model = NULL;
  if (spec)
    {
      const char *colon = strchr (spec, ':');
      size_t name_len = colon ? (size_t)(colon - spec) : strlen (spec);
      cleanup_free char *name = strndup (spec, name_len);
      if (name == NULL)
        return csr_error_errno (err, "%s: cannot allocate", origin);
      p = csr_llm_provider_find (name);
      if (p == NULL)
        {
          size_t n = 0;
          const struct csr_llm_provider *all = csr_llm_providers (&n);
          char known[256] = "";
          size_t used = 0;
          for (size_t i = 0; i < n && used < sizeof known; i++)
            {
              int w = snprintf (known + used, sizeof known - used, "%s%s", i ? ", " : "",
                                all[i].name);
              if (w < 0)
                break;
              used += (size_t)w;
            }
          if (has_control (name) || strlen (name) > 64)
            return csr_error_set (err, 0, "%s: unknown provider (known: %s)", origin, known);
          return csr_error_set (err, 0, "%s: unknown provider '%s' (known: %s)", origin, name,
                                known);
        }
      if (colon)
        {
          spec_model = colon + 1;
          if (*spec_model == '\0')
            return csr_error_set (err, 0, "%s: empty model after '%s:'", origin, p->name);
        }
    }
  else
    {
      size_t n = 0;
      const struct csr_llm_provider *all = csr_llm_providers (&n);
      for (size_t i = 0; i < n && p == NULL; i++)
        {
          if (all[i].key_env)
            {
              if (lookup (&l, all[i].key_env))
                p = &all[i];
            }
          else if (all[i].wire == CSR_LLM_WIRE_OLLAMA && lookup (&l, "OLLAMA_HOST"))
            p = &all[i];
        }
      /* A base URL and no provider: the openai format, which every local
       * server speaks (not silently no LLM). */
      if (p == NULL && explicit_base)
        p = csr_llm_provider_find ("openai");
      if (p == NULL)
        return 0; /* no LLM */
      origin = NULL;
    }

  /* The model: after ':', else CSRUN_LLM_MODEL, else the provider's own
   * variable (OPENAI_MODEL, ...: what CodeShield users have), else the
   * default. */
  const char *model = spec_model;
  if (model == NULL)
    model = lookup (&l, "CSRUN_LLM_MODEL");
  if (model == NULL && p->model_env)
    model = lookup (&l, p->model_env);
  if (model == NULL)
    model = p->model;
  if (model == NULL || *model == '\0')
    return csr_error_set (err, 0, "%s: empty model", p->name);
  if (has_control (model))
    return csr_error_set (err, 0, "%s: the model name contains a control character", p->name);

  /* The key. */
  const char *key = NULL;
  if (p->key_env)
    {
      key = lookup (&l, p->key_env);
      /* No key for a base URL of the user's own: send none (a server that
       * wants one answers 401, and the reply says so). */
      if (key == NULL && !explicit_base)
        {
          if (origin)
            return csr_error_set (err, 0, "%s%c%s needs %s in the environment or the --env-file",
                                  origin, origin_sep, p->name, p->key_env);
          return csr_error_set (err, 0, "%s needs %s in the environment or the --env-file", p->name,
                                p->key_env);
        }
      /* It goes into a header line: a line break would inject headers. */
      if (key != NULL && has_control (key))
        return csr_error_set (err, 0, "%s contains a control character", p->key_env);
    }

  /* The base URL: --llm-base-url, CSRUN_LLM_BASE_URL, OLLAMA_HOST (ollama
   * only), the provider's default. */
  cleanup_free char *base = NULL;
  const char *v;
  if (sel->base_url)
    base = base_url_dup ("--llm-base-url", sel->base_url, err);
  else if ((v = env_base) != NULL)
    base = base_url_dup ("CSRUN_LLM_BASE_URL", v, err);
  else if (p->wire == CSR_LLM_WIRE_OLLAMA && (v = lookup (&l, "OLLAMA_HOST")) != NULL)
    base = ollama_host_url (v, err);
  else
    base = base_url_dup (p->name, p->base_url ? p->base_url : "", err);
  if (base == NULL)
    return -1;

  cleanup_free char *model_copy = strdup (model);
  cleanup_free char *key_copy = key ? strdup (key) : NULL;
  cleanup_free char *ca_copy = sel->ca_file ? strdup (sel->ca_file) : NULL;
  if (model_copy == NULL || (key && key_copy == NULL) || (sel->ca_file && ca_copy == NULL))
    return csr_error_errno (err, "%s: cannot allocate", p->name);
  c->provider = p;
  c->model = steal_pointer (&model_copy);
  c->base_url = steal_pointer (&base);
  c->api_key = steal_pointer (&key_copy);
  c->ca_file = steal_pointer (&ca_copy);
  return 0;
}
