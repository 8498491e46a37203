/* csrun events [--stats] [--interval D] ID: the container's cgroup
 * statistics as runc prints them, one JSON object a line:
 * {"type":"stats","id":ID,"data":{...}} every interval (default 5 s), and
 * {"type":"oom","id":ID} when the kernel OOM-kills a process in it; until
 * the container stops or is deleted.  --stats: one stats line and exit. */
#include "config.h"
#include "oci.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oci-cmds.h"
#include "util/clock.h"
#include "util/cleanup.h"
#include "util/parse.h"

static const char events_usage[]
    = "Usage: csrun events [--stats] [--interval DURATION] ID\n"
      "Print the container's cgroup statistics as JSON lines ({\"type\":\"stats\",\"id\":ID,\n"
      "\"data\":{...}}) every DURATION (default 5s; 100ms, 1s, 2m...), and {\"type\":\"oom\",...}\n"
      "when a process in it is OOM-killed, until the container stops.\n"
      "  --stats   print the statistics once and exit\n"
      "See csrun-oci(8).";

static void
sleep_s (double s)
{
  if (s <= 0)
    return;
  struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* One line on stdout; false when it can't be written (a closed pipe). */
static bool
emit (const char *type, const char *id, const char *data)
{
  /* The id passed oci_id_check: no character JSON needs escaped. */
  if (data)
    printf ("{\"type\":\"%s\",\"id\":\"%s\",\"data\":%s}\n", type, id, data);
  else
    printf ("{\"type\":\"%s\",\"id\":\"%s\"}\n", type, id);
  return fflush (stdout) == 0 && !ferror (stdout);
}

static int
stats_line (const struct csr_global *g, const struct csr_cgroup *cg, const char *id)
{
  csr_error *e = NULL;
  cleanup_free char *data = NULL;
  if (csr_cgroup_stats_json (cg, &data, &e) < 0)
    return oci_fail (g, e);
  if (!emit ("stats", id, data))
    return oci_failf (g, "events: cannot write to stdout: %s", strerror (errno));
  return 0;
}

int
cmd_oci_events (struct csr_global *g, int argc, char **argv)
{
  const char *id = NULL;
  bool once = false;
  double interval = 5;
  for (int i = 1; i < argc; i++)
    {
      const char *w = argv[i];
      if (strcmp (w, "--help") == 0 || strcmp (w, "-h") == 0)
        {
          puts (events_usage);
          return 0;
        }
      if (strcmp (w, "--stats") == 0)
        once = true;
      else if (strcmp (w, "--interval") == 0 || strncmp (w, "--interval=", 11) == 0)
        {
          const char *v = w[10] == '=' ? w + 11 : (i + 1 < argc ? argv[++i] : NULL);
          csr_error *e = NULL;
          if (v == NULL)
            return oci_failf (g, "events: --interval needs a value");
          if (csr_parse_duration (v, 86400, &interval, &e) < 0)
            return oci_fail (g, e);
        }
      else if (w[0] == '-')
        return oci_failf (g, "events: unknown option '%s'", w);
      else if (id == NULL)
        id = w;
      else
        return oci_failf (g, "events: unexpected argument '%s'", w);
    }
  if (id == NULL)
    return oci_failf (g, "events: missing container ID");
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  csr_error *e = NULL;
  struct oci_state st;
  if (oci_id_check (id, &e) < 0 || oci_state_load (root, id, &st, &e) < 0)
    return oci_fail (g, e);
  cleanup_cgroup struct csr_cgroup *cg = state_cgroup (&st);
  int rc = 0;
  enum oci_status s = oci_state_status (&st);
  if (s == OCI_STOPPED)
    rc = oci_failf (g, "events: container '%s' is not running", id);
  else if (cg == NULL)
    rc = oci_failf (g, "events: container '%s' has no cgroup", id);
  else if (once)
    rc = stats_line (g, cg, id);
  else
    {
      uint64_t ooms = csr_cgroup_oom_kills (cg);
      double next = csr_mono_s () + interval;
      for (;;)
        {
          double wait = next - csr_mono_s ();
          sleep_s (wait < 0.1 ? wait : 0.1);
          /* Deleted or stopped: done (runc's events ends there too). */
          struct oci_state cur;
          if (oci_state_load (root, id, &cur, NULL) < 0)
            break;
          bool stopped = oci_state_status (&cur) == OCI_STOPPED;
          oci_state_release (&cur);
          if (stopped)
            break;
          uint64_t n = csr_cgroup_oom_kills (cg);
          if (n > ooms)
            {
              ooms = n;
              if (!emit ("oom", id, NULL))
                {
                  rc = 1;
                  break;
                }
            }
          if (csr_mono_s () >= next)
            {
              if ((rc = stats_line (g, cg, id)) != 0)
                break;
              next += interval;
            }
        }
    }
  oci_state_release (&st);
  return rc;
}
