/* csrun — a process in a new user namespace with a jail's id maps, without
 * the rest of the jail: for work on a sandbox's files while its own
 * namespaces are gone (a stopped sandbox's layer, a layer being restored
 * before the jail starts).  It sees owners and has capabilities over files
 * as the jail's processes would. */
#ifndef CSRUN_USERNS_H
#define CSRUN_USERNS_H

#include <sys/types.h>

#include "../util/error.h"
#include "spec.h"

/* Fork a process that makes a new user namespace, waits until the caller
 * has written SPEC's maps (csr_idmap_write), becomes 0:0 there (with every
 * capability of that namespace), then returns FN (ARG)'s value as its exit
 * status (125 and the message on fd 2 when the set-up fails).  It dies with
 * the caller (PR_SET_PDEATHSIG) and is not dumpable.  The mount namespace
 * stays the caller's: host paths work.  Returns its pid. */
pid_t csr_userns_fork (const struct jail_spec *spec, int (*fn) (void *), void *arg,
                       csr_error **err);

#endif
