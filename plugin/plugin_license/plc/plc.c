/*
 * plc: C client of the plugin-license agent and reader of its license ticket. See plc.h for the
 * contract and README.md for the files.
 *
 * The one file a build compiles (the JUCE module's plugin_license_plc.c, the Makefile, a vendor's
 * own build system): it includes the library's files in dependency order, as SQLite and JUCE's
 * modules build many files as one unit, so every helper stays static and nothing but plc.h's
 * functions is exported. src/setup.h first (feature macros, system headers, the compile-out
 * switches, the OS interface); then the portable files, a concern each, the helpers every part uses
 * before the parts; then the OS's own files (the OS interface's one definition), one folder per OS
 * with the same names: unix/, with darwin/ for what macOS does otherwise, and win/.
 *
 * No heap: requests are streamed through a small buffer on the stack, answers land in
 * plc_client.buf, a ticket and a signed ticket are read into 4 KB buffers on the stack.
 */
#include "src/setup.h"

/* ---------------------------------------------------------------- portable */

#include "src/common.c"   /* text into fixed buffers, JavaScript's white space, a deadline's time left */
#include "src/strerror.c" /* the words of statuses, reasons and verdicts */
#include "src/time.c"     /* RFC 3339 text to Unix seconds */
#include "src/ids.c"      /* the library's rules for namespaces and app groups */
#if !defined(PLC_NO_AGENT_CLIENT) || !defined(PLC_NO_TICKET)
#include "src/json.c" /* the one JSON reader */
#endif

#ifndef PLC_NO_AGENT_CLIENT
#include "src/protocol.c" /* the agent protocol's messages */
#include "src/client.c"   /* the connection, the calls, the subscription */
#include "src/describe.c" /* plc_describe */
#endif

#ifndef PLC_NO_AGENT_START
#include "src/agent_start.c" /* the vendor's executable, the agent's start */
#endif

#ifndef PLC_NO_TICKET
#include "src/sha256.c"        /* SHA-256, HMAC-SHA256 */
#include "src/sha512.c"        /* SHA-512, for Ed25519 */
#include "src/ed25519.c"       /* Ed25519 verification (RFC 8032) with libsodium's refusals */
#include "src/machine_id.c"    /* this machine's raw id: the OS's, else the generated secret */
#include "src/ticket.c"        /* the ticket: its path, its folders, its judge */
#include "src/signed_ticket.c" /* the vendor's keys, the signed ticket, the reader's rule */
#endif

/* ---------------------------------------------------------------- the OS interface */

#ifdef _WIN32
#include "src/win/core.c"
#include "src/win/files.c"
#include "src/win/places.c"
#ifndef PLC_NO_TICKET
#include "src/win/paths.c"
#include "src/win/machine_id.c"
#endif
#ifndef PLC_NO_AGENT_CLIENT
#include "src/win/transport.c"
#include "src/win/waker.c"
#endif
#ifndef PLC_NO_AGENT_START
#include "src/win/spawn.c"
#endif

#else /* POSIX */
#include "src/unix/core.c"
#include "src/unix/files.c"
#if defined(__APPLE__)
#include "src/darwin/places.c"
#else
#include "src/unix/places.c"
#endif
#ifndef PLC_NO_TICKET
#include "src/unix/paths.c"
#if defined(__APPLE__)
#include "src/darwin/machine_id.c"
#else
#include "src/unix/machine_id.c"
#endif
#endif
#ifndef PLC_NO_AGENT_CLIENT
#include "src/unix/transport.c"
#include "src/unix/waker.c"
#endif
#ifndef PLC_NO_AGENT_START
#include "src/unix/spawn.c"
#endif
#endif
