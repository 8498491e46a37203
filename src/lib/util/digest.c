/* csrun — SHA-256 digests through the OpenSSL libcrypto EVP interface. */
#include "config.h"
#include "digest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cleanup.h"

#define DIGEST_READ_SIZE (256 * 1024)

static void
evp_md_ctx_freep (EVP_MD_CTX **ctx)
{
  if (*ctx)
    EVP_MD_CTX_free (*ctx);
}
#define cleanup_md_ctx __attribute__ ((cleanup (evp_md_ctx_freep)))

static void
to_hex (const unsigned char *md, unsigned int len, char out[CSR_SHA256_HEX_LEN + 1])
{
  static const char hex[] = "0123456789abcdef";
  for (unsigned int i = 0; i < len; i++)
    {
      out[2 * i] = hex[md[i] >> 4];
      out[2 * i + 1] = hex[md[i] & 0x0f];
    }
  out[2 * len] = '\0';
}

static int
digest_init (EVP_MD_CTX **ctx, csr_error **err)
{
  *ctx = EVP_MD_CTX_new ();
  if (*ctx == NULL)
    return csr_error_set (err, ENOMEM, "sha256: cannot allocate a digest context");
  if (EVP_DigestInit_ex (*ctx, EVP_sha256 (), NULL) != 1)
    return csr_error_set (err, 0, "sha256: EVP_DigestInit_ex failed");
  return 0;
}

static int
digest_final (EVP_MD_CTX *ctx, char out[CSR_SHA256_HEX_LEN + 1], csr_error **err)
{
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  if (EVP_DigestFinal_ex (ctx, md, &md_len) != 1 || md_len * 2 != CSR_SHA256_HEX_LEN)
    return csr_error_set (err, 0, "sha256: EVP_DigestFinal_ex failed");
  to_hex (md, md_len, out);
  return 0;
}

int
csr_sha256_buf (const void *data, size_t len, char out[CSR_SHA256_HEX_LEN + 1], csr_error **err)
{
  cleanup_md_ctx EVP_MD_CTX *ctx = NULL;
  if (digest_init (&ctx, err) < 0)
    return -1;
  if (len > 0 && EVP_DigestUpdate (ctx, data, len) != 1)
    return csr_error_set (err, 0, "sha256: EVP_DigestUpdate failed");
  return digest_final (ctx, out, err);
}

/* Hash everything from the current offset of FD to end of file. */
int
csr_sha256_fd (int fd, char out[CSR_SHA256_HEX_LEN + 1], csr_error **err)
{
  cleanup_md_ctx EVP_MD_CTX *ctx = NULL;
  if (digest_init (&ctx, err) < 0)
    return -1;
  cleanup_free unsigned char *buf = malloc (DIGEST_READ_SIZE);
  if (buf == NULL)
    return csr_error_errno (err, "sha256: cannot allocate a read buffer");
  (void)posix_fadvise (fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  for (;;)
    {
      ssize_t n = read (fd, buf, DIGEST_READ_SIZE);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return csr_error_errno (err, "sha256: read");
        }
      if (n == 0)
        break;
      if (EVP_DigestUpdate (ctx, buf, (size_t)n) != 1)
        return csr_error_set (err, 0, "sha256: EVP_DigestUpdate failed");
    }
  return digest_final (ctx, out, err);
}
