/* csrun — mounts `csrun create` prepares before a container with a user
 * namespace of its own exists (see oci-premount.c). */
#ifndef CSRUN_OCI_PREMOUNT_H
#define CSRUN_OCI_PREMOUNT_H

#include <stddef.h>

#include "../util/error.h"
#include "spec.h"

struct oci_config;

struct csr_oci_premounts
{
  int *mount_fds; /* per config.mounts[i]: a detached clone of its bind source, or -1 */
  size_t n_mounts;
  int *device_fds; /* per linux.devices[i]: a detached mount of its node alone, or -1 */
  size_t n_devices;
};

/* As root, for a container that gets a user namespace of its own (its root
 * can neither mknod nor, often, reach a bind source that only the host's
 * root can): the bind sources of config.mounts opened (relative ones below
 * BUNDLE; rbind: with their submounts) and the linux.devices nodes made,
 * with their mode and with the host ids UID_MAP/GID_MAP give their uid and
 * gid, on a tmpfs of a short-lived helper's own mount namespace, as crun
 * does.  The container process inherits the descriptors and moves each one
 * into place (csr_oci_mounts_prepare).  What can't be prepared stays -1 (the
 * container then mounts or binds it itself, as before).  -1 only when out
 * of memory or descriptors. */
int csr_oci_premounts_make (const struct oci_config *c, const char *bundle,
                            const struct jail_spec *ids, struct csr_oci_premounts *p,
                            csr_error **err);
void csr_oci_premounts_release (struct csr_oci_premounts *p);

/* Entry I of FDS (N entries) handed over: the fd, -1 in its place. */
int csr_oci_premounts_take (int *fds, size_t n, size_t i);

#endif
