/* csrun — a sandbox's read-only trees: the rootfs and, with --with, the
 * package layer above it (rootfs/layer.h), the one csrun run --with and
 * csrun rootfs add make.  The keeper resolves both and keeps them, and so
 * their use locks, for the sandbox's life (csrun cache prune leaves them);
 * create resolves them first in the caller's process, so that a layer is
 * built (or a package refused) where the caller sees it. */
#include "config.h"
#include "sandbox.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../rootfs/layer.h"
#include "../rootfs/rootfs.h"
#include "../util/cleanup.h"
#include "../util/datadir.h"
#include "../util/trust.h"

int
csr_sandbox_trees (const struct csr_sandbox_spec *s, const char *cache_dir,
                   struct csr_rootfs **rootfs, struct csr_layer **layer, csr_error **err)
{
  *rootfs = NULL;
  *layer = NULL;
  cleanup_free char *src = s->rootfs ? strdup (s->rootfs) : csr_find_rootfs ();
  if (src == NULL)
    return csr_error_set (err, ENOMEM, "find the rootfs");
  if (csr_rootfs_resolve (src, cache_dir, rootfs, err) < 0)
    return csr_error_wrap (err, "rootfs %s", src);
  if (s->with == NULL || s->with[0] == NULL)
    return 0;
  size_t n = 0;
  while (s->with[n])
    n++;
  if ((*rootfs)->sha256 == NULL)
    return csr_error_set (err, EINVAL,
                          "--with needs a rootfs tarball (a layer is keyed by its digest), not "
                          "the directory %s",
                          src),
           CSR_LAYER_BAD_PACKAGE;
  if (cache_dir == NULL)
    return csr_error_set (err, 0, "--with: no cache directory to keep the layer in");
  /* The canonical path: the layer is found below it. */
  cleanup_free char *canon = NULL;
  int fd = csr_trust_open_dir ("cache directory", cache_dir, 0700, &canon, err);
  if (fd < 0)
    return -1;
  close (fd);
  int lr = csr_layer_ensure ((*rootfs)->dir, (*rootfs)->sha256, canon, (const char *const *)s->with,
                             n, layer, err);
  if (lr < 0)
    return lr == CSR_LAYER_BAD_PACKAGE ? CSR_LAYER_BAD_PACKAGE : -1;
  return 0;
}
