/*
 * Part of plc.c (compiled through it, never alone): Windows files and folders: the one bounded
 * reader of small files (setup.h says what it promises), the reader's folder rule. Paths are UTF-8,
 * converted for the wide API.
 */

/* At most 64 KB a call. */
static long file_read(plc_file f, void *p, size_t n) {
  DWORD done = 0;
  if (!ReadFile(f, p, (DWORD)(n > 65536 ? 65536 : n), &done, NULL)) return -1;
  return (long)done;
}

/* A folder or a link is looked at before anything is opened (CreateFile opens devices and pipes as
 * well as files), then GetFileType must say a disk file. */
PLC_SHARED plc_status read_small_file(const char *path, int flags, char *buf, size_t cap, size_t *len, found_kind *found) {
  const int follow_links = (flags & READ_FOLLOW_LINKS) != 0;
  WCHAR wide[1024];
  HANDLE h;
  DWORD attributes, type;
  BY_HANDLE_FILE_INFORMATION info;
  unsigned long long size;
  plc_status st;
  *found = FOUND_FILE;
  *len = 0;
  buf[0] = '\0';
  if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wide, (int)(sizeof wide / sizeof wide[0])) == 0) return PLC_ERR_INVALID_ARGUMENT;
  /* A folder or a link, before opening anything: CreateFile opens devices and pipes as well as files. */
  attributes = GetFileAttributesW(wide);
  if (attributes != INVALID_FILE_ATTRIBUTES && !follow_links && (attributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
    *found = FOUND_LINK;
    return PLC_ERR_NOT_A_FILE;
  }
  if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
    *found = FOUND_FOLDER;
    return PLC_ERR_NOT_A_FILE;
  }
  h = CreateFileW(wide, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
                  FILE_ATTRIBUTE_NORMAL | (follow_links ? 0 : FILE_FLAG_OPEN_REPARSE_POINT), NULL);
  if (h == INVALID_HANDLE_VALUE) {
    DWORD e = GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return PLC_ERR_NO_FILE;
    if (e == ERROR_PIPE_BUSY || e == ERROR_BAD_PIPE || e == ERROR_INVALID_NAME) {
      *found = FOUND_FIFO;
      return PLC_ERR_NOT_A_FILE;
    }
    return PLC_ERR_FILE_UNREADABLE;
  }
  type = GetFileType(h);
  if (type != FILE_TYPE_DISK || !GetFileInformationByHandle(h, &info) || (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0 ||
      (!follow_links && (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0)) {
    *found = type == FILE_TYPE_PIPE ? FOUND_FIFO : type == FILE_TYPE_CHAR ? FOUND_DEVICE : type != FILE_TYPE_DISK ? FOUND_OTHER
             : (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0 ? FOUND_FOLDER : FOUND_LINK;
    CloseHandle(h);
    return PLC_ERR_NOT_A_FILE;
  }
  size = ((unsigned long long)info.nFileSizeHigh << 32) | info.nFileSizeLow;
  if (size > (unsigned long long)(cap - 1)) {
    CloseHandle(h);
    return PLC_ERR_FILE_TOO_LARGE;
  }
  st = read_bounded(h, buf, cap, len);
  CloseHandle(h);
  return st;
}

#ifndef PLC_NO_TICKET

/* The reader's folder rule on Windows: a folder (its ACL is the user's own under %LOCALAPPDATA%). */
static folder_state own_folder(const char *path, const char *name, char *problem, size_t cap) {
  WCHAR wide[PLC_DATA_CAP];
  DWORD attributes;
  size_t pos = 0;
  problem[0] = '\0';
  if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wide, PLC_DATA_CAP) == 0) {
    add(problem, cap, &pos, name);
    add(problem, cap, &pos, "'s path is not UTF-8");
    return FOLDER_BAD;
  }
  attributes = GetFileAttributesW(wide);
  if (attributes == INVALID_FILE_ATTRIBUTES) {
    DWORD e = GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return FOLDER_MISSING;
    add(problem, cap, &pos, name);
    add(problem, cap, &pos, " cannot be checked (permission or a read error)");
    return FOLDER_BAD;
  }
  if ((attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) return FOLDER_OK;
  add(problem, cap, &pos, name);
  add(problem, cap, &pos, " is not a folder");
  return FOLDER_BAD;
}

#endif
