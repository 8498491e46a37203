/* csrun — the mount tree of an OCI container (see oci-mounts.c). */
#ifndef CSRUN_OCI_MOUNTS_H
#define CSRUN_OCI_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

struct oci_config;
struct csr_oci_premounts;

/* Split OCI mount OPTIONS into mount(2) flags, a propagation flag
 * (MS_PRIVATE|MS_REC, ...; 0 if none) and the remaining data string
 * ("mode=755,size=65536k").  Extensions of other runtimes (tmpcopyup, z, ...)
 * are ignored. */
int csr_oci_parse_mount_options (char *const *options, size_t n, unsigned long *flags,
                                 unsigned long *propagation, char *data, size_t data_size,
                                 csr_error **err);

/* In the container's new mount namespace, before pivot_root: the root's
 * propagation, ROOTFS bound onto itself, config.mounts in order (relative
 * bind sources are relative to BUNDLE; PRE, when not NULL: what csrun create
 * prepared, each fd taken and closed), device nodes (PRE's, mknod, else a
 * bind of the host's node) and the /dev symlinks. */
int csr_oci_mounts_prepare (const struct oci_config *c, const char *rootfs, const char *bundle,
                            struct csr_oci_premounts *pre, csr_error **err);

/* pivot_root into ROOTFS (or, NO_PIVOT, move it to / and chroot). */
int csr_oci_mounts_enter (const struct oci_config *c, const char *rootfs, bool no_pivot,
                          csr_error **err);
/* After the sysctls are written: the masked and read-only paths (/proc/sys
 * among them), and a read-only root when asked. */
int csr_oci_mounts_finish (const struct oci_config *c, csr_error **err);

#endif
