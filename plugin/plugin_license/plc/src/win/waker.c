/*
 * Part of plc.c (compiled through it, never alone): the Windows waker, a manual-reset event: the
 * handle plc_set_interrupt takes.
 */

plc_status plc_waker_open(plc_waker *waker) {
  HANDLE event;
  if (waker == NULL) return PLC_ERR_INVALID_ARGUMENT;
  waker->wait_handle = waker->signal_handle = PLC_NO_INTERRUPT;
  event = CreateEventA(NULL, TRUE, FALSE, NULL);
  if (event == NULL) return PLC_ERR_IO;
  waker->wait_handle = waker->signal_handle = (intptr_t)event;
  return PLC_OK;
}

void plc_waker_signal(plc_waker *waker) {
  if (waker != NULL && waker->signal_handle != PLC_NO_INTERRUPT) SetEvent((HANDLE)waker->signal_handle);
}

int plc_waker_wait(plc_waker *waker, int timeout_ms) {
  if (waker == NULL || waker->wait_handle == PLC_NO_INTERRUPT) return 0;
  return WaitForSingleObject((HANDLE)waker->wait_handle, (DWORD)(timeout_ms > 0 ? timeout_ms : 0)) == WAIT_OBJECT_0;
}

void plc_waker_clear(plc_waker *waker) {
  if (waker != NULL && waker->wait_handle != PLC_NO_INTERRUPT) ResetEvent((HANDLE)waker->wait_handle);
}

void plc_waker_close(plc_waker *waker) {
  if (waker == NULL) return;
  if (waker->wait_handle != PLC_NO_INTERRUPT) CloseHandle((HANDLE)waker->wait_handle);
  waker->wait_handle = waker->signal_handle = PLC_NO_INTERRUPT;
}
