#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/digest.h"

static void
check (const char *data, size_t len, const char *want)
{
  char out[CSR_SHA256_HEX_LEN + 1];
  cr_assert_eq (csr_sha256_buf (data, len, out, NULL), 0);
  cr_assert_str_eq (out, want, "sha256 of %zu bytes", len);
}

/* FIPS 180-4 / NIST example vectors. */
Test (digest, known_vectors)
{
  check ("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check ("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  check (two, strlen (two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test (digest, million_a_in_odd_chunks_through_a_file)
{
  char path[] = "/tmp/csrun-digest-XXXXXX";
  int fd = mkstemp (path);
  cr_assert_geq (fd, 0);
  unlink (path);
  char *buf = malloc (1000000);
  memset (buf, 'a', 1000000);
  size_t off = 0, step = 1;
  while (off < 1000000)
    {
      size_t n = step < 1000000 - off ? step : 1000000 - off;
      cr_assert_eq (write (fd, buf + off, n), (ssize_t)n);
      off += n;
      step = step * 3 + 1;
    }
  lseek (fd, 0, SEEK_SET);
  char out[CSR_SHA256_HEX_LEN + 1];
  cr_assert_eq (csr_sha256_fd (fd, out, NULL), 0);
  cr_assert_str_eq (out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  check (buf, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  /* Lengths around the 55/56/64-byte padding boundaries agree with sha256sum. */
  for (size_t n = 54; n <= 66; n++)
    {
      char cmd[128], want[65] = { 0 }, got[65];
      snprintf (cmd, sizeof cmd, "head -c %zu /dev/zero | tr '\\0' a | sha256sum", n);
      FILE *p = popen (cmd, "r");
      cr_assert (p && fread (want, 1, 64, p) == 64);
      pclose (p);
      csr_sha256_buf (buf, n, got, NULL);
      cr_assert_str_eq (got, want, "length %zu", n);
    }
  free (buf);
  close (fd);
}
