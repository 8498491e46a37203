#include "config.h"
#include "llm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "wire-internal.h"

/* The gemini wire: POST {base}/v1beta/models/{model}:generateContent, the
 * key in the x-goog-api-key header (never in the URL, which ends up in
 * messages and logs). */

#define RPC_TYPE_PREFIX "type.googleapis.com/google.rpc."

/* MODEL as a path segment: without a "models/" prefix, and everything but
 * RFC 3986's unreserved characters percent-encoded. */
static char *
model_segment (const char *model)
{
  static const char hex[] = "0123456789ABCDEF";
  if (strncmp (model, "models/", 7) == 0)
    model += 7;
  char *out = malloc (3 * strlen (model) + 1), *o = out;
  if (out == NULL)
    return NULL;
  for (const unsigned char *p = (const unsigned char *)model; *p; p++)
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
        || strchr ("-._~", *p))
      *o++ = (char)*p;
    else
      {
        *o++ = '%';
        *o++ = hex[*p >> 4];
        *o++ = hex[*p & 15];
      }
  *o = '\0';
  return out;
}

static char *
gemini_url (const struct csr_llm_config *c, csr_error **err)
{
  cleanup_free char *segment = model_segment (c->model);
  cleanup_free char *path = NULL;
  if (segment == NULL || asprintf (&path, "/models/%s:generateContent", segment) < 0)
    {
      csr_error_set (err, ENOMEM, "out of memory building the request URL");
      return NULL;
    }
  return csr_wreq_url (c->base_url, "/v1beta", path, err);
}

/* KEY: {"parts": [{"text": TEXT}]} with the role ROLE when not NULL. */
static void
gemini_content (struct csr_jgen *w, const char *key, const char *role, const char *text)
{
  csr_jgen_str (w, key);
  csr_jgen_map_open (w);
  if (role != NULL)
    csr_jgen_kv_str (w, "role", role);
  csr_jgen_str (w, "parts");
  csr_jgen_array_open (w);
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "text", text);
  csr_jgen_map_close (w);
  csr_jgen_array_close (w);
  csr_jgen_map_close (w);
}

static char *
gemini_body (const struct csr_llm_config *c, const char *system, const char *user, csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  if (system != NULL)
    gemini_content (&w, "systemInstruction", NULL, system);
  csr_jgen_str (&w, "contents");
  csr_jgen_array_open (&w);
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "role", "user");
  csr_jgen_str (&w, "parts");
  csr_jgen_array_open (&w);
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "text", user);
  csr_jgen_map_close (&w);
  csr_jgen_array_close (&w);
  csr_jgen_map_close (&w);
  csr_jgen_array_close (&w);
  csr_jgen_str (&w, "generationConfig");
  csr_jgen_map_open (&w);
  csr_jgen_kv_int (&w, "temperature", 0);
  csr_jgen_kv_int (&w, "maxOutputTokens", csr_wreq_max_tokens (c));
  csr_jgen_map_close (&w);
  csr_jgen_map_close (&w);
  return csr_wire_finish (&w, err);
}

static int
gemini_build (const struct csr_llm_config *c, const char *system, const char *user,
              struct csr_llm_request *r, csr_error **err)
{
  r->url = gemini_url (c, err);
  if (r->url == NULL)
    return -1;
  if (csr_wreq_has_key (c) && csr_wreq_header (r, err, "x-goog-api-key: %s", c->api_key) < 0)
    return -1;
  if (csr_wreq_header (r, err, "Content-Type: application/json") < 0)
    return -1;
  r->body = gemini_body (c, system, user, err);
  return r->body ? 0 : -1;
}

/* ------------------------------------------------------------ replies */

/* The finish reasons that mean "no text because of a filter". */
static bool
blocked_finish (const char *reason)
{
  static const char *const blocked[]
      = { "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII" };
  for (size_t i = 0; reason != NULL && i < sizeof blocked / sizeof blocked[0]; i++)
    if (strcmp (reason, blocked[i]) == 0)
      return true;
  return false;
}

/* Append the text of every part of PARTS to B, skipping thoughts; -1 when
 * a part's text is not a string. */
static int
parts_text (yajl_val parts, struct csr_wbuf *b)
{
  yajl_val part;
  for (size_t i = 0; (part = csr_json_at (parts, i)) != NULL; i++)
    {
      yajl_val text = csr_json_get (part, "text");
      if (text == NULL || YAJL_IS_TRUE (csr_json_get (part, "thought")))
        continue;
      if (!YAJL_IS_STRING (text))
        return -1;
      csr_wbuf_add (b, text->u.string);
    }
  return 0;
}

/* No content.parts: say why, with the finish reason when there is one
 * (MAX_TOKENS: the thinking used up maxOutputTokens). */
static void
no_parts (struct csr_llm_reply *r, const char *key, const char *finish)
{
  if (finish == NULL)
    csr_wreply_malformed (r, CSR_LLM_WIRE_GEMINI, key, "no content parts");
  else
    csr_wreply_set (r, CSR_LLM_FAIL, key, "gemini: malformed reply: no content parts (finish %s)",
                    finish);
}

static void
gemini_candidate (yajl_val cand, const char *key, struct csr_llm_reply *r)
{
  const enum csr_llm_wire w = CSR_LLM_WIRE_GEMINI;
  const char *finish = csr_wjson_get_str (cand, "finishReason");
  yajl_val parts = csr_json_get (csr_json_get (cand, "content"), "parts");
  struct csr_wbuf b = { 0 };
  if (parts != NULL && !YAJL_IS_ARRAY (parts))
    csr_wreply_malformed (r, w, key, "content.parts is not an array");
  else if (parts_text (parts, &b) < 0)
    csr_wreply_malformed (r, w, key, "a part's text is not a string");
  else if (b.len == 0 && blocked_finish (finish))
    csr_wreply_set (r, CSR_LLM_BLOCKED, key, "gemini: reply blocked: %s", finish);
  else if (parts == NULL)
    no_parts (r, key, finish);
  else
    csr_wreply_wbuf (r, w, &b);
  csr_wbuf_release (&b);
}

/* Counts left out of usageMetadata are zero (proto3 JSON drops zeros);
 * the output counts the thinking too, which is billed as output. */
static void
gemini_tokens (yajl_val doc, struct csr_llm_reply *r)
{
  yajl_val usage = csr_json_get (doc, "usageMetadata");
  if (!YAJL_IS_OBJECT (usage))
    return;
  long prompt = csr_wjson_get_count (usage, "promptTokenCount");
  long cands = csr_wjson_get_count (usage, "candidatesTokenCount");
  long thoughts = csr_wjson_get_count (usage, "thoughtsTokenCount");
  r->input_tokens = prompt < 0 ? 0 : prompt;
  r->output_tokens = (cands < 0 ? 0 : cands) + (thoughts < 0 ? 0 : thoughts);
}

static void
gemini_parse_ok (yajl_val doc, const char *key, struct csr_llm_reply *r)
{
  const enum csr_llm_wire w = CSR_LLM_WIRE_GEMINI;
  gemini_tokens (doc, r);
  yajl_val cands = csr_json_get (doc, "candidates");
  yajl_val cand = csr_json_at (cands, 0);
  const char *block = csr_wjson_get_str (csr_json_get (doc, "promptFeedback"), "blockReason");
  if (cands != NULL && !YAJL_IS_ARRAY (cands))
    csr_wreply_malformed (r, w, key, "candidates is not an array");
  else if (cand == NULL && block != NULL)
    csr_wreply_set (r, CSR_LLM_BLOCKED, key, "gemini: prompt blocked: %s", block);
  else if (cand == NULL)
    csr_wreply_malformed (r, w, key, "no candidates");
  else if (!YAJL_IS_OBJECT (cand))
    csr_wreply_malformed (r, w, key, "candidates[0] is not an object");
  else
    gemini_candidate (cand, key, r);
}

/* ------------------------------------------------------------ errors */

/* Whether the error detail D is a google.rpc.NAME. */
static bool
detail_is (yajl_val d, const char *name)
{
  const char *type = csr_wjson_get_str (d, "@type");
  size_t n = strlen (RPC_TYPE_PREFIX);
  return type != NULL && strncmp (type, RPC_TYPE_PREFIX, n) == 0 && strcmp (type + n, name) == 0;
}

/* RetryInfo.retryDelay in seconds, or -1. */
static double
retry_delay (yajl_val details)
{
  yajl_val d;
  for (size_t i = 0; (d = csr_json_at (details, i)) != NULL; i++)
    if (detail_is (d, "RetryInfo"))
      return csr_wparse_duration (csr_wjson_get_str (d, "retryDelay"));
  return -1;
}

static bool
names_per_day (yajl_val violation, const char *field)
{
  return csr_wjson_str_has (violation, field, "perday")
         || csr_wjson_str_has (violation, field, "per_day");
}

/* Whether a QuotaFailure violation is a per-day quota: waiting seconds
 * will not help. */
static bool
per_day_quota (yajl_val details)
{
  yajl_val d, v;
  for (size_t i = 0; (d = csr_json_at (details, i)) != NULL; i++)
    {
      if (!detail_is (d, "QuotaFailure"))
        continue;
      yajl_val violations = csr_json_get (d, "violations");
      for (size_t j = 0; (v = csr_json_at (violations, j)) != NULL; j++)
        if (names_per_day (v, "quotaId") || names_per_day (v, "quotaMetric"))
          return true;
    }
  return false;
}

/* RESOURCE_EXHAUSTED (429) is QUOTA for a per-day quota, else RETRY after
 * RetryInfo's delay. */
static enum csr_llm_outcome
gemini_classify (yajl_val doc, long status, double *hint_s)
{
  yajl_val e = csr_json_get (doc, "error");
  yajl_val details = csr_json_get (e, "details");
  *hint_s = retry_delay (details);
  const char *st = csr_wjson_get_str (e, "status");
  if (status != 429 && (st == NULL || strcmp (st, "RESOURCE_EXHAUSTED") != 0))
    return CSR_LLM_OK;
  return per_day_quota (details) ? CSR_LLM_QUOTA : CSR_LLM_RETRY;
}

const struct csr_llm_wire_ops csr_llm_gemini_ops = {
  .wire = CSR_LLM_WIRE_GEMINI,
  .build = gemini_build,
  .parse_ok = gemini_parse_ok,
  .classify = gemini_classify,
};
