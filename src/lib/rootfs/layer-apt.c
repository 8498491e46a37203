/* csrun — package layers: what apt does for them, as the invoking user.
 * apt-get -s install resolves the closure against a given dpkg status (a
 * simulation needs no root and no lock); apt-get download fetches the
 * .debs into a private directory.  Both read the host's package lists
 * (/var/lib/apt/lists, filled by `apt-get update`) and write nothing
 * outside the directories given here. */
#include "config.h"
#include "layer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/log.h"

extern char **environ;

#define SPAWN_OUT_MAX (64 * 1024)

/* The process's environment with LC_ALL=C (apt's messages are parsed). */
static char **
spawn_env (void)
{
  size_t n = 0;
  while (environ && environ[n])
    n++;
  char **env = calloc (n + 2, sizeof *env);
  if (env == NULL)
    return NULL;
  size_t j = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp (environ[i], "LC_ALL=", 7) != 0 && strncmp (environ[i], "LANGUAGE=", 9) != 0)
      env[j++] = environ[i];
  env[j++] = (char *)"LC_ALL=C";
  env[j] = NULL;
  return env;
}

int
csr_layer_spawn (char *const *argv, const char *cwd, char **out, csr_error **err)
{
  if (out)
    *out = NULL;
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe for %s", argv[0]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&fa, p[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, p[1], 2);
  if (cwd)
    posix_spawn_file_actions_addchdir_np (&fa, cwd);
  cleanup_free char **env = spawn_env ();
  pid_t pid;
  int rc = env ? posix_spawnp (&pid, argv[0], &fa, NULL, argv, env) : ENOMEM;
  posix_spawn_file_actions_destroy (&fa);
  close (p[1]);
  if (rc != 0)
    {
      close (p[0]);
      errno = rc;
      return csr_error_errno (err, "run %s", argv[0]);
    }
  char *buf = malloc (SPAWN_OUT_MAX + 1);
  size_t len = 0;
  for (;;)
    {
      char chunk[4096];
      ssize_t r = read (p[0], chunk, sizeof chunk);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      size_t take = (size_t)r;
      if (buf && len + take > SPAWN_OUT_MAX)
        take = SPAWN_OUT_MAX - len;
      if (buf)
        memcpy (buf + len, chunk, take);
      len += take;
    }
  close (p[0]);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
        free (buf);
        return csr_error_errno (err, "wait for %s", argv[0]);
      }
  if (buf)
    buf[len] = '\0';
  if (out)
    *out = buf;
  else
    free (buf);
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return 128 + WTERMSIG (status);
}

/* The first "E: ..." line of apt's output (without the prefix), or the
 * last non-empty line; copied into BUF. */
static const char *
apt_error (const char *out, char *buf, size_t size)
{
  snprintf (buf, size, "no message");
  if (out == NULL)
    return buf;
  const char *last = NULL, *p = out;
  while (*p)
    {
      const char *eol = strchrnul (p, '\n');
      if (strncmp (p, "E: ", 3) == 0)
        {
          snprintf (buf, size, "%.*s", (int)(eol - p - 3), p + 3);
          return buf;
        }
      if (eol > p)
        last = p;
      p = *eol ? eol + 1 : eol;
    }
  if (last)
    snprintf (buf, size, "%.*s", (int)(strchrnul (last, '\n') - last), last);
  return buf;
}

/* apt's private settings: no lock (a simulation and downloads take none
 * that matter), its binary caches under WORK, no recommends. */
static size_t
apt_common (char **argv, size_t a, const char *work, char *cachedir, size_t size)
{
  snprintf (cachedir, size, "Dir::Cache=%s/apt-cache", work);
  argv[a++] = (char *)"-q";
  argv[a++] = (char *)"-o";
  argv[a++] = (char *)"Debug::NoLocking=1";
  argv[a++] = (char *)"-o";
  argv[a++] = cachedir;
  argv[a++] = (char *)"-o";
  argv[a++] = (char *)"APT::Install-Recommends=0";
  argv[a++] = (char *)"-o";
  argv[a++] = (char *)"APT::Install-Suggests=0";
  if (geteuid () == 0)
    {
      /* As root apt downloads as _apt, which can't enter csrun's 0700 cache. */
      argv[a++] = (char *)"-o";
      argv[a++] = (char *)"APT::Sandbox::User=root";
    }
  return a;
}

void
csr_layer_pkgs_free (struct csr_layer_pkg *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (p[i].name);
      free (p[i].version);
      free (p[i].arch);
    }
  free (p);
}

/* "Inst NAME [OLD] (VERSION RELEASE [ARCH])" */
static int
parse_inst (const char *line, size_t len, struct csr_layer_pkg *p)
{
  cleanup_free char *s = strndup (line, len);
  if (s == NULL)
    return -1;
  char *q = s + 5, *sp = strchr (q, ' ');
  if (sp == NULL)
    return 1;
  p->name = strndup (q, (size_t)(sp - q));
  /* "[ARCH]" is the last bracket inside the parentheses (a " []" may follow). */
  char *open = strchr (sp, '(');
  char *close = open ? strchr (open, ')') : NULL;
  if (p->name == NULL || open == NULL || close == NULL)
    return p->name ? 1 : -1;
  *close = '\0';
  char *arch = strrchr (open, '[');
  char *vend = strchr (open + 1, ' ');
  if (vend == NULL)
    vend = strchr (open + 1, ')');
  if (vend == NULL)
    return 1;
  p->version = strndup (open + 1, (size_t)(vend - open - 1));
  if (arch && strchr (arch, ']'))
    p->arch = strndup (arch + 1, (size_t)(strchr (arch, ']') - arch - 1));
  else
    p->arch = strdup ("all");
  return p->version && p->arch ? 0 : -1;
}

/* The hint when apt knows no package at all: the lists are empty. */
static const char *
lists_hint (void)
{
  struct stat st;
  if (stat ("/var/lib/apt/lists", &st) < 0)
    return " (no /var/lib/apt/lists: is this a Debian system with apt?)";
  cleanup_free char *out = NULL;
  char *argv[] = { (char *)"apt-cache", (char *)"stats", NULL };
  csr_error *e = NULL;
  int rc = csr_layer_spawn (argv, NULL, &out, &e);
  csr_error_free (e);
  if (rc == 0 && out && strstr (out, "Total package names: 0") == NULL)
    return "";
  return " (apt knows no packages: run `apt-get update` as root first)";
}

int
csr_layer_apt_resolve (const char *work, const char *status, char *const *pkgs, size_t n,
                       struct csr_layer_pkg **out, size_t *n_out, csr_error **err)
{
  *out = NULL;
  *n_out = 0;
  char *argv[32 + CSR_LAYER_MAX_PACKAGES];
  char cachedir[4200], statusopt[4200];
  size_t a = 0;
  argv[a++] = (char *)"apt-get";
  argv[a++] = (char *)"-s";
  a = apt_common (argv, a, work, cachedir, sizeof cachedir);
  snprintf (statusopt, sizeof statusopt, "Dir::State::status=%s", status);
  argv[a++] = (char *)"-o";
  argv[a++] = statusopt;
  argv[a++] = (char *)"install";
  for (size_t i = 0; i < n && i < CSR_LAYER_MAX_PACKAGES; i++)
    argv[a++] = pkgs[i];
  argv[a] = NULL;
  cleanup_free char *text = NULL;
  int rc = csr_layer_spawn (argv, NULL, &text, err);
  if (rc < 0)
    return csr_error_wrap (err, "resolve the packages (csrun needs apt)");
  if (rc != 0)
    {
      char msg[512];
      apt_error (text, msg, sizeof msg);
      const char *hint = strstr (msg, "Unable to locate package") ? lists_hint () : "";
      return csr_error_set (err, 0, "cannot add the package%s: apt-get: %s%s", n > 1 ? "s" : "",
                            msg, hint),
             CSR_LAYER_BAD_PACKAGE;
    }
  struct csr_layer_pkg *p = NULL;
  size_t cnt = 0, cap = 0;
  for (const char *l = text; *l;)
    {
      const char *eol = strchrnul (l, '\n');
      if (strncmp (l, "Inst ", 5) == 0)
        {
          if (cnt == cap)
            {
              cap = cap ? cap * 2 : 32;
              struct csr_layer_pkg *np = realloc (p, cap * sizeof *np);
              if (np == NULL)
                goto nomem;
              p = np;
            }
          memset (&p[cnt], 0, sizeof p[cnt]);
          int r = parse_inst (l, (size_t)(eol - l), &p[cnt]);
          cnt++;
          if (r < 0)
            goto nomem;
          if (r > 0)
            {
              csr_error_set (err, 0, "apt-get: cannot parse '%.*s'", (int)(eol - l), l);
              csr_layer_pkgs_free (p, cnt);
              return -1;
            }
        }
      l = *eol ? eol + 1 : eol;
    }
  *out = p;
  *n_out = cnt;
  return 0;
nomem:
  csr_layer_pkgs_free (p, cnt);
  return csr_error_errno (err, "resolve the packages");
}

char *
csr_layer_deb_path (const char *dir, const struct csr_layer_pkg *p)
{
  /* apt names the file NAME_VERSION_ARCH.deb with ':' (an epoch) as %3a. */
  char ver[512];
  size_t j = 0;
  for (const char *c = p->version; *c && j + 4 < sizeof ver; c++)
    {
      if (*c == ':')
        {
          memcpy (ver + j, "%3a", 3);
          j += 3;
        }
      else
        ver[j++] = *c;
    }
  ver[j] = '\0';
  char *path = NULL;
  if (asprintf (&path, "%s/%s_%s_%s.deb", dir, p->name, ver, p->arch) < 0)
    return NULL;
  return path;
}

int
csr_layer_apt_download (const char *work, const char *dir, const struct csr_layer_pkg *p, size_t n,
                        csr_error **err)
{
  char **argv = calloc (n + 32, sizeof *argv);
  char **owned = calloc (n + 1, sizeof *owned);
  char cachedir[4200];
  cleanup_free char *text = NULL;
  int ret = -1;
  if (argv == NULL || owned == NULL)
    {
      csr_error_errno (err, "download the packages");
      goto out;
    }
  size_t a = 0, k = 0;
  argv[a++] = (char *)"apt-get";
  argv[a++] = (char *)"download";
  a = apt_common (argv, a, work, cachedir, sizeof cachedir);
  for (size_t i = 0; i < n; i++)
    {
      if (p[i].in_base)
        continue;
      if (asprintf (&owned[k], "%s=%s", p[i].name, p[i].version) < 0)
        {
          owned[k] = NULL;
          csr_error_errno (err, "download the packages");
          goto out;
        }
      argv[a++] = owned[k++];
    }
  if (k == 0)
    {
      ret = 0;
      goto out;
    }
  int rc = csr_layer_spawn (argv, dir, &text, err);
  if (rc < 0)
    {
      csr_error_wrap (err, "download the packages (csrun needs apt)");
      goto out;
    }
  if (rc != 0)
    {
      char msg[768];
      apt_error (text, msg, sizeof msg);
      csr_error_set (err, 0, "cannot download the packages (%zu, e.g. %s): apt-get: %s", k,
                     owned[0], msg);
      ret = CSR_LAYER_BAD_PACKAGE;
      goto out;
    }
  ret = 0;
out:
  for (size_t i = 0; owned && owned[i]; i++)
    free (owned[i]);
  free (owned);
  free (argv);
  return ret;
}
