#!/usr/bin/env bash
# Prints a bench script's usage: its leading comment block (every line after the #! line
# up to the first line that is not a comment), without the "# ". Each bench script calls
# it for --help, so that its help is the text at its top, however long that grows.
#
#   bench/help.sh bench/profile.sh
set -euo pipefail
[ $# = 1 ] || { echo "usage: bench/help.sh SCRIPT" >&2; exit 2; }
case $1 in -h | --help) set -- "$0" ;; esac
exec awk 'NR == 1 && /^#!/ {next} /^#/ {sub(/^# ?/, ""); print; next} {exit}' "$1"
