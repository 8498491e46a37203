/* csrun — capabilities and privileges of the payload. */
#ifndef CSRUN_CAPS_H
#define CSRUN_CAPS_H

#include "../util/error.h"

#include <sys/types.h>

/* Switch to UID/GID (ids inside the user namespace), empty every capability
 * set (bounding, ambient, inheritable, permitted, effective), lock the
 * securebits so an exec as uid 0 grants nothing, and set no_new_privs. */
int csr_caps_drop_all (uid_t uid, gid_t gid, csr_error **err);

#endif
