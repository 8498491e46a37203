/* csrun — running the hooks of a config.json stage (runtime-spec "hooks"). */
#ifndef CSRUN_OCI_HOOKS_H
#define CSRUN_OCI_HOOKS_H

#include "../util/error.h"
#include "oci-config.h"

/* Run the hooks of STAGE (OCI_HOOK_*) in order: each with its args (argv[0]
 * = path when args is empty) and env (nothing else inherited; without env,
 * PATH=the caller's PATH), STATE_JSON on
 * its standard input, the caller's stdout and stderr, in the caller's
 * namespaces and working directory, killed after its timeout.  The first
 * that fails stops the stage: -1 with "error running hook (createRuntime)
 * /usr/bin/x: exit status 3" (or "killed by signal 31: bad system call",
 * "timed out after 5 s"). */
int oci_hooks_run (const struct oci_config *c, int stage, const char *state_json, csr_error **err);

#endif
