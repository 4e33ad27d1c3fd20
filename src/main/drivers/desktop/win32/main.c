/*
 * Uplink's Win32 desktop helper: one long-lived process speaking the desktop helper protocol
 * (docs/desktop-helper-protocol.md) on stdin/stdout, one JSON line per request and reply, one
 * request at a time. A channel is bound to (HWND, pid, process creation time, image path) and
 * every op that reads or drives a window re-checks all four first.
 */
#include "helper.h"
#include <fcntl.h>
#include <io.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROTOCOL 1

HelperErr g_err;

static void reset_err(void) { memset(&g_err, 0, sizeof g_err); }

int fail(const char *kind, const char *hint, const char *fmt, ...) {
  va_list ap;
  reset_err();
  g_err.kind = kind;
  va_start(ap, fmt);
  vsnprintf(g_err.message, sizeof g_err.message, fmt, ap);
  va_end(ap);
  if (hint) snprintf(g_err.hint, sizeof g_err.hint, "%s", hint);
  return -1;
}

int fail_ev(const char *kind, const char *hint, const char *evidence, const char *fmt, ...) {
  va_list ap;
  reset_err();
  g_err.kind = kind;
  va_start(ap, fmt);
  vsnprintf(g_err.message, sizeof g_err.message, fmt, ap);
  va_end(ap);
  if (hint) snprintf(g_err.hint, sizeof g_err.hint, "%s", hint);
  if (evidence) snprintf(g_err.evidence, sizeof g_err.evidence, "%s", evidence);
  return -1;
}

/* The one refusal for a binding mismatch: nothing was injected. */
int target_changed(const char *hint, const char *evidence_fmt, ...) {
  va_list ap;
  reset_err();
  g_err.kind = "Rejected";
  snprintf(g_err.message, sizeof g_err.message, "target changed");
  snprintf(g_err.hint, sizeof g_err.hint, "%s", hint ? hint : "list channels again and act on the new channel");
  va_start(ap, evidence_fmt);
  vsnprintf(g_err.evidence, sizeof g_err.evidence, evidence_fmt, ap);
  va_end(ap);
  return -1;
}

void window_id(HWND h, char *out, size_t n) { snprintf(out, n, "0x%llx", (unsigned long long)(ULONG_PTR)h); }

HWND top_of(HWND h) {
  HWND r = GetAncestor(h, GA_ROOT);
  return r ? r : h;
}

/* FILETIME (100 ns since 1601) → microseconds since 1970: exact enough, and a safe JSON integer. */
static long long unix_us(FILETIME ft) {
  unsigned long long t = ((unsigned long long)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
  return (long long)(t / 10ULL) - 11644473600000000LL;
}

/* Creation time and image path of a process; -1 (NotFound) when it does not exist. */
int process_facts(DWORD pid, long long *start_us, wchar_t *image, size_t image_len) {
  HANDLE p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
  if (!p) return fail("NotFound", "list channels again", "process %lu does not exist or cannot be queried (error %lu)", pid, GetLastError());
  FILETIME created, exited, kernel, user;
  DWORD code = 0;
  int ok = GetProcessTimes(p, &created, &exited, &kernel, &user) && GetExitCodeProcess(p, &code) && code == STILL_ACTIVE;
  DWORD n = (DWORD)image_len;
  if (ok && image && !QueryFullProcessImageNameW(p, 0, image, &n)) image[0] = 0;
  CloseHandle(p);
  if (!ok) return fail("NotFound", "list channels again", "process %lu has exited", pid);
  *start_us = unix_us(created);
  return 0;
}

static const wchar_t *base_name(const wchar_t *path) {
  const wchar_t *b = path;
  for (const wchar_t *p = path; *p; p++)
    if (*p == L'\\' || *p == L'/') b = p + 1;
  return b;
}

/* Re-checks (HWND, pid, creation time, image) right before reading or acting. */
int check_target(const Target *t) {
  if (!IsWindow(t->hwnd)) return target_changed(NULL, "window %s no longer exists", t->window);
  DWORD pid = 0;
  GetWindowThreadProcessId(t->hwnd, &pid);
  if (pid != t->pid) return target_changed(NULL, "window %s belongs to process %lu, bound pid is %lu", t->window, pid, t->pid);
  long long start = 0;
  wchar_t image[MAX_PATH * 2] = L"";
  if (process_facts(pid, &start, image, MAX_PATH * 2) < 0) return target_changed(NULL, "process %lu no longer exists", t->pid);
  if (t->has_start && start != t->start_time)
    return target_changed(NULL, "process %lu was created at %lld, bound creation time is %lld (pid reused)", pid, start, t->start_time);
  if (t->has_image && _wcsicmp(image, t->image) != 0) {
    char *now = utf8_of(image), *was = utf8_of(t->image);
    target_changed(NULL, "process %lu runs %s, bound image is %s", pid, now, was);
    free(now), free(was);
    return -1;
  }
  if (!IsWindowVisible(t->hwnd)) return target_changed("make the window visible, then retry", "window %s is not visible", t->window);
  return 0;
}

static void put_rect(Buf *b, RECT r) {
  buf_printf(b, "{\"x\":%ld,\"y\":%ld,\"width\":%ld,\"height\":%ld}", r.left, r.top, r.right - r.left, r.bottom - r.top);
}

static void put_interactions(Buf *b, HWND h) {
  buf_put(b, a11y_available(h) ? "[\"semantic_ui\",\"visual_ui\"]" : "[\"visual_ui\"]");
}

/* One window's facts, as the `windows` op lists them (the shape of HelperWindow). */
static void put_window(Buf *b, HWND h) {
  char id[32];
  wchar_t title[512] = L"", cls[256] = L"", image[MAX_PATH * 2] = L"";
  DWORD pid = 0;
  long long start = 0;
  RECT r;
  window_id(h, id, sizeof id);
  GetWindowTextW(h, title, 512);
  GetClassNameW(h, cls, 256);
  GetWindowRect(h, &r);
  GetWindowThreadProcessId(h, &pid);
  int known = process_facts(pid, &start, image, MAX_PATH * 2) == 0;
  buf_printf(b, "{\"window\":\"%s\",\"title\":", id);
  buf_wstr(b, title);
  buf_put(b, ",\"class\":[");
  buf_wstr(b, cls);
  buf_put(b, "],\"geometry\":");
  put_rect(b, r);
  /* The window manager's own record of the owning process: no client can set it. */
  buf_printf(b, ",\"net_wm_pid\":null,\"xres_pid\":%lu,\"pid\":%lu,\"start_time\":", pid, pid);
  if (known) buf_printf(b, "%lld,\"image\":", start);
  else buf_put(b, "null,\"image\":");
  if (known && image[0]) buf_wstr(b, image);
  else buf_put(b, "null");
  buf_put(b, ",\"process_name\":");
  buf_wstr(b, known ? base_name(image) : L"");
  buf_printf(b, ",\"focused\":%s,\"interactions\":", GetForegroundWindow() == h ? "true" : "false");
  put_interactions(b, h);
  buf_put(b, "}");
}

typedef struct {
  Buf *b;
  int count;
} ListCtx;

static BOOL CALLBACK list_one(HWND h, LPARAM lp) {
  ListCtx *ctx = (ListCtx *)lp;
  DWORD pid = 0;
  RECT r;
  GetWindowThreadProcessId(h, &pid);
  if (!IsWindowVisible(h) || pid == GetCurrentProcessId() || !GetWindowRect(h, &r) || r.right <= r.left || r.bottom <= r.top) return TRUE;
  if (GetWindowLongPtrW(h, GWL_EXSTYLE) & WS_EX_TOOLWINDOW) return TRUE; /* tooltips, floating palettes */
  if (ctx->count++) buf_put(ctx->b, ",");
  put_window(ctx->b, h);
  return TRUE;
}

static const char *wine_version(void) {
  typedef const char *(CDECL * Fn)(void);
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  Fn fn = ntdll ? (Fn)(void *)GetProcAddress(ntdll, "wine_get_version") : NULL;
  return fn ? fn() : NULL;
}

static int op_windows(Buf *out) {
  ListCtx ctx = {out, 0};
  buf_put(out, "{\"windows\":[");
  EnumWindows(list_one, (LPARAM)&ctx);
  /* Window handles are not kept across Uplink processes here: bindings stay per process. */
  buf_put(out, "],\"session\":null}");
  return 0;
}

static int op_observe(const Target *t, Buf *out) {
  if (check_target(t) < 0) return -1;
  wchar_t title[512] = L"", cls[256] = L"";
  RECT r;
  GetWindowTextW(t->hwnd, title, 512);
  GetClassNameW(t->hwnd, cls, 256);
  GetWindowRect(t->hwnd, &r);
  buf_printf(out, "{\"window\":\"%s\",\"title\":", t->window);
  buf_wstr(out, title);
  buf_put(out, ",\"class\":[");
  buf_wstr(out, cls);
  buf_printf(out, "],\"pid\":%lu,\"process_name\":", t->pid);
  long long start;
  wchar_t image[MAX_PATH * 2] = L"";
  buf_wstr(out, process_facts(t->pid, &start, image, MAX_PATH * 2) == 0 ? base_name(image) : L"");
  buf_put(out, ",\"geometry\":");
  put_rect(out, r);
  buf_printf(out, ",\"focused\":%s,\"interactions\":", GetForegroundWindow() == t->hwnd ? "true" : "false");
  put_interactions(out, t->hwnd);
  buf_put(out, "}");
  return 0;
}

static int op_doctor(Buf *out) {
  const char *wine = wine_version();
  int windows = 0, ok = 1;
  Buf lines = {0};
  if (wine) buf_printf(&lines, "\"Win32 helper running under Wine %s (not Windows itself: see docs/windows.md for what Wine cannot show)\"", wine);
  else {
    OSVERSIONINFOW v = {sizeof v};
    GetVersionExW(&v);
    buf_printf(&lines, "\"Win32 helper on Windows %lu.%lu build %lu\"", v.dwMajorVersion, v.dwMinorVersion, v.dwBuildNumber);
  }
  Buf tmp = {0};
  ListCtx ctx = {&tmp, 0};
  EnumWindows(list_one, (LPARAM)&ctx);
  windows = ctx.count;
  buf_free(&tmp);
  buf_printf(&lines, ",\"desktop reachable: %d top-level windows\"", windows);
  HDESK input = OpenInputDesktop(0, FALSE, DESKTOP_READOBJECTS);
  if (input) {
    CloseDesktop(input);
    buf_put(&lines, ",\"input desktop reachable: SendInput can reach it\"");
  } else {
    ok = 0;
    buf_printf(&lines, ",\"input desktop not reachable (error %lu): the secure desktop (UAC, lock screen) may be active — hint: visual_ui is refused until it is gone\"",
               GetLastError());
  }
  buf_put(&lines, ",\"accessibility: MSAA (oleacc IAccessible); UI Automation is not used\"");
  buf_printf(&lines, ",\"DPI awareness: %s\"", dpi_mode());
  buf_printf(out, "{\"ok\":%s,\"lines\":[%s],\"checks\":{\"platform\":\"win32\",\"wine\":", ok ? "true" : "false", lines.p);
  if (wine) buf_str(out, wine);
  else buf_put(out, "null");
  buf_printf(out, ",\"windows\":%d}}", windows);
  buf_free(&lines);
  return 0;
}

static int op_process(const JVal *args, Buf *out) {
  JVal *pid = json_get(args, "pid");
  if (!json_is_int(pid) || pid->n < 0) return fail("Invalid", NULL, "bad request: process needs an integer pid");
  long long start;
  wchar_t image[MAX_PATH * 2] = L"";
  if (process_facts((DWORD)pid->n, &start, image, MAX_PATH * 2) < 0) return -1;
  buf_printf(out, "{\"pid\":%lu,\"start_time\":%lld,\"image\":", (DWORD)pid->n, start);
  buf_wstr(out, image);
  buf_put(out, ",\"name\":");
  buf_wstr(out, base_name(image));
  buf_put(out, "}");
  return 0;
}

/* Arguments an op cannot run without, checked before any window is touched. */
static const char *required_arg(const char *op, const JVal *args) {
  static const struct {
    const char *op, *names[3];
  } REQUIRED[] = {{"click", {"x", "y"}}, {"key", {"chord"}}, {"type", {"text"}}, {"activate", {"path"}},
                  {"set-text", {"path", "text"}}, {"element", {"path"}}, {"process", {"pid"}}};
  for (size_t i = 0; i < sizeof REQUIRED / sizeof REQUIRED[0]; i++)
    if (strcmp(REQUIRED[i].op, op) == 0)
      for (int j = 0; j < 3 && REQUIRED[i].names[j]; j++)
        if (!json_get(args, REQUIRED[i].names[j])) return REQUIRED[i].names[j];
  return NULL;
}

static int parse_target(const JVal *jt, Target *t) {
  memset(t, 0, sizeof *t);
  JVal *w = json_get(jt, "window"), *pid = json_get(jt, "pid"), *st = json_get(jt, "start_time"), *img = json_get(jt, "image");
  if (!jt || jt->t != J_OBJ || !w || w->t != J_STR || !json_is_int(pid) || (st && st->t != J_NULL && !json_is_int(st)) ||
      (img && img->t != J_NULL && img->t != J_STR))
    return fail("Invalid", NULL, "bad request: target must be {window: string, pid: integer, start_time: integer or null, image?: string}");
  char *end;
  unsigned long long h = strtoull(w->s, &end, 16);
  if (strncmp(w->s, "0x", 2) != 0 || *end || h == 0 || h > 0xFFFFFFFFULL)
    return fail("NotFound", "run channel_list to see the open windows", "no window %s (window ids are HWNDs in hex, like 0x1005e)", w->s);
  t->hwnd = (HWND)(ULONG_PTR)h;
  snprintf(t->window, sizeof t->window, "%s", w->s);
  t->pid = (DWORD)pid->n;
  if (st && st->t != J_NULL) t->has_start = 1, t->start_time = (long long)st->n;
  if (img && img->t == J_STR) {
    wchar_t *wi = wide_of(img->s);
    wcsncpy(t->image, wi, MAX_PATH * 2 - 1);
    free(wi);
    t->has_image = 1;
  }
  return 0;
}

static int handle(const char *op, const JVal *jtarget, const JVal *args, const char *interaction, Buf *out) {
  if (strcmp(op, "hello") == 0) {
    const char *wine = wine_version();
    buf_printf(out, "{\"protocol\":%d,\"platform\":\"win32\",\"pid\":%lu,\"wine\":", PROTOCOL, GetCurrentProcessId());
    if (wine) buf_str(out, wine);
    else buf_put(out, "null");
    buf_printf(out, ",\"dpi_awareness\":\"%s\"}", dpi_mode());
    return 0;
  }
  if (strcmp(op, "doctor") == 0) return op_doctor(out);
  if (strcmp(op, "windows") == 0) return op_windows(out);
  if (strcmp(op, "process") == 0) return op_process(args, out);
  static const char *KNOWN[] = {"observe", "interactions", "screenshot", "click", "key", "type", "tree", "find", "activate", "set-text", "element"};
  int known = 0;
  for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++) known |= strcmp(KNOWN[i], op) == 0;
  if (!known) return fail("Invalid", "see the driver's ops", "unknown op '%s'", op);
  if (!jtarget) return fail("Invalid", NULL, "op '%s' needs a target", op);
  Target t;
  if (parse_target(jtarget, &t) < 0) return -1;
  if (strcmp(op, "observe") == 0) return op_observe(&t, out);
  if (strcmp(op, "interactions") == 0) {
    if (check_target(&t) < 0) return -1;
    buf_put(out, "{\"interactions\":");
    put_interactions(out, t.hwnd);
    buf_put(out, "}");
    return 0;
  }
  if (strcmp(op, "screenshot") == 0) return op_screenshot(&t, args, out);
  if (strcmp(op, "click") == 0) return op_click(&t, args, out);
  if (strcmp(op, "key") == 0) return op_key(&t, args, out);
  if (strcmp(op, "type") == 0) {
    if (!interaction) return fail("Invalid", NULL, "type needs an interaction kind (semantic_ui or visual_ui)");
    if (strcmp(interaction, "visual_ui") == 0) {
      JVal *path = json_get(args, "path");
      if (path && path->t == J_STR && path->s[0]) return fail("Invalid", "drop path, or use --interaction semantic_ui", "path is for semantic_ui typing");
      return op_type_visual(&t, args, out);
    }
    return op_type_semantic(&t, args, out);
  }
  if (strcmp(op, "tree") == 0) return op_tree(&t, args, out);
  if (strcmp(op, "find") == 0) return op_find(&t, args, out);
  if (strcmp(op, "activate") == 0) return op_activate(&t, args, out);
  if (strcmp(op, "set-text") == 0) return op_set_text(&t, args, out);
  return op_element(&t, args, out);
}

/* The reply line to one request line. */
static void reply_to(const char *line, Buf *out) {
  char err[256];
  Buf result = {0};
  reset_err();
  JVal *req = json_parse(line, err, sizeof err);
  JVal *id = req ? json_get(req, "id") : NULL;
  int rc;
  if (!req) rc = fail("Invalid", NULL, "bad request: not JSON (%s)", err);
  else if (req->t != J_OBJ) rc = fail("Invalid", NULL, "bad request: not a JSON object");
  else if (id && id->t != J_NULL && !json_is_int(id)) {
    id = NULL;
    rc = fail("Invalid", NULL, "bad request: id must be an integer");
  } else {
    JVal *op = json_get(req, "op"), *target = json_get(req, "target"), *args = json_get(req, "args"), *inter = json_get(req, "interaction");
    static JVal empty = {J_OBJ};
    if (target && target->t == J_NULL) target = NULL;
    if (args && args->t == J_NULL) args = NULL;
    const char *missing;
    if (!op || op->t != J_STR) rc = fail("Invalid", NULL, "bad request: op must be a string");
    else if (args && args->t != J_OBJ) rc = fail("Invalid", NULL, "bad request: args must be an object");
    else if (inter && inter->t != J_NULL && (inter->t != J_STR || (strcmp(inter->s, "semantic_ui") && strcmp(inter->s, "visual_ui"))))
      rc = fail("Invalid", NULL, "bad request: interaction must be semantic_ui or visual_ui");
    else if ((missing = required_arg(op->s, args ? args : &empty)))
      rc = fail("Invalid", NULL, "bad request: %s needs argument %s", op->s, missing);
    else rc = handle(op->s, target, args ? args : &empty, inter && inter->t == J_STR ? inter->s : NULL, &result);
  }
  buf_put(out, "{\"id\":");
  if (id && json_is_int(id)) buf_printf(out, "%lld", (long long)id->n);
  else buf_put(out, "null");
  if (rc == 0) {
    buf_put(out, ",\"ok\":true,\"result\":");
    buf_put(out, result.p ? result.p : "null");
  } else {
    buf_put(out, ",\"ok\":false,\"error\":{\"kind\":");
    buf_str(out, g_err.kind ? g_err.kind : "Upstream");
    buf_put(out, ",\"message\":");
    buf_str(out, g_err.message);
    if (g_err.hint[0]) buf_put(out, ",\"hint\":"), buf_str(out, g_err.hint);
    if (g_err.evidence[0]) buf_put(out, ",\"evidence\":"), buf_str(out, g_err.evidence);
    buf_put(out, "}");
  }
  buf_put(out, "}\n");
  buf_free(&result);
  json_free(req);
}

int main(void) {
  _setmode(_fileno(stdin), _O_BINARY);
  _setmode(_fileno(stdout), _O_BINARY);
  dpi_init();
  CoInitializeEx(NULL, COINIT_APARTMENTTHREADED);
  Buf line = {0};
  int c;
  for (;;) {
    line.n = 0;
    if (line.p) line.p[0] = 0;
    while ((c = getchar()) != EOF && c != '\n') {
      char ch = (char)c;
      buf_putn(&line, &ch, 1);
    }
    if (line.n && line.p[line.n - 1] == '\r') line.p[--line.n] = 0;
    if (line.n) {
      int blank = 1;
      for (size_t i = 0; i < line.n; i++) blank &= line.p[i] == ' ' || line.p[i] == '\t';
      if (!blank) {
        Buf out = {0};
        reply_to(line.p, &out);
        fwrite(out.p, 1, out.n, stdout);
        fflush(stdout);
        buf_free(&out);
      }
    }
    if (c == EOF) break;
  }
  CoUninitialize();
  return 0;
}
