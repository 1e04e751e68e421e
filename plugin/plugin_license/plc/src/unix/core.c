/*
 * Part of plc.c (compiled through it, never alone): the POSIX basics the other unix/ and darwin/
 * files use: the monotonic clock, once per process, the user's homes, a mode in words.
 */

PLC_SHARED int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

PLC_SHARED void run_once(plc_once *once, void (*fn)(void)) { pthread_once(once, fn); }

/* The home the password database gives this user (in a macOS sandbox HOME is the container's: this
 * is the real one); NULL without one. pwbuf holds the entry's text. */
PLC_SHARED const char *account_home(char *pwbuf, size_t cap) {
  struct passwd pw, *found = NULL;
  if (getpwuid_r(getuid(), &pw, pwbuf, cap, &found) != 0 || found == NULL) return NULL;
  return found->pw_dir;
}

/* The user's home, by the library's one rule (paths.ts userHome): HOME when set, else the password
 * database's; NULL when it is empty or not absolute (a folder relative to the working one is no
 * home: an agent started in / would write /.local/share/APP) or there is none. */
PLC_SHARED const char *home_folder(char *pwbuf, size_t cap) {
  const char *home = getenv("HOME");
  if (home != NULL) return home[0] == '/' ? home : NULL;
  home = account_home(pwbuf, cap);
  return home == NULL || home[0] != '/' ? NULL : home;
}

/* A file mode's permission digits ("755"), for words. */
PLC_SHARED void add_mode(char *out, size_t cap, size_t *pos, unsigned long mode) {
  char digits[4];
  digits[0] = (char)('0' + ((mode >> 6) & 7));
  digits[1] = (char)('0' + ((mode >> 3) & 7));
  digits[2] = (char)('0' + (mode & 7));
  digits[3] = '\0';
  add(out, cap, pos, digits);
}
