/* csrun — what the files of the local healer share (heal.c dispatches to
 * one rule family a file: heal-imports.c, heal-concat.c, heal-py2.c;
 * heal-conf.c reads policies/heal.conf).  Not installed. */
#ifndef CSRUN_HEAL_INTERNAL_H
#define CSRUN_HEAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "heal.h"
#include "pytok.h"

/* Whether S[0..N) is a Python identifier (ASCII). */
bool heal_valid_identifier (const char *s, size_t n);
/* Names an import statement binds (tokens [I, END)): calls CB for each.
 * Returns false when the statement is not an import. */
bool heal_import_binds (const struct toks *t, size_t i, size_t end,
                        void (*cb) (const char *name, size_t len, void *data), void *data);

/* Every occurrence of a name in the code (heal-names.c): f-string
 * expressions included, never in other strings or comments. */
struct heal_use
{
  size_t start, end; /* byte offsets in the code */
  int line;
  bool attribute;  /* after a '.' */
  bool assigned;   /* before '=' or an augmented assignment (also a keyword argument) */
  bool binding;    /* after def, class, import, as, global, nonlocal, for */
  bool called;     /* before '(' */
  bool in_fstring; /* inside an f-string's {expression} */
};
struct heal_uses
{
  struct heal_use *v;
  size_t n, cap;
};
int heal_find_uses (const char *code, const char *name, size_t len, struct heal_uses *u);
void heal_uses_release (struct heal_uses *u);
/* Optimal string alignment distance (SIZE_MAX for names over 63 bytes). */
size_t heal_edit_distance (const char *a, size_t la, const char *b, size_t lb);
/* 1 when a name other than NAME and CHOSEN is at most DIST edits from
 * NAME: GLOBAL, a builtin or any name of CODE; else (an attribute) a name
 * of CODE after '.' or 'def'.  0 when not, -1 on ENOMEM. */
int heal_has_rival (const char *code, const char *name, const char *chosen, size_t dist,
                    bool global);
/* The 'quoted' word right after PREFIX in MSG, malloc'ed; NULL if none. */
char *heal_quoted_after (const char *msg, const char *prefix);

/* Rename NAME to TO (edits added to ED): HEAL_RENAME_PLAIN where NAME is a
 * name (not after '.'), HEAL_RENAME_ATTRIBUTE where it is .NAME,
 * HEAL_RENAME_IMPORTED both but after '.' (an import included).  No edit at
 * all (0) when a use binds NAME (NAME = ..., def NAME, a keyword argument,
 * for NAME in..., and for ATTRIBUTE any use that is not .NAME); 1 when
 * edits were added; -1 on ENOMEM. */
enum heal_rename
{
  HEAL_RENAME_PLAIN,
  HEAL_RENAME_ATTRIBUTE,
  HEAL_RENAME_IMPORTED,
};
int heal_rename_uses (const char *code, const char *name, const char *to, enum heal_rename w,
                      struct edits *ed);

/* The first token of the primary expression that ends at token I (a name,
 * a literal, a bracketed group, with .attr, calls and subscripts), or NONE. */
size_t heal_primary_start (const struct toks *t, size_t i);

/* The rules.  Each returns 0 with the patched program in *OUT (NULL when it
 * does not apply), or -1 when out of memory. */
/* missing-import (heal-imports.c): insert the imports CODE lacks. */
int heal_imports (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
                  const struct csr_heal_conf *c, const char *rootfs, char **out);
/* str-concat (heal-concat.c): wrap the non-str operands of the failing '+'
 * on line D->line in str(). */
int heal_str_concat (const char *code, const struct csr_diagnosis *d, char **out);
/* py2-print (heal-py2.c): Python 2 print statements as print() calls. */
int heal_print (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
                bool py2, char **out);

/* did-you-mean (heal-suggest.c): Python's "Did you mean: 'X'?" and the
 * gate's one-edit suggestions. */
int heal_suggest (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
                  char **out);
/* py2-idioms (heal-py2-idioms.c): the Python 2 idioms beyond print. */
/* PY2_KNOWN: the snippet is known to be Python 2 (its print statements). */
int heal_py2_idioms (const char *code, const struct csr_diagnosis *d,
                     const struct csr_gate_verdict *v, const struct csr_heal_conf *c,
                     bool py2_known, char **out);
/* foreign-method (heal-methods.c): other languages' method names. */
int heal_methods (const char *code, const struct csr_diagnosis *d, const struct csr_heal_conf *c,
                  char **out);
/* foreign-call (heal-methods.c): console.log(...), null and the like, for
 * unbound globals.  *IMPORTS (malloc'ed names, *N_IMPORTS of them): the
 * modules the replacements use (math of math.floor). */
int heal_foreign_calls (const char *code, const struct csr_diagnosis *d,
                        const struct csr_gate_verdict *v, const struct csr_heal_conf *c, char **out,
                        char ***imports, size_t *n_imports);
/* pasted-code (heal-paste.c): fences, a uniform indent, REPL prompts, tabs. */
int heal_paste (const char *code, const struct csr_diagnosis *d, const struct csr_gate_verdict *v,
                char **out);
/* submodule-import (heal-submodule.c): import a.b for a.b.x used with only import a. */
int heal_submodule (const char *code, const struct csr_diagnosis *d, const struct csr_heal_conf *c,
                    char **out);

#endif
