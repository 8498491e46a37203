/* oci/validate.c: linux.sysctl keys against the container's namespaces, a
 * config without a mount namespace, linux.devices and /dev. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oci/oci-config.h"
#include "oci/validate.h"

#define ALL (CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS | CLONE_NEWPID)

static void
accepts (const char *key, unsigned long own, const char *want_rel)
{
  char rel[300];
  csr_error *e = NULL;
  int r = oci_sysctl_check (key, own, rel, sizeof rel, &e);
  cr_assert_eq (r, 0, "%s refused: %s", key, e ? csr_error_text (e) : "?");
  cr_assert_str_eq (rel, want_rel);
}

static void
refuses (const char *key, unsigned long own, const char *want)
{
  char rel[300];
  csr_error *e = NULL;
  int r = oci_sysctl_check (key, own, rel, sizeof rel, &e);
  cr_assert_lt (r, 0, "%s accepted with namespaces %#lx", key, own);
  cr_assert_not_null (e);
  cr_assert_not_null (strstr (e->msg, want), "'%s' not in: %s", want, e->msg);
  char quoted[300];
  snprintf (quoted, sizeof quoted, "'%s'", key);
  cr_assert_not_null (strstr (e->msg, quoted), "the key is not named: %s", e->msg);
  csr_error_free (e);
}

Test (sysctl, each_class_in_its_own_namespace)
{
  accepts ("net.ipv4.ip_default_ttl", CLONE_NEWNET, "net/ipv4/ip_default_ttl");
  accepts ("net.ipv4.ping_group_range", CLONE_NEWNET | CLONE_NEWUSER, "net/ipv4/ping_group_range");
  accepts ("net.core.somaxconn", CLONE_NEWNET, "net/core/somaxconn");
  accepts ("kernel.shmmax", CLONE_NEWIPC, "kernel/shmmax");
  accepts ("kernel.shm_rmid_forced", CLONE_NEWIPC, "kernel/shm_rmid_forced");
  accepts ("kernel.msgmnb", CLONE_NEWIPC, "kernel/msgmnb");
  accepts ("kernel.sem", CLONE_NEWIPC, "kernel/sem");
  accepts ("fs.mqueue.msg_max", CLONE_NEWIPC, "fs/mqueue/msg_max");
  accepts ("kernel.domainname", CLONE_NEWUTS, "kernel/domainname");
  accepts ("kernel.hostname", CLONE_NEWUTS, "kernel/hostname");
}

Test (sysctl, slash_spelling)
{
  accepts ("net/ipv4/ip_default_ttl", CLONE_NEWNET, "net/ipv4/ip_default_ttl");
  /* A '.' inside a component (a VLAN interface) only in this spelling. */
  accepts ("net/ipv4/conf/eth0.100/rp_filter", CLONE_NEWNET, "net/ipv4/conf/eth0.100/rp_filter");
  accepts ("kernel/sem", CLONE_NEWIPC, "kernel/sem");
  refuses ("kernel/core_pattern", ALL, "not namespaced");
}

Test (sysctl, without_its_namespace)
{
  refuses ("net.ipv4.ip_default_ttl", ALL & ~CLONE_NEWNET, "network namespace");
  refuses ("net/ipv4/ip_default_ttl", 0, "network namespace");
  refuses ("kernel.shm_rmid_forced", ALL & ~CLONE_NEWIPC, "IPC namespace");
  refuses ("kernel.msgmax", CLONE_NEWNET | CLONE_NEWUTS, "IPC namespace");
  refuses ("fs.mqueue.queues_max", CLONE_NEWNET, "IPC namespace");
  refuses ("kernel.domainname", ALL & ~CLONE_NEWUTS, "UTS namespace");
}

Test (sysctl, not_namespaced)
{
  refuses ("kernel.core_pattern", ALL, "not namespaced");
  refuses ("vm.overcommit_memory", ALL, "not namespaced");
  refuses ("kernel.modprobe", ALL, "not namespaced");
  refuses ("fs.file-max", ALL, "not namespaced");
  refuses ("user.max_user_namespaces", ALL | CLONE_NEWUSER, "not namespaced");
  refuses ("kernel.shm_next_id", ALL, "not namespaced"); /* not in runc's and crun's list */
  refuses ("kernel.semx", ALL, "not namespaced");
  refuses ("kernel.sem.x", ALL, "not namespaced");
  refuses ("fs.mqueue", ALL, "not namespaced");
  refuses ("net", ALL, "not namespaced");
  refuses ("network.x", ALL, "not namespaced");
  refuses ("kernel.hostname", ALL & ~CLONE_NEWUTS, "UTS namespace");
  refuses ("kernel/hostname", ALL & ~CLONE_NEWUTS, "UTS namespace");
}

Test (sysctl, path_tricks)
{
  refuses ("net/../kernel/core_pattern", ALL, "invalid key");
  refuses ("net.ipv4..conf", ALL, "invalid key");
  refuses ("net./proc", ALL, "invalid key");
  refuses ("net.ipv4.conf.all/../../kernel", ALL, "invalid key");
  refuses ("net/./ipv4/ip_default_ttl", ALL, "invalid key");
  refuses ("/net/ipv4/ip_default_ttl", ALL, "invalid key");
  refuses (".net.ipv4", ALL, "invalid key");
  refuses ("net.ipv4.", ALL, "invalid key");
  refuses ("net//ipv4", ALL, "invalid key");
  refuses ("net.ipv4.ip default", ALL, "invalid key");
  refuses ("net.ipv4.x\n", ALL, "invalid key");
  refuses ("net.ipv4.*", ALL, "invalid key");
  refuses ("", ALL, "invalid key");
  char big[400];
  memset (big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  memcpy (big, "net.", 4);
  char rel[500];
  csr_error *e = NULL;
  cr_assert_lt (oci_sysctl_check (big, ALL, rel, sizeof rel, &e), 0);
  csr_error_free (e);
  /* REL too small for the key: an error, never a cut path. */
  char small[8];
  e = NULL;
  cr_assert_lt (oci_sysctl_check ("net.ipv4.ip_default_ttl", ALL, small, sizeof small, &e), 0);
  csr_error_free (e);
}

/* ------------------------------------------------------------- configs */

static char *
dq (const char *s)
{
  char *t = strdup (s);
  cr_assert_not_null (t);
  for (char *p = t; *p; p++)
    if (*p == '\'')
      *p = '"';
  return t;
}

#define HEAD "{'ociVersion':'1.0.2','root':{'path':'rootfs'}"
#define NS_ALL "{'type':'pid'},{'type':'network'},{'type':'ipc'},{'type':'uts'},{'type':'mount'}"

/* 0 when the config (' for ") validates, else -1 with the message in WHY. */
static int
validate (const char *sq, char *why, size_t size)
{
  char *json = dq (sq);
  struct oci_config c;
  csr_error *e = NULL;
  int r = oci_config_parse (json, strlen (json), &c, &e);
  cr_assert_eq (r, 0, "parse: %s\nin: %s", e ? csr_error_text (e) : "?", json);
  r = oci_config_validate (&c, &e);
  why[0] = '\0';
  if (r < 0)
    snprintf (why, size, "%s", e->msg);
  csr_error_free (e);
  oci_config_release (&c);
  free (json);
  return r;
}

static void
valid (const char *sq)
{
  char why[512];
  cr_assert_eq (validate (sq, why, sizeof why), 0, "refused: %s\nconfig: %s", why, sq);
}

static void
invalid (const char *sq, const char *want)
{
  char why[512];
  cr_assert_lt (validate (sq, why, sizeof why), 0, "accepted: %s", sq);
  cr_assert_not_null (strstr (why, want), "'%s' not in: %s", want, why);
}

Test (validate, sysctls_and_namespaces)
{
  valid (HEAD ",'linux':{'namespaces':[" NS_ALL "],'sysctl':{'net.ipv4.ip_default_ttl':'42',"
              "'kernel.shmmax':'1','fs.mqueue.msg_max':'11','kernel.domainname':'d'}}}");
  invalid (HEAD ",'linux':{'namespaces':[{'type':'mount'}],'sysctl':{'net.ipv4.ip_default_ttl':"
                "'42'}}}",
           "network namespace");
  /* The caller's own network namespace, joined by path, is not the container's. */
  invalid (HEAD ",'linux':{'namespaces':[{'type':'mount'},{'type':'network','path':'/proc/self/ns/"
                "net'}],'sysctl':{'net.ipv4.ip_default_ttl':'42'}}}",
           "network namespace");
  invalid (HEAD ",'linux':{'namespaces':[{'type':'mount'},{'type':'ipc','path':'/proc/self/ns/ipc'}"
                "],'sysctl':{'kernel.shmmax':'1'}}}",
           "IPC namespace");
  invalid (HEAD ",'linux':{'namespaces':[" NS_ALL "],'sysctl':{'kernel.core_pattern':'|/x'}}}",
           "kernel.core_pattern");
  /* crun: kernel.domainname must agree with the domainname field. */
  invalid (HEAD ",'domainname':'a','linux':{'namespaces':[" NS_ALL
                "],'sysctl':{'kernel.domainname':'b'}}}",
           "domainname");
  valid (HEAD ",'domainname':'a','linux':{'namespaces':[" NS_ALL
              "],'sysctl':{'kernel.domainname':'a'}}}");
  /* runc: no hostname without a UTS namespace (csrun: of its own). */
  invalid (HEAD ",'hostname':'h','linux':{'namespaces':[{'type':'mount'}]}}", "UTS namespace");
  invalid (HEAD ",'hostname':'h','linux':{'namespaces':[{'type':'mount'},{'type':'uts','path':"
                "'/proc/self/ns/uts'}]}}",
           "UTS namespace");
  valid (HEAD ",'hostname':'h','linux':{'namespaces':[" NS_ALL "]}}");
}

Test (validate, own_namespaces)
{
  char *json = dq (HEAD ",'linux':{'namespaces':[{'type':'network'},{'type':'ipc','path':"
                        "'/proc/self/ns/ipc'},{'type':'uts','path':'/proc/1/ns/uts'},"
                        "{'type':'mount','path':'/no/such/ns'}]}}");
  struct oci_config c;
  csr_error *e = NULL;
  cr_assert_eq (oci_config_parse (json, strlen (json), &c, &e), 0);
  unsigned long own = oci_config_own_namespaces (&c);
  cr_assert_eq (own & CLONE_NEWNET, CLONE_NEWNET);
  cr_assert_eq (own & CLONE_NEWIPC, 0);
  cr_assert_eq (own & CLONE_NEWNS, 0);
  oci_config_release (&c);
  free (json);
}

Test (validate, no_mount_namespace)
{
  valid (HEAD ",'linux':{'namespaces':[{'type':'pid'}]}}");
  invalid (HEAD ",'mounts':[{'destination':'/proc','type':'proc','source':'proc'}],"
                "'linux':{'namespaces':[{'type':'pid'}]}}",
           "mounts: needs a mount namespace");
  invalid (HEAD ",'linux':{'namespaces':[{'type':'pid'}],'maskedPaths':['/proc/kcore']}}",
           "linux.maskedPaths: needs a mount namespace");
  invalid (HEAD ",'linux':{'namespaces':[{'type':'pid'}],'readonlyPaths':['/proc/sys']}}",
           "linux.readonlyPaths");
  invalid ("{'ociVersion':'1.0.2','root':{'path':'rootfs','readonly':true},'linux':{}}",
           "root.readonly");
  invalid (HEAD ",'linux':{'rootfsPropagation':'private'}}", "linux.rootfsPropagation");
}

#define DEV_TMPFS "{'destination':'/dev','type':'tmpfs','source':'tmpfs'}"
#define DEV_BIND "{'destination':'/dev/','type':'bind','source':'/dev','options':['rbind']}"
#define NULL_DEV(p) "'devices':[{'type':'c','path':'" p "','major':1,'minor':3}]"

Test (validate, devices_and_dev)
{
  valid (HEAD ",'mounts':[" DEV_TMPFS
              "],'linux':{'namespaces':[{'type':'mount'}]," NULL_DEV ("/dev/xnull") "}}");
  valid (HEAD ",'mounts':[" DEV_TMPFS
              "],'linux':{'namespaces':[{'type':'mount'}]," NULL_DEV ("/dev/net/tun") "}}");
  /* A /dev bound from the host: csrun's /dev set-up is skipped (runc). */
  valid (HEAD ",'mounts':[" DEV_TMPFS "," DEV_BIND
              "],'linux':{'namespaces':[{'type':'mount'}]," NULL_DEV ("/dev/xnull") "}}");
  invalid (HEAD ",'linux':{'namespaces':[{'type':'mount'}]," NULL_DEV ("/dev/xnull") "}}",
           "tmpfs mounted at /dev");
  /* Outside /dev too, as runc and crun (bound from the /dev tmpfs). */
  valid (HEAD ",'mounts':[" DEV_TMPFS
              "],'linux':{'namespaces':[{'type':'mount'}]," NULL_DEV ("/etc/xnull") "}}");
  invalid (HEAD ",'mounts':[" DEV_TMPFS
                "],'linux':{'namespaces':[{'type':'mount'}]," NULL_DEV ("/dev/../etc/x") "}}",
           "not a plain absolute path");
  invalid (HEAD ",'mounts':[" DEV_TMPFS
                "],'linux':{'namespaces':[{'type':'mount'}]," NULL_DEV ("/") "}}",
           "not a plain absolute path");
  invalid (HEAD ",'mounts':[{'destination':'/','type':'tmpfs','source':'tmpfs'}],'linux':{"
                "'namespaces':[{'type':'mount'}]}}",
           "container's root");
  invalid (HEAD ",'mounts':[{'destination':'/dev/..','type':'tmpfs','source':'tmpfs'}],'linux':{"
                "'namespaces':[{'type':'mount'}]}}",
           "container's root");
}

Test (validate, dev_kind)
{
  cr_assert (oci_path_is_dev ("/dev"));
  cr_assert (oci_path_is_dev ("/dev/"));
  cr_assert (oci_path_is_dev ("//dev/."));
  cr_assert (oci_path_is_dev ("/x/../dev"));
  cr_assert (!oci_path_is_dev ("/dev/pts"));
  cr_assert (!oci_path_is_dev ("/devx"));
  cr_assert (oci_path_is_root ("/"));
  cr_assert (oci_path_is_root ("//."));
  cr_assert (oci_path_is_root ("/.."));
  cr_assert (!oci_path_is_root ("/a"));
  struct oci_mount tmpfs = { .destination = (char *)"/dev", .type = (char *)"tmpfs" };
  char *rbind_opts[] = { (char *)"rbind", NULL };
  struct oci_mount bind = {
    .destination = (char *)"/dev/", .type = (char *)"none", .options = rbind_opts, .n_options = 1
  };
  struct oci_mount ms[2] = { tmpfs, bind };
  struct oci_config c = { .mounts = ms, .n_mounts = 1 };
  cr_assert_eq (oci_config_dev_kind (&c), OCI_DEV_TMPFS);
  c.n_mounts = 2;
  cr_assert_eq (oci_config_dev_kind (&c), OCI_DEV_BIND);
  c.mounts = &ms[1];
  c.n_mounts = 0;
  cr_assert_eq (oci_config_dev_kind (&c), OCI_DEV_NONE);
}

/* process.apparmorProfile: refused where the kernel has no AppArmor (as runc
 * and crun), accepted where it is on; the switch file is a parameter here. */
static void
apparmor_file (const char *path, const char *content)
{
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  cr_assert_eq (fputs (content, f) >= 0, 1);
  cr_assert_eq (fclose (f), 0);
}

Test (validate, apparmor_profile)
{
  char dir[] = "/tmp/csrun-test-apparmor.XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char on[300], off[300], none[300];
  snprintf (on, sizeof on, "%s/on", dir);
  snprintf (off, sizeof off, "%s/off", dir);
  snprintf (none, sizeof none, "%s/absent", dir);
  apparmor_file (on, "Y\n");
  apparmor_file (off, "N\n");
  csr_error *e = NULL;
  /* No profile: nothing to apply, whatever the host. */
  cr_assert_eq (oci_apparmor_check (NULL, none, &e), 0);
  cr_assert_eq (oci_apparmor_check ("", off, &e), 0);
  cr_assert_null (e);
  cr_assert_eq (oci_apparmor_check ("containers-default-0.50.1", on, &e), 0);
  cr_assert_null (e);
  const char *hosts[] = { off, none };
  for (size_t i = 0; i < 2; i++)
    {
      cr_assert_lt (oci_apparmor_check ("containers-default-0.50.1", hosts[i], &e), 0);
      cr_assert_not_null (e);
      cr_assert_not_null (strstr (e->msg, "\"containers-default-0.50.1\""), "%s", e->msg);
      cr_assert_not_null (strstr (e->msg, "AppArmor is not enabled"), "%s", e->msg);
      cr_assert_null (strchr (e->msg, '\n'));
      csr_error_free (e);
      e = NULL;
    }
  /* The switch unreadable for another reason: an error that says so. */
  cr_assert_lt (oci_apparmor_check ("p", dir, &e), 0);
  cr_assert_not_null (e);
  cr_assert_not_null (strstr (e->msg, "cannot tell whether AppArmor is enabled"), "%s", e->msg);
  csr_error_free (e);
  unlink (on);
  unlink (off);
  rmdir (dir);
}

/* oci_config_validate applies it with the host's switch. */
Test (validate, apparmor_in_config)
{
  struct oci_config c = { .apparmor_profile = (char *)"some-profile" };
  csr_error *e = NULL;
  int r = oci_config_validate (&c, &e);
  if (access (OCI_APPARMOR_ENABLED, R_OK) == 0)
    {
      char buf[4] = "";
      FILE *f = fopen (OCI_APPARMOR_ENABLED, "r");
      cr_assert_not_null (f);
      cr_assert_not_null (fgets (buf, sizeof buf, f));
      fclose (f);
      if (buf[0] == 'Y')
        {
          cr_assert_eq (r, 0, "%s", e ? e->msg : "");
          return;
        }
    }
  cr_assert_lt (r, 0);
  cr_assert_not_null (strstr (e->msg, "AppArmor is not enabled"), "%s", e->msg);
  csr_error_free (e);
}
