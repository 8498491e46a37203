#include "config.h"
#include "devices.h"
#include "devices-bpf.h"

/* csrun — the cgroup v2 device cgroup: a BPF_PROG_TYPE_CGROUP_DEVICE
 * program, written instruction by instruction (no libbpf), loaded with
 * bpf(2) and attached to the container's cgroup directory.
 *
 * The kernel runs it for each device access of a process in the cgroup
 * (or below) with a struct bpf_cgroup_dev_ctx: access_type = (access << 16)
 * | type, major, minor.  It returns 1 to allow, 0 to deny (EPERM).  It
 * evaluates exactly what oci_devices_allows does: R6 holds the access
 * letters not decided yet; the rules are tested from the last to the first,
 * and the first that matches the device and names an undecided letter
 * decides those letters: a deny returns 0, an allow clears them from R6 and
 * returns 1 once none is left.  Running out of rules returns 0.
 *
 * crun and runc test "the request's letters are all in the rule's" instead,
 * which lets a later deny of "w" miss an open asking for "rw"; the letter by
 * letter form has no such gap.
 *
 * Attached with BPF_F_ALLOW_MULTI, as runc and crun do, so that the
 * container's own cgroups below may still attach programs (which can only
 * deny more: every program on the path must allow).  An earlier program of
 * this cgroup is replaced (BPF_F_REPLACE when there is exactly one, else the
 * new one is attached before the old ones are detached: never less
 * enforced in between). */

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/log.h"

static int
sys_bpf (int cmd, union bpf_attr *attr)
{
  return (int)syscall (__NR_bpf, cmd, attr, sizeof *attr);
}

static struct bpf_insn
insn (uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
}

/* The instructions used. */
#define LDX_W(dst, src, off) insn (BPF_LDX | BPF_W | BPF_MEM, dst, src, off, 0)
#define AND32_K(dst, k) insn (BPF_ALU | BPF_AND | BPF_K, dst, 0, 0, k)
#define RSH32_K(dst, k) insn (BPF_ALU | BPF_RSH | BPF_K, dst, 0, 0, k)
#define MOV32_X(dst, src) insn (BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0)
#define MOV64_K(dst, k) insn (BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, k)
#define JNE32_K(dst, k, off) insn (BPF_JMP32 | BPF_JNE | BPF_K, dst, 0, off, k)
#define JEQ32_K(dst, k, off) insn (BPF_JMP32 | BPF_JEQ | BPF_K, dst, 0, off, k)
#define EXIT() insn (BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

enum
{
  R_TYPE = BPF_REG_2,
  R_ACCESS = BPF_REG_3,
  R_MAJOR = BPF_REG_4,
  R_MINOR = BPF_REG_5,
  R_OPEN = BPF_REG_6, /* letters not decided yet */
};

static unsigned
bpf_access (unsigned a)
{
  return ((a & OCI_DEV_READ) ? BPF_DEVCG_ACC_READ : 0U)
         | ((a & OCI_DEV_WRITE) ? BPF_DEVCG_ACC_WRITE : 0U)
         | ((a & OCI_DEV_MKNOD) ? BPF_DEVCG_ACC_MKNOD : 0U);
}

/* At most 12 instructions per rule, 11 around them. */
#define RULE_MAX 12

/* Append the test of rule R at P[*N]; jumps to its end mean "not this rule". */
static void
emit_rule (struct bpf_insn *p, size_t *n, const struct oci_dev_rule *r)
{
  size_t start = *n, k = *n;
  size_t skips[RULE_MAX];
  size_t ns = 0;
  const unsigned all = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;
  unsigned acc = bpf_access (r->access);
  if (r->type != 'a')
    {
      skips[ns++] = k;
      p[k++] = JNE32_K (R_TYPE, r->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, 0);
    }
  if (r->major >= 0)
    {
      skips[ns++] = k;
      p[k++] = JNE32_K (R_MAJOR, (int32_t)(uint32_t)r->major, 0);
    }
  if (r->minor >= 0)
    {
      skips[ns++] = k;
      p[k++] = JNE32_K (R_MINOR, (int32_t)(uint32_t)r->minor, 0);
    }
  if (acc != all)
    {
      /* if ((open & acc) == 0) not this rule (R1 is free: ctx was read). */
      p[k++] = MOV32_X (BPF_REG_1, R_OPEN);
      p[k++] = AND32_K (BPF_REG_1, (int32_t)acc);
      skips[ns++] = k;
      p[k++] = JEQ32_K (BPF_REG_1, 0, 0);
    }
  if (!r->allow)
    {
      p[k++] = MOV64_K (BPF_REG_0, 0);
      p[k++] = EXIT ();
    }
  else if (acc == all)
    {
      p[k++] = MOV64_K (BPF_REG_0, 1);
      p[k++] = EXIT ();
    }
  else
    {
      p[k++] = AND32_K (R_OPEN, (int32_t)(~acc & all));
      skips[ns++] = k;
      p[k++] = JNE32_K (R_OPEN, 0, 0);
      p[k++] = MOV64_K (BPF_REG_0, 1);
      p[k++] = EXIT ();
    }
  for (size_t i = 0; i < ns; i++)
    p[skips[i]].off = (int16_t)(k - skips[i] - 1);
  (void)start;
  *n = k;
}

int
oci_devices_bpf_build (const struct oci_dev_rule *rules, size_t n, struct bpf_insn **out,
                       size_t *n_out, csr_error **err)
{
  *out = NULL;
  *n_out = 0;
  struct bpf_insn *p = calloc (11 + n * RULE_MAX, sizeof *p);
  if (p == NULL)
    return csr_error_errno (err, "device program");
  size_t k = 0;
  p[k++] = LDX_W (R_TYPE, BPF_REG_1, 0);
  p[k++] = AND32_K (R_TYPE, 0xffff);
  p[k++] = LDX_W (R_ACCESS, BPF_REG_1, 0);
  p[k++] = RSH32_K (R_ACCESS, 16);
  p[k++] = LDX_W (R_MAJOR, BPF_REG_1, 4);
  p[k++] = LDX_W (R_MINOR, BPF_REG_1, 8);
  p[k++] = MOV32_X (R_OPEN, R_ACCESS);
  /* Nothing asked for: deny (oci_devices_allows does the same), so that
   * every rule below starts with a letter open. */
  p[k++] = JNE32_K (R_OPEN, 0, 2);
  p[k++] = MOV64_K (BPF_REG_0, 0);
  p[k++] = EXIT ();
  /* A rule on every device and letter always returns: the rules before it
   * (and the final deny) would be unreachable code, which the verifier
   * refuses. */
  bool ended = false;
  for (size_t i = n; i > 0 && !ended; i--)
    {
      const struct oci_dev_rule *r = &rules[i - 1];
      emit_rule (p, &k, r);
      ended = r->type == 'a' && r->major < 0 && r->minor < 0 && r->access == OCI_DEV_RWM;
    }
  if (!ended)
    {
      p[k++] = MOV64_K (BPF_REG_0, 0);
      p[k++] = EXIT ();
    }
  *out = p;
  *n_out = k;
  return 0;
}

/* ---------------------------------------------------------------- load, attach */

static int
load (const struct bpf_insn *p, size_t n, csr_error **err)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = (uint64_t)(uintptr_t)p;
  a.insn_cnt = (uint32_t)n;
  a.license = (uint64_t)(uintptr_t) "MIT";
  int fd = sys_bpf (BPF_PROG_LOAD, &a);
  if (fd >= 0)
    return fd;
  int e = errno;
  if (e == EPERM || e == ENOSYS)
    {
      errno = e;
      return csr_error_errno (err, "device cgroup: cannot load a BPF device program");
    }
  /* The verifier's reason, for the error. */
  char log[4096] = "";
  a.log_buf = (uint64_t)(uintptr_t)log;
  a.log_size = sizeof log;
  a.log_level = 1;
  fd = sys_bpf (BPF_PROG_LOAD, &a);
  if (fd >= 0)
    return fd;
  /* One line: the verifier's words without its closing statistics. */
  log[sizeof log - 1] = '\0';
  char *stats = strstr (log, "processed ");
  if (stats)
    *stats = '\0';
  for (char *c = log; *c; c++)
    if (*c == '\n')
      *c = c[1] ? ' ' : '\0';
  errno = e;
  return csr_error_errno (err, "device cgroup: the BPF device program was refused%s%s",
                          *log ? ": " : "", log);
}

/* The ids of the device programs attached to the cgroup FD itself. */
static int
query (int fd, uint32_t **ids, uint32_t *n, csr_error **err)
{
  *ids = NULL;
  *n = 0;
  for (uint32_t cap = 64; cap <= 65536; cap *= 4)
    {
      uint32_t *v = calloc (cap, sizeof *v);
      if (v == NULL)
        return csr_error_errno (err, "device cgroup");
      union bpf_attr a;
      memset (&a, 0, sizeof a);
      a.query.target_fd = (uint32_t)fd;
      a.query.attach_type = BPF_CGROUP_DEVICE;
      a.query.prog_ids = (uint64_t)(uintptr_t)v;
      a.query.prog_cnt = cap;
      if (sys_bpf (BPF_PROG_QUERY, &a) == 0)
        {
          *ids = v;
          *n = a.query.prog_cnt;
          return 0;
        }
      int e = errno;
      free (v);
      if (e != ENOSPC)
        {
          errno = e;
          return csr_error_errno (err, "device cgroup: query the attached programs");
        }
    }
  return csr_error_set (err, E2BIG, "device cgroup: too many attached programs");
}

static int
prog_fd (uint32_t id)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.prog_id = id;
  return sys_bpf (BPF_PROG_GET_FD_BY_ID, &a);
}

static int
attach (int cg, int prog, int replace)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.target_fd = (uint32_t)cg;
  a.attach_bpf_fd = (uint32_t)prog;
  a.attach_type = BPF_CGROUP_DEVICE;
  a.attach_flags = BPF_F_ALLOW_MULTI | (replace >= 0 ? BPF_F_REPLACE : 0U);
  a.replace_bpf_fd = replace >= 0 ? (uint32_t)replace : 0;
  return sys_bpf (BPF_PROG_ATTACH, &a);
}

int
oci_devices_bpf_attach (const char *dir, const struct bpf_insn *p, size_t n, csr_error **err)
{
  cleanup_close int prog = load (p, n, err);
  if (prog < 0)
    return -1;
  cleanup_close int cg = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0)
    return csr_error_errno (err, "device cgroup: open '%s'", dir);
  cleanup_free uint32_t *old = NULL;
  uint32_t n_old = 0;
  if (query (cg, &old, &n_old, err) < 0)
    return -1;
  if (n_old == 1)
    {
      cleanup_close int rfd = prog_fd (old[0]);
      if (rfd >= 0 && attach (cg, prog, rfd) == 0)
        {
          csr_debug ("device cgroup: %s: program %u replaced (%zu instructions)", dir, old[0], n);
          return 0;
        }
      /* Gone meanwhile, or no BPF_F_REPLACE (before Linux 5.6): attach, then detach. */
    }
  if (attach (cg, prog, -1) < 0)
    return csr_error_errno (err, "device cgroup: attach the BPF device program to '%s'", dir);
  for (uint32_t i = 0; i < n_old; i++)
    {
      cleanup_close int ofd = prog_fd (old[i]);
      if (ofd < 0)
        {
          if (errno == ENOENT)
            continue;
          return csr_error_errno (err, "device cgroup: the earlier program %u", old[i]);
        }
      union bpf_attr a;
      memset (&a, 0, sizeof a);
      a.target_fd = (uint32_t)cg;
      a.attach_bpf_fd = (uint32_t)ofd;
      a.attach_type = BPF_CGROUP_DEVICE;
      if (sys_bpf (BPF_PROG_DETACH, &a) < 0 && errno != ENOENT)
        return csr_error_errno (err, "device cgroup: detach the earlier program %u", old[i]);
    }
  csr_debug ("device cgroup: %s: program attached (%zu instructions, %u replaced)", dir, n, n_old);
  return 0;
}

int
oci_devices_apply_v2 (const char *dir, const struct oci_dev_rule *user, size_t n, csr_error **err)
{
  cleanup_free struct oci_dev_rule *rules = NULL;
  size_t nr = 0;
  if (oci_devices_effective (user, n, &rules, &nr, err) < 0)
    return -1;
  cleanup_free struct bpf_insn *p = NULL;
  size_t np = 0;
  if (oci_devices_bpf_build (rules, nr, &p, &np, err) < 0)
    return -1;
  return oci_devices_bpf_attach (dir, p, np, err);
}
