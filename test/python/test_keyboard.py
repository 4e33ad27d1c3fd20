"""XTest typing against a fake display: whatever fails mid-stroke, held modifiers are released
and a borrowed (scratch) keycode gets its empty mapping back."""
import pytest
from Xlib import X, XK

import x11

FREE_KEYCODE = 200


class FakeDisplay:
    """Enough of an Xlib display for `X11._stroke`: a keyboard with a few keysyms and one free keycode."""

    def __init__(self, fail_on=None):
        self.events = []  # ("press"|"release", keycode)
        self.mapping = {}  # keycode -> keysyms set by change_keyboard_mapping
        self.fail_on = fail_on
        self.keys = {XK.XK_a: 38, XK.XK_A: 38, XK.XK_Control_L: 37, XK.XK_Shift_L: 50, XK.XK_Alt_L: 64}

        class Info:
            min_keycode = 8
            max_keycode = 255

        class Inner:
            info = Info()

        self.display = Inner()

    def keysym_to_keycodes(self, keysym):
        if keysym == XK.XK_A:
            return [(38, 1)]
        if keysym in self.keys:
            return [(self.keys[keysym], 0)]
        return [(FREE_KEYCODE, 0)] if self.mapping.get(FREE_KEYCODE, (0,))[0] == keysym else []

    def keysym_to_keycode(self, keysym):
        return self.keys.get(keysym, 0)

    def get_keyboard_mapping(self, first, count):
        return [(0, 0, 0, 0) if first + i == FREE_KEYCODE else (1, 0, 0, 0) for i in range(count)]

    def change_keyboard_mapping(self, first, syms):
        self.mapping[first] = tuple(syms[0])

    def sync(self):
        pass


class Broken(Exception):
    pass


@pytest.fixture
def keyboard(monkeypatch):
    def make(fail_on=None):
        d = FakeDisplay(fail_on)

        def fake_input(display, event_type, detail=0, **_):
            kind = {X.KeyPress: "press", X.KeyRelease: "release"}[event_type]
            if d.fail_on == (kind, detail):
                d.fail_on = None  # the connection recovers: cleanup requests get through
                raise Broken("X request failed")
            d.events.append((kind, detail))

        monkeypatch.setattr(x11.xtest, "fake_input", fake_input)
        monkeypatch.setattr(x11.time, "sleep", lambda s: None)
        xs = x11.X11(":0")
        xs._d = d
        return xs, d

    return make


def held(events):
    down = []
    for kind, code in events:
        if kind == "press":
            down.append(code)
        elif code in down:
            down.remove(code)
    return down


def test_a_chord_presses_and_releases_modifiers_around_the_key(keyboard):
    xs, d = keyboard()
    xs._stroke(XK.XK_a, [XK.XK_Control_L])
    assert d.events == [("press", 37), ("press", 38), ("release", 38), ("release", 37)]


def test_a_failure_on_the_key_press_still_releases_held_modifiers(keyboard):
    xs, d = keyboard(fail_on=("press", 38))
    with pytest.raises(Broken):
        xs._stroke(XK.XK_a, [XK.XK_Control_L, XK.XK_Alt_L])
    assert held(d.events) == []
    assert ("release", 64) in d.events and ("release", 37) in d.events


def test_a_failure_on_a_shifted_key_release_still_releases_shift(keyboard):
    xs, d = keyboard(fail_on=("release", 38))
    with pytest.raises(Broken):
        xs._stroke(XK.XK_A, [])
    assert held(d.events) == []


def test_a_keysym_off_the_keyboard_borrows_a_free_keycode_and_gives_it_back(keyboard):
    xs, d = keyboard()
    xs._stroke(0x010003A9, [])  # Ω
    assert d.events == [("press", FREE_KEYCODE), ("release", FREE_KEYCODE)]
    assert set(d.mapping[FREE_KEYCODE]) == {0}


def test_a_failure_while_typing_on_a_borrowed_keycode_still_restores_the_keymap(keyboard):
    xs, d = keyboard(fail_on=("press", FREE_KEYCODE))
    with pytest.raises(Broken):
        xs._stroke(0x010003A9, [XK.XK_Control_L])
    assert set(d.mapping[FREE_KEYCODE]) == {0}
    assert held(d.events) == []
