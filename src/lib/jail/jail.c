#include "config.h"
#include "jail.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/syscalls.h"
#include "child.h"
#include "idmap.h"
#include "launch.h"

/* The cgroup namespace is unshared by the child itself, after it is in its
 * cgroup, so that cgroup is the namespace's root. */
#define JAIL_NS_FLAGS                                                                              \
  (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

void
jail_spec_init (struct jail_spec *spec)
{
  memset (spec, 0, sizeof *spec);
}

void
jail_snippet_init (struct jail_snippet *sn)
{
  memset (sn, 0, sizeof *sn);
  jail_spec_init (&sn->jail);
  sn->cwd = "/work";
  sn->hostname = "csrun";
  sn->tmp_size = 64ULL << 20;
  sn->tmp_inodes = 16384;
  sn->stdin_fd = sn->stdout_fd = sn->stderr_fd = -1;
}

static int
check_rootfs (const struct jail_spec *s, csr_error **err)
{
  struct stat st;
  if (s->rootfs_dir == NULL)
    return csr_error_set (err, EINVAL, "no rootfs given");
  if (stat (s->rootfs_dir, &st) < 0)
    return csr_error_errno (err, "rootfs %s", s->rootfs_dir);
  if (!S_ISDIR (st.st_mode))
    return csr_error_set (err, ENOTDIR, "rootfs %s", s->rootfs_dir);
  /* When the jail's root is not the rootfs owner (csrun as host root maps it
   * to an unprivileged id), the tree must be readable by others. */
  if (s->uid_map[0].outside != st.st_uid && (st.st_mode & 0005) != 0005)
    return csr_error_set (err, EACCES,
                          "rootfs %s must be readable and searchable by others (mode %03o): the "
                          "jail's root is host uid %u",
                          s->rootfs_dir, (unsigned)(st.st_mode & 0777),
                          (unsigned)s->uid_map[0].outside);
  return 0;
}

int
csr_jail_start (const struct jail_snippet *spec, struct csr_jail *jail, csr_error **err)
{
  struct jail_snippet s = *spec;
  csr_idmap_default (&s.jail, geteuid (), getegid ());
  jail->pid = -1;
  jail->pidfd = jail->syncfd = -1;
  if (s.argv == NULL || s.argv[0] == NULL || s.argv[0][0] != '/')
    return csr_error_set (err, EINVAL, "the jail's program must be an absolute path");
  if (check_rootfs (&s.jail, err) < 0)
    return -1;
  struct csr_launch l = {
    .spec = &s.jail,
    .face = &s,
    .entry = csr_snippet_entry,
    .clone_flags = s.host_net ? JAIL_NS_FLAGS & ~(uint64_t)CLONE_NEWNET : JAIL_NS_FLAGS,
    .write_idmaps = true,
    .what = "jail",
    .prefix_error = true,
  };
  /* issue 15, --disk: into the held user namespace, the mounts copied
   * from the held mount namespace; the jail is still our child. */
  struct csr_launch_ns join[2]
      = { { s.join_userns, CLONE_NEWUSER }, { s.join_mntns, CLONE_NEWNS } };
  if (s.join_userns && s.join_mntns)
    {
      l.join = join;
      l.n_join = 2;
      l.join_as_child = true;
      l.clone_flags &= ~(uint64_t)CLONE_NEWUSER;
      l.write_idmaps = false;
    }
  struct csr_launched out;
  if (csr_launch (&l, &out, err) < 0)
    return -1;
  jail->pid = out.pid;
  jail->pidfd = out.pidfd;
  jail->syncfd = out.syncfd;
  return 0;
}

int
csr_jail_kill (struct csr_jail *jail, int sig)
{
  if (jail->pid <= 0)
    return 0;
  if (jail->pidfd >= 0)
    return csr_pidfd_send_signal (jail->pidfd, sig);
  return kill (jail->pid, sig);
}

int
csr_jail_kill_payload (struct csr_jail *jail)
{
  if (jail->pid <= 0)
    return 0;
  char path[64], buf[256];
  snprintf (path, sizeof path, "/proc/%d/task/%d/children", (int)jail->pid, (int)jail->pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  int killed = 0;
  for (char *p = buf, *end; *p; p = end)
    {
      long pid = strtol (p, &end, 10);
      if (end == p)
        break;
      /* Init has not reaped its children yet, so these pids can't be reused. */
      if (pid > 0 && kill ((pid_t)pid, SIGKILL) == 0)
        killed++;
    }
  return killed;
}

int
csr_jail_wait (struct csr_jail *jail, struct csr_jail_exit *ex, csr_error **err)
{
  int status;
  struct rusage ru;
  memset (ex, 0, sizeof *ex);
  for (;;)
    {
      pid_t p = wait4 (jail->pid, &status, 0, &ru);
      if (p == jail->pid)
        break;
      if (p < 0 && errno != EINTR)
        return csr_error_errno (err, "wait for the jail");
    }
  jail->pid = -1;
  ex->cpu_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec
               + (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
  ex->maxrss_kib = (uint64_t)ru.ru_maxrss;
  /* The payload's own status, if init lived to report it. */
  struct csr_sync_msg m;
  ssize_t r;
  while ((r = recv (jail->syncfd, &m, sizeof m, MSG_DONTWAIT)) == (ssize_t)sizeof m)
    if (m.type == CSR_SYNC_EXIT)
      {
        status = m.status;
        break;
      }
  if (WIFEXITED (status))
    {
      ex->exited = true;
      ex->exit_code = WEXITSTATUS (status);
    }
  else if (WIFSIGNALED (status))
    ex->signal = WTERMSIG (status);
  return 0;
}

void
csr_jail_release (struct csr_jail *jail)
{
  if (jail->pid > 0)
    {
      csr_jail_kill (jail, SIGKILL);
      while (waitpid (jail->pid, NULL, 0) < 0 && errno == EINTR)
        ;
      jail->pid = -1;
    }
  if (jail->pidfd >= 0)
    close (jail->pidfd);
  if (jail->syncfd >= 0)
    close (jail->syncfd);
  jail->pidfd = jail->syncfd = -1;
}
