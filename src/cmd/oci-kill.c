/* csrun kill: signal a container (--all: every process of it; --regex). */
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

/* Signal one container (--all: every process of it). */
static int
kill_one (struct csr_global *g, const char *root, const char *id, int sig, bool all)
{
  struct oci_state st;
  if (load (g, root, id, &st))
    return 1;
  enum oci_status s = oci_state_status (&st);
  int rc = 0;
  if (all && s == OCI_STOPPED)
    {
      /* --all on a stopped container signals what is left in its cgroup
       * (usually nothing) and succeeds, as runc does. */
      pid_t pids[4096];
      cleanup_cgroup struct csr_cgroup *cg = state_cgroup (&st);
      size_t n = cg ? container_pids (&st, pids, 4096) : 0;
      for (size_t i = 0; i < n; i++)
        kill (pids[i], sig);
    }
  else if (s == OCI_STOPPED || s == OCI_CREATING)
    rc = oci_failf (g, "container '%s' is not running", id);
  else if (all)
    {
      pid_t pids[4096];
      size_t n = container_pids (&st, pids, 4096);
      for (size_t i = 0; i < n; i++)
        kill (pids[i], sig);
      if (n == 0 && kill (st.pid, sig) < 0)
        rc = oci_failf (g, "kill %d: %s", (int)st.pid, strerror (errno));
    }
  else if (kill (st.pid, sig) < 0)
    rc = oci_failf (g, "kill container '%s' (pid %d): %s", id, (int)st.pid, strerror (errno));
  /* A frozen process gets SIGKILL only when thawed (cgroup v1's freezer). */
  if (rc == 0 && s == OCI_PAUSED && sig == SIGKILL)
    thaw (g, &st);
  oci_state_release (&st);
  return rc;
}

struct kill_req
{
  int sig;
  bool all;
};

static int
kill_matching (struct csr_global *g, const char *root, const char *id, void *data)
{
  const struct kill_req *k = data;
  return kill_one (g, root, id, k->sig, k->all);
}

/* csrun kill [--all] [--regex] ID [SIGNAL] */
int
cmd_oci_kill (struct csr_global *g, int argc, char **argv)
{
  static const char *const flags[] = { "--all", "-a", "--regex", "-r" };
  struct simple_args a;
  if (simple_parse (g, argc, argv, flags, 4, true, true, false, &a))
    return 1;
  struct kill_req k = { .sig = SIGTERM, .all = a.flag[0] };
  csr_error *e = NULL;
  if (a.more && oci_parse_signal (a.more, &k.sig, &e) < 0)
    return oci_fail (g, e);
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  if (a.flag[1])
    return for_each_matching (g, root, a.id, kill_matching, &k);
  return kill_one (g, root, a.id, k.sig, k.all);
}
