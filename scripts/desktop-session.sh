#!/usr/bin/env bash
# Sourced by .ci/run (and usable by hand: `source scripts/desktop-session.sh`): starts the
# services the desktop tests need when they are not already there — an Xvfb display and one D-Bus
# session bus shared by the test applications and Uplink (AT-SPI finds its bus through it) —
# and exports DISPLAY and DBUS_SESSION_BUS_ADDRESS. Stops what it started on exit.

uplink_started_pids=()

if [ -z "${DISPLAY:-}" ] || ! xdpyinfo >/dev/null 2>&1; then
  for n in $(seq 99 130); do
    if [ ! -e "/tmp/.X11-unix/X$n" ] && [ ! -e "/tmp/.X$n-lock" ]; then break; fi
  done
  Xvfb ":$n" -screen 0 1280x1024x24 -nolisten tcp +extension XTEST +extension X-Resource >/tmp/uplink-xvfb.log 2>&1 &
  uplink_started_pids+=("$!")
  export DISPLAY=":$n"
  for _ in $(seq 1 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
  xdpyinfo >/dev/null 2>&1 || { echo "desktop-session: Xvfb did not start on $DISPLAY (see /tmp/uplink-xvfb.log)" >&2; return 1 2>/dev/null || exit 1; }
fi

if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
  eval "$(dbus-launch --sh-syntax)"
  uplink_started_pids+=("$DBUS_SESSION_BUS_PID")
  export DBUS_SESSION_BUS_ADDRESS
fi

# GTK3 apps expose their accessibility tree unless NO_AT_BRIDGE is set; make sure it is not.
unset NO_AT_BRIDGE

uplink_desktop_session_stop() {
  for pid in "${uplink_started_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
}
echo "desktop-session: DISPLAY=$DISPLAY, D-Bus session ready"
