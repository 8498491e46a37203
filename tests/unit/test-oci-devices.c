/* Unit tests for the device cgroup (src/lib/oci/devices.c, devices-bpf.c).
 *
 * parse:  linux.resources.devices through oci_config_parse: stored in order,
 *         absent numbers are -1, bad rules name their JSON path.
 * rules:  the effective list (deny-all first, the defaults last) and
 *         oci_devices_allows: last match wins, letter by letter.
 * v1:     oci_devices_to_v1 and its lines; on random rule lists, what the
 *         v1 form allows (the kernel's matching, simulated) is never more
 *         than oci_devices_allows.
 * bpf:    the program, run by a small interpreter of the instructions it
 *         uses, decides exactly as oci_devices_allows on random rule lists.
 * real:   as root, a cgroup made for the test (/csrun-test-devices-PID) in
 *         this host's cgroup v2 mount (BPF program) and, when there is one,
 *         its cgroup v1 devices hierarchy: a child moved into it opens
 *         /dev/null and is refused /dev/kmsg (EPERM); an update lets it;
 *         the cgroup is removed afterwards. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup-internal.h"
#include "oci/resources.h"
#include "oci/oci-config.h"
#include "oci/devices-bpf.h"
#include "oci/devices.h"
#include "util/fs.h"

/* ---------------------------------------------------------------- parse */

static int
parse_devices (const char *devices, struct oci_config *c, char **msg)
{
  char doc[4096];
  snprintf (doc, sizeof doc,
            "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/\"},\"linux\":{\"resources\":"
            "{\"devices\":%s}}}",
            devices);
  memset (c, 0, sizeof *c);
  csr_error *e = NULL;
  int r = oci_config_parse (doc, strlen (doc), c, &e);
  if (msg)
    *msg = e ? strdup (e->msg) : NULL;
  csr_error_free (e);
  return r;
}

Test (parse, stored_in_order)
{
  struct oci_config c;
  cr_assert_eq (parse_devices ("[{\"allow\":false,\"access\":\"rwm\"},"
                               "{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":3,"
                               "\"access\":\"rw\"},"
                               "{\"allow\":true,\"type\":\"b\",\"major\":-1,\"access\":\"m\"}]",
                               &c, NULL),
                0);
  cr_assert (c.resources.has_devices);
  cr_assert_eq (c.resources.n_devices, 3);
  const struct oci_dev_rule *d = c.resources.devices;
  cr_assert (!d[0].allow && d[0].type == 'a' && d[0].major == -1 && d[0].minor == -1
             && d[0].access == OCI_DEV_RWM);
  cr_assert (d[1].allow && d[1].type == 'c' && d[1].major == 1 && d[1].minor == 3
             && d[1].access == (OCI_DEV_READ | OCI_DEV_WRITE));
  cr_assert (d[2].allow && d[2].type == 'b' && d[2].major == -1 && d[2].minor == -1
             && d[2].access == OCI_DEV_MKNOD);
  oci_config_release (&c);

  cr_assert_eq (parse_devices ("[]", &c, NULL), 0);
  cr_assert (c.resources.has_devices);
  cr_assert_eq (c.resources.n_devices, 0);
  oci_config_release (&c);
}

Test (parse, bad_rules_refused)
{
  static const struct
  {
    const char *json, *want;
  } bad[] = {
    { "[{\"access\":\"rwm\"}]", "linux.resources.devices[0].allow" },
    { "[{\"allow\":1,\"access\":\"rwm\"}]", "linux.resources.devices[0].allow" },
    { "[{\"allow\":true,\"type\":\"u\",\"access\":\"rwm\"}]", "linux.resources.devices[0].type" },
    { "[{\"allow\":true}]", "linux.resources.devices[0].access" },
    { "[{\"allow\":true,\"access\":\"\"}]", "linux.resources.devices[0].access" },
    { "[{\"allow\":true,\"access\":\"xa\"}]", "linux.resources.devices[0].access" },
    { "[{\"allow\":true,\"access\":\"r\"},{\"allow\":true,\"major\":-2,\"access\":\"r\"}]",
      "linux.resources.devices[1].major" },
    { "[{\"allow\":true,\"minor\":4294967296,\"access\":\"r\"}]",
      "linux.resources.devices[0].minor" },
    { "{\"allow\":true}", "linux.resources.devices" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      struct oci_config c;
      char *msg = NULL;
      cr_assert_lt (parse_devices (bad[i].json, &c, &msg), 0, "%s", bad[i].json);
      cr_assert (msg && strstr (msg, bad[i].want), "%s: %s", bad[i].json, msg);
      free (msg);
      oci_config_release (&c);
    }
}

/* ---------------------------------------------------------------- rules */

#define R_ (OCI_DEV_READ)
#define W_ (OCI_DEV_WRITE)
#define M_ (OCI_DEV_MKNOD)

static struct oci_dev_rule
rule (bool allow, char type, int64_t major, int64_t minor, unsigned access)
{
  return (struct oci_dev_rule){ allow, type, major, minor, access };
}

Test (rules, effective_list)
{
  struct oci_dev_rule user[] = { rule (true, 'c', 1, 11, W_) };
  struct oci_dev_rule *v = NULL;
  size_t n = 0;
  csr_error *e = NULL;
  cr_assert_eq (oci_devices_effective (user, 1, &v, &n, &e), 0);
  cr_assert_eq (n, 1 + 1 + 12);
  char line[OCI_DEV_LINE_MAX];
  cr_assert (!v[0].allow);
  cr_assert_str_eq (oci_dev_rule_format (&v[0], line), "a");
  cr_assert_str_eq (oci_dev_rule_format (&v[1], line), "c 1:11 w");
  cr_assert_str_eq (oci_dev_rule_format (&v[2], line), "c *:* m");
  cr_assert_str_eq (oci_dev_rule_format (&v[3], line), "b *:* m");
  cr_assert_str_eq (oci_dev_rule_format (&v[n - 3], line), "c 136:* rwm");
  cr_assert_str_eq (oci_dev_rule_format (&v[n - 1], line), "c 10:200 rwm");
  free (v);

  struct oci_dev_rule bad = rule (true, 'x', 1, 1, R_);
  cr_assert_lt (oci_devices_effective (&bad, 1, &v, &n, &e), 0);
  csr_error_free (e);
}

static bool
allows (const struct oci_dev_rule *user, size_t n, char type, uint32_t ma, uint32_t mi, unsigned a)
{
  struct oci_dev_rule *v = NULL;
  size_t nv = 0;
  csr_error *e = NULL;
  cr_assert_eq (oci_devices_effective (user, n, &v, &nv, &e), 0);
  bool r = oci_devices_allows (v, nv, type, ma, mi, a);
  free (v);
  return r;
}

Test (rules, last_match_letter_by_letter)
{
  /* Nothing given: default-deny, the defaults allowed. */
  cr_assert (!allows (NULL, 0, 'c', 1, 11, W_));
  cr_assert (allows (NULL, 0, 'c', 1, 3, R_ | W_));
  cr_assert (allows (NULL, 0, 'c', 136, 7, R_ | W_));
  cr_assert (allows (NULL, 0, 'c', 1, 11, M_), "mknod of anything, as runc and crun");
  cr_assert (!allows (NULL, 0, 'b', 7, 0, R_));
  cr_assert (!allows (NULL, 0, 'c', 1, 3, 0), "no letter asked for: denied");

  struct oci_dev_rule a[] = { rule (true, 'c', 1, 11, R_ | W_), rule (false, 'c', 1, 11, W_) };
  cr_assert (allows (a, 2, 'c', 1, 11, R_));
  cr_assert (!allows (a, 2, 'c', 1, 11, W_));
  cr_assert (!allows (a, 2, 'c', 1, 11, R_ | W_), "rw is denied by the later deny of w");

  struct oci_dev_rule b[] = { rule (true, 'c', 1, -1, R_), rule (true, 'c', -1, 11, W_) };
  cr_assert (allows (b, 2, 'c', 1, 11, R_ | W_), "letters from two rules");
  cr_assert (!allows (b, 2, 'c', 1, 12, W_));

  struct oci_dev_rule c[]
      = { rule (true, 'a', -1, -1, OCI_DEV_RWM), rule (false, 'b', -1, -1, R_) };
  cr_assert (allows (c, 2, 'c', 4, 1, R_ | W_));
  cr_assert (!allows (c, 2, 'b', 7, 0, R_));
  cr_assert (allows (c, 2, 'b', 7, 0, W_));

  /* The defaults can't be denied (they come last, as in runc and crun). */
  struct oci_dev_rule d[] = { rule (false, 'c', 1, 3, OCI_DEV_RWM) };
  cr_assert (allows (d, 1, 'c', 1, 3, R_ | W_));
}

/* ---------------------------------------------------------------- v1 */

static void
lines_of (const struct oci_dev_v1 *v, char *out, size_t size)
{
  out[0] = '\0';
  char line[OCI_DEV_LINE_MAX];
  for (size_t i = 0; i < v->n; i++)
    {
      strncat (out, oci_dev_rule_format (&v->ex[i], line), size - strlen (out) - 2);
      strcat (out, ";");
    }
}

static int
v1_of (const struct oci_dev_rule *user, size_t n, struct oci_dev_v1 *v, char **msg)
{
  struct oci_dev_rule *all = NULL;
  size_t na = 0;
  csr_error *e = NULL;
  cr_assert_eq (oci_devices_effective (user, n, &all, &na, &e), 0);
  int r = oci_devices_to_v1 (all, na, v, &e);
  if (msg)
    *msg = e ? strdup (e->msg) : NULL;
  csr_error_free (e);
  free (all);
  return r;
}

Test (v1, lines)
{
  struct oci_dev_v1 v;
  char buf[2048];
  struct oci_dev_rule a[] = { rule (false, 'a', -1, -1, OCI_DEV_RWM), rule (true, 'c', 1, 11, W_),
                              rule (true, 'c', 1, 3, R_), rule (true, 'a', 4, -1, R_) };
  cr_assert_eq (v1_of (a, 4, &v, NULL), 0);
  cr_assert (!v.allow_all);
  lines_of (&v, buf, sizeof buf);
  cr_assert_str_eq (buf,
                    "c 1:11 w;c 1:3 rwm;c 4:* r;b 4:* r;c *:* m;b *:* m;c 1:8 rwm;c 1:7 rwm;"
                    "c 5:0 rwm;c 1:5 rwm;c 1:9 rwm;c 5:1 rwm;c 136:* rwm;c 5:2 rwm;c 10:200 rwm;");
  oci_devices_v1_release (&v);

  /* A later deny covering an exception takes its letters. */
  struct oci_dev_rule b[] = { rule (true, 'c', 1, 11, R_ | W_), rule (false, 'c', -1, -1, W_) };
  cr_assert_eq (v1_of (b, 2, &v, NULL), 0);
  lines_of (&v, buf, sizeof buf);
  cr_assert (strncmp (buf, "c 1:11 r;", 9) == 0, "%s", buf);
  oci_devices_v1_release (&v);

  /* Privileged: allow-all, nothing else to write. */
  struct oci_dev_rule c[] = { rule (true, 'a', -1, -1, OCI_DEV_RWM) };
  cr_assert_eq (v1_of (c, 1, &v, NULL), 0);
  cr_assert (v.allow_all);
  cr_assert_eq (v.n, 0);
  oci_devices_v1_release (&v);

  /* Allow-all with a deny exception. */
  struct oci_dev_rule d[] = { rule (true, 'a', -1, -1, OCI_DEV_RWM), rule (false, 'c', 1, 11, W_) };
  cr_assert_eq (v1_of (d, 2, &v, NULL), 0);
  cr_assert (v.allow_all);
  lines_of (&v, buf, sizeof buf);
  cr_assert_str_eq (buf, "c 1:11 w;");
  oci_devices_v1_release (&v);

  /* A hole in a wildcard: refused, naming both rules. */
  struct oci_dev_rule e[] = { rule (true, 'c', -1, -1, OCI_DEV_RWM), rule (false, 'c', 1, 11, W_) };
  char *msg = NULL;
  cr_assert_lt (v1_of (e, 2, &v, &msg), 0);
  cr_assert (msg && strstr (msg, "'deny c 1:11 w'") && strstr (msg, "'allow c *:* rwm'")
                 && strstr (msg, "cgroup v1 can't"),
             "%s", msg);
  free (msg);
}

/* The kernel's v1 check (security/device_cgroup.c): deny-by-default needs
 * one exception covering the device with every letter asked; allow-all
 * denies when any exception meets the device and a letter asked. */
static bool
v1_allows (const struct oci_dev_v1 *v, char type, uint32_t ma, uint32_t mi, unsigned a)
{
  for (size_t i = 0; i < v->n; i++)
    {
      const struct oci_dev_rule *e = &v->ex[i];
      bool dev = e->type == type && (e->major < 0 || (uint32_t)e->major == ma)
                 && (e->minor < 0 || (uint32_t)e->minor == mi);
      if (!dev)
        continue;
      if (!v->allow_all && (a & ~e->access) == 0)
        return true;
      if (v->allow_all && (a & e->access))
        return false;
    }
  return v->allow_all;
}

static unsigned long long seed = 88172645463325252ULL;
static unsigned
rnd (unsigned n)
{
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return (unsigned)(seed % n);
}

static size_t
random_rules (struct oci_dev_rule *r, size_t max)
{
  size_t n = 1 + rnd ((unsigned)max);
  static const char types[] = { 'a', 'c', 'b' };
  for (size_t i = 0; i < n; i++)
    r[i] = rule (rnd (2), types[rnd (3)], (int64_t)rnd (3) - 1, (int64_t)rnd (3) - 1, 1 + rnd (7));
  /* Sometimes a full reset in the middle. */
  if (rnd (4) == 0)
    r[rnd ((unsigned)n)] = rule (rnd (2), 'a', -1, -1, OCI_DEV_RWM);
  return n;
}

Test (v1, never_more_than_the_rules)
{
  size_t refused = 0, exact = 0, total = 0;
  for (int round = 0; round < 3000; round++)
    {
      struct oci_dev_rule user[8];
      size_t n = random_rules (user, 8);
      struct oci_dev_rule *all = NULL;
      size_t na = 0;
      csr_error *e = NULL;
      cr_assert_eq (oci_devices_effective (user, n, &all, &na, &e), 0);
      struct oci_dev_v1 v;
      if (oci_devices_to_v1 (all, na, &v, &e) < 0)
        {
          cr_assert (strstr (e->msg, "cgroup v1 can't"), "%s", e->msg);
          csr_error_free (e);
          e = NULL;
          refused++;
          free (all);
          continue;
        }
      bool same = true;
      for (int t = 0; t < 2; t++)
        for (uint32_t ma = 0; ma < 3; ma++)
          for (uint32_t mi = 0; mi < 3; mi++)
            for (unsigned a = 1; a <= 7; a++)
              {
                char type = t ? 'b' : 'c';
                bool want = oci_devices_allows (all, na, type, ma, mi, a);
                bool got = v1_allows (&v, type, ma, mi, a);
                cr_assert (!got || want, "round %d: v1 allows %c %u:%u %u, the rules don't", round,
                           type, ma, mi, a);
                same = same && got == want;
              }
      exact += same;
      total++;
      oci_devices_v1_release (&v);
      free (all);
    }
  /* Most lists convert exactly; a few are refused. */
  cr_assert_gt (exact, total / 2, "%zu of %zu exact", exact, total);
  cr_assert_gt (refused, 0);
}

/* ---------------------------------------------------------------- bpf */

/* Runs P on the context {access << 16 | type, major, minor}: only the
 * instructions devices-bpf.c emits; anything else fails the test. */
static int
run_bpf (const struct bpf_insn *p, size_t n, uint32_t access_type, uint32_t major, uint32_t minor)
{
  uint64_t reg[11] = { 0 };
  uint32_t ctx[3] = { access_type, major, minor };
  size_t pc = 0;
  for (int steps = 0; steps < 100000; steps++)
    {
      cr_assert_lt (pc, n, "fell off the program");
      const struct bpf_insn *i = &p[pc++];
      uint64_t *d = &reg[i->dst_reg];
      uint32_t k = (uint32_t)i->imm;
      switch (i->code)
        {
        case BPF_LDX | BPF_W | BPF_MEM:
          cr_assert_eq (i->src_reg, BPF_REG_1);
          cr_assert (i->off >= 0 && i->off <= 8 && i->off % 4 == 0);
          *d = ctx[i->off / 4];
          break;
        case BPF_ALU | BPF_AND | BPF_K:
          *d = (uint32_t)*d & k;
          break;
        case BPF_ALU | BPF_RSH | BPF_K:
          *d = (uint32_t)*d >> k;
          break;
        case BPF_ALU | BPF_MOV | BPF_X:
          *d = (uint32_t)reg[i->src_reg];
          break;
        case BPF_ALU64 | BPF_MOV | BPF_K:
          *d = (uint64_t)(int64_t)i->imm;
          break;
        case BPF_JMP32 | BPF_JNE | BPF_K:
          if ((uint32_t)*d != k)
            pc += i->off;
          break;
        case BPF_JMP32 | BPF_JEQ | BPF_K:
          if ((uint32_t)*d == k)
            pc += i->off;
          break;
        case BPF_JMP | BPF_EXIT:
          return (int)reg[0];
        default:
          cr_assert_fail ("unexpected instruction 0x%02x at %zu", i->code, pc - 1);
        }
    }
  cr_assert_fail ("the program does not end");
  return -1;
}

/* The verifier refuses unreachable instructions and jumps out of the program. */
static void
check_reachable (const struct bpf_insn *p, size_t n)
{
  bool *seen = calloc (n, 1);
  size_t *stack = calloc (n + 1, sizeof *stack), top = 0;
  cr_assert (seen && stack);
  stack[top++] = 0;
  while (top)
    {
      size_t pc = stack[--top];
      cr_assert_lt (pc, n, "a jump out of the program");
      if (seen[pc])
        continue;
      seen[pc] = true;
      uint8_t code = p[pc].code;
      if (code == (BPF_JMP | BPF_EXIT))
        continue;
      if (BPF_CLASS (code) == BPF_JMP32)
        stack[top++] = pc + 1 + (size_t)p[pc].off;
      stack[top++] = pc + 1;
    }
  for (size_t i = 0; i < n; i++)
    cr_assert (seen[i], "instruction %zu of %zu is unreachable", i, n);
  free (seen);
  free (stack);
}

static uint32_t
bpf_acc (unsigned a)
{
  return ((a & R_) ? BPF_DEVCG_ACC_READ : 0U) | ((a & W_) ? BPF_DEVCG_ACC_WRITE : 0U)
         | ((a & M_) ? BPF_DEVCG_ACC_MKNOD : 0U);
}

Test (bpf, program_decides_as_the_rules)
{
  for (int round = 0; round < 2000; round++)
    {
      struct oci_dev_rule user[8];
      size_t n = random_rules (user, 8);
      struct oci_dev_rule *all = NULL;
      size_t na = 0;
      csr_error *e = NULL;
      cr_assert_eq (oci_devices_effective (user, n, &all, &na, &e), 0);
      struct bpf_insn *p = NULL;
      size_t np = 0;
      cr_assert_eq (oci_devices_bpf_build (all, na, &p, &np, &e), 0);
      check_reachable (p, np);
      for (int t = 0; t < 2; t++)
        for (uint32_t ma = 0; ma < 3; ma++)
          for (uint32_t mi = 0; mi < 3; mi++)
            for (unsigned a = 0; a <= 7; a++)
              {
                char type = t ? 'b' : 'c';
                uint32_t at = (bpf_acc (a) << 16) | (t ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR);
                int got = run_bpf (p, np, at, ma, mi);
                bool want = oci_devices_allows (all, na, type, ma, mi, a);
                cr_assert_eq (got, want ? 1 : 0, "round %d: %c %u:%u access %u", round, type, ma,
                              mi, a);
              }
      free (p);
      free (all);
    }
  /* Big numbers compare as 32-bit values. */
  struct oci_dev_rule big[] = { rule (true, 'c', 4000000000LL, 4294967295LL, R_) };
  struct oci_dev_rule *all = NULL;
  size_t na = 0;
  csr_error *e = NULL;
  cr_assert_eq (oci_devices_effective (big, 1, &all, &na, &e), 0);
  struct bpf_insn *p = NULL;
  size_t np = 0;
  cr_assert_eq (oci_devices_bpf_build (all, na, &p, &np, &e), 0);
  uint32_t at = (BPF_DEVCG_ACC_READ << 16) | BPF_DEVCG_DEV_CHAR;
  cr_assert_eq (run_bpf (p, np, at, 4000000000U, 4294967295U), 1);
  cr_assert_eq (run_bpf (p, np, at, 4000000000U, 7), 0);
  free (p);
  free (all);
}

/* ---------------------------------------------------------------- real */

static char made_v2[PATH_MAX], made_v1[PATH_MAX];

static void
cleanup_real (void)
{
  /* After a failed assertion: remove what this test made (empty by then:
   * the children have exited). */
  if (made_v2[0])
    rmdir (made_v2);
  if (made_v1[0])
    rmdir (made_v1);
}

/* The cgroup2 mount point (NULL: none). */
static char *
v2_mount (void)
{
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    return NULL;
  char line[4096], *found = NULL;
  while (!found && fgets (line, sizeof line, f))
    {
      char mnt[PATH_MAX], fstype[64];
      char *sep = strstr (line, " - ");
      if (sep && sscanf (sep, " - %63s", fstype) == 1 && strcmp (fstype, "cgroup2") == 0
          && sscanf (line, "%*s %*s %*s %*s %4095s", mnt) == 1)
        found = strdup (mnt);
    }
  fclose (f);
  return found;
}

/* Fork a child that joins CG, opens each of PATHS[i] with FLAGS[i] and
 * reports 0 or errno in RESULTS[i]. */
static void
probe (const struct csr_cgroup *cg, const char *const *paths, const int *flags, int *results,
       size_t n)
{
  int fds[2];
  cr_assert_eq (pipe (fds), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      close (fds[0]);
      csr_error *e = NULL;
      if (csr_cg_container_enter (cg, getpid (), &e) < 0)
        _exit (2);
      for (size_t i = 0; i < n; i++)
        {
          int fd = open (paths[i], flags[i] | O_NONBLOCK | O_CLOEXEC);
          int r = fd >= 0 ? 0 : errno;
          if (fd >= 0)
            close (fd);
          if (write (fds[1], &r, sizeof r) != sizeof r)
            _exit (3);
        }
      _exit (0);
    }
  close (fds[1]);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq (read (fds[0], &results[i], sizeof results[i]), sizeof results[i]);
  close (fds[0]);
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "child status %d", st);
}

/* The real check, on the hierarchy ROOT_V2 or (ROOT_V2 NULL) ROOT_V1. */
static void
real_check (const char *root_v2, const char *root_v1)
{
  char path[64];
  snprintf (path, sizeof path, "/csrun-test-devices-%ld", (long)getpid ());
  const char *v1[] = { root_v1, NULL };
  struct oci_dev_rule deny[] = { rule (false, 'a', -1, -1, OCI_DEV_RWM) };
  struct csr_cgroup_resources r = { .set_devices = true, .devices = deny, .n_devices = 1 };
  struct csr_cgroup cg;
  struct csr_cgroup_applied ap;
  csr_error *e = NULL;
  int rc = csr_cg_container_make (path, &r, root_v2, root_v2 ? NULL : v1, &cg, &ap, &e);
  cr_assert_eq (rc, 1, "%s", e ? e->msg : "no cgroup made");
  snprintf (root_v2 ? made_v2 : made_v1, PATH_MAX, "%s", root_v2 ? cg.v2 : cg.v1[0]);
  cr_assert (ap.devices);

  const char *paths[] = { "/dev/null", "/dev/kmsg", "/dev/full" };
  const int flags[] = { O_RDWR, O_WRONLY, O_WRONLY };
  int res[3];
  probe (&cg, paths, flags, res, 3);
  cr_assert_eq (res[0], 0, "/dev/null: %s", strerror (res[0]));
  cr_assert_eq (res[1], EPERM, "/dev/kmsg: %s", strerror (res[1]));
  cr_assert_eq (res[2], 0, "/dev/full (a default device): %s", strerror (res[2]));

  /* Update: allow writing /dev/kmsg, then deny /dev/null's write (which the
   * defaults win over), then back to deny-all. */
  struct oci_dev_rule more[]
      = { rule (false, 'a', -1, -1, OCI_DEV_RWM), rule (true, 'c', 1, 11, W_) };
  r.devices = more;
  r.n_devices = 2;
  cr_assert_eq (csr_cgroup_update (&cg, &r, &ap, &e), 0, "%s", e ? e->msg : "");
  cr_assert (ap.devices);
  probe (&cg, paths, flags, res, 3);
  cr_assert_eq (res[0], 0);
  cr_assert_eq (res[1], 0, "/dev/kmsg after the update: %s", strerror (res[1]));
  r.devices = deny;
  r.n_devices = 1;
  cr_assert_eq (csr_cgroup_update (&cg, &r, &ap, &e), 0, "%s", e ? e->msg : "");
  probe (&cg, paths, flags, res, 3);
  cr_assert_eq (res[1], EPERM);
  cr_assert_eq (res[0], 0);

  if (root_v2)
    {
      /* One program: the updates replaced it. */
      int fd = open (cg.v2, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      cr_assert_geq (fd, 0);
      uint32_t ids[8];
      union bpf_attr a;
      memset (&a, 0, sizeof a);
      a.query.target_fd = (uint32_t)fd;
      a.query.attach_type = BPF_CGROUP_DEVICE;
      a.query.prog_ids = (uint64_t)(uintptr_t)ids;
      a.query.prog_cnt = 8;
      cr_assert_eq (syscall (__NR_bpf, BPF_PROG_QUERY, &a, sizeof a), 0, "%s", strerror (errno));
      cr_assert_eq (a.query.prog_cnt, 1);
      close (fd);
    }
  else
    {
      char list[PATH_MAX], *text = NULL;
      snprintf (list, sizeof list, "%s/devices.list", cg.v1[0]);
      cr_assert_eq (csr_read_file (list, 1 << 16, &text, NULL, &e), 0);
      cr_assert (strstr (text, "c 1:3 rwm\n") && !strstr (text, "c 1:11") && !strstr (text, "a "),
                 "%s", text);
      free (text);
    }
  cr_assert_eq (csr_cgroup_delete (&cg, &e), 0, "%s", e ? e->msg : "");
  made_v1[0] = made_v2[0] = '\0';
  csr_cg_container_release (&cg);
}

Test (real, v2_bpf_program, .fini = cleanup_real)
{
  if (!oci_devices_privileged ())
    cr_skip_test ("n/a: needs root in the initial user namespace (loads a BPF program)");
  char *mnt = v2_mount ();
  if (mnt == NULL)
    cr_skip_test ("no cgroup v2 mount on this host");
  real_check (mnt, NULL);
  free (mnt);
}

Test (real, v1_devices_hierarchy, .fini = cleanup_real)
{
  if (!oci_devices_privileged ())
    cr_skip_test ("n/a: needs root in the initial user namespace (writes devices.deny)");
  struct stat st;
  if (stat ("/sys/fs/cgroup/devices/devices.allow", &st) < 0)
    cr_skip_test ("n/a: no cgroup v1 devices hierarchy (a cgroup v2 host: the v2 test covers it)");
  real_check (NULL, "/sys/fs/cgroup/devices");
}
