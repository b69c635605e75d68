#!/usr/bin/env bash
# The shared library exports exactly the functions that the installed headers
# declare: nothing private leaks, nothing public is hidden.
#   test-exported-symbols.sh LIBRARY FRAMEWORK_SRCDIR FRAMEWORK_BUILDDIR
set -euo pipefail
lib=$1 srcdir=$2 builddir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "1..2"
nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "D" || $2 == "B" || $2 == "R" { print $3 }' |
  sort -u >"$work/exported"
# Declared: every subagent_* function name in a public header (the
# G_DECLARE_* macros declare *_get_type; mkenums declares the enum types).
{
  find "$srcdir" -name 'subagent*.h' ! -name '*-private.h' -print0 |
    xargs -0 cat "$builddir/subagent-enum-types.h" |
    grep -oE '\bsubagent_[a-z0-9_]+[[:space:]]*\(' | sed 's/[[:space:]]*($//'
  find "$srcdir" -name 'subagent*.h' ! -name '*-private.h' -print0 | xargs -0 cat |
    grep -oE 'G_DECLARE_[A-Z_]+ *\([A-Za-z]+, *subagent_[a-z0-9_]+' | sed 's/.*, *//; s/$/_get_type/'
} | sort -u >"$work/declared"

leaked=$(comm -23 "$work/exported" "$work/declared")
if [[ -n "$leaked" ]]; then
  echo "not ok 1 - exported but not declared in an installed header:"
  sed 's/^/# /' <<<"$leaked"
  status=1
else
  echo "ok 1 - every exported symbol ($(wc -l <"$work/exported")) is declared in an installed header"
  status=0
fi
# Declared functions that are not exported: a missing SUBAGENT_AVAILABLE_IN_*
# (macros such as SUBAGENT_CHECK_VERSION are not functions and not listed).
missing=$(comm -13 "$work/exported" "$work/declared")
if [[ -n "$missing" ]]; then
  echo "not ok 2 - declared in an installed header but not exported:"
  sed 's/^/# /' <<<"$missing"
  status=1
else
  echo "ok 2 - every declared function is exported"
fi
exit $status
