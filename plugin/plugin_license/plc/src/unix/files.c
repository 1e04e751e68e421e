/*
 * Part of plc.c (compiled through it, never alone): POSIX files and folders. The one rule of the
 * user's own (own_entry), the one bounded reader of small files, the reader's folder rule.
 */

/*
 * The one rule of what is the user's own (docs/architecture.md, "Only the user's own agent" and "Only
 * the user's own files"): owned by this user and writable by nobody else. The socket's folder
 * obeys it (check_holder), and so do the data folder, tickets/ and the ticket a plugin trusts
 * (ticket_read).
 */
static int own_entry(const struct stat *st) { return st->st_uid == geteuid() && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0; }

static long file_read(plc_file f, void *p, size_t n) {
  for (;;) {
    ssize_t r = read(f, p, n);
    if (r >= 0 || errno != EINTR) return (long)r;
  }
}

static found_kind found_of(mode_t mode) {
  if (S_ISLNK(mode)) return FOUND_LINK;
  if (S_ISFIFO(mode)) return FOUND_FIFO;
  if (S_ISCHR(mode) || S_ISBLK(mode)) return FOUND_DEVICE;
  if (S_ISDIR(mode)) return FOUND_FOLDER;
  if (S_ISSOCK(mode)) return FOUND_SOCKET;
  return S_ISREG(mode) ? FOUND_FILE : FOUND_OTHER;
}

/* setup.h says what it promises. What the path names is looked at (a link followed or not) before
 * it is opened, O_NONBLOCK so a FIFO put there since opens without a writer, then fstat again. */
PLC_SHARED plc_status read_small_file(const char *path, int flags, char *buf, size_t cap, size_t *len, found_kind *found) {
  const int follow_links = (flags & READ_FOLLOW_LINKS) != 0;
  struct stat st;
  plc_status result;
  int fd;
  *found = FOUND_FILE;
  *len = 0;
  buf[0] = '\0';
  /* What the path names (a link followed or not), before opening it: opening a device can act on it. */
  if ((follow_links ? stat(path, &st) : lstat(path, &st)) != 0)
    return errno == ENOENT || errno == ENOTDIR ? PLC_ERR_NO_FILE : PLC_ERR_FILE_UNREADABLE;
  if (!S_ISREG(st.st_mode)) {
    *found = found_of(st.st_mode);
    return PLC_ERR_NOT_A_FILE;
  }
  if ((unsigned long long)st.st_size > (unsigned long long)(cap - 1)) return PLC_ERR_FILE_TOO_LARGE;
  /* O_NONBLOCK: a FIFO put there since the stat opens without waiting for a writer. */
  fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    if (errno == ELOOP && !follow_links) *found = FOUND_LINK;
    if (errno == ENXIO) *found = FOUND_OTHER;
    return errno == ENOENT ? PLC_ERR_NO_FILE : errno == ENXIO || (errno == ELOOP && !follow_links) ? PLC_ERR_NOT_A_FILE : PLC_ERR_FILE_UNREADABLE;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *found = S_ISREG(st.st_mode) ? FOUND_OTHER : found_of(st.st_mode);
    close(fd);
    return PLC_ERR_NOT_A_FILE;
  }
  if ((flags & READ_OWN_ONLY) != 0 && !own_entry(&st)) {
    *found = st.st_uid != geteuid() ? FOUND_NOT_OWN : FOUND_SHARED;
    close(fd);
    return PLC_ERR_FOREIGN_FOLDER;
  }
  if ((unsigned long long)st.st_size > (unsigned long long)(cap - 1)) {
    close(fd);
    return PLC_ERR_FILE_TOO_LARGE;
  }
  result = read_bounded(fd, buf, cap, len);
  close(fd);
  return result;
}

#ifndef PLC_NO_TICKET

/* The reader's folder rule (docs/license-ticket.md, "The reader": the socket folder's): the folder
 * at path, links resolved, is a folder of the user's own (own_entry: owned by this user, writable
 * by nobody else). MISSING when nothing is there (a ticket in it is missing too); BAD with its words,
 * which start with `name` ("the data folder"), in problem. */
static folder_state own_folder(const char *path, const char *name, char *problem, size_t cap) {
  struct stat st;
  size_t pos = 0;
  problem[0] = '\0';
  if (stat(path, &st) != 0) {
    if (errno == ENOENT) return FOLDER_MISSING;
    add(problem, cap, &pos, name);
    add(problem, cap, &pos, errno == ENOTDIR ? " is under a file, not a folder" : " cannot be checked (permission or a read error)");
    return FOLDER_BAD;
  }
  if (S_ISDIR(st.st_mode) && own_entry(&st)) return FOLDER_OK;
  add(problem, cap, &pos, name);
  if (!S_ISDIR(st.st_mode)) {
    add(problem, cap, &pos, S_ISFIFO(st.st_mode) ? " is a FIFO, not a folder" : S_ISREG(st.st_mode) ? " is a file, not a folder" : " is not a folder");
  } else if (st.st_uid != geteuid()) {
    add(problem, cap, &pos, " belongs to user ");
    add_number(problem, cap, &pos, (unsigned long)st.st_uid);
    add(problem, cap, &pos, ", not to this one: nothing in it is trusted");
  } else {
    add(problem, cap, &pos, " is writable by others (mode ");
    add_mode(problem, cap, &pos, (unsigned long)st.st_mode);
    add(problem, cap, &pos, "): nothing in it is trusted; chmod 700 it");
  }
  return FOLDER_BAD;
}

#endif
