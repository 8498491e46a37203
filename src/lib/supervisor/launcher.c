/* csrun — the default launcher: every attempt in a one-shot jail (launcher.h). */
#include "config.h"
#include "launcher.h"

#include <signal.h>
#include <sys/wait.h>

static int
jail_start (const struct csr_launcher *l, const struct csr_launch_req *r, struct csr_launched *p,
            csr_error **err)
{
  (void)l;
  if (csr_jail_start (r->spec, &p->jail, err) < 0)
    return -1;
  p->exit_fd = p->jail.pidfd;
  return 0;
}

static bool
jail_ended (struct csr_launched *p)
{
  siginfo_t si = { 0 };
  return waitid (P_PID, (id_t)p->jail.pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0
         && si.si_pid == p->jail.pid;
}

static int
jail_kill_payload (struct csr_launched *p)
{
  return csr_jail_kill_payload (&p->jail);
}

static void
jail_kill (struct csr_launched *p)
{
  csr_jail_kill (&p->jail, SIGKILL);
}

static int
jail_wait (struct csr_launched *p, struct csr_jail_exit *ex, csr_error **err)
{
  return csr_jail_wait (&p->jail, ex, err);
}

static void
jail_release (struct csr_launched *p)
{
  csr_jail_release (&p->jail);
}

const struct csr_launcher csr_launcher_jail = {
  .name = "jail",
  .one_shot = true,
  .reuse_unrun = true,
  .start = jail_start,
  .ended = jail_ended,
  .kill_payload = jail_kill_payload,
  .kill = jail_kill,
  .wait = jail_wait,
  .release = jail_release,
};
