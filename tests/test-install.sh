#!/bin/bash
# `meson install` into a temporary destination: the manual pages and the
# bash completion of subagentctl are installed, render, and complete
# commands, options, definition names, backends and pending request ids.
# Prints TAP.  Usage: test-install.sh BUILD_DIR TESTS_SOURCE_DIR
# No pipefail: `grep -q` may close a pipe early, which is fine here.
set -u

build=$1
source=$2
dest=$(mktemp -d /tmp/subagent-install-XXXXXX)
work=$(mktemp -d /tmp/subagent-install-root-XXXXXX)
trap 'rm -rf "$dest" "$work"' EXIT
n=0
failed=0
check() {
    n=$((n + 1))
    if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; failed=1; fi
}

meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$dest.log" 2>&1
check "meson install succeeds" '[[ $? -eq 0 ]] || { cat "$dest.log"; false; }'
rm -f "$dest.log"
prefix=$(meson introspect "$build" --buildoptions | /usr/bin/python3 -c \
    'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"))')
mandir="$dest$prefix/share/man"

for page in subagentctl.1 subagentctl-run.1 subagentctl-defs.1 subagentctl-plugins.1 subagentctl-prune.1 \
            subagentctl-worktrees.1 subagentctl-approvals.1 subagentctl-batch.1 subagentctl-team.1 \
            subagentctl-sessions.1 subagentctl-follow-up.1 subagentctl-mcp.1 subagent-definitions.5 subagent-config.5; do
    section=${page##*.}
    check "man page $page installed" "[[ -s '$mandir/man$section/$page' ]]"
done
check "subagentctl(1) has the exit-code table" \
    "grep -q 'Usage error' '$mandir/man1/subagentctl.1' && grep -q '^.TH \"subagentctl\" \"1\"' '$mandir/man1/subagentctl.1'"
if command -v man >/dev/null; then
    check "subagentctl-run(1) renders" "MANWIDTH=80 man -l '$mandir/man1/subagentctl-run.1' 2>/dev/null | grep -q -- '--keep-branch'"
fi

completion=$(find "$dest" -path '*bash-completion/completions/subagentctl' | head -1)
check "bash completion installed" "[[ -n '$completion' && -s '$completion' ]]"

# Complete as bash would, with the built subagentctl on PATH.
export PATH="$build/tools:$PATH"
mkdir -p "$work/.subagent/agents"
printf 'name: code-reviewer\ncommand: cat\n' >"$work/.subagent/agents/code-reviewer.yaml"
printf 'name: tester\ncommand: cat\n' >"$work/.subagent/agents/tester.yaml"
complete_line() {
    # complete_line WORD... : the candidates for the last word
    bash -c '
        source /usr/share/bash-completion/bash_completion
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _subagentctl subagentctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$@"
}
check "completes commands" "complete_line subagentctl ap | grep -qx approvals"
check "completes options of run" "complete_line subagentctl run --keep | grep -qx -- --keep-branch"
check "completes options of approvals" "complete_line subagentctl approvals --ro | grep -qx -- --root"
check "completes definition names" \
    "[[ \$(complete_line subagentctl run -r '$work' -d '' | sort | tr '\n' ' ') == 'code-reviewer tester ' ]]"
check "completes backends" "complete_line subagentctl run -i '' | grep -qx shared"
check "completes subcommands" "complete_line subagentctl worktrees '' | grep -qx prune"

# A pending approval request: an interactive child asks, the completion
# offers its id, and `approvals approve` with that id lets the child finish.
cp "$source/fixtures/children/ask-approval.sh" "$work/ask.sh"
printf 'name: asker\ninteractive: true\ncommand: [sh, ask.sh, "1", req-one]\n' >"$work/.subagent/agents/asker.yaml"
ids=$(subagentctl __complete --root "$work" requests)
check "no pending request before the run" "[[ -z '$ids' ]]"
subagentctl run -r "$work" -d asker -- "write the motd" >"$work/run.out" 2>"$work/run.err" </dev/null &
run_pid=$!
for _ in $(seq 1 100); do
    ids=$(complete_line subagentctl approvals -r "$work" approve '')
    [[ -n $ids ]] && break
    sleep 0.1
done
asked=$(sed -n 's/.*approval request \([0-9a-f]*\) of parent run.*/\1/p' "$work/run.err")
check "completes the pending request id" "[[ -n '$ids' && '$ids' == '$asked' ]]"
subagentctl approvals -r "$work" approve "$ids" >/dev/null 2>&1
wait "$run_pid"
check "the approved child finished" "[[ \$? -eq 0 ]] && grep -q approved '$work/run.out'"
check "no pending request after the verdict" "[[ -z \$(subagentctl __complete --root '$work' requests) ]]"

# The Python runner example against the installed library and typelib, as a
# PyGObject host on this machine would load them (issue 12).
typelib=$(find "$dest" -name 'Subagent-1.0.typelib' | head -1)
if [[ -n $typelib ]]; then
    libdir=$(dirname "$(find "$dest" -name 'libsubagent-1.0.so.0' | head -1)")
    mkdir -p "$work/py-root"
    check "the Python runner example runs against the installed typelib" \
        "GI_TYPELIB_PATH='$(dirname "$typelib")' LD_LIBRARY_PATH='$libdir' \
         /usr/bin/python3 '$source/../examples/python-runner.py' '$work/py-root' 'buy milk' >'$work/py.out' 2>'$work/py.err' &&
         grep -q '\"status\": \"complete\"' '$work/py.out' || { cat '$work/py.err' >&2; false; }"
fi

echo "1..$n"
exit $failed
