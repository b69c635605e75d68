/* docker-engine-private.h: what an engine is, shared by where it is and
 * which API it speaks (docker-engine.c) and the requests sent to it
 * (docker-engine-http.c). Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "docker-engine.h"

G_BEGIN_DECLS

struct _DockerEngine
{
  char *address;     /* unix:///…, tcp://host:port */
  char *origin;      /* where it came from, for messages */
  gboolean tls;
  gboolean tls_verify;
  char *ca_file, *cert_file, *key_file;
  char *api;         /* negotiated version, NULL before */
  gboolean podman;
  /* parsed address */
  char *socket_path;
  char *tcp_host;
  guint16 tcp_port;
};

G_END_DECLS
