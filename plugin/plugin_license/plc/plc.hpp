// plc.hpp: the C++17 face of plc.h for plugins (JUCE or any other framework).
// Drop plc.h, plc.c and this header into the project; plc.c compiles as C (C99 or later). The
// JUCE module plugin_license carries all three and compiles plc.c itself.
//
//   plc::Monitor license{"your-project-id", {"acme-audio"}};  // member of your AudioProcessor
//   // processBlock (audio thread): one atomic load, never blocks
//   if (!license.isLicensed()) buffer.clear();
//
// A Monitor knows its license at construction, with or without the agent: it judges the
// project's ticket (docs/license-ticket.md) first, so the first audio block is right. Every Monitor of
// one project in one process shares one connection and one thread, which follows the agent's
// `changed` notifications (no polling): a revocation or an activation made elsewhere reaches
// isLicensed() within a second. When it cannot reach the agent it starts one (MonitorOptions::
// executable, at most once per 30 s) and meanwhile the ticket governs. No exceptions are thrown by this header
// (std::thread aborts when it cannot start a thread under -fno-exceptions). Client calls block up
// to their time-out: keep them off the audio and message threads.
#ifndef PLC_HPP
#define PLC_HPP

#include "plc.h"

#include <algorithm>
#include <iterator>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__) || defined(__APPLE__)
#include <pthread.h>
#endif

#ifndef PLC_AGENT_START_INTERVAL_S
#define PLC_AGENT_START_INTERVAL_S 30
#endif
static_assert(PLC_AGENT_START_INTERVAL_S > 0, "PLC_AGENT_START_INTERVAL_S is a number of seconds above 0");

namespace plc {

enum class Status : int {
  ok = PLC_OK,
  invalidArgument = PLC_ERR_INVALID_ARGUMENT,
  pathTooLong = PLC_ERR_PATH_TOO_LONG,
  noPath = PLC_ERR_NO_PATH,
  notRunning = PLC_ERR_NOT_RUNNING,
  connectFailed = PLC_ERR_CONNECT,
  timeout = PLC_ERR_TIMEOUT,
  io = PLC_ERR_IO,
  closed = PLC_ERR_CLOSED,
  tooLarge = PLC_ERR_TOO_LARGE,
  protocol = PLC_ERR_PROTOCOL,
  agentError = PLC_ERR_AGENT,
  foreignAgent = PLC_ERR_FOREIGN_AGENT,
  interrupted = PLC_ERR_INTERRUPTED,
  agentOutdated = PLC_ERR_AGENT_OUTDATED,
  foreignFolder = PLC_ERR_FOREIGN_FOLDER,
  notAFile = PLC_ERR_NOT_A_FILE,
  fileTooLarge = PLC_ERR_FILE_TOO_LARGE,
  noFile = PLC_ERR_NO_FILE,
  fileUnreadable = PLC_ERR_FILE_UNREADABLE,
};

enum class Reason : int {
  none = PLC_REASON_NONE,
  notActivated = PLC_REASON_NOT_ACTIVATED,
  codeRevoked = PLC_REASON_CODE_REVOKED,
  codeNotFound = PLC_REASON_CODE_NOT_FOUND,
  deactivated = PLC_REASON_DEACTIVATED,
  graceExpired = PLC_REASON_GRACE_EXPIRED,
  clockTampered = PLC_REASON_CLOCK_TAMPERED,
  cacheInvalid = PLC_REASON_CACHE_INVALID,
  other = PLC_REASON_OTHER,
  // Keys configured (MonitorOptions::ticketKeys) and the ticket or the agent says valid, but no
  // ticket signed by the vendor says so: not licensed (docs/signed-ticket.md; text "unsigned").
  unsignedTicket = PLC_REASON_UNSIGNED,
};

enum class Source : int { unknown = PLC_SOURCE_UNKNOWN, online = PLC_SOURCE_ONLINE, cache = PLC_SOURCE_CACHE, offline = PLC_SOURCE_OFFLINE };

// The license as known now: from the agent's last answer, else from the ticket; `unknown` when
// neither says anything (no ticket, and the agent not running or not answered yet).
enum class State : std::uint8_t { unknown, valid, invalid };

// Where the state comes from: the agent's answer, the ticket on disk (the agent not reached yet,
// or gone), or nowhere (unknown).
enum class Origin : std::uint8_t { none, ticket, agent };

inline const char *describe(Status status) noexcept { return plc_strerror(static_cast<plc_status>(status)); }
inline const char *name(Reason reason) noexcept { return plc_reason_name(static_cast<plc_reason>(reason)); }

struct License {
  bool valid = false;
  Reason reason = Reason::none;
  std::string reasonText;
  Source source = Source::unknown;
  std::string projectId;
  std::string codeHint;
  long activations = -1;
  long maxActivations = -1;
  std::string validatedAt;
  std::string graceUntil;
  std::string nextCheckAt;
  std::int64_t validatedAtSeconds = 0;
  std::int64_t graceUntilSeconds = 0;
  std::int64_t nextCheckAtSeconds = 0;
  // The agent's signed_ticket: the text of the project's signed ticket, when its answer carried one
  // (docs/agent-protocol.md). A Monitor with keys judges the answer by it.
  std::optional<std::string> signedTicket;
  // In plc::Monitor with keys: the valid_until of the signed ticket that made this license valid
  // (the vendor's signature holds until then); 0 otherwise.
  std::int64_t signedUntilSeconds = 0;
};

struct AgentError {
  long code = 0;        // JSON-RPC code, e.g. -32602, -32001 (the service refused)
  std::string message;  // the agent's words, for the user
  std::string detail;   // data.code: the service's code, or offline_refused / invalid_offline_file
};

// The answer to a call that returns a license state (check, activate, deactivate, refresh,
// offlineImport).
struct CheckResult {
  Status status = Status::notRunning;
  std::optional<License> license;        // set when status == Status::ok
  std::optional<AgentError> agentError;  // set when the agent answered an error
  // Set when status is foreignFolder or foreignAgent: the path and who holds it, in words
  // (plc_describe), for the user.
  std::string holder;
  // Where `license` comes from: the agent (every Client call), or, in plc::Monitor::last(), the
  // ticket, judged while the agent was not reached: then `status` is what the last try to reach
  // the agent gave (notRunning before the first try) and `license` the ticket's state.
  Origin origin = Origin::none;

  bool valid() const noexcept { return license.has_value() && license->valid; }
  State state() const noexcept { return !license ? State::unknown : license->valid ? State::valid : State::invalid; }
};

// The answer to offlineRequest: the request to carry to a computer that is online.
struct OfflineRequest {
  Status status = Status::notRunning;
  std::string document;  // one line of text; save it as a file, or show it to copy
  std::string fileName;  // a file name to suggest
  std::optional<AgentError> agentError;
  std::string holder;  // as in CheckResult
};

// A file the user picked, read by plc_read_document: only a regular file (a link to one is
// followed), of at most `limit` bytes; a FIFO, a device or a folder is refused before any read.
struct Document {
  Status status = Status::noFile;  // ok, notAFile, fileTooLarge, noFile, fileUnreadable
  std::string text;                // the file's bytes when status == Status::ok
};

// Reads a file the user picked: an offline response by default. Blocks only as long as reading
// `limit` bytes of a regular file takes (keep it off the message thread all the same: the file
// may sit on a network share).
inline Document readDocument(const std::string &path, std::size_t limit = PLC_IMPORT_MAX_BYTES) {
  Document out;
  std::vector<char> buf(limit + 1);
  std::size_t len = 0;
  if (path.find('\0') != std::string::npos) {
    out.status = Status::invalidArgument;
    return out;
  }
  out.status = static_cast<Status>(plc_read_document(path.c_str(), buf.data(), buf.size(), &len));
  if (out.status == Status::ok) out.text.assign(buf.data(), len);
  return out;
}

namespace detail {

inline CheckResult toResult(plc_status status, const plc_license &raw) {
  CheckResult out;
  out.status = static_cast<Status>(status);
  if (status == PLC_OK) {
    License lic;
    lic.valid = raw.valid != 0;
    lic.reason = static_cast<Reason>(raw.reason);
    lic.reasonText = raw.reason_text;
    lic.source = static_cast<Source>(raw.source);
    lic.projectId = raw.project_id;
    lic.codeHint = raw.code_hint;
    lic.activations = raw.activations;
    lic.maxActivations = raw.max_activations;
    lic.validatedAt = raw.validated_at;
    lic.graceUntil = raw.grace_until;
    lic.nextCheckAt = raw.next_check_at;
    lic.validatedAtSeconds = raw.validated_at_s;
    lic.graceUntilSeconds = raw.grace_until_s;
    lic.nextCheckAtSeconds = raw.next_check_at_s;
    // A text over the limit is kept one byte over it, for the judge to refuse.
    if (raw.has_signed_ticket) lic.signedTicket = std::string(raw.signed_ticket, std::min<std::size_t>(raw.signed_ticket_len, PLC_TICKET_MAX_BYTES + 1));
    out.license = std::move(lic);
    out.origin = Origin::agent;
  } else if (status == PLC_ERR_AGENT || status == PLC_ERR_AGENT_OUTDATED) {
    out.agentError = AgentError{raw.error_code, raw.error_message, raw.error_detail};
  }
  return out;
}

// A NUL-terminated copy in a fixed buffer; false when it does not fit (or is empty and must not be).
template <std::size_t N>
bool copyText(std::string_view text, char (&out)[N], bool allowEmpty = false) noexcept {
  if ((!allowEmpty && text.empty()) || text.size() >= N) return false;
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return true;
}

}  // namespace detail

// The agent's socket path (or pipe name) for namespace `app` ("": PLUGIN_LICENSE_APP, else
// plugin-license); PLUGIN_LICENSE_SOCKET wins. With `appGroup` (macOS, sandboxed plugins) the
// app-group form: see plc_app_group_socket_path. Empty when none can be made.
inline std::string defaultSocketPath(std::string_view app = {}, std::string_view appGroup = {}) {
  char name[128];
  char group[129];
  char path[PLC_PATH_CAP];
  if (!detail::copyText(app, name, true) || !detail::copyText(appGroup, group, true)) return {};
  const plc_status st = group[0] ? plc_app_group_socket_path(group, name[0] ? name : nullptr, path, sizeof path)
                                 : plc_default_socket_path(name[0] ? name : nullptr, path, sizeof path);
  return st == PLC_OK ? std::string(path) : std::string();
}

// One connection to the agent. Not copyable or movable (it embeds its buffer); not thread-safe:
// give each thread its own. Every call is bounded by its time-out.
class Client {
 public:
  // nullptr or "": PLUGIN_LICENSE_SOCKET, else the protocol's default path.
  explicit Client(const char *socketPath = nullptr) noexcept { plc_init(&client_, socketPath); }
  ~Client() { plc_close(&client_); }
  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;

  using ms = std::chrono::milliseconds;

  CheckResult check(std::string_view projectId, ms timeout = ms(PLC_DEFAULT_TIMEOUT_MS)) noexcept {
    return projectCall(projectId, timeout, [this](const char *id, plc_license *raw, int t) { return plc_check(&client_, id, raw, t); });
  }
  // Waits on the service: never on the audio or message thread.
  CheckResult activate(std::string_view projectId, std::string_view code, ms timeout = ms(PLC_SERVICE_TIMEOUT_MS)) noexcept {
    char c[PLC_CODE_MAX + 1];
    if (!detail::copyText(code, c)) return invalid();
    return projectCall(projectId, timeout, [this, &c](const char *id, plc_license *raw, int t) { return plc_activate(&client_, id, c, raw, t); });
  }
  CheckResult deactivate(std::string_view projectId, ms timeout = ms(PLC_SERVICE_TIMEOUT_MS)) noexcept {
    return projectCall(projectId, timeout, [this](const char *id, plc_license *raw, int t) { return plc_deactivate(&client_, id, raw, t); });
  }
  CheckResult refresh(std::string_view projectId, ms timeout = ms(PLC_SERVICE_TIMEOUT_MS)) noexcept {
    return projectCall(projectId, timeout, [this](const char *id, plc_license *raw, int t) { return plc_refresh(&client_, id, raw, t); });
  }
  // `code` empty: the request carries none (the online step gives it).
  OfflineRequest offlineRequest(std::string_view projectId, std::string_view code = {}, ms timeout = ms(PLC_SERVICE_TIMEOUT_MS)) {
    OfflineRequest out;
    char id[sizeof(plc_license{}.project_id)];
    char c[PLC_CODE_MAX + 1];
    if (!detail::copyText(projectId, id) || !detail::copyText(code, c, true)) {
      out.status = Status::invalidArgument;
      return out;
    }
    auto doc = std::make_unique<plc_document>();
    const plc_status st = plc_offline_request(&client_, id, c[0] ? c : nullptr, doc.get(), static_cast<int>(timeout.count()));
    out.status = static_cast<Status>(st);
    if (st == PLC_OK) {
      out.document = doc->text;
      out.fileName = doc->file_name;
    } else if (st == PLC_ERR_AGENT || st == PLC_ERR_AGENT_OUTDATED) {
      out.agentError = AgentError{doc->error_code, doc->error_message, doc->error_detail};
    } else if (st == PLC_ERR_FOREIGN_FOLDER || st == PLC_ERR_FOREIGN_AGENT) {
      out.holder = describe(out.status);
    }
    return out;
  }
  // A response file's contents or its line of text.
  CheckResult offlineImport(const std::string &document, ms timeout = ms(PLC_SERVICE_TIMEOUT_MS)) noexcept {
    plc_license raw;
    if (document.find('\0') != std::string::npos) return invalid();
    const plc_status st = plc_offline_import(&client_, document.c_str(), &raw, static_cast<int>(timeout.count()));
    return withHolder(detail::toResult(st, raw));
  }

  void close() noexcept { plc_close(&client_); }
  plc_client *raw() noexcept { return &client_; }

  // The words for a status this client's last call returned, with what it learnt (plc_describe):
  // for foreignFolder and foreignAgent, the path and who holds it.
  std::string describe(Status status) const {
    char words[512];
    return plc_describe(&client_, static_cast<plc_status>(status), words, sizeof words);
  }
  // `r` with its holder's words filled in when it failed on who holds the path.
  CheckResult withHolder(CheckResult r) const {
    if (r.status == Status::foreignFolder || r.status == Status::foreignAgent) r.holder = describe(r.status);
    return r;
  }

 private:
  static CheckResult invalid() {
    CheckResult r;
    r.status = Status::invalidArgument;
    return r;
  }

  template <typename Call>
  CheckResult projectCall(std::string_view projectId, ms timeout, Call call) noexcept {
    char id[sizeof(plc_license{}.project_id)];
    plc_license raw;
    if (!detail::copyText(projectId, id)) return invalid();
    return withHolder(detail::toResult(call(id, &raw, static_cast<int>(timeout.count())), raw));
  }


  plc_client client_;
};

// What isLicensed() answers while the state is unknown: no ticket on disk (never activated here,
// or deactivated and purged, or a sandbox that cannot read it) and no answer from the agent (not
// running, or not answering). Rare now: a licensed computer has a ticket, which governs whenever
// the agent is away, so stopping the agent neither unlocks nor silences a plugin. A license known
// to be invalid (by the agent or the ticket) stays silent. Nothing is remembered across a restart
// of the host. With no ticket, before the first try to reach the agent has ended (a few
// milliseconds; at most the one-second connect time-out of an agent that hangs) isLicensed() is
// false whatever the policy.
class UnknownPolicy {
 public:
  // Keep playing however long the state is unknown. A vendor's choice: it lets anyone with no
  // ticket play while no agent answers (removing the ticket and stopping the agent unlocks).
  static constexpr UnknownPolicy keepPlaying() noexcept { return UnknownPolicy(-1); }
  // Play on for `seconds` of unknown, then go silent until the agent or a ticket says otherwise.
  // The default is silentAfter(5 s): long enough for an agent started on demand to answer.
  static constexpr UnknownPolicy silentAfter(std::chrono::seconds seconds) noexcept {
    return UnknownPolicy(seconds.count() < 0 ? 0 : seconds.count() > 65534 ? 65534 : static_cast<long>(seconds.count()));
  }
  constexpr bool allows(std::uint32_t unknownSeconds) const noexcept { return seconds_ < 0 || unknownSeconds < static_cast<std::uint32_t>(seconds_); }

 private:
  constexpr explicit UnknownPolicy(long seconds) noexcept : seconds_(seconds) {}
  long seconds_;
};

// The first Monitor of a project in a process sets its shared watch: its options (app, appGroup,
// executable...) hold for every later Monitor of that project and socket.
struct MonitorOptions {
  std::string app;         // the vendor's namespace; "": PLUGIN_LICENSE_APP, else plugin-license
  std::string appGroup;    // macOS, sandboxed plugins: the vendor's app group (the agent's socket and ticket in its container)
  std::string socketPath;  // "": PLUGIN_LICENSE_SOCKET, else the namespace's default path
  UnknownPolicy unknown = UnknownPolicy::silentAfter(std::chrono::seconds(5));
  // The program started as `EXECUTABLE agent run --app APP` when no agent answers; "": the rule
  // "Manage licenses…" uses (plc_default_executable: PLUGIN_LICENSE_EXECUTABLE, else the
  // installers' place for vendor and executableName), looked up when a start is due.
  std::string executable;
  std::string vendor;                          // the installers' folder (Windows, macOS)
  std::string executableName = "plugin-license";
  bool startAgent = true;  // false: never start an agent
  // The vendor's Ed25519 public keys, as plugin-license offline keygen prints them ("ed25519:" and 43
  // base64url characters), COMPILED IN: never read them from the environment, a file or the agent,
  // since whoever can set those can name a key of their own. With keys, the plugin plays only on a
  // ticket signed by one of them (docs/signed-ticket.md): a ticket or an agent's "valid" alone is
  // not licensed (Reason::unsignedTicket). A key that does not parse is kept as one nothing
  // verifies with, so a typo silences the plugin rather than dropping back to the unsigned rules.
  // Empty: the ticket's own rules (docs/license-ticket.md), as before.
  std::vector<std::string> ticketKeys;
};

namespace detail {

// The published word, read by the audio thread with one load: bits 0-1 State, 2-3 the last known
// State (unknown: none yet), bit 4 set once the state is settled (a ticket was judged, or the first
// try to reach the agent has ended), 5-6 Origin, 8-15 Reason, 16-31 whole seconds of unknown
// (saturating).
constexpr std::uint32_t kSettled = 1u << 4;
constexpr std::uint32_t packWord(State state, State lastKnown, Reason reason, std::uint32_t unknownSeconds, bool settled = true,
                                 Origin origin = Origin::none) noexcept {
  return static_cast<std::uint32_t>(state) | static_cast<std::uint32_t>(lastKnown) << 2 | (settled ? kSettled : 0u) |
         (static_cast<std::uint32_t>(origin) & 3u) << 5 | (static_cast<std::uint32_t>(reason) & 0xFFu) << 8 |
         std::min<std::uint32_t>(unknownSeconds, 0xFFFFu) << 16;
}
constexpr bool wordSettled(std::uint32_t w) noexcept { return (w & kSettled) != 0; }
constexpr State wordState(std::uint32_t w) noexcept { return static_cast<State>(w & 3u); }
constexpr State wordLastKnown(std::uint32_t w) noexcept { return static_cast<State>((w >> 2) & 3u); }
constexpr Origin wordOrigin(std::uint32_t w) noexcept { return static_cast<Origin>((w >> 5) & 3u); }
constexpr Reason wordReason(std::uint32_t w) noexcept { return static_cast<Reason>((w >> 8) & 0xFFu); }
constexpr std::uint32_t wordUnknownSeconds(std::uint32_t w) noexcept { return w >> 16; }

// isLicensed()'s one rule, on a published word: a known state as it is; unknown before the state
// is settled silent; after, silent when the last known state was invalid, else as the policy says.
constexpr bool licensedBy(std::uint32_t w, UnknownPolicy policy) noexcept {
  return wordState(w) == State::valid ||
         (wordState(w) == State::unknown && wordSettled(w) && wordLastKnown(w) != State::invalid && policy.allows(wordUnknownSeconds(w)));
}

// Unix seconds as RFC 3339 UTC text ("2026-12-22T10:00:00Z"), as the agent writes its times.
inline std::string rfc3339(std::int64_t t) {
  const std::int64_t days = (t >= 0 ? t : t - 86399) / 86400, secs = t - days * 86400;
  // Howard Hinnant's civil_from_days.
  const std::int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  const std::int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (m <= 2);
  char text[96];
  std::snprintf(text, sizeof text, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", static_cast<long long>(y), static_cast<long long>(m),
                static_cast<long long>(d), static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                static_cast<long long>(secs % 60));
  return text;
}

// A ticket's verdict as the state a person sees: valid, or not licensed with its reason (a ticket
// that fails a rule is cache_invalid), its source and code hint, and graceUntil its valid_until
// (for a valid ticket, and for one read too late or too early: when it stopped or starts to be).
inline License licenseOf(const plc_ticket &t, const std::string &projectId) {
  License lic;
  lic.valid = t.verdict == PLC_TICKET_VALID;
  lic.reason = lic.valid ? Reason::none : t.verdict == PLC_TICKET_TAMPERED ? Reason::cacheInvalid : static_cast<Reason>(t.reason);
  if (!lic.valid && lic.reason == Reason::none) lic.reason = Reason::notActivated;
  lic.reasonText = plc_reason_name(static_cast<plc_reason>(lic.reason));
  lic.source = static_cast<Source>(t.source);
  lic.projectId = projectId;
  lic.codeHint = t.code_hint;
  if (t.verdict == PLC_TICKET_VALID || t.verdict == PLC_TICKET_EXPIRED || t.verdict == PLC_TICKET_CLOCK) {
    lic.graceUntilSeconds = t.valid_until;
    lic.graceUntil = rfc3339(t.valid_until);
  }
  return lic;
}

// Where a watch finds its ticket and its agent: the first Monitor's options.
struct WatchConfig {
  std::string app;
  std::string appGroup;
  std::string executable;  // "": by plc_default_executable(vendor, executableName)
  std::string vendor;
  std::string executableName;
  bool startAgent = true;
  std::vector<std::string> ticketKeys;
};

// One project's state in this process: one connection subscribed to it and one thread, shared by
// every Monitor of the project (100 instances in a DAW are one client to the agent).
class Watch {
 public:
  using Listener = std::function<void(const CheckResult &)>;
  using Clock = std::chrono::steady_clock;
  // At most one start of the agent per this long, per watch (per process, socket and project):
  // PLC_AGENT_START_INTERVAL_S, 30 unless the build says otherwise (a test builds its host with an
  // hour, so that "within the interval" never depends on how fast a loaded machine runs).
  static constexpr std::chrono::seconds kStartInterval{PLC_AGENT_START_INTERVAL_S};

  static std::shared_ptr<Watch> acquire(const std::string &socketPath, const std::string &projectId, WatchConfig config = {}) {
    std::string key = socketPath + '\n' + projectId;
    std::transform(key.begin(), key.end(), key.begin(), [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    std::lock_guard<std::mutex> lock(registryMutex());
    auto &all = registry();
    for (auto it = all.begin(); it != all.end();) it = it->second.expired() ? all.erase(it) : std::next(it);
    auto &slot = all[key];
    if (auto existing = slot.lock()) return existing;
    auto watch = std::shared_ptr<Watch>(new Watch(socketPath, projectId, std::move(config)));
    // The ticket before the thread: the Monitor's first read is already the ticket's word.
    watch->judgeTicket();
    slot = watch;
    watch->thread_ = std::thread([raw = watch.get()] { raw->run(); });
    return watch;
  }

  // How many projects this process follows now (each one connection): for tests and diagnostics.
  static std::size_t alive() {
    std::lock_guard<std::mutex> lock(registryMutex());
    std::size_t n = 0;
    for (auto &entry : registry()) n += entry.second.expired() ? 0u : 1u;
    return n;
  }

  ~Watch() {
    stopping_.store(true);
    plc_waker_signal(&waker_);
    if (thread_.joinable()) {
      // The last Monitor destroyed inside a change callback: the thread cannot join itself.
      if (thread_.get_id() == std::this_thread::get_id()) thread_.detach();
      else thread_.join();
    }
    plc_waker_close(&waker_);
  }
  Watch(const Watch &) = delete;
  Watch &operator=(const Watch &) = delete;

  std::uint32_t word() const noexcept { return word_.load(std::memory_order_acquire); }

  CheckResult last() const {
    std::lock_guard<std::mutex> lock(lastMutex_);
    return last_;
  }

  void checkNow() {
    checkRequested_.store(true);
    plc_waker_signal(&waker_);
  }

  int addListener(Listener listener) {
    std::lock_guard<std::recursive_mutex> lock(listenerMutex_);
    listeners_.emplace_back(++nextListener_, std::move(listener));
    return nextListener_;
  }

  // Once it returns, the listener is not running and will not run again.
  void removeListener(int id) {
    std::lock_guard<std::recursive_mutex> lock(listenerMutex_);
    listeners_.erase(std::remove_if(listeners_.begin(), listeners_.end(), [id](const auto &l) { return l.first == id; }), listeners_.end());
  }

  // Agents this watch started, and times a start was due but held back by the 30 s limit.
  std::uint32_t agentStarts() const noexcept { return agentStarts_.load(); }
  std::uint32_t startsHeldBack() const noexcept { return startsHeldBack_.load(); }

 private:
  static constexpr int kConnectTimeoutMs = 1000;
  static constexpr int kQuietCheckMs = 30 * 60 * 1000;  // a check after half an hour without news
  static constexpr int kMaxRetryMs = 1000;              // the agent back within a second
  static constexpr int kFastRetryMs = 100;
  // After a start, a try every 100 ms this long: the agent's first answer soon after its cold start.
  static constexpr std::chrono::seconds kFastRetryWindow{10};

  Watch(std::string socketPath, std::string projectId, WatchConfig config)
      : client_(socketPath.empty() ? nullptr : socketPath.c_str()), projectId_(std::move(projectId)), config_(std::move(config)) {
    if (plc_waker_open(&waker_) == PLC_OK) plc_set_interrupt(client_.raw(), plc_waker_handle(&waker_));
    // The vendor's keys, parsed once; one that does not parse stays, with its problem set: it
    // counts as a key (the signed rule holds) that verifies nothing.
    keys_.resize(config_.ticketKeys.size());
    for (std::size_t i = 0; i < keys_.size(); ++i) plc_ticket_key_parse(config_.ticketKeys[i].c_str(), &keys_[i]);
    verified_ = std::make_unique<plc_verify_cache>();
    verified_->len = 0;
  }

  // Whom this watch trusts: the keys, and the cache that verifies identical signed-ticket bytes
  // once (the file's, or the same text in the agent's answers): once per process and file version.
  plc_trust trust() noexcept { return plc_trust{keys_.data(), keys_.size(), verified_.get()}; }
  const char *app() const noexcept { return config_.app.empty() ? nullptr : config_.app.c_str(); }
  const char *appGroup() const noexcept { return config_.appGroup.empty() ? nullptr : config_.appGroup.c_str(); }
  static std::int64_t unixNow() {
    return static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  }

  // An agent's answer by the reader's rule (plc_answer_judge): with keys, a "valid" stands only
  // with a signed_ticket that verifies; otherwise it becomes not licensed with the rule's reason
  // (unsigned, cache_invalid, grace_expired, clock_tampered). A "not valid" stands as it is.
  void judgeAnswer(CheckResult &result) {
    if (keys_.empty() || !result.license || !result.license->valid) return;
    License &lic = *result.license;
    auto answer = std::make_unique<plc_license>();
    std::memset(answer.get(), 0, sizeof *answer);
    answer->valid = 1;
    answer->source = static_cast<plc_source>(lic.source);
    detail::copyText(lic.codeHint.substr(0, sizeof answer->code_hint - 1), answer->code_hint, true);
    answer->grace_until_s = lic.graceUntilSeconds;
    if (lic.signedTicket) {
      const std::size_t n = std::min<std::size_t>(lic.signedTicket->size(), PLC_TICKET_MAX_BYTES + 1);
      answer->has_signed_ticket = 1;
      answer->signed_ticket_len = n;
      std::memcpy(answer->signed_ticket, lic.signedTicket->data(), std::min<std::size_t>(n, PLC_TICKET_MAX_BYTES));
    }
    char raw[PLC_MACHINE_ID_CAP];
    const bool haveRaw = plc_raw_machine_id(app(), appGroup(), raw, sizeof raw) == PLC_OK;
    const plc_trust t = trust();
    plc_ticket verdict;
    if (plc_answer_judge(answer.get(), &t, app(), projectId_.c_str(), unixNow(), haveRaw ? raw : nullptr, &verdict) == PLC_TICKET_VALID) {
      lic.signedUntilSeconds = verdict.valid_until;
      return;
    }
    const License judged = licenseOf(verdict, projectId_);
    lic.valid = false;
    lic.reason = judged.reason;
    lic.reasonText = judged.reasonText;
  }

  static std::mutex &registryMutex() {
    static std::mutex m;
    return m;
  }
  static std::map<std::string, std::weak_ptr<Watch>> &registry() {
    static std::map<std::string, std::weak_ptr<Watch>> r;
    return r;
  }

  void run() {
    // Named for top -H, debuggers and crash reports: which thread of the host is ours.
#if defined(__linux__)
    pthread_setname_np(pthread_self(), "plc-watch");
#elif defined(__APPLE__)
    pthread_setname_np("plc-watch");
#endif
    bool subscribed = false;
    bool polling = false;  // an agent without `subscribe`
    int retryMs = kFastRetryMs;
    while (!stopping_.load()) {
      if (!subscribed && !polling) {
        plc_license error;
        const plc_status st = plc_subscribe(client_.raw(), projectId_.c_str(), &error, kConnectTimeoutMs);
        if (st == PLC_ERR_AGENT_OUTDATED) {
          polling = true;
        } else if (st == PLC_ERR_INTERRUPTED) {
          // Stopping, or checkNow() while connecting: nothing was learnt about the license.
          plc_waker_clear(&waker_);
          continue;
        } else if (st != PLC_OK) {
          lost(client_.withHolder(detail::toResult(st, error)));
          // Nothing listens (not FOREIGN_*, not a live agent's time-out): start one.
          if (st == PLC_ERR_NOT_RUNNING && startAgent()) retryMs = kFastRetryMs;
          pause(retryMs);
          retryMs = lastStart_ && Clock::now() - *lastStart_ < kFastRetryWindow ? kFastRetryMs : std::min(retryMs * 2, kMaxRetryMs);
          continue;
        }
        subscribed = !polling;
        retryMs = kFastRetryMs;
        // The state now: changes before the subscription were not seen.
        if (!checkState()) subscribed = false;
        continue;
      }
      if (polling) {
        pause(kMaxRetryMs);
        if (!checkState()) polling = false;  // lost: subscribe again (the agent may have been updated)
        continue;
      }
      plc_license raw;
      const plc_status st = plc_wait_change(client_.raw(), &raw, kQuietCheckMs);
      if (st == PLC_OK) {
        publish(detail::toResult(st, raw));
      } else if (st == PLC_ERR_TIMEOUT) {
        if (!checkState()) subscribed = false;
      } else if (st == PLC_ERR_INTERRUPTED) {
        plc_waker_clear(&waker_);
        if (checkRequested_.exchange(false) && !checkState()) subscribed = false;
      } else {
        lost(client_.withHolder(detail::toResult(st, raw)));
        subscribed = false;
      }
    }
    client_.close();
  }

  // A `check` on the watch's connection; false when the connection was lost.
  bool checkState() {
    checkRequested_.store(false);
    CheckResult r = client_.check(projectId_, std::chrono::milliseconds(kConnectTimeoutMs));
    if (r.status == Status::ok) {
      publish(std::move(r));
      return true;
    }
    if (r.status == Status::interrupted) {
      // Stopping, or checkNow() during this check: the connection was closed, the state stays.
      plc_waker_clear(&waker_);
      checkRequested_.store(true);
      return false;
    }
    lost(std::move(r));
    return false;
  }

  // Starts the agent when one is due: an executable known, startAgent, and no start by this watch
  // in the last 30 s. Runs on the watch thread only (never the audio or message thread); returns
  // at once, never waiting for the agent. True when a program was started.
  bool startAgent() {
    if (!config_.startAgent) return false;
    std::string exe = config_.executable;
    if (exe.empty()) {
      char found[1024];
      if (plc_default_executable(config_.vendor.c_str(), config_.executableName.c_str(), found, sizeof found) != PLC_OK) return false;
      exe = found;
    }
    const Clock::time_point now = Clock::now();
    if (lastStart_ && now - *lastStart_ < kStartInterval) {
      ++startsHeldBack_;
      return false;
    }
    lastStart_ = now;
    if (plc_start_agent(exe.c_str(), config_.app.empty() ? nullptr : config_.app.c_str()) != PLC_OK) return false;
    ++agentStarts_;
    return true;
  }

  // The ticket on disk, judged now (plc_ticket_check_signed: with keys the signed ticket beside it
  // decides, verified once per file version; microseconds after that, no lock, never a wait).
  // Publishes its word and returns true, or false when there is none (the state stays as it is).
  bool judgeTicket(Status agentStatus = Status::notRunning, std::string holder = {}) {
    plc_ticket t;
    const plc_trust trusted = trust();
    const plc_ticket_verdict verdict = plc_ticket_check_signed(app(), appGroup(), projectId_.c_str(), unixNow(), &trusted, &t);
    if (verdict == PLC_TICKET_NONE) {
      ticketUntil_ = 0;
      return false;
    }
    CheckResult r;
    r.status = agentStatus;
    r.holder = std::move(holder);
    r.license = licenseOf(t, projectId_);
    if (!keys_.empty() && verdict == PLC_TICKET_VALID) r.license->signedUntilSeconds = t.valid_until;
    r.origin = Origin::ticket;
    ticketUntil_ = verdict == PLC_TICKET_VALID ? t.valid_until : 0;
    const State state = r.state();
    lastKnown_ = state;
    unknownSince_.reset();
    lastReason_ = r.license->reason;
    state_ = state;
    origin_ = Origin::ticket;
    publishWord();
    setLast(std::move(r));
    return true;
  }

  // Waits (interruptibly) before the next try, counting the seconds of unknown meanwhile; a valid
  // ticket in force is judged again at its valid_until (the next turn re-reads it).
  void pause(int ms) {
    if (origin_ == Origin::ticket && ticketUntil_ > 0) {
      const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
      const long long untilMs = (ticketUntil_ + 1) * 1000LL - now;
      if (untilMs < ms) ms = static_cast<int>(std::max<long long>(untilMs, 0));
    }
    if (plc_waker_wait(&waker_, ms)) plc_waker_clear(&waker_);
    if (unknownSince_) publishWord();
  }

  void publish(CheckResult result) {
    judgeAnswer(result);
    const State state = result.state();
    lastKnown_ = state;
    unknownSince_.reset();
    lastReason_ = result.license ? result.license->reason : Reason::none;
    state_ = state;
    origin_ = Origin::agent;
    publishWord();
    setLast(std::move(result));
  }

  // The agent went away or could not be reached: the ticket, read again from disk, governs; with
  // none, the state is unknown.
  void lost(CheckResult result) {
    if (judgeTicket(result.status, result.holder)) return;
    if (!unknownSince_) unknownSince_ = Clock::now();
    state_ = State::unknown;
    origin_ = Origin::none;
    publishWord();
    setLast(std::move(result));
  }

  void publishWord() {
    std::uint32_t seconds = 0;
    if (unknownSince_) {
      const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - *unknownSince_).count();
      seconds = static_cast<std::uint32_t>(std::min<long long>(elapsed, 0xFFFF));
    }
    word_.store(packWord(state_, lastKnown_, state_ == State::unknown ? Reason::none : lastReason_, seconds, true, origin_),
                std::memory_order_release);
  }

  // Keeps the last answer, and tells the listeners when what a person sees changed.
  void setLast(CheckResult result) {
    bool changed;
    {
      std::lock_guard<std::mutex> lock(lastMutex_);
      changed = !announced_ || !same(last_, result);
      last_ = result;
      announced_ = true;
    }
    if (!changed) return;
    std::lock_guard<std::recursive_mutex> lock(listenerMutex_);
    for (auto &l : listeners_) l.second(result);
  }

  static bool same(const CheckResult &a, const CheckResult &b) {
    if (a.license.has_value() != b.license.has_value() || a.origin != b.origin) return false;
    if (!a.license) return a.status == b.status;
    const License &x = *a.license, &y = *b.license;
    return x.valid == y.valid && x.reason == y.reason && x.source == y.source && x.codeHint == y.codeHint &&
           x.activations == y.activations && x.maxActivations == y.maxActivations && x.graceUntil == y.graceUntil &&
           x.validatedAt == y.validatedAt && x.signedUntilSeconds == y.signedUntilSeconds;
  }

  Client client_;
  std::string projectId_;
  WatchConfig config_;
  std::vector<plc_ticket_key> keys_;            // the vendor's keys, parsed (empty: the unsigned rules)
  std::unique_ptr<plc_verify_cache> verified_;  // the last signed ticket that verified (watch thread, and acquire() before it)
  plc_waker waker_{PLC_NO_INTERRUPT, PLC_NO_INTERRUPT};
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> checkRequested_{false};
  std::atomic<std::uint32_t> word_{packWord(State::unknown, State::unknown, Reason::none, 0, false)};
  std::atomic<std::uint32_t> agentStarts_{0};
  std::atomic<std::uint32_t> startsHeldBack_{0};
  // Owned by the watch thread (and by acquire() before it starts).
  State state_ = State::unknown;
  State lastKnown_ = State::unknown;
  Reason lastReason_ = Reason::none;
  Origin origin_ = Origin::none;
  std::int64_t ticketUntil_ = 0;  // a valid ticket in force: its valid_until (Unix seconds)
  std::optional<Clock::time_point> unknownSince_ = Clock::now();
  std::optional<Clock::time_point> lastStart_;
  // Shared with the callers of last().
  mutable std::mutex lastMutex_;
  CheckResult last_;
  bool announced_ = false;
  std::recursive_mutex listenerMutex_;
  std::vector<std::pair<int, Listener>> listeners_;
  int nextListener_ = 0;
};

}  // namespace detail

// A project's license as a plugin instance sees it. Construct it with the processor: the first
// Monitor of a project in the process judges the project's ticket before it returns (a few
// microseconds; every later one shares the answer), so isLicensed() is right from the first audio
// block, agent or not. Then it follows the agent, sharing the process's one connection and thread
// for the project. The rules it keeps:
// - the agent's answers win while it answers;
// - when it is not reached (not running, gone, not answering), the ticket, read again from disk at
//   every retry, governs: valid until its valid_until, then expired; with no ticket the state is
//   unknown and MonitorOptions::unknown decides (silent after 5 s by default);
// - when nothing listens on the socket (not when it belongs to someone else or a live agent is
//   slow) and an executable is known, it starts `EXECUTABLE agent run --app APP` detached, from
//   its own thread, at most once per 30 s, then tries every 100 ms for the agent's first answer.
class Monitor {
 public:
  using Callback = std::function<void(const CheckResult &)>;

  explicit Monitor(std::string projectId, MonitorOptions options = {})
      : projectId_(std::move(projectId)),
        socketPath_(options.socketPath.empty() ? defaultSocketPath(options.app, options.appGroup) : options.socketPath),
        policy_(options.unknown),
        watch_(detail::Watch::acquire(socketPath_, projectId_,
                                      detail::WatchConfig{options.app, options.appGroup, options.executable, options.vendor,
                                                          options.executableName, options.startAgent, options.ticketKeys})) {}
  ~Monitor() {
    if (listener_ != 0) watch_->removeListener(listener_);
  }
  Monitor(const Monitor &) = delete;
  Monitor &operator=(const Monitor &) = delete;

  // Any thread, the audio thread included: one atomic load each.
  State state() const noexcept { return detail::wordState(watch_->word()); }
  Reason reason() const noexcept { return detail::wordReason(watch_->word()); }
  // With no ticket, before the first try to reach the agent has ended, nothing is known yet:
  // silent for those few milliseconds, so an unlicensed plugin never plays its first blocks.
  bool isLicensed() const noexcept { return detail::licensedBy(watch_->word(), policy_); }
  // Where state() comes from: the agent, the ticket, or none (unknown).
  Origin origin() const noexcept { return detail::wordOrigin(watch_->word()); }
  // Whole seconds the state has been unknown (0 when known).
  std::uint32_t unknownSeconds() const noexcept { return detail::wordUnknownSeconds(watch_->word()); }
  // True from construction when a ticket was there; else false until the first try to reach the
  // agent has ended (a few milliseconds later): "checking", not "unknown".
  bool settled() const noexcept { return detail::wordSettled(watch_->word()); }

  // The last full answer (takes a lock: not for the audio thread). With origin() ticket, its
  // license is the ticket's and its status what the last try to reach the agent gave.
  CheckResult last() const { return watch_->last(); }

  // Agents this process started for the project, and starts held back by the 30 s limit
  // (diagnostics, tests).
  std::uint32_t agentStarts() const noexcept { return watch_->agentStarts(); }
  std::uint32_t agentStartsHeldBack() const noexcept { return watch_->startsHeldBack(); }

  // Asks the agent now (after an activation the subscription tells anyway).
  void checkNow() { watch_->checkNow(); }

  // Called on the monitor's thread (never the audio or message thread) with every answer that
  // changes what a person sees (read last() for the one before). Replaces an earlier callback.
  // Once onChange({}) or the destructor returns, the callback is not running and never runs
  // again, so it may capture `this` of the owner. A callback must not destroy the Monitor or
  // wait for the message thread (post to it instead).
  void onChange(Callback callback) {
    if (listener_ != 0) watch_->removeListener(listener_);
    listener_ = 0;
    if (!callback) return;
    listener_ = watch_->addListener(callback);
  }

  const std::string &projectId() const noexcept { return projectId_; }
  const std::string &socketPath() const noexcept { return socketPath_; }

  // Projects this process follows now, one connection each (diagnostics, tests).
  static std::size_t connections() { return detail::Watch::alive(); }

 private:
  std::string projectId_;
  std::string socketPath_;
  UnknownPolicy policy_;
  std::shared_ptr<detail::Watch> watch_;
  int listener_ = 0;
};

}  // namespace plc

#endif  // PLC_HPP
