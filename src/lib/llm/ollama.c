#include "config.h"
#include "llm.h"

#include <stdlib.h>
#include <string.h>

#include "wire-internal.h"

/* The ollama wire: POST {base}/api/chat, not streamed, no authentication. */

static char *
ollama_body (const struct csr_llm_config *c, const char *system, const char *user, csr_error **err)
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
  csr_jgen_str (&w, "stream");
  csr_jgen_bool (&w, false);
  csr_jgen_str (&w, "options");
  csr_jgen_map_open (&w);
  csr_jgen_kv_int (&w, "temperature", 0);
  csr_jgen_kv_int (&w, "num_predict", csr_wreq_max_tokens (c));
  csr_jgen_map_close (&w);
  csr_jgen_map_close (&w);
  return csr_wire_finish (&w, err);
}

static int
ollama_build (const struct csr_llm_config *c, const char *system, const char *user,
              struct csr_llm_request *r, csr_error **err)
{
  r->url = csr_wreq_url (c->base_url, NULL, "/api/chat", err);
  if (r->url == NULL)
    return -1;
  if (csr_wreq_header (r, err, "Content-Type: application/json") < 0)
    return -1;
  r->body = ollama_body (c, system, user, err);
  return r->body ? 0 : -1;
}

static void
ollama_parse_ok (yajl_val doc, const char *key, struct csr_llm_reply *r)
{
  const enum csr_llm_wire w = CSR_LLM_WIRE_OLLAMA;
  r->input_tokens = csr_wjson_get_count (doc, "prompt_eval_count");
  r->output_tokens = csr_wjson_get_count (doc, "eval_count");

  yajl_val message = csr_json_get (doc, "message");
  yajl_val content = csr_json_get (message, "content");
  if (!YAJL_IS_OBJECT (message))
    csr_wreply_malformed (r, w, key, "no message");
  else if (content == NULL)
    csr_wreply_malformed (r, w, key, "no message content");
  else if (!YAJL_IS_STRING (content))
    csr_wreply_malformed (r, w, key, "message content is not a string");
  else
    csr_wreply_text (r, w, content->u.string, strlen (content->u.string));
}

/* Ollama's errors are {"error": "text"}: the status alone decides. */
const struct csr_llm_wire_ops csr_llm_ollama_ops = {
  .wire = CSR_LLM_WIRE_OLLAMA,
  .build = ollama_build,
  .parse_ok = ollama_parse_ok,
  .classify = NULL,
};
