#include "config.h"
#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *
xvasprintf (const char *fmt, va_list ap)
{
  char *s = NULL;
  if (vasprintf (&s, fmt, ap) < 0)
    return NULL;
  return s;
}

int
csr_error_setv (csr_error **err, int status, const char *fmt, va_list ap)
{
  if (err == NULL || *err != NULL)
    return -1;
  csr_error *e = calloc (1, sizeof *e);
  if (e == NULL)
    return -1;
  e->status = status;
  e->msg = xvasprintf (fmt, ap);
  *err = e;
  return -1;
}

int
csr_error_set (csr_error **err, int status, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  csr_error_setv (err, status, fmt, ap);
  va_end (ap);
  return -1;
}

int
csr_error_wrap (csr_error **err, const char *fmt, ...)
{
  if (err == NULL || *err == NULL)
    return -1;
  va_list ap;
  va_start (ap, fmt);
  char *ctx = xvasprintf (fmt, ap);
  va_end (ap);
  if (ctx == NULL)
    return -1;
  char *joined = NULL;
  if (asprintf (&joined, "%s: %s", ctx, (*err)->msg ? (*err)->msg : "") >= 0)
    {
      free ((*err)->msg);
      (*err)->msg = joined;
    }
  free (ctx);
  return -1;
}

const char *
csr_error_text (csr_error *err)
{
  if (err == NULL)
    return "unknown error";
  if (err->status == 0)
    return err->msg ? err->msg : "unknown error";
  /* Append the errno text once and cache it in msg. */
  char *joined = NULL;
  if (asprintf (&joined, "%s: %s", err->msg ? err->msg : "error", strerror (err->status)) < 0)
    return err->msg ? err->msg : "unknown error";
  free (err->msg);
  err->msg = joined;
  err->status = 0;
  return err->msg;
}

void
csr_error_free (csr_error *err)
{
  if (err == NULL)
    return;
  free (err->msg);
  free (err);
}

void
csr_error_freep (csr_error **err)
{
  csr_error_free (*err);
  *err = NULL;
}
