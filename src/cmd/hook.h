/* csrun — `csrun hook STAGE`: an OCI hook (runtime-spec hooks, or podman's
 * hooks.d) that gates a container's Python program before it starts and
 * scans its log for silent failures after it stops.  Works under any OCI
 * runtime (runc, crun, csrun): see contrib/oci-hooks.d. */
#ifndef CSRUN_CMD_HOOK_H
#define CSRUN_CMD_HOOK_H

#include "cmd.h"

int cmd_hook (struct csr_global *g, int argc, char **argv);

#endif
