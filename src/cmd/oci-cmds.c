/* csrun start, state, list, spec, features, and the helpers the OCI
 * commands on the state directory share (oci-cmds.h; kill, delete, ps,
 * pause/resume and update have a file each). */
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

/* The help of "csrun CMD" (argv[0]); 0 (the exit status). */
int
help_of (const char *argv0)
{
  const char *sp = strchr (argv0, ' ');
  if (oci_help (sp ? sp + 1 : argv0, stdout) < 0)
    printf ("Usage: %s\nSee csrun-oci(8).\n", argv0);
  return 0;
}

int
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
int
load (const struct csr_global *g, const char *root, const char *id, struct oci_state *st)
{
  csr_error *e = NULL;
  if (oci_id_check (id, &e) < 0 || oci_state_load (root, id, st, &e) < 0)
    return oci_fail (g, e);
  return 0;
}

struct csr_cgroup *
state_cgroup (const struct oci_state *st)
{
  struct csr_cgroup *cg = NULL;
  csr_error *e = NULL;
  if (csr_cgroup_container_open (st->cgroup_v2, st->cgroup_v1, st->n_cgroup_v1, &cg, &e) < 0)
    csr_error_free (e);
  return cg;
}

/* Processes of the container: its cgroup's, else its pid namespace's. */
size_t
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
  return csr_procns_pid_members (st->pid, out, cap);
}

void
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
int
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

/* Thaw a paused container's cgroup (after SIGKILL, so that it dies). */
void
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

/* --regex (crun's): apply FN to every container whose id matches the
 * extended regular expression PATTERN (unanchored, as crun). */
int
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
