/* Unit tests for the launcher (src/lib/jail/launch.c): the sync protocol
 * end to end with a child in no new namespace (any user can run them): the
 * one set-up timeout, the error relay, a child that dies without a word,
 * the parent-side steps, and that nothing is left unreaped on failure. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail/launch.h"
#include "jail/spec.h"

static struct jail_spec g_spec;

static struct csr_launch
launch_of (csr_launch_entry_fn entry)
{
  jail_spec_init (&g_spec);
  return (struct csr_launch){ .spec = &g_spec, .entry = entry, .what = "jail" };
}

/* After a failed launch nothing is left: the child was killed and reaped. */
static void
assert_no_child (void)
{
  errno = 0;
  cr_assert_eq (waitpid (-1, NULL, WNOHANG), -1, "a child is left");
  cr_assert_eq (errno, ECHILD);
}

__attribute__ ((noreturn)) static void
never_ready (const struct jail_spec *s, void *face, const struct csr_launch_child *lc)
{
  (void)s, (void)face, (void)lc;
  for (;;)
    pause ();
}

Test (launch, a_child_that_never_says_ready_hits_the_one_timeout)
{
  struct csr_launch l = launch_of (never_ready);
  l.timeout_ms = 300;
  struct csr_launched out;
  csr_error *e = NULL;
  cr_assert_lt (csr_launch (&l, &out, &e), 0);
  cr_assert_eq (e->status, ETIMEDOUT);
  cr_assert_str_eq (e->msg, "jail set-up did not finish in 0.3 s");
  csr_error_freep (&e);
  assert_no_child ();
}

Test (launch, the_default_timeout_is_the_one_constant)
{
  cr_assert_eq (CSR_LAUNCH_TIMEOUT_MS, 60000);
}

__attribute__ ((noreturn)) static void
fails_a_step (const struct jail_spec *s, void *face, const struct csr_launch_child *lc)
{
  (void)s, (void)face;
  csr_error *e = NULL;
  csr_error_set (&e, EACCES, "mount /work");
  csr_launch_fail (lc->syncfd, e);
}

Test (launch, a_failed_step_and_its_errno_come_back)
{
  struct csr_launch l = launch_of (fails_a_step);
  struct csr_launched out;
  csr_error *e = NULL;
  cr_assert_lt (csr_launch (&l, &out, &e), 0);
  cr_assert_eq (e->status, EACCES);
  cr_assert_str_eq (e->msg, "mount /work");
  csr_error_freep (&e);
  l.prefix_error = true;
  cr_assert_lt (csr_launch (&l, &out, &e), 0);
  cr_assert_str_eq (e->msg, "jail set-up: mount /work");
  csr_error_freep (&e);
  assert_no_child ();
}

__attribute__ ((noreturn)) static void
dies_silently (const struct jail_spec *s, void *face, const struct csr_launch_child *lc)
{
  (void)s, (void)face, (void)lc;
  _exit (3);
}

Test (launch, a_child_that_dies_silently_is_reported)
{
  struct csr_launch l = launch_of (dies_silently);
  l.what = "container";
  struct csr_launched out;
  csr_error *e = NULL;
  cr_assert_lt (csr_launch (&l, &out, &e), 0);
  cr_assert_str_eq (e->msg, "the container died during set-up without saying why");
  csr_error_freep (&e);
  assert_no_child ();
}

/* The parent-side steps: before_go, the go byte, after_go's message (which
 * the entry reads first), a face message answered by on_message. */
struct steps
{
  int before, after, messages;
  int sleep_ms;
};

static int
before_go (void *face, pid_t pid, csr_error **err)
{
  (void)pid, (void)err;
  ((struct steps *)face)->before++;
  return 0;
}

static int
after_go (void *face, pid_t pid, int syncfd, csr_error **err)
{
  (void)pid;
  ((struct steps *)face)->after++;
  if (send (syncfd, "state", 5, MSG_NOSIGNAL) != 5)
    return csr_error_errno (err, "send");
  return 0;
}

static int
on_message (void *face, pid_t pid, int syncfd, const struct csr_sync_msg *m, int fd,
            csr_error **err)
{
  (void)pid;
  struct steps *st = face;
  cr_assert_eq (m->type, CSR_SYNC_HOOKS);
  cr_assert_eq (fd, -1);
  st->messages++;
  struct timespec ts = { st->sleep_ms / 1000, (st->sleep_ms % 1000) * 1000000L };
  nanosleep (&ts, NULL);
  if (write (syncfd, "H", 1) != 1)
    return csr_error_errno (err, "write");
  return 0;
}

__attribute__ ((noreturn)) static void
talks (const struct jail_spec *s, void *face, const struct csr_launch_child *lc)
{
  (void)s, (void)face;
  char buf[16] = { 0 };
  csr_error *e = NULL;
  if (recv (lc->syncfd, buf, sizeof buf - 1, 0) != 5 || strcmp (buf, "state") != 0)
    {
      csr_error_set (&e, 0, "no state after the go: '%s'", buf);
      csr_launch_fail (lc->syncfd, e);
    }
  csr_sync_send (lc->syncfd, CSR_SYNC_HOOKS, 0, NULL);
  csr_launch_wait_byte (lc->syncfd, 'H');
  csr_sync_send (lc->syncfd, CSR_SYNC_READY, 0, NULL);
  for (;;)
    pause ();
}

Test (launch, the_parent_side_steps_run_in_order)
{
  struct steps st = { 0 };
  struct csr_launch l = launch_of (talks);
  l.face = &st;
  l.before_go = before_go;
  l.after_go = after_go;
  l.on_message = on_message;
  struct csr_launched out;
  csr_error *e = NULL;
  cr_assert_eq (csr_launch (&l, &out, &e), 0, "%s", e ? e->msg : "");
  cr_assert_eq (st.before, 1);
  cr_assert_eq (st.after, 1);
  cr_assert_eq (st.messages, 1);
  cr_assert_gt (out.pid, 0);
  kill (out.pid, SIGKILL);
  cr_assert_eq (waitpid (out.pid, NULL, 0), out.pid);
  close (out.syncfd);
  if (out.pidfd >= 0)
    close (out.pidfd);
}

/* The time the parent spends in the face's own steps (hooks) is not the
 * child's set-up time. */
Test (launch, the_faces_own_steps_do_not_count_against_the_timeout)
{
  struct steps st = { .sleep_ms = 1500 };
  struct csr_launch l = launch_of (talks);
  l.face = &st;
  l.after_go = after_go;
  l.on_message = on_message;
  l.timeout_ms = 1000;
  struct csr_launched out;
  csr_error *e = NULL;
  cr_assert_eq (csr_launch (&l, &out, &e), 0, "%s", e ? e->msg : "");
  kill (out.pid, SIGKILL);
  cr_assert_eq (waitpid (out.pid, NULL, 0), out.pid);
  close (out.syncfd);
  if (out.pidfd >= 0)
    close (out.pidfd);
}

Test (launch, an_unexpected_message_fails_the_launch)
{
  struct steps st = { 0 };
  struct csr_launch l = launch_of (talks);
  l.face = &st;
  l.after_go = after_go; /* but no on_message for CSR_SYNC_HOOKS */
  struct csr_launched out;
  csr_error *e = NULL;
  cr_assert_lt (csr_launch (&l, &out, &e), 0);
  cr_assert_str_eq (e->msg, "unexpected message 4 from the jail");
  csr_error_freep (&e);
  assert_no_child ();
}
