/* csrun — a sandbox's jail, the parts that differ from a snippet jail (the
 * rest is the snippet face, jail/child.c): the root is a writable overlay
 * whose upper layer lives in the sandbox's state directory, and the payload
 * is a holder that keeps the namespaces until the sandbox is stopped. */
#ifndef CSRUN_SANDBOX_LAYER_H
#define CSRUN_SANDBOX_LAYER_H

#include "../jail/spec.h"
#include "../util/error.h"

/* The descriptors of a sandbox's overlay: the rootfs, the package layer
 * (--with; -1: none), upper/, ovl-work/. */
#define CSR_SANDBOX_LAYER_FDS 4

/* In the jail's child, step 1 of the mounts (instead of
 * csr_mounts_bind_rootfs), with the host identity: every mount private, and
 * FDS opened (O_PATH): SPEC->jail.rootfs_dir (the read-only lower layer),
 * SPEC->jail.layer_dir (the package layer above it, if any),
 * SPEC->layer_upper, SPEC->layer_work. */
int csr_sandbox_layer_open (const struct jail_snippet *spec, int fds[CSR_SANDBOX_LAYER_FDS],
                            csr_error **err);
/* Then as root of the user namespace (the overlay keeps its mounter's
 * credentials, which must be mapped there): the overlay of FDS on the
 * assembly point (lowerdir=layer:rootfs), nosuid and nodev; FDS are
 * closed. */
int csr_sandbox_mount_layer (int fds[CSR_SANDBOX_LAYER_FDS], csr_error **err);

#define CSR_SANDBOX_N_NS 7
extern const char *const csr_sandbox_ns_names[CSR_SANDBOX_N_NS];

/* The holder: not dumpable; sends its namespaces (csr_sandbox_ns_names'
 * order, SCM_RIGHTS with one byte) on fd 3, the keeper's socket; every
 * descriptor above 2 closed; waits for the signal that ends it.  Never
 * returns. */
__attribute__ ((noreturn)) void csr_sandbox_hold (void);

#endif
