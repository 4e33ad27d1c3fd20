/*
 * The semantic side: the bound window's accessibility tree through MSAA (IAccessible), with
 * role and state names mapped to the AT-SPI names the Linux helper reports, so paths, selectors
 * and schemas are the same on both platforms. The tree is rooted at the top-level window's client
 * object ("/"), and a child window's wrapper object is replaced by that window's own client
 * object, as a screen reader presents it. Where oleacc only knows a control as a generic client
 * (Wine's oleacc for buttons, check boxes and list boxes), the control's window class and style
 * say what it is — the same facts Windows' own oleacc proxies read.
 */
#include "helper.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

/* mingw's import library carries a wrong IID_IAccessible: declare it here. */
const GUID UPLINK_IID_IAccessible = {0x618736e0, 0x3c3d, 0x11cf, {0x81, 0x0c, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71}};

#define DEFAULT_MAX_DEPTH 16
#define DEFAULT_MAX_NODES 400
#define SEARCH_LIMIT 5000
#define FIND_LIMIT 200
#define MAX_KIDS 512

typedef struct {
  IAccessible *acc; /* NULL for list box items oleacc does not expose */
  LONG child;       /* MSAA child id (CHILDID_SELF = the object itself) */
  HWND hwnd;        /* the window this element is, or belongs to */
  int is_window;    /* the element is `hwnd`'s client object */
  int lb_item;      /* a list box item read with LB_ messages, else -1 */
  int root;
} Elem;

static void elem_release(Elem *e) {
  if (e->acc) IAccessible_Release(e->acc);
  e->acc = NULL;
}

static IAccessible *client_of(HWND h) {
  IAccessible *acc = NULL;
  if (FAILED(AccessibleObjectFromWindow(h, (DWORD)OBJID_CLIENT, &UPLINK_IID_IAccessible, (void **)&acc))) return NULL;
  return acc;
}

int a11y_available(HWND hwnd) {
  IAccessible *acc = client_of(hwnd);
  if (!acc) return 0;
  IAccessible_Release(acc);
  return 1;
}

static VARIANT var_child(LONG child) {
  VARIANT v;
  VariantInit(&v);
  v.vt = VT_I4;
  v.lVal = child;
  return v;
}

static int class_is(HWND h, const wchar_t *name) {
  wchar_t cls[64] = L"";
  GetClassNameW(h, cls, 64);
  return _wcsicmp(cls, name) == 0;
}

static LONG button_type(HWND h) { return (LONG)(GetWindowLongPtrW(h, GWL_STYLE) & BS_TYPEMASK); }

/* ---- children ------------------------------------------------------------------------------ */

/* The element's children, in MSAA order; returns how many (the caller releases them). */
static int children(const Elem *e, Elem *out, int max) {
  int n = 0;
  if (e->child != CHILDID_SELF || e->lb_item >= 0 || !e->acc) return 0;
  long count = 0;
  if (FAILED(IAccessible_get_accChildCount(e->acc, &count))) count = 0;
  if (count > MAX_KIDS) count = MAX_KIDS;
  if (count > 0) {
    VARIANT *kids = calloc((size_t)count, sizeof(VARIANT));
    LONG got = 0;
    if (SUCCEEDED(AccessibleChildren(e->acc, 0, count, kids, &got))) {
      for (LONG i = 0; i < got; i++) {
        if (n < max && kids[i].vt == VT_I4) {
          IAccessible_AddRef(e->acc);
          out[n++] = (Elem){e->acc, kids[i].lVal, e->hwnd, 0, -1, 0};
        } else if (n < max && kids[i].vt == VT_DISPATCH && kids[i].pdispVal) {
          IAccessible *c = NULL;
          IDispatch_QueryInterface(kids[i].pdispVal, &UPLINK_IID_IAccessible, (void **)&c);
          HWND ch = NULL;
          if (c) WindowFromAccessibleObject(c, &ch);
          IAccessible *client = ch && ch != e->hwnd ? client_of(ch) : NULL;
          if (client) {
            IAccessible_Release(c);
            out[n++] = (Elem){client, CHILDID_SELF, ch, 1, -1, 0};
          } else if (c) {
            out[n++] = (Elem){c, CHILDID_SELF, e->hwnd, 0, -1, 0};
          }
        }
        VariantClear(&kids[i]);
      }
    }
    free(kids);
  }
  /* oleacc without list box items (Wine's): read them with the list box's own messages. */
  if (n == 0 && e->is_window && class_is(e->hwnd, L"ListBox")) {
    LRESULT items = SendMessageW(e->hwnd, LB_GETCOUNT, 0, 0);
    for (LRESULT i = 0; i < items && n < max; i++) out[n++] = (Elem){NULL, (LONG)i + 1, e->hwnd, 0, (int)i, 0};
  }
  return n;
}

/* ---- facts --------------------------------------------------------------------------------- */

typedef struct {
  const char *role;
  wchar_t *name;
  wchar_t *value; /* NULL when the element has none */
  wchar_t *action;
  LONG state;
  int has_bounds;
  RECT bounds; /* screen pixels */
} Facts;

static void facts_free(Facts *f) {
  free(f->name), free(f->value), free(f->action);
  memset(f, 0, sizeof *f);
}

static wchar_t *wdup_bstr(BSTR s) {
  size_t n = s ? wcslen(s) : 0;
  wchar_t *w = malloc((n + 1) * sizeof(wchar_t));
  if (n) memcpy(w, s, n * sizeof(wchar_t));
  w[n] = 0;
  if (s) SysFreeString(s);
  return w;
}

static wchar_t *window_text(HWND h) {
  int n = (int)SendMessageW(h, WM_GETTEXTLENGTH, 0, 0);
  if (n < 0) n = 0;
  if (n > 1 << 20) n = 1 << 20;
  wchar_t *w = calloc((size_t)n + 2, sizeof(wchar_t));
  SendMessageW(h, WM_GETTEXT, (WPARAM)n + 1, (LPARAM)w);
  return w;
}

/* MSAA roles by ROLE_SYSTEM_* value, named as AT-SPI names them. */
static const char *role_name(LONG role) {
  switch (role) {
  case ROLE_SYSTEM_TITLEBAR: return "title bar";
  case ROLE_SYSTEM_MENUBAR: return "menu bar";
  case ROLE_SYSTEM_SCROLLBAR: return "scroll bar";
  case ROLE_SYSTEM_GRIP: return "grip";
  case ROLE_SYSTEM_ALERT: return "alert";
  case ROLE_SYSTEM_WINDOW: return "window";
  case ROLE_SYSTEM_CLIENT: return "panel";
  case ROLE_SYSTEM_MENUPOPUP: return "menu";
  case ROLE_SYSTEM_MENUITEM: return "menu item";
  case ROLE_SYSTEM_TOOLTIP: return "tool tip";
  case ROLE_SYSTEM_APPLICATION: return "application";
  case ROLE_SYSTEM_DOCUMENT: return "document frame";
  case ROLE_SYSTEM_PANE: return "panel";
  case ROLE_SYSTEM_CHART: return "chart";
  case ROLE_SYSTEM_DIALOG: return "dialog";
  case ROLE_SYSTEM_GROUPING: return "panel";
  case ROLE_SYSTEM_SEPARATOR: return "separator";
  case ROLE_SYSTEM_TOOLBAR: return "tool bar";
  case ROLE_SYSTEM_STATUSBAR: return "status bar";
  case ROLE_SYSTEM_TABLE: return "table";
  case ROLE_SYSTEM_COLUMNHEADER: return "column header";
  case ROLE_SYSTEM_ROWHEADER: return "row header";
  case ROLE_SYSTEM_ROW: return "table row";
  case ROLE_SYSTEM_CELL: return "table cell";
  case ROLE_SYSTEM_LINK: return "link";
  case ROLE_SYSTEM_LIST: return "list";
  case ROLE_SYSTEM_LISTITEM: return "list item";
  case ROLE_SYSTEM_OUTLINE: return "tree";
  case ROLE_SYSTEM_OUTLINEITEM: return "tree item";
  case ROLE_SYSTEM_PAGETAB: return "page tab";
  case ROLE_SYSTEM_PROPERTYPAGE: return "panel";
  case ROLE_SYSTEM_GRAPHIC: return "image";
  case ROLE_SYSTEM_STATICTEXT: return "label";
  case ROLE_SYSTEM_TEXT: return "text";
  case ROLE_SYSTEM_PUSHBUTTON: return "push button";
  case ROLE_SYSTEM_CHECKBUTTON: return "check box";
  case ROLE_SYSTEM_RADIOBUTTON: return "radio button";
  case ROLE_SYSTEM_COMBOBOX: return "combo box";
  case ROLE_SYSTEM_DROPLIST: return "combo box";
  case ROLE_SYSTEM_PROGRESSBAR: return "progress bar";
  case ROLE_SYSTEM_DIAL: return "dial";
  case ROLE_SYSTEM_SLIDER: return "slider";
  case ROLE_SYSTEM_SPINBUTTON: return "spin button";
  case ROLE_SYSTEM_ANIMATION: return "animation";
  case ROLE_SYSTEM_BUTTONDROPDOWN:
  case ROLE_SYSTEM_BUTTONMENU:
  case ROLE_SYSTEM_SPLITBUTTON: return "push button";
  case ROLE_SYSTEM_PAGETABLIST: return "page tab list";
  case ROLE_SYSTEM_OUTLINEBUTTON: return "toggle button";
  default: return "unknown";
  }
}

/* What a standard control is, from its class and style, when oleacc calls it a generic client. */
static const char *class_role(HWND h) {
  wchar_t cls[64] = L"";
  GetClassNameW(h, cls, 64);
  if (_wcsicmp(cls, L"Button") == 0) {
    switch (button_type(h)) {
    case BS_CHECKBOX:
    case BS_AUTOCHECKBOX:
    case BS_3STATE:
    case BS_AUTO3STATE: return "check box";
    case BS_RADIOBUTTON:
    case BS_AUTORADIOBUTTON: return "radio button";
    case BS_GROUPBOX: return "panel";
    default: return "push button";
    }
  }
  if (_wcsicmp(cls, L"Static") == 0) return "label";
  if (_wcsicmp(cls, L"Edit") == 0) return "text";
  if (_wcsicmp(cls, L"ListBox") == 0 || _wcsicmp(cls, L"SysListView32") == 0) return "list";
  if (_wcsicmp(cls, L"ComboBox") == 0) return "combo box";
  if (_wcsicmp(cls, L"msctls_statusbar32") == 0) return "status bar";
  if (_wcsicmp(cls, L"msctls_progress32") == 0) return "progress bar";
  if (_wcsicmp(cls, L"msctls_trackbar32") == 0) return "slider";
  if (_wcsicmp(cls, L"SysTreeView32") == 0) return "tree";
  if (_wcsicmp(cls, L"SysTabControl32") == 0) return "page tab list";
  if (_wcsicmp(cls, L"ToolbarWindow32") == 0) return "tool bar";
  if (_wcsicmp(cls, L"ScrollBar") == 0) return "scroll bar";
  return NULL;
}

static int is_checkable(HWND h) {
  LONG t = button_type(h);
  return class_is(h, L"Button") && (t == BS_CHECKBOX || t == BS_AUTOCHECKBOX || t == BS_3STATE || t == BS_AUTO3STATE || t == BS_RADIOBUTTON ||
                                    t == BS_AUTORADIOBUTTON);
}

static void get_facts(const Elem *e, Facts *f) {
  memset(f, 0, sizeof *f);
  if (e->lb_item >= 0) {
    LRESULT len = SendMessageW(e->hwnd, LB_GETTEXTLEN, (WPARAM)e->lb_item, 0);
    f->role = "list item";
    f->name = calloc(len > 0 && len < 65536 ? (size_t)len + 1 : 1, sizeof(wchar_t));
    if (len > 0 && len < 65536) SendMessageW(e->hwnd, LB_GETTEXT, (WPARAM)e->lb_item, (LPARAM)f->name);
    f->state = STATE_SYSTEM_SELECTABLE | STATE_SYSTEM_FOCUSABLE;
    if (SendMessageW(e->hwnd, LB_GETSEL, (WPARAM)e->lb_item, 0) > 0) f->state |= STATE_SYSTEM_SELECTED;
    RECT r;
    if (SendMessageW(e->hwnd, LB_GETITEMRECT, (WPARAM)e->lb_item, (LPARAM)&r) != LB_ERR) {
      MapWindowPoints(e->hwnd, NULL, (POINT *)&r, 2);
      f->bounds = r, f->has_bounds = 1;
    }
    f->action = _wcsdup(L"select");
    return;
  }
  VARIANT self = var_child(e->child), role, state;
  VariantInit(&role);
  VariantInit(&state);
  LONG msaa_role = 0;
  if (SUCCEEDED(IAccessible_get_accRole(e->acc, self, &role)) && role.vt == VT_I4) msaa_role = role.lVal;
  VariantClear(&role);
  if (SUCCEEDED(IAccessible_get_accState(e->acc, self, &state)) && state.vt == VT_I4) f->state = state.lVal;
  VariantClear(&state);
  BSTR s = NULL;
  f->name = SUCCEEDED(IAccessible_get_accName(e->acc, self, &s)) ? wdup_bstr(s) : wdup_bstr(NULL);
  s = NULL;
  if (IAccessible_get_accValue(e->acc, self, &s) == S_OK && s) f->value = wdup_bstr(s);
  s = NULL;
  if (IAccessible_get_accDefaultAction(e->acc, self, &s) == S_OK && s && s[0]) f->action = wdup_bstr(s);
  else if (s) SysFreeString(s);
  long l, t, w, h;
  if (IAccessible_accLocation(e->acc, &l, &t, &w, &h, self) == S_OK) f->bounds = (RECT){l, t, l + w, t + h}, f->has_bounds = 1;

  f->role = role_name(msaa_role);
  if (e->root) {
    f->role = class_is(e->hwnd, L"#32770") ? "dialog" : "frame";
  } else if (e->is_window && (msaa_role == ROLE_SYSTEM_CLIENT || msaa_role == 0)) {
    const char *by_class = class_role(e->hwnd);
    if (by_class) f->role = by_class;
  }
  if (e->is_window) {
    /* Facts of the window itself, whatever oleacc says. */
    if (!IsWindowEnabled(e->hwnd)) f->state |= STATE_SYSTEM_UNAVAILABLE;
    if (!IsWindowVisible(e->hwnd)) f->state |= STATE_SYSTEM_INVISIBLE;
    GUITHREADINFO gti = {sizeof gti};
    if (GetGUIThreadInfo(GetWindowThreadProcessId(e->hwnd, NULL), &gti) && gti.hwndFocus == e->hwnd) f->state |= STATE_SYSTEM_FOCUSED;
    if (is_checkable(e->hwnd)) {
      if (SendMessageW(e->hwnd, BM_GETCHECK, 0, 0) == BST_CHECKED) f->state |= STATE_SYSTEM_CHECKED;
      else f->state &= ~STATE_SYSTEM_CHECKED;
    }
    if (class_is(e->hwnd, L"Edit")) {
      if (GetWindowLongPtrW(e->hwnd, GWL_STYLE) & ES_READONLY) f->state |= STATE_SYSTEM_READONLY;
      if (GetWindowLongPtrW(e->hwnd, GWL_STYLE) & ES_PASSWORD) f->state |= STATE_SYSTEM_PROTECTED;
      if (!f->value && !(f->state & STATE_SYSTEM_PROTECTED)) f->value = window_text(e->hwnd);
    }
    if (!f->action && !e->root) {
      const char *r = f->role;
      if (strcmp(r, "push button") == 0 || strcmp(r, "check box") == 0 || strcmp(r, "radio button") == 0) f->action = _wcsdup(L"click");
    }
    if (!f->has_bounds) {
      RECT r;
      if (GetWindowRect(e->hwnd, &r)) f->bounds = r, f->has_bounds = 1;
    }
  }
  if (strcmp(f->role, "text") == 0 && (f->state & STATE_SYSTEM_PROTECTED)) f->role = "password text";
}

/* MSAA state bits as AT-SPI state names, in AT-SPI's order. */
static void put_states(Buf *b, const Facts *f, const Elem *e) {
  LONG s = f->state;
  int n = 0;
#define STATE(cond, name)                                                                                                               \
  if (cond) buf_printf(b, "%s\"%s\"", n++ ? "," : "", name)
  buf_put(b, "[");
  STATE(e->root && GetForegroundWindow() == e->hwnd, "active");
  STATE(is_checkable(e->hwnd) && e->is_window, "checkable");
  STATE(s & STATE_SYSTEM_CHECKED, "checked");
  STATE(s & STATE_SYSTEM_COLLAPSED, "collapsed");
  STATE(s & STATE_SYSTEM_DEFAULT, "is default");
  STATE(strcmp(f->role, "text") == 0 && !(s & STATE_SYSTEM_READONLY), "editable");
  STATE(!(s & STATE_SYSTEM_UNAVAILABLE), "enabled");
  STATE(s & STATE_SYSTEM_EXPANDED, "expanded");
  STATE(s & (STATE_SYSTEM_FOCUSABLE | STATE_SYSTEM_FOCUSED) || (e->is_window && strcmp(f->role, "label") != 0 && strcmp(f->role, "panel") != 0),
        "focusable");
  STATE(s & STATE_SYSTEM_FOCUSED, "focused");
  STATE(s & STATE_SYSTEM_MULTISELECTABLE, "multiselectable");
  STATE(s & STATE_SYSTEM_PRESSED, "pressed");
  STATE(s & STATE_SYSTEM_READONLY, "read only");
  STATE(s & STATE_SYSTEM_SELECTABLE, "selectable");
  STATE(s & STATE_SYSTEM_SELECTED, "selected");
  STATE(!(s & STATE_SYSTEM_UNAVAILABLE), "sensitive");
  STATE(!(s & (STATE_SYSTEM_INVISIBLE | STATE_SYSTEM_OFFSCREEN)), "showing");
  STATE(e->is_window && strcmp(f->role, "text") == 0 && !(GetWindowLongPtrW(e->hwnd, GWL_STYLE) & ES_MULTILINE), "single line");
  STATE(e->is_window && strcmp(f->role, "text") == 0 && (GetWindowLongPtrW(e->hwnd, GWL_STYLE) & ES_MULTILINE), "multi line");
  STATE(!(s & STATE_SYSTEM_INVISIBLE), "visible");
  STATE(s & STATE_SYSTEM_BUSY, "busy");
#undef STATE
  buf_put(b, "]");
}

static RECT g_origin; /* the top-level window's rect: bounds are window-relative, like click's x/y */

static void put_node_open(Buf *b, const Elem *e, const char *path, int child_count) {
  Facts f;
  get_facts(e, &f);
  buf_put(b, "{\"role\":");
  buf_str(b, f.role);
  buf_put(b, ",\"name\":");
  buf_wstr(b, f.name);
  if (f.value && !(f.state & STATE_SYSTEM_PROTECTED)) buf_put(b, ",\"value\":"), buf_wstr(b, f.value);
  buf_put(b, ",\"states\":");
  put_states(b, &f, e);
  buf_put(b, ",\"bounds\":");
  if (f.has_bounds)
    buf_printf(b, "{\"x\":%ld,\"y\":%ld,\"width\":%ld,\"height\":%ld}", f.bounds.left - g_origin.left, f.bounds.top - g_origin.top,
               f.bounds.right - f.bounds.left, f.bounds.bottom - f.bounds.top);
  else buf_put(b, "null");
  buf_put(b, ",\"actions\":[");
  if (f.action) buf_wstr(b, f.action);
  buf_put(b, "],\"path\":");
  buf_str(b, path);
  buf_printf(b, ",\"child_count\":%d", child_count);
  facts_free(&f);
}

/* Children arrays live on the heap: Windows gives a thread 1 MB of stack, and trees can be deep. */
static Elem *kids_alloc(void) { return malloc(sizeof(Elem) * MAX_KIDS); }

static void kids_free(Elem *kids, int n) {
  for (int i = 0; i < n; i++) elem_release(&kids[i]);
  free(kids);
}

static int child_count(const Elem *e) {
  Elem *kids = kids_alloc();
  int n = children(e, kids, MAX_KIDS);
  kids_free(kids, n);
  return n;
}

static void put_node(Buf *b, const Elem *e, const char *path) {
  put_node_open(b, e, path, child_count(e));
  buf_put(b, "}");
}

static void join_path(char *out, size_t n, const char *parent, int i) {
  if (strcmp(parent, "/") == 0) snprintf(out, n, "/%d", i);
  else snprintf(out, n, "%s/%d", parent, i);
}

/* ---- the bound window's root --------------------------------------------------------------- */

static int root_of(const Target *t, Elem *root) {
  if (check_target(t) < 0) return -1;
  IAccessible *acc = client_of(t->hwnd);
  if (!acc)
    return fail("Unavailable", "use --interaction visual_ui", "window %s exposes no accessibility object (AccessibleObjectFromWindow failed)",
                t->window);
  GetWindowRect(t->hwnd, &g_origin);
  *root = (Elem){acc, CHILDID_SELF, t->hwnd, 1, -1, 1};
  return 0;
}

/* ---- tree ---------------------------------------------------------------------------------- */

typedef struct {
  int count, max_nodes, max_depth, truncated;
} Walk;

static void tree_walk(Buf *b, const Elem *e, const char *path, int depth, Walk *w) {
  Elem *kids = kids_alloc();
  int n = children(e, kids, MAX_KIDS);
  w->count++;
  put_node_open(b, e, path, n);
  buf_put(b, ",\"children\":[");
  int written = 0;
  for (int i = 0; i < n; i++) {
    if (depth >= w->max_depth || w->count >= w->max_nodes) {
      w->truncated = 1;
      break;
    }
    char p[512];
    join_path(p, sizeof p, path, i);
    if (written++) buf_put(b, ",");
    tree_walk(b, &kids[i], p, depth + 1, w);
  }
  kids_free(kids, n);
  buf_put(b, "]}");
}

static int int_arg(const JVal *args, const char *name, int dflt, int min, int max, int *out) {
  JVal *v = json_get(args, name);
  if (!v || v->t == J_NULL) {
    *out = dflt;
    return 0;
  }
  if (!json_is_int(v) || v->n < min || v->n > max) return fail("Invalid", NULL, "bad request: %s must be an integer from %d to %d", name, min, max);
  *out = (int)v->n;
  return 0;
}

int op_tree(const Target *t, const JVal *args, Buf *out) {
  Walk w = {0};
  if (int_arg(args, "max_depth", DEFAULT_MAX_DEPTH, 0, 64, &w.max_depth) < 0 || int_arg(args, "max_nodes", DEFAULT_MAX_NODES, 1, 5000, &w.max_nodes) < 0)
    return -1;
  Elem root;
  if (root_of(t, &root) < 0) return -1;
  buf_put(out, "{\"nodes\":[");
  tree_walk(out, &root, "/", 0, &w);
  buf_printf(out, "],\"node_count\":%d,\"truncated\":%s}", w.count, w.truncated ? "true" : "false");
  elem_release(&root);
  return 0;
}

/* ---- walking all elements (find, selectors, typing targets) -------------------------------- */

typedef int (*Visit)(const Elem *e, const char *path, void *ctx); /* nonzero stops the walk */

static int walk_all(const Elem *e, const char *path, int *budget, Visit visit, void *ctx) {
  if ((*budget)-- <= 0) return 1;
  if (visit(e, path, ctx)) return 1;
  if ((int)strlen(path) > 400) return 0; /* deeper than any path fits: stop descending here */
  Elem *kids = kids_alloc();
  int n = children(e, kids, MAX_KIDS), stop = 0;
  for (int i = 0; i < n && !stop; i++) {
    char p[512];
    join_path(p, sizeof p, path, i);
    stop = walk_all(&kids[i], p, budget, visit, ctx);
  }
  kids_free(kids, n);
  return stop;
}

static void lower(wchar_t *w) { CharLowerBuffW(w, (DWORD)wcslen(w)); }

typedef struct {
  const char *role;
  wchar_t *needle; /* lowercased substring (find) or exact name (selector), NULL = any */
  int exact;
  Buf *out;
  int count, limit;
  char paths[20][512];
} Match;

static int matches(const Elem *e, Match *m) {
  Facts f;
  get_facts(e, &f);
  int ok = !m->role || strcmp(f.role, m->role) == 0;
  if (ok && m->needle) {
    if (m->exact) ok = wcscmp(f.name, m->needle) == 0;
    else {
      lower(f.name);
      ok = wcsstr(f.name, m->needle) != NULL;
    }
  }
  facts_free(&f);
  return ok;
}

static int visit_find(const Elem *e, const char *path, void *ctx) {
  Match *m = ctx;
  if (!matches(e, m)) return 0;
  if (m->count++) buf_put(m->out, ",");
  put_node(m->out, e, path);
  return m->count >= m->limit;
}

int op_find(const Target *t, const JVal *args, Buf *out) {
  JVal *role = json_get(args, "role"), *name = json_get(args, "name");
  if ((role && role->t != J_STR && role->t != J_NULL) || (name && name->t != J_STR && name->t != J_NULL))
    return fail("Invalid", NULL, "bad request: role and name must be strings");
  Elem root;
  if (root_of(t, &root) < 0) return -1;
  Match m = {0};
  m.role = role && role->t == J_STR && role->s[0] ? role->s : NULL;
  if (name && name->t == J_STR && name->s[0]) {
    m.needle = wide_of(name->s);
    lower(m.needle);
  }
  m.out = out;
  m.limit = FIND_LIMIT;
  buf_put(out, "{\"matches\":[");
  int budget = SEARCH_LIMIT;
  walk_all(&root, "/", &budget, visit_find, &m);
  buf_printf(out, "],\"count\":%d}", m.count);
  free(m.needle);
  elem_release(&root);
  return 0;
}

/* ---- resolving a path ----------------------------------------------------------------------- */

typedef struct {
  Match m;
  Elem hit;
  char hit_path[512];
} Select;

static int visit_select(const Elem *e, const char *path, void *ctx) {
  Select *s = ctx;
  if (!matches(e, &s->m)) return 0;
  if (s->m.count < 20) snprintf(s->m.paths[s->m.count], 512, "%s", path);
  if (s->m.count++ == 0) {
    s->hit = *e;
    if (s->hit.acc) IAccessible_AddRef(s->hit.acc);
    snprintf(s->hit_path, sizeof s->hit_path, "%s", path);
  }
  return 0;
}

/* The one element a path names: NotFound when gone, Rejected when a selector is ambiguous. */
static int resolve(const Elem *root, const char *path, Elem *out, char *out_path) {
  if (!path || !path[0]) return fail("Invalid", "take a path from tree or find", "path must be a non-empty string");
  if (strncmp(path, "//", 2) == 0) {
    const char *open = strchr(path + 2, '[');
    size_t plen = strlen(path);
    char role[128];
    Select s = {0};
    if (open) {
      if (path[plen - 1] != ']' || (size_t)(open - path - 2) >= sizeof role) return fail("Invalid", "use //<role>[<name>]", "bad selector '%s'", path);
      snprintf(role, sizeof role, "%.*s", (int)(open - path - 2), path + 2);
      char *name = malloc(plen);
      snprintf(name, plen, "%.*s", (int)(path + plen - 1 - open - 1), open + 1);
      s.m.needle = wide_of(name);
      s.m.exact = 1;
      free(name);
    } else {
      if (plen - 2 >= sizeof role) return fail("Invalid", "use //<role>[<name>]", "bad selector '%s'", path);
      snprintf(role, sizeof role, "%s", path + 2);
    }
    s.m.role = role;
    int budget = SEARCH_LIMIT;
    walk_all(root, "/", &budget, visit_select, &s);
    free(s.m.needle);
    if (s.m.count == 0) return fail("NotFound", "run tree or find to see the elements", "no element matches %s", path);
    if (s.m.count > 1) {
      char ev[2048] = "";
      for (int i = 0; i < s.m.count && i < 20; i++) {
        if (i) strncat(ev, ", ", sizeof ev - strlen(ev) - 1);
        strncat(ev, s.m.paths[i], sizeof ev - strlen(ev) - 1);
      }
      elem_release(&s.hit);
      return fail_ev("Rejected", "use one of the index paths in the evidence", ev, "ambiguous target: %d elements match %s", s.m.count, path);
    }
    *out = s.hit;
    snprintf(out_path, 512, "%s", s.hit_path);
    return 0;
  }
  if (path[0] != '/') return fail("Invalid", "use an index path like /0/2/1 or //push button[OK]", "bad element path '%s'", path);
  for (const char *p = path + 1; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p == '/' && p[-1] != '/' && p[1]))) return fail("Invalid", "use an index path like /0/2/1 or //push button[OK]", "bad element path '%s'", path);
  Elem cur = *root;
  if (cur.acc) IAccessible_AddRef(cur.acc);
  const char *p = path + 1;
  while (*p) {
    int idx = atoi(p);
    while (*p && *p != '/') p++;
    if (*p == '/') p++;
    Elem *kids = kids_alloc();
    int n = children(&cur, kids, MAX_KIDS);
    elem_release(&cur);
    if (idx >= n) {
      kids_free(kids, n);
      return fail("NotFound", "run tree again and use a fresh path", "element %s no longer exists", path);
    }
    cur = kids[idx];
    kids[idx].acc = NULL; /* moved to cur */
    kids_free(kids, n);
  }
  *out = cur;
  snprintf(out_path, 512, "%s", path);
  return 0;
}

static int resolve_arg(const Target *t, const JVal *args, Elem *root, Elem *el, char *path) {
  JVal *p = json_get(args, "path");
  if (!p || p->t != J_STR) return fail("Invalid", "take a path from tree or find", "path must be a non-empty string");
  if (root_of(t, root) < 0) return -1;
  if (resolve(root, p->s, el, path) < 0) {
    elem_release(root);
    return -1;
  }
  return 0;
}

int op_element(const Target *t, const JVal *args, Buf *out) {
  Elem root, el;
  char path[512];
  if (resolve_arg(t, args, &root, &el, path) < 0) return -1;
  put_node(out, &el, path);
  elem_release(&el);
  elem_release(&root);
  return 0;
}

/* ---- acting -------------------------------------------------------------------------------- */

static int require_enabled(const Elem *e, const char *path, const Facts *f) {
  if (f->state & STATE_SYSTEM_UNAVAILABLE) return fail("Rejected", "wait until the application enables it", "element %s (%s) is disabled", path, f->role);
  (void)e;
  return 0;
}

int op_activate(const Target *t, const JVal *args, Buf *out) {
  Elem root, el;
  char path[512];
  if (resolve_arg(t, args, &root, &el, path) < 0) return -1;
  Facts f;
  get_facts(&el, &f);
  int rc = require_enabled(&el, path, &f);
  char *action = NULL;
  if (rc == 0) {
    if (el.lb_item >= 0) {
      /* Select the item and tell the owner, as a click on it would. */
      SendMessageW(el.hwnd, LB_SETCURSEL, (WPARAM)el.lb_item, 0);
      HWND parent = GetParent(el.hwnd);
      SendMessageW(parent, WM_COMMAND, MAKEWPARAM(GetDlgCtrlID(el.hwnd), LBN_SELCHANGE), (LPARAM)el.hwnd);
      action = _strdup("select");
    } else if (f.action && el.acc && !el.is_window && IAccessible_accDoDefaultAction(el.acc, var_child(el.child)) == S_OK) {
      action = utf8_of(f.action);
    } else if (el.is_window && el.acc && f.action && IAccessible_accDoDefaultAction(el.acc, var_child(CHILDID_SELF)) == S_OK) {
      action = utf8_of(f.action);
    } else if (el.is_window && class_is(el.hwnd, L"Button") && button_type(el.hwnd) != BS_GROUPBOX) {
      /* Wine's oleacc has no default action for buttons: BM_CLICK is what Windows' proxy does. */
      SendMessageW(el.hwnd, BM_CLICK, 0, 0);
      action = _strdup("click");
    } else {
      rc = fail("Invalid", "activate a button, menu item, check box or list item; use set-text for text fields", "element %s (%s) has no default action",
                path, f.role);
    }
  }
  if (rc == 0) {
    buf_put(out, "{\"activated\":true,\"action\":");
    buf_str(out, action);
    buf_put(out, ",\"element\":");
    put_node(out, &el, path);
    buf_put(out, "}");
  }
  free(action);
  facts_free(&f);
  elem_release(&el);
  elem_release(&root);
  return rc;
}

static int require_editable(const Elem *e, const char *path, const Facts *f) {
  if (strcmp(f->role, "text") != 0 && strcmp(f->role, "password text") != 0)
    return fail("Invalid", "use set-text on a text element (role text)", "element %s (%s) is not editable text", path, f->role);
  if (f->state & STATE_SYSTEM_READONLY) return fail("Rejected", "the application made it read-only", "element %s is read-only", path);
  return require_enabled(e, path, f);
}

static wchar_t *read_text(const Elem *e) {
  if (e->is_window) return window_text(e->hwnd);
  BSTR s = NULL;
  if (e->acc && IAccessible_get_accValue(e->acc, var_child(e->child), &s) == S_OK) return wdup_bstr(s);
  return wdup_bstr(NULL);
}

int op_set_text(const Target *t, const JVal *args, Buf *out) {
  JVal *text = json_get(args, "text");
  if (!text || text->t != J_STR) return fail("Invalid", NULL, "bad request: text must be a string");
  Elem root, el;
  char path[512];
  if (resolve_arg(t, args, &root, &el, path) < 0) return -1;
  Facts f;
  get_facts(&el, &f);
  int rc = require_editable(&el, path, &f);
  wchar_t *want = wide_of(text->s);
  if (rc == 0) {
    BSTR v = SysAllocString(want);
    HRESULT hr = el.acc ? IAccessible_put_accValue(el.acc, var_child(el.child), v) : E_NOTIMPL;
    SysFreeString(v);
    /* A text control whose oleacc cannot set values still takes WM_SETTEXT. */
    if (hr != S_OK && el.is_window) SendMessageW(el.hwnd, WM_SETTEXT, 0, (LPARAM)want);
    else if (hr != S_OK) rc = fail("Upstream", NULL, "the application refused to set the text of %s (HRESULT 0x%08lx)", path, (unsigned long)hr);
  }
  if (rc == 0) {
    wchar_t *now = read_text(&el);
    buf_put(out, "{\"text\":");
    buf_wstr(out, now);
    buf_printf(out, ",\"confirmed\":%s,\"element\":", wcscmp(now, want) == 0 ? "true" : "false");
    put_node(out, &el, path);
    buf_put(out, "}");
    free(now);
  }
  free(want);
  facts_free(&f);
  elem_release(&el);
  elem_release(&root);
  return rc;
}

typedef struct {
  Elem focused, only;
  int n_editable, has_focused;
  char focused_path[512], only_path[512];
  char paths[20][512];
} Typing;

static int visit_typing(const Elem *e, const char *path, void *ctx) {
  Typing *ty = ctx;
  if (!e->is_window || !class_is(e->hwnd, L"Edit") || !IsWindowVisible(e->hwnd)) return 0;
  if (GetWindowLongPtrW(e->hwnd, GWL_STYLE) & ES_READONLY) return 0;
  GUITHREADINFO gti = {sizeof gti};
  if (GetGUIThreadInfo(GetWindowThreadProcessId(e->hwnd, NULL), &gti) && gti.hwndFocus == e->hwnd) {
    ty->focused = *e;
    if (e->acc) IAccessible_AddRef(e->acc);
    snprintf(ty->focused_path, 512, "%s", path);
    ty->has_focused = 1;
    return 1;
  }
  if (ty->n_editable < 20) snprintf(ty->paths[ty->n_editable], 512, "%s", path);
  if (ty->n_editable++ == 0) {
    ty->only = *e;
    if (e->acc) IAccessible_AddRef(e->acc);
    snprintf(ty->only_path, 512, "%s", path);
  }
  return 0;
}

int op_type_semantic(const Target *t, const JVal *args, Buf *out) {
  JVal *text = json_get(args, "text"), *p = json_get(args, "path");
  if (!text || text->t != J_STR || !text->s[0]) return fail("Invalid", NULL, "bad request: text must be a non-empty string");
  Elem root, el;
  char path[512];
  if (p && p->t == J_STR && p->s[0]) {
    if (resolve_arg(t, args, &root, &el, path) < 0) return -1;
  } else {
    if (root_of(t, &root) < 0) return -1;
    Typing ty = {0};
    int budget = SEARCH_LIMIT;
    walk_all(&root, "/", &budget, visit_typing, &ty);
    if (ty.has_focused) {
      elem_release(&ty.only);
      el = ty.focused;
      snprintf(path, 512, "%s", ty.focused_path);
    } else if (ty.n_editable == 1) {
      el = ty.only;
      snprintf(path, 512, "%s", ty.only_path);
    } else {
      elem_release(&ty.only);
      elem_release(&root);
      if (!ty.n_editable) return fail("NotFound", "use tree to find one", "the window has no editable text element");
      char ev[2048] = "";
      for (int i = 0; i < ty.n_editable && i < 20; i++) {
        if (i) strncat(ev, ", ", sizeof ev - strlen(ev) - 1);
        strncat(ev, ty.paths[i], sizeof ev - strlen(ev) - 1);
      }
      return fail_ev("Rejected", "pass path (from tree or find) to say which element", ev, "ambiguous target: no focused editable and %d candidates",
                     ty.n_editable);
    }
  }
  Facts f;
  get_facts(&el, &f);
  int rc = require_editable(&el, path, &f);
  if (rc == 0 && !el.is_window) rc = fail("Invalid", "use set-text", "element %s has no caret to type at", path);
  wchar_t *want = wide_of(text->s);
  if (rc == 0) {
    /* Insert at the caret (the end of the selection), as AT-SPI's insert_text at the caret does. */
    DWORD end = HIWORD(SendMessageW(el.hwnd, EM_GETSEL, 0, 0));
    SendMessageW(el.hwnd, EM_SETSEL, end, end);
    SendMessageW(el.hwnd, EM_REPLACESEL, TRUE, (LPARAM)want);
    wchar_t *now = read_text(&el);
    buf_printf(out, "{\"typed\":%d,\"text\":", (int)wcslen(want));
    buf_wstr(out, now);
    buf_printf(out, ",\"confirmed\":%s,\"element\":", wcsstr(now, want) ? "true" : "false");
    put_node(out, &el, path);
    buf_put(out, "}");
    free(now);
  }
  free(want);
  facts_free(&f);
  elem_release(&el);
  elem_release(&root);
  return rc;
}
