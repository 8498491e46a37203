#include "config.h"
#include "gatecode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/digest.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/trust.h"
#include "capture.h"
#include "launch.h"

/* fd 4 holds "csrun-gate N\n", the gate's source (N bytes), then the code
 * compiled by this very interpreter ("<sys.version>\n<marshal data>") when
 * it could be compiled.  The bootstrap loads that code, else compiles the
 * source (fd 4's, or argv[1] when there is no fd 4: the source is not passed
 * in argv when there is, since Python decodes every argument at start-up);
 * either way argv[1] goes, and fd 4 is closed before the gate (and so the
 * snippet) runs. */
/* The bootstrap's function (issue 17: a zygote runs it too, see zygote.c). */
#define GATE_BOOT_DEF                                                                              \
  "import sys\n"                                                                                   \
  "def _csrun_boot():\n"                                                                           \
  "    src = sys.argv.pop(1)\n"                                                                    \
  "    try:\n"                                                                                     \
  "        f = open(4, 'rb')\n"                                                                    \
  "    except OSError:\n"                                                                          \
  "        return compile(src, '<csrun-gate>', 'exec')\n"                                          \
  "    with f:\n"                                                                                  \
  "        data = memoryview(f.read())\n"                                                          \
  "    if data[:11] == b'csrun-gate ':\n"                                                          \
  "        nl = bytes(data[:64]).index(b'\\n')\n"                                                  \
  "        n = int(bytes(data[11:nl])) + nl + 1\n"                                                 \
  "        if not src:\n"                                                                          \
  "            src = data[nl + 1:n].tobytes().decode()\n"                                          \
  "        data = data[n:]\n"                                                                      \
  "    tag = sys.version.encode() + b'\\n'\n"                                                      \
  "    if data[:len(tag)] == tag:\n"                                                               \
  "        try:\n"                                                                                 \
  "            import marshal\n"                                                                   \
  "            code, resolver = marshal.loads(data[len(tag):])\n"                                  \
  "            if resolver is not None:\n"                                                         \
  "                globals()['_RESOLVER_CODE'] = resolver\n"                                       \
  "            return code\n"                                                                      \
  "        except Exception:\n"                                                                    \
  "            pass\n"                                                                             \
  "    return compile(src, '<csrun-gate>', 'exec')\n"

const char csr_gate_boot_def_py[] = GATE_BOOT_DEF;
const char csr_gate_boot_py[] = GATE_BOOT_DEF "exec(_csrun_boot())\n";

/* Compiles the gate and the resolver it keeps as source in _RESOLVER (so a
 * snippet that needs the resolver does not pay for compiling it either). */
static const char compiler_py[]
    = "import sys, marshal, ast\n"
      "src = sys.argv[1]\n"
      "code = compile(src, '<csrun-gate>', 'exec')\n"
      "resolver = None\n"
      "for node in ast.parse(src).body:\n"
      "    if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)\n"
      "            and isinstance(node.value.value, str)\n"
      "            and any(getattr(t, 'id', None) == '_RESOLVER' for t in node.targets)):\n"
      "        resolver = compile(node.value.value, '<csrun gate resolver>', 'exec')\n"
      "sys.stdout.buffer.write(sys.version.encode() + b'\\n' + marshal.dumps((code, resolver)))\n";

#define MAX_CODE (4u << 20)

/* The cache: CACHE_DIR/gate/<first half of KEY>.bin, KEY the sha256 of the
 * gate's source, the compiler's, the rootfs path and the identity of its
 * python3.  The directories pass the trust check (util/trust.h), so only we
 * can have written an entry; its header (the whole KEY and the sha256 of the
 * code) ties it to this gate and this interpreter and catches a torn or
 * foreign file, which is compiled again and replaced, never handed over. */
#define CACHE_MAGIC "csrun-gate-cache 2\n"
#define CACHE_HEADER_LEN (sizeof CACHE_MAGIC - 1 + 2 * (5 + CSR_SHA256_HEX_LEN + 1))

static int
cache_key (const struct jail_snippet *base, char hex[CSR_SHA256_HEX_LEN + 1])
{
  char python[4096];
  struct stat st;
  snprintf (python, sizeof python, "%s/usr/bin/python3", base->jail.rootfs_dir);
  if (stat (python, &st) < 0)
    return -1;
  char *key_src = NULL;
  int n
      = asprintf (&key_src, "%s%c%s%c%s%c%llu:%llu:%lld.%ld", csr_gate_py, 0, compiler_py, 0,
                  base->jail.rootfs_dir, 0, (unsigned long long)st.st_ino,
                  (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  if (n < 0)
    return -1;
  int r = csr_sha256_buf (key_src, (size_t)n, hex, NULL);
  free (key_src);
  return r;
}

static void
cache_header (const char *keyhex, const char *codehex, char out[CACHE_HEADER_LEN + 1])
{
  snprintf (out, CACHE_HEADER_LEN + 1, CACHE_MAGIC "key  %s\ncode %s\n", keyhex, codehex);
}

/* The payload of a valid entry (malloc'ed), or NULL. */
static char *
cache_read (int dirfd, const char *name, const char *keyhex, size_t *len)
{
  cleanup_error csr_error *e = NULL;
  cleanup_free char *data = NULL;
  size_t n = 0;
  if (csr_trust_read_at (dirfd, name, CACHE_HEADER_LEN + MAX_CODE, &data, &n, &e) < 0)
    {
      if (e->status != ENOENT)
        csr_debug ("gate cache: %s: compiling again", csr_error_text (e));
      return NULL;
    }
  char want[CACHE_HEADER_LEN + 1], codehex[CSR_SHA256_HEX_LEN + 1];
  if (n <= CACHE_HEADER_LEN
      || csr_sha256_buf (data + CACHE_HEADER_LEN, n - CACHE_HEADER_LEN, codehex, NULL) < 0)
    return NULL;
  cache_header (keyhex, codehex, want);
  if (memcmp (data, want, CACHE_HEADER_LEN) != 0)
    {
      csr_debug ("gate cache: '%s': not this gate's code: compiling again", name);
      return NULL;
    }
  *len = n - CACHE_HEADER_LEN;
  memmove (data, data + CACHE_HEADER_LEN, *len);
  return steal_pointer (&data);
}

static void
cache_write (int dirfd, const char *name, const char *keyhex, const char *code, size_t len)
{
  cleanup_error csr_error *e = NULL;
  char codehex[CSR_SHA256_HEX_LEN + 1];
  cleanup_free char *data = malloc (CACHE_HEADER_LEN + 1 + len);
  if (data == NULL || csr_sha256_buf (code, len, codehex, &e) < 0)
    return;
  cache_header (keyhex, codehex, data);
  memcpy (data + CACHE_HEADER_LEN, code, len);
  if (csr_trust_write_at (dirfd, name, data, CACHE_HEADER_LEN + len, 0600, &e) < 0)
    csr_debug ("caching the gate: %s", csr_error_text (e));
}

/* Compile the gate with the rootfs's interpreter, in a jail. */
static char *
compile_in_jail (const struct jail_snippet *base, size_t *len, csr_error **err)
{
  char *argv[] = { (char *)"/usr/bin/python3", (char *)"-I",        (char *)"-S", (char *)"-c",
                   (char *)compiler_py,        (char *)csr_gate_py, NULL };
  struct jail_snippet spec = *base;
  spec.argv = argv;
  spec.files = NULL;
  spec.n_files = 0;
  spec.n_extra_fds = 0;
  struct csr_capture_opts co = { .timeout_s = 30,
                                 .max_output = MAX_CODE,
                                 .passthrough_out = -1,
                                 .passthrough_err = -1,
                                 .interrupt_fd = -1 };
  struct csr_attempt a;
  memset (&a, 0, sizeof a);
  char *out = NULL;
  if (csr_capture_run (&spec, &co, &a, err) == 0 && a.exited && a.exit_code == 0
      && csr_bbuf_dropped (&a.out) == 0)
    out = csr_bbuf_contents (&a.out, len);
  /* "<sys.version>\n<marshal data>", or nothing usable. */
  if (out && (*len < 3 || memchr (out, '\n', *len) == NULL))
    {
      free (out);
      out = NULL;
    }
  csr_bbuf_release (&a.out);
  csr_bbuf_release (&a.err);
  csr_outseq_release (&a.seq);
  return out;
}

/* The memfd for fd 4: "csrun-gate N\n", the gate's source (N bytes), then
 * CODE (LEN bytes, none when the gate could not be compiled). */
static int
to_memfd (const char *code, size_t len, int *fd, csr_error **err)
{
  cleanup_close int m = memfd_create ("csrun-gate", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (m < 0)
    return csr_error_errno (err, "memfd_create");
  char head[64];
  size_t src_len = strlen (csr_gate_py);
  int hn = snprintf (head, sizeof head, "csrun-gate %zu\n", src_len);
  if (csr_write_all (m, head, (size_t)hn, err) < 0
      || csr_write_all (m, csr_gate_py, src_len, err) < 0
      || (len > 0 && csr_write_all (m, code, len, err) < 0))
    return -1;
  /* The jail can read it, nobody can change it. */
  fcntl (m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  if (lseek (m, 0, SEEK_SET) < 0)
    return csr_error_errno (err, "rewind the gate's memfd");
  *fd = steal_fd (&m);
  return 0;
}

int
csr_gate_code_fd (const struct jail_snippet *base, const char *cache_dir, int *fd, csr_error **err)
{
  *fd = -1;
  char keyhex[CSR_SHA256_HEX_LEN + 1], name[CSR_SHA256_HEX_LEN + 8];
  cleanup_close int dirfd = -1;
  cleanup_free char *data = NULL;
  size_t len = 0;
  if (cache_dir && cache_key (base, keyhex) == 0)
    {
      dirfd = csr_trust_open_cache ("gate cache", cache_dir, "gate", err);
      if (dirfd == CSR_TRUST_REFUSED)
        return CSR_TRUST_REFUSED;
      snprintf (name, sizeof name, "%.32s.bin", keyhex);
      if (dirfd >= 0)
        data = cache_read (dirfd, name, keyhex, &len);
      /* Its last use, for `csrun cache prune --older-than` (hourly). */
      if (data != NULL)
        csr_touch_if_older (dirfd, name, 3600);
    }
  if (data == NULL)
    {
      csr_error *e = NULL;
      data = compile_in_jail (base, &len, &e);
      if (data == NULL)
        {
          /* Not fatal: the bootstrap compiles the source itself. */
          csr_debug ("precompiling the gate failed: %s", e ? csr_error_text (e) : "no output");
          csr_error_free (e);
          len = 0;
        }
      else if (dirfd >= 0)
        cache_write (dirfd, name, keyhex, data, len);
    }
  return to_memfd (data, len, fd, err);
}
