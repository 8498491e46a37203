#include "config.h"
#include "llm.h"

#include <stdlib.h>
#include <string.h>

#include "wire-internal.h"

/* The anthropic wire: POST {base}/v1/messages. */

static char *
anthropic_body (const struct csr_llm_config *c, const char *system, const char *user,
                csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "model", c->model);
  csr_jgen_kv_int (&w, "max_tokens", csr_wreq_max_tokens (c));
  if (system != NULL)
    csr_jgen_kv_str (&w, "system", system);
  csr_jgen_str (&w, "messages");
  csr_jgen_array_open (&w);
  csr_wire_chat_message (&w, "user", user);
  csr_jgen_array_close (&w);
  csr_jgen_kv_int (&w, "temperature", 0);
  csr_jgen_map_close (&w);
  return csr_wire_finish (&w, err);
}

static int
anthropic_build (const struct csr_llm_config *c, const char *system, const char *user,
                 struct csr_llm_request *r, csr_error **err)
{
  r->url = csr_wreq_url (c->base_url, "/v1", "/messages", err);
  if (r->url == NULL)
    return -1;
  if (csr_wreq_has_key (c) && csr_wreq_header (r, err, "x-api-key: %s", c->api_key) < 0)
    return -1;
  if (csr_wreq_header (r, err, "anthropic-version: 2023-06-01") < 0
      || csr_wreq_header (r, err, "Content-Type: application/json") < 0)
    return -1;
  r->body = anthropic_body (c, system, user, err);
  return r->body ? 0 : -1;
}

/* The text is every {"type": "text"} block of content, in order; other
 * blocks (thinking, tool use) are skipped. */
static void
anthropic_parse_ok (yajl_val doc, const char *key, struct csr_llm_reply *r)
{
  const enum csr_llm_wire w = CSR_LLM_WIRE_ANTHROPIC;
  yajl_val usage = csr_json_get (doc, "usage");
  r->input_tokens = csr_wjson_get_count (usage, "input_tokens");
  r->output_tokens = csr_wjson_get_count (usage, "output_tokens");

  yajl_val content = csr_json_get (doc, "content");
  struct csr_wbuf b = { 0 };
  if (content == NULL)
    csr_wreply_malformed (r, w, key, "no content");
  else if (!YAJL_IS_ARRAY (content))
    csr_wreply_malformed (r, w, key, "content is not an array");
  else if (csr_wjson_text_blocks (content, &b) < 0)
    csr_wreply_malformed (r, w, key, "a text block has no text");
  else
    csr_wreply_wbuf (r, w, &b);
  csr_wbuf_release (&b);
}

/* A spend limit or an exhausted credit balance is QUOTA (Anthropic sends
 * them as 400 or 429); overloaded_error is RETRY whatever the status. */
static enum csr_llm_outcome
anthropic_classify (yajl_val doc, long status, double *hint_s)
{
  (void)status;
  (void)hint_s;
  yajl_val e = csr_json_get (doc, "error");
  const char *limit = "enforced_spend_limit_reached";
  if (csr_wjson_str_has (e, "type", limit) || csr_wjson_str_has (e, "message", limit))
    return CSR_LLM_QUOTA;
  if (csr_wjson_str_has (e, "message", "credit balance")
      && csr_wjson_str_has (e, "message", "too low"))
    return CSR_LLM_QUOTA;
  const char *type = csr_wjson_get_str (e, "type");
  if (type && strcmp (type, "overloaded_error") == 0)
    return CSR_LLM_RETRY;
  return CSR_LLM_OK;
}

const struct csr_llm_wire_ops csr_llm_anthropic_ops = {
  .wire = CSR_LLM_WIRE_ANTHROPIC,
  .build = anthropic_build,
  .parse_ok = anthropic_parse_ok,
  .classify = anthropic_classify,
};
