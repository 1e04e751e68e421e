/*
 * Part of plc.c (compiled through it, never alone): the raw machine id on macOS, IOPlatformUUID
 * through IOKit, as node-machine-id reads it for the library. Linux and the BSDs:
 * unix/machine_id.c; Windows: win/machine_id.c.
 */

#ifndef PLC_NO_IOKIT

/* IOKit allocates CoreFoundation objects inside this call, once per process; they are released here. */
static void read_os_raw_id(char *raw, size_t cap) {
  io_service_t device = IOServiceGetMatchingService(MACH_PORT_NULL, IOServiceMatching("IOPlatformExpertDevice"));
  raw[0] = '\0';
  if (device == 0) return;
  CFTypeRef uuid = IORegistryEntryCreateCFProperty(device, CFSTR(kIOPlatformUUIDKey), kCFAllocatorDefault, 0);
  if (uuid != NULL) {
    if (CFGetTypeID(uuid) != CFStringGetTypeID() || !CFStringGetCString((CFStringRef)uuid, raw, (CFIndex)cap, kCFStringEncodingUTF8)) raw[0] = '\0';
    CFRelease(uuid);
  }
  IOObjectRelease(device);
}

#else

/* Only the syntax check of these files on a system without IOKit (setup.h): no id. */
static void read_os_raw_id(char *raw, size_t cap) {
  (void)cap;
  raw[0] = '\0';
}

#endif
