#!/usr/bin/env bash
# plugin-kit-test.sh BUILD_DIR: the plugin kit, as an integrator uses it.
#
# Configures libsubagent in BUILD_DIR with a private prefix (BUILD_DIR/prefix),
# installs it there, builds examples/plugin-tmpdir against the INSTALLED
# library only (pkg-config subagent-1.0 and its `plugindir`), installs the
# plugin, and then drives the INSTALLED subagentctl — no LD_LIBRARY_PATH, no
# SUBAGENT_PLUGIN_PATH — through: plugins, plugins inspect tmpdir,
# run --isolation tmpdir, a definition with isolation: tmpdir, a batch item,
# config.yaml option checking, and prune after the host is SIGKILLed mid-run.
#
# Ends with "N passed, M failed"; exits non-zero when a check failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-kit}
mkdir -p "$build"
build=$(cd "$build" && pwd)
prefix=$build/prefix
work=$(mktemp -d "${TMPDIR:-/tmp}/plugin-kit.XXXXXX")
passed=0 failed=0
host_pid='' child_pid=''

cleanup () {
  [[ -n $host_pid ]] && kill -9 "$host_pid" 2>/dev/null
  [[ -n $child_pid ]] && kill -9 "$child_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

check () {  # check NAME COMMAND...: a check passes when COMMAND succeeds
  local name=$1; shift
  if "$@"; then
    echo "ok - $name"; passed=$((passed + 1))
  else
    echo "not ok - $name"; failed=$((failed + 1))
  fi
}

finish () {
  echo "plugin-kit: ${passed} passed, ${failed} failed"
  [[ $failed -eq 0 ]]
  exit
}

# ---- install libsubagent, build the example against it ----------------------
if [[ ! -f $build/build.ninja ]]; then
  meson setup "$build" "$top" --prefix="$prefix" --libdir=lib -Dintrospection=false \
    >"$build/setup.log" 2>&1 || { cat "$build/setup.log"; check "configure libsubagent" false; finish; }
fi
if ! { ninja -C "$build" && meson install -C "$build" --no-rebuild; } >"$build/install.log" 2>&1; then
  tail -n 40 "$build/install.log"; check "build and install libsubagent into $prefix" false; finish
fi
check "libsubagent installed into $prefix" test -x "$prefix/bin/subagentctl"

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
plugindir=$(pkg-config --variable=plugindir subagent-1.0)
check "pkg-config gives plugindir inside the prefix" test "$plugindir" = "$prefix/lib/subagent-1.0/plugins"
rm -rf "$work/example-build"
if ! { meson setup "$work/example-build" "$top/examples/plugin-tmpdir" &&
       ninja -C "$work/example-build" && meson install -C "$work/example-build" --no-rebuild; } \
     >"$work/example.log" 2>&1; then
  tail -n 40 "$work/example.log"; check "build examples/plugin-tmpdir against the installed library" false; finish
fi
check "the example installed its module and descriptor" \
  test -f "$plugindir/libsubagent-tmpdir.so" -a -f "$plugindir/tmpdir.plugin"

# ---- the installed subagentctl, as a user runs it ---------------------------
ctl () { env -u LD_LIBRARY_PATH -u SUBAGENT_PLUGIN_PATH -u SUBAGENT_CONFIG "$prefix/bin/subagentctl" "$@"; }

root=$work/root
mkdir -p "$root/.subagent/agents" "$work/base"
cat >"$root/.subagent/config.yaml" <<YAML
tmpdir:
  base_dir: $work/base
YAML

out=$(ctl plugins 2>&1)
check "plugins lists tmpdir" grep -q '^tmpdir 0.1.0' <<<"$out"
out=$(ctl plugins inspect tmpdir 2>&1)
check "plugins inspect tmpdir loads it" grep -q 'tmpdir → TmpdirIsolation' <<<"$out"
check "plugins inspect tmpdir prints its option" grep -q 'base_dir (string' <<<"$out"
check "plugins inspect tmpdir: the type's options agree with the descriptor's" \
  bash -c '! grep -q MISMATCH <<<"$1"' _ "$out"

out=$(ctl run --root "$root" --isolation tmpdir --json --command 'pwd' 'where am I' 2>&1)
check "run --isolation tmpdir completes" grep -q '"status" : "complete"' <<<"$out"
check "the child ran in a directory under base_dir (the option reached the plugin)" \
  grep -q "$work/base/subagent-tmpdir-" <<<"$out"
check "the directory is gone after the run" bash -c '[[ -z $(ls -A "$1") ]]' _ "$work/base"

out=$(ctl run --root "$root" --isolation no-such-backend --command true 'x' 2>&1)
check "an unknown mode names the modes of this host" grep -q 'this host has shared, auto.*tmpdir' <<<"$out"

cat >"$root/.subagent/agents/scratch.yaml" <<'YAML'
name: scratch
description: works in an empty directory
isolation: tmpdir
command: [sh, -c, 'pwd; ls -A | wc -l']
YAML
check "defs --check accepts isolation: tmpdir" ctl defs --root "$root" --check
out=$(ctl run --root "$root" --def scratch --json 'count files' 2>&1)
check "a definition with isolation: tmpdir runs there" grep -q "$work/base/subagent-tmpdir-" <<<"$out"

cat >"$root/.subagent/agents/nowhere.yaml" <<'YAML'
name: nowhere
isolation: not-installed
YAML
out=$(ctl defs --root "$root" --check 2>&1)
check "defs --check refuses a mode no plugin provides" grep -q 'Unknown isolation mode “not-installed”' <<<"$out"
rm "$root/.subagent/agents/nowhere.yaml"

echo '[{"task": "one", "isolation": "tmpdir", "def_name": "scratch"}, {"task": "two", "def_name": "scratch"}]' >"$work/batch.json"
out=$(ctl batch --root "$root" --json "$work/batch.json" 2>/dev/null)
check "a batch item with isolation: tmpdir runs" \
  bash -c '[[ $(grep -c "\"status\" : \"complete\"" <<<"$1") -eq 2 ]]' _ "$out"

# config.yaml: the registry checks the section against the descriptor.
cp "$root/.subagent/config.yaml" "$work/config.good"
printf 'tmpdir:\n  base_dir: %s\n  colour: blue\n' "$work/base" >"$root/.subagent/config.yaml"
out=$(ctl run --root "$root" --isolation tmpdir --command true 'x' 2>&1)
check "an unknown option warns with file and line" grep -q 'config.yaml:3: unknown key “tmpdir.colour”' <<<"$out"
printf 'tmpdir:\n  base_dir: 42\n' >"$root/.subagent/config.yaml"
out=$(ctl run --root "$root" --isolation tmpdir --command true 'x' 2>&1)
check "an option of the wrong type is an error with file and line" \
  grep -q 'config.yaml:2: “tmpdir.base_dir”.*must be a string' <<<"$out"
cp "$work/config.good" "$root/.subagent/config.yaml"

# prune after the host is SIGKILLed mid-run.
# exec: $! must be subagentctl itself, not a shell around it.
( exec env -u LD_LIBRARY_PATH -u SUBAGENT_PLUGIN_PATH -u SUBAGENT_CONFIG "$prefix/bin/subagentctl" \
    run --root "$root" --isolation tmpdir \
    --command "echo \$\$ >child.pid; exec sleep 60" 'wait' >/dev/null 2>&1 ) &
host_pid=$!
# The child writes its pid in its own workspace: Landlock lets it write
# nowhere else.
pid_file=
for _ in $(seq 1 100); do
  pid_file=$(ls "$work"/base/subagent-tmpdir-*/child.pid 2>/dev/null | head -n1)
  [[ -n $pid_file && -s $pid_file ]] && break
  sleep 0.1
done
child_pid=$(cat "$pid_file" 2>/dev/null)
leftover=$(ls -d "$work"/base/subagent-tmpdir-* 2>/dev/null | head -n1)
check "a run was in progress in a tmpdir workspace" test -n "$leftover" -a -n "$child_pid"
check "the host is subagentctl" grep -q subagentctl "/proc/$host_pid/cmdline"
kill -9 "$host_pid"; wait "$host_pid" 2>/dev/null; host_pid=''
[[ -n $child_pid ]] && kill -9 "$child_pid" 2>/dev/null; child_pid=''
sleep 0.2
check "the killed host left its workspace and owner record" \
  bash -c 'test -d "$1" && ls "$2"/.subagent/owners/*.json >/dev/null' _ "$leftover" "$root"
out=$(ctl prune --root "$root" --json 2>&1)
check "prune reclaims it through the plugin" grep -q '"action" : "removed"' <<<"$out"
check "prune names the tmpdir leftover" grep -q '"kind" : "tmpdir"' <<<"$out"
check "the workspace is gone" test ! -e "$leftover"
check "its owner record is gone" bash -c '! ls "$1"/.subagent/owners/*.json >/dev/null 2>&1' _ "$root"

finish
