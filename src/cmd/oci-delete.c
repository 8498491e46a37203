/* csrun delete: kill what is left, run the poststop hooks, remove the
 * container's cgroup and state (--force, --regex). */
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

/* Wait until the container's process is gone (it is not our child). */
static bool
wait_gone (const struct oci_state *st, int ms)
{
  for (int waited = 0; waited <= ms; waited += 5)
    {
      if (oci_state_status (st) == OCI_STOPPED)
        return true;
      struct timespec ts = { 0, 5000000 };
      nanosleep (&ts, NULL);
    }
  return false;
}

/* The container's config as create kept it (false when it can't be read). */
static bool
load_kept_config (const struct oci_state *st, struct oci_config *cfg)
{
  memset (cfg, 0, sizeof *cfg);
  csr_error *e = NULL;
  if (st->config_path == NULL)
    return false;
  if (oci_config_load (st->config_path, cfg, &e) < 0)
    {
      csr_error_free (e);
      return false;
    }
  return true;
}

/* delete's poststop hooks, from CFG read before the state (and the config
 * kept in it) was removed; as run_hooks_logged otherwise. */
static void
run_poststop_hooks (const struct csr_global *g, const struct oci_state *st,
                    const struct oci_config *cfg)
{
  if (cfg->n_hooks[OCI_HOOK_POSTSTOP] == 0)
    return;
  csr_error *e = NULL;
  cleanup_free char *json = oci_state_json (st);
  cleanup_close int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (st->bundle && chdir (st->bundle) == 0)
    {
      if (oci_hooks_run (cfg, OCI_HOOK_POSTSTOP, json, &e) < 0)
        {
          oci_warn (g, "%s", csr_error_text (e));
          csr_error_free (e);
        }
      if (cwd >= 0)
        (void)!fchdir (cwd);
    }
}

/* Delete one container: created or stopped ones, and with FORCE running
 * or paused ones (killed first). */
static int
delete_one (struct csr_global *g, const char *root, const char *id, bool force)
{
  csr_error *e = NULL;
  struct oci_state st;
  if (oci_id_check (id, &e) < 0)
    return oci_fail (g, e);
  if (oci_state_load (root, id, &st, &e) < 0)
    {
      if (force && e->status == ENOENT)
        {
          csr_error_free (e);
          return 0;
        }
      return oci_fail (g, e);
    }
  int rc = 0;
  enum oci_status s = oci_state_status (&st);
  cleanup_cgroup struct csr_cgroup *cg = state_cgroup (&st);
  bool has_cg = cg != NULL;
  if (s != OCI_STOPPED && s != OCI_CREATED && !force)
    rc = oci_failf (g, "cannot delete container '%s' that is not stopped: %s", id,
                    oci_status_name (s));
  else
    {
      bool gone = true;
      if (s != OCI_STOPPED && st.pid > 0)
        {
          pid_t pids[4096];
          size_t n = csr_procns_pid_members (st.pid, pids, 4096);
          for (size_t i = 0; i < n; i++)
            kill (pids[i], SIGKILL);
          kill (st.pid, SIGKILL);
          if (s == OCI_PAUSED)
            thaw (g, &st);
          gone = wait_gone (&st, 5000);
          if (!gone && !has_cg)
            oci_warn (g, "container '%s': pid %d did not go away", id, (int)st.pid);
        }
      if (has_cg && csr_cgroup_delete (cg, &e) < 0)
        {
          /* Processes that can't die (frozen in another freezer cgroup, say)
           * keep the cgroup busy: it is left, the state goes (crun too). */
          if (!gone || e->status == ETIMEDOUT)
            e->status = EBUSY;
          oci_warn (g, "container '%s': its cgroup is left: %s", id, csr_error_text (e));
          csr_error_freep (&e);
        }
      /* The poststop hooks run after the state is gone, from the config
       * kept in it: read it first. */
      struct oci_config cfg;
      bool have_cfg = load_kept_config (&st, &cfg);
      if (oci_state_remove (root, id, &e) < 0)
        rc = oci_fail (g, e);
      else if (have_cfg)
        run_poststop_hooks (g, &st, &cfg);
      if (have_cfg)
        oci_config_release (&cfg);
    }
  oci_state_release (&st);
  return rc;
}

static int
delete_matching (struct csr_global *g, const char *root, const char *id, void *data)
{
  return delete_one (g, root, id, *(bool *)data);
}

/* csrun delete [--force] [--regex] ID */
int
cmd_oci_delete (struct csr_global *g, int argc, char **argv)
{
  static const char *const flags[] = { "--force", "-f", "--regex", "-r" };
  struct simple_args a;
  if (simple_parse (g, argc, argv, flags, 4, true, false, false, &a))
    return 1;
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  bool force = a.flag[0];
  if (a.flag[1])
    return for_each_matching (g, root, a.id, delete_matching, &force);
  return delete_one (g, root, a.id, force);
}
