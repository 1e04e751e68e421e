/*
 * Part of plc.c (compiled through it, never alone): the agent on demand. Where the vendor's
 * executable is installed, and its start as `EXECUTABLE agent run --app APP` by the one launcher,
 * plc_start_program (unix/spawn.c, win/spawn.c), which the JUCE module's manager start uses too.
 */

/* The executable's default name, as the installers place it. */
#define PLC_DEFAULT_EXECUTABLE_NAME "plugin-license"

/* One component of the installers' place (the vendor, the program's name): a file name, never a
 * path. A separator, a control character, "." or ".." would name another folder; on Windows the
 * characters a file name cannot hold are refused too. */
static int valid_component(const char *s) {
  size_t n = 0;
  if (s == NULL || s[0] == '\0' || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return 0;
  for (const char *p = s; *p != '\0'; p++, n++) {
    unsigned char ch = (unsigned char)*p;
    if (ch < 0x20 || ch == 0x7f || ch == '/' || ch == '\\' || strchr(PLC_NAME_RESERVED, ch) != NULL) return 0;
  }
  return n <= 255;
}

plc_status plc_default_executable(const char *vendor, const char *name, char *out, size_t out_size) {
  char path[PLC_DATA_CAP];
  int variable;
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';
  path[0] = '\0';
  if (name == NULL || name[0] == '\0') name = PLC_DEFAULT_EXECUTABLE_NAME;
  if (!valid_component(name) || (vendor != NULL && vendor[0] != '\0' && !valid_component(vendor))) return PLC_ERR_INVALID_ARGUMENT;
  /* PLUGIN_LICENSE_EXECUTABLE wins; else the installers' place. */
  variable = executable_variable(path, sizeof path);
  if (variable < 0) return PLC_ERR_PATH_TOO_LONG;
  if (variable == 0) {
    plc_status st = executable_place(vendor, name, path, sizeof path);
    if (st != PLC_OK) return st;
  }
  if (fit_data(path, out, out_size) != PLC_OK) return PLC_ERR_PATH_TOO_LONG;
  /* The path stays in out when nothing is there: the caller names it in its message. */
  return is_program(out) ? PLC_OK : PLC_ERR_NO_FILE;
}

plc_status plc_start_agent(const char *executable, const char *app) {
  const char *argv[6];
  app = choose_namespace(app);
  if (executable == NULL || !valid_namespace(app)) return PLC_ERR_INVALID_ARGUMENT;
  argv[0] = executable;
  argv[1] = "agent";
  argv[2] = "run";
  argv[3] = "--app";
  argv[4] = app;
  argv[5] = NULL;
  return plc_start_program(argv, NULL, NULL);
}
