# Private container engines for the test suite: sourced by scripts/run-tests.
# Nothing here touches a system-wide engine: every daemon listens on a unix
# socket in a temp dir (or on 127.0.0.1) and is stopped by its pid.
#   start_dockerd          the local engine (DOCKER_HOST, a unix socket)
#   start_remote_dockerd   a "remote" engine: dockerd on tcp://127.0.0.1:PORT in
#                          its own mount namespace with a tmpfs over the test
#                          workspace directory (TMPDIR), so it cannot see the
#                          host's files (SUBAGENT_TEST_REMOTE_HOST)
#   start_podman_service   podman's Docker-compatible API socket
#                          (SUBAGENT_TEST_PODMAN_HOST)

SUBAGENT_TEST_IMAGE=${SUBAGENT_TEST_IMAGE:-subagent-busybox:latest}

# Makes a rootfs tarball holding /bin/busybox and its applet links.
make_busybox_tarball () {
  local out=$1 rootfs
  rootfs=$(mktemp -d "${TMPDIR:-/tmp}/subagent-rootfs.XXXXXX")
  mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/workspace" "$rootfs/etc"
  cp /bin/busybox "$rootfs/bin/busybox"
  for applet in $("$rootfs/bin/busybox" --list); do
    [[ "$applet" == busybox ]] || ln -sf busybox "$rootfs/bin/$applet"
  done
  echo "root:x:0:0:root:/root:/bin/sh" >"$rootfs/etc/passwd"
  echo "nobody:x:65534:65534:nobody:/nonexistent:/bin/sh" >>"$rootfs/etc/passwd"
  echo "root:x:0:" >"$rootfs/etc/group"
  echo "nogroup:x:65534:" >>"$rootfs/etc/group"
  chmod 1777 "$rootfs/tmp"
  chmod 755 "$rootfs"   # mktemp made it 0700: a non-root container user could not reach /bin
  tar -C "$rootfs" -cf "$out" .
  rm -rf "$rootfs"
}

# Starts dockerd on a private socket; exports DOCKER_HOST and DOCKERD_DIR.
start_dockerd () {
  command -v dockerd >/dev/null || { echo "run-tests: dockerd is not installed" >&2; return 1; }
  DOCKERD_DIR=$(mktemp -d /tmp/subagent-dockerd.XXXXXX)
  dockerd --storage-driver=vfs --iptables=false --ip6tables=false --bridge=none \
    --host "unix://$DOCKERD_DIR/docker.sock" --data-root "$DOCKERD_DIR/data" \
    --exec-root "$DOCKERD_DIR/exec" --pidfile "$DOCKERD_DIR/dockerd.pid" \
    >"$DOCKERD_DIR/dockerd.log" 2>&1 &
  export DOCKER_HOST="unix://$DOCKERD_DIR/docker.sock"
  export DOCKERD_DIR
  for _ in $(seq 1 120); do
    docker version >/dev/null 2>&1 && break
    sleep 0.5
  done
  if ! docker version >/dev/null 2>&1; then
    echo "run-tests: dockerd did not answer on $DOCKER_HOST; its log:" >&2
    tail -n 30 "$DOCKERD_DIR/dockerd.log" >&2
    return 1
  fi
  local tarball="$DOCKERD_DIR/busybox.tar"
  make_busybox_tarball "$tarball"
  docker import "$tarball" "$SUBAGENT_TEST_IMAGE" >/dev/null
  rm -f "$tarball"
  export SUBAGENT_TEST_IMAGE
}

stop_dockerd () {
  [[ -n "${DOCKERD_DIR:-}" && -f "$DOCKERD_DIR/dockerd.pid" ]] || return 0
  local pid
  pid=$(cat "$DOCKERD_DIR/dockerd.pid")
  # Containers first, so no shim outlives the daemon.
  docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1 || true
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -9 "$pid" 2>/dev/null || true
  # dockerd leaves mounts below its dirs (netns, overlays): deepest first.
  awk -v d="$DOCKERD_DIR" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$DOCKERD_DIR" 2>/dev/null || true
  unset DOCKER_HOST DOCKERD_DIR
}

# A TCP port nobody listens on.
free_port () {
  local port
  for _ in $(seq 1 100); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# The remote-like engine. Its own dirs live outside TMPDIR, which it sees
# as an empty tmpfs: a bind mount of a test workspace finds nothing there.
start_remote_dockerd () {
  command -v dockerd >/dev/null && command -v unshare >/dev/null ||
    { echo "run-tests: dockerd or unshare is not installed" >&2; return 1; }
  local hidden=${TMPDIR:-/tmp} port
  port=$(free_port) || { echo "run-tests: no free TCP port" >&2; return 1; }
  REMOTE_DOCKERD_DIR=$(mktemp -d /var/tmp/subagent-remote-dockerd.XXXXXX)
  export REMOTE_DOCKERD_DIR
  unshare --mount --propagation private sh -c 'mount -t tmpfs -o size=64m tmpfs "$1" && shift && exec "$@"' \
    sh "$hidden" dockerd --storage-driver=vfs --iptables=false --ip6tables=false --bridge=none \
    --host "tcp://127.0.0.1:$port" --data-root "$REMOTE_DOCKERD_DIR/data" \
    --exec-root "$REMOTE_DOCKERD_DIR/exec" --pidfile "$REMOTE_DOCKERD_DIR/dockerd.pid" \
    >"$REMOTE_DOCKERD_DIR/dockerd.log" 2>&1 &
  echo $! >"$REMOTE_DOCKERD_DIR/unshare.pid"
  export SUBAGENT_TEST_REMOTE_HOST="tcp://127.0.0.1:$port"
  for _ in $(seq 1 120); do
    docker -H "$SUBAGENT_TEST_REMOTE_HOST" version >/dev/null 2>&1 && break
    sleep 0.5
  done
  if ! docker -H "$SUBAGENT_TEST_REMOTE_HOST" version >/dev/null 2>&1; then
    echo "run-tests: the remote-like dockerd did not answer on $SUBAGENT_TEST_REMOTE_HOST; its log:" >&2
    tail -n 30 "$REMOTE_DOCKERD_DIR/dockerd.log" >&2
    return 1
  fi
  local tarball="$REMOTE_DOCKERD_DIR/busybox.tar"
  make_busybox_tarball "$tarball"
  docker -H "$SUBAGENT_TEST_REMOTE_HOST" import "$tarball" "$SUBAGENT_TEST_IMAGE" >/dev/null
  rm -f "$tarball"
}

stop_remote_dockerd () {
  [[ -n "${REMOTE_DOCKERD_DIR:-}" && -f "$REMOTE_DOCKERD_DIR/unshare.pid" ]] || return 0
  local pid
  pid=$(cat "$REMOTE_DOCKERD_DIR/unshare.pid")
  docker -H "$SUBAGENT_TEST_REMOTE_HOST" ps -aq 2>/dev/null |
    xargs -r docker -H "$SUBAGENT_TEST_REMOTE_HOST" rm -f -v >/dev/null 2>&1 || true
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -9 "$pid" 2>/dev/null || true
  # Its mounts lived in its own namespace and went with it.
  rm -rf "$REMOTE_DOCKERD_DIR" 2>/dev/null || true
  unset REMOTE_DOCKERD_DIR SUBAGENT_TEST_REMOTE_HOST
}

# Podman needs vfs storage, runc, and no default ulimits in this sandbox.
prepare_podman () {
  command -v podman >/dev/null || return 1
  if ! grep -q '^default_ulimits' /etc/containers/containers.conf 2>/dev/null; then
    mkdir -p /etc/containers
    printf '[containers]\ndefault_ulimits = []\n' >/etc/containers/containers.conf
  fi
  PODMAN_DIR=$(mktemp -d /tmp/subagent-podman.XXXXXX)
  export PODMAN_DIR
  local tarball="$PODMAN_DIR/busybox.tar"
  make_busybox_tarball "$tarball"
  podman --storage-driver vfs --runtime runc import "$tarball" "$SUBAGENT_TEST_IMAGE" >/dev/null
  rm -f "$tarball"
}

# podman's Docker-compatible API on a socket of its own (needs prepare_podman).
start_podman_service () {
  [[ -n "${PODMAN_DIR:-}" ]] || return 1
  podman --storage-driver vfs --runtime runc system service --time 0 "unix://$PODMAN_DIR/podman.sock" \
    >"$PODMAN_DIR/service.log" 2>&1 &
  echo $! >"$PODMAN_DIR/service.pid"
  export SUBAGENT_TEST_PODMAN_HOST="unix://$PODMAN_DIR/podman.sock"
  for _ in $(seq 1 60); do
    [[ -S "$PODMAN_DIR/podman.sock" ]] && docker -H "$SUBAGENT_TEST_PODMAN_HOST" version >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "run-tests: podman's API service did not answer on $SUBAGENT_TEST_PODMAN_HOST; its log:" >&2
  tail -n 30 "$PODMAN_DIR/service.log" >&2
  return 1
}

stop_podman_service () {
  [[ -n "${PODMAN_DIR:-}" && -f "$PODMAN_DIR/service.pid" ]] || return 0
  local pid
  pid=$(cat "$PODMAN_DIR/service.pid")
  # Only what the suite made (podman storage is shared by the machine).
  podman --storage-driver vfs --runtime runc ps -aq --filter label=io.subagent.session 2>/dev/null |
    xargs -r podman --storage-driver vfs --runtime runc rm -f -v -t 0 >/dev/null 2>&1 || true
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$PODMAN_DIR/service.pid"
  unset SUBAGENT_TEST_PODMAN_HOST
}
