/* csrun — create-time checks of an OCI config against the host, made before
 * anything is cloned, so that a config that would change the host fails
 * cleanly (one line, non-zero exit, nothing left behind):
 *
 *  - linux.sysctl: only keys a kernel namespace covers, and each only when
 *    the container has its own namespace of that kind (runc's and crun's
 *    rules);
 *  - no mount namespace: csrun then mounts nothing and only chroots into
 *    root.path, so what needs mounts (mounts, maskedPaths, readonlyPaths,
 *    root.readonly, linux.devices, rootfsPropagation) is refused;
 *  - linux.devices: made only in the container's own tmpfs /dev;
 *  - process.apparmorProfile: refused where the kernel has no AppArmor. */
#ifndef CSRUN_OCI_VALIDATE_H
#define CSRUN_OCI_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"
#include "oci-config.h"

/* One linux.sysctl KEY, with OWN the CLONE_NEW* flags of the namespaces the
 * container has of its own.  A key is components separated by '.' ("net.ipv4
 * .ip_default_ttl") or, when its first separator is '/', by '/' (sysctl(8)'s
 * other spelling, which lets a component hold a '.': "net/ipv4/conf/eth0.100/
 * rp_filter"); a component is letters, digits, '_', '-', ':', '@', '+' (and
 * '.' in the '/' spelling, but never "." or ".."), at most 255 bytes in all.
 * Accepted: net.* with CLONE_NEWNET; kernel.msgmax, kernel.msgmnb,
 * kernel.msgmni, kernel.sem, kernel.shmall, kernel.shmmax, kernel.shmmni,
 * kernel.shm_rmid_forced and fs.mqueue.* with CLONE_NEWIPC;
 * kernel.domainname with CLONE_NEWUTS.  kernel.hostname is refused (the
 * config's hostname field sets it, as runc and crun say), and so is every
 * other key (no namespace covers it: it would be the host's).  On success REL
 * (SIZE bytes) receives the path below /proc/sys ("net/ipv4/ip_default_ttl").
 * Pure: no I/O.  Errors name the key. */
int oci_sysctl_check (const char *key, unsigned long own, char *rel, size_t size, csr_error **err);

/* The CLONE_NEW* flags of the namespaces in C's linux.namespaces that are the
 * container's own: made for it, or joined by path when that namespace is not
 * the caller's own of that kind (nor that of pid 1 of the caller's pid
 * namespace).  runc makes this check for a network namespace given by path;
 * csrun makes it for every kind. */
unsigned long oci_config_own_namespaces (const struct oci_config *c);

/* How the container's /dev is provided: the last entry of C's mounts whose
 * destination is /dev (lexically: "/dev/", "//dev" are /dev) decides. */
enum oci_dev_kind
{
  OCI_DEV_NONE,  /* no mount at /dev (the rootfs's own directory), or another type */
  OCI_DEV_TMPFS, /* a tmpfs: csrun makes the default devices, links and linux.devices in it */
  OCI_DEV_BIND,  /* a bind mount (of the host's /dev, say): csrun leaves it alone */
};
enum oci_dev_kind oci_config_dev_kind (const struct oci_config *c);

/* Whether the mount destination DEST is lexically "/" or "/dev". */
bool oci_path_is_root (const char *dest);
bool oci_path_is_dev (const char *dest);

/* process.apparmorProfile PROFILE against the kernel's AppArmor switch, the
 * file ENABLED_PATH (OCI_APPARMOR_ENABLED: "Y" when AppArmor is on; absent
 * when the kernel has none).  NULL or "" is accepted; any other profile only
 * when AppArmor is on: runc (its write to /proc/self/attr/exec fails) and
 * crun ("AppArmor is not initialized correctly") refuse it on a host without
 * AppArmor, and the spec wants an error for a value that cannot be applied.
 * (Where AppArmor is on, csrun reads the profile and does not apply it:
 * csrun-oci(8).)  Returns 0, or -1 with one line naming the profile. */
#define OCI_APPARMOR_ENABLED "/sys/module/apparmor/parameters/enabled"
int oci_apparmor_check (const char *profile, const char *enabled_path, csr_error **err);

/* Every check above on C (a parsed config); the caller's namespaces are read
 * from /proc/self/ns.  Returns 0, or -1 with one line in *ERR. */
int oci_config_validate (const struct oci_config *c, csr_error **err);

#endif
