#include "config.h"
#include "caps.h"

#include <errno.h>
#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

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
