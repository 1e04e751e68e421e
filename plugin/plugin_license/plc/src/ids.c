/*
 * Part of plc.c (compiled through it, never alone): the library's rules for the names every part
 * takes (packages/licensing/src/paths.ts): the namespace in effect and its pattern, an app group's.
 */

/* The namespace by the library's one rule (chooseNamespace): the given one, else PLUGIN_LICENSE_APP,
 * else "plugin-license" (blank counts as not given). */
PLC_SHARED const char *choose_namespace(const char *app) {
  const char *env = getenv("PLUGIN_LICENSE_APP");
  if (app != NULL && !js_blank(app)) return app;
  if (env != NULL && !js_blank(env)) return env;
  return PLC_DEFAULT_APP;
}

/* 1 to max letters, digits or characters of punct, starting with a letter or digit, min long at least. */
static int valid_name(const char *text, const char *punct, size_t min, size_t max) {
  size_t n = 0;
  if (text == NULL) return 0;
  for (const char *p = text; *p != '\0'; p++, n++) {
    char ch = *p;
    int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    if (!alnum && (n == 0 || strchr(punct, ch) == NULL)) return 0;
  }
  return n >= min && n <= max;
}

/* paths.ts NAMESPACE_PATTERN: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit.
 * The agent refuses any other, so plc refuses it before a start or a path. */
PLC_SHARED int valid_namespace(const char *app) { return valid_name(app, "._-", 1, 64); }

/* A macOS app group (TEAMID.com.acme.audio): 3-128 letters, digits, '.' and '-', starting with a
 * letter or digit. */
PLC_SHARED int valid_group(const char *group) { return valid_name(group, ".-", 3, 128); }
