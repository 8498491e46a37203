/* csrun — the parts of a sandbox's keeper (keeper.h): each adds requests
 * and hooks.  A new part adds one line here. */
#include "config.h"
#include "keeper.h"

const struct keeper_part *const keeper_parts[] = {
  &keeper_part_core,
  &keeper_part_checkpoint,
  NULL,
};
