#include "config.h"

#include <argp.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/run-opts.h"
#include "supervisor/limits.h"

static void
parse (struct run_opts *o, int argc, const char **argv)
{
  run_opts_parse (argc, (char **)argv, o);
}

Test (run_opts, defaults)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "x.py", NULL };
  parse (&o, 2, argv);
  cr_assert_str_eq (o.file, "x.py");
  cr_assert_float_eq (o.req.timeout_s, 60.0, 1e-9);
  cr_assert_eq (o.req.limits.memory, 512ULL << 20);
  cr_assert_eq (o.req.max_output, 1ULL << 20);
  cr_assert_eq (o.req.n_args, 0);
  cr_assert (!o.json);
}

Test (run_opts, values_and_snippet_args)
{
  struct run_opts o;
  const char *argv[]
      = { "csrun run", "--timeout", "1.5s",   "--memory=1G", "--max-output", "64k", "-e", "A=1",
          "--env",     "B",         "--json", "-",           "--timeout",    "x",   NULL };
  parse (&o, 14, argv);
  cr_assert_float_eq (o.req.timeout_s, 1.5, 1e-9);
  cr_assert_eq (o.req.limits.memory, 1ULL << 30);
  cr_assert_eq (o.req.max_output, 64 * 1024);
  cr_assert_eq (o.req.n_env, 2);
  cr_assert_str_eq (o.env[0], "A=1");
  cr_assert_str_eq (o.env[1], "B");
  cr_assert (o.json);
  cr_assert_str_eq (o.file, "-");
  cr_assert_eq (o.req.n_args, 2, "options after FILE belong to the snippet");
  cr_assert_str_eq (o.req.args[0], "--timeout");
  cr_assert_str_eq (o.req.args[1], "x");
}

Test (run_opts, bad_timeout_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--timeout", "abc", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, zero_timeout_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--timeout", "0", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, absurd_memory_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--memory", "99999T", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, tiny_memory_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--memory", "1k", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, bad_env_name_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--env", "1BAD=x", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, missing_file_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--json", NULL };
  parse (&o, 2, argv);
}

Test (run_opts, unknown_option_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--no-such-option", "x.py", NULL };
  parse (&o, 3, argv);
}

Test (run_opts, limits_and_network)
{
  struct run_opts o;
  const char *argv[] = { "csrun run",
                         "--pids",
                         "32",
                         "--cpus",
                         "0.5",
                         "--seccomp",
                         "unconfined",
                         "--net",
                         "host",
                         "--allow-host-net",
                         "--best-effort-limits",
                         "x.py",
                         NULL };
  parse (&o, 12, argv);
  cr_assert_eq (o.req.limits.pids, 32);
  cr_assert_eq (o.req.limits.cpu_millis, 500);
  cr_assert_str_eq (o.req.seccomp, "unconfined");
  cr_assert_str_eq (o.net, "host");
  cr_assert (o.allow_host_net);
  cr_assert (o.req.limits.best_effort);
  cr_assert_eq (o.req.limits.explicit_mask, CSR_LIMIT_PIDS | CSR_LIMIT_CPU);
}

Test (run_opts, limit_defaults_are_not_explicit)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--cpu", "250m", "x.py", NULL };
  parse (&o, 4, argv);
  cr_assert_eq (o.req.limits.cpu_millis, 250);
  cr_assert_eq (o.req.limits.pids, 128);
  cr_assert_eq (o.req.limits.memory, 512ULL << 20);
  cr_assert_eq (o.req.limits.explicit_mask, CSR_LIMIT_CPU);
  cr_assert_str_eq (o.net, "none");
}

Test (run_opts, bad_cpus_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--cpus", "0", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, tiny_cpu_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--cpu", "5m", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, bad_net_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--net", "bridge", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, zero_pids_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--pids", "0", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, env_value_with_newline_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--env", "FOO=a\nb", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, env_copied_host_value_with_newline_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  setenv ("CSRUN_TEST_NL", "a\nb", 1);
  const char *argv[] = { "csrun run", "--env", "CSRUN_TEST_NL", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, env_empty_name_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--env", "=x", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, env_tab_and_equals_in_value_and_raw_output)
{
  struct run_opts o;
  setenv ("CSRUN_TEST_TAB", "a\tb", 1);
  const char *argv[] = { "csrun run",      "--env",        "A=x=y\tz", "--env",
                         "CSRUN_TEST_TAB", "--raw-output", "x.py",     NULL };
  parse (&o, 7, argv);
  cr_assert_eq (o.req.n_env, 2);
  cr_assert (o.raw_output);
  struct run_opts d;
  const char *argv2[] = { "csrun run", "x.py", NULL };
  parse (&d, 2, argv2);
  cr_assert (!d.raw_output, "neutralised by default");
}

Test (run_opts, one_pid_is_usage_error, .exit_code = 2)
{
  /* The jail's init and Python: 1 can't start the jail. */
  struct run_opts o;
  const char *argv[] = { "csrun run", "--pids", "1", "x.py", NULL };
  parse (&o, 4, argv);
}

Test (run_opts, minimum_pids)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--pids", "2", "x.py", NULL };
  parse (&o, 4, argv);
  cr_assert_eq (o.req.limits.pids, 2);
}

Test (run_opts, label)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--label", "job 7: ünïcode", "x.py", NULL };
  parse (&o, 4, argv);
  cr_assert_str_eq (o.label, "job 7: ünïcode");
  char long_label[CSR_LABEL_MAX + 2];
  memset (long_label, 'x', sizeof long_label - 1);
  long_label[CSR_LABEL_MAX] = '\0';
  cr_assert_null (csr_label_problem (long_label));
  long_label[CSR_LABEL_MAX] = 'x';
  long_label[CSR_LABEL_MAX + 1] = '\0';
  cr_assert_not_null (csr_label_problem (long_label));
  cr_assert_not_null (csr_label_problem ("a\tb"));
  cr_assert_not_null (csr_label_problem ("a\x7f"));
  cr_assert_not_null (csr_label_problem ("a\xc2\x9b"
                                         "31m"));
  cr_assert_not_null (csr_label_problem ("\xff"));
  cr_assert_null (csr_label_problem (""));
}

Test (run_opts, label_with_newline_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--label", "a\nb", "x.py", NULL };
  parse (&o, 4, argv);
}

/* issue 14: standard input and live output. */
Test (run_opts, stdin_and_live)
{
  struct run_opts o;
  const char *argv[]
      = { "csrun run", "--stdin", "in.csv", "--stdin-max", "1k", "--live", "x.py", NULL };
  parse (&o, 7, argv);
  cr_assert_str_eq (o.stdin_file, "in.csv");
  cr_assert_eq (o.req.stdin_max, 1024);
  cr_assert (o.live && !o.no_live);
  cr_assert_eq (o.req.stdin_fd, -1); /* cmd_run opens it */
  const char *argv2[] = { "csrun run", "-i", "--no-live", "x.py", NULL };
  parse (&o, 4, argv2);
  cr_assert_str_eq (o.stdin_file, "-");
  cr_assert_eq (o.req.stdin_max, 256ULL << 20);
  cr_assert (!o.live && o.no_live);
  cr_assert_eq (o.req.interrupt_fd, -1);
  cr_assert_eq (o.req.live_out, -1);
}

Test (run_opts, bad_stdin_max_is_usage_error, .exit_code = 2)
{
  struct run_opts o;
  const char *argv[] = { "csrun run", "--stdin-max", "lots", "x.py", NULL };
  parse (&o, 4, argv);
}

/* issue 18: csrun mcp notes the run options it was given; those of the
 * pipeline go to csrun sandbox run (not the jail's, nor those skipped). */
static error_t
parse_outer (int key, char *arg, struct argp_state *state)
{
  (void)arg;
  if (key == ARGP_KEY_INIT)
    state->child_inputs[0] = state->input;
  return key == ARGP_KEY_INIT ? 0 : ARGP_ERR_UNKNOWN;
}

Test (run_opts, noted_for_sandbox_run)
{
  static struct run_opts o;
  run_opts_defaults (&o);
  o.note = true;
  struct argp_child kids[] = { { &run_opts_batch_argp, 0, NULL, 0 }, { NULL, 0, NULL, 0 } };
  struct argp outer = { NULL, parse_outer, NULL, NULL, kids, NULL, NULL };
  const char *argv[] = { "csrun mcp",
                         "--allow=broad-except",
                         "--no-heal",
                         "--memory",
                         "1G",
                         "--timeout",
                         "5s",
                         "-e",
                         "A=1",
                         "--silent-pattern",
                         "x  y",
                         "--max-attempts",
                         "2",
                         "--allow",
                         "call:eval",
                         "--no-silent-scan",
                         "--max-output",
                         "1K",
                         NULL };
  cr_assert_eq (argp_parse (&outer, 18, (char **)argv, ARGP_IN_ORDER, NULL, &o), 0);
  cr_assert_eq (o.n_noted, 10, "every option noted");
  static const char *const skip[] = { "timeout", "env", "max-output", NULL };
  const char **v = run_opts_sandbox_args (&o, skip);
  cr_assert_not_null (v);
  char s[512] = "";
  for (size_t i = 0; v[i]; i++)
    snprintf (s + strlen (s), sizeof s - strlen (s), "%s%s", i ? "|" : "", v[i]);
  cr_assert_str_eq (s, "--allow=broad-except|--no-heal|--silent-pattern=x  y|--max-attempts=2|"
                       "--allow=call:eval|--no-silent-scan");
  free (v);
  run_opts_release_noted (&o);
  cr_assert_eq (o.n_noted, 0);
}
