/* csrun — SHA-256 (FIPS 180-4), self-contained.
 *
 * csrun hashes every snippet on the hot path; linking libcrypto for that cost
 * more start-up time (library load and configuration) than the hashing itself. */
#include "config.h"
#include "digest.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"

#define DIGEST_READ_SIZE (256 * 1024)

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t
rotr (uint32_t x, int n)
{
  return (x >> n) | (x << (32 - n));
}

static void
compress (uint32_t h[8], const unsigned char *p)
{
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8
           | (uint32_t)p[4 * i + 3];
  for (int i = 16; i < 64; i++)
    {
      uint32_t s0 = rotr (w[i - 15], 7) ^ rotr (w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr (w[i - 2], 17) ^ rotr (w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++)
    {
      uint32_t t1
          = k + (rotr (e, 6) ^ rotr (e, 11) ^ rotr (e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
      uint32_t t2 = (rotr (a, 2) ^ rotr (a, 13) ^ rotr (a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      k = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += k;
}

static void
builtin_init (struct csr_sha256 *s)
{
  static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  memcpy (s->h, iv, sizeof iv);
  s->len = 0;
  s->fill = 0;
}

static void
builtin_update (struct csr_sha256 *s, const void *data, size_t len)
{
  const unsigned char *p = data;
  s->len += len;
  if (s->fill)
    {
      size_t take = 64 - s->fill < len ? 64 - s->fill : len;
      memcpy (s->block + s->fill, p, take);
      s->fill += take;
      p += take;
      len -= take;
      if (s->fill < 64)
        return;
      compress (s->h, s->block);
      s->fill = 0;
    }
  for (; len >= 64; p += 64, len -= 64)
    compress (s->h, p);
  memcpy (s->block, p, len);
  s->fill = len;
}

static void
builtin_final (struct csr_sha256 *s, char out[CSR_SHA256_HEX_LEN + 1])
{
  uint64_t bits = s->len * 8;
  unsigned char pad[72] = { 0x80 };
  size_t padlen = (s->fill < 56 ? 56 : 120) - s->fill;
  for (int i = 0; i < 8; i++)
    pad[padlen + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
  builtin_update (s, pad, padlen + 8);
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++)
    {
      unsigned char byte = (unsigned char)(s->h[i / 4] >> (24 - 8 * (i % 4)));
      out[2 * i] = hex[byte >> 4];
      out[2 * i + 1] = hex[byte & 0x0f];
    }
  out[CSR_SHA256_HEX_LEN] = '\0';
}

/* ---------------------------------------------------------------- libcrypto */

#ifndef CSR_LIBCRYPTO_SONAME
#define CSR_LIBCRYPTO_SONAME "libcrypto.so.3"
#endif

/* Loaded on first use by csr_sha256_init_fast (csrun is single-threaded
 * where it hashes in bulk). */
static struct
{
  int state; /* 0 not tried, 1 loaded, -1 unavailable */
  void *(*ctx_new) (void);
  void (*ctx_free) (void *);
  const void *(*sha256) (void);
  int (*init) (void *, const void *, void *);
  int (*update) (void *, const void *, size_t);
  int (*final) (void *, unsigned char *, unsigned int *);
} ossl;

static bool
ossl_load (void)
{
  if (ossl.state != 0)
    return ossl.state > 0;
  ossl.state = -1;
  if (getenv ("CSRUN_NO_LIBCRYPTO") != NULL)
    return false;
  void *h = dlopen (CSR_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    return false;
  *(void **)&ossl.ctx_new = dlsym (h, "EVP_MD_CTX_new");
  *(void **)&ossl.ctx_free = dlsym (h, "EVP_MD_CTX_free");
  *(void **)&ossl.sha256 = dlsym (h, "EVP_sha256");
  *(void **)&ossl.init = dlsym (h, "EVP_DigestInit_ex");
  *(void **)&ossl.update = dlsym (h, "EVP_DigestUpdate");
  *(void **)&ossl.final = dlsym (h, "EVP_DigestFinal_ex");
  if (!ossl.ctx_new || !ossl.ctx_free || !ossl.sha256 || !ossl.init || !ossl.update || !ossl.final)
    return false;
  ossl.state = 1;
  return true;
}

void
csr_sha256_init (struct csr_sha256 *s)
{
  builtin_init (s);
  s->evp = NULL;
  s->failed = false;
}

void
csr_sha256_init_fast (struct csr_sha256 *s)
{
  csr_sha256_init (s);
  if (!ossl_load ())
    return;
  void *ctx = ossl.ctx_new ();
  if (ctx == NULL)
    return;
  if (ossl.init (ctx, ossl.sha256 (), NULL) != 1)
    {
      ossl.ctx_free (ctx);
      return;
    }
  s->evp = ctx;
}

void
csr_sha256_update (struct csr_sha256 *s, const void *data, size_t len)
{
  if (s->evp == NULL)
    builtin_update (s, data, len);
  else if (len > 0 && ossl.update (s->evp, data, len) != 1)
    s->failed = true;
}

int
csr_sha256_final (struct csr_sha256 *s, char out[CSR_SHA256_HEX_LEN + 1])
{
  if (s->evp == NULL)
    {
      builtin_final (s, out);
      return 0;
    }
  unsigned char md[32];
  unsigned int n = 0;
  if (ossl.final (s->evp, md, &n) != 1 || n != sizeof md)
    s->failed = true;
  ossl.ctx_free (s->evp);
  s->evp = NULL;
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++)
    {
      out[2 * i] = hex[md[i] >> 4];
      out[2 * i + 1] = hex[md[i] & 0x0f];
    }
  out[CSR_SHA256_HEX_LEN] = '\0';
  if (s->failed)
    {
      out[0] = '\0';
      return -1;
    }
  return 0;
}

int
csr_sha256_buf (const void *data, size_t len, char out[CSR_SHA256_HEX_LEN + 1], csr_error **err)
{
  (void)err;
  struct csr_sha256 s;
  csr_sha256_init (&s);
  csr_sha256_update (&s, data, len);
  csr_sha256_final (&s, out);
  return 0;
}

/* Hash everything from the current offset of FD to end of file. */
int
csr_sha256_fd (int fd, char out[CSR_SHA256_HEX_LEN + 1], csr_error **err)
{
  cleanup_free unsigned char *buf = malloc (DIGEST_READ_SIZE);
  if (buf == NULL)
    return csr_error_errno (err, "sha256: cannot allocate a read buffer");
  (void)posix_fadvise (fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  struct csr_sha256 s;
  csr_sha256_init_fast (&s);
  for (;;)
    {
      ssize_t n = read (fd, buf, DIGEST_READ_SIZE);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          csr_sha256_final (&s, out);
          errno = saved;
          return csr_error_errno (err, "sha256: read");
        }
      if (n == 0)
        break;
      csr_sha256_update (&s, buf, (size_t)n);
    }
  if (csr_sha256_final (&s, out) < 0)
    return csr_error_set (err, 0, "sha256: libcrypto failed");
  return 0;
}
