/* csrun — the jail's mount tree: rootfs read-only, /proc, /dev, tmpfs, pivot_root. */
#ifndef CSRUN_MOUNTS_H
#define CSRUN_MOUNTS_H

#include "../util/error.h"
#include "spec.h"

/* Build the whole tree and pivot into it.  ROOTFS_FD is an O_PATH descriptor
 * of the rootfs directory opened by the supervisor (so no path lookup on the
 * host is needed from inside the user namespace).  Runs in the child, in its
 * new mount namespace, with the id maps already written. */
int csr_mounts_setup (const struct jail_spec *spec, int rootfs_fd, csr_error **err);

/* Write SPEC's files into the (already pivoted) working directory. */
int csr_mounts_write_files (const struct jail_spec *spec, csr_error **err);

#endif
