#!/bin/bash
# Re-records the real-program streams of this corpus (the *.bin files named
# in cases.json). Each program runs in a pseudo-terminal made by script(1) at
# 80x24 with TERM=xterm-256color; what it wrote to the terminal is stored
# byte for byte. Programs that would wait for a key are killed with SIGKILL
# after a moment, so the stream ends with their screen still up (alternate
# buffer active, no cleanup sequences). The recordings are committed: this
# script documents how they were made and is not run by the tests.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"; tmux -L gh-corpus kill-server 2>/dev/null || true' EXIT
rec() { # rec FILE COMMAND: run COMMAND in an 80x24 PTY, keep its output
  TERM=xterm-256color script -q -e -c "stty rows 24 cols 80; $2" /dev/null </dev/null >"$1" 2>/dev/null || true
}
printf 'int main(void) {\n\treturn 0; /* done */\n}\n' >"$tmp/main.c"
# a Go file with tabs, long lines, wide and combining characters
{ printf 'package main\n\nimport "fmt"\n\n// 日本語のコメント, café, e\xcc\x81\n'; for i in $(seq 1 60); do printf 'func f%d() { fmt.Println("line %d\t with a rather long string that goes past the right edge of the screen") }\n' "$i" "$i"; done; } >"$tmp/prog.go"
seq 1 200 | sed 's/$/ lorem ipsum dolor sit amet, consectetur adipiscing elit/' >"$tmp/long.txt"
mkdir -p "$tmp/tree/dir" && touch "$tmp/tree/file.txt" "$tmp/tree/run.sh" && chmod +x "$tmp/tree/run.sh" && ln -sf file.txt "$tmp/tree/link"
rec ls-color.bin "cd $tmp/tree && LC_ALL=C ls --color=always -F . /usr/share/doc | head -60"
rec grep-color.bin "grep --color=always -n -E 'lorem|[0-9]+5 ' $tmp/long.txt | head -40"
rec less.bin "timeout -s KILL 1 less $tmp/long.txt"
rec vim.bin "timeout -s KILL 1 vim -u NONE -N -n -i NONE -c 'syntax on' -c 'set number ruler laststatus=2' $tmp/main.c"
rec vim-quit.bin "vim -u NONE -N -n -i NONE -c 'set number' -c 'qa!' $tmp/long.txt"
rec top.bin "timeout -s KILL 1 top -d 5"
rec tput.bin "tput smcup; tput clear; tput cup 3 10; tput bold; printf bold; tput sgr0; tput cup 5 0; tput setaf 4; tput setab 7; printf ' blue on white '; tput sgr0; tput cup 10 70; printf 'near the edge'; tput cup 23 0; tput el; printf status; tput cup 1 1"
rec tmux.bin "timeout -s KILL 2 tmux -L gh-corpus -f /dev/null new-session 'printf \"\\033[1;31mred\\033[0m in tmux\\n\"; seq 1 30; sleep 5'"
rec vim-go.bin "timeout -s KILL 1 vim -u NONE -N -n -i NONE -c 'syntax on' -c 'set number cursorline list' -c 'normal 40G' $tmp/prog.go"
rec vim-go-top.bin "timeout -s KILL 1 vim -u NONE -N -n -i NONE -c 'syntax on' -c 'set number' $tmp/prog.go"
rec man.bin "MANPAGER='less' MANWIDTH=80 timeout -s KILL 2 man 1 ls"
rec git-log.bin "git -C \"$(git rev-parse --show-toplevel)\" log --graph --color=always --decorate --oneline -n 60 | cat"
rec ls-long.bin "LC_ALL=C.UTF-8 ls -la --color=always /usr/bin | head -300"
ls -la
