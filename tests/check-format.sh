#!/usr/bin/env bash
# The house style (.clang-format) on every C++ file of core, agent, ui, app, profiler and tests.
# Names each file that differs (fix: clang-format -i FILE) and exits 1; CTest runs it as "format".
# Usage: tests/check-format.sh SOURCE_DIR [CLANG_FORMAT]
set -uo pipefail
cd "$1" || exit 2
cf=${2:-clang-format}
mapfile -t files < <(find core agent ui app profiler tests -path tests/data -prune -o \
                       \( -name '*.cpp' -o -name '*.h' \) -print | sort)
bad=()
for f in "${files[@]}"; do
  "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'not in the house style (run: clang-format -i %s)\n' "${bad[@]}"
  exit 1
fi
echo "${#files[@]} files in the house style"
