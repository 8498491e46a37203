/* csrun — the container side of `csrun create`: join or make the config's
 * namespaces, build the mount tree, become the configured process (pid 1 of
 * its pid namespace, no csrun init), wait for `csrun start`, execve. */
#include "config.h"
#include "oci-child.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>

#include "../oci/oci-config.h"
#include "../oci/hooks.h"
#include "../oci/validate.h"
#include "../util/cleanup.h"
#include "../util/fdpass.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/syscalls.h"
#include "../util/tty.h"
#include "caps.h"
#include "seccomp-notify.h"
#include "launch.h"
#include "oci-mounts.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static int
join_namespaces (const struct oci_config *c, csr_error **err)
{
  for (size_t i = 0; i < c->n_namespaces; i++)
    {
      const struct oci_namespace *ns = &c->namespaces[i];
      if (ns->path == NULL)
        continue;
      cleanup_close int fd = open (ns->path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return csr_error_errno (err, "open namespace %s", ns->path);
      if (setns (fd, ns->flag) < 0)
        return csr_error_errno (err, "join namespace %s", ns->path);
    }
  return 0;
}

/* A procfs root at PATH: an O_PATH fd, or -1 with *ERR set. */
static int
open_procfs (const char *path, csr_error **err)
{
  int fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "open %s", path);
  struct statfs sf;
  struct stat st;
  if (fstatfs (fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC || fstat (fd, &st) < 0
      || st.st_ino != 1)
    {
      close (fd);
      return csr_error_set (err, 0, "%s is not a procfs root", path);
    }
  return fd;
}

/* linux.sysctl, checked again (oci_config_validate refused what is not the
 * container's at create time), written by this process, in the container's
 * namespaces (they decide what a file below /proc/sys stands for), below
 * sys/ of the container's /proc when that is a procfs root, else of
 * HOST_PROC (the procfs at /proc when the container was made); never
 * through a symlink or into another mount. */
static int
write_sysctls (const struct oci_config *c, int host_proc, csr_error **err)
{
  cleanup_close int own = open_procfs ("/proc", NULL);
  int procfd = own >= 0 ? own : host_proc;
  if (procfd < 0)
    return csr_error_set (err, 0, "linux.sysctl: no procfs to write through");
  for (size_t i = 0; i < c->n_sysctl; i++)
    {
      char rel[300] = "sys/";
      if (oci_sysctl_check (c->sysctl_keys[i], ~0UL, rel + 4, sizeof rel - 4, err) < 0)
        return -1;
      /* The domain name of the container's own UTS namespace (validated;
       * kernel.hostname is refused): the system call, which its user
       * namespace's root may make, where /proc/sys/kernel/domainname stays
       * the host root's file. */
      const char *v = c->sysctl_values[i];
      size_t len = strlen (v);
      if (strcmp (rel, "sys/kernel/domainname") == 0)
        {
          if (setdomainname (v, len) < 0)
            return csr_error_errno (err, "sysctl %s", c->sysctl_keys[i]);
          continue;
        }
      struct open_how how = { .flags = O_WRONLY | O_CLOEXEC | O_NOFOLLOW,
                              .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                                         | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
      cleanup_close int fd = (int)syscall (SYS_openat2, procfd, rel, &how, sizeof how);
      if (fd < 0)
        return csr_error_errno (err, "sysctl %s", c->sysctl_keys[i]);
      struct statfs sf;
      if (fstatfs (fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC)
        return csr_error_set (err, EINVAL, "sysctl %s: not a procfs file", c->sysctl_keys[i]);
      ssize_t w = write (fd, v, len);
      if (w < 0)
        return csr_error_errno (err, "sysctl %s", c->sysctl_keys[i]);
      if ((size_t)w != len)
        return csr_error_set (err, EIO, "sysctl %s: short write", c->sysctl_keys[i]);
    }
  return 0;
}

/* process.terminal: a pty from the container's devpts; the master goes to
 * the caller over the console socket, the slave becomes our stdio and
 * controlling terminal. */
static int
setup_terminal (const struct oci_config *c, int console, csr_error **err)
{
  cleanup_close int master = -1;
  cleanup_close int slave = -1;
  char name[64];
  if (csr_pty_open (&master, &slave, name, sizeof name, err) < 0)
    return -1;
  /* The process's user owns its terminal, the group stays devpts' (runc
   * does this for its stdio; an unmapped id or a read-only /dev leaves the
   * owner as it is, as there). */
  if (fchown (slave, c->uid, (gid_t)-1) < 0 && errno != EINVAL && errno != EPERM && errno != EROFS)
    return csr_error_errno (err, "chown %s", name);
  if (c->has_console_size)
    {
      struct winsize ws = { .ws_row = (unsigned short)c->console_height,
                            .ws_col = (unsigned short)c->console_width };
      (void)ioctl (slave, TIOCSWINSZ, &ws);
    }
  if (console >= 0)
    {
      char byte = 0;
      if (csr_send_fd (console, &byte, 1, master) < 0)
        return csr_error_errno (err, "send the terminal to the console socket");
      close (console);
    }
  if (setsid () < 0 || ioctl (slave, TIOCSCTTY, 0) < 0)
    return csr_error_errno (err, "make the terminal the controlling one");
  for (int fd = 0; fd < 3; fd++)
    if (dup2 (slave, fd) < 0)
      return csr_error_errno (err, "dup2 the terminal");
  return 0;
}

static int
apply_rlimits (const struct oci_config *c, csr_error **err)
{
  for (size_t i = 0; i < c->n_rlimits; i++)
    {
      struct rlimit rl = { .rlim_cur = c->rlimits[i].soft, .rlim_max = c->rlimits[i].hard };
      if (setrlimit ((__rlimit_resource_t)c->rlimits[i].resource, &rl) < 0)
        return csr_error_errno (err, "setrlimit %d", c->rlimits[i].resource);
    }
  return 0;
}

/* argv[0] through the process's PATH, as execvp would: the path into *OUT. */
static int
find_executable (const struct oci_config *c, char *out, size_t size, csr_error **err)
{
  const char *prog = c->args[0];
  if (strchr (prog, '/'))
    {
      snprintf (out, size, "%s", prog);
      if (access (out, X_OK) == 0)
        return 0;
      return csr_error_errno (err, "executable file `%s`", prog);
    }
  const char *path = DEFAULT_PATH;
  for (size_t i = 0; i < c->n_env; i++)
    if (strncmp (c->env[i], "PATH=", 5) == 0)
      path = c->env[i] + 5;
  int saw_eacces = 0;
  for (const char *p = path; *p;)
    {
      const char *end = strchrnul (p, ':');
      int len = (int)(end - p);
      snprintf (out, size, "%.*s%s%s", len, p, len ? "/" : "", prog);
      struct stat st;
      if (stat (out, &st) == 0 && S_ISREG (st.st_mode))
        {
          if (access (out, X_OK) == 0)
            return 0;
          saw_eacces = 1;
        }
      p = *end ? end + 1 : end;
    }
  if (saw_eacces)
    return csr_error_set (err, EACCES, "executable file `%s`: permission denied", prog);
  return csr_error_set (err, ENOENT, "executable file `%s` not found in $PATH", prog);
}

/* The environment csr_oci_exec_process hands to execve: the config's,
 * with what csr_oci_prepare_process and csr_oci_child_main add (HOME,
 * LISTEN_FDS).  One process, between set-up and execve: a plain static. */
static char **process_env;
static size_t n_process_env;

static const char *
env_get (char *const *env, size_t n, const char *key)
{
  size_t k = strlen (key);
  for (size_t i = 0; i < n && env[i]; i++)
    if (strncmp (env[i], key, k) == 0 && env[i][k] == '=')
      return env[i] + k + 1;
  return NULL;
}

/* KEY=VALUE appended to process_env (a copy of the config's env at first). */
static int
env_add (const struct oci_config *c, const char *key, const char *value, csr_error **err)
{
  if (process_env == NULL)
    {
      process_env = calloc (c->n_env + 1, sizeof (char *));
      if (process_env == NULL)
        return csr_error_errno (err, "the process's environment");
      for (size_t i = 0; i < c->n_env; i++)
        process_env[i] = c->env[i];
      n_process_env = c->n_env;
    }
  char **grown = realloc (process_env, (n_process_env + 2) * sizeof (char *));
  if (grown == NULL)
    return csr_error_errno (err, "the process's environment");
  process_env = grown;
  if (asprintf (&process_env[n_process_env], "%s=%s", key, value) < 0)
    return csr_error_errno (err, "the process's environment");
  process_env[++n_process_env] = NULL;
  return 0;
}

/* The home directory of UID in the container's /etc/passwd (the current
 * root's), into OUT; "/" when the file or the user is not there, as runc
 * and crun do.  Only a regular file of at most 4 MiB is read (the rootfs
 * is the container's: no FIFO or device to hang on). */
static void
passwd_home (uid_t uid, char *out, size_t size)
{
  snprintf (out, size, "/");
  cleanup_close int fd = open ("/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return;
  cleanup_free char *text = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  if (csr_read_fd (fd, 4u << 20, &text, &len, &e) < 0)
    {
      csr_error_free (e);
      return;
    }
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      /* name:password:uid:gid:gecos:home:shell */
      char *f[7] = { 0 };
      size_t n = 0;
      for (char *p = line; n < 7; n++)
        {
          f[n] = p;
          p = strchr (p, ':');
          if (p == NULL)
            {
              n++;
              break;
            }
          *p++ = '\0';
        }
      char *end;
      if (n < 6 || f[2][0] == '\0')
        continue;
      unsigned long v = strtoul (f[2], &end, 10);
      if (*end == '\0' && v == uid && f[5][0] == '/')
        {
          snprintf (out, size, "%s", f[5]);
          return;
        }
    }
}

/* Block until `csrun start` opens the exec FIFO for reading (reopened
 * through PROCFD when >= 0, else through /proc). */
static int
wait_for_start (int fifo, int procfd, csr_error **err)
{
  char path[64];
  snprintf (path, sizeof path, "%sself/fd/%d", procfd >= 0 ? "" : "/proc/", fifo);
  int fd;
  while ((fd = openat (procfd >= 0 ? procfd : AT_FDCWD, path, O_WRONLY | O_CLOEXEC)) < 0
         && errno == EINTR)
    ;
  if (fd < 0)
    return csr_error_errno (err, "open the exec FIFO");
  ssize_t w = write (fd, "0", 1);
  close (fd);
  close (fifo);
  if (w != 1)
    return csr_error_errno (err, "write the exec FIFO");
  return 0;
}

/* Load the filter with a listener and hand the listener over at once:
 * until the agent has it, a notified call would wait for nobody. */
static int
load_with_listener (const void *seccomp_bpf, int listener_sock, csr_error **err)
{
  int fd = csr_seccomp_load_filter (seccomp_bpf, true, err);
  if (fd < 0)
    return -1;
  struct csr_sync_msg m;
  memset (&m, 0, sizeof m);
  m.type = CSR_SYNC_SECCOMP;
  int r = csr_seccomp_pass_fd (listener_sock, fd, &m, sizeof m, err);
  close (fd);
  return r;
}

int
csr_oci_prepare_process (const struct oci_config *c, const void *seccomp_bpf, int console,
                         int preserve_fds, char *exe, size_t exe_size, csr_error **err)
{
  return csr_oci_prepare_process_notify (c, seccomp_bpf, -1, console, preserve_fds, exe, exe_size,
                                         err);
}

int
csr_oci_prepare_process_notify (const struct oci_config *c, const void *seccomp_bpf,
                                int listener_sock, int console, int preserve_fds, char *exe,
                                size_t exe_size, csr_error **err)
{
  bool notify = seccomp_bpf && listener_sock >= 0;
  if (c->terminal && setup_terminal (c, console, err) < 0)
    return -1;
  if (chdir (c->cwd) < 0)
    return csr_error_errno (err, "chdir %s", c->cwd);
  /* HOME from the container's passwd when the config has none (runc, crun). */
  if (env_get (process_env ? process_env : c->env, process_env ? n_process_env : c->n_env, "HOME")
      == NULL)
    {
      char home[PATH_MAX];
      passwd_home (c->uid, home, sizeof home);
      if (env_add (c, "HOME", home, err) < 0)
        return -1;
    }
  if (find_executable (c, exe, exe_size, err) < 0 || apply_rlimits (c, err) < 0)
    return -1;
  /* 0022 unless the config says otherwise (runc), not the caller's. */
  umask (c->has_umask ? (mode_t)c->umask : 022);
  /* Without no_new_privs, loading the filter needs CAP_SYS_ADMIN: before the caps go. */
  if (seccomp_bpf && !c->no_new_privileges)
    {
      if (notify ? load_with_listener (seccomp_bpf, listener_sock, err) < 0
                 : csr_seccomp_load_filter (seccomp_bpf, false, err) < 0)
        return -1;
    }
  struct csr_cap_sets sets = { 0 };
  if (c->has_caps)
    sets = (struct csr_cap_sets){ c->caps.bounding, c->caps.effective, c->caps.inheritable,
                                  c->caps.permitted, c->caps.ambient };
  /* crun's annotation: the caller's supplementary groups stay. */
  const char *keep = oci_config_annotation (c, "run.oci.keep_original_groups");
  bool keep_groups = keep && strcmp (keep, "1") == 0 && c->n_additional_gids == 0;
  if (csr_caps_apply_oci (c->uid, c->gid, (const gid_t *)c->additional_gids,
                          keep_groups ? CSR_CAPS_KEEP_GROUPS : c->n_additional_gids, &sets,
                          c->no_new_privileges, err)
      < 0)
    return -1;
  if (notify && c->no_new_privileges && load_with_listener (seccomp_bpf, listener_sock, err) < 0)
    return -1;
  for (int fd = 3; fd < 3 + preserve_fds; fd++)
    (void)fcntl (fd, F_SETFD, 0);
  if (csr_close_range (3 + (unsigned)(preserve_fds > 0 ? preserve_fds : 0), 1) < 0)
    return csr_error_errno (err, "close inherited file descriptors");
  return 0;
}

__attribute__ ((noreturn)) static void
exec_failed (int status_fd, int code)
{
  unsigned char b = (unsigned char)code;
  if (status_fd >= 0 && write (status_fd, &b, 1) != 1)
    fprintf (stderr, "csrun: report the failure: %s\n", strerror (errno));
  _exit (code);
}

void
csr_oci_exec_process (const struct oci_config *c, const void *seccomp_bpf, const char *exe,
                      int status_fd)
{
  if (seccomp_bpf && c->no_new_privileges
      && prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, seccomp_bpf) < 0)
    {
      fprintf (stderr, "csrun: load the seccomp filter: %s\n", strerror (errno));
      exec_failed (status_fd, 125);
    }
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  execve (exe, c->args, process_env ? process_env : c->env);
  int saved = errno;
  fprintf (stderr, "csrun: exec %s: %s\n", exe, strerror (saved));
  exec_failed (status_fd, saved == ENOENT ? 127 : 126);
}

/* After the go: the state for the container's own hooks, the namespaces
 * given by path (unless the launcher's intermediate joined them), the
 * cgroup namespace, root of the user namespace. */
static void
enter_namespaces (const struct oci_config *c, const struct csr_launch_child *lc, char **state)
{
  int syncfd = lc->syncfd;
  csr_error *e = NULL;
  if (c->n_hooks[OCI_HOOK_CREATE_CONTAINER] + c->n_hooks[OCI_HOOK_START_CONTAINER] > 0)
    {
      *state = calloc (1, 1 << 16);
      if (*state == NULL || recv (syncfd, *state, (1 << 16) - 1, 0) <= 0)
        {
          csr_error_errno (&e, "receive the state for the hooks");
          csr_launch_fail (syncfd, e);
        }
    }
  if (!lc->joined && join_namespaces (c, &e) < 0)
    csr_launch_fail (syncfd, e);
  const char *nspath;
  if (oci_config_has_namespace (c, CLONE_NEWCGROUP, &nspath) && nspath == NULL
      && unshare (CLONE_NEWCGROUP) < 0)
    {
      csr_error_errno (&e, "unshare the cgroup namespace");
      csr_launch_fail (syncfd, e);
    }
  if (oci_config_has_namespace (c, CLONE_NEWUSER, &nspath)
      && (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0))
    {
      csr_error_errno (&e, "become root in the user namespace");
      csr_launch_fail (syncfd, e);
    }
}

/* A procfs fd for the sysctls and (without a mount namespace) the exec FIFO,
 * above the fds --preserve-fds hands on; -1 when none is needed. */
static int
keep_procfd (const struct csr_oci_spec *o, bool mntns, int syncfd)
{
  const struct oci_config *c = o->config;
  csr_error *e = NULL;
  int procfd = c->n_sysctl || !mntns ? open_procfs ("/proc", &e) : -1;
  if ((c->n_sysctl || !mntns) && procfd < 0)
    csr_launch_fail (syncfd, e);
  int keep = 3 + (o->preserve_fds > 0 ? o->preserve_fds : 0);
  if (procfd >= 0 && procfd < keep)
    {
      int hi = fcntl (procfd, F_DUPFD_CLOEXEC, keep);
      if (hi < 0)
        {
          csr_error_errno (&e, "move the /proc descriptor");
          csr_launch_fail (syncfd, e);
        }
      close (procfd);
      procfd = hi;
    }
  return procfd;
}

/* The mount tree, the runtime's hooks, the new root, hostname, cwd,
 * sysctls.  The mount set-up is made only in the container's own mount
 * namespace: a new one, or one given by path (joined, as runc does; the
 * caller's own was refused by oci_config_validate).  Without a mount
 * namespace nothing is mounted (oci_config_validate refused what would
 * need it): crun's way, a chroot into the rootfs. */
static void
build_root (const struct csr_oci_spec *o, bool mntns, int procfd, const char *state, int syncfd)
{
  const struct oci_config *c = o->config;
  const char *rootfs = o->jail.rootfs_dir;
  csr_error *e = NULL;
  if (mntns && csr_oci_mounts_prepare (c, rootfs, o->bundle, o->premounts, &e) < 0)
    csr_launch_fail (syncfd, e);
  /* prestart and createRuntime hooks run in the runtime's namespaces. */
  if (c->n_hooks[OCI_HOOK_PRESTART] + c->n_hooks[OCI_HOOK_CREATE_RUNTIME] > 0)
    {
      csr_sync_send (syncfd, CSR_SYNC_HOOKS, 0, NULL);
      csr_launch_wait_byte (syncfd, 'H');
    }
  /* createContainer hooks run in the rootfs as their working directory
   * (runc), before pivot_root. */
  if (c->n_hooks[OCI_HOOK_CREATE_CONTAINER] > 0
      && ((chdir (rootfs) < 0 && csr_error_errno (&e, "chdir %s", rootfs))
          || oci_hooks_run (c, OCI_HOOK_CREATE_CONTAINER, state, &e) < 0))
    csr_launch_fail (syncfd, e);
  if (mntns && csr_oci_mounts_enter (c, rootfs, o->no_pivot, &e) < 0)
    csr_launch_fail (syncfd, e);
  if (!mntns && (chroot (rootfs) < 0 || chdir ("/") < 0))
    {
      csr_error_errno (&e, "chroot %s", rootfs);
      csr_launch_fail (syncfd, e);
    }
  const char *nspath;
  if (oci_config_has_namespace (c, CLONE_NEWUTS, &nspath))
    {
      if (c->hostname && sethostname (c->hostname, strlen (c->hostname)) < 0)
        {
          csr_error_errno (&e, "sethostname");
          csr_launch_fail (syncfd, e);
        }
      if (c->domainname && setdomainname (c->domainname, strlen (c->domainname)) < 0)
        {
          csr_error_errno (&e, "setdomainname");
          csr_launch_fail (syncfd, e);
        }
    }
  /* A missing cwd is made (mode 0755, as root, before the rootfs may turn
   * read-only), as runc does. */
  struct stat cwd_st;
  if (stat (c->cwd, &cwd_st) < 0 && errno == ENOENT && csr_mkdir_p (c->cwd, 0755, &e) < 0)
    {
      csr_error_wrap (&e, "process.cwd");
      csr_launch_fail (syncfd, e);
    }
  if ((procfd >= 0 && write_sysctls (c, procfd, &e) < 0)
      || (mntns && csr_oci_mounts_finish (c, &e) < 0))
    csr_launch_fail (syncfd, e);
}

/* Set up: READY sent, the sync socket closed; wait for `csrun start`, run
 * the startContainer hooks, execve. */
__attribute__ ((noreturn)) static void
start_process (const struct csr_oci_spec *o, const char *exe, bool listener, int procfd,
               const char *state)
{
  const struct oci_config *c = o->config;
  csr_error *e = NULL;
  if (o->exec_fifo >= 0 && wait_for_start (o->exec_fifo, procfd, &e) < 0)
    {
      fprintf (stderr, "csrun: %s\n", csr_error_text (e));
      _exit (125);
    }
  /* startContainer hooks run under the container's filter, as with runc
   * and crun (without no_new_privs, or with a listener, it is loaded
   * already). */
  const void *bpf = listener ? NULL : o->jail.seccomp_bpf;
  if (bpf && c->no_new_privileges && c->n_hooks[OCI_HOOK_START_CONTAINER] > 0)
    {
      if (csr_seccomp_load_filter (bpf, false, &e) < 0)
        {
          fprintf (stderr, "csrun: %s\n", csr_error_text (e));
          _exit (125);
        }
      bpf = NULL;
    }
  if (c->n_hooks[OCI_HOOK_START_CONTAINER] > 0
      && oci_hooks_run (c, OCI_HOOK_START_CONTAINER, state, &e) < 0)
    {
      fprintf (stderr, "csrun: %s\n", csr_error_text (e));
      _exit (125);
    }
  csr_oci_exec_process (c, bpf, exe, -1);
}

void
csr_oci_entry (const struct jail_spec *spec, void *face, const struct csr_launch_child *lc)
{
  const struct csr_oci_launch *ol = face;
  const struct csr_oci_spec *o = ol->spec;
  const struct oci_config *c = o->config;
  int syncfd = lc->syncfd;
  csr_error *e = NULL;
  cleanup_free char *state = NULL;
  enter_namespaces (c, lc, &state);
  const char *nspath;
  bool mntns = oci_config_has_namespace (c, CLONE_NEWNS, &nspath);
  /* Without a mount namespace the chrooted process has no /proc: the exec
   * FIFO is reopened through this one too. */
  cleanup_close int procfd = keep_procfd (o, mntns, syncfd);
  build_root (o, mntns, procfd, state, syncfd);
  /* Socket activation (LISTEN_FDS in create's environment): the fds are
   * among the preserved ones; the process is told it is their listener. */
  if (o->listen_fds > 0)
    {
      char n[16], self[16];
      snprintf (n, sizeof n, "%d", o->listen_fds);
      snprintf (self, sizeof self, "%d", (int)getpid ());
      if ((env_get (c->env, c->n_env, "LISTEN_FDS") == NULL && env_add (c, "LISTEN_FDS", n, &e) < 0)
          || (env_get (c->env, c->n_env, "LISTEN_PID") == NULL
              && env_add (c, "LISTEN_PID", self, &e) < 0))
        csr_launch_fail (syncfd, e);
    }
  if (procfd >= 0 && mntns)
    close (steal_fd (&procfd));
  char exe[PATH_MAX];
  int listener_sock = ol->seccomp_listener ? syncfd : -1;
  if (csr_oci_prepare_process_notify (c, spec->seccomp_bpf, listener_sock, o->console,
                                      o->preserve_fds, exe, sizeof exe, &e)
      < 0)
    csr_launch_fail (syncfd, e);
  csr_sync_send (syncfd, CSR_SYNC_READY, 0, NULL);
  close (syncfd);
  start_process (o, exe, listener_sock >= 0, procfd, state);
}
