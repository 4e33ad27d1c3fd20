#!/usr/bin/env bash
# Installs the Debian packages Uplink's tests use: tmux, an X server and X tools, AT-SPI and a
# D-Bus session, GTK3 with Python bindings for the fixture app, zenity, ImageMagick, Chromium, and
# pytest + pyflakes for the desktop helper's Python tests, and python3-venv for the MCP Python SDK
# client of the interop tests, and nats-server for the fleet tests, and
# mingw-w64 + Wine to build the Win32 desktop helper and test it against real Win32 windows.
# Idempotent: packages already installed are skipped, and apt is not touched when none is missing.
set -euo pipefail

PACKAGES=(
  tmux
  xvfb xauth x11-utils x11-apps xdotool imagemagick
  dbus dbus-x11 at-spi2-core
  python3 python3-gi python3-xlib gir1.2-gtk-3.0 gir1.2-atspi-2.0
  python3-pytest pyflakes3 python3-venv
  zenity fonts-dejavu-core weston
  chromium
  nats-server
  gcc-mingw-w64-x86-64 wine wine64
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-system-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-system-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
