/* csrun — sd_notify (NOTIFY_SOCKET) for OCI containers, as crun does it:
 * the container gets a socket of its own and `start` forwards its READY=1 to
 * the socket csrun was given (systemd's, or podman's --sdnotify=container). */
#ifndef CSRUN_OCI_NOTIFY_H
#define CSRUN_OCI_NOTIFY_H

#include <sys/types.h>

#include "../util/error.h"
#include "oci-config.h"

/* The directory under a container's state directory that holds its socket
 * "notify"; it is bind-mounted at the NOTIFY_SOCKET path in the container. */
#define OCI_NOTIFY_DIR "notify"

/* At create, with NOTIFY_SOCKET=PATH in csrun's environment (PATH absolute):
 * make STATE_DIR/notify (0700; owned by the container's root, from C's
 * mappings, when C has a user namespace and we are root), append to C's
 * mounts a bind mount of it at PATH (after all of the config's, so it is on
 * top of a tmpfs there) and set NOTIFY_SOCKET=PATH/notify in C's process
 * environment (replacing the config's).  A PATH that is not absolute (an
 * abstract "@name" socket, "") can't be mounted, nor anything in a container
 * without a mount namespace of its own: 0 and nothing is done. */
int oci_notify_prepare (struct oci_config *c, const char *state_dir, const char *path,
                        csr_error **err);

/* At start: when STATE_DIR/notify exists, bind the datagram socket
 * STATE_DIR/notify/notify (mode 0777: any user of the container may send)
 * (replacing a stale one) into *FD_OUT.  0 with *FD_OUT = -1 when the
 * container has no notify directory; -1 on an error. */
int oci_notify_listen (const char *state_dir, int *fd_out, csr_error **err);

/* Wait on FD for a datagram with a line READY=1, or for PIDFD (the
 * container's process; -1: none) to end; then send "READY=1" and
 * "MAINPID=PID" (two datagrams) to HOST_PATH (a path, or "@name" for an
 * abstract socket).  1 when forwarded, 0 when the process ended first, -1 on
 * an error. */
int oci_notify_forward (int fd, int pidfd, pid_t pid, const char *host_path, csr_error **err);

#endif
