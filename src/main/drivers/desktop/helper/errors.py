"""Errors the helper reports to the driver: the DriverError kinds of Uplink's wire contract."""

KINDS = ("NotFound", "Unavailable", "Rejected", "Timeout", "Upstream", "Invalid")


class HelperError(Exception):
    """A failure with a kind, an actionable message, and optional hint/evidence."""

    def __init__(self, kind, message, hint=None, evidence=None):
        super().__init__(message)
        assert kind in KINDS
        self.kind = kind
        self.message = message
        self.hint = hint
        self.evidence = evidence

    def to_wire(self):
        wire = {"kind": self.kind, "message": self.message}
        if self.hint is not None:
            wire["hint"] = self.hint
        if self.evidence is not None:
            wire["evidence"] = self.evidence
        return wire


def target_changed(evidence, hint="list channels again and act on the new channel"):
    """The one refusal for a binding mismatch: nothing was injected."""
    return HelperError("Rejected", "target changed", hint=hint, evidence=evidence)


def read_start_time(pid):
    """Process start time in clock ticks since boot (/proc/<pid>/stat field 22), or None."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            raw = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    rest = raw[raw.rfind(")") + 2:].split()
    try:
        return int(rest[19])
    except (IndexError, ValueError):
        return None


def read_process_name(pid):
    try:
        with open("/proc/%d/comm" % pid, "rb") as f:
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return None
