/* csrun — the file pack that carries --in inputs into the jail and --out
 * outputs out of it: a stream of entries (a header, the relative path, a
 * symlink target, the data), ended by an END entry.  It never leaves csrun,
 * so it is a small fixed format rather than tar; the reader checks every
 * header and path as if the writer were hostile. */
#ifndef CSRUN_PACK_H
#define CSRUN_PACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "digest.h"
#include "error.h"

enum csr_pack_type
{
  CSR_PACK_END = 0,
  CSR_PACK_REG = 1,
  CSR_PACK_DIR = 2,
  CSR_PACK_LNK = 3,
  CSR_PACK_SKIP = 4, /* not carried: REASON says why (no data) */
};

enum csr_pack_reason
{
  CSR_SKIP_NONE = 0,
  CSR_SKIP_SYMLINK,  /* a symbolic link: never followed */
  CSR_SKIP_SPECIAL,  /* a fifo, socket or device node */
  CSR_SKIP_OVER_CAP, /* past the size cap */
  CSR_SKIP_MOUNT,    /* a --mount'ed directory */
  CSR_SKIP_UNREADABLE,
  CSR_SKIP_DEEP, /* deeper than the walk goes */
};
const char *csr_pack_reason_text (enum csr_pack_reason r);

#define CSR_PACK_PATH_MAX 4096

struct csr_pack_entry
{
  enum csr_pack_type type;
  enum csr_pack_reason reason;
  uint32_t mode; /* permission bits only */
  uint64_t size; /* REG: the bytes that follow; SKIP: the file's size, for the report */
  char path[CSR_PACK_PATH_MAX]; /* relative: no leading '/', no empty, '.' or '..' component */
  char link[CSR_PACK_PATH_MAX]; /* LNK: the target (informative: never followed) */
};

/* Write E's header, path and link to FD (REG: the caller copies the data). */
int csr_pack_put (int fd, const struct csr_pack_entry *e, csr_error **err);
/* Copy exactly SIZE bytes from IN to OUT (SHA, when given, sees them);
 * a source that ends early is an error. */
int csr_pack_copy (int out, int in, uint64_t size, struct csr_sha256 *sha, csr_error **err);
/* Read the next header (and path, link) from FD into *E.  Returns 1 for an
 * entry, 0 at END, -1 on a short or malformed pack. */
int csr_pack_get (int fd, struct csr_pack_entry *e, csr_error **err);
/* Skip a REG entry's data. */
int csr_pack_skip_data (int fd, uint64_t size, csr_error **err);

/* REL is a clean relative path (the rules of csr_pack_entry.path). */
bool csr_pack_path_ok (const char *rel);

/* Open the directory that holds REL below ROOTFD, never following a symlink
 * or leaving ROOTFD (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS, one component at a time), making the missing
 * directories with DIRMODE when MKDIRS.  *LEAF points into REL.  Returns an
 * O_PATH directory fd. */
int csr_beneath_parent (int rootfd, const char *rel, bool mkdirs, mode_t dirmode, const char **leaf,
                        csr_error **err);

#endif
