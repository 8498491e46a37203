/* csrun — what the wire-format files of the LLM library share: a yajl
 * generator that keeps its first error, small yajl_tree lookups, request
 * assembly, and the one-line messages of csr_llm_reply.  Not installed;
 * nothing outside src/lib/llm includes it. */
#ifndef CSRUN_LLM_WIRE_INTERNAL_H
#define CSRUN_LLM_WIRE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../util/json-gen.h"
#include "../util/json.h"
#include "llm.h"

/* The longest message of a csr_llm_reply, in bytes. */
#define CSR_LLM_MESSAGE_MAX 300

/* The max_tokens sent when the configuration has none. */
#define CSR_LLM_DEFAULT_MAX_TOKENS 4096

/* ------------------------------------------------------------ generating JSON */

/* {"role": ROLE, "content": CONTENT}: a chat message of the openai and ollama wires. */
void csr_wire_chat_message (struct csr_jgen *w, const char *role, const char *content);
/* The body as a malloc'ed string, or NULL with *ERR set ("... the request
 * body").  Frees the generator either way. */
char *csr_wire_finish (struct csr_jgen *w, csr_error **err);

/* ------------------------------------------------------------ reading JSON */

/* Parse BODY[0..LEN) into a tree: NULL when it is not one complete JSON
 * value (or nests deeper than the library accepts), with a short reason in
 * WHY (a static string or one held in WHYBUF). */
yajl_val csr_wjson_parse (const char *body, size_t len, char *whybuf, size_t whybuf_len,
                          const char **why);
/* OBJ[KEY] as a string, or NULL. */
const char *csr_wjson_get_str (yajl_val obj, const char *key);
/* OBJ[KEY] as a non-negative integer, else -1 (the "not reported" of a token count). */
long csr_wjson_get_count (yajl_val obj, const char *key);
/* Whether the string OBJ[KEY] contains NEEDLE, ignoring ASCII case. */
bool csr_wjson_str_has (yajl_val obj, const char *key, const char *needle);

struct csr_wbuf;
/* Append the "text" of every {"type": "text"} block of the array ARR to B
 * (the content blocks of Anthropic, and of OpenAI-compatible servers that
 * send content as parts); -1 when such a block's text is not a string.
 * Anything that is not an array holds no blocks. */
int csr_wjson_text_blocks (yajl_val arr, struct csr_wbuf *b);

/* ------------------------------------------------------------ requests */

/* BASE (trailing slashes dropped) + VERSION + PATH; VERSION (e.g. "/v1") is
 * left out when BASE already ends with it.  NULL with *ERR on ENOMEM. */
char *csr_wreq_url (const char *base, const char *version, const char *path, csr_error **err);
/* Append the header line made from FMT to R->headers, keeping the array
 * NULL-terminated. */
int csr_wreq_header (struct csr_llm_request *r, csr_error **err, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* C's max_tokens, or the default when unset. */
int csr_wreq_max_tokens (const struct csr_llm_config *c);
/* Whether C has a (non-empty) API key to send. */
bool csr_wreq_has_key (const struct csr_llm_config *c);

/* ------------------------------------------------------------ replies */

/* Set R->outcome and R->message from FMT: one line (control characters
 * become spaces), valid UTF-8, KEY scrubbed, at most CSR_LLM_MESSAGE_MAX
 * bytes cut on a character boundary. */
void csr_wreply_set (struct csr_llm_reply *r, enum csr_llm_outcome o, const char *key,
                     const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
/* The reply is FAIL: "WIRE: malformed reply: WHAT". */
void csr_wreply_malformed (struct csr_llm_reply *r, enum csr_llm_wire w, const char *key,
                           const char *what);
/* The reply is OK with a copy of TEXT[0..LEN). */
void csr_wreply_text (struct csr_llm_reply *r, enum csr_llm_wire w, const char *text, size_t len);

/* A growing string for replies made of several parts (Anthropic content
 * blocks, Gemini parts). */
struct csr_wbuf
{
  char *s;
  size_t len;
  size_t cap;
  bool oom;
};
void csr_wbuf_add (struct csr_wbuf *b, const char *s);
void csr_wbuf_release (struct csr_wbuf *b);
/* The reply is OK with B's text (FAIL if B ran out of memory). */
void csr_wreply_wbuf (struct csr_llm_reply *r, enum csr_llm_wire w, const struct csr_wbuf *b);

/* A duration "13s" or "1.5s" (protobuf JSON) in seconds, or -1. */
double csr_wparse_duration (const char *s);

/* ------------------------------------------------------------ the wires */

/* What one wire format supplies.  build fills R (the url, headers and body)
 * or fails; parse_ok reads a 2xx reply that is not an error document and
 * sets R to OK, BLOCKED or malformed; classify (may be NULL) decides what an
 * error reply means before the status code does: CSR_LLM_OK there means "no
 * opinion", and *HINT_S may get a retry delay found in the body. */
struct csr_llm_wire_ops
{
  enum csr_llm_wire wire;
  int (*build) (const struct csr_llm_config *c, const char *system, const char *user,
                struct csr_llm_request *r, csr_error **err);
  void (*parse_ok) (yajl_val doc, const char *key, struct csr_llm_reply *r);
  enum csr_llm_outcome (*classify) (yajl_val doc, long status, double *hint_s);
};

extern const struct csr_llm_wire_ops csr_llm_openai_ops;
extern const struct csr_llm_wire_ops csr_llm_anthropic_ops;
extern const struct csr_llm_wire_ops csr_llm_gemini_ops;
extern const struct csr_llm_wire_ops csr_llm_ollama_ops;

#endif
