#include "config.h"
#include "net.h"

#include <errno.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

static void
nl_sock_freep (struct nl_sock **s)
{
  if (*s)
    nl_socket_free (*s);
}

static void
rtnl_link_putp (struct rtnl_link **l)
{
  if (*l)
    rtnl_link_put (*l);
}

int
csr_net_loopback_up (csr_error **err)
{
  __attribute__ ((cleanup (nl_sock_freep))) struct nl_sock *sk = nl_socket_alloc ();
  if (sk == NULL)
    return csr_error_set (err, ENOMEM, "netlink socket");
  int rc = nl_connect (sk, NETLINK_ROUTE);
  if (rc < 0)
    return csr_error_set (err, 0, "netlink connect: %s", nl_geterror (rc));
  __attribute__ ((cleanup (rtnl_link_putp))) struct rtnl_link *lo = NULL;
  rc = rtnl_link_get_kernel (sk, 0, "lo", &lo);
  if (rc < 0)
    return csr_error_set (err, 0, "find lo: %s", nl_geterror (rc));
  __attribute__ ((cleanup (rtnl_link_putp))) struct rtnl_link *change = rtnl_link_alloc ();
  if (change == NULL)
    return csr_error_set (err, ENOMEM, "rtnl_link_alloc");
  rtnl_link_set_flags (change, IFF_UP);
  rc = rtnl_link_change (sk, lo, change, 0);
  if (rc < 0)
    return csr_error_set (err, 0, "bring lo up: %s", nl_geterror (rc));
  return 0;
}
