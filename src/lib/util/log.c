#include "config.h"
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static enum csr_log_level current_level = CSR_LOG_WARNING;
static csr_log_sink sink;
static void *sink_data;

void
csr_log_set_sink (csr_log_sink fn, void *data)
{
  sink = fn;
  sink_data = data;
}

void
csr_log_set_level (enum csr_log_level level)
{
  current_level = level;
}

void
csr_log (enum csr_log_level level, const char *fmt, ...)
{
  if (level > current_level)
    return;
  int saved = errno;
  static const char *const names[] = { "error", "warning", "info", "debug" };
  va_list ap;
  va_start (ap, fmt);
  if (sink)
    {
      char *msg = NULL;
      if (vasprintf (&msg, fmt, ap) >= 0)
        {
          sink (level, msg, sink_data);
          free (msg);
        }
      va_end (ap);
      errno = saved;
      return;
    }
  fprintf (stderr, "csrun: %s: ", names[level]);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  errno = saved;
}
