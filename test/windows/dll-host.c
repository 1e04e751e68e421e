/* A stand-in for a plugin host under Wine: loads a plugin's DLL (a VST3 bundle's binary) by its
 * path, prints "loaded N" (N from the DLL's plugin_value), then waits until the file named by its
 * second argument exists, calls the DLL again, prints "value N" and exits 0. The old code must
 * still run after an installer replaced its bundle. Built with mingw-w64 by test/windows/run.mjs. */
#include <stdio.h>
#include <windows.h>

int wmain(int argc, wchar_t **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: dll-host DLL QUIT_FILE\n");
    return 2;
  }
  HMODULE dll = LoadLibraryW(argv[1]);
  if (dll == NULL) {
    printf("load failed %lu\n", GetLastError());
    return 1;
  }
  int (*value)(void) = (int (*)(void))(void *)GetProcAddress(dll, "plugin_value");
  if (value == NULL) {
    printf("no plugin_value\n");
    return 1;
  }
  printf("loaded %d\n", value());
  fflush(stdout);
  for (int i = 0; i < 3000 && GetFileAttributesW(argv[2]) == INVALID_FILE_ATTRIBUTES; i++) Sleep(100);
  printf("value %d\n", value());
  fflush(stdout);
  return 0;
}
