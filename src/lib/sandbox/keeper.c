/* csrun — a sandbox's keeper (see sandbox.h): the parent of the jail's
 * init, the control socket, the execs, the idle timer and the TTL. */
#include "config.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../cgroup/cgroup.h"
#include "../cgroup/subcgroup.h"
#include "../jail/idmap.h"
#include "../jail/jail.h"
#include "../jail/procns.h"
#include "../jail/seccomp.h"
#include "../rootfs/layer.h"
#include "../rootfs/rootfs.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/datadir.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "keeper.h"

#define CPU_PERIOD_US 100000

/* ------------------------------------------------------------ set-up */

static int
make_layer_dir (const char *path, csr_error **err)
{
  int rc = mkdir (path, 0755);
  /* --disk as host root: the tmpfs maps no id but the jail's root. */
  if (rc < 0 && errno == EOVERFLOW && geteuid () == 0)
    {
      int ou = setfsuid (CSR_ROOT_MAPPED_ID), og = setfsgid (CSR_ROOT_MAPPED_ID);
      rc = mkdir (path, 0755);
      int saved = errno;
      setfsuid ((uid_t)ou);
      setfsgid ((gid_t)og);
      errno = saved;
    }
  if (rc < 0 && errno != EEXIST)
    return csr_error_errno (err, "mkdir %s", path);
  /* As host root the jail's root is an unprivileged id: the layer is its. */
  if (geteuid () == 0 && chown (path, CSR_ROOT_MAPPED_ID, CSR_ROOT_MAPPED_ID) < 0)
    return csr_error_errno (err, "chown %s", path);
  return 0;
}

/* The layer: upper/ with the working directory in it, ovl-work/, in the
 * directory the jail sees as BASE, which the keeper reaches as MAKE_BASE
 * (with --disk, through the tmpfs's descriptor). */
static int
setup_layer (struct keeper *k, const char *base, const char *make_base, csr_error **err)
{
  char *mk_upper = NULL;
  cleanup_free char *mk_work = NULL;
  if (asprintf (&k->upper, "%s/upper", base) < 0 || asprintf (&k->work, "%s/ovl-work", base) < 0
      || asprintf (&mk_upper, "%s/upper", make_base) < 0
      || asprintf (&mk_work, "%s/ovl-work", make_base) < 0)
    return csr_error_set (err, ENOMEM, "layer");
  k->upper_keeper = mk_upper;
  if (strpbrk (k->upper, ":,\\") || strpbrk (k->rootfs->dir, ":,\\"))
    return csr_error_set (err, EINVAL,
                          "the sandbox directory and the rootfs path may not contain ':', ',' "
                          "or '\\' (overlayfs options)");
  if (make_layer_dir (mk_upper, err) < 0 || make_layer_dir (mk_work, err) < 0)
    return -1;
  /* mkdir -p of the working directory inside upper/ (an existing one in the
   * rootfs merges with it, with upper/'s owner). */
  cleanup_free char *p = strdup (k->spec->workdir);
  if (p == NULL)
    return csr_error_set (err, ENOMEM, "layer");
  for (char *s = p + 1;; s++)
    if (*s == '/' || *s == '\0')
      {
        char c = *s;
        *s = '\0';
        cleanup_free char *d = NULL;
        if (asprintf (&d, "%s%s", mk_upper, p) < 0)
          return csr_error_set (err, ENOMEM, "layer");
        struct stat st;
        cleanup_free char *lower = NULL;
        if (asprintf (&lower, "%s%s", k->rootfs->dir, p) < 0)
          return csr_error_set (err, ENOMEM, "layer");
        if (lstat (lower, &st) == 0 && !S_ISDIR (st.st_mode))
          return csr_error_set (err, ENOTDIR, "--workdir %s: %s is not a directory in the rootfs",
                                k->spec->workdir, p);
        /* In upper/ even when the rootfs has it: the merged directory then
         * belongs to the sandbox's root. */
        if (make_layer_dir (d, err) < 0)
          return -1;
        if (c == '\0')
          break;
        *s = c;
      }
  return 0;
}

static int
setup_cgroup (struct keeper *k, csr_error **err)
{
  struct csr_sandbox_spec *s = k->spec;
  if (!s->memory && !s->pids && !s->cpu_millis)
    {
      snprintf (s->mechanism, sizeof s->mechanism, "none");
      return 0;
    }
  struct csr_cgroup_resources r = { 0 };
  r.memory_limit = (int64_t)s->memory;
  r.memory_swap = (int64_t)s->memory;
  r.pids_limit = (int64_t)s->pids;
  if (s->cpu_millis)
    {
      r.cpu_period = CPU_PERIOD_US;
      r.cpu_quota = (int64_t)(s->cpu_millis * CPU_PERIOD_US / 1000);
    }
  cleanup_free char *path = NULL;
  if (asprintf (&path, "/csrun-sandboxes/%s", s->id) < 0)
    return csr_error_set (err, ENOMEM, "cgroup");
  struct csr_cgroup_applied ap = { 0 };
  int rc = csr_cgroup_container_create (path, &r, NULL, NULL, &k->cg, &ap, err);
  if (rc < 0)
    return -1;
  bool rl = false;
  if (rc > 0)
    {
      s->memory_enforced = s->memory && ap.memory;
      s->pids_enforced = s->pids && ap.pids;
      s->cpu_enforced = s->cpu_millis && ap.cpu;
      const char *v2 = csr_cgroup_v2_path (k->cg);
      if (v2)
        s->cgroup_v2 = strdup (v2);
      const char *const *v1;
      size_t n = csr_cgroup_v1_paths (k->cg, &v1);
      for (size_t i = 0; i < n && i < 16; i++)
        if ((s->cgroup_v1[s->n_cgroup_v1] = strdup (v1[i])))
          s->n_cgroup_v1++;
      k->sn.jail.cgroup = k->cg;
      /* v1: each exec's helper moves itself through "tasks" (cgroup.h:
       * ~0.02 ms instead of 15-30 ms for a pid written to cgroup.procs). */
      int nself = csr_cgroup_self_enter_fds (k->cg, k->cg_fds, err);
      if (nself < 0)
        return -1;
      k->cg_self = nself > 0;
      k->n_cg_fds = (size_t)nself;
      if (nself == 0
          && csr_cgroup_exec_open (s->cgroup_v2, s->cgroup_v1, s->n_cgroup_v1, NULL, 0, k->cg_fds,
                                   sizeof k->cg_fds / sizeof k->cg_fds[0], &k->n_cg_fds, err)
                 < 0)
        return -1;
    }
  /* What the cgroup can't do: rlimits, as csrun run (supervisor/limits.c). */
  if (s->memory && !s->memory_enforced)
    {
      k->sn.rlimit_data = s->memory;
      s->memory_enforced = rl = true;
    }
  if (s->pids && !s->pids_enforced)
    {
      k->sn.rlimit_nproc = s->pids;
      s->pids_enforced = rl = true;
    }
  const char *cgname = k->cg ? csr_cgroup_mechanism_name (csr_cgroup_mechanism (k->cg)) : NULL;
  snprintf (s->mechanism, sizeof s->mechanism, "%s%s%s", cgname ? cgname : "",
            cgname && rl ? "+" : "", rl ? "rlimit" : (cgname ? "" : "none"));
  return 0;
}

static void
close_ns (struct keeper *k)
{
  for (size_t i = 0; i < CSR_SANDBOX_N_NS; i++)
    {
      if (k->ns_fds[i] >= 0)
        close (k->ns_fds[i]);
      k->ns_fds[i] = -1;
    }
}

/* The namespaces the holder sent (layer.h), there by READY. */
static void
receive_ns (struct keeper *k, int sock)
{
  char byte;
  struct iovec iov = { &byte, 1 };
  union
  {
    char buf[CMSG_SPACE (sizeof (int) * CSR_SANDBOX_N_NS)];
    struct cmsghdr align;
  } u;
  struct msghdr mh
      = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  if (recvmsg (sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1)
    return;
  struct cmsghdr *c = CMSG_FIRSTHDR (&mh);
  if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS
      && c->cmsg_len == CMSG_LEN (sizeof (int) * CSR_SANDBOX_N_NS))
    memcpy (k->ns_fds, CMSG_DATA (c), sizeof (int) * CSR_SANDBOX_N_NS);
}

static int
start_jail (struct keeper *k, csr_error **err)
{
  int sp[2];
  if (socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) < 0)
    return csr_error_errno (err, "socketpair");
  k->sn.extra_fds[0] = sp[1];
  k->sn.n_extra_fds = 1;
  int rc = csr_jail_start (&k->sn, &k->jail, err);
  close (sp[1]);
  k->sn.n_extra_fds = 0;
  if (rc < 0)
    {
      close (sp[0]);
      return csr_error_wrap (err, "start the sandbox");
    }
  close_ns (k);
  receive_ns (k, sp[0]);
  close (sp[0]);
  k->running = true;
  return 0;
}

static int
listen_socket (struct keeper *k, csr_error **err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/ctl.sock", k->b->dirfd);
  unlinkat (k->b->dirfd, "ctl.sock", 0);
  k->listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (k->listen_fd < 0)
    return csr_error_errno (err, "socket");
  mode_t old = umask (0177);
  int rc = bind (k->listen_fd, (struct sockaddr *)&sa, sizeof sa);
  umask (old);
  if (rc < 0)
    return csr_error_errno (err, "bind the control socket");
  if (fchmodat (k->b->dirfd, "ctl.sock", 0600, 0) < 0)
    return csr_error_errno (err, "chmod the control socket");
  if (listen (k->listen_fd, 64) < 0)
    return csr_error_errno (err, "listen");
  return 0;
}

static int
setup (struct keeper *k, csr_error **err)
{
  struct csr_sandbox_spec *s = k->spec;
  cleanup_free char *cache_dir = NULL;
  csr_error *ignored = NULL;
  if (csr_rootfs_cache_dir (&cache_dir, &ignored) < 0)
    csr_error_freep (&ignored);
  /* The rootfs and the --with layer (pkglayer.c): kept, with their use
   * locks, while the sandbox lives. */
  if (csr_sandbox_trees (s, cache_dir, &k->rootfs, &k->layer, err) < 0)
    return -1;
  free (s->rootfs_dir);
  s->rootfs_dir = strdup (k->rootfs->dir);
  if (k->layer)
    {
      free (s->layer_dir);
      free (s->layer_digest);
      s->layer_dir = strdup (k->layer->dir);
      s->layer_digest = strdup (k->layer->digest);
      if (strpbrk (k->layer->dir, ":,\\"))
        return csr_error_set (err, EINVAL,
                              "the layer %s: a path overlayfs can't take (':', ',' or '\\')",
                              k->layer->dir);
    }
  cleanup_free char *sp = csr_find_policy ("seccomp/default.json");
  if (sp == NULL)
    return csr_error_set (err, ENOMEM, "find the seccomp policy");
  if (csr_seccomp_load (sp, cache_dir, &k->seccomp, err) < 0)
    return -1;
  cleanup_free char *root = NULL;
  if (asprintf (&root, "/proc/self/fd/%d", k->b->rootfd) < 0)
    return csr_error_set (err, ENOMEM, "layer");
  /* Host paths for the overlay (the jail resolves them in its own mount
   * namespace, before the pivot). */
  char real[4096];
  ssize_t n = readlink (root, real, sizeof real - 1);
  if (n <= 0)
    return csr_error_errno (err, "the sandbox directory");
  real[n] = '\0';

  jail_snippet_init (&k->sn);
  k->argv_hold[0] = (char *)"/csrun-hold";
  k->sn.argv = k->argv_hold;
  k->sn.envp = s->env;
  k->sn.cwd = s->workdir;
  k->sn.hostname = "sandbox";
  k->sn.host_net = s->host_net;
  k->sn.rootfs_writable = true;
  k->sn.hold = true;
  k->sn.tmp_size = 256ULL << 20;
  k->sn.rlimit_fsize = 4ULL << 30;
  k->sn.jail.rootfs_dir = k->rootfs->dir;
  k->sn.jail.layer_dir = k->layer ? k->layer->dir : NULL;
  k->sn.jail.seccomp_bpf = &k->seccomp->prog;
  csr_idmap_default (&k->sn.jail, geteuid (), getegid ());
  cleanup_free char *base = NULL;
  cleanup_free char *make_base = NULL;
  if (asprintf (&base, "%s/%s%s", real, s->id, s->disk ? "/disk" : "") < 0)
    return csr_error_set (err, ENOMEM, "layer");
  /* --disk (disk.c): the layer on a capped tmpfs, mounted on disk/ in
   * namespaces the jail joins. */
  if (s->disk
      && (mkdirat (k->b->dirfd, "disk", 0700) < 0 || keeper_disk_make (k, base, err) < 0
          || asprintf (&make_base, "/proc/self/fd/%d", keeper_disk_root (k)) < 0))
    return err && *err ? -1 : csr_error_errno (err, "--disk");
  if (setup_layer (k, base, make_base ? make_base : base, err) < 0)
    return -1;
  k->sn.layer_upper = k->upper;
  k->sn.layer_work = k->work;
  if (setup_cgroup (k, err) < 0)
    return -1;
  if (start_jail (k, err) < 0)
    return -1;
  s->keeper_pid = getpid ();
  if (csr_sandbox_spec_write (k->b->dirfd, s, err) < 0)
    return -1;
  return listen_socket (k, err);
}

/* ------------------------------------------------------------ life */

static void
parts_stopping (struct keeper *k)
{
  for (size_t i = 0; keeper_parts[i]; i++)
    if (keeper_parts[i]->stopping)
      keeper_parts[i]->stopping (k);
}

static void
parts_started (struct keeper *k)
{
  for (size_t i = 0; keeper_parts[i]; i++)
    if (keeper_parts[i]->started)
      keeper_parts[i]->started (k);
}

static void
stop_jail (struct keeper *k)
{
  if (k->running)
    parts_stopping (k);
  keeper_execs_kill (k);
  if (k->running)
    {
      struct csr_jail_exit ex;
      csr_error *e = NULL;
      csr_jail_kill (&k->jail, SIGKILL);
      if (csr_jail_wait (&k->jail, &ex, &e) < 0)
        csr_error_free (e);
      if (k->jail.pidfd >= 0)
        close (k->jail.pidfd);
      if (k->jail.syncfd >= 0)
        close (k->jail.syncfd);
      k->jail.pidfd = k->jail.syncfd = -1;
      k->running = false;
      close_ns (k);
    }
}

/* Remove the sandbox and end the keeper; WHY goes to the log. */
__attribute__ ((noreturn)) static void
finish (struct keeper *k, const char *why)
{
  fprintf (stderr, "csrun sandbox %s: removed: %s\n", k->spec->id, why);
  stop_jail (k);
  keeper_execs_release (k);
  for (size_t i = 0; keeper_parts[i]; i++)
    if (keeper_parts[i]->finish)
      keeper_parts[i]->finish (k);
  if (k->cg)
    {
      csr_error *e = NULL;
      if (csr_cgroup_delete (k->cg, &e) < 0)
        {
          fprintf (stderr, "csrun sandbox: %s\n", csr_error_text (e));
          csr_error_free (e);
        }
    }
  csr_error *e = NULL;
  if (csr_sandbox_reap (k->b->rootfd, k->spec->id, true, &e) < 0)
    {
      fprintf (stderr, "csrun sandbox: %s\n", csr_error_text (e));
      csr_error_free (e);
    }
  _exit (0);
}

void
keeper_target (const struct keeper *k, struct csr_sbx_target *t)
{
  t->init_pid = k->jail.pid;
  t->ns_fds = k->ns_fds;
  t->cg_fds = k->cg_fds;
  t->n_cg = k->n_cg_fds;
  t->cg_self = k->cg_self;
  t->sn = &k->sn;
}

void
keeper_reply (int fd, const char *json)
{
  size_t len = strlen (json);
  char *line = malloc (len + 2);
  if (line == NULL)
    return;
  memcpy (line, json, len);
  line[len] = '\n';
  line[len + 1] = '\0';
  /* A client that went away is no concern of ours; a long reply waits for
   * a client that reads slowly. */
  size_t off = 0;
  while (off < len + 1)
    {
      ssize_t w = send (fd, line + off, len + 1 - off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        break;
      off += (size_t)w;
    }
  free (line);
}

void
keeper_reply_gen (int fd, struct csr_jgen *w)
{
  char *s = csr_jgen_finish (w, "reply", NULL, NULL);
  if (s)
    keeper_reply (fd, s);
  else
    keeper_reply_error (fd, "out of memory");
  free (s);
}

void
keeper_reply_error (int fd, const char *msg)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "error", msg);
  csr_jgen_map_close (&w);
  char *s = csr_jgen_finish (&w, "reply", NULL, NULL);
  if (s)
    keeper_reply (fd, s);
  free (s);
}

void
keeper_reply_errorf (int fd, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *msg = NULL;
  int n = vasprintf (&msg, fmt, ap);
  va_end (ap);
  keeper_reply_error (fd, n < 0 ? "out of memory" : msg);
  if (n >= 0)
    free (msg);
}

int
keeper_watch (struct keeper *k, int fd, short events, keeper_watch_fn fn, void *arg)
{
  for (size_t i = 0; i < KEEPER_MAX_WATCHES; i++)
    if (!k->watches[i].used)
      {
        k->watches[i] = (struct keeper_watch){ true, fd, events, fn, arg };
        return 0;
      }
  errno = EMFILE;
  return -1;
}

void
keeper_unwatch (struct keeper *k, int fd)
{
  for (size_t i = 0; i < KEEPER_MAX_WATCHES; i++)
    if (k->watches[i].used && k->watches[i].fd == fd)
      k->watches[i].used = false;
}

char **
keeper_strv (yajl_val a)
{
  size_t n = a && YAJL_IS_ARRAY (a) ? a->u.array.len : 0;
  char **v = calloc (n + 1, sizeof *v);
  for (size_t i = 0; v && i < n; i++)
    {
      const char *s = csr_json_str (a->u.array.values[i]);
      if (s == NULL || (v[i] = strdup (s)) == NULL)
        {
          for (size_t j = 0; j < i; j++)
            free (v[j]);
          free (v);
          return NULL;
        }
    }
  return v;
}

void
keeper_strv_free (char **v)
{
  for (size_t i = 0; v && v[i]; i++)
    free (v[i]);
  free (v);
}

static void
reply_info (struct keeper *k, int fd)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "status", k->running ? "running" : "stopped");
  csr_jgen_kv_int (&w, "init_pid", k->running ? k->jail.pid : 0);
  csr_jgen_kv_int (&w, "execs", (long long)k->n_execs);
  csr_jgen_kv_int (&w, "idle_ms", (long long)(csr_mono_ms () - k->last_activity_ms));
  csr_jgen_str (&w, "pids");
  csr_jgen_array_open (&w);
  pid_t pids[256];
  size_t n = k->running ? csr_procns_pid_members (k->jail.pid, pids, 256) : 0;
  /* Rootless, the jail's init is not dumpable: its namespace can't be read
   * through /proc; the cgroup's list, else init alone. */
  pid_t *cgp = NULL;
  size_t ncg = 0;
  if (k->running && n <= 1 && k->cg && csr_cgroup_pids (k->cg, &cgp, &ncg, NULL) == 0)
    for (n = 0; n < ncg && n < 256; n++)
      pids[n] = cgp[n];
  free (cgp);
  if (k->running && n == 0)
    pids[n++] = k->jail.pid;
  for (size_t i = 0; i < n && i < 256; i++)
    csr_jgen_int (&w, pids[i]);
  csr_jgen_array_close (&w);
  csr_jgen_map_close (&w);
  char *s = csr_jgen_finish (&w, "reply", NULL, NULL);
  if (s)
    keeper_reply (fd, s);
  free (s);
}

/* ------------------------------------------------------------ the keeper's own requests */

static void
op_info (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)req, (void)fds, (void)n_fds, (void)keep;
  reply_info (k, fd);
}

static void
op_touch (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)k, (void)req, (void)fds, (void)n_fds, (void)keep;
  keeper_reply (fd, "{\"ok\":true}");
}

static void
op_stop (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)req, (void)fds, (void)n_fds, (void)keep;
  stop_jail (k);
  keeper_reply (fd, "{\"ok\":true}");
}

void
keeper_stop (struct keeper *k)
{
  stop_jail (k);
}

void
keeper_finish (struct keeper *k, const char *why)
{
  finish (k, why);
}

int
keeper_start (struct keeper *k, csr_error **err)
{
  if (start_jail (k, err) < 0)
    return -1;
  parts_started (k);
  return 0;
}

static void
op_start (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)req, (void)fds, (void)n_fds, (void)keep;
  csr_error *e = NULL;
  if (k->running)
    keeper_reply_error (fd, "the sandbox is already running");
  else if (keeper_start (k, &e) < 0)
    {
      keeper_reply_error (fd, csr_error_text (e));
      csr_error_free (e);
    }
  else
    keeper_reply (fd, "{\"ok\":true}");
}

static void
op_rm (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)req, (void)keep;
  keeper_reply (fd, "{\"ok\":true}");
  close (fd);
  for (size_t i = 0; i < n_fds; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  finish (k, "csrun sandbox rm");
}

static const struct keeper_op core_ops[] = {
  { "info", op_info, false },  { "touch", op_touch, true }, { "stop", op_stop, true },
  { "start", op_start, true }, { "rm", op_rm, true },       { "exec", keeper_op_exec, true },
  { NULL, NULL, false },
};

const struct keeper_part keeper_part_core = { "core", core_ops, NULL, NULL, NULL, NULL };

static const struct keeper_op *
find_op (const char *name)
{
  for (size_t i = 0; keeper_parts[i]; i++)
    for (const struct keeper_op *o = keeper_parts[i]->ops; o && o->name; o++)
      if (strcmp (o->name, name) == 0)
        return o;
  return NULL;
}

/* One request from a new connection FD (the descriptors with it). */
static void
handle (struct keeper *k, int fd)
{
  struct timeval tv = { 2, 0 };
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  /* issue 15: an attempt's exec carries the gate's source and policy. */
  static char buf[KEEPER_MAX_REQUEST];
  size_t n = 0;
  int fds[8];
  size_t n_fds = 0;
  while (n < sizeof buf - 1 && memchr (buf, '\n', n) == NULL)
    {
      struct iovec iov = { buf + n, sizeof buf - 1 - n };
      union
      {
        char b[CMSG_SPACE (sizeof (int) * 8)];
        struct cmsghdr align;
      } u;
      struct msghdr mh
          = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
      ssize_t r = recvmsg (fd, &mh, MSG_CMSG_CLOEXEC);
      if (r <= 0)
        break;
      for (struct cmsghdr *c = CMSG_FIRSTHDR (&mh); c; c = CMSG_NXTHDR (&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
          {
            size_t m = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
            int *p = (int *)CMSG_DATA (c);
            for (size_t i = 0; i < m; i++)
              if (n_fds < 8)
                fds[n_fds++] = p[i];
              else
                close (p[i]);
          }
      n += (size_t)r;
    }
  buf[n] = '\0';
  char ebuf[64];
  yajl_val req = memchr (buf, '\n', n) ? yajl_tree_parse (buf, ebuf, sizeof ebuf) : NULL;
  const char *name = csr_json_str (csr_json_get (req, "op"));
  const struct keeper_op *op = name ? find_op (name) : NULL;
  bool keep = false;
  if (name == NULL)
    keeper_reply_error (fd, "bad request");
  else if (op == NULL)
    keeper_reply_error (fd, "unknown request");
  else if (op->activity && k->busy_with && strcmp (op->name, "rm") != 0)
    keeper_reply_errorf (fd, "the sandbox is busy with %s: try again when it is done",
                         k->busy_with);
  else
    {
      if (op->activity)
        k->last_activity_ms = csr_mono_ms ();
      op->fn (k, fd, req, fds, n_fds, &keep);
    }
  for (size_t i = 0; i < n_fds; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  yajl_tree_free (req);
  if (!keep)
    close (fd);
}

static bool
idle (const struct keeper *k)
{
  return k->n_execs == 0 && k->n_busy == 0;
}

static int
next_timeout (struct keeper *k, uint64_t now)
{
  uint64_t next = UINT64_MAX;
  if (k->spec->idle_timeout_s > 0 && idle (k))
    next = k->last_activity_ms + (uint64_t)(k->spec->idle_timeout_s * 1000);
  if (k->ttl_deadline_ms && k->ttl_deadline_ms < next)
    next = k->ttl_deadline_ms;
  for (size_t i = 0; i < KEEPER_MAX_EXECS; i++)
    if (k->execs[i].used && k->execs[i].deadline_ms && !k->execs[i].x.timed_out
        && k->execs[i].deadline_ms < next)
      next = k->execs[i].deadline_ms;
  if (next == UINT64_MAX)
    return -1;
  return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

#define MAX_POLL (2 + 2 * KEEPER_MAX_EXECS + KEEPER_MAX_WATCHES)

__attribute__ ((noreturn)) static void
loop (struct keeper *k)
{
  for (;;)
    {
      static struct pollfd p[MAX_POLL];
      static struct keeper_exec *owner[MAX_POLL];
      static struct keeper_watch watch[MAX_POLL];
      size_t np = 0;
      p[np++] = (struct pollfd){ k->listen_fd, POLLIN, 0 };
      p[np++] = (struct pollfd){ k->running ? k->jail.pidfd : -1, POLLIN, 0 };
      for (size_t i = 0; i < KEEPER_MAX_EXECS; i++)
        if (k->execs[i].used)
          {
            owner[np] = &k->execs[i];
            p[np++] = (struct pollfd){ k->execs[i].x.status_fd, POLLIN, 0 };
            owner[np] = &k->execs[i];
            p[np++] = (struct pollfd){ k->execs[i].client, POLLRDHUP, 0 };
          }
      size_t first_watch = np;
      for (size_t i = 0; i < KEEPER_MAX_WATCHES; i++)
        if (k->watches[i].used)
          {
            /* A copy: a callback may change the table. */
            watch[np] = k->watches[i];
            p[np++] = (struct pollfd){ k->watches[i].fd, k->watches[i].events, 0 };
          }
      int pr = poll (p, np, next_timeout (k, csr_mono_ms ()));
      if (pr < 0 && errno != EINTR)
        finish (k, "poll failed");
      uint64_t now = csr_mono_ms ();
      if (k->ttl_deadline_ms && now >= k->ttl_deadline_ms)
        finish (k, "its TTL expired");
      if (k->spec->idle_timeout_s > 0 && idle (k)
          && now >= k->last_activity_ms + (uint64_t)(k->spec->idle_timeout_s * 1000))
        {
          k->idle_expired = true;
          if (!(k->on_idle && k->on_idle (k)))
            finish (k, "idle timeout");
        }
      if (pr <= 0)
        goto deadlines;
      if (p[1].revents)
        {
          /* The jail ended by itself (killed from outside, OOM): stopped. */
          stop_jail (k);
        }
      for (size_t i = 2; i < first_watch; i++)
        {
          struct keeper_exec *e = owner[i];
          if (!e->used || p[i].revents == 0)
            continue;
          if (p[i].fd == e->client)
            {
              /* The caller went away (interrupted): its exec goes too. */
              if (!e->x.have_status)
                csr_sbx_exec_kill (&e->x);
              continue;
            }
          keeper_exec_ready (k, e);
        }
      for (size_t i = first_watch; i < np; i++)
        if (p[i].revents)
          {
            /* Still watched (an earlier callback may have removed it)? */
            bool live = false;
            for (size_t j = 0; j < KEEPER_MAX_WATCHES && !live; j++)
              live = k->watches[j].used && k->watches[j].fd == p[i].fd
                     && k->watches[j].fn == watch[i].fn && k->watches[j].arg == watch[i].arg;
            if (live)
              watch[i].fn (k, p[i].fd, p[i].revents, watch[i].arg);
          }
      if (p[0].revents & POLLIN)
        for (;;)
          {
            int fd = accept4 (k->listen_fd, NULL, NULL, SOCK_CLOEXEC);
            if (fd < 0)
              break;
            handle (k, fd);
          }
    deadlines:
      for (size_t i = 0; i < KEEPER_MAX_EXECS; i++)
        {
          struct keeper_exec *e = &k->execs[i];
          if (e->used && e->deadline_ms && !e->x.timed_out && now >= e->deadline_ms
              && !e->x.have_status)
            {
              e->x.timed_out = true;
              csr_sbx_exec_kill (&e->x);
            }
        }
    }
}

void
csr_keeper_main (struct csr_keeper_boot *b)
{
  static struct keeper k;
  memset (&k, 0, sizeof k);
  k.b = b;
  k.spec = b->spec;
  k.listen_fd = -1;
  k.jail.pid = -1;
  k.jail.pidfd = k.jail.syncfd = -1;
  for (size_t i = 0; i < CSR_SANDBOX_N_NS; i++)
    k.ns_fds[i] = -1;
  k.disk_fds[0] = k.disk_fds[1] = k.disk_fds[2] = -1;
  signal (SIGPIPE, SIG_IGN);
  csr_error *e = NULL;
  if (setup (&k, &e) < 0)
    {
      const char *msg = csr_error_text (e);
      if (write (b->readyfd, msg, strlen (msg)) < 0)
        fprintf (stderr, "csrun sandbox: %s\n", msg);
      close (b->readyfd);
      stop_jail (&k);
      if (k.cg)
        csr_cgroup_delete (k.cg, NULL);
      csr_sandbox_reap (b->rootfd, k.spec->id, true, NULL);
      _exit (1);
    }
  for (size_t i = 0; keeper_parts[i]; i++)
    if (keeper_parts[i]->init && keeper_parts[i]->init (&k, &e) < 0)
      {
        const char *msg = csr_error_text (e);
        if (write (b->readyfd, msg, strlen (msg)) < 0)
          fprintf (stderr, "csrun sandbox: %s\n", msg);
        close (b->readyfd);
        b->readyfd = -1;
        finish (&k, msg);
      }
  parts_started (&k);
  k.last_activity_ms = csr_mono_ms ();
  if (k.spec->ttl_s > 0)
    k.ttl_deadline_ms = k.last_activity_ms + (uint64_t)(k.spec->ttl_s * 1000);
  /* Nothing of the caller's environment stays in the keeper (the jail's
   * got the sandbox's own from the start). */
  clearenv ();
  if (write (b->readyfd, "ok\n", 3) != 3)
    finish (&k, "the creator went away");
  close (b->readyfd);
  loop (&k);
}
