// The words of a failed file-system step, shared by the moves and the lock of the records.

export /** Why a step on the file system failed, in words a musician can act on. */
function advice(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'EACCES':
    case 'EPERM':
      return process.platform === 'win32' ? 'you may not write there, or a program has it open; close your music software and check the folder' : "you may not write there; check the folder's owner and permissions";
    case 'EBUSY':
      return 'a program has it open; close your music software and run the installer again';
    case 'EROFS':
      return 'the disk is read-only';
    case 'ENOSPC':
      return 'the disk is full; free some space and run the installer again';
    case 'ENOTDIR':
    case 'EEXIST':
      return 'something else is where its folder should be; move it away and run the installer again';
    default:
      return e.message.replace(/\s+/g, ' ');
  }
}
