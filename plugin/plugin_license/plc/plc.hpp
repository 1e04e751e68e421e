// plc.hpp: a thin C++17 wrapper of plc.h for plugins (JUCE or any other framework).
// Drop plc.h, plc.c and this header into the project; plc.c compiles as C (C99 or later).
//
//   plc::Monitor license{"your-project-id"};          // member of your AudioProcessor
//   license.start();                                  // in the constructor
//   // processBlock (audio thread): one atomic load, never blocks
//   if (license.state() != plc::State::valid) buffer.clear();
//
// No exceptions are thrown by this header (std::thread aborts when it cannot start a thread
// under -fno-exceptions). Client calls block up to their time-out: keep them off the audio thread.
#ifndef PLC_HPP
#define PLC_HPP

#include "plc.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

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

// What the audio thread needs to know; `unknown` while the agent is down or has not answered.
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
  long code = 0;           // JSON-RPC code, e.g. -32602
  std::string message;     // the agent's text
  std::string detail;      // data.code when the service refused
};

struct CheckResult {
  Status status = Status::ok;
  std::optional<License> license;       // set when status == Status::ok
  std::optional<AgentError> agentError; // set when status == Status::agentError

  bool valid() const noexcept { return license.has_value() && license->valid; }
  State state() const noexcept {
    return !license ? State::unknown : license->valid ? State::valid : State::invalid;
  }
};

// One connection to the agent. Not copyable or movable (it embeds its buffer); not thread-safe.
class Client {
 public:
  // nullptr or "": PLUGIN_LICENSE_SOCKET, else the protocol's default path.
  explicit Client(const char *socketPath = nullptr) noexcept { plc_init(&client_, socketPath); }
  ~Client() { plc_close(&client_); }
  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;

  CheckResult check(std::string_view projectId,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(PLC_DEFAULT_TIMEOUT_MS)) noexcept {
    CheckResult out;
    char id[sizeof(plc_license{}.project_id)];
    if (projectId.empty() || projectId.size() >= sizeof id) {
      out.status = Status::invalidArgument;
      return out;
    }
    std::memcpy(id, projectId.data(), projectId.size());
    id[projectId.size()] = '\0';
    plc_license raw;
    out.status = static_cast<Status>(plc_check(&client_, id, &raw, static_cast<int>(timeout.count())));
    if (out.status == Status::ok) {
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
    } else if (out.status == Status::agentError) {
      out.agentError = AgentError{raw.error_code, raw.error_message, raw.error_detail};
    }
    return out;
  }

  void close() noexcept { plc_close(&client_); }

 private:
  plc_client client_;
};

// Checks on its own thread every `interval` and publishes the state for lock-free reads.
class Monitor {
 public:
  using Callback = std::function<void(const CheckResult &)>;

  explicit Monitor(std::string projectId, std::chrono::milliseconds interval = std::chrono::seconds(60),
                   const char *socketPath = nullptr,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(PLC_DEFAULT_TIMEOUT_MS))
      : client_(socketPath), projectId_(std::move(projectId)), interval_(interval), timeout_(timeout) {}
  ~Monitor() { stop(); }
  Monitor(const Monitor &) = delete;
  Monitor &operator=(const Monitor &) = delete;

  // Called on the monitor thread after each state change (not on the audio thread). Set before start().
  void onChange(Callback callback) { onChange_ = std::move(callback); }

  void start() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (thread_.joinable()) return;
    stopping_ = false;
    thread_ = std::thread([this] { run(); });
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // Asks for a check now instead of at the next tick (after an activation, for instance).
  void checkNow() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      checkRequested_ = true;
    }
    wake_.notify_all();
  }

  // Audio-thread safe: one atomic load.
  State state() const noexcept { return static_cast<State>(word_.load(std::memory_order_acquire) & 0xFF); }
  Reason reason() const noexcept { return static_cast<Reason>((word_.load(std::memory_order_acquire) >> 8) & 0xFF); }

  // The last full answer; takes a lock, so not for the audio thread.
  CheckResult last() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_;
  }

 private:
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "the audio thread needs a lock-free word");

  void run() {
    std::uint32_t previous = UINT32_MAX;
    for (;;) {
      CheckResult result = client_.check(projectId_, timeout_);
      const std::uint32_t word = static_cast<std::uint32_t>(result.state()) |
                                 (result.license ? static_cast<std::uint32_t>(result.license->reason) << 8 : 0u);
      word_.store(word, std::memory_order_release);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        last_ = result;
      }
      if (word != previous && onChange_) onChange_(result);
      previous = word;

      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, interval_, [this] { return stopping_ || checkRequested_; });
      if (stopping_) break;
      checkRequested_ = false;
    }
    client_.close();
  }

  Client client_;
  std::string projectId_;
  std::chrono::milliseconds interval_;
  std::chrono::milliseconds timeout_;
  Callback onChange_;
  std::atomic<std::uint32_t> word_{static_cast<std::uint32_t>(State::unknown)};
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool checkRequested_ = false;
  CheckResult last_;
  std::thread thread_;
};

}  // namespace plc

#endif  // PLC_HPP
