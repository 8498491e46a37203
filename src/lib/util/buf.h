/* csrun — growing a byte buffer: the one doubling step that the string
 * builders (mcp's jsonrpc reader and output buffers, the LLM wire's, diff's
 * and the Python tokenizer's) and the kept standard input share. */
#ifndef CSRUN_UTIL_BUF_H
#define CSRUN_UTIL_BUF_H

#include <stddef.h>

/* Make *BUF (*CAP bytes, or none yet) hold at least NEED bytes: its size
 * doubled, from FIRST when it has none, until it does.  Returns 0, or -1
 * (ENOMEM, *BUF and *CAP as they were). */
int csr_buf_reserve (char **buf, size_t *cap, size_t need, size_t first);

#endif
