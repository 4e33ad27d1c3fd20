/*
 * Uplink's Win32 desktop helper: the same JSON-lines protocol as the Linux helper
 * (docs/desktop-helper-protocol.md), answered with Win32 and MSAA. Shared declarations.
 */
#ifndef UPLINK_HELPER_H
#define UPLINK_HELPER_H

#define COBJMACROS
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <oleacc.h>
#include <stddef.h>

/* ---- JSON values (json.c) ---------------------------------------------------------------- */
typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JType;
typedef struct JVal {
  JType t;
  int b;
  double n;
  char *s; /* J_STR: UTF-8, NUL-terminated */
  int len; /* J_ARR/J_OBJ: number of items */
  struct JVal **v;
  char **k;
} JVal;

JVal *json_parse(const char *text, char *err, size_t errlen);
void json_free(JVal *v);
JVal *json_get(const JVal *obj, const char *key);
int json_is_int(const JVal *v);

/* ---- output buffer ------------------------------------------------------------------------- */
typedef struct {
  char *p;
  size_t n, cap;
} Buf;

void buf_put(Buf *b, const char *s);
void buf_putn(Buf *b, const char *s, size_t n);
void buf_printf(Buf *b, const char *fmt, ...);
void buf_str(Buf *b, const char *utf8);     /* a JSON string */
void buf_wstr(Buf *b, const wchar_t *w);   /* a JSON string from UTF-16 */
void buf_base64(Buf *b, const unsigned char *data, size_t n);
void buf_free(Buf *b);

char *utf8_of(const wchar_t *w);   /* malloc'd */
wchar_t *wide_of(const char *s);   /* malloc'd */

/* ---- errors: an op fails by setting this and returning -1 --------------------------------- */
typedef struct {
  const char *kind;
  char message[1024];
  char hint[512];
  char evidence[2048];
} HelperErr;
extern HelperErr g_err;
int fail(const char *kind, const char *hint, const char *fmt, ...);
int fail_ev(const char *kind, const char *hint, const char *evidence, const char *fmt, ...);
int target_changed(const char *hint, const char *evidence_fmt, ...);

/* ---- the bound target -------------------------------------------------------------------- */
typedef struct {
  HWND hwnd;
  char window[32];
  DWORD pid;
  int has_start;
  long long start_time; /* microseconds since 1970 (process creation time) */
  wchar_t image[MAX_PATH * 2];
  int has_image;
} Target;

int check_target(const Target *t);
int process_facts(DWORD pid, long long *start_us, wchar_t *image, size_t image_len);
void window_id(HWND h, char *out, size_t n);
HWND top_of(HWND h);

/* ---- accessibility (a11y.c) --------------------------------------------------------------- */
extern const GUID UPLINK_IID_IAccessible;
int a11y_available(HWND hwnd);
int op_tree(const Target *t, const JVal *args, Buf *out);
int op_find(const Target *t, const JVal *args, Buf *out);
int op_element(const Target *t, const JVal *args, Buf *out);
int op_activate(const Target *t, const JVal *args, Buf *out);
int op_set_text(const Target *t, const JVal *args, Buf *out);
int op_type_semantic(const Target *t, const JVal *args, Buf *out);

/* ---- pixels and input (visual.c, png.c) --------------------------------------------------- */
int op_screenshot(const Target *t, const JVal *args, Buf *out);
int op_click(const Target *t, const JVal *args, Buf *out);
int op_type_visual(const Target *t, const JVal *args, Buf *out);
int op_key(const Target *t, const JVal *args, Buf *out);
const char *dpi_mode(void);
void dpi_init(void);

unsigned char *png_encode_rgb(int width, int height, const unsigned char *rgb, size_t *out_len);

#endif
