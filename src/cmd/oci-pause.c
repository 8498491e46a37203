/* csrun pause, resume: freeze and thaw the container's cgroup. */
#include "config.h"
#include "oci.h"
#include "oci-cmds.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <pwd.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail/procns.h"
#include "cgroup/cgroup.h"
#include "oci/devices.h"
#include "oci/hooks.h"
#include "oci/notify.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/parse.h"
#include "util/syscalls.h"

static int
freeze (struct csr_global *g, int argc, char **argv, bool on)
{
  struct simple_args a;
  cleanup_free char *root = NULL;
  struct oci_state st;
  if (open_container (g, argc, argv, false, &a, &root, &st))
    return 1;
  int rc = 0;
  csr_error *e = NULL;
  cleanup_cgroup struct csr_cgroup *cg = state_cgroup (&st);
  enum oci_status s = oci_state_status (&st);
  if (on ? s != OCI_RUNNING : s != OCI_PAUSED)
    rc = oci_failf (g, "cannot %s container '%s': it is %s", on ? "pause" : "resume", a.id,
                    oci_status_name (s));
  else if (cg == NULL)
    rc = oci_failf (g,
                    "cannot %s container '%s': it has no cgroup (no writable cgroup "
                    "hierarchy when it was created)",
                    on ? "pause" : "resume", a.id);
  else if (csr_cgroup_freeze (cg, on, &e) < 0)
    rc = oci_fail (g, e);
  else
    {
      st.paused = on;
      if (oci_state_save (root, &st, &e) < 0)
        rc = oci_fail (g, e);
    }
  oci_state_release (&st);
  return rc;
}

int
cmd_oci_pause (struct csr_global *g, int argc, char **argv)
{
  return freeze (g, argc, argv, true);
}

int
cmd_oci_resume (struct csr_global *g, int argc, char **argv)
{
  return freeze (g, argc, argv, false);
}
