/* csrun — the jail's mount tree: rootfs read-only, /proc, /dev, tmpfs, pivot_root. */
#ifndef CSRUN_MOUNTS_H
#define CSRUN_MOUNTS_H

#include "../util/error.h"
#include "spec.h"

/* Step 1, still with the host identity (as host root the rootfs path may be
 * searchable by root only): make every mount private and mount the rootfs
 * on the assembly point: a read-only overlay when ROOTFS_DIR's parent holds
 * an empty ".empty" directory (the rootfs cache does; mountinfo then shows no
 * host path), else a bind mount of ROOTFS_FD, an O_PATH descriptor of
 * ROOTFS_DIR opened in this mount namespace.  LAYER_DIR (NULL: none) is a
 * package layer: the overlay's upper-most lower layer, read-only too. */
int csr_mounts_bind_rootfs (const char *rootfs_dir, const char *layer_dir, int rootfs_fd,
                            csr_error **err);

/* Step 2, as root of the user namespace: /proc, /dev, the tmpfs mounts,
 * pivot_root, and the rootfs made read-only. */
int csr_mounts_setup (const struct jail_snippet *spec, const int *bind_fds, csr_error **err);

/* Hide P: an empty read-only tmpfs over a directory, /dev/null over anything
 * else; nothing when P does not exist. */
int csr_mounts_mask (const char *p, csr_error **err);
/* Make P (and what is mounted below it) read-only, nosuid, nodev, noexec;
 * nothing when P does not exist. */
int csr_mounts_readonly (const char *p, csr_error **err);
/* Add MS_RDONLY/MS_NOSUID/MS_NODEV/MS_NOEXEC to the mount at PATH (mount_setattr,
 * else a bind remount that keeps the flags a user namespace must keep). */
int csr_mounts_restrict (const char *path, unsigned long flags, csr_error **err);
/* The same for PATH and every mount below it (mount_setattr AT_RECURSIVE;
 * without it, only PATH). */
int csr_mounts_restrict_tree (const char *path, unsigned long flags, csr_error **err);

/* issue 17: what a snippet jail's /proc is made of, for a warm jail, which
 * mounts and masks its own /proc itself (policies/zygote.py): the entries
 * masked and made read-only. */
struct csr_mounts_tables
{
  const char *const *masked;
  size_t n_masked;
  const char *const *readonly;
  size_t n_readonly;
};
void csr_mounts_tables (struct csr_mounts_tables *t);

/* Write SPEC's files into the (already pivoted) working directory. */
int csr_mounts_write_files (const struct jail_snippet *spec, csr_error **err);

#endif
