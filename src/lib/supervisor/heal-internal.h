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
                char **out);

#endif
