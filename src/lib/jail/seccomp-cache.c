/* csrun — the seccomp BPF cache: CACHE_DIR/seccomp/<KEY>.bpf, the program
 * seccomp.c compiles for a profile, kept so that the next run with the same
 * profile (podman sends the same large one every time) skips libseccomp. */
#include "config.h"
#include "seccomp-internal.h"

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/digest.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/trust.h"

/* ------------------------------------------------------------ the cache */

/* CACHE_DIR/seccomp/<KEY>.bpf, KEY the sha256 of the profile digest,
 * lenient or not, libseccomp's version and the native architecture (the
 * program depends on nothing else).  The cache directory and its seccomp
 * subdirectory pass csr_trust_open_dir/_open_subdir (ours, writable by nobody
 * else, no symlink followed), so only we can have written an entry; the
 * header (the key and the program's sha256) and check_bpf() then catch a torn,
 * stale or foreign file, which is recompiled and replaced, never loaded. */
/* Version 4: an entry comparing one argument more than once is one rule per
 * comparison (version 2 refused it); OCI profiles get the ENOSYS stub (3
 * did not).  Bump it whenever the same profile
 * compiles to another program, or an older csrun's entries would be used. */
#define CACHE_MAGIC "csrun-seccomp-cache 4\n"
#define CACHE_HEADER_LEN (sizeof CACHE_MAGIC - 1 + 2 * (4 + CSR_SHA256_HEX_LEN + 1))

static int
cache_key (const char *digest, bool lenient, char keyhex[CSR_SHA256_HEX_LEN + 1], csr_error **err)
{
  const struct scmp_version *v = seccomp_version ();
  char key[256];
  int n = snprintf (key, sizeof key, CACHE_MAGIC "%s%s\nlibseccomp %u.%u.%u\narch %u\n", digest,
                    lenient ? "-oci" : "", v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0,
                    seccomp_arch_native ());
  return csr_sha256_buf (key, (size_t)n, keyhex, err);
}

static void
cache_header (const char *keyhex, const char *bpfhex, char out[CACHE_HEADER_LEN + 1])
{
  snprintf (out, CACHE_HEADER_LEN + 1, CACHE_MAGIC "key %s\nbpf %s\n", keyhex, bpfhex);
}

/* 1 and *OUT on a hit, 0 on a miss (absent or unusable file). */
static int
cache_read (int dirfd, const char *name, const char *keyhex, const char *digest,
            struct csr_seccomp **out, csr_error **err)
{
  cleanup_error csr_error *e = NULL;
  cleanup_free char *data = NULL;
  size_t len = 0;
  if (csr_trust_read_at (dirfd, name, CACHE_HEADER_LEN + BPF_BYTES_MAX, &data, &len, &e) < 0)
    {
      if (e->status != ENOENT)
        csr_debug ("seccomp: cache: %s: recompiling", csr_error_text (e));
      return 0;
    }
  char want[CACHE_HEADER_LEN + 1], bpfhex[CSR_SHA256_HEX_LEN + 1];
  const char *bpf = data + CACHE_HEADER_LEN;
  size_t bpf_len = len - CACHE_HEADER_LEN;
  if (len <= CACHE_HEADER_LEN || csr_sha256_buf (bpf, bpf_len, bpfhex, NULL) < 0)
    bpfhex[0] = '\0';
  cache_header (keyhex, bpfhex, want);
  if (bpfhex[0] == '\0' || memcmp (data, want, CACHE_HEADER_LEN) != 0)
    {
      csr_debug ("seccomp: cache: '%s': not this profile's program: recompiling", name);
      return 0;
    }
  if (csr_seccomp_check_bpf (bpf, bpf_len, name, &e) < 0)
    {
      csr_debug ("seccomp: cache: %s: recompiling", csr_error_text (e));
      return 0;
    }
  char *copy = malloc (bpf_len);
  if (copy == NULL)
    return csr_error_errno (err, "seccomp: out of memory");
  memcpy (copy, bpf, bpf_len);
  if (csr_seccomp_make_result (copy, bpf_len, digest, out, err) < 0)
    return -1;
  return 1;
}

/* Best effort: the cache only saves time. */
static void
cache_write (int dirfd, const char *name, const char *keyhex, const char *bpf, size_t bpf_len)
{
  cleanup_error csr_error *e = NULL;
  char bpfhex[CSR_SHA256_HEX_LEN + 1];
  cleanup_free char *data = malloc (CACHE_HEADER_LEN + 1 + bpf_len);
  if (data == NULL || csr_sha256_buf (bpf, bpf_len, bpfhex, &e) < 0)
    return;
  cache_header (keyhex, bpfhex, data);
  memcpy (data + CACHE_HEADER_LEN, bpf, bpf_len);
  if (csr_trust_write_at (dirfd, name, data, CACHE_HEADER_LEN + bpf_len, 0600, &e) < 0)
    csr_debug ("seccomp: cache: %s", csr_error_text (e));
}

/* Compile JSON, or take its BPF from CACHE_DIR (may be NULL), keyed by the
 * digest of the profile (LENIENT is part of the key).  CSR_TRUST_REFUSED
 * when CACHE_DIR is not to be trusted. */
static int
compile_cached (const char *json, size_t len, bool lenient, const char *cache_dir,
                struct csr_seccomp **out, csr_error **err)
{
  char digest[CSR_SHA256_HEX_LEN + 1], keyhex[CSR_SHA256_HEX_LEN + 1];
  char name[CSR_SHA256_HEX_LEN + 8];
  if (csr_sha256_buf (json, len, digest, err) < 0 || cache_key (digest, lenient, keyhex, err) < 0)
    return -1;
  snprintf (name, sizeof name, "%s.bpf", keyhex);
  cleanup_close int dirfd = -1;
  if (cache_dir && *cache_dir)
    {
      dirfd = csr_trust_open_cache ("seccomp cache", cache_dir, "seccomp", err);
      if (dirfd == CSR_TRUST_REFUSED)
        return CSR_TRUST_REFUSED;
      int hit = dirfd >= 0 ? cache_read (dirfd, name, keyhex, digest, out, err) : 0;
      /* Its last use, for `csrun cache prune --older-than` (hourly). */
      if (hit > 0)
        csr_touch_if_older (dirfd, name, 3600);
      if (hit != 0)
        return hit < 0 ? -1 : 0;
    }
  char *bpf = NULL;
  size_t bpf_len = 0;
  if (csr_seccomp_compile_to_bpf (json, len, lenient, &bpf, &bpf_len, err) < 0)
    return -1;
  if (dirfd >= 0)
    cache_write (dirfd, name, keyhex, bpf, bpf_len);
  return csr_seccomp_make_result (bpf, bpf_len, digest, out, err);
}

int
csr_seccomp_load (const char *path, const char *cache_dir, struct csr_seccomp **out,
                  csr_error **err)
{
  cleanup_free char *json = NULL;
  size_t len = 0;
  if (csr_read_file (path, PROFILE_MAX, &json, &len, err) < 0)
    return csr_error_wrap (err, "seccomp profile");
  int r = compile_cached (json, len, false, cache_dir, out, err);
  if (r < 0)
    {
      csr_error_wrap (err, "%s", path);
      return r;
    }
  return 0;
}

int
csr_seccomp_compile_oci_cached (const char *json, size_t len, const char *cache_dir,
                                struct csr_seccomp **out, csr_error **err)
{
  return compile_cached (json, len, true, cache_dir, out, err);
}
