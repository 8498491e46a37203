/* csrun — entering a running container (see enter.h). */
#include "config.h"
#include "enter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../util/log.h"
#include "oci-child.h"
#include "procns.h"

static const struct
{
  const char *name;
  int flag;
} ns_kinds[CSR_ENTER_N_NS] = {
  /* The user namespace first (it owns the others), the mount namespace last
   * (it changes our root). */
  { "user", CLONE_NEWUSER }, { "ipc", CLONE_NEWIPC }, { "uts", CLONE_NEWUTS },
  { "net", CLONE_NEWNET },   { "pid", CLONE_NEWPID }, { "cgroup", CLONE_NEWCGROUP },
  { "mnt", CLONE_NEWNS },
};
#define MNT (CSR_ENTER_N_NS - 1)

void
csr_enter_init (struct csr_enter *en)
{
  en->target = -1;
  for (size_t i = 0; i < CSR_ENTER_N_NS; i++)
    en->ns[i] = -1;
  en->root = -1;
}

void
csr_enter_release (struct csr_enter *en)
{
  for (size_t i = 0; i < CSR_ENTER_N_NS; i++)
    if (en->ns[i] >= 0)
      close (en->ns[i]);
  if (en->root >= 0)
    close (en->root);
  csr_enter_init (en);
}

int
csr_enter_open (struct csr_enter *en, pid_t pid, csr_error **err)
{
  en->target = pid;
  for (size_t i = 0; i < CSR_ENTER_N_NS; i++)
    {
      int ours = csr_procns_is_ours (pid, ns_kinds[i].name);
      if (ours < 0 && errno == ENOENT && i != MNT)
        continue; /* a kernel without that kind */
      if (ours < 0)
        return csr_error_errno (err, "namespace %s of pid %d", ns_kinds[i].name, (int)pid);
      if (ours)
        continue;
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int)pid, ns_kinds[i].name);
      en->ns[i] = open (path, O_RDONLY | O_CLOEXEC);
      if (en->ns[i] < 0)
        return csr_error_errno (err, "open %s", path);
    }
  /* A container without a mount namespace of its own runs chrooted into
   * its rootfs (csrun-oci(8)): the process exec'd into it too. */
  if (en->ns[MNT] < 0)
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/root", (int)pid);
      en->root = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (en->root < 0)
        return csr_error_errno (err, "open %s", path);
    }
  return 0;
}

int
csr_enter_join (const struct csr_enter *en, csr_error **err)
{
  for (size_t i = 0; i < CSR_ENTER_N_NS; i++)
    if (en->ns[i] >= 0)
      {
        if (setns (en->ns[i], ns_kinds[i].flag) < 0)
          return csr_error_errno (err, "join the container's %s namespace", ns_kinds[i].name);
        csr_debug ("exec: joined the %s namespace of pid %d", ns_kinds[i].name, (int)en->target);
      }
  return 0;
}

__attribute__ ((noreturn)) static void
child_failed (int status_fd, unsigned char code)
{
  if (write (status_fd, &code, 1) != 1)
    fprintf (stderr, "csrun: report the failure: %s\n", strerror (errno));
  _exit (code);
}

/* In the forked child: wait for the go, the root, the process, execve. */
__attribute__ ((noreturn)) static void
spawn_child (const struct csr_enter *en, const struct csr_enter_process *p, int go, int st_w)
{
  char c;
  if (read (go, &c, 1) != 1)
    _exit (125);
  close (go);
  if (en->root >= 0 && (fchdir (en->root) < 0 || chroot (".") < 0))
    {
      fprintf (stderr, "csrun: chroot into the container's root: %s\n", strerror (errno));
      child_failed (st_w, 125);
    }
  char exe[PATH_MAX];
  csr_error *e = NULL;
  if (csr_oci_prepare_process_notify (p->proc, p->seccomp_bpf, p->listener_sock, p->console,
                                      p->preserve_fds, exe, sizeof exe, &e)
      < 0)
    {
      int st = e->status; /* csr_error_text folds it into the message */
      fprintf (stderr, "csrun: %s\n", csr_error_text (e));
      child_failed (st_w, st == ENOENT ? 127 : st == EACCES ? 126 : 125);
    }
  csr_debug ("exec: about to execve %s", exe);
  csr_oci_exec_process (p->proc, p->listener_sock < 0 ? p->seccomp_bpf : NULL, exe, st_w);
}

pid_t
csr_enter_spawn (const struct csr_enter *en, const struct csr_enter_process *p, int *go,
                 int *status, csr_error **err)
{
  int gop[2], stp[2];
  *go = *status = -1;
  if (pipe2 (gop, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe");
  if (pipe2 (stp, O_CLOEXEC) < 0)
    {
      csr_error_errno (err, "pipe");
      close (gop[0]);
      close (gop[1]);
      return -1;
    }
  /* The child's end of the status pipe above the fds --preserve-fds keeps
   * (their close-on-exec flag is cleared). */
  int st_w = fcntl (stp[1], F_DUPFD_CLOEXEC, 3 + p->preserve_fds + 8);
  close (stp[1]);
  pid_t pid = st_w < 0 ? -1 : fork ();
  if (pid == 0)
    {
      close (gop[1]);
      close (stp[0]);
      spawn_child (en, p, gop[0], st_w);
    }
  int saved = errno;
  if (st_w >= 0)
    close (st_w);
  close (gop[0]);
  if (pid < 0)
    {
      close (gop[1]);
      close (stp[0]);
      errno = saved;
      return csr_error_errno (err, st_w < 0 ? "dup" : "fork");
    }
  *go = gop[1];
  *status = stp[0];
  return pid;
}
