#!/usr/bin/env bash
# Builds bin/gatehouse_<version>_<arch>.deb from the desktop binary and the
# files in build/: the binary as /usr/bin/gatehouse (window and CLI), the
# desktop entry, the hicolor icons and build/linux/control filled in.
# dpkg-deb rather than a packaging tool: it ships with every Debian system
# and the package is a handful of files. Usage: build/linux/package.sh BINARY VERSION
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$1
version=$2
arch=$(dpkg --print-architecture)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
pkg=$root/gatehouse
install -D -m 0755 "$bin" "$pkg/usr/bin/gatehouse"
install -D -m 0644 build/linux/gatehouse.desktop "$pkg/usr/share/applications/gatehouse.desktop"
for png in build/icons/*x*.png; do
  size=$(basename "$png" .png)
  install -D -m 0644 "$png" "$pkg/usr/share/icons/hicolor/$size/apps/gatehouse.png"
done
install -D -m 0644 build/appicon.svg "$pkg/usr/share/icons/hicolor/scalable/apps/gatehouse.svg"
install -D -m 0644 build/linux/copyright "$pkg/usr/share/doc/gatehouse/copyright"
size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
mkdir -p "$pkg/DEBIAN"
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" build/linux/control > "$pkg/DEBIAN/control"
out=bin/gatehouse_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$out" >/dev/null
echo "$out"
