"""The X11 side of the helper: window listing, binding checks, screenshots and XTest input.

Window ids leave this module as opaque strings ("0x3a00007"); nothing X11-typed crosses the
helper protocol, so other platform backends can answer the same requests.
"""
import socket
import struct
import time

from Xlib import X, XK, Xatom, display, error
from Xlib.ext import res, xtest

from errors import HelperError, read_start_time, target_changed

MODIFIERS = {
    "ctrl": "Control_L", "control": "Control_L", "shift": "Shift_L", "alt": "Alt_L",
    "super": "Super_L", "meta": "Meta_L", "win": "Super_L",
}
BUTTONS = {"left": 1, "middle": 2, "right": 3}
CHAR_KEYSYMS = {"\n": "Return", "\r": "Return", "\t": "Tab", " ": "space"}


def parse_window_id(window):
    try:
        value = int(window, 16)
    except (TypeError, ValueError):
        raise HelperError("Invalid", "not a window id: %r" % (window,),
                          hint="use a channel from channel_list, e.g. desktop:0x3a00007")
    if value <= 0 or value > 0x1FFFFFFF:
        raise HelperError("Invalid", "not a window id: %r" % (window,))
    return value


class X11:
    """One connection to the X server, opened lazily and reopened after it breaks."""

    def __init__(self, display_name=None):
        self._name = display_name
        self._d = None

    # -- connection ---------------------------------------------------------------------------
    def d(self):
        if self._d is None:
            try:
                self._d = display.Display(self._name)
            except Exception as exc:  # Xlib raises several unrelated types here
                raise HelperError("Unavailable", "cannot open X display %s: %s" % (self._name or "", exc),
                                  hint="start an X server (Xvfb) and set DISPLAY")
            self._pid_atom = self._d.intern_atom("_NET_WM_PID")
            self._client_list = self._d.intern_atom("_NET_CLIENT_LIST")
            self._net_wm_name = self._d.intern_atom("_NET_WM_NAME")
            self._utf8 = self._d.intern_atom("UTF8_STRING")
        return self._d

    def reset(self):
        try:
            if self._d is not None:
                self._d.close()
        except Exception:
            pass
        self._d = None

    def server_session(self):
        """Names this X server instance, in whose namespace window ids are unique: the server's
        pid (the peer of our unix socket) and its start time. None for a remote (TCP) display."""
        sock = getattr(self.d().display, "socket", None)
        if sock is None or sock.family != socket.AF_UNIX:
            return None
        try:
            pid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[0]
        except OSError:
            return None
        start = read_start_time(pid) if pid > 0 else None
        return "x11-%d-%d" % (pid, start) if start is not None else None

    def extensions(self):
        d = self.d()
        return {"XTEST": d.has_extension("XTEST"), "X-Resource": d.has_extension("X-Resource")}

    # -- facts about windows ------------------------------------------------------------------
    def _window(self, wid):
        return self.d().create_resource_object("window", wid)

    def net_wm_pid(self, win):
        prop = win.get_full_property(self._pid_atom, Xatom.CARDINAL)
        return int(prop.value[0]) if prop is not None and len(prop.value) > 0 else None

    def xres_pid(self, wid):
        d = self.d()
        if not d.has_extension("X-Resource"):
            return None
        try:
            reply = d.res_query_client_ids([{"client": wid, "mask": res.LocalClientPIDMask}])
        except error.XError:
            return None
        for entry in reply.ids:
            if entry.spec.mask == res.LocalClientPIDMask and len(entry.value) > 0:
                return int(entry.value[0])
        return None

    def title(self, win):
        prop = win.get_full_property(self._net_wm_name, self._utf8)
        if prop is not None and prop.value:
            value = prop.value
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        name = win.get_wm_name()
        if isinstance(name, bytes):
            return name.decode("latin-1")
        return name or ""

    def geometry(self, win):
        geo = win.get_geometry()
        pos = win.translate_coords(self.d().screen().root, 0, 0)
        # translate_coords gives the root origin in window coordinates: negate for the window's.
        return {"x": -pos.x, "y": -pos.y, "width": geo.width, "height": geo.height}

    def focused_window(self):
        focus = self.d().get_input_focus().focus
        return focus.id if hasattr(focus, "id") else None

    def is_self_or_descendant(self, wid, candidate):
        """Whether `candidate` is `wid` or lies inside it (GTK may focus a child window)."""
        d = self.d()
        root = d.screen().root.id
        cur = candidate
        for _ in range(64):
            if cur is None or cur in (0, 1, root):
                return False
            if cur == wid:
                return True
            try:
                cur = self._window(cur).query_tree().parent.id
            except error.XError:
                return False
        return False

    def toplevels(self):
        """Mapped top-level application windows: _NET_CLIENT_LIST when a WM keeps one, else
        the root's mapped, non-override-redirect children that carry a WM_CLASS or a title."""
        d = self.d()
        root = d.screen().root
        ids = []
        clients = root.get_full_property(self._client_list, Xatom.WINDOW)
        if clients is not None and len(clients.value) > 0:
            ids = [int(w) for w in clients.value]
        else:
            ids = [w.id for w in root.query_tree().children]
        out = []
        for wid in ids:
            try:
                win = self._window(wid)
                attrs = win.get_attributes()
                if attrs.map_state != X.IsViewable or attrs.override_redirect:
                    continue
                wm_class = win.get_wm_class()
                title = self.title(win)
                if not wm_class and not title:
                    continue
                out.append(self.describe(wid, win, wm_class=wm_class, title=title))
            except error.XError:
                continue  # the window went away while we looked at it
        return out

    def describe(self, wid, win=None, wm_class=None, title=None):
        win = win or self._window(wid)
        net_pid = self.net_wm_pid(win)
        xres_pid = self.xres_pid(wid)
        focus = self.focused_window()
        return {
            "window": hex(wid),
            "title": title if title is not None else self.title(win),
            "class": list(wm_class or win.get_wm_class() or []),
            "geometry": self.geometry(win),
            "net_wm_pid": net_pid,
            "xres_pid": xres_pid,
            # X-Resource is the server's view of the connecting process and cannot be set by
            # the client; _NET_WM_PID is a client-set property. Prefer the former.
            "pid": xres_pid if xres_pid is not None else net_pid,
            "focused": focus is not None and self.is_self_or_descendant(wid, focus),
        }

    # -- the binding check --------------------------------------------------------------------
    def check_target(self, target):
        """Re-check (window, pid, start time) right before acting; raise Rejected on mismatch."""
        wid = parse_window_id(target.get("window"))
        pid = target.get("pid")
        start = target.get("start_time")
        win = self._window(wid)
        try:
            attrs = win.get_attributes()
        except error.XError:
            raise target_changed("window %s no longer exists" % hex(wid))
        if attrs.map_state != X.IsViewable:
            raise target_changed("window %s is not mapped (map_state %d)" % (hex(wid), attrs.map_state),
                                 hint="make the window visible, then retry")
        net_pid = self.net_wm_pid(win)
        xres_pid = self.xres_pid(wid)
        if net_pid is None and xres_pid is None:
            raise target_changed("window %s has neither _NET_WM_PID nor an X-Resource client pid" % hex(wid))
        for source, value in (("_NET_WM_PID", net_pid), ("X-Resource client pid", xres_pid)):
            if value is not None and value != pid:
                raise target_changed("window %s: %s is %d, bound pid is %d" % (hex(wid), source, value, pid))
        now = read_start_time(pid)
        if now is None:
            raise target_changed("process %d no longer exists" % pid)
        if start is not None and now != start:
            raise target_changed("process %d start time is %d, bound start time is %d (pid reused)" % (pid, now, start))
        return wid, win

    # -- visual input preconditions -----------------------------------------------------------
    def focus(self, wid, win):
        d = self.d()
        win.configure(stack_mode=X.Above)
        win.set_input_focus(X.RevertToParent, X.CurrentTime)
        d.sync()
        deadline = time.monotonic() + 0.5
        while True:
            focus = self.focused_window()
            if focus is not None and self.is_self_or_descendant(wid, focus):
                return
            if time.monotonic() > deadline:
                raise target_changed("window %s did not take keyboard focus (focus is on %s)"
                                     % (hex(wid), hex(focus) if focus else "none"),
                                     hint="close whatever holds the keyboard (a grab or modal dialog), then retry")
            time.sleep(0.02)

    def top_window_at(self, x, y):
        """The topmost mapped root child containing the root point (x, y)."""
        root = self.d().screen().root
        for child in reversed(root.query_tree().children):
            try:
                attrs = child.get_attributes()
                if attrs.map_state != X.IsViewable:
                    continue
                g = child.get_geometry()
                if g.x <= x < g.x + g.width and g.y <= y < g.y + g.height:
                    return child.id
            except error.XError:
                continue
        return None

    def require_xtest(self):
        if not self.d().has_extension("XTEST"):
            raise HelperError("Unavailable", "the X server has no XTEST extension",
                              hint="start Xvfb with +extension XTEST")

    # -- actions ------------------------------------------------------------------------------
    def click(self, target, x, y, button):
        self.require_xtest()
        wid, win = self.check_target(target)
        geo = self.geometry(win)
        if not (0 <= x < geo["width"] and 0 <= y < geo["height"]):
            raise HelperError("Rejected", "point outside the window",
                              hint="use window-relative coordinates inside %dx%d" % (geo["width"], geo["height"]),
                              evidence="(%d, %d) is outside %dx%d" % (x, y, geo["width"], geo["height"]))
        self.focus(wid, win)
        ax, ay = geo["x"] + x, geo["y"] + y
        top = self.top_window_at(ax, ay)
        if top is None or not self.is_self_or_descendant(top, wid):
            raise target_changed("point (%d, %d) is covered by window %s" % (x, y, hex(top) if top else "none"),
                                 hint="uncover the window, then retry")
        d = self.d()
        xtest.fake_input(d, X.MotionNotify, x=ax, y=ay)
        xtest.fake_input(d, X.ButtonPress, BUTTONS[button])
        xtest.fake_input(d, X.ButtonRelease, BUTTONS[button])
        d.sync()
        return {"clicked": True, "x": x, "y": y, "button": button, "screen_x": ax, "screen_y": ay}

    def type_text(self, target, text):
        self.require_xtest()
        wid, win = self.check_target(target)
        strokes = [self._keysym_for_char(ch) for ch in text]
        self.focus(wid, win)
        typed = 0
        for keysym in strokes:
            focus = self.focused_window()
            if focus is None or not self.is_self_or_descendant(wid, focus):
                raise target_changed("keyboard focus left window %s after %d of %d characters"
                                     % (hex(wid), typed, len(text)))
            self._stroke(keysym, [])
            typed += 1
        self.d().sync()
        return {"typed": typed}

    def key(self, target, chord):
        self.require_xtest()
        names = [p for p in chord.split("+")]
        if not chord or any(not p for p in names):
            raise HelperError("Invalid", "bad key chord %r" % chord, hint="keysym names joined by '+', e.g. ctrl+a or Return")
        mods = []
        for name in names[:-1]:
            mod = MODIFIERS.get(name.lower(), name)
            ks = XK.string_to_keysym(mod)
            if ks == 0:
                raise HelperError("Invalid", "unknown modifier %r in %r" % (name, chord), hint="use ctrl, shift, alt, super")
            mods.append(ks)
        keysym = XK.string_to_keysym(names[-1])
        if keysym == 0 and len(names[-1]) == 1:
            keysym = self._keysym_for_char(names[-1])
        if keysym == 0:
            raise HelperError("Invalid", "unknown key %r in %r" % (names[-1], chord),
                              hint="use X keysym names, e.g. Return, Tab, Escape, a, F5")
        wid, win = self.check_target(target)
        self.focus(wid, win)
        self._stroke(keysym, mods)
        self.d().sync()
        return {"sent": chord}

    # -- keyboard plumbing --------------------------------------------------------------------
    def _keysym_for_char(self, ch):
        if ch in CHAR_KEYSYMS:
            return XK.string_to_keysym(CHAR_KEYSYMS[ch])
        code = ord(ch)
        if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
            return code
        if code < 0x20:
            raise HelperError("Invalid", "cannot type control character U+%04X" % code, hint="use the key op for special keys")
        return 0x01000000 + code  # X's Unicode keysym range

    def _stroke(self, keysym, mods):
        d = self.d()
        keycode, shift, scratch = self._keycode(keysym)
        codes = [d.keysym_to_keycode(m) for m in mods]
        if shift:
            codes.append(d.keysym_to_keycode(XK.XK_Shift_L))
        codes.append(keycode)
        pressed = []
        done = False
        # A modifier left down or a borrowed keycode left bound would change every later keystroke
        # on this display, the operator's own included: undo them whatever fails on the way.
        try:
            if scratch is not None:
                d.change_keyboard_mapping(scratch, [(keysym,) * len(self._scratch_syms)])
                d.sync()
                time.sleep(0.02)
            for code in codes:
                xtest.fake_input(d, X.KeyPress, code)
                pressed.append(code)
            while pressed:
                xtest.fake_input(d, X.KeyRelease, pressed[-1])
                pressed.pop()
            done = True
        finally:
            self._undo(d, pressed, scratch, strict=done)

    def _undo(self, d, pressed, scratch, strict):
        """Releases keys still down and unbinds a borrowed keycode, trying every step; after a
        failure (`strict` false) the first error stays the one reported."""
        steps = [lambda c=c: xtest.fake_input(d, X.KeyRelease, c) for c in reversed(pressed)]
        if scratch is not None:
            def unbind():
                d.sync()
                time.sleep(0.02)  # let the client read the key before its mapping goes
                d.change_keyboard_mapping(scratch, [(0,) * len(self._scratch_syms)])
                d.sync()
            steps.append(unbind)
        failure = None
        for step in steps:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 — keep undoing
                failure = failure or exc
        if failure is not None and strict:
            raise failure

    def _keycode(self, keysym):
        """(keycode, needs shift, free keycode to borrow for this keysym or None)."""
        d = self.d()
        for keycode, index in d.keysym_to_keycodes(keysym):
            if index == 0:
                return keycode, False, None
            if index == 1:
                return keycode, True, None
        # Not on the keyboard: bind it to an unused keycode for one stroke (as xdotool does).
        first = d.display.info.min_keycode
        count = d.display.info.max_keycode - first + 1
        mapping = d.get_keyboard_mapping(first, count)
        for offset, syms in enumerate(mapping):
            if all(s == 0 for s in syms):
                self._scratch_syms = syms
                return first + offset, False, first + offset
        raise HelperError("Unavailable", "no free keycode to type keysym 0x%x" % keysym)

    # -- pixels -------------------------------------------------------------------------------
    def covering(self, wid, geo):
        """[(window id, fraction of `geo` it covers)] for each viewable window stacked above `wid`'s
        top-level window. XQueryTree lists the root's children bottom to top, which holds with or
        without a window manager (_NET_CLIENT_LIST_STACKING needs one)."""
        root = self.d().screen().root
        top = wid
        for _ in range(64):
            parent = self._window(top).query_tree().parent
            if parent is None or parent.id in (0, root.id):
                break
            top = parent.id
        children = root.query_tree().children
        ids = [c.id for c in children]
        if top not in ids:
            return []
        area = max(1, geo["width"] * geo["height"])
        out = []
        for child in children[ids.index(top) + 1:]:
            try:
                attrs = child.get_attributes()
                if attrs.map_state != X.IsViewable or attrs.win_class == X.InputOnly:
                    continue
                g = child.get_geometry()
            except error.XError:
                continue  # gone while we looked
            right, bottom = g.x + g.width + 2 * g.border_width, g.y + g.height + 2 * g.border_width
            w = min(geo["x"] + geo["width"], right) - max(geo["x"], g.x)
            h = min(geo["y"] + geo["height"], bottom) - max(geo["y"], g.y)
            if w > 0 and h > 0:
                out.append((child.id, w * h / area))
        return out

    def capture_warnings(self, target, width, height, rgb, geo):
        """Why a capture may not show what an action on the window meets, in words."""
        wid = parse_window_id(target.get("window"))
        warnings = []
        state = self._window(wid).get_full_property(self.d().intern_atom("_NET_WM_STATE"), Xatom.ATOM)
        if state is not None and self.d().intern_atom("_NET_WM_STATE_HIDDEN") in state.value:
            warnings.append("the window is minimized: the screenshot is not what it shows when restored")
        for other, fraction in self.covering(wid, geo):
            warnings.append("window %s is stacked above it and covers %d%% of it: the screenshot shows that "
                            "window there, and input there reaches that window" % (hex(other), max(1, round(fraction * 100))))
        if width < geo["width"] or height < geo["height"]:
            warnings.append("only %dx%d of its %dx%d pixels are on screen" % (width, height, geo["width"], geo["height"]))
        if rgb and rgb == rgb[:3] * (len(rgb) // 3):
            warnings.append("the capture is blank (every pixel is #%02x%02x%02x): the window may not have drawn "
                            "yet, or draws where a capture cannot see it" % tuple(rgb[:3]))
        return warnings

    def capture(self, target):
        """(width, height, RGB bytes) of the bound window as it is on screen."""
        wid, win = self.check_target(target)
        d = self.d()
        geo = self.geometry(win)
        screen = d.screen()
        x0, y0 = max(0, geo["x"]), max(0, geo["y"])
        x1 = min(screen.width_in_pixels, geo["x"] + geo["width"])
        y1 = min(screen.height_in_pixels, geo["y"] + geo["height"])
        if x1 <= x0 or y1 <= y0:
            raise HelperError("Unavailable", "window %s is entirely off screen" % hex(wid))
        w, h = x1 - x0, y1 - y0
        img = win.get_image(x0 - geo["x"], y0 - geo["y"], w, h, X.ZPixmap, 0xFFFFFFFF)
        data = img.data
        if len(data) != w * h * 4:
            raise HelperError("Unavailable", "unsupported X visual (%d bytes for %dx%d)" % (len(data), w, h),
                              hint="run the X server at 24-bit depth")
        rgb = bytearray(w * h * 3)
        # 32-bit ZPixmap pixels are B, G, R, pad on LSBFirst servers and pad, R, G, B on MSBFirst.
        r, g, b = (2, 1, 0) if d.display.info.image_byte_order == X.LSBFirst else (1, 2, 3)
        rgb[0::3] = data[r::4]
        rgb[1::3] = data[g::4]
        rgb[2::3] = data[b::4]
        return w, h, bytes(rgb), geo
