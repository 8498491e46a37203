/* csrun — local healing (policies/heal.conf): fixes that are certain, no network. */
#ifndef CSRUN_HEAL_H
#define CSRUN_HEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "bbuf.h"
#include "classify.h"
#include "gate.h"

/* How a name is used in the snippet (bits of csr_heal_import.uses). */
enum
{
  CSR_HEAL_USE_ATTRIBUTE = 1, /* NAME.attr */
  CSR_HEAL_USE_CALL = 2,      /* NAME(...) */
  CSR_HEAL_USE_NAME = 4,      /* anything else: NAME, NAME[...], ... */
};

struct csr_heal_import
{
  char *name;   /* the name as the snippet uses it: "math", "Counter", "np" */
  char *line;   /* the import that binds it: "import math", "from collections import Counter",
                   "import numpy as np" */
  char *module; /* top-level module it needs ("numpy"): only used if it exists in the rootfs */
  /* Conditions on how the snippet uses NAME (all must hold; the first entry
   * of a name whose conditions hold wins): */
  unsigned uses; /* use=: every use is one of these CSR_HEAL_USE_* kinds (0: any) */
  char **attrs;  /* attr=: there is a NAME.A use, and every NAME.A has A in this list */
  size_t n_attrs;
  char **not_attrs; /* not-attr=: no NAME.A use has A in this list */
  size_t n_not_attrs;
};

/* The other tables of heal.conf: lines that start with a KIND ending in ':'
 * (see policies/heal.conf), e.g.
 *   py2-name:    xrange        range
 *   py2-method:  iteritems     items
 *   py2-attr:    string  letters  ascii_letters
 *   py2-module:  urlparse      urllib.parse
 *   method:      list  push    .append
 *   submodule:   xml.etree.ElementTree
 *   foreign-call: console.log  print */
enum csr_heal_map_kind
{
  CSR_MAP_PY2_NAME,     /* a builtin of Python 2: A -> B */
  CSR_MAP_PY2_METHOD,   /* d.A() -> d.B() (iteritems...) */
  CSR_MAP_PY2_ATTR,     /* MODULE.A -> MODULE.B (string.letters, sys.maxint) */
  CSR_MAP_PY2_MODULE,   /* module A of Python 2 is B (a dotted name) in Python 3 */
  CSR_MAP_METHOD,       /* on TYPE: .A -> B (".name", "len" or "in") */
  CSR_MAP_SUBMODULE,    /* A is a dotted submodule that needs its own import */
  CSR_MAP_FOREIGN_CALL, /* another language's global function A(...) (dotted) is B (dotted) */
  CSR_MAP_FOREIGN_NAME, /* another language's global value A is B (null -> None) */
};

struct csr_heal_map
{
  enum csr_heal_map_kind kind;
  char *type; /* CSR_MAP_METHOD: "list", "str", "dict"...; CSR_MAP_PY2_ATTR: the module */
  char *a, *b;
};

struct csr_heal_conf
{
  struct csr_heal_import *imports;
  size_t n_imports;
  struct csr_heal_map *maps;
  size_t n_maps;
};

/* The B of the first map of KIND whose A is A[0..LEN) (and TYPE, for
 * CSR_MAP_METHOD and CSR_MAP_PY2_ATTR; NULL matches any), or NULL. */
const struct csr_heal_map *csr_heal_map_find (const struct csr_heal_conf *c,
                                              enum csr_heal_map_kind kind, const char *type,
                                              const char *a, size_t len);

/* heal.conf lines:  NAME  IMPORT-LINE  [OPTION...]   e.g.
 *   math        import math
 *   Counter     from collections import Counter
 *   np          import numpy as np                 [module=numpy]
 *   datetime    import datetime                    [use=attribute attr=datetime,date,timedelta]
 * OPTIONs: module=M, use=KIND,..., attr=A,..., not-attr=A,... (see
 * policies/heal.conf).  '#' comments; errors name the line. */
int csr_heal_conf_parse (const char *text, size_t len, struct csr_heal_conf *c, csr_error **err);
int csr_heal_conf_load (const char *path, struct csr_heal_conf *c, csr_error **err);
void csr_heal_conf_release (struct csr_heal_conf *c);

struct csr_patch
{
  char *code;   /* the whole patched program */
  char *rules;  /* comma-separated rule ids applied, e.g. "missing-import,str-concat" */
  char *source; /* "local", "llm" or "patch-cmd" */
  char *diff;   /* unified diff snippet.py -> snippet.py */
  /* source "llm": who made it and what it cost. */
  char *provider;    /* "openai", "anthropic", "gemini", "ollama", "deepseek" */
  char *model;       /* the model requested */
  char *model_used;  /* the model the provider's reply names, or NULL: not reported */
  int requests;      /* HTTP requests of this healing step (discarded replies included) */
  int discarded;     /* replies thrown away: no code, unchanged, blocked by the gate */
  long input_tokens; /* summed; -1 when the provider reported none */
  long output_tokens;
  double latency_ms; /* wall time of the step's requests, backoff included */
};

/* Try the local rules on CODE, given the last attempt's diagnosis D (may be
 * NULL) and the gate's verdict V (may be NULL: its undefined names let every
 * missing import be fixed in one patch).  ROOTFS_DIR lets the healer check a
 * third-party module exists before importing it (NULL: assume it does not).
 * Rules:
 *   missing-import  NameError 'X' / undefined names with a heal.conf entry ->
 *                   insert the import lines after the module docstring and any
 *                   __future__ imports (one line each, no duplicates)
 *   str-concat      TypeError 'can only concatenate str (not "int") to str' (and
 *                   the reverse 'unsupported operand type(s) for +: 'int' and 'str'')
 *                   on line L -> wrap the non-str operand of the '+' on that line in str()
 *   py2-print       SyntaxError "Missing parentheses in call to 'print'" or a
 *                   `print x` statement -> print(x)
 * Never adds placeholders or try/except.  Returns 1 and fills OUT when a
 * patch was made, 0 when no rule applies, -1 on error. */
int csr_heal_local (const char *code, const struct csr_diagnosis *d,
                    const struct csr_gate_verdict *v, const struct csr_heal_conf *c,
                    const char *rootfs_dir, struct csr_patch *out, csr_error **err);
void csr_patch_release (struct csr_patch *p);

/* A unified diff of A -> B with 3 lines of context, labelled a/NAME and b/NAME.
 * Its cost is bounded: the Myers search stops when one middle snake needs
 * more than CSR_DIFF_MAX_D edits or the work (diagonals visited + snake steps)
 * passes CSR_DIFF_BUDGET, and the diff then replaces the whole file (a
 * correct diff, just not a minimal one).  NULL on ENOMEM. */
#define CSR_DIFF_MAX_D 2000
#define CSR_DIFF_BUDGET ((uint64_t)20 * 1000 * 1000)
char *csr_unified_diff (const char *a, const char *b, const char *name);

struct csr_diff_stats
{
  uint64_t work;     /* diagonals visited + snake steps taken */
  bool replaced_all; /* the budget ran out: the diff replaces the whole file */
};
/* The same with a BUDGET of work; STATS (may be NULL) says what it cost. */
char *csr_unified_diff_ex (const char *a, const char *b, const char *name, uint64_t budget,
                           struct csr_diff_stats *stats);

/* Take code out of a model's or a program's reply: a ```python fence, else a
 * plain ``` fence, else the raw text (trimmed).  Returns malloc'ed code. */
char *csr_extract_code (const char *reply, size_t len);
/* The same; *FENCED (may be NULL) says whether the code came from a fence
 * (false: the raw text, which may be prose rather than code). */
char *csr_extract_code_ex (const char *reply, size_t len, bool *fenced);

/* The largest patch accepted from a model or --patch-cmd for a snippet of
 * CODE_LEN bytes: max(64 KiB, 4 x CODE_LEN + 16 KiB), and at most MAX_CODE
 * (--max-code-size; 0: no such bound). */
#define CSR_PATCH_MIN_CAP ((size_t)64 << 10)
#define CSR_PATCH_SLACK ((size_t)16 << 10)
size_t csr_patch_max_size (size_t code_len, size_t max_code);

/* Why PATCH (a reply's code) can't replace CODE, in one line ("unusable
 * reply: not valid UTF-8", "unusable reply: the patch is N bytes, over the
 * limit of M bytes for this snippet"), or NULL when it can go to the gate.
 * The string is static or thread-local, valid until the next call. */
const char *csr_patch_problem (const char *code, const char *patch, size_t max_code);

/* --patch-cmd: run PROGRAM (through /bin/sh -c, outside the jail, clean
 * environment plus PATH/HOME/LANG) with TIMEOUT_S; write
 * {"code","diagnosis":{"error_type","message","line","context"},"attempt"} on
 * its stdin; read at most 1 MiB of stdout.  Returns 1 and *out (extracted
 * code) on a usable reply; 0 with *why set (static string) when there is no
 * patch: non-zero exit, timeout, empty, identical to CODE, a NUL byte; -1 on
 * error.
 * TIMEOUT_S <= 0 means no time limit.  *why may point to a thread-local
 * buffer, valid until the next call in the same thread. */
int csr_patchcmd_run (const char *program, double timeout_s, const char *code,
                      const struct csr_diagnosis *d, int attempt, char **out, const char **why,
                      csr_error **err);

/* The last this many bytes of each output stream go into the request. */
#define CSR_PATCHCMD_TAIL_MAX 4096

/* What the attempt that failed gives the program, besides its code. */
struct csr_patchcmd_input
{
  const char *code;
  const struct csr_diagnosis *diagnosis; /* may be NULL */
  int attempt;                           /* the number of the attempt to come */
  const struct csr_gate_verdict *gate;   /* may be NULL; its violations when blocked */
  const struct csr_bbuf *out, *err;      /* may be NULL: the attempt's output */
};

/* The same, with the whole input: the request also carries "violations"
 * ([{"rule","line","col","message"}], empty unless the gate blocked the
 * code) and "stdout_tail"/"stderr_tail" (the last CSR_PATCHCMD_TAIL_MAX
 * bytes of each stream, cut on a UTF-8 character boundary, invalid bytes
 * replaced) with "stdout_truncated"/"stderr_truncated" (the tail is not all
 * the stream wrote). */
int csr_patchcmd_run_ex (const char *program, double timeout_s, const struct csr_patchcmd_input *in,
                         char **out, const char **why, csr_error **err);

/* Check before the first attempt that PROGRAM's first word (what /bin/sh
 * will run) exists: with a '/', an executable file at that path; else an
 * executable on PATH (the host's, or /usr/local/bin:/usr/bin:/bin as the
 * program gets), or a shell keyword or builtin.  A first word with shell
 * syntax in it (quotes, $, `, redirections, a variable assignment) is left
 * to the shell.  -1 with a one-line error ("--patch-cmd: fixer.sh: not
 * found on PATH"). */
int csr_patchcmd_check (const char *program, csr_error **err);

#endif
