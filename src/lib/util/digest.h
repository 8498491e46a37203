/* csrun — SHA-256 digests (OpenSSL libcrypto). */
#ifndef CSRUN_DIGEST_H
#define CSRUN_DIGEST_H

#include <stddef.h>

#include "error.h"

#define CSR_SHA256_HEX_LEN 64

/* OUT receives 64 lowercase hex digits and a NUL. */
int csr_sha256_buf (const void *data, size_t len, char out[CSR_SHA256_HEX_LEN + 1],
                    csr_error **err);
int csr_sha256_fd (int fd, char out[CSR_SHA256_HEX_LEN + 1], csr_error **err);

#endif
