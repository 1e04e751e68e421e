// wrapper-example: the C++ wrapper as a plugin would use it.
//
//   wrapper-example SOCKET|- PROJECT_ID [TIMEOUT_MS]
//       One direct plc::Client check, then a plc::Monitor whose state is read the way an audio
//       callback would. Exit status: 0 valid, 1 not valid, 2 unknown (agent down or no answer).
//
//   wrapper-example follow SOCKET PROJECT_ID INSTANCES keep|SECONDS DURATION_MS
//       INSTANCES Monitors of one project, as a DAW with that many instances of a plugin, with
//       the unknown policy keepPlaying or silentAfter(SECONDS). Prints "connections=N" once, then
//       a line whenever what the "audio threads" read changes, for DURATION_MS:
//       "state=valid licensed=true reason=- agree=true".
#include "plc.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

const char *stateName(plc::State state) {
  switch (state) {
    case plc::State::valid: return "valid";
    case plc::State::invalid: return "invalid";
    case plc::State::unknown: break;
  }
  return "unknown";
}

int follow(int argc, char **argv) {
  if (argc != 7) return 64;
  plc::MonitorOptions options;
  options.socketPath = std::strcmp(argv[2], "-") == 0 ? "" : argv[2];
  if (std::strcmp(argv[5], "keep") != 0) options.unknown = plc::UnknownPolicy::silentAfter(std::chrono::seconds(std::atoi(argv[5])));
  const int instances = std::atoi(argv[4]);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::atoi(argv[6]));
  std::vector<std::unique_ptr<plc::Monitor>> monitors;
  for (int i = 0; i < instances; ++i) monitors.push_back(std::make_unique<plc::Monitor>(argv[3], options));
  std::printf("connections=%zu\n", plc::Monitor::connections());
  std::fflush(stdout);

  // Stand-in for every instance's processBlock: 5 ms blocks, each reading its atomic state.
  std::string previous;
  while (std::chrono::steady_clock::now() < until) {
    const plc::State state = monitors[0]->state();
    const bool licensed = monitors[0]->isLicensed();
    bool agree = true;
    for (auto &m : monitors) agree = agree && m->state() == state && m->isLicensed() == licensed;
    const char *reason = plc::name(monitors[0]->reason());
    char line[160];
    std::snprintf(line, sizeof line, "state=%s licensed=%s reason=%s agree=%s", stateName(state), licensed ? "true" : "false",
                  reason[0] ? reason : "-", agree ? "true" : "false");
    if (line != previous) {
      std::printf("%s\n", line);
      std::fflush(stdout);
      previous = line;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  monitors.clear();
  std::printf("stopped connections=%zu\n", plc::Monitor::connections());
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc >= 2 && std::strcmp(argv[1], "follow") == 0) {
    const int code = follow(argc, argv);
    if (code == 64) std::fprintf(stderr, "usage: %s follow SOCKET|- PROJECT_ID INSTANCES keep|SECONDS DURATION_MS\n", argv[0]);
    return code;
  }
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: %s SOCKET|- PROJECT_ID [TIMEOUT_MS]\n       %s follow SOCKET|- PROJECT_ID INSTANCES keep|SECONDS DURATION_MS\n", argv[0], argv[0]);
    return 64;
  }
  const char *socketPath = std::strcmp(argv[1], "-") == 0 ? nullptr : argv[1];
  const std::chrono::milliseconds timeout(argc == 4 ? std::atoi(argv[3]) : PLC_DEFAULT_TIMEOUT_MS);

  {
    plc::Client client(socketPath);
    const plc::CheckResult result = client.check(argv[2], timeout);
    if (result.license) {
      std::printf("client state=%s reason=%s code_hint=%s\n", stateName(result.state()),
                  result.license->reasonText.empty() ? "-" : result.license->reasonText.c_str(),
                  result.license->codeHint.empty() ? "-" : result.license->codeHint.c_str());
    } else {
      std::printf("client state=unknown status=%d (%s)\n", static_cast<int>(result.status), plc::describe(result.status));
    }
  }

  plc::MonitorOptions options;
  options.socketPath = socketPath ? socketPath : "";
  plc::Monitor monitor(argv[2], options);
  std::atomic<int> changes{0};
  monitor.onChange([&changes](const plc::CheckResult &) { ++changes; });

  // Stand-in for processBlock: read the atomic state, bounded to about 2 s.
  plc::State seen = monitor.state();
  for (int block = 0; block < 200 && seen == plc::State::unknown; ++block) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = monitor.state();
  }
  monitor.onChange({});
  const plc::CheckResult last = monitor.last();
  const char *reason = plc::name(monitor.reason());
  std::printf("monitor state=%s reason=%s changes=%d status=%d\n", stateName(seen), reason[0] ? reason : "-", changes.load(),
              static_cast<int>(last.status));
  return seen == plc::State::valid ? 0 : seen == plc::State::invalid ? 1 : 2;
}
