"""A screenshot says when it cannot be trusted: a blank image, a window covered by another one
stacked above it. Real windows on a private Xvfb, no window manager."""
import os
import shutil
import subprocess

import pytest
from Xlib import X, Xatom, display

from errors import read_start_time
import uplink_desktop_helper as helper_module


@pytest.fixture
def xdisplay(monkeypatch):
    if not shutil.which("Xvfb"):
        pytest.skip("Xvfb is missing — install: apt-get install xvfb (or bash scripts/install-system-deps.sh)")
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "640x480x24", "-nolisten", "tcp",
                             "+extension", "X-Resource"], pass_fds=(write_end,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as f:
        name = ":" + f.readline().strip()
    monkeypatch.setenv("DISPLAY", name)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    d = display.Display(name)
    try:
        yield d
    finally:
        d.close()
        proc.terminate()
        proc.wait(timeout=10)


def window(d, x, y, w, h, pixel):
    win = d.screen().root.create_window(x, y, w, h, 0, d.screen().root_depth, X.InputOutput, X.CopyFromParent,
                                        background_pixel=pixel)
    win.change_property(d.intern_atom("_NET_WM_PID"), Xatom.CARDINAL, 32, [os.getpid()])
    win.map()
    d.sync()
    return win


def shoot(win):
    target = {"window": hex(win.id), "pid": os.getpid(), "start_time": read_start_time(os.getpid())}
    return helper_module.Helper().screenshot(target, None)


def test_a_drawn_uncovered_window_has_no_warnings(xdisplay):
    win = window(xdisplay, 10, 10, 200, 100, 0xFFFFFF)
    gc = win.create_gc(foreground=0x204080)
    win.fill_rectangle(gc, 20, 20, 50, 30)
    xdisplay.sync()
    assert "warnings" not in shoot(win)


def test_a_blank_capture_is_flagged(xdisplay):
    win = window(xdisplay, 10, 10, 200, 100, 0x00FF00)
    assert shoot(win)["warnings"] == [
        "the capture is blank (every pixel is #00ff00): the window may not have drawn yet, or draws where a capture cannot see it"]


def test_a_window_stacked_above_is_named_with_how_much_it_covers(xdisplay):
    win = window(xdisplay, 10, 10, 200, 100, 0xFFFFFF)
    win.fill_rectangle(win.create_gc(foreground=0x000000), 0, 0, 10, 10)
    below = window(xdisplay, 300, 300, 50, 50, 0x112233)  # stacked above but elsewhere: not a cover
    cover = window(xdisplay, 110, 10, 100, 100, 0xFF0000)  # over the right half
    xdisplay.sync()
    warnings = shoot(win)["warnings"]
    assert len(warnings) == 1
    assert warnings[0].startswith("window %s is stacked above it and covers 50%% of it" % hex(cover.id))
    assert hex(below.id) not in warnings[0]
    # Raised above the cover, the window is whole again.
    win.configure(stack_mode=X.Above)
    xdisplay.sync()
    assert "warnings" not in shoot(win)
