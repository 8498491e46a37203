/* csrun — the parts of a sandbox's keeper (keeper.h): each adds requests
 * and hooks.  A new part adds one line here. */
#include "config.h"
#include "keeper.h"
#include "ports.h"
#include "session.h"

#include "files-worker.h"

const struct keeper_part *const keeper_parts[] = {
  &keeper_part_core,
  &keeper_part_ports,
  &keeper_part_files,
  &keeper_part_run,        /* csrun sandbox run (keeper-run.c) */
  &keeper_part_session,    /* sessions (keeper-session.c) */
  &keeper_part_checkpoint, /* checkpoint, restore (keeper-checkpoint.c) */
  &keeper_part_detach,     /* exec --detach, wait, exec ls */
  &keeper_part_disk,       /* create --disk */
  NULL,
};
