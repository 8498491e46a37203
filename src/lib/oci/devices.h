/* csrun — the device cgroup of an OCI container (linux.resources.devices).
 *
 * What is enforced is always: deny every device, then the config's rules in
 * order, then the default devices (null, zero, full, random, urandom, tty,
 * console, ptmx, the /dev/pts terminals, /dev/net/tun, and mknod of any node), the last
 * matching rule deciding, access letter by access letter.  cgroup v1: the
 * devices hierarchy's devices.deny / devices.allow; cgroup v2: a
 * BPF_PROG_TYPE_CGROUP_DEVICE program attached to the container's cgroup
 * (devices-bpf.c).  Rootless there is no device cgroup (see csrun-oci(8)). */
#ifndef CSRUN_OCI_DEVICES_H
#define CSRUN_OCI_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "oci-config.h"

/* Longest "c 4294967295:4294967295 rwm" line, with its NUL. */
#define OCI_DEV_LINE_MAX 64

/* The rules to enforce for the config's rules USER (N of them): deny-all,
 * USER, the defaults.  Malloc'ed into *OUT (*N_OUT rules). */
int oci_devices_effective (const struct oci_dev_rule *user, size_t n, struct oci_dev_rule **out,
                           size_t *n_out, csr_error **err);

/* Whether RULES allow ACCESS (OCI_DEV_* bits) on the device TYPE ('c' or
 * 'b') MAJOR:MINOR: for each access letter asked for, the last rule that
 * matches the device and names that letter decides; no such rule denies.
 * An ACCESS of 0 is denied (what the BPF program does too). */
bool oci_devices_allows (const struct oci_dev_rule *rules, size_t n, char type, uint32_t major,
                         uint32_t minor, unsigned access);

/* R as a cgroup v1 line, "c 1:3 rwm" ("*" for any number; "a" alone for a
 * rule on every device with every letter).  Returns BUF. */
char *oci_dev_rule_format (const struct oci_dev_rule *r, char buf[OCI_DEV_LINE_MAX]);

/* The cgroup v1 form of RULES: a default (ALLOW_ALL false: deny, with allow
 * exceptions; true: allow, with deny exceptions) and the exceptions, each of
 * type 'c' or 'b' with distinct (type, major, minor).  v1 matches one
 * exception at a time and can't deny part of a wildcard exception: such rule
 * lists are refused (EINVAL, naming the rule), never approximated upwards.
 * What v1 enforces is never more than oci_devices_allows says. */
struct oci_dev_v1
{
  bool allow_all;
  struct oci_dev_rule *ex;
  size_t n;
};
int oci_devices_to_v1 (const struct oci_dev_rule *rules, size_t n, struct oci_dev_v1 *out,
                       csr_error **err);
void oci_devices_v1_release (struct oci_dev_v1 *v);

/* Apply deny-all + USER + defaults to the v1 devices cgroup DIR (the
 * directory holding devices.allow): from what devices.list says now, with
 * no moment where more is allowed than before or after (when both are
 * deny-by-default); then devices.list is read back and must match. */
int oci_devices_apply_v1 (const char *dir, const struct oci_dev_rule *user, size_t n,
                          csr_error **err);

/* The same as a BPF program attached to the v2 cgroup DIR (devices-bpf.c);
 * a program csrun attached before (an update) is replaced. */
int oci_devices_apply_v2 (const char *dir, const struct oci_dev_rule *user, size_t n,
                          csr_error **err);

/* Whether this process may program a device cgroup: euid 0 in the initial
 * user namespace.  Else (rootless, or root of a user namespace as under
 * rootless podman) neither a v1 devices cgroup nor a BPF program can be set. */
bool oci_devices_privileged (void);

#endif
