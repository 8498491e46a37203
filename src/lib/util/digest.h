/* csrun — SHA-256 digests (OpenSSL libcrypto). */
#ifndef CSRUN_DIGEST_H
#define CSRUN_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define CSR_SHA256_HEX_LEN 64

/* OUT receives 64 lowercase hex digits and a NUL. */
int csr_sha256_buf (const void *data, size_t len, char out[CSR_SHA256_HEX_LEN + 1],
                    csr_error **err);
/* Incremental hashing: init, update any number of times, final (which
 * also releases what init took; -1 only when libcrypto failed). */
struct csr_sha256
{
  uint32_t h[8];
  uint64_t len; /* bytes hashed so far */
  unsigned char block[64];
  size_t fill;
  void *evp;   /* libcrypto's context (csr_sha256_init_fast), or NULL */
  bool failed; /* libcrypto reported an error */
};
void csr_sha256_init (struct csr_sha256 *s);
/* The same, with libcrypto's SHA-256 (SHA-NI/AVX2: about 6x faster) when
 * libcrypto can be loaded, for bulk data: unpacked trees, tarballs.  Not on
 * the hot path: loading libcrypto costs more than hashing a snippet. */
void csr_sha256_init_fast (struct csr_sha256 *s);
void csr_sha256_update (struct csr_sha256 *s, const void *data, size_t len);
int csr_sha256_final (struct csr_sha256 *s, char out[CSR_SHA256_HEX_LEN + 1]);
int csr_sha256_fd (int fd, char out[CSR_SHA256_HEX_LEN + 1], csr_error **err);

#endif
