#!/usr/bin/env python3
"""Notes in a directory, as an Uplink driver written with the Python SDK.

Each `<name>.md` file in the notes directory is a channel `notes:<name>`. Ops: `read` and
`search` (read-only), `wait-for` (read-only, waits until a note contains a text), `append`
(mutating: the operator approves it). The directory is the first argument, else $NOTES_DIR,
else `notes` in the working directory (the hub starts drivers in its data directory).
"""
import os
import re
import sys
import time

# The hub runs its own copy of the file it admitted and names the installed one in UPLINK_DRIVER_FILE.
HERE = os.path.dirname(os.path.abspath(os.environ.get("UPLINK_DRIVER_FILE") or __file__))
# The SDK is one file: beside this one when copied, else in the Uplink checkout.
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "..", "..", "..", "sdk", "python"))

from uplink_driver import Driver, DriverError  # noqa: E402

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
MAX_APPEND = 64 * 1024
MAX_NOTE = 1024 * 1024

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("NOTES_DIR", "notes"))
driver = Driver("notes", summary="Notes in %s: one channel per <name>.md" % root)
LIST_HINT = "list the notes with `uplink channels`"


def note_path(name):
    if not NAME.match(name):
        raise DriverError("Invalid", "%r is not a note name" % name, "names are letters, digits, - and _ (up to 64)")
    return os.path.join(root, name + ".md")


def read_note(name):
    path = note_path(name)
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            return f.read(MAX_NOTE)
    except FileNotFoundError:
        raise DriverError("NotFound", "no note named %s" % name, LIST_HINT)


@driver.channels
def channels():
    try:
        names = sorted(f[:-3] for f in os.listdir(root) if f.endswith(".md") and NAME.match(f[:-3]))
    except FileNotFoundError:
        return []
    return [{"addr": n, "labels": [n], "detail": {"file": os.path.join(root, n + ".md")}} for n in names]


@driver.op("read", "The note's text", mutating=False,
           params_schema={"type": "object", "additionalProperties": False, "properties": {}},
           result_schema={"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}})
def read(call):
    return {"text": read_note(call.addr)}


@driver.op("append", "Append a line of text to the note (creates it)", mutating=True,
           params_schema={"type": "object", "additionalProperties": False, "required": ["text"],
                          "properties": {"text": {"type": "string", "minLength": 1, "maxLength": MAX_APPEND}}},
           result_schema={"type": "object", "required": ["bytes"], "properties": {"bytes": {"type": "integer"}}})
def append(call):
    text = call.args.get("text")
    if not isinstance(text, str) or not text:
        raise DriverError("Invalid", "append needs a non-empty text", 'pass {"text": "…"}')
    path = note_path(call.addr)
    os.makedirs(root, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    return {"bytes": os.path.getsize(path)}


@driver.preview("append")
def preview_append(call):
    return {"text": "append %d characters to note %s" % (len(call.args.get("text", "")), call.addr)}


@driver.op("search", "Lines of the note that contain a text (case-insensitive)", mutating=False,
           params_schema={"type": "object", "additionalProperties": False, "required": ["query"],
                          "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 256},
                                         "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}}},
           result_schema={"type": "object", "required": ["matches"], "properties": {"matches": {"type": "array", "items": {
               "type": "object", "required": ["line", "text"],
               "properties": {"line": {"type": "integer"}, "text": {"type": "string"}}}}}})
def search(call):
    query = call.args["query"].lower()
    limit = call.args.get("limit", 20)
    matches = []
    for number, line in enumerate(read_note(call.addr).splitlines(), 1):
        if query in line.lower():
            matches.append({"line": number, "text": line})
            if len(matches) >= limit:
                break
    return {"matches": matches}


@driver.op("wait-for", "Wait until the note contains a text (another agent writing it)", mutating=False,
           params_schema={"type": "object", "additionalProperties": False, "required": ["text"],
                          "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 256},
                                         "timeout_ms": {"type": "integer", "minimum": 0, "maximum": 600000, "default": 30000}}},
           result_schema={"type": "object", "required": ["found"], "properties": {"found": {"type": "boolean"}}})
def wait_for(call):
    deadline = time.monotonic() + call.args.get("timeout_ms", 30000) / 1000
    while True:
        call.raise_if_cancelled()
        try:
            if call.args["text"] in read_note(call.addr):
                return {"found": True}
        except DriverError as e:
            if e.kind != "NotFound":
                raise
        if time.monotonic() >= deadline:
            return {"found": False}
        call.cancelled.wait(0.1)


@driver.doctor
def doctor():
    if not os.path.isdir(root):
        return False, ["the notes directory %s does not exist: create it, or pass another one as the first argument" % root]
    return True, ["%d notes in %s" % (len(channels()), root)]


if __name__ == "__main__":
    sys.exit(driver.run())
