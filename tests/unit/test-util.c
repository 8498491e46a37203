/* The small util/ helpers that several parts of csrun share. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "util/buf.h"
#include "util/datadir.h"
#include "util/json.h"
#include "util/stopsig.h"
#include "util/syscalls.h"

/* ------------------------------------------------------------------ json getters */

static yajl_val
parse (const char *s)
{
  char ebuf[128];
  yajl_val t = yajl_tree_parse (s, ebuf, sizeof ebuf);
  cr_assert_not_null (t, "%s: %s", s, ebuf);
  return t;
}

Test (json, int_member_or_default)
{
  cleanup_yajl_val yajl_val t
      = parse ("{\"a\":5,\"neg\":-3,\"f\":1.5,\"s\":\"7\",\"n\":null,\"big\":9000000000}");
  cr_assert_eq (csr_json_int (t, "a", 0), 5);
  cr_assert_eq (csr_json_int (t, "neg", 0), -3);
  cr_assert_eq (csr_json_int (t, "big", 0), 9000000000LL);
  /* Not an integer, missing, or not an object: the default. */
  cr_assert_eq (csr_json_int (t, "f", -1), -1);
  cr_assert_eq (csr_json_int (t, "s", -1), -1);
  cr_assert_eq (csr_json_int (t, "n", 42), 42);
  cr_assert_eq (csr_json_int (t, "missing", 7), 7);
  cr_assert_eq (csr_json_int (NULL, "a", 9), 9);
  cr_assert_eq (csr_json_int (csr_json_get (t, "a"), "a", 9), 9);
}

Test (json, u64_member_is_a_count)
{
  cleanup_yajl_val yajl_val t = parse ("{\"a\":5,\"zero\":0,\"neg\":-3,\"s\":\"7\"}");
  cr_assert_eq (csr_json_u64 (t, "a"), 5);
  cr_assert_eq (csr_json_u64 (t, "zero"), 0);
  cr_assert_eq (csr_json_u64 (t, "neg"), 0);
  cr_assert_eq (csr_json_u64 (t, "s"), 0);
  cr_assert_eq (csr_json_u64 (t, "missing"), 0);
  cr_assert_eq (csr_json_u64 (NULL, "a"), 0);
}

/* ------------------------------------------------------------------ stop signals */

static int handled;

static void
counting (int sig)
{
  handled++;
  csr_stopsig_note (sig);
}

Test (stopsig, signals_become_bytes_on_the_pipe)
{
  cr_assert_eq (csr_stopsig_fd (), -1);
  cr_assert_eq (csr_stopsig_take (), 0);
  int fd = csr_stopsig_open (NULL);
  cr_assert_geq (fd, 0);
  cr_assert_eq (csr_stopsig_fd (), fd);
  cr_assert_eq (csr_stopsig_take (), 0, "nothing noted yet (and no block: O_NONBLOCK)");
  csr_stopsig_catch (NULL);
  raise (SIGTERM);
  raise (SIGHUP);
  cr_assert_eq (csr_stopsig_take (), SIGTERM);
  cr_assert_eq (csr_stopsig_take (), SIGHUP);
  cr_assert_eq (csr_stopsig_take (), 0);
  /* A handler of one's own that notes too. */
  csr_stopsig_catch (counting);
  raise (SIGINT);
  cr_assert_eq (handled, 1);
  cr_assert_eq (csr_stopsig_take (), SIGINT);
  csr_stopsig_close ();
  cr_assert_eq (csr_stopsig_fd (), -1);
  /* Closed: a signal is still caught, and noted nowhere. */
  raise (SIGINT);
  cr_assert_eq (handled, 2);
  cr_assert_eq (csr_stopsig_take (), 0);
}

Test (stopsig, the_set)
{
  sigset_t s;
  csr_stopsig_set (&s);
  cr_assert (sigismember (&s, SIGINT) && sigismember (&s, SIGTERM) && sigismember (&s, SIGHUP));
  cr_assert (!sigismember (&s, SIGKILL) && !sigismember (&s, SIGPIPE));
}

/* ------------------------------------------------------------------ buffers */

Test (buf, reserve_doubles_from_first)
{
  char *b = NULL;
  size_t cap = 0;
  cr_assert_eq (csr_buf_reserve (&b, &cap, 10, 16), 0);
  cr_assert_not_null (b);
  cr_assert_eq (cap, 16);
  char *was = b;
  cr_assert_eq (csr_buf_reserve (&b, &cap, 16, 16), 0, "enough already");
  cr_assert_eq (b, was);
  cr_assert_eq (cap, 16);
  memset (b, 'x', 16);
  cr_assert_eq (csr_buf_reserve (&b, &cap, 17, 16), 0);
  cr_assert_eq (cap, 32);
  cr_assert_eq (csr_buf_reserve (&b, &cap, 1000, 16), 0);
  cr_assert_eq (cap, 1024);
  cr_assert_eq (b[15], 'x', "the contents stay");
  /* A size that can't be had: -1, the buffer as it was. */
  was = b;
  cr_assert_eq (csr_buf_reserve (&b, &cap, SIZE_MAX, 16), -1);
  cr_assert_eq (errno, ENOMEM);
  cr_assert_eq (b, was);
  cr_assert_eq (cap, 1024);
  free (b);
}

/* ------------------------------------------------------------------ children */

Test (child, exited_stays_a_zombie)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      char c;
      close (p[1]);
      _exit (read (p[0], &c, 1) == 0 ? 7 : 1); /* until the parent closes its end */
    }
  close (p[0]);
  cr_assert (!csr_child_exited (pid), "it waits for us");
  close (p[1]);
  while (!csr_child_exited (pid))
    usleep (1000);
  /* Not reaped: its status is still there. */
  int st = 0;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 7);
  /* Reaped (or never ours): exited. */
  cr_assert (csr_child_exited (pid));
}

/* ------------------------------------------------------------------ state directories */

static const struct csr_dir_place places[] = {
  { "T_OVERRIDE", NULL },          { "T_XDG", "/csrun/x" }, { NULL, "/run/csrun/x" },
  { "T_HOME", "/.cache/csrun/x" }, { NULL, NULL },
};

static void
pick_is (const char *want)
{
  char *dir = (char *)"unchanged";
  int r = csr_pick_dir (places, &dir);
  if (want == NULL)
    {
      cr_assert_eq (r, 1);
      cr_assert_null (dir);
      return;
    }
  cr_assert_eq (r, 0);
  cr_assert_str_eq (dir, want);
  free (dir);
}

Test (datadir, pick_dir_in_order)
{
  bool root = geteuid () == 0;
  unsetenv ("T_OVERRIDE");
  unsetenv ("T_XDG");
  unsetenv ("T_HOME");
  pick_is (root ? "/run/csrun/x" : NULL);
  setenv ("T_HOME", "relative", 1); /* not absolute: passed over */
  pick_is (root ? "/run/csrun/x" : NULL);
  setenv ("T_HOME", "/home/u", 1);
  pick_is (root ? "/run/csrun/x" : "/home/u/.cache/csrun/x");
  setenv ("T_XDG", "/xdg", 1);
  pick_is ("/xdg/csrun/x");
  setenv ("T_OVERRIDE", "", 1); /* empty: passed over */
  pick_is ("/xdg/csrun/x");
  setenv ("T_OVERRIDE", "rel/dir", 1); /* the override is taken as it is */
  pick_is ("rel/dir");
}
