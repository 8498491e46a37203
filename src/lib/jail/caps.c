#include "config.h"
#include "caps.h"

#include <errno.h>
#include <grp.h>
#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

int
csr_caps_become_ns_id (uid_t uid, gid_t gid, csr_error **err)
{
  if (setgroups (0, NULL) < 0 && errno != EPERM)
    return csr_error_errno (err, "setgroups");
  if (setresgid (gid, gid, gid) < 0)
    return csr_error_errno (err, "setresgid %u", (unsigned)gid);
  if (setresuid (uid, uid, uid) < 0)
    return csr_error_errno (err, "setresuid %u", (unsigned)uid);
  return 0;
}

int
csr_caps_become_ns_root (csr_error **err)
{
  return csr_caps_become_ns_id (0, 0, err);
}

int
csr_caps_drop_all (uid_t uid, gid_t gid, csr_error **err)
{
  /* Bounding set first (needs CAP_SETPCAP, which we still have). */
  for (cap_value_t c = 0; c <= CAP_LAST_CAP || CAP_IS_SUPPORTED (c); c++)
    if (prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
      return csr_error_errno (err, "drop capability %d from the bounding set", (int)c);
  if (cap_reset_ambient () < 0 && errno != EINVAL)
    return csr_error_errno (err, "clear ambient capabilities");
  /* uid 0 gains nothing at execve(), and that can't be undone. */
  if (prctl (PR_SET_SECUREBITS,
             SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP
                 | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED
                 | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
             0, 0, 0)
      < 0)
    return csr_error_errno (err, "set securebits");
  /* NO_SETUID_FIXUP (locked above) keeps our capabilities across this switch
   * until they are cleared just below. */
  if (setresgid (gid, gid, gid) < 0)
    return csr_error_errno (err, "setresgid %u", (unsigned)gid);
  if (setresuid (uid, uid, uid) < 0)
    return csr_error_errno (err, "setresuid %u", (unsigned)uid);
  cap_t none = cap_init ();
  if (none == NULL)
    return csr_error_errno (err, "cap_init");
  int rc = cap_set_proc (none);
  int saved = errno;
  cap_free (none);
  if (rc < 0)
    return csr_error_set (err, saved, "clear capability sets");
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return csr_error_errno (err, "set no_new_privs");
  return 0;
}

static int
set_flag (cap_t c, cap_flag_t flag, uint64_t mask, csr_error **err)
{
  for (cap_value_t v = 0; v < 64; v++)
    if ((mask & (1ULL << v)) && CAP_IS_SUPPORTED (v) && cap_set_flag (c, flag, 1, &v, CAP_SET) < 0)
      return csr_error_errno (err, "capability %d", (int)v);
  return 0;
}

int
csr_caps_apply_oci (uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups,
                    const struct csr_cap_sets *sets, bool no_new_privs, csr_error **err)
{
  /* Bounding set first, while CAP_SETPCAP is ours. */
  for (cap_value_t c = 0; c <= CAP_LAST_CAP || CAP_IS_SUPPORTED (c); c++)
    if (!(sets->bounding & (1ULL << c)) && prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0
        && errno != EINVAL)
      return csr_error_errno (err, "drop capability %d from the bounding set", (int)c);
  /* Keep the permitted set across the uid change; set the sets after it. */
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return csr_error_errno (err, "keep capabilities");
  if (n_groups != CSR_CAPS_KEEP_GROUPS && setgroups (n_groups, groups) < 0
      && !(errno == EPERM && n_groups == 0))
    return csr_error_errno (err, "setgroups");
  if (setresgid (gid, gid, gid) < 0)
    return csr_error_errno (err, "setresgid %u", (unsigned)gid);
  if (setresuid (uid, uid, uid) < 0)
    return csr_error_errno (err, "setresuid %u", (unsigned)uid);
  cap_t c = cap_init ();
  if (c == NULL)
    return csr_error_errno (err, "cap_init");
  int rc = 0;
  if (set_flag (c, CAP_PERMITTED, sets->permitted, err) < 0
      || set_flag (c, CAP_EFFECTIVE, sets->effective, err) < 0
      || set_flag (c, CAP_INHERITABLE, sets->inheritable, err) < 0)
    rc = -1;
  else if (cap_set_proc (c) < 0)
    rc = csr_error_errno (err, "set the capability sets");
  cap_free (c);
  if (rc < 0)
    return -1;
  if (cap_reset_ambient () < 0 && errno != EINVAL)
    return csr_error_errno (err, "clear ambient capabilities");
  for (cap_value_t v = 0; v < 64; v++)
    if ((sets->ambient & (1ULL << v)) && CAP_IS_SUPPORTED (v)
        && prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, v, 0, 0) < 0)
      return csr_error_errno (err, "raise ambient capability %d", (int)v);
  if (no_new_privs && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return csr_error_errno (err, "set no_new_privs");
  return 0;
}
