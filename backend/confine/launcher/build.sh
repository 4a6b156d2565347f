#!/bin/sh
# Builds the confinement launcher from launch.c: freestanding, static,
# stripped, no build id, so the same gcc makes the same bytes (the Go
# package embeds the result; TestEmbeddedLauncherIsBuiltFromSource checks
# it). Usage: build.sh OUTPUT
set -eu
cd "$(dirname "$0")"
out=${1:-gatehouse-launch.amd64}
${CC:-gcc} -std=gnu11 -Os -static -nostdlib -ffreestanding -fno-pic -no-pie \
	-fno-stack-protector -fno-asynchronous-unwind-tables -fno-ident \
	-Wall -Wextra -Werror -Wno-unused-parameter \
	-Wl,--build-id=none -Wl,-z,noexecstack -s -o "$out" launch.c
