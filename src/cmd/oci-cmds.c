/* csrun start, state, kill, delete, list, ps, spec, features: the OCI
 * commands that work on the state directory. */
#include "config.h"
#include "oci.h"

#include <argp.h>
#include <dirent.h>
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

#include "cgroup/cgroup.h"
#include "oci/resources.h"
#include "oci/devices.h"
#include "oci/hooks.h"
#include "oci/notify.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/parse.h"
#include "util/syscalls.h"

/* The help of "csrun CMD" (argv[0]); 0 (the exit status). */
static int
help_of (const char *argv0)
{
  const char *sp = strchr (argv0, ' ');
  if (oci_help (sp ? sp + 1 : argv0, stdout) < 0)
    printf ("Usage: %s\nSee csrun-oci(8).\n", argv0);
  return 0;
}

/* Parse "csrun CMD [flags] ID [MORE]": FLAGS lists the boolean flags the
 * command accepts as (long, short) pairs ("--force", "-f"); other words
 * starting with '-' are errors (but a second operand such as "-9"). */
struct simple_args
{
  const char *id;
  const char *more;
  bool flag[4];
  const char *format; /* --format VALUE / -f VALUE (list, ps) */
};

static int
simple_parse (const struct csr_global *g, int argc, char **argv, const char *const *flags,
              size_t n_flags, bool want_id, bool allow_more, bool allow_format,
              struct simple_args *a)
{
  memset (a, 0, sizeof *a);
  for (int i = 1; i < argc; i++)
    {
      const char *w = argv[i];
      if (strcmp (w, "--help") == 0 || strcmp (w, "-h") == 0)
        exit (help_of (argv[0]));
      if (allow_format && (strcmp (w, "--format") == 0 || strcmp (w, "-f") == 0) && i + 1 < argc)
        {
          a->format = argv[++i];
          continue;
        }
      if (allow_format && strncmp (w, "--format=", 9) == 0)
        {
          a->format = w + 9;
          continue;
        }
      if (w[0] == '-' && w[1] != '\0' && !(a->id && allow_more && a->more == NULL))
        {
          /* FLAGS come in pairs (long, short): pair k/2 sets flag[k/2]. */
          bool known = false;
          for (size_t k = 0; k < n_flags && k / 2 < 4; k++)
            if (strcmp (w, flags[k]) == 0)
              known = a->flag[k / 2] = true;
          if (!known)
            return oci_failf (g, "%s: unknown option '%s'", argv[0], w);
          continue;
        }
      if (a->id == NULL)
        a->id = w;
      else if (allow_more && a->more == NULL)
        a->more = w;
      else
        return oci_failf (g, "%s: unexpected argument '%s'", argv[0], w);
    }
  if (want_id && a->id == NULL)
    return oci_failf (g, "%s: missing container ID", argv[0]);
  return 0;
}

/* Load the state of ID (failing the command when it can't). */
static int
load (const struct csr_global *g, const char *root, const char *id, struct oci_state *st)
{
  csr_error *e = NULL;
  if (oci_id_check (id, &e) < 0 || oci_state_load (root, id, st, &e) < 0)
    return oci_fail (g, e);
  return 0;
}

/* The container's cgroup as the state recorded it, or NULL (none, or no memory). */
static struct csr_cgroup *
state_cgroup (const struct oci_state *st)
{
  struct csr_cgroup *cg = NULL;
  csr_error *e = NULL;
  if (csr_cgroup_container_open (st->cgroup_v2, st->cgroup_v1, st->n_cgroup_v1, &cg, &e) < 0)
    csr_error_free (e);
  return cg;
}

/* Processes of the container: its cgroup's, else its pid namespace's. */
static size_t namespace_pids (pid_t pid, pid_t *out, size_t cap);
static size_t
container_pids (const struct oci_state *st, pid_t *out, size_t cap)
{
  cleanup_cgroup struct csr_cgroup *cg = state_cgroup (st);
  if (cg)
    {
      pid_t *pids = NULL;
      size_t n = 0;
      csr_error *e = NULL;
      if (csr_cgroup_pids (cg, &pids, &n, &e) == 0)
        {
          size_t k = n < cap ? n : cap;
          memcpy (out, pids, k * sizeof *pids);
          free (pids);
          return k;
        }
      csr_error_free (e);
    }
  return namespace_pids (st->pid, out, cap);
}

static void
run_hooks_logged (const struct csr_global *g, const struct oci_state *st, int stage)
{
  if (st->config_path == NULL)
    return;
  struct oci_config cfg;
  memset (&cfg, 0, sizeof cfg);
  csr_error *e = NULL;
  if (oci_config_load (st->config_path, &cfg, &e) < 0)
    {
      csr_error_free (e);
      return;
    }
  if (cfg.n_hooks[stage])
    {
      /* poststart: "running", even when the process is gone already (crun). */
      struct oci_state copy = *st;
      copy.force_running = stage == OCI_HOOK_POSTSTART;
      cleanup_free char *json = oci_state_json (&copy);
      cleanup_close int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (st->bundle && chdir (st->bundle) == 0)
        {
          if (oci_hooks_run (&cfg, stage, json, &e) < 0)
            {
              oci_warn (g, "%s", csr_error_text (e));
              csr_error_free (e);
            }
          if (cwd >= 0)
            (void)!fchdir (cwd);
        }
    }
  oci_config_release (&cfg);
}

/* The start of the commands on one container: parse ARGV, find the state
 * root, load the state.  0, or 1 after reporting the failure. */
static int
open_container (struct csr_global *g, int argc, char **argv, bool allow_format,
                struct simple_args *a, char **root, struct oci_state *st)
{
  *root = NULL;
  if (simple_parse (g, argc, argv, NULL, 0, true, false, allow_format, a))
    return 1;
  *root = oci_root (g);
  if (*root == NULL)
    return 1;
  if (load (g, *root, a->id, st))
    {
      free (*root);
      *root = NULL;
      return 1;
    }
  return 0;
}

bool oci_start_notify_in_background = false;

int
cmd_oci_start (struct csr_global *g, int argc, char **argv)
{
  struct simple_args a;
  cleanup_free char *root = NULL;
  struct oci_state st;
  if (open_container (g, argc, argv, false, &a, &root, &st))
    return 1;
  /* `state` already answers "creating" while `create` sets the container up
   * (its hooks run); runc and crun write their state only once it is
   * created, so a start right after a successful `state` finds it created
   * there: wait for create to finish here, at most 10 s. */
  for (int waited = 0; oci_state_status (&st) == OCI_CREATING && waited < 10000; waited += 20)
    {
      usleep (20000);
      oci_state_release (&st);
      if (load (g, root, a.id, &st))
        return 1;
    }
  csr_error *e = NULL;
  int lock = oci_state_lock (root, a.id, &e);
  if (lock < 0)
    {
      oci_state_release (&st);
      return oci_fail (g, e);
    }
  /* Again under the lock: another start may have been first. */
  oci_state_release (&st);
  if (load (g, root, a.id, &st))
    {
      close (lock);
      return 1;
    }
  int rc = 0;
  enum oci_status s = oci_state_status (&st);
  cleanup_free char *dir = oci_state_dir (root, a.id);
  cleanup_free char *fifo = NULL;
  /* sd_notify: a container created with NOTIFY_SOCKET has its own socket,
   * bound here before it runs; its READY=1 goes to ours (runc and crun). */
  const char *notify_host = getenv ("NOTIFY_SOCKET");
  if (notify_host != NULL && *notify_host == '\0')
    notify_host = NULL;
  cleanup_close int notify = -1;
  if (s != OCI_CREATED)
    rc = oci_failf (g, "cannot start container '%s': it is %s, not created", a.id,
                    oci_status_name (s));
  else if (dir == NULL || asprintf (&fifo, "%s/exec.fifo", dir) < 0)
    rc = oci_failf (g, "out of memory");
  else if (notify_host && oci_notify_listen (dir, &notify, &e) < 0)
    rc = oci_fail (g, e);
  else
    {
      int fd = open (fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        rc = oci_failf (g, "start '%s': open %s: %s", a.id, fifo, strerror (errno));
      else
        {
          /* The process opens its end and writes one byte; it may also have
           * died meanwhile: wait for either, at most 10 s. */
          int pidfd = csr_pidfd_open (st.pid);
          char byte = 0;
          ssize_t r = -1;
          for (int waited = 0; waited < 10000; waited += 10)
            {
              r = read (fd, &byte, 1);
              if (r == 1)
                break;
              struct pollfd p[2]
                  = { { .fd = fd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
              if (poll (p, pidfd >= 0 ? 2 : 1, 10) > 0 && pidfd >= 0 && (p[1].revents & POLLIN))
                {
                  r = read (fd, &byte, 1);
                  break;
                }
            }
          if (pidfd >= 0)
            close (pidfd);
          close (fd);
          if (r != 1)
            rc = oci_failf (g, "start '%s': the container's process did not take the start", a.id);
          else
            {
              unlink (fifo);
              st.started = true;
              if (oci_state_save (root, &st, &e) < 0)
                rc = oci_fail (g, e);
            }
        }
    }
  close (lock);
  if (rc == 0 && notify >= 0)
    {
      /* Running once it says it is ready (crun: poststart after that); no
       * limit here: systemd has its own (TimeoutStartSec). */
      cleanup_close int pidfd = csr_pidfd_open (st.pid);
      pid_t helper = oci_start_notify_in_background ? fork () : 0;
      if (helper < 0)
        rc = oci_failf (g, "start '%s': fork the notify helper: %s", a.id, strerror (errno));
      else if (helper == 0)
        {
          int frc = oci_notify_forward (notify, pidfd, st.pid, notify_host, &e);
          if (frc < 0)
            rc = oci_fail (g, e);
          if (oci_start_notify_in_background)
            _exit (rc == 0 ? 0 : 1);
        }
    }
  if (rc == 0)
    run_hooks_logged (g, &st, OCI_HOOK_POSTSTART);
  oci_state_release (&st);
  return rc;
}

int
cmd_oci_state (struct csr_global *g, int argc, char **argv)
{
  struct simple_args a;
  cleanup_free char *root = NULL;
  struct oci_state st;
  if (open_container (g, argc, argv, false, &a, &root, &st))
    return 1;
  cleanup_free char *json = oci_state_json (&st);
  oci_state_release (&st);
  if (json == NULL)
    return oci_failf (g, "out of memory");
  fputs (json, stdout);
  return 0;
}

/* Every process in the pid namespace of PID (for kill --all and ps). */
static size_t
namespace_pids (pid_t pid, pid_t *out, size_t cap)
{
  char path[64];
  struct stat ns;
  snprintf (path, sizeof path, "/proc/%d/ns/pid", (int)pid);
  if (stat (path, &ns) < 0)
    return 0;
  /* A container in our own pid namespace (none of its own): its process
   * only, never every process of the host's namespace. */
  struct stat self;
  if (stat ("/proc/self/ns/pid", &self) < 0
      || (self.st_ino == ns.st_ino && self.st_dev == ns.st_dev))
    {
      if (cap == 0)
        return 0;
      out[0] = pid;
      return 1;
    }
  cleanup_dir DIR *d = opendir ("/proc");
  if (d == NULL)
    return 0;
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL && n < cap)
    {
      char *end;
      long p = strtol (de->d_name, &end, 10);
      if (*end || p <= 0)
        continue;
      struct stat other;
      snprintf (path, sizeof path, "/proc/%ld/ns/pid", p);
      if (stat (path, &other) == 0 && other.st_ino == ns.st_ino && other.st_dev == ns.st_dev)
        out[n++] = (pid_t)p;
    }
  return n;
}

/* Thaw a paused container's cgroup (after SIGKILL, so that it dies). */
static void
thaw (const struct csr_global *g, const struct oci_state *st)
{
  cleanup_cgroup struct csr_cgroup *cg = state_cgroup (st);
  csr_error *e = NULL;
  if (cg && csr_cgroup_freeze (cg, false, &e) < 0)
    {
      oci_warn (g, "container '%s': thaw: %s", st->id, csr_error_text (e));
      csr_error_free (e);
    }
}

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

/* --regex (crun's): apply FN to every container whose id matches the
 * extended regular expression PATTERN (unanchored, as crun). */
static int
for_each_matching (struct csr_global *g, const char *root, const char *pattern,
                   int (*fn) (struct csr_global *, const char *, const char *, void *), void *data)
{
  regex_t re;
  int r = regcomp (&re, pattern, REG_EXTENDED | REG_NOSUB);
  if (r != 0)
    {
      char msg[256];
      regerror (r, &re, msg, sizeof msg);
      return oci_failf (g, "invalid --regex '%s': %s", pattern, msg);
    }
  char **ids = NULL;
  size_t n = 0;
  csr_error *e = NULL;
  if (oci_state_list (root, &ids, &n, &e) < 0)
    {
      regfree (&re);
      return oci_fail (g, e);
    }
  int rc = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (regexec (&re, ids[i], 0, NULL, 0) == 0 && fn (g, root, ids[i], data) != 0)
        rc = 1;
      free (ids[i]);
    }
  free (ids);
  regfree (&re);
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
          size_t n = namespace_pids (st.pid, pids, 4096);
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

int
cmd_oci_list (struct csr_global *g, int argc, char **argv)
{
  static const char *const flags[] = { "--quiet", "-q" };
  struct simple_args a;
  if (simple_parse (g, argc, argv, flags, 2, false, false, true, &a))
    return 1;
  bool json = a.format && strcmp (a.format, "json") == 0 && !a.flag[0];
  if (a.format && !json && strcmp (a.format, "table") != 0)
    return oci_failf (g, "list: unknown format '%s' (table or json)", a.format);
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  char **ids = NULL;
  size_t n = 0;
  csr_error *e = NULL;
  if (oci_state_list (root, &ids, &n, &e) < 0)
    return oci_fail (g, e);
  size_t shown = 0;
  if (json)
    fputs ("[", stdout);
  else if (!a.flag[0])
    printf ("%-24s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
            "OWNER");
  for (size_t i = 0; i < n; i++)
    {
      struct oci_state st;
      if (oci_state_load (root, ids[i], &st, &e) < 0)
        {
          csr_error_freep (&e);
          continue;
        }
      enum oci_status s = oci_state_status (&st);
      if (a.flag[0])
        puts (st.id);
      else if (json)
        {
          cleanup_free char *doc = oci_state_json_compact (&st);
          printf ("%s%s", shown++ ? "," : "", doc ? doc : "null");
        }
      else
        {
          struct passwd *pw = getpwuid (st.owner);
          printf ("%-24s %-8d %-10s %-40s %-32s %s\n", st.id, s == OCI_STOPPED ? 0 : (int)st.pid,
                  oci_status_name (s), st.bundle, st.created ? st.created : "",
                  pw ? pw->pw_name : "");
        }
      oci_state_release (&st);
    }
  if (json)
    fputs ("]\n", stdout);
  for (size_t i = 0; i < n; i++)
    free (ids[i]);
  free (ids);
  return 0;
}

/* Run ps(1) with ARGS (NULL-terminated, argv[0] "ps"); its stdout and
 * stderr together in *OUT.  0, or -1 with the reason (and ps's output). */
static int
run_ps (char **args, char **out, csr_error **err)
{
  *out = NULL;
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (p[0]);
      close (p[1]);
      return csr_error_errno (err, "fork");
    }
  if (pid == 0)
    {
      if (dup2 (p[1], 1) < 0 || dup2 (p[1], 2) < 0)
        _exit (127);
      execvp ("ps", args);
      dprintf (2, "exec ps: %s", strerror (errno));
      _exit (127);
    }
  close (p[1]);
  size_t len = 0, cap = 0;
  char *buf = NULL;
  for (;;)
    {
      if (len + 4096 + 1 > cap)
        {
          cap = cap ? cap * 2 : 16384;
          char *nb = cap <= (64u << 20) ? realloc (buf, cap) : NULL;
          if (nb == NULL)
            break;
          buf = nb;
        }
      ssize_t r = read (p[0], buf + len, cap - len - 1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      len += (size_t)r;
    }
  close (p[0]);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
        free (buf);
        return csr_error_errno (err, "wait for ps");
      }
  if (buf == NULL)
    return csr_error_set (err, ENOMEM, "ps output");
  buf[len] = '\0';
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      while (len > 0 && buf[len - 1] == '\n')
        buf[--len] = '\0';
      csr_error_set (err, 0, "ps failed (exit %d): %s",
                     WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status), buf);
      free (buf);
      return -1;
    }
  *out = buf;
  return 0;
}

/* Field N (0-based, blank-separated) of LINE as a pid, or -1. */
static long
pid_field (const char *line, int n)
{
  const char *c = line;
  for (int f = 0;; f++)
    {
      while (*c == ' ' || *c == '\t')
        c++;
      if (*c == '\0' || *c == '\n')
        return -1;
      if (f == n)
        {
          char *end;
          long v = strtol (c, &end, 10);
          return end != c && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\0') ? v : -1;
        }
      while (*c && *c != ' ' && *c != '\t' && *c != '\n')
        c++;
    }
}

/* csrun ps [-f table|json] ID [PS-OPTIONS...]: as runc, ps(1)'s table (by
 * default `ps -ef`) filtered to the container's processes, found by the
 * column titled PID; or, with -f json, the host pids as a JSON array.
 * Options after ID all go to ps (a "--" right after ID is dropped). */
int
cmd_oci_ps (struct csr_global *g, int argc, char **argv)
{
  const char *format = "table", *id = NULL;
  int i = 1;
  for (; i < argc && id == NULL; i++)
    {
      const char *w = argv[i];
      if (strcmp (w, "--help") == 0 || strcmp (w, "-h") == 0)
        return help_of (argv[0]);
      if ((strcmp (w, "--format") == 0 || strcmp (w, "-f") == 0))
        {
          if (i + 1 >= argc)
            return oci_failf (g, "%s: %s needs a value (table or json)", argv[0], w);
          format = argv[++i];
        }
      else if (strncmp (w, "--format=", 9) == 0)
        format = w + 9;
      else if (strcmp (w, "--") == 0)
        continue;
      else if (w[0] == '-' && w[1] != '\0')
        return oci_failf (g, "%s: unknown option '%s'", argv[0], w);
      else
        id = w;
    }
  if (id == NULL)
    return oci_failf (g, "%s: missing container ID", argv[0]);
  bool json = strcmp (format, "json") == 0;
  if (!json && strcmp (format, "table") != 0)
    return oci_failf (g, "%s: unknown format '%s' (table or json)", argv[0], format);
  if (i < argc && strcmp (argv[i], "--") == 0)
    i++;
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  struct oci_state st;
  if (load (g, root, id, &st))
    return 1;
  static pid_t pids[4096];
  size_t n = oci_state_status (&st) == OCI_STOPPED ? 0 : container_pids (&st, pids, 4096);
  oci_state_release (&st);
  if (json)
    {
      fputs ("[", stdout);
      for (size_t k = 0; k < n; k++)
        printf ("%s%d", k ? "," : "", (int)pids[k]);
      fputs ("]\n", stdout);
      return 0;
    }
  cleanup_free char **args = calloc ((size_t)(argc - i) + 3, sizeof (char *));
  if (args == NULL)
    return oci_failf (g, "out of memory");
  size_t na = 0;
  args[na++] = (char *)"ps";
  if (i >= argc)
    args[na++] = (char *)"-ef";
  for (; i < argc; i++)
    args[na++] = argv[i];
  cleanup_free char *out = NULL;
  csr_error *e = NULL;
  if (run_ps (args, &out, &e) < 0)
    return oci_fail (g, e);
  char *line = out;
  char *end = strchr (line, '\n');
  if (end)
    *end = '\0';
  /* The PID column: its index among the title's words. */
  cleanup_free char *title = strdup (line);
  if (title == NULL)
    return oci_failf (g, "out of memory");
  int col = -1, k = 0;
  for (char *save = NULL, *t = strtok_r (title, " \t", &save); t && col < 0;
       t = strtok_r (NULL, " \t", &save), k++)
    if (strcmp (t, "PID") == 0)
      col = k;
  if (col < 0)
    return oci_failf (g, "ps: no PID column in the output of ps %s", args[1] ? args[1] : "");
  puts (line);
  for (line = end ? end + 1 : NULL; line && *line; line = end ? end + 1 : NULL)
    {
      end = strchr (line, '\n');
      if (end)
        *end = '\0';
      long p = pid_field (line, col);
      for (size_t q = 0; q < n && p > 0; q++)
        if (pids[q] == (pid_t)p)
          {
            puts (line);
            break;
          }
    }
  return 0;
}

int
cmd_oci_spec (struct csr_global *g, int argc, char **argv)
{
  bool rootless = false;
  const char *bundle = ".";
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--rootless") == 0)
        rootless = true;
      else if ((strcmp (argv[i], "--bundle") == 0 || strcmp (argv[i], "-b") == 0) && i + 1 < argc)
        bundle = argv[++i];
      else if (strcmp (argv[i], "--help") == 0)
        {
          puts ("Usage: csrun spec [--rootless] [--bundle DIR]\nWrite a default config.json "
                "into DIR (default .).  See csrun-oci(8).");
          return 0;
        }
      else
        return oci_failf (g, "spec: unexpected argument '%s'", argv[i]);
    }
  cleanup_free char *json = oci_config_default_json (rootless, geteuid (), getegid ());
  cleanup_free char *path = NULL;
  if (json == NULL || asprintf (&path, "%s/config.json", bundle) < 0)
    return oci_failf (g, "out of memory");
  if (access (path, F_OK) == 0)
    return oci_failf (g, "spec: %s already exists", path);
  csr_error *e = NULL;
  if (csr_write_file_atomic (path, json, strlen (json), 0644, &e) < 0)
    return oci_fail (g, e);
  return 0;
}

int
cmd_oci_features (struct csr_global *g, int argc, char **argv)
{
  (void)argc;
  (void)argv;
  (void)g;
  fputs ("{\n"
         "  \"ociVersionMin\": \"1.0.0\",\n"
         "  \"ociVersionMax\": \"1.2.0\",\n"
         "  \"hooks\": [\"prestart\", \"createRuntime\", \"createContainer\", "
         "\"startContainer\", \"poststart\", \"poststop\"],\n"
         "  \"mountOptions\": [\"ro\", \"rw\", \"nosuid\", \"suid\", \"nodev\", \"dev\", "
         "\"noexec\", \"exec\", \"sync\", \"async\", \"dirsync\", \"remount\", \"mand\", "
         "\"nomand\", \"atime\", \"noatime\", \"diratime\", \"nodiratime\", \"relatime\", "
         "\"norelatime\", \"strictatime\", \"nostrictatime\", \"bind\", \"rbind\", \"private\", "
         "\"rprivate\", \"shared\", \"rshared\", \"slave\", \"rslave\", \"unbindable\", "
         "\"runbindable\"],\n"
         "  \"linux\": {\n"
         "    \"namespaces\": [\"cgroup\", \"ipc\", \"mount\", \"network\", \"pid\", \"user\", "
         "\"uts\"],\n"
         "    \"capabilities\": [],\n"
         "    \"cgroup\": {\"v1\": true, \"v2\": true, \"systemd\": false, \"systemdUser\": "
         "false},\n"
         "    \"seccomp\": {\"enabled\": true, \"actions\": [\"SCMP_ACT_ALLOW\", "
         "\"SCMP_ACT_ERRNO\", \"SCMP_ACT_KILL\", \"SCMP_ACT_KILL_PROCESS\", "
         "\"SCMP_ACT_KILL_THREAD\", \"SCMP_ACT_LOG\", \"SCMP_ACT_TRAP\", \"SCMP_ACT_TRACE\"]},\n"
         "    \"apparmor\": {\"enabled\": false},\n"
         "    \"selinux\": {\"enabled\": false}\n"
         "  },\n"
         "  \"annotations\": {\"run.csrun.version\": \"" PACKAGE_VERSION "\"}\n"
         "}\n",
         stdout);
  return 0;
}

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

/* runc's update flags: NAME, what it sets. */
enum upd_kind
{
  UPD_BYTES,  /* a size ("50M", "1g", bytes) or -1 (unlimited) */
  UPD_INT,    /* an integer, -1 allowed */
  UPD_UINT,   /* an unsigned integer */
  UPD_STRING, /* as is */
};
struct upd_flag
{
  const char *name;
  enum upd_kind kind;
  size_t off;  /* in struct csr_cgroup_resources */
  size_t has;  /* its has_* flag, or (size_t)-1 */
  unsigned wd; /* bytes of the field: 8, 2 (blkio weight) */
};
#define UPD_NONE ((size_t)-1)
#define UPD_AT(f) offsetof (struct csr_cgroup_resources, f)
static const struct upd_flag upd_flags[] = {
  { "memory", UPD_BYTES, UPD_AT (memory_limit), UPD_NONE, 8 },
  { "memory-swap", UPD_BYTES, UPD_AT (memory_swap), UPD_NONE, 8 },
  { "memory-reservation", UPD_BYTES, UPD_AT (memory_reservation), UPD_AT (has_memory_reservation),
    8 },
  { "kernel-memory", UPD_BYTES, UPD_AT (memory_kernel), UPD_AT (has_memory_kernel), 8 },
  { "kernel-memory-tcp", UPD_BYTES, UPD_AT (memory_kernel_tcp), UPD_AT (has_memory_kernel_tcp), 8 },
  { "pids-limit", UPD_INT, UPD_AT (pids_limit), UPD_NONE, 8 },
  { "cpu-period", UPD_UINT, UPD_AT (cpu_period), UPD_NONE, 8 },
  { "cpu-quota", UPD_INT, UPD_AT (cpu_quota), UPD_NONE, 8 },
  { "cpu-share", UPD_UINT, UPD_AT (cpu_shares), UPD_NONE, 8 },
  { "cpu-shares", UPD_UINT, UPD_AT (cpu_shares), UPD_NONE, 8 },
  { "cpu-rt-period", UPD_UINT, UPD_AT (cpu_rt_period), UPD_AT (has_cpu_rt_period), 8 },
  { "cpu-rt-runtime", UPD_INT, UPD_AT (cpu_rt_runtime), UPD_AT (has_cpu_rt_runtime), 8 },
  { "cpuset-cpus", UPD_STRING, UPD_AT (cpu_cpus), UPD_NONE, 0 },
  { "cpuset-mems", UPD_STRING, UPD_AT (cpu_mems), UPD_NONE, 0 },
  { "blkio-weight", UPD_UINT, UPD_AT (blkio_weight), UPD_AT (has_blkio_weight), 2 },
};

static const char update_usage[]
    = "Usage: csrun update [OPTION...] ID\n"
      "Set new cgroup limits on a running (or paused) container; only what is given is written\n"
      "(a --cpu-quota alone keeps the period, and the reverse).\n"
      "  -r, --resources FILE|-     linux.resources JSON (runtime spec syntax) from FILE or stdin\n"
      "      --memory BYTES         memory limit (50M, 1G, bytes; -1: unlimited)\n"
      "      --memory-swap BYTES    memory+swap limit (-1: unlimited)\n"
      "      --memory-reservation BYTES  soft limit (v1 soft_limit_in_bytes, v2 memory.low)\n"
      "      --kernel-memory BYTES, --kernel-memory-tcp BYTES  (ignored where the kernel has "
      "none)\n"
      "      --pids-limit N         maximum number of processes (-1: unlimited)\n"
      "      --cpu-period US, --cpu-quota US (-1: unlimited), --cpu-share N\n"
      "      --cpu-rt-period US, --cpu-rt-runtime US  realtime group scheduling (cgroup v1)\n"
      "      --cpuset-cpus LIST, --cpuset-mems LIST   e.g. 0-2,4\n"
      "      --blkio-weight N       10..1000\n"
      "Options take their value as the next word or after '='.  See csrun-oci(8).";

/* Set one runc-style flag of R from VAL. */
static int
update_flag (const struct csr_global *g, const struct upd_flag *f, const char *val,
             struct csr_cgroup_resources *r)
{
  char *base = (char *)r;
  if (f->kind == UPD_STRING)
    {
      char **sp = (char **)(base + f->off);
      free (*sp);
      *sp = strdup (val);
      if (*sp == NULL)
        return oci_failf (g, "out of memory");
      return 0;
    }
  int64_t v = 0;
  if (f->kind == UPD_BYTES && strcmp (val, "-1") != 0)
    {
      uint64_t b;
      csr_error *e = NULL;
      if (csr_parse_size (val, INT64_MAX, &b, &e) < 0)
        {
          csr_error_free (e);
          return oci_failf (g, "update: invalid --%s '%s' (a size such as 64M, or -1)", f->name,
                            val);
        }
      v = (int64_t)b;
    }
  else
    {
      char *end;
      errno = 0;
      long long n = strtoll (val, &end, 10);
      if (errno || *end || end == val || n < (f->kind == UPD_UINT ? 0 : -1))
        return oci_failf (g, "update: invalid --%s '%s'", f->name, val);
      v = n;
    }
  if (f->wd == 2)
    {
      if (v != 0 && (v < 10 || v > 1000))
        return oci_failf (g, "update: --%s must be 10..1000, got '%s'", f->name, val);
      *(uint16_t *)(base + f->off) = (uint16_t)v;
    }
  else
    *(int64_t *)(base + f->off) = v; /* the uint64_t fields share the layout */
  if (f->has != UPD_NONE)
    *(bool *)(base + f->has) = v != 0 || f->wd != 2;
  return 0;
}

/* linux.resources JSON from PATH ("-": stdin, any kind of file) into *R,
 * with the device rules (root only: rootless there is no device cgroup). */
static int
update_json (const struct csr_global *g, const char *path, struct csr_cgroup_resources *r,
             struct oci_dev_rule **dev)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  int rc;
  if (strcmp (path, "-") == 0)
    rc = csr_read_fd (STDIN_FILENO, 1 << 20, &text, &len, &e);
  else
    {
      /* A pipe or /dev/fd/N is fine too: read it blocking. */
      cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
      if (fd < 0)
        return oci_failf (g, "update: %s: %s", path, strerror (errno));
      rc = csr_read_fd (fd, 1 << 20, &text, &len, &e);
    }
  if (rc < 0)
    return oci_fail (g, e);
  if (oci_cgroup_resources_parse (text, len, r, &e) < 0)
    return oci_fail (g, e);
  /* The device rules: through the config parser, which has their syntax. */
  cleanup_free char *doc = NULL;
  if (asprintf (&doc,
                "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/\"},\"linux\":{"
                "\"resources\":%.*s}}",
                (int)len, text)
      < 0)
    return oci_failf (g, "out of memory");
  struct oci_config cfg;
  memset (&cfg, 0, sizeof cfg);
  if (oci_config_parse (doc, strlen (doc), &cfg, &e) < 0)
    return oci_fail (g, e);
  rc = 0;
  if (cfg.resources.has_devices)
    {
      /* Root: set them (or fail); rootless: there is no device cgroup, as
       * create said. */
      if (oci_devices_privileged ())
        {
          size_t n = cfg.resources.n_devices;
          if (n && (*dev = calloc (n, sizeof **dev)) == NULL)
            rc = oci_failf (g, "out of memory");
          else
            {
              if (n)
                memcpy (*dev, cfg.resources.devices, n * sizeof **dev);
              r->set_devices = true;
              r->devices = *dev;
              r->n_devices = n;
            }
        }
      else if (cfg.resources.n_devices)
        oci_warn (g, "linux.resources.devices not enforced (rootless: no device cgroup)");
    }
  oci_config_release (&cfg);
  return rc;
}

static void
release_resources (struct csr_cgroup_resources *r)
{
  oci_cgroup_resources_release (r);
}
#define cleanup_resources __attribute__ ((cleanup (release_resources)))

/* csrun update [-r FILE|-] [runc's flags] ID: new limits for a running
 * container's cgroup (linux.resources syntax for -r). */
int
cmd_oci_update (struct csr_global *g, int argc, char **argv)
{
  const char *resources = NULL, *id = NULL;
  cleanup_resources struct csr_cgroup_resources r = { 0 };
  cleanup_free struct oci_dev_rule *dev = NULL;
  /* Flags apply after -r's JSON: collect them first. */
  const struct upd_flag *fl[64];
  const char *fv[64];
  size_t nf = 0;
  for (int i = 1; i < argc; i++)
    {
      const char *w = argv[i];
      if (strcmp (w, "--help") == 0 || strcmp (w, "-h") == 0)
        {
          puts (update_usage);
          return 0;
        }
      if (w[0] != '-' || strcmp (w, "-") == 0)
        {
          if (id)
            return oci_failf (g, "update: unexpected argument '%s'", w);
          id = w;
          continue;
        }
      const char *name = w + (w[1] == '-' ? 2 : 1);
      const char *eq = strchr (name, '=');
      size_t nl = eq ? (size_t)(eq - name) : strlen (name);
      const char *val = eq ? eq + 1 : NULL;
      if ((nl == 1 && name[0] == 'r') || (nl == 9 && strncmp (name, "resources", 9) == 0))
        {
          if (val == NULL && i + 1 >= argc)
            return oci_failf (g, "update: %s needs a value", w);
          resources = val ? val : argv[++i];
          continue;
        }
      if ((nl == 15 && strncmp (name, "l3-cache-schema", 15) == 0)
          || (nl == 13 && strncmp (name, "mem-bw-schema", 13) == 0))
        return oci_failf (g, "update: --%.*s: Intel RDT (linux.intelRdt) is not supported by csrun",
                          (int)nl, name);
      const struct upd_flag *f = NULL;
      for (size_t k = 0; k < sizeof upd_flags / sizeof upd_flags[0]; k++)
        if (strlen (upd_flags[k].name) == nl && strncmp (upd_flags[k].name, name, nl) == 0)
          f = &upd_flags[k];
      if (f == NULL || w[1] != '-')
        return oci_failf (g, "update: unknown option '%s'", w);
      if (val == NULL)
        {
          if (i + 1 >= argc)
            return oci_failf (g, "update: %s needs a value", w);
          val = argv[++i];
        }
      if (nf == sizeof fl / sizeof fl[0])
        return oci_failf (g, "update: too many options");
      fl[nf] = f;
      fv[nf++] = val;
    }
  if (id == NULL)
    return oci_failf (g, "update: missing container ID");
  if (resources && update_json (g, resources, &r, &dev))
    return 1;
  for (size_t k = 0; k < nf; k++)
    if (update_flag (g, fl[k], fv[k], &r))
      return 1;
  csr_error *e = NULL;
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  struct oci_state st;
  if (load (g, root, id, &st))
    return 1;
  cleanup_cgroup struct csr_cgroup *cg = state_cgroup (&st);
  int rc = 0;
  if (oci_state_status (&st) == OCI_STOPPED)
    rc = oci_failf (g, "cannot update container '%s': it is stopped", id);
  else if (cg == NULL)
    rc = oci_failf (g, "cannot update container '%s': it has no cgroup", id);
  else
    {
      struct csr_cgroup_applied ap = { 0 };
      if (csr_cgroup_update (cg, &r, &ap, &e) < 0)
        rc = oci_fail (g, e);
      else if (r.set_devices && !ap.devices)
        rc = oci_failf (g,
                        "cannot update container '%s': linux.resources.devices: no devices "
                        "controller in its cgroup",
                        id);
    }
  oci_state_release (&st);
  return rc;
}
