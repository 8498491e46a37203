/* csrun — the only place library code may emit text: debug/warning messages
 * go to a sink the front end chose (stderr by default). */
#ifndef CSRUN_LOG_H
#define CSRUN_LOG_H

enum csr_log_level
{
  CSR_LOG_ERROR = 0,
  CSR_LOG_WARNING = 1,
  CSR_LOG_INFO = 2,
  CSR_LOG_DEBUG = 3,
};

void csr_log_set_level (enum csr_log_level level);
void csr_log (enum csr_log_level level, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* Send messages to FN instead of stderr (NULL: stderr again); FN gets the
 * level and the formatted message without a newline. */
typedef void (*csr_log_sink) (enum csr_log_level level, const char *msg, void *data);
void csr_log_set_sink (csr_log_sink fn, void *data);
#define csr_warn(...) csr_log (CSR_LOG_WARNING, __VA_ARGS__)
#define csr_debug(...) csr_log (CSR_LOG_DEBUG, __VA_ARGS__)

#endif
