/* csrun — the encoding of Python source (PEP 263), as Python's tokenizer finds it. */
#ifndef CSRUN_PYCODING_H
#define CSRUN_PYCODING_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* The encoding declaration of the source CODE[0..LEN): a comment on line 1,
 * or on line 2 when line 1 holds nothing but blanks or a comment, with
 * "coding:" or "coding=" then blanks and a name of letters, digits, '-', '_'
 * and '.' (PEP 263's ^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+), as CPython's
 * tokenizer applies it; a UTF-8 BOM before line 1 is skipped).  Copies the
 * name into NAME (CAP bytes, NUL-terminated, truncated) and returns its full
 * length; 0 when there is no declaration. */
size_t csr_pycoding_find (const char *code, size_t len, char *name, size_t cap);
/* True when NAME spells UTF-8 as Python reads it (utf-8, UTF_8, utf8, utf-8-...). */
bool csr_pycoding_is_utf8 (const char *name);
/* May CODE be handed to Python as a source file?  0 when it is well-formed
 * UTF-8, or when it is not but declares an encoding (its name, or "" for
 * UTF-8 source, goes to ENC; whether Python knows that codec is for the gate
 * in the jail to say: an unknown one is a syntax error there).  -1 with *ERR
 * ("not valid UTF-8 ...", no subject: the caller names the file) otherwise:
 * no declaration, or a UTF-8 BOM, which says the bytes are UTF-8. */
int csr_pycoding_check (const char *code, size_t len, char *enc, size_t cap, csr_error **err);

#endif
