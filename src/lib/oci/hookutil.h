/* csrun — the pure parts of the OCI hook `csrun hook`: which Python program a
 * container's process runs (from process.args), and the text of a log that
 * conmon wrote in the k8s-file format. */
#ifndef CSRUN_OCI_HOOKUTIL_H
#define CSRUN_OCI_HOOKUTIL_H

#include <stdbool.h>
#include <stddef.h>

enum csr_hook_prog_kind
{
  CSR_HOOK_PROG_NONE,   /* not a Python interpreter (or one that runs nothing): nothing to gate */
  CSR_HOOK_PROG_FILE,   /* a script: value is its path as written (relative: to process.cwd) */
  CSR_HOOK_PROG_INLINE, /* python -c CODE: value is CODE */
  CSR_HOOK_PROG_MODULE, /* python -m MODULE: value is MODULE */
  CSR_HOOK_PROG_STDIN,  /* python reads its program from standard input ("-", or no operand) */
};

struct csr_hook_prog
{
  enum csr_hook_prog_kind kind;
  const char *value; /* points into the ARGS given; NULL for NONE and STDIN */
  size_t index;      /* the index in ARGS of the argument VALUE is in (or ends), for FILE */
  /* FILE only: the script is argv[0] itself, run through its #! line (a name
   * without '/' is then looked up in PATH, as execvp does). */
  bool executable;
};

/* Whether the basename of ARGV0 names a CPython 3 interpreter: python,
 * python3, python3.N (python3.12). */
bool csr_hook_is_python (const char *argv0);

/* What process.args (ARGS[0..N)) runs, read as CPython does its command line:
 * argv[0] is an interpreter (csr_hook_is_python), possibly behind env(1) with
 * -i, -u NAME and NAME=VALUE arguments; its options are skipped, including
 * grouped flags ("-uB") and those that take an argument, attached or not
 * ("-W arg", "-Warg", "-X opt", "--check-hash-based-pycs MODE"); then "-c CODE"
 * (or "-cCODE", also at the end of a group: "-uc CODE") is INLINE, "-m MOD" is
 * MODULE, "-" or no operand left is STDIN, "--" ends the options, and the
 * first operand is the script FILE, whatever its suffix (Python runs it).  A
 * non-interpreter argv[0] whose name ends in ".py" is FILE with EXECUTABLE
 * set.  Anything else, and a -c or -m with its argument missing (Python
 * refuses to start) is NONE.  Pure: no I/O. */
void csr_hook_find_program (char *const *args, size_t n, struct csr_hook_prog *out);

/* Strip conmon's k8s-file framing from LOG[0..LEN) in place.  Each record is
 * "TIMESTAMP STREAM TAG TEXT\n" (STREAM stdout or stderr, TAG F for a full
 * line or P for a partial one, continued by the next record); what is left
 * is the program's output: the TEXTs, each F record ending its line with a
 * newline, P records joined to what follows.  Lines that do not have this
 * shape are kept as they are (a log that is not k8s-file stays readable).
 * Returns the new length (<= LEN); LOG[result] is set to '\0' when result <
 * LEN (a NUL-terminated LOG stays NUL-terminated). */
size_t csr_hook_k8s_strip (char *log, size_t len);

#endif
