#include "config.h"

/* csrun — the one freezer: v2 cgroup.freeze (state from cgroup.events), v1
 * freezer.state (FREEZING until every task is frozen), each waited for;
 * and the refusal of a cgroup frozen by someone else (csrun never thaws a
 * cgroup it did not freeze). */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/syscalls.h"
#include "cgroup-internal.h"
#include "mountinfo.h"

#define CG_TIMEOUT_MS 5000 /* freeze, thaw */

/* "frozen N" of cgroup.events: N, or -1 without that key. */
static int
events_frozen (const char *events)
{
  const char *p = events;
  while (p && *p)
    {
      if (strncmp (p, "frozen ", 7) == 0)
        return atoi (p + 7);
      p = strchr (p, '\n');
      if (p)
        p++;
    }
  return -1;
}

static int
freeze_v2 (const char *dir, bool freeze, csr_error **err)
{
  int rc = csr_cg_path_write (dir, "cgroup.freeze", freeze ? "1" : "0", err);
  if (rc < 0)
    return -1;
  if (rc > 0)
    return csr_error_set (err, ENOTSUP, "cgroup: %s has no cgroup.freeze", dir);
  long long deadline = csr_mono_ms () + CG_TIMEOUT_MS;
  long delay = 1;
  for (;;)
    {
      cleanup_free char *ev = NULL;
      rc = csr_cg_path_read (dir, "cgroup.events", &ev, err);
      if (rc < 0)
        return -1;
      int frozen = rc == 0 ? events_frozen (ev) : -1;
      if (frozen < 0 || frozen == (freeze ? 1 : 0))
        return 0;
      if (csr_mono_ms () > deadline)
        break;
      csr_cg_sleep_ms (delay);
      delay = delay < 50 ? delay * 2 : 50;
    }
  if (freeze)
    csr_cg_path_write (dir, "cgroup.freeze", "0", NULL);
  return csr_error_set (err, ETIMEDOUT, "cgroup: %s did not %s", dir, freeze ? "freeze" : "thaw");
}

static int
freeze_v1 (const char *dir, bool freeze, csr_error **err)
{
  const char *want = freeze ? "FROZEN" : "THAWED";
  long long deadline = csr_mono_ms () + CG_TIMEOUT_MS;
  long delay = 1;
  for (;;)
    {
      /* Writing FROZEN again retries tasks that were not frozen yet (the
       * state reads FREEZING meanwhile). */
      if (csr_cg_path_write (dir, "freezer.state", want, err) != 0)
        return csr_error_set (err, ENOENT, "cgroup: %s/freezer.state is missing", dir);
      cleanup_free char *st = NULL;
      if (csr_cg_path_read (dir, "freezer.state", &st, err) != 0)
        return csr_error_set (err, ENOENT, "cgroup: %s/freezer.state is missing", dir);
      csr_cg_rtrim (st);
      if (strcmp (st, want) == 0)
        return 0;
      if (csr_mono_ms () > deadline)
        break;
      csr_cg_sleep_ms (delay);
      delay = delay < 50 ? delay * 2 : 50;
    }
  if (freeze)
    csr_cg_path_write (dir, "freezer.state", "THAWED", NULL);
  return csr_error_set (err, ETIMEDOUT, "cgroup: %s did not %s", dir, freeze ? "freeze" : "thaw");
}

int
csr_cgroup_freeze (const struct csr_cgroup *cg, bool freeze, csr_error **err)
{
  /* Hybrid: the v1 freezer (as runc); the unified cgroup.freeze only
   * without one. */
  for (size_t i = 0; i < cg->n_v1 && i < CSR_CG_MAX_DIRS; i++)
    if (cg->v1[i] && csr_cg_path_exists (cg->v1[i], "freezer.state"))
      return freeze_v1 (cg->v1[i], freeze, err);
  if (cg->v2)
    return freeze_v2 (cg->v2, freeze, err);
  return csr_error_set (err, ENOTSUP, "cgroup: no freezer");
}

/* A frozen cgroup (itself or through an ancestor) would freeze the container
 * as soon as it joins: its set-up would hang, and a v1 task killed while
 * frozen stays in D state.  Refused, as runc refuses it ("container's cgroup
 * unexpectedly frozen"); csrun does not thaw a cgroup it did not freeze. */
int
csr_cg_check_not_frozen (const char *dir, bool v2, csr_error **err)
{
  cleanup_free char *st = NULL;
  bool frozen = false;
  if (v2)
    {
      if (csr_cg_path_read (dir, "cgroup.freeze", &st, NULL) == 0)
        frozen = atoi (st) == 1;
      cleanup_free char *ev = NULL;
      if (!frozen && csr_cg_path_read (dir, "cgroup.events", &ev, NULL) == 0)
        frozen = events_frozen (ev) == 1;
    }
  else if (csr_cg_path_read (dir, "freezer.state", &st, NULL) == 0)
    {
      csr_cg_rtrim (st);
      frozen = strcmp (st, "THAWED") != 0;
    }
  if (frozen)
    return csr_error_set (err, EBUSY,
                          "container's cgroup unexpectedly frozen: %s (thaw it first: csrun "
                          "does not thaw a cgroup it did not freeze)",
                          dir);
  return 0;
}
