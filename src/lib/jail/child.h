/* csrun — the snippet face's child side: the set-up steps run in the new
 * namespaces (the snippet layout), then csrun's init and the payload's
 * final steps before execve. */
#ifndef CSRUN_CHILD_H
#define CSRUN_CHILD_H

#include "launch.h"
#include "spec.h"

/* The launcher's entry for the snippet jail (FACE: the struct jail_snippet
 * whose first member is SPEC): it becomes the jail's pid 1.  Never returns. */
__attribute__ ((noreturn)) void csr_snippet_entry (const struct jail_spec *spec, void *face,
                                                   const struct csr_launch_child *lc);

#endif
