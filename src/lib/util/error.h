/* csrun — one error convention for the whole library.
 *
 * A function that can fail returns a negative value and, when err is not
 * NULL, fills *err with {errno, message}.  Callers add context with
 * csr_error_wrap().  Only the front ends in src/cmd/ print errors. */
#ifndef CSRUN_ERROR_H
#define CSRUN_ERROR_H

#include <stdarg.h>

typedef struct csr_error
{
  int status; /* errno value, 0 when not an OS error */
  char *msg;  /* complete message, without strerror() appended */
} csr_error;

/* Set *err (if err != NULL and *err == NULL) and return -1 (or -status). */
int csr_error_set (csr_error **err, int status, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
int csr_error_setv (csr_error **err, int status, const char *fmt, va_list ap);
/* Shorthand for csr_error_set (err, errno, ...). */
#define csr_error_errno(err, ...) csr_error_set ((err), errno, __VA_ARGS__)
/* Prefix the message of *err with "context: ". Returns -1. */
int csr_error_wrap (csr_error **err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* "msg: strerror(status)" or just "msg"; never NULL. The string belongs to err. */
const char *csr_error_text (csr_error *err);
void csr_error_free (csr_error *err);
void csr_error_freep (csr_error **err);
#define cleanup_error __attribute__ ((cleanup (csr_error_freep)))

#endif
