#!/usr/bin/env python3
"""The demo's target application: a small sign-up form an agent fills in through the
accessibility tree (AT-SPI), and a sketch pad (a canvas) that has no accessibility tree at all, so
the only way to click in it is by pixels.

Every state change is printed to stdout as one JSON line ({"event": ...}), which the demo and its
tests read as the application's own account of what happened.
"""
import json
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

TITLE = "Uplink Demo - Sign-up"
WIDTH, HEIGHT = 480, 420
# The sketch pad fills the bottom of the window; the scripted agent aims at its middle.
PAD_HEIGHT = 160


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    state = {"name": "", "email": "", "saved": False}
    win = Gtk.Window(title=TITLE)
    win.set_default_size(WIDTH, HEIGHT)
    win.set_resizable(False)
    win.connect("destroy", Gtk.main_quit)

    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
    box.set_border_width(12)
    win.add(box)

    def field(label):
        box.pack_start(Gtk.Label(label=label, xalign=0), False, False, 0)
        entry = Gtk.Entry()
        entry.get_accessible().set_name(label)
        box.pack_start(entry, False, False, 0)
        return entry

    name = field("Name")
    email = field("Email")
    save = Gtk.Button(label="Save")
    box.pack_start(save, False, False, 0)
    status = Gtk.Label(label="Not saved yet", xalign=0)
    box.pack_start(status, False, False, 0)
    box.pack_start(Gtk.Label(label="Sketch pad (pixels only, no accessibility tree):", xalign=0), False, False, 0)

    # The sketch pad: a plain event box painted by CSS (no cairo bindings needed). It has no
    # children and no name, so assistive technology sees nothing inside it to act on.
    css = Gtk.CssProvider()
    css.load_from_data(b"#pad { background-color: #1f2430; } #pad.hit { background-color: #2f9e5b; }")
    Gtk.StyleContext.add_provider_for_screen(win.get_screen(), css, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION)
    pad = Gtk.EventBox()
    pad.set_name("pad")
    pad.set_size_request(-1, PAD_HEIGHT)
    pad.get_accessible().set_name("")
    box.pack_end(pad, False, False, 0)
    clicks = []

    def pressed(_widget, event):
        clicks.append((int(event.x), int(event.y)))
        pad.get_style_context().add_class("hit")
        emit({"event": "pad-click", "x": int(event.x), "y": int(event.y), "clicks": len(clicks)})
        return True

    def changed(widget, key):
        state[key] = widget.get_text()
        emit({"event": key, key: state[key]})

    def saved(_widget):
        state["saved"] = True
        status.set_text("Saved: %s <%s>" % (state["name"], state["email"]))
        emit({"event": "saved", "name": state["name"], "email": state["email"]})

    pad.connect("button-press-event", pressed)
    name.connect("changed", changed, "name")
    email.connect("changed", changed, "email")
    save.connect("clicked", saved)

    win.show_all()

    def announce():
        emit({"event": "ready", "pid": os.getpid(), "title": TITLE})
        return False

    GLib.timeout_add(50, announce)
    Gtk.main()


if __name__ == "__main__":
    main()
