#!/usr/bin/env bash
# The README's install commands, run as written, in a scratch home: then
# `cstream`, `man cstream` and completion in bash, zsh and fish must work
# there. The commands are read from the README's "## Install" section (its
# first ```sh block), so the README cannot drift from what is tested.
#
# Needs man-db, bash-completion, zsh and fish (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

block=$(awk '/^## Install/ { s = 1; next } /^## / { s = 0 }
             s && /^```sh/ { b = 1; next } b && /^```/ { exit } b' README.md)
if [ -z "$block" ] || ! grep -q 'cargo install' <<<"$block"; then
    echo "check-install: no install commands under '## Install' in README.md" >&2
    exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The toolchain and the crate cache stay the real ones; everything the
# commands install goes under the scratch home. CARGO_INSTALL_ROOT is where
# `cargo install` puts ~/.cargo/bin when HOME is the scratch one; sharing
# target/ reuses a release build when there is one.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export PATH="$CARGO_HOME/bin:$PATH"
export HOME="$scratch" CARGO_INSTALL_ROOT="$scratch/.cargo" CARGO_TARGET_DIR="$root/target"
unset MANPATH XDG_DATA_HOME XDG_CONFIG_HOME XDG_DATA_DIRS BASH_COMPLETION_USER_DIR
echo "check-install: running the README's install commands in $scratch"
bash -euo pipefail -c "$block"

export PATH="$scratch/.cargo/bin:$PATH"
fail=0
check() { # name, expected substring, actual output
    if grep -qF -- "$2" <<<"$3"; then
        echo "check-install: $1: ok"
    else
        echo "check-install: $1: expected '$2' in:" >&2
        printf '%s\n' "$3" >&2
        fail=1
    fi
}

check "the command" "$scratch/.cargo/bin/cstream" "$(command -v cstream)"
check "cstream --version" "cstream " "$(cstream --version)"
# man finds share/man beside each bin directory on PATH.
check "man cstream" "$scratch/.cargo/share/man/man1/cstream.1" "$(man -w cstream 2>&1)"
check "the man page renders" "cstream" "$(MANWIDTH=80 man cstream 2>&1 | head -5)"

# bash, with bash-completion loading the completion on demand, as it does
# when the user presses Tab after `cstream`.
bash_out=$(bash --norc --noprofile -c '
    source /usr/share/bash-completion/bash_completion
    __load_completion cstream || { echo "no completion loaded"; exit 0; }
    COMP_WORDS=(cstream --to ""); COMP_CWORD=2; COMP_LINE="cstream --to "; COMP_POINT=${#COMP_LINE}
    fn=$(complete -p cstream | sed -E "s/.*-F ([^ ]+).*/\1/")
    "$fn" cstream "" --to
    printf "%s\n" "${COMPREPLY[@]}"' 2>&1)
check "bash completion of --to" "openai-sse" "$bash_out"

# zsh: the README's fpath line, then compinit finds _cstream.
zsh_out=$(zsh -fc 'fpath=(~/.local/share/zsh/site-functions $fpath)
    autoload -Uz compinit && compinit -u -d ~/.zcompdump
    print -r -- "${_comps[cstream]}"' 2>&1)
check "zsh completion" "_cstream" "$zsh_out"

fish_out=$(fish -c 'complete -C "cstream --to "' 2>&1)
check "fish completion of --to" "openai-sse" "$fish_out"

exit $fail
