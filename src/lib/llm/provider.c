#include "config.h"
#include "llm.h"

#include <stdlib.h>
#include <string.h>

/* In the order of automatic selection from the environment. */
static const struct csr_llm_provider providers[] = {
  { "openai", CSR_LLM_WIRE_OPENAI, "https://api.openai.com", "gpt-4.1-mini", "OPENAI_API_KEY",
    "OPENAI_MODEL" },
  { "anthropic", CSR_LLM_WIRE_ANTHROPIC, "https://api.anthropic.com", "claude-sonnet-4-5",
    "ANTHROPIC_API_KEY", "ANTHROPIC_MODEL" },
  { "gemini", CSR_LLM_WIRE_GEMINI, "https://generativelanguage.googleapis.com", "gemini-2.5-flash",
    "GEMINI_API_KEY", "GEMINI_MODEL" },
  { "deepseek", CSR_LLM_WIRE_OPENAI, "https://api.deepseek.com", "deepseek-chat",
    "DEEPSEEK_API_KEY", "DEEPSEEK_MODEL" },
  { "ollama", CSR_LLM_WIRE_OLLAMA, "http://localhost:11434", "qwen2.5-coder:7b", NULL,
    "OLLAMA_MODEL" },
};

#define N_PROVIDERS (sizeof providers / sizeof providers[0])

const struct csr_llm_provider *
csr_llm_provider_find (const char *name)
{
  if (name == NULL)
    return NULL;
  for (size_t i = 0; i < N_PROVIDERS; i++)
    if (strcmp (providers[i].name, name) == 0)
      return &providers[i];
  return NULL;
}

const struct csr_llm_provider *
csr_llm_providers (size_t *n)
{
  if (n)
    *n = N_PROVIDERS;
  return providers;
}

const char *
csr_llm_wire_name (enum csr_llm_wire w)
{
  switch (w)
    {
    case CSR_LLM_WIRE_NONE:
      return "none";
    case CSR_LLM_WIRE_OPENAI:
      return "openai";
    case CSR_LLM_WIRE_ANTHROPIC:
      return "anthropic";
    case CSR_LLM_WIRE_GEMINI:
      return "gemini";
    case CSR_LLM_WIRE_OLLAMA:
      return "ollama";
    }
  return "unknown";
}

void
csr_llm_config_release (struct csr_llm_config *c)
{
  if (c == NULL)
    return;
  if (c->api_key)
    explicit_bzero (c->api_key, strlen (c->api_key));
  free (c->api_key);
  free (c->model);
  free (c->base_url);
  free (c->ca_file);
  memset (c, 0, sizeof *c);
}
