/*
 * The visual side: screenshots of the bound window and synthetic input (SendInput) in window
 * coordinates. Input is refused, as on Linux, unless the window is in front and the point is not
 * covered: SendInput goes to whatever is under the cursor or holds the keyboard, not to a window.
 */
#include "helper.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_dpi = "unaware (no DPI API)";

/* Per-monitor aware: window rects, cursor positions and captures are then all physical pixels. */
void dpi_init(void) {
  typedef BOOL(WINAPI * SetCtx)(HANDLE);
  typedef BOOL(WINAPI * SetAware)(void);
  HMODULE user32 = GetModuleHandleW(L"user32.dll");
  SetCtx set_ctx = user32 ? (SetCtx)(void *)GetProcAddress(user32, "SetProcessDpiAwarenessContext") : NULL;
  if (set_ctx && set_ctx((HANDLE)-4 /* DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2 */)) {
    g_dpi = "per-monitor v2 (SetProcessDpiAwarenessContext)";
    return;
  }
  SetAware set_aware = user32 ? (SetAware)(void *)GetProcAddress(user32, "SetProcessDPIAware") : NULL;
  if (set_aware && set_aware()) g_dpi = "system aware (SetProcessDPIAware; per-monitor awareness unavailable)";
}

const char *dpi_mode(void) { return g_dpi; }

/* ---- capture -------------------------------------------------------------------------------- */

static int blank(const unsigned char *bgra, size_t pixels) {
  for (size_t i = 1; i < pixels; i++)
    if (memcmp(bgra, bgra + i * 4, 3) != 0) return 0;
  return 1;
}

/* BGRA pixels of the window: PrintWindow (the window draws itself, even when covered), else the
 * window DC (what is on screen). `how` says which. */
static unsigned char *capture(HWND h, int w, int hgt, const char **how) {
  BITMAPINFO bi = {0};
  bi.bmiHeader.biSize = sizeof bi.bmiHeader;
  bi.bmiHeader.biWidth = w;
  bi.bmiHeader.biHeight = -hgt; /* top-down */
  bi.bmiHeader.biPlanes = 1;
  bi.bmiHeader.biBitCount = 32;
  bi.bmiHeader.biCompression = BI_RGB;
  HDC screen = GetDC(NULL);
  HDC mem = CreateCompatibleDC(screen);
  void *bits = NULL;
  HBITMAP bmp = CreateDIBSection(screen, &bi, DIB_RGB_COLORS, &bits, NULL, 0);
  unsigned char *out = NULL;
  if (bmp && bits) {
    HGDIOBJ old = SelectObject(mem, bmp);
    size_t n = (size_t)w * (size_t)hgt;
    int ok = PrintWindow(h, mem, 2 /* PW_RENDERFULLCONTENT */);
    GdiFlush();
    *how = "PrintWindow";
    if (!ok || blank(bits, n)) {
      HDC wdc = GetWindowDC(h);
      if (wdc && BitBlt(mem, 0, 0, w, hgt, wdc, 0, 0, SRCCOPY | CAPTUREBLT)) *how = "BitBlt";
      if (wdc) ReleaseDC(h, wdc);
      GdiFlush();
    }
    out = malloc(n * 4);
    memcpy(out, bits, n * 4);
    SelectObject(mem, old);
  }
  if (bmp) DeleteObject(bmp);
  DeleteDC(mem);
  ReleaseDC(NULL, screen);
  return out;
}

/* Area-average downscale of BGRA to RGB `nw` wide (aspect kept). */
static unsigned char *to_rgb_scaled(const unsigned char *bgra, int w, int h, int nw, int *nh) {
  *nh = nw == w ? h : (int)((double)h * nw / w + 0.5);
  if (*nh < 1) *nh = 1;
  unsigned char *rgb = malloc((size_t)nw * (size_t)*nh * 3);
  for (int y = 0; y < *nh; y++) {
    int y0 = (int)((long long)y * h / *nh), y1 = (int)((long long)(y + 1) * h / *nh);
    if (y1 <= y0) y1 = y0 + 1;
    for (int x = 0; x < nw; x++) {
      int x0 = (int)((long long)x * w / nw), x1 = (int)((long long)(x + 1) * w / nw);
      if (x1 <= x0) x1 = x0 + 1;
      unsigned long r = 0, g = 0, b = 0, n = 0;
      for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++) {
          const unsigned char *p = bgra + ((size_t)yy * (size_t)w + (size_t)xx) * 4;
          b += p[0], g += p[1], r += p[2], n++;
        }
      unsigned char *o = rgb + ((size_t)y * (size_t)nw + (size_t)x) * 3;
      o[0] = (unsigned char)(r / n), o[1] = (unsigned char)(g / n), o[2] = (unsigned char)(b / n);
    }
  }
  return rgb;
}

static int overlap(RECT a, RECT b, RECT *out) { return IntersectRect(out, &a, &b); }

/* Why a capture may not show what an action meets, as JSON strings (comma-separated). */
static void capture_warnings(HWND h, RECT wr, const unsigned char *bgra, int w, int hgt, const char *how, Buf *out) {
  int n = 0;
  if (IsIconic(h)) buf_printf(out, "%s\"the window is minimized: the screenshot is not what it shows when restored\"", n++ ? "," : "");
  long area = (wr.right - wr.left) * (wr.bottom - wr.top);
  for (HWND above = GetWindow(h, GW_HWNDPREV); above; above = GetWindow(above, GW_HWNDPREV)) {
    RECT ar, ov;
    if (!IsWindowVisible(above) || IsIconic(above) || !GetWindowRect(above, &ar) || !overlap(wr, ar, &ov)) continue;
    long pct = ((ov.right - ov.left) * (ov.bottom - ov.top) * 100) / (area > 0 ? area : 1);
    char id[32];
    window_id(above, id, sizeof id);
    buf_printf(out,
               "%s\"window %s is stacked above it and covers %ld%% of it: input there reaches that window%s\"", n++ ? "," : "", id, pct < 1 ? 1 : pct,
               strcmp(how, "PrintWindow") == 0 ? " (the screenshot shows the window itself, as it draws under the cover)" : "");
  }
  RECT screen = {GetSystemMetrics(SM_XVIRTUALSCREEN), GetSystemMetrics(SM_YVIRTUALSCREEN), 0, 0}, vis;
  screen.right = screen.left + GetSystemMetrics(SM_CXVIRTUALSCREEN);
  screen.bottom = screen.top + GetSystemMetrics(SM_CYVIRTUALSCREEN);
  if (!overlap(wr, screen, &vis) || !EqualRect(&vis, &wr))
    buf_printf(out, "%s\"part of the window is off screen: input cannot reach that part\"", n++ ? "," : "");
  if (blank(bgra, (size_t)w * (size_t)hgt))
    buf_printf(out, "%s\"the capture is blank (every pixel is #%02x%02x%02x): the window may not have drawn yet, or draws where a capture cannot see it\"",
               n++ ? "," : "", bgra[2], bgra[1], bgra[0]);
}

int op_screenshot(const Target *t, const JVal *args, Buf *out) {
  if (check_target(t) < 0) return -1;
  JVal *mw = json_get(args, "max_width");
  if (mw && mw->t != J_NULL && (!json_is_int(mw) || mw->n < 16 || mw->n > 8192))
    return fail("Invalid", NULL, "bad request: max_width must be an integer from 16 to 8192");
  RECT wr;
  GetWindowRect(t->hwnd, &wr);
  int w = wr.right - wr.left, h = wr.bottom - wr.top;
  if (w <= 0 || h <= 0) return fail("Unavailable", "restore the window, then retry", "window %s has no area (%dx%d)", t->window, w, h);
  if ((long long)w * h > 8192LL * 8192LL) return fail("Unavailable", NULL, "window %s is too large to capture (%dx%d)", t->window, w, h);
  const char *how = "none";
  unsigned char *bgra = capture(t->hwnd, w, h, &how);
  if (!bgra) return fail("Unavailable", "retry; the window may be closing", "cannot capture window %s (GDI failed)", t->window);
  int nw = mw && json_is_int(mw) && mw->n < w ? (int)mw->n : w, nh;
  unsigned char *rgb = to_rgb_scaled(bgra, w, h, nw, &nh);
  size_t png_len;
  unsigned char *png = png_encode_rgb(nw, nh, rgb, &png_len);
  buf_put(out, "{\"png_base64\":\"");
  buf_base64(out, png, png_len);
  buf_printf(out, "\",\"width\":%d,\"height\":%d,\"scale\":%.6f,\"capture\":\"%s\"", nw, nh, (double)nw / w, how);
  Buf warn = {0};
  capture_warnings(t->hwnd, wr, bgra, w, h, how, &warn);
  if (warn.n) buf_printf(out, ",\"warnings\":[%s]", warn.p);
  buf_put(out, "}");
  buf_free(&warn);
  free(png), free(rgb), free(bgra);
  return 0;
}

/* ---- input preconditions -------------------------------------------------------------------- */

/* Brings the window to the front and verifies it holds the foreground. */
static int bring_front(const Target *t) {
  if (GetForegroundWindow() == t->hwnd) return 0;
  if (IsIconic(t->hwnd)) ShowWindow(t->hwnd, SW_RESTORE);
  SetWindowPos(t->hwnd, HWND_TOP, 0, 0, 0, 0, SWP_NOMOVE | SWP_NOSIZE | SWP_SHOWWINDOW);
  SetForegroundWindow(t->hwnd);
  if (GetForegroundWindow() != t->hwnd) {
    /* Windows lets only the foreground's thread hand the foreground over: join its input queue briefly. */
    HWND fg = GetForegroundWindow();
    DWORD fg_thread = fg ? GetWindowThreadProcessId(fg, NULL) : 0, me = GetCurrentThreadId();
    if (fg_thread && fg_thread != me && AttachThreadInput(me, fg_thread, TRUE)) {
      SetForegroundWindow(t->hwnd);
      BringWindowToTop(t->hwnd);
      AttachThreadInput(me, fg_thread, FALSE);
    }
  }
  for (int i = 0; i < 25 && GetForegroundWindow() != t->hwnd; i++) Sleep(20);
  HWND fg = GetForegroundWindow();
  if (fg != t->hwnd) {
    char id[32];
    window_id(fg, id, sizeof id);
    return target_changed("close whatever holds the foreground (a modal dialog, the secure desktop), then retry",
                          "window %s did not come to the front (the foreground is %s)", t->window, fg ? id : "none");
  }
  return 0;
}

static int send(INPUT *in, UINT n) {
  UINT sent = SendInput(n, in, sizeof(INPUT));
  if (sent != n)
    return fail("Unavailable", "the input desktop may be the secure desktop (UAC, lock screen), or the target runs at a higher integrity level",
                "SendInput injected %u of %u events (error %lu)", sent, n, GetLastError());
  return 0;
}

static int input_desktop(void) {
  HDESK d = OpenInputDesktop(0, FALSE, DESKTOP_READOBJECTS);
  if (!d) return fail("Unavailable", "wait until the secure desktop (UAC prompt, lock screen) is gone", "the input desktop is not reachable (error %lu)", GetLastError());
  CloseDesktop(d);
  return 0;
}

int op_click(const Target *t, const JVal *args, Buf *out) {
  JVal *jx = json_get(args, "x"), *jy = json_get(args, "y"), *jb = json_get(args, "button");
  if (!json_is_int(jx) || !json_is_int(jy) || jx->n < 0 || jy->n < 0) return fail("Invalid", NULL, "bad request: x and y must be non-negative integers");
  const char *button = jb && jb->t == J_STR ? jb->s : "left";
  DWORD down, up;
  if (strcmp(button, "left") == 0) down = MOUSEEVENTF_LEFTDOWN, up = MOUSEEVENTF_LEFTUP;
  else if (strcmp(button, "middle") == 0) down = MOUSEEVENTF_MIDDLEDOWN, up = MOUSEEVENTF_MIDDLEUP;
  else if (strcmp(button, "right") == 0) down = MOUSEEVENTF_RIGHTDOWN, up = MOUSEEVENTF_RIGHTUP;
  else return fail("Invalid", NULL, "bad request: button must be left, middle or right");
  if (check_target(t) < 0 || input_desktop() < 0) return -1;
  int x = (int)jx->n, y = (int)jy->n;
  RECT wr;
  GetWindowRect(t->hwnd, &wr);
  int w = wr.right - wr.left, h = wr.bottom - wr.top;
  if (x >= w || y >= h) {
    char ev[128];
    snprintf(ev, sizeof ev, "(%d, %d) is outside %dx%d", x, y, w, h);
    char hint[128];
    snprintf(hint, sizeof hint, "use window-relative coordinates inside %dx%d", w, h);
    return fail_ev("Rejected", hint, ev, "point outside the window");
  }
  if (bring_front(t) < 0) return -1;
  POINT pt = {wr.left + x, wr.top + y};
  HWND at = WindowFromPoint(pt);
  if (!at || top_of(at) != t->hwnd) {
    char id[32] = "none";
    if (at) window_id(top_of(at), id, sizeof id);
    return target_changed("uncover the window, then retry", "point (%d, %d) is covered by window %s", x, y, id);
  }
  if (!SetCursorPos(pt.x, pt.y)) return fail("Unavailable", NULL, "cannot move the cursor (error %lu)", GetLastError());
  INPUT in[2] = {0};
  in[0].type = in[1].type = INPUT_MOUSE;
  in[0].mi.dwFlags = down;
  in[1].mi.dwFlags = up;
  if (send(in, 2) < 0) return -1;
  buf_printf(out, "{\"clicked\":true,\"x\":%d,\"y\":%d,\"button\":\"%s\",\"screen_x\":%ld,\"screen_y\":%ld}", x, y, button, pt.x, pt.y);
  return 0;
}

int op_type_visual(const Target *t, const JVal *args, Buf *out) {
  JVal *text = json_get(args, "text");
  if (!text || text->t != J_STR || !text->s[0]) return fail("Invalid", NULL, "bad request: text must be a non-empty string");
  wchar_t *w = wide_of(text->s);
  for (const wchar_t *p = w; *p; p++)
    if (*p < 0x20 && *p != L'\n' && *p != L'\r' && *p != L'\t') {
      free(w);
      return fail("Invalid", "use the key op for special keys", "cannot type control character U+%04X", (unsigned)*p);
    }
  if (check_target(t) < 0 || input_desktop() < 0 || bring_front(t) < 0) {
    free(w);
    return -1;
  }
  int typed = 0, total = 0;
  for (const wchar_t *p = w; *p; p++) total += !(*p >= 0xDC00 && *p < 0xE000);
  for (const wchar_t *p = w; *p; p++) {
    if (GetForegroundWindow() != t->hwnd) {
      free(w);
      return target_changed(NULL, "the foreground left window %s after %d of %d characters", t->window, typed, total);
    }
    INPUT in[2] = {0};
    in[0].type = in[1].type = INPUT_KEYBOARD;
    if (*p == L'\n' || *p == L'\r' || *p == L'\t') {
      in[0].ki.wVk = in[1].ki.wVk = *p == L'\t' ? VK_TAB : VK_RETURN;
      in[1].ki.dwFlags = KEYEVENTF_KEYUP;
    } else {
      in[0].ki.wScan = in[1].ki.wScan = *p;
      in[0].ki.dwFlags = KEYEVENTF_UNICODE;
      in[1].ki.dwFlags = KEYEVENTF_UNICODE | KEYEVENTF_KEYUP;
    }
    if (send(in, 2) < 0) {
      free(w);
      return -1;
    }
    if (!(*p >= 0xD800 && *p < 0xDC00)) typed++;
  }
  free(w);
  buf_printf(out, "{\"typed\":%d}", typed);
  return 0;
}

/* Key names: X keysym names (the shared vocabulary of both platforms) and common Windows aliases. */
static const struct {
  const char *name;
  WORD vk;
  int extended;
} KEYS[] = {
    {"Return", VK_RETURN, 0},   {"Enter", VK_RETURN, 0},    {"KP_Enter", VK_RETURN, 1}, {"Tab", VK_TAB, 0},           {"ISO_Left_Tab", VK_TAB, 0},
    {"Escape", VK_ESCAPE, 0},   {"Esc", VK_ESCAPE, 0},      {"BackSpace", VK_BACK, 0},  {"Backspace", VK_BACK, 0},    {"Delete", VK_DELETE, 1},
    {"Del", VK_DELETE, 1},      {"Insert", VK_INSERT, 1},   {"Home", VK_HOME, 1},       {"End", VK_END, 1},           {"Prior", VK_PRIOR, 1},
    {"Page_Up", VK_PRIOR, 1},   {"PageUp", VK_PRIOR, 1},    {"Next", VK_NEXT, 1},       {"Page_Down", VK_NEXT, 1},    {"PageDown", VK_NEXT, 1},
    {"Left", VK_LEFT, 1},       {"Right", VK_RIGHT, 1},     {"Up", VK_UP, 1},           {"Down", VK_DOWN, 1},         {"space", VK_SPACE, 0},
    {"Space", VK_SPACE, 0},     {"Menu", VK_APPS, 1},       {"Pause", VK_PAUSE, 0},     {"Print", VK_SNAPSHOT, 1},    {"Caps_Lock", VK_CAPITAL, 0},
};

static const struct {
  const char *name;
  WORD vk;
} MODS[] = {{"ctrl", VK_CONTROL}, {"control", VK_CONTROL}, {"control_l", VK_CONTROL}, {"shift", VK_SHIFT}, {"shift_l", VK_SHIFT}, {"alt", VK_MENU},
            {"alt_l", VK_MENU},   {"meta", VK_MENU},       {"super", VK_LWIN},        {"super_l", VK_LWIN}, {"win", VK_LWIN}};

static int key_of(const char *name, WORD *vk, int *ext, int *shift) {
  *ext = *shift = 0;
  for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
    if (strcmp(KEYS[i].name, name) == 0) return *vk = KEYS[i].vk, *ext = KEYS[i].extended, 1;
  if ((name[0] == 'F' || name[0] == 'f') && name[1] >= '1' && name[1] <= '9') {
    int n = atoi(name + 1);
    if (n >= 1 && n <= 24 && strspn(name + 1, "0123456789") == strlen(name + 1)) return *vk = (WORD)(VK_F1 + n - 1), 1;
  }
  wchar_t *w = wide_of(name);
  int ok = 0;
  if (w[0] && !w[1]) {
    SHORT s = VkKeyScanW(w[0]);
    if (s != -1) *vk = (WORD)(s & 0xFF), *shift = (s >> 8) & 1, ok = 1;
  }
  free(w);
  return ok;
}

int op_key(const Target *t, const JVal *args, Buf *out) {
  JVal *jc = json_get(args, "chord");
  if (!jc || jc->t != J_STR || !jc->s[0] || strlen(jc->s) > 100) return fail("Invalid", NULL, "bad request: chord must be a non-empty string");
  char chord[128], *parts[8];
  int n = 0;
  snprintf(chord, sizeof chord, "%s", jc->s);
  for (char *p = chord, *s = chord;; p++) {
    if (*p == '+' || !*p) {
      int end = !*p;
      *p = 0;
      if (!*s || n >= 8) return fail("Invalid", "key names joined by '+', e.g. ctrl+a or Return", "bad key chord '%s'", jc->s);
      parts[n++] = s;
      s = p + 1;
      if (end) break;
    }
  }
  WORD mods[8];
  for (int i = 0; i < n - 1; i++) {
    mods[i] = 0;
    for (size_t j = 0; j < sizeof MODS / sizeof MODS[0]; j++)
      if (_stricmp(MODS[j].name, parts[i]) == 0) mods[i] = MODS[j].vk;
    if (!mods[i]) return fail("Invalid", "use ctrl, shift, alt, super", "unknown modifier '%s' in '%s'", parts[i], jc->s);
  }
  WORD vk;
  int ext, shift;
  if (!key_of(parts[n - 1], &vk, &ext, &shift))
    return fail("Invalid", "use X keysym names, e.g. Return, Tab, Escape, a, F5 (docs/desktop-helper-protocol.md lists them)", "unknown key '%s' in '%s'",
                parts[n - 1], jc->s);
  if (check_target(t) < 0 || input_desktop() < 0 || bring_front(t) < 0) return -1;
  INPUT in[20] = {0};
  int k = 0;
  WORD down[10];
  int nd = 0;
  for (int i = 0; i < n - 1; i++) down[nd++] = mods[i];
  if (shift) down[nd++] = VK_SHIFT;
  for (int i = 0; i < nd; i++) in[k].type = INPUT_KEYBOARD, in[k].ki.wVk = down[i], k++;
  in[k].type = INPUT_KEYBOARD, in[k].ki.wVk = vk, in[k].ki.dwFlags = ext ? KEYEVENTF_EXTENDEDKEY : 0, k++;
  in[k].type = INPUT_KEYBOARD, in[k].ki.wVk = vk, in[k].ki.dwFlags = KEYEVENTF_KEYUP | (ext ? KEYEVENTF_EXTENDEDKEY : 0), k++;
  for (int i = nd - 1; i >= 0; i--) in[k].type = INPUT_KEYBOARD, in[k].ki.wVk = down[i], in[k].ki.dwFlags = KEYEVENTF_KEYUP, k++;
  if (send(in, (UINT)k) < 0) return -1;
  buf_put(out, "{\"sent\":");
  buf_str(out, jc->s);
  buf_put(out, "}");
  return 0;
}
