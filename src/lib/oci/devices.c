#include "config.h"
#include "devices.h"

/* csrun — the device cgroup's rules (see devices.h): the list to enforce,
 * its meaning, and its cgroup v1 form.
 *
 * The runtime spec says the rules apply in order (the last match wins) and
 * lists the devices every container has, but not what a config without a
 * "deny all" first means, nor whether its default devices are also allowed
 * in the device cgroup.  runc and crun both decide it the same way, and so
 * does csrun: the list starts from nothing allowed (runc builds its rules
 * from an empty allow list; podman, containerd and `csrun spec` send
 * "deny all" first anyway), and after the config's rules come the devices
 * both append: mknod of any node (a node is useless without read or write),
 * /dev/null, zero, full, random, urandom, tty, console (5:1), ptmx (5:2),
 * the /dev/pts terminals (136:*) and /dev/net/tun (10:200).  Being last,
 * those can't be denied by the config, in runc and crun as here.  runc
 * applies them even with no rules (crun only when there are some): csrun
 * does as runc, since default-deny is what the spec's default list implies.
 *
 * Access letters are decided one by one (the last rule naming the letter
 * for the device wins), so "allow c 1:11 rw" then "deny c 1:11 w" leaves
 * reading allowed and writing denied, for an open asking rw as well. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"

static const struct oci_dev_rule default_rules[] = {
  { true, 'c', -1, -1, OCI_DEV_MKNOD }, { true, 'b', -1, -1, OCI_DEV_MKNOD },
  { true, 'c', 1, 3, OCI_DEV_RWM },    /* null */
  { true, 'c', 1, 8, OCI_DEV_RWM },    /* random */
  { true, 'c', 1, 7, OCI_DEV_RWM },    /* full */
  { true, 'c', 5, 0, OCI_DEV_RWM },    /* tty */
  { true, 'c', 1, 5, OCI_DEV_RWM },    /* zero */
  { true, 'c', 1, 9, OCI_DEV_RWM },    /* urandom */
  { true, 'c', 5, 1, OCI_DEV_RWM },    /* console */
  { true, 'c', 136, -1, OCI_DEV_RWM }, /* /dev/pts/N */
  { true, 'c', 5, 2, OCI_DEV_RWM },    /* ptmx */
  { true, 'c', 10, 200, OCI_DEV_RWM }, /* net/tun */
};
#define N_DEFAULT (sizeof default_rules / sizeof default_rules[0])

/* The most rules csrun takes (a BPF program stays far below the kernel's
 * instruction limit, v1 writes stay quick). */
#define MAX_RULES 1024

int
oci_devices_effective (const struct oci_dev_rule *user, size_t n, struct oci_dev_rule **out,
                       size_t *n_out, csr_error **err)
{
  *out = NULL;
  *n_out = 0;
  if (n > MAX_RULES)
    return csr_error_set (err, E2BIG, "linux.resources.devices: %zu rules (at most %d)", n,
                          MAX_RULES);
  struct oci_dev_rule *v = calloc (1 + n + N_DEFAULT, sizeof *v);
  if (v == NULL)
    return csr_error_errno (err, "device rules");
  v[0] = (struct oci_dev_rule){ false, 'a', -1, -1, OCI_DEV_RWM };
  for (size_t i = 0; i < n; i++)
    {
      if (user[i].access == 0 || (user[i].access & ~(unsigned)OCI_DEV_RWM)
          || !strchr ("acb", user[i].type) || user[i].type == '\0' || user[i].major < -1
          || user[i].major > UINT32_MAX || user[i].minor < -1 || user[i].minor > UINT32_MAX)
        {
          free (v);
          return csr_error_set (err, EINVAL, "linux.resources.devices[%zu]: invalid rule", i);
        }
      v[1 + i] = user[i];
    }
  memcpy (v + 1 + n, default_rules, sizeof default_rules);
  *out = v;
  *n_out = 1 + n + N_DEFAULT;
  return 0;
}

static bool
matches (const struct oci_dev_rule *r, char type, uint32_t major, uint32_t minor)
{
  return (r->type == 'a' || r->type == type) && (r->major < 0 || (uint32_t)r->major == major)
         && (r->minor < 0 || (uint32_t)r->minor == minor);
}

bool
oci_devices_allows (const struct oci_dev_rule *rules, size_t n, char type, uint32_t major,
                    uint32_t minor, unsigned access)
{
  unsigned open = access & OCI_DEV_RWM; /* letters not decided yet */
  if (open == 0 || open != access)
    return false;
  for (size_t i = n; i > 0; i--)
    {
      const struct oci_dev_rule *r = &rules[i - 1];
      if (!matches (r, type, major, minor) || (r->access & open) == 0)
        continue;
      if (!r->allow)
        return false;
      open &= ~r->access;
      if (open == 0)
        return true;
    }
  return false;
}

static void
fmt_num (int64_t v, char *buf, size_t len)
{
  if (v < 0)
    snprintf (buf, len, "*");
  else
    snprintf (buf, len, "%" PRId64, v);
}

char *
oci_dev_rule_format (const struct oci_dev_rule *r, char buf[OCI_DEV_LINE_MAX])
{
  if (r->type == 'a' && r->major < 0 && r->minor < 0 && r->access == OCI_DEV_RWM)
    {
      snprintf (buf, OCI_DEV_LINE_MAX, "a");
      return buf;
    }
  char ma[24], mi[24], acc[4];
  fmt_num (r->major, ma, sizeof ma);
  fmt_num (r->minor, mi, sizeof mi);
  size_t k = 0;
  if (r->access & OCI_DEV_READ)
    acc[k++] = 'r';
  if (r->access & OCI_DEV_WRITE)
    acc[k++] = 'w';
  if (r->access & OCI_DEV_MKNOD)
    acc[k++] = 'm';
  acc[k] = '\0';
  snprintf (buf, OCI_DEV_LINE_MAX, "%c %s:%s %s", r->type, ma, mi, acc);
  return buf;
}

/* ---------------------------------------------------------------- v1 form */

void
oci_devices_v1_release (struct oci_dev_v1 *v)
{
  free (v->ex);
  memset (v, 0, sizeof *v);
}

static bool
same_key (const struct oci_dev_rule *a, const struct oci_dev_rule *b)
{
  return a->type == b->type && a->major == b->major && a->minor == b->minor;
}

/* Whether the device sets of A and B (one type each) meet; whether A's is
 * inside B's. */
static bool
overlap (const struct oci_dev_rule *a, const struct oci_dev_rule *b)
{
  return a->type == b->type && (a->major < 0 || b->major < 0 || a->major == b->major)
         && (a->minor < 0 || b->minor < 0 || a->minor == b->minor);
}

static bool
inside (const struct oci_dev_rule *a, const struct oci_dev_rule *b)
{
  return a->type == b->type && (b->major < 0 || a->major == b->major)
         && (b->minor < 0 || a->minor == b->minor);
}

/* One rule of a single type on V.  A rule of the default's kind (an allow
 * in allow-all mode, a deny in deny-all mode) takes its letters from the
 * exceptions it covers; it can't take them from part of a wider one. */
static int
v1_apply (struct oci_dev_v1 *v, const struct oci_dev_rule *r, size_t cap, csr_error **err)
{
  bool adds = r->allow != v->allow_all; /* an exception of the current kind */
  if (adds)
    {
      for (size_t i = 0; i < v->n; i++)
        if (same_key (&v->ex[i], r))
          {
            v->ex[i].access |= r->access;
            return 0;
          }
      if (v->n == cap)
        return csr_error_set (err, E2BIG, "device rules: too many cgroup v1 exceptions");
      v->ex[v->n] = *r;
      v->ex[v->n].allow = r->allow;
      v->n++;
      return 0;
    }
  size_t k = 0;
  for (size_t i = 0; i < v->n; i++)
    {
      struct oci_dev_rule *e = &v->ex[i];
      if (overlap (e, r) && (e->access & r->access))
        {
          if (!inside (e, r))
            {
              char l1[OCI_DEV_LINE_MAX], l2[OCI_DEV_LINE_MAX];
              return csr_error_set (err, EINVAL,
                                    "device rule '%s %s' takes access from part of the earlier "
                                    "'%s %s': cgroup v1 can't express that",
                                    r->allow ? "allow" : "deny", oci_dev_rule_format (r, l1),
                                    e->allow ? "allow" : "deny", oci_dev_rule_format (e, l2));
            }
          e->access &= ~r->access;
        }
      if (e->access)
        v->ex[k++] = *e;
    }
  v->n = k;
  return 0;
}

int
oci_devices_to_v1 (const struct oci_dev_rule *rules, size_t n, struct oci_dev_v1 *out,
                   csr_error **err)
{
  memset (out, 0, sizeof *out);
  /* The kernel's own default: a new cgroup starts from its parent's list;
   * the first rule of every effective list resets it anyway. */
  out->allow_all = true;
  size_t cap = 2 * n + 1;
  out->ex = calloc (cap, sizeof *out->ex);
  if (out->ex == NULL)
    return csr_error_errno (err, "device rules");
  for (size_t i = 0; i < n; i++)
    {
      const struct oci_dev_rule *r = &rules[i];
      if (r->type == 'a' && r->major < 0 && r->minor < 0 && r->access == OCI_DEV_RWM)
        {
          out->allow_all = r->allow;
          out->n = 0;
          continue;
        }
      /* Type "a" with numbers or some letters: the same on both types. */
      static const char both[] = { 'c', 'b' };
      for (size_t t = 0; t < 2; t++)
        {
          if (r->type != 'a' && r->type != both[t])
            continue;
          struct oci_dev_rule one = *r;
          one.type = both[t];
          if (v1_apply (out, &one, cap, err) < 0)
            {
              oci_devices_v1_release (out);
              return -1;
            }
        }
    }
  return 0;
}

/* ---------------------------------------------------------------- v1 apply */

static int
v1_write (const char *dir, const char *file, const char *line, csr_error **err)
{
  cleanup_free char *p = NULL;
  if (asprintf (&p, "%s/%s", dir, file) < 0)
    return csr_error_errno (err, "device cgroup");
  cleanup_close int fd = open (p, O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return csr_error_errno (err, "device cgroup: open '%s'", p);
  ssize_t w;
  do
    w = write (fd, line, strlen (line));
  while (w < 0 && errno == EINTR);
  if (w < 0)
    {
      int e = errno;
      if (e == EPERM)
        return csr_error_set (err, e,
                              "device cgroup: writing '%s' to '%s': not permitted (the parent "
                              "cgroup does not allow it)",
                              line, p);
      if (e == EINVAL && strcmp (line, "a") == 0)
        return csr_error_set (err, e,
                              "device cgroup: writing '%s' to '%s': refused (the cgroup has "
                              "child cgroups, whose rules v1 can't reset)",
                              line, p);
      errno = e;
      return csr_error_errno (err, "device cgroup: write '%s' to '%s'", line, p);
    }
  if ((size_t)w != strlen (line))
    return csr_error_set (err, EIO, "device cgroup: short write to '%s'", p);
  csr_debug ("device cgroup: %s <- %s", p, line);
  return 0;
}

static int
parse_num (const char *s, int64_t *out)
{
  if (strcmp (s, "*") == 0)
    {
      *out = -1;
      return 0;
    }
  char *end;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno || end == s || *end || v > UINT32_MAX)
    return -1;
  *out = (int64_t)v;
  return 0;
}

/* devices.list of DIR as a v1 form: "a *:* rwm" means allow-all (its deny
 * exceptions are not listed, so they are unknown: *KNOWN false). */
static int
v1_read (const char *dir, struct oci_dev_v1 *v, bool *known, csr_error **err)
{
  memset (v, 0, sizeof *v);
  *known = true;
  cleanup_free char *p = NULL;
  cleanup_free char *text = NULL;
  if (asprintf (&p, "%s/devices.list", dir) < 0)
    return csr_error_errno (err, "device cgroup");
  if (csr_read_file (p, 1 << 20, &text, NULL, err) < 0)
    return csr_error_wrap (err, "device cgroup");
  size_t cap = 16;
  for (const char *c = text; *c; c++)
    cap += *c == '\n';
  v->ex = calloc (cap, sizeof *v->ex);
  if (v->ex == NULL)
    return csr_error_errno (err, "device cgroup");
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char type, nums[48], acc[8];
      if (sscanf (line, "%c %47s %7s", &type, nums, acc) != 3)
        goto bad;
      char *colon = strchr (nums, ':');
      if (colon == NULL)
        goto bad;
      *colon = '\0';
      struct oci_dev_rule r = { .allow = true, .type = type };
      if (parse_num (nums, &r.major) < 0 || parse_num (colon + 1, &r.minor) < 0
          || acc[strspn (acc, "rwm")] != '\0')
        goto bad;
      r.access = (strchr (acc, 'r') ? OCI_DEV_READ : 0U) | (strchr (acc, 'w') ? OCI_DEV_WRITE : 0U)
                 | (strchr (acc, 'm') ? OCI_DEV_MKNOD : 0U);
      if (type == 'a')
        {
          v->allow_all = true;
          *known = false;
          v->n = 0;
          break;
        }
      if ((type != 'c' && type != 'b') || v->n == cap)
        goto bad;
      v->ex[v->n++] = r;
      continue;
    bad:
      oci_devices_v1_release (v);
      return csr_error_set (err, EPROTO, "device cgroup: %s: unexpected line '%s'", p, line);
    }
  return 0;
}

static unsigned
access_of (const struct oci_dev_v1 *v, const struct oci_dev_rule *key)
{
  for (size_t i = 0; i < v->n; i++)
    if (same_key (&v->ex[i], key))
      return v->ex[i].access;
  return 0;
}

static bool
v1_equal (const struct oci_dev_v1 *a, const struct oci_dev_v1 *b)
{
  if (a->allow_all != b->allow_all || a->n != b->n)
    return false;
  for (size_t i = 0; i < a->n; i++)
    if (access_of (b, &a->ex[i]) != a->ex[i].access)
      return false;
  return true;
}

/* Move DIR from CUR to deny-by-default TARGET: allow what is new first, then
 * take away what is no longer wanted (exceptions are per exact device key,
 * so these writes are exact).  From allow-all, reset first. */
static int
v1_to_deny (const char *dir, const struct oci_dev_v1 *cur, const struct oci_dev_v1 *target,
            csr_error **err)
{
  char line[OCI_DEV_LINE_MAX];
  bool reset = cur->allow_all;
  if (reset && v1_write (dir, "devices.deny", "a", err) < 0)
    return -1;
  for (size_t i = 0; i < target->n; i++)
    {
      unsigned have = reset ? 0 : access_of (cur, &target->ex[i]);
      if ((target->ex[i].access & ~have) == 0)
        continue;
      if (v1_write (dir, "devices.allow", oci_dev_rule_format (&target->ex[i], line), err) < 0)
        return -1;
    }
  if (reset)
    return 0;
  for (size_t i = 0; i < cur->n; i++)
    {
      struct oci_dev_rule gone = cur->ex[i];
      gone.access &= ~access_of (target, &cur->ex[i]);
      if (gone.access && v1_write (dir, "devices.deny", oci_dev_rule_format (&gone, line), err) < 0)
        return -1;
    }
  return 0;
}

int
oci_devices_apply_v1 (const char *dir, const struct oci_dev_rule *user, size_t n, csr_error **err)
{
  cleanup_free struct oci_dev_rule *rules = NULL;
  size_t nr = 0;
  if (oci_devices_effective (user, n, &rules, &nr, err) < 0)
    return -1;
  struct oci_dev_v1 target, cur = { 0 }, after = { 0 };
  if (oci_devices_to_v1 (rules, nr, &target, err) < 0)
    return -1;
  bool known;
  int ret = -1;
  if (v1_read (dir, &cur, &known, err) < 0)
    goto out;
  if (!target.allow_all)
    {
      if (v1_to_deny (dir, &cur, &target, err) < 0)
        goto out;
    }
  else
    {
      /* Allow-all with deny exceptions: the current deny exceptions can't be
       * read, so start over.  A container moving from allow-all with deny
       * exceptions to others briefly has none (only by `csrun update`). */
      char line[OCI_DEV_LINE_MAX];
      if (v1_write (dir, "devices.allow", "a", err) < 0)
        goto out;
      for (size_t i = 0; i < target.n; i++)
        if (v1_write (dir, "devices.deny", oci_dev_rule_format (&target.ex[i], line), err) < 0)
          goto out;
    }
  /* Read back: in deny-by-default mode the list must be exactly the target
   * (runc checks the same); allow-all must at least be in that mode. */
  if (v1_read (dir, &after, &known, err) < 0)
    goto out;
  if (target.allow_all ? !after.allow_all : !v1_equal (&after, &target))
    {
      csr_error_set (err, EIO, "device cgroup: %s/devices.list does not hold the rules written",
                     dir);
      goto out;
    }
  ret = 0;
out:
  oci_devices_v1_release (&target);
  oci_devices_v1_release (&cur);
  oci_devices_v1_release (&after);
  return ret;
}

/* ---------------------------------------------------------------- who may */

bool
oci_devices_privileged (void)
{
  if (geteuid () != 0)
    return false;
  /* The initial user namespace maps all 2^32 ids onto themselves. */
  cleanup_file FILE *f = fopen ("/proc/self/uid_map", "re");
  if (f == NULL)
    return false;
  unsigned long inside, outside, count;
  if (fscanf (f, "%lu %lu %lu", &inside, &outside, &count) != 3)
    return false;
  return inside == 0 && outside == 0 && count == 4294967295UL;
}
