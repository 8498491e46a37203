/* csrun — warm jails: the zygote's jail, its requests, a warm jail's start,
 * code and end (see zygote.h; the child side is policies/zygote.py). */
#include "config.h"
#include "zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../cgroup/cgroup.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/syscalls.h"
#include "idmap.h"
#include "launch.h"
#include "mounts.h"
#include "rlimit.h"

/* policies/zygote.py, embedded at build time (zygote-py.c). */
extern const char csr_zygote_py[];

#define JAIL_PYTHON "/usr/bin/python3"
#define ZYGOTE_FD_CTL 3 /* the zygote's control socket (extra fd 0) */
#define MAX_REQ_FDS 24  /* sync, go, 0-2, 3, 6, cgroup files */
#define REQUEST_MAX (1u << 20)
/* The payload's fds 3 (the verdict) and 6 (the next attempt's code) are the
 * spec's extra fds 0 and 3 (supervisor/launcher.h, CSR_LAUNCH_FD_*); its fd
 * 4 (the precompiled gate) is the zygote's already; 5 is never given. */
#define EXTRA_VERDICT 0
#define EXTRA_NEXT 3

const char *const csr_zygote_ns_kinds[CSR_ZYGOTE_N_NS]
    = { "user", "mnt", "pid", "net", "ipc", "uts", "cgroup" };

void
csr_ns_ids_read (pid_t pid, struct csr_ns_ids *ids)
{
  memset (ids, 0, sizeof *ids);
  for (size_t i = 0; i < CSR_ZYGOTE_N_NS; i++)
    {
      char path[64];
      struct stat st;
      if (pid > 0)
        snprintf (path, sizeof path, "/proc/%d/ns/%s", (int)pid, csr_zygote_ns_kinds[i]);
      else
        snprintf (path, sizeof path, "/proc/self/ns/%s", csr_zygote_ns_kinds[i]);
      if (stat (path, &st) == 0)
        {
          ids->dev[i] = (unsigned long long)st.st_dev;
          ids->ino[i] = (unsigned long long)st.st_ino;
        }
    }
}

/* ---- what the zygote needs to know once (policies/zygote.py SETUP): the
 * kernel's constants as this build knows them, and what a snippet jail's
 * /proc masks (mounts.c). */
static void
kv (struct csr_jgen *w, const char *key, unsigned long long v)
{
  csr_jgen_str (w, key);
  csr_jgen_int (w, (long long)v);
}

static void
str_array (struct csr_jgen *w, const char *key, const char *const *v, size_t n)
{
  csr_jgen_str (w, key);
  csr_jgen_array_open (w);
  for (size_t i = 0; i < n; i++)
    csr_jgen_str (w, v[i]);
  csr_jgen_array_close (w);
}

static void
setup_consts (struct csr_jgen *w)
{
  csr_jgen_str (w, "consts");
  csr_jgen_map_open (w);
  kv (w, "CLONE_NEWCGROUP", CLONE_NEWCGROUP);
  kv (w, "MS_RDONLY", MS_RDONLY);
  kv (w, "MS_NOSUID", MS_NOSUID);
  kv (w, "MS_NODEV", MS_NODEV);
  kv (w, "MS_NOEXEC", MS_NOEXEC);
  kv (w, "MS_REMOUNT", MS_REMOUNT);
  kv (w, "MS_BIND", MS_BIND);
  kv (w, "MS_REC", MS_REC);
  kv (w, "MS_PRIVATE", MS_PRIVATE);
  kv (w, "PR_CAPBSET_DROP", PR_CAPBSET_DROP);
  kv (w, "PR_CAP_AMBIENT", PR_CAP_AMBIENT);
  kv (w, "PR_CAP_AMBIENT_CLEAR_ALL", PR_CAP_AMBIENT_CLEAR_ALL);
  kv (w, "PR_SET_SECUREBITS", PR_SET_SECUREBITS);
  kv (w, "PR_SET_NO_NEW_PRIVS", PR_SET_NO_NEW_PRIVS);
  kv (w, "PR_SET_DUMPABLE", PR_SET_DUMPABLE);
  kv (w, "PR_SET_SECCOMP", PR_SET_SECCOMP);
  kv (w, "SECCOMP_MODE_FILTER", SECCOMP_MODE_FILTER);
  kv (w, "SYS_clone", SYS_clone);
  kv (w, "CAP_VERSION", _LINUX_CAPABILITY_VERSION_3);
  /* caps.c csr_caps_drop_all's */
  kv (w, "securebits",
      SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED
          | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE
          | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED);
  kv (w, "SIOCGIFFLAGS", SIOCGIFFLAGS);
  kv (w, "SIOCSIFFLAGS", SIOCSIFFLAGS);
  kv (w, "IFF_UP", IFF_UP);
  kv (w, "SYNC_ERROR", CSR_SYNC_ERROR);
  kv (w, "SYNC_READY", CSR_SYNC_READY);
  kv (w, "SYNC_EXIT", CSR_SYNC_EXIT);
  /* The flags a remount in a user namespace must keep (mounts.c locked_flags). */
  static const unsigned long locked[][2] = {
    { ST_NOSUID, MS_NOSUID },   { ST_NODEV, MS_NODEV },           { ST_NOEXEC, MS_NOEXEC },
    { ST_NOATIME, MS_NOATIME }, { ST_NODIRATIME, MS_NODIRATIME }, { ST_RELATIME, MS_RELATIME },
  };
  csr_jgen_str (w, "locked");
  csr_jgen_array_open (w);
  for (size_t i = 0; i < sizeof locked / sizeof locked[0]; i++)
    {
      csr_jgen_array_open (w);
      csr_jgen_int (w, (long long)locked[i][0]);
      csr_jgen_int (w, (long long)locked[i][1]);
      csr_jgen_array_close (w);
    }
  csr_jgen_array_close (w);
  csr_jgen_map_close (w);
}

static char *
setup_json (csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return NULL;
  struct csr_mounts_tables t;
  csr_mounts_tables (&t);
  csr_jgen_map_open (&w);
  setup_consts (&w);
  str_array (&w, "masked", t.masked, t.n_masked);
  str_array (&w, "readonly", t.readonly, t.n_readonly);
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "the zygote's set-up", NULL, err);
}

/* ---- messages with the sender's credentials (SO_PASSCRED): the kernel
 * gives its pid as this process sees it. */
static int
pass_creds (int fd, csr_error **err)
{
  int on = 1;
  if (setsockopt (fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0)
    return csr_error_errno (err, "SO_PASSCRED");
  return 0;
}

/* One message of at most LEN bytes from FD before DEADLINE (ms; while
 * PIDFD, when >= 0, is alive): its length (0 at the end), its sender in
 * *PID (0 when none came), or -1 with *ERR. */
static ssize_t
recv_from (int fd, int pidfd, int64_t deadline, void *buf, size_t len, pid_t *pid, const char *what,
           csr_error **err)
{
  *pid = 0;
  for (;;)
    {
      int64_t left = deadline - csr_mono_ms ();
      struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
      int n = left > 0 ? poll (p, pidfd >= 0 ? 2 : 1, (int)(left > 60000 ? 60000 : left)) : 0;
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return csr_error_errno (err, "poll %s", what);
      if (n == 0 && csr_mono_ms () >= deadline)
        return csr_error_set (err, ETIMEDOUT, "%s did not answer in time", what);
      if (n == 0)
        continue;
      if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
        return 0; /* the process died without a word */
      union
      {
        char b[CMSG_SPACE (sizeof (struct ucred))];
        struct cmsghdr align;
      } u;
      struct iovec iov = { .iov_base = buf, .iov_len = len };
      struct msghdr mh
          = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
      ssize_t r = recvmsg (fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
      if (r < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (r < 0)
        return csr_error_errno (err, "read %s", what);
      for (struct cmsghdr *cm = CMSG_FIRSTHDR (&mh); cm; cm = CMSG_NXTHDR (&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS
            && cm->cmsg_len >= CMSG_LEN (sizeof (struct ucred)))
          {
            struct ucred uc;
            memcpy (&uc, CMSG_DATA (cm), sizeof uc);
            *pid = uc.pid;
          }
      return r;
    }
}

/* ---- the zygote */
int
csr_zygote_start (const struct jail_snippet *base, const char *boot, int gate_fd,
                  struct csr_zygote *z, csr_error **err)
{
  memset (z, 0, sizeof *z);
  z->ctl = -1;
  z->jail = (struct csr_jail){ .pid = -1, .pidfd = -1, .syncfd = -1 };
  cleanup_free char *setup = setup_json (err);
  if (setup == NULL)
    return -1;
  cleanup_free char *program = NULL;
  if (asprintf (&program, "%s%s", boot, csr_zygote_py) < 0)
    return csr_error_set (err, ENOMEM, "the zygote's program");
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return csr_error_errno (err, "socketpair");
  z->ctl = sv[0];
  cleanup_close int theirs = sv[1];
  if (pass_creds (z->ctl, err) < 0)
    goto fail;
  char *argv[]
      = { (char *)JAIL_PYTHON, (char *)"-I", (char *)"-S", (char *)"-u", (char *)"-c", program,
          (char *)"",          setup,        NULL };
  struct jail_snippet s = *base;
  s.jail.seccomp_bpf = NULL; /* its children load the items' */
  s.jail.cgroup = NULL;
  s.zygote = true;
  s.argv = argv;
  s.cwd = "/work";
  s.files = NULL;
  s.n_files = 0;
  s.has_inputs = s.has_outputs = false;
  s.binds = NULL;
  s.n_binds = 0;
  s.host_net = false;
  s.hold = false;
  s.layer_upper = s.layer_work = s.join_userns = s.join_mntns = NULL;
  /* Its user namespace maps the host id a one-shot jail maps the snippet's
   * root to (H: the invoking user's, or nobody's as root; idmap.c) to
   * itself, and nothing else, and it runs as H with no capability: a warm
   * jail maps its root to H in a namespace of its own (no CAP_SETFCAP
   * needed: it does not map the zygote's root), so that the snippet's
   * uid_map names the same host id as a one-shot jail's, and its init
   * (forked from the zygote, whose namespace has no root) is owned by a
   * root the snippet's namespace does not map: its /proc entries are closed
   * to the snippet as a one-shot jail's init's are. */
  csr_idmap_default (&s.jail, geteuid (), getegid ());
  uint32_t hu = s.jail.uid_map[0].outside, hg = s.jail.gid_map[0].outside;
  s.jail.uid_map[0] = (struct csr_idmap){ hu, hu, 1 };
  s.jail.gid_map[0] = (struct csr_idmap){ hg, hg, 1 };
  s.jail.n_uid_map = s.jail.n_gid_map = 1;
  s.uid = hu;
  s.gid = hg;
  s.rlimit_as = s.rlimit_data = s.rlimit_nproc = 0;
  s.stdin_fd = s.stdout_fd = s.stderr_fd = -1;
  s.extra_fds[0] = theirs;
  s.extra_fds[1] = gate_fd;
  s.n_extra_fds = 2;
  if (gate_fd >= 0)
    lseek (gate_fd, 0, SEEK_SET);
  if (csr_jail_start (&s, &z->jail, err) < 0)
    {
      csr_error_wrap (err, "start the zygote");
      goto fail;
    }
  close (steal_fd (&theirs));
  /* It says "ready" once the gate is loaded; the kernel says who it is. */
  char buf[16];
  ssize_t r = recv_from (z->ctl, z->jail.pidfd, csr_mono_ms () + CSR_LAUNCH_TIMEOUT_MS, buf,
                         sizeof buf, &z->pid, "the zygote", err);
  if (r < 0)
    goto fail;
  if (r != 5 || memcmp (buf, "ready", 5) != 0 || z->pid <= 0)
    {
      csr_error_set (err, 0, "the zygote did not start (its interpreter ended: no ctypes?)");
      goto fail;
    }
  csr_ns_ids_read (z->pid, &z->ns);
  csr_ns_ids_read (0, &z->own);
  return 0;
fail:
  csr_zygote_stop (z);
  return -1;
}

void
csr_zygote_stop (struct csr_zygote *z)
{
  /* The end of its control socket ends the zygote, then its jail's init
   * (which reaps it, so that their cpu time is accounted to us); after a
   * while, its jail is killed: the pid namespace, every warm jail in it,
   * goes. */
  bool had = z->ctl >= 0;
  if (had)
    close (z->ctl);
  z->ctl = -1;
  if (had && z->jail.pid > 0 && z->jail.pidfd >= 0)
    {
      struct pollfd p = { .fd = z->jail.pidfd, .events = POLLIN };
      while (poll (&p, 1, 2000) < 0 && errno == EINTR)
        ;
      struct csr_jail_exit ex;
      csr_error *e = NULL;
      if ((p.revents & POLLIN) && csr_jail_wait (&z->jail, &ex, &e) < 0)
        csr_error_free (e);
    }
  csr_jail_release (&z->jail);
  z->pid = 0;
}

/* ---- a warm jail */
const char *
csr_zygote_unfit (const struct jail_snippet *spec)
{
  if (spec->has_inputs)
    return "--in";
  if (spec->has_outputs)
    return "--out";
  if (spec->n_binds > 0)
    return "--mount";
  if (spec->uid != 0 || spec->gid != 0 || spec->jail.use_newidmap || spec->jail.n_uid_map > 1)
    return "--user";
  if (spec->host_net)
    return "--net host";
  /* Only /work is mounted over the zygote's own (policies/zygote.py tree):
   * another working directory would leave the zygote's /work to be shared. */
  if (spec->cwd && strcmp (spec->cwd, "/work") != 0)
    return "a working directory other than /work";
  if (spec->layer_upper || spec->hold || spec->join_userns || spec->join_mntns
      || spec->rootfs_writable || spec->zygote)
    return "a sandbox's jail";
  if (spec->n_files != 1 || strcmp (spec->files[0].path, "snippet.py") != 0)
    return "files other than snippet.py";
  if (spec->n_extra_fds > CSR_MAX_EXTRA_FDS || (spec->n_extra_fds > 2 && spec->extra_fds[2] >= 0))
    return "a descriptor 5";
  return NULL;
}

struct request
{
  int fds[MAX_REQ_FDS];
  size_t n;
};

static long long
add_fd (struct request *q, int fd)
{
  q->fds[q->n] = fd;
  return (long long)q->n++;
}

static void
kv_fd (struct csr_jgen *w, struct request *q, const char *key, int fd)
{
  if (fd < 0)
    return;
  csr_jgen_kv_int (w, key, add_fd (q, fd));
}

/* The request's JSON line (policies/zygote.py reads it), its descriptors
 * added to Q: SYNC and GO (the child's ends), the item's streams, fds 3 and
 * 6, the cgroup files (CG_FDS). */
static char *
request_json (const struct jail_snippet *spec, char *const *args, int n_args,
              const char *test_break, uint64_t clone_flags, struct request *q, int sync, int go,
              const int *cg_fds, size_t n_cg, size_t *len, csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_int (&w, "uid", spec->uid);
  csr_jgen_kv_int (&w, "gid", spec->gid);
  csr_jgen_kv_str (&w, "hostname", spec->hostname ? spec->hostname : "csrun");
  csr_jgen_kv_str (&w, "cwd", spec->cwd ? spec->cwd : "/work");
  csr_jgen_kv_int (&w, "tmp_size", (long long)spec->tmp_size);
  csr_jgen_kv_int (&w, "tmp_inodes", (long long)spec->tmp_inodes);
  struct csr_rlimit rl[CSR_RLIMITS_MAX];
  size_t nrl = csr_rlimits_list (spec, rl);
  csr_jgen_str (&w, "rlimits");
  csr_jgen_array_open (&w);
  for (size_t i = 0; i < nrl; i++)
    {
      csr_jgen_array_open (&w);
      csr_jgen_int (&w, rl[i].resource);
      csr_jgen_int (&w, (long long)rl[i].value);
      csr_jgen_array_close (&w);
    }
  csr_jgen_array_close (&w);
  csr_jgen_kv_strv (&w, "env", (const char *const *)spec->envp);
  csr_jgen_str (&w, "args");
  csr_jgen_array_open (&w);
  for (int i = 0; i < n_args; i++)
    csr_jgen_str (&w, args[i]);
  csr_jgen_array_close (&w);
  if (test_break)
    csr_jgen_kv_str (&w, "test_break", test_break);
  csr_jgen_str (&w, "net");
  csr_jgen_bool (&w, (clone_flags & CLONE_NEWNET) != 0);

  csr_jgen_str (&w, "fds");
  csr_jgen_map_open (&w);
  /* The sync socket, then the cgroup files, are first (the zygote and the
   * jail's init read them before the JSON: see send_request). */
  kv_fd (&w, q, "sync", sync);
  csr_jgen_str (&w, "cgroup");
  csr_jgen_array_open (&w);
  for (size_t i = 0; i < n_cg; i++)
    csr_jgen_int (&w, add_fd (q, cg_fds[i]));
  csr_jgen_array_close (&w);
  kv_fd (&w, q, "go", go);
  kv_fd (&w, q, "stdin", spec->stdin_fd);
  kv_fd (&w, q, "stdout", spec->stdout_fd);
  kv_fd (&w, q, "stderr", spec->stderr_fd);
  if (spec->n_extra_fds > EXTRA_VERDICT)
    kv_fd (&w, q, "verdict", spec->extra_fds[EXTRA_VERDICT]);
  if (spec->n_extra_fds > EXTRA_NEXT)
    kv_fd (&w, q, "next", spec->extra_fds[EXTRA_NEXT]);
  csr_jgen_map_close (&w);
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "a warm jail's request", len, err);
}

/* The cgroup files the child writes "0" to (opened here: the kernel checks
 * the opener's credentials): v1 "tasks", v2 "cgroup.procs". */
static int
cgroup_files (const struct jail_snippet *spec, int *fds, size_t *n, csr_error **err)
{
  *n = 0;
  struct csr_cgroup *cg = spec->jail.cgroup;
  if (cg == NULL)
    return 0;
  int k = csr_cgroup_self_enter_fds (cg, fds, err);
  if (k < 0)
    return -1;
  *n = (size_t)k;
  int p = csr_cgroup_procs_fd (cg, err);
  if (p == -1)
    {
      while (*n > 0)
        close (fds[--*n]);
      return -1;
    }
  if (p >= 0)
    fds[(*n)++] = p;
  if (*n == 0)
    return csr_error_set (err, 0, "the item's cgroup can't be entered from a warm jail");
  return 0;
}

/* Send the request: one message, its descriptors with it (the sync socket,
 * the N_CG cgroup files, the rest): "ns FLAGS UID GID CGROUPNS N_CG\n" (what
 * the zygote and the jail's init read: the namespaces to clone, the ids to
 * map, whether to unshare a cgroup namespace), the JSON line (the
 * interpreter's), the seccomp program. */
static int
send_request (int ctl, uint64_t clone_flags, bool cgroupns, size_t n_cg, const char *json,
              size_t jlen, const struct jail_snippet *spec, const struct request *q,
              csr_error **err)
{
  const struct sock_fprog *prog = spec->jail.seccomp_bpf;
  size_t blen = prog ? (size_t)prog->len * sizeof (struct sock_filter) : 0;
  char head[96];
  int hn = snprintf (head, sizeof head, "ns %llu %u %u %d %zu\n", (unsigned long long)clone_flags,
                     (unsigned)spec->uid, (unsigned)spec->gid, cgroupns ? 1 : 0, n_cg);
  if ((size_t)hn + jlen + 1 + blen > REQUEST_MAX)
    return csr_error_set (err, E2BIG, "a warm jail's request is too large");
  struct iovec iov[4] = { { head, (size_t)hn },
                          { (void *)json, jlen },
                          { (void *)"\n", 1 },
                          { prog ? (void *)prog->filter : NULL, blen } };
  union
  {
    char b[CMSG_SPACE (sizeof (int) * MAX_REQ_FDS)];
    struct cmsghdr align;
  } u;
  memset (&u, 0, sizeof u);
  struct msghdr mh = { .msg_iov = iov,
                       .msg_iovlen = blen ? 4 : 3,
                       .msg_control = u.b,
                       .msg_controllen = CMSG_SPACE (sizeof (int) * q->n) };
  struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int) * q->n);
  memcpy (CMSG_DATA (cm), q->fds, sizeof (int) * q->n);
  ssize_t r;
  while ((r = sendmsg (ctl, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
    ;
  if (r < 0)
    return csr_error_errno (err, "ask the zygote for a jail");
  return 0;
}

/* The parent of PID (its jail's init), or -1. */
static pid_t
parent_of (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/stat", (int)pid);
  cleanup_free char *st = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  if (csr_read_file (path, 4096, &st, &len, &e) < 0)
    {
      csr_error_free (e);
      return -1;
    }
  const char *p = strrchr (st, ')');
  int ppid = 0;
  char state;
  if (p == NULL || sscanf (p + 1, " %c %d", &state, &ppid) != 2 || ppid <= 0)
    return -1;
  return (pid_t)ppid;
}

static int
await_ready (struct csr_warm *w, csr_error **err)
{
  struct csr_sync_msg m;
  pid_t pid = 0;
  ssize_t r = recv_from (w->jail.syncfd, -1, csr_mono_ms () + CSR_LAUNCH_TIMEOUT_MS, &m, sizeof m,
                         &pid, "the warm jail", err);
  if (r < 0)
    return -1;
  if (r == 0)
    return csr_error_set (err, 0, "the warm jail died during set-up without saying why");
  if ((size_t)r != sizeof m)
    return csr_error_set (err, 0, "short message from the warm jail");
  m.text[sizeof m.text - 1] = '\0';
  if (m.type == CSR_SYNC_ERROR)
    return csr_error_set (err, m.err, "%s", m.text);
  if (m.type != CSR_SYNC_READY || pid <= 0)
    return csr_error_set (err, 0, "unexpected message %u from the warm jail", m.type);
  /* READY comes from the interpreter; its parent is the jail's init (the
   * check reads the parent again: this pid can't have been reused). */
  w->payload = pid;
  w->jail.pid = parent_of (pid);
  if (w->jail.pid <= 0)
    return csr_error_set (err, 0, "the warm jail's init is gone");
  w->jail.pidfd = csr_pidfd_open (w->jail.pid);
  if (w->jail.pidfd < 0)
    return csr_error_errno (err, "pidfd_open the warm jail");
  return 0;
}

int
csr_zygote_spawn (const struct csr_zygote *z, const struct jail_snippet *spec, char *const *args,
                  int n_args, const char *test_break, struct csr_warm *w, csr_error **err)
{
  *w = (struct csr_warm){ .jail = { .pid = -1, .pidfd = -1, .syncfd = -1 },
                          .payload = -1,
                          .go = -1 };
  if (z->ctl < 0)
    return csr_error_set (err, 0, "the zygote is gone");
  int sv[2], gv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return csr_error_errno (err, "socketpair");
  w->jail.syncfd = sv[0];
  cleanup_close int sync_theirs = sv[1];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gv) < 0)
    {
      csr_warm_release (w);
      return csr_error_errno (err, "socketpair");
    }
  w->go = gv[0];
  cleanup_close int go_theirs = gv[1];
  int cg[CSR_CG_V1_N + 2];
  size_t n_cg = 0;
  struct request q = { .n = 0 };
  size_t jlen = 0;
  int rc = -1;
  cleanup_free char *json = NULL;
  if (pass_creds (w->jail.syncfd, err) < 0 || cgroup_files (spec, cg, &n_cg, err) < 0)
    goto out;
  uint64_t flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID;
  static const struct
  {
    const char *name;
    uint64_t flag;
  } others[] = { { "netns", CLONE_NEWNET }, { "ipcns", CLONE_NEWIPC }, { "utsns", CLONE_NEWUTS } };
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    if (!(test_break && strcmp (test_break, others[i].name) == 0)) /* tests only */
      flags |= others[i].flag;
  json = request_json (spec, args, n_args, test_break, flags, &q, sync_theirs, go_theirs, cg, n_cg,
                       &jlen, err);
  bool cgroupns = !(test_break && strcmp (test_break, "cgroupns") == 0); /* tests only */
  if (json == NULL || send_request (z->ctl, flags, cgroupns, n_cg, json, jlen, spec, &q, err) < 0)
    goto out;
  close (steal_fd (&sync_theirs));
  close (steal_fd (&go_theirs));
  rc = await_ready (w, err);
out:
  while (n_cg > 0)
    close (cg[--n_cg]);
  if (rc < 0)
    csr_warm_release (w);
  return rc;
}

int
csr_zygote_go (struct csr_warm *w, const char *policy, const char *code, size_t code_len,
               csr_error **err)
{
  char head[64];
  size_t pl = strlen (policy);
  int hn = snprintf (head, sizeof head, "%zu %zu\n", pl, code_len);
  int rc = 0;
  if (csr_write_all (w->go, head, (size_t)hn, err) < 0 || csr_write_all (w->go, policy, pl, err) < 0
      || csr_write_all (w->go, code, code_len, err) < 0)
    rc = csr_error_wrap (err, "send the code to the warm jail");
  close (w->go);
  w->go = -1;
  return rc;
}

int
csr_warm_wait (struct csr_warm *w, struct csr_jail_exit *ex, csr_error **err)
{
  (void)err;
  memset (ex, 0, sizeof *ex);
  ex->signal = SIGKILL; /* unless the init reports otherwise */
  struct csr_sync_msg m;
  ssize_t r;
  while ((r = recv (w->jail.syncfd, &m, sizeof m, MSG_DONTWAIT)) == (ssize_t)sizeof m)
    if (m.type == CSR_SYNC_EXIT)
      {
        m.text[sizeof m.text - 1] = '\0';
        unsigned long long cpu = 0, rss = 0;
        if (sscanf (m.text, "%llu %llu", &cpu, &rss) == 2)
          {
            ex->cpu_us = cpu;
            ex->maxrss_kib = rss;
          }
        ex->signal = 0;
        if (WIFEXITED (m.status))
          {
            ex->exited = true;
            ex->exit_code = WEXITSTATUS (m.status);
          }
        else if (WIFSIGNALED (m.status))
          ex->signal = WTERMSIG (m.status);
        break;
      }
  return 0;
}

void
csr_warm_release (struct csr_warm *w)
{
  /* Not our child: killed through its pidfd, reaped by the zygote's init. */
  if (w->jail.pidfd >= 0)
    csr_pidfd_send_signal (w->jail.pidfd, SIGKILL);
  w->jail.pid = -1;
  if (w->jail.pidfd >= 0)
    close (w->jail.pidfd);
  if (w->jail.syncfd >= 0)
    close (w->jail.syncfd);
  if (w->go >= 0)
    close (w->go);
  w->jail.pidfd = w->jail.syncfd = w->go = -1;
  w->payload = -1;
}
