/* csrun — the snippet jail's side of --in and --out: unpack the inputs'
 * pack below / before exec; after the payload's end, pack /work for the
 * supervisor (init does, see init.h). */
#ifndef CSRUN_JAIL_FILES_H
#define CSRUN_JAIL_FILES_H

#include "../util/error.h"
#include "spec.h"

/* Empty SPEC's output pack (a failed attempt leaves no stale one). */
void csr_jail_outputs_reset (const struct jail_snippet *spec);
/* Unpack SPEC->in_fd (when SPEC->has_inputs) below /, owned by SPEC's uid/gid. */
int csr_jail_unpack_inputs (const struct jail_snippet *spec, csr_error **err);
/* Remember PATH as written by csrun (not delivered unless changed). */
void csr_jail_note_written (const char *path);
/* Pack /work into SPEC->out_fd (init, after everything else ended). */
void csr_jail_pack_outputs (void *spec, int fd);

#endif
