"""The AT-SPI side of the helper: finds the bound window's accessible frame by process id and
reads or drives its elements (Action, EditableText, Text).

Element paths are index paths from the window's frame: "/" is the frame, "/0/2/1" the second
child of the third child of its first child. A selector "//<role>[<name>]" (role name as in
`tree`, exact name) is accepted too and must match exactly one element.
"""
import os
import re

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi, Gio, GLib  # noqa: E402

from errors import HelperError  # noqa: E402

DEFAULT_MAX_DEPTH = 16
DEFAULT_MAX_NODES = 400
SEARCH_LIMIT = 5000
SELECTOR = re.compile(r"^//([^\[\]]+)(?:\[(.*)\])?$")


def _pump():
    ctx = GLib.MainContext.default()
    while ctx.iteration(False):
        pass


class A11y:
    """AT-SPI access; the library connects to the accessibility bus found through the session bus."""

    def __init__(self, timeout_ms=3000):
        self._ready = False
        self._address = None
        self._timeout_ms = timeout_ms

    def _init(self):
        if not self._ready:
            # libatspi aborts the whole process when it cannot reach its bus, and blocks for
            # seconds then answers "-1 applications" when the registry is missing or hung: try
            # both first, the way libatspi finds them, and refuse cleanly instead.
            address = _check_bus(self._timeout_ms)
            _check_registry(address, self._timeout_ms)
            Atspi.init()
            # A hung application must not block the helper forever: bound each D-Bus call.
            Atspi.set_timeout(self._timeout_ms, self._timeout_ms * 2)
            self._address = address
            self._ready = True
        _pump()

    def reachable(self):
        """How many applications the registry lists; the registry is asked afresh every time."""
        if self._ready:
            _check_registry(self._address, self._timeout_ms)
        self._init()
        count = Atspi.get_desktop(0).get_child_count()
        if count < 0:
            raise HelperError("Unavailable", "the AT-SPI registry did not list the applications",
                              hint="restart the desktop session's at-spi2-registryd (at-spi2-core)")
        return count

    def apps_by_pid(self):
        self._init()
        desktop = Atspi.get_desktop(0)
        out = {}
        for i in range(desktop.get_child_count()):
            try:
                app = desktop.get_child_at_index(i)
                if app is None:
                    continue
                out.setdefault(app.get_process_id(), []).append(app)
            except GLib.Error:
                continue  # an application that went away or does not answer
        return out

    def has_tree(self, pid, pids=None):
        apps = (pids if pids is not None else self.apps_by_pid()).get(pid, [])
        for app in apps:
            try:
                if app.get_child_count() > 0:
                    return True
            except GLib.Error:
                continue
        return False

    # -- windows known only to AT-SPI (Wayland) -------------------------------------------------
    def frames(self):
        """Showing top-level frames of every accessible application, as window facts. Their ids
        ("a11y-<pid>-<object>") come from the frame's AT-SPI object path, stable for its lifetime."""
        out = []
        for pid, apps in self.apps_by_pid().items():
            for app in apps:
                try:
                    for i in range(app.get_child_count()):
                        frame = app.get_child_at_index(i)
                        if frame is None or not _has(frame, Atspi.StateType.SHOWING):
                            continue
                        ext = _extents(frame, Atspi.CoordType.SCREEN) or (0, 0, 0, 0)
                        out.append({
                            "window": frame_id(pid, frame), "title": frame.get_name() or "",
                            "class": [app.get_name() or ""], "pid": pid, "net_wm_pid": None, "xres_pid": None,
                            "geometry": {"x": ext[0], "y": ext[1], "width": ext[2], "height": ext[3]},
                            "focused": _has(frame, Atspi.StateType.ACTIVE),
                        })
                except GLib.Error:
                    continue
        return out

    def frame_by_id(self, window, pid):
        """The frame an "a11y-" id names, or Rejected "target changed" when it is gone."""
        for app in self.apps_by_pid().get(pid, []):
            try:
                app.clear_cache()
                for i in range(app.get_child_count()):
                    frame = app.get_child_at_index(i)
                    if frame is not None and frame_id(pid, frame) == window:
                        if not _has(frame, Atspi.StateType.SHOWING):
                            raise HelperError("Rejected", "target changed", hint="show the window, then retry",
                                              evidence="window %s is not showing" % window)
                        return frame
            except GLib.Error:
                continue
        raise HelperError("Rejected", "target changed", hint="list channels again and act on the new channel",
                          evidence="window %s of process %d no longer exists" % (window, pid))

    # -- the frame of a bound window -----------------------------------------------------------
    def frame(self, pid, title, geometry):
        apps = self.apps_by_pid().get(pid, [])
        if not apps:
            raise HelperError("Unavailable", "process %d exposes no accessibility tree" % pid,
                              hint="use --interaction visual_ui, or start the application with accessibility enabled")
        frames = []
        for app in apps:
            try:
                app.clear_cache()
                for i in range(app.get_child_count()):
                    child = app.get_child_at_index(i)
                    if child is not None and child.get_state_set().contains(Atspi.StateType.SHOWING):
                        frames.append(child)
            except GLib.Error:
                continue
        if len(frames) == 1:
            return frames[0]
        named = [f for f in frames if (f.get_name() or "") == title]
        if len(named) == 1:
            return named[0]
        pool = named or frames
        placed = [f for f in pool if _extents(f, Atspi.CoordType.SCREEN) == geometry_tuple(geometry)]
        if len(placed) == 1:
            return placed[0]
        if not frames:
            raise HelperError("Unavailable", "process %d shows no accessible window" % pid,
                              hint="use --interaction visual_ui")
        raise HelperError("Rejected", "ambiguous target: %d accessible windows of process %d match" % (len(pool), pid),
                          hint="close the other windows of this application, or use --interaction visual_ui",
                          evidence=", ".join(repr(f.get_name()) for f in pool))

    # -- reading --------------------------------------------------------------------------------
    def node(self, acc, path, with_children=None):
        out = {
            "role": acc.get_role_name() or "unknown",
            "name": acc.get_name() or "",
            "states": _states(acc),
            "bounds": _bounds(acc),
            "path": path,
            "child_count": acc.get_child_count(),
            "actions": _actions(acc),
        }
        # The same optional fields as the Win32 helper: an editable's text (never a password's).
        if _iface(acc, 'EditableText') and acc.get_role() != Atspi.Role.PASSWORD_TEXT:
            out["value"] = _read_text(acc)
        if with_children is not None:
            out["children"] = with_children
        return out

    def tree(self, frame, max_depth, max_nodes):
        max_depth = DEFAULT_MAX_DEPTH if max_depth is None else max_depth
        max_nodes = DEFAULT_MAX_NODES if max_nodes is None else max_nodes
        count = [0]
        truncated = [False]

        def walk(acc, path, depth):
            count[0] += 1
            kids = []
            n = acc.get_child_count()
            for i in range(n):
                if depth >= max_depth or count[0] >= max_nodes:
                    truncated[0] = True
                    break
                child = acc.get_child_at_index(i)
                if child is not None:
                    kids.append(walk(child, _join(path, i), depth + 1))
            return self.node(acc, path, kids)

        root = walk(frame, "/", 0)
        return {"nodes": [root], "node_count": count[0], "truncated": truncated[0]}

    def find(self, frame, role, name, limit=200):
        needle = name.lower() if name else None
        matches = []
        for acc, path in _walk(frame):
            if role and (acc.get_role_name() or "") != role:
                continue
            if needle is not None and needle not in (acc.get_name() or "").lower():
                continue
            matches.append(self.node(acc, path))
            if len(matches) >= limit:
                break
        return {"matches": matches, "count": len(matches)}

    def resolve(self, frame, path):
        """The one element a path names; NotFound when gone, Rejected when ambiguous."""
        if not isinstance(path, str) or not path:
            raise HelperError("Invalid", "path must be a non-empty string", hint="take a path from tree or find")
        sel = SELECTOR.match(path)
        if sel:
            role, name = sel.group(1), sel.group(2)
            hits = [(acc, p) for acc, p in _walk(frame)
                    if (acc.get_role_name() or "") == role and (name is None or (acc.get_name() or "") == name)]
            if not hits:
                raise HelperError("NotFound", "no element matches %s" % path, hint="run tree or find to see the elements")
            if len(hits) > 1:
                raise HelperError("Rejected", "ambiguous target: %d elements match %s" % (len(hits), path),
                                  hint="use one of the index paths in the evidence",
                                  evidence=", ".join(p for _, p in hits[:20]))
            return hits[0]
        if not re.match(r"^/(\d+(/\d+)*)?$", path):
            raise HelperError("Invalid", "bad element path %r" % path, hint="use an index path like /0/2/1 or //push button[OK]")
        acc = frame
        for part in [p for p in path.split("/") if p]:
            idx = int(part)
            if idx >= acc.get_child_count():
                raise HelperError("NotFound", "element %s no longer exists" % path, hint="run tree again and use a fresh path")
            acc = acc.get_child_at_index(idx)
            if acc is None:
                raise HelperError("NotFound", "element %s no longer exists" % path, hint="run tree again and use a fresh path")
        return acc, path

    # -- acting ---------------------------------------------------------------------------------
    def activate(self, frame, path):
        acc, path = self.resolve(frame, path)
        _require_enabled(acc, path)
        if not _iface(acc, 'Action') or Atspi.Action.get_n_actions(acc) < 1:
            raise HelperError("Invalid", "element %s (%s) has no default action" % (path, acc.get_role_name()),
                              hint="activate a button, menu item, check box or link; use set-text for text fields")
        name = Atspi.Action.get_action_name(acc, 0)
        if not Atspi.Action.do_action(acc, 0):
            raise HelperError("Upstream", "the application refused action %r on %s" % (name, path))
        return {"activated": True, "action": name, "element": self.node(acc, path)}

    def set_text(self, frame, path, text):
        acc, path = self.resolve(frame, path)
        _require_editable(acc, path)
        if not Atspi.EditableText.set_text_contents(acc, text):
            raise HelperError("Upstream", "the application refused to set the text of %s" % path)
        now = _read_text(acc)
        return {"text": now, "confirmed": now == text, "element": self.node(acc, path)}

    def type_text(self, frame, path, text):
        if path:
            acc, path = self.resolve(frame, path)
        else:
            acc, path = self._typing_target(frame)
        _require_editable(acc, path)
        pos = Atspi.Text.get_caret_offset(acc)
        if pos < 0:
            pos = Atspi.Text.get_character_count(acc)
        if not Atspi.EditableText.insert_text(acc, pos, text, len(text.encode("utf-8"))):
            raise HelperError("Upstream", "the application refused to insert text into %s" % path)
        now = _read_text(acc)
        return {"typed": len(text), "text": now, "confirmed": text in now, "element": self.node(acc, path)}

    def _typing_target(self, frame):
        """The focused editable element, else the only showing one; several ⇒ refused."""
        editables = []
        for acc, p in _walk(frame):
            if _iface(acc, 'EditableText') and _has(acc, Atspi.StateType.EDITABLE) and _has(acc, Atspi.StateType.SHOWING):
                if _has(acc, Atspi.StateType.FOCUSED):
                    return acc, p
                editables.append((acc, p))
        if len(editables) == 1:
            return editables[0]
        if not editables:
            raise HelperError("NotFound", "the window has no editable text element", hint="use tree to find one")
        raise HelperError("Rejected", "ambiguous target: no focused editable and %d candidates" % len(editables),
                          hint="pass path (from tree or find) to say which element",
                          evidence=", ".join(p for _, p in editables[:20]))

    def bounds(self, frame, path):
        acc, path = self.resolve(frame, path)
        return self.node(acc, path)


_BUS_FLAGS = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION


def _bus_address(timeout_ms):
    """The accessibility bus address in libatspi's order: env, X root property, session bus."""
    if os.environ.get("AT_SPI_BUS_ADDRESS"):
        return os.environ["AT_SPI_BUS_ADDRESS"]
    session = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if not session:
        # Without it GDBus would "autolaunch" a private session bus nobody else shares.
        raise HelperError("Unavailable", "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set), so no accessibility bus",
                          hint="start a D-Bus session (dbus-launch) shared by Uplink and the applications")
    if os.environ.get("DISPLAY"):
        try:
            from Xlib import X, display

            d = display.Display()
            try:
                prop = d.screen().root.get_full_property(d.intern_atom("AT_SPI_BUS"), X.AnyPropertyType)
            finally:
                d.close()
            if prop is not None and prop.value:
                value = prop.value
                return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        except Exception:  # noqa: BLE001 — no X, no property: try the session bus
            pass
    try:
        conn = Gio.DBusConnection.new_for_address_sync(session, _BUS_FLAGS, None, None)
        reply = conn.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                               GLib.VariantType.new("(s)"), Gio.DBusCallFlags.NONE, timeout_ms, None)
        conn.close_sync(None)
        return reply.unpack()[0]
    except GLib.Error as exc:
        raise HelperError("Unavailable", "accessibility bus not found through the session bus: %s" % exc.message,
                          hint="install at-spi2-core; Uplink and the applications must share one D-Bus session")


def _check_bus(timeout_ms):
    """The accessibility bus address, once a connection to it succeeded."""
    address = _bus_address(timeout_ms)
    try:
        Gio.DBusConnection.new_for_address_sync(address, _BUS_FLAGS, None, None).close_sync(None)
    except GLib.Error as exc:
        raise HelperError("Unavailable", "accessibility bus %s unreachable: %s" % (address, exc.message),
                          hint="restart the desktop session's at-spi-bus-launcher, or use --interaction visual_ui")
    return address


def _check_registry(address, timeout_ms):
    """One bounded call to the registry, the service that lists the accessible applications."""
    try:
        conn = Gio.DBusConnection.new_for_address_sync(address, _BUS_FLAGS, None, None)
    except GLib.Error as exc:
        raise HelperError("Unavailable", "accessibility bus %s unreachable: %s" % (address, exc.message),
                          hint="restart the desktop session's at-spi-bus-launcher, or use --interaction visual_ui")
    try:
        conn.call_sync("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root", "org.freedesktop.DBus.Properties",
                       "Get", GLib.Variant("(ss)", ("org.a11y.atspi.Accessible", "ChildCount")), GLib.VariantType.new("(v)"),
                       Gio.DBusCallFlags.NONE, timeout_ms, None)
    except GLib.Error as exc:
        remote = Gio.DBusError.get_remote_error(exc) or ""
        if remote in ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"):
            raise HelperError("Unavailable", "no AT-SPI registry on the accessibility bus %s" % address,
                              hint="install at-spi2-core and restart the desktop session (its bus starts at-spi2-registryd)")
        Gio.DBusError.strip_remote_error(exc)
        raise HelperError("Unavailable", "the AT-SPI registry on the accessibility bus %s is not answering (%s)"
                          % (address, " ".join(exc.message.split())[:200]),
                          hint="restart at-spi2-registryd or the desktop session; visual_ui still works")
    finally:
        conn.close_sync(None)


def frame_id(pid, frame):
    tail = re.sub(r"[^A-Za-z0-9_]", "", (getattr(frame, "path", "") or "").rsplit("/", 1)[-1]) or "0"
    return "a11y-%d-%s" % (pid, tail)


def _join(path, i):
    return "/%d" % i if path == "/" else "%s/%d" % (path, i)


def _walk(frame):
    """Depth-first (element, path) pairs, bounded so a huge tree cannot stall the helper."""
    stack = [(frame, "/")]
    seen = 0
    while stack and seen < SEARCH_LIMIT:
        acc, path = stack.pop()
        seen += 1
        yield acc, path
        n = acc.get_child_count()
        for i in reversed(range(n)):
            child = acc.get_child_at_index(i)
            if child is not None:
                stack.append((child, _join(path, i)))


def _iface(acc, name):
    return name in acc.get_interfaces()


def _states(acc):
    return sorted(Atspi.StateType(s).value_nick for s in acc.get_state_set().get_states())


def _has(acc, state):
    return acc.get_state_set().contains(state)


def _extents(acc, coord):
    try:
        e = acc.get_extents(coord)
        return (e.x, e.y, e.width, e.height)
    except (GLib.Error, NotImplementedError, AttributeError):
        return None


def _bounds(acc):
    ext = _extents(acc, Atspi.CoordType.WINDOW) if _iface(acc, 'Component') else None
    if ext is None:
        return None
    return {"x": ext[0], "y": ext[1], "width": ext[2], "height": ext[3]}


def geometry_tuple(g):
    return (g["x"], g["y"], g["width"], g["height"]) if g else None


def _actions(acc):
    """The element's action names (AT-SPI Action interface), in order; the first is its default."""
    if not _iface(acc, 'Action'):
        return []
    try:
        return [Atspi.Action.get_action_name(acc, i) or "" for i in range(Atspi.Action.get_n_actions(acc))]
    except GLib.Error:
        return []


def _read_text(acc):
    return Atspi.Text.get_text(acc, 0, -1) if _iface(acc, 'Text') else ""


def _require_enabled(acc, path):
    if not _has(acc, Atspi.StateType.SENSITIVE) or not _has(acc, Atspi.StateType.ENABLED):
        raise HelperError("Rejected", "element %s is disabled" % path, hint="wait until the application enables it")


def _require_editable(acc, path):
    if not _iface(acc, 'EditableText') or not _has(acc, Atspi.StateType.EDITABLE):
        raise HelperError("Invalid", "element %s (%s) is not editable text" % (path, acc.get_role_name()),
                          hint="target an entry or text field (find role 'text' or 'entry')")
    _require_enabled(acc, path)
