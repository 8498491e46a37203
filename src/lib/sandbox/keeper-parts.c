/* csrun — the parts of a sandbox's keeper (keeper.h): each adds requests
 * and hooks.  A new part adds one line here. */
#include "config.h"
#include "keeper.h"
#include "ports.h"
#include "session.h"

const struct keeper_part *const keeper_parts[] = {
  &keeper_part_core,
  &keeper_part_ports,
  &keeper_part_run,     /* issue 15: csrun sandbox run (keeper-run.c) */
  &keeper_part_session, /* issue 15: sessions (keeper-session.c) */
  NULL,
};
