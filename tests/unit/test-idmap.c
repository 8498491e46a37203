#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "jail/idmap.h"
#include "jail/spec.h"

Test (idmap, rootless_default_maps_invoking_user_to_root)
{
  struct jail_spec s;
  jail_spec_init (&s);
  csr_idmap_default (&s, 1000, 1001);
  cr_assert_eq (s.n_uid_map, 1);
  cr_assert_eq (s.uid_map[0].inside, 0);
  cr_assert_eq (s.uid_map[0].outside, 1000);
  cr_assert_eq (s.uid_map[0].count, 1);
  cr_assert_eq (s.gid_map[0].outside, 1001);
}

Test (idmap, root_default_maps_to_unprivileged_host_id)
{
  struct jail_spec s;
  jail_spec_init (&s);
  csr_idmap_default (&s, 0, 0);
  cr_assert_eq (s.uid_map[0].inside, 0);
  cr_assert_eq (s.uid_map[0].outside, CSR_ROOT_MAPPED_ID);
  cr_assert_neq (s.gid_map[0].outside, 0);
}

Test (idmap, explicit_maps_are_kept)
{
  struct jail_spec s;
  jail_spec_init (&s);
  s.uid_map[0] = (struct csr_idmap){ 0, 5000, 10 };
  s.n_uid_map = 1;
  csr_idmap_default (&s, 1000, 1000);
  cr_assert_eq (s.uid_map[0].outside, 5000);
  cr_assert_eq (s.gid_map[0].outside, 1000);
}

Test (idmap, format)
{
  struct csr_idmap m[2] = { { 0, 1000, 1 }, { 1, 100000, 65536 } };
  char buf[128];
  int n = csr_idmap_format (m, 2, buf, sizeof buf);
  cr_assert_str_eq (buf, "0 1000 1\n1 100000 65536\n");
  cr_assert_eq (n, (int)strlen (buf));
  cr_assert_lt (csr_idmap_format (m, 2, buf, 10), 0, "a short buffer must fail, not truncate");
}

Test (idmap, validate)
{
  csr_error *e = NULL;
  struct csr_idmap ok[2] = { { 0, 1000, 1 }, { 1, 100000, 65536 } };
  cr_assert_eq (csr_idmap_validate (ok, 2, &e), 0);
  struct csr_idmap zero[1] = { { 0, 1000, 0 } };
  cr_assert_lt (csr_idmap_validate (zero, 1, &e), 0);
  cr_assert (strstr (e->msg, "count 0"));
  csr_error_freep (&e);
  struct csr_idmap in_overlap[2] = { { 0, 1000, 10 }, { 5, 5000, 10 } };
  cr_assert_lt (csr_idmap_validate (in_overlap, 2, &e), 0);
  cr_assert (strstr (e->msg, "overlap inside"));
  csr_error_freep (&e);
  struct csr_idmap out_overlap[2] = { { 0, 1000, 10 }, { 100, 1009, 10 } };
  cr_assert_lt (csr_idmap_validate (out_overlap, 2, &e), 0);
  cr_assert (strstr (e->msg, "overlap outside"));
  csr_error_freep (&e);
  struct csr_idmap wrap[1] = { { 0, 0xFFFFFFF0u, 0x20 } };
  cr_assert_lt (csr_idmap_validate (wrap, 1, &e), 0);
  csr_error_freep (&e);
  cr_assert_lt (csr_idmap_validate (ok, 0, &e), 0);
  csr_error_freep (&e);
}

Test (idmap, find_subid)
{
  const char *text = "# comment\nalice:100000:65536\n1001:200000:1000\nbob:300000:65536\n";
  uint32_t start = 0, count = 0;
  csr_error *e = NULL;
  cr_assert_eq (csr_idmap_find_subid (text, "bob", 1002, &start, &count, &e), 1);
  cr_assert_eq (start, 300000);
  cr_assert_eq (count, 65536);
  cr_assert_eq (csr_idmap_find_subid (text, "carol", 1001, &start, &count, &e), 1,
                "a numeric entry matches the uid");
  cr_assert_eq (start, 200000);
  cr_assert_eq (csr_idmap_find_subid (text, "dave", 4242, &start, &count, &e), 0);
  cr_assert_eq (csr_idmap_find_subid ("alic:1:1\n", "alice", 7, &start, &count, &e), 0,
                "a prefix of the name must not match");
  cr_assert_lt (csr_idmap_find_subid ("alice:x:1\n", "alice", 7, &start, &count, &e), 0);
  csr_error_freep (&e);
  cr_assert_lt (csr_idmap_find_subid ("alice:1\n", "alice", 7, &start, &count, &e), 0);
  csr_error_freep (&e);
  cr_assert_lt (csr_idmap_find_subid ("alice:1:0\n", "alice", 7, &start, &count, &e), 0);
  csr_error_freep (&e);
}

Test (idmap, subordinate_maps_for_user)
{
  struct jail_snippet s;
  jail_snippet_init (&s);
  csr_error *e = NULL;
  cr_assert_eq (csr_idmap_subordinate (&s, "alice", 1000, 1000, "alice:100000:65536\n",
                                       "alice:200000:1000\n", 1000, 500, &e),
                0);
  cr_assert_eq (s.jail.n_uid_map, 2);
  cr_assert_eq (s.jail.uid_map[0].outside, 1000);
  cr_assert_eq (s.jail.uid_map[1].inside, 1);
  cr_assert_eq (s.jail.uid_map[1].outside, 100000);
  cr_assert_eq (s.jail.uid_map[1].count, 65535);
  cr_assert_eq (s.jail.gid_map[1].count, 1000);
  cr_assert (s.jail.use_newidmap, "rootless maps go through newuidmap");
  cr_assert_eq (s.uid, 1000);
  cr_assert_eq (s.gid, 500);

  jail_snippet_init (&s);
  cr_assert_eq (csr_idmap_subordinate (&s, "root", 0, 0, "root:300000:65536\n",
                                       "root:300000:65536\n", 10, 10, &e),
                0);
  cr_assert_eq (s.jail.uid_map[0].outside, CSR_ROOT_MAPPED_ID);
  cr_assert (!s.jail.use_newidmap, "root writes its maps itself");
}

Test (idmap, subordinate_errors)
{
  struct jail_snippet s;
  jail_snippet_init (&s);
  csr_error *e = NULL;
  cr_assert_lt (
      csr_idmap_subordinate (&s, "bob", 1001, 1001, "alice:1:10\n", "bob:1:10\n", 5, 5, &e), 0);
  cr_assert (strstr (e->msg, "/etc/subuid"), "names the file: %s", e->msg);
  csr_error_freep (&e);
  jail_snippet_init (&s);
  cr_assert_lt (csr_idmap_subordinate (&s, "bob", 1001, 1001, "bob:100000:10\n", "bob:100000:10\n",
                                       11, 11, &e),
                0);
  cr_assert (strstr (e->msg, "outside the subordinate range"), "%s", e->msg);
  csr_error_freep (&e);
}
