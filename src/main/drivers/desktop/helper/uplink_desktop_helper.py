#!/usr/bin/env python3
"""Uplink's desktop helper: one long-lived process that does the native work of the desktop
driver, so a crash or hang here cannot take the hub down.

Protocol: JSON lines, requests on stdin and replies on stdout. Native libraries (GTK, AT-SPI,
Xlib) print to stdout at will, so at startup the protocol takes private copies of both and fd 1
becomes stderr: whatever they print lands with the helper's diagnostics, never in a reply. Each
request is
  {"id": 7, "op": "<op>", "target": {"window": "0x3a00007", "pid": 123, "start_time": 456},
   "args": {...}, "interaction": "semantic_ui" | "visual_ui"}
and each reply is {"id": 7, "ok": true, "result": ...} or
  {"id": 7, "ok": false, "error": {"kind", "message", "hint"?, "evidence"?}}.
Ops are the driver's ops (observe, tree, find, screenshot, activate, set-text, click, type, key)
with the driver's args and results, plus helper-only ops (hello, doctor, windows, element).
Window ids are opaque strings; `target` is the channel's binding and is re-checked before every
op that reads or drives the window. Requests are served one at a time, in order.
"""
import base64
import json
import os
import sys
import traceback
import warnings

# PyGObject flags some AT-SPI 2.46 names as deprecated; they are the ones Debian 12 ships.
warnings.filterwarnings("ignore", category=DeprecationWarning)
# The helper may live in a read-only install: never write .pyc files beside it.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from errors import HelperError, read_process_name, read_start_time, target_changed  # noqa: E402

PROTOCOL = 1
VISUAL_OPS = ("screenshot", "click", "key")
INTERACTIONS = ("semantic_ui", "visual_ui")
# Arguments an op cannot run without, checked before any backend is touched.
REQUIRED_ARGS = {
    "click": ("x", "y"), "key": ("chord",), "type": ("text",), "activate": ("path",),
    "set-text": ("path", "text"), "element": ("path",),
}
INTERNAL_MESSAGE = "the desktop helper failed unexpectedly"
INTERNAL_HINT = "retry; the operator finds the detail in `uplink log` and the helper's stderr"
MAX_EVIDENCE = 4000


def parse_request(raw):
    """(id, op, target, args, interaction) of one request line, or Invalid naming what is wrong."""
    try:
        req = json.loads(raw)
    except ValueError as exc:
        raise HelperError("Invalid", "bad request: not JSON (%s)" % exc)
    if not isinstance(req, dict):
        raise HelperError("Invalid", "bad request: not a JSON object")
    req_id = req.get("id")
    if req_id is not None and not _is_int(req_id):
        raise HelperError("Invalid", "bad request: id must be an integer")
    return req_id, req


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def check_request(req):
    op, target, args, interaction = req.get("op"), req.get("target"), req.get("args"), req.get("interaction")
    if not isinstance(op, str):
        raise HelperError("Invalid", "bad request: op must be a string")
    if target is not None and not (isinstance(target, dict) and isinstance(target.get("window"), str)
                                   and _is_int(target.get("pid")) and (target.get("start_time") is None or _is_int(target["start_time"]))):
        raise HelperError("Invalid", "bad request: target must be {window: string, pid: integer, start_time: integer or null}")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise HelperError("Invalid", "bad request: args must be an object")
    if interaction is not None and interaction not in INTERACTIONS:
        raise HelperError("Invalid", "bad request: interaction must be semantic_ui or visual_ui")
    missing = [name for name in REQUIRED_ARGS.get(op, ()) if name not in args]
    if missing:
        raise HelperError("Invalid", "bad request: %s needs argument %s" % (op, ", ".join(missing)))
    return op, target, args, interaction


def reply_to(helper, raw, log):
    """The reply to one request line. Only HelperError is a deliberate answer: anything else is a
    bug or a native failure whose text may hold anything, so the agent gets a fixed message and
    the traceback goes to the operator (evidence, which the hub keeps out of agent replies) and `log`."""
    req_id = None
    try:
        req_id, req = parse_request(raw)
        result = helper.handle(*check_request(req))
        return {"id": req_id, "ok": True, "result": result}
    except HelperError as exc:
        return {"id": req_id, "ok": False, "error": exc.to_wire()}
    except Exception as exc:  # noqa: BLE001 — report, keep serving
        trace = traceback.format_exc()
        log.write(trace)
        log.flush()
        if helper._x11 is not None and type(exc).__name__ in ("ConnectionClosedError", "DisplayConnectionError"):
            helper._x11.reset()
            return {"id": req_id, "ok": False, "error": {"kind": "Unavailable", "message": "the connection to the X display broke",
                                                          "hint": "retry; the helper reconnects on the next call"}}
        return {"id": req_id, "ok": False, "error": {"kind": "Upstream", "message": INTERNAL_MESSAGE, "hint": INTERNAL_HINT,
                                                      "evidence": trace[-MAX_EVIDENCE:]}}


def is_a11y_window(target):
    """Windows known only through AT-SPI (Wayland) have ids "a11y-<pid>-<object>"."""
    return str(target.get("window", "")).startswith("a11y-")


def check_process(target):
    """The pid/start-time half of the binding check, for windows without an X11 id."""
    now = read_start_time(target["pid"])
    if now is None:
        raise target_changed("process %d no longer exists" % target["pid"])
    if target.get("start_time") is not None and now != target["start_time"]:
        raise target_changed("process %d start time is %d, bound start time is %d (pid reused)" % (target["pid"], now, target["start_time"]))


def platform():
    if os.environ.get("DISPLAY"):
        return "x11"
    if os.environ.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "none"


class Helper:
    def __init__(self):
        self.platform = platform()
        self._x11 = None
        self._a11y = None

    # Backends load lazily: a missing python3-xlib or gir1.2-atspi-2.0 disables one kind only.
    def x11(self):
        if self.platform == "wayland":
            raise HelperError("Unavailable", "visual input is not available in a Wayland session",
                              hint="Wayland does not let one client read other windows or inject input; use semantic_ui")
        if self.platform == "none":
            raise HelperError("Unavailable", "no display: DISPLAY is not set", hint="start Xvfb or a desktop session and set DISPLAY")
        if self._x11 is None:
            try:
                from x11 import X11
            except ImportError as exc:
                raise HelperError("Unavailable", "python3-xlib is missing (%s)" % exc, hint="apt-get install python3-xlib")
            self._x11 = X11(os.environ.get("DISPLAY"))
        return self._x11

    def a11y(self):
        if self._a11y is None:
            try:
                from a11y import A11y
            except (ImportError, ValueError) as exc:
                raise HelperError("Unavailable", "AT-SPI bindings are missing (%s)" % exc,
                                  hint="apt-get install python3-gi gir1.2-atspi-2.0 at-spi2-core")
            self._a11y = A11y()
        return self._a11y

    # -- ops ----------------------------------------------------------------------------------
    def handle(self, op, target, args, interaction):
        if op == "hello":
            return {"protocol": PROTOCOL, "platform": self.platform, "pid": os.getpid()}
        if op == "doctor":
            return self.doctor()
        if op == "windows":
            # `session` names the namespace the window ids live in (one X server run), so the
            # driver can keep its bindings across Uplink processes; None when it cannot tell.
            windows = self.windows()
            return {"windows": windows, "session": self.x11().server_session() if self.platform == "x11" else None}
        if target is None:
            raise HelperError("Invalid", "op %r needs a target" % op)
        if is_a11y_window(target) and (op in VISUAL_OPS or (op == "type" and interaction == "visual_ui")):
            if self.platform == "wayland":
                self.x11()  # raises the Wayland reason
            raise HelperError("Unavailable", "window %s is known only through AT-SPI: it has no X11 window to see or type into" % target["window"],
                hint="use semantic_ui ops (tree, find, activate, set-text, type)")
        if op == "observe":
            return self.observe(target)
        if op == "interactions":
            return {"interactions": self.interactions_of(target["pid"], None, is_a11y_window(target))}
        if op == "screenshot":
            return self.screenshot(target, args.get("max_width"))
        if op == "click":
            return self.x11().click(target, int(args["x"]), int(args["y"]), args.get("button", "left"))
        if op == "key":
            return self.x11().key(target, args["chord"])
        if op == "type" and interaction == "visual_ui":
            if args.get("path"):
                raise HelperError("Invalid", "path is for semantic_ui typing", hint="drop path, or use --interaction semantic_ui")
            return self.x11().type_text(target, args["text"])
        semantic = {
            "tree": lambda a, f: a.tree(f, args.get("max_depth"), args.get("max_nodes")),
            "find": lambda a, f: a.find(f, args.get("role"), args.get("name")),
            "activate": lambda a, f: a.activate(f, args["path"]),
            "set-text": lambda a, f: a.set_text(f, args["path"], args["text"]),
            "type": lambda a, f: a.type_text(f, args.get("path"), args["text"]),
            "element": lambda a, f: a.bounds(f, args["path"]),
        }
        if op not in semantic:
            raise HelperError("Invalid", "unknown op %r" % op, hint="see the driver's ops")
        if op == "type" and interaction != "semantic_ui":
            raise HelperError("Invalid", "type needs an interaction kind (semantic_ui or visual_ui)")
        a11y, frame = self.semantic_frame(target)
        return semantic[op](a11y, frame)

    def semantic_frame(self, target):
        if is_a11y_window(target):
            check_process(target)
            a11y = self.a11y()
            return a11y, a11y.frame_by_id(target["window"], target["pid"])
        facts = self.checked_facts(target)
        a11y = self.a11y()
        return a11y, a11y.frame(target["pid"], facts["title"], facts["geometry"])

    def checked_facts(self, target):
        if is_a11y_window(target):
            check_process(target)
            frame = self.a11y().frame_by_id(target["window"], target["pid"])
            facts = [f for f in self.a11y().frames() if f["window"] == target["window"]]
            if not facts or frame is None:
                raise target_changed("window %s no longer exists" % target["window"])
            return facts[0]
        x11 = self.x11()
        wid, win = x11.check_target(target)
        return x11.describe(wid, win)

    def observe(self, target):
        facts = self.checked_facts(target)
        return {
            "window": facts["window"], "title": facts["title"], "class": facts["class"],
            "pid": target["pid"], "process_name": read_process_name(target["pid"]) or "",
            "geometry": facts["geometry"], "focused": facts["focused"],
            "interactions": self.interactions_of(target["pid"], None, is_a11y_window(target)),
        }

    def screenshot(self, target, max_width):
        from png import encode_rgb, scale_rgb

        w, h, rgb, geo = self.x11().capture(target)
        warnings = self.x11().capture_warnings(target, w, h, rgb, geo)
        source_width = w
        if max_width is not None and 0 < int(max_width) < w:
            w, h, rgb = scale_rgb(w, h, rgb, int(max_width))
        shot = {"png_base64": base64.b64encode(encode_rgb(w, h, rgb)).decode("ascii"), "width": w, "height": h,
                "scale": w / source_width}
        if warnings:
            shot["warnings"] = warnings
        return shot

    def interactions_of(self, pid, pids=None, a11y_only=False):
        kinds = []
        try:
            if self.a11y().has_tree(pid, pids):
                kinds.append("semantic_ui")
        except HelperError:
            pass
        if self.platform == "x11" and not a11y_only:
            try:
                if self.x11().extensions()["XTEST"]:
                    kinds.append("visual_ui")
            except HelperError:
                pass
        return kinds

    def windows(self):
        if self.platform == "wayland":
            # No client may list other clients' windows under Wayland: the accessible frames are the windows.
            toplevels, pids = self.a11y().frames(), None
        else:
            toplevels = self.x11().toplevels()
            try:
                pids = self.a11y().apps_by_pid()
            except Exception:
                pids = {}
        out = []
        for w in toplevels:
            pid = w["pid"]
            w["start_time"] = read_start_time(pid) if pid is not None else None
            w["process_name"] = (read_process_name(pid) if pid is not None else None) or ""
            w["interactions"] = self.interactions_of(pid, pids, is_a11y_window(w)) if pid is not None else []
            out.append(w)
        return out

    def doctor(self):
        checks = {"platform": self.platform}
        lines = []
        ok = True
        if self.platform == "wayland":
            lines.append("Wayland session (no DISPLAY): visual_ui is unavailable because Wayland lets no client read "
                         "other windows or inject input; semantic_ui reaches applications through AT-SPI")
        elif self.platform == "none":
            ok = False
            lines.append("no display: DISPLAY is not set — hint: start Xvfb or a desktop session, or leave this driver out with \"hub\": {\"drivers\": [\"tmux\"]} in config.json")
        else:
            if os.environ.get("WAYLAND_DISPLAY"):
                lines.append("Wayland session with XWayland: only X11 clients are listed")
            try:
                ext = self.x11().extensions()
                lines.append("display %s reachable" % os.environ.get("DISPLAY"))
                for name in ("XTEST", "X-Resource"):
                    lines.append("%s extension %s" % (name, "present" if ext[name] else "MISSING"))
                    ok = ok and ext[name]
                checks.update(ext)
            except HelperError as exc:
                ok = False
                lines.append("display %s unreachable: %s" % (os.environ.get("DISPLAY"), exc.message))
        try:
            n = self.a11y().reachable()
            lines.append("accessibility bus reachable (%d applications)" % n)
            checks["a11y"] = True
        except HelperError as exc:
            ok = False
            checks["a11y"] = False
            lines.append("accessibility: %s%s" % (exc.message, " — hint: %s" % exc.hint if exc.hint else ""))
        except Exception as exc:  # gi raises GLib.Error and others
            ok = False
            checks["a11y"] = False
            lines.append("accessibility bus unreachable: %s — hint: start a D-Bus session (dbus-launch) and at-spi2-core" % exc)
        return {"ok": ok, "lines": lines, "checks": checks}


def private_stdio():
    """(requests, replies): private copies of stdin and stdout; fd 0 then reads /dev/null and fd 1
    writes to stderr, so no library can steal a request or corrupt a reply."""
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8", errors="replace")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout.flush()
    os.dup2(2, 1)
    return requests, replies


def main():
    requests, replies = private_stdio()
    helper = Helper()
    for raw in requests:
        if not raw.strip():
            continue
        replies.write(json.dumps(reply_to(helper, raw, sys.stderr)) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
