/* csrun — warm jails: the check, from outside, that a warm jail's
 * interpreter is confined before it gets any code (zygote.h): what a
 * one-shot jail's payload is when it execs (child.c), read back from /proc. */
#include "config.h"
#include "zygote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"

/* The value of the field NAME ("Seccomp") in the text of /proc/PID/status,
 * or NULL. */
static const char *
field (const char *status, const char *name, char *buf, size_t size)
{
  size_t n = strlen (name);
  for (const char *p = status; p && *p; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : NULL)
    if (strncmp (p, name, n) == 0 && p[n] == ':')
      {
        p += n + 1;
        while (*p == ' ' || *p == '\t')
          p++;
        size_t l = strcspn (p, "\n");
        if (l >= size)
          l = size - 1;
        memcpy (buf, p, l);
        buf[l] = '\0';
        return buf;
      }
  return NULL;
}

static int
status_checks (pid_t pid, pid_t init, bool seccomp, csr_error **err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/status", (int)pid);
  cleanup_free char *st = NULL;
  size_t len = 0;
  if (csr_read_file (path, 1 << 16, &st, &len, err) < 0)
    return csr_error_wrap (err, "the warm jail's interpreter");
  char v[64];
  const char *want_sec = seccomp ? "2" : "0";
  if (field (st, "Seccomp", v, sizeof v) == NULL || strcmp (v, want_sec) != 0)
    return csr_error_set (err, 0, "its seccomp mode is %s, not %s",
                          field (st, "Seccomp", v, sizeof v) ? v : "unknown", want_sec);
  if (field (st, "NoNewPrivs", v, sizeof v) == NULL || strcmp (v, "1") != 0)
    return csr_error_set (err, 0, "no_new_privs is not set");
  static const char *const caps[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
    if (field (st, caps[i], v, sizeof v) == NULL || strspn (v, "0") != strlen (v) || v[0] == '\0')
      return csr_error_set (err, 0, "it has capabilities (%s %s)", caps[i],
                            field (st, caps[i], v, sizeof v) ? v : "unknown");
  if (field (st, "PPid", v, sizeof v) == NULL || strtol (v, NULL, 10) != (long)init)
    return csr_error_set (err, 0, "its parent is not its jail's init");
  return 0;
}

int
csr_zygote_check (const struct csr_zygote *z, const struct csr_warm *w,
                  const struct jail_snippet *spec, csr_error **err)
{
  if (status_checks (w->payload, w->jail.pid, spec->jail.seccomp_bpf != NULL, err) < 0)
    return csr_error_wrap (err, "the warm jail is not confined");
  struct csr_ns_ids ns;
  csr_ns_ids_read (w->payload, &ns);
  for (size_t i = 0; i < CSR_ZYGOTE_N_NS; i++)
    {
      const char *kind = csr_zygote_ns_kinds[i];
      if (ns.ino[i] == 0 && z->ns.ino[i] == 0 && z->own.ino[i] == 0)
        continue; /* a kernel without that kind */
      if (ns.ino[i] == 0)
        return csr_error_set (
            err, 0, "the warm jail is not confined: its %s namespace can't be read", kind);
      bool zygote = ns.ino[i] == z->ns.ino[i] && ns.dev[i] == z->ns.dev[i];
      bool ours = ns.ino[i] == z->own.ino[i] && ns.dev[i] == z->own.dev[i];
      if (zygote || ours)
        return csr_error_set (err, 0, "the warm jail is not confined: its %s namespace is the %s's",
                              kind, zygote ? "zygote" : "supervisor");
    }
  /* Still the same process, still waiting for its code (it can't undo any
   * of the above, but it could have died and its pid been taken). */
  if (status_checks (w->payload, w->jail.pid, spec->jail.seccomp_bpf != NULL, err) < 0)
    return csr_error_wrap (err, "the warm jail is not confined");
  return 0;
}
