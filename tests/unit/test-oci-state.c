/* Unit tests for the OCI state directory (src/lib/oci/state.c): ids, the
 * state root, state.json round trips and malformed files, status from
 * /proc (live, dead, reused, zombie and paused processes), the runtime-spec
 * state document, list, lock, signals and /proc/PID/stat parsing. */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "oci/state.h"
#include "util/fs.h"

#include "helpers.h"

static char tmp[PATH_MAX]; /* a fresh directory per test, used as the state root */

static void
setup (void)
{
  test_tmpdir_in (tmp, sizeof tmp, "ocistate");
}

static bool made_run_csrun; /* the fallback test created /run/csrun: remove it */

static void
teardown (void)
{
  csr_rm_rf (tmp, NULL);
  if (made_run_csrun)
    rmdir ("/run/csrun"); /* only if still empty */
}

TestSuite (id, .timeout = 30);
TestSuite (root, .init = setup, .fini = teardown, .timeout = 30);
TestSuite (state, .init = setup, .fini = teardown, .timeout = 30);
TestSuite (status, .init = setup, .fini = teardown, .timeout = 30);
TestSuite (json, .init = setup, .fini = teardown, .timeout = 30);
TestSuite (list, .init = setup, .fini = teardown, .timeout = 30);
TestSuite (lock, .init = setup, .fini = teardown, .timeout = 30);
TestSuite (signal, .timeout = 30);
TestSuite (proc, .timeout = 30);

static void
write_file (const char *path, const char *data)
{
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f, "open %s: %s", path, strerror (errno));
  cr_assert_eq (fputs (data, f) >= 0, 1);
  cr_assert_eq (fclose (f), 0);
}

static char *
read_text (const char *path)
{
  char *out = NULL;
  size_t len;
  cr_assert_eq (csr_read_file (path, 1 << 20, &out, &len, NULL), 0, "read %s", path);
  return out;
}

static bool
is_dir (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

static mode_t
mode_of (const char *path)
{
  struct stat st;
  cr_assert_eq (stat (path, &st), 0, "stat %s", path);
  return st.st_mode & 07777;
}

/* A state with every field set. */
static void
fill (struct oci_state *s, const char *id)
{
  memset (s, 0, sizeof *s);
  s->id = strdup (id);
  s->bundle = strdup ("/var/lib/bundles/with space");
  s->rootfs = strdup ("/var/lib/bundles/with space/rootfs");
  s->pid = 4242;
  s->pid_start = 123456789012ULL;
  s->created = strdup ("2026-11-29T21:30:00.123456789Z");
  s->owner = 1000;
  s->started = true;
  s->paused = true;
  s->cgroup_v2 = strdup ("/sys/fs/cgroup/csrun/c1");
  s->cgroup_v1[0] = strdup ("/sys/fs/cgroup/memory/csrun/c1");
  s->cgroup_v1[1] = strdup ("/sys/fs/cgroup/pids/csrun/c1");
  s->n_cgroup_v1 = 2;
  s->n_annotations = 2;
  s->annotation_keys = calloc (3, sizeof (char *));
  s->annotation_values = calloc (3, sizeof (char *));
  s->annotation_keys[0] = strdup ("io.podman.annotations.autoremove");
  s->annotation_values[0] = strdup ("FALSE");
  s->annotation_keys[1] = strdup ("quote\"and\\slash/uni\xc3\xa9");
  s->annotation_values[1] = strdup ("line\nbreak\ttab");
  s->systemd_cgroup = true;
  s->config_path = strdup ("/var/lib/bundles/with space/config.json");
}

/* Minimal state for the ROOT/ID directory, saved. */
static void
make_container (const char *id)
{
  struct oci_state s = { 0 };
  s.id = (char *)id;
  s.bundle = (char *)"/b";
  s.rootfs = (char *)"/b/rootfs";
  s.created = (char *)"2026-01-01T00:00:00.000000000Z";
  cr_assert_eq (oci_state_create_dir (tmp, id, NULL), 0, "create %s", id);
  cr_assert_eq (oci_state_save (tmp, &s, NULL), 0, "save %s", id);
}

/* ---------------------------------------------------------------- ids */

Test (id, good)
{
  char long_id[1025];
  memset (long_id, 'a', 1024);
  long_id[1024] = '\0';
  const char *good[] = { "a", "0", "abc-DEF_1.2+3", "...", ".a", "a..", long_id };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    {
      csr_error *err = NULL;
      cr_assert_eq (oci_id_check (good[i], &err), 0, "%.40s", good[i]);
      cr_assert_null (err);
    }
}

Test (id, bad)
{
  char too_long[1026];
  memset (too_long, 'a', 1025);
  too_long[1025] = '\0';
  const char *bad[] = { "",    too_long, "a/b", "/",           "../x", ".", "..",
                        "a b", " ",      "a\n", "caf\xc3\xa9", "a:b",  "a*" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      csr_error *err = NULL;
      cr_assert_eq (oci_id_check (bad[i], &err), -1, "accepted '%.40s'", bad[i]);
      cr_assert_not_null (err);
      cr_assert_eq (err->status, EINVAL);
      cr_assert (strstr (err->msg, "invalid container id '") == err->msg, "%s", err->msg);
      csr_error_free (err);
    }
  csr_error *err = NULL;
  oci_id_check ("a b", &err);
  cr_assert_str_eq (err->msg, "invalid container id 'a b'");
  csr_error_free (err);
}

/* ---------------------------------------------------------------- root */

Test (root, option_wins_over_xdg)
{
  char xdg[PATH_MAX], opt[PATH_MAX], xdg_root[PATH_MAX];
  fmt (xdg, sizeof xdg, "%s/xdg", tmp);
  fmt (xdg_root, sizeof xdg_root, "%s/csrun", xdg);
  fmt (opt, sizeof opt, "%s/opt/nested/root", tmp);
  cr_assert_eq (mkdir (xdg, 0700), 0);
  cr_assert_eq (setenv ("XDG_RUNTIME_DIR", xdg, 1), 0);
  char *out = NULL;
  csr_error *err = NULL;
  cr_assert_eq (oci_state_root (opt, &out, &err), 0, "%s", err ? err->msg : "");
  cr_assert_str_eq (out, opt);
  cr_assert (is_dir (opt));
  cr_assert_eq (mode_of (opt), 0700);
  cr_assert (!is_dir (xdg_root), "XDG_RUNTIME_DIR was used despite --root");
  free (out);

  /* An existing root is used as it is (not re-chmod'ed); trailing slashes go. */
  cr_assert_eq (chmod (opt, 0750), 0);
  char slashed[PATH_MAX];
  fmt (slashed, sizeof slashed, "%s//", opt);
  cr_assert_eq (oci_state_root (slashed, &out, NULL), 0);
  cr_assert_str_eq (out, opt);
  cr_assert_eq (mode_of (opt), 0750);
  free (out);
}

Test (root, xdg_runtime_dir)
{
  char xdg[PATH_MAX], want[PATH_MAX];
  fmt (xdg, sizeof xdg, "%s/xdg", tmp);
  fmt (want, sizeof want, "%s/csrun", xdg);
  cr_assert_eq (mkdir (xdg, 0700), 0);
  cr_assert_eq (setenv ("XDG_RUNTIME_DIR", xdg, 1), 0);
  umask (0); /* the root is private whatever the umask */
  char *out = NULL;
  cr_assert_eq (oci_state_root (NULL, &out, NULL), 0);
  cr_assert_str_eq (out, want);
  cr_assert (is_dir (want));
  cr_assert_eq (mode_of (want), 0700);
  free (out);
}

Test (root, relative_option_made_absolute)
{
  cr_assert_eq (chdir (tmp), 0);
  char *out = NULL;
  cr_assert_eq (oci_state_root ("rel/r/", &out, NULL), 0);
  char want[PATH_MAX];
  fmt (want, sizeof want, "%s/rel/r", tmp);
  cr_assert_str_eq (out, want);
  cr_assert (is_dir (want));
  free (out);
}

Test (root, not_a_directory_and_empty)
{
  char file[PATH_MAX];
  fmt (file, sizeof file, "%s/file", tmp);
  write_file (file, "x");
  char *out = NULL;
  csr_error *err = NULL;
  cr_assert_eq (oci_state_root (file, &out, &err), -1);
  cr_assert_null (out);
  cr_assert_eq (err->status, ENOTDIR);
  cr_assert (strstr (err->msg, file) != NULL, "%s", err->msg);
  csr_error_free (err);
  err = NULL;
  cr_assert_eq (oci_state_root ("", &out, &err), -1);
  cr_assert_eq (err->status, EINVAL);
  csr_error_free (err);
}

Test (root, fallback_run_csrun)
{
  if (geteuid () != 0)
    cr_skip_test ("n/a: the /run/csrun fallback needs root (the root pass runs it)");
  bool existed = is_dir ("/run/csrun");
  made_run_csrun = !existed;
  const char *values[] = { NULL, "" }; /* unset, then set but empty */
  for (size_t i = 0; i < 2; i++)
    {
      if (values[i])
        cr_assert_eq (setenv ("XDG_RUNTIME_DIR", values[i], 1), 0);
      else
        cr_assert_eq (unsetenv ("XDG_RUNTIME_DIR"), 0);
      char *out = NULL;
      csr_error *err = NULL;
      int r = oci_state_root (NULL, &out, &err);
      cr_assert_eq (r, 0, "%s", err ? csr_error_text (err) : "");
      cr_assert_str_eq (out, "/run/csrun");
      cr_assert (is_dir ("/run/csrun"));
      if (!existed)
        cr_assert_eq (mode_of ("/run/csrun"), 0700);
      free (out);
    }
}

/* ---------------------------------------------------------------- create, save, load */

Test (state, create_twice)
{
  csr_error *err = NULL;
  cr_assert_eq (oci_state_create_dir (tmp, "c1", &err), 0);
  char dir[PATH_MAX];
  fmt (dir, sizeof dir, "%s/c1", tmp);
  cr_assert (is_dir (dir));
  cr_assert_eq (mode_of (dir), 0700);
  char *d = oci_state_dir (tmp, "c1");
  cr_assert_str_eq (d, dir);
  free (d);
  cr_assert_eq (oci_state_create_dir (tmp, "c1", &err), -1);
  cr_assert_eq (err->status, EEXIST);
  cr_assert_str_eq (err->msg, "container 'c1' already exists");
  csr_error_free (err);
  err = NULL;
  cr_assert_eq (oci_state_create_dir (tmp, "../escape", &err), -1);
  cr_assert_eq (err->status, EINVAL);
  csr_error_free (err);
}

Test (state, save_load_round_trip)
{
  struct oci_state in, out;
  fill (&in, "c1");
  csr_error *err = NULL;
  cr_assert_eq (oci_state_create_dir (tmp, "c1", NULL), 0);
  cr_assert_eq (oci_state_save (tmp, &in, &err), 0, "%s", err ? err->msg : "");
  cr_assert_eq (oci_state_load (tmp, "c1", &out, &err), 0, "%s", err ? err->msg : "");
  cr_assert_str_eq (out.id, in.id);
  cr_assert_str_eq (out.bundle, in.bundle);
  cr_assert_str_eq (out.rootfs, in.rootfs);
  cr_assert_eq (out.pid, in.pid);
  cr_assert_eq (out.pid_start, in.pid_start);
  cr_assert_str_eq (out.created, in.created);
  cr_assert_eq (out.owner, in.owner);
  cr_assert_eq (out.started, true);
  cr_assert_eq (out.paused, true);
  cr_assert_str_eq (out.cgroup_v2, in.cgroup_v2);
  cr_assert_eq (out.n_cgroup_v1, 2);
  cr_assert_str_eq (out.cgroup_v1[0], in.cgroup_v1[0]);
  cr_assert_str_eq (out.cgroup_v1[1], in.cgroup_v1[1]);
  cr_assert_null (out.cgroup_v1[2]);
  cr_assert_eq (out.n_annotations, 2);
  for (size_t i = 0; i < 2; i++)
    {
      cr_assert_str_eq (out.annotation_keys[i], in.annotation_keys[i]);
      cr_assert_str_eq (out.annotation_values[i], in.annotation_values[i]);
    }
  cr_assert_eq (out.systemd_cgroup, true);
  cr_assert_str_eq (out.config_path, in.config_path);
  oci_state_release (&out);

  /* Overwrite with the opposite values and the optional fields empty. */
  in.started = in.paused = in.systemd_cgroup = false;
  in.pid = 0;
  in.pid_start = 0;
  in.owner = 0;
  free (in.cgroup_v2);
  in.cgroup_v2 = NULL;
  free (in.config_path);
  in.config_path = NULL;
  size_t n_ann = in.n_annotations, n_v1 = in.n_cgroup_v1;
  in.n_annotations = in.n_cgroup_v1 = 0;
  cr_assert_eq (oci_state_save (tmp, &in, NULL), 0);
  in.n_annotations = n_ann;
  in.n_cgroup_v1 = n_v1;
  cr_assert_eq (oci_state_load (tmp, "c1", &out, NULL), 0);
  cr_assert_eq (out.started || out.paused || out.systemd_cgroup, false);
  cr_assert_eq (out.pid, 0);
  cr_assert_eq (out.pid_start, 0);
  cr_assert_eq (out.owner, 0);
  cr_assert_null (out.cgroup_v2);
  cr_assert_null (out.config_path);
  cr_assert_eq (out.n_cgroup_v1, 0);
  cr_assert_eq (out.n_annotations, 0);
  cr_assert_str_eq (out.bundle, in.bundle);
  oci_state_release (&out);

  /* Only state.json is left behind: no temporary files. */
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/c1", tmp);
  DIR *d = opendir (path);
  cr_assert_not_null (d);
  struct dirent *de;
  int n = 0;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        cr_assert_str_eq (de->d_name, "state.json");
        n++;
      }
  closedir (d);
  cr_assert_eq (n, 1);
  fmt (path, sizeof path, "%s/c1/state.json", tmp);
  cr_assert_eq (mode_of (path), 0600);
  oci_state_release (&in);
}

Test (state, save_refuses_bad_states)
{
  struct oci_state s;
  fill (&s, "c1");
  cr_assert_eq (oci_state_create_dir (tmp, "c1", NULL), 0);
  csr_error *err = NULL;
  /* Not UTF-8: it could not be read back. */
  char *good = s.bundle;
  s.bundle = (char *)"/bad\xff";
  cr_assert_eq (oci_state_save (tmp, &s, &err), -1);
  cr_assert (strstr (err->msg, "UTF-8") != NULL, "%s", err->msg);
  csr_error_free (err);
  err = NULL;
  s.bundle = NULL;
  cr_assert_eq (oci_state_save (tmp, &s, &err), -1);
  cr_assert (strstr (err->msg, "bundle") != NULL, "%s", err->msg);
  csr_error_free (err);
  err = NULL;
  s.bundle = good;
  size_t n = s.n_cgroup_v1;
  s.n_cgroup_v1 = 8;
  cr_assert_eq (oci_state_save (tmp, &s, &err), -1);
  csr_error_free (err);
  err = NULL;
  s.n_cgroup_v1 = n;
  char *id = s.id;
  s.id = (char *)"a/b";
  cr_assert_eq (oci_state_save (tmp, &s, &err), -1);
  cr_assert_eq (err->status, EINVAL);
  csr_error_free (err);
  s.id = id;
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/c1/state.json", tmp);
  cr_assert_eq (access (path, F_OK), -1, "a refused state was written");
  oci_state_release (&s);
}

Test (state, load_missing)
{
  struct oci_state s;
  csr_error *err = NULL;
  cr_assert_eq (oci_state_load (tmp, "nope", &s, &err), -1);
  cr_assert_eq (err->status, ENOENT);
  cr_assert_str_eq (err->msg, "container 'nope' does not exist");
  cr_assert_null (s.id);
  csr_error_free (err);

  /* A directory whose state.json was never written is not a container either. */
  err = NULL;
  cr_assert_eq (oci_state_create_dir (tmp, "half", NULL), 0);
  cr_assert_eq (oci_state_load (tmp, "half", &s, &err), -1);
  cr_assert_eq (err->status, ENOENT);
  cr_assert_str_eq (err->msg, "container 'half' does not exist");
  csr_error_free (err);

  /* A bad id is refused before touching the file system. */
  err = NULL;
  cr_assert_eq (oci_state_load (tmp, "..", &s, &err), -1);
  cr_assert_eq (err->status, EINVAL);
  csr_error_free (err);
}

/* Save a valid state for "c1", then replace FROM by TO in state.json. */
static void
write_variant (const char *from, const char *to)
{
  make_container ("c1");
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/c1/state.json", tmp);
  char *text = read_text (path);
  char *at = strstr (text, from);
  cr_assert_not_null (at, "'%s' not in %s", from, text);
  char *out = NULL;
  cr_assert (asprintf (&out, "%.*s%s%s", (int)(at - text), text, to, at + strlen (from)) > 0);
  write_file (path, out);
  free (out);
  free (text);
}

static void
expect_malformed (const char *what)
{
  struct oci_state s;
  memset (&s, 0x5a, sizeof s);
  csr_error *err = NULL;
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/c1/state.json", tmp);
  cr_assert_eq (oci_state_load (tmp, "c1", &s, &err), -1, "loaded a file with %s", what);
  cr_assert_not_null (err);
  cr_assert_eq (err->status, EINVAL, "%s", err->msg);
  cr_assert (strstr (err->msg, "malformed state file") != NULL, "%s", err->msg);
  cr_assert (strstr (err->msg, path) != NULL, "no file name in: %s", err->msg);
  cr_assert (strstr (err->msg, what) != NULL, "'%s' not in: %s", what, err->msg);
  cr_assert_null (s.id, "a failed load leaves the state zeroed");
  cr_assert_eq (s.n_annotations, 0);
  csr_error_free (err);
}

Test (state, load_not_json)
{
  make_container ("c1");
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/c1/state.json", tmp);
  const char *texts[] = { "{not json", "", "{\"id\":\"c1\"} trailing", "[1,2]", "\"c1\"" };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
    {
      write_file (path, texts[i]);
      expect_malformed ("");
    }
  write_file (path, "[]");
  expect_malformed ("not a JSON object");
}

/* The saved file is compact: "key":value with no spaces. */
static const struct
{
  const char *from, *to, *what;
} variants[] = {
  { "\"pid\":0", "\"pid\":\"0\"", "\"pid\" must be an integer" },
  { "\"pid\":0", "\"pid\":-5", "\"pid\" is out of range" },
  { "\"pid\":0", "\"pid\":1.5", "\"pid\" must be an integer" },
  { "\"pid\":0", "\"pid\":null", "\"pid\" must be an integer" },
  { "\"pid\":0,", "", "\"pid\" is missing" },
  { "\"pid_start\":0", "\"pid_start\":true", "\"pid_start\" must be an integer" },
  { "\"owner\":0", "\"owner\":-1", "\"owner\" is out of range" },
  { "\"owner\":0", "\"owner\":4294967296", "\"owner\" is out of range" },
  { "\"started\":false", "\"started\":0", "\"started\" must be a boolean" },
  { "\"paused\":false", "\"paused\":\"no\"", "\"paused\" must be a boolean" },
  { "\"bundle\":\"/b\"", "\"bundle\":7", "\"bundle\" must be a string" },
  { "\"bundle\":\"/b\"", "\"bundle\":null", "\"bundle\" must be a string" },
  { "\"bundle\":\"/b\",", "", "\"bundle\" is missing" },
  { "\"rootfs\":\"/b/rootfs\"", "\"rootfs\":[]", "\"rootfs\" must be a string" },
  { "\"created\":\"", "\"created\":{},\"x\":\"", "\"created\" must be a string" },
  { "\"id\":\"c1\"", "\"id\":\"c2\"", "container 'c2'" },
  { "\"id\":\"c1\"", "\"id\":1", "\"id\" must be a string" },
  { "\"version\":1", "\"version\":2", "\"version\" is out of range" },
  { "\"version\":1,", "", "\"version\" is missing" },
  { "\"cgroup_v2\":null", "\"cgroup_v2\":false", "\"cgroup_v2\" must be a string" },
  { "\"cgroup_v1\":[]", "\"cgroup_v1\":[1]", "\"cgroup_v1\" must be an array of strings" },
  { "\"cgroup_v1\":[]", "\"cgroup_v1\":\"/x\"", "\"cgroup_v1\" must be an array of strings" },
  { "\"cgroup_v1\":[]",
    "\"cgroup_v1\":[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\",\"10\",\"11\",\"12\","
    "\"13\",\"14\",\"15\",\"16\",\"17\"]",
    "\"cgroup_v1\" has too many entries" },
  { "\"annotations\":{}", "\"annotations\":{\"a\":1}", "\"annotations\" must be an object" },
  { "\"annotations\":{}", "\"annotations\":[]", "\"annotations\" must be an object" },
  { "\"systemd_cgroup\":false", "\"systemd_cgroup\":\"false\"",
    "\"systemd_cgroup\" must be a boolean" },
  { "\"config_path\":null", "\"config_path\":3", "\"config_path\" must be a string" },
};

Test (state, load_wrong_types)
{
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
    {
      write_variant (variants[i].from, variants[i].to);
      expect_malformed (variants[i].what);
      cr_assert_eq (oci_state_remove (tmp, "c1", NULL), 0);
    }
  /* The unmodified file loads: the variants fail for their change alone. */
  make_container ("c1");
  struct oci_state s;
  cr_assert_eq (oci_state_load (tmp, "c1", &s, NULL), 0);
  oci_state_release (&s);
}

Test (state, remove)
{
  make_container ("c1");
  char dir[PATH_MAX], extra[PATH_MAX];
  fmt (dir, sizeof dir, "%s/c1", tmp);
  fmt (extra, sizeof extra, "%s/c1/sub", tmp);
  cr_assert_eq (mkdir (extra, 0700), 0);
  cr_assert_eq (oci_state_remove (tmp, "c1", NULL), 0);
  cr_assert (!is_dir (dir));
  csr_error *err = NULL;
  struct oci_state s;
  cr_assert_eq (oci_state_load (tmp, "c1", &s, &err), -1);
  cr_assert_eq (err->status, ENOENT);
  csr_error_free (err);
  err = NULL;
  cr_assert_eq (oci_state_remove (tmp, "c1", &err), 0, "removing twice is fine");
  cr_assert_eq (oci_state_remove (tmp, "..", &err), -1);
  csr_error_free (err);
  cr_assert (is_dir (tmp));
}

/* ---------------------------------------------------------------- status */

static struct oci_state
live_state (pid_t pid)
{
  struct oci_state s = { 0 };
  s.pid = pid;
  s.pid_start = oci_pid_start_time (pid, NULL);
  cr_assert_neq (s.pid_start, 0, "no start time for %d", (int)pid);
  return s;
}

Test (status, names)
{
  cr_assert_str_eq (oci_status_name (OCI_CREATING), "creating");
  cr_assert_str_eq (oci_status_name (OCI_CREATED), "created");
  cr_assert_str_eq (oci_status_name (OCI_RUNNING), "running");
  cr_assert_str_eq (oci_status_name (OCI_PAUSED), "paused");
  cr_assert_str_eq (oci_status_name (OCI_STOPPED), "stopped");
}

Test (status, creating_without_pid)
{
  struct oci_state s = { 0 };
  cr_assert_eq (oci_state_status (&s), OCI_CREATING);
  s.started = true;
  s.paused = true;
  cr_assert_eq (oci_state_status (&s), OCI_CREATING);
}

Test (status, own_process_created_running_paused)
{
  struct oci_state s = live_state (getpid ());
  cr_assert_eq (oci_state_status (&s), OCI_CREATED);
  s.started = true;
  cr_assert_eq (oci_state_status (&s), OCI_RUNNING);
  s.paused = true;
  cr_assert_eq (oci_state_status (&s), OCI_PAUSED);
  s.started = false;
  cr_assert_eq (oci_state_status (&s), OCI_PAUSED);
}

Test (status, reused_pid_is_stopped)
{
  struct oci_state s = live_state (getpid ());
  s.started = true;
  s.pid_start += 1; /* same pid, another process */
  cr_assert_eq (oci_state_status (&s), OCI_STOPPED);
  s.pid_start -= 2;
  cr_assert_eq (oci_state_status (&s), OCI_STOPPED);
  s.pid_start += 1;
  cr_assert_eq (oci_state_status (&s), OCI_RUNNING);
}

/* A child blocked reading a pipe until *RELEASE is closed. */
static pid_t
blocked_child (int *release)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      alarm (30);
      close (p[1]);
      char c;
      while (read (p[0], &c, 1) < 0 && errno == EINTR)
        ;
      _exit (0);
    }
  close (p[0]);
  *release = p[1];
  return pid;
}

Test (status, dead_process_is_stopped)
{
  signal (SIGCHLD, SIG_DFL);
  int release;
  pid_t pid = blocked_child (&release);
  struct oci_state s = live_state (pid);
  s.started = true;
  cr_assert_eq (oci_state_status (&s), OCI_RUNNING);
  close (release);
  cr_assert_eq (waitpid (pid, NULL, 0), pid);
  bool zombie = true;
  cr_assert_eq (oci_pid_start_time (pid, &zombie), 0);
  cr_assert_eq (zombie, false);
  cr_assert_eq (oci_state_status (&s), OCI_STOPPED);
  s.paused = true;
  cr_assert_eq (oci_state_status (&s), OCI_STOPPED);
}

Test (status, zombie_is_stopped)
{
  signal (SIGCHLD, SIG_DFL);
  int release;
  pid_t pid = blocked_child (&release);
  struct oci_state s = live_state (pid);
  s.started = true;
  bool zombie = true;
  cr_assert_eq (oci_pid_start_time (pid, &zombie), s.pid_start);
  cr_assert_eq (zombie, false);
  cr_assert_eq (oci_state_status (&s), OCI_RUNNING);
  close (release);
  /* Wait for the exit without reaping. */
  siginfo_t si;
  memset (&si, 0, sizeof si);
  cr_assert_eq (waitid (P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
  cr_assert_eq (si.si_pid, pid);
  /* Same pid, same start time: only the zombie state says it is gone. */
  cr_assert_eq (oci_pid_start_time (pid, &zombie), s.pid_start);
  cr_assert_eq (zombie, true);
  cr_assert_eq (oci_state_status (&s), OCI_STOPPED);
  cr_assert_eq (waitpid (pid, NULL, 0), pid);
}

/* ---------------------------------------------------------------- state document */

static yajl_val
parse_doc (const char *doc)
{
  char ebuf[256];
  yajl_val v = yajl_tree_parse (doc, ebuf, sizeof ebuf);
  cr_assert_not_null (v, "%s: %s", ebuf, doc);
  cr_assert (YAJL_IS_OBJECT (v));
  return v;
}

static yajl_val
get (yajl_val obj, const char *key)
{
  const char *path[] = { key, NULL };
  return yajl_tree_get (obj, path, yajl_t_any);
}

static void
expect_str (yajl_val obj, const char *key, const char *want)
{
  yajl_val v = get (obj, key);
  cr_assert (YAJL_IS_STRING (v), "\"%s\" is not a string", key);
  cr_assert_str_eq (v->u.string, want, "\"%s\"", key);
}

static void
expect_int (yajl_val obj, const char *key, long long want)
{
  yajl_val v = get (obj, key);
  cr_assert (YAJL_IS_INTEGER (v), "\"%s\" is not an integer", key);
  cr_assert_eq (YAJL_GET_INTEGER (v), want, "\"%s\"", key);
}

Test (json, running_with_annotations)
{
  struct oci_state s;
  fill (&s, "c1");
  s.pid = getpid ();
  s.pid_start = oci_pid_start_time (s.pid, NULL);
  s.paused = false;
  s.owner = getuid ();
  char *doc = oci_state_json (&s);
  cr_assert_not_null (doc);
  size_t len = strlen (doc);
  cr_assert (len > 2 && doc[len - 1] == '\n' && doc[len - 2] != '\n', "%s", doc);
  const char *head = "{\n  \"ociVersion\": \"1.2.0\",\n  \"id\": \"c1\",\n  \"pid\": ";
  cr_assert (strncmp (doc, head, strlen (head)) == 0, "not 2-space pretty-printed: %s", doc);
  yajl_val v = parse_doc (doc);
  expect_str (v, "ociVersion", "1.2.0");
  expect_str (v, "id", "c1");
  expect_str (v, "status", "running");
  expect_int (v, "pid", getpid ());
  expect_str (v, "bundle", s.bundle);
  expect_str (v, "rootfs", s.rootfs);
  expect_str (v, "created", s.created);
  struct passwd *pw = getpwuid (getuid ());
  expect_str (v, "owner", pw ? pw->pw_name : "");
  yajl_val ann = get (v, "annotations");
  cr_assert (YAJL_IS_OBJECT (ann));
  cr_assert_eq (ann->u.object.len, 2);
  for (size_t i = 0; i < 2; i++)
    expect_str (ann, s.annotation_keys[i], s.annotation_values[i]);
  cr_assert_eq (v->u.object.len, 9, "unexpected members in %s", doc);
  yajl_tree_free (v);
  free (doc);

  s.paused = true;
  doc = oci_state_json (&s);
  v = parse_doc (doc);
  expect_str (v, "status", "paused");
  expect_int (v, "pid", getpid ());
  yajl_tree_free (v);
  free (doc);
  oci_state_release (&s);
}

Test (json, stopped_and_creating_have_pid_0)
{
  struct oci_state s;
  fill (&s, "c1");
  s.n_annotations = 0;   /* annotations are omitted when there are none */
  s.owner = 4000000000u; /* no such user: owner "" */
  s.pid = getpid ();
  s.pid_start = oci_pid_start_time (s.pid, NULL) + 1;
  char *doc = oci_state_json (&s);
  cr_assert_not_null (doc);
  yajl_val v = parse_doc (doc);
  expect_str (v, "status", "stopped");
  expect_int (v, "pid", 0);
  expect_str (v, "owner", "");
  cr_assert_null (get (v, "annotations"), "%s", doc);
  yajl_tree_free (v);
  free (doc);

  s.pid = 0;
  doc = oci_state_json (&s);
  v = parse_doc (doc);
  expect_str (v, "status", "creating");
  expect_int (v, "pid", 0);
  yajl_tree_free (v);
  free (doc);
  s.n_annotations = 2;
  oci_state_release (&s);
}

/* ---------------------------------------------------------------- list */

Test (list, sorted_and_only_containers)
{
  const char *ids[] = { "zeta", "b", "a", "c-1", "B" };
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
    make_container (ids[i]);
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/nostate", tmp); /* a directory without state.json */
  cr_assert_eq (mkdir (path, 0700), 0);
  fmt (path, sizeof path, "%s/stray", tmp); /* a file */
  write_file (path, "{}");
  fmt (path, sizeof path, "%s/bad id", tmp); /* not a valid id */
  cr_assert_eq (mkdir (path, 0700), 0);
  fmt (path, sizeof path, "%s/bad id/state.json", tmp);
  write_file (path, "{}");
  fmt (path, sizeof path, "%s/dirstate", tmp); /* state.json is a directory */
  cr_assert_eq (mkdir (path, 0700), 0);
  fmt (path, sizeof path, "%s/dirstate/state.json", tmp);
  cr_assert_eq (mkdir (path, 0700), 0);
  fmt (path, sizeof path, "%s/link", tmp); /* a symlink to a container */
  cr_assert_eq (symlink ("a", path), 0);

  char **out = NULL;
  size_t n = 99;
  csr_error *err = NULL;
  cr_assert_eq (oci_state_list (tmp, &out, &n, &err), 0);
  const char *want[] = { "B", "a", "b", "c-1", "zeta" };
  cr_assert_eq (n, 5);
  for (size_t i = 0; i < 5; i++)
    cr_assert_str_eq (out[i], want[i], "entry %zu", i);
  cr_assert_null (out[5]);
  for (size_t i = 0; i < n; i++)
    free (out[i]);
  free (out);
}

Test (list, empty_and_missing_root)
{
  char **out = NULL;
  size_t n = 99;
  cr_assert_eq (oci_state_list (tmp, &out, &n, NULL), 0);
  cr_assert_eq (n, 0);
  cr_assert_not_null (out);
  cr_assert_null (out[0]);
  free (out);
  char missing[PATH_MAX];
  fmt (missing, sizeof missing, "%s/missing", tmp);
  n = 99;
  cr_assert_eq (oci_state_list (missing, &out, &n, NULL), 0);
  cr_assert_eq (n, 0);
  cr_assert_null (out[0]);
  free (out);
}

/* ---------------------------------------------------------------- lock */

/* In a child: 0 when LOCK_EX|LOCK_NB on ROOT/ID/lock would block, 1 when it
 * got the lock, 2 on other errors. */
static int
child_try_lock (const char *id)
{
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/%s/lock", tmp, id);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      int fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        _exit (2);
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        _exit (1);
      _exit (errno == EWOULDBLOCK ? 0 : 2);
    }
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFEXITED (st));
  return WEXITSTATUS (st);
}

Test (lock, excludes_a_second_locker)
{
  signal (SIGCHLD, SIG_DFL);
  make_container ("c1");
  csr_error *err = NULL;
  int fd = oci_state_lock (tmp, "c1", &err);
  cr_assert_geq (fd, 0, "%s", err ? err->msg : "");
  cr_assert_eq (child_try_lock ("c1"), 0, "a second locker got the lock");
  cr_assert_eq (fcntl (fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  close (fd);
  cr_assert_eq (child_try_lock ("c1"), 1, "the lock was not released by close");

  /* Taking it again works, and excludes again. */
  fd = oci_state_lock (tmp, "c1", NULL);
  cr_assert_geq (fd, 0);
  cr_assert_eq (child_try_lock ("c1"), 0);
  close (fd);
}

Test (lock, blocks_until_released)
{
  signal (SIGCHLD, SIG_DFL);
  make_container ("c1");
  int fd = oci_state_lock (tmp, "c1", NULL);
  cr_assert_geq (fd, 0);
  int p[2];
  cr_assert_eq (pipe (p), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      alarm (30);
      close (p[0]);
      close (fd);                                 /* the inherited descriptor shares our lock */
      int cfd = oci_state_lock (tmp, "c1", NULL); /* blocks */
      char c = cfd >= 0 ? 'y' : 'n';
      _exit (write (p[1], &c, 1) == 1 ? 0 : 1);
    }
  close (p[1]);
  struct timespec pause_ts = { 0, 200 * 1000 * 1000 };
  nanosleep (&pause_ts, NULL);
  int fl = fcntl (p[0], F_GETFL);
  fcntl (p[0], F_SETFL, fl | O_NONBLOCK);
  char c;
  cr_assert_eq (read (p[0], &c, 1), -1, "the child got the lock while we held it");
  cr_assert_eq (errno, EAGAIN);
  fcntl (p[0], F_SETFL, fl);
  close (fd);
  cr_assert_eq (read (p[0], &c, 1), 1);
  cr_assert_eq (c, 'y');
  cr_assert_eq (waitpid (pid, NULL, 0), pid);
  close (p[0]);
}

Test (lock, missing_container)
{
  csr_error *err = NULL;
  cr_assert_eq (oci_state_lock (tmp, "nope", &err), -1);
  cr_assert_eq (err->status, ENOENT);
  cr_assert_str_eq (err->msg, "container 'nope' does not exist");
  csr_error_free (err);
  err = NULL;
  cr_assert_eq (oci_state_lock (tmp, "../x", &err), -1);
  cr_assert_eq (err->status, EINVAL);
  csr_error_free (err);
}

/* ---------------------------------------------------------------- signals */

Test (signal, good)
{
  const struct
  {
    const char *s;
    int sig;
  } good[] = {
    { "9", SIGKILL },
    { "KILL", SIGKILL },
    { "SIGKILL", SIGKILL },
    { "kill", SIGKILL },
    { "sigterm", SIGTERM },
    { "SigHup", SIGHUP },
    { "0", 0 },
    { "1", 1 },
    { "64", 64 },
    { "15", SIGTERM },
    { "USR1", SIGUSR1 },
    { "SIGCHLD", SIGCHLD },
    { "WINCH", SIGWINCH },
    { "RTMIN", SIGRTMIN },
    { "RTMIN+3", SIGRTMIN + 3 },
    { "SIGRTMIN+3", SIGRTMIN + 3 },
    { "sigrtmin+0", SIGRTMIN },
    { "RTMAX", SIGRTMAX },
    { "RTMAX-1", SIGRTMAX - 1 },
    { "SIGRTMAX-2", SIGRTMAX - 2 },
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    {
      int sig = -7;
      csr_error *err = NULL;
      cr_assert_eq (oci_parse_signal (good[i].s, &sig, &err), 0, "'%s' refused", good[i].s);
      cr_assert_eq (sig, good[i].sig, "'%s' -> %d, want %d", good[i].s, sig, good[i].sig);
      cr_assert_null (err);
    }
  cr_assert_eq (SIGRTMIN + 3, 37, "glibc's SIGRTMIN is 34");
}

Test (signal, bad)
{
  char rt_over[32];
  fmt (rt_over, sizeof rt_over, "RTMIN+%d", SIGRTMAX - SIGRTMIN + 1);
  const char *bad[]
      = { "65",       "-1",     "FOO",     "",        "SIG",   "+9",       "9x",     " 9",  "1000",
          "SIGKILLX", "RTMIN+", "RTMAX+1", "RTMIN-1", rt_over, "RTMIN+3x", "SIGSIG", "SIG9" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      int sig = -7;
      csr_error *err = NULL;
      cr_assert_eq (oci_parse_signal (bad[i], &sig, &err), -1, "'%s' accepted as %d", bad[i], sig);
      cr_assert_eq (sig, -7);
      char want[64];
      fmt (want, sizeof want, "unknown signal '%s'", bad[i]);
      cr_assert_str_eq (err->msg, want);
      csr_error_free (err);
    }
  int sig;
  cr_assert_eq (oci_parse_signal (rt_over + 0, &sig, NULL), -1);
  fmt (rt_over, sizeof rt_over, "RTMIN+%d", SIGRTMAX - SIGRTMIN);
  cr_assert_eq (oci_parse_signal (rt_over, &sig, NULL), 0);
  cr_assert_eq (sig, SIGRTMAX);
}

/* ---------------------------------------------------------------- /proc, time */

/* Field 22 of /proc/PID/stat when comm is known to be COMM, parsed by
 * skipping the exact "PID (COMM) " prefix; *STATE gets field 3. */
static unsigned long long
start_time_knowing_comm (pid_t pid, const char *comm, char *state)
{
  char path[64], prefix[64];
  fmt (path, sizeof path, "/proc/%d/stat", (int)pid);
  fmt (prefix, sizeof prefix, "%d (%s) ", (int)pid, comm);
  char *text = read_text (path);
  cr_assert (strncmp (text, prefix, strlen (prefix)) == 0, "%s does not start with '%s'", text,
             prefix);
  char *p = text + strlen (prefix);
  *state = *p;
  for (int field = 3; field < 22; field++)
    {
      p = strchr (p, ' ');
      cr_assert_not_null (p);
      p++;
    }
  unsigned long long v = strtoull (p, NULL, 10);
  free (text);
  return v;
}

Test (proc, own_start_time)
{
  char comm[64] = "";
  char *c = read_text ("/proc/self/comm");
  c[strcspn (c, "\n")] = '\0';
  fmt (comm, sizeof comm, "%s", c);
  free (c);
  char state;
  unsigned long long want = start_time_knowing_comm (getpid (), comm, &state);
  bool zombie = true;
  cr_assert_eq (oci_pid_start_time (getpid (), &zombie), want);
  cr_assert_neq (want, 0);
  cr_assert_eq (zombie, false);
  cr_assert_eq (oci_pid_start_time (0, NULL), 0);
  cr_assert_eq (oci_pid_start_time (-1, NULL), 0);
  cr_assert_eq (oci_pid_start_time (INT_MAX, NULL), 0);
}

Test (proc, comm_with_parenthesis_and_spaces)
{
  signal (SIGCHLD, SIG_DFL);
  /* A naive parser (first ')') would read state 'Z' and shifted fields. */
  static const char name[] = "a) Z 1 2 3 4 5";
  int ready[2], release[2];
  cr_assert_eq (pipe (ready), 0);
  cr_assert_eq (pipe (release), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      alarm (30);
      close (ready[0]);
      close (release[1]);
      if (prctl (PR_SET_NAME, name, 0, 0, 0) < 0)
        _exit (1);
      char c = 'r';
      if (write (ready[1], &c, 1) != 1)
        _exit (1);
      while (read (release[0], &c, 1) < 0 && errno == EINTR)
        ;
      _exit (0);
    }
  close (ready[1]);
  close (release[0]);
  char c;
  cr_assert_eq (read (ready[0], &c, 1), 1);
  char state;
  unsigned long long want = start_time_knowing_comm (pid, name, &state);
  cr_assert_neq (state, 'Z');
  bool zombie = true;
  uint64_t got = oci_pid_start_time (pid, &zombie);
  close (release[1]);
  cr_assert_eq (waitpid (pid, NULL, 0), pid);
  cr_assert_eq (got, want);
  cr_assert_eq (zombie, false);
  cr_assert_geq (got, oci_pid_start_time (getpid (), NULL));
}

Test (proc, now_rfc3339)
{
  time_t before = time (NULL);
  char *s = oci_now_rfc3339 ();
  time_t after = time (NULL);
  cr_assert_not_null (s);
  cr_assert_eq (strlen (s), 30, "%s", s);
  for (size_t i = 0; i < 30; i++)
    {
      const char *shape = "dddd-dd-ddTdd:dd:dd.dddddddddZ";
      if (shape[i] == 'd')
        cr_assert (s[i] >= '0' && s[i] <= '9', "%s", s);
      else
        cr_assert_eq (s[i], shape[i], "%s", s);
    }
  struct tm tm;
  memset (&tm, 0, sizeof tm);
  cr_assert_not_null (strptime (s, "%Y-%m-%dT%H:%M:%S", &tm));
  time_t t = timegm (&tm);
  cr_assert (t >= before && t <= after, "%s is not now", s);
  free (s);
}
