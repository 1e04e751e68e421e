/*
 * Part of plc.c (compiled through it, never alone): the raw machine id on Windows,
 * HKLM\SOFTWARE\Microsoft\Cryptography\MachineGuid from the 64-bit view, as node-machine-id
 * reads it for the library. Linux and the BSDs: unix/machine_id.c; macOS: darwin/machine_id.c.
 */

static void read_os_raw_id(char *raw, size_t cap) {
  WCHAR value[128];
  DWORD size = (DWORD)sizeof value;
  raw[0] = '\0';
  if (RegGetValueW(HKEY_LOCAL_MACHINE, L"SOFTWARE\\Microsoft\\Cryptography", L"MachineGuid", RRF_RT_REG_SZ | RRF_SUBKEY_WOW6464KEY, NULL, value,
                   &size) != ERROR_SUCCESS ||
      WideCharToMultiByte(CP_UTF8, 0, value, -1, raw, (int)cap, NULL, NULL) == 0)
    raw[0] = '\0';
}
