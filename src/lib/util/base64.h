/* csrun — base64 (RFC 4648, the standard alphabet): decoding what a client
 * sent (the MCP server's files), tolerant of line breaks and of missing
 * padding, strict about anything else; encoding what it reads back. */
#ifndef CSRUN_UTIL_BASE64_H
#define CSRUN_UTIL_BASE64_H

#include <stddef.h>

/* Decode IN (LEN bytes) into *OUT (malloc'ed, NUL-terminated; *OUT_LEN
 * bytes without the NUL).  -1 with errno EINVAL when IN is not base64
 * (*BAD is the offset of the first wrong byte), ENOMEM. */
int csr_base64_decode (const char *in, size_t len, char **out, size_t *out_len, size_t *bad);

/* IN (LEN bytes) in base64, padded, on one line: malloc'ed, NUL-terminated
 * (*OUT_LEN, may be NULL, is its length), or NULL (ENOMEM). */
char *csr_base64_encode (const void *in, size_t len, size_t *out_len);

#endif
