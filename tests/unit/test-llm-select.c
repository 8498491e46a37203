/* Unit tests: .env files, choosing the LLM provider, and the retry backoff.
 * The process environment is never consulted: every test passes its own
 * table through getenv_fn. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llm/llm.h"

/* ------------------------------------------------------------------ helpers */

/* A NULL-terminated list of "NAME=VALUE" strings. */
static const char *
table_getenv (const char *name, void *data)
{
  const char *const *t = data;
  size_t n = strlen (name);
  for (; t && *t; t++)
    if (strncmp (*t, name, n) == 0 && (*t)[n] == '=')
      return *t + n + 1;
  return NULL;
}

#define ENV(...) ((const char *[]){ __VA_ARGS__, NULL })

static struct csr_llm_select
sel_env (const char **env)
{
  struct csr_llm_select s = { 0 };
  s.max_calls = -1;
  s.getenv_fn = table_getenv;
  s.getenv_data = env;
  return s;
}

static void
resolve_ok (const struct csr_llm_select *s, struct csr_llm_config *c)
{
  csr_error *err = NULL;
  int r = csr_llm_config_resolve (s, c, &err);
  cr_assert_eq (r, 0, "resolve failed: %s", err ? err->msg : "(no error)");
  cr_assert_null (err);
}

/* Fails with a message containing WANT; returns nothing, frees the error. */
static void
resolve_bad (const struct csr_llm_select *s, const char *want)
{
  struct csr_llm_config c;
  csr_error *err = NULL;
  int r = csr_llm_config_resolve (s, &c, &err);
  cr_assert_lt (r, 0, "resolve should fail with '%s'", want);
  cr_assert_not_null (err);
  const char *msg = csr_error_text (err);
  cr_assert (strstr (msg, want) != NULL, "message '%s' lacks '%s'", msg, want);
  cr_assert_null (strchr (msg, '\n'), "message '%s' is not one line", msg);
  csr_error_free (err);
}

static const char *
provider_name (const struct csr_llm_config *c)
{
  return c->provider ? c->provider->name : "(none)";
}

static void
expect_provider (const char **env, const char *want)
{
  struct csr_llm_select s = sel_env (env);
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  if (want == NULL)
    cr_assert_null (c.provider, "expected no provider, got %s", provider_name (&c));
  else
    cr_assert_not_null (c.provider, "expected %s, got none", want);
  if (want)
    cr_assert_str_eq (c.provider->name, want);
  csr_llm_config_release (&c);
}

static char tmpdir[64];

static void
make_tmpdir (void)
{
  strcpy (tmpdir, "/tmp/csrun-llm-select-XXXXXX");
  cr_assert_not_null (mkdtemp (tmpdir));
}

static void
remove_tmpdir (void)
{
  char cmd[128];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  cr_assert_eq (system (cmd), 0);
}

/* Write TEXT to a file in tmpdir; returns a static path. */
static const char *
write_tmp (const char *name, const char *text, size_t len)
{
  static char path[128];
  snprintf (path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  cr_assert_eq (fwrite (text, 1, len, f), len);
  cr_assert_eq (fclose (f), 0);
  return path;
}

static void
parse_ok (const char *text, struct csr_envfile *e)
{
  csr_error *err = NULL;
  int r = csr_envfile_parse (text, strlen (text), e, &err);
  cr_assert_eq (r, 0, "parse failed: %s", err ? err->msg : "");
  cr_assert_null (err);
}

static void
parse_bad (const char *text, const char *want)
{
  struct csr_envfile e = { 0 };
  csr_error *err = NULL;
  int r = csr_envfile_parse (text, strlen (text), &e, &err);
  cr_assert_lt (r, 0, "'%s' should be rejected", text);
  cr_assert_not_null (err);
  cr_assert_str_eq (err->msg, want, "'%s': got '%s', expected '%s'", text, err->msg, want);
  cr_assert_eq (e.n, 0);
  csr_error_free (err);
}

/* ------------------------------------------------------------------ envfile */

Test (envfile, comments_blanks_export)
{
  struct csr_envfile e;
  parse_ok ("# a comment\n"
            "\n"
            "   \t\n"
            "  # indented comment\n"
            "A=1\n"
            "export B=2\n"
            "export\tC=3\n"
            "  D = 4  \n"
            "export=5\n"
            "E=6\r\n"
            "F=7",
            &e);
  cr_assert_eq (e.n, 7);
  cr_assert_str_eq (csr_envfile_get (&e, "A"), "1");
  cr_assert_str_eq (csr_envfile_get (&e, "B"), "2");
  cr_assert_str_eq (csr_envfile_get (&e, "C"), "3");
  cr_assert_str_eq (csr_envfile_get (&e, "D"), "4");
  cr_assert_str_eq (csr_envfile_get (&e, "export"), "5");
  cr_assert_str_eq (csr_envfile_get (&e, "E"), "6");
  cr_assert_str_eq (csr_envfile_get (&e, "F"), "7");
  cr_assert_null (csr_envfile_get (&e, "G"));
  cr_assert_null (csr_envfile_get (&e, "a"));
  csr_envfile_release (&e);
  cr_assert_eq (e.n, 0);
  cr_assert_null (e.keys);
}

Test (envfile, bare_values)
{
  struct csr_envfile e;
  parse_ok ("A=hello world   \n"
            "B=value # a comment\n"
            "C=x#y\n"
            "D=\n"
            "E= #only a comment\n"
            "F=#not a comment\n"
            "G=a=b=c\n"
            "H=  padded\t\n"
            "I=sk-abc_123/+=\n",
            &e);
  cr_assert_str_eq (csr_envfile_get (&e, "A"), "hello world");
  cr_assert_str_eq (csr_envfile_get (&e, "B"), "value");
  cr_assert_str_eq (csr_envfile_get (&e, "C"), "x#y");
  cr_assert_str_eq (csr_envfile_get (&e, "D"), "");
  cr_assert_str_eq (csr_envfile_get (&e, "E"), "");
  cr_assert_str_eq (csr_envfile_get (&e, "F"), "#not a comment");
  cr_assert_str_eq (csr_envfile_get (&e, "G"), "a=b=c");
  cr_assert_str_eq (csr_envfile_get (&e, "H"), "padded");
  cr_assert_str_eq (csr_envfile_get (&e, "I"), "sk-abc_123/+=");
  csr_envfile_release (&e);
}

Test (envfile, quotes_and_escapes)
{
  struct csr_envfile e;
  parse_ok ("S1='single $HOME \\n # not a comment'\n"
            "S2=''\n"
            "S3='with \"double\" inside'  # comment\n"
            "D1=\"tab\\there\\nnext \\\"q\\\" back\\\\slash\"\n"
            "D2=\"\"\n"
            "D3=\"keep \\x unknown\"\n"
            "D4=\"  spaces kept  \"   \n"
            "D5=\"it's # not a comment\" # but this is\n",
            &e);
  cr_assert_str_eq (csr_envfile_get (&e, "S1"), "single $HOME \\n # not a comment");
  cr_assert_str_eq (csr_envfile_get (&e, "S2"), "");
  cr_assert_str_eq (csr_envfile_get (&e, "S3"), "with \"double\" inside");
  cr_assert_str_eq (csr_envfile_get (&e, "D1"), "tab\there\nnext \"q\" back\\slash");
  cr_assert_str_eq (csr_envfile_get (&e, "D2"), "");
  cr_assert_str_eq (csr_envfile_get (&e, "D3"), "keep \\x unknown");
  cr_assert_str_eq (csr_envfile_get (&e, "D4"), "  spaces kept  ");
  cr_assert_str_eq (csr_envfile_get (&e, "D5"), "it's # not a comment");
  csr_envfile_release (&e);
}

Test (envfile, last_value_wins)
{
  struct csr_envfile e;
  parse_ok ("K=first\nOTHER=x\nK=second\nexport K='third'\n", &e);
  cr_assert_eq (e.n, 4);
  cr_assert_str_eq (csr_envfile_get (&e, "K"), "third");
  cr_assert_str_eq (csr_envfile_get (&e, "OTHER"), "x");
  csr_envfile_release (&e);
}

Test (envfile, empty_input)
{
  struct csr_envfile e;
  parse_ok ("", &e);
  cr_assert_eq (e.n, 0);
  cr_assert_null (csr_envfile_get (&e, "A"));
  csr_envfile_release (&e);
  parse_ok ("\n\n# nothing\n", &e);
  cr_assert_eq (e.n, 0);
  csr_envfile_release (&e);
}

Test (envfile, bad_lines_are_numbered)
{
  parse_bad ("A=1\n# c\nthis is not an assignment\n", "line 3: expected KEY=VALUE");
  parse_bad ("NOEQUALS\n", "line 1: expected KEY=VALUE");
  parse_bad ("A=1\n=value\n", "line 2: expected KEY=VALUE");
  parse_bad ("export\n", "line 1: expected KEY=VALUE");
  parse_bad ("A B=1\n", "line 1: expected KEY=VALUE");
  parse_bad ("\n\n\n1ABC=2\n", "line 4: invalid variable name");
  parse_bad ("MY-KEY=2\n", "line 1: invalid variable name");
  parse_bad ("A='open\nB=2\n", "line 1: unterminated '...' value");
  parse_bad ("A=1\nB=\"open\\\"\n", "line 2: unterminated \"...\" value");
  parse_bad ("A='x'junk\n", "line 1: unexpected text after the closing quote");
  parse_bad ("A=\"x\" junk\n", "line 1: unexpected text after the closing quote");
  /* CRLF line ends count lines the same. */
  parse_bad ("A=1\r\nB=2\r\nbad\r\n", "line 3: expected KEY=VALUE");
}

Test (envfile, bad_line_message_hides_the_line)
{
  struct csr_envfile e = { 0 };
  csr_error *err = NULL;
  const char *text = "OPENAI_API_KEY sk-very-secret-value\n";
  cr_assert_lt (csr_envfile_parse (text, strlen (text), &e, &err), 0);
  cr_assert_null (strstr (err->msg, "sk-very-secret"));
  csr_error_free (err);
}

Test (envfile, nul_byte)
{
  struct csr_envfile e = { 0 };
  csr_error *err = NULL;
  static const char text[] = "A=1\nB=x\0y\n";
  cr_assert_lt (csr_envfile_parse (text, sizeof text - 1, &e, &err), 0);
  cr_assert_str_eq (err->msg, "line 2: NUL byte");
  csr_error_free (err);
}

Test (envfile, load_names_file_and_line, .init = make_tmpdir, .fini = remove_tmpdir)
{
  const char *text = "A=1\nB='two'\n";
  const char *path = write_tmp ("good.env", text, strlen (text));
  struct csr_envfile e;
  csr_error *err = NULL;
  cr_assert_eq (csr_envfile_load (path, &e, &err), 0);
  cr_assert_str_eq (csr_envfile_get (&e, "B"), "two");
  csr_envfile_release (&e);

  text = "A=1\n\nB C\n";
  path = write_tmp ("bad.env", text, strlen (text));
  cr_assert_lt (csr_envfile_load (path, &e, &err), 0);
  char want[256];
  snprintf (want, sizeof want, "%s: line 3: expected KEY=VALUE", path);
  cr_assert_str_eq (csr_error_text (err), want);
  csr_error_free (err);
  err = NULL;

  char missing[128];
  snprintf (missing, sizeof missing, "%s/missing.env", tmpdir);
  cr_assert_lt (csr_envfile_load (missing, &e, &err), 0);
  cr_assert_eq (err->status, ENOENT);
  cr_assert (strstr (csr_error_text (err), missing) != NULL);
  csr_error_free (err);
  err = NULL;

  cr_assert_lt (csr_envfile_load (tmpdir, &e, &err), 0);
  cr_assert (strstr (csr_error_text (err), tmpdir) != NULL);
  csr_error_free (err);
}

Test (envfile, load_size_cap, .init = make_tmpdir, .fini = remove_tmpdir)
{
  size_t n = 1024 * 1024;
  char *big = malloc (n + 1);
  cr_assert_not_null (big);
  memset (big, '#', n + 1);
  big[n - 1] = '\n'; /* exactly 1 MiB of comments: fine */
  const char *path = write_tmp ("cap.env", big, n);
  struct csr_envfile e;
  csr_error *err = NULL;
  cr_assert_eq (csr_envfile_load (path, &e, &err), 0, "%s", err ? err->msg : "");
  cr_assert_eq (e.n, 0);
  csr_envfile_release (&e);

  path = write_tmp ("big.env", big, n + 1);
  free (big);
  cr_assert_lt (csr_envfile_load (path, &e, &err), 0);
  cr_assert (strstr (csr_error_text (err), "larger than 1 MiB") != NULL, "%s", err->msg);
  cr_assert (strstr (csr_error_text (err), path) != NULL);
  csr_error_free (err);
}

/* ------------------------------------------------------------------ resolve */

Test (resolve, nothing_set_means_no_llm)
{
  struct csr_llm_select s = sel_env (ENV ("HOME=/root", "CSRUN_LLM_MODEL=m"));
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_null (c.provider);
  cr_assert_null (c.api_key);
  csr_llm_config_release (&c);

  /* No environment at all. */
  struct csr_llm_select none = { 0 };
  none.max_calls = -1;
  resolve_ok (&none, &c);
  cr_assert_null (c.provider);
  cr_assert_eq (c.max_calls, 6);
  csr_llm_config_release (&c);
}

Test (resolve, defaults)
{
  struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=sk-test-1234"));
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  const struct csr_llm_provider *p = csr_llm_provider_find ("openai");
  cr_assert_eq (c.provider, p);
  cr_assert_str_eq (c.model, p->model);
  cr_assert_str_eq (c.base_url, p->base_url);
  cr_assert_str_eq (c.api_key, "sk-test-1234");
  cr_assert_null (c.ca_file);
  cr_assert_float_eq (c.connect_timeout_s, 10.0, 1e-9);
  cr_assert_float_eq (c.timeout_s, 120.0, 1e-9);
  cr_assert_eq (c.retries, 3);
  cr_assert_eq (c.max_calls, 6);
  cr_assert_eq (c.max_tokens, 4096);
  csr_llm_config_release (&c);
}

Test (resolve, options_override_defaults)
{
  struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=sk-test-1234"));
  s.retries = 5;
  s.max_calls = 2;
  s.timeout_s = 7.5;
  s.ca_file = "/etc/my-ca.pem";
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_eq (c.retries, 5);
  cr_assert_eq (c.max_calls, 2);
  cr_assert_float_eq (c.timeout_s, 7.5, 1e-9);
  cr_assert_str_eq (c.ca_file, "/etc/my-ca.pem");
  csr_llm_config_release (&c);

  /* max_calls 0 is allowed ("never call"); negative means the default;
   * retries and timeout <= 0 mean the default. */
  s.max_calls = 0;
  s.retries = 0;
  s.timeout_s = 0;
  resolve_ok (&s, &c);
  cr_assert_eq (c.max_calls, 0);
  cr_assert_eq (c.retries, 3);
  cr_assert_float_eq (c.timeout_s, 120.0, 1e-9);
  cr_assert_not_null (c.provider);
  csr_llm_config_release (&c);
  s.max_calls = -5;
  s.retries = -1;
  s.timeout_s = -3;
  resolve_ok (&s, &c);
  cr_assert_eq (c.max_calls, 6);
  cr_assert_eq (c.retries, 3);
  cr_assert_float_eq (c.timeout_s, 120.0, 1e-9);
  csr_llm_config_release (&c);
}

Test (resolve, no_llm_beats_everything)
{
  struct csr_llm_select s
      = sel_env (ENV ("OPENAI_API_KEY=sk-1234", "CSRUN_LLM=nonsense", "OLLAMA_HOST=x"));
  s.no_llm = true;
  s.llm = "also-nonsense";
  s.base_url = "ftp://bad";
  s.env_file = "/nonexistent/csrun.env";
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_null (c.provider);
  cr_assert_null (c.api_key);
  csr_llm_config_release (&c);
}

Test (resolve, automatic_order)
{
  const char *all[]
      = { "OPENAI_API_KEY=o-1234",   "ANTHROPIC_API_KEY=a-1234", "GEMINI_API_KEY=g-1234",
          "DEEPSEEK_API_KEY=d-1234", "OLLAMA_HOST=gpu-box:1234", NULL };
  const char *want[] = { "openai", "anthropic", "gemini", "deepseek", "ollama" };
  for (size_t first = 0; first < 5; first++)
    expect_provider (all + first, want[first]);

  /* Order does not depend on the order of the environment. */
  expect_provider (ENV ("OLLAMA_HOST=h", "DEEPSEEK_API_KEY=d-1234", "GEMINI_API_KEY=g-1234"),
                   "gemini");
  expect_provider (ENV ("OLLAMA_HOST=h", "ANTHROPIC_API_KEY=a-1234"), "anthropic");
  /* An empty key is no key. */
  expect_provider (ENV ("OPENAI_API_KEY=", "DEEPSEEK_API_KEY=d-1234"), "deepseek");
  expect_provider (ENV ("OPENAI_API_KEY=", "OLLAMA_HOST="), NULL);
}

Test (resolve, automatic_key_is_used)
{
  struct csr_llm_select s = sel_env (ENV ("GEMINI_API_KEY=gm-secret", "OLLAMA_HOST=h"));
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "gemini");
  cr_assert_str_eq (c.api_key, "gm-secret");
  cr_assert_str_eq (c.base_url, csr_llm_provider_find ("gemini")->base_url);
  csr_llm_config_release (&c);

  s = sel_env (ENV ("OLLAMA_HOST=h"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "ollama");
  cr_assert_null (c.api_key);
  csr_llm_config_release (&c);
}

Test (resolve, llm_option_beats_variable_beats_automatic)
{
  const char **env = ENV ("OPENAI_API_KEY=o-1234", "ANTHROPIC_API_KEY=a-1234",
                          "GEMINI_API_KEY=g-1234", "CSRUN_LLM=gemini");
  struct csr_llm_select s = sel_env (env);
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "gemini");
  cr_assert_str_eq (c.api_key, "g-1234");
  csr_llm_config_release (&c);

  s.llm = "anthropic";
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "anthropic");
  cr_assert_str_eq (c.api_key, "a-1234");
  csr_llm_config_release (&c);

  /* --llm ollama needs no key even when others are set. */
  s.llm = "ollama";
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "ollama");
  cr_assert_null (c.api_key);
  cr_assert_str_eq (c.base_url, csr_llm_provider_find ("ollama")->base_url);
  csr_llm_config_release (&c);
}

Test (resolve, model_precedence)
{
  const struct csr_llm_provider *oa = csr_llm_provider_find ("openai");
  struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=o-1234"));
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, oa->model);
  csr_llm_config_release (&c);

  s = sel_env (ENV ("OPENAI_API_KEY=o-1234", "CSRUN_LLM_MODEL=from-var"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, "from-var");
  csr_llm_config_release (&c);

  s = sel_env (ENV ("OPENAI_API_KEY=o-1234", "CSRUN_LLM_MODEL=from-var", "CSRUN_LLM=openai:spec"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, "spec");
  csr_llm_config_release (&c);

  s.llm = "openai:option";
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, "option");
  csr_llm_config_release (&c);

  /* --llm without a model: CSRUN_LLM's model does not apply (the whole
   * variable is overridden), CSRUN_LLM_MODEL does. */
  s.llm = "openai";
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, "from-var");
  csr_llm_config_release (&c);

  /* Everything after the first ':' is the model. */
  s = sel_env (ENV ("CSRUN_LLM=ollama:qwen2.5-coder:7b"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "ollama");
  cr_assert_str_eq (c.model, "qwen2.5-coder:7b");
  csr_llm_config_release (&c);

  /* An empty CSRUN_LLM_MODEL is unset. */
  s = sel_env (ENV ("DEEPSEEK_API_KEY=d-1234", "CSRUN_LLM_MODEL="));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, csr_llm_provider_find ("deepseek")->model);
  csr_llm_config_release (&c);
}

Test (resolve, empty_model)
{
  struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=o-1234"));
  s.llm = "openai:";
  resolve_bad (&s, "--llm: empty model");
  s = sel_env (ENV ("OPENAI_API_KEY=o-1234", "CSRUN_LLM=openai:"));
  resolve_bad (&s, "CSRUN_LLM: empty model");
}

Test (resolve, missing_key)
{
  struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=o-1234"));
  s.llm = "anthropic";
  struct csr_llm_config c;
  csr_error *err = NULL;
  cr_assert_lt (csr_llm_config_resolve (&s, &c, &err), 0);
  cr_assert_str_eq (csr_error_text (err),
                    "--llm anthropic needs ANTHROPIC_API_KEY in the environment or the --env-file");
  csr_error_free (err);

  s = sel_env (ENV ("CSRUN_LLM=gemini:gemini-pro"));
  resolve_bad (&s, "CSRUN_LLM=gemini needs GEMINI_API_KEY in the environment or the --env-file");
  s = sel_env (ENV ("CSRUN_LLM=deepseek", "DEEPSEEK_API_KEY="));
  resolve_bad (&s, "needs DEEPSEEK_API_KEY");
}

/* A base URL of the user's own: the key is optional, and without a
 * provider it means the openai format. */
Test (resolve, base_url_without_key_or_provider)
{
  struct csr_llm_select s = sel_env (ENV ("HOME=/x"));
  s.base_url = "http://127.0.0.1:8080";
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_not_null (c.provider);
  cr_assert_str_eq (c.provider->name, "openai");
  cr_assert_null (c.api_key);
  cr_assert_str_eq (c.base_url, "http://127.0.0.1:8080");
  csr_llm_config_release (&c);

  s.llm = "openai";
  resolve_ok (&s, &c);
  cr_assert_null (c.api_key);
  csr_llm_config_release (&c);

  /* The variable counts as a base URL too. */
  s = sel_env (ENV ("CSRUN_LLM_BASE_URL=https://llm.example/v1"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "openai");
  cr_assert_null (c.api_key);
  csr_llm_config_release (&c);

  /* A key in the environment still picks its provider, and is sent. */
  s = sel_env (ENV ("DEEPSEEK_API_KEY=d-1234"));
  s.base_url = "http://127.0.0.1:8080";
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "deepseek");
  cr_assert_str_eq (c.api_key, "d-1234");
  csr_llm_config_release (&c);

  /* No base URL: a missing key is still an error. */
  s = sel_env (ENV ("HOME=/x"));
  s.llm = "openai";
  resolve_bad (&s, "--llm openai needs OPENAI_API_KEY");
}

/* OPENAI_MODEL and friends, for their own provider only; CSRUN_LLM_MODEL
 * and PROVIDER:MODEL win. */
Test (resolve, provider_model_variables)
{
  struct csr_llm_select s
      = sel_env (ENV ("GEMINI_API_KEY=g-1234", "GEMINI_MODEL=gemini-x", "OPENAI_MODEL=gpt-x"));
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "gemini");
  cr_assert_str_eq (c.model, "gemini-x");
  csr_llm_config_release (&c);

  s = sel_env (ENV ("ANTHROPIC_API_KEY=a-1234", "OPENAI_MODEL=gpt-x"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, csr_llm_provider_find ("anthropic")->model);
  csr_llm_config_release (&c);

  s = sel_env (ENV ("OLLAMA_HOST=127.0.0.1", "OLLAMA_MODEL=llama-x", "DEEPSEEK_MODEL=ds-x"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, "llama-x");
  csr_llm_config_release (&c);

  s = sel_env (ENV ("DEEPSEEK_API_KEY=d-1234", "DEEPSEEK_MODEL=ds-x"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, "ds-x");
  csr_llm_config_release (&c);

  s = sel_env (ENV ("OPENAI_API_KEY=o-1234", "OPENAI_MODEL=gpt-x", "CSRUN_LLM_MODEL=wins"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, "wins");
  csr_llm_config_release (&c);
  s.llm = "openai:option";
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.model, "option");
  csr_llm_config_release (&c);
}

Test (resolve, key_with_control_character)
{
  struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=sk-abcd\nX-Injected: 1"));
  struct csr_llm_config c;
  csr_error *err = NULL;
  cr_assert_lt (csr_llm_config_resolve (&s, &c, &err), 0);
  const char *msg = csr_error_text (err);
  cr_assert (strstr (msg, "OPENAI_API_KEY") != NULL, "%s", msg);
  cr_assert_null (strstr (msg, "sk-abcd"));
  csr_error_free (err);
}

Test (resolve, unknown_provider)
{
  struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=o-1234"));
  s.llm = "chatgpt";
  resolve_bad (&s, "--llm: unknown provider 'chatgpt'");
  resolve_bad (&s, "openai, anthropic, gemini, deepseek, ollama");
  s.llm = "OpenAI:gpt-4o"; /* names are case-sensitive */
  resolve_bad (&s, "--llm: unknown provider 'OpenAI'");
  s.llm = "";
  resolve_bad (&s, "--llm: unknown provider");
  s = sel_env (ENV ("OPENAI_API_KEY=o-1234", "CSRUN_LLM=mistral:large"));
  resolve_bad (&s, "CSRUN_LLM: unknown provider 'mistral'");
}

Test (resolve, base_url)
{
  struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=o-1234"));
  struct csr_llm_config c;
  s.base_url = "http://127.0.0.1:8000///";
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.base_url, "http://127.0.0.1:8000");
  csr_llm_config_release (&c);

  s.base_url = "https://llm.example.com/proxy/";
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.base_url, "https://llm.example.com/proxy");
  csr_llm_config_release (&c);

  /* The variable applies to whichever provider is chosen; the option wins. */
  s = sel_env (ENV ("ANTHROPIC_API_KEY=a-1234", "CSRUN_LLM_BASE_URL=http://gateway:4000/"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "anthropic");
  cr_assert_str_eq (c.base_url, "http://gateway:4000");
  csr_llm_config_release (&c);
  s.base_url = "https://other";
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.base_url, "https://other");
  csr_llm_config_release (&c);
}

Test (resolve, bad_base_url)
{
  const char *bad[] = { "ftp://example.com",  "localhost:8080", "http://", "https:///x",
                        "file:///etc/passwd", "http://a b",     "" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=o-1234"));
      s.base_url = bad[i];
      resolve_bad (&s, "--llm-base-url: expected an http:// or https:// URL");
    }
  const char *env[] = { "OPENAI_API_KEY=o-1234", "CSRUN_LLM_BASE_URL=ftp://user:pw@host", NULL };
  struct csr_llm_select s = sel_env (env);
  struct csr_llm_config c;
  csr_error *err = NULL;
  cr_assert_lt (csr_llm_config_resolve (&s, &c, &err), 0);
  cr_assert (strstr (err->msg, "CSRUN_LLM_BASE_URL") != NULL, "%s", err->msg);
  cr_assert_null (strstr (err->msg, "pw"), "%s", err->msg);
  csr_error_free (err);
}

static void
expect_ollama_url (const char *host, const char *want)
{
  const char *env[] = { "CSRUN_LLM=ollama", NULL, NULL };
  char var[256];
  snprintf (var, sizeof var, "OLLAMA_HOST=%s", host);
  env[1] = var;
  struct csr_llm_select s = sel_env (env);
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.base_url, want, "OLLAMA_HOST=%s: got %s, expected %s", host, c.base_url,
                    want);
  csr_llm_config_release (&c);
}

Test (resolve, ollama_host_forms)
{
  expect_ollama_url ("gpu-box:1234", "http://gpu-box:1234");
  expect_ollama_url ("10.0.0.7:11434", "http://10.0.0.7:11434");
  expect_ollama_url ("gpu-box", "http://gpu-box:11434");
  expect_ollama_url ("gpu-box/", "http://gpu-box:11434");
  expect_ollama_url (":8080", "http://127.0.0.1:8080");
  expect_ollama_url ("[::1]:8080", "http://[::1]:8080");
  expect_ollama_url ("[::1]", "http://[::1]:11434");
  expect_ollama_url ("::1", "http://[::1]:11434");
  expect_ollama_url ("http://gpu-box:1234/", "http://gpu-box:1234");
  expect_ollama_url ("https://ollama.example.com", "https://ollama.example.com");
  expect_ollama_url ("HTTP://Box:1", "HTTP://Box:1");

  struct csr_llm_select s = sel_env (ENV ("CSRUN_LLM=ollama", "OLLAMA_HOST=ftp://box"));
  resolve_bad (&s, "OLLAMA_HOST: expected an http:// or https:// URL");
  s = sel_env (ENV ("CSRUN_LLM=ollama", "OLLAMA_HOST=user@box"));
  resolve_bad (&s, "OLLAMA_HOST:");
  s = sel_env (ENV ("CSRUN_LLM=ollama", "OLLAMA_HOST=box/path"));
  resolve_bad (&s, "OLLAMA_HOST:");
}

Test (resolve, ollama_host_scope)
{
  /* OLLAMA_HOST only concerns ollama; CSRUN_LLM_BASE_URL and the option beat it. */
  struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=o-1234", "OLLAMA_HOST=box:1"));
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "openai");
  cr_assert_str_eq (c.base_url, csr_llm_provider_find ("openai")->base_url);
  csr_llm_config_release (&c);

  s = sel_env (ENV ("OLLAMA_HOST=box:1", "CSRUN_LLM_BASE_URL=http://gw:2"));
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "ollama");
  cr_assert_str_eq (c.base_url, "http://gw:2");
  csr_llm_config_release (&c);

  s.base_url = "http://opt:3/";
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.base_url, "http://opt:3");
  csr_llm_config_release (&c);
}

Test (resolve, env_file_fills_in, .init = make_tmpdir, .fini = remove_tmpdir)
{
  const char *text = "# csrun settings\n"
                     "export ANTHROPIC_API_KEY='file-anthropic-key'\n"
                     "OPENAI_API_KEY=file-openai-key\n"
                     "CSRUN_LLM_MODEL=\"file-model\"\n";
  const char *path = write_tmp ("llm.env", text, strlen (text));

  /* Only the file: its first provider in order wins. */
  struct csr_llm_select s = sel_env (ENV ("HOME=/x"));
  s.env_file = path;
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "openai");
  cr_assert_str_eq (c.api_key, "file-openai-key");
  cr_assert_str_eq (c.model, "file-model");
  csr_llm_config_release (&c);

  /* The environment beats the file, which fills in the rest. */
  s = sel_env (ENV ("OPENAI_API_KEY=env-openai-key", "CSRUN_LLM=anthropic"));
  s.env_file = path;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "anthropic");
  cr_assert_str_eq (c.api_key, "file-anthropic-key");
  cr_assert_str_eq (c.model, "file-model");
  csr_llm_config_release (&c);

  s = sel_env (ENV ("OPENAI_API_KEY=env-openai-key", "CSRUN_LLM_MODEL=env-model"));
  s.env_file = path;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "openai");
  cr_assert_str_eq (c.api_key, "env-openai-key");
  cr_assert_str_eq (c.model, "env-model");
  csr_llm_config_release (&c);

  /* An empty environment value is filled in from the file. */
  s = sel_env (ENV ("OPENAI_API_KEY="));
  s.env_file = path;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.api_key, "file-openai-key");
  csr_llm_config_release (&c);

  /* No getenv_fn at all: the file alone. */
  s = (struct csr_llm_select){ .max_calls = -1, .env_file = path, .llm = "anthropic:opt" };
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.api_key, "file-anthropic-key");
  cr_assert_str_eq (c.model, "opt");
  csr_llm_config_release (&c);
}

Test (resolve, env_file_selects_provider, .init = make_tmpdir, .fini = remove_tmpdir)
{
  const char *text = "CSRUN_LLM=ollama:llama3\nOLLAMA_HOST=box:9\n";
  const char *path = write_tmp ("ollama.env", text, strlen (text));
  struct csr_llm_select s = sel_env (ENV ("GEMINI_API_KEY=g-1234"));
  s.env_file = path;
  struct csr_llm_config c;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "ollama");
  cr_assert_str_eq (c.model, "llama3");
  cr_assert_str_eq (c.base_url, "http://box:9");
  csr_llm_config_release (&c);

  /* ... but CSRUN_LLM in the environment beats the file's. */
  s = sel_env (ENV ("GEMINI_API_KEY=g-1234", "CSRUN_LLM=gemini"));
  s.env_file = path;
  resolve_ok (&s, &c);
  cr_assert_str_eq (c.provider->name, "gemini");
  csr_llm_config_release (&c);
}

Test (resolve, env_file_errors, .init = make_tmpdir, .fini = remove_tmpdir)
{
  const char *text = "OPENAI_API_KEY=ok\nnot a line\n";
  const char *path = write_tmp ("bad.env", text, strlen (text));
  struct csr_llm_select s = sel_env (ENV ("OPENAI_API_KEY=o-1234"));
  s.env_file = path;
  char want[256];
  snprintf (want, sizeof want, "--env-file: %s: line 2: expected KEY=VALUE", path);
  resolve_bad (&s, want);

  char missing[128];
  snprintf (missing, sizeof missing, "%s/none.env", tmpdir);
  s.env_file = missing;
  resolve_bad (&s, "--env-file");
  resolve_bad (&s, missing);
}

/* ------------------------------------------------------------------ backoff */

Test (backoff, values)
{
  cr_assert_float_eq (csr_llm_backoff_s (0, 1.0), 0.5, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (0, 0.0), 0.25, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (0, 0.5), 0.375, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (1, 1.0), 1.0, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (1, 0.0), 0.5, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (2, 1.0), 2.0, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (3, 1.0), 4.0, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (4, 1.0), 8.0, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (4, 0.0), 4.0, 1e-12);
  /* Capped at 8 s, jitter still applies. */
  cr_assert_float_eq (csr_llm_backoff_s (5, 1.0), 8.0, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (5, 0.0), 4.0, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (1000, 1.0), 8.0, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (2147483647, 0.0), 4.0, 1e-12);
}

Test (backoff, out_of_range_inputs)
{
  cr_assert_float_eq (csr_llm_backoff_s (-1, 1.0), 0.5, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (-1000, 0.0), 0.25, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (0, 7.0), 0.5, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (0, -3.0), 0.25, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (0, NAN), 0.25, 1e-12);
  cr_assert_float_eq (csr_llm_backoff_s (2, INFINITY), 2.0, 1e-12);
}

Test (backoff, bounds)
{
  for (int k = 0; k < 64; k++)
    {
      double full = k >= 4 ? 8.0 : 0.5 * (double)(1 << k);
      double prev = -1;
      for (int i = 0; i <= 100; i++)
        {
          double r = i / 100.0;
          double v = csr_llm_backoff_s (k, r);
          cr_assert (v >= full / 2 - 1e-12 && v <= full + 1e-12, "k=%d r=%g: %g", k, r, v);
          cr_assert (v <= 8.0 && v >= 0.25, "k=%d r=%g: %g", k, r, v);
          cr_assert (v >= prev, "not monotonic in the jitter");
          prev = v;
          if (k > 0)
            cr_assert (v >= csr_llm_backoff_s (k - 1, r), "not monotonic in k");
        }
    }
}
