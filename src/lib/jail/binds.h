/* csrun — --mount: host directories bound into the snippet jail. */
#ifndef CSRUN_BINDS_H
#define CSRUN_BINDS_H

#include "../util/error.h"
#include "spec.h"

#define CSR_MAX_BINDS 16

/* Clone each of SPEC's bind sources (open_tree, recursive), detached, and
 * set its flags: read-only unless rw, nosuid, nodev, private.  FDS gets
 * SPEC->n_binds descriptors.  Call while the host's paths are visible. */
int csr_binds_open (const struct jail_snippet *spec, int *fds, csr_error **err);

/* Attach them below NEWROOT (the rootfs, /work already mounted), making the
 * mount points: below /work in its tmpfs; below /data or /mnt in a small
 * read-only tmpfs put over the rootfs' directory first. */
int csr_binds_attach (const struct jail_snippet *spec, const int *fds, const char *newroot,
                      csr_error **err);

#endif
