// plc.hpp: the C++17 face of plc.h for plugins (JUCE or any other framework).
// Drop plc.h, plc.c and this header into the project; plc.c compiles as C (C99 or later). The
// JUCE module plugin_license carries all three and compiles plc.c itself.
//
//   plc::Monitor license{"your-project-id", {"acme-audio"}};  // member of your AudioProcessor
//   // processBlock (audio thread): one atomic load, never blocks
//   if (!license.isLicensed()) buffer.clear();
//
// Every Monitor of one project in one process shares one connection and one thread, which
// follows the agent's `changed` notifications (no polling): a revocation or an activation made
// elsewhere reaches isLicensed() within a second. No exceptions are thrown by this header
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
};

enum class Source : int { unknown = PLC_SOURCE_UNKNOWN, online = PLC_SOURCE_ONLINE, cache = PLC_SOURCE_CACHE, offline = PLC_SOURCE_OFFLINE };

// What the agent last said: `unknown` while it is not running or has not answered.
enum class State : std::uint8_t { unknown, valid, invalid };

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
    out.license = std::move(lic);
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

// What isLicensed() answers while the state is unknown (the agent not running, or not answering),
// after a license that was valid, or when nothing was known yet in this process. A license known
// to be invalid stays silent: stopping the agent never unlocks a plugin. Nothing is remembered
// across a restart of the host. Before the first try to reach the agent has ended (a few
// milliseconds; at most the one-second connect time-out of an agent that hangs) isLicensed() is
// false whatever the policy.
class UnknownPolicy {
 public:
  // Keep playing however long the agent is away (the default: a musician is never stopped by our
  // daemon).
  static constexpr UnknownPolicy keepPlaying() noexcept { return UnknownPolicy(-1); }
  // Play on for `seconds` of unknown, then go silent until the agent answers again.
  static constexpr UnknownPolicy silentAfter(std::chrono::seconds seconds) noexcept {
    return UnknownPolicy(seconds.count() < 0 ? 0 : seconds.count() > 65534 ? 65534 : static_cast<long>(seconds.count()));
  }
  constexpr bool allows(std::uint32_t unknownSeconds) const noexcept { return seconds_ < 0 || unknownSeconds < static_cast<std::uint32_t>(seconds_); }

 private:
  constexpr explicit UnknownPolicy(long seconds) noexcept : seconds_(seconds) {}
  long seconds_;
};

struct MonitorOptions {
  std::string app;         // the vendor's namespace; "": PLUGIN_LICENSE_APP, else plugin-license
  std::string appGroup;    // macOS, sandboxed plugins: the vendor's app group (the agent's socket in its container)
  std::string socketPath;  // "": PLUGIN_LICENSE_SOCKET, else the namespace's default path
  UnknownPolicy unknown = UnknownPolicy::keepPlaying();
};

namespace detail {

// The published word, read by the audio thread with one load: bits 0-1 State, 2-3 the last known
// State (unknown: none yet), bit 4 set once the first try to reach the agent has ended, 8-15
// Reason, 16-31 whole seconds of unknown (saturating).
constexpr std::uint32_t kSettled = 1u << 4;
constexpr std::uint32_t packWord(State state, State lastKnown, Reason reason, std::uint32_t unknownSeconds, bool settled = true) noexcept {
  return static_cast<std::uint32_t>(state) | static_cast<std::uint32_t>(lastKnown) << 2 | (settled ? kSettled : 0u) |
         (static_cast<std::uint32_t>(reason) & 0xFFu) << 8 | std::min<std::uint32_t>(unknownSeconds, 0xFFFFu) << 16;
}
constexpr bool wordSettled(std::uint32_t w) noexcept { return (w & kSettled) != 0; }
constexpr State wordState(std::uint32_t w) noexcept { return static_cast<State>(w & 3u); }
constexpr State wordLastKnown(std::uint32_t w) noexcept { return static_cast<State>((w >> 2) & 3u); }
constexpr Reason wordReason(std::uint32_t w) noexcept { return static_cast<Reason>((w >> 8) & 0xFFu); }
constexpr std::uint32_t wordUnknownSeconds(std::uint32_t w) noexcept { return w >> 16; }

// One project's state in this process: one connection subscribed to it and one thread, shared by
// every Monitor of the project (100 instances in a DAW are one client to the agent).
class Watch {
 public:
  using Listener = std::function<void(const CheckResult &)>;

  static std::shared_ptr<Watch> acquire(const std::string &socketPath, const std::string &projectId) {
    std::string key = socketPath + '\n' + projectId;
    std::transform(key.begin(), key.end(), key.begin(), [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    std::lock_guard<std::mutex> lock(registryMutex());
    auto &all = registry();
    for (auto it = all.begin(); it != all.end();) it = it->second.expired() ? all.erase(it) : std::next(it);
    auto &slot = all[key];
    if (auto existing = slot.lock()) return existing;
    auto watch = std::shared_ptr<Watch>(new Watch(socketPath, projectId));
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

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr int kConnectTimeoutMs = 1000;
  static constexpr int kQuietCheckMs = 30 * 60 * 1000;  // a check after half an hour without news
  static constexpr int kMaxRetryMs = 1000;              // the agent back within a second

  Watch(std::string socketPath, std::string projectId)
      : client_(socketPath.empty() ? nullptr : socketPath.c_str()), projectId_(std::move(projectId)) {
    if (plc_waker_open(&waker_) == PLC_OK) plc_set_interrupt(client_.raw(), plc_waker_handle(&waker_));
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
    int retryMs = 100;
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
          pause(retryMs);
          retryMs = std::min(retryMs * 2, kMaxRetryMs);
          continue;
        }
        subscribed = !polling;
        retryMs = 100;
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

  // Waits (interruptibly) before the next try, counting the seconds of unknown meanwhile.
  void pause(int ms) {
    if (plc_waker_wait(&waker_, ms)) plc_waker_clear(&waker_);
    if (unknownSince_) publishWord();
  }

  void publish(CheckResult result) {
    const State state = result.state();
    lastKnown_ = state;
    unknownSince_.reset();
    lastReason_ = result.license ? result.license->reason : Reason::none;
    state_ = state;
    publishWord();
    setLast(std::move(result));
  }

  void lost(CheckResult result) {
    if (!unknownSince_) unknownSince_ = Clock::now();
    state_ = State::unknown;
    publishWord();
    setLast(std::move(result));
  }

  void publishWord() {
    std::uint32_t seconds = 0;
    if (unknownSince_) {
      const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - *unknownSince_).count();
      seconds = static_cast<std::uint32_t>(std::min<long long>(elapsed, 0xFFFF));
    }
    word_.store(packWord(state_, lastKnown_, state_ == State::unknown ? Reason::none : lastReason_, seconds), std::memory_order_release);
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
    if (a.license.has_value() != b.license.has_value()) return false;
    if (!a.license) return a.status == b.status;
    const License &x = *a.license, &y = *b.license;
    return x.valid == y.valid && x.reason == y.reason && x.source == y.source && x.codeHint == y.codeHint &&
           x.activations == y.activations && x.maxActivations == y.maxActivations && x.graceUntil == y.graceUntil &&
           x.validatedAt == y.validatedAt;
  }

  Client client_;
  std::string projectId_;
  plc_waker waker_{PLC_NO_INTERRUPT, PLC_NO_INTERRUPT};
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> checkRequested_{false};
  std::atomic<std::uint32_t> word_{packWord(State::unknown, State::unknown, Reason::none, 0, false)};
  // Owned by the watch thread.
  State state_ = State::unknown;
  State lastKnown_ = State::unknown;
  Reason lastReason_ = Reason::none;
  std::optional<Clock::time_point> unknownSince_ = Clock::now();
  // Shared with the callers of last().
  mutable std::mutex lastMutex_;
  CheckResult last_;
  bool announced_ = false;
  std::recursive_mutex listenerMutex_;
  std::vector<std::pair<int, Listener>> listeners_;
  int nextListener_ = 0;
};

}  // namespace detail

// A project's license as a plugin instance sees it. Construct it with the processor: it follows
// the agent at once, sharing the process's one connection and thread for the project.
class Monitor {
 public:
  using Callback = std::function<void(const CheckResult &)>;

  explicit Monitor(std::string projectId, MonitorOptions options = {})
      : projectId_(std::move(projectId)),
        socketPath_(options.socketPath.empty() ? defaultSocketPath(options.app, options.appGroup) : options.socketPath),
        policy_(options.unknown),
        watch_(detail::Watch::acquire(socketPath_, projectId_)) {}
  ~Monitor() {
    if (listener_ != 0) watch_->removeListener(listener_);
  }
  Monitor(const Monitor &) = delete;
  Monitor &operator=(const Monitor &) = delete;

  // Any thread, the audio thread included: one atomic load each.
  State state() const noexcept { return detail::wordState(watch_->word()); }
  Reason reason() const noexcept { return detail::wordReason(watch_->word()); }
  bool isLicensed() const noexcept {
    const std::uint32_t w = watch_->word();
    switch (detail::wordState(w)) {
      case State::valid: return true;
      case State::invalid: return false;
      case State::unknown: break;
    }
    // Before the first answer (or the first failure) nothing is known yet: silent for those few
    // milliseconds, so an unlicensed plugin never plays its first blocks.
    if (!detail::wordSettled(w)) return false;
    return detail::wordLastKnown(w) != State::invalid && policy_.allows(detail::wordUnknownSeconds(w));
  }
  // Whole seconds the state has been unknown (0 when known).
  std::uint32_t unknownSeconds() const noexcept { return detail::wordUnknownSeconds(watch_->word()); }
  // False until the first try to reach the agent has ended (a few milliseconds after the first
  // Monitor of the project was made): "checking", not "unknown".
  bool settled() const noexcept { return detail::wordSettled(watch_->word()); }

  // The last full answer (takes a lock: not for the audio thread).
  CheckResult last() const { return watch_->last(); }

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
