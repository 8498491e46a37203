#include "config.h"
#include "llm.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wire-internal.h"

/* The openai wire: POST {base}/v1/chat/completions.  Also DeepSeek, vLLM,
 * LiteLLM, llama.cpp's server and Ollama's /v1. */

/* OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...) refuse max_tokens
 * and any temperature but the default: they take max_completion_tokens. */
static bool
reasoning_model (const char *model)
{
  static const char *const prefixes[] = { "o1", "o3", "o4", "gpt-5" };
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
    {
      size_t n = strlen (prefixes[i]);
      if (strncmp (model, prefixes[i], n) == 0 && (model[n] == '\0' || model[n] == '-'))
        return true;
    }
  return false;
}

static char *
openai_body (const struct csr_llm_config *c, const char *system, const char *user, csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "model", c->model);
  csr_jgen_str (&w, "messages");
  csr_jgen_array_open (&w);
  if (system != NULL)
    csr_wire_chat_message (&w, "system", system);
  csr_wire_chat_message (&w, "user", user);
  csr_jgen_array_close (&w);
  if (reasoning_model (c->model))
    csr_jgen_kv_int (&w, "max_completion_tokens", csr_wreq_max_tokens (c));
  else
    {
      csr_jgen_kv_int (&w, "temperature", 0);
      csr_jgen_kv_int (&w, "max_tokens", csr_wreq_max_tokens (c));
    }
  csr_jgen_map_close (&w);
  return csr_wire_finish (&w, err);
}

static int
openai_build (const struct csr_llm_config *c, const char *system, const char *user,
              struct csr_llm_request *r, csr_error **err)
{
  r->url = csr_wreq_url (c->base_url, "/v1", "/chat/completions", err);
  if (r->url == NULL)
    return -1;
  if (csr_wreq_has_key (c) && csr_wreq_header (r, err, "Authorization: Bearer %s", c->api_key) < 0)
    return -1;
  if (csr_wreq_header (r, err, "Content-Type: application/json") < 0)
    return -1;
  r->body = openai_body (c, system, user, err);
  return r->body ? 0 : -1;
}

/* choices[0].message.content: a string, null (no text), or (some
 * compatible servers) an array of {"type": "text"} parts. */
static void
openai_content (yajl_val content, const char *key, struct csr_llm_reply *r)
{
  const enum csr_llm_wire w = CSR_LLM_WIRE_OPENAI;
  if (content == NULL)
    csr_wreply_malformed (r, w, key, "no message content");
  else if (YAJL_IS_NULL (content))
    csr_wreply_text (r, w, "", 0);
  else if (YAJL_IS_STRING (content))
    csr_wreply_text (r, w, content->u.string, strlen (content->u.string));
  else if (YAJL_IS_ARRAY (content))
    {
      struct csr_wbuf b = { 0 };
      if (csr_wjson_text_blocks (content, &b) < 0)
        csr_wreply_malformed (r, w, key, "a text part of the message content has no text");
      else
        csr_wreply_wbuf (r, w, &b);
      csr_wbuf_release (&b);
    }
  else
    csr_wreply_malformed (r, w, key, "message content is not a string");
}

/* choices[0].message, or NULL with *WHAT saying what is wrong. */
static yajl_val
openai_message (yajl_val doc, const char **what)
{
  yajl_val choices = csr_json_get (doc, "choices");
  yajl_val choice = csr_json_at (choices, 0);
  yajl_val message = csr_json_get (choice, "message");
  if (choices == NULL)
    *what = "no choices";
  else if (!YAJL_IS_ARRAY (choices))
    *what = "choices is not an array";
  else if (choice == NULL)
    *what = "choices is empty";
  else if (!YAJL_IS_OBJECT (message))
    *what = "no message in choices[0]";
  else
    return message;
  return NULL;
}

static void
openai_parse_ok (yajl_val doc, const char *key, struct csr_llm_reply *r)
{
  yajl_val usage = csr_json_get (doc, "usage");
  r->input_tokens = csr_wjson_get_count (usage, "prompt_tokens");
  r->output_tokens = csr_wjson_get_count (usage, "completion_tokens");

  const char *what = NULL;
  yajl_val message = openai_message (doc, &what);
  if (message == NULL)
    csr_wreply_malformed (r, CSR_LLM_WIRE_OPENAI, key, what);
  else
    openai_content (csr_json_get (message, "content"), key, r);
}

/* insufficient_quota (in error.code or error.type) is a spending limit,
 * not a rate limit, whatever the status. */
static enum csr_llm_outcome
openai_classify (yajl_val doc, long status, double *hint_s)
{
  (void)status;
  (void)hint_s;
  yajl_val e = csr_json_get (doc, "error");
  if (csr_wjson_str_has (e, "code", "insufficient_quota")
      || csr_wjson_str_has (e, "type", "insufficient_quota"))
    return CSR_LLM_QUOTA;
  return CSR_LLM_OK;
}

const struct csr_llm_wire_ops csr_llm_openai_ops = {
  .wire = CSR_LLM_WIRE_OPENAI,
  .build = openai_build,
  .parse_ok = openai_parse_ok,
  .classify = openai_classify,
};
