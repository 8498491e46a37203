/* csrun — diagnosis of a failed attempt: parse a CPython traceback. */
#ifndef CSRUN_CLASSIFY_H
#define CSRUN_CLASSIFY_H

#include <stddef.h>

#include "../util/error.h"

struct csr_diagnosis
{
  char *error_type; /* "NameError", "json.decoder.JSONDecodeError", or a synthetic type:
                       StaticSafetyViolation, SyntaxError, Timeout, OutOfMemory, Signal,
                       SilentFailure, UnknownError */
  char *message;    /* the exception message (may be empty) */
  int line;         /* failing line in snippet.py (innermost snippet.py frame), 0 if unknown */
  char *context;    /* the snippet's lines around LINE ("N: text" lines, +-2), or NULL;
                       each line is "  N: text\n", the failing one "> N: text\n", numbers
                       right-aligned to the widest */
  const char *hint; /* advice about the jail itself (static: CSR_HINT_NO_NETWORK), or NULL */
};

/* Parse STDERR (the bounded text of the attempt) for the last traceback:
 * the final "Type: message" line (dotted names kept whole; an exception
 * group's top line; "During handling..." chains take the last exception),
 * the innermost frame in "snippet.py" (not the stdlib), and CODE's lines
 * around it.  SyntaxError tracebacks (File "snippet.py", line N ... caret)
 * give line N.  An exception group that stands for a single exception
 * (asyncio.TaskGroup) is reported as that exception.  Returns 1 when a
 * traceback was found, 0 when not (D is then filled with UnknownError and the
 * last non-empty stderr line as message).  D is overwritten, not released. */
int csr_classify_traceback (const char *stderr_text, size_t len, const char *code,
                            struct csr_diagnosis *d);
/* Fill D with a synthetic diagnosis (type, message, line 0 unless given): the strings are
 * copied (NULL message: ""), the context is computed from CODE when LINE > 0. */
void csr_diagnosis_set (struct csr_diagnosis *d, const char *type, const char *message, int line,
                        const char *code);
void csr_diagnosis_release (struct csr_diagnosis *d);

#endif
