/* csrun start, state, kill, delete, list, ps, spec, features: the OCI
 * commands that work on the state directory. */
#include "config.h"
#include "oci.h"

#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci/cgroup.h"
#include "oci/devices.h"
#include "oci/hooks.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/syscalls.h"

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
        {
          printf ("Usage: %s%s%s\nSee csrun-oci(8).\n", argv[0], want_id ? " ID" : "",
                  allow_more ? " [ARG]" : "");
          exit (0);
        }
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

/* The container's cgroup as the state recorded it (strings borrowed). */
static bool
state_cgroup (const struct oci_state *st, struct oci_cgroup *cg)
{
  memset (cg, 0, sizeof *cg);
  cg->v2 = st->cgroup_v2;
  for (size_t i = 0; i < st->n_cgroup_v1 && i < OCI_CG_MAX_DIRS; i++)
    cg->v1[cg->n_v1++] = st->cgroup_v1[i];
  return cg->v2 || cg->n_v1;
}

/* Processes of the container: its cgroup's, else its pid namespace's. */
static size_t namespace_pids (pid_t pid, pid_t *out, size_t cap);
static size_t
container_pids (const struct oci_state *st, pid_t *out, size_t cap)
{
  struct oci_cgroup cg;
  if (state_cgroup (st, &cg))
    {
      pid_t *pids = NULL;
      size_t n = 0;
      csr_error *e = NULL;
      if (oci_cgroup_pids (&cg, &pids, &n, &e) == 0)
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

int
cmd_oci_start (struct csr_global *g, int argc, char **argv)
{
  struct simple_args a;
  cleanup_free char *root = NULL;
  struct oci_state st;
  if (open_container (g, argc, argv, false, &a, &root, &st))
    return 1;
  csr_error *e = NULL;
  int lock = oci_state_lock (root, a.id, &e);
  if (lock < 0)
    {
      oci_state_release (&st);
      return oci_fail (g, e);
    }
  int rc = 0;
  enum oci_status s = oci_state_status (&st);
  cleanup_free char *dir = oci_state_dir (root, a.id);
  cleanup_free char *fifo = NULL;
  if (s != OCI_CREATED)
    rc = oci_failf (g, "cannot start container '%s': it is %s, not created", a.id,
                    oci_status_name (s));
  else if (dir == NULL || asprintf (&fifo, "%s/exec.fifo", dir) < 0)
    rc = oci_failf (g, "out of memory");
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

int
cmd_oci_kill (struct csr_global *g, int argc, char **argv)
{
  static const char *const flags[] = { "--all", "-a" };
  struct simple_args a;
  if (simple_parse (g, argc, argv, flags, 2, true, true, false, &a))
    return 1;
  int sig = SIGTERM;
  csr_error *e = NULL;
  if (a.more && oci_parse_signal (a.more, &sig, &e) < 0)
    return oci_fail (g, e);
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  struct oci_state st;
  if (load (g, root, a.id, &st))
    return 1;
  enum oci_status s = oci_state_status (&st);
  int rc = 0;
  if (s == OCI_STOPPED || s == OCI_CREATING)
    rc = oci_failf (g, "container '%s' is not running", a.id);
  else if (a.flag[0])
    {
      pid_t pids[4096];
      size_t n = container_pids (&st, pids, 4096);
      for (size_t i = 0; i < n; i++)
        kill (pids[i], sig);
      if (n == 0 && kill (st.pid, sig) < 0)
        rc = oci_failf (g, "kill %d: %s", (int)st.pid, strerror (errno));
    }
  else if (kill (st.pid, sig) < 0)
    rc = oci_failf (g, "kill container '%s' (pid %d): %s", a.id, (int)st.pid, strerror (errno));
  oci_state_release (&st);
  return rc;
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

int
cmd_oci_delete (struct csr_global *g, int argc, char **argv)
{
  static const char *const flags[] = { "--force", "-f" };
  struct simple_args a;
  if (simple_parse (g, argc, argv, flags, 2, true, false, false, &a))
    return 1;
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  csr_error *e = NULL;
  struct oci_state st;
  if (oci_id_check (a.id, &e) < 0)
    return oci_fail (g, e);
  if (oci_state_load (root, a.id, &st, &e) < 0)
    {
      if (a.flag[0] && e->status == ENOENT)
        {
          csr_error_free (e);
          return 0;
        }
      return oci_fail (g, e);
    }
  int rc = 0;
  enum oci_status s = oci_state_status (&st);
  if (s != OCI_STOPPED && s != OCI_CREATED && !a.flag[0])
    rc = oci_failf (g, "cannot delete container '%s' that is not stopped: %s", a.id,
                    oci_status_name (s));
  else
    {
      if (s != OCI_STOPPED && st.pid > 0)
        {
          pid_t pids[4096];
          size_t n = namespace_pids (st.pid, pids, 4096);
          for (size_t i = 0; i < n; i++)
            kill (pids[i], SIGKILL);
          kill (st.pid, SIGKILL);
          if (!wait_gone (&st, 5000))
            oci_warn (g, "container '%s': pid %d did not go away", a.id, (int)st.pid);
        }
      struct oci_cgroup cg;
      if (state_cgroup (&st, &cg) && oci_cgroup_destroy (&cg, &e) < 0)
        {
          oci_warn (g, "container '%s': %s", a.id, csr_error_text (e));
          csr_error_freep (&e);
        }
      if (oci_state_remove (root, a.id, &e) < 0)
        rc = oci_fail (g, e);
      else
        run_hooks_logged (g, &st, OCI_HOOK_POSTSTOP);
    }
  oci_state_release (&st);
  return rc;
}

int
cmd_oci_list (struct csr_global *g, int argc, char **argv)
{
  static const char *const flags[] = { "--quiet", "-q" };
  struct simple_args a;
  if (simple_parse (g, argc, argv, flags, 2, false, false, true, &a))
    return 1;
  bool json = a.format && strcmp (a.format, "json") == 0;
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
          cleanup_free char *doc = oci_state_json (&st);
          printf ("%s%s", i ? "," : "", doc ? doc : "null");
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

int
cmd_oci_ps (struct csr_global *g, int argc, char **argv)
{
  struct simple_args a;
  cleanup_free char *root = NULL;
  struct oci_state st;
  if (open_container (g, argc, argv, true, &a, &root, &st))
    return 1;
  pid_t pids[4096];
  size_t n = oci_state_status (&st) == OCI_STOPPED ? 0 : container_pids (&st, pids, 4096);
  oci_state_release (&st);
  if (a.format && strcmp (a.format, "json") == 0)
    {
      fputs ("[", stdout);
      for (size_t i = 0; i < n; i++)
        printf ("%s%d", i ? "," : "", (int)pids[i]);
      fputs ("]\n", stdout);
      return 0;
    }
  puts ("PID");
  for (size_t i = 0; i < n; i++)
    printf ("%d\n", (int)pids[i]);
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
  struct oci_cgroup cg;
  enum oci_status s = oci_state_status (&st);
  if (on ? s != OCI_RUNNING : s != OCI_PAUSED)
    rc = oci_failf (g, "cannot %s container '%s': it is %s", on ? "pause" : "resume", a.id,
                    oci_status_name (s));
  else if (!state_cgroup (&st, &cg))
    rc = oci_failf (g,
                    "cannot %s container '%s': it has no cgroup (no writable cgroup "
                    "hierarchy when it was created)",
                    on ? "pause" : "resume", a.id);
  else if (oci_cgroup_freeze (&cg, on, &e) < 0)
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

/* csrun update [--resources FILE|-] [--memory N] [--pids-limit N]
 * [--cpu-quota N] [--cpu-period N] [--cpu-shares N] ID: new limits for a
 * running container's cgroup (linux.resources syntax for --resources). */
int
cmd_oci_update (struct csr_global *g, int argc, char **argv)
{
  const char *resources = NULL, *id = NULL;
  struct oci_cgroup_resources r = { 0 };
  cleanup_free struct oci_dev_rule *dev = NULL;
  size_t n_dev = 0;
  for (int i = 1; i < argc; i++)
    {
      const char *w = argv[i];
      int64_t *target = NULL;
      uint64_t *utarget = NULL;
      if (strcmp (w, "--help") == 0)
        {
          puts ("Usage: csrun update [--resources FILE|-] [--memory BYTES] [--memory-swap BYTES] "
                "[--pids-limit N] [--cpu-quota US] [--cpu-period US] [--cpu-share N] ID\n"
                "See csrun-oci(8).");
          return 0;
        }
      if (strcmp (w, "--resources") == 0 || strcmp (w, "-r") == 0)
        {
          if (i + 1 >= argc)
            return oci_failf (g, "update: %s needs a value", w);
          resources = argv[++i];
          continue;
        }
      if (strcmp (w, "--memory") == 0)
        target = &r.memory_limit;
      else if (strcmp (w, "--memory-swap") == 0)
        target = &r.memory_swap;
      else if (strcmp (w, "--pids-limit") == 0)
        target = &r.pids_limit;
      else if (strcmp (w, "--cpu-quota") == 0)
        target = &r.cpu_quota;
      else if (strcmp (w, "--cpu-period") == 0)
        utarget = &r.cpu_period;
      else if (strcmp (w, "--cpu-share") == 0 || strcmp (w, "--cpu-shares") == 0)
        utarget = &r.cpu_shares;
      else if (w[0] == '-')
        return oci_failf (g, "update: unknown option '%s'", w);
      else if (id == NULL)
        {
          id = w;
          continue;
        }
      else
        return oci_failf (g, "update: unexpected argument '%s'", w);
      if (i + 1 >= argc)
        return oci_failf (g, "update: %s needs a value", w);
      char *end;
      errno = 0;
      long long v = strtoll (argv[++i], &end, 10);
      if (errno || *end || end == argv[i] || v < -1)
        return oci_failf (g, "update: invalid %s '%s'", w, argv[i]);
      if (target)
        *target = v;
      else
        *utarget = (uint64_t)(v < 0 ? 0 : v);
    }
  if (id == NULL)
    return oci_failf (g, "update: missing container ID");
  csr_error *e = NULL;
  if (resources)
    {
      /* The linux.resources object, read through the config parser. */
      cleanup_free char *text = NULL;
      size_t len = 0;
      if (csr_read_file (strcmp (resources, "-") == 0 ? "/dev/stdin" : resources, 1 << 20, &text,
                         &len, &e)
          < 0)
        return oci_fail (g, e);
      cleanup_free char *doc = NULL;
      if (asprintf (&doc,
                    "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/\"},\"linux\":{"
                    "\"resources\":%s}}",
                    text)
          < 0)
        return oci_failf (g, "out of memory");
      struct oci_config cfg;
      memset (&cfg, 0, sizeof cfg);
      if (oci_config_parse (doc, strlen (doc), &cfg, &e) < 0)
        return oci_fail (g, e);
      if (cfg.resources.has_memory_limit)
        r.memory_limit = cfg.resources.memory_limit;
      if (cfg.resources.has_memory_swap)
        r.memory_swap = cfg.resources.memory_swap;
      if (cfg.resources.has_pids_limit)
        r.pids_limit = cfg.resources.pids_limit;
      if (cfg.resources.has_cpu_quota)
        r.cpu_quota = cfg.resources.cpu_quota;
      if (cfg.resources.has_cpu_period)
        r.cpu_period = cfg.resources.cpu_period;
      if (cfg.resources.has_cpu_shares)
        r.cpu_shares = cfg.resources.cpu_shares;
      if (cfg.resources.has_devices)
        {
          /* Root: set them (or fail); rootless: there is no device cgroup,
           * as create said. */
          if (oci_devices_privileged ())
            {
              n_dev = cfg.resources.n_devices;
              if (n_dev && (dev = calloc (n_dev, sizeof *dev)) == NULL)
                {
                  oci_config_release (&cfg);
                  return oci_failf (g, "out of memory");
                }
              if (n_dev)
                memcpy (dev, cfg.resources.devices, n_dev * sizeof *dev);
              r.set_devices = true;
              r.devices = dev;
              r.n_devices = n_dev;
            }
          else if (cfg.resources.n_devices)
            oci_warn (g, "linux.resources.devices not enforced (rootless: no device cgroup)");
        }
      oci_config_release (&cfg);
    }
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  struct oci_state st;
  if (load (g, root, id, &st))
    return 1;
  struct oci_cgroup cg;
  int rc = 0;
  if (oci_state_status (&st) == OCI_STOPPED)
    rc = oci_failf (g, "cannot update container '%s': it is stopped", id);
  else if (!state_cgroup (&st, &cg))
    rc = oci_failf (g, "cannot update container '%s': it has no cgroup", id);
  else
    {
      struct oci_cgroup_applied ap = { 0 };
      if (oci_cgroup_update (&cg, &r, &ap, &e) < 0)
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
