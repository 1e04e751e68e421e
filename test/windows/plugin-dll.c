/* A plugin's code in a VST3 bundle for the Windows installer checks: built twice with mingw-w64,
 * -DVALUE=1 and -DVALUE=2, so a host can tell which version it loaded. */
__declspec(dllexport) int plugin_value(void) { return VALUE; }
