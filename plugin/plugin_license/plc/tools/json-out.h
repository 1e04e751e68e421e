/* The C tools' one JSON string writer (plc-check, plc-ticket): quotes, backslashes and control
 * characters escaped, every other byte as is. */
#ifndef PLC_JSON_OUT_H
#define PLC_JSON_OUT_H
#include <stdio.h>

static void print_json_string(const char *s) {
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
    if (*p == '"' || *p == '\\') printf("\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f) printf("\\u%04x", *p);
    else putchar(*p);
  }
  putchar('"');
}

#endif
