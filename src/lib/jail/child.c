#include "config.h"
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../util/syscalls.h"
#include "binds.h"
#include "caps.h"
#include "files.h"
#include "init.h"
#include "mounts.h"
#include "net.h"
#include "rlimit.h"
#include "../sandbox/layer.h" /* issue 15 */

/* Give the payload its descriptors: 0, 1, 2 from the spec (/dev/null when
 * -1) and the extra fds as 3, 4, ... (closed when -1: the gate's fd 5 when
 * the snippet is ./snippet.py, launcher.h).  Every source is first moved above FD_HIGH, so
 * no dup2() can clobber a source that happens to sit on a target number
 * (csrun may itself have been started with fd 0, 1 or 2 closed). */
#define FD_HIGH 64
static int
install_fds (const struct jail_snippet *spec, csr_error **err)
{
  int want[3 + CSR_MAX_EXTRA_FDS] = { spec->stdin_fd, spec->stdout_fd, spec->stderr_fd };
  size_t nx = spec->n_extra_fds < CSR_MAX_EXTRA_FDS ? spec->n_extra_fds : CSR_MAX_EXTRA_FDS;
  for (size_t i = 0; i < nx; i++)
    want[3 + i] = spec->extra_fds[i];
  int n = 3 + (int)nx;
  int high[3 + CSR_MAX_EXTRA_FDS];
  for (int i = 0; i < n; i++)
    {
      if (want[i] < 0 && i >= 3)
        high[i] = -1;
      else if (want[i] < 0)
        high[i] = open ("/dev/null", O_RDWR | O_CLOEXEC);
      else
        high[i] = fcntl (want[i], F_DUPFD_CLOEXEC, FD_HIGH);
      if (high[i] < 0 && (i < 3 || want[i] >= 0))
        return csr_error_errno (err, "prepare fd %d", i);
    }
  for (int i = 0; i < n; i++)
    if (high[i] >= 0 ? dup2 (high[i], i) < 0 : (close (i) < 0 && errno != EBADF))
      return csr_error_errno (err, "dup2 fd %d", i);
  return 0;
}

/* Runs in the payload (pid 2), forked by init: last steps, then execve. */
static void
start_payload (void *arg, int syncfd, const sigset_t *oldmask)
{
  const struct jail_snippet *spec = arg;
  csr_error *e = NULL;
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  for (int s = 1; s < NSIG; s++)
    sigaction (s, &dfl, NULL);
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  (void)oldmask;

  if (setsid () < 0)
    {
      csr_error_errno (&e, "setsid");
      csr_launch_fail (syncfd, e);
    }
  /* Keep the sync socket out of the way of the fds the payload gets. */
  int hsync = fcntl (syncfd, F_DUPFD_CLOEXEC, FD_HIGH);
  if (hsync < 0)
    {
      csr_error_errno (&e, "move the sync socket");
      csr_launch_fail (syncfd, e);
    }
  syncfd = hsync;
  if (install_fds (spec, &e) < 0 || csr_rlimits_apply (spec, &e) < 0)
    csr_launch_fail (syncfd, e);
  if (chdir (spec->cwd ? spec->cwd : "/work") < 0)
    {
      csr_error_errno (&e, "chdir %s", spec->cwd ? spec->cwd : "/work");
      csr_launch_fail (syncfd, e);
    }
  if (csr_caps_drop_all (spec->uid, spec->gid, &e) < 0)
    csr_launch_fail (syncfd, e);
  /* Everything but 0, 1, 2 and the extra fds goes at exec, the sync socket too. */
  if (csr_close_range (3 + (unsigned)spec->n_extra_fds, 1) < 0)
    {
      csr_error_errno (&e, "close inherited file descriptors");
      csr_launch_fail (syncfd, e);
    }
  /* Last: the seccomp filter (no_new_privs is set), then nothing but execve. */
  const void *bpf = spec->jail.seccomp_bpf;
  if (bpf && prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, bpf) < 0)
    {
      csr_error_errno (&e, "load the seccomp filter");
      csr_launch_fail (syncfd, e);
    }
  /* issue 15: a sandbox's holder (spec.h HOLD): init sees READY when the
   * exec pipe closes here; nothing of csrun's memory is readable. */
  if (spec->hold)
    csr_sandbox_hold ();
  execve (spec->argv[0], spec->argv, spec->envp);
  csr_error_errno (&e, "execve %s", spec->argv[0]);
  csr_launch_fail (syncfd, e);
}

void
csr_snippet_entry (const struct jail_spec *jail, void *face, const struct csr_launch_child *lc)
{
  const struct jail_snippet *spec = face;
  int syncfd = lc->syncfd;
  csr_error *e = NULL;
  /* --out: no stale pack from an earlier attempt; --mount: the host's
   * directories taken now, while the host's paths are still visible. */
  csr_jail_outputs_reset (spec);
  int bind_fds[CSR_MAX_BINDS];
  if (csr_binds_open (spec, bind_fds, &e) < 0)
    csr_launch_fail (syncfd, e);
  /* We are in our cgroup now (the launcher cloned us into it, we moved
   * ourselves, or the parent moved us before the go): make it the root of
   * a new cgroup namespace. */
  if (unshare (CLONE_NEWCGROUP) < 0)
    {
      csr_error_errno (&e, "unshare the cgroup namespace");
      csr_launch_fail (syncfd, e);
    }
  /* Open the rootfs in our own mount namespace: a descriptor from the
   * supervisor would point into the host's, which mount(2) refuses. */
  int rootfs_fd = open (jail->rootfs_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfs_fd < 0)
    {
      csr_error_errno (&e, "open the rootfs %s", jail->rootfs_dir);
      csr_launch_fail (syncfd, e);
    }
  /* issue 15: a sandbox's writable layer (src/lib/sandbox/layer.c): its
   * directories opened now, mounted as the namespace's root. */
  int layer_fds[CSR_SANDBOX_LAYER_FDS] = { -1, -1, -1, -1 };
  if (spec->layer_upper
          ? csr_sandbox_layer_open (spec, layer_fds, &e) < 0
          : csr_mounts_bind_rootfs (jail->rootfs_dir, jail->layer_dir, rootfs_fd, &e) < 0)
    csr_launch_fail (syncfd, e);
  close (rootfs_fd);
  /* A zygote's namespace maps no root (zygote.c): it stays its one id,
   * with the capabilities a new user namespace gives its first process. */
  if ((spec->zygote ? csr_caps_become_ns_id (spec->uid, spec->gid, &e)
                    : csr_caps_become_ns_root (&e))
          < 0
      || (spec->layer_upper && csr_sandbox_mount_layer (layer_fds, &e) < 0)
      || csr_mounts_setup (spec, bind_fds, &e) < 0)
    csr_launch_fail (syncfd, e);
  /* Die with the supervisor (set after the credential change, which clears it). */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    {
      csr_error_errno (&e, "set the parent-death signal");
      csr_launch_fail (syncfd, e);
    }
  /* If the supervisor died before PR_SET_PDEATHSIG took effect, stop here. */
  struct pollfd pfd = { .fd = syncfd, .events = POLLRDHUP };
  if (poll (&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLRDHUP)))
    _exit (125);
  const char *hn = spec->hostname ? spec->hostname : "csrun";
  if (sethostname (hn, strlen (hn)) < 0)
    {
      csr_error_errno (&e, "sethostname");
      csr_launch_fail (syncfd, e);
    }
  if (!spec->host_net && csr_net_loopback_up (&e) < 0)
    csr_launch_fail (syncfd, e);
  if (chdir (spec->cwd ? spec->cwd : "/work") < 0)
    {
      csr_error_errno (&e, "chdir %s", spec->cwd ? spec->cwd : "/work");
      csr_launch_fail (syncfd, e);
    }
  if (csr_mounts_write_files (spec, &e) < 0)
    csr_launch_fail (syncfd, e);
  /* --in: the inputs (a fresh copy for every attempt); what csrun wrote is
   * not delivered back by --out unless the snippet changed it. */
  for (size_t i = 0; spec->has_outputs && i < spec->n_files; i++)
    csr_jail_note_written (spec->files[i].path);
  if (csr_jail_unpack_inputs (spec, &e) < 0)
    csr_launch_fail (syncfd, e);
  struct csr_init_exit at_exit = { .fd = spec->has_outputs ? spec->out_fd : -1,
                                   .fn = csr_jail_pack_outputs,
                                   .arg = (void *)spec };
  /* A sandbox's holder (spec->hold) never execs: it gets its own copy. */
  csr_init_run (syncfd, start_payload, (void *)spec, &at_exit, !spec->hold);
}
